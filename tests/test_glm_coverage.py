"""Coverage of dp_glm's 95% intervals on the issue's grid, and refusal where they would not cover.

Grid: family in {binomial, poisson}, n in {5·10³, 5·10⁴, 5·10⁵}, p in {3, 10}, eps in {1, 4},
delta = 1e-6 (the Gaussian mechanism, the only one dp_glm offers): the issue's whole grid.

Design (fixed, as glm's intervals are conditional on it): K = 500 support points, each
holding n/K rows.  The first ⌈p/2⌉ columns are AR(0.5)-correlated normals of sd 0.45 clipped to
[-1, 1] (declared bounds (-1, 1)); the others are binary (declared bounds (0, 1)), with
P(1) = 0.3, or 0.5 where the first column is positive.  Coefficients: binomial
β = (-0.5, 0.5, -0.5, ...); Poisson β = (1, 0.2, -0.2, ...) with counts bounded by Y = 20;
the design keeps every support point's mean below 8, so a row is clipped at Y with probability
below 10⁻⁴ (clipping is simulated, not assumed away).

What is exact and what is not.  Canonical links make the score and Hessian sums (G1) of rows
sharing a design point depend on their responses only through the responses' sum; so the
release run on the K grouped rows (``methods.glm.Rows`` with y the group sums and m the group
sizes) is the release on the n individual rows, and each replicate draws exactly what n rows
would give: binomial sums ~ Binomial(n/K, π_k), and for Poisson the sum of n/K counts each
clipped at Y, drawn as a multinomial over the clipped values 0, 1, ..., Y − 1, Y (probabilities
pmf(0..Y−1) and P(count ≥ Y)) dotted with those values: the exact law of the clipped sum, at a
cost independent of n.  The release, its noise scales and the interval (G4) are dpstats' own code
(``methods.glm.plan``, ``release``, ``wald_table``), with numpy noise of the same law as the
OpenDP samplers'.  Nothing else is approximated: coverage is measured, not derived.

Claims: every cell that the public rule (G5) admits has coverage of every coefficient in
[0.93, 0.97] over REPS replicates (binomial standard error 0.0056 at 0.95 and REPS = 1500) among the
replicates whose intervals are shown, and withholds them ((G5), from released values) in at most
5% of the replicates: no printed interval under-covers, and withholding is rare.  Every other cell is refused with AssumptionError before anything is spent.
Seeds: 300 + cell index for the design and the replicates.  ``-s`` prints the table with the
median width relative to glm's (the non-private Wald interval on the same design): README.md's
dp_glm coverage table is that output.  The widths are not asserted (they follow dp_glm's pilot
and noise-split defaults); re-run with ``-s`` and update the README when those change.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import expit

from dpstats.errors import AssumptionError
from dpstats.methods import glm as m
from dpstats.privacy.randomness import FastNoise

pytestmark = pytest.mark.slow

FAMILIES, NS, PS, EPSS = ("binomial", "poisson"), (5_000, 50_000, 500_000), (3, 10), (1.0, 4.0)
DELTA, K, REPS, Y = 1e-6, 500, 1500, 20.0
GRID = list(itertools.product(FAMILIES, NS, PS, EPSS))
# cells the public rule (G5) refuses: their intervals would under-cover (down to 0.4, found by simulation;
# ("poisson", 50_000, 10, 1.0), public ratio 0.138 with the exact conversion's noise, withholds 97% of its
# intervals and under-covers the rest when admitted: the reason REFUSE_RATIO is 0.12)
REFUSED = {
    ("binomial", 5_000, 10, 1.0),
    ("poisson", 5_000, 3, 1.0),
    (
        "poisson",
        5_000,
        3,
        4.0,
    ),  # ratio 0.107 > POISSON_REFUSE_RATIO 0.06 (G5'): B = 0.95 λ_min(H), shown in 5%
    ("poisson", 5_000, 10, 1.0),
    ("poisson", 5_000, 10, 4.0),
    ("poisson", 50_000, 10, 1.0),
}


def design(p: int, rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[float, float]]]:
    pc = (p + 1) // 2
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(pc), np.arange(pc)))
    cont = np.clip(0.45 * rng.multivariate_normal(np.zeros(pc), cov, K), -1, 1)
    prob = 0.3 + 0.2 * (cont[:, :1] > 0)
    binary = (rng.random((K, p - pc)) < prob).astype(float)
    return np.c_[cont, binary], [(-1.0, 1.0)] * pc + [(0.0, 1.0)] * (p - pc)


def truth(family: str, p: int) -> np.ndarray:
    slopes = np.array([(-1) ** j for j in range(p)], float)
    return np.r_[-0.5, 0.5 * slopes] if family == "binomial" else np.r_[1.0, 0.2 * slopes]


def run_cell(family: str, n: int, p: int, eps: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    X, bounds = design(p, rng)
    beta = truth(family, p)
    lo, hi = np.array(bounds).T
    coords = m.Coordinates((lo + hi) / 2, (hi - lo) / 2, True)
    resp = m.response_range(family, counts=(0.0, Y))
    options = m.GLMOptions.partial(
        family=family, eps=eps, delta=DELTA, pilot_steps=m.PILOT_STEPS, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, resp, n)  # raises AssumptionError for a refused cell
    eta = beta[0] + X @ beta[1:]
    per = n // K
    W = coords.rows(X)
    mu = expit(eta) if family == "binomial" else np.exp(eta)
    assert family == "binomial" or mu.max() < 8.0
    info = (W.T * (per * (mu * (1 - mu) if family == "binomial" else mu))) @ W
    _, L = coords.linear()
    glm_se = np.sqrt(np.diag(L @ np.linalg.inv(info) @ L.T))
    values = np.r_[np.arange(Y), Y]  # a count clipped at Y (an integer) takes these values
    clipped = np.c_[sps.poisson.pmf(np.arange(Y)[None, :], mu[:, None]), sps.poisson.sf(Y - 1, mu)]
    cover, widths, withheld = [], [], 0
    noise = FastNoise(rng)
    for _ in range(REPS):
        if family == "binomial":
            y = rng.binomial(per, mu).astype(float)
        else:
            y = rng.multinomial(per, clipped) @ values  # the sum of per counts, each clipped at Y
        fit = m.release(m.Rows(W, y, np.full(K, float(per))), pl, noise)
        tab = m.wald_table(fit.coefficients, fit.vcov, 0.95, bool(fit.withheld))
        withheld += bool(fit.withheld)
        if fit.withheld:
            continue
        cover.append((tab["conf.low"] <= beta) & (beta <= tab["conf.high"]))
        widths.append((tab["conf.high"] - tab["conf.low"]) / (2 * 1.959964 * glm_se))
    return {
        "coverage": np.mean(cover, axis=0),
        "width": float(np.nanmedian(widths)),
        "withheld": withheld / REPS,
        "shown": len(cover),
        "ratio": m.noise_ratio(pl, n),
    }


@pytest.mark.parametrize("cell", GRID, ids=lambda c: f"{c[0]}-n{c[1]}-p{c[2]}-eps{c[3]:g}")
def test_coverage_or_refusal(cell):
    seed = 300 + GRID.index(cell)
    if cell in REFUSED:
        with pytest.raises(AssumptionError, match="Nothing was spent"):
            run_cell(*cell, seed)
        print(f"\n{cell}: refused before any spend")
        return
    out = run_cell(*cell, seed)
    cov = out["coverage"]
    print(
        f"\n{cell}: coverage {cov.min():.3f}..{cov.max():.3f}, width/glm {out['width']:.2f}, "
        f"withheld {out['withheld']:.3f}, public ratio {out['ratio']:.3f}"
    )
    assert out["withheld"] <= 0.05, out
    assert np.all((cov >= 0.93) & (cov <= 0.97)), out
