"""vertical_glm (in-process parties): equality with the pooled GLM, SEs, summaries, penalties, DP, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpstats as dp
from dpstats.errors import (
    AssumptionError,
    BudgetExceededError,
    DataError,
    PrivacyParameterError,
)
from dpstats.methods import privreg as m
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.composition import gaussian_eps

SM_FAMILY = {
    "gaussian": sm.families.Gaussian(),
    "binomial": sm.families.Binomial(),
    "poisson": sm.families.Poisson(),
}
PARTIES = {2: [["x1", "x2", "x3"], ["x4", "x5", "x6"]], 3: [["x1", "x2"], ["x3", "x4"], ["x5", "x6"]]}


def make_data(family: str, n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Correlated columns across parties (x4 ~ x1, x6 ~ x2), so blocks interact."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 6))
    Z[:, 3] += 0.6 * Z[:, 0]
    Z[:, 5] += 0.5 * Z[:, 1]
    df = pd.DataFrame(Z, columns=[f"x{i}" for i in range(1, 7)])
    eta = 0.2 + 0.5 * df.x1 - 0.4 * df.x2 + 0.3 * df.x4 - 0.2 * df.x6
    if family == "gaussian":
        df["y"] = eta + rng.standard_normal(n)
    elif family == "binomial":
        df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(0.5 * eta)).astype(float)
    return df


def pooled(df: pd.DataFrame, family: str):
    X = sm.add_constant(df[[f"x{i}" for i in range(1, 7)]].to_numpy())
    return sm.GLM(df["y"].to_numpy(), X, family=SM_FAMILY[family]).fit(tol=1e-14, use_t=family == "gaussian")


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_coefficients_and_se_equal_pooled_glm(family, k):
    df = make_data(family)
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[k], family=family)
    ref = pooled(df, family)
    est = fit.coefficients["estimate"].to_numpy()
    # tolerance 1e-6 relative (the bar); tol=1e-8 on the relative change gives about 1e-8 here
    np.testing.assert_allclose(est, ref.params, rtol=1e-6)
    assert fit.converged and fit.iterations < 200
    # se="exact" (default): Schur complement on the shared column bases = pooled SEs, 1e-4 relative
    assert fit.se_method == "exact"
    np.testing.assert_allclose(fit.coefficients["std_error"], ref.bse, rtol=1e-4)


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_history_se_exact_where_offset_span_is_full(family):
    """privreg's SEs from the offset history: within 1e-4 on blocks whose history reached rank p_-k."""
    df = make_data(family)
    ref = pooled(df, family)
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[3], family=family, se="history")
    se = fit.coefficients["std_error"].to_numpy()
    exact_terms = [t for b in fit.se_blocks if b["exact"] for t in fit.party_terms[b["party"]]]
    assert len(exact_terms) >= 2
    idx = [fit.terms.index(t) for t in exact_terms]
    np.testing.assert_allclose(se[idx], ref.bse[idx], rtol=1e-4)
    # the non-exact blocks miss only directions the sweeps barely excited: close here
    np.testing.assert_allclose(se, ref.bse, rtol=1e-2)


def test_summary_table_matches_r_glm_conventions():
    df = make_data("gaussian")
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], conf_level=0.9)
    ref = pooled(df, "gaussian")
    tab = fit.tidy()
    assert list(tab.columns) == [
        "term",
        "party",
        "estimate",
        "std_error",
        "statistic",
        "p_value",
        "conf_low",
        "conf_high",
    ]
    np.testing.assert_allclose(tab["statistic"], ref.tvalues, rtol=1e-4)
    np.testing.assert_allclose(tab["p_value"], ref.pvalues, rtol=1e-3, atol=1e-12)
    np.testing.assert_allclose(tab[["conf_low", "conf_high"]].to_numpy(), ref.conf_int(alpha=0.1), rtol=1e-4)
    np.testing.assert_allclose(fit.dispersion, ref.scale, rtol=1e-8)
    text = str(fit)
    assert "t value" in text and "Pr(>|t|)" in text and "(Intercept)" in text
    assert "NO formal privacy guarantee" in text
    binom = dp.vertical_glm("y ~ .", make_data("binomial"), parties=PARTIES[2], family="binomial")
    assert "z value" in str(binom)


