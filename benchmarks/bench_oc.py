"""Operating characteristics: cost of the default and of assume= (issue 15 part 2).

Run: python benchmarks/bench_oc.py [--quick]

1. Default dp_sis (exact operating characteristics from public inputs) at
   n = 200, d = 22 283 vs the same call with oc_trials=0 (target: <= 1.3x).
2. The assume= simulation (dpstats.simulate.sis_trials, what dp_sis calls) at
   n = 200 vs n = 10^6, d = 22 283 (target: ratio about 1: cost independent of n).
3. Peak resident memory of a default streamed dp_sis on a 2*10^6 x 50 Parquet
   file vs the same run with oc_trials=0, each in its own subprocess
   (target: within 50 MB).
Ratios are against baselines measured in the same run.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))

from _timing import best_time  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.simulate import Assume, sis_trials  # noqa: E402

warnings.simplefilter("ignore")

MEMORY_CHILD = """
import resource, sys, warnings
warnings.simplefilter("ignore")
import dpstats as dp
src = dp.engines.stream(sys.argv[1], chunk_rows=100_000)
fit = dp.dp_sis("y ~ .", data=src, eps=1.0, k=5, bounds=(-6, 6), random_state=0, oc_trials=int(sys.argv[2]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def bench_default(quick: bool) -> tuple:
    rng = np.random.default_rng(1)
    d = 22_283
    X = rng.normal(size=(200, d))
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(d)])
    frame.insert(0, "y", X[:, :5].sum(axis=1) + rng.normal(size=200))
    repeat = 3 if quick else 7
    default = best_time(lambda: dp.dp_sis("y ~ .", data=frame, eps=1.0, bounds=(-6, 6)), repeat=repeat)
    off = best_time(
        lambda: dp.dp_sis("y ~ .", data=frame, eps=1.0, bounds=(-6, 6), oc_trials=0), repeat=repeat
    )
    return default, off


def bench_n_independence(quick: bool) -> tuple:
    trials = 20 if quick else 100
    model = Assume(signals=8, strength=0.3)

    def run(n):
        return lambda: sis_trials(
            n,
            22_283,
            10,
            1.0,
            model,
            np.random.default_rng(0),
            trials=trials,
            sensitivity=2.0,
            score="midpoint",
        )

    return best_time(run(200), repeat=3), best_time(run(10**6), repeat=3), trials


def write_parquet(path: Path, n: int, p: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2)
    names = ["y"] + [f"x{j}" for j in range(p)]
    schema = pa.schema([(c, pa.float64()) for c in names])
    block = 250_000
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n, block):
            m = min(block, n - start)
            X = rng.normal(size=(m, p))
            y = X[:, :3].sum(axis=1) + rng.normal(size=m)
            cols = [pa.array(y)] + [pa.array(X[:, j]) for j in range(p)]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=100_000)


def peak_mb(path: Path, oc_trials: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(path), str(oc_trials)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def bench_memory(quick: bool) -> tuple:
    n = 200_000 if quick else 2_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.parquet"
        write_parquet(path, n, 50)
        off = peak_mb(path, 0)
        default = peak_mb(path, 200)
    return n, default, off


def main() -> None:
    quick = "--quick" in sys.argv
    default, off = bench_default(quick)
    print(
        f"1. dp_sis n=200 d=22283: default {default:.3f}s vs oc_trials=0 {off:.3f}s: "
        f"ratio {default / off:.2f}x (target <= 1.3x)"
    )
    small, large, trials = bench_n_independence(quick)
    print(
        f"2. assume= simulation, d=22283, {trials} trials: n=200 {small:.3f}s vs n=10^6 {large:.3f}s: "
        f"ratio {large / small:.2f}x (target about 1)"
    )
    n, mem_default, mem_off = bench_memory(quick)
    print(
        f"3. streamed dp_sis on {n} x 50 Parquet: peak RSS default {mem_default:.0f} MB vs oc_trials=0 "
        f"{mem_off:.0f} MB: difference {mem_default - mem_off:+.0f} MB (target within 50 MB)"
    )


if __name__ == "__main__":
    main()
