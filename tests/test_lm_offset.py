"""dp_lm's offset(): R's lm at eps = inf, refused before anything is read or spent under DP.

dp_lm refused offset() at every eps, where R's lm fits y − offset on the design.  Oracle: R's lm and
summary.lm on R's own data sets (mtcars with offset(wt), trees with a log-log offset and no
intercept, airquality with its missing rows omitted), through rpy2; tolerances 1e-9 relative on
coefficients, standard errors, t values, σ̂, logLik, AIC and predictions (both sides solve the same
least squares in double precision).  R² and F: this R (4.2) takes summary.lm's model sum of squares
from the fitted values *including* the offset; dp_lm takes it from the fitted values less the offset
(the variation the design explains, as summary.lm computes it from R 4.3 on, we believe), so R² and
F are compared with that sum of squares computed in R from lm's own fitted values and offset.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import FormulaError

CASES = [
    ("mtcars", "mtcars", "mpg ~ hp + factor(cyl) + offset(wt)"),
    ("trees", "trees", "log(Volume) ~ 0 + log(Girth) + offset(2 * log(Height))"),
    (
        "airquality",
        "transform(airquality, Ozone = as.numeric(Ozone), Solar.R = as.numeric(Solar.R))",
        "Ozone ~ Temp + Wind + offset(0.5 * Solar.R)",
    ),
]


def _r_fit(ro, data_expr: str, formula: str) -> dict:
    ro.r(f"d <- {data_expr}; g <- lm({formula}, data = d); s <- summary(g)")
    ro.r(
        "f <- fitted(g) - g$offset; mss <- if (attr(terms(g), 'intercept')) sum((f - mean(f))^2) else sum(f^2)"
    )
    number = lambda expr: float(ro.r(expr)[0])  # noqa: E731
    return {
        "coef": np.asarray(ro.r("unname(coef(g))")),
        "se": np.asarray(ro.r("unname(coef(s)[, 2])")),
        "t": np.asarray(ro.r("unname(coef(s)[, 3])")),
        "sigma": number("s$sigma"),
        "r2": number("mss / (mss + sum(resid(g)^2))"),
        "adj_r2": number("1 - (1 - mss / (mss + sum(resid(g)^2))) * (nobs(g) - 1) / g$df.residual"),
        "f": number("(mss / (length(coef(g)) - 1)) / s$sigma^2"),
        "loglik": number("as.numeric(logLik(g))"),
        "aic": number("AIC(g)"),
        "nobs": number("nobs(g)"),
        "predict": np.asarray(ro.r("unname(predict(g, d[c(1, 2, 3, 5, 6), ]))")),
    }


def _r_data(ro) -> pd.DataFrame:
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter):
        return ro.conversion.rpy2py(ro.r("d"))


@pytest.mark.r
@pytest.mark.parametrize("name,data_expr,formula", CASES, ids=[c[0] for c in CASES])
def test_offset_at_eps_inf_equals_lm(rpy2_robjects, name, data_expr, formula):
    expected = _r_fit(rpy2_robjects, data_expr, formula)
    df = _r_data(rpy2_robjects)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(formula, df, eps=float("inf"))
    tidy, glance = fit.tidy(), fit.glance().iloc[0]
    np.testing.assert_allclose(tidy["estimate"], expected["coef"], rtol=1e-9)
    np.testing.assert_allclose(tidy["std.error"], expected["se"], rtol=1e-9)
    np.testing.assert_allclose(tidy["statistic"], expected["t"], rtol=1e-9)
    assert glance["sigma"] == pytest.approx(expected["sigma"], rel=1e-9)
    if "0 +" not in formula:  # R² and F with an intercept (the one case whose adjusted R² is written above)
        assert glance["r.squared"] == pytest.approx(expected["r2"], rel=1e-9)
        assert glance["adj.r.squared"] == pytest.approx(expected["adj_r2"], rel=1e-9)
        assert glance["statistic"] == pytest.approx(expected["f"], rel=1e-9)
    assert glance["logLik"] == pytest.approx(expected["loglik"], rel=1e-9)
    assert glance["AIC"] == pytest.approx(expected["aic"], rel=1e-9)
    assert fit.n == expected["nobs"]
    rows = df.iloc[[0, 1, 2, 4, 5]]
    np.testing.assert_allclose(fit.predict(rows), expected["predict"], rtol=1e-9)


def test_offset_with_declared_bounds_fits_the_clipped_response_less_the_offset():
    """At eps = inf with bounds declared, the response is clipped to its bounds and then the offset
    subtracted: the same fit as lm on that column (numpy's least squares as the oracle)."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 200), "e": rng.uniform(0, 4, 200)})
    df["y"] = 1 + 2 * df.x + df.e + rng.normal(0, 1, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x + offset(e)", df, eps=float("inf"), bounds={"x": (-1, 1), "y": (-2, 6)})
    X = np.column_stack([np.ones(200), df.x])
    beta = np.linalg.lstsq(X, df.y.clip(-2, 6) - df.e, rcond=None)[0]
    np.testing.assert_allclose(fit.coefficients, beta, rtol=1e-10)


@pytest.mark.parametrize("formula", ["y ~ x + offset(log(e))", "y ~ offset(e) + x"])
def test_offset_under_dp_is_refused_before_reading_with_what_works(formula):
    class Unreadable:  # any access to the data would fail: the refusal comes from the formula alone
        def __getattr__(self, name):
            raise AssertionError(f"the data was read ({name})")

    acc = dp.Accountant(eps=5.0, delta=1e-4)
    for delta in (0.0, 1e-6):
        with pytest.raises(FormulaError) as err:
            dp.dp_lm(formula, Unreadable(), eps=1.0, delta=delta, bounds=(-3, 3), accountant=acc)
        msg = str(err.value)
        assert "at eps = inf only" in msg and "Nothing was read or spent" in msg
        assert "as a column of its own" in msg and "declared bounds" in msg  # what to do instead
    assert acc.spent_eps == 0.0


def test_offset_on_a_streamed_source_is_refused_not_ignored(tmp_path):
    """A chunked engine does not carry offset(): eps = inf refuses rather than fit without it."""
    df = pd.DataFrame({"x": [0.0, 1, 2, 3, 4, 5], "e": [1.0, 2, 1, 2, 1, 2]})
    df["y"] = df.x + df.e
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    with pytest.raises(FormulaError, match="on data in memory only"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp.dp_lm("y ~ x + offset(e)", dp.engines.stream(str(path)), eps=float("inf"))
