"""Formula terms that read values from the rows (outside audit s16-attack9, F01-F03).

* F01: ``cut(x, breaks = k)`` names its intervals by the data's range, and ``factor(x)`` of a numeric
  column its levels by the values read: a private fit names them by position (``level1``, ...), on
  every channel (term names, ``factor_levels``, ``tidy()``, print); at eps = inf they stay R's labels
  (checked against R's ``lm``).
* F02: ``poly(x, 2)``, ``ns(x, df =)``, ``bs(x, df =)`` fail on some rows: under ``strict=True`` they
  are refused alike on neighbours, without it the error is a ``DPStatsError`` naming the step it came
  after; no budget is spent either way.
* F03: a value beyond its variable's declared bounds enters every transformation as the bound.

Neighbours are one row apart (replaced by an extreme value, added, removed); same seed, so only
released values may differ (``tests/neighbours.py``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError, DPStatsError, PrivacyParameterError
from dpstats.formula import model_frame
from dpstats.schema import Schema

from neighbours import assert_same_view, reader_view
from r_oracle import run_r_json

B = {"x1": (0.1, 3), "x2": (-3, 3), "y": (-6, 6)}  # x2 numeric by declaration, in (-3, 3)


def _data(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"x1": rng.uniform(0.5, 2, n), "x2": rng.normal(size=n), "g": rng.choice(["a", "b"], n)})
    d["y"] = (d.x1 + d.x2 + rng.normal(size=n)).clip(-5.9, 5.9)
    return d


def _neighbours(d: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One row of ``d`` replaced by an extreme value of x2 (far outside its bounds, or just inside its
    range's end), a row with an extreme x2 added, a row removed."""
    far, near = d.copy(), d.copy()
    far.loc[7, "x2"] = 47.0
    near.loc[7, "x2"] = 2.9
    added = pd.concat([d, d.iloc[[3]].assign(x2=-1e6)], ignore_index=True)
    return {"far": far, "near": near, "added": added, "removed": d.drop(index=7).reset_index(drop=True)}


def _view(func, formula, data, **kwargs):
    """What a reader sees of a call (:func:`neighbours.reader_view`), with the fit's factor levels and
    tidy()'s terms; print's line on the residual standard error is left out (whether it is resolved is
    a rule on the released yᵀy, a released value)."""
    view = reader_view(func, formula, data, random_state=1, **kwargs)
    if view["error"] is None:
        fit = view.pop("fit")
        view["factor_levels"] = getattr(fit, "factor_levels", None)
        view["tidy terms"] = list(fit.tidy()["term"])
        for channel in ("print", "summary"):
            view[channel] = "\n".join(
                s for s in view[channel].split("\n") if "Residual standard error" not in s
            )
    return view


# ------------------------------------------------------------------------------------------------ F01
CUT_TERMS = [
    "cut(x2, breaks = 3)",
    "interaction(cut(x2, breaks = 3), g)",
    "C(cut(x2, breaks = 3), contr.sum)",
]
LM = dict(eps=8.0, delta=1e-5, n_boot=100, bounds=B, levels={"g": ["a", "b"]})


@pytest.mark.parametrize("term", CUT_TERMS)
@pytest.mark.parametrize("neighbour", ["far", "near", "added", "removed"])
def test_cut_with_a_number_of_breaks_names_its_intervals_alike_on_neighbours(term, neighbour):
    d = _data()
    kw = dict(LM, neighbouring="add_remove") if neighbour in ("added", "removed") else LM
    if "neighbouring" in kw:  # dp_lm holds under replace only: dp_pca shows the same terms under both
        func, formula, kw = (
            dp.dp_pca,
            f"~ x1 + {term}",
            dict(k=1, eps=1.0, delta=1e-5, bounds=B, levels=LM["levels"]),
        )
        kw["neighbouring"] = "add_remove"
    else:
        func, formula = dp.dp_lm, f"y ~ x1 + {term}"
    one = _view(func, formula, d, **kw)
    other = _view(func, formula, _neighbours(d)[neighbour], **kw)
    assert_same_view(one, other, f"{term} / {neighbour}")
    cut_terms = [t for t in one["terms"] if "cut(" in t]
    assert cut_terms and not any("]" in t for t in cut_terms), cut_terms  # no interval of the data's range


def test_cut_terms_print_no_value_read_from_the_rows():
    d = _data()
    d.loc[7, "x2"] = 2.7182818
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x1 + cut(x2, breaks = 3)", d, random_state=1, **LM)
    text = "\n".join(
        [str(fit), str(fit.summary()), fit.tidy().to_string(), str(fit.to_dict()), fit._repr_html_()]
    )
    assert fit.terms[2:] == ["cut(x2, breaks = 3)level2", "cut(x2, breaks = 3)level3"]
    assert fit.factor_levels == {"cut(x2, breaks = 3)": ["level1", "level2", "level3"]}
    for value in (d.x2.max(), d.x2.min()):  # the range read, as R's labels print it
        assert f"{value:.3g}" not in text


