"""Engines (issue 11): memory and speed of the streamed and Dask passes.

Run: python benchmarks/bench_engines.py [--rows N] [--full] [--skip-dask] [--memory-only]

1. Speed, streaming: the dp_sis statistics pass streamed from a Parquet file
   (N × 50, default N = 10^6) vs reading the same file with pyarrow alone, in
   the same chunks (target: <= 1.5x); pyarrow's whole-file read_table (all
   cores, unbounded memory) is shown for reference.
2. Speed, Dask: the same pass on a local cluster of 2 worker processes, reading
   the file on the workers, vs the in-memory engine (pandas.read_parquet, then
   the pass) (target: <= 2x).
3. Memory (--full): a 10^7 × 50 float64 Parquet file (about 4 GB), generated
   in chunks under /tmp and deleted afterwards, processed by dp_knockoff
   (or, if dp_knockoff does not take engine inputs, by the sufficient-statistics
   pass it consumes: XᵀX, Xᵀy, yᵀy of rows clipped to norm B) in a child
   process; peak resident memory read from the OS (VmHWM in /proc, and
   ru_maxrss) (target: < 1 GB).  Without --full the same run is made on the
   N-row file.
Ratios are against baselines measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np


warnings.simplefilter("ignore")
COLS = 50
CHUNK = 100_000
GROUP = 250_000
BETA = np.array([1.0, -1.0, 0.8, -0.8, 0.6, -0.6, 0.5, -0.5, 0.4, -0.4])  # x1..x10 matter


def write_parquet(path: Path, rows: int, cols: int = COLS, seed: int = 0) -> float:
    """N × cols standard normal predictors and y = Σ_{j<=10} β_j x_j + noise, written in row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(1, cols + 1)] + ["y"]
    schema = pa.schema([(nm, pa.float64()) for nm in names])
    start = time.perf_counter()
    with pq.ParquetWriter(path, schema, compression="snappy") as writer:
        for lo in range(0, rows, GROUP):
            m = min(GROUP, rows - lo)
            X = rng.standard_normal((m, cols))
            y = X[:, :10] @ BETA + rng.standard_normal(m)
            arrays = [pa.array(X[:, j]) for j in range(cols)] + [pa.array(y)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=GROUP)
    return time.perf_counter() - start


# ----------------------------------------------------------------------------- speed
def pyarrow_read(path: Path) -> int:
    import pyarrow.parquet as pq

    rows = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK):
        rows += batch.num_rows
    return rows


def stream_pass(path: Path):
    from dpstats import engines
    from dpstats.geometry import resolve_box

    def boxes(mf):
        return resolve_box((-6, 6), mf.names), resolve_box((-6, 6), ["y"])

    return engines.sufficient_statistics(
        "y ~ .", engines.stream(path, chunk_rows=CHUNK), boxes=boxes, gram=False
    )


def memory_pass(path: Path):
    import pandas as pd

    from dpstats import engines
    from dpstats.geometry import resolve_box

    def boxes(mf):
        return resolve_box((-6, 6), mf.names), resolve_box((-6, 6), ["y"])

    return engines.sufficient_statistics("y ~ .", pd.read_parquet(path), boxes=boxes, gram=False)


def dask_pass(path: Path, client):
    from dpstats import engines
    from dpstats.geometry import resolve_box

    def boxes(mf):
        return resolve_box((-6, 6), mf.names), resolve_box((-6, 6), ["y"])

    return engines.sufficient_statistics(
        "y ~ .", engines.on_dask(str(path), client=client), boxes=boxes, gram=False
    )


def paired_best(base, ours, repeat: int) -> tuple[float, float]:
    """Best of ``repeat`` runs of each, interleaved so that both see the same machine load."""
    base(), ours()  # warm-up: imports, compiled kernels, page cache
    times = ([], [])
    for _ in range(repeat):
        for k, func in enumerate((base, ours)):
            start = time.perf_counter()
            func()
            times[k].append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def bench_stream(path: Path, repeat: int) -> list[tuple]:
    import pyarrow.parquet as pq

    base, ours = paired_best(lambda: pyarrow_read(path), lambda: stream_pass(path), repeat)
    table, ours2 = paired_best(lambda: pq.read_table(path), lambda: stream_pass(path), repeat)
    return [
        ("stream: dp_sis statistics pass", ours, "pyarrow iter_batches alone", base, 1.5),
        ("stream: dp_sis statistics pass", ours2, "pyarrow read_table (reference)", table, None),
    ]


def bench_dask(path: Path, repeat: int) -> tuple:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="3GiB"
        ) as cluster,
        Client(cluster) as client,
    ):
        mem, ours = paired_best(lambda: memory_pass(path), lambda: dask_pass(path, client), repeat)
    return ("dask (2 local workers): read + pass", ours, "in memory: read_parquet + pass", mem, 2.0)


