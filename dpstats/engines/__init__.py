"""Engines: the sufficient-statistics pass over data in memory, in files, or on Dask.

The methods of dpstats consume sufficient statistics — n, Xᵀy, XᵀX, column
sums, yᵀy, max-abs values (docs/architecture.md, "One call, step by step") — so data that does not fit in memory
needs only a different way of computing them, never a different method.  One
interface, three engines:

``data=<pandas DataFrame>``
    In memory (the default): :func:`dpstats.formula.model_frame` on the whole
    frame, then one chunked pass (:func:`dpstats.stats.cross_products`).
``data=dpstats.engines.stream("file.parquet", chunk_rows=100_000)``
    Streaming: Parquet or CSV files read with pyarrow in chunks, memory bounded
    by the chunk size: at most rows x columns x 8 bytes x 5 chunks in flight
    (rows = max(chunk_rows, Parquet row-group rows); :func:`stream`); Parquet
    with a plain numeric design and no XᵀX is read by columns of a row group,
    2 MiB or one column at a time (max(row-group rows x 8 bytes, 2 MiB) x 10).  A bare path is *not* accepted as data:
    the ``stream()`` call is where chunk size and factor levels are declared.
``data=<dask DataFrame>`` or ``data=dpstats.engines.on_dask(df, client=client)``
    Dask: one task per partition on a ``distributed`` cluster or the local
    scheduler (:func:`on_dask`).
``data=duckdb.sql("select ...")``, ``(connection, "table")`` or ``dpstats.engines.on_duckdb(...)``
    DuckDB: plain numeric designs summed inside DuckDB by one SQL query (the rows
    never reach Python), other designs and further passes streamed as Arrow record
    batches (:mod:`dpstats.engines.duckdb_engine`).
``data=pl.scan_parquet(...)`` (a polars LazyFrame) or ``dpstats.engines.on_polars(...)``
    polars: the query run by polars' streaming engine for each pass and read in
    record batches, never collected whole (:mod:`dpstats.engines.polars_engine`).

polars DataFrames and pyarrow frames (and LazyFrames and DuckDB relations given to
a door that needs the rows) are read into pandas, only the formula's columns, by
:mod:`dpstats.engines.adapter`, the one module that decides which data a front
door accepts (:func:`as_data`, :func:`refuse_unknown`).

Every engine applies the formula chunk by chunk with the same terms, names and
factor levels as the whole frame would give (levels declared with ``levels=``
or read in a first pass, a named data-dependent step), applies the schema's
rule for missing values chunk by chunk (:mod:`dpstats.schema`: public fills or
rows dropped, never counted in a message), refuses a chunk whose schema differs from the first
(:class:`~dpstats.errors.DataError`), and merges chunk statistics in a fixed
order, so results equal the in-memory engine's up to floating-point summation
order.  Front doors get all of this through :func:`sufficient_statistics`.  Every pass of one
call reads the same rows: the files a stream (or ``on_dask(path)``) reads are fingerprinted at
the call's first pass and a change is refused before the next pass reads them
(:mod:`dpstats.engines.fingerprint`); a later pass of :class:`RowPasses` that gives another
number of rows is refused too.
"""

from __future__ import annotations

import copy
import operator
import os
from contextlib import nullcontext
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError, DPStatsError, FormulaError
from ..formula import (
    INTERCEPT,
    ModelFrame,
    declares_levels,
    factor_columns,
    factor_terms,
    finish_checks,
    model_frame,
    names_offset,
    raise_constant,
)
from ..geometry import Box, clip_response, clip_rows_l2, maxabs_box
from ..privacy.statement import DataDependence
from ..schema import PublicN, Schema
from ..stats import CrossStats, RowClippedGram, cross_products, row_clipped_gram
from .accumulate import EngineStats, Transform, array_statistics, merge
from .adapter import (
    Data,
    InMemoryData,
    as_data,
    column_names,
    is_native,
    numeric_columns,
    refuse_unknown,
    type_name,
)
from .dask_engine import DaskSource, is_dask_collection, on_dask
from .fingerprint import CallPasses, one_call
from .duckdb_engine import DuckDBSource, on_duckdb
from .polars_engine import PolarsSource, on_polars
from .layout import Layout, build_layout, with_source_levels
from .stream import CHUNK_ROWS, CHUNKS_IN_FLIGHT, COLUMN_ROUTE_COPIES, Stream, read_with_file_types, stream

