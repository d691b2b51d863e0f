"""dp_lm's pure-DP route against its peer, diffprivlib's LinearRegression (issue 30, "dp_lm against its peer").

Same pure eps = 1, same public bounds (x in [-1, 1]^10, y in [-5, 5]), same data: the root-mean-square
error of the coefficients (intercept included) against non-private OLS on the same rows, the median over
repetitions, for n = 10^4, 10^5, 10^6 and three signal sizes (the true coefficients drawn from
U(-a, a), a = 0.2, 1, 2.5; y = 0.5 + x'b + N(0, 1), clipped to its bounds).  dp_lm's release is run as
the front door runs it (``methods.lm.release`` on the statistics of the same rows, seeded), so that
10^6 rows are affordable; the printed ratio is dp_lm's error over diffprivlib's (below 1: dp_lm is
more accurate).  Requires diffprivlib (``pip install -e ".[bench]"``).

Results in benchmarks/bench_lm_vs_diffprivlib_results.txt.  The stacked Laplace release was level
with diffprivlib at n = 10^4-10^5 and 1.1-1.6 times its error at 10^6; the release block by block
(methods.lm, "Pure DP, block by block"), used where the public n makes its design noise small, is
what the table shows now.

    python benchmarks/bench_lm_vs_diffprivlib.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpstats.methods import lm as m  # noqa: E402
from dpstats.privacy.randomness import NoiseSource  # noqa: E402

P, EPS, Y_HALF = 10, 1.0, 5.0


def data(n: int, a: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.uniform(-1, 1, (n, P))
    y = np.clip(0.5 + X @ rng.uniform(-a, a, P) + rng.normal(0, 1, n), -Y_HALF, Y_HALF)
    return X, y


def dp_lm_release(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """dp_lm's estimate at pure eps (delta = 0) with bounds x in [-1, 1], y in [-5, 5]."""
    n = len(y)
    v = np.c_[np.ones(n), X, y / Y_HALF]
    coords = m.Coordinates(np.zeros(P), np.ones(P), 0.0, Y_HALF, True)
    plan = m.plan(m.LMOptions.partial(eps=EPS, delta=0.0, lambda_share=m.LAMBDA_SHARE), coords, n=n)
    return m.release_statistics(v.T @ v, n, plan, NoiseSource(seed)).coefficients


def diffprivlib_fit(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    from diffprivlib.models import LinearRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = LinearRegression(epsilon=EPS, bounds_X=(-1, 1), bounds_y=(-Y_HALF, Y_HALF), random_state=seed)
        fit.fit(X, y)
    return np.r_[fit.intercept_, fit.coef_]


def rmse(estimate: np.ndarray, ols: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate - ols) ** 2)))


def main(quick: bool) -> None:
    rng = np.random.default_rng(0)
    sizes = ((10**4, 10), (10**5, 5)) if quick else ((10**4, 30), (10**5, 20), (10**6, 5))
    print(f"{'n':>9} {'signal a':>9} {'dp_lm RMSE':>11} {'diffprivlib':>12} {'ratio':>6}")
    for n, reps in sizes:
        for a in (0.2, 1.0, 2.5):
            X, y = data(n, a, rng)
            ols = np.linalg.lstsq(np.c_[np.ones(n), X], y, rcond=None)[0]
            ours = np.median([rmse(dp_lm_release(X, y, s), ols) for s in range(reps)])
            theirs = np.median([rmse(diffprivlib_fit(X, y, s), ols) for s in range(reps)])
            print(f"{n:>9} {a:>9g} {ours:>11.4g} {theirs:>12.4g} {ours / theirs:>6.2f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
