"""predict() codes newdata with the fit's factor levels, as R's predict does with the fit's xlevels
(the outside statistician's audit, s11, H3).

newdata whose rows hold only some levels of a factor -- ``C(cyl)``, ``factor(cyl)``, ``C(cyl, contr.sum)``,
a text column, a logical -- is coded with every level of the fit, declared (``levels=``) or, at eps = inf,
read from the rows; a level the fit does not know is an error naming the variable and the level (R's
"factor factor(cyl) has new levels 5").  The oracle is R itself, through rpy2: ``predict(lm(...), newdata)``
and ``predict(glm(...), newdata)`` on subsets of mtcars, warpbreaks, ToothGrowth and esoph (R's data sets), and
``model.matrix`` for the design of a private fit.  Tolerances: 1e-8 relative for least squares (the same
normal equations, solved differently), 1e-6 for IRLS (both iterate to a tolerance of 1e-8 on the
deviance); designs to 1e-12.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError

pytestmark = pytest.mark.r

CYL = {"cyl": [4, 6, 8]}


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


@pytest.fixture(scope="module")
def r_data(rpy2_robjects):
    from dpstats.rbridge import load_r_dataset

    return {name: load_r_dataset(name, "datasets") for name in ("mtcars", "warpbreaks", "ToothGrowth")}


def _r(ro, code: str) -> np.ndarray:
    return np.asarray(ro.r(code), dtype=float)


# R's C() needs a factor (C(cyl) of a number is an error in R), so R's side codes cyl as a factor
R_MTCARS = "local({ m <- mtcars; m$cyl <- factor(m$cyl); m })"

# (formula, R's fitting data, rows of newdata (R's, 1-based)): newdata rows 1:3 hold cyl 6, 6, 4 (no 8)
LM_CASES = [
    ("mpg ~ wt + C(cyl)", R_MTCARS, "1:3"),
    ("mpg ~ wt + factor(cyl)", "mtcars", "1:3"),
    ("mpg ~ wt * C(cyl, contr.sum)", R_MTCARS, "c(1, 3)"),
    ("mpg ~ wt + C(cyl, contr.treatment, base = 2)", R_MTCARS, "1:3"),
    ("mpg ~ wt + as.factor(cyl) + hp", "mtcars", "c(3, 8)"),  # cyl 4, 4: one level only
]


@pytest.mark.parametrize("declared", [False, True], ids=["levels read (eps = inf)", "levels="])
@pytest.mark.parametrize("formula,r_data_code,rows", LM_CASES, ids=[c[0] for c in LM_CASES])
def test_lm_predicts_a_subset_of_levels_as_r(rpy2_robjects, r_data, formula, r_data_code, rows, declared):
    ro, mt = rpy2_robjects, r_data["mtcars"]
    expected = _r(ro, f"local({{ d <- {r_data_code}; predict(lm({formula}, d), d[{rows}, ]) }})")
    fit = _quiet(dp.dp_lm, formula, mt, eps=np.inf, levels=CYL if declared else None)
    newdata = mt.iloc[[int(i) - 1 for i in ro.r(rows)]]  # cyl as numbers, some levels absent
    assert set(newdata.cyl) < {4.0, 6.0, 8.0}
    np.testing.assert_allclose(fit.predict(newdata), expected, rtol=1e-8)


def test_text_and_logical_columns_predict_as_r(rpy2_robjects, r_data):
    """Factors as plain text (warpbreaks' wool and tension, ToothGrowth's supp) and a logical: newdata
    rows of one level each."""
    ro = rpy2_robjects
    wb = r_data["warpbreaks"].astype({"wool": str, "tension": str})
    fit = _quiet(dp.dp_lm, "breaks ~ wool * tension", wb, eps=np.inf)
    expected = _r(ro, "predict(lm(breaks ~ wool * tension, warpbreaks), warpbreaks[1:9, ])")
    np.testing.assert_allclose(fit.predict(wb.iloc[:9]), expected, rtol=1e-8)  # wool A, tension L only

    tg = r_data["ToothGrowth"].astype({"supp": str})
    fit = _quiet(dp.dp_lm, "len ~ supp + factor(dose)", tg, eps=np.inf)
    expected = _r(ro, "predict(lm(len ~ supp + factor(dose), ToothGrowth), ToothGrowth[1:10, ])")
    np.testing.assert_allclose(fit.predict(tg.iloc[:10]), expected, rtol=1e-8)  # VC, dose 0.5 only

    mt = r_data["mtcars"].assign(vs=lambda d: d.vs == 1)
    fit = _quiet(dp.dp_lm, "mpg ~ wt + vs", mt, eps=np.inf)
    expected = _r(ro, "local({ m <- mtcars; m$vs <- m$vs == 1; predict(lm(mpg ~ wt + vs, m), m[m$vs, ]) })")
    np.testing.assert_allclose(fit.predict(mt[mt.vs]), expected, rtol=1e-8)


def test_ordered_factors_given_as_text_predict_with_the_fit_s_contrasts_as_r(rpy2_robjects):
    """esoph's ordered factors (polynomial contrasts): newdata as plain text holding one age group is coded
    as the fit's ordered factors, as R's predict does with the fit's contrasts."""
    from dpstats.rbridge import load_r_dataset

    es = load_r_dataset("esoph", "datasets")
    assert es.agegp.cat.ordered
    fit = _quiet(dp.dp_lm, "ncases ~ agegp + alcgp", es, eps=np.inf)
    assert fit.terms[1:3] == ["agegp.L", "agegp.Q"]
    expected = _r(rpy2_robjects, "predict(lm(ncases ~ agegp + alcgp, esoph), esoph[1:5, ])")
    newdata = es.iloc[:5].astype({"agegp": str, "alcgp": str})
    np.testing.assert_allclose(fit.predict(newdata), expected, rtol=1e-8)


