"""Neighbouring data sets give the same messages and shapes: only released values may differ.

Issue 26 ("private by construction"), how it is shown.  For every front door, under each
neighbouring relation it supports, two data sets that differ in one row -- a level no other
row has, a missing value, a value far outside the declared bounds, a column that is constant
but for that row -- are analysed with the same seed and everything declared (bounds, levels,
the knockoff's constants).  The reader of the outputs must not be able to tell which data set
was used except through the released values, so these must be identical:

* the warnings (category and text) and the error, if any (type and text);
* the term names, the names of the result's attributes and the type of ``fit.n``;
* every printed channel (print, summary) with its numbers masked, the structure of
  ``to_dict()`` (keys, types, list lengths) and the columns and shape of tidy() and glance().

Numbers are masked because released values may differ; ``tests/test_no_leaks.py`` checks with
distinctive counts that no non-released number is shown.  Under ``strict=True`` the declared
calls must run (no data-dependent step is left).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.api.pca import dp_pca

N = 600
X5 = " + ".join(f"x{j}" for j in range(1, 6))
X25 = " + ".join(f"x{j}" for j in range(1, 26))  # the knockoff filter's Method II needs p > 8 ln(1/delta)
CITIES = ["Leeds", "York"]
CLASSES = ["a", "b"]
ROW = 123  # the row in which the two data sets differ


def base_data() -> pd.DataFrame:
    """25 features in [-1, 1] (x5 constant at 0.5), y in [-1, 1], a city and a class (strings)."""
    rng = np.random.default_rng(2026)
    X = rng.uniform(-1, 1, (N, 25))
    X[:, 4] = 0.5
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 26)])
    df["city"] = rng.choice(CITIES, N)
    df["y"] = np.clip(
        0.6 * X[:, 0] + 0.3 * X[:, 2] + 0.2 * (df["city"] == "York") + 0.2 * rng.standard_normal(N), -1, 1
    )
    df["class"] = np.where(X[:, 0] + 0.5 * rng.standard_normal(N) > 0, "b", "a")
    return df


def neighbour(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``df`` with row ``ROW`` changed as ``kind`` says."""
    out = df.copy()
    if kind == "level":
        out.loc[ROW, "city"] = "Zzyzx"
        out.loc[ROW, "class"] = "Zzyzx"
    elif kind == "missing":
        out.loc[ROW, "x2"] = np.nan
    elif kind == "outside":
        out.loc[ROW, "x1"] = 1e6
    elif kind == "constant":
        out.loc[ROW, "x5"] = -0.5
    else:
        raise ValueError(kind)
    return out


LEVELS = {"city": CITIES, "class": CLASSES}
KNOCKOFF = dict(
    eps=2.0, delta=1e-4, bounds=6.0, sigma=0.5, beta_norm=1.0, c_min=12.0, lambda_min=0.5, oc_trials=0
)

