"""A factor whose levels are read from the rows, and that has one level in them (audit s13-ruser, finding 1).

Threat model (DESIGN §3): error messages are an output, and two data sets that differ in one row must
give the same messages and shapes.  An undeclared text column ``g`` holding one value in every row
made a private fit stop with "factor 'g' has 1 level(s)", while the neighbour whose one row holds
another value released; under ``strict=True`` the first still gave that data error, the neighbour the
strict refusal.  Now:

- ``strict=True`` refuses the step of reading the levels on both neighbours, with one message;
- without ``strict`` both release, with the same warning naming the step: a factor of fewer than two
  levels read from the rows contributes no column (as at n = 0), the only difference between the two
  fits being the columns that step makes (whose names hold the levels read, as the warning says);
- an error raised while the design is coded after levels were read (contrasts given as a matrix
  with one row per declared level) names the step, and ``strict=True`` refuses the step first.

A non-private fit keeps R's error (``lm`` refuses contrasts on a one-level factor).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError, FormulaError
from neighbours import assert_same_view, door_table, reader_view

N = 400


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """g = "a" in every row, and its neighbour with one row's g = "b"."""
    rng = np.random.default_rng(13)
    X = rng.uniform(-1, 1, size=(N, 3))
    a = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    a["y"] = np.clip(0.5 * X[:, 0] + 0.3 * rng.standard_normal(N), -1, 1)
    a["class"] = (a["y"] > 0).astype(float)
    a["g"] = "a"
    b = a.copy()
    b.loc[7, "g"] = "b"
    return a, b


# the doors whose formula takes the factor, and dp_pca with it (one-sided)
DOORS = {
    name: door
    for name, door in door_table(
        "x1 + x2 + x3",
        factor="g",
        overrides={
            "dp_pca": {"formula": "~ x1 + x2 + g"},
            # the 0/1 response declared (strict=True refuses a binomial response without a declaration)
            "dp_glm": {"set": {"eps": 20.0, "levels": {"class": [0.0, 1.0]}}},
        },
    ).items()
    if name in ("dp_lm", "dp_glm", "dp_sis", "dp_two_stage", "dp_select_infer", "dp_bh", "dp_pca")
}


def _without_g(names: list[str]) -> list[str]:
    return [nm for nm in names if not nm.startswith("g") and ":g" not in nm]


@pytest.mark.parametrize("name", sorted(DOORS))
def test_strict_refuses_the_levels_step_on_both_neighbours(name):
    """``factor(g)`` reads g's levels from the rows: strict refuses it alike on both neighbours.  (Plain
    ``g`` without declared levels is numeric by declaration under strict=True: no levels are read, and the
    neighbours release alike, tests/test_strict_global_bounds_schema.py.)"""
    func, formula, kwargs, _ = DOORS[name]
    formula = formula.replace("+ g", "+ factor(g)")
    kwargs = dict(kwargs, random_state=13)  # the same noise on both neighbours
    a, b = _pair()
    one = reader_view(func, formula, a, strict=True, **kwargs)
    other = reader_view(func, formula, b, strict=True, **kwargs)
    assert one["error"] is not None and one["error"][0] == "PrivacyParameterError"
    assert "factor(g) reads its levels from the rows" in one["error"][1]
    assert_same_view(one, other, name, released=False)


@pytest.mark.parametrize("name", sorted(DOORS))
def test_one_level_read_from_the_rows_releases_as_its_neighbour_does(name):
    func, formula, kwargs, _ = DOORS[name]
    kwargs = dict(kwargs, random_state=13)  # the same noise on both neighbours
    a, b = _pair()
    one = reader_view(func, formula, a, **kwargs)
    other = reader_view(func, formula, b, **kwargs)
    assert one["error"] is None and other["error"] is None, (one["error"], other["error"])
    assert one["warnings"] == other["warnings"]
    assert any("the levels of 'g' were read from the rows" in text for _, text in one["warnings"])
    assert one["attributes"] == other["attributes"]
    assert one["type of n"] == other["type of n"]
    if name in ("dp_lm", "dp_glm", "dp_pca"):  # the selecting doors' terms are their (noisy) selection
        assert _without_g(one["terms"]) == _without_g(other["terms"])


def test_the_one_level_factor_gives_no_column():
    a, _ = _pair()
    with pytest.warns(dp.NonPrivateWarning, match="the levels of 'g' were read"):
        fit = dp.dp_lm("y ~ x1 + g + x1:g", a, eps=2.0, delta=1e-5, bounds=(-1, 1), n_boot=100)
    assert list(fit.terms) == ["(Intercept)", "x1"]


def test_a_non_private_fit_keeps_rs_error():
    """R: lm(y ~ x1 + g, a) stops with "contrasts can be applied only to factors with 2 or more levels"."""
    a, _ = _pair()
    with pytest.raises(DataError, match="fewer than 2 levels"):
        dp.dp_lm("y ~ x1 + g", a, eps=np.inf)


def test_a_declared_one_level_factor_is_refused_alike_on_neighbours():
    a, b = _pair()
    views = [
        reader_view(dp.dp_lm, "y ~ x1 + g", d, eps=2.0, delta=1e-5, bounds=(-1, 1), levels={"g": ["a"]})
        for d in (a, b)
    ]
    assert views[0]["error"][0] == "DataError"
    assert_same_view(*views, "declared one level", released=False)


MATRIX = pd.DataFrame([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]], index=["a", "b", "c"])  # three levels


@pytest.mark.parametrize("strict", [False, True])
def test_an_error_after_levels_were_read_names_the_step(strict):
    """Contrasts for three levels on a factor whose rows hold two: the error comes after the step."""
    a, b = _pair()
    for d in (a, b):
        d.attrs["contrasts"] = {"g": MATRIX}  # how the R package sends lm(contrasts =)
    kwargs = dict(eps=2.0, delta=1e-5, bounds=(-1, 1), n_boot=100, strict=strict)
    one = reader_view(dp.dp_lm, "y ~ x1 + g", b, **kwargs)
    if strict:  # g is numeric by declaration: no levels are read, and its contrasts are refused (session 16)
        other = reader_view(dp.dp_lm, "y ~ x1 + g", a, **kwargs)
        assert_same_view(one, other, "contrasts of a numeric g", released=False)
        assert one["error"][0] == "PrivacyParameterError"
        assert (
            "contrasts are given for 'g', but under strict=True 'g' is numeric by declaration"
            in one["error"][1]
        )
    else:
        assert one["error"][0] == FormulaError.__name__
        assert "Raised after a data-dependent step" in one["error"][1]
        assert "the levels of 'g' were read from the rows" in one["error"][1]
