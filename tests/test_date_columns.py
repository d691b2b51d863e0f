"""Audit s15 F01: date, date-time and duration columns are numbers, as R's lm reads them, on every route.

R's ``model.matrix`` (so ``lm``) reads a ``Date`` as days since 1970-01-01, a ``POSIXct`` as seconds
since the epoch in UTC (whatever its zone) and a ``difftime`` as its number; dpstats reads a column of
such a type the same way (:mod:`dpstats.temporal`), durations in seconds.  Before, every such value was
"not a number" and got the public fill on every row (a private fit of a constant column), and at
eps = inf a date column was a factor with a dummy per date.

* eps = inf: every route (pandas, polars eager and lazy, Arrow, DuckDB by its SQL query and by record
  batches, Dask, streamed Parquet and CSV) gives R's ``lm`` coefficients, pasted below with the R call
  that made them (R 4.2.2).
* A private fit is the same on every route, seeded alike (within 1e-9 relative: DuckDB and the
  streams add in another order), and the same as the pandas fit of the numbers themselves; bounds
  given as a pair of dates are their days.
* A formula variable of a type with no numeric reading (a list, a struct, binary data) is refused
  naming it, its type and the fix, before anything is spent, on every route; an unused one is left alone.
"""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataError
from dpstats.privacy.accountant import Accountant

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")
dd = pytest.importorskip("dask.dataframe")

# 40 rows: the private fits here are noise-dominated, and say so; what is tested is that routes agree
pytestmark = pytest.mark.filterwarnings("ignore::dpstats.errors.ChanceWarning")
INF = float("inf")
ROW = np.arange(1, 41)
OFFSET = (ROW * 37) % 365  # days after 2020-01-01
Y = 0.01 * OFFSET + np.sin(ROW)
DAYS = [dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in OFFSET]
SECONDS = (
    1585440000 + (ROW * 7919) % 86400
)  # 2020-03-29 00:00 in London (GMT) and after, as seconds since 1970
WHEN = pd.to_datetime(SECONDS, unit="s", utc=True).tz_convert("Europe/London")
GAP = pd.to_timedelta((ROW * 13) % 50, unit="min")

# R 4.2.2, with i <- 1:40 and y <- 0.01 * ((i * 37) %% 365) + sin(i):
#   day <- as.Date("2020-01-01") + (i * 37) %% 365;                          print(coef(lm(y ~ day)), digits = 17)
#   when <- as.POSIXct("2020-03-29", tz = "Europe/London") + (i * 7919) %% 86400;  print(coef(lm(y ~ when)), digits = 17)
#   gap <- as.difftime((i * 13) %% 50, units = "mins");  print(coef(lm(y ~ as.numeric(gap, units = "secs"))), digits = 17)
R_LM = {
    "day": (-183.012751629002195841, 0.010023876924263937),
    "when": (-1.4587879802878402e04, 9.2020583295721931e-06),
    "gap": (1.8624605572409625e00, -4.8614772257708823e-05),  # in seconds (R's lm of gap itself: per minute)
}
BOUNDS = {
    "day": (dt.date(2020, 1, 1), dt.date(2020, 12, 31)),
    "when": (pd.Timestamp("2020-03-29", tz="UTC"), pd.Timestamp("2020-03-30", tz="UTC")),
    "gap": (dt.timedelta(0), dt.timedelta(minutes=50)),
}
AS_NUMBERS = {"day": (18262.0, 18627.0), "when": (1585440000.0, 1585526400.0), "gap": (0.0, 3000.0)}


def _polars(column: str):
    instants = pl.Series(SECONDS * 1_000_000).cast(pl.Datetime("us", "UTC"))
    values = {
        "day": pl.Series(DAYS),
        # another zone than UTC: the instants are read, not the clock
        "when": instants.dt.convert_time_zone("Europe/London"),
        "gap": pl.Series(GAP.to_numpy()),
    }
    return pl.DataFrame({"y": Y, column: values[column]})


