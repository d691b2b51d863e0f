"""A transformed response (``log(Volume) ~ log(Girth) + log(Height)``) is bounded from its variable's
declared bounds, as a predictor is (audit F02).

Oracle: R's ``lm`` on R's ``trees`` and ``mtcars`` (rpy2).  At eps = inf the coefficients must equal
R's to 1e-10; at a finite eps the doors that take a response run, and two data sets that differ in
one row show a reader the same messages and shapes (seeded, :mod:`tests.neighbours`).  dp_knockoff is
not here: its ``bounds=`` is a row-norm bound and its response bound comes from its plan, so a
transformed response never needed a declared bound there.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.privacy.accountant import Accountant

from neighbours import assert_same_view, reader_view

pytestmark = pytest.mark.r

TREES_MODEL = "log(Volume) ~ log(Girth) + log(Height)"
TREES_BOUNDS = {"Volume": (5, 100), "Girth": (5, 25), "Height": (50, 100)}


@pytest.fixture(scope="module")
def r_data(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    lm_coef = np.asarray(ro.r(f"coef(lm({TREES_MODEL}, trees))"))
    return {"trees": to_pandas(ro.r("trees")), "mtcars": to_pandas(ro.r("mtcars")), "lm": lm_coef}


def _neighbour(trees):
    """``trees`` with its first row replaced by another inside the declared bounds."""
    other = trees.copy()
    other.loc[0, ["Girth", "Height", "Volume"]] = [24.0, 99.0, 95.0]
    return other


def test_lm_at_inf_equals_r_lm_with_bounds_declared(r_data):
    with pytest.warns(dp.NonPrivateWarning):
        fit = dp.dp_lm(TREES_MODEL, r_data["trees"], eps=math.inf, bounds=TREES_BOUNDS)
    np.testing.assert_allclose(fit.coef().to_numpy(), r_data["lm"], rtol=0, atol=1e-10)


def test_lm_response_box_is_the_image_of_the_variables_bounds(r_data):
    fit = dp.dp_lm(TREES_MODEL, r_data["trees"], eps=1.0, delta=1e-5, bounds=TREES_BOUNDS, random_state=1)
    lo, hi = np.log(5.0), np.log(100.0)
    assert fit.noise["y_center"] == pytest.approx((lo + hi) / 2, abs=1e-12)
    assert fit.noise["y_half"] == pytest.approx((hi - lo) / 2, abs=1e-12)
    assert any(
        "'log(Volume)'" in note and "image of the variable's declared bounds" in note
        for note in fit.privacy.notes
    )


def test_two_stage_clips_a_transformed_response_to_the_image_of_its_variables_bounds(r_data):
    """dp_two_stage's blocks clip the response as dp_lm does: log(Volume) to [log 5, log 100]; its
    private second stage, which needs a bound for every column, runs without one declared for it."""
    from dpstats.formula import model_frame
    from dpstats.methods.two_stage import clip_boxes

    mf = model_frame(TREES_MODEL, r_data["trees"], drop_intercept=True)
    for every in (False, True):
        _, y_box = clip_boxes(TREES_BOUNDS, mf, every)
        np.testing.assert_allclose([y_box.lo[0], y_box.hi[0]], np.log([5.0, 100.0]), rtol=1e-12)
    fit = dp.dp_two_stage(
        TREES_MODEL,
        r_data["trees"],
        eps=1.0,
        k=1,
        bounds=TREES_BOUNDS,
        second_stage="private_ols",
        random_state=1,
    )
    assert len(fit.selected) == 1


def test_response_formula_name_is_a_bounds_key(r_data):
    bounds = {"mpg": (10, 35), "wt": (1, 6), "log(mpg)": (2.0, 4.0)}
    fit = dp.dp_lm("log(mpg) ~ wt", r_data["mtcars"], eps=1.0, delta=1e-5, bounds=bounds, random_state=1)
    assert fit.noise["y_center"] == pytest.approx(3.0) and fit.noise["y_half"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("formula", "bounds", "variable"),
    [
        ("log(mpg) ~ wt", {"mpg": (0, 35), "wt": (1, 6)}, "mpg"),
        ("sqrt(mpg) ~ wt", {"mpg": (-1, 35), "wt": (1, 6)}, "mpg"),
        ("mpg ~ log(wt)", {"mpg": (10, 35), "wt": (-1, 6)}, "wt"),
    ],
)
def test_bounds_outside_the_domain_are_refused_by_name(r_data, formula, bounds, variable):
    acc = Accountant(10.0, 1e-3)
    with pytest.raises(PrivacyParameterError) as err:
        dp.dp_lm(
            formula, r_data["mtcars"], eps=1.0, delta=1e-5, bounds=bounds, accountant=acc, random_state=1
        )
    text = str(err.value)
    assert f"bounds for '{variable}' are {tuple(float(b) for b in bounds[variable])}" in text
    assert "domain" in text and "nan" not in text.lower()
    assert acc.spent_eps == 0


DOORS = [
    ("dp_lm", dp.dp_lm, {"eps": 1.0, "delta": 1e-5, "bounds": TREES_BOUNDS, "n_boot": 200}),
    ("dp_sis", dp.dp_sis, {"eps": 1.0, "k": 1, "bounds": TREES_BOUNDS}),
]


@pytest.mark.parametrize(("label", "door", "kwargs"), DOORS, ids=[d[0] for d in DOORS])
def test_finite_eps_neighbours_look_the_same(r_data, label, door, kwargs):
    trees = r_data["trees"]
    one = reader_view(door, TREES_MODEL, trees, random_state=7, **kwargs)
    other = reader_view(door, TREES_MODEL, _neighbour(trees), random_state=7, **kwargs)
    assert_same_view(one, other, label)


def test_select_infer_runs_and_neighbours_warn_the_same(r_data):
    trees = r_data["trees"]
    kwargs = {"eps": 1.0, "delta": 1e-5, "k": 1, "bounds": TREES_BOUNDS, "random_state": 3}

    def messages(data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = dp.dp_select_infer(TREES_MODEL, data, **kwargs)
        return fit, [(w.category.__name__, str(w.message)) for w in caught]

    fit, one = messages(trees)
    _, other = messages(_neighbour(trees))
    assert one == other
    assert set(fit.terms) - {"(Intercept)"} <= {"log(Girth)", "log(Height)"} and len(fit.terms) == 2
