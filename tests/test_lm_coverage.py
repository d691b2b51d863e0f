"""Coverage of dp_lm's parametric-bootstrap intervals on the issue's grid (slow).

Grid: n in {10^3, 10^4, 10^5}, p in {3, 10}, eps in {0.5, 1, 5}, n_boot = 200, for
both mechanisms: delta = 1e-6 (Gaussian, 400 trials per cell, seed 20 + cell index) and
delta = 0 (Laplace, dp_lm's default, 800 trials per cell, seed 60 + cell index).  The
Laplace grid has twice the trials since its release is split block by block where n is
large (methods.lm, "Pure DP, block by block"): with its new draws one cell, n = 10^5,
p = 3, eps = 1, came out at 0.929 with 400 trials, and its mean over 8 other seeds is
0.939 (0.936 with the stacked release), so 400 trials (s.e. 0.011) were too few for the
band; with 800 the s.e. of a cell's mean is at most 0.008.
Model: rows z ~ N(0, Σ) in the unit box, Σ = I/3 (the variance of Uniform(-1, 1)),
u = η₀ + zᵀη + e, e ~ N(0, 0.1²), η = (0.2, 0.3, ..., -0.3) (u bounded by 1
except with negligible probability).  The data-level statistics are drawn
from their exact sampling law with scipy (Wishart scatter, normal sums and
cross products, χ² residual), independently of dpstats' own bootstrap code,
so a grid costs about a minute; the method itself (release, ridge, bootstrap)
runs as in dp_lm.

Claims checked: in every cell of both grids the mean coverage over the
coefficients lies in [0.93, 0.97] (the issue's band; with 400 trials and 4 or
11 coefficients the binomial standard error of a cell's mean is at most 0.011),
except that cells where AdaSSP's ridge is on in most trials may over-cover up to 0.98
(the calibrated bootstrap widens by J⁻¹ there; the band of the correlated designs below).
Since dp_lm calibrates its Gaussian noise exactly (0.76 times the noise sd at eps = 0.5,
where Bun & Steinke's conversion was used before) the cell n = 10^3, p = 3, eps = 0.5,
ridge on in 96% of trials, covers 0.969 on average over seeds 20 and 101-106 (sd 0.004
between seeds; 0.9725 at seed 20, 0.965 before the change).
A second check runs the hardest cells (n = 10^3, where AdaSSP's ridge is on)
with correlated designs, Σ = AR(0.6)/3 and a heteroscedastic AR(0.4)
(seeds 100 + cell index): coverage in [0.92, 0.98], the band the data model's
shrinkage (methods.lm.shrunk_covariance) was tuned to.  A third runs a collinear design (the Gaussian
twin of sklearn's diabetes, condition number about 1 300) where the release does not resolve the design:
mean coverage at least 0.92 and every slope at least 0.88.  The README table
(coverage and the median ratio of interval widths to non-private OLS on the
same data) is printed by the grid test (``-s``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from dpstats.methods import lm as m
from dpstats.privacy.randomness import FastNoise

NS, PS, EPSS = (1_000, 10_000, 100_000), (3, 10), (0.5, 1.0, 5.0)
TRIALS, N_BOOT, SIGMA = 400, 200, 0.1
MECHANISMS = {"gaussian": (1e-6, 20, TRIALS), "laplace": (0.0, 60, 2 * TRIALS)}


def independent(p: int) -> np.ndarray:
    return np.eye(p) / 3.0


def autoregressive(p: int) -> np.ndarray:
    i = np.arange(p)
    return 0.6 ** np.abs(i[:, None] - i[None, :]) / 3.0


def heteroscedastic(p: int) -> np.ndarray:
    i, sd = np.arange(p), np.sqrt(np.linspace(0.05, 0.33, p))
    return np.outer(sd, sd) * 0.4 ** np.abs(i[:, None] - i[None, :])


def _statistics(
    n: int, cov: np.ndarray, eta: np.ndarray, trials: int, rng: np.random.Generator, sigma: float = SIGMA
) -> np.ndarray:
    """A = Σ v vᵀ for v = (1, z, u), drawn from the exact law (scipy), one per trial."""
    p = cov.shape[0]
    scatter = sps.wishart.rvs(df=n - 1, scale=cov, size=trials, random_state=rng).reshape(trials, p, p)
    s = rng.multivariate_normal(np.zeros(p), n * cov, size=trials)
    out = np.empty((trials, p + 2, p + 2))
    for t in range(trials):
        G = np.block(
            [[np.array([[n]]), s[t][None, :]], [s[t][:, None], scatter[t] + np.outer(s[t], s[t]) / n]]
        )
        g = rng.multivariate_normal(np.zeros(p + 1), sigma**2 * G)
        rss = g @ np.linalg.solve(G, g) + sigma**2 * rng.chisquare(n - p - 1)
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


def run_cell(
    n: int, p: int, eps: float, seed: int, delta: float = 1e-6, design=independent, trials: int = TRIALS
) -> dict:
    rng = np.random.default_rng(seed)
    eta = np.r_[0.2, np.linspace(0.3, -0.3, p)]
    coords = m.Coordinates(np.zeros(p), np.ones(p), True, y_center=0.0, y_half=1.0)
    pl = m.plan(m.LMOptions.partial(eps=eps, delta=delta, lambda_share=m.LAMBDA_SHARE), coords, n=n)
    A = _statistics(n, design(p), eta, trials, rng)
    hits, ratios, ridge_on = np.zeros(p + 1), [], 0
    for t in range(trials):
        fit = m.release_statistics(A[t], n, pl, FastNoise(rng))
        table = m.bootstrap(fit, n, pl, n_boot=N_BOOT, conf_level=0.95, rng=rng).table
        hits += (table["conf.low"] <= eta) & (eta <= table["conf.high"])
        ratios.append(((table["conf.high"] - table["conf.low"]) / _ols_width(A[t], n, p))[1:])
        ridge_on += fit.ridge > 0
    return {
        "mechanism": pl.noise,
        "n": n,
        "p": p,
        "eps": eps,
        "coverage": float(np.mean(hits / trials)),
        "coverage_min": float(np.min(hits / trials)),
        "width_ratio_median": float(np.median(ratios)),
        "ridge_on": ridge_on / trials,
    }


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
def test_bootstrap_coverage_on_the_grid(mechanism):
    delta, seed0, trials = MECHANISMS[mechanism]
    cells = [(n, p, e) for n in NS for p in PS for e in EPSS]
    rows = [
        run_cell(n, p, e, seed=seed0 + i, delta=delta, trials=trials) for i, (n, p, e) in enumerate(cells)
    ]
    for r in rows:
        print(r)
    outside = [r for r in rows if not 0.93 <= r["coverage"] <= (0.98 if r["ridge_on"] > 0.5 else 0.97)]
    assert not outside, outside


@pytest.mark.slow
@pytest.mark.parametrize("design", [autoregressive, heteroscedastic], ids=["ar0.6", "hetero-ar0.4"])
def test_coverage_with_correlated_designs_where_the_ridge_is_on(design):
    cells = [(p, e, d) for p in PS for e in EPSS for d in (1e-6, 0.0)]
    rows = [run_cell(1_000, p, e, seed=100 + i, delta=d, design=design) for i, (p, e, d) in enumerate(cells)]
    for r in rows:
        print(design.__name__, r)
    assert np.mean([r["ridge_on"] for r in rows]) > 0.5  # the regime the shrinkage is for
    outside = [r for r in rows if not 0.92 <= r["coverage"] <= 0.98]
    assert not outside, outside


# ------------------------------------------------------------------ a collinear design (audit s13-stat3, finding 1)
# sklearn's diabetes (scaled=False), all 10 predictors, mapped to the unit box by the audit's public rounded bounds
# (each contains every row); the response by (25, 350).  Its covariance there has eigenvalues 0.00085 … 1.07
# (condition number about 1 300; s1–s2 correlated 0.90): the Gaussian twin keeps it, with the population OLS
# coefficients and residual sd in unit coordinates (η, σ), rows N(0, Σ) (the centring is immaterial to slopes).
DIABETES_BOUNDS = [
    (18, 80),
    (1, 2),
    (15, 45),
    (60, 135),
    (95, 305),
    (40, 245),
    (20, 100),
    (2, 10),
    (3, 6.5),
    (55, 125),
]


def diabetes_twin() -> tuple[np.ndarray, np.ndarray, float]:
    """(Σ, η, σ) of the diabetes design in unit coordinates (η: intercept first)."""
    datasets = pytest.importorskip("sklearn.datasets")
    data = datasets.load_diabetes(scaled=False)
    lo, hi = np.array(DIABETES_BOUNDS).T
    z = (data.data - (lo + hi) / 2) / ((hi - lo) / 2)
    u = (data.target - 187.5) / 162.5
    X = np.c_[np.ones(len(u)), z - z.mean(0)]
    eta, rss, *_ = np.linalg.lstsq(X, u, rcond=None)
    return np.cov(z, rowvar=False, bias=True), eta, float(np.sqrt(rss[0] / (len(u) - X.shape[1])))


def twin_fits(n: int, eps: float, trials: int, seed: int):
    """(η, plan, released statistics, fits) of ``trials`` Laplace releases on the twin."""
    cov, eta, sigma = diabetes_twin()
    rng = np.random.default_rng(seed)
    p = cov.shape[0]
    coords = m.Coordinates(np.zeros(p), np.ones(p), True, y_center=0.0, y_half=1.0)
    pl = m.plan(m.LMOptions.partial(eps=eps, delta=0.0, lambda_share=m.LAMBDA_SHARE), coords, n=n)
    A = _statistics(n, cov, eta, trials, rng, sigma)
    return eta, pl, rng, [m.release_statistics(a, n, pl, FastNoise(rng)) for a in A]


@pytest.mark.parametrize("n, eps, seed", [(5_000, 4.0, 300), (50_000, 4.0, 301)])
def test_diabetes_twin_says_the_release_does_not_resolve_the_design(n, eps, seed):
    """The public rule of methods.lm.release_warnings fires (the "data" note, not the noise-dominated one) in
    at least 95 of 100 releases (the bootstrap then re-releases its design model, below); it is silent on the
    grid's resolved cells (identity design, n = 10^5, p = 10, every eps: 0 of 50 each)."""
    _, pl, _, fits = twin_fits(n, eps, 100, seed)
    kinds = [[k for k, _ in m.release_warnings(f, n, pl)] for f in fits]
    assert sum(k == ["data"] for k in kinds) >= 95, kinds
    rng = np.random.default_rng(302)
    for eps_grid in EPSS:
        p = 10
        coords = m.Coordinates(np.zeros(p), np.ones(p), True, y_center=0.0, y_half=1.0)
        grid_plan = m.plan(
            m.LMOptions.partial(eps=eps_grid, delta=0.0, lambda_share=m.LAMBDA_SHARE), coords, n=NS[-1]
        )
        A = _statistics(NS[-1], independent(p), np.r_[0.2, np.linspace(0.3, -0.3, p)], 50, rng)
        fits = [m.release_statistics(a, NS[-1], grid_plan, FastNoise(rng)) for a in A]
        assert not any(m.release_warnings(f, NS[-1], grid_plan) for f in fits)


