"""dp_bh's formula route: marginal slope z-tests on bounded rows, released through private BH (issue 20).

Oracles: brute force over every neighbouring data set of a small grid for the derived
sensitivities (equations (6)-(7) of dpstats.methods.bh, computed here from the raw sums, not
from our code); statsmodels OLS of y on each column alone for the z-statistics; statsmodels'
``multipletests`` for BH.  FDR and power by simulation: tests/test_bh_formula_slow.py.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

import dpstats as dp
from dpstats.errors import DataError, FormulaError, NonPrivateWarning, PrivacyParameterError
from dpstats.methods.bh import eta_two_sided_z, marginal_slope_z, z_slope_delta


def _frame(n: int = 4000, d: int = 6, seed: int = 0, beta=(0.5, -0.4)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
    df["y"] = X[:, : len(beta)] @ np.asarray(beta) + rng.normal(0, 1, n)
    return df


# --------------------------------------------------------------------------- sensitivity by brute force
def _all_neighbours(n: int, xs: np.ndarray, ys: np.ndarray):
    """Every data set of n rows on the grid xs × ys, and every one-row replacement of it on the grid."""
    cells = np.array(list(itertools.product(xs, ys)))  # the grid's possible rows
    idx = np.array(list(itertools.product(range(len(cells)), repeat=n)))  # data sets as row indices
    rows = cells[idx]  # (D, n, 2)
    sx, sy, sxy = rows[..., 0].sum(1), rows[..., 1].sum(1), (rows[..., 0] * rows[..., 1]).sum(1)
    # replace row i by cell c: the sums change by (c − row i)
    dx = cells[None, None, :, 0] - rows[:, :, None, 0]
    dy = cells[None, None, :, 1] - rows[:, :, None, 1]
    dxy = cells[None, None, :, 0] * cells[None, None, :, 1] - (rows[..., 0] * rows[..., 1])[:, :, None]
    before = sxy - sx * sy / n
    after = (sxy[:, None, None] + dxy) - (sx[:, None, None] + dx) * (sy[:, None, None] + dy) / n
    return before, after


def test_centred_cross_product_and_z_sensitivity_by_brute_force():
    """n = 4 rows, x on {0, 1/3, 2/3, 1} (bounds (0, 1)), y on {-1, 0, 0.5, 1} (bounds (-1, 1)).

    S = Σxy − ΣxΣy/n computed from raw sums (not our centred form); the largest |S' − S| over all
    65 536 data sets and every one-row replacement must equal (1 − 1/n)·W_x·W_y exactly (it is
    attained on the grid), so the largest |z' − z| equals z_slope_delta.
    """
    n, sigma = 4, 0.7
    xs, ys = np.array([0.0, 1 / 3, 2 / 3, 1.0]), np.array([-1.0, 0.0, 0.5, 1.0])
    before, after = _all_neighbours(n, xs, ys)
    largest = np.abs(after - before[:, None, None]).max()
    assert math.isclose(largest, (1 - 1 / n) * 1.0 * 2.0, rel_tol=1e-12)
    tau = 0.5  # half the width of x's bounds
    assert math.isclose(largest / (sigma * tau * math.sqrt(n)), z_slope_delta(-1, 1, n, sigma), rel_tol=1e-12)


def test_truncated_log_p_change_attains_the_derived_eta_by_brute_force():
    """Same grid, z = S/(σ·τ·√n): with ν = 2Φ̄(Δz) the extremal pair (z = 0 -> Δz) is on the grid,
    so the largest change of log max(2Φ̄(|z|), ν) must equal eta_two_sided_z(Δz, ν); with a smaller
    ν it must stay below the derived η."""
    n, sigma, tau = 4, 0.7, 0.5
    before, after = _all_neighbours(n, np.array([0.0, 1 / 3, 2 / 3, 1.0]), np.array([-1.0, 0.0, 0.5, 1.0]))
    z0, z1 = before / (sigma * tau * math.sqrt(n)), after / (sigma * tau * math.sqrt(n))
    delta_z = z_slope_delta(-1, 1, n, sigma)
    for nu, attained in ((float(2 * norm.sf(delta_z)), True), (1e-3, False)):

        def log_p(z, nu=nu):
            return np.log(np.maximum(2 * norm.sf(np.abs(z)), nu))

        change = np.abs(log_p(z1) - log_p(z0)[:, None, None]).max()
        eta = eta_two_sided_z(delta_z, nu)
        assert change <= eta * (1 + 1e-9)
        if attained:
            assert change >= eta * (1 - 1e-9)


def test_marginal_z_equals_the_brute_force_statistic_on_the_grid():
    """Our centred statistic on clipped rows equals the raw-sum form used by the brute force."""
    rng = np.random.default_rng(4)
    X = rng.choice([0.0, 1 / 3, 2 / 3, 1.0, 1.7], size=(4, 2))  # 1.7 lies outside the bounds: clipped to 1
    y = rng.choice([-1.0, 0.0, 0.5, 1.0, -3.0], size=4)
    out = marginal_slope_z(X, y, np.zeros(2), np.ones(2), -1.0, 1.0, 0.7)
    Xc, yc = np.clip(X, 0, 1), np.clip(y, -1, 1)
    S = (Xc * yc[:, None]).sum(0) - Xc.sum(0) * yc.sum() / 4
    np.testing.assert_allclose(out.z, S / (0.7 * 0.5 * 2), rtol=1e-12)
    assert out.n_clipped == int((X > 1).sum() + (y < -1).sum())


# --------------------------------------------------------------------------- the z-tests against statsmodels
def test_z_statistics_and_p_values_equal_statsmodels_marginal_ols():
    """z_j = β̂_j · Σ(x_ij − x̄_j)² / (σ·τ_j·√n), β̂_j the slope of statsmodels' OLS of y on x_j alone."""
    df = _frame(n=3000, d=4, seed=2)
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-2, 2), "x4": (-1, 3), "y": (-5, 5)}
    fit = dp.dp_bh("y ~ .", data=df, eps=1.0, bounds=bounds, sigma=1.2, random_state=0, diagnostics=True)
    raw_z = fit.diagnostics["raw_z"]
    raw_p = fit.diagnostics["raw_p_values"]
    y = df["y"].clip(-5, 5)
    for name in ["x1", "x2", "x3", "x4"]:
        x = df[name].clip(*bounds[name])
        slope = sm.OLS(y.to_numpy(), sm.add_constant(x.to_numpy())).fit().params[1]
        tau = (bounds[name][1] - bounds[name][0]) / 2
        z = slope * np.sum((x - x.mean()) ** 2) / (1.2 * tau * math.sqrt(len(df)))
        assert math.isclose(raw_z[name], z, rel_tol=1e-9)
        assert math.isclose(raw_p[name], 2 * norm.sf(abs(z)), rel_tol=1e-9)


