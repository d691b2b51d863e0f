"""Coverage of dp_lm's parametric-bootstrap intervals on the issue's grid (slow).

Grid: n in {10^3, 10^4, 10^5}, p in {3, 10}, eps in {0.5, 1, 5}, delta = 1e-6
(Gaussian mechanism), 400 trials per cell, n_boot = 200, seed 20 + cell index.
Model: rows z ~ N(0, I/3) in the unit box (the variance of Uniform(-1, 1)),
u = η₀ + zᵀη + e, e ~ N(0, 0.1²), η = (0.2, 0.3, ..., -0.3) (u bounded by 1
except with negligible probability).  The data-level statistics are drawn
from their exact sampling law with scipy (Wishart scatter, normal sums and
cross products, χ² residual), independently of dpstats' own bootstrap code,
so the whole grid costs well under a minute; the method itself (release,
ridge, bootstrap) runs as in dp_lm.

Claim checked: in 16 of the 18 cells the mean coverage over the coefficients of a
cell lies in [0.93, 0.97].  The two cells n = 10^3, p = 10, eps <= 1 are the
stated exceptions: there the noise on XᵀX is as large as XᵀX itself, AdaSSP's
ridge is on in every trial, and the calibrated bootstrap (methods.lm) widens the
intervals by the inverse of the ridge's shrinkage: at eps = 0.5 they over-cover
and are uninformative, at eps = 1 they cover about 0.91.  The test checks that
the ridge is on there and that coverage stays within [0.90, 0.99], so the
README's statement of the limitation stays true.  The README table (coverage and
the median ratio of interval widths to non-private OLS on the same data) is
printed by this test (``-s``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from dpstats.methods import lm as m
from dpstats.privacy.randomness import FastNoise

NS, PS, EPSS = (1_000, 10_000, 100_000), (3, 10), (0.5, 1.0, 5.0)
TRIALS, N_BOOT, DELTA, SIGMA = 400, 200, 1e-6, 0.1
EXCEPTIONS = {(1_000, 10, 0.5), (1_000, 10, 1.0)}


def _statistics(n: int, p: int, eta: np.ndarray, trials: int, rng: np.random.Generator) -> np.ndarray:
    """A = Σ v vᵀ for v = (1, z, u), drawn from the exact law (scipy), one per trial."""
    cov = np.eye(p) / 3.0
    scatter = sps.wishart.rvs(df=n - 1, scale=cov, size=trials, random_state=rng).reshape(trials, p, p)
    s = rng.multivariate_normal(np.zeros(p), n * cov, size=trials)
    out = np.empty((trials, p + 2, p + 2))
    for t in range(trials):
        G = np.block(
            [[np.array([[n]]), s[t][None, :]], [s[t][:, None], scatter[t] + np.outer(s[t], s[t]) / n]]
        )
        g = rng.multivariate_normal(np.zeros(p + 1), SIGMA**2 * G)
        rss = g @ np.linalg.solve(G, g) + SIGMA**2 * rng.chisquare(n - p - 1)
        cross = G @ eta + g
        out[t, : p + 1, : p + 1] = G
        out[t, : p + 1, p + 1] = out[t, p + 1, : p + 1] = cross
        out[t, p + 1, p + 1] = eta @ G @ eta + 2 * eta @ g + rss
    return out


def _ols_width(A: np.ndarray, n: int, p: int) -> np.ndarray:
    G, xy, yy = A[: p + 1, : p + 1], A[: p + 1, p + 1], A[p + 1, p + 1]
    beta = np.linalg.solve(G, xy)
    s2 = (yy - beta @ xy) / (n - p - 1)
    return 2 * sps.t.ppf(0.975, n - p - 1) * np.sqrt(s2 * np.diag(np.linalg.inv(G)))


def run_cell(n: int, p: int, eps: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    eta = np.r_[0.2, np.linspace(0.3, -0.3, p)]
    coords = m.Coordinates(np.zeros(p), np.ones(p), 0.0, 1.0, True)
    pl = m.plan(coords, eps=eps, delta=DELTA)
    A = _statistics(n, p, eta, TRIALS, rng)
    hits, ratios, ridge_on = np.zeros(p + 1), [], 0
    for t in range(TRIALS):
        fit = m.release(A[t], n, pl, FastNoise(rng))
        table = m.bootstrap(fit, n, pl, n_boot=N_BOOT, conf_level=0.95, rng=rng).table
        hits += (table["conf.low"] <= eta) & (eta <= table["conf.high"])
        ratios.append(((table["conf.high"] - table["conf.low"]) / _ols_width(A[t], n, p))[1:])
        ridge_on += fit.ridge > 0
    return {
        "n": n,
        "p": p,
        "eps": eps,
        "coverage": float(np.mean(hits / TRIALS)),
        "coverage_min": float(np.min(hits / TRIALS)),
        "width_ratio_median": float(np.median(ratios)),
        "ridge_on": ridge_on / TRIALS,
    }


@pytest.mark.slow
def test_bootstrap_coverage_on_the_grid():
    cells = [(n, p, e) for n in NS for p in PS for e in EPSS]
    rows = [run_cell(n, p, e, seed=20 + i) for i, (n, p, e) in enumerate(cells)]
    for r in rows:
        print(r)
    for r in rows:
        key = (r["n"], r["p"], r["eps"])
        if key in EXCEPTIONS:
            assert r["ridge_on"] > 0.9 and 0.90 <= r["coverage"] <= 0.99, r
        else:
            assert 0.93 <= r["coverage"] <= 0.97, r