def _pandas(column: str) -> pd.DataFrame:
    values = {"day": pd.Series(DAYS, dtype="date32[pyarrow]"), "when": pd.Series(WHEN), "gap": pd.Series(GAP)}
    return pd.DataFrame({"y": Y, column: values[column]})


def _routes(column: str, tmp_path) -> dict:
    """The same rows held by every kind of data a door reads."""
    frame = _polars(column)
    table = frame.to_arrow()
    pq.write_table(table, tmp_path / f"{column}.parquet", row_group_size=16)
    con = duckdb.connect()
    con.register("source", table)
    con.execute("create table t as select * from source")
    routes = {
        "pandas": _pandas(column),
        "polars": frame,
        "polars lazy": frame.lazy(),
        "arrow": table,
        "duckdb sql": dp.engines.on_duckdb((con, "t")),
        "duckdb batches": dp.engines.on_duckdb((con, "t"), pushdown=False, chunk_rows=16),
        "dask": dd.from_pandas(_pandas(column), npartitions=3),
        "parquet stream": dp.engines.stream(tmp_path / f"{column}.parquet", chunk_rows=10),
    }
    # a CSV declares no types: the analyst declares the column's (Arrow's CSV reader reads no durations)
    if column != "gap":
        declared = {"day": pa.date32(), "when": pa.timestamp("s", tz="UTC")}[column]
        text = [d.isoformat() for d in DAYS] if column == "day" else [w.isoformat() for w in WHEN]
        pd.DataFrame({"y": Y, column: text}).to_csv(tmp_path / f"{column}.csv", index=False)
        options = {"convert_options": {"column_types": {column: declared}}}
        routes["csv stream"] = dp.engines.stream(
            tmp_path / f"{column}.csv", chunk_rows=10, csv_options=options
        )
    return routes


def _coef(fit) -> np.ndarray:
    return np.asarray(fit.coef(), dtype=float)


@pytest.mark.parametrize("column", ["day", "when", "gap"])
def test_every_route_fits_rs_lm_at_eps_inf(column, tmp_path):
    """One numeric slope, R's, on every route (the old code made a factor, or filled every value)."""
    for route, data in _routes(column, tmp_path).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_lm(f"y ~ {column}", data, eps=INF)
        assert fit.tidy().term.tolist() == ["(Intercept)", column], route
        np.testing.assert_allclose(_coef(fit), R_LM[column], rtol=1e-8, err_msg=route)
        if route == "duckdb sql":
            assert data.last_route == "sql"  # dates read as numbers inside the query itself


@pytest.mark.parametrize("column", ["day", "when", "gap"])
def test_private_fits_agree_on_every_route_and_with_the_numbers(column, tmp_path):
    """Seeded alike, every route gives the fit of the numbers themselves (pandas floats, numeric bounds);
    bounds given as dates, date-times or durations are those numbers."""
    numbers = {"day": OFFSET + 18262.0, "when": SECONDS * 1.0, "gap": GAP.total_seconds().to_numpy()}[column]
    call = {"eps": 2.0, "delta": 1e-6, "random_state": 3}
    reference = _coef(
        dp.dp_lm(
            f"y ~ {column}",
            pd.DataFrame({"y": Y, column: numbers}),
            bounds={"y": (-3, 6), column: AS_NUMBERS[column]},
            **call,
        )
    )
    for route, data in _routes(column, tmp_path).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_lm(
                f"y ~ {column}", data, bounds={"y": (-3, 6), column: BOUNDS[column]}, diagnostics=True, **call
            )
        assert fit.to_dict()["diagnostics"]["values_filled_for_missing"] == 0, route  # the old code: 40 of 40
        np.testing.assert_allclose(_coef(fit), reference, rtol=1e-9, err_msg=route)


