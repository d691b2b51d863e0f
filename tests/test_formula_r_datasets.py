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
import json
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


# --------------------------------------------------------------------------- declared levels (issue 26)
# (data set, formula, column, declared levels): R's oracle is model.matrix on a copy of the data whose
# column is factor(column, levels = ...), a value outside the levels being NA (R's default na.omit).
LEVEL_CASES = [
    ("iris", "Sepal.Length ~ Petal.Length + Species", "Species", ["virginica", "setosa", "versicolor"]),
    ("iris", "Sepal.Length ~ Petal.Length * Species", "Species", ["versicolor", "virginica"]),
    ("iris", "Sepal.Length ~ Species", "Species", ["setosa", "versicolor", "virginica", "unseen"]),
    ("iris", "Sepal.Length ~ Petal.Width:Species - 1", "Species", ["virginica", "setosa"]),
    ("chars", "y ~ x + s", "s", ["virginica", "versicolor", "setosa"]),
    ("chars", "y ~ x * s", "s", ["setosa", "unseen", "virginica"]),
    ("warpbreaks", "breaks ~ wool + tension", "tension", ["H", "M", "L"]),
    ("esoph", "ncases ~ agegp + alcgp", "agegp", ["25-34", "35-44", "45-54"]),  # ordered: contr.poly
]

R_LEVELS = r"""
chars <- data.frame(y = iris$Sepal.Length, x = iris$Petal.Width, s = as.character(iris$Species),
                    stringsAsFactors = FALSE)
dpstats_levels_oracle <- function(dataset, formula, column, levels, fill) {
  d <- get(dataset)
  d[[column]] <- factor(d[[column]], levels = levels, ordered = is.ordered(d[[column]]))
  if (fill) d[[column]][is.na(d[[column]])] <- levels[1]
  mf <- model.frame(as.formula(formula, env = globalenv()), d)
  mm <- model.matrix(attr(mf, "terms"), mf)
  list(names = colnames(mm), values = as.double(mm), n = nrow(mm), y = as.double(model.response(mf)))
}
"""


@pytest.mark.parametrize("fill", [False, True], ids=["omit", "fill"])
@pytest.mark.parametrize(
    ("dataset", "formula", "column", "levels"), LEVEL_CASES, ids=[c[1] for c in LEVEL_CASES]
)
def test_declared_levels_equal_r_factor_with_levels(rpy2_robjects, dataset, formula, column, levels, fill):
    """levels= gives R's model.matrix of factor(x, levels = ...): the declared levels' columns (a level
    no row takes included, ordered factors with polynomial contrasts), values outside them missing;
    na_action="omit" drops those rows as na.omit does, "fill" gives them the first level."""
    from dpstats.rbridge import to_pandas
    from dpstats.schema import Schema

    ro = rpy2_robjects
    ro.r(R_SETUP + R_LEVELS)
    r = ro.r["dpstats_levels_oracle"](dataset, formula, column, ro.StrVector(levels), fill)
    r = {k: r.rx2(k) for k in r.names}
    schema = Schema.declare(
        levels={column: levels}, na_action="fill" if fill else "omit", neighbouring="add_remove"
    )
    mf = model_frame(formula, to_pandas(ro.r(dataset)), schema=schema, check_constant=False)
    names, n = list(r["names"]), int(r["n"][0])
    assert mf.names == names and mf.n == n
    expected = np.asarray(r["values"]).reshape((n, len(names)), order="F")
    np.testing.assert_allclose(mf.X, expected, rtol=0, atol=1e-10, err_msg=formula)
    np.testing.assert_allclose(mf.y, np.asarray(r["y"]), rtol=0, atol=1e-10, err_msg=formula)


# --------------------------------------------------------------------------- contrasts (issue 28, item 2)
# (data set, formula, options(contrasts =), per-column `contrasts(d$col) <- <R expression>`,
#  lm-style contrasts.arg as R expressions by variable name). R's oracle is model.matrix under that
# option with those attributes (and contrasts.arg); dpstats gets them as the R package sends them
# (the frame's attrs: each column's stored attribute, a name or its matrix, and the option).
TREATMENT, SUM, HELMERT = (
    ("contr.treatment", "contr.poly"),
    ("contr.sum", "contr.poly"),
    ("contr.helmert", "contr.poly"),
)
CONTRAST_CASES = [
    ("warpbreaks", "breaks ~ wool + tension", SUM, {}, {}),
    ("warpbreaks", "breaks ~ wool * tension", HELMERT, {}, {}),
    ("PlantGrowth", "weight ~ group", TREATMENT, {"group": "contr.sum(3)"}, {}),
    ("PlantGrowth", "weight ~ group", SUM, {"group": '"contr.treatment"'}, {}),
    ("esoph", "ncases ~ agegp + alcgp", ("contr.treatment", "contr.helmert"), {}, {}),
    ("esoph", "ncases ~ agegp + tobgp", TREATMENT, {"agegp": '"contr.treatment"', "tobgp": "contr.sum"}, {}),
    ("iris", "Sepal.Length ~ Species * Petal.Width", HELMERT, {}, {}),
    (
        "iris",
        "Sepal.Length ~ Species",
        TREATMENT,
        {"Species": "contr.treatment(levels(iris$Species), base = 3)"},
        {},
    ),
    (
        "iris",
        "Sepal.Length ~ Species + Petal.Width",
        SUM,
        {"Species": "matrix(c(1, -1, 0, 0.5, 0.5, -1), 3)"},
        {},
    ),
    ("warpbreaks", "breaks ~ tension + wool", TREATMENT, {"tension": "contr.poly(3)[, 1, drop = FALSE]"}, {}),
    ("mtcars", "mpg ~ factor(cyl) + wt", ("contr.SAS", "contr.poly"), {}, {}),
    ("CO2", "uptake ~ Type + Treatment + conc", SUM, {"Type": "contr.helmert"}, {}),
    ("CO2", "uptake ~ Plant + conc", HELMERT, {}, {}),
    ("warpbreaks", "breaks ~ C(tension) + wool", SUM, {}, {}),
    ("warpbreaks", "breaks ~ C(tension, treatment) + wool", SUM, {"wool": '"contr.treatment"'}, {}),
    ("mtcars", "mpg ~ factor(cyl) + factor(am) + wt", TREATMENT, {}, {"factor(cyl)": '"contr.sum"'}),
    (
        "warpbreaks",
        "breaks ~ wool + tension",
        SUM,
        {},
        {"tension": "contr.helmert(3)", "wool": '"contr.SAS"'},
    ),
    ("iris", "Sepal.Length ~ Species:Petal.Width - 1", SUM, {}, {}),
]