def test_pooled_se_reference_and_conditional_se_is_smaller():
    df = make_data("binomial")
    ref = pooled(df, "binomial")
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[3], family="binomial", se="pooled")
    np.testing.assert_allclose(fit.coefficients["std_error"], ref.bse, rtol=1e-6)
    cond = dp.vertical_glm("y ~ .", df, parties=PARTIES[3], family="binomial", se="conditional")
    # conditional SEs ignore cross-block correlation: never larger, smaller for x1 (correlated with x4)
    assert np.all(cond.coefficients["std_error"].to_numpy() <= ref.bse * (1 + 1e-8))
    assert cond.coefficients["std_error"][1] < 0.95 * ref.bse[1]


def test_factors_interactions_and_named_parties():
    df = make_data("poisson", n=400)
    df["g"] = np.random.default_rng(3).choice(["a", "b", "c"], len(df))
    fit = dp.vertical_glm(
        "y ~ x1 + x2*x3 + g + x5",
        df,
        family="poisson",
        parties={"bank": ["x1", "x2", "x3"], "clinic": ["g", "x5"]},
    )
    ref = sm.GLM(
        df["y"],
        sm.add_constant(
            np.column_stack([df.x1, df.x2, df.x3, df.g == "b", df.g == "c", df.x5, df.x2 * df.x3]).astype(
                float
            )
        ),
        family=sm.families.Poisson(),
    ).fit(tol=1e-14)
    order = ["(Intercept)", "x1", "x2", "x3", "gb", "gc", "x5", "x2:x3"]
    est = fit.coefficients.set_index("term").loc[order, "estimate"].to_numpy()
    np.testing.assert_allclose(est, ref.params, rtol=1e-6)
    assert fit.party_terms["clinic"] == ["gb", "gc", "x5"]


def test_list_of_frames_with_row_ids_matches_single_frame():
    df = make_data("gaussian", n=300)
    df["id"] = np.arange(300) * 7
    a, b = df[["id", "y", "x1", "x2", "x3"]], df[["id", "x4", "x5", "x6"]]
    fit = dp.vertical_glm("y ~ x1 + x2 + x3 + x4 + x5 + x6", [a, b], parties=PARTIES[2], row_id="id")
    ref = dp.vertical_glm("y ~ .", df.drop(columns="id"), parties=PARTIES[2])
    np.testing.assert_allclose(fit.coefficients["estimate"], ref.coefficients["estimate"], rtol=1e-12)


def test_ridge_gaussian_equals_closed_form():
    df = make_data("gaussian", n=200)
    lam = 0.3
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[3], penalty="ridge", lam=lam)
    X = sm.add_constant(df[[f"x{i}" for i in range(1, 7)]].to_numpy())
    n = len(df)
    pen = np.diag([0.0] + [1.0] * 6)
    beta = np.linalg.solve(X.T @ X / n + lam * pen, X.T @ df.y.to_numpy() / n)
    np.testing.assert_allclose(fit.coefficients["estimate"], beta, rtol=1e-6)
    assert fit.coefficients["std_error"].isna().all()


def test_lasso_gaussian_equals_sklearn():
    from sklearn.linear_model import Lasso

    df = make_data("gaussian", n=300)
    cols = [f"x{i}" for i in range(1, 7)]
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], penalty="lasso", lam=0.05)
    ref = Lasso(alpha=0.05, tol=1e-14, max_iter=100_000).fit(df[cols], df.y)
    np.testing.assert_allclose(fit.coefficients["estimate"], np.r_[ref.intercept_, ref.coef_], atol=1e-6)
    assert (fit.coefficients["estimate"][1:] == 0).any()  # lasso zeroes at least one weak term