@pytest.mark.slow
@pytest.mark.parametrize("n, seed", [(5_000, 303), (50_000, 304)])
def test_diabetes_twin_coverage(n, seed):
    """Coverage of the 10 slopes at eps = 4 (Laplace), 200 trials, n_boot = 200: mean at least 0.92 and every
    slope at least 0.88 (binomial s.e. 0.015 at 0.95).  Where methods.lm.release_warnings says the release does
    not resolve the design, the bootstrap re-releases its design model in every replicate (methods.lm,
    "Limits"); with the plug-in Σ̂ it covered 0.81 (s1 0.50) at n = 5 000 and 0.87 (s3, s5 0.81, 0.77) at
    n = 50 000, with the design's true covariance in its place 0.96–0.97; now 0.98 (s1 0.92) and 0.96 (s3 0.925).
    It over-covers at n = 5 000: the re-released models carry the design's uncertainty without resolving it."""
    eta, pl, rng, fits = twin_fits(n, 4.0, 200, seed)
    hits = np.zeros(eta.size)
    for fit in fits:
        table = m.bootstrap(fit, n, pl, n_boot=N_BOOT, conf_level=0.95, rng=rng).table
        hits += (table["conf.low"] <= eta) & (eta <= table["conf.high"])
    coverage = hits[1:] / len(fits)
    print("diabetes twin", n, np.round(coverage, 3).tolist())
    assert coverage.mean() >= 0.92 and coverage.min() >= 0.88, coverage
