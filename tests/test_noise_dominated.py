"""Releases dominated by noise warn, by public rules (vertical_glm DP mode, dp_gmm).

vertical_glm: :func:`dpstats.methods.privreg.noise_warning` (σ_η > eta_clip, σ_β above the largest
coefficient the bounds let matter, or, binomial, slopes inflated by the noise by more than 10 %);
dp_gmm: :func:`dpstats.methods.gmm.vacuous_warning` (Theorem 1.1's alpha infinite).  Both are
:class:`~dpstats.errors.ChanceWarning`, from public inputs (and, for dp_gmm after the release, the
released smallest weight), so neighbouring data sets warn alike.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods import privreg as m
from dpstats.simulate import simulate_gmm

AUDIT = dict(parties=[["x1"], ["x2"]], penalty="ridge", bounds=(-1, 1), delta=1e-5)


def regression(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    return df.assign(y=np.clip(0.5 * df.x1 - 0.3 * df.x2 + 0.2 * rng.standard_normal(n), -1, 1))


def quiet_fit(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)  # the rule must not fire here
        return dp.vertical_glm(*args, **kwargs)


# ------------------------------------------------------------------ vertical_glm
def test_vertical_auditors_case_warns_with_both_conditions_and_what_to_do():
    with pytest.warns(ChanceWarning, match="dominated by noise") as caught:
        fit = dp.vertical_glm("y ~ x1 + x2", regression(5000), lam=0.001, eps=1e4, random_state=1, **AUDIT)
    text = str(caught[0].message)
    # the exact Gaussian calibration (session 11); 446, 159, 4.23 and 2.13 by Bun & Steinke's conversion
    assert "sigma_eta = 444 (party1), 158 (party2)" in text and "eta_clip = 4" in text
    assert "sigma_beta = 4.21 (party1), 2.13 (party2)" in text and "(1 (party1), 1 (party2))" in text
    assert "Raise eps, lam" in text and "5000" not in text  # what to do; public numbers only
    assert text in fit.warnings and text in str(fit.summary())
    printed = str(fit)
    assert "Noise SD" in printed and "sigma_eta = 444 (party1)" in printed and "eta_clip = 4" in printed


def test_vertical_reasonable_setting_does_not_warn():
    """lam = 1, n = 20 000 and eps = 200: sigma_eta = 2.4 < eta_clip = 4 and sigma_beta ~ 5e-4 < 1."""
    fit = quiet_fit("y ~ x1 + x2", regression(20_000), lam=1.0, eps=200.0, random_state=1, **AUDIT)
    assert not fit.warnings
    assert max(fit.noise["sigma_eta"].values()) < 4 and fit.tidy()["noise_sd"].max() < 1e-3


def test_vertical_eps_one_warns_whatever_n_for_the_shared_predictors():
    """sigma_eta has the floor 2·eta_clip/sqrt(2 rho_eta) (the replaced row's own entry): at eps = 1 over 10
    sweeps and 2 parties it is about 141 at any n and lam (185 by Bun & Steinke's conversion, used before
    session 11), so the shared predictors carry no signal."""
    with pytest.warns(ChanceWarning, match="sigma_eta = 141") as caught:
        dp.vertical_glm("y ~ x1 + x2", regression(20_000), lam=1.0, eps=1.0, random_state=1, **AUDIT)
    assert "sigma_beta = " not in str(caught[0].message)  # the coefficients' own noise is small there


def test_vertical_tidy_noise_sd_is_the_plans_sigma_beta():
    fit = quiet_fit("y ~ x1 + x2", regression(20_000), lam=1.0, eps=200.0, random_state=1, **AUDIT)
    options = m.PrivregOptions.partial(
        family="gaussian",
        lam=1.0,
        eps=200.0,
        delta=1e-5,
        rounds=10,
        eta_clip=4.0,
        coef_share=0.1,
        neighbouring="replace",
    )
    sig_eta, sig_beta = m.noise_scales(options, 20_000, 2, [math.sqrt(2), 1.0], 1.0)  # R_k: intercept + x
    tidy = fit.tidy().set_index("term")
    assert tidy["noise_sd"].tolist() == pytest.approx([sig_beta[0], sig_beta[0], sig_beta[1]], rel=1e-12)
    assert fit.noise["sigma_eta"] == pytest.approx({"party1": sig_eta[0], "party2": sig_eta[1]}, rel=1e-12)
    exact = dp.vertical_glm("y ~ x1 + x2", regression(200), parties=[["x1"], ["x2"]])
    assert "noise_sd" not in exact.tidy() and exact.noise is None  # exact mode: no noise column


def test_vertical_neighbours_warn_alike():
    a = regression(5000)
    b = a.copy()
    b.loc[7, "x1"] = 50.0  # outside the declared bounds: clipped
    texts = []
    for data in (a, b):
        with pytest.warns(ChanceWarning) as caught:
            dp.vertical_glm("y ~ x1 + x2", data, lam=0.001, eps=1e4, random_state=1, **AUDIT)
        texts.append([str(w.message) for w in caught if w.category is ChanceWarning])
    assert texts[0] == texts[1]


def classification(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    return df.assign(y=(rng.random(n) < 1 / (1 + np.exp(-(df.x1 - df.x2)))).astype(float))


def test_vertical_binomial_noise_bias_warns_with_the_stated_factor():
    """lam = 1, n = 20 000, eps = 200: sigma_eta = 2.4 < eta_clip and sigma_beta ~ 4e-5, so nothing is
    dominated by noise, but each party receives noise of sd 2.4 and its logistic slopes are pushed out by
    about sqrt(1 + pi*2.4^2/8) = 1.8 (the Gaussian family at these settings: test above, no warning)."""
    with pytest.warns(ChanceWarning, match="biased by its noise") as caught:
        fit = dp.vertical_glm(
            "y ~ x1 + x2",
            classification(20_000),
            family="binomial",
            lam=1.0,
            eps=200.0,
            random_state=1,
            **AUDIT,
        )
    text = str(caught[0].message)
    kappa = m.slope_inflation(list(fit.noise["sigma_eta"].values()))
    assert list(fit.noise["slope_inflation"].values()) == pytest.approx(kappa, rel=1e-12)
    assert 1.7 < min(kappa) < 1.9 and "dominated by noise" not in text
    assert f"sqrt(1 + pi*s^2/8) = {kappa[0]:.3g} (party1), {kappa[1]:.3g} (party2)" in text
    assert text in fit.warnings and text in str(fit.summary())
    assert "Bias: each party's logistic fit" in str(fit) and f"{kappa[0]:.3g} (party1)" in str(fit)


def test_vertical_binomial_bias_below_ten_percent_is_printed_not_warned():
    """eps = 5000 (lam = 1, n = 20 000): sigma_eta = 0.40, a factor of 1.03 < INFLATION_LIMIT = 1.1."""
    fit = quiet_fit(
        "y ~ x1 + x2", classification(20_000), family="binomial", lam=1.0, eps=5000.0, random_state=1, **AUDIT
    )
    kappa = list(fit.noise["slope_inflation"].values())
    assert not fit.warnings and 1.0 < max(kappa) < m.INFLATION_LIMIT
    assert f"by a factor of about {kappa[0]:.3g} (party1)" in str(fit)


def test_vertical_binomial_swamped_predictors_give_no_inflation_factor():
    """eps = 1: sigma_eta = 185 > eta_clip; the probit factor (about 100) would not describe the fit, so
    neither the warning nor print gives it; both say the slopes are biased."""
    with pytest.warns(ChanceWarning, match="dominated by noise") as caught:
        fit = dp.vertical_glm(
            "y ~ x1 + x2",
            classification(20_000),
            family="binomial",
            lam=1.0,
            eps=1.0,
            random_state=1,
            **AUDIT,
        )
    text, printed = str(caught[0].message), str(fit)
    assert "biases the slopes further" in text and "sqrt(1 + pi" not in text
    assert "those predictors are swamped" in printed and "by a factor of about" not in printed


# ------------------------------------------------------------------ dp_gmm
def iris() -> pd.DataFrame:
    datasets = pytest.importorskip("sklearn.datasets")
    frame = datasets.load_iris(as_frame=True).frame
    frame.columns = ["Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width", "Species"]
    return frame


IRIS = dict(k=3, eps=5.0, delta=1e-5, bounds={"Sepal.Length": (4, 8), "Petal.Length": (1, 7)}, random_state=1)


def test_gmm_auditors_iris_case_warns_and_prints_the_vacuous_accuracy():
    with pytest.warns(ChanceWarning, match="no accuracy guarantee") as caught:
        fit = dp.dp_gmm("~ Sepal.Length + Petal.Length", iris(), **IRIS)
    text = next(str(w.message) for w in caught if "no accuracy guarantee" in str(w.message))
    assert "alpha of Kamath et al.'s Theorem 1.1 is Inf" in text and "Raise eps or n" in text
    assert text in fit.warnings
    assert "(>= 1: vacuous): no accuracy guarantee" in str(fit)


def test_gmm_public_rule_warns_before_any_spend():
    """n = 150, d = 10, k = 3, eps = 1: alpha is infinite even at equal weights; as an error, nothing is spent."""
    df, _ = simulate_gmm(150, d=10, k=3, random_state=0)
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        with pytest.raises(ChanceWarning, match="even if every component had weight 1/k"):
            dp.dp_gmm("~ .", df, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), accountant=acc)
    assert acc.spent_eps == 0.0


def test_gmm_well_separated_large_n_does_not_warn():
    df, _ = simulate_gmm(20_000, d=2, k=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        fit = dp.dp_gmm("~ .", df, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
    assert fit.accuracy() < 1 and "vacuous" not in str(fit)


def test_gmm_neighbours_warn_alike():
    a, _ = simulate_gmm(150, d=10, k=3, random_state=0)
    b = a.copy()
    b.iloc[7, 0] = 500.0  # outside the declared bounds: clipped
    texts = []
    for data in (a, b):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dp.dp_gmm("~ .", data, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1, oc_trials=0)
        texts.append(sorted(str(w.message) for w in caught if w.category is ChanceWarning))
    assert texts[0] == texts[1] and len(texts[0]) == 2  # Theorem 1.1's rule, and the clustering's (s13)