# ----------------------------------------------------------------------------- memory
CHILD = textwrap.dedent("""
    import json, resource, sys, time, warnings
    warnings.simplefilter("ignore")
    path, mode = sys.argv[1], sys.argv[2]

    def peak():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) * 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    import dpstats, pyarrow.parquet  # imports counted in the baseline too
    from dpstats import engines
    start = time.perf_counter()
    out = {"mode": mode}
    if mode == "baseline":
        pass
    elif mode == "pyarrow":
        with pyarrow.parquet.ParquetFile(path, pre_buffer=False) as pf:
            out["n"] = sum(b.num_rows for b in pf.iter_batches(batch_size=%(chunk)d))
    elif mode == "knockoff":
        rows = pyarrow.parquet.ParquetFile(path).metadata.num_rows
        # declared public bounds: row norm B, noise sd, ||beta||, column norms ~ sqrt(n), lambda_min
        fit = dpstats.dp_knockoff("y ~ .", data=engines.stream(path, chunk_rows=%(chunk)d), eps=10.0,
                                  delta=1e-9, bounds=12.0, sigma=1.0, beta_norm=2.5, c_min=0.9 * rows ** 0.5,
                                  lambda_min=0.5, random_state=1, oc_trials=0)
        out.update(n=fit.n, selected=fit.selected)
    else:
        mf, st = engines.sufficient_statistics("y ~ .", engines.stream(path, chunk_rows=%(chunk)d),
                                               gram=True, row_bound=12.0)
        out.update(n=st.n, rows_clipped=st.n_rows_clipped, xtx_trace=float(st.cross.xtx.trace()))
    out["seconds"] = time.perf_counter() - start
    out["vmhwm"] = peak()
    out["ru_maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(out))
""") % {"chunk": CHUNK}


def knockoff_takes_streams() -> bool:
    """True when dp_knockoff routes engine inputs (integration landed)."""
    import inspect

    from dpstats.api import knockoff

    return "engines" in inspect.getsource(knockoff)


def child_peak(path: Path, mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode], capture_output=True, text=True, timeout=3600
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["children_maxrss"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return out


def bench_memory(path: Path) -> dict:
    mode = "knockoff" if knockoff_takes_streams() else "statistics"
    base = child_peak(path, "baseline")
    read = child_peak(path, "pyarrow")
    run = child_peak(path, mode)
    return {"mode": mode, "baseline": base, "pyarrow": read, "run": run, "file_bytes": path.stat().st_size}


# ----------------------------------------------------------------------------- main
def print_speed(rows: list[tuple]) -> None:
    print(
        f"{'measurement':40s} {'seconds':>9s}   {'baseline':34s} {'seconds':>9s} {'ratio':>7s} {'target':>7s}"
    )
    for name, ours, base_name, base, target in rows:
        ratio = ours / base
        flag = "" if target is None else "ok" if ratio <= target else "MISSED"
        goal = "-" if target is None else "<=" + str(target)
        print(f"{name:40s} {ours:9.3f}   {base_name:34s} {base:9.3f} {ratio:7.2f} {goal:>7s} {flag}")


def print_memory(mem: dict, rows: int) -> None:
    gb = 1024**3
    run, base = mem["run"], mem["baseline"]
    print(
        f"\nmemory: {rows:,} x {COLS} (+ y) Parquet, {mem['file_bytes'] / gb:.2f} GB on disk, "
        f"{rows * (COLS + 1) * 8 / gb:.2f} GB as float64; processed by "
        f"{'dp_knockoff' if mem['mode'] == 'knockoff' else 'the dp_knockoff statistics pass (XtX, Xty, yty, rows clipped to B)'}"
        f" in {run['seconds']:.1f} s (n = {run['n']:,})"
    )
    if "selected" in run:
        print(
            f"  dp_knockoff (Method II, eps = 10, delta = 1e-9, declared bounds; true support x1..x10) selected {run['selected']}"
        )
    print(
        f"  peak resident memory of the child process (VmHWM): {run['vmhwm'] / gb:.3f} GB; target < 1 GB: "
        f"{'ok' if run['vmhwm'] < gb else 'MISSED'}"
    )
    print(
        f"  for comparison: imports alone {base['vmhwm'] / gb:.3f} GB; imports + pyarrow reading the file in "
        f"the same chunks (pre_buffer=False) {mem['pyarrow']['vmhwm'] / gb:.3f} GB"
    )
    print(
        f"  (ru_maxrss {run['ru_maxrss'] / gb:.3f} GB: Linux keeps the larger of the forking parent's RSS "
        "and the child's across exec, so VmHWM is the figure)"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the speed benchmark file")
    parser.add_argument("--full", action="store_true", help="memory run on 10^7 x 50 (about 4 GB on /tmp)")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--memory-only", action="store_true", help="only the memory run")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="dpstats_bench_engines_"))
    try:
        small = folder / "speed.parquet"
        secs = write_parquet(small, args.rows)
        print(
            f"speed file: {args.rows:,} x {COLS} (+ y), {small.stat().st_size / 2**20:.0f} MB, "
            f"written in {secs:.1f} s; best of {args.repeat}, 2 CPU cores shared\n"
        )
        big, n_big = small, args.rows
        if args.full:
            big, n_big = folder / "big.parquet", 10_000_000
            secs = write_parquet(big, n_big, seed=1)
            print(f"memory file: {n_big:,} rows written in {secs:.0f} s")
        memory = bench_memory(big)  # first, while this process is small
        if args.full:
            big.unlink()
        if not args.memory_only:
            rows = bench_stream(small, args.repeat)
            if not args.skip_dask:
                rows.append(bench_dask(small, args.repeat))
            print_speed(rows)
        print_memory(memory, n_big)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
