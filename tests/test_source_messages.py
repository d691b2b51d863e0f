"""Messages that do not depend on the data source (audit s15, F03 and F05).

* F03: a user's query that fails on a row (a text value cast to a number) inside a polars
  LazyFrame, a Dask graph, an Arrow Dataset scan or a DuckDB relation is one
  :class:`~dpstats.errors.DataError` naming the source and the library, never the value, a count
  or a position; the library's message is not chained into the traceback either.  Shown on
  neighbouring data sets (the failing value replaced by another, a second failing row added in
  another Dask partition): the same message, and nothing charged.  An error of dpstats' own code
  inside a Dask task is not taken for the query's.
* F05: a misspelt column is named with the whole formula on every source, and the column that
  differs only in case is suggested (one suggestion function, :func:`dpstats.errors.close_names`);
  the printed call backticks a non-syntactic ``bounds=`` name as R's ``deparse`` does.
"""

from __future__ import annotations

import traceback
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError, FormulaError, PrivacyParameterError, close_names
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
    assert not any(ch.isdigit() for ch in text), text  # no count, row, byte, number of partitions


def test_a_dask_frame_partitioned_by_size_gives_one_message_on_neighbours():
    """Partitioned by size (100 rows each), a row more is a partition more: the message named the
    number ("the Dask DataFrame (2 partitions)" against "(3 partitions)"), a function of n.  Here the
    neighbours are 200 rows with a value that fails the cast and the same with a row added; and
    a partition whose columns differ is named without its place ("partition 2": the partitions
    before it grow with n)."""
    texts, base = [], _rows({17: SECRETS[0]})
    for df in (base, pd.concat([base, base.iloc[[0]]], ignore_index=True)):
        data = dd.from_pandas(df, chunksize=100).assign(x=lambda d: d.s.astype(float))
        with pytest.raises(DataError) as info:
            dp.dp_lm("y ~ x", data, eps=1.0, delta=1e-6, bounds=(-5, 5), random_state=1)
        texts.append(str(info.value))
    assert data.npartitions == 3 and texts[0] == texts[1], texts
    assert not any(ch.isdigit() for ch in texts[0]), texts[0]
    from dask import delayed

    df = _rows({}).assign(x=0.0)
    parts = [delayed(df.iloc[:100]), delayed(df.iloc[100:].drop(columns="x"))]
    odd = dd.from_delayed(parts, meta=df.iloc[:0], verify_meta=False)
    with pytest.raises(DataError, match="^a partition of the Dask DataFrame lacks column") as info:
        dp.dp_lm("y ~ x", odd, eps=1.0, delta=1e-6, bounds=(-5, 5))
    assert not any(ch.isdigit() for ch in str(info.value)), str(info.value)


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


# ---------------------------------------------------------------------------- F05
def _frames() -> dict[str, object]:
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"Y": rng.normal(size=300), "X1": rng.normal(size=300)})
    con = duckdb.connect()
    con.register("src", df)
    return {
        "pandas": df,
        "polars": pl.from_pandas(df),
        "polars lazy": pl.from_pandas(df).lazy(),
        "arrow": pa.Table.from_pandas(df),
        "duckdb": con.sql("select * from src"),
        "dask": dd.from_pandas(df, npartitions=2),
    }


@pytest.mark.parametrize(
    "formula, missing", [("y ~ x1", "y"), ("Y ~ x1 + log(X1)", "x1"), ("log(y) ~ X1", "y")]
)
def test_a_misspelt_column_is_named_with_the_formula_and_its_case_on_every_source(formula, missing):
    texts = {}
    for kind, data in _frames().items():
        with pytest.raises(FormulaError) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dp.dp_lm(formula, data, eps=1.0, delta=1e-6, bounds=(-5, 5))
        texts[kind] = str(info.value)
    want = (
        f"column '{missing}' in formula '{formula}' is not in the data. Did you mean '{missing.upper()}'? "
        "Check the spelling or add the column to the data frame."
    )
    assert set(texts.values()) == {want}, texts


def test_close_names_puts_a_case_only_difference_first():
    assert close_names("y", ["Y", "x1"]) == ["Y"]
    assert close_names("x1", ["x2", "X1", "y"]) == ["X1", "x2"]
    assert close_names("z", ["Y", "x1"]) == []
    assert close_names("y", ["yy", "y1", "Y"], n=1) == ["Y"]


def test_a_misspelt_bounds_name_gets_the_same_suggestion():
    df = pd.DataFrame({"y": np.linspace(-1, 1, 50), "x": np.linspace(0, 1, 50)})
    with pytest.raises(PrivacyParameterError, match="names 'X', .* Did you mean 'x'"):
        dp.dp_lm("y ~ x", df, eps=1.0, delta=1e-6, bounds={"y": (-1, 1), "x": (0, 1), "X": (0, 1)})


@pytest.mark.filterwarnings("ignore::dpstats.errors.ChanceWarning")
def test_the_printed_call_backticks_non_syntactic_bounds_names_as_r_deparse():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"y": rng.normal(size=200), "a b": rng.uniform(-1, 1, 200), "if": rng.normal(size=200)})
    bounds = {"y": (-5, 5), "a b": (-1, 1), "if": (-4, 4)}
    fit = dp.dp_lm("y ~ `a b` + `if`", df, eps=2, delta=1e-6, bounds=bounds, random_state=1)
    call = next(line for line in str(fit).splitlines() if line.startswith("dp_lm("))
    # R: deparse(quote(list(y = c(-5, 5), `a b` = c(-1, 1), `if` = c(-4, 4))))
    assert "bounds = list(y = c(-5, 5), `a b` = c(-1, 1), `if` = c(-4, 4))" in call, call