def test_ridge_binomial_equals_sklearn_logistic():
    from sklearn.linear_model import LogisticRegression

    df = make_data("binomial", n=400)
    cols = [f"x{i}" for i in range(1, 7)]
    lam = 0.02
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[3], family="binomial", penalty="ridge", lam=lam)
    # sklearn: ½‖w‖² + C Σ logloss  ⇔  (1/n) Σ logloss + (1/(2Cn))‖w‖²  ⇒  C = 1/(n λ)
    ref = LogisticRegression(C=1 / (len(df) * lam), tol=1e-12, max_iter=10_000).fit(df[cols], df.y)
    np.testing.assert_allclose(fit.coefficients["estimate"], np.r_[ref.intercept_, ref.coef_[0]], rtol=1e-5)


def test_non_convergence_is_reported():
    df = make_data("gaussian")
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], max_iter=2)
    assert not fit.converged and fit.iterations == 2 and fit.warnings
    assert "relative change" in fit.warnings[0] and "above tol = 1e-08" in fit.warnings[0]
    assert "did NOT converge" in str(fit)
    assert list(fit.trace.columns) == ["iteration", "relative_change", "deviance"]


def test_report_renders(tmp_path):
    fit = dp.vertical_glm("y ~ .", make_data("binomial", n=200), parties=PARTIES[3], family="binomial")
    path = fit.report(str(tmp_path / "v.html"))
    html = open(path, encoding="utf-8").read()
    assert "What the protocol reveals" in html and "Convergence trace" in html and "<svg" in html
    assert fit.to_json()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "parties, match",
    [
        ([["x1", "x2"], ["x2", "x3"]], "held by both"),
        ([["x1", "x2"], ["x3", "x4", "x5"]], "held by no party"),
        ([["x1", "x2", "x3"], ["x4", "x5", "x6", "nope"]], "not in data"),
        ([["x1", "x2", "x3", "y"], ["x4", "x5", "x6"]], "response"),
        ([["x1", "x2", "x3", "x4", "x5", "x6"]], "at least 2 parties"),
        ([["x1", "x2", "x3", "x4", "x5", "x6"], []], "holds no columns"),
    ],
)
def test_bad_party_columns(parties, match):
    with pytest.raises(DataError, match=match):
        dp.vertical_glm("y ~ .", make_data("gaussian", n=50), parties=parties)


@pytest.mark.parametrize(
    "parties, match",
    [
        ("x1", "list of column-name lists or a dict"),
        (["x1", ["x2"]], "list of column-name lists, e.g."),
        ([["x1", 2], ["x3"]], "column names must be strings"),
    ],
)
def test_parties_of_the_wrong_type_are_parameter_errors(parties, match):
    """The argument's type is wrong, whatever the data: a parameter error, not a data error."""
    with pytest.raises(PrivacyParameterError, match=match):
        dp.vertical_glm("y ~ .", make_data("gaussian", n=50), parties=parties)


def test_term_mixing_parties_is_refused():
    with pytest.raises(DataError, match="mixes columns"):
        dp.vertical_glm("y ~ x1*x4 + x2 + x3 + x5 + x6", make_data("gaussian", n=50), parties=PARTIES[2])


def test_mismatched_rows_and_order_are_refused():
    df = make_data("gaussian", n=100)
    df["id"] = np.arange(100)
    a, b = df[["id", "y", "x1", "x2", "x3"]], df[["id", "x4", "x5", "x6"]]
    with pytest.raises(DataError, match="has 99 rows"):
        dp.vertical_glm("y ~ .", [a, b.iloc[:99]], parties=PARTIES[2], row_id="id")
    with pytest.raises(DataError, match="different order"):
        dp.vertical_glm("y ~ .", [a, b.iloc[::-1]], parties=PARTIES[2], row_id="id")


def test_perfect_separation_is_refused_and_ridge_fixes_it():
    df = make_data("binomial", n=100)
    df["y"] = (df.x4 > 0).astype(float)
    with pytest.raises(AssumptionError, match="separation"):
        dp.vertical_glm("y ~ .", df, parties=PARTIES[2], family="binomial")
    fit = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], family="binomial", penalty="ridge", lam=0.01)
    assert fit.converged