__all__ = [
    "offset_response",
    "unfilled_variables",
    "refuse_private_n",
    "Data",
    "InMemoryData",
    "stream",
    "on_dask",
    "on_duckdb",
    "on_polars",
    "as_data",
    "numeric_columns",
    "column_names",
    "refuse_unknown",
    "is_native",
    "type_name",
    "as_source",
    "is_engine_input",
    "require_rows",
    "sufficient_statistics",
    "frame_and_cross_products",
    "row_passes",
    "RowPasses",
    "one_call",
    "ChunkedModelFrame",
    "EngineStats",
    "Stream",
    "DaskSource",
    "DuckDBSource",
    "PolarsSource",
    "merge",
    "CHUNK_ROWS",
    "CHUNKS_IN_FLIGHT",
    "COLUMN_ROUTE_COPIES",
]


@dataclass(repr=False, eq=False)
class ChunkedModelFrame(ModelFrame):
    """A model frame whose rows were never held in memory together.

    It has the names, terms, factor levels, response, n and rows dropped of the
    whole data, but no design matrix: reading ``.X`` or ``.y`` raises a
    :class:`~dpstats.errors.DataError` (the method needs raw rows, which the
    engine does not keep).
    """

    n_rows: int = 0
    engine: str = "stream"
    engine_steps: list[tuple[str, str]] = field(default_factory=list)

    @property
    def X(self) -> np.ndarray:
        raise DataError(
            f"this analysis needs the rows of the design, but the data come from the "
            f"{self.engine} engine, which keeps only sufficient statistics; load the data "
            "into a pandas DataFrame, or use a method that works from statistics."
        )

    @X.setter
    def X(self, value: np.ndarray) -> None:
        self._p = value.shape[1]

    @property
    def y(self):
        if self.response is None:
            return None
        return self.X  # raises: the response rows are not kept either

    @y.setter
    def y(self, value) -> None:
        pass

    @property
    def n(self) -> int:
        return self.n_rows

    @property
    def p(self) -> int:
        return self._p

    def __repr__(self) -> str:
        return (
            f"ChunkedModelFrame(formula={self.formula!r}, engine={self.engine!r}, n={self.n_rows}, "
            f"p={self._p}, n_dropped={self.n_dropped})"
        )


#: the engines' own sources: what :func:`as_source` passes through and :func:`is_engine_input` accepts
_SOURCES = (Stream, DaskSource, DuckDBSource, PolarsSource)


def is_engine_input(data) -> bool:
    """True for data an engine other than in-memory must read (stream, Dask, DuckDB or polars source,
    a path)."""
    return isinstance(data, (*_SOURCES, str, os.PathLike)) or (is_dask_collection(data))


def require_rows(data, door: str, why: str, instead: str = "") -> None:
    """Refuse, before anything is read or spent, streamed, Dask or DuckDB data for a door that needs
    the rows in memory: ``door`` names it, ``why`` says what visits the rows, ``instead`` what the
    user may do other than loading the data.

    Examples
    --------
    >>> import pandas as pd
    >>> require_rows(pd.DataFrame({"x": [1.0]}), "dp_gmm", "clustering visits each row")  # in memory: fine
    """
    if not is_engine_input(data) or isinstance(data, (str, os.PathLike)):  # a path: as_source says how
        return
    other = f"; or {instead}" if instead else ""
    raise DataError(
        f"{door} needs the rows in memory ({why}), but data is {type_name(data)}, which is read in chunks "
        "and keeps only sufficient statistics. Load it into a pandas DataFrame (a random subsample if it "
        f"does not fit){other}. Nothing was read or spent."
    )


def unfilled_variables(data, formula, schema: Schema) -> list[str]:
    """The formula's numeric variables without a public fill in ``schema`` (:meth:`Schema.unfilled`),
    from the data's column names and dtypes alone: no row is read.  Data or a formula a door refuses
    for other reasons give none (the door's own check speaks); a list of frames (vertical_glm's
    parties) is read as their columns side by side.

    Raises
    ------
    PrivacyParameterError
        A ``bounds=`` key that is no column of the data misspells one of them (``"WT"`` for ``wt``):
        named first, before any refusal of the variables themselves (:meth:`Schema.refuse_misspelt_bounds`).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [0.5], "x": [1.0], "z": [2.0]})
    >>> unfilled_variables(df, "y ~ x + log(z)", Schema.declare(bounds={"y": (0, 1), "x": (0, 1)}))
    ['z']
    """
    from ..formula import formula_variables

    if not isinstance(formula, str):
        return []
    try:
        empty, schema = _schema_frame(data, schema)
        empty = schema.read_numeric(empty)
        names = formula_variables(formula, empty, one_sided=formula.lstrip().startswith("~"))
        unfilled = schema.unfilled(empty, names)
    except (DPStatsError, ValueError, TypeError, KeyError, AttributeError, SyntaxError):
        # the door refuses such data or formula itself, in its own words
        return []
    schema.refuse_misspelt_bounds(unfilled, list(empty.columns))
    return unfilled