def test_dates_held_as_objects_are_days_when_declared_numeric():
    """A pandas column of ``datetime.date`` objects (pyarrow's default ``to_pandas``) named in bounds= is
    read entry by entry: its days, as a date32 column's."""
    call = {"eps": 2.0, "delta": 1e-6, "random_state": 3, "bounds": {"y": (-3, 6), "day": BOUNDS["day"]}}
    held = pd.DataFrame({"y": Y, "day": pd.Series(DAYS, dtype=object)})
    typed = pd.DataFrame({"y": Y, "day": pd.Series(DAYS, dtype="date32[pyarrow]")})
    np.testing.assert_array_equal(
        _coef(dp.dp_lm("y ~ day", held, **call)), _coef(dp.dp_lm("y ~ day", typed, **call))
    )


def test_time_zones_and_clock_times():
    """A zoned date-time is its instant (the same instants in UTC and in London fit alike); a naive one is
    its clock reading taken as UTC; a time of day is seconds since midnight (least squares on them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        london = _coef(dp.dp_lm("y ~ when", pd.DataFrame({"y": Y, "when": WHEN}), eps=INF))
        utc = _coef(dp.dp_lm("y ~ when", pd.DataFrame({"y": Y, "when": WHEN.tz_convert("UTC")}), eps=INF))
        naive = _coef(dp.dp_lm("y ~ when", pd.DataFrame({"y": Y, "when": WHEN.tz_convert(None)}), eps=INF))
        seconds = (ROW * 7919) % 86400
        clock = pl.DataFrame(
            {"y": Y, "t": pl.Series([dt.time(s // 3600, s // 60 % 60, s % 60) for s in seconds])}
        )
        fits = [
            _coef(dp.dp_lm("y ~ t", data, eps=INF))
            for data in (clock, clock.to_arrow(), duckdb.sql("select * from clock"))
        ]
    np.testing.assert_array_equal(london, utc)
    np.testing.assert_allclose(naive, R_LM["when"], rtol=1e-8)
    expected = np.linalg.lstsq(np.column_stack([np.ones(40), seconds]), Y, rcond=None)[0]
    for fit in fits:
        np.testing.assert_allclose(fit, expected, rtol=1e-8)


def test_predict_reads_newdata_dates_as_the_fit_did():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ day", _pandas("day"), eps=INF)
    new = pd.DataFrame(
        {"day": pd.Series([dt.date(2020, 1, 1), dt.date(2020, 7, 1)], dtype="date32[pyarrow]")}
    )
    np.testing.assert_allclose(
        np.asarray(fit.predict(new), dtype=float),
        R_LM["day"][0] + R_LM["day"][1] * np.array([18262, 18444]),
        rtol=1e-8,
    )


def test_a_csv_column_that_only_looks_like_dates_is_text_as_pandas_reads_it(tmp_path):
    """A CSV declares no types: pyarrow would infer dates from the first block, pandas.read_csv reads text."""
    path = tmp_path / "d.csv"
    pd.DataFrame({"y": Y, "day": [DAYS[k % 3].isoformat() for k in range(40)]}).to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = dp.dp_lm("y ~ day", dp.engines.stream(path), eps=INF)
        in_memory = dp.dp_lm("y ~ day", pd.read_csv(path), eps=INF)
    assert streamed.tidy().term.tolist() == in_memory.tidy().term.tolist()
    np.testing.assert_allclose(_coef(streamed), _coef(in_memory), rtol=1e-12)


def _unreadable(kind: str, tmp_path) -> dict:
    values = {"tags": [[1, 2], [3]], "info": [{"a": 1}, {"a": 2}], "blob": [b"x", b"y"]}[kind]
    frame = pl.DataFrame({"y": Y, "x": np.cos(ROW), kind: values * 20})
    table = frame.to_arrow()
    pq.write_table(table, tmp_path / f"{kind}.parquet")
    con = duckdb.connect()
    con.register("source", table)
    con.execute("create table t as select * from source")
    return {
        "pandas (Arrow types)": table.to_pandas(types_mapper=pd.ArrowDtype),
        "polars": frame,
        "polars lazy": frame.lazy(),
        "arrow": table,
        "duckdb": (con, "t"),
        "parquet stream": dp.engines.stream(tmp_path / f"{kind}.parquet"),
    }


@pytest.mark.parametrize("kind", ["tags", "info", "blob"])
def test_a_list_struct_or_binary_variable_is_refused_naming_it_before_any_spend(kind, tmp_path):
    for route, data in _unreadable(kind, tmp_path).items():
        for bounds in ({"y": (-1, 2), "x": (-1, 1), kind: (0, 1)}, (-1, 2)):  # declared numeric, or not
            acc = Accountant(eps=10, delta=1e-3)
            with pytest.raises(DataError) as err:
                dp.dp_lm(
                    f"y ~ x + {kind}", data, eps=1, delta=1e-6, bounds=bounds, random_state=1, accountant=acc
                )
            text = str(err.value)
            assert f"column '{kind}' has type " in text and "Nothing was read or spent" in text, route
            assert "convert it to numbers or text" in text
            assert acc.spent_eps == 0, route
        acc = Accountant(eps=10, delta=1e-3)
        # the column unused: read as ever
        dp.dp_lm("y ~ x", data, eps=1, delta=1e-6, bounds=(-1, 2), random_state=1, accountant=acc)
        assert acc.spent_eps == 1, route


def test_date_bounds_are_their_numbers_on_every_door():
    """bounds= holding dates is read once, where a door's call is bound: the same release as the days,
    and the printed call shows the numbers used."""
    frame = pl.DataFrame({"y": Y, "x": np.cos(ROW), "day": pl.Series(DAYS)})
    as_dates = {"y": (-3, 6), "x": (-1, 1), "day": BOUNDS["day"]}
    as_days = {"y": (-3, 6), "x": (-1, 1), "day": AS_NUMBERS["day"]}
    doors = {
        "dp_sis": (dp.dp_sis, "y ~ x + day", {"eps": 2.0, "k": 1, "oc_trials": 0}),
        "dp_two_stage": (dp.dp_two_stage, "y ~ x + day", {"eps": 2.0}),
        "dp_select_infer": (dp.dp_select_infer, "y ~ x + day", {"eps": 2.0, "delta": 1e-6, "k": 1}),
        "dp_pca": (dp.dp_pca, "~ x + day", {"eps": 2.0, "delta": 1e-6, "k": 1}),
    }
    for name, (door, formula, call) in doors.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = (
                door(formula, frame, bounds=bounds, random_state=5, **call) for bounds in (as_dates, as_days)
            )
        one, other = a.to_dict(), b.to_dict()
        one.pop("created"), other.pop("created")
        assert one == other, name
        assert "day = c(18262, 18627)" in str(a), name


def test_a_parquet_file_pandas_wrote_from_a_date32_column_streams_as_in_memory(tmp_path):
    """pandas records a ``date32[pyarrow]`` column's dtype in the file's metadata; the stream reads the
    column as days all the same (before, ``to_pandas`` cast the days back to date32 and Arrow refused)."""
    rng = np.random.default_rng(3)
    start = dt.date(2020, 1, 1)
    days = [start + dt.timedelta(days=int(d)) for d in rng.integers(0, 365, 500)]
    df = pd.DataFrame({"day": pd.Series(days).astype("date32[pyarrow]"), "y": rng.normal(size=500)})
    path = tmp_path / "days.parquet"
    df.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = dp.dp_lm("y ~ day", dp.engines.stream(path), eps=float("inf")).coef()
        in_memory = dp.dp_lm("y ~ day", df, eps=float("inf")).coef()
    np.testing.assert_allclose(streamed.to_numpy(), in_memory.to_numpy(), rtol=1e-9)
