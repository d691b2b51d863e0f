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

Numbers are masked because released values may differ, and so are what is read off them alone:
significance codes (of released p-values) in print, and in warnings the decimals and dp_gmm's
collapsed components (of released weights); whole numbers in warnings stay.  These pairs had
matched by chance while the noise was larger (before session 11's exact calibration, a dp_lm
p-value now crosses 0.1 between neighbours).  ``tests/test_no_leaks.py`` checks with distinctive
counts that no non-released number is shown.  Under ``strict=True`` the declared calls must run
(no data-dependent step is left).
"""

from __future__ import annotations

import json
import re
import numpy as np
import pandas as pd
import pytest

from data_kinds import KINDS as INPUT_KINDS, as_kind
from neighbours import assert_same_view, door_table, masked, reader_view, released_masked

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
DOORS = door_table(
    X5,
    factor="city",
    wide=f"{X25} + city",
    parties=[["x1", "x2"], ["x3", "x4", "x5"]],
    overrides={
        "dp_two_stage": {"set": {"blocks": 24}},
        "dp_bh": {"set": {"sigma": 0.5}},
        "dp_glm": {"set": {"eps": 10.0}},  # small n: at eps = 4 dp_glm refuses (methods.glm (G5))
    },
)
KINDS = ("level", "missing", "outside", "constant")
CASES = [
    (name, rel, kind)
    for name, (_, _, _, supported) in DOORS.items()
    for rel in ("replace", "add_remove")[:supported]
    for kind in KINDS
]


def what_a_reader_sees(name: str, data: pd.DataFrame, neighbouring: str, strict: bool) -> dict:
    """Everything of one call that is not a released value (:func:`neighbours.reader_view`)."""
    fn, formula, kwargs, _ = DOORS[name]
    kwargs = dict(kwargs, random_state=7, neighbouring=neighbouring, strict=strict, levels=LEVELS)
    if neighbouring == "replace":
        kwargs.pop("neighbouring")
    return reader_view(fn, formula, data, mask_errors=True, warning_text=released_masked, **kwargs)


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return base_data()


@pytest.mark.parametrize(("name", "neighbouring", "kind"), CASES)
def test_neighbours_differ_only_in_released_values(name, neighbouring, kind, data):
    one = what_a_reader_sees(name, data, neighbouring, strict=True)
    other = what_a_reader_sees(name, neighbour(data, kind), neighbouring, strict=True)
    # everything is declared: strict=True runs
    assert_same_view(one, other, f"{name} ({neighbouring}, {kind} row)")


def test_masking_keeps_words_and_hides_numbers():
    assert masked("n = 1789, eps 0.5, 1/n = 5.6e-04, x12") == "n = #, eps #, #/n = #, x#"
    rows = "x1    0.2244   1.099   1.737   0.0796  .\nx2   0.1838  0.8881  2.136  0.0012 **\nx3  0.15  0.96  0.89  0.35   "
    assert masked(rows) == "x# # # # #\nx# # # # #\nx# # # # #"  # significance codes of released p-values
    assert released_masked("component(s) 2 collapsed (noisy weight 0.00318 < 0.025); n = 600") == (
        "component(s) <released> collapsed (noisy weight <released> < <released>); n = 600"
    )


# ---------------------------------------------------------------------------- issue 32: every input type
# The same pairs as polars, Arrow and DuckDB data (tests/data_kinds.py) for dp_lm and dp_sis: with the
# city factor (DuckDB streams record batches) and without it (DuckDB sums inside the database by SQL).
# Each pair must look the same, and like the pandas pair (the engine's name aside).
NUMERIC_DOORS = door_table(X5)
KIND_CASES = [
    (name, formula_kind, rel, kind, row)
    for name in ("dp_lm", "dp_sis")
    for formula_kind in ("with a factor", "numeric")
    for rel in ("replace", "add_remove")[: DOORS[name][3]]
    for kind in INPUT_KINDS
    for row in KINDS
]


def _view_of(name: str, formula_kind: str, data, neighbouring: str) -> dict:
    fn, formula, kwargs, _ = (DOORS if formula_kind == "with a factor" else NUMERIC_DOORS)[name]
    kwargs = dict(kwargs, random_state=7, neighbouring=neighbouring, strict=True, levels=LEVELS)
    view = reader_view(fn, formula, data, mask_errors=True, **kwargs)
    for channel in ("print", "summary", "to_dict"):  # which engine read the data is public: not compared
        if channel in view:
            text = _ENGINE.sub("engine #", json.dumps(view[channel]))
            view[channel] = json.loads(text)
    return view


_ENGINE = re.compile(r"engine: [\w-]+|[\w-]+ engine")


@pytest.mark.parametrize(("name", "formula_kind", "neighbouring", "kind", "row"), KIND_CASES)
def test_neighbours_differ_only_in_released_values_for_every_input_type(
    name, formula_kind, neighbouring, kind, row, data
):
    changed = neighbour(data, row)
    one = _view_of(name, formula_kind, as_kind(data, kind), neighbouring)
    other = _view_of(name, formula_kind, as_kind(changed, kind), neighbouring)
    label = f"{name} {formula_kind} ({neighbouring}, {kind}, {row} row)"
    assert_same_view(one, other, label)
    assert_same_view(one, _view_of(name, formula_kind, changed, neighbouring), label + " vs pandas")
