"""dp_bh: private Benjamini-Hochberg (issue 20, "Private FDR control").

Oracles: statsmodels' ``multipletests(method="fdr_bh")`` for BH itself; brute force
over all neighbouring data sets of a small grid for the derived eta; the
empirical auditor for the privacy claim.  The FDR and power simulation is in
tests/test_bh_slow.py.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

import dpstats as dp
from dpstats.audit.auditor import audit
from dpstats.audit.cases import private_bh_case
from dpstats.errors import DataError, NonPrivateWarning, PrivacyParameterError
from dpstats.methods.bh import eta_two_sided_z, hazard_bound, z_mean_delta
from dpstats.privacy.accountant import LedgerEntry
from dpstats.privacy.calibration import zcdp_eps
from dpstats.privacy.fdr import peeling_scale, threshold_shift
from dpstats.privacy.statement import PrivacyStatement


def _p_values(m: int, m1: int, shift: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(m)
    z[:m1] += shift
    return 2 * norm.sf(np.abs(z))


# --------------------------------------------------------------------------- BH oracle
@pytest.mark.parametrize("seed", range(8))
def test_large_eps_equals_statsmodels_bh(seed):
    """eps = 1e12 (λ ~ 1e-14, shift ~ 1e-13) with k = m: the rejections equal non-private BH's."""
    p = _p_values(60, 12, 3.0, seed)
    fit = dp.dp_bh(p, q=0.1, eps=1e12, eta=0.01, max_rejections=60, random_state=seed)
    expected = np.flatnonzero(multipletests(p, alpha=0.1, method="fdr_bh")[0])
    assert sorted(int(h[1:]) - 1 for h in fit.rejected) == expected.tolist()


def test_rejections_sit_below_the_released_cut():
    p = _p_values(200, 20, 4.0, 3)
    fit = dp.dp_bh(p, q=0.1, eps=2.0, eta=0.005, max_rejections=30, random_state=1)
    table = fit.tidy()
    rejected = table[table["rejected"]]
    assert len(rejected) == len(fit.rejected) > 0
    assert (rejected["noisy_p_value"] <= fit.threshold * (1 + 1e-12)).all()
    kept = table[table["peeled"] & ~table["rejected"]]
    j = len(fit.rejected)
    assert math.isclose(fit.threshold, 0.1 * j / 200 * math.exp(-fit.shift), rel_tol=1e-12)
    assert (kept["noisy_p_value"] > fit.threshold).all()


# --------------------------------------------------------------------------- eta derivation
def test_eta_of_two_sided_mean_z_test_by_brute_force():
    """Every data set of 4 rows on the grid {0, 0.1, ..., 1} and every one-row replacement on the grid.

    z = √n (x̄ − 0.5)/σ with σ = 0.5, p = 2Φ̄(|z|) truncated at ν = 2Φ̄(1.5): the largest
    |Δ log max(p, ν)| must not exceed eta_two_sided_z(Δz, ν), and must reach it (the
    extremal pair |z| = 0.5 -> 1.5 lies on the grid); Δz itself must be z_mean_delta.
    """
    n, sigma, grid = 4, 0.5, np.round(np.linspace(0, 1, 11), 10)
    nu = float(2 * norm.sf(1.5))
    sums = np.array([sum(c) for c in itertools.product(grid, repeat=n)])
    rows = np.array(list(itertools.product(grid, repeat=n)))
    # replace row i (value rows[:, i]) by v: new sum = sum − old + v, for every i and v
    new_sums = sums[:, None, None] - rows[:, :, None] + grid[None, None, :]

    def z(total):
        return math.sqrt(n) * (total / n - 0.5) / sigma

    def log_p(total):
        return np.log(np.maximum(2 * norm.sf(np.abs(z(total))), nu))

    dz = np.abs(z(new_sums) - z(sums)[:, None, None]).max()
    change = np.abs(log_p(new_sums) - log_p(sums)[:, None, None]).max()
    delta_z = z_mean_delta(0.0, 1.0, n, sigma)
    eta = eta_two_sided_z(delta_z, nu)
    assert math.isclose(dz, delta_z, rel_tol=1e-12)
    assert change <= eta * (1 + 1e-9)
    assert change >= eta * (1 - 1e-9)
    assert eta <= delta_z * hazard_bound(nu)