@pytest.mark.parametrize(
    ("func", "formula", "kwargs"),
    [
        (dp.dp_sis, "y ~ x1 + factor(x2)", dict(eps=2.0, k=2, bounds=B, oc_trials=0)),
        (dp.dp_lm, "y ~ x1 + factor(round(x2))", dict(eps=2.0, delta=1e-5, n_boot=100, bounds=B)),
        (dp.dp_lm, "y ~ x1 + interaction(factor(round(x2)), g)", LM),
        (
            dp.dp_lm,
            'y ~ x1 + ifelse(x2 > 0, "positive", round(x2))',
            dict(eps=2.0, delta=1e-5, n_boot=100, bounds=B),
        ),
    ],
)
def test_factor_of_numbers_names_its_levels_by_position_in_a_private_fit(func, formula, kwargs):
    d = _data()
    d["x2"] = d.x2.clip(-2.9, 2.9)
    d.loc[[0, 1], "x2"] = [-2.9, 2.9]  # both ends occur: the neighbour's value, clipped, adds no level
    other = d.copy()
    other.loc[7, "x2"] = 1e6 if "round" not in formula else -1e6  # clipped to the declared bound
    one, two = _view(func, formula, d, **kwargs), _view(func, formula, other, **kwargs)
    assert_same_view(one, two, formula)
    made = [t for t in one["terms"] if t.startswith(("factor(", "interaction(", "ifelse("))]
    assert made and all(re.search(r"\)level\d+(\.[ab])?$", t) for t in made), made[:5]


def test_predict_refuses_a_term_whose_levels_a_private_fit_read_and_does_not_keep():
    d = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(
            "y ~ x1 + factor(round(x2))", d, eps=2.0, delta=1e-5, n_boot=100, bounds=B, random_state=1
        )
        with pytest.raises(
            DataError, match=r"predict\(\) on new data is refused: .*factor\(round\(x2\)\).*by position"
        ):
            fit.predict(d.head())
        inf = dp.dp_lm("y ~ x1 + factor(round(x2))", d, eps=np.inf)
    assert len(inf.predict(d.head())) == 5  # eps = inf keeps the levels read, as R's predict


def test_model_frame_names_read_levels_by_position_only_for_a_private_schema():
    d = _data(40)
    private = Schema.declare(bounds=B, private=True)
    public = Schema.declare(bounds=B, private=False)
    mf = model_frame("y ~ cut(x2, breaks = 2) + factor(round(x2, 1))", d, schema=private)
    assert mf.names[1] == "cut(x2, breaks = 2)level2" and mf.names[2] == "factor(round(x2, 1))level2"
    assert (
        model_frame("y ~ cut(x2, breaks = 2)", d, schema=public).names[1].startswith("cut(x2, breaks = 2)(")
    )
    # declared breaks, levels or labels are public: their names are kept
    kept = model_frame(
        'y ~ cut(x2, breaks = 2, labels = c("lo", "hi")) + factor(round(x2), levels = c(0, 1)) + cut(x2, c(-3, 0, 3))',
        d,
        schema=private,
    )
    assert kept.names[1:] == [
        'cut(x2, breaks = 2, labels = c("lo", "hi"))hi',
        "factor(round(x2), levels = c(0, 1))1",
        "cut(x2, c(-3, 0, 3))(0,3]",
    ]
    # the evaluation inside a term is R's: a level compared by its value still matches
    same = model_frame('y ~ I(factor(round(x2)) == "1")', d, schema=private)
    np.testing.assert_array_equal(same.X[:, 1], (np.round(d.x2.clip(-3, 3)) == 1).astype(float))


R_SCRIPT = r"""
library(jsonlite)
out <- commandArgs(TRUE)[1]
d <- read.csv(file.path(out, "d.csv"))
s <- summary(lm(y ~ x1 + cut(x2, breaks = 3) + factor(h) + exp(x2), d))$coefficients
writeLines(toJSON(list(terms = rownames(s), coef = unname(s[, 1])), digits = NA), file.path(out, "r.json"))
"""


