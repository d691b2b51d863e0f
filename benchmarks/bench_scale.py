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
3. ``dp_knockoff`` at n = 10^6, p = 50 in a warm process, with declared bounds and without, vs the
   Gram product ``X.T @ X`` of the same design (target <= 4x); the imports of a first
   ``dp_knockoff`` call in a fresh process (target <= 0.3 s), against the whole first call.
4. Peak resident memory of a default streamed ``dp_sis`` (``engines.stream(path)``, default
   arguments) over a 2*10^6 x 50 Parquet file in row groups of 250 000, in child processes
   (VmHWM): the first call of a fresh process (its peak in all, target <= 350 MB), and a call
   after a warm-up (the pass alone, against the bound stated in dpstats.engines.stream: one column
   of a row group x 8 bytes x COLUMN_ROUTE_COPIES on the plain numeric route).

Every row is also available as a dict from :func:`rows` (for benchmarks/bench_table.py): timing
rows ``{"work", "seconds", "baseline", "baseline_seconds", "ratio", "target"}``, memory rows
``{"work", "peak_mb", "target_mb", ...}``.
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

MB = 2**20


def timing_row(
    work: str, seconds: float, baseline: str, baseline_seconds: float, target: float | None
) -> dict:
    """One row of the table: our time against a baseline timed in the same run."""
    return {
        "work": work,
        "seconds": seconds,
        "baseline": baseline,
        "baseline_seconds": baseline_seconds,
        "ratio": seconds / baseline_seconds,
        "target": target,
    }


def model_frame_rows() -> list[dict]:
    from dpstats.formula import model_frame

    rng = np.random.default_rng(0)
    cols = [f"x{j}" for j in range(50)]
    df = pd.DataFrame(rng.standard_normal((1_000_000, 51)), columns=cols + ["y"])
    copy = best_time(lambda: df[cols].to_numpy(dtype=float, copy=True))
    view = best_time(lambda: df[cols].to_numpy())
    ours = best_time(lambda: model_frame("y ~ .", df))
    pieces = pd.concat([df[[c]].copy() for c in df.columns], axis=1)  # one block per column
    copy2 = best_time(lambda: pieces[cols].to_numpy(dtype=float))
    ours2 = best_time(lambda: model_frame("y ~ .", pieces))
    work = "model_frame 10^6 x 51 (one float64 block)"
    return [
        timing_row(work, ours, "to_numpy(copy=True) of the 50 columns", copy, 2.0),
        timing_row(work, ours, "to_numpy() (a view: reference only)", view, None),
        timing_row(
            "model_frame 10^6 x 51 (a block per column)", ours2, "to_numpy() of the 50 columns", copy2, 2.0
        ),
    ]


def sis_front_door_row() -> dict:
    import dpstats as dp
    from dpstats.privacy.topk import select_topk

    rng = np.random.default_rng(1)
    n, d, k = 40, 22_283, 100
    df = pd.DataFrame(rng.standard_normal((n, d)), columns=[f"g{j}" for j in range(d)])
    df["y"] = df["g0"] - df["g1"] + rng.standard_normal(n)
    kw = dict(eps=1.0, k=k, bounds=(-6, 6), random_state=0, oc_trials=0)
    scores = np.abs(rng.standard_normal(d)) * n

    def mechanism():
        return select_topk(scores, k, 1.0, np.random.default_rng(0), "canonical_lipschitz", gamma=0.5)

    base = best_time(mechanism)
    ours = best_time(lambda: dp.dp_sis("y ~ .", data=df, **kw))
    return timing_row("dp_sis front door n=40, d=22283, k=100", ours, "the private top-k alone", base, 3.0)


def knockoff_warm_rows() -> list[dict]:
    """``dp_knockoff`` at n = 10^6, p = 50 in a warm process vs the Gram product ``X.T @ X``."""
    import dpstats as dp

    rng = np.random.default_rng(2)
    n, p = 1_000_000, 50
    X = rng.standard_normal((n, p))
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = X[:, :5] @ np.full(5, 0.5) + rng.standard_normal(n)
    kw = dict(eps=2.0, delta=1e-7, fdr=0.2, random_state=1, oc_trials=0)
    declared = dict(bounds=12.0, sigma=1.0, beta_norm=2.5, c_min=0.9 * n**0.5, lambda_min=0.5)
    gram = best_time(lambda: X.T @ X, repeat=3)
    ours = best_time(lambda: dp.dp_knockoff("y ~ .", data=df, **declared, **kw), repeat=3)
    free = best_time(lambda: dp.dp_knockoff("y ~ .", data=df, sigma=1.0, **kw), repeat=3)
    base = "the Gram product X.T @ X"
    return [
        timing_row("dp_knockoff n=10^6, p=50, declared bounds", ours, base, gram, 4.0),
        timing_row("dp_knockoff n=10^6, p=50, no bounds (B from data)", free, base, gram, 4.0),
    ]


