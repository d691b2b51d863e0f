"""predict() on newdata with data-dependent bases (the outside R audit's open item 1): R's predvars.

R evaluates ``poly(x, 2)``, ``ns(x, df = 3)``, ``bs()`` and ``scale()`` on newdata with the fit's own
recurrence coefficients, knots and centring (``makepredictcall``), not with newdata's.  A non-private fit
(eps = inf) keeps those parameters and predicts as R's ``predict(lm(...), newdata)`` and
``predict(glm(...), newdata)`` do (oracle: R through rpy2, relative tolerance 1e-8).  A DP fit keeps none
of them (they are read from the rows and not released): its predict() and its missing-bounds refusal name
the term and the public fix (``raw = TRUE``, declared knots).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError, PrivacyParameterError
from dpstats.formula import _bases, model_frame

INF = math.inf

LM_FORMULAS = [
    "mpg ~ poly(wt, 2) + hp",
    "mpg ~ poly(wt, 3)",
    "mpg ~ splines::ns(wt, df = 3)",
    "mpg ~ splines::ns(wt, knots = 3) + hp",
    "mpg ~ splines::bs(wt, df = 5) + hp",
    "mpg ~ scale(wt) + scale(hp, center = FALSE)",
    "mpg ~ poly(wt, hp, degree = 2)",
    "mpg ~ poly(wt, 2):factor(am) + factor(cyl)",
]

# inside and beyond the training range of wt (1.513 .. 5.424) and hp (52 .. 335)
NEWDATA = pd.DataFrame(
    {"wt": [1.2, 2.0, 3.5, 6.0], "hp": [60.0, 100.0, 150.0, 380.0], "am": [0, 1, 1, 0], "cyl": [4, 4, 6, 8]}
)


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def r_data(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    return {name: to_pandas(rpy2_robjects.r(name)) for name in ("mtcars", "airquality")}


def _r_predict(ro, call: str, data: pd.DataFrame, newdata: pd.DataFrame) -> np.ndarray:
    """R's own ``predict(<call>, newdata)``: data and newdata sent as R data frames."""
    from dpstats.rbridge import to_r

    ro.globalenv["d"], ro.globalenv["nd"] = to_r(data), to_r(newdata)
    return np.asarray(ro.r(f"suppressWarnings(unname(predict({call}, newdata = nd)))"), float)


@pytest.mark.r
@pytest.mark.parametrize("formula", LM_FORMULAS)
def test_eps_inf_dp_lm_predicts_as_r_lm_on_newdata(rpy2_robjects, r_data, formula):
    fit = _quiet(dp.dp_lm, formula, r_data["mtcars"], eps=INF)
    expected = _r_predict(rpy2_robjects, f"lm({formula}, data = d)", r_data["mtcars"], NEWDATA)
    np.testing.assert_allclose(fit.predict(NEWDATA), expected, rtol=1e-8, err_msg=formula)


@pytest.mark.r
def test_eps_inf_dp_lm_with_missing_values_in_airquality_predicts_as_r(rpy2_robjects, r_data):
    """airquality's Ozone and Solar.R hold NAs: the rows dropped (no bounds, as lm's na.omit) are the
    rows the basis is built from, in both."""
    aq = r_data["airquality"]
    formula = "Ozone ~ splines::ns(Temp, df = 4) + poly(Wind, 2) + Solar.R"
    nd = pd.DataFrame(
        {
            "Temp": [50.0, 70.0, 90.0, 100.0],
            "Wind": [2.0, 10.0, 15.0, 22.0],
            "Solar.R": [100, np.nan, 200, 300],
        }
    )
    fit = _quiet(dp.dp_lm, formula, aq, eps=INF)
    got = fit.predict(nd)
    expected = _r_predict(
        rpy2_robjects, f"lm({formula}, data = d)", aq, nd
    )  # NA where Solar.R is NA (na.pass)
    assert np.isnan(got[1]) and np.isnan(expected[1])
    np.testing.assert_allclose(got[[0, 2, 3]], expected[[0, 2, 3]], rtol=1e-8)


@pytest.mark.r
def test_eps_inf_dp_glm_predicts_as_r_glm_on_newdata(rpy2_robjects, r_data):
    mt = r_data["mtcars"]
    formula = "carb ~ poly(hp, 2) + splines::ns(wt, df = 2)"
    fit = _quiet(dp.dp_glm, formula, mt, eps=INF, family="poisson")
    for kind in ("link", "response"):
        call = f"glm({formula}, family = poisson, data = d), type = '{kind}'"
        expected = _r_predict(rpy2_robjects, call, mt, NEWDATA)
        np.testing.assert_allclose(fit.predict(NEWDATA, type=kind), expected, rtol=1e-8)