# name -> (front door, formula, keyword arguments, relations supported)
DOORS = {
    "dp_sis": (dp.dp_sis, f"y ~ {X5} + city", dict(eps=2.0, k=2, bounds=(-1, 1), oc_trials=0), 2),
    "dp_two_stage": (
        dp.dp_two_stage,
        f"y ~ {X5} + city",
        dict(eps=2.0, k=2, second_stage="private_ols", bounds=(-1, 1), blocks=24, oc_trials=0),
        2,
    ),
    "dp_knockoff": (dp.dp_knockoff, f"y ~ {X25} + city", KNOCKOFF, 1),
    "dp_gmm": (dp.dp_gmm, f"~ {X5}", dict(k=2, eps=2.0, delta=1e-5, bounds=(-1, 1), oc_trials=0), 2),
    "dp_felp": (
        dp.dp_felp,
        f"class ~ {X5}",
        dict(eps=1.0, n_estimators=2, variant="strict", bounds=(-1, 1), oc_trials=0),
        1,
    ),
    "vertical_glm": (
        dp.vertical_glm,
        f"class ~ {X5}",
        dict(
            parties=[["x1", "x2"], ["x3", "x4", "x5"]],
            family="binomial",
            penalty="ridge",
            lam=0.1,
            eps=1.0,
            delta=1e-5,
            bounds=(-1, 1),
            rounds=3,
        ),
        1,
    ),
    "dp_pca": (dp_pca, f"~ {X5}", dict(k=2, eps=1.0, delta=1e-5, bounds=(-1, 1)), 2),
    "dp_lm": (dp.dp_lm, f"y ~ {X5} + city", dict(eps=2.0, delta=1e-5, bounds=(-1, 1), n_boot=100), 1),
    "dp_select_infer": (
        dp.dp_select_infer,
        f"y ~ {X5} + city",
        dict(eps=2.0, delta=1e-5, k=2, bounds=(-1, 1), n_boot=100),
        1,
    ),
    "dp_bh": (
        dp.dp_bh,
        f"y ~ {X5} + city",
        dict(q=0.2, eps=2.0, bounds=(-1, 1), sigma=0.5, max_rejections=2),
        1,  # the formula route holds under replace-one-row only (n is in every z-statistic's scale)
    ),
}
KINDS = ("level", "missing", "outside", "constant")
CASES = [
    (name, rel, kind)
    for name, (_, _, _, supported) in DOORS.items()
    for rel in ("replace", "add_remove")[:supported]
    for kind in KINDS
]

_NUMBER = re.compile(r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\binf\b|∞")
_SPACES = re.compile(r"[ \t]+")


def masked(text: str) -> str:
    """``text`` with every number replaced by '#' and runs of spaces (table alignment) by one."""
    return _SPACES.sub(" ", _NUMBER.sub("#", text))


def structure(value):
    """Keys, types and list lengths of a JSON-like value, numbers and strings masked."""
    if isinstance(value, dict):
        return {str(k): structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [structure(v) for v in value]
    if isinstance(value, str):
        return masked(value)
    return type(value).__name__ if value is not None else None


def what_a_reader_sees(name: str, data: pd.DataFrame, neighbouring: str, strict: bool) -> dict:
    """Everything of one call that is not a released value."""
    fn, formula, kwargs, _ = DOORS[name]
    kwargs = dict(kwargs, random_state=7, neighbouring=neighbouring, strict=strict, levels=LEVELS)
    if neighbouring == "replace":
        kwargs.pop("neighbouring")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = fn(formula, data=data, **kwargs)
        except Exception as exc:  # the error is part of what a reader sees
            return {"error": (type(exc).__name__, masked(str(exc))), "warnings": _warned(caught)}
    d = fit.to_dict()
    d.pop("created", None)
    return {
        "warnings": _warned(caught),
        "terms": list(fit.terms),
        "attributes": sorted(vars(fit)),
        "type of n": type(fit.n).__name__,
        "print": masked(str(fit)),
        "summary": masked(str(fit.summary())),
        "to_dict": structure(d),
        "tidy": (list(fit.tidy().columns), fit.tidy().shape),
        "glance": (list(fit.glance().columns), fit.glance().shape),
    }


def _warned(caught) -> list[tuple[str, str]]:
    return sorted({(w.category.__name__, str(w.message)) for w in caught})


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return base_data()


@pytest.mark.parametrize(("name", "neighbouring", "kind"), CASES)
def test_neighbours_differ_only_in_released_values(name, neighbouring, kind, data):
    one = what_a_reader_sees(name, data, neighbouring, strict=True)
    other = what_a_reader_sees(name, neighbour(data, kind), neighbouring, strict=True)
    assert "error" not in one, one  # everything is declared: strict=True runs
    for channel in one:
        assert one[channel] == other[channel], f"{name} ({neighbouring}, {kind} row): {channel} differs"


def test_masking_keeps_words_and_hides_numbers():
    assert masked("n = 1789, eps 0.5, 1/n = 5.6e-04, x12") == "n = #, eps #, #/n = #, x#"