@pytest.mark.parametrize("declared", [False, True], ids=["levels read (eps = inf)", "levels="])
def test_glm_predicts_a_subset_of_levels_as_r(rpy2_robjects, r_data, declared):
    ro, mt = rpy2_robjects, r_data["mtcars"]
    fit = _quiet(
        dp.dp_glm, "am ~ wt + C(cyl)", mt, eps=np.inf, family="binomial", levels=CYL if declared else None
    )
    for type_ in ("link", "response"):
        expected = _r(
            ro,
            f"local({{ m <- {R_MTCARS}; predict(glm(am ~ wt + C(cyl), binomial, m), m[1:3, ], "
            f'type = "{type_}") }})',
        )
        np.testing.assert_allclose(fit.predict(mt.iloc[:3], type=type_), expected, rtol=1e-6)


def test_a_new_level_is_an_error_naming_the_variable_and_the_level_as_r(rpy2_robjects, r_data):
    ro, mt = rpy2_robjects, r_data["mtcars"]
    r_message = str(
        ro.r(
            "local({ nd <- mtcars[1:3, ]; nd$cyl[1] <- 5; tryCatch(predict(lm(mpg ~ wt + factor(cyl), mtcars), "
            "nd), error = conditionMessage) })"
        )[0]
    )
    assert r_message == "factor factor(cyl) has new levels 5"
    newdata = mt.iloc[:3].assign(cyl=[5.0, 6.0, 4.0])
    for declared in (None, CYL):
        fit = _quiet(dp.dp_lm, "mpg ~ wt + factor(cyl)", mt, eps=np.inf, levels=declared)
        with pytest.raises(DataError, match=r"^newdata: factor factor\(cyl\) has new level 5; "):
            fit.predict(newdata)
    fit = _quiet(dp.dp_lm, "mpg ~ wt + C(cyl)", mt, eps=np.inf, levels=CYL)
    with pytest.raises(DataError, match=r"^newdata: factor C\(cyl\) has new levels 3, 5; "):
        fit.predict(mt.iloc[:3].assign(cyl=[5.0, 3.0, 4.0]))


def test_a_private_fit_codes_newdata_as_r_s_model_matrix(rpy2_robjects, r_data):
    """At finite eps with declared levels: newdata's design (rows with cyl 6 and 4, no 8) equals R's
    model.matrix rows of the whole data, contrasts of C() included, and predict applies the released
    coefficients to it."""
    ro, mt = rpy2_robjects, r_data["mtcars"]
    for formula in ("mpg ~ wt * C(cyl, contr.sum)", "mpg ~ wt + C(cyl, contr.treatment, base = 2)"):
        expected = _r(ro, f"local({{ m <- {R_MTCARS}; model.matrix({formula}, m)[c(1, 3), ] }})")
        fit = _quiet(
            dp.dp_lm,
            formula,
            mt,
            eps=1.0,
            delta=1e-5,
            bounds={"mpg": (10, 35), "wt": (1, 6)},
            levels=CYL,
            random_state=1,
        )
        newdata = mt.iloc[[0, 2]]
        design = fit._new_design(newdata)
        assert design.names == fit.terms
        np.testing.assert_allclose(design.X, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fit.predict(newdata), expected @ fit.coefficients, rtol=1e-12)


def _factor_data(n: int = 4000, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=["x1", "x2", "x3"])
    df["g"] = rng.choice(["a", "b", "c"], n)
    df["y"] = 2 * df.x1 + (df.g == "c") + rng.normal(0, 0.5, n)
    return df


def test_every_door_with_predict_codes_a_one_level_newdata_with_the_fit_s_levels():
    """dp_select_infer, vertical_glm and dp_gmm: newdata whose factor holds one level (text) predicts
    as the same rows do inside newdata holding every level."""
    df = _factor_data()
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-5, 5)}
    levels = {"g": ["a", "b", "c"]}
    fits = [
        _quiet(
            dp.dp_select_infer,
            "y ~ x1 + x2 + g",
            df,
            eps=4.0,
            delta=1e-6,
            k=3,
            bounds=bounds,
            levels=levels,
            n_boot=100,
            random_state=2,
        ),
        _quiet(dp.vertical_glm, "y ~ x1 + x2 + g", df, parties=[["x1"], ["x2", "g"]], family="gaussian"),
        _quiet(dp.dp_gmm, "~ x1 + x2 + g", df, k=2, eps=4.0, delta=1e-6, bounds=(-2, 2), levels=levels),
    ]
    rows = np.flatnonzero(df.g == "b")[:5]
    for fit in fits:
        whole = fit.predict(df.iloc[: rows.max() + 1])[rows]
        alone = fit.predict(df.iloc[rows])  # g is "b" in every row
        np.testing.assert_allclose(alone, whole, rtol=1e-12, err_msg=fit.method)
        with pytest.raises(DataError, match=r"factor g has new level z"):
            fit.predict(df.iloc[rows].assign(g="z"))
