"""The keyword arguments every front door shares are declared once (api/_parameters.Shared) and
every public signature ends with them, in one order, with one default each (issue "one house")."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import catalog
from dpstats.api._parameters import SHARED_DEFAULTS, TAIL

DOORS = {name: getattr(importlib.import_module(path), name) for name, path in catalog.front_doors().items()}


@pytest.mark.parametrize("name", sorted(DOORS))
def test_every_signature_ends_with_the_shared_keywords_in_one_order(name):
    parameters = list(inspect.signature(DOORS[name]).parameters.values())
    tail = [p.name for p in parameters if p.name in TAIL]
    assert tail == sorted(tail, key=TAIL.index)
    assert [p.name for p in parameters[-len(tail) :]] == tail  # nothing of the door's own after them
    for shared, default in SHARED_DEFAULTS.items():
        parameter = inspect.signature(DOORS[name]).parameters[shared]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        assert parameter.default == default, (name, shared)


@pytest.mark.parametrize("name", sorted(DOORS))
def test_no_signature_hides_keywords_behind_a_catch_all(name):
    kinds = {p.kind for p in inspect.signature(DOORS[name]).parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds  # help() and the R pages see every name


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 400)})
    df["y"] = 2 * df.x + rng.normal(0, 0.5, 400)
    return df


def test_an_unknown_keyword_is_python_s_type_error_naming_the_door_and_the_word():
    with pytest.raises(TypeError, match=r"^dp_lm\(\) got an unexpected keyword argument 'random_seed'$"):
        dp.dp_lm("y ~ x", _frame(), eps=1.0, random_seed=1)


def test_a_missing_or_extra_positional_argument_names_the_door():
    with pytest.raises(TypeError, match=r"^dp_sis\(\) missing a required argument: 'eps'$"):
        dp.dp_sis("y ~ x", _frame())
    with pytest.raises(TypeError, match=r"^dp_glm\(\) too many positional arguments$"):
        dp.dp_glm("y ~ x", _frame(), 1.0, 1e-6, "binomial")  # family is keyword-only, as before


def test_shared_keywords_reach_the_door_by_name():
    df = _frame()
    bounds = {"x": (-1, 1), "y": (-4, 4)}
    one = dp.dp_lm("y ~ x", df, eps=1.0, bounds=bounds, random_state=5, n_boot=100)
    two = dp.dp_lm("y ~ x", df, 1.0, 0.0, bounds=bounds, n_boot=100, random_state=5)
    assert one.coef().equals(two.coef())  # the seed given by name reached the noise
    df["g"] = np.where(df.x > 0, "a", "b")
    with pytest.raises(dp.PrivacyParameterError, match="needs declared bounds for 'g'.*Under strict=True"):
        dp.dp_lm("y ~ x + g", df, eps=1.0, bounds=bounds, strict=True)  # g is numeric by declaration
    assert dp.dp_lm("y ~ x + g", df, eps=1.0, bounds=bounds, levels={"g": ["a", "b"]}, strict=True).p == 3
    with pytest.raises(dp.PrivacyParameterError, match="got 'add_remove'"):  # dp_lm: replace only
        dp.dp_lm("y ~ x", df, eps=1.0, bounds=bounds, neighbouring="add_remove")


def test_a_simulation_truth_implies_the_diagnostics():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (500, 5)), columns=[f"x{j}" for j in range(5)])
    df["y"] = 3 * df.x0 + rng.normal(0, 0.3, 500)
    bounds = {c: (-1, 1) for c in df.columns[:5]} | {"y": (-5, 5)}
    fit = dp.dp_sis("y ~ .", df, eps=2.0, k=1, bounds=bounds, truth=["x0"], oc_trials=0, random_state=1)
    assert fit.diagnostics  # truth= asks for them
    assert not dp.dp_sis("y ~ .", df, eps=2.0, k=1, bounds=bounds, oc_trials=0, random_state=1).diagnostics
