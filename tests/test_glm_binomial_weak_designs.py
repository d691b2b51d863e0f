"""dp_glm binomial (logistic) on weak designs: rare events, predictors far inside their bounds.

The s13 binomial audit.  Designs (K = 500 support points, each holding n/K rows, responses drawn
as the group sums, which for the canonical link is the release on the n rows; release, noise scales
and intervals are dpstats' own code, as tests/test_glm_coverage.py):

* "mid": x ~ N(0, 1), AR(0.3)-correlated, declared bounds (−4, 4); slopes 0.5, −0.5, 0.5;
* "wide": the same x under declared bounds (−10, 10);
* intercept solved so that the mean of π over the support is the stated prevalence; delta = 1e-6.

Findings (REPS = 400 replicates, seeds stated per test; MC s.e. of a coverage c over s shown runs
is √(c(1 − c)/s), at most 0.025 here):

* wide bounds, prevalence 3%, n = 2·10⁴, p = 3, eps = 4: λ_min(H) = 0.2 B; intervals are withheld
  in every run ((G5)'s check on the released Hessian works), while the released slopes are shrunk
  towards 0 by about 60% (the eigenvalue floor; the estimates are released regardless).
* mid bounds, prevalence 2%, n = 5·10⁴, p = 3, eps = 4: λ_min(H) = 2.2 B, so both the current check
  (GUARD = 0.6) and a Poisson-style certified check (λ_min(H) ≥ B at 95%) show intervals in every
  run, and the intercept's interval covers in under 5% of them.  The cause is not the floor but the
  pilot: four Newton steps from the public start θ⁰ = 0 (π = 1/2) reach an intercept of about −3.6
  in fitting coordinates while the truth is −4.1 (logistic Newton approaches a rare-event fit
  slowly from π = 1/2), and the one final step from there undershoots, a bias that (G4)'s
  first-order variance does not carry.  With pilot_steps = 8 the same cell covers.
* informative contrast: the same mid design at prevalence 30%, n = 2·10⁴, eps = 4: shown in every
  run and covering in [0.93, 0.97] (the grid of tests/test_glm_coverage.py covers too).

The under-coverage is asserted as found (intercept coverage below 0.2 with intervals shown): the test
fails when it is fixed, and must then become the claim that shown intervals cover.  Tolerances: coverage claims at 0.90 (or [0.93, 0.97]) with MC s.e.
≤ 0.015 at 400 shown runs; the pilot's shortfall is measured at 0.51 against a claim of 0.3.
Runs in a few seconds (not marked slow).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from dpstats.methods import glm as m
from dpstats.privacy.randomness import FastNoise

import test_glm_coverage as coverage_grid

K, DELTA, REPS, P = 500, 1e-6, 400, 3
SLOPES = np.array([0.5, -0.5, 0.5])
HALF = {"mid": 4.0, "wide": 10.0}


def design(bound: float, seed: int) -> tuple[np.ndarray, m.Coordinates]:
    rng = np.random.default_rng(seed)
    cov = 0.3 ** np.abs(np.subtract.outer(np.arange(P), np.arange(P)))
    X = np.clip(rng.multivariate_normal(np.zeros(P), cov, K), -bound, bound)
    return X, m.Coordinates(np.zeros(P), np.full(P, bound), True)


def intercept_for(X: np.ndarray, prevalence: float) -> float:
    """The intercept at which the mean of π over the support is ``prevalence`` (bisection)."""
    lo, hi = -15.0, 5.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expit(mid + X @ SLOPES).mean() < prevalence else (lo, mid)
    return (lo + hi) / 2


def run_cell(
    kind: str, prevalence: float, n: int, eps: float, seed: int, pilot_steps: int = m.PILOT_STEPS
) -> dict:
    X, coords = design(HALF[kind], seed)
    beta = np.r_[intercept_for(X, prevalence), SLOPES]
    options = m.GLMOptions.partial(
        family="binomial", eps=eps, delta=DELTA, pilot_steps=pilot_steps, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, m.response_range("binomial"), n)  # admitted: no raise
    per, W, mu = n // K, coords.rows(X), expit(beta[0] + X @ SLOPES)
    info = np.linalg.eigvalsh((W.T * (per * mu * (1 - mu))) @ W)[0]
    rng = np.random.default_rng(seed + 1)
    noise, cover, estimates, pilots, ratios = FastNoise(rng), [], [], [], []
    for _ in range(REPS):
        y = rng.binomial(per, mu).astype(float)
        fit = m.release(m.Rows(W, y, np.full(K, float(per))), pl, noise)
        estimates.append(fit.coefficients)
        pilots.append(fit.pilot)
        ratios.append(fit.lambda_ratio)
        if not fit.withheld:
            tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
            cover.append((tab["conf.low"] <= beta) & (beta <= tab["conf.high"]))
    shrink = np.median((np.array(estimates)[:, 1:] - SLOPES) / SLOPES, axis=0)
    return {
        "info_over_B": info / pl.spectral(),
        "shown": len(cover) / REPS,
        "coverage": np.mean(cover, axis=0) if cover else None,
        "slope_shrink": float(np.mean(shrink)),
        "pilot_intercept": float(np.mean(np.array(pilots)[:, 0])),
        "true_intercept": float(beta[0] + coords.x_center @ SLOPES),  # θ₀ (centres are 0 here)
        "certified": float(np.mean(np.array(ratios) >= m.guard_level("poisson", coords.k))),
    }


def grid_cell_certified(reps: int = 200) -> tuple[float, float]:
    """tests/test_glm_coverage.py's binomial n = 5000, p = 10, eps = 4 cell (its design and seed): the
    fractions of runs that pass the binomial check (GUARD) and the Poisson-style certified level."""
    cell = ("binomial", 5_000, 10, 4.0)
    rng = np.random.default_rng(300 + coverage_grid.GRID.index(cell))
    X, bounds = coverage_grid.design(10, rng)
    beta = coverage_grid.truth("binomial", 10)
    lo, hi = np.array(bounds).T
    coords = m.Coordinates((lo + hi) / 2, (hi - lo) / 2, True)
    options = m.GLMOptions.partial(
        family="binomial", eps=4.0, delta=DELTA, pilot_steps=m.PILOT_STEPS, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, m.response_range("binomial"), 5_000)
    per, W, mu = 5_000 // K, coords.rows(X), expit(beta[0] + X @ beta[1:])
    noise, ratios = FastNoise(rng), []
    for _ in range(reps):
        y = rng.binomial(per, mu).astype(float)
        ratios.append(m.release(m.Rows(W, y, np.full(K, float(per))), pl, noise).lambda_ratio)
    ratios = np.array(ratios)
    return float(np.mean(ratios >= m.GUARD)), float(np.mean(ratios >= m.guard_level("poisson", coords.k)))


def test_wide_bounds_withhold_intervals_and_shrink_estimates():
    out = run_cell("wide", 0.03, 20_000, 4.0, seed=51)
    assert out["info_over_B"] < 0.5, out
    assert out["shown"] <= 0.01, out  # (G5)'s released-Hessian check
    assert out["slope_shrink"] < -0.4, out  # the estimates (released) are shrunk by the floor


def test_rare_events_cause_is_the_unconverged_pilot():
    four = run_cell("mid", 0.02, 50_000, 4.0, seed=52)
    assert four["info_over_B"] > 1.5 and four["shown"] >= 0.95, four  # both checks would show them
    assert four["coverage"][0] < 0.2, four
    assert four["pilot_intercept"] > four["true_intercept"] + 0.3, four  # the pilot stops short
    eight = run_cell("mid", 0.02, 50_000, 4.0, seed=52, pilot_steps=8)
    assert abs(eight["pilot_intercept"] - eight["true_intercept"]) < 0.1, eight
    # measured 0.90-0.95; 0.87 is 0.90 less two MC s.e. (0.015 at 400 runs)
    assert eight["shown"] >= 0.95 and np.all(eight["coverage"] >= 0.87), eight


def test_common_events_cover():
    out = run_cell("mid", 0.3, 20_000, 4.0, seed=53)
    assert out["shown"] >= 0.95, out
    assert np.all((out["coverage"] >= 0.93) & (out["coverage"] <= 0.97)), out


def test_the_poisson_certified_check_would_not_fix_binomial():
    """(G5')'s certified level, applied to the binomial family, shows the rare-event intervals that do
    not cover and withholds those of an informative grid cell that do (0.927 there, by
    tests/test_glm_coverage.py).  Measured: 1.00 certified in the first, 0.01 in the second."""
    rare = run_cell("mid", 0.02, 50_000, 4.0, seed=52)
    assert rare["certified"] >= 0.95 and rare["coverage"][0] < 0.2, rare
    guard, certified = grid_cell_certified()
    assert guard >= 0.99 and certified <= 0.10, (guard, certified)
