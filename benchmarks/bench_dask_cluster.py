"""Dask cluster speed-up (issue 18): dp_sis's pass over Parquet with one and with two worker processes.

Run: python benchmarks/bench_dask_cluster.py [--rows N] [--repeat R] [--keep DIR]

A Parquet data set of N x 50 float64 predictors plus y (default N = 10^7, about 4 GB as float64) is
written in chunks (one file per 10^6 rows, row groups of 250 000) to a temporary folder, then read
by ``dask.dataframe.read_parquet`` on the workers of a ``distributed.LocalCluster`` of worker
*processes* (one thread each, loopback only):

* the dp_sis statistics pass (``engines.sufficient_statistics`` with declared bounds, no XᵀX: the pass
  ``dp_sis`` runs) with 1 worker process, then with 2 worker processes, best of R runs after a
  warm-up; the speed-up is the ratio of the two times, both measured in this run;
* the whole ``dp_sis`` front door once on each cluster (its selection must not depend on the cluster).

The machine has 2 CPU cores shared with other work: 2.0 is the ceiling, and any other load lowers
the figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engines import COLS, write_parquet  # noqa: E402

FILE_ROWS = 1_000_000


def write_dataset(folder: Path, rows: int) -> float:
    """``rows`` x 50 (+ y) as files of at most 10^6 rows each (memory: one file's chunk at a time)."""
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for i, lo in enumerate(range(0, rows, FILE_ROWS)):
        write_parquet(folder / f"part-{i:04d}.parquet", min(FILE_ROWS, rows - lo), seed=i)
    return time.perf_counter() - start


def sis_pass(folder: Path, client):
    from dpstats import engines
    from dpstats.geometry import resolve_box

    def boxes(mf):
        return resolve_box((-6, 6), mf.names), resolve_box((-6, 6), ["y"])

    src = engines.on_dask(str(folder), client=client)
    return engines.sufficient_statistics("y ~ .", src, boxes=boxes, gram=False)[1]


def front_door(folder: Path, client):
    import dpstats as dp
    from dpstats import engines

    return dp.dp_sis(
        "y ~ .",
        data=engines.on_dask(str(folder), client=client),
        eps=3.0,
        k=10,
        bounds=(-6, 6),
        random_state=1,
        oc_trials=0,
    )


def _one_arrow_thread() -> None:
    import pyarrow

    pyarrow.set_cpu_count(1)
    pyarrow.set_io_thread_count(1)


def on_cluster(folder: Path, workers: int, repeat: int, one_thread: bool) -> dict:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(workers, timeout=120)
        if one_thread:
            client.run(_one_arrow_thread)
        st = sis_pass(folder, client)  # warm-up: imports and compiled kernels on the workers, page cache
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            st = sis_pass(folder, client)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        fit = front_door(folder, client)
        door = time.perf_counter() - start
        partitions = engines_partitions(folder)
    return {
        "best": min(times),
        "times": times,
        "n": st.n,
        "xty": st.cross.xty,
        "selected": fit.selected,
        "front_door": door,
        "partitions": partitions,
    }


def engines_partitions(folder: Path) -> int:
    import dask.dataframe as dd

    return dd.read_parquet(str(folder)).npartitions


def rows(quick: bool = False, n_rows: int | None = None, repeat: int | None = None) -> list[dict]:
    """The issue-18 table's Dask row (``benchmarks/bench_table.py``): the dp_sis pass with 2 worker
    processes against 1, pyarrow limited to one thread per worker (a worker process = a core).

    ``n_rows`` defaults to 10^7 (``quick``: 200 000); best of ``repeat`` (3; ``quick``: 1) after a
    warm-up.  ``ratio`` is seconds(2 workers) / seconds(1 worker); ``speed_up`` its inverse.
    """
    n_rows = n_rows or (200_000 if quick else 10_000_000)
    repeat = repeat or (1 if quick else 3)
    folder = Path(tempfile.mkdtemp(prefix="dpstats_bench_dask_"))
    try:
        write_dataset(folder, n_rows)
        one = on_cluster(folder, 1, repeat, one_thread=True)
        two = on_cluster(folder, 2, repeat, one_thread=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not (one["n"] == two["n"] == n_rows and one["selected"] == two["selected"]):
        raise RuntimeError("the two clusters disagree on n or on the selection")
    return [
        {
            "work": f"Dask dp_sis pass over {n_rows:,} x {COLS} Parquet, 2 worker processes",
            "seconds": two["best"],
            "baseline": "the same pass, 1 worker process",
            "baseline_seconds": one["best"],
            "ratio": two["best"] / one["best"],
            "target": None,
            "speed_up": one["best"] / two["best"],
        }
    ]


def main(argv=None) -> None:
    import numpy as np

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="write (or reuse) the data set here")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="dpstats_bench_dask_"))
    try:
        if not list(folder.glob("*.parquet")):
            secs = write_dataset(folder, args.rows)
            written = f"written in {secs:.0f} s"
        else:
            written = "reused"
        size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
        print(
            f"data: {args.rows:,} x {COLS} (+ y) float64 Parquet, {size / 2**30:.2f} GB on disk "
            f"({args.rows * (COLS + 1) * 8 / 2**30:.2f} GB as float64), {written}; "
            f"{os.cpu_count()} CPU cores (shared)"
        )
        for one_thread in (False, True):
            one = on_cluster(folder, 1, args.repeat, one_thread)
            two = on_cluster(folder, 2, args.repeat, one_thread)
            assert one["n"] == two["n"] == args.rows
            np.testing.assert_allclose(two["xty"], one["xty"], rtol=1e-10)
            assert one["selected"] == two["selected"]
            how = (
                "pyarrow limited to 1 thread per worker (a worker process = a core)"
                if one_thread
                else "pyarrow's default thread pool in each worker (one worker may already use both cores)"
            )
            print(f"\n{how}: {one['partitions']} partitions; best of {args.repeat} after a warm-up")
            print(f"{'dp_sis pass (read + statistics)':40s} {'seconds':>9s} {'front door':>11s}")
            for label, r in (("1 worker process", one), ("2 worker processes", two)):
                print(f"{label:40s} {r['best']:9.2f} {r['front_door']:11.2f}")
            print(
                f"speed-up, 2 vs 1 worker processes: {one['best'] / two['best']:.2f}x (ceiling 2.0 on 2 cores); "
                f"same n, Xᵀy (rtol 1e-10) and selection {two['selected']}"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":  # worker processes are spawned: nothing above runs in them
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
