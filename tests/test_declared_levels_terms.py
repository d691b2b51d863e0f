"""``levels=`` declares a variable's levels for every term that makes a factor of it (the outside
statistician's audit, s11, M4): ``cyl``, ``factor(cyl)``, ``as.factor(cyl)``, ``C(cyl)`` and
``C(cyl, contr.sum)`` all get the declared levels, whichever of them the rows hold, and no level is read
from the rows: no data-dependent step, no warning, the same terms on neighbouring data sets.  ``C()`` of
numbers without declared levels reads its levels from the rows, which is now a named step.

Oracles: R's ``model.matrix`` of ``factor(cyl, levels = c(4, 6, 8))`` (R's own way to declare levels),
through rpy2, for the design; the neighbouring-pair harness (tests/neighbours.py) for what readers see.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.engines import stream
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from dpstats.formula import model_frame
from dpstats.schema import Schema
from neighbours import assert_same_view, reader_view

TERMS = ["cyl", "factor(cyl)", "as.factor(cyl)", "C(cyl)", "C(cyl, contr.sum)", "ordered(cyl)"]
LEVELS = {"cyl": [4, 6, 8]}
BOUNDS = {"mpg": (10, 35), "wt": (1, 6)}


def _cars(n: int = 300, seed: int = 11) -> pd.DataFrame:
    """Cars with cyl 4 or 6 and one row of cyl 8 (row 3): its neighbour (cyl 6 there) has no 8 at all."""
    rng = np.random.default_rng(seed)
    cyl = rng.choice([4, 6], n)
    cyl[3] = 8
    wt = rng.uniform(1.5, 5.5, n)
    mpg = np.clip(37 - 4 * wt - 0.8 * cyl + rng.normal(0, 2, n), 10, 35)
    return pd.DataFrame({"mpg": mpg, "wt": wt, "cyl": cyl})


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    a = _cars()
    b = a.copy()
    b.loc[3, "cyl"] = 6
    return a, b


def _view(formula: str, data: pd.DataFrame, **kwargs) -> dict:
    """What a reader sees of dp_lm's call; a released p-value at the bootstrap's floor prints as "<0.002",
    a function of the released value, so the '<' is masked with the numbers."""
    view = reader_view(dp.dp_lm, formula, data, **kwargs)
    for channel in ("print", "summary"):
        view[channel] = view[channel].replace("<#", "#")
    return view


@pytest.mark.parametrize("term", TERMS)
def test_every_factor_term_of_a_declared_variable_has_its_levels_on_both_neighbours(term):
    a, b = _pair()
    assert 8 not in set(b.cyl)
    kwargs = dict(eps=2.0, delta=1e-5, bounds=BOUNDS, levels=LEVELS, n_boot=100, random_state=3)
    one, other = (_view(f"mpg ~ wt + {term}", d, **kwargs) for d in (a, b))
    assert_same_view(one, other, term)
    assert one["warnings"] == []  # nothing read from the rows: no NonPrivateWarning
    assert one["fit"].privacy.data_dependent_steps == []
    suffixes = ["1", "2"] if "contr.sum" in term else [".L", ".Q"] if "ordered" in term else ["6", "8"]
    assert one["terms"] == ["(Intercept)", "wt"] + [term + s for s in suffixes]


@pytest.mark.parametrize("term", ["factor(cyl)", "as.factor(cyl)", "C(cyl)"])
def test_the_declared_levels_give_r_s_design_of_factor_with_levels(rpy2_robjects, term):
    """R's way to declare them, factor(cyl, levels = c(4, 6, 8)), on rows without any 8: the same values
    (the 8 column all 0, as R's), whatever term makes the factor."""
    from dpstats.rbridge import to_r

    _, b = _pair()
    ro = rpy2_robjects
    ro.globalenv["cars_b"] = to_r(b)
    expected = np.asarray(ro.r("model.matrix(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)), cars_b)"))
    mf = model_frame(f"mpg ~ wt + {term}", b, schema=Schema.declare(bounds=BOUNDS, levels=LEVELS))
    assert mf.names == ["(Intercept)", "wt", f"{term}6", f"{term}8"]
    np.testing.assert_allclose(mf.X, expected, rtol=0, atol=1e-12)
    assert not mf.X[:, 3].any()


def test_c_of_numbers_without_declared_levels_is_a_named_step_and_strict_refuses_it():
    """C(cyl) of a bounded numeric column reads its levels from the rows: named (term, not levels) and
    warned, the same on both neighbours; strict=True refuses it before anything is spent."""
    a, b = _pair()
    bounds = {**BOUNDS, "cyl": (4, 8)}
    views = [
        reader_view(dp.dp_lm, "mpg ~ wt + C(cyl)", d, eps=2.0, delta=1e-5, bounds=bounds, random_state=3)
        for d in (a, b)
    ]
    step = "the formula term C(cyl) reads its levels from the rows"
    assert any(step in text for kind, text in views[0]["warnings"] if kind == "NonPrivateWarning")
    assert views[0]["warnings"] == views[1]["warnings"]
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    for data in (a, b):
        with pytest.raises(PrivacyParameterError, match=r"C\(cyl\) reads its levels from the rows"):
            dp.dp_lm(
                "mpg ~ wt + C(cyl)", data, eps=2.0, delta=1e-5, bounds=bounds, strict=True, accountant=acc
            )
    assert acc.spent_eps == 0


def test_a_stream_with_declared_levels_equals_the_data_in_memory(tmp_path):
    """factor(cyl) with levels= in a chunked stream (chunks without an 8) gives the in-memory fit; C() of
    numbers without levels is refused there (each chunk would read its own levels), naming the term."""
    a = _cars()
    path = tmp_path / "cars.csv"
    a.to_csv(path, index=False)
    kwargs = dict(eps=2.0, delta=1e-5, bounds=BOUNDS, levels=LEVELS, n_boot=100, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        whole = dp.dp_lm("mpg ~ wt + factor(cyl)", a, **kwargs)
        chunked = dp.dp_lm("mpg ~ wt + factor(cyl)", stream(path, chunk_rows=50), **kwargs)
    assert chunked.terms == whole.terms == ["(Intercept)", "wt", "factor(cyl)6", "factor(cyl)8"]
    np.testing.assert_allclose(chunked.coefficients, whole.coefficients, rtol=1e-9)
    with pytest.raises(Exception, match=r"C\(cyl\)"):
        dp.dp_lm(
            "mpg ~ wt + C(cyl)",
            stream(path, chunk_rows=50),
            eps=2.0,
            delta=1e-5,
            bounds={**BOUNDS, "cyl": (4, 8)},
        )
