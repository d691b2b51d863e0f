"""Data where it lives: the one place that decides which data objects a front door accepts.

Every front door reads its ``data`` through :func:`as_data` (and ``engines.refuse_unknown``
is the check behind :func:`dpstats.api._common.declare`), so the list of
accepted types is written once, here:

=====================================================  ==========================================
``data=``                                              read as
=====================================================  ==========================================
pandas DataFrame, dict of columns                      as it is (in memory)
polars DataFrame                                       a pandas frame of the formula's columns
polars LazyFrame                                       in record batches by the polars engine
                                                       (:mod:`dpstats.engines.polars_engine`) where
                                                       the door works from sufficient statistics;
                                                       otherwise a pandas frame of the formula's
                                                       columns
pyarrow Table / RecordBatch / Dataset                  a pandas frame of the formula's columns
DuckDB relation (``duckdb.sql("select ...")``),         by the DuckDB engine
``(connection, "table")``                              (:mod:`dpstats.engines.duckdb_engine`) where
                                                       the door works from sufficient statistics;
                                                       otherwise a pandas frame of the formula's
                                                       columns
``dpstats.engines.stream(...)``, Dask, ``on_dask``     the streaming and Dask engines, as before
=====================================================  ==========================================

A door works from sufficient statistics when it passes ``statistics=True`` (dp_lm, dp_sis,
dp_pca, dp_knockoff's default route, and dp_glm at a finite eps with a numeric response:
:func:`numeric_columns`); neither a LazyFrame nor a DuckDB relation is then collected whole.

Only the columns the formula uses are read (with those named in ``levels=`` and the
door's own, e.g. vertical_glm's parties): a LazyFrame, a Dataset or a DuckDB query is asked
for those columns only (projection pushdown), so a ``pl.scan_parquet`` or a Parquet Dataset
reads no other column from disk.  The variables come from the formula and the column names
alone (:func:`dpstats.formula.formula_variables`); a formula the formula layer refuses keeps
every column, so that the door gives the same error as for a pandas frame.

Why results equal pandas' bit for bit
    polars, Arrow and (for doors that need rows) DuckDB and LazyFrame data become a pandas
    frame with the dtypes pandas itself would give the same data (float64, int64, pandas'
    ``str``, bool, Categorical), so the model frame, the statistics and every release are
    computed by the same code on the same numbers.  Only the DuckDB and polars engines compute
    in another order (SQL sums; sums of record batches), equal within floating-point tolerance.

Types and the public schema (:mod:`dpstats.schema`)
    * a polars ``Enum`` and a DuckDB ``ENUM`` declare their categories in the type: they
      become a pandas Categorical with those categories (unordered: a factor with declared
      levels, coded by treatment contrasts like R's ``factor(x, levels = ...)``; polars
      orders an Enum's categories physically, which is not R's ordered factor);
    * a polars ``Categorical`` holds the strings polars has seen (a global cache), read from
      the rows: it becomes text, whose levels are a named data-dependent step unless
      ``levels=`` declares them;
    * an Arrow dictionary column is kept as a Categorical only when the table's pandas
      metadata says pandas wrote it from a Categorical (its categories were declared);
      another dictionary holds only the values present, and becomes text;
    * Arrow and DuckDB ``DECIMAL`` columns become float64 (numbers, as the streaming
      engine reads them);
    * dates, date-times, durations and times of day become float64 numbers, as R's
      ``as.numeric`` reads them (days since 1970-01-01 for a date, seconds for the others:
      :mod:`dpstats.temporal`), on every route and in pandas frames too; a formula variable of
      a type with no such reading (a list, a struct, binary data) is refused, naming it.

narwhals is the kept library: it recognises polars, pyarrow and DuckDB objects without
importing them (``narwhals.dependencies``) and does the projection, the casts, the collect
and the conversion to pandas through one API.  Two things it does not do, and which are
done here directly: a pyarrow ``Dataset`` (not a narwhals type: read with
``Dataset.to_table(columns=...)``) and a pyarrow Table's pandas metadata (which tells a
declared Categorical from a dictionary of present values; narwhals shows both as
``Categorical``).  Nothing here imports polars, pyarrow, duckdb or narwhals until such an
object is given.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from ..errors import DataError, DPStatsError, FormulaError
from ..temporal import PER_SECOND, arrow_kind, arrow_numbers, column_kinds, read_columns, refusal

__all__ = [
    "as_data",
    "refuse_unknown",
    "is_native",
    "type_name",
    "numeric_columns",
    "column_names",
    "ACCEPTED",
    "InMemoryData",
    "Data",
]

if TYPE_CHECKING:  # the types of ``data=``, for type checkers; the optional libraries are not imported to run
    import dask.dataframe
    import duckdb
    import polars
    import pyarrow
    import pyarrow.dataset

    from .dask_engine import DaskSource
    from .duckdb_engine import DuckDBSource
    from .polars_engine import PolarsSource
    from .stream import Stream

    InMemoryData: TypeAlias = (
        pd.DataFrame
        | Mapping[str, Sequence[Any]]
        | polars.DataFrame
        | polars.LazyFrame
        | pyarrow.Table
        | pyarrow.RecordBatch
        | pyarrow.dataset.Dataset
        | duckdb.DuckDBPyRelation
        | tuple[duckdb.DuckDBPyConnection, str]
    )
    Data: TypeAlias = (
        InMemoryData | Stream | DaskSource | DuckDBSource | PolarsSource | dask.dataframe.DataFrame
    )
else:
    InMemoryData = Data = Any  # data a door reads into memory (ACCEPTED, less streams and Dask), or any

ACCEPTED = (
    "a pandas, polars (DataFrame or LazyFrame) or pyarrow (Table, RecordBatch or Dataset) data frame, "
    'a DuckDB relation (duckdb.sql("select ...")) or (connection, "table name"), '
    "dpstats.engines.stream(...), or a Dask DataFrame"
)
_NATIVE_ROOTS = ("polars", "pyarrow", "duckdb", "_duckdb")


def type_name(obj) -> str:
    """What ``obj`` is, for messages: ``"a polars.LazyFrame"``, ``"a list"``, ``"None"``.

    Examples
    --------
    >>> type_name([1, 2]), type_name(None), type_name(pd.DataFrame())
    ('a list', 'None', 'a pandas.DataFrame')
    """
    if obj is None:
        return "None"
    given = getattr(obj, "given_as", None)  # an engine source made from the user's object
    if isinstance(given, str):
        return given
    cls = type(obj)
    root = (cls.__module__ or "").split(".")[0].lstrip("_")
    name = cls.__qualname__ if root in ("", "builtins") else f"{root}.{cls.__qualname__}"
    return ("an " if name[0].lower() in "aeiou" else "a ") + name


def _root(obj) -> str:
    return (type(obj).__module__ or "").split(".")[0]


def _kind(data) -> str | None:
    """Which native type ``data`` is (None: not one of polars, pyarrow, DuckDB)."""
    root = _root(data)
    if root not in _NATIVE_ROOTS:
        return _connection_pair(data)
    from narwhals import dependencies as dep

    if dep.is_polars_dataframe(data):
        return "polars"
    if dep.is_polars_lazyframe(data):
        return "polars lazy"
    if dep.is_pyarrow_table(data):
        return "arrow"
    if dep.is_duckdb_relation(data):
        return "duckdb"
    if root == "pyarrow":
        import pyarrow as pa

        if isinstance(data, pa.RecordBatch):
            return "arrow batch"
        dataset = sys.modules.get("pyarrow.dataset")
        if dataset is not None and isinstance(data, dataset.Dataset):
            return "arrow dataset"
    return None


def _connection_pair(data) -> str | None:
    """``(duckdb connection, "table")``: a table of a DuckDB database."""
    if (
        isinstance(data, tuple)
        and len(data) == 2
        and isinstance(data[1], str)
        and _root(data[0]) in ("duckdb", "_duckdb")
        and hasattr(data[0], "table")
    ):
        return "duckdb table"
    return None


def is_native(data) -> bool:
    """True for the polars, pyarrow and DuckDB objects :func:`as_data` reads."""
    return _kind(data) is not None


def _is_engine_source(data) -> bool:
    from . import is_engine_input

    return is_engine_input(data)


def refuse_unknown(data, *, parts: bool = False) -> None:
    """Refuse, naming its type and what to do, data no door can read (nothing has been read or spent).

    ``parts``: a list or tuple of frames (one per party, vertical_glm) is accepted too.

    Examples
    --------
    >>> refuse_unknown(pd.DataFrame({"x": [1.0]}))
    >>> refuse_unknown([1, 2, 3])
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: data must be a pandas, polars ... got a list. ...
    """
    if isinstance(data, (pd.DataFrame, dict)) or _is_engine_source(data) or is_native(data):
        return
    if parts and isinstance(data, (list, tuple)):
        for part in data:
            refuse_unknown(part)
        return
    raise DataError(f"data must be {ACCEPTED}; got {type_name(data)}. {_advice(data)}")


def _advice(data) -> str:
    """What to do with an object that is not data a door reads."""
    root, name = _root(data), type(data).__name__
    if root in ("duckdb", "_duckdb") and hasattr(data, "table"):
        return (
            'Pass a relation, con.sql("select ... from t"), or the pair (con, "table name"), not the '
            "connection alone."
        )
    if root == "polars" and name == "Series":
        return "Pass a DataFrame: series.to_frame()."
    if root == "pyarrow" and name == "RecordBatchReader":
        return "Read it into a Table first (reader.read_all()), or give the files to dpstats.engines.stream(...)."
    if root == "numpy":
        return "Give the columns names: pandas.DataFrame(array, columns=[...])."
    if isinstance(data, (str, os.PathLike)):
        return f"To read a file in chunks pass dpstats.engines.stream({str(data)!r})."
    return "Convert it to one of these, e.g. a pandas.DataFrame."


def as_data(data, formula=None, *, statistics: bool = False, keep=(), parts: bool = False):
    """The data a front door reads: pandas as it is, polars/Arrow/DuckDB converted, others refused.

    Parameters
    ----------
    data : object
        What the user passed as ``data=``.
    formula : str, optional
        The door's formula: only the columns it uses (and ``keep``) are read.
    statistics : bool
        The door's route works from sufficient statistics (engine inputs welcome): a DuckDB
        relation then stays in DuckDB (:func:`dpstats.engines.duckdb_engine.on_duckdb`) and a
        polars LazyFrame is read in record batches (:func:`dpstats.engines.polars_engine.on_polars`);
        otherwise either is read into pandas.
    keep : iterable
        Further columns to keep: names, or mappings and lists of names (e.g. ``levels=``,
        vertical_glm's parties), ``None`` entries ignored.
    parts : bool
        A list or tuple of frames (one per party) is accepted, each converted as a whole.

    Returns
    -------
    pandas.DataFrame, dict, an engine source, None, or (``parts``) a list of frames.
        A pandas frame is handed back as it is, but for its columns of a date, date-time or
        duration dtype, read as numbers (:mod:`dpstats.temporal`).
        ``None`` is handed back as it is: a door without data says so in its own words.

    Raises
    ------
    DataError
        A type no door reads (its type is named, and what to do); nothing has been spent.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"y": [1.0, 2.0], "x": [0.5, 1.5], "unused": ["a", "b"]})
    >>> as_data(t, "y ~ x").columns.tolist()
    ['y', 'x']
    """
    if isinstance(data, pd.DataFrame):  # dates as numbers; a list column the formula uses refused
        return read_columns(data, _wanted(formula, list(data.columns), keep)) if column_kinds(data) else data
    if data is None or isinstance(data, dict) or _is_engine_source(data):
        return data
    kind = _kind(data)
    if kind is None:
        if parts and isinstance(data, (list, tuple)) and _connection_pair(data) is None:
            return [as_data(part) for part in data]
        refuse_unknown(data)
    if kind in ("duckdb", "duckdb table"):
        from .duckdb_engine import on_duckdb

        source = on_duckdb(data)  # a table of that name must exist (a clear error otherwise)
        if statistics:
            return source
        data, kind = source.relation, "duckdb"
    if kind == "polars lazy" and statistics and hasattr(data, "collect_batches"):  # older polars: into pandas
        from .polars_engine import on_polars

        return on_polars(data)
    with native_errors(type_name(data), library=_root(data).lstrip("_")):
        names = _columns(data, kind)
        wanted = _wanted(formula, names, keep)
        return _to_pandas(data, kind, wanted)


def numeric_columns(data, names: Sequence[str]) -> bool:
    """Whether each of ``names`` is a numeric column of a polars LazyFrame or a DuckDB relation or
    table, from its schema alone (no row is read); True for any other data.

    dp_glm reads such data in batches only when its response is numeric (as the streaming engine
    needs it); a text or logical response, whose levels code it, is read into pandas.

    Examples
    --------
    >>> import polars as pl
    >>> lazy = pl.LazyFrame({"y": [0, 1], "x": [0.5, 1.5], "s": ["a", "b"]})
    >>> numeric_columns(lazy, ["y", "x"]), numeric_columns(lazy, ["s"]), numeric_columns(lazy, ["I(y > 0)"])
    (True, False, False)
    """
    kind = _kind(data)
    if kind not in ("polars lazy", "duckdb", "duckdb table"):
        return True
    import narwhals.stable.v2 as nw

    try:
        native = data[0].table(data[1]) if kind == "duckdb table" else data
        schema = nw.from_native(native).collect_schema()
    except Exception:  # noqa: BLE001 - no such table: the door says so, in its own words
        return True
    return all(name in schema and schema[name].is_numeric() for name in names)


def column_names(data) -> list[str]:
    """The column names of ``data`` as given to a front door, from its schema: no row is read.

    Every route: pandas, a dict of columns, polars (eager or lazy), Arrow, DuckDB, streamed files,
    Dask, and (vertical_glm) a list of frames, whose names are taken together.  What no door reads
    has none.  The check of ``bounds=`` names (:meth:`dpstats.schema.Schema.check_bound_names`)
    reads them, so that a bound for a column the formula does not use is allowed whether or not
    the column is read.

    Examples
    --------
    >>> import pyarrow as pa
    >>> column_names(pa.table({"y": [1.0], "x": [0.5], "unused": ["a"]}))
    ['y', 'x', 'unused']
    """
    if isinstance(data, (pd.DataFrame, dict)):
        return [str(c) for c in data]
    if _is_engine_source(data):
        from . import as_source

        return [str(c) for c in as_source(data).schema_frame().columns]
    kind = _kind(data)
    if kind is None:
        parts = data if isinstance(data, (list, tuple)) else ()
        return [
            c
            for part in parts
            if isinstance(part, pd.DataFrame) or is_native(part)
            for c in column_names(part)
        ]
    with native_errors(type_name(data)):
        return [str(c) for c in _columns(data, kind)]


@contextmanager
def native_errors(what: str, library: str | None = None) -> Iterator[None]:
    """A polars, pyarrow or DuckDB failure while reading (a query that fails, a value its cast
    refuses, a file that is missing) as the :class:`~dpstats.errors.DataError` of :func:`reading_failed`.

    Only the exceptions of those libraries (and of narwhals, which raises polars' errors under
    its own name) are read as the data's; any other is dpstats' own and passes through unchanged.
    ``library`` names the library in the message (default: the exception's own).  The library's
    message is not repeated (DuckDB's "Original Line:" of a CSV file quotes a row), and the error
    is raised ``from None``; the analyst, who may see the data, finds the original on ``__context__``.
    """
    try:
        yield
    except DPStatsError:
        raise
    except Exception as exc:
        if _root(exc) not in (*_NATIVE_ROOTS, "narwhals"):
            raise
        raise reading_failed(what, library or _root(exc).lstrip("_"), exc) from None


def reading_failed(what: str, library: str, exc: BaseException) -> DataError:
    """The error for a failure while ``library`` evaluates the user's data ``what`` (its query, a
    cast, a scan, a Dask graph): the library and the exception's type, never its message.

    The library's message may quote a value of the rows (``Could not convert string 'x' to
    DOUBLE``), a count or a row number, and a message is an output channel (docs/architecture.md,
    "Privacy conventions"): it is not repeated, and the caller raises this ``from None`` so that
    the traceback does not print it either.

    Examples
    --------
    >>> str(reading_failed("a polars.LazyFrame", "polars", ValueError("could not parse 'x'")))[:70]
    'reading a polars.LazyFrame failed: polars could not evaluate the query'
    """
    return DataError(
        f"reading {what} failed: {library} could not evaluate the query or cast a value in it "
        f"({type(exc).__name__}); run the query or frame on its own to see why (its message may show "
        "values of the rows, so dpstats does not repeat it). Nothing was spent."
    )


# ---------------------------------------------------------------------------- columns
def _columns(data, kind: str) -> list[str]:
    """Column names, without reading rows."""
    if kind in ("arrow dataset", "arrow batch"):  # narwhals reads neither
        return list(data.schema.names)
    if kind == "duckdb table":
        con, table = data
        return list(con.table(table).columns)
    if kind == "duckdb":
        return list(data.columns)
    import narwhals.stable.v2 as nw

    frame = nw.from_native(data)
    return list(frame.collect_schema().names())


def _flat(keep) -> list[str]:
    out: list[str] = []
    for item in keep or ():
        if item is None:
            continue
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            out.extend(str(k) for k in item)
        elif isinstance(item, Iterable):
            out.extend(_flat(item))
    return out


def _wanted(formula, names: list[str], keep) -> list[str]:
    """The columns to read, in the data's order: the formula's variables and ``keep``.

    A formula the formula layer cannot read (or none), or one that names a column the data
    lacks, keeps every column, so that the door raises exactly the error it raises for a pandas
    frame (a misspelt column's suggestions are drawn from all the columns).
    """
    if not isinstance(formula, str):
        return names
    from ..formula import formula_variables

    empty = pd.DataFrame({c: pd.Series([], dtype=float) for c in names})
    one_sided = formula.lstrip().startswith("~")
    try:
        used = formula_variables(formula, empty, one_sided=one_sided)
    except (DPStatsError, ValueError, TypeError, KeyError, SyntaxError):
        return names
    if _names_a_missing_column(formula, empty, one_sided):
        return names
    used_set = set(used) | set(_flat(keep))
    return [c for c in names if c in used_set]


def _names_a_missing_column(formula: str, empty: pd.DataFrame, one_sided: bool) -> bool:
    """Whether ``formula`` names a column ``empty`` lacks, by the check the engines make on no rows
    (:func:`dpstats.engines.layout.used_variables`)."""
    from ..formula import expression_variables, rhs_variables, simple_rhs_tokens, split_formula

    try:
        lhs, rhs = split_formula(formula, one_sided)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # functions of the rows (scale, ns) on no rows
            if lhs and lhs not in empty.columns:
                expression_variables(lhs, empty)
            rhs_variables(simple_rhs_tokens(rhs), rhs, empty, lhs)
    except FormulaError as exc:
        return hasattr(exc, "column")  # set by the unknown-name error alone
    except Exception:  # noqa: BLE001 - a function that needs rows failed on none: the door evaluates it
        return False
    return False


# ---------------------------------------------------------------------------- conversion
def _to_pandas(data, kind: str, columns: list[str]) -> pd.DataFrame:
    if kind == "arrow dataset":
        return _arrow_to_pandas(data.to_table(columns=columns))
    if kind == "arrow batch":
        import pyarrow as pa

        return _arrow_to_pandas(pa.Table.from_batches([data]).select(columns))
    if kind == "arrow":
        return _arrow_to_pandas(data.select(columns))
    if kind == "duckdb table":
        con, table = data
        data = con.table(table)
    if kind in ("duckdb", "duckdb table"):
        from .duckdb_engine import read_relation

        data = read_relation(data, columns)  # dates and durations as numbers, in DuckDB
    return _narwhals_to_pandas(data, columns)


def projected(data, columns: list[str], refuse=None):
    """polars (eager or lazy) or DuckDB ``data`` as a narwhals frame of ``columns``, cast as the module
    docstring says (a polars ``Categorical`` as text, decimals as float64, dates and times as numbers),
    and its schema; no row is read.  The frame a door reads into pandas, and the query a LazyFrame's
    batches come from (:mod:`dpstats.engines.polars_engine`).  ``refuse``: the columns refused when
    their type has no reading as a number or a factor (None: every column); another keeps its type."""
    import narwhals.stable.v2 as nw

    frame = nw.from_native(data)
    schema = frame.collect_schema()
    exprs = []
    for c in columns:
        dtype = schema[c]
        if isinstance(dtype, nw.Categorical) or dtype == nw.Categorical:
            exprs.append(nw.col(c).cast(nw.String))  # categories read from the rows: text
        elif isinstance(dtype, nw.Decimal) or dtype == nw.Decimal:
            exprs.append(nw.col(c).cast(nw.Float64))
        elif isinstance(dtype, (nw.List, nw.Array, nw.Struct, nw.Binary)):
            if refuse is None or c in refuse:
                raise refusal(c, str(dtype))
            exprs.append(nw.col(c))
        elif isinstance(dtype, (nw.Date, nw.Datetime, nw.Duration, nw.Time)):
            exprs.append(_temporal_expression(nw, c, dtype))
        else:
            exprs.append(nw.col(c))
    return frame.select(exprs), schema


def _narwhals_to_pandas(data, columns: list[str]) -> pd.DataFrame:
    """polars (eager or lazy) and DuckDB: projected, cast as the module docstring says, then pandas."""
    import narwhals.stable.v2 as nw

    frame, schema = projected(data, columns)
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect(backend="pyarrow" if frame.implementation.is_duckdb() else None)
    if frame.implementation.is_pyarrow():
        return _arrow_to_pandas(frame.to_native(), dictionaries_declared=True)
    out = frame.to_pandas()
    return _unordered_enums(out, [c for c in columns if isinstance(schema[c], nw.Enum)])


def _temporal_expression(nw, column: str, dtype):
    """A polars date, date-time, duration or time of day as numbers (:mod:`dpstats.temporal`): its
    integer count (days; or units of its time unit, in UTC for a zoned date-time; a polars Time counts
    nanoseconds since midnight) as a double, divided by the units in a second."""
    if isinstance(dtype, nw.Date):
        return nw.col(column).cast(nw.Int32).cast(nw.Float64)
    unit = "ns" if isinstance(dtype, nw.Time) else dtype.time_unit
    return nw.col(column).cast(nw.Int64).cast(nw.Float64) / PER_SECOND[unit]


def _unordered_enums(frame: pd.DataFrame, enums: list[str]) -> pd.DataFrame:
    """polars marks an Enum's Categorical ordered (physical order); the schema reads it as a factor."""
    for c in enums:
        if isinstance(frame[c].dtype, pd.CategoricalDtype) and frame[c].dtype.ordered:
            frame[c] = frame[c].cat.as_unordered()
    return frame


def _arrow_to_pandas(table, *, dictionaries_declared: bool = False, refuse=None) -> pd.DataFrame:
    """An Arrow table as pandas: decimals as float64, undeclared dictionaries as text, dates, date-times,
    durations and times of day as numbers (:func:`dpstats.temporal.arrow_numbers`).

    ``dictionaries_declared``: the dictionaries hold a declared type's categories (DuckDB's
    ENUM): kept as Categoricals, unordered.  ``refuse``: the columns refused when their type has
    no reading as a number or a factor (None: every column); another such column keeps its Arrow
    type (a ``pandas.ArrowDtype``), so that a schema frame shows it to the engines' layout.
    """
    import pyarrow as pa

    table = arrow_numbers(table, refuse)
    declared = dictionaries_declared or _pandas_categoricals(table)
    fields = []
    for field in table.schema:
        t = field.type
        if pa.types.is_decimal(t):
            fields.append((field.name, pa.float64()))
        elif pa.types.is_dictionary(t) and not (declared is True or field.name in declared):
            fields.append((field.name, t.value_type))
        else:
            fields.append((field.name, None))
    if any(new is not None for _, new in fields):
        columns = [
            table.column(name) if new is None else table.column(name).cast(new) for name, new in fields
        ]
        table = pa.Table.from_arrays(columns, names=table.column_names, metadata=table.schema.metadata)
    frame = table.to_pandas(types_mapper=_unreadable_as_arrow)
    if dictionaries_declared:
        for c in frame.columns:
            if isinstance(frame[c].dtype, pd.CategoricalDtype) and frame[c].dtype.ordered:
                frame[c] = frame[c].cat.as_unordered()
    return frame


def _unreadable_as_arrow(arrow_type):
    """A type with no reading as a number or a factor keeps its Arrow type in pandas (None: pandas' own)."""
    return pd.ArrowDtype(arrow_type) if arrow_kind(arrow_type) == "unreadable" else None


def _pandas_categoricals(table) -> set[str]:
    """Columns the table's pandas metadata marks as written from a pandas Categorical."""
    meta = table.schema.pandas_metadata or {}
    return {
        entry.get("field_name")
        for entry in meta.get("columns", [])
        if entry.get("pandas_type") == "categorical"
    }
