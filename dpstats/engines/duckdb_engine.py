"""DuckDB engine: the sufficient statistics computed inside DuckDB, the rows left where they are.

``data=duckdb.sql("select ... from 'file.parquet' where ...")`` (a relation) or
``data=(connection, "table")`` on a front door that works from sufficient statistics
(dp_lm, dp_sis, dp_pca, dp_knockoff's default route, ...) is read by this engine
(:mod:`dpstats.engines.adapter` decides; :func:`on_duckdb` makes the source explicitly).

Pushdown (plain numeric designs)
    When every design column is a numeric column of the relation (an intercept allowed),
    the response is one too, and no row clipping to a norm ball is asked for, the whole
    pass is one SQL query: DuckDB computes n, the column sums, Xᵀy, yᵀy, XᵀX (when asked),
    the raw per-column minimum and maximum and the counts of clipped and filled values,
    and only those numbers reach Python.  Each value is mapped and clipped exactly as
    :func:`dpstats.stats.cross_products` does it, ``(x − c)/h`` clipped to [−1, 1] with
    the declared box's centre c and half-width h written as exact double literals, so
    every term of every sum equals the in-memory term; only the order of the sums differs
    (DuckDB adds in parallel, in an order that may change from run to run), so the
    statistics equal the in-memory ones within floating-point tolerance (a relative
    difference of order n·2⁻⁵³, far below any noise), not bit for bit.  A constant design
    column (the intercept) is not summed by DuckDB: its sums follow from n and the other
    sums (exact for the intercept's mapped values 0 and 1).
Dates, date-times, durations and times of day, as in memory (:mod:`dpstats.temporal`)
    are read as numbers inside DuckDB (:func:`read_relation`), on every route (the query, the
    batches, and the rows read into pandas for other doors): a ``DATE`` as its days since
    1970-01-01, a ``TIMESTAMP`` (any precision, with or without time zone) as its seconds since
    the epoch in UTC, an ``INTERVAL`` as DuckDB's ``epoch()`` reads it (seconds, a month 30 days),
    a ``TIME`` as seconds since midnight (a ``TIME WITH TIME ZONE`` by its clock reading).  A
    formula variable of type ``LIST``, ``ARRAY``, ``STRUCT``, ``MAP``, ``UNION``, ``BLOB`` or ``BIT``
    is refused, naming it.
Missing values, as in memory (:mod:`dpstats.schema`)
    A missing (NULL) or non-finite value of a formula variable is replaced by its public
    fill (``CASE WHEN isfinite(x) THEN x ELSE fill END``) under ``na_action="fill"``; a
    variable without a fill, and every variable under ``"omit"``, drops the row instead
    (the row's values become NULL, which SQL's aggregates skip).  Counts of filled values
    and dropped rows are computed in the same query (diagnostics only, never released).
Other designs (factors, transformations, interactions, row clipping) and wide ones
    stream through the streaming engine's path (:func:`dpstats.engines.accumulate.frame_statistics`)
    as Arrow record batches of ``chunk_rows`` rows that DuckDB produces from the query,
    projected to the formula's columns; dpstats holds a few batches at a time (rows x columns x
    8 bytes x CHUNKS_IN_FLIGHT, as :mod:`dpstats.engines.stream`).  Factor levels not declared
    (``levels=``, a DuckDB ``ENUM``, booleans) are read by ``SELECT DISTINCT`` in a first query,
    the named data-dependent step of the other engines.
Passes that follow (dp_glm's noisy Newton steps, :class:`dpstats.engines.RowPasses`)
    read record batches the same way, the relation's query run again for each pass
    (:class:`~dpstats.engines.batches.BatchSource`): before, dp_glm read the relation into pandas,
    about ten times the memory of its columns (``benchmarks/bench_lazy_sources_memory.py``).
What it costs (``benchmarks/bench_data_sources.py``, 10^7 x 50 Parquet, 2 shared cores)
    Time: the SQL route's floor for ``dp_lm`` is XᵀX, p(p+1)/2 = 1 326 ``sum(u_a * u_b)``
    aggregates per row at p = 50; DuckDB sums at about 2 ns per row per aggregate, some 20x
    numpy's BLAS product per chunk in the other engines, so the query took 4.3x the Parquet
    stream's time (the mapping, clipping and counting around the products cost little once
    written as CASEs and per-column ``count_if``; as ``greatest``/``least`` and a per-row sum of
    indicators they took 5-8x).  For ``dp_sis`` (no XᵀX) 2.4x the stream's column route, whose
    decoding of the Parquet columns is faster than DuckDB's scan.
    Memory is DuckDB's and DuckDB's to set (the query changes no setting): by default each of its
    threads prefetches a whole row group of the projected columns (a 110 MiB block for
    250 000 rows x 51 doubles) and its buffer pool keeps freed buffers below its memory limit
    (80% of RAM), 0.7 GB above the call for ``dp_lm`` (1.3x the stream's) and for ``dp_sis``.  A
    lean connection keeps DuckDB's scan buffers small::

        con = duckdb.connect(config={"threads": 1, "memory_limit": "100MB"})
        con.execute("SET disable_parquet_prefetching = true")  # refused in connect's config

    145 MB above the call for ``dp_lm`` (0.28x the stream's) and 82 MB for ``dp_sis`` (the stream
    holds one column at a time: 13 MB), at 4.5x and 3.6x the stream's time; the limit is the whole
    database's, so a query that sorts or joins may spill or fail under it.  The pushdown buys
    custody, not speed: when the rows may leave the database, ``on_duckdb(..., pushdown=False)``
    streams them (1.5x the stream's time and 2x its memory for ``dp_lm``), and a plain Parquet file is read fastest
    and in the least memory by ``engines.stream``.

The query runs on the relation's own connection; nothing is created in the user's
database and no setting is changed.  Like the other engines it refuses ``bounds="auto"``
(private bounds need the rows in memory).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula import INTERCEPT
from ..stats import CrossStats, maxabs_from_range
from .accumulate import EngineStats, Transform
from .batches import BatchSource
from .layout import Layout
from .stream import CHUNK_ROWS, check_reading

# A query with more aggregates than this streams instead (DuckDB plans each aggregate
# separately: y ~ 50 bounded columns with XᵀX is 1 531 of them, 5p + 6 and the p(p+1)/2 products,
# plus one count per filled column, as sql_aggregate_count counts them from the query itself; a
# wide y ~ . with XᵀX would be millions).
MAX_SQL_AGGREGATES = 20_000
_WIDE = ("decimal", "hugeint", "uhugeint")  # read as DOUBLE, as the other engines read them
# dates and times as numbers (dpstats.temporal): (SQL of the integer count, units in a second)
_TEMPORAL = {
    "date": ("({x} - DATE '1970-01-01')", 1),  # days
    "timestamp": ("epoch_us({x})", 1_000_000),
    "timestamp with time zone": ("epoch_us({x})", 1_000_000),  # the instant, in UTC
    "timestamp_s": ("epoch_us({x})", 1_000_000),  # (epoch_ms fails on TIMESTAMP_MS in DuckDB 1.4)
    "timestamp_ms": ("epoch_us({x})", 1_000_000),
    "timestamp_ns": ("epoch_ns({x})", 1_000_000_000),
    "time": ("epoch_us({x})", 1_000_000),
    "time with time zone": ("epoch_us(CAST({x} AS TIME))", 1_000_000),  # its clock reading
    "time_ns": ("epoch_ns({x})", 1_000_000_000),
    "interval": ("epoch_us({x})", 1_000_000),
}
_UNREADABLE = ("list", "array", "struct", "map", "union", "blob", "bit")


class DuckDBSource(BatchSource):
    """A DuckDB relation (or a table of a connection) as data; create it with :func:`on_duckdb`.

    Plain numeric designs are summed by SQL (module docstring); other passes, and the further
    passes of :class:`dpstats.engines.RowPasses` (dp_glm's Newton steps), read record batches
    (:class:`~dpstats.engines.batches.BatchSource`), the relation's query run again each time."""

    engine = "duckdb"

    def __init__(
        self,
        relation,
        *,
        name: str | None,
        chunk_rows: int,
        levels: dict | None,
        progress: bool,
        pushdown: bool,
    ) -> None:
        self.relation, self.name, self.chunk_rows = relation, name, chunk_rows
        self.levels, self.progress, self.pushdown = levels, progress, pushdown
        self.last_route: str | None = None  # "sql" or "batches": how the last pass ran (for tests)
        self.given_as: str | None = None  # what the user passed, for messages (engines.type_name)
        self._schema: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return f"<dpstats duckdb source: {self.what}, {len(self.relation.columns)} columns>"

    @property
    def what(self) -> str:
        return f"the DuckDB table {self.name!r}" if self.name else "the DuckDB relation"

    # ------------------------------------------------------------------ schema
    def _types(self) -> dict[str, object]:
        return dict(zip(self.relation.columns, self.relation.types))

    def _read_as(self, column: str, dtype, numeric=frozenset()) -> str:
        """The SQL that reads ``column`` as the other engines read it (decimals as DOUBLE; a column
        numeric by declaration as DOUBLE, an entry that is not a number NULL: ``TRY_CAST``)."""
        if column in numeric:
            return f"TRY_CAST({_q(column)} AS DOUBLE)"
        return f"CAST({_q(column)} AS DOUBLE)" if dtype.id in _WIDE else _q(column)

    def schema_frame(self) -> pd.DataFrame:
        """An empty frame with the relation's columns and the pandas dtypes they are read as.

        An ``ENUM`` column is a Categorical with the type's values: declared, as a pandas
        Categorical's categories are (:mod:`dpstats.schema`).  Dates and times are numbers
        (:func:`read_relation`); a column of a type with no such reading keeps its Arrow type,
        refused by the layout if the formula uses it.
        """
        from .adapter import _arrow_to_pandas, native_errors

        if self._schema is not None:
            return self._schema.copy()
        with native_errors(self.what):
            empty = _arrow_table(read_relation(self.relation, self.relation.columns, refuse=()).limit(0))
        frame = _arrow_to_pandas(empty, dictionaries_declared=True, refuse=())
        for column, dtype in self._types().items():
            if dtype.id == "enum":
                frame[column] = pd.Categorical([], categories=list(dict(dtype.children)["values"]))
        self._schema = frame
        return frame.copy()

    # ------------------------------------------------------------------ passes
    def distinct_values(self, columns: list[str]) -> dict[str, list]:
        """First query over the factor columns only: their distinct non-missing values."""
        from .adapter import native_errors

        out = {}
        with native_errors(self.what):
            for c in columns:
                rel = self.relation.project(_q(c)).filter(f"{_q(c)} IS NOT NULL").distinct()
                out[c] = [row[0] for row in rel.fetchall()]
        return out

    def statistics(self, layout: Layout, transform: Transform) -> EngineStats:
        """The pass: one SQL query for plain numeric designs, Arrow record batches otherwise."""
        from .adapter import native_errors

        with native_errors(self.what):
            if self.pushdown and pushdown_applies(layout, transform):
                self.last_route = "sql"
                return sql_statistics(read_relation(self.relation, layout.variables), layout, transform)
            self.last_route = "batches"
            return self._batch_statistics(layout, transform)

    def _batches(self, columns: list[str], numeric=frozenset()) -> Iterator[tuple[object, str]]:
        """The relation's record batches, projected to ``columns`` (:class:`BatchSource`); the query
        runs again at each call."""
        relation = read_relation(self.relation, columns)
        types = dict(zip(relation.columns, relation.types))
        exprs = ", ".join(f"{self._read_as(c, types[c], numeric)} AS {_q(c)}" for c in columns)
        reader = _arrow_reader(relation.project(exprs), self.chunk_rows)
        for batch in reader:
            yield batch, f"a record batch of {self.what}"


def read_relation(relation, columns, refuse=None):
    """The relation's ``columns``, each of a date, date-time, duration or time-of-day type read as a
    DOUBLE number (module docstring; :mod:`dpstats.temporal`), the others as they are.  A column of
    ``refuse`` (None: every column) whose type has no such reading is refused, naming it.

    Examples
    --------
    >>> import duckdb
    >>> rel = duckdb.sql("select DATE '1970-01-03' AS day, 1.5 AS y")
    >>> read_relation(rel, ["day"]).fetchall()
    [(2.0,)]
    """
    from ..temporal import refusal

    types = dict(zip(relation.columns, relation.types))
    exprs, changed = [], False
    for column in columns:
        kind, x = types[column].id, _q(column)
        if kind in _TEMPORAL:
            count, per_second = _TEMPORAL[kind]
            exprs.append(f"CAST({count.format(x=x)} AS DOUBLE) / CAST({per_second} AS DOUBLE) AS {x}")
            changed = True
        else:
            if kind in _UNREADABLE and (refuse is None or column in refuse):
                raise refusal(column, str(types[column]))
            exprs.append(x)
    if not changed and list(columns) == list(relation.columns):
        return relation
    return relation.project(", ".join(exprs))


def _arrow_table(relation):
    """The relation's rows as an Arrow table (DuckDB 1.4+: ``to_arrow_table``; before: ``arrow``)."""
    read = getattr(relation, "to_arrow_table", None) or relation.arrow
    return read()


def _arrow_reader(relation, rows: int):
    """Record batches of about ``rows`` rows (``to_arrow_reader``; before DuckDB 1.4: ``fetch_record_batch``)."""
    read = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch
    return read(rows)


def pushdown_applies(layout: Layout, transform: Transform) -> bool:
    """A plain numeric design (every column a numeric data column or the intercept), a numeric
    response column, no row clipping or row norms, and a query of at most MAX_SQL_AGGREGATES
    aggregates (counted from the query :func:`sql_statistics` would build: :func:`sql_aggregate_count`)."""
    proto = layout.prototype
    columns = set(layout.columns)
    return (
        layout.numeric_only
        and (proto.response is None or proto.response in columns)
        and all(nm == INTERCEPT or nm in columns for nm in proto.names)
        and not transform.rowwise
        and not transform.ranges_only
        and sql_aggregate_count(layout, transform, limit=MAX_SQL_AGGREGATES + 1) <= MAX_SQL_AGGREGATES
    )


# ---------------------------------------------------------------------------- the query
def _q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + str(name).replace('"', '""') + '"'


def _lit(value: float) -> str:
    """An exact DOUBLE literal: the shortest decimal that round-trips, parsed as a double."""
    return f"CAST('{float(value)!r}' AS DOUBLE)"


def _values(layout: Layout) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Each variable's value after the rule for missing values, the conditions a kept row meets,
    and, for each filled variable, the test its kept values pass (its other values are filled)."""
    rule = layout.schema
    fill_rule = rule is not None and rule.na_action == "fill"
    values, keep, finite = {}, [], {}
    for v in layout.variables:
        x = f"TRY_CAST({_q(v)} AS DOUBLE)"  # numeric by declaration: an entry that is no number is NULL
        ok = f"isfinite({x})"
        fill = rule.fill_value(v) if fill_rule else None
        if fill is None:
            values[v] = x
            keep.append(f"coalesce({ok}, false)")
        else:
            values[v] = f"(CASE WHEN {ok} THEN {x} ELSE {_lit(fill)} END)"
            finite[v] = ok
    return values, keep, finite


def _clip(t: str) -> str:
    """``t`` clipped to [-1, 1] as np.clip does it (t is never NaN here: values are finite).

    A CASE, not ``greatest(-1, least(1, t))``: the same values at a third of the cost in DuckDB.
    """
    return f"(CASE WHEN {t} > 1 THEN CAST(1 AS DOUBLE) WHEN {t} < -1 THEN CAST(-1 AS DOUBLE) ELSE {t} END)"


class _Plan:
    """What the query of a plain numeric design is made of (:func:`sql_statistics`): the summed
    design columns, the response, each variable's value and box, the kept-row conditions and
    the filled variables whose finite values are counted."""

    def __init__(self, layout: Layout, transform: Transform) -> None:
        proto = layout.prototype
        self.names, self.response = list(proto.names), proto.response
        self.values, self.keep, self.finite = _values(layout)
        self.dropping = bool(self.keep)
        self.summed = [j for j, nm in enumerate(self.names) if nm != INTERCEPT]
        self.p = p = len(self.summed)
        self.gram = transform.gram
        x_box, y_box = transform.x_box, transform.y_box
        self.variables = [self.names[j] for j in self.summed] + ([self.response] if self.response else [])
        self.keys = [str(i) for i in range(p)] + (["y"] if self.response else [])
        self.boxes = [
            (None, None) if x_box is None else (float(x_box.center[j]), float(x_box.halfwidth[j]))
            for j in self.summed
        ]
        if self.response:
            self.boxes.append(
                (None, None) if y_box is None else (float(y_box.center[0]), float(y_box.halfwidth[0]))
            )
        self.okays = [v for v in layout.variables if v in self.finite]

    def pairs(self) -> Iterator[tuple[int, int]]:
        """The (a, b), a <= b, of XᵀX's upper triangle, in the order its sums are asked (none without gram)."""
        if self.gram:
            for a in range(self.p):
                for b in range(a, self.p):
                    yield a, b

    def aggregates(self) -> Iterator[str | None]:
        """The aggregate list, in the order :func:`_assemble` reads it; None is a slot holding the
        constant 0 (the clipped count of a column without a box), not an aggregate."""
        p = self.p

        def clipped(k: str, c) -> str | None:
            return None if c is None else f"count_if(abs(__t{k}) > 1)"

        yield "count(*)"
        yield "count(*) FILTER (WHERE __keep)" if self.dropping else "count(*)"
        yield from (f"count_if(__ok{i})" for i in range(len(self.okays)))
        yield from (f"sum(__u{i})" for i in range(p))
        yield from (f"min(__r{i})" for i in range(p))
        yield from (f"max(__r{i})" for i in range(p))
        yield from (clipped(str(i), self.boxes[i][0]) for i in range(p))
        if self.response:
            yield from ("sum(__uy)", "sum(__uy * __uy)", "max(abs(__uy))", clipped("y", self.boxes[p][0]))
            yield from (f"sum(__u{i} * __uy)" for i in range(p))
        yield from (f"sum(__u{a} * __u{b})" for a, b in self.pairs())


def sql_aggregate_count(layout: Layout, transform: Transform, limit: int | None = None) -> int:
    """The number of aggregates in the query :func:`sql_statistics` builds for this design (the
    constant slots left out), counted from the same builder; counting stops at ``limit``, so a
    wide design's millions of product sums are not written out only to be refused."""
    aggregates = (a for a in _Plan(layout, transform).aggregates() if a is not None)
    return sum(1 for _ in itertools.islice(aggregates, limit))


def sql_statistics(relation, layout: Layout, transform: Transform) -> EngineStats:
    """The statistics of a plain numeric design as one query (module docstring, "Pushdown").

    Three projections, then one aggregate, so that every per-row value is computed once:
    the values after the rule for missing values (and whether the row is kept); then the
    kept values ``__r`` (NULL in a dropped row, which every aggregate skips) and their
    mapping ``__t = (v - c)/h``; then ``__u``, ``__t`` clipped to [-1, 1].  The aggregate
    reads ``__u`` (sums, products), ``__r`` (minimum, maximum) and ``__t`` (clipped counts).
    Filled values are counted per column (``count_if`` of the finite ones), not as a
    per-row sum of indicators.  The aggregate list is :meth:`_Plan.aggregates`, the one
    :func:`sql_aggregate_count` counts for :func:`pushdown_applies`.
    """
    plan = _Plan(layout, transform)
    values, finite, dropping = plan.values, plan.finite, plan.dropping

    first = [f"{' AND '.join(plan.keep)} AS __keep"] if dropping else []
    first += [f"{values[v]} AS __v{k}" for v, k in zip(plan.variables, plan.keys)]
    first += [f"{finite[v]} AS __ok{i}" for i, v in enumerate(plan.okays)]
    second, third = [], []
    for k, (c, h) in zip(plan.keys, plan.boxes):
        r = f"(CASE WHEN __keep THEN __v{k} END)" if dropping else f"__v{k}"
        second.append(f"{r} AS __r{k}")
        third.append(f"__r{k}")
        if c is None:
            third.append(f"__r{k} AS __u{k}")
        else:
            second.append(f"((__r{k} - {_lit(c)}) / {_lit(h)}) AS __t{k}")
            third += [f"__t{k}", f"{_clip(f'__t{k}')} AS __u{k}"]
    carried = (["__keep"] if dropping else []) + [f"__ok{i}" for i in range(len(plan.okays))]
    second += carried
    third += carried

    aggs = ["0" if a is None else a for a in plan.aggregates()]
    query = relation.project(", ".join(first or ["0 AS __none"]))  # no variable: rows counted only
    if second:
        query = query.project(", ".join(second)).project(", ".join(third))
    row = query.aggregate(", ".join(aggs)).fetchall()[0]
    pairs = list(plan.pairs())
    return _assemble(row, plan.names, plan.summed, bool(plan.response), len(plan.okays), pairs, transform)


def _assemble(row, names, summed, has_y: bool, n_okays: int, pairs, transform: Transform) -> EngineStats:
    """The query's one row as the :class:`EngineStats` the in-memory engine gives."""
    vals = iter(row)

    def take(k: int, empty: float = 0.0) -> np.ndarray:
        return np.array([empty if v is None else float(v) for v in (next(vals) for _ in range(k))])

    total, n = (int(v or 0) for v in (next(vals), next(vals)))
    n_filled = sum(total - int(next(vals) or 0) for _ in range(n_okays))  # values not finite, filled
    p_all, p = len(names), len(summed)
    x_sum, lo, hi, clipped = take(p), take(p, np.inf), take(p, -np.inf), take(p)
    y_sum = yty = y_maxabs = 0.0
    y_clipped, xty = 0, np.zeros(p)
    if has_y:
        y_sum, yty, y_maxabs, y_clipped = take(4)
        xty = take(p)
    xtx = None
    if transform.gram:
        sums = take(len(pairs))
        xtx = np.zeros((p, p))
        for (a, b), s in zip(pairs, sums):
            xtx[a, b] = xtx[b, a] = s
    cross = CrossStats(
        n=n,
        xty=np.zeros(p_all),
        x_sum=np.zeros(p_all),
        y_sum=float(y_sum),
        yty=float(yty),
        x_maxabs=None,
        y_maxabs=float(y_maxabs),
        xtx=None if xtx is None else np.zeros((p_all, p_all)),
        n_clipped=int(clipped.sum()) + int(y_clipped),
        x_min=np.full(p_all, np.inf),
        x_max=np.full(p_all, -np.inf),
    )
    idx = np.array(summed, dtype=int)
    cross.x_sum[idx], cross.xty[idx], cross.x_min[idx], cross.x_max[idx] = x_sum, xty, lo, hi
    if xtx is not None:
        cross.xtx[np.ix_(idx, idx)] = xtx
    _constant_columns(cross, names, summed, x_sum, xty, transform)
    cross.x_maxabs = maxabs_from_range(cross.x_min, cross.x_max, transform.x_box) if n else np.zeros(p_all)
    sums = [cross.x_sum, cross.xty, [cross.y_sum, cross.yty]] + ([cross.xtx] if xtx is not None else [])
    cross.finite = all(bool(np.isfinite(s).all()) for s in sums)
    return EngineStats(cross, n_dropped=total - n, n_filled=n_filled)


def _constant_columns(cross: CrossStats, names, summed, x_sum, xty, transform: Transform) -> None:
    """The intercept's entries: the constant k = its mapped value, so Σk = nk, Σk·u = kΣu, Σk² = nk²."""
    n = cross.n
    for j, nm in enumerate(names):
        if nm != INTERCEPT:
            continue
        k, clipped = 1.0, False
        if transform.x_box is not None:
            t = (1.0 - float(transform.x_box.center[j])) / float(transform.x_box.halfwidth[j])
            clipped, k = abs(t) > 1, float(np.clip(t, -1.0, 1.0))
        cross.x_sum[j] = k * n
        cross.xty[j] = k * cross.y_sum
        cross.n_clipped += n if clipped else 0
        if n:
            cross.x_min[j] = cross.x_max[j] = 1.0
        if cross.xtx is not None:
            others = np.array(summed, dtype=int)
            cross.xtx[j, others] = cross.xtx[others, j] = k * x_sum
            cross.xtx[j, j] = k * k * n


def on_duckdb(
    data,
    *,
    chunk_rows: int = CHUNK_ROWS,
    levels: dict | None = None,
    progress: bool = False,
    pushdown: bool = True,
) -> DuckDBSource:
    """Read a DuckDB relation, or a table of a DuckDB connection, where it lives (the DuckDB engine).

    A front door given a relation directly (``data=duckdb.sql(...)``) makes this source with
    the defaults; call it to choose them.

    Parameters
    ----------
    data : duckdb.DuckDBPyRelation or (duckdb.DuckDBPyConnection, str)
        A relation (``duckdb.sql("select * from 'f.parquet' where age > 30")``,
        ``con.table("t")``), or a connection and the name of a table or view in it.
    chunk_rows : int
        Rows per Arrow record batch when the design streams (module docstring).
    levels : dict, optional
        Declared levels of text columns, ``{"g": ["a", "b"]}`` (as ``levels=`` on a door).
    progress : bool
        A tqdm bar over the streamed batches, counting rows (the SQL route has none); where n is
        private (a private call under ``neighbouring="add_remove"``) a line naming the pass, with no number.
    pushdown : bool
        Compute the statistics of plain numeric designs by SQL (default); False streams
        every design (for comparisons).

    Returns
    -------
    DuckDBSource

    Examples
    --------
    >>> import duckdb, dpstats as dp
    >>> df = dp.datasets.fan_lv(n=300, d=10, random_state=0)
    >>> con = duckdb.connect()
    >>> _ = con.execute("create table fan as select * from df")
    >>> fit = dp.dp_lm("y ~ x1 + x2", data=(con, "fan"), eps=1.0, delta=1e-6, bounds=(-6, 6), random_state=1)
    >>> fit.n, fit.engine
    (300, 'duckdb')
    """
    from .adapter import _connection_pair, type_name

    name = None
    if _connection_pair(data):
        con, name = data
        try:
            relation = con.table(name)
        except Exception as exc:  # duckdb.CatalogException and friends
            raise DataError(
                f"DuckDB has no table or view {name!r} on this connection ({type(exc).__name__}); check the "
                'name, e.g. con.sql("show tables").'
            ) from None
    elif (type(data).__module__ or "").split(".")[0] == "duckdb" and hasattr(data, "aggregate"):
        relation = data
    else:
        raise DataError(
            f'on_duckdb needs a DuckDB relation (duckdb.sql("select ...")) or (connection, "table"); '
            f"got {type_name(data)}."
        )
    check_reading(chunk_rows, levels)  # the arguments' types: wrong whatever the data
    source = DuckDBSource(
        relation, name=name, chunk_rows=chunk_rows, levels=levels, progress=bool(progress), pushdown=pushdown
    )
    source.given_as = source.what if name else type_name(data)  # for messages: what the user passed
    return source
