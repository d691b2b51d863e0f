"""Data where it lives (issue 32): dp_lm with DuckDB pushdown vs the Parquet stream vs pandas in memory.

Run: python benchmarks/bench_data_sources.py [--rows N] [--door lm|sis] [--skip-pandas] [--no-batches]

One Parquet file of N x 50 standard normal predictors and y (default N = 10^7, row groups of
250 000, written once to a temporary folder and deleted afterwards), then ``dp_lm("y ~ .")``
(declared bounds, seeded; with ``--door sis``: ``dp_sis``, whose statistics need no XᵀX) on it
from each source, each in its own child process:

* ``duckdb pushdown``: ``data=duckdb.sql("select * from 'file.parquet'")``; the statistics are
  one SQL query inside DuckDB, the rows never reach Python (dpstats.engines.duckdb_engine);
* ``duckdb 1 thread``: the same on a connection made with ``config={"threads": 1}`` (DuckDB reads
  a whole row group of the projected columns per thread, so its memory follows its threads;
  the user's setting, which dpstats never changes);
* ``duckdb lean``: a connection of one thread with ``memory_limit='100MB'`` and
  ``SET disable_parquet_prefetching = true`` (DuckDB then reads a page of each projected column at a
  time instead of a whole row group, and the limit makes it drop the buffers it would keep);
* ``duckdb batches`` (for comparison, skip with --no-batches): the same relation with
  ``engines.on_duckdb(..., pushdown=False)``: DuckDB hands Arrow record batches to the streaming
  path;
* ``parquet stream``: ``data=dpstats.engines.stream(path)`` (the baseline of the ratios);
* ``pandas in memory``: ``pandas.read_parquet(path)`` in the child, then the call on the frame
  (the read is timed separately; its memory is part of the peak).

Each child imports dpstats, makes one warm-up call on a 5 000-row file from the same source
kind (compiled kernels, lazy imports, DuckDB's start), resets its peak (``/proc/self/clear_refs``)
and then times the call and reads its peak resident memory, VmHWM, from ``/proc/self/status``
(ru_maxrss is not used: Linux carries the parent's across exec).  Printed: seconds, the peak in
all and the call's own share (peak minus the resident size before the call: what the source
costs, without the ~250 MB of imports every source pays), and the ratios to the Parquet stream
measured in the same run.  Goal: pushdown at most the stream's time and a tenth of its memory
(the call's own share; the whole-process peak is dominated by the imports).  The coefficients of
every source agree (largest difference printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engines import COLS, GROUP, write_parquet  # noqa: E402

MB = 2**20
SOURCES = (
    "duckdb pushdown",
    "duckdb 1 thread",
    "duckdb lean",
    "duckdb batches",
    "parquet stream",
    "pandas in memory",
)

CHILD = textwrap.dedent("""
    import json, sys, time, warnings
    warnings.simplefilter("ignore")
    path, small, source, door = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

    def status(key):
        return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))

    import dpstats
    from dpstats import engines
    out = {"source": source, "imports": status("VmHWM")}

    def data(p):
        if source.startswith("duckdb"):
            import duckdb
            config = {"threads": 1} if source in ("duckdb 1 thread", "duckdb lean") else {}
            if source == "duckdb lean":
                config["memory_limit"] = "100MB"
            con = duckdb.connect(config=config)
            if source == "duckdb lean":  # a parquet setting: set once the extension is loaded
                con.execute("SET disable_parquet_prefetching = true")
            rel = con.sql(f"select * from '{p}'")
            return engines.on_duckdb(rel, pushdown=source != "duckdb batches")
        if source == "parquet stream":
            return engines.stream(p)
        import pandas as pd
        return pd.read_parquet(p)

    def call(d):
        if door == "sis":
            return dpstats.dp_sis("y ~ .", d, eps=3.0, k=10, bounds=(-8, 8), random_state=1, oc_trials=0)
        return dpstats.dp_lm("y ~ .", d, eps=3.0, delta=1e-9, bounds=(-8, 8), random_state=1)

    call(data(small))  # warm-up: compiled kernels, lazy imports, the source's own start
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM := the current resident size
    out["before"] = status("VmRSS")
    start = time.perf_counter()
    d = data(path)
    out["read"] = time.perf_counter() - start  # pandas: the whole read; others: opening the source
    fit = call(d)
    out["seconds"] = time.perf_counter() - start
    out["vmhwm"] = status("VmHWM")
    out["n"] = fit.n
    out["engine"] = getattr(fit, "engine", "")
    out["released"] = dict(fit.coef()) if door == "lm" else list(fit.selected)
    print(json.dumps(out))