@pytest.mark.parametrize("delta_z", [1e-3, 0.05, 0.5])
def test_eta_bounds_the_truncated_log_p_on_a_fine_z_grid(delta_z):
    nu = 1e-8
    u = np.linspace(0, 8, 20001)
    g = np.log(np.maximum(2 * norm.sf(u), nu))
    g_shift = np.log(np.maximum(2 * norm.sf(u + delta_z), nu))
    eta = eta_two_sided_z(delta_z, nu)
    assert np.max(g - g_shift) <= eta * (1 + 1e-9)
    assert np.max(g - g_shift) >= eta * 0.99


# --------------------------------------------------------------------------- calibration and ledger
def test_calibration_composition_and_ledger():
    pure = peeling_scale(1.0, 0.0, 10, 0.02)
    assert pure.composition == "basic" and math.isclose(pure.scale, 3 * 10 * 0.02 / 1.0)
    big_k = peeling_scale(1.0, 1e-6, 400, 0.02)
    rho = 5 * 400 * 0.02**2 / (2 * big_k.scale**2)
    assert big_k.composition == "zCDP"
    assert 1.0 - 1e-9 <= zcdp_eps(rho, 1e-6) <= 1.0  # Canonne, Kamath & Steinke's conversion, rounded down
    assert big_k.scale < 3 * 400 * 0.02
    # the shift makes all k fresh Laplace noises exceed −t with probability 1 − q/10
    assert math.isclose(400 * 0.5 * math.exp(-threshold_shift(1.0, 400, 0.1)), 0.01, rel_tol=1e-12)
    acc = dp.Accountant(eps=3.0, delta=1e-5)
    fit = dp.dp_bh(_p_values(50, 5, 4, 0), eps=1.5, delta=1e-6, eta=0.01, accountant=acc, random_state=0)
    assert math.isclose(acc.spent_eps, 1.5) and math.isclose(acc.spent_delta, 1e-6)
    assert math.isclose(fit.ledger()["eps"].sum(), fit.privacy.eps)
    assert "declared" in fit.privacy.sensitivities["log max(p_i, ν), every i at once"]


def test_audit_consistent_and_quartered_eta_refuted():
    """Empirical audit, 20 000 runs per neighbour, Clopper-Pearson at level 0.05 (seed 0)."""
    assert audit(private_bh_case(1.0), n_runs=20_000, random_state=0).passed
    assert not audit(private_bh_case(1.0, broken=True), n_runs=20_000, random_state=0).passed


# --------------------------------------------------------------------------- errors before any spend
BAD_CALLS = [
    (dict(q=0.0), PrivacyParameterError, "q must be in (0.0, 1.0)"),
    (dict(q=1.0), PrivacyParameterError, "q must be in"),
    (dict(eta=0.0), PrivacyParameterError, "eta must be a positive"),
    (dict(eta=-1.0), PrivacyParameterError, "eta must be a positive"),
    (dict(eps=0.0), PrivacyParameterError, "eps must be a positive"),
    (dict(eps=-2.0), PrivacyParameterError, "eps must be a positive"),
    (dict(eps=None), PrivacyParameterError, "eps is needed"),
    (dict(max_rejections=0), DataError, "1 <= max_rejections <= 5"),
    (dict(max_rejections=6), DataError, "1 <= max_rejections <= 5"),
    (dict(max_rejections=2.5), PrivacyParameterError, "whole number"),  # the argument's type
    (dict(max_rejections="3"), PrivacyParameterError, "whole number"),
    (dict(truncate=0.0), PrivacyParameterError, "truncate must be in"),
    (dict(p_values={"a": 0.1, "b": 0.2}, neighbouring="row"), PrivacyParameterError, "neighbouring must be"),
    (dict(p_values=pd.Series([0.1, 0.2], index=["a", "a"])), DataError, "must be unique"),
]


