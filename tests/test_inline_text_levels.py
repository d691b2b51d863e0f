"""Text levels declared in the formula, ``factor(g, levels = c("a", "b", "c"))``, are declared levels on
every door, as ``levels={"g": [...]}`` declares them: no level is read from the rows (no named step, no
warning, strict=True runs), neighbouring data sets give the same terms and messages, and a value outside
them follows the declared-levels rule (missing, then filled by the first level under na_action="fill").

Oracles: R's ``model.matrix`` of the same formula (through rpy2) for the design; the neighbouring-pair
harness (tests/neighbours.py) for what readers see.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.formula import model_frame, with_formula_declarations
from dpstats.schema import Schema
from neighbours import assert_same_view, reader_view

TERM = 'factor(g, levels = c("a", "b", "c"))'
FORMULA = f"y ~ x1 + {TERM}"
BOUNDS = {
    "y": (-4.0, 4.0),
    "x1": (0.0, 1.0),
    "z": (0.0, 1.0),
}  # z: dp_glm's 0/1 response, declared for strict


def _data(n: int = 3000, seed: int = 5) -> pd.DataFrame:
    """Rows with g 'a' or 'b' and one 'c' (row 3): its neighbour ('b' there) has no 'c' at all."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n).astype(object)
    g[3] = "c"
    x1 = rng.uniform(0, 1, n)
    y = np.clip(1 + 2 * x1 + (g == "b") - 0.5 * (g == "c") + rng.normal(0, 0.5, n), -4, 4)
    return pd.DataFrame({"y": y, "x1": x1, "g": g, "z": (y > 2).astype(float)})


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    a = _data()
    b = a.copy()
    b.loc[3, "g"] = "b"
    return a, b


DOORS = {
    "dp_lm": (dp.dp_lm, FORMULA, dict(eps=2.0, delta=1e-5, n_boot=100)),
    "dp_glm": (dp.dp_glm, f"z ~ x1 + {TERM}", dict(eps=8.0, delta=1e-5, family="binomial")),
}


@pytest.mark.parametrize("door", DOORS)
def test_inline_text_levels_are_declared_on_both_neighbours_and_strict_runs(door):
    func, formula, kwargs = DOORS[door]
    kwargs = dict(kwargs, bounds=BOUNDS, random_state=3)
    a, b = _pair()
    assert "c" not in set(b.g)
    one, other = (reader_view(func, formula, d, **kwargs) for d in (a, b))
    assert_same_view(one, other, door)
    assert one["warnings"] == []  # before: "the levels of 'g' were read from the rows" (NonPrivateWarning)
    assert one["fit"].privacy.data_dependent_steps == []
    assert one["terms"][-2:] == [f"{TERM}b", f"{TERM}c"]
    assert "levels" not in one["fit"].call or one["fit"].call["levels"] is None  # not given: not recorded
    for data in (a, b):  # before: strict=True refused the step
        func(formula, data, strict=True, **kwargs)


def test_inline_text_levels_equal_levels_given_as_an_argument_also_outside_them():
    """A value outside the declared levels ('zz') is missing, then filled by the first level ('a'), as
    levels= does: the same seeded estimates as the levels= call, and the same statement."""
    data = _data()
    data.loc[7, "g"] = "zz"
    kwargs = dict(eps=2.0, delta=1e-5, bounds=BOUNDS, n_boot=100, random_state=9)
    inline = dp.dp_lm(FORMULA, data, strict=True, **kwargs)
    given = dp.dp_lm("y ~ x1 + g", data, levels={"g": ["a", "b", "c"]}, strict=True, **kwargs)
    np.testing.assert_allclose(inline.coefficients, given.coefficients, rtol=1e-12)
    assert inline.privacy.data_dependent_steps == given.privacy.data_dependent_steps == []
    filled = data.assign(g=data.g.replace("zz", "a"))
    np.testing.assert_allclose(
        dp.dp_lm(FORMULA, filled, **kwargs).coefficients, inline.coefficients, rtol=1e-12
    )


def test_the_design_of_inline_text_levels_is_r_s_model_matrix(rpy2_robjects):
    """On rows without any 'c': R's model.matrix of the same formula (the 'c' column all 0, as R's)."""
    from dpstats.rbridge import to_r

    _, b = _pair()
    ro = rpy2_robjects
    ro.globalenv["rows_b"] = to_r(b)
    expected = np.asarray(ro.r(f"model.matrix({FORMULA}, rows_b)"))
    schema = with_formula_declarations(Schema.declare(bounds=BOUNDS), FORMULA)
    mf = model_frame(FORMULA, b, schema=schema)
    assert mf.names == ["(Intercept)", "x1", f"{TERM}b", f"{TERM}c"]
    np.testing.assert_allclose(mf.X, expected, rtol=0, atol=1e-12)
    assert not mf.X[:, 3].any()