@pytest.mark.parametrize(
    "kwargs, err",
    [
        ({"family": "gamma"}, PrivacyParameterError),  # an argument, as penalty
        ({"penalty": "elastic"}, PrivacyParameterError),
        ({"penalty": "ridge"}, PrivacyParameterError),
        ({"tol": 0}, PrivacyParameterError),
        ({"max_iter": 0}, PrivacyParameterError),
        ({"se": "bootstrap"}, PrivacyParameterError),
        ({"eps": 1.0}, PrivacyParameterError),  # DP mode needs binomial + ridge
        ({"delta": 1e-6}, PrivacyParameterError),
    ],
)
def test_bad_arguments(kwargs, err):
    with pytest.raises(err):
        dp.vertical_glm("y ~ .", make_data("gaussian", n=50), parties=PARTIES[2], **kwargs)


def test_bad_response_for_family():
    with pytest.raises(DataError, match="0/1"):
        dp.vertical_glm("y ~ .", make_data("poisson", n=80), parties=PARTIES[2], family="binomial")


# --------------------------------------------------------------------------- DP mode
@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_dp_mode_ledger_noise_scale_and_budget():
    df = make_data("binomial", n=2000)
    acc = dp.Accountant(eps=1.5, delta=1e-5)
    kwargs = dict(
        parties=PARTIES[3],
        family="binomial",
        penalty="ridge",
        lam=0.1,
        bounds=(-4, 4),
        rounds=4,
        random_state=5,
    )
    fit = dp.vertical_glm("y ~ .", df, eps=1.0, delta=1e-6, accountant=acc, **kwargs)
    assert math.isclose(acc.spent_eps, 1.0) and math.isclose(acc.spent_delta, 1e-6)
    assert fit.privacy.eps == 1.0 and fit.privacy.delta == 1e-6 and fit.privacy.seeded
    assert fit.iterations == 4 and fit.trace["relative_change"].isna().all()
    assert fit.coefficients["std_error"].isna().all()
    # the refused second call spends nothing
    with pytest.raises(BudgetExceededError):
        dp.vertical_glm("y ~ .", df, eps=1.0, delta=1e-6, accountant=acc, **kwargs)
    assert math.isclose(acc.spent_eps, 1.0)
    # zCDP conversion and per-release sigma: rho from (eps, delta) — every release is Gaussian, so the
    # exact ρ = μ²/2 of one (1, 1e-6) Gaussian, which dp.compose gives back as eps; Δ from the derivation
    rho = gaussian_rho_from_eps_delta(1.0, 1e-6)
    assert math.isclose(gaussian_eps(1 / math.sqrt(2 * rho), 1e-6), 1.0, rel_tol=1e-9)
    assert 1 - 1e-9 <= dp.compose(fit).eps <= 1.0
    d_eta, d_beta = m.binomial_ridge_sensitivities(2000, math.sqrt(1 + 2 * 16), 0.1, 4.0)
    assert math.isclose(d_beta, 2 * math.sqrt(33) / (2000 * 0.1))
    assert f"Δ₂(η)={d_eta:.4g}" in fit.privacy.ledger[0].sensitivity
    assert "y is public" in " ".join(fit.privacy.assumptions)


def test_dp_mode_noise_is_gaussian_with_planned_sigma():
    """Released η_k = clip(X_kβ_k) + N(0, σ_η²) and β_k + N(0, σ_β²): sample sds within 5%."""
    from dpstats.privacy.randomness import NoiseSource

    df = make_data("binomial", n=4000)
    X = np.column_stack([np.ones(4000), df[["x1", "x2"]].to_numpy()])
    block = m.LocalBlock(
        X,
        df.y.to_numpy(),
        m.FAMILIES["binomial"],
        m.Penalty("ridge", 0.1),
        np.ones(3),
        4,
        se="none",
        sigma_eta=2.0,
        eta_clip=0.25,
        noise=NoiseSource(11),
    )
    shared, change = block.update(np.zeros(4000))
    assert change is None  # the stopping statistic is not shared in DP mode
    resid = shared - np.clip(X @ block.beta, -0.25, 0.25)
    assert abs(resid.std() / 2.0 - 1) < 0.05 and abs(resid.mean()) < 0.1
    draws = np.array([block.finish(np.zeros(4000), 1.0, sigma_beta=0.3).beta for _ in range(400)])
    assert abs((draws - block.beta).std() / 0.3 - 1) < 0.05