@pytest.mark.parametrize("bad, error, text", BAD_CALLS)
def test_bad_input_raises_naming_the_argument_and_spends_nothing(bad, error, text):
    acc = dp.Accountant(eps=5.0)
    args = dict(
        p_values=[0.01, 0.02, 0.3, 0.5, 0.9], q=0.1, eps=1.0, eta=0.01, accountant=acc, random_state=0
    )
    args.update(bad)
    with pytest.raises(error, match=re_escape(text)):
        dp.dp_bh(**args)
    assert acc.spent_eps == 0 and acc.charges == []


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


def test_budget_refused_before_release():
    acc = dp.Accountant(eps=0.5)
    with pytest.raises(dp.BudgetExceededError):
        dp.dp_bh([0.01, 0.2], eps=1.0, eta=0.01, accountant=acc)
    assert acc.charges == []


# --------------------------------------------------------------------------- strict and the default eta
def test_strict_refuses_the_default_eta_before_spending_and_accepts_a_declared_one():
    acc = dp.Accountant(eps=5.0)
    with pytest.raises(PrivacyParameterError, match="strict=True refuses the default eta"):
        dp.dp_bh([0.01, 0.2, 0.5], eps=1.0, strict=True, accountant=acc)
    assert acc.charges == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_bh([0.01, 0.2, 0.5], eps=1.0, eta=0.02, strict=True, accountant=acc, random_state=0)
    assert fit.privacy.data_dependent_steps == []
    default = dp.dp_bh([0.01, 0.2, 0.5], eps=1.0, random_state=0)
    assert "the default (not derived from your data)" in default.privacy.plain_language()


def test_the_exported_eta_helpers_give_a_declared_eta_that_strict_accepts():
    """dp.z_mean_delta and dp.eta_two_sided_z, as the README and the strict refusal show them: the eta of
    two-sided mean z-tests on [0, 1] data (n = 10 000, σ = 0.5: Δz = 0.02) is accepted under strict=True
    and is the eta the statement rests on; it equals log Φ̄(u_ν − Δz) − log Φ̄(u_ν) computed by scipy."""
    from scipy.stats import norm

    eta = dp.eta_two_sided_z(dp.z_mean_delta(0.0, 1.0, 10_000, 0.5), 1e-10)
    u = norm.isf(0.5e-10)
    assert eta == pytest.approx(norm.logsf(u - 0.02) - norm.logsf(u), rel=1e-9)
    fit = dp.dp_bh([1e-6, 0.2, 0.5], eps=1.0, eta=eta, truncate=1e-10, strict=True, random_state=0)
    assert fit.privacy.data_dependent_steps == [] and fit.to_dict()["call"]["eta"] == eta


# --------------------------------------------------------------------------- a private fit's p-values
class _StandInFit:
    """A fitted result with tidy() (term, p.value) and a privacy statement, as dp_lm will return."""

    method = "dp_lm"

    def __init__(self, p_values, eps=0.8, delta=1e-6):
        self._table = pd.DataFrame(
            {
                "term": ["(Intercept)"] + [f"x{j + 1}" for j in range(len(p_values))],
                "p.value": [0.5, *p_values],
            }
        )
        entry = LedgerEntry(step="sufficient statistics", mechanism="Gaussian", eps=eps, delta=delta)
        self.privacy = PrivacyStatement(
            method="DP linear regression", eps=eps, delta=delta, neighbouring="replace", ledger=[entry]
        )

    def tidy(self) -> pd.DataFrame:
        return self._table.copy()


