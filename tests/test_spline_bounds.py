"""Bounds of ``ns()``/``bs()`` columns with public knots, derived from the variable's declared bounds (the R
audit's F11a: following the ns() message's advice, ``ns(wt, knots = 3, Boundary.knots = c(1, 6))``, led to a
demand for bounds on columns named ``ns(wt, knots = 3, Boundary.knots = c(1, 6))1``, a name nobody can write).

With the knots and boundary knots written in the formula, each basis column is a public piecewise
polynomial of the variable, so its range over the variable's declared interval is public: the column's box
(its values are clipped to it).  Oracles, through rpy2:

* R's ``model.matrix`` of the formula on a grid of 20 001 points spanning the declared interval (knots
  included): every column lies in the derived box to 1e-12, and the grid's min and max meet its ends to
  1e-7 absolute or 1e-8 relative (an interior extreme is missed by at most h²·max|f''|/8, h = 2.5e-4 here);
* R's ``lm`` on R's ``mtcars`` (wt in 1.51 .. 5.42, inside the bounds (1, 6): nothing clipped): dp_lm at
  eps = inf gives its coefficients to relative 1e-8.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.formula import model_frame
from dpstats.privacy.bounds import design_box

BOUNDS = {"wt": (1.0, 6.0), "mpg": (10.0, 35.0), "hp": (50.0, 350.0)}

FORMULAS = [
    "mpg ~ ns(wt, knots = 3, Boundary.knots = c(1, 6))",  # the audit's call
    "mpg ~ splines::ns(wt, knots = c(2.5, 4), Boundary.knots = c(1.5, 5.5), intercept = TRUE)",  # beyond: linear
    "mpg ~ bs(wt, knots = c(2.5, 4), Boundary.knots = c(1, 6))",
    "mpg ~ bs(wt, knots = 3, degree = 2, Boundary.knots = c(2, 5)) + hp",  # beyond the boundary: polynomial
    "mpg ~ ns(wt, Boundary.knots = c(1, 6))",  # no inner knot, no df: public too
    "mpg ~ ns(wt, knots = 3, Boundary.knots = c(1, 6)):hp",  # a product with a declared variable
]


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def r(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    ro.r("library(splines)")
    wt = "sort(c(seq(1, 6, length.out = 20001), 1.5, 2, 2.5, 3, 4, 5, 5.5))"
    grid = ro.r(f"expand.grid(wt = {wt}, hp = c(50, 350), mpg = 20)")  # hp at its bounds' ends
    ro.globalenv["grid"] = grid
    return ro, to_pandas(grid), to_pandas(ro.r("mtcars"))


def _r_design(ro, formula: str) -> tuple[list[str], np.ndarray]:
    res = ro.r(
        f"local({{ mm <- model.matrix({formula}, grid); list(colnames(mm), as.double(mm), nrow(mm)) }})"
    )
    names = list(res[0])
    return names, np.asarray(res[1]).reshape((int(res[2][0]), len(names)), order="F")


@pytest.mark.r
@pytest.mark.parametrize("formula", FORMULAS)
def test_the_derived_box_holds_r_model_matrix_over_the_declared_interval_and_is_attained(r, formula):
    ro, grid, _ = r
    r_names, values = _r_design(ro, formula)
    mf = model_frame(formula, grid, check_constant=False)
    assert mf.names == r_names
    keep = [j for j, nm in enumerate(r_names) if nm != "(Intercept)"]
    box = design_box(BOUNDS, mf, [r_names[j] for j in keep])
    values = values[:, keep]
    assert np.all(values >= box.lo - 1e-12) and np.all(values <= box.hi + 1e-12), formula
    np.testing.assert_allclose(values.min(axis=0), box.lo, rtol=1e-8, atol=1e-7, err_msg=formula)
    np.testing.assert_allclose(values.max(axis=0), box.hi, rtol=1e-8, atol=1e-7, err_msg=formula)
    # public inputs only: other rows give the same box
    other = model_frame(
        formula, grid.iloc[::997].assign(wt=lambda d: d.wt[::-1].to_numpy()), check_constant=False
    )
    again = design_box(BOUNDS, other, [r_names[j] for j in keep])
    np.testing.assert_array_equal(again.lo, design_box(BOUNDS, mf, [r_names[j] for j in keep]).lo)


@pytest.mark.r
@pytest.mark.parametrize("formula", [FORMULAS[0], FORMULAS[2], FORMULAS[3]])
def test_dp_lm_on_mtcars_needs_only_the_variables_bounds(r, formula):
    ro, _, mtcars = r
    fit = _quiet(dp.dp_lm, formula, mtcars, eps=math.inf, bounds=BOUNDS)
    ref = ro.r(f"coef(lm({formula}, mtcars))")
    assert list(fit.coef().index) == list(ref.names)
    np.testing.assert_allclose(fit.coef().to_numpy(), np.asarray(ref), rtol=1e-8)
    private = dp.dp_lm(formula, mtcars, eps=1.0, delta=1e-5, bounds=BOUNDS, random_state=1)
    assert list(private.coef().index) == list(ref.names)
    assert any(
        "ns(x, ...) or bs(x, ...) with the knots the formula writes" in n for n in private.privacy.notes
    )


def test_knots_from_the_rows_are_still_refused_naming_the_step():
    df = pd.DataFrame({"wt": np.linspace(1.5, 5.4, 40), "mpg": np.linspace(30, 12, 40), "hp": 100.0})
    with pytest.raises(PrivacyParameterError, match="declare public knots"):
        dp.dp_lm("mpg ~ ns(wt, df = 3)", df, eps=1.0, delta=1e-5, bounds=BOUNDS, random_state=1)
    with pytest.raises(PrivacyParameterError, match="declare public knots"):  # df with boundary: quantiles
        dp.dp_lm("mpg ~ ns(wt, df = 3, Boundary.knots = c(1, 6))", df, eps=1.0, delta=1e-5, bounds=BOUNDS)


def test_a_variable_without_bounds_leaves_the_columns_refused_saying_how_they_are_bounded():
    df = pd.DataFrame({"wt": np.linspace(1.5, 5.4, 40), "mpg": np.linspace(30, 12, 40)})
    mf = model_frame("mpg ~ ns(wt, knots = 3, Boundary.knots = c(1, 6))", df)
    with pytest.raises(PrivacyParameterError, match=r"bs\(\) with public knots from x's"):
        design_box({"mpg": (10, 35)}, mf, mf.names[1:])
