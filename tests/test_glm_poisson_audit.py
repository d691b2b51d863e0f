"""dp_glm Poisson on the s12-stat2 audit's design (finding H1): shown intervals cover, or are not shown.

Design (the audit's, b02/b03): x1 ~ N(0, 1) clipped at ±3; x2 = 0.5 x1 + √0.75 N(0, 1), clipped at ±3;
x3 ~ Bernoulli(0.3); y ~ Poisson(exp(0.3 + 0.3 x1 − 0.2 x2 + 0.4 x3)) clipped at Y = 30; declared
bounds x1, x2 (−3, 3), x3 (0, 1), y (0, 30); delta = 1e-6.  Here the design is fixed at K = 500 support
points drawn from that law (seed 7), each holding n/K rows, and the clipped Poisson sums are drawn
exactly as in tests/test_glm_coverage.py (the release on the grouped rows is the release on the n
rows, canonical link); release, noise scales and intervals are dpstats' own code.

Claims (dpstats.methods.glm, (G5')), REPS = 400 replicates per cell, seeds 40 + cell index:
* n = 2·10⁴, eps = 2 and n = 5·10⁴, eps = 1 (B = 2.15 and 1.63 λ_min(H); admitted by the public rule):
  intervals are shown in at most 5% of the runs; the test allows the binomial(400, 0.05) 99.9%
  quantile (32).  Before (G5') they were shown in 21% and 54% of the runs and covered 0.48–0.76.
* n = 2·10⁴, eps = 12 (B ≈ 0.5 λ_min(H)): intervals shown in at least 95% of the runs, and every
  coefficient's coverage among them inside the two-sided 99.9% binomial range around 0.95.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from dpstats.methods import glm as m
from dpstats.privacy.randomness import FastNoise

pytestmark = pytest.mark.slow

K, Y, REPS, DELTA = 500, 30.0, 400, 1e-6
BETA = np.array([0.3, 0.3, -0.2, 0.4])
CELLS = [(20_000, 2.0), (50_000, 1.0), (20_000, 12.0)]


def audit_design() -> np.ndarray:
    rng = np.random.default_rng(7)
    x1 = np.clip(rng.normal(size=K), -3, 3)
    x2 = np.clip(0.5 * x1 + np.sqrt(0.75) * rng.normal(size=K), -3, 3)
    x3 = (rng.random(K) < 0.3).astype(float)
    return np.c_[x1, x2, x3]


def run_cell(n: int, eps: float, seed: int) -> dict:
    X = audit_design()
    coords = m.Coordinates(np.array([0.0, 0.0, 0.5]), np.array([3.0, 3.0, 0.5]), True)
    options = m.GLMOptions.partial(
        family="poisson", eps=eps, delta=DELTA, pilot_steps=m.PILOT_STEPS, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, m.response_range("poisson", counts=(0.0, Y)), n)  # admitted: no raise
    mu = np.exp(BETA[0] + X @ BETA[1:])
    per, W = n // K, coords.rows(X)
    values = np.r_[np.arange(Y), Y]
    clipped = np.c_[sps.poisson.pmf(np.arange(Y)[None, :], mu[:, None]), sps.poisson.sf(Y - 1, mu)]
    rng = np.random.default_rng(seed)
    noise, cover = FastNoise(rng), []
    for _ in range(REPS):
        y = rng.multinomial(per, clipped) @ values
        fit = m.release(m.Rows(W, y, np.full(K, float(per))), pl, noise)
        if not fit.withheld:
            tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
            cover.append((tab["conf.low"] <= BETA) & (BETA <= tab["conf.high"]))
    return {"shown": len(cover), "coverage": np.mean(cover, axis=0) if cover else None}


@pytest.mark.parametrize("cell", CELLS[:2], ids=lambda c: f"n{c[0]}-eps{c[1]:g}")
def test_weak_design_rarely_shows_intervals(cell):
    out = run_cell(*cell, seed=40 + CELLS.index(cell))
    assert out["shown"] <= sps.binom.ppf(0.999, REPS, 0.05), out


def test_informative_design_shows_intervals_that_cover():
    out = run_cell(*CELLS[2], seed=42)
    assert out["shown"] >= 0.95 * REPS, out
    shown = out["shown"]
    lo, hi = sps.binom.ppf(0.0005, shown, 0.95) / shown, sps.binom.isf(0.0005, shown, 0.95) / shown
    assert np.all((out["coverage"] >= lo) & (out["coverage"] <= hi)), (out, lo, hi)