def _schema_frame(data, schema: Schema) -> tuple[pd.DataFrame, Schema]:
    """``data``'s columns and dtypes as an empty frame (no row read; a list of frames, vertical_glm's
    parties, side by side), and ``schema`` with the levels a streamed source declares."""
    if is_engine_input(data):
        source = as_source(data)
        empty = source.schema_frame()
        schema = with_source_levels(schema, source.levels, empty.columns)
    elif isinstance(data, (list, tuple)):
        parts = [p.iloc[:0] for p in data if isinstance(p, pd.DataFrame)]
        empty = pd.concat(parts, axis=1) if parts else pd.DataFrame()
        empty = empty.loc[:, ~empty.columns.duplicated()]
    else:
        empty = pd.DataFrame(data).iloc[:0] if isinstance(data, dict) else data.iloc[:0]
    return empty.rename(columns=str), schema


def refuse_undeclared_types(schema: Schema, data, formula) -> None:
    """Under ``strict=True`` on a private call, refuse (before anything is read or spent) what a
    variable numeric by declaration cannot serve: a comparison of it with text in the formula, contrasts
    given for it (``data.attrs["contrasts"]``, R's ``contrasts =``), a binomial response without a
    declaration (:meth:`~dpstats.schema.Schema.refuse_undeclared`).  From the arguments, the formula and
    the data's column names and dtypes only.  Data a door refuses for other reasons gives none."""
    from ..formula import text_comparisons

    if not (schema.strict and schema.private) or not isinstance(formula, str):
        return
    try:
        empty, schema = _schema_frame(data, schema)
    except (DPStatsError, ValueError, TypeError, KeyError, AttributeError):
        return  # the door refuses such data itself, in its own words
    frames = data if isinstance(data, (list, tuple)) else [data]
    contrasts = [k for f in frames for k in (getattr(f, "attrs", None) or {}).get("contrasts") or {}]
    schema.refuse_undeclared(empty, text_comparisons(formula), contrasts)


def refuse_private_n(need: PublicN | None, schema: Schema, data, formula) -> None:
    """Refuse, before any row is read, a private call whose schema could drop rows where the method's
    release needs the public n (``need``; None: it does not): ``na_action="omit"``, or a variable without a
    public fill, named with its fix (a misspelt ``bounds=`` key first, then ``levels=`` for a factor term of
    a numeric column, else bounds).  Under ``strict=True`` the step of dropping rows that miss a variable
    without a public fill is refused here too, whatever the method, in the words the frame would use: a
    check of the rows left (too few complete rows) must not speak first, for whether it fires depends on
    the rows (an object column of text is numeric by declaration, every entry missing; its neighbour with
    numbers is not).  From the arguments and the data's column names and types only."""
    refuse_undeclared_types(schema, data, formula)  # strict's declared types first
    if need is None and not (schema.strict and schema.private):
        return
    if need is not None:
        need.refuse_omit(schema)
    unfilled = unfilled_variables(data, formula, schema)
    if need is not None:
        need.refuse_unfilled(schema, unfilled, factor_terms(formula))
    if schema.strict and schema.private:  # a response read as a factor has its own refusal (its classes)
        for step, fix in schema.dropped_steps([v for v in unfilled if v not in schema.factor_response]):
            DataDependence(strict=True).add(step, fix=fix)  # raises: strict's refusal of the step


