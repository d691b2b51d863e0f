"""predict() on newdata (the outside R audit's items 4 and 5): a row with a missing value in a variable of
the formula is predicted as NaN, as R's ``predict(fit, newdata, na.action = na.pass)`` gives NA, for dp_lm,
dp_glm, dp_select_infer and dp_gmm alike; errors about newdata name newdata, the column and the fix."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError, FormulaError, PrivacyParameterError


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(600, 4)), columns=["x1", "x2", "x3", "x4"])
    df["y"] = 2 * df.x1 + rng.normal(size=600)
    return df


@pytest.fixture(scope="module")
def fits(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lm = dp.dp_lm("y ~ x1 + x2", data, eps=2.0, bounds=(-8, 8), random_state=1)
        si = dp.dp_select_infer(
            "y ~ x1 + x2 + x3 + x4", data, eps=2.0, delta=1e-6, k=2, bounds=(-8, 8), random_state=1
        )
        binary = data.assign(y=(data.x1 > 0).astype(int))
        glm = dp.dp_glm("y ~ x1 + x2", binary, eps=20.0, delta=1e-6, bounds=(-4, 4), random_state=1)
        two = data.assign(x1=data.x1 + np.where(np.arange(600) % 2, 4.0, -4.0))
        gmm = dp.dp_gmm("~ x1 + x2", two, k=2, eps=2.0, delta=1e-6, bounds=(-10, 10), random_state=1)
    return {"lm": lm, "si": si, "glm": glm, "gmm": gmm}


def _newdata(data):
    nd = data.iloc[:5].reset_index(drop=True).copy()
    nd.loc[1, "x1"] = np.nan
    nd.loc[3, "x2"] = np.inf
    return nd


@pytest.mark.parametrize("name", ["lm", "si", "glm", "gmm"])
def test_rows_with_missing_values_predict_nan_and_the_others_as_alone(fits, data, name):
    fit, nd = fits[name], _newdata(data)
    p = fit.predict(nd)
    assert p.shape == (5,)
    # as R's model frame of the fit's formula(): dp_select_infer's is the final model's (it selects x1
    # and x3 here), so x2's infinite value in row 3 leaves that row predicted, as lm(formula(fit)) does
    expected_nan = [1] if name == "si" else [1, 3]
    if name == "si":
        assert fit.selected == ["x1", "x3"]
    assert np.flatnonzero(np.isnan(p)).tolist() == expected_nan
    rows = [i for i in range(5) if i not in expected_nan]
    np.testing.assert_allclose(p[rows], fit.predict(nd.iloc[rows]), rtol=1e-12)
    all_missing = nd.assign(x1=np.nan)
    assert np.isnan(fit.predict(all_missing)).all() and len(fit.predict(all_missing)) == 5


def test_glm_and_gmm_other_outputs_keep_the_rows(fits, data):
    nd = _newdata(data)
    resp = fits["glm"].predict(nd, type="response")
    assert np.isnan(resp[[1, 3]]).all() and np.isfinite(resp[[0, 2, 4]]).all()
    gmm = fits["gmm"]
    assert gmm.predict_proba(nd).shape == (5, 2) and np.isnan(gmm.predict_proba(nd)[1]).all()
    assert np.isnan(gmm.log_density(nd)[[1, 3]]).all()
    assert gmm.predict(data.iloc[:5]).dtype.kind == "i"  # complete rows: whole component numbers, as before


@pytest.mark.parametrize("name", ["lm", "si", "gmm"])
def test_a_missing_column_is_named_as_newdata_s(fits, data, name):
    with pytest.raises((FormulaError, DataError)) as info:
        fits[name].predict(data[["x2", "x3", "x4"]].iloc[:3])
    text = str(info.value)
    assert "newdata" in text and "'x1'" in text
    assert "add the column 'x1' to newdata" in text or "give newdata the variables the fit was given" in text


def test_an_unknown_level_names_newdata_the_column_and_the_fix(data):
    df = data.assign(g=np.where(np.arange(600) % 2, "a", "b"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x1 + g", df, eps=2.0, bounds=(-8, 8), levels={"g": ["a", "b"]}, random_state=1)
    # R's words ("factor g has new levels c"), naming newdata, then the fix
    with pytest.raises(DataError, match=r"^newdata: factor g has new level c; .* give newdata only those"):
        fit.predict(pd.DataFrame({"x1": [1.0], "g": ["c"]}))


def test_predict_type_is_an_argument_error(fits, data):
    for name in ("si", "glm"):
        with pytest.raises(PrivacyParameterError, match="type must be"):
            fits[name].predict(data.iloc[:2], type="terms")


def test_select_infer_predicts_with_the_fit_s_columns_and_levels():
    """With ``y ~ .`` a column newdata has and the fit never used (here all missing) changes nothing,
    and a newdata holding one level of a factor is coded with the fit's levels, as R's predict does
    with the model frame's xlevels; the predictions equal the fitted coefficients applied by hand."""
    rng = np.random.default_rng(1)
    n = 4000
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=["x1", "x2", "x3"])
    df["city"] = pd.Categorical(rng.choice(["A", "B", "C"], n))
    df["y"] = 2 * df.x1 + 1.5 * (df.city == "C") + rng.normal(0, 0.5, n)
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-5, 5)}
    fit = dp.dp_select_infer("y ~ .", df, eps=4.0, delta=1e-6, k=2, bounds=bounds, random_state=2, n_boot=100)
    assert fit.selected == ["x1", "cityC"]  # seeded: the strong terms at eps = 4
    new = df.head(6).assign(junk=np.nan, city=["C"] * 6)  # text, one level only
    beta = fit.coef()
    expected = beta["(Intercept)"] + beta["x1"] * new.x1 + beta["cityC"]
    np.testing.assert_allclose(fit.predict(new), expected.to_numpy())


