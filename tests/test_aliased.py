"""Rank-deficient designs at eps = inf: aliased coefficients are NA, as in R's lm and glm.

R's oracle (one Rscript run): lm and glm on mtcars with an aliased column (wt2 = 2 * wt), on
warpbreaks without its A:H cell (an empty interaction cell), and on iris without setosa coded
with all three levels (an unused level: the model matrix of the full factor, fitted by lm/glm
without dropping the level, since lm's model.frame would drop it).  Estimates, standard errors to
1e-6 (glm's to 1e-4, see the test), the NA pattern, the residual degrees of freedom (n - rank), sigma and AIC.  Private fits on
the same designs run (no rank check on the rows: the ridge and the noise handle a singular Gram).
"""

from __future__ import annotations

import json
import math
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import DataError, DataWarning, NonPrivateWarning
from dpstats.methods._aliased import estimable_columns, estimable_from_gram

R_SCRIPT = r"""
library(jsonlite)
args <- commandArgs(TRUE); out <- args[1]
mt <- transform(mtcars, wt2 = 2 * wt, k = 1)
wb <- subset(warpbreaks, !(wool == "A" & tension == "H"))
ir <- iris[iris$Species != "setosa", ]
X <- model.matrix(~ Species, ir)  # the three levels kept, as dpstats keeps declared levels
one <- function(f) {
  s <- summary(f)
  cf <- coef(f)
  se <- setNames(rep(NA_real_, length(cf)), names(cf)); se[rownames(s$coefficients)] <- s$coefficients[, 2]
  list(names = names(cf), coef = unname(ifelse(is.na(cf), "NA", cf)), se = unname(ifelse(is.na(se), "NA", se)),
       df = f$df.residual, sigma = if (inherits(f, "glm")) NA else s$sigma,
       aic = if (inherits(f, "glm")) f$aic else NA)
}
res <- list(
  lm_mt = one(lm(mpg ~ wt + wt2, mt)),
  lm_k = one(lm(mpg ~ wt + k, mt)),
  glm_mt = one(glm(am ~ wt + wt2, binomial, mt)),
  lm_wb = one(lm(breaks ~ wool * tension, wb)),
  glm_wb = one(glm(breaks ~ wool * tension, poisson, wb)),
  lm_ir = one(lm(ir$Sepal.Length ~ X + 0)),
  glm_ir = one(glm(ir$Sepal.Length > 6.2 ~ X + 0, binomial))
)
write.csv(mt, file.path(out, "mt.csv")); write.csv(wb, file.path(out, "wb.csv"), row.names = FALSE)
writeLines(toJSON(res, digits = NA, auto_unbox = TRUE), file.path(out, "r.json"))
"""


@pytest.fixture(scope="module")
def r_fits(rscript, tmp_path_factory):
    out = tmp_path_factory.mktemp("aliased")
    (out / "a.R").write_text(R_SCRIPT)
    subprocess.run([rscript, str(out / "a.R"), str(out)], check=True, capture_output=True, timeout=120)
    mt = pd.read_csv(out / "mt.csv", index_col=0)
    wb = pd.read_csv(out / "wb.csv")
    wb["wool"] = pd.Categorical(wb.wool, categories=["A", "B"])
    wb["tension"] = pd.Categorical(wb.tension, categories=["L", "M", "H"])
    return json.loads((out / "r.json").read_text()), {"mt": mt, "wb": wb, "ir": _iris_without_setosa()}


def _iris_without_setosa() -> pd.DataFrame:
    from dpstats.rbridge import load_r_dataset

    iris = load_r_dataset("iris", "datasets")
    ir = iris[iris.Species != "setosa"].reset_index(drop=True)
    ir["long"] = (ir["Sepal.Length"] > 6.2).astype(float)
    return ir


CASES = {
    "lm_mt": ("dp_lm", "mpg ~ wt + wt2", "mt", {}),
    "lm_k": ("dp_lm", "mpg ~ wt + k", "mt", {}),
    "glm_mt": ("dp_glm", "am ~ wt + wt2", "mt", {}),
    "lm_wb": ("dp_lm", "breaks ~ wool * tension", "wb", {}),
    "glm_wb": ("dp_glm", "breaks ~ wool * tension", "wb", {"family": "poisson"}),
    "lm_ir": ("dp_lm", "Sepal.Length ~ Species", "ir", {}),
    "glm_ir": ("dp_glm", "long ~ Species", "ir", {}),
}


def _values(xs) -> np.ndarray:
    return np.array([np.nan if x == "NA" else float(x) for x in xs])