def test_dp_mode_requires_bounds_and_replace():
    df = make_data("binomial", n=100)
    kw = dict(parties=PARTIES[2], family="binomial", penalty="ridge", lam=0.1, eps=1.0, delta=1e-6)
    with pytest.raises(PrivacyParameterError, match="bounds"):
        dp.vertical_glm("y ~ .", df, **kw)
    with pytest.raises(PrivacyParameterError, match="neighbouring"):
        dp.vertical_glm("y ~ .", df, bounds=(-3, 3), neighbouring="add_remove", **kw)


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_missing_values_filled_in_dp_mode_and_omit_refused():
    """Issue 26: DP mode with declared bounds fills a missing value (no row dropped, n public);
    na_action="omit" is refused before any spend (the sensitivities are functions of n).  The exact
    (non-private) protocol has no bounds, so it drops the row and names nothing: it is not private."""
    df = make_data("binomial", n=300)
    df.loc[3, "x5"] = np.nan
    kw = dict(
        parties=PARTIES[2], family="binomial", penalty="ridge", lam=0.1, eps=1.0, delta=1e-6, bounds=(-4, 4)
    )
    # strict=True: the 0/1 response declared by its levels (a binomial response must be declared)
    fit = dp.vertical_glm("y ~ .", df, strict=True, random_state=0, levels={"y": [0, 1]}, **kw)
    assert fit.n == 300 and fit.privacy.covered
    acc = dp.Accountant(eps=5.0, delta=1e-3)  # the sensitivities 2R/(n lam) would show the n analysed
    with pytest.raises(PrivacyParameterError, match='na_action="omit"'):
        dp.vertical_glm("y ~ .", df, na_action="omit", accountant=acc, **kw)
    assert acc.charges == []
    exact = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], family="binomial")
    assert exact.n == 299 and exact.privacy.data_dependent_steps == []


def test_two_level_factor_response_is_coded_like_r():
    df = make_data("binomial", n=300)
    df["outcome"] = np.where(df.y == 1, "yes", "no")
    fit = dp.vertical_glm(
        "outcome ~ x1 + x2 + x3 + x4 + x5 + x6", df.drop(columns="y"), parties=PARTIES[2], family="binomial"
    )
    ref = pooled(df, "binomial")
    np.testing.assert_allclose(fit.coefficients["estimate"], ref.params, rtol=1e-6)
    assert "P(outcome = 'yes')" in str(fit)


def test_cli_run_vertical_glm_with_eps_inf(tmp_path):
    import json

    from dpstats.cli import main

    df = make_data("poisson", n=200)
    df.to_csv(tmp_path / "d.csv", index=False)
    rc = main(
        [
            "run",
            "vertical_glm",
            "--data",
            str(tmp_path / "d.csv"),
            "--formula",
            "y ~ .",
            "--eps",
            "inf",
            "--arg",
            f"parties={PARTIES[3]!r}",
            "--arg",
            "family='poisson'",
            "--quiet",
            "--json",
            str(tmp_path / "o.json"),
        ]
    )
    assert rc == 0
    out = json.loads((tmp_path / "o.json").read_text())
    np.testing.assert_allclose(out["tidy"]["estimate"], pooled(df, "poisson").params, rtol=1e-6)
    assert out["privacy"]["eps"] == "Inf"


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_model_methods_and_their_refusals():
    """vcov/loglik/predict of the pooled fit; per-row values only on request; DP fits refuse with the reason."""
    import json

    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.standard_normal((120, 3)), columns=["x1", "x2", "x3"])
    df["y"] = 1.0 * (df.x1 - df.x2 + rng.standard_normal(120) > 0)
    fit = dp.vertical_glm("y ~ x1 + x2 + x3", df, parties=[["x1"], ["x2", "x3"]], family="binomial")
    X = np.column_stack([np.ones(120), df[["x1", "x2", "x3"]].to_numpy()])
    beta = fit.coefficients["estimate"].to_numpy()
    mu = m.FAMILIES["binomial"].linkinv(X @ beta)
    np.testing.assert_allclose(fit.vcov().to_numpy(), np.linalg.inv((X.T * (mu * (1 - mu))) @ X), rtol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.vcov())), fit.coefficients["std_error"], rtol=1e-8)
    assert fit.loglik()["df"] == 4 and abs(fit.loglik()["loglik"] + fit.deviance / 2) < 1e-9
    np.testing.assert_allclose(fit.predict(df.head(5), type="response"), mu[:5], rtol=1e-10)
    with pytest.raises(DataError, match="diagnostics=True"):
        fit.fitted()
    diag = dp.vertical_glm(
        "y ~ x1 + x2 + x3", df, parties=[["x1"], ["x2", "x3"]], family="binomial", diagnostics=True
    )
    np.testing.assert_allclose(diag.residuals("response"), df.y - mu, atol=1e-6)
    priv = dp.vertical_glm(
        "y ~ x1 + x2 + x3",
        df,
        parties=[["x1"], ["x2", "x3"]],
        family="binomial",
        eps=1,
        delta=1e-6,
        penalty="ridge",
        lam=0.1,
        bounds=(-4, 4),
        random_state=1,
    )
    for method in (priv.vcov, priv.loglik):
        with pytest.raises(DataError, match="DP fit"):
            method()
    assert "covariance" not in json.dumps(priv.to_dict())  # nothing new in the released record