def as_source(data):
    """The engine source for ``data``: a Stream, a DaskSource, a DuckDBSource or a PolarsSource (a Dask
    collection, a DuckDB relation and a polars LazyFrame are wrapped)."""
    if isinstance(data, _SOURCES):
        return data
    if is_dask_collection(data):
        return on_dask(data)
    if isinstance(data, (str, os.PathLike)):
        raise DataError(
            f"data is a path ({str(data)!r}); to read a file in chunks pass "
            f"data=dpstats.engines.stream({str(data)!r}, chunk_rows=100_000), or load it with "
            "pandas.read_parquet / read_csv if it fits in memory."
        )
    refuse_unknown(data)
    source = as_data(data, statistics=True)  # a DuckDB relation or a LazyFrame becomes a source
    if isinstance(source, (DuckDBSource, PolarsSource)):
        return source
    raise DataError(
        f"{type_name(data)} is read in memory, not by a chunked engine; pass it as data= to a front door "
        "(or to sufficient_statistics)."
    )


BoxArg = Box | None | Callable[[ModelFrame], tuple[Box | None, Box | None]]


def sufficient_statistics(
    formula: str,
    data,
    *,
    boxes: Callable[[ModelFrame], tuple[Box | None, Box | None]] | None = None,
    gram: bool = True,
    row_bound: float | None = None,
    row_norms: bool = False,
    response_clip: float | None = None,
    drop_intercept: bool = True,
    one_sided: bool = False,
    min_rows: int = 2,
    check_constant: bool = False,
    progress: bool | None = None,
    schema: Schema | None = None,
    ranges_only: bool = False,
) -> tuple[ModelFrame, EngineStats]:
    """Model frame and sufficient statistics of ``formula`` on any data, in one pass.

    Parameters
    ----------
    formula : str
        R-style formula, as for :func:`dpstats.formula.model_frame`.
    data : pandas.DataFrame, Stream, DaskSource, dask DataFrame, or any data :func:`as_data` reads
        In-memory data, :func:`stream`, :func:`on_dask`, :func:`on_duckdb` or :func:`on_polars`
        sources; polars DataFrames and pyarrow frames (read into pandas: the formula's columns),
        DuckDB relations (the DuckDB engine), polars LazyFrames (the polars engine).
    boxes : callable, optional
        ``boxes(mf) -> (x_box, y_box)``: declared bounds resolved for the
        frame's columns (called before the pass; it may raise).  Columns and y
        are then mapped onto [−1, 1] and clipped.
    gram : bool
        Also compute XᵀX.
    row_bound : float, optional
        Rows of the (mapped) design with l2 norm above it are scaled back onto
        the ball before summing (the knockoff filter's Assumption 3).
    row_norms : bool
        Record the largest row norm (``EngineStats.row_norm_max``).
    response_clip : float, optional
        Finite responses beyond [−response_clip, response_clip] are clipped to it (not mapped).
    drop_intercept, one_sided : bool
        As for ``model_frame``.
    min_rows : int
        Fewer complete rows is a :class:`~dpstats.errors.DataError`.
    check_constant : bool
        A constant design column is a :class:`~dpstats.errors.DataError` (off by
        default: a DP analysis must not refuse on a fact read from the rows).
    progress : bool, optional
        tqdm bars during the passes; default: as the source was created
        (``stream(..., progress=)``).  In-memory data has no bar (one pass of
        a fraction of a second per 10^7 values).
    schema : dpstats.Schema, optional
        Declared levels and the rule for missing values (:mod:`dpstats.schema`);
        without it, levels come from the data and incomplete rows are dropped.
    ranges_only : bool
        Only n, the raw per-column min/max and max |y| (no sum or product of raw values, which one
        huge value could overflow): a first pass for boxes read from the data.

    Returns
    -------
    mf : ModelFrame
        The whole frame for in-memory data; a :class:`ChunkedModelFrame`
        (names, terms, n, rows dropped, data-dependent steps, no rows) otherwise.
    stats : EngineStats
        ``stats.cross`` holds n, Xᵀy, XᵀX, sums, yᵀy, max-abs, raw min/max.

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=200, d=10, random_state=0)
    >>> mf, st = dp.engines.sufficient_statistics("y ~ .", df)
    >>> st.cross.xtx.shape, st.n
    ((10, 10), 200)
    """
    from threadpoolctl import threadpool_limits

    # chunk-sized products (XᵀX of 10^5 × p) are fastest on one BLAS thread; more threads
    # contend with the reader's and the fused kernel's threads
    with threadpool_limits(limits=1, user_api="blas"):
        return _sufficient_statistics(
            formula,
            data,
            boxes,
            Transform(
                gram=gram,
                row_bound=row_bound,
                row_norms=row_norms,
                y_clip=response_clip,
                ranges_only=ranges_only,
            ),
            drop_intercept,
            one_sided,
            min_rows,
            check_constant,
            progress,
            schema,
        )


