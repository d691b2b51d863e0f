"""Doors that visit the rows refuse streamed and Dask data in one message (engines.require_rows):
naming the door and what visits the rows, before anything is read or spent."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.simulate import planted

CALLS = {
    "dp_sis with a custom score": lambda data, acc: dp.dp_sis(
        "y ~ .", data, eps=1.0, k=2, score=lambda X, y: np.abs(X.T @ y), score_sensitivity=1.0, accountant=acc
    ),
    "dp_two_stage": lambda data, acc: dp.dp_two_stage(
        "y ~ .", data, eps=1.0, k=2, bounds=(-4, 4), accountant=acc
    ),
    "dp_knockoff with knockoffs='materialise'": lambda data, acc: dp.dp_knockoff(
        "y ~ .", data, eps=1.0, delta=1e-6, bounds=4.0, knockoffs="materialise", accountant=acc
    ),
    "dp_gmm": lambda data, acc: dp.dp_gmm(
        "~ a + b", data, k=2, eps=1.0, delta=1e-6, bounds=(-4, 4), accountant=acc
    ),
    "dp_select_infer": lambda data, acc: dp.dp_select_infer(
        "y ~ .", data, eps=1.0, delta=1e-6, k=2, bounds=(-4, 4), accountant=acc
    ),
    "dp_bh's formula route": lambda data, acc: dp.dp_bh(
        "y ~ .", data=data, q=0.1, eps=1.0, bounds=(-4, 4), sigma=1.0, accountant=acc
    ),
    "dp_glm at eps = inf": lambda data, acc: dp.dp_glm(
        "y ~ a", data, eps=math.inf, delta=1e-6, bounds=(-4, 4), accountant=acc
    ),
}


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (300, 4)), columns=list("abcd"))
    df["y"] = df.a + rng.normal(0, 0.5, 300)
    path = tmp_path_factory.mktemp("rows") / "d.parquet"
    df.to_parquet(path)
    return path


@pytest.mark.parametrize("door", sorted(CALLS))
def test_streamed_data_refused_naming_the_door_before_spending(door, parquet):
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    with pytest.raises(dp.DataError) as caught:
        CALLS[door](engines.stream(parquet), acc)
    message = str(caught.value)
    assert message.startswith(f"{door}") and "needs the rows in memory (" in message
    assert "a dpstats.Stream" in message and message.endswith("Nothing was read or spent.")
    assert acc.spent_eps == 0 and acc.spent_delta == 0


def test_felp_and_dask_collections_are_refused_too(parquet):
    import dask.dataframe as dd

    df = planted(n=200, d=6, s=2, shift=2.0, random_state=0)
    with pytest.raises(dp.DataError, match="^dp_felp needs the rows in memory .*random subset"):
        dp.dp_felp("class ~ .", engines.on_dask(dd.from_pandas(df, npartitions=2)), eps=1.0, bounds=(-6, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        with pytest.raises(dp.DataError, match="^dp_gmm needs the rows in memory .*dp_pca"):
            dp.dp_gmm(
                "~ x1 + x2", dd.from_pandas(df, npartitions=2), k=2, eps=1.0, delta=1e-6, bounds=(-6, 6)
            )


def test_in_memory_and_duckdb_data_pass_the_check():
    engines.require_rows(pd.DataFrame({"x": [1.0]}), "dp_gmm", "clustering visits each row")
    import duckdb

    relation = duckdb.connect().sql("SELECT 1.0 AS x")  # read into pandas by the door: the rows are there
    engines.require_rows(relation, "dp_gmm", "clustering visits each row")