def test_private_fit_is_post_processed_at_no_cost_and_equals_bh():
    p = _p_values(30, 6, 4.0, 11)
    fit_in = _StandInFit(p)
    acc = dp.Accountant(eps=1.0)
    fit = dp.dp_bh(fit_in, q=0.1, accountant=acc)
    expected = np.flatnonzero(multipletests(p, alpha=0.1, method="fdr_bh")[0])
    assert fit.rejected == [f"x{j + 1}" for j in expected]
    assert acc.spent_eps == 0 and acc.spent_delta == 0
    assert fit.privacy.eps == 0.8 and fit.privacy.delta == 1e-6  # the fit's guarantee, unchanged
    assert fit.route == "post-processing" and "(Intercept)" not in fit.terms
    assert "post-processing: no extra budget" in str(fit.summary())
    assert fit.ledger()["eps"].tolist() == [0.8, 0.0]
    assert "approximate" in fit.privacy.plain_language()
    np.testing.assert_allclose(fit.tidy()["p.value"], p)
    assert list(fit.tidy().columns) == ["hypothesis", "p.value", "rejected"]  # broom: the identifier first


def test_private_fit_refuses_budget_arguments():
    with pytest.raises(PrivacyParameterError, match="post-processing"):
        dp.dp_bh(_StandInFit([0.01, 0.2]), eps=1.0)


def test_strict_refuses_a_fit_with_uncovered_data_dependent_steps():
    fit_in = _StandInFit([0.01, 0.2])
    fit_in.privacy.data_dependent_steps.append("bounds from the data's range")
    with pytest.raises(PrivacyParameterError, match="bounds from the data's range"):
        dp.dp_bh(fit_in, strict=True)
    assert dp.dp_bh(fit_in).privacy.data_dependent_steps == ["bounds from the data's range"]


def test_unseeded_release_draws_values_from_opendp():
    fit = dp.dp_bh([1e-9, 0.2, 0.7], eps=1.0, eta=0.01, max_rejections=2)
    assert not fit.privacy.seeded
    assert any("OpenDP laplace" in s for s in fit.privacy.samplers)
    assert fit.rejected == ["H1"]


def test_a_fit_without_a_privacy_statement_is_treated_as_raw_p_values():
    class Plain:
        def tidy(self):
            return pd.DataFrame({"term": ["a", "b"], "p.value": [1e-12, 0.4]})

    with pytest.raises(PrivacyParameterError, match="eps is needed"):
        dp.dp_bh(Plain())
    fit = dp.dp_bh(Plain(), eps=1.0, eta=0.01, random_state=0)
    assert fit.route == "private" and fit.privacy.eps == 1.0 and fit.terms == ["a", "b"]


def test_channels_do_not_show_raw_p_values_and_report_renders(tmp_path):
    p = np.r_[1.234567e-7, 0.0456789, 0.3456789]
    fit = dp.dp_bh(p, eps=1.0, eta=0.01, random_state=3)
    texts = [str(fit), str(fit.summary()), fit.to_json(), fit._repr_html_(), fit.tidy().to_string()]
    texts.append(open(fit.report(str(tmp_path / "bh.html"))).read())
    for text in texts:
        assert "1.234567e-07" not in text and "0.0456789" not in text and "0.3456789" not in text
    asked = dp.dp_bh(p, eps=1.0, eta=0.01, random_state=3, diagnostics=True)
    assert "0.0456789" in asked.to_json() and "rows_used_n" not in asked.to_json()


