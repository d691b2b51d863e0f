"""Memory of a fit over a polars LazyFrame or a DuckDB relation, against the Parquet stream (audit s15 F04).

Run: python benchmarks/bench_lazy_sources_memory.py [--rows N] [--doors lm,glm,pca,sis]

One Parquet file of N rows (default 5*10^6; row groups of 250 000): eight standard normal
predictors x1..x8, y = x1 - x2 + x3/2 + noise and a 0/1 response yb (logistic in x1 - x2),
written once to a temporary folder and deleted afterwards.  Then, for each door, one fit from
each source, each in its own child process:

* ``stream``: ``dpstats.engines.stream(path)``, the baseline of the ratios;
* ``polars lazy``: ``pl.scan_parquet(path)``: read in record batches (engines.polars_engine);
* ``duckdb``: ``duckdb.sql("select * from read_parquet(path)")`` (dp_lm, dp_pca, dp_sis: the SQL
  route of a plain numeric design; dp_glm: record batches, one pass per Newton step);
* ``... into pandas``: what the door did before (audit s15 F04): the same LazyFrame (dp_lm,
  dp_pca, dp_sis) or relation (dp_glm) read into pandas by ``engines.as_data`` (the formula's
  columns), then the fit on that frame.

Doors: ``lm`` dp_lm("y ~ x1 + ... + x8"), ``glm`` dp_glm("yb ~ x1 + x2", binomial), ``pca``
dp_pca("~ x1 + ... + x8", k = 2), ``sis`` dp_sis("y ~ x1 + ... + x8", k = 3); declared bounds,
seeded.  Each child imports dpstats, makes one warm-up call on a 5 000-row file from the same
kind of source (compiled kernels, lazy imports, DuckDB's and polars' start), resets its peak
(``/proc/self/clear_refs``), then times the call and reads VmHWM from ``/proc/self/status``.
Printed: seconds, the call's memory (VmHWM minus the resident size before the call: what the
source costs, without the ~250 MB of imports every source pays), and both as ratios to the stream
of the same door measured in the same run; the largest difference of the released coefficients
(dp_sis: whether the selection agrees) from the stream's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data_sources import child  # noqa: E402  (a child process per source, its JSON line)

MB = 2**20
GROUP = 250_000
SOURCES = {  # door -> sources, the stream first (the baseline)
    "lm": ("stream", "polars lazy", "duckdb", "polars into pandas"),
    "glm": ("stream", "duckdb", "polars lazy", "duckdb into pandas"),
    "pca": ("stream", "polars lazy", "duckdb", "polars into pandas"),
    "sis": ("stream", "polars lazy", "duckdb", "polars into pandas"),
}

CHILD = textwrap.dedent("""
    import json, sys, time, warnings
    warnings.simplefilter("ignore")
    path, small, source, door = sys.argv[1:5]

    def status(key):
        return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))

    import dpstats as dp
    from dpstats import engines

    XS = " + ".join(f"x{j}" for j in range(1, 9))
    BOUNDS = {f"x{j}": (-4, 4) for j in range(1, 9)} | {"y": (-15, 15), "yb": (0, 1)}
    FORMULA = {"lm": f"y ~ {XS}", "glm": "yb ~ x1 + x2", "pca": f"~ {XS}", "sis": f"y ~ {XS}"}[door]

    def data(p):
        if source == "stream":
            return engines.stream(p)
        if source.startswith("duckdb"):
            import duckdb
            found = duckdb.connect().sql(f"select * from read_parquet('{p}')")
        else:
            import polars as pl
            found = pl.scan_parquet(p)
        # the old route: the formula's columns and the bounds' (as the door kept them) read into pandas
        return engines.as_data(found, FORMULA, keep=[BOUNDS]) if source.endswith("into pandas") else found

    def call(d):
        kw = dict(bounds=BOUNDS, random_state=1)
        if door == "lm":
            return dp.dp_lm(FORMULA, d, eps=1, delta=1e-6, **kw)
        if door == "glm":
            return dp.dp_glm(FORMULA, d, eps=4, delta=1e-6, family="binomial", **kw)
        if door == "pca":
            return dp.dp_pca(FORMULA, d, k=2, eps=1, delta=1e-6, **kw)
        return dp.dp_sis(FORMULA, d, eps=1, k=3, oc_trials=0, **kw)

    call(data(small))  # warm-up: compiled kernels, lazy imports, the source's own start
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM := the current resident size
    before = status("VmRSS")
    start = time.perf_counter()
    fit = call(data(path))
    seconds = time.perf_counter() - start
    if door == "sis":
        released = sorted(fit.selected)
    elif door == "pca":
        released = [abs(v) for v in fit.tidy()["loading"]]
    else:
        released = [float(v) for v in fit.coef()]
    engine = getattr(fit, "engine", "")
    out = {"before": before, "vmhwm": status("VmHWM"), "seconds": seconds, "engine": engine}
    print(json.dumps(out | {"released": released}))
""")


def write(path: Path, rows: int, seed: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(1, 9)] + ["y", "yb"]
    schema = pa.schema([(nm, pa.float64()) for nm in names])
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, rows, GROUP):
            m = min(GROUP, rows - lo)
            x = rng.standard_normal((m, 8))
            y = x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + rng.standard_normal(m)
            yb = (rng.random(m) < 1 / (1 + np.exp(-(0.5 * x[:, 0] - 0.5 * x[:, 1])))).astype(float)
            arrays = [pa.array(x[:, j]) for j in range(8)] + [pa.array(y), pa.array(yb)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=GROUP)


def agreement(run: dict, base: dict, door: str) -> str:
    if door == "sis":
        return "same selection" if run["released"] == base["released"] else "SELECTION DIFFERS"
    return f"{np.max(np.abs(np.subtract(run['released'], base['released']))):.1e}"


def print_door(door: str, runs: dict[str, dict]) -> None:
    base = runs["stream"]
    base_call = base["vmhwm"] - base["before"]
    head = f"{'door':4s} {'source':20s} {'engine':7s} {'seconds':>8s} {'x stream':>9s}"
    print(head + f" {'call MB':>8s} {'x stream':>9s}  released vs stream")
    for name, r in runs.items():
        call, seconds = r["vmhwm"] - r["before"], r["seconds"]
        print(
            f"{door:4s} {name:20s} {r['engine'] or '-':7s} {seconds:8.1f} {seconds / base['seconds']:9.2f} "
            f"{call / MB:8.0f} {call / max(base_call, 1):9.2f}  {agreement(r, base, door)}"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--doors", default="lm,glm")
    args = parser.parse_args(argv)
    doors = [d.strip() for d in args.doors.split(",")]
    with tempfile.TemporaryDirectory(prefix="dpstats_bench_lazy_") as tmp:
        path, small = Path(tmp) / "data.parquet", Path(tmp) / "small.parquet"
        start = time.perf_counter()
        write(path, args.rows, seed=1)
        written = time.perf_counter() - start
        write(small, 5000, seed=2)
        results = {}
        for door in doors:
            results[door] = {}
            for source in SOURCES[door]:
                start = time.perf_counter()
                results[door][source] = child(path, small, source, door, code=CHILD)
                print(
                    f"  ({door} {source}: child done in {time.perf_counter() - start:.0f} s)", file=sys.stderr
                )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{args.rows:,} rows x (x1..x8, y, yb) Parquet, row groups of {GROUP:,} "
        f"(written in {written:.0f} s); {os.cpu_count()} cores, load average {load}"
    )
    for door in doors:
        print_door(door, results[door])
    print("call MB: VmHWM of the child minus its resident size before the call (after a warm-up call)")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