def test_offset_is_honoured_like_statsmodels_glm():
    # oracle: statsmodels GLM with offset=; the offset's column is held by a party (like y, by the leader)
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    n = 300
    X = rng.standard_normal((n, 3))
    o = rng.uniform(0, 1, n)
    y = rng.poisson(np.exp(0.3 + X @ [0.5, -0.2, 0.1] + o))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(o=o, y=y)
    fit = dp.vertical_glm(
        "y ~ x1 + x2 + x3 + offset(o)", df, parties=[["x1", "o"], ["x2", "x3"]], family="poisson"
    )
    ref = sm.GLM(y, sm.add_constant(X), family=sm.families.Poisson(), offset=o).fit()
    tab = fit.tidy()
    np.testing.assert_allclose(tab["estimate"], ref.params, rtol=1e-6)
    np.testing.assert_allclose(tab["std_error"], ref.bse, rtol=1e-5)
    assert fit.deviance == pytest.approx(ref.deviance, rel=1e-8)
    binary = df.assign(y=(df["y"] > df["y"].median()).astype(int))
    with pytest.raises(dp.PrivacyParameterError, match="offset"):
        dp.vertical_glm(
            "y ~ x1 + x2 + x3 + offset(o)",
            binary,
            parties=[["x1", "o"], ["x2", "x3"]],
            family="binomial",
            eps=1.0,
            delta=1e-6,
            bounds=(-5, 5),
            penalty="ridge",
            lam=0.1,
        )


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_dp_mode_print_explains_the_fixed_sweeps_instead_of_a_nan_change():
    """The outside R audit: a DP fit printed "last sum|Δβ| = nan".  DP mode runs a fixed number of sweeps
    (no data-dependent stop), so no relative change exists to show: the line says so instead of NaN."""
    df = make_data("binomial", n=300)
    kw = dict(parties=PARTIES[2], family="binomial", penalty="ridge", lam=0.1, bounds=(-4, 4))
    fit = dp.vertical_glm("y ~ .", df, eps=1.0, delta=1e-6, rounds=7, random_state=0, **kw)
    for text in (str(fit), str(fit.summary())):
        assert "nan" not in text.lower()
        assert "ran a fixed 7 sweeps (DP mode: no data-dependent stopping rule, so no relative change" in text
    assert fit.glance()["converged"].item() is None and fit.to_dict()["outputs"]["converged"] is None
    exact = dp.vertical_glm("y ~ .", df, parties=PARTIES[2], family="binomial")
    assert (
        "converged in" in str(exact) and "last relative change = " in str(exact) and "nan" not in str(exact)
    )
    assert bool(exact.glance()["converged"].item()) is True
