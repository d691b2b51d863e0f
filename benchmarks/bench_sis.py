"""DP-SIS speed (issue 2).  Run: python benchmarks/bench_sis.py [--quick]

1. Canonical Lipschitz top-k at d = 22 283, k = 100: vectorised vs the paper's
   literal double loop (target: <= 0.2 s).
2. dp_sis("y ~ .") end to end on n = 200, d = 22 283 from a pandas frame
   (target: <= 0.5 s) vs building the same design through patsy (extrapolated
   from 400 terms: a formula string past ~1000 terms makes patsy recurse and fail).
3. dp_sis on n = 10^6, d = 200 in memory vs a bare X.T @ y (target: <= 3x).
Ratios are against baselines measured in the same run.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from _timing import best_time  # noqa: E402
from test_topk import literal_canonical_lipschitz  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.privacy.topk import canonical_lipschitz  # noqa: E402

warnings.simplefilter("ignore")


def bench_topk() -> list[tuple]:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=22_283)
    vec = best_time(lambda: canonical_lipschitz(scores, 100, 1.0, rng), repeat=5)
    start = time.perf_counter()
    literal_canonical_lipschitz(list(scores), 100, 1.0, rng)
    literal = time.perf_counter() - start
    return [("canonical Lipschitz d=22283 k=100", vec, "literal double loop", literal, 0.2)]


def wide_frame(n: int, d: int, rng) -> pd.DataFrame:
    X = rng.normal(size=(n, d))
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(d)])
    frame.insert(0, "y", X[:, :5].sum(axis=1) + rng.normal(size=n))
    return frame


def bench_wide() -> list[tuple]:
    import patsy

    rng = np.random.default_rng(1)
    frame = wide_frame(200, 22_283, rng)
    fit = lambda: dp.dp_sis("y ~ .", data=frame, eps=1.0, bounds=(-6, 6), oc_trials=0)  # noqa: E731
    ours = best_time(fit, repeat=5)
    terms = 400
    formula = "y ~ " + " + ".join(f"g{j}" for j in range(terms))
    start = time.perf_counter()
    patsy.dmatrices(formula, frame.iloc[:, : terms + 1])
    patsy_time = (time.perf_counter() - start) * 22_283 / terms
    return [
        (
            "dp_sis y~. n=200 d=22283 (pandas)",
            ours,
            "patsy design, extrapolated from 400 terms",
            patsy_time,
            0.5,
        )
    ]


def bench_tall(n: int) -> list[tuple]:
    rng = np.random.default_rng(2)
    frame = wide_frame(n, 200, rng)
    X = rng.normal(size=(n, 200))
    y = frame["y"].to_numpy()
    bare = best_time(lambda: X.T @ y, repeat=5)
    fit = lambda: dp.dp_sis("y ~ .", data=frame, eps=1.0, bounds=(-6, 6), oc_trials=0)  # noqa: E731
    ours = best_time(fit, repeat=5)
    return [(f"dp_sis y~. n={n} d=200 (pandas)", ours, "bare X.T @ y", bare, 3 * bare)]


def main(quick: bool = False) -> None:
    rows = bench_topk() + bench_wide() + bench_tall(200_000 if quick else 1_000_000)
    print(f"{'benchmark':44s} {'ours (s)':>9s}  {'baseline':44s} {'base (s)':>9s} {'ratio':>7s}  target")
    for name, ours, base_name, base, target in rows:
        ok = "ok" if ours <= target else "MISSED"
        print(
            f"{name:44s} {ours:9.3f}  {base_name:44s} {base:9.3f} {ours / base:7.2f}  <= {target:.3g} s {ok}"
        )
    print(
        f"(2 cores; numba threads: {_threads()}; log C(22282, 99) = {math.lgamma(22283) - math.lgamma(100) - math.lgamma(22184):.1f})"
    )


def _threads() -> str:
    try:
        from numba import get_num_threads

        return str(get_num_threads())
    except ImportError:
        return "numba missing"


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