def offset_response(mf: ModelFrame, stats: EngineStats, method: str) -> EngineStats:
    """The statistics of a least-squares fit with ``offset()``: the response replaced by y − offset, as R's
    ``lm`` regresses y − offset on the design (``lm.fit(x, y - offset)``); without offset(), ``stats``.

    Non-private (eps = inf: a private fit refuses offset() before reading the data).  The response is
    clipped to its box first, as without an offset, then the offset subtracted; the box of y − offset is
    its range over the rows.  Data in memory only: a chunked engine's passes do not carry the offset.

    Examples
    --------
    >>> df = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [1.0, 2, 4, 5], "o": [1.0, 1, 2, 2]})
    >>> mf, st = sufficient_statistics("y ~ x + offset(o)", df, gram=True, drop_intercept=False)
    >>> float(offset_response(mf, st, "dp_lm").cross.y_sum)  # Σ (y − o), no boxes: the raw values
    6.0
    """
    if isinstance(mf, ChunkedModelFrame):
        if names_offset(mf.formula):
            raise FormulaError(
                f"{method} fits offset() ('{mf.formula}') on data in memory only: the {mf.engine} engine's "
                "passes do not carry it. Load the data into a pandas DataFrame, or fit the response minus the "
                "offset as a column of its own. Nothing was spent."
            )
        return stats
    if mf.offset is None:
        return stats
    x_box, y_box = stats.boxes
    y = (mf.y if y_box is None else np.clip(mf.y, y_box.lo[0], y_box.hi[0])) - mf.offset
    lo, hi = float(y.min()), float(y.max())
    box = None if y_box is None else Box(np.array([lo]), np.array([hi if hi > lo else lo + 1.0]))
    out = array_statistics(mf.X, y, Transform(x_box=x_box, y_box=box, gram=stats.cross.xtx is not None))
    out.cross.n_clipped = stats.cross.n_clipped  # the design's and the response's, against their boxes
    out.n_dropped, out.n_filled, out.boxes = stats.n_dropped, stats.n_filled, (x_box, box)
    return out


def _sufficient_statistics(
    formula, data, boxes, transform, drop_intercept, one_sided, min_rows, check_constant, progress, schema
):
    data = as_data(data, formula, statistics=True, keep=[schema.levels] if schema is not None else ())
    if isinstance(data, (pd.DataFrame, dict)):
        mf = model_frame(
            formula,
            data,
            drop_intercept=drop_intercept,
            one_sided=one_sided,
            min_rows=min_rows,
            check_constant=check_constant,
            schema=schema,
        )
        transform.x_box, transform.y_box = boxes(mf) if boxes is not None else (None, None)
        stats = array_statistics(mf.X, mf.y, transform)
        stats.n_dropped, stats.n_filled = mf.n_dropped, mf.n_filled
        stats.boxes = (transform.x_box, transform.y_box)
        return mf, stats

    def first_pass():
        source, layout, mf = _prepare(formula, data, drop_intercept, one_sided, progress, schema)
        transform.x_box, transform.y_box = boxes(mf) if boxes is not None else (None, None)
        return source, layout, mf, source.statistics(layout, transform)

    source, layout, mf, stats = read_with_file_types(as_source(data), first_pass)
    _check_min_rows(stats, min_rows, formula, source)
    if check_constant:
        constant = np.flatnonzero(stats.cross.x_min == stats.cross.x_max)
        exempt = factor_columns(layout.names, layout.terms, layout.prototype.factor_levels) | {INTERCEPT}
        raise_constant([layout.names[j] for j in constant if layout.names[j] not in exempt])
    mf.n_rows, mf.n_dropped, mf.n_filled = stats.n, stats.n_dropped, stats.n_filled
    stats.boxes = (transform.x_box, transform.y_box)
    return mf, stats