def test_large_eps_rejects_what_non_private_bh_rejects_on_the_same_z_tests():
    """eps = 1e12, k = m: private BH's rejections equal statsmodels' BH on the raw p-values."""
    df = _frame(n=4000, d=12, seed=5, beta=(0.3, -0.25, 0.1))
    bounds = {**{f"x{j}": (-1, 1) for j in range(1, 13)}, "y": (-5, 5)}
    fit = dp.dp_bh(
        "y ~ .",
        data=df,
        q=0.1,
        eps=1e12,
        bounds=bounds,
        sigma=1.1,
        max_rejections=12,
        random_state=1,
        diagnostics=True,
    )
    raw = pd.Series(fit.diagnostics["raw_p_values"])
    expected = raw.index[multipletests(raw.to_numpy(), alpha=0.1, method="fdr_bh")[0]]
    assert sorted(fit.rejected) == sorted(expected) and len(expected) >= 2


def test_null_p_values_are_valid_at_stated_level():
    """y independent of x: over 400 seeded data sets (n = 500, seeds 0..399) the rate of raw p <= 0.05
    for x1 must not exceed 0.05 + 2 standard errors (the p-values are conservative: τ = 1 > sd(x) = 0.58)."""
    hits = []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-1, 1, 500)
        y = np.clip(rng.normal(0, 1, 500), -4, 4)
        hits.append(
            marginal_slope_z(x[:, None], y, np.array([-1.0]), np.array([1.0]), -4, 4, 1.0).p_values[0] <= 0.05
        )
    rate = float(np.mean(hits))
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)


