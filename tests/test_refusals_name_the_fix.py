"""Refusals before the data are read name the right fix (the outside statistician's audit, s11, M3).

(a) A factor term of a numeric column without declared levels (``C(cyl)``, ``factor(cyl)``) on a door
    that needs the public n is refused naming the term and ``levels=``, not bounds and not missing
    values (the column may have none).
(b) A ``bounds=`` key that misspells a variable (``'WT'`` for ``wt``, ``'wieght'`` for ``weight``) is
    named, with the variable it misses, before the refusal of the variable left without bounds.

Both are decided from the arguments and the column names and types only: two data sets differing in one
row (here: one value of the variable made missing, or changed) give the same error, and nothing is spent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from neighbours import reader_view


def _cars(n: int = 300, seed: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    weight = rng.uniform(1.5, 5.5, n)
    cyl = rng.choice([4, 6, 8], n)
    mpg = np.clip(37 - 4 * weight - 0.8 * cyl + rng.normal(0, 2, n), 10, 35)
    return pd.DataFrame({"mpg": mpg, "weight": weight, "cyl": cyl, "am": (mpg > 20).astype(int)})


def _neighbours() -> list[pd.DataFrame]:
    """The data (no missing value anywhere), one row's cyl changed, one row's cyl and weight missing."""
    a = _cars()
    b = a.copy()
    b.loc[0, "cyl"] = 5
    c = a.astype({"cyl": float})
    c.loc[0, ["cyl", "weight"]] = np.nan
    return [a, b, c]


# (door, response, arguments): doors whose release needs the public n
DOORS = [
    (dp.dp_lm, "mpg", dict(eps=2.0, delta=1e-5, n_boot=100)),
    (dp.dp_glm, "am", dict(eps=4.0, delta=1e-5)),
    (dp.dp_select_infer, "mpg", dict(eps=2.0, delta=1e-5, k=1, n_boot=100)),
]


@pytest.mark.parametrize("term", ["C(cyl)", "factor(cyl)", "C(cyl, contr.sum)"])
@pytest.mark.parametrize("door,response,kwargs", DOORS, ids=[d[0].__name__ for d in DOORS])
def test_a_factor_of_an_undeclared_numeric_column_names_the_term_and_levels(door, response, kwargs, term):
    bounds = {"mpg": (10, 35), "weight": (1, 6), "am": (0, 1)}
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    views = [
        reader_view(door, f"{response} ~ weight + {term}", d, bounds=bounds, accountant=acc, **kwargs)
        for d in _neighbours()
    ]
    kind, text = views[0]["error"]
    assert kind == "PrivacyParameterError"
    assert text.startswith(f"{door.__name__}: {term} needs declared levels: levels={{'cyl': [...]}}.")
    assert "bounds=" not in text and "Nothing was read or spent." in text
    assert all(v == views[0] for v in views[1:]), "the neighbours' errors differ"
    assert acc.spent_eps == 0


def test_declaring_the_levels_is_the_fix():
    fit = dp.dp_lm(
        "mpg ~ weight + C(cyl)",
        _cars(),
        eps=2.0,
        delta=1e-5,
        bounds={"mpg": (10, 35), "weight": (1, 6)},
        levels={"cyl": [4, 6, 8]},
        n_boot=100,
        random_state=1,
    )
    assert fit.terms == ["(Intercept)", "weight", "C(cyl)6", "C(cyl)8"]


@pytest.mark.parametrize(
    "key,variable", [("WEIGHT", "weight"), ("Weight", "weight"), ("wieght", "weight"), ("MPG", "mpg")]
)
@pytest.mark.parametrize("door,response,kwargs", DOORS, ids=[d[0].__name__ for d in DOORS])
def test_a_misspelt_bounds_key_is_named_before_the_variable_it_misses(door, response, kwargs, key, variable):
    bounds = {"mpg": (10, 35), "weight": (1, 6), "am": (0, 1)}
    bounds[key] = bounds.pop(variable)
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    views = [
        reader_view(door, f"{response} ~ weight + cyl", d, bounds=bounds, accountant=acc, **kwargs)
        for d in _neighbours()
    ]
    if variable == "mpg" and response != "mpg":
        assert views[0]["error"][0] == "PrivacyParameterError"  # 'MPG' is not the response here: named later
        return
    assert views[0]["error"] == (
        "PrivacyParameterError",
        f"no bounds are declared for {variable!r}, and bounds= names {key!r}, which is not a column of the "
        f"data: did you mean {variable!r}? Check the spelling (names are case-sensitive). Nothing was read "
        "or spent.",
    )
    assert all(v == views[0] for v in views[1:]), "the neighbours' errors differ"
    assert acc.spent_eps == 0


def test_a_bounds_key_naming_a_design_column_is_no_misspelling():
    """Keys naming design columns (log(weight), an interaction) are not taken for misspellings of an
    unbounded variable; that variable's own refusal speaks."""
    with pytest.raises(PrivacyParameterError, match=r"cannot drop rows with a missing value in 'weight'"):
        dp.dp_lm(
            "mpg ~ log(weight) + cyl",
            _cars(),
            eps=2.0,
            delta=1e-5,
            bounds={"mpg": (10, 35), "log(weight)": (0, 2), "cyl": (4, 8)},
        )