@pytest.mark.r
def test_non_private_vertical_glm_predicts_as_r_lm(rpy2_robjects, r_data):
    mt = r_data["mtcars"]
    fit = _quiet(dp.vertical_glm, "mpg ~ poly(wt, 2) + hp", mt, parties=[["wt"], ["hp"]])
    expected = _r_predict(rpy2_robjects, "lm(mpg ~ poly(wt, 2) + hp, data = d)", mt, NEWDATA)
    np.testing.assert_allclose(fit.predict(NEWDATA), expected, rtol=1e-6)


def test_the_recurrence_gives_the_qr_basis_on_the_training_rows():
    x = np.random.default_rng(5).gamma(2.0, size=300)
    basis, coefs = _bases.poly_fit(x, 4, raw=False)
    np.testing.assert_allclose(_bases.poly_at(x, coefs), basis, rtol=0, atol=1e-12)
    assert coefs[1][0] == 1.0 and coefs[1][1] == pytest.approx(300.0, rel=1e-12)  # R's norm2 starts 1, n


def test_newdata_frame_with_the_fit_predvars_names_no_data_dependent_step():
    df = pd.DataFrame({"x": np.linspace(0, 1, 50), "y": np.linspace(1, 2, 50)})
    fit_frame = model_frame("y ~ poly(x, 2) + scale(x) + splines::ns(x, df = 3)", df)
    assert set(fit_frame.predvars) == {"poly(x, 2)", "scale(x)", "splines::ns(x, df = 3)"}
    assert len(fit_frame.data_dependent_terms) == 3
    new = model_frame(
        "~ poly(x, 2) + scale(x) + splines::ns(x, df = 3)",
        df.iloc[:2],
        one_sided=True,
        min_rows=1,
        predvars=fit_frame.predvars,
    )
    assert new.data_dependent_terms == []
    np.testing.assert_allclose(new.X, fit_frame.X[:2], rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def mtcars_like():
    rng = np.random.default_rng(2)
    wt = rng.uniform(1.5, 5.5, size=200)
    return pd.DataFrame(
        {"wt": wt, "hp": rng.uniform(50, 330, 200), "mpg": 37 - 5 * wt + rng.normal(size=200)}
    )


def test_a_dp_fit_keeps_no_basis_and_its_predict_names_the_public_fix(mtcars_like):
    fit = _quiet(dp.dp_lm, "mpg ~ poly(wt, 2) + hp", mtcars_like, eps=1.0, bounds=(-400, 400), random_state=1)
    assert fit.coding["predvars"] == {}  # read from the rows: never kept by a DP fit
    with pytest.raises(DataError, match=r"poly\(wt, 2\).*DP fit keeps none.*poly\(wt, 2, raw = TRUE\)"):
        fit.predict(mtcars_like.iloc[:3])
    nonprivate = _quiet(dp.dp_lm, "mpg ~ poly(wt, 2) + hp", mtcars_like, eps=INF)
    assert set(nonprivate.coding["predvars"]) == {"poly(wt, 2)"}


def test_terms_r_recomputes_on_newdata_stay_refused_at_eps_inf(mtcars_like):
    fit = _quiet(dp.dp_lm, "mpg ~ I(wt - mean(wt)) + poly(hp, 2)", mtcars_like, eps=INF)
    with pytest.raises(DataError, match=r"mean\(wt\).*recomputed from newdata.*public constant") as err:
        fit.predict(mtcars_like.iloc[:3])
    assert "poly(hp, 2)" not in str(err.value)  # kept by predvars, not refused


@pytest.mark.parametrize(
    ("term", "fix"),
    [
        ("poly(wt, 2)", r"poly\(wt, 2, raw = TRUE\)"),
        ("splines::ns(wt, df = 3)", r"knots = c\(\.\.\.\), Boundary\.knots"),
    ],
)
def test_missing_bounds_of_a_data_dependent_term_name_its_fix(mtcars_like, term, fix):
    acc = dp.Accountant(eps=1.0)
    with pytest.raises(PrivacyParameterError, match=rf"bounds are missing.*data-dependent step.*{fix}"):
        dp.dp_lm(
            f"mpg ~ {term}", mtcars_like, eps=1.0, bounds={"mpg": (10, 35), "wt": (1, 6)}, accountant=acc
        )
    assert acc.spent_eps == 0


def test_dp_select_infer_refuses_predict_with_a_selected_orthogonal_poly():
    """It used to recompute poly() on newdata's own rows silently (three rows: a basis of three points)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(400, 3)), columns=["x1", "x2", "x3"])
    df["y"] = 2 * df.x1 + rng.normal(size=400)
    fit = _quiet(
        dp.dp_select_infer,
        "y ~ poly(x1, 2) + x2 + x3",
        df,
        eps=2.0,
        delta=1e-6,
        k=2,
        bounds=(-8, 8),
        random_state=1,
    )
    assert any(t.startswith("poly(x1, 2)") for t in fit.selected)
    with pytest.raises(DataError, match=r"poly\(x1, 2\).*raw = TRUE"):
        fit.predict(df.iloc[:3])
