"""Every Gaussian door calibrates to its stated budget tightly (an outside audit's finding, session 11).

Before, every door turned (eps, delta) into ρ by Bun & Steinke's ρ + 2√(ρ log 1/δ) <= eps, so a fit
stated at (1, 1e-6) composed (dp.compose, exact for Gaussians) to eps = 0.776: more noise than the
budget needed.  Now an all-Gaussian plan (dp_lm with delta > 0, dp_glm, dp_pca, vertical_glm) takes
the exact ρ = μ²/2 and composes back to its eps; plans that mix in pure-DP steps (dp_gmm, dp_bh,
private bounds) take Canonne, Kamath & Steinke's conversion and compose to at most their eps;
dp_knockoff's Gaussians are analytic for every eps.  The old noise is recomputed here from the old
formula (``bun_steinke_rho``, and the classic σ dp_knockoff used below eps = 1): every noise scale is
now no larger, at several budgets.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from golden.cases import _fan_lv, _mixture, _p_values, _regression

import dpstats as dp
from dpstats.methods import glm, lm, pca, privreg
from dpstats.methods.gmm import budget as gmm_budget
from dpstats.methods.gmm.options import GMMOptions
from dpstats.privacy.bounds import split_budget
from dpstats.privacy.calibration import (
    analytic_gaussian_sigma,
    calibrate_gaussian,
    classic_gaussian_sigma,
    rho_from_eps_delta,
)
from dpstats.privacy.fdr import peeling_scale

BUDGETS = [(1.0, 1e-6), (0.5, 1e-6), (1.0, 1e-9), (3.0, 1e-5), (0.1, 1e-6)]


def bun_steinke_rho(eps: float, delta: float) -> float:
    """The conversion every door used before (Bun & Steinke 2016, Prop. 1.3), solved for ρ."""
    log_term = math.log(1 / delta)
    return (math.sqrt(log_term + eps) - math.sqrt(log_term)) ** 2


def exact_rho(eps: float, delta: float) -> float:
    """ρ = μ²/2 of the Gaussian that is exactly (eps, delta)-DP, by scipy's Brent on Balle & Wang's δ(eps)."""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr, ndtr

    def excess(mu: float) -> float:
        return float(ndtr(-eps / mu + mu / 2)) - math.exp(eps + float(log_ndtr(-eps / mu - mu / 2))) - delta

    return brentq(excess, 1e-6, 1e3, xtol=1e-14, rtol=1e-14) ** 2 / 2


@pytest.mark.parametrize(("eps", "delta"), BUDGETS)
def test_every_gaussian_doors_noise_is_no_larger_than_before(eps, delta):
    old = bun_steinke_rho(eps, delta)
    gain = math.sqrt(old / exact_rho(eps, delta))  # the noise ratio of the all-Gaussian doors
    assert gain < 0.85
    # dp_lm: the stacked statistic gets 0.9 of ρ, σ = Δ₂/√(2·0.9ρ)
    coords = lm.Coordinates(np.zeros(3), np.ones(3), True, y_center=0.0, y_half=1.0)
    pl = lm.plan(lm.LMOptions.partial(eps=eps, delta=delta, lambda_share=0.1), coords)
    assert pl.stat_scale == pytest.approx(pl.l2_sensitivity / math.sqrt(2 * 0.9 * old) * gain, rel=1e-9)
    # dp_glm: every step's sd scales alike
    o = glm.GLMOptions.partial(
        family="binomial", eps=eps, delta=delta, pilot_steps=4, pilot_share=0.3, hessian_share=0.4
    )
    gp = glm.plan(o, glm.Coordinates(np.zeros(3), np.ones(3), True), glm.response_range("binomial"), None)
    final_rho = old * 0.7 * 0.4  # the final step's Hessian share of ρ, before (its score's is split, (G5''))
    assert gp.hessian_sd[-1] == pytest.approx(
        gp.hessian_sensitivity / math.sqrt(2 * final_rho) * gain, rel=1e-9
    )
    # dp_pca, center="midpoint": one Gaussian on the whole budget
    pp = pca.plan(
        pca.PCAOptions.partial(k=2, eps=eps, delta=delta, neighbouring="replace", center="midpoint"), 2.0
    )
    assert pp.sigma == pytest.approx(pp.sensitivity / math.sqrt(2 * old) * gain, rel=1e-9)
    # vertical_glm: the coefficient releases get 0.1 of ρ over K = 2 parties
    vo = privreg.PrivregOptions.partial(
        family="binomial", lam=1.0, eps=eps, delta=delta, rounds=10, eta_clip=4.0, coef_share=0.1,
        neighbouring="replace",
    )  # fmt: skip
    _, (sigma_beta,) = privreg.noise_scales(vo, 1000, 2, [2.0])
    d_beta = privreg.binomial_ridge_sensitivities(1000, 2.0, 1.0, 4.0)[1]
    assert sigma_beta == pytest.approx(d_beta / math.sqrt(2 * 0.1 * old / 2) * gain, rel=1e-9)
    # dp_gmm (mixed plan, Canonne, Kamath & Steinke): every share of ρ is larger
    go = GMMOptions.partial(eps=eps, delta=delta, method="pca_cluster", k=2, neighbouring="replace", refine=3)
    rho = gmm_budget.plan(go, 4).rho
    assert (
        rho["pca"] == pytest.approx(0.16 * rho_from_eps_delta(eps, delta), rel=1e-12)
        and rho["pca"] > 0.16 * old
    )
    # dp_knockoff: the analytic σ, never above the classic one it used below eps = 1
    kappa = calibrate_gaussian(eps, delta / 2, 1.0)[0]
    before = classic_gaussian_sigma(eps, delta / 2) if eps < 1 else analytic_gaussian_sigma(eps, delta / 2)
    assert kappa <= before and kappa == analytic_gaussian_sigma(eps, delta / 2)
    # dp_bh's zCDP peeling scale λ = η√(5k/(2ρ)) and private bounds' ε_j = √(8ρ/count): better too
    assert peeling_scale(eps, delta, 100, 0.01).scale <= 0.01 * math.sqrt(5 * 100 / (2 * old))
    assert split_budget(eps, delta, 2000)[0] >= math.sqrt(8 * old / 2000)


def _logistic(n: int = 20_000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + df.x1 - 0.5 * df.x2)))).astype(int)
    return df


KNOCKOFF = {"fdr": 0.2, "bounds": 8.0, "sigma": 1.0, "beta_norm": 5.0, "lambda_min": 0.5, "oc_trials": 0}
ALL_GAUSSIAN = {
    "dp_lm": lambda: dp.dp_lm(
        "y ~ .", _regression(), eps=1.0, delta=1e-6, bounds=(-3, 3), n_boot=100, random_state=1
    ),
    "dp_glm": lambda: dp.dp_glm("y ~ .", _logistic(), eps=1.0, delta=1e-6, bounds=(-1, 1), random_state=1),
    "dp_pca": lambda: dp.dp_pca(
        "~ .", _mixture(), k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1
    ),
    "vertical_glm": lambda: dp.vertical_glm(
        "y ~ .",
        _regression(),
        parties=[["x1", "x2"], ["x3", "x4"]],
        eps=1.0,
        delta=1e-6,
        lam=0.1,
        penalty="ridge",
        bounds=(-2, 2),
        random_state=1,
    ),  # fmt: skip
    "dp_knockoff_II": lambda: dp.dp_knockoff(
        "y ~ .", _fan_lv(2000, 40, 3), eps=1.0, delta=1e-6, random_state=1, **KNOCKOFF
    ),
}
MIXED = {
    "dp_gmm": lambda: dp.dp_gmm(
        "~ .", _mixture(), k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1, oc_trials=0
    ),
    "dp_bh": lambda: dp.dp_bh(
        _p_values(400, 6, 9), q=0.1, eps=1.0, delta=1e-6, eta=0.01, max_rejections=200, random_state=1
    ),
    "dp_lm_auto_bounds": lambda: dp.dp_lm(
        "y ~ .", _regression(50_000), eps=1.0, delta=1e-6, bounds="auto", n_boot=100, random_state=1
    ),
    "dp_knockoff_I": lambda: dp.dp_knockoff(
        "y ~ .", _fan_lv(2000, 40, 3), eps=1.0, delta=1e-6, method="I", random_state=1, **KNOCKOFF
    ),
    "dp_select_infer": lambda: dp.dp_select_infer(
        "y ~ .", _regression(3000), eps=1.0, delta=1e-6, k=2, bounds=(-3, 3), n_boot=100, random_state=1
    ),
}


def _fit(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. ChanceWarning: the figures, not the fits' quality, are tested
        return make()


@pytest.mark.parametrize("name", list(ALL_GAUSSIAN))
def test_an_all_gaussian_fit_composes_back_to_its_stated_eps(name):
    """compose([fit]) at the fit's delta (the exact Gaussian composition; dp_knockoff's delta-only step
    taken out first) gives back eps = 1 within 1e-9, never more: the fit spends its whole budget, no more.
    The ledger's events are Gaussian, the statement names the conversion, no output the old one."""
    fit = _fit(ALL_GAUSSIAN[name])
    c = dp.compose([fit], delta=fit.privacy.delta)
    assert c.method.startswith("exact Gaussian")
    assert 1.0 - 1e-9 <= c.eps <= 1.0, c.eps
    assert {e.event.kind for e in fit.privacy.ledger} <= {"gaussian", "delta"}
    text = str(fit) + fit.summary().__str__() + json.dumps(fit.to_dict(), ensure_ascii=False, default=str)
    assert "2√(ρ" not in text and "Prop. 1.3" not in text
    if name != "dp_knockoff_II":
        assert "Balle & Wang 2018" in json.dumps(fit.privacy.to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("name", list(MIXED))
def test_a_mixed_plan_composes_to_at_most_its_stated_eps(name):
    """Plans with pure-DP, bounded-range or generic steps: compose([fit]) is at most the stated eps
    (valid: the conversion holds for any ρ-zCDP mechanism) and, where all of it is converted at once
    (dp_gmm, dp_bh), within 1e-9 of it; dp_select_infer's parallel composition is one (eps, delta) step;
    dp_lm with private bounds and dp_knockoff Method I compose parts calibrated separately."""
    fit = _fit(MIXED[name])
    c = dp.compose([fit], delta=fit.privacy.delta)
    assert c.eps <= 1.0, c.eps
    floor = {"dp_gmm": 1 - 1e-9, "dp_bh": 1 - 1e-9, "dp_lm_auto_bounds": 0.95, "dp_knockoff_I": 0.75}
    assert c.eps >= floor.get(name, 1 - 1e-3), c.eps
    text = json.dumps(fit.to_dict(), ensure_ascii=False, default=str)
    assert "2√(ρ" not in text and "Prop. 1.3" not in text
    if name in ("dp_gmm", "dp_bh"):
        assert "Canonne, Kamath & Steinke 2020" in text
