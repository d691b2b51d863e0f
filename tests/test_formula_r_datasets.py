"""R is the oracle: model_frame against R's model.frame + model.matrix on R's own data sets.

Every formula in ``tests/data/r_formulas.tsv`` (iris, mtcars, ToothGrowth,
warpbreaks, esoph, airquality with its NAs, CO2 with its ordered factor, and a
data set with dotted, backticked and digit-led names) is evaluated in one R
session as ``mf <- model.frame(f, data); model.matrix(terms(mf), mf)`` (R's
default na.omit).  For each, the column names, their order, every value
(absolute tolerance 1e-10), the response, the offset and the number of rows
kept must equal R's.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpstats.formula import model_frame

pytestmark = pytest.mark.r

TABLE = Path(__file__).parent / "data" / "r_formulas.tsv"
with TABLE.open(newline="") as fh:
    CASES = [(row["dataset"], row["formula"]) for row in csv.DictReader(fh, delimiter="\t")]

# every formula the issue names (on the data set with such names)
ISSUE_FORMULAS = [
    ("iris", "Sepal.Length ~ Petal.Length * Species"),
    ("named", "y ~ log(a.b + 5)"),
    ("named", "y ~ x1:a.b"),
    ("named", "y ~ I(a.b^2)"),
    ("named", "y ~ f * a.b"),
    ("named", "y ~ `a b` + x1"),
    ("named", "y ~ . - `a b`"),
    ("named", "y ~ `1000_at`"),
]

R_SETUP = r"""
named <- data.frame(y = iris$Sepal.Length, x1 = iris$Sepal.Width, a.b = iris$Petal.Length,
                    `a b` = iris$Petal.Width + 0.5, `1000_at` = iris$Sepal.Width * iris$Petal.Width,
                    f = iris$Species, check.names = FALSE)
dpstats_oracle <- function(datasets, formulas) {
  lapply(seq_along(formulas), function(i) {
    d <- get(datasets[i])
    tryCatch({
      f <- as.formula(formulas[i], env = globalenv())
      mf <- model.frame(f, d)
      tt <- attr(mf, "terms")
      mm <- model.matrix(tt, mf)
      off <- model.offset(mf)
      y <- if (attr(tt, "response") == 1) as.double(model.response(mf)) else numeric(0)
      list(names = colnames(mm), values = as.double(mm), n = nrow(mm), n_data = nrow(d),
           offset = if (is.null(off)) numeric(0) else as.double(off), y = y, error = "")
    }, error = function(e) list(error = conditionMessage(e)))
  })
}
"""


@pytest.fixture(scope="module")
def results(rpy2_robjects):
    """R's and dpstats' answers for every formula, computed once (one R session, one call)."""
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    ro.r(R_SETUP)
    datasets = sorted({d for d, _ in CASES})
    frames = {d: to_pandas(ro.r(d)) for d in datasets}
    answers = ro.r["dpstats_oracle"](ro.StrVector([d for d, _ in CASES]), ro.StrVector([f for _, f in CASES]))
    out = {}
    for (dataset, formula), ans in zip(CASES, answers):
        r = {k: ans.rx2(k) for k in ans.names}
        out[(dataset, formula)] = (r, frames[dataset])
    return out


def _python(formula: str, frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model_frame(formula, frame, one_sided=formula.lstrip().startswith("~"), check_constant=False)


def test_the_table_has_at_least_80_formulas_and_every_formula_of_the_issue():
    assert len(CASES) >= 80
    assert len(set(CASES)) == len(CASES), "duplicate rows in r_formulas.tsv"
    missing = [c for c in ISSUE_FORMULAS if c not in CASES]
    assert not missing
    assert {d for d, _ in CASES} >= {
        "iris",
        "mtcars",
        "ToothGrowth",
        "warpbreaks",
        "esoph",
        "airquality",
        "CO2",
    }


@pytest.mark.parametrize(("dataset", "formula"), CASES, ids=[f"{d}: {f}" for d, f in CASES])
def test_model_matrix_equals_r(results, dataset, formula):
    r, frame = results[(dataset, formula)]
    assert r["error"][0] == "", f"R itself fails on {formula}: {r['error'][0]}"
    mf = _python(formula, frame)
    names = list(r["names"])
    n = int(r["n"][0])
    assert mf.names == names, f"{formula}: names differ"
    assert mf.n == n and mf.n_dropped == int(r["n_data"][0]) - n, f"{formula}: rows kept differ"
    expected = np.asarray(r["values"]).reshape((n, len(names)), order="F")
    np.testing.assert_allclose(mf.X, expected, rtol=0, atol=1e-10, err_msg=formula)
    if len(r["y"]):
        np.testing.assert_allclose(mf.y, np.asarray(r["y"]), rtol=0, atol=1e-10, err_msg=formula)
    if len(r["offset"]):
        np.testing.assert_allclose(mf.offset, np.asarray(r["offset"]), rtol=0, atol=1e-10, err_msg=formula)
    else:
        assert mf.offset is None