R_CONTRASTS = r"""
dpstats_contrasts_oracle <- function(dataset, formula, option, exprs, arg_exprs) {
  d <- get(dataset)
  for (nm in names(exprs)) contrasts(d[[nm]]) <- eval(parse(text = exprs[[nm]]))
  sent <- lapply(setNames(names(d), names(d)), function(nm) {
    cm <- attr(d[[nm]], "contrasts")
    if (is.null(cm) || is.character(cm)) cm
    else list(values = as.double(cm), dim = dim(cm), colnames = colnames(cm), rownames = rownames(cm))
  })
  arg <- lapply(arg_exprs, function(e) eval(parse(text = e)))
  op <- options(contrasts = option)
  on.exit(options(op))
  f <- as.formula(formula, env = globalenv())
  mf <- model.frame(f, d)
  mm <- model.matrix(attr(mf, "terms"), mf, contrasts.arg = if (length(arg)) arg)
  fit <- lm(f, d, contrasts = if (length(arg)) arg)
  json <- function(x) as.character(jsonlite::toJSON(x, null = "null", auto_unbox = TRUE, digits = NA))
  list(names = colnames(mm), values = as.double(mm), n = nrow(mm), sent = json(Filter(Negate(is.null), sent)),
       arg = json(lapply(arg, function(cm) if (is.character(cm)) cm
                    else list(values = as.double(cm), dim = dim(cm), colnames = colnames(cm),
                              rownames = rownames(cm)))),
       coef = as.double(coef(fit)), coef_names = names(coef(fit)))
}
"""


def _contrast_case(ro, dataset, formula, option, exprs, arg_exprs):
    ro.r(R_SETUP + R_CONTRASTS)
    r = ro.r["dpstats_contrasts_oracle"](
        dataset, formula, ro.StrVector(list(option)), ro.ListVector(exprs), ro.ListVector(arg_exprs)
    )
    return {k: r.rx2(k) for k in r.names}


def _frame_with_contrasts(ro, r, dataset, option):
    from dpstats.rbridge import contrasts_from_r, to_pandas

    frame = to_pandas(ro.r(dataset))
    sent = json.loads(r["sent"][0]) or {}  # what reticulate hands the bridge: plain lists and scalars
    frame.attrs["contrasts"] = {nm: contrasts_from_r(spec) for nm, spec in sent.items()}
    frame.attrs["default_contrasts"] = list(option)
    return frame


@pytest.mark.parametrize(
    ("dataset", "formula", "option", "exprs", "arg_exprs"),
    CONTRAST_CASES,
    ids=[f"{c[0]}: {c[1]} {c[2][0]} {c[3]} {c[4]}" for c in CONTRAST_CASES],
)
def test_contrasts_equal_r(rpy2_robjects, dataset, formula, option, exprs, arg_exprs):
    """options(contrasts =), contrasts(f) <- (a name, a function or a matrix, completed by R when short)
    and lm's contrasts = list(...) give R's model.matrix, and dp_lm at eps = Inf gives coef(lm(...))."""
    import dpstats as dp
    from dpstats.rbridge import contrasts_from_r

    ro = rpy2_robjects
    r = _contrast_case(ro, dataset, formula, option, exprs, arg_exprs)
    frame = _frame_with_contrasts(ro, r, dataset, option)
    contrasts = {nm: contrasts_from_r(spec) for nm, spec in (json.loads(r["arg"][0]) or {}).items()}
    mf = model_frame(formula, frame, check_constant=False, contrasts=contrasts or None)
    names, n = list(r["names"]), int(r["n"][0])
    assert mf.names == names
    expected = np.asarray(r["values"]).reshape((n, len(names)), order="F")
    np.testing.assert_allclose(mf.X, expected, rtol=0, atol=1e-10, err_msg=formula)
    if contrasts:
        return  # the front doors take contrasts through the data (the R package sends them so)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(formula, frame, eps=float("inf"))
    coef = fit.coef()
    assert list(coef.index) == list(r["coef_names"])
    np.testing.assert_allclose(coef.to_numpy(), np.asarray(r["coef"]), rtol=1e-8, atol=1e-8, err_msg=formula)