def _prepare(formula, data, drop_intercept, one_sided, progress, schema):
    """The engine source, the layout every chunk must agree on, and the frame without rows (n still 0).

    Where n is private (a private call under add/remove) the source's progress bars show no number:
    rows, chunks and partitions all count n (:func:`dpstats.engines.stream._bar`).
    """
    source = as_source(data)
    shown = source.progress if progress is None else bool(progress)
    counted = schema is None or not schema.private or schema.neighbouring != "add_remove"
    if (shown, counted) != (source.progress, source.counted):
        source = copy.copy(source)
        source.progress, source.counted = shown, counted
    layout = build_layout(
        formula,
        source.schema_frame(),
        drop_intercept=drop_intercept,
        one_sided=one_sided,
        declared=source.levels,
        first_pass=source.distinct_values,
        what=source.what,
        rules=schema,
    )
    mf = _chunked_frame(layout, source, n_rows=0, n_dropped=0)
    if schema is not None:
        # bounds={"log(y)": ...} names the response
        design = mf.names + ([mf.response] if mf.response else [])
        schema.check_bound_names(layout.columns, design, list(mf.factor_levels), declares_levels)
        frame = layout.code(source.schema_frame().rename(columns=str), source.what)
        mf.schema_steps = schema.missing_steps(frame, layout.variables)
        mf.n_data_dependent = bool(mf.schema_steps)
        mf.schema_rule = schema.rule_for(frame, layout.variables)
    return source, layout, mf


def _check_min_rows(stats: EngineStats, min_rows: int, formula: str, source) -> None:
    if stats.n < min_rows:
        raise DataError(
            f"formula '{formula}' leaves fewer than {min_rows} complete rows in {source.what}, the least "
            'this analysis needs; supply more rows, or declare bounds (na_action="fill") so that no row is dropped.'
        )


class RowPasses:
    """Further passes over the rows of one formula's model frame, each reducing every chunk with a function.

    For methods whose statistics depend on a value known only after the previous pass (noisy
    Newton: the score and Hessian sums at the current iterate, :mod:`dpstats.methods.glm`).  Every
    pass reads the source again, chunk by chunk (stream), partition by partition (Dask) or record
    batch by record batch (a DuckDB relation's or a LazyFrame's query run again), builds
    each chunk's model frame with the layout of the first pass (the same names, levels and rule
    for missing values as the whole frame), applies ``fn`` to it, and folds the results with
    ``combine`` in file (partition, query) order: a fixed order, so a pass is reproducible, and its
    sums equal the in-memory ones up to floating-point summation order.  Memory: one chunk's
    frame and ``fn``'s result (the stream's bound, :mod:`dpstats.engines.stream`).  ``passes``
    counts the passes made.

    Every pass reads the rows of the first: ``call`` holds the fingerprint of the files the first pass
    read, and a pass over a file that changed since raises :class:`~dpstats.errors.SourceChangedError`
    before it reads a row (:mod:`dpstats.engines.fingerprint`); a source without files (a query) that
    gives another number of rows than the first pass's ``rows`` is refused once the pass ends, as is a
    pass that gives none.
    """

    def __init__(
        self, source, layout: Layout, call: CallPasses | None = None, rows: int | None = None
    ) -> None:
        self.source, self.layout, self.passes, self.rows = source, layout, 0, rows
        self.call = call if call is not None else CallPasses()

    @property
    def engine(self) -> str:
        return self.source.engine

    def reduce(self, fn: Callable[[ModelFrame], object], combine: Callable = operator.add):
        """``combine``-fold of ``fn(chunk frame)`` over the chunks, in order (one pass)."""
        self.passes += 1
        rows, total, first = 0, None, True
        with one_call(self.call):
            for n, part in self.source.frame_map(self.layout, _Counted(fn)):
                rows, total, first = rows + n, (part if first else combine(total, part)), False
        if first or (self.rows is not None and rows != self.rows):
            raise DataError(
                f"{self.source.what} gave other rows on a pass than on the analysis's first pass over it (not "
                "as many): the data changed between two passes (a query whose result changes, a table written "
                "to, a file it reads rewritten). Every pass must read the same rows: run the analysis again on "
                "data that nothing changes while it runs. Nothing was spent."
            )
        return total


@dataclass(frozen=True)
class _Counted:
    """``fn`` of a chunk's frame, with the chunk's rows (:meth:`RowPasses.reduce`): a plain value, so that
    Dask can send it to its workers."""

    fn: Callable[[ModelFrame], object]

    def __call__(self, chunk: ModelFrame) -> tuple[int, object]:
        return chunk.n, self.fn(chunk)