@pytest.mark.r
@pytest.mark.parametrize("case", list(CASES))
def test_aliased_coefficients_are_na_as_in_r(r_fits, case):
    res, frames = r_fits
    door, formula, frame, kw = CASES[case]
    r = res[case]
    with pytest.warns(NonPrivateWarning):
        fit = getattr(dp, door)(formula, frames[frame], eps=math.inf, **kw)
    coef, se = _values(r["coef"]), _values(r["se"])
    np.testing.assert_array_equal(np.isnan(fit.coefficients), np.isnan(coef))
    np.testing.assert_allclose(fit.coefficients, coef, rtol=1e-6, atol=1e-6, equal_nan=True)
    # glm's standard errors use the weights of its last-but-one iteration (tests/test_glm.py): 1e-4
    se_tol = 1e-6 if door == "dp_lm" else 1e-4
    np.testing.assert_allclose(fit.tidy()["std.error"], se, rtol=se_tol, atol=se_tol, equal_nan=True)
    assert fit.df_residual == r["df"]
    if door == "dp_lm":
        assert fit.sigma == pytest.approx(r["sigma"], rel=1e-6)
    else:
        assert fit.aic == pytest.approx(r["aic"], rel=1e-6)
    aliased = [t for t, b in zip(fit.terms, coef) if np.isnan(b)]
    assert fit.aliased_terms() == aliased
    text = str(fit.summary())
    assert f"Coefficients: ({len(aliased)} not defined because of singularities)" in text
    vcov = fit.vcov()
    assert vcov.loc[aliased].isna().all().all() and vcov[aliased].isna().all().all()
    kept = [t for t in fit.terms if t not in aliased]
    assert np.isfinite(vcov.loc[kept, kept].to_numpy()).all()
    assert fit.confint().loc[aliased].isna().all().all()
    assert np.isfinite(fit.confint().loc[kept].to_numpy()).all()
    assert fit.to_dict()["outputs"]["coefficients"][aliased[0]] is None


def test_predict_uses_the_estimable_coefficients_with_rs_warning():
    """As predict.lm on a rank-deficient fit: the NA coefficients count as 0, with a warning."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 50)})
    df["x2"] = 2 * df.x
    df["y"] = 1 + 3 * df.x + rng.normal(0, 0.1, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        fit = dp.dp_lm("y ~ x + x2", df, eps=math.inf)
        full = dp.dp_lm("y ~ x", df, eps=math.inf)
    new = pd.DataFrame({"x": [0.2, 0.7]}).assign(x2=lambda d: 2 * d.x)
    with pytest.warns(DataWarning, match="rank-deficient fit may be misleading: x2 not defined"):
        pred = fit.predict(new)
    np.testing.assert_allclose(pred, full.predict(new), rtol=1e-10)


def test_streamed_eps_inf_finds_the_aliased_column_from_the_cross_products(tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 200), "z": rng.normal(size=200)})
    df["x2"] = 3 * df.x - 1
    df["y"] = 1 + 2 * df.x + df.z + rng.normal(0, 0.1, 200)
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        streamed = dp.dp_lm("y ~ x + x2 + z", engines.stream(path), eps=math.inf)
        memory = dp.dp_lm("y ~ x + x2 + z", df, eps=math.inf)
    assert streamed.aliased_terms() == memory.aliased_terms() == ["x2"]
    np.testing.assert_allclose(streamed.coefficients, memory.coefficients, rtol=1e-8, equal_nan=True)


def test_the_rule_is_rs_limited_pivoting():
    """Columns in their order; a later copy is aliased, the earlier kept; zero columns are aliased."""
    x = np.arange(1.0, 9.0)
    X = np.c_[np.ones(8), x, x**2, x + 1, np.zeros(8), x**3]
    assert estimable_columns(X).tolist() == [True, True, True, False, False, True]
    assert estimable_from_gram(X.T @ X).tolist() == [True, True, True, False, False, True]


@pytest.mark.parametrize("door", ["dp_lm", "dp_glm"])
def test_private_fits_on_aliased_designs_run_without_a_rank_check(door):
    """No check on the rows at a finite eps: the ridge (dp_lm) and the noise (dp_glm) handle a singular
    Gram; every coefficient is released (none NaN), and no output names the aliasing."""
    rng = np.random.default_rng(2)
    n = 20_000
    df = pd.DataFrame({"x": rng.uniform(-1, 1, n)})
    df["x2"] = df.x
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-df.x))).astype(float)
    fit = getattr(dp, door)(
        "y ~ x + x2",
        df,
        eps=2.0,
        delta=1e-6,
        bounds={"x": (-1, 1), "x2": (-1, 1), "y": (0, 1)},
        random_state=3,
    )
    assert np.all(np.isfinite(fit.coefficients))
    assert "singularities" not in str(fit.summary())


def test_vertical_glm_exact_refuses_aliased_columns_naming_them():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.normal(size=60)})
    df["b"] = 2 * df.a
    df["y"] = df.a + rng.normal(size=60)
    with pytest.raises(DataError, match=r"vertical_glm: the design column\(s\) 'b' are linear combinations"):
        dp.vertical_glm("y ~ a + b", df, parties=[["a"], ["b"]], family="gaussian")