def knockoff_first_call_row(repeat: int = 5) -> dict:
    """The imports of a first ``dp_knockoff`` call in a fresh process (benchmarks/bench_import.py's
    method: the modules the call loads, imported alone in another fresh process), medians."""
    import json
    import statistics

    from bench_import import FIRST_CALL, IMPORT_ONLY, _json

    first, imports = [], []
    for _ in range(repeat):
        run = _json(FIRST_CALL)
        first.append(run["first"])
        imports.append(_json(IMPORT_ONLY, json.dumps(run["modules"]))["imports"])
    row = timing_row(
        "dp_knockoff first call, fresh process: imports",
        statistics.median(imports),
        "the whole first call (n=20000, p=50)",
        statistics.median(first),
        None,
    )
    row["target_seconds"] = 0.3
    return row


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
    if mode != "cold":  # cold: the first call of a fresh process, its peak in all
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


def stream_memory_rows(rows: int = 2_000_000) -> list[dict]:
    """Peak resident memory of a default streamed ``dp_sis`` over a ``rows`` x 50 Parquet file."""
    from bench_engines import COLS, GROUP, write_parquet

    from dpstats.engines import CHUNK_ROWS, COLUMN_ROUTE_COPIES
    from dpstats.engines.stream import COLUMN_GROUP_BYTES

    with tempfile.TemporaryDirectory(prefix="dpstats_bench_scale_") as tmp:
        path, small = Path(tmp) / "d.parquet", Path(tmp) / "small.parquet"
        write_parquet(path, rows)
        write_parquet(small, 5000, seed=1)
        runs = {mode: child(path, small, mode) for mode in ("cold", "sis", "sis_no_oc")}
    bound = max(GROUP * 8, COLUMN_GROUP_BYTES) * COLUMN_ROUTE_COPIES  # dpstats.engines.stream, "Memory bound"
    out = []
    for mode, label in (
        ("cold", "default arguments, first call of a fresh process"),
        ("sis", "default arguments, after a warm-up call"),
        ("sis_no_oc", "oc_trials=0, after a warm-up call"),
    ):
        r = runs[mode]
        above = r["vmhwm"] - r["warm"]
        out.append(
            {
                "work": f"streamed dp_sis {rows:,} x {COLS} Parquet ({label})",
                "peak_mb": r["vmhwm"] / MB,
                "target_mb": 350,
                "imports_mb": r["imports"] / MB,
                "before_pass_mb": r["warm"] / MB,
                "pass_mb": above / MB,
                "pass_bound_mb": None if mode == "cold" else bound / MB,  # cold: the pass includes imports
                "seconds": r["seconds"],
                "note": f"chunks of {CHUNK_ROWS:,} rows, row groups of {GROUP:,}",
            }
        )
    return out


def rows(memory: bool = True, rows_memory: int = 2_000_000) -> list[dict]:
    """Every row of this benchmark (for benchmarks/bench_table.py)."""
    out = model_frame_rows() + [sis_front_door_row()] + knockoff_warm_rows() + [knockoff_first_call_row()]
    return out + (stream_memory_rows(rows_memory) if memory else [])


def print_rows(table: list[dict]) -> None:
    print(f"{'work':42s} {'seconds':>8s}   {'baseline':40s} {'seconds':>8s} {'ratio':>7s} {'target':>7s}")
    for r in (r for r in table if "ratio" in r):
        goal = "-" if r["target"] is None else f"<={r['target']:g}"
        flag = "" if r["target"] is None else "ok" if r["ratio"] <= r["target"] else "MISSED"
        if "target_seconds" in r:
            ok = r["seconds"] <= r["target_seconds"]
            flag = f"{r['seconds']:.3f} s <= {r['target_seconds']:g} s: {'ok' if ok else 'MISSED'}"
        print(
            f"{r['work']:42s} {r['seconds']:8.4f}   {r['baseline']:40s} {r['baseline_seconds']:8.4f} "
            f"{r['ratio']:7.2f} {goal:>7s} {flag}"
        )
    for r in (r for r in table if "peak_mb" in r):
        flag = "ok" if r["peak_mb"] <= r["target_mb"] else "MISSED"
        bound = r["pass_bound_mb"]
        check = (
            ""
            if bound is None
            else f" ({'within' if r['pass_mb'] <= bound else 'OVER'} the bound {bound:.0f} MB)"
        )
        print(
            f"\n{r['work']} ({r['note']}):\n  peak {r['peak_mb']:.0f} MB in all (target <= {r['target_mb']} MB: "
            f"{flag}) = imports {r['imports_mb']:.0f} MB, {r['before_pass_mb']:.0f} MB before the call, "
            f"call +{r['pass_mb']:.0f} MB{check}; {r['seconds']:.1f} s"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--rows-memory", type=int, default=2_000_000)
    args = parser.parse_args(argv)
    print_rows(rows(memory=not args.skip_memory, rows_memory=args.rows_memory))


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
