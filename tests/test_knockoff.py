"""DP knockoff filter: construction, non-private equivalence, antisymmetry, privacy plumbing, bad input."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import dpstats as dp
from dpstats.errors import AssumptionError, NonPrivateWarning, PrivacyParameterError
from dpstats.methods.knockoff import filter as ko
from dpstats.methods.knockoff import mechanism as kd
from dpstats.simulate import knockoff as ks
from dpstats.privacy.randomness import FastNoise


def _frame(n=4000, p=12, k=4, amp=0.3, seed=0, rho=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if rho:
        X = X + rho * rng.normal(size=(n, 1))
    beta = np.zeros(p)
    beta[:k] = amp
    y = X @ beta + rng.normal(size=n)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = y
    return df


def _threshold_by_definition(W, q, offset=1):
    best = math.inf
    for t in sorted(set(np.abs(W[W != 0]))):
        if (offset + np.sum(W <= -t)) / max(1, np.sum(W >= t)) <= q:
            best = min(best, t)
    return best


# ------------------------------------------------------------------ construction


def test_threshold_equals_definition():
    rng = np.random.default_rng(1)
    for _ in range(300):
        W = np.round(rng.normal(0.5, 2, size=rng.integers(3, 40)), 1)
        for q, off in [(0.1, 1), (0.3, 1), (0.2, 0)]:
            assert ko.knockoff_threshold(W, q, off) == _threshold_by_definition(W, q, off)


def test_shortcut_equals_materialised_given_same_uty():
    rng = np.random.default_rng(2)
    n, p = 300, 8
    X = rng.normal(size=(n, p))
    y = X[:, 0] + rng.normal(size=n)
    st = ko.normalise(n, X.T @ X, X.T @ y, float(y @ y))
    Xn = X / st.col_norms
    s = st.lambda_min
    Xk, U = ko.materialise_knockoffs(Xn, s, rng)
    # knockoff properties: X~'X~ = Σ', X'X~ = Σ' − S, U ⟂ X'
    assert np.allclose(Xk.T @ Xk, st.sigma, atol=1e-10)
    assert np.allclose(Xn.T @ Xk, st.sigma - s * np.eye(p), atol=1e-10)
    assert np.abs(U.T @ Xn).max() < 1e-10
    v_mat = np.concatenate([Xn.T @ y, Xk.T @ y])
    v_short = ko.knockoff_cross_products(st, s, uty=U.T @ y)
    assert np.allclose(v_mat, v_short, atol=1e-9)
    G = ko.augmented_gram(st.sigma, s)
    assert np.allclose(np.concatenate([Xn, Xk], 1).T @ np.concatenate([Xn, Xk], 1), G, atol=1e-10)
    # Lemma 1: λ_min(G) = λ_min(Σ'), λ_max(G) = 2λ_max − λ_min
    eig = np.linalg.eigvalsh(G)
    assert eig[0] == pytest.approx(st.lambda_min, abs=1e-9)
    assert eig[-1] == pytest.approx(2 * st.lambda_max - st.lambda_min, abs=1e-9)


def test_haar_shortcut_matches_materialised_in_distribution():
    """KS two-sample tests (each at level 0.001) on W of a signal and of a null column."""
    rng = np.random.default_rng(3)
    n, p, trials = 120, 6, 400
    beta = np.zeros(p)
    beta[0] = 0.25
    out = {"shortcut": [], "materialise": []}
    for route in out:
        for _ in range(trials):
            if route == "shortcut":
                xtx, xty, rss = ks.sample_stats(n, p, beta, 1.0, rng)
                st = ko.normalise(n, xtx, xty, rss=rss)
                v = None
            else:
                X, y = ks.sample_data(n, p, beta, 1.0, rng)
                st = ko.normalise(n, X.T @ X, X.T @ y, float(y @ y))
                Xk, _ = ko.materialise_knockoffs(X / st.col_norms, st.lambda_min, rng)
                v = np.concatenate([st.xty, Xk.T @ y])
            rel = kd.run_mechanism(st, st.lambda_min, kd.Scales("none"), FastNoise(rng), v=v)
            out[route].append(rel.W[[0, p - 1]])
    a, b = np.array(out["shortcut"]), np.array(out["materialise"])
    for j in range(2):
        assert sps.ks_2samp(a[:, j], b[:, j]).pvalue > 1e-3


# ------------------------------------------------------------------ non-private equivalence


def _direct_fixed_x_knockoff(X, y, q, seed):
    """An independent, textbook fixed-X knockoff filter (OLS coefficients, CSM, knockoff+)."""
    gen = np.random.default_rng(seed)
    n, p = X.shape
    Xn = X / np.linalg.norm(X, axis=0)
    Sigma = Xn.T @ Xn
    s = np.linalg.eigvalsh(Sigma)[0]
    Q, _ = np.linalg.qr(Xn)
    Z = gen.standard_normal((n, p))
    Z = Z - Q @ (Q.T @ Z)
    U, R = np.linalg.qr(Z)
    U = U * np.sign(np.diag(R))
    Sinv = np.linalg.inv(Sigma)
    C = np.linalg.cholesky(2 * s * np.eye(p) - s * s * Sinv).T  # CᵀC = 2S − SΣ⁻¹S
    Xk = Xn @ (np.eye(p) - s * Sinv) + U @ C
    b = np.linalg.lstsq(np.hstack([Xn, Xk]), y, rcond=None)[0]
    W = np.sign(np.abs(b[:p]) - np.abs(b[p:])) * np.maximum(np.abs(b[:p]), np.abs(b[p:]))
    T = _threshold_by_definition(W, q)
    return W, {f"x{j + 1}" for j in np.flatnonzero(W >= T)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eps_inf_equals_ordinary_fixed_x_knockoff(seed):
    df = _frame(n=600, p=10, k=4, amp=0.25, seed=seed)
    X = df.drop(columns="y").to_numpy()
    with pytest.warns(NonPrivateWarning, match="NOT private"):
        fit = dp.dp_knockoff(
            "y ~ . - 1",
            df,
            eps=math.inf,
            delta=1e-3,
            fdr=0.2,
            knockoffs="materialise",
            random_state=seed + 100,
            oc_trials=0,
        )
    W, chosen = _direct_fixed_x_knockoff(X, df["y"].to_numpy(), 0.2, seed + 100)
    assert np.allclose(fit.W, W, rtol=1e-7, atol=1e-9)
    assert set(fit.selected) == chosen
    assert fit.variant == "non-private" and math.isinf(fit.privacy.eps)


# ------------------------------------------------------------------ antisymmetry and null signs


def test_swapping_null_column_with_knockoff_flips_its_sign():
    rng = np.random.default_rng(5)
    n, p = 400, 8
    X = rng.normal(size=(n, p))
    y = X[:, :3] @ np.full(3, 0.3) + rng.normal(size=n)
    st = ko.normalise(n, X.T @ X, X.T @ y, float(y @ y))
    Xn = X / st.col_norms
    Xk, _ = ko.materialise_knockoffs(Xn, st.lambda_min, rng)
    A = np.hstack([Xn, Xk])
    for stat in ko.STATISTICS.values():
        W = stat(np.linalg.lstsq(A, y, rcond=None)[0])
        for j in (5, 6, 7):  # null columns
            swapped = A.copy()
            swapped[:, [j, j + p]] = swapped[:, [j + p, j]]
            Ws = stat(np.linalg.lstsq(swapped, y, rcond=None)[0])
            assert Ws[j] == pytest.approx(-W[j], rel=1e-9)
            others = np.delete(np.arange(p), j)
            assert np.allclose(Ws[others], W[others], rtol=1e-8)


def test_method_one_noise_is_swap_invariant():
    rng = np.random.default_rng(6)
    p = 5
    st = ko.Normalised(n=100, p=p, sigma=np.eye(p), xty=np.ones(p), rss=50.0, col_norms=np.ones(p) * 10)
    scales = kd.Scales("I", laplace_s=0.3, kappa1=0.2, kappa2=1.0)
    rel = kd.run_mechanism(st, 1.0, scales, FastNoise(rng))
    for j in range(p):
        perm = np.arange(2 * p)
        perm[[j, j + p]] = perm[[j + p, j]]
        assert np.allclose(rel.gram[np.ix_(perm, perm)], rel.gram)


def test_null_signs_are_fair_coins():
    """Binomial test (two-sided, level 0.001) on the signs of null W across private trials."""
    rng = np.random.default_rng(7)
    n, p, k = 20000, 50, 15
    cfg = ks.TrialConfig(method="II", eps=1.0, delta=1e-3)
    positives = total = 0
    for _ in range(60):
        beta = ks.paper_beta(p, k, 4.5 / 20, rng)
        xtx, xty, rss = ks.sample_stats(n, p, beta, 1.0, rng)
        st = ko.normalise(n, xtx, xty, rss=rss)
        cal = kd.calibration_from_data(st, 11.0, 1.0, float(np.linalg.norm(beta)))
        rel = kd.run_mechanism(st, st.lambda_min, ks.scales_for(cal, cfg), FastNoise(rng))
        null = rel.W[beta == 0]
        positives += int((null > 0).sum())
        total += int((null != 0).sum())
    assert sps.binomtest(positives, total, 0.5).pvalue > 1e-3


# ------------------------------------------------------------------ privacy plumbing


@pytest.mark.parametrize("method", ["I", "II"])
def test_ledger_sums_to_budget_and_accountant_charged(method):
    df = _frame(n=30000, p=40, k=5, amp=0.5)
    acc = dp.Accountant(eps=1.0, delta=1e-3)
    with pytest.warns(NonPrivateWarning, match="C_min|lambda_min"):
        fit = dp.dp_knockoff(
            "y ~ .",
            df,
            eps=0.6,
            delta=5e-4,
            method=method,
            bounds=12.0,
            sigma=1.0,
            beta_norm=1.5,
            random_state=3,
            accountant=acc,
            oc_trials=20,
        )
    assert fit.privacy.eps == pytest.approx(0.6, rel=1e-12)
    assert fit.privacy.delta == pytest.approx(5e-4, rel=1e-12)
    assert acc.spent_eps == pytest.approx(0.6) and acc.spent_delta == pytest.approx(5e-4)
    assert len(fit.privacy.ledger) == (4 if method == "I" else 2)
    assert fit.privacy.data_dependent_steps  # C_min, lambda_min from the data
    json.dumps(fit.to_dict(), allow_nan=False)
    assert fit.operating_characteristics is not None


def test_strict_refuses_data_dependence_and_accepts_declared_bounds():
    df = _frame(n=30000, p=40, k=5, amp=0.5)
    acc = dp.Accountant(eps=1.0, delta=1e-3)
    with pytest.raises(PrivacyParameterError, match="strict"):
        dp.dp_knockoff("y ~ .", df, eps=0.5, delta=1e-5, bounds=12.0, strict=True, accountant=acc)
    assert acc.spent_eps == 0
    fit = dp.dp_knockoff(
        "y ~ .",
        df,
        eps=0.5,
        delta=1e-5,
        bounds=12.0,
        sigma=1.0,
        beta_norm=1.5,
        c_min=150.0,
        lambda_min=0.5,
        strict=True,
        random_state=0,
        oc_trials=0,
        accountant=acc,
    )
    assert fit.privacy.covered and acc.spent_eps == pytest.approx(0.5)


def test_report_renders_with_w_plot(tmp_path):
    df = _frame(n=60000, p=40, k=8, amp=0.5, seed=4)
    with pytest.warns(NonPrivateWarning, match="C_min|lambda_min"):
        fit = dp.dp_knockoff(
            "y ~ .",
            df,
            eps=1.0,
            delta=1e-5,
            fdr=0.2,
            bounds=12.0,
            sigma=1.0,
            beta_norm=1.0,
            random_state=2,
            oc_trials=30,
        )
    html = open(fit.report(str(tmp_path / "k.html")), encoding="utf-8").read()
    # without assume= there is no FDR or power row: the W figure only (audit finding 2)
    assert "Knockoff selection" in html and html.count("<svg") == 1
    assert "Knockoff W statistics with the threshold" in html
    text = str(fit.summary())
    assert "Operating characteristics" in text and "Threshold T" in text
    assert set(fit.tidy().columns) >= {"term", "W", "selected", "sign"}


# ------------------------------------------------------------------ bad input: clear errors, nothing spent


def _bad(call, exc, match):
    acc = dp.Accountant(eps=10.0, delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            call(acc)
    assert acc.spent_eps == 0 and acc.spent_delta == 0


def test_bad_inputs_raise_and_spend_nothing():
    small = _frame(n=10, p=12)
    _bad(lambda a: dp.dp_knockoff("y ~ .", small, 1.0, 1e-3, accountant=a), AssumptionError, "dp_sis")
    df = _frame(n=200, p=5)
    _bad(
        lambda a: dp.dp_knockoff("y ~ .", df, 1.0, 1e-3, bounds=50.0, accountant=a), AssumptionError, "C_min"
    )
    for fdr in (0.0, 1.0, -0.1, 1.5):
        _bad(
            lambda a, f=fdr: dp.dp_knockoff("y ~ .", df, 1.0, 1e-3, fdr=f, accountant=a),
            PrivacyParameterError,
            "fdr",
        )
    for delta in (0.0, 1.0, -1e-3, 2.0):
        _bad(
            lambda a, d=delta: dp.dp_knockoff("y ~ .", df, 1.0, d, accountant=a),
            PrivacyParameterError,
            "delta",
        )
    dup = df.assign(x6=df["x1"])
    _bad(lambda a: dp.dp_knockoff("y ~ .", dup, 1.0, 1e-3, accountant=a), AssumptionError, "rank deficient")
    _bad(lambda a: dp.dp_knockoff("y ~ .", df, 1.0, 1e-3, s="equi", accountant=a), AssumptionError, "equi")


def test_theorem5_condition_message_and_ridge_fix():
    df = _frame(n=2000, p=40, k=3, amp=0.3, seed=9, rho=3.0)
    kw = dict(bounds=40.0, sigma=1.0, beta_norm=1.0, oc_trials=0, random_state=0)
    _bad(
        lambda a: dp.dp_knockoff("y ~ .", df, 1.0, 1e-3, accountant=a, **kw),
        AssumptionError,
        r"lambda_min\(Sigma'\) > eta\^2/\(1 - eta\^2\).*ridge",
    )
    with pytest.warns(NonPrivateWarning, match="C_min|lambda_min"):
        fit = dp.dp_knockoff("y ~ .", df, 1.0, 1e-3, ridge=1.0, **kw)
    assert fit.ridge == 1.0


# ------------------------------------------------------------------ the paper's experiment, small scale


def test_simulation_fdr_controlled_and_power_ordering():
    tab = dp.simulate_knockoff(n=[10**4, 10**6], method=("I", "II"), trials=120, random_state=11)
    assert (tab["fdr"] <= 0.2 + 2 * tab["fdr_se"]).all(), tab
    big = tab[tab["n"] == 10**6].set_index("method")
    assert big.loc["II", "power"] >= 0.9
    assert big.loc["II", "power"] >= big.loc["I", "power"]
    ii = tab[tab["method"] == "II"].sort_values("n")
    assert ii["power"].iloc[1] > ii["power"].iloc[0]


def test_nonprivate_reference_serialises_to_json():
    # eps = inf (the non-private reference) must survive to_json(), as every channel does
    df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    with pytest.warns(NonPrivateWarning):
        fit = dp.dp_knockoff("y ~ .", data=df, eps=math.inf, delta=1e-6, fdr=0.2, random_state=1, oc_trials=0)
    assert json.loads(fit.to_json())["privacy"]["eps"] == "Inf"


def test_default_row_bound_uses_chdtri_equal_to_chi2_isf():
    """simulate.knockoff takes chdtri(df, q) (scipy.special) for chi2.isf(q, df) (scipy.stats): the same values."""
    from scipy import special, stats

    for n in (200, 10**4, 10**6, 10**7):
        for p in (2, 10, 50, 200):
            q = 1e-3 / n
            assert special.chdtri(p, q) == pytest.approx(stats.chi2.isf(q, p), rel=1e-12)
            assert ks.default_row_bound(n, p) == pytest.approx(math.sqrt(stats.chi2.isf(q, p)), rel=1e-12)


def test_plan_is_computed_before_noise_and_matches_the_charged_ledger():
    """methods.knockoff.plan gives the ledger dp_knockoff charges, from statistics and declared bounds."""
    from dpstats.methods.knockoff import KnockoffOptions, plan
    from dpstats.privacy.statement import DataDependence

    df = _frame(n=30000, p=40, k=5, amp=0.5)
    kw = dict(bounds=12.0, sigma=1.0, beta_norm=1.5, c_min=150.0, lambda_min=0.5)
    fit = dp.dp_knockoff("y ~ .", df, eps=0.5, delta=1e-5, strict=True, random_state=0, oc_trials=0, **kw)
    X = df.drop(columns="y").to_numpy()
    X = X * np.minimum(1.0, 12.0 / np.linalg.norm(X, axis=1))[:, None]  # rows clipped to B = 12
    y = df["y"].to_numpy()
    st = ko.normalise(len(y), X.T @ X, X.T @ y, float(y @ y))
    options = KnockoffOptions.partial(
        eps=0.5,
        delta=1e-5,
        method="II",
        s="lambda_min",
        ridge=0.0,
        eps_split=(0.5, 0.25, 0.25),
        delta_split=(0.5, 0.5),
        sigma=1.0,
        beta_norm=1.5,
        c_min=150.0,
        lambda_min=0.5,
        knockoffs="shortcut",
        bounds=12.0,
    )
    pl = plan(options, st, 12.0, DataDependence(strict=True))
    assert pl.entries == fit.privacy.ledger
    assert (pl.sensitivities, pl.assumptions, pl.notes) == (
        fit.privacy.sensitivities,
        fit.privacy.assumptions,
        fit.privacy.notes,
    )
    assert (pl.eps, pl.delta) == (fit.privacy.eps, fit.privacy.delta)


@pytest.mark.parametrize("y_hole", [False, True])
@pytest.mark.parametrize("bounds", [6.0, None])
def test_rows_with_missing_values_are_filled_or_dropped_after_the_one_pass(bounds, y_hole):
    """The in-memory frame reads the rows once and finds non-finite values in X from the statistics
    (in y before the pass).  With a declared row-norm bound B (a ball centred at 0) each gets the
    public fill 0 and no row is dropped (issue 26); without bounds there is no public fill and the
    rows are dropped as R's na.omit does, a named step.  No message counts them.  Oracle: the same
    call on the filled data, or on the complete rows."""
    df = _frame(n=3000, p=30, seed=8)
    holes = df.copy()
    holes.loc[[5, 700], "x3"] = np.nan
    holes.loc[1500, "x7"] = np.inf
    if y_hole:
        holes.loc[2999, "y"] = np.nan
    kw = dict(eps=4.0, delta=1e-4, fdr=0.2, bounds=bounds, sigma=1.0, random_state=3, oc_trials=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # bounds=None: B from the data and the dropped rows, warned
        fit = dp.dp_knockoff("y ~ .", data=holes, **kw)
    assert not [w for w in caught if re.search(r"\b(3|4) of 3000\b", str(w.message))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        if bounds is None:
            ref = dp.dp_knockoff("y ~ .", data=holes.replace(np.inf, np.nan).dropna(), **kw)
        else:
            ref = dp.dp_knockoff("y ~ .", data=holes.replace(np.inf, np.nan).fillna(0.0), **kw)
    # without bounds rows may be dropped, so n is private on every such call (attributes included)
    assert fit.n == ref.n == (None if bounds is None else 3000)
    np.testing.assert_allclose(fit.W, ref.W, rtol=1e-10)
    assert fit.selected == ref.selected


def test_constant_column_is_released_like_any_other():
    """Whether a column is constant depends on single rows: a DP fit does not refuse it (issue 26)."""
    df = _frame(n=2000, p=30, seed=9).assign(x4=2.5)
    declared = dict(bounds=6.0, sigma=1.0, beta_norm=1.0, c_min=30.0, lambda_min=0.5, strict=True)
    fit = dp.dp_knockoff("y ~ .", data=df, eps=4.0, delta=1e-4, random_state=1, **declared)
    assert "x4" in fit.terms and len(fit.W) == 30


def test_truth_diagnostics_are_fdp_and_tpp_by_definition():
    """The asked-for diagnostics against a simulation's truth: FDP = |S \\ T| / max(1, |S|) and
    TPP = |S ∩ T| / |T| of the private selection S and of the non-private filter's, by definition
    (seed 5; effects 0.3 at n = 4000 are t ≈ 19, so the non-private knockoff+ at q = 0.3 finds all four:
    TPP = 1)."""
    df = _frame(n=4000, p=12, k=4, amp=0.3, seed=3)
    truth = ["x1", "x2", "x3", "x4"]
    # knockoff+ can select 4 terms only at q >= 1/4 ((1 + 0) / 4)
    call = dict(eps=50.0, delta=1e-5, fdr=0.3, random_state=5, oc_trials=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # B, sigma and ||beta|| read from the data: named steps, warned
        fit = dp.dp_knockoff("y ~ .", df, **call, truth=truth)
        plain = dp.dp_knockoff("y ~ .", df, **call)
    assert plain.shown_diagnostics() == {} and plain.selected == fit.selected  # truth= changes no release

    def fdp_tpp(selected):
        chosen = set(selected)
        return [len(chosen - set(truth)) / max(1, len(chosen)), len(chosen & set(truth)) / len(truth)]

    diag = fit.shown_diagnostics()
    assert fit.selected  # eps = 50: the private filter selects too, so both counts are exercised
    assert [diag["fdp_vs_truth"], diag["tpp_vs_truth"]] == fdp_tpp(fit.selected)
    assert diag["nonprivate_fdp_tpp_vs_truth"] == fdp_tpp(diag["nonprivate_knockoff_selected"])
    assert diag["nonprivate_fdp_tpp_vs_truth"][1] == 1.0
    assert diag["rows_clipped_to_B"] == 0  # B is the largest row norm read from the data
    assert "declared_assumptions_hold" not in diag  # nothing was declared