def test_bh_on_a_real_dp_lm_fit_is_free_post_processing_of_its_p_values():
    """dp_lm's released bootstrap p-values, BH'd at no extra cost, equal statsmodels' BH on them."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (5_000, 5))
    y = np.clip(0.8 * X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.3, 5_000), -3, 3)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]).assign(y=y)
    acc = dp.Accountant(eps=3.0, delta=1e-5)
    fit = dp.dp_lm(
        "y ~ .", frame, eps=2.0, delta=1e-6, bounds=(-3, 3), n_boot=200, random_state=3, accountant=acc
    )
    spent = acc.spent_eps
    out = dp.dp_bh(fit, q=0.1, accountant=acc)
    assert acc.spent_eps == spent
    table = fit.tidy().set_index("term").drop(index="(Intercept)")
    expected = multipletests(table["p.value"].to_numpy(), alpha=0.1, method="fdr_bh")[0]
    assert sorted(out.rejected) == sorted(table.index[expected])


def test_noisy_p_values_above_one_are_capped_for_display_only(tmp_path):
    """Printed and report tables show a released noisy p-value above 1 as 1 with a footnote;
    tidy() and to_dict() keep what was released."""
    p = np.r_[1e-12, np.full(9, 0.9)]
    fit = dp.dp_bh(p, eps=0.5, eta=0.5, max_rejections=10, random_state=4)
    released = np.asarray(fit.noisy_p_values)
    above = int(np.sum(released > 1))
    assert above >= 1, released  # eta / eps = 1: a null's noisy log p exceeds 0 about half the time
    shown = fit._shown_table()["noisy_p_value"].to_numpy()
    assert shown.max() == 1.0 and np.array_equal(np.sort(shown), np.sort(np.minimum(released, 1.0)))
    note = f"{above} noisy p-value(s) above 1 (exp of a noisy log p-value) shown as 1"
    assert note in str(fit) and note in open(fit.report(str(tmp_path / "bh.html"))).read()
    assert fit.tidy()["noisy_p_value"].max() == released.max() > 1
    assert fit.to_dict()["outputs"]["noisy_p_values"] == released.tolist()
    assert "shown as 1" not in str(dp.dp_bh(np.full(10, 1e-12), eps=1.0, eta=0.01, random_state=4))


def test_report_plots_the_released_log_p_values_against_the_shifted_cut():
    fit = dp.dp_bh(np.r_[1e-12, 1e-11, np.full(8, 0.5)], eps=1.0, eta=0.01, max_rejections=5, random_state=2)
    (plot,) = fit.plots()
    assert f"t = {fit.shift:.3g}; {len(fit.rejected)} of 10 hypotheses rejected" in plot.alt
    assert plot.svg.startswith("<svg") and "step-up cut" in plot.svg
    after = dp.dp_bh(
        dp.dp_lm(
            "y ~ x",
            pd.DataFrame({"x": [0.0, 1.0] * 50, "y": [0.0, 1.0] * 50}),
            eps=1.0,
            delta=1e-6,
            bounds=(-1, 2),
            random_state=1,
        )
    )
    assert "t = 0;" in after.plots()[0].alt


def test_p_values_outside_zero_one_are_mapped_by_the_public_rule_never_refused():
    """Raw p-values come from private data: one NaN or out-of-range value must not turn a release into
    a refusal (that would release it).  NaN counts as 1, values are clipped to [0, 1], and every
    private-route statement says so whatever the values; the neighbours' outputs have the same shape."""
    base = np.r_[1e-9, 3e-9, np.linspace(0.01, 1, 18)]
    odd = base.copy()
    odd[5], odd[7], odd[9] = np.nan, 1.5, -0.1
    fits = []
    for p in (base, odd):
        acc = dp.Accountant(eps=2.0)
        fits.append(dp.dp_bh(p, q=0.1, eps=1.0, eta=0.01, max_rejections=5, random_state=4, accountant=acc))
        assert acc.spent_eps == 1.0
    same, mapped = fits
    assert same.privacy.notes == mapped.privacy.notes and "NaN) p-value counts as 1" in same.privacy.notes[-1]
    assert list(same.tidy().columns) == list(mapped.tidy().columns)
    direct = dp.dp_bh(
        np.where(np.isnan(odd), 1.0, np.clip(odd, 0, 1)),
        q=0.1,
        eps=1.0,
        eta=0.01,
        max_rejections=5,
        random_state=4,
    )
    assert direct.to_dict() == mapped.to_dict()  # exactly the rule, nothing else
