"""The statement's missing-values text says one true thing per case (audit finding 4): a variable
without declared bounds has no public fill, so its rows are dropped, and the text must not also say
"no row is dropped"; the same text on neighbouring data sets (with and without a missing value)."""

from __future__ import annotations

import warnings

import numpy as np

import dpstats as dp
from dpstats.schema import Schema


def _felp(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dp.dp_felp("diagnosis ~ .", df, eps=4.0, select=5, n_estimators=3, random_state=1)


def test_rule_with_unfilled_variables_says_rows_are_dropped_only():
    text = Schema.declare(na_action="fill").rule(["x1", "x2"])
    assert "are dropped" in text and "no row is dropped" not in text and "number of rows read" not in text
    assert "'x1'" in text and "'x2'" in text
    assert "no row is dropped" in Schema.declare(na_action="fill").rule([])


def test_felp_without_bounds_states_one_rule_identical_on_neighbours():
    df = dp.datasets.breast_cancer()
    neighbour = df.copy()
    column = next(c for c in df.columns if c != "diagnosis" and np.issubdtype(df[c].dtype, np.number))
    neighbour.loc[neighbour.index[0], column] = np.nan  # one row replaced by one with a missing value
    fits = [_felp(df), _felp(neighbour)]
    texts = [f.privacy.missing_values for f in fits]
    assert texts[0] == texts[1]
    paragraph = fits[0].privacy.plain_language()
    assert "are dropped" in paragraph and "no row is dropped" not in paragraph
    assert "so n is the number of rows read" not in paragraph
    printed = [[line for line in str(f).splitlines() if "Missing values" in line] for f in fits]
    assert printed[0] == printed[1] and "were dropped" in printed[0][0]
    assert "were replaced by public fills (na_action" not in str(fits[0])
