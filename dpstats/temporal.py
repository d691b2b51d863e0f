"""Dates, date-times, durations and times of day read as numbers, as R's ``as.numeric`` reads them.

R's ``model.matrix`` (so ``lm`` and ``glm``) treats a ``Date`` column as the number of days since
1970-01-01, a ``POSIXct`` as seconds since 1970-01-01 00:00:00 UTC and a ``difftime`` as its number
in its units: one slope, never a factor.  dpstats reads a column of such a *type* the same way, on
every route (pandas, polars eager and lazy, Arrow, DuckDB, Dask, streamed Parquet and CSV files):

==========================================  =====================================  ============================
column type                                 read as                                R
==========================================  =====================================  ============================
date (polars ``Date``, Arrow ``date32``,    days since 1970-01-01                  ``as.numeric(Date)``
DuckDB ``DATE``, ``date32[pyarrow]``)
date-time (pandas ``datetime64``, polars    seconds since 1970-01-01 00:00:00 UTC  ``as.numeric(POSIXct)``
``Datetime``, Arrow ``timestamp``,
DuckDB ``TIMESTAMP``)
duration (pandas ``timedelta64``, polars    seconds                                ``as.numeric(x, units =
``Duration``, Arrow ``duration``,                                                  "secs")`` of a difftime
DuckDB ``INTERVAL``)
time of day (polars ``Time``, Arrow         seconds since midnight                 ``as.numeric`` of an
``time32``/``time64``, DuckDB ``TIME``)                                            ``hms`` (a difftime in
                                                                                   seconds)
==========================================  =====================================  ============================

* The type is public: it is the dtype of the column, which the analyst's parse declared
  (``pd.to_datetime``, a Parquet or DuckDB schema, ``csv_options`` column types), not read from the
  rows.  A CSV file declares no types: a column that only *looks* like dates is text, as
  ``pandas.read_csv`` reads it (:mod:`dpstats.engines.stream`), unless its type is declared.
* A date-time with a time zone is read as the instant it names: seconds since the epoch in UTC,
  whatever the zone (as R's ``as.numeric`` of a ``POSIXct``).  A date-time without one is read by
  its clock reading as if in UTC (R's ``as.numeric(as.POSIXct(x, tz = "UTC"))``).
* pandas has no date type: a ``datetime64`` column is a date-time, read in seconds even when every
  entry is a midnight (hold dates as ``date32[pyarrow]``, or divide by 86400, to read days).
* A duration is read in seconds, whatever its unit.  R's ``lm`` reads a ``difftime`` in its own units
  (days, hours, ...); the R package sends ``as.numeric(x)`` of its columns, so that it fits what
  ``lm`` fits.  A DuckDB ``INTERVAL`` is read as DuckDB's ``epoch()`` reads it (a month is 30 days).
* Each entry's number depends on that entry alone; a missing entry (``NaT``, null) is a missing value,
  which then follows the rule for missing values (:mod:`dpstats.schema`).
* The ``bounds=`` of such a column are in the same units: days for a date, seconds for the others.
  A pair of dates, date-times or durations is read the same way (:func:`bounds_numbers`)::

      bounds={"day": (datetime.date(2020, 1, 1), datetime.date(2020, 12, 31))}  # = (18262, 18627)

  Give dates for a date column and date-times for a date-time column: a date-time bound is in
  seconds, 86 400 times a date's number of days.
* A formula variable of a type that has no reading as a number (lists, structs, maps, binary data,
  an Arrow interval) is refused before anything is read or spent, naming the column, its type and
  the fix (:func:`refusal`); R's ``lm`` refuses a list column too.  An unused one is left alone.

The same arithmetic on every route: a date's count of days as a double; any other value's integer
count in its unit (s, ms, us, ns) as a double, divided by the count of that unit in a second.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .errors import DataError

__all__ = [
    "PER_SECOND",
    "kind_of",
    "column_kinds",
    "numbers",
    "read_columns",
    "entry_number",
    "bounds_numbers",
    "bounds_read",
    "arrow_kind",
    "arrow_numbers",
    "type_text",
    "refusal",
]

#: how many of each unit make a second
PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def kind_of(dtype: Any) -> str | None:
    """``"date"``, ``"datetime"``, ``"duration"``, ``"time"`` or ``"unreadable"`` for a pandas dtype
    read by this module's rule; None for any other dtype.

    Examples
    --------
    >>> kind_of(np.dtype("datetime64[ns]")), kind_of(np.dtype("timedelta64[us]")), kind_of(np.dtype(float))
    ('datetime', 'duration', None)
    """
    if isinstance(dtype, np.dtype):
        return {"M": "datetime", "m": "duration"}.get(dtype.kind)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "datetime"
    if isinstance(dtype, pd.ArrowDtype):
        return arrow_kind(dtype.pyarrow_dtype)
    return None


def numbers(values: pd.Series) -> pd.Series:
    """A column of a date, date-time, duration or time-of-day dtype read as numbers (module docstring).

    Examples
    --------
    >>> numbers(pd.Series(pd.to_datetime(["1970-01-02", None]))).tolist()
    [86400.0, nan]
    >>> numbers(pd.Series(pd.to_timedelta(["90min"]))).tolist()
    [5400.0]
    """
    dtype = values.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        read = _arrow_column_numbers(pa.array(values, type=dtype.pyarrow_dtype))
        return pd.Series(
            read.to_numpy(zero_copy_only=False), index=values.index, name=values.name, dtype=float
        )
    unit = dtype.unit if isinstance(dtype, pd.DatetimeTZDtype) else np.datetime_data(dtype)[0]
    out = values.array.asi8.astype(float) / PER_SECOND[unit]  # integer counts of the unit (UTC when zoned)
    out[values.isna().to_numpy()] = np.nan
    return pd.Series(out, index=values.index, name=values.name)


def column_kinds(frame: pd.DataFrame) -> dict[Any, str]:
    """The columns of ``frame`` whose dtype has a kind (:func:`kind_of`), by name; each distinct dtype
    is classified once, so a wide numeric frame costs one look at its dtypes.

    Examples
    --------
    >>> column_kinds(pd.DataFrame({"x": [1.0], "t": pd.to_timedelta(["1s"])}))
    {'t': 'duration'}
    """
    dtypes = frame.dtypes.tolist()
    kinds = {id(dt): kind_of(dt) for dt in {id(dt): dt for dt in dtypes}.values()}
    if not any(kinds.values()):
        return {}
    return {name: kinds[id(dt)] for name, dt in zip(frame.columns, dtypes) if kinds[id(dt)]}


def read_columns(frame: pd.DataFrame, refuse: Collection[str] | None = None) -> pd.DataFrame:
    """``frame`` with each column of a date, date-time, duration or time-of-day dtype read as numbers;
    a column of ``refuse`` (None: any column) whose type has no numeric reading is refused (:func:`refusal`).

    From the dtypes only, and row-local: chunks give the chunks of the result.  The frame itself is
    returned when no column has such a dtype.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0], "t": pd.to_datetime(["1970-01-01 00:01", "1970-01-01 00:02"])})
    >>> read_columns(df)["t"].tolist()
    [60.0, 120.0]
    """
    kinds = column_kinds(frame)
    if not kinds:
        return frame
    out = None
    for name, kind in kinds.items():
        dtype = frame[name].dtype
        if kind == "unreadable":
            if refuse is None or name in refuse:
                raise refusal(str(name), type_text(dtype))
            continue
        if out is None:
            out = frame.copy(deep=False)
        out[name] = numbers(frame[name])
    return frame if out is None else out


def entry_number(value: Any) -> float:
    """One entry of a column that holds Python objects, read as a number if it is a date (days),
    a date-time (seconds since the epoch, UTC), a duration (seconds) or a time of day (seconds since
    midnight); NaN otherwise.  For :func:`dpstats.schema.as_numbers` (a column declared numeric).

    Examples
    --------
    >>> entry_number(_dt.date(2020, 1, 1)), entry_number(_dt.timedelta(minutes=1)), entry_number("x")
    (18262.0, 60.0, nan)
    """
    if isinstance(value, (pd.Timestamp, np.datetime64)) and pd.isna(value):
        return float("nan")
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, np.timedelta64):
        value = pd.Timedelta(value)
    if isinstance(value, pd.Timestamp):
        stamp = value if value.tzinfo is not None else value.tz_localize("UTC")
        return float(stamp.value) / PER_SECOND["ns"]
    if isinstance(value, pd.Timedelta):
        return float("nan") if pd.isna(value) else float(value.value) / PER_SECOND["ns"]
    if isinstance(value, _dt.datetime):
        stamp = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        return _microseconds(stamp - _EPOCH) / PER_SECOND["us"]
    if isinstance(value, _dt.date):
        return float((value - _dt.date(1970, 1, 1)).days)
    if isinstance(value, _dt.timedelta):
        return _microseconds(value) / PER_SECOND["us"]
    if isinstance(value, _dt.time):
        since = _dt.timedelta(hours=value.hour, minutes=value.minute, seconds=value.second)
        return _microseconds(since + _dt.timedelta(microseconds=value.microsecond)) / PER_SECOND["us"]
    return float("nan")


def _microseconds(delta: _dt.timedelta) -> float:
    """A timedelta's exact integer count of microseconds, as a double."""
    return float((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def _is_temporal_entry(value: Any) -> bool:
    return isinstance(value, (_dt.date, _dt.timedelta, _dt.time, np.datetime64, np.timedelta64))


def bounds_numbers(bounds: Any) -> Any:
    """``bounds=`` with each date, date-time or duration in a pair read as a number (module docstring);
    anything else is handed back as it is.

    Examples
    --------
    >>> bounds_numbers({"day": (_dt.date(2020, 1, 1), _dt.date(2020, 12, 31)), "y": (0, 1)})
    {'day': (18262.0, 18627.0), 'y': (0, 1)}
    >>> bounds_numbers((0, 1))
    (0, 1)
    """
    if isinstance(bounds, Mapping):
        if not any(_temporal_pair(pair) for pair in bounds.values()):
            return bounds
        return {name: _pair_numbers(pair) for name, pair in bounds.items()}
    return _pair_numbers(bounds)


def bounds_read(arguments: dict[str, Any]) -> dict[str, Any]:
    """A front door's bound arguments with ``bounds=`` read by :func:`bounds_numbers` (the door, its
    checks and its printed call then see the numbers).

    Examples
    --------
    >>> bounds_read({"eps": 1.0, "bounds": (_dt.date(1970, 1, 1), _dt.date(1970, 1, 11))})
    {'eps': 1.0, 'bounds': (0.0, 10.0)}
    """
    if "bounds" not in arguments:
        return arguments
    return arguments | {"bounds": bounds_numbers(arguments["bounds"])}


def _temporal_pair(pair: Any) -> bool:
    return isinstance(pair, (tuple, list)) and len(pair) == 2 and any(_is_temporal_entry(v) for v in pair)


def _pair_numbers(pair: Any) -> Any:
    if not _temporal_pair(pair):
        return pair
    return tuple(entry_number(v) if _is_temporal_entry(v) else v for v in pair)


# ----------------------------------------------------------------------------- Arrow
def arrow_kind(arrow_type: Any) -> str | None:
    """This module's kind of an Arrow type (:func:`kind_of`); None for numbers, text, logicals and
    dictionaries, which the other rules read.

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_kind(pa.date32()), arrow_kind(pa.list_(pa.int64())), arrow_kind(pa.float64())
    ('date', 'unreadable', None)
    """
    import pyarrow.types as pt

    kinds = (
        (pt.is_date, "date"),
        (pt.is_timestamp, "datetime"),
        (pt.is_duration, "duration"),
        (pt.is_time, "time"),
    )
    for test, kind in kinds:
        if test(arrow_type):
            return kind
    if pt.is_dictionary(arrow_type):
        return "unreadable" if arrow_kind(arrow_type.value_type) == "unreadable" else None
    nested = pt.is_nested(arrow_type) or pt.is_interval(arrow_type)
    binary = pt.is_binary(arrow_type) or pt.is_large_binary(arrow_type) or pt.is_fixed_size_binary(arrow_type)
    binary = binary or (hasattr(pt, "is_binary_view") and pt.is_binary_view(arrow_type))
    return "unreadable" if nested or binary else None


def arrow_numbers(data: Any, refuse: Collection[str] | None = None) -> Any:
    """An Arrow Table or RecordBatch with each column of a date, date-time, duration or time-of-day
    type read as float64 numbers (module docstring); a column of ``refuse`` (None: every column)
    whose type has no numeric reading is refused (:func:`refusal`), the others are left as they are.
    ``data`` itself when no column needs reading.

    Examples
    --------
    >>> import pyarrow as pa, datetime
    >>> t = pa.table({"day": pa.array([datetime.date(1970, 1, 3), None])})
    >>> arrow_numbers(t).column("day").to_pylist()
    [2.0, None]
    """
    import pyarrow as pa

    kinds = [arrow_kind(field.type) for field in data.schema]
    if not any(kinds):
        return data
    arrays, fields = list(data.columns), list(data.schema)
    for i, (field, kind) in enumerate(zip(fields, kinds)):
        if kind == "unreadable":
            if refuse is None or field.name in refuse:
                raise refusal(field.name, str(field.type))
        elif kind is not None:
            column = arrays[i]
            read = _arrow_column_numbers(column)
            arrays[i] = (
                pa.chunked_array([read], type=pa.float64()) if isinstance(column, pa.ChunkedArray) else read
            )
            fields[i] = pa.field(field.name, pa.float64(), metadata=field.metadata)
    read = {field.name for field, kind in zip(data.schema, kinds) if kind not in (None, "unreadable")}
    schema = pa.schema(fields, metadata=_pandas_metadata_read(data.schema.metadata, read))
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, schema=schema)


def _pandas_metadata_read(metadata: Mapping[bytes, bytes] | None, names: Collection[str]) -> Any:
    """A Parquet file's schema metadata with the columns ``names`` described as float64 in its
    "pandas" entry: pandas wrote a ``date32[pyarrow]`` column's type there, and ``to_pandas`` would
    cast the numbers back to it (which Arrow cannot do)."""
    if not metadata or b"pandas" not in metadata or not names:
        return metadata
    described = json.loads(metadata[b"pandas"])
    for column in described.get("columns", []):
        if column.get("field_name", column.get("name")) in names:
            column.update(pandas_type="float64", numpy_type="float64", metadata=None)
    return {**metadata, b"pandas": json.dumps(described).encode()}


def _arrow_column_numbers(column: Any) -> Any:
    """One Arrow column of a date, date-time, duration or time-of-day type as a float64 array (nulls kept)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    t = column.type
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pt.is_date32(t):
        return pc.cast(column.view(pa.int32()), pa.float64())
    if pt.is_date64(t):  # milliseconds since the epoch
        return pc.divide(pc.cast(column.view(pa.int64()), pa.float64()), 86_400_000.0)
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    counts = pc.cast(column.view(width), pa.float64())
    return pc.divide(counts, PER_SECOND[t.unit])


def type_text(dtype: Any) -> str:
    """A dtype as a message names it (an Arrow-backed pandas dtype by its Arrow type).

    Examples
    --------
    >>> import pyarrow as pa
    >>> type_text(pd.ArrowDtype(pa.list_(pa.int64()))), type_text(np.dtype("float64"))
    ('list<item: int64>', 'float64')
    """
    return str(dtype.pyarrow_dtype) if isinstance(dtype, pd.ArrowDtype) else str(dtype)


def refusal(column: str, type_name: str) -> DataError:
    """The refusal of a formula variable whose type has no reading as a number or a factor.

    Examples
    --------
    >>> print(refusal("tags", "list<item: int64>"))
    column 'tags' has type list<item: int64>, ...
    """
    return DataError(
        f"column '{column}' has type {type_name}, which dpstats cannot read as a number or a factor (R's lm "
        f"refuses such a column too); convert it to numbers or text before the call (e.g. one element or "
        f"field per column, or a text label), or leave '{column}' out of the formula. Nothing was read or spent."
    )