# --------------------------------------------------------------------------- the plan, ledger and statement
def test_plan_derives_eta_and_the_ledger_sums_to_the_charge():
    df = _frame(n=5000, d=5, seed=1)
    acc = dp.Accountant(eps=3.0, delta=1e-5)
    fit = dp.dp_bh(
        "y ~ .", data=df, eps=1.5, delta=1e-6, bounds=(-4, 4), sigma=1.1, accountant=acc, random_state=0
    )
    delta_z = z_slope_delta(-4, 4, 5000, 1.1)
    assert math.isclose(fit.delta_z, delta_z) and math.isclose(fit.eta, eta_two_sided_z(delta_z, 1e-10))
    assert math.isclose(acc.spent_eps, 1.5) and math.isclose(acc.spent_delta, 1e-6)
    assert math.isclose(fit.ledger()["eps"].sum(), fit.privacy.eps)
    assert (
        "derived" in fit.privacy.ledger[0].sensitivity
        and f"{delta_z:.4g}" in fit.privacy.ledger[0].sensitivity
    )
    text = fit.privacy.plain_language()
    assert "σ² = 1.1²" in text and "declared bounds" in text
    assert (
        fit.route == "marginal z-tests"
        and fit.released_n() == 5000
        and fit.terms == [f"x{j}" for j in range(1, 6)]
    )
    assert fit.to_dict()["outputs"]["delta_z"] == pytest.approx(delta_z)


def test_strict_passes_with_declared_bounds_and_sigma_and_fills_missing_values():
    df = _frame(n=2000, d=3, seed=3)
    acc = dp.Accountant(eps=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_bh(
            "y ~ .", data=df, eps=1.0, bounds=(-4, 4), sigma=1.0, strict=True, accountant=acc, random_state=0
        )
    assert fit.privacy.data_dependent_steps == [] and fit.privacy.covered
    holes = df.copy()
    holes.loc[3, "x2"] = np.nan
    with (
        warnings.catch_warnings()
    ):  # na_action="fill" (issue 26): the value gets its public fill, n stays public
        warnings.simplefilter("error", NonPrivateWarning)
        filled = dp.dp_bh(
            "y ~ .", data=holes, eps=1.0, bounds=(-4, 4), sigma=1.0, strict=True, random_state=0
        )
    assert filled.n == fit.n == 2000 and filled.privacy.covered
    spent = acc.spent_eps
    with pytest.raises(PrivacyParameterError, match='na_action="omit"'):  # n is in every z's scale
        dp.dp_bh("y ~ .", data=holes, eps=1.0, bounds=(-4, 4), sigma=1.0, na_action="omit", accountant=acc)
    assert acc.spent_eps == spent


def test_factor_predictors_become_dummies_bounded_by_zero_and_one():
    df = _frame(n=1000, d=2, seed=6)
    df["g"] = np.where(np.arange(1000) % 3 == 0, "a", np.where(np.arange(1000) % 3 == 1, "b", "c"))
    fit = dp.dp_bh(
        "y ~ .",
        data=df,
        eps=1.0,
        bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-4, 4)},
        sigma=1.0,
        levels={"g": ["a", "b", "c"]},
        random_state=0,
    )
    assert fit.terms == ["x1", "x2", "gb", "gc"]


# --------------------------------------------------------------------------- errors before any spend
def _bad(**change):
    df = _frame(n=200, d=3, seed=0)
    args = dict(p_values="y ~ .", data=df, q=0.1, eps=1.0, bounds=(-4, 4), sigma=1.0, random_state=0)
    args.update(change)
    return args


def _factor_response():
    df = _frame(n=200, d=3, seed=0)
    df["y"] = np.where(df["y"] > 0, "up", "down")
    return df


BAD = [
    (dict(bounds=None), PrivacyParameterError, "bounds= is needed"),
    (dict(bounds="auto"), PrivacyParameterError, "bounds= is needed"),
    # x2, x3 have no public fill: dropping their incomplete rows would make n private (audit F4)
    (dict(bounds={"x1": (-1, 1), "y": (-4, 4)}), PrivacyParameterError, "missing value in 'x2', 'x3'"),
    (dict(data=_factor_response()), DataError, "numeric response is needed"),
    (dict(q=0.0), PrivacyParameterError, "q must be in (0.0, 1.0)"),
    (dict(q=1.5), PrivacyParameterError, "q must be in"),
    (dict(sigma=None), PrivacyParameterError, "sigma must be a positive finite number"),
    (dict(sigma=-1.0), PrivacyParameterError, "sigma must be a positive finite number"),
    (dict(eta=0.01), PrivacyParameterError, "eta is derived"),
    (dict(eps=None), PrivacyParameterError, "eps is needed"),
    (dict(eps=0.0), PrivacyParameterError, "eps must be a positive"),
    (dict(data=None), DataError, "a formula needs data="),
    (dict(data=[[1.0, 2.0]]), DataError, "got a list. Convert it"),
    (dict(neighbouring="add_remove"), PrivacyParameterError, 'neighbouring="replace" only'),
    (dict(max_rejections=4), DataError, "1 <= max_rejections <= 3"),
    (dict(p_values="y ~ nothere"), FormulaError, "nothere"),
]


