"""The (eps, delta) <-> ρ conversions of privacy/calibration, against references nobody here wrote.

* zCDP -> (eps, delta) (Canonne, Kamath & Steinke 2020, Cor. 13): :func:`zcdp_eps` against
  dp_accounting's RDP accountant (its ``compute_epsilon`` applies the same corollary, order by order,
  on a grid of orders: a dense grid here, so its eps is above the infimum and close to it) and against
  the corollary's δ minimised over the order by scipy (the δ form, not our ε form).
* The inverse :func:`rho_from_eps_delta` is conservative: forward(inverse(eps)) <= eps on a grid of
  eps in [1e-3, 1e3] and delta in [1e-12, 1e-2], and tight (within 1e-9 of the largest ρ).
* All-Gaussian plans (:func:`gaussian_rho_from_eps_delta`): a Gaussian of multiplier 1/√(2ρ) costs
  eps at delta by dp_accounting's PLD (pessimistic, to its discretisation) and by Balle & Wang's
  condition evaluated with scipy.
* Both conversions are tighter than Bun & Steinke's ρ + 2√(ρ log 1/δ), which dpstats used before.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr, ndtr

import dpstats as dp
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta, rho_from_eps_delta, zcdp_eps

EPS_GRID = np.logspace(-3, 3, 25)
DELTA_GRID = [1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2]


def bun_steinke_rho(eps: float, delta: float) -> float:
    """The conversion dpstats used before: the largest ρ with ρ + 2√(ρ log 1/δ) <= eps (Prop. 1.3)."""
    log_term = math.log(1 / delta)
    return (math.sqrt(log_term + eps) - math.sqrt(log_term)) ** 2


def cks_delta(rho: float, eps: float) -> float:
    """min over α > 1 of e^((α−1)(αρ−ε))/(α−1)·(1 − 1/α)^α (Cor. 13), by scipy's bounded Brent
    on log δ in log(α − 1), started from three brackets (the best is kept)."""

    def log_delta(t: float) -> float:
        a = 1 + math.exp(t)
        return (a - 1) * (a * rho - eps) - math.log(a - 1) + a * math.log1p(-1 / a)

    centre = 0.5 * math.log(math.log(1e6) / rho)
    best = min(
        minimize_scalar(
            log_delta, bounds=(centre + lo, centre + hi), method="bounded", options={"xatol": 1e-10}
        ).fun
        for lo, hi in [(-20, 20), (-8, 3), (-3, 8)]
    )
    return math.exp(best)


def dense_rdp_eps(rho: float, delta: float) -> float:
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as R

    acc = R.RdpAccountant(orders=1 + np.logspace(-2, 7, 9001))  # dp_accounting uses orders above 1.01 only
    acc.compose(dpa.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("delta", DELTA_GRID)
def test_the_inverse_is_conservative_and_tight_on_the_grid(delta):
    for eps in EPS_GRID:
        eps = float(eps)
        rho = rho_from_eps_delta(eps, delta)
        assert zcdp_eps(rho, delta) <= eps, (eps, delta)
        assert zcdp_eps(rho * (1 + 1e-9), delta) > eps * (1 - 1e-11), (
            eps,
            delta,
        )  # within 1e-9 of the largest
        assert rho > bun_steinke_rho(eps, delta), (eps, delta)  # tighter than before, everywhere


@pytest.mark.parametrize("delta", DELTA_GRID)
def test_the_forward_map_equals_dp_accountings_rdp_conversion(delta):
    """dp_accounting's eps on its (dense) grid of orders is at least ours — ours is the infimum over all
    orders — and within 1e-5 of it (relative, plus 1e-9 for eps near 0, which both clamp at 0).  ρ up to
    1e3 (eps up to about 1e3): beyond, the best order is below 1.01, where dp_accounting does not look."""
    for rho in np.logspace(-9, 3, 25):
        rho = float(rho)
        ours, theirs = zcdp_eps(rho, delta), dense_rdp_eps(rho, delta)
        assert ours <= theirs * (1 + 1e-12) + 1e-15, (rho, delta, ours, theirs)
        assert ours >= theirs * (1 - 1e-5) - 1e-9, (rho, delta, ours, theirs)
        assert ours <= rho + 2 * math.sqrt(rho * math.log(1 / delta)), (rho, delta)


@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-2])
def test_the_forward_map_solves_the_corollarys_delta_minimised_by_scipy(delta):
    """At our eps the corollary's δ (minimised over α by scipy, a different parametrisation) is delta;
    a hair below our eps it is above delta: our eps is the smallest the corollary allows."""
    for rho in [1e-6, 1e-4, 0.01, 0.0243, 1.0, 30.0, 1e3]:
        eps = zcdp_eps(rho, delta)
        if eps == 0:
            continue
        assert cks_delta(rho, eps) <= delta * (1 + 1e-6), (rho, delta)
        assert cks_delta(rho, eps * (1 - 1e-5)) > delta, (rho, delta)


def test_the_maps_are_monotone_and_handle_the_ends():
    rhos = np.logspace(-10, 4, 400)
    for delta in (1e-12, 1e-6, 1e-2):
        eps = [zcdp_eps(float(r), delta) for r in rhos]
        assert all(b >= a for a, b in zip(eps, eps[1:]))
    assert all(zcdp_eps(0.5, d) > zcdp_eps(0.5, 10 * d) for d in (1e-12, 1e-8, 1e-4))
    assert zcdp_eps(0.0, 1e-6) == 0.0 and zcdp_eps(math.inf, 1e-6) == math.inf
    assert rho_from_eps_delta(math.inf, 1e-6) == math.inf and rho_from_eps_delta(0.0, 1e-6) == 0.0
    with pytest.raises(dp.PrivacyParameterError):
        rho_from_eps_delta(math.nan, 1e-6)
    assert gaussian_rho_from_eps_delta(math.inf, 1e-6) == math.inf
    # a tiny ρ at a large δ: the corollary's infimum is negative, i.e. (0, δ)-DP
    assert zcdp_eps(1e-10, 0.01) == 0.0 and dense_rdp_eps(1e-10, 0.01) == 0.0


def test_the_figures_of_the_audit():
    """(1, 1e-6): ρ 0.01747 (Bun & Steinke) -> 0.02436 (Cor. 13) -> 0.02801 (exact, all Gaussian): a
    Gaussian's noise sd falls to 0.847 and 0.790 of what it was; and a Gaussian calibrated by the old ρ
    costs eps = 0.776 at 1e-6 (the audit's figure), the exact ρ costs 1."""
    from dpstats.privacy.composition import gaussian_eps

    old, cks, exact = (
        bun_steinke_rho(1, 1e-6),
        rho_from_eps_delta(1.0, 1e-6),
        gaussian_rho_from_eps_delta(1.0, 1e-6),
    )
    assert (round(old, 5), round(cks, 5), round(exact, 5)) == (0.01747, 0.02436, 0.02801)
    assert math.sqrt(old / cks) == pytest.approx(0.847, abs=1e-3)
    assert math.sqrt(old / exact) == pytest.approx(0.790, abs=1e-3)
    assert gaussian_eps(1 / math.sqrt(2 * old), 1e-6) == pytest.approx(0.776, abs=1e-3)
    assert gaussian_eps(1 / math.sqrt(2 * exact), 1e-6) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-6, 1e-4, 1e-2])