def row_passes(
    formula: str,
    data,
    *,
    drop_intercept: bool = True,
    min_rows: int = 2,
    progress: bool | None = None,
    schema: Schema | None = None,
) -> tuple[ChunkedModelFrame, EngineStats, RowPasses]:
    """The frame and statistics of a first pass (as :func:`sufficient_statistics`, no XᵀX), and the
    :class:`RowPasses` for the passes that follow, on an engine input (a stream, Dask, a DuckDB relation
    or a polars LazyFrame).

    Examples
    --------
    >>> import dpstats as dp, pandas as pd, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "d.parquet")
    >>> pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [1.0, 0, 1, 1]}).to_parquet(path)
    >>> mf, st, passes = row_passes("y ~ x", dp.engines.stream(path, chunk_rows=2), drop_intercept=False)
    >>> mf.n, passes.reduce(lambda c: c.X.T @ c.y).tolist(), passes.passes
    (4, [3.0, 5.0], 1)
    """

    def first_pass():
        source, layout, mf = _prepare(formula, data, drop_intercept, False, progress, schema)
        return source, layout, mf, source.statistics(layout, Transform(ranges_only=True))

    with one_call() as call:  # the call's, or one of the passes' own: they check the first pass's files
        source, layout, mf, stats = read_with_file_types(as_source(data), first_pass)
    _check_min_rows(stats, min_rows, formula, source)
    mf.n_rows, mf.n_dropped, mf.n_filled = stats.n, stats.n_dropped, stats.n_filled
    return mf, stats, RowPasses(source, layout, call, rows=stats.n)


def _chunked_frame(layout: Layout, source, n_rows: int, n_dropped: int) -> ChunkedModelFrame:
    proto = layout.prototype
    return ChunkedModelFrame(
        formula=layout.formula,
        X=proto.X,
        names=list(proto.names),
        terms=list(proto.terms),
        y=None,
        response=proto.response,
        intercept=proto.intercept,
        n_dropped=n_dropped,
        variables=list(layout.variables),
        classes=None,
        factor_levels=dict(proto.factor_levels),
        ordered_factors=list(proto.ordered_factors),
        factor_column_ranges=dict(proto.factor_column_ranges),
        interaction_parts=dict(proto.interaction_parts),
        n_rows=n_rows,
        engine=source.engine,
        engine_steps=list(layout.steps),
    )


BoxFn = Callable[[ModelFrame], tuple[Box | None, Box | None]]


def maxabs_boxes(formula: str, data, schema: Schema | None = None, min_rows: int = 2) -> BoxFn:
    """``boxes(mf)`` of the max-abs scaling: [−M_j, M_j] for each column and [−M_y, M_y] for y
    (:func:`dpstats.geometry.maxabs_box`), so a pass maps every value to x/M before any product: the raw
    products overflowed on one huge value and warned where its neighbour did not.  M is read from the
    frame's rows in memory, from a first pass of ranges only on engine data; a data-dependent step the
    caller names."""

    def scale(cross: CrossStats) -> tuple[Box, Box]:
        return maxabs_box(cross.x_maxabs), maxabs_box(cross.y_maxabs)

    if not is_engine_input(data):  # the same pass of ranges only, over the frame's rows
        return lambda mf: scale(array_statistics(mf.X, mf.y, Transform(ranges_only=True)).cross)
    _, first = sufficient_statistics(formula, data, ranges_only=True, schema=schema, min_rows=min_rows)
    boxes = scale(first.cross)
    return lambda mf: boxes