@pytest.mark.parametrize("change, error, text", BAD)
def test_bad_input_raises_naming_the_argument_and_spends_nothing(change, error, text):
    acc = dp.Accountant(eps=5.0)
    with pytest.raises(error, match=re.escape(text)):
        dp.dp_bh(**_bad(**change), accountant=acc)
    assert acc.spent_eps == 0 and acc.charges == []


def test_data_given_by_position_is_refused_with_the_fix():
    with pytest.raises(
        PrivacyParameterError, match=re.escape("pass the data by name: dp_bh('y ~ .', data=df")
    ):
        dp.dp_bh("y ~ .", _frame(n=50, d=2), eps=1.0, bounds=(-4, 4), sigma=1.0)


def test_formula_arguments_with_p_values_are_refused():
    with pytest.raises(DataError, match="apply only when the first argument is a formula"):
        dp.dp_bh([0.01, 0.2], eps=1.0, eta=0.01, sigma=1.0)


# --------------------------------------------------------------------------- empirical audit, rows to release
def _rows_to_release_case(eps: float, broken: bool):
    """Rows -> marginal z (eq. 5) -> private BH, calibrated by methods.bh.plan (m = 1, k = 1, q = 0.9).

    Neighbours (n = 4, x and y in (0, 1), σ = 1): every row at (0, 0), then the last row moved to
    (1, 1): z moves from 0 to Δz = 0.75, the extremal pair of (6)-(7); with ν = 2Φ̄(Δz) the truncated
    log p-value moves by exactly the derived η.  Output: rejected or not.  ``broken=True`` calibrates
    λ for η/4 (the auditor must refute it).
    """
    from dpstats.audit.auditor import AuditCase, repeat
    from dpstats.methods.bh import MARGINAL_Z, BHOptions, SlopeTests, plan
    from dpstats.privacy.fdr import peeling_scale, private_bh
    from dpstats.privacy.randomness import NoiseSource

    setting, q = SlopeTests(n=4, y_width=1.0, sigma=1.0), 0.9
    nu = float(2 * norm.sf(setting.delta_z))
    options = BHOptions.partial(
        route=MARGINAL_Z, q=q, eps=eps, delta=0.0, truncate=nu, max_rejections=1, sigma=1.0
    )
    calibration = plan(options, 1, setting).calibration
    if broken:
        calibration = peeling_scale(eps, 0.0, 1, eta_two_sided_z(setting.delta_z, nu) / 4)

    def single(rows, rng):
        tests = marginal_slope_z(rows[:, :1], rows[:, 1], np.zeros(1), np.ones(1), 0.0, 1.0, 1.0)
        noise = NoiseSource(random_state=rng, secure=False)
        return int(
            private_bh(
                tests.p_values, q=q, k=1, truncate=nu, calibration=calibration, noise=noise
            ).rejected.size
        )

    d1 = np.zeros((4, 2))
    d2 = d1.copy()
    d2[-1] = 1.0
    return AuditCase(
        name=f"dp_bh formula route, rows to release{' (η quartered: BROKEN)' if broken else ''}",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        kind="category",
        n_events=2,
        neighbours="all rows at (0, 0) vs the last at (1, 1): z moves by the derived Δz",
        exercised="methods.bh.marginal_slope_z + privacy.fdr.private_bh, the plan's calibration, seeded numpy",
    )


def test_audit_rows_to_release_consistent_and_quartered_eta_refuted():
    """Empirical audit, 20 000 runs per neighbour, Clopper-Pearson at level 0.05 (seed 0)."""
    from dpstats.audit.auditor import audit

    assert audit(_rows_to_release_case(1.0, broken=False), n_runs=20_000, random_state=0).passed
    assert not audit(_rows_to_release_case(1.0, broken=True), n_runs=20_000, random_state=0).passed