def test_vertical_glm_rows_with_missing_values_predict_nan(data):
    """vertical_glm's predict as dp_lm's: NaN for a row with a missing or non-finite value in a variable of
    the formula, offset included (R's na.pass); it refused the whole call before."""
    df = data.assign(y=(data.y + data.x3 > 0).astype(int), t=np.linspace(-0.5, 0.5, 600))
    fit = dp.vertical_glm("y ~ x1 + x2 + offset(t)", df, parties=[["x1", "t"], ["x2"]], family="binomial")
    nd = _newdata(df)
    nd.loc[4, "t"] = np.nan
    for type_ in ("link", "response"):
        p = fit.predict(nd, type=type_)
        assert p.shape == (5,) and np.flatnonzero(np.isnan(p)).tolist() == [1, 3, 4]
        np.testing.assert_allclose(p[[0, 2]], fit.predict(nd.iloc[[0, 2]], type=type_), rtol=1e-12)
    assert np.isnan(fit.predict(nd.assign(x2=np.nan))).all()


# ---- contrasts = naming a formula term (the outside R audit, models item 1): predict() codes newdata
# with the fit's contrasts under the name the fit matched ('factor(cyl)'), as lm does.
SUM_CYL = {"factor(cyl)": "contr.sum"}


def _mtcars_sum(rpy2_robjects):
    from dpstats.rbridge import load_r_dataset

    mt = load_r_dataset("mtcars", "datasets")
    mt.attrs["contrasts"] = dict(SUM_CYL)  # how the R package sends lm's contrasts = list(...)
    return mt


def test_contrasts_on_a_formula_term_predict_as_lm_at_eps_inf(rpy2_robjects):
    mt = _mtcars_sum(rpy2_robjects)
    ro = rpy2_robjects
    expected = np.asarray(
        ro.r(
            "predict(lm(mpg ~ wt + factor(cyl), mtcars, contrasts = list(`factor(cyl)` = 'contr.sum')), "
            "mtcars[1:3, ])"
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        fit = dp.dp_lm("mpg ~ wt + factor(cyl)", mt, eps=float("inf"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "absent from the formula" warning
        got = fit.predict(mt.iloc[:3])
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(got, [21.33650, 20.51907, 26.55377], atol=1e-5)


def test_contrasts_on_a_formula_term_give_the_fits_design_columns_at_finite_eps(rpy2_robjects):
    mt = _mtcars_sum(rpy2_robjects)
    expected = np.asarray(
        rpy2_robjects.r(
            "model.matrix(mpg ~ wt + factor(cyl), mtcars, contrasts.arg = list(`factor(cyl)` = 'contr.sum'))"
            "[c(1, 3, 5), ]"
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(  # declared levels: a DP fit keeps no level it read from the rows
            "mpg ~ wt + factor(cyl)",
            mt,
            eps=1.0,
            bounds={"mpg": (10, 35), "wt": (1, 6)},
            levels={"cyl": [4, 6, 8]},
            random_state=1,
        )
    assert fit.terms == ["(Intercept)", "wt", "factor(cyl)1", "factor(cyl)2"]
    newdata = mt.iloc[[0, 2, 4]]
    newdata.attrs = {}  # a Python user's newdata: the fit's contrasts still apply
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        design = fit._new_design(newdata)
        got = fit.predict(newdata)
    assert design.names == fit.terms
    np.testing.assert_allclose(design.X, expected)
    np.testing.assert_allclose(got, expected @ fit.coefficients)


def test_contrasts_the_fit_ignored_are_not_applied_by_predict(rpy2_robjects):
    """contrasts for 'cyl' where the formula uses factor(cyl): the fit ignores them (R warns), so does
    predict, and a numeric cyl elsewhere in the formula stays numeric."""
    from dpstats.rbridge import load_r_dataset

    mt = load_r_dataset("mtcars", "datasets")
    mt.attrs["contrasts"] = {"gear": "contr.sum"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("mpg ~ wt + factor(gear) + gear:wt", mt, eps=float("inf"))
    expected = np.asarray(
        rpy2_robjects.r("predict(lm(mpg ~ wt + factor(gear) + gear:wt, mtcars), mtcars[1:3, ])")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(fit.predict(mt.iloc[:3]), expected, rtol=1e-10)
