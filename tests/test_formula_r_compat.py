"""dpstats.formula.model_frame against R's model.matrix, through rpy2 (DESIGN §2.2).

For every formula below, on the same data.frame (made in R, carried to pandas
by dpstats.rbridge), the design's column names, their order, the number of
complete rows and every value (absolute tolerance 1e-10) must equal R's
``model.matrix(formula, model.frame(formula, df))`` (R's default na.omit).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.formula import model_frame

pytestmark = pytest.mark.r

R_DATA = r"""
set.seed(20240601)
n <- 60
df <- data.frame(
  y  = rnorm(n),
  x1 = rnorm(n),
  x2 = runif(n, -2, 2),
  x3 = rexp(n) + 0.1,
  i  = sample(1:9, n, replace = TRUE),
  g  = factor(sample(c("lo", "mid", "hi"), n, replace = TRUE), levels = c("lo", "mid", "hi")),
  h  = factor(sample(c("d", "a", "c", "b"), n, replace = TRUE)),
  t  = sample(c(TRUE, FALSE), n, replace = TRUE),
  s  = sample(c("apple", "kiwi", "pear"), n, replace = TRUE),
  xna = ifelse(runif(n) < 0.15, NA, rnorm(n)),
  gna = factor(ifelse(runif(n) < 0.1, NA, sample(c("u", "v", "w"), n, replace = TRUE))),
  o  = factor(sample(c("low", "medium", "high", "top"), n, replace = TRUE),
              levels = c("low", "medium", "high", "top"), ordered = TRUE),
  stringsAsFactors = FALSE
)
df
"""

FORMULAS = [
    "y ~ .",
    "y ~ x1 + x2",
    "y ~ . - x2",
    "y ~ . - g - h - s - gna - o",
    "y ~ 0 + x1 + x2",
    "y ~ x1 + x2 - 1",
    "y ~ i + x1",
    "y ~ g",
    "y ~ 0 + g",
    "y ~ g + h",
    "y ~ 0 + g + h",
    "y ~ h + x1 + g",
    "y ~ x1:x2",
    "y ~ x1 * x2",
    "y ~ x1 * g",
    "y ~ g:x1",
    "y ~ g * h",
    "y ~ g:h",
    "y ~ (x1 + x2 + x3)^2",
    "y ~ I(x1^2)",
    "y ~ x1 + I(x1^2) + I(x2 * x3)",
    "y ~ log(x3)",
    "y ~ log(x3) + sqrt(x3) + exp(x1)",
    "y ~ t",
    "y ~ t + g",
    "y ~ 0 + t",
    "y ~ s",
    "y ~ s + x1",
    "y ~ xna + x1",
    "y ~ gna + x1",
    "y ~ x1 * gna",
    "log(x3) ~ x1 + g",
    "y ~ o",
    "y ~ o + x1",
    "y ~ 0 + o + g",
    "y ~ x1:o",
    "y ~ g:h + x1",
    "y ~ x1 + g:x2",
    "~ x1 + g",
    "~ .",
    "~ 0 + h",
    # '**' is '^' to R's parser (Python's spelling of a power, the audit's L1): the same names and values
    "y ~ x1 + I(x1**2) + I(x2 ** 3)",
    "y ~ (x1 + x2 + g)**2",
]


@pytest.fixture(scope="module")
def frames(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    rdf = ro.r(R_DATA)
    ro.globalenv["df_compat"] = rdf
    return ro, to_pandas(rdf)


def _r_design(ro, formula: str):
    res = ro.r(f"""
    local({{
      f <- {formula}
      mf <- model.frame(f, df_compat)
      mm <- model.matrix(f, mf)
      list(names = colnames(mm), values = as.double(mm), n = nrow(mm))
    }})""")
    parts = dict(zip(res.names, res))
    names = list(parts["names"])
    n = int(parts["n"][0])
    return names, np.asarray(parts["values"]).reshape((n, len(names)), order="F")


def test_at_least_25_formulas():
    assert len(FORMULAS) >= 25


def test_bridge_keeps_r_types(frames):
    _, df = frames
    assert df["g"].cat.categories.tolist() == ["lo", "mid", "hi"]
    assert str(df["t"].dtype) == "boolean"  # an R logical crosses as nullable boolean, NA or not
    assert str(df["s"].dtype) == "str"
    assert df["xna"].isna().sum() > 0 and df["gna"].isna().sum() > 0


@pytest.mark.parametrize("formula", FORMULAS)
def test_model_matrix_matches_r(frames, formula):
    ro, df = frames
    r_names, r_values = _r_design(ro, formula)
    one_sided = formula.lstrip().startswith("~")
    mf = model_frame(formula, df, one_sided=one_sided, check_constant=False)
    assert mf.names == r_names, f"{formula}: names differ"
    assert mf.X.shape == r_values.shape, f"{formula}: shape {mf.X.shape} vs R {r_values.shape}"
    np.testing.assert_allclose(mf.X, r_values, rtol=0, atol=1e-10, err_msg=formula)


@pytest.mark.parametrize("formula", ["y ~ .", "log(x3) ~ x1 + g", "y ~ xna + x1"])
def test_response_matches_r(frames, formula):
    ro, df = frames
    res = ro.r(f"local({{ f <- {formula}; as.double(model.response(model.frame(f, df_compat))) }})")
    mf = model_frame(formula, df, check_constant=False)
    np.testing.assert_allclose(mf.y, np.asarray(res), rtol=0, atol=1e-12)
