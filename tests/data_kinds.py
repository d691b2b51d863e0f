"""The same data as each input type a front door accepts (issue 32, "Data where it lives").

``as_kind(df, kind)`` turns a pandas frame into a polars DataFrame or LazyFrame, a pyarrow
Table or Dataset, a DuckDB relation or a (connection, table) pair holding the same rows in
the same order, for the tests that run the front doors over every input type
(tests/test_data_sources.py, the neighbouring-pair and leak tests).
"""

from __future__ import annotations

import pandas as pd

# read into pandas by engines/adapter.py: results equal pandas' bit for bit
IN_MEMORY = ("polars", "polars lazy", "arrow", "arrow dataset")
# DuckDB: the DuckDB engine where the door works from sufficient statistics, else read into pandas
DUCKDB = ("duckdb", "duckdb table")
KINDS = IN_MEMORY + DUCKDB


def as_kind(df: pd.DataFrame, kind: str):
    """``df`` (its columns and rows, in order; no index) as the input type ``kind``."""
    if kind == "pandas":
        return df
    if kind in ("polars", "polars lazy"):
        import polars as pl

        frame = pl.from_pandas(df)
        return frame.lazy() if kind == "polars lazy" else frame
    if kind in ("arrow", "arrow dataset"):
        import pyarrow as pa

        table = pa.Table.from_pandas(df, preserve_index=False)
        if kind == "arrow":
            return table
        import pyarrow.dataset as ds

        return ds.dataset(table)
    if kind in DUCKDB:
        import duckdb

        con = duckdb.connect()
        con.register("source_frame", df)
        con.execute("create table data as select * from source_frame")  # insertion order kept
        con.unregister("source_frame")
        return (con, "data") if kind == "duckdb table" else con.sql("select * from data")
    raise ValueError(kind)