@pytest.mark.r
def test_at_eps_inf_cut_and_factor_keep_rs_labels_and_values(rscript, tmp_path):
    d = _data(120).assign(x2=lambda f: f.x2.clip(-2.9, 2.9))  # within the declared bounds: lm's fit
    d["h"] = np.random.default_rng(2).integers(1, 4, len(d)) * 2
    d.drop(columns="g").to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    ref = run_r_json(rscript, tmp_path, R_SCRIPT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x1 + cut(x2, breaks = 3) + factor(h) + exp(x2)", d, eps=np.inf, bounds=B)
    assert fit.terms == ref["terms"]
    assert any("(" in t and "]" in t for t in fit.terms)  # R's interval labels, e.g. (-0.95,2.02]
    np.testing.assert_allclose(fit.coefficients, ref["coef"], rtol=1e-8)


# ------------------------------------------------------------------------------------------------ F02
def _one_row_decides(term: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows on which ``term`` has a basis (D) and a neighbour on which it has none (D'): for poly(x2, 2)
    x2 takes three values because of row 0, or two; for a spline x2 varies in row 0 only, or nowhere."""
    d = _data()
    d["x2"] = np.random.default_rng(1).choice([-1.0, 1.0], len(d)) if term.startswith("poly") else 1.0
    other = d.copy()
    d.loc[0, "x2"], other.loc[0, "x2"] = (0.0, 1.0) if term.startswith("poly") else (-1.0, 1.0)
    return d, other


STEP_TERMS = {
    "poly(x2, 2)": {"poly(x2, 2)1": (-1, 1), "poly(x2, 2)2": (-1, 1)},
    "ns(x2, df = 3)": {f"ns(x2, df = 3){i}": (-1, 1) for i in (1, 2, 3)},
    "bs(x2, df = 5)": {f"bs(x2, df = 5){i}": (-1, 1) for i in range(1, 6)},
    "ns(x2, knots = c(0))": {f"ns(x2, knots = c(0)){i}": (-1, 1) for i in (1, 2)},
}


STEP_KW = dict(eps=2.0, delta=1e-5, n_boot=100, random_state=1)


def _attempt(formula, data, bounds, strict):
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dp.dp_lm(formula, data, bounds=bounds, strict=strict, accountant=acc, **STEP_KW)
            outcome = None
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            outcome = exc
    assert acc.spent_eps == 0 or outcome is None
    return outcome, acc


@pytest.mark.parametrize("term", list(STEP_TERMS))
def test_strict_refuses_a_step_that_fails_on_some_rows_alike_on_neighbours(term):
    bounds = dict(B, **STEP_TERMS[term])
    errors = []
    for data in _one_row_decides(term):
        exc, acc = _attempt(f"y ~ x1 + {term}", data, bounds, strict=True)
        assert isinstance(exc, PrivacyParameterError), exc
        assert acc.spent_eps == 0
        errors.append(str(exc))
    assert errors[0] == errors[1] and "strict=True refuses the data-dependent step" in errors[0]


@pytest.mark.parametrize("term", list(STEP_TERMS))
def test_a_failing_step_raises_a_dpstats_error_after_naming_the_step(term):
    released, failing = _one_row_decides(term)
    bounds = dict(B, **STEP_TERMS[term])
    ok, _ = _attempt(f"y ~ x1 + {term}", released, bounds, strict=False)
    assert ok is None
    exc, acc = _attempt(f"y ~ x1 + {term}", failing, bounds, strict=False)
    assert isinstance(exc, DPStatsError), repr(exc)
    assert "Raised after a data-dependent step not covered by the privacy guarantee" in str(exc)
    assert f"the formula term {term}" in str(exc)
    assert acc.spent_eps == 0 and acc.spent_delta == 0


def test_public_boundary_knots_that_coincide_are_a_formula_error():
    with pytest.raises(dp.errors.FormulaError, match="Boundary.knots must be two different numbers"):
        model_frame("y ~ ns(x2, knots = 0, Boundary.knots = c(1, 1))", _data(20))


# ------------------------------------------------------------------------------------------------ F03
F03 = "~ x1 + exp(x2) + I(x2^2) + ns(x2, knots = c(0), Boundary.knots = c(-3, 3)) + cut(x2, c(-3, 0, 3))"


@pytest.mark.parametrize("strict", [True, False])
def test_a_value_beyond_its_bound_enters_every_transformation_as_the_bound(strict):
    d = _data()
    sums = []
    for value in (3.0, 50.0, 709.0, 710.0, 1e6):
        e = d.copy()
        e.loc[0, "x2"] = value
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_pca(F03, e, k=1, eps=1.0, delta=1e-5, bounds=B, random_state=1, strict=strict)
        sums.append(np.asarray(fit.centre))
    for other in sums[1:]:  # same seed: only row 0 differs, and it is clipped to x2 = 3 each time
        np.testing.assert_allclose(other, sums[0], rtol=0, atol=1e-12)