""")


def child(path: Path, small: Path, source: str, door: str, code: str = CHILD) -> dict:
    """Run ``code`` (a child script: path, small path, source, door) in a fresh process; its last line's JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path), str(small), source, door],
        capture_output=True,
        text=True,
        timeout=7200,
        cwd=Path(__file__).resolve().parents[1],
    )
    if proc.returncode:
        raise RuntimeError(f"{door} {source}: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def agreement(runs: dict[str, dict], door: str) -> str:
    base = runs["parquet stream"]["released"]
    if door == "sis":
        same = all(r["released"] == base for r in runs.values())
        return "the same selection from every source" if same else "SELECTIONS DIFFER"
    worst = max(abs(r["released"][k] - v) for r in runs.values() for k, v in base.items())
    return f"largest coefficient difference between sources {worst:.1e}"


def print_table(runs: dict[str, dict], rows: int, door: str, written: float, load: str) -> None:
    base = runs["parquet stream"]
    base_call = base["vmhwm"] - base["before"]
    print(
        f"dp_{door} 'y ~ .' on {rows:,} x {COLS} (+ y) Parquet, row groups of {GROUP:,}, declared bounds "
        f"(file written in {written:.0f} s); {os.cpu_count()} cores, load average {load}"
    )
    head = f"{'source':18s} {'seconds':>8s} {'x stream':>9s} {'peak MB':>8s} {'call MB':>8s} {'x stream':>9s}"
    print(head + "  engine")
    for name, r in runs.items():
        call = r["vmhwm"] - r["before"]
        extra = f"  (read {r['read']:.1f} s of it)" if name == "pandas in memory" else ""
        print(
            f"{name:18s} {r['seconds']:8.1f} {r['seconds'] / base['seconds']:9.2f} {r['vmhwm'] / MB:8.0f} "
            f"{call / MB:8.0f} {call / max(base_call, 1):9.3f}  {r['engine']}{extra}"
        )
    if "duckdb pushdown" in runs:
        r = runs["duckdb pushdown"]
        call = r["vmhwm"] - r["before"]
        t_ok = r["seconds"] <= base["seconds"]
        m_ok = call <= base_call / 10
        print(
            f"goal: pushdown time <= stream: {r['seconds'] / base['seconds']:.2f}x "
            f"({'ok' if t_ok else 'MISSED'}); pushdown call memory <= stream / 10: "
            f"{call / max(base_call, 1):.3f}x ({'ok' if m_ok else 'MISSED'})"
        )
    print(f"n = {base['n']:,} from every source; {agreement(runs, door)}")
    print(
        "peak MB: VmHWM of the child (imports included); call MB: VmHWM minus the resident size before the call"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--door", choices=("lm", "sis"), default="lm")
    parser.add_argument(
        "--skip-pandas", action="store_true", help="the in-memory run needs about 10 GB at 10^7"
    )
    parser.add_argument("--no-batches", action="store_true", help="skip DuckDB without pushdown")
    args = parser.parse_args(argv)
    sources = [
        s
        for s in SOURCES
        if not (s == "pandas in memory" and args.skip_pandas)
        and not (s == "duckdb batches" and args.no_batches)
    ]
    with tempfile.TemporaryDirectory(prefix="dpstats_bench_sources_") as tmp:
        path, small = Path(tmp) / "data.parquet", Path(tmp) / "small.parquet"
        written = write_parquet(path, args.rows)
        write_parquet(small, 5000, seed=1)
        runs = {}
        for source in sources:
            start = time.perf_counter()
            runs[source] = child(path, small, source, args.door)
            print(f"  ({source}: child done in {time.perf_counter() - start:.0f} s)", file=sys.stderr)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print_table(runs, args.rows, args.door, written, load)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
