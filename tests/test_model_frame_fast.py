"""The in-memory model frame of plain numeric columns (issue 18): one copy, same answers.

``model_frame`` builds the design of numeric columns as one Fortran-ordered float64 block (a view of
a one-block frame copied once, or pandas' one copy of other frames), finds incomplete rows from one
pass over that block and checks constant columns only where the first, middle and last rows agree.
These tests pin the answers against the straightforward construction; the speed is shown by
``benchmarks/bench_scale.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpstats.errors import DataError
from dpstats.formula import model_frame
from dpstats.formula._parse import r_name, r_names


def _frames(n=200, p=6, seed=0):
    rng = np.random.default_rng(seed)
    block = pd.DataFrame(rng.standard_normal((n, p + 1)), columns=[f"x{j}" for j in range(p)] + ["y"])
    pieces = pd.DataFrame({c: block[c].to_numpy().copy() for c in block.columns})  # pandas may consolidate
    mixed = block.copy()
    mixed["x0"] = (mixed["x0"] * 100).round().astype(np.int64)  # an int column: not one float64 block
    return block, pieces, mixed


@pytest.mark.parametrize("drop_intercept", [False, True])
@pytest.mark.parametrize("formula", ["y ~ .", "y ~ x3 + x1 + x5", "y ~ . - x2", "y ~ 0 + .", "~ x4 + x0"])
def test_design_equals_the_straightforward_construction(formula, drop_intercept):
    for df in _frames():
        one_sided = formula.startswith("~")
        mf = model_frame(formula, df, drop_intercept=drop_intercept, one_sided=one_sided)
        cols = [nm for nm in mf.names if nm != "(Intercept)"]
        ref = df[cols].to_numpy(dtype=float)
        if "(Intercept)" in mf.names:
            ref = np.column_stack([np.ones(len(df)), ref])
        np.testing.assert_array_equal(mf.X, ref)
        assert mf.X.dtype == np.float64 and mf.X.flags.writeable
        assert not np.shares_memory(mf.X, df.to_numpy(copy=False))  # the user's data is never aliased
        if not one_sided:
            np.testing.assert_array_equal(mf.y, df["y"].to_numpy())


def test_incomplete_rows_dropped_from_one_pass_including_removed_columns_and_response():
    df, _, _ = _frames(n=50)
    df.loc[3, "x1"] = np.nan
    df.loc[7, "x4"] = np.inf
    df.loc[11, "x2"] = -np.inf  # x2 is removed from the design, but R's model frame still drops the row
    df.loc[13, "y"] = np.nan
    df.loc[17, ["x0", "x3"]] = [1e308, 1e308]  # finite values whose row sum overflows: kept
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the count is not private: no message carries it (issue 26)
        mf = model_frame("y ~ . - x2", df)
    keep = np.setdiff1d(np.arange(50), [3, 7, 11, 13])
    assert mf.n_dropped == 4 and mf.n == 46
    np.testing.assert_array_equal(mf.X[:, 1:], df.drop(columns=["x2", "y"]).to_numpy()[keep])
    np.testing.assert_array_equal(mf.y, df["y"].to_numpy()[keep])
    assert mf.X.flags.f_contiguous


def test_factor_response_rows_dropped_by_its_missing_values():
    df, _, _ = _frames(n=30)
    df["y"] = np.where(np.arange(30) % 2 == 0, "a", "b")
    df.loc[4, "y"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mf = model_frame("y ~ x0 + x1", df, response="factor")
    assert mf.n == 29 and mf.classes == ["a", "b"]


def test_constant_columns_found_even_when_first_middle_last_rows_agree():
    df, _, _ = _frames(n=101)
    df["c"] = 2.5  # constant
    df["t"] = 0.0
    df.loc[[7, 60], "t"] = 1.0  # equal in rows 0, 50 and 100, yet not constant
    with pytest.raises(DataError, match="constant column\\(s\\) 'c'"):
        model_frame("y ~ .", df, check_constant=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mf = model_frame("y ~ . - c", df)
    assert "t" in mf.names


def test_string_and_non_string_column_labels():
    block, _, _ = _frames(n=20, p=3)
    assert model_frame("y ~ .", block).names == ["(Intercept)", "x0", "x1", "x2"]
    numbered = block.copy()
    numbered.columns = [0, 1, 2, "y"]
    assert model_frame("y ~ .", numbered).names == ["(Intercept)", "`0`", "`1`", "`2`"]


def test_r_names_equal_r_name_one_by_one():
    names = ["a.b", "x1", ".", ".x", "if", "a b", "1x", "..1", "..x", "_a", "é", "x\ny", "TRUE", "a-b"]
    assert r_names(names) == [r_name(nm) for nm in names]
    plain = [f"g{j}" for j in range(1000)]
    assert r_names(plain) == plain and r_names([]) == []
