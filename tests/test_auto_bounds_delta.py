"""bounds="auto": the delta set aside for the private bounds and not spent by them goes to the analysis
(outside audit s15, F01).

The bounds step takes 10% of eps and sets 10% of delta aside.  Its quantiles compose by basic
composition (pure DP, no delta) or in zCDP (which spends the delta share), whichever lets each
quantile have the larger eps; which one follows from the mode and the number of quantiles.  Before
the fix a pure bounds step left its delta share unspent: dp_pca(eps=1, delta=1e-6, bounds="auto")
calibrated its Gaussians at (0.9, 9e-7) and stated (1, 9e-7).  Now the analysis gets the whole delta
when the bounds spend none of it, and the call's statement is its (eps, delta) either way.

Oracles: the analytic Gaussian of Balle & Wang (2018, Thm 8), written here from the paper; and each
door run again with the released bounds declared at the budget the analysis should have had.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpstats as dp


def gaussian_delta(eps: float, mu: float) -> float:
    """Balle & Wang (2018), Theorem 8: a Gaussian of mu = Δ/σ is (eps, δ)-DP iff
    Φ(−eps/mu + mu/2) − e^eps·Φ(−eps/mu − mu/2) <= δ."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def rows(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(rng.uniform(1, 9, (n, 3)), columns=["x1", "x2", "x3"])
    d["y"] = d.x1 + rng.normal(0, 1, n)
    return d


def test_pooled_bounds_spend_no_delta_and_the_pca_gets_all_of_it():
    """The audit's call: the pooled box is 2 exponential mechanisms (pure DP); the PCA's Gaussians compose
    to exactly (0.9, 1e-6) by the analytic Gaussian, and the statement is the call's (1, 1e-6)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_pca("~ x1 + x2", rows(), k=1, eps=1.0, delta=1e-6, bounds="auto", random_state=1)
    bounds, *analysis = fit.privacy.ledger
    assert fit.private_bounds["mode"] == "pooled" and bounds.eps == pytest.approx(0.1) and bounds.delta == 0
    assert (fit.privacy.eps, fit.privacy.delta) == (1.0, 1e-6)
    mu = math.sqrt(math.fsum(1 / e.event.noise_multiplier**2 for e in analysis))
    assert {e.event.kind for e in analysis} == {"gaussian"}
    assert gaussian_delta(0.9, mu) == pytest.approx(1e-6, rel=1e-6)  # before: 9e-7


F3 = "y ~ x1 + x2 + x3"
# each door that takes bounds="auto" and a delta, as call(bounds, eps, delta); "dp_lm zcdp" has enough rows
# for per-column bounds, whose 8 quantiles compose in zCDP and so spend their delta share
DOORS = {
    "dp_lm": lambda b, e, d, data: dp.dp_lm(F3, data, eps=e, delta=d, bounds=b, random_state=1),
    "dp_lm zcdp": lambda b, e, d, data: dp.dp_lm(F3, data, eps=e, delta=d, bounds=b, random_state=1),
    "dp_pca": lambda b, e, d, data: dp.dp_pca("~ x1 + x2 + x3", data, k=2, eps=e, delta=d, bounds=b, random_state=1),
    "dp_gmm": lambda b, e, d, data: dp.dp_gmm(
        "~ x1 + x2", data, k=2, eps=e, delta=d, bounds=b, random_state=1, oc_trials=0
    ),
    "dp_knockoff": lambda b, e, d, data: dp.dp_knockoff(
        F3, data, eps=e, delta=d, bounds=b, c_min=60.0, lambda_min=0.1, sigma=1.0, beta_norm=1.0, random_state=1,
        oc_trials=0,
    ),
    "vertical_glm": lambda b, e, d, data: dp.vertical_glm(
        F3, data, parties=[["x1"], ["x2", "x3"]], eps=e, delta=d, bounds=b, penalty="ridge", lam=1.0, random_state=1
    ),
}  # fmt: skip
# (the auto bounds, eps, delta, rows, whether the bounds spend delta)
CASES = {
    "dp_lm": (dp.AutoBounds(eps=0.7), 1.0, 1e-6, 3000, False),
    "dp_lm zcdp": ("auto", 2.0, 1e-6, 20000, True),
    "dp_pca": ("auto", 1.0, 1e-6, 3000, False),
    "dp_gmm": ("auto", 1.0, 1e-6, 3000, False),
    "dp_knockoff": ("auto", 1.0, 1e-4, 3000, False),
    "vertical_glm": ("auto", 1.0, 1e-6, 3000, False),
}


def _declared(fit):
    """The released bounds as a declaration: the row-norm bound B, or each column's (lo, hi)."""
    pb = fit.private_bounds
    if pb["row_norm_bound"] is not None:
        return pb["row_norm_bound"]
    return {name: tuple(pair) for name, pair in pb["bounds"].items()}


def _entries(ledger):
    return [(e.step, e.eps, e.delta, e.event.to_dict()) for e in ledger]


@pytest.mark.parametrize("door", sorted(DOORS))
def test_the_analysis_is_the_declared_fit_at_the_budget_the_bounds_leave(door):
    """The steps after the bounds are exactly those of the same call with the released bounds declared,
    at eps less the bounds' eps and delta less what the bounds spend (all of it when they are pure DP);
    the statement is the call's (eps, delta) and the ledger sums to it exactly."""
    auto, eps, delta, n, spends_delta = CASES[door]
    data = rows(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = DOORS[door](auto, eps, delta, data)
        bounds = fit.privacy.ledger[0]
        assert bounds.step.startswith("private bounds") and (bounds.delta > 0) == spends_delta
        declared = DOORS[door](_declared(fit), eps - bounds.eps, delta - bounds.delta, data)
    assert _entries(fit.privacy.ledger[1:]) == _entries(declared.privacy.ledger)
    assert (fit.privacy.eps, fit.privacy.delta) == (eps, delta)
    assert math.fsum(e.eps for e in fit.privacy.ledger) == eps
    assert math.fsum(e.delta for e in fit.privacy.ledger) == delta


def test_a_pure_bounds_step_leaves_the_knockoffs_response_bound_at_the_whole_delta():
    """dp_knockoff's row bound B is one quantile (pure DP): its frame clips the responses to Y, whose
    failure probability is the chi-square step's delta; both are taken at the call's whole delta."""
    data = rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = DOORS["dp_knockoff"]("auto", 1.0, 1e-4, data)
        declared = DOORS["dp_knockoff"](fit.private_bounds["row_norm_bound"], 0.9, 1e-4, data)
    assert fit.privacy.ledger[-1].delta == pytest.approx(0.5e-4)
    assert fit.noise == declared.noise  # Y, zeta, the sensitivity and the noise sd
    assert fit.noise["response bound Y"] == pytest.approx(
        dp.methods.knockoff.mechanism.response_bound(
            fit.private_bounds["row_norm_bound"], 1.0, 1.0, len(data), 3, 0.5e-4
        ),
        rel=1e-12,
    )
