"""A ``bounds=`` entry may name any column of the data, used by the formula or not, on every route.

README: "columns of the data that the formula does not use stay allowed"; only a name that is in
neither the data nor the design is refused.  The check reads the source's column names from its
schema (no rows): polars (eager and lazy), Arrow (Table, RecordBatch, Dataset), DuckDB (a relation
and a connection's table), Dask and streamed files.  dp_select_infer on polars data refused such an
entry (it read the formula's columns only); dp_lm read the unused column's rows to check its name.
"""

from __future__ import annotations

import warnings

import dask.dataframe as dd
import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import PrivacyParameterError

BOUNDS = {"x": (-1, 1), "z": (-1, 1), "y": (-5, 5), "w": (0, 5)}  # w: a column the formula does not use
IN_MEMORY = [
    "pandas",
    "polars",
    "polars lazy",
    "arrow",
    "arrow batch",
    "arrow dataset",
    "duckdb",
    "duckdb table",
]
ENGINES = ["dask", "stream"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 1000
    df = pd.DataFrame({"x": rng.uniform(-1, 1, n), "z": rng.uniform(-1, 1, n), "w": rng.uniform(0, 5, n)})
    df["y"] = 1 + 2 * df.x + 0.5 * rng.normal(size=n)
    return df


def _route(route: str, df: pd.DataFrame, tmp_path):
    if route == "pandas":
        return df
    if route.startswith("polars"):
        return pl.from_pandas(df).lazy() if route == "polars lazy" else pl.from_pandas(df)
    table = pa.Table.from_pandas(df, preserve_index=False)
    if route == "arrow":
        return table
    if route == "arrow batch":
        return table.to_batches()[0]
    if route == "arrow dataset":
        return pads.dataset(table)
    if route.startswith("duckdb"):
        con = duckdb.connect()
        con.register("view", df)
        con.execute("create table t as select * from view")
        return (con, "t") if route == "duckdb table" else con.sql("select * from t")
    if route == "dask":
        return dd.from_pandas(df, npartitions=2)
    df.to_parquet(tmp_path / "d.parquet")
    return engines.stream(tmp_path / "d.parquet")


def _call(door: str, data, bounds):
    kw = dict(eps=2.0, delta=1e-6, bounds=bounds, random_state=1, n_boot=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if door == "dp_select_infer":
            return dp.dp_select_infer("y ~ x + z", data, k=1, **kw)
        return dp.dp_lm("y ~ x + z", data, **kw)


@pytest.mark.parametrize(
    ("door", "route"),
    [("dp_select_infer", r) for r in IN_MEMORY] + [("dp_lm", r) for r in IN_MEMORY + ENGINES],
)
def test_a_bound_for_an_unused_column_is_allowed_and_an_unknown_name_refused(door, route, frame, tmp_path):
    fit = _call(door, _route(route, frame, tmp_path), BOUNDS)
    assert np.all(np.isfinite(fit.coef()))
    with pytest.raises(
        PrivacyParameterError, match="bounds= names 'nope', which is neither a column of the data"
    ):
        _call(door, _route(route, frame, tmp_path), BOUNDS | {"nope": (0, 1)})


@pytest.mark.parametrize("door", ["dp_lm", "dp_select_infer"])
def test_the_unused_column_named_in_bounds_is_not_read(door, frame):
    """Its name comes from the LazyFrame's schema: a column whose query fails when evaluated is never
    evaluated (it was read, and the call failed, before)."""
    lazy = (
        pl.from_pandas(frame.drop(columns="w"))
        .lazy()
        .with_columns(s=pl.lit("abc"))
        .with_columns(w=pl.col("s").str.to_integer())
    )
    with pytest.raises(pl.exceptions.ComputeError):
        lazy.select("w").collect()
    fit = _call(door, lazy, BOUNDS)
    assert np.all(np.isfinite(fit.coef()))


def test_column_names_reads_the_schema_of_every_route(frame, tmp_path):
    for route in IN_MEMORY + ENGINES:
        assert engines.column_names(_route(route, frame, tmp_path)) == ["x", "z", "w", "y"], route
    assert engines.column_names([frame[["x", "y"]], pl.from_pandas(frame[["z"]])]) == ["x", "y", "z"]
    assert engines.column_names(None) == []