def test_the_exact_gaussian_rho_costs_eps_by_dp_accountings_pld_and_by_scipy(delta):
    from dp_accounting.pld import privacy_loss_distribution as PL

    for eps in [1e-3, 0.1, 0.5, 1.0, 3.0, 10.0]:
        rho = gaussian_rho_from_eps_delta(eps, delta)
        mu = math.sqrt(2 * rho)
        # Balle & Wang through scipy: δ(eps) of the μ-Gaussian is at most delta, and just above it at 1.001 μ
        for m, below in ((mu, True), (1.001 * mu, False)):
            d = float(ndtr(-eps / m + m / 2)) - math.exp(eps + float(log_ndtr(-eps / m - m / 2)))
            assert (d <= delta) == below, (eps, delta, m)
        pld = PL.from_gaussian_mechanism(1 / mu, value_discretization_interval=1e-4)
        assert pld.get_epsilon_for_delta(delta) == pytest.approx(eps, abs=1e-3)
        assert rho >= rho_from_eps_delta(eps, delta) > bun_steinke_rho(eps, delta)


def test_the_order_search_finds_the_minimum_of_a_fine_scan():
    """The search (coarse grid, then golden section) against a brute-force scan of the same ε_α over
    log(α − 1) in [−40, 40] at step 1e-3: never above it (to rounding), so it found the global minimum."""
    t = np.arange(-40.0, 40.0, 1e-3)
    s = np.exp(t)
    for delta in DELTA_GRID:
        log_inv = math.log(1 / delta)
        for rho in np.logspace(-10, 4, 57):
            scan = (1 + s) * rho + (log_inv - np.log1p(s)) / s - np.log1p(1 / s)
            assert zcdp_eps(float(rho), delta) <= max(0.0, float(scan.min())) * (1 + 1e-12) + 1e-15, (
                rho,
                delta,
            )
