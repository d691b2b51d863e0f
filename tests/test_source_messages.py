"""Messages that do not depend on the data source (audit s15, F03 and F05).

* F03: a user's query that fails on a row (a text value cast to a number) inside a polars
  LazyFrame, a Dask graph, an Arrow Dataset scan or a DuckDB relation is one
  :class:`~dpstats.errors.DataError` naming the source and the library, never the value, a count
  or a position; the library's message is not chained into the traceback either.  Shown on
  neighbouring data sets (the failing value replaced by another, a second failing row added in
  another Dask partition): the same message, and nothing charged.  An error of dpstats' own code
  inside a Dask task is not taken for the query's.
"""

from __future__ import annotations

import traceback

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError
from dpstats.privacy.accountant import Accountant

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
pads = pytest.importorskip("pyarrow.dataset")
duckdb = pytest.importorskip("duckdb")
dd = pytest.importorskip("dask.dataframe")

SECRETS = ("PATIENT-0042-HIV+", "PATIENT-0099-HBV", "4.2.1")
N = 200


def _rows(bad: dict[int, str]) -> pd.DataFrame:
    """y and a text column s of numbers, with the rows in ``bad`` holding text that is no number."""
    rng = np.random.default_rng(4)
    text = [f"{v:.3f}" for v in rng.normal(size=N)]
    for row, value in bad.items():
        text[row] = value
    return pd.DataFrame({"y": rng.normal(size=N), "s": text})


# A data set and two of its neighbours (replace one row): the failing value replaced by another,
# and a second failing row added (in Dask's other partition).
NEIGHBOURS = {
    "one bad value": {17: SECRETS[0]},
    "another bad value": {17: SECRETS[1]},
    "two bad values": {17: SECRETS[0], 150: SECRETS[2]},
}


def _polars_lazy(df, tmp_path):
    return pl.from_pandas(df).lazy().with_columns(pl.col("s").cast(pl.Float64, strict=True).alias("x"))


def _polars_scan(df, tmp_path):
    path = tmp_path / "rows.csv"
    df.to_csv(path, index=False)
    return pl.scan_csv(path, schema_overrides={"s": pl.Float64}).rename({"s": "x"})


def _dask(df, tmp_path):
    return dd.from_pandas(df, npartitions=2).assign(x=lambda d: d.s.astype(float))


def _arrow_dataset(df, tmp_path):
    path = tmp_path / "rows.csv"
    df.rename(columns={"s": "x"}).to_csv(path, index=False)
    return pads.dataset(path, format="csv", schema=pa.schema([("y", pa.float64()), ("x", pa.float64())]))


def _duckdb(df, tmp_path):
    con = duckdb.connect()
    con.register("src", df)
    return con.sql("select y, cast(s as double) as x from src")


SOURCES = {
    "polars LazyFrame": (_polars_lazy, "polars"),
    "polars scan_csv": (_polars_scan, "polars"),
    "Dask DataFrame": (_dask, "dask"),
    "Arrow Dataset": (_arrow_dataset, "pyarrow"),
    "DuckDB relation": (_duckdb, "duckdb"),
}


def _failure(source, tmp_path, bad: dict[int, str], door=dp.dp_lm) -> tuple[str, str]:
    """The message and the printed traceback of ``door`` on the source's query over ``bad`` rows;
    nothing may be charged."""
    make, _ = SOURCES[source]
    acc = Accountant(5.0, 1e-5)
    data = make(_rows(bad), tmp_path)
    with pytest.raises(DataError) as info:
        door("y ~ x", data, eps=1.0, delta=1e-6, bounds=(-5, 5), accountant=acc, random_state=1)
    assert acc.spent_eps == 0 and acc.spent_delta == 0 and not acc.charges
    printed = "".join(traceback.format_exception(info.value))
    return str(info.value), printed


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_failing_query_gives_one_message_on_neighbours_without_values(source, tmp_path):
    texts = {}
    for name, bad in NEIGHBOURS.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        text, printed = _failure(source, folder, bad)
        for secret in SECRETS:
            assert secret not in printed, (name, printed)
        texts[name] = text
    assert len(set(texts.values())) == 1, texts
    text = texts["one bad value"]
    library = SOURCES[source][1]
    assert f"failed: {library} could not evaluate the query or cast a value in it (" in text, text
    assert "run the query or frame on its own" in text and "Nothing was spent" in text
    assert not any(ch.isdigit() for ch in text.replace("(2 partitions)", "")), text  # no count, row, byte


def test_a_door_that_reads_the_rows_wraps_the_query_failure_too(tmp_path):
    make, _ = SOURCES["polars LazyFrame"]
    with pytest.raises(DataError, match="polars could not evaluate") as info:
        dp.dp_two_stage("y ~ x", make(_rows({3: SECRETS[0]}), tmp_path), eps=1.0, k=1, bounds=(-5, 5))
    assert SECRETS[0] not in "".join(traceback.format_exception(info.value))


def test_dpstats_own_error_in_a_dask_task_is_not_taken_for_the_query(monkeypatch):
    from dpstats.engines import dask_engine

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug of dpstats")

    monkeypatch.setattr(dask_engine, "frame_statistics", broken)
    data = dd.from_pandas(pd.DataFrame({"y": np.arange(50.0), "x": np.arange(50.0)}), npartitions=2)
    with pytest.raises(ZeroDivisionError, match="a bug of dpstats"):
        dp.dp_lm("y ~ x", data, eps=1.0, delta=1e-6, bounds=(-60, 60), random_state=1)