def frame_and_cross_products(
    formula: str,
    data,
    boxes: BoxFn,
    *,
    drop_intercept: bool = True,
    gram: bool = False,
    schema: Schema | None = None,
    min_rows: int = 2,
) -> tuple[ModelFrame, Box | None, Box | None, CrossStats]:
    """Model frame and its sufficient statistics, with the data scanned once.

    In memory, plain numeric designs defer the scan for non-finite values to the
    statistics pass itself (:func:`dpstats.formula.finish_checks`);
    when a non-finite value turns up, the frame is rebuilt the careful way
    (the schema's rule for missing values) and the statistics recomputed.  ``boxes(mf)``
    resolves the declared bounds for the frame's columns (it may raise).
    Nothing here is released; the caller charges the budget afterwards.
    Streamed, Dask and DuckDB data get the same statistics from a chunked pass,
    with a :class:`ChunkedModelFrame` that holds no rows.  Fewer than ``min_rows`` rows
    is a :class:`~dpstats.errors.DataError` (0 where n is private: no error may depend on it).
    """
    if is_engine_input(data):
        mf, stats = sufficient_statistics(
            formula,
            data,
            boxes=boxes,
            gram=gram,
            drop_intercept=drop_intercept,
            schema=schema,
            min_rows=min_rows,
        )
        return (mf, *stats.boxes, stats.cross)
    mf = model_frame(
        formula, data, drop_intercept=drop_intercept, defer_checks=True, schema=schema, min_rows=min_rows
    )
    x_box, y_box = boxes(mf)
    stats = cross_products(mf.X, mf.y, x_box=x_box, y_box=y_box, gram=gram, ranges=False)
    if not mf.checked and not finish_checks(mf, stats.finite):
        mf = model_frame(formula, data, drop_intercept=drop_intercept, schema=schema, min_rows=min_rows)
        x_box, y_box = boxes(mf)
        stats = cross_products(mf.X, mf.y, x_box=x_box, y_box=y_box, gram=gram)
    return mf, x_box, y_box, stats


def frame_and_row_clipped_gram(
    formula: str,
    data,
    row_bound: float | None,
    *,
    response_clip: float | None = None,
    progress: bool | None = None,
    schema: Schema | None = None,
) -> tuple[ModelFrame, RowClippedGram]:
    """The model frame and the Gram matrix of its rows clipped to l2 norm ``row_bound``, the rows read once.

    ``row_bound`` None clips nothing and records the largest row norm (the
    knockoff filter's B from the data); ``response_clip`` clips finite responses
    to [−response_clip, response_clip] (the frame's ``y`` is left as read).
    Engine inputs: one chunked pass (:func:`sufficient_statistics`).  In memory,
    plain numeric designs defer the scan for missing values to the pass (a
    non-finite value makes the Gram matrix non-finite; the frame is then rebuilt
    by the schema's rule for missing values and the pass repeated).
    """
    if is_engine_input(data):
        mf, stats = sufficient_statistics(
            formula,
            data,
            gram=True,
            row_bound=row_bound,
            row_norms=row_bound is None,
            response_clip=response_clip,
            progress=progress,
            schema=schema,
        )
        c = stats.cross
        return mf, RowClippedGram(c.xtx, c.xty, c.yty, stats.row_norm_max, stats.n_rows_clipped, c.y_maxabs)

    def gram(mf: ModelFrame) -> RowClippedGram:
        y = mf.y if response_clip is None else clip_response(mf.y, response_clip)
        with np.errstate(over="ignore", invalid="ignore") if row_bound is None else nullcontext():
            return row_clipped_gram(mf.X, y, row_bound)  # unclipped: a caller refuses non-finite sums

    mf = model_frame(formula, data, drop_intercept=True, defer_checks=True, schema=schema)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite results are discarded below
        g = gram(mf)
    finite = bool(np.isfinite(g.xtx).all() and np.isfinite(g.xty).all() and np.isfinite(g.yty))
    if mf.checked or finish_checks(mf, finite):
        return mf, g
    mf = model_frame(formula, data, drop_intercept=True, schema=schema)
    return mf, gram(mf)


def with_response_clipped(
    formula: str,
    data,
    mf: ModelFrame,
    g: RowClippedGram,
    row_bound: float,
    response_clip: float,
    *,
    schema: Schema | None = None,
) -> RowClippedGram:
    """``g`` (:func:`frame_and_row_clipped_gram`'s) with every response clipped to [−response_clip,
    response_clip]: XᵀX does not change, Xᵀy and yᵀy are computed again.  In memory from the frame's
    rows; from an engine input by a second pass (no progress bar, so that whether it is made is not
    shown) only when some |y| exceeds the clip."""
    if not isinstance(mf, ChunkedModelFrame):
        y = clip_response(mf.y, response_clip)
        if y is mf.y:
            return g
        X, _ = clip_rows_l2(mf.X, row_bound)
        return replace(g, xty=X.T @ y, yty=float(y @ y), y_maxabs=response_clip)
    if g.y_maxabs <= response_clip:
        return g
    _, again = sufficient_statistics(
        formula,
        data,
        gram=False,
        row_bound=row_bound,
        response_clip=response_clip,
        progress=False,
        schema=schema,
    )
    return replace(g, xty=again.cross.xty, yty=again.cross.yty, y_maxabs=response_clip)
