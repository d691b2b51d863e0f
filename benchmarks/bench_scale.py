"""Speed and scale on the default paths (issue 18): the rows of the issue's table addressed so far.

Run: python benchmarks/bench_scale.py [--skip-memory] [--rows-memory N]

Every figure is a ratio against a baseline measured in the same run (benchmarks/_timing.py: best of
several runs after a warm-up), on a machine with 2 shared cores:

1. ``model_frame("y ~ .", df)`` of a 10^6 x 51 float DataFrame vs one copy of the same columns into
   a float64 block, ``df[cols].to_numpy(dtype=float, copy=True)`` (target <= 2x).  ``to_numpy()``
   without ``copy=True`` is a view of a one-block frame (no work at all) and is printed for reference;
   a frame of separate column blocks is timed too.
2. The ``dp_sis`` front door at n = 40, d = 22 283, k = 100, declared bounds, no simulation vs the
   mechanism alone (the private top-k of the same scores, ``canonical_lipschitz``) (target <= 3x).
3. Peak resident memory of a default streamed ``dp_sis`` (``engines.stream(path)``, default
   arguments: 100 000-row chunks, the default operating-characteristic simulation on) over a
   2*10^6 x 50 Parquet file, in a child process (VmHWM / ru_maxrss), against the bound stated in
   the engines' docs: rows x columns x 8 bytes x chunks in flight, on top of the imports alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_time  # noqa: E402

ROWS = []


def row(work: str, ours: float, base_name: str, base: float, target: float | None) -> None:
    ROWS.append((work, ours, base_name, base, target))


def _count(n: int) -> str:
    """10^6 for a power of ten, 200,000 otherwise."""
    power = len(str(n)) - 1
    return f"10^{power}" if n == 10**power else f"{n:,}"


def bench_model_frame(n: int = 1_000_000) -> None:
    from dpstats.formula import model_frame

    rng = np.random.default_rng(0)
    cols = [f"x{j}" for j in range(50)]
    df = pd.DataFrame(rng.standard_normal((n, 51)), columns=cols + ["y"])
    copy = best_time(lambda: df[cols].to_numpy(dtype=float, copy=True))
    view = best_time(lambda: df[cols].to_numpy())
    ours = best_time(lambda: model_frame("y ~ .", df))
    size = f"{_count(n)} x 51"
    row(f"model_frame {size} (one float64 block)", ours, "to_numpy(copy=True) of the 50 columns", copy, 2.0)
    row(f"model_frame {size} (one float64 block)", ours, "to_numpy() (a view: reference only)", view, None)
    pieces = pd.concat([df[[c]].copy() for c in df.columns], axis=1)  # one block per column
    copy2 = best_time(lambda: pieces[cols].to_numpy(dtype=float))
    ours2 = best_time(lambda: model_frame("y ~ .", pieces))
    row(f"model_frame {size} (a block per column)", ours2, "to_numpy() of the 50 columns", copy2, 2.0)


def bench_sis_front_door(d: int = 22_283) -> None:
    import dpstats as dp
    from dpstats.privacy.topk import select_topk

    rng = np.random.default_rng(1)
    n, k = 40, 100
    df = pd.DataFrame(rng.standard_normal((n, d)), columns=[f"g{j}" for j in range(d)])
    df["y"] = df["g0"] - df["g1"] + rng.standard_normal(n)
    kw = dict(eps=1.0, k=k, bounds=(-6, 6), random_state=0, oc_trials=0)
    scores = np.abs(rng.standard_normal(d)) * n

    def mechanism():
        return select_topk(scores, k, 1.0, np.random.default_rng(0), "canonical_lipschitz", gamma=0.5)

    base = best_time(mechanism)
    ours = best_time(lambda: dp.dp_sis("y ~ .", data=df, **kw))
    row(f"dp_sis front door n=40, d={d}, k=100", ours, "the private top-k alone", base, 3.0)


CHILD = textwrap.dedent("""
    import json, resource, sys, time, warnings
    warnings.simplefilter("ignore")
    path, small, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    import dpstats
    from dpstats import engines

    def status(key):
        return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))

    out = {"mode": mode, "imports": status("VmHWM")}
    kw = dict(eps=3.0, k=10, bounds=(-6, 6), random_state=1)
    if mode == "sis_no_oc":
        kw["oc_trials"] = 0
    dpstats.dp_sis("y ~ .", data=engines.stream(small), **kw)  # warm-up: compiled kernels, lazy imports
    open("/proc/self/clear_refs", "w").write("5")  # reset VmHWM to the current resident size
    out["warm"] = status("VmRSS")
    start = time.perf_counter()
    fit = dpstats.dp_sis("y ~ .", data=engines.stream(path), **kw)
    out.update(n=fit.n, seconds=time.perf_counter() - start, vmhwm=status("VmHWM"),
               ru_maxrss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(json.dumps(out))
""")


def child(path: Path, small: Path, mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(small), mode],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stream_memory(rows: int) -> dict:
    """Peak memory of the two streamed dp_sis children (default arguments, oc_trials=0)."""
    from bench_engines import write_parquet

    with tempfile.TemporaryDirectory(prefix="dpstats_bench_scale_") as tmp:
        path, small = Path(tmp) / "d.parquet", Path(tmp) / "small.parquet"
        write_parquet(path, rows)
        write_parquet(small, 5000, seed=1)
        return {mode: child(path, small, mode) for mode in ("sis", "sis_no_oc")}


def bench_stream_memory(rows: int) -> list[str]:
    from bench_engines import COLS, GROUP

    from dpstats.engines import CHUNK_ROWS, CHUNKS_IN_FLIGHT

    mb = 2**20
    runs = stream_memory(rows)
    bound = max(CHUNK_ROWS, GROUP) * (COLS + 1) * 8 * CHUNKS_IN_FLIGHT
    lines = [
        f"\nstreamed dp_sis, {rows:,} x {COLS} (+ y) Parquet, default chunks of {CHUNK_ROWS:,} rows, "
        f"row groups of {GROUP:,}; stated bound max(chunk, row group) rows x columns x 8 bytes x "
        f"{CHUNKS_IN_FLIGHT} in flight = {bound / mb:.0f} MB above the warmed-up process; issue target: "
        "peak at most 350 MB in all"
    ]
    for mode, label in (("sis", "default arguments (simulation on)"), ("sis_no_oc", "oc_trials=0")):
        r = runs[mode]
        above = r["vmhwm"] - r["warm"]
        lines.append(
            f"  {label:34s} peak {r['vmhwm'] / mb:5.0f} MB = imports {r['imports'] / mb:.0f} MB, "
            f"warm-up to {r['warm'] / mb:.0f} MB, pass +{above / mb:.0f} MB "
            f"({'within' if above <= bound else 'OVER'} the bound; peak "
            f"{'ok' if r['vmhwm'] <= 350 * mb else 'MISSED'} against 350 MB); {r['seconds']:.1f} s"
        )
    return lines


def rows(quick: bool = False, memory: bool = True) -> list[dict]:
    """The issue-18 table's rows measured here, for ``benchmarks/bench_table.py``.

    Timed rows: ``work, seconds, baseline, baseline_seconds, ratio, target``; memory rows:
    ``work, peak_mb, target_mb``.  ``quick``: 10^5 rows for the model frame, d = 2 000 for the
    front door, 200 000 streamed rows.
    """
    ROWS.clear()
    bench_model_frame(100_000 if quick else 1_000_000)
    bench_sis_front_door(2_000 if quick else 22_283)
    out = [
        {"work": w, "seconds": t, "baseline": b, "baseline_seconds": bt, "ratio": t / bt, "target": target}
        for w, t, b, bt, target in ROWS
        if target is not None
    ]
    if memory:
        n = 200_000 if quick else 2_000_000
        runs = stream_memory(n)
        for mode, label, target in (("sis", "default arguments", 350.0), ("sis_no_oc", "oc_trials=0", None)):
            work = f"streamed dp_sis, {_count(n)} x 50 Parquet, {label}: peak resident"
            out.append({"work": work, "peak_mb": runs[mode]["vmhwm"] / 2**20, "target_mb": target})
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--rows-memory", type=int, default=2_000_000)
    args = parser.parse_args(argv)
    bench_model_frame()
    bench_sis_front_door()
    print(f"{'work':42s} {'seconds':>8s}   {'baseline':40s} {'seconds':>8s} {'ratio':>7s} {'target':>7s}")
    for work, ours, base_name, base, target in ROWS:
        ratio = ours / base
        goal = "-" if target is None else f"<={target:g}"
        flag = "" if target is None else "ok" if ratio <= target else "MISSED"
        print(f"{work:42s} {ours:8.4f}   {base_name:40s} {base:8.4f} {ratio:7.2f} {goal:>7s} {flag}")
    if not args.skip_memory:
        print("\n".join(bench_stream_memory(args.rows_memory)))


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
