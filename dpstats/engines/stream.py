"""Streaming engine: one bounded-memory pass over Parquet or CSV files with pyarrow.

Rows are read ``chunk_rows`` at a time (Parquet: record batches of a row
group; CSV: blocks of the file; Parquet with a plain numeric design and no
XᵀX: one column of a row group at a time, below), each chunk's schema is checked against the
first chunk's, the chunk goes through the formula and is reduced to
sufficient statistics, and only the statistics are kept.

Column types of a CSV file
--------------------------
A CSV file declares no types.  A column is read as ``pandas.read_csv`` reads the whole file: numbers
(or logicals) when every entry is one or missing, text otherwise, wherever the other entries are.
pyarrow infers the types from the first block only, so a pass that meets an entry that does not
have its column's type in a later block (or file) stops with :class:`ColumnNotOneType`, before any
statistic is kept, and the engines run it again with that column read as text
(:meth:`Stream.read_as_text`): the same frame and the same named steps (its levels read from the
rows) as in memory, at the cost of a pass only where a column is not one type.  A column declared
numeric (a ``bounds=`` entry) is always read as text and each entry as a number
(:func:`dpstats.schema.as_numbers`).  A column pyarrow would infer as dates or times is text too,
as ``pandas.read_csv`` reads it, unless ``csv_options={"convert_options": {"column_types": ...}}``
declares its type; a Parquet or declared date, date-time, duration or time-of-day column is read as
numbers (:mod:`dpstats.temporal`).

Memory bound
------------
Peak memory above the imports is at most

    rows x columns x 8 bytes x CHUNKS_IN_FLIGHT  (= 5)

where rows is the larger of ``chunk_rows`` (default ``CHUNK_ROWS`` = 100 000)
and the rows of one Parquet row group, and columns counts the columns the
formula reads: pyarrow holds the row group being read both as read from the
file and decoded (two), and the pass holds one chunk being reduced, one
waiting in the read-ahead slot and one being decoded, or a float64 copy of a
chunk when XᵀX or row norms are needed or the chunk goes through pandas.  The
statistics are p x p.  Measured on this route (a 2*10^6 x 50 file in row
groups of 250 000, default chunks): 464 MiB above the warmed-up process
against a bound of 486 MiB.  It does not grow with the number of rows, default options included
(the operating-characteristic simulation of ``dp_sis`` draws statistics, not
rows).  Write files with row groups of 10^5–10^6 rows
(``pyarrow.parquet.write_table(..., row_group_size=...)``): a single row group
of 10^7 rows is itself the unit pyarrow decodes.

Parquet with a plain numeric design and no XᵀX (``dp_sis`` on numeric columns,
its default path) is read one column of one row group at a time: the
response, then each design column, reduced by the compiled column kernel and
released before the next is read.  The pass then holds

    max(rows per row group x 8 bytes, COLUMN_GROUP_BYTES) x COLUMN_ROUTE_COPIES  (= 10)

whatever the number of columns: columns are read in groups of
``COLUMN_GROUP_BYTES`` (2 MiB; one column when a column is longer), and the
pass holds the response, the group being reduced, and pyarrow's compressed,
dictionary and decoded buffers of its column chunks with its allocator's
retained pages (a measured constant: 8 at 2.5*10^5 and 9
at 10^6 rows per row group).  A row group with a missing or non-finite value is
read again in chunks and stays within the first bound.  Measured
(``benchmarks/bench_scale.py``, a 2*10^6 x 50 file in row groups of 250 000,
default arguments): 8-16 MiB above the warmed-up process, 261 MiB peak in
all (the first call of a fresh process: 256-264 MiB), against 745 MiB when
the same pass read whole chunks of rows.  The warmed-up process itself
(pandas, pyarrow, numba and its compiled kernel) is 245-253 MiB.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from .._progress import progress_bar
from ..errors import DataError, DataWarning, PrivacyParameterError
from .accumulate import (
    EngineStats,
    Transform,
    columnwise_applies,
    columnwise_statistics,
    frame_statistics,
    merge_all,
)
from ..schema import check_levels
from ..temporal import arrow_kind, arrow_numbers
from .files import reading, unreadable
from .fingerprint import unchanged
from .layout import Layout, schema_error

FORMATS = ("parquet", "csv")
CHUNK_ROWS = 100_000  # default rows per chunk
CHUNKS_IN_FLIGHT = 5  # chunk-sized buffers alive at once (module docstring, "Memory bound")
COLUMN_ROUTE_COPIES = 10  # column-group buffers alive at once on the Parquet column route
COLUMN_GROUP_BYTES = (
    2**21
)  # the column route reads this many bytes of columns at a time (at least one column)


class ColumnNotOneType(Exception):
    """A pass over a CSV stream met an entry of ``column`` that does not have the type pyarrow inferred
    from the first block (module docstring, "Column types of a CSV file"): the pass is run again with
    the column read as text.  Internal: the engines catch it (:func:`read_with_file_types`)."""

    def __init__(self, column: str) -> None:
        super().__init__(column)
        self.column = column


def read_with_file_types(source, run):
    """``run()``, again with a CSV stream's column read as text each time a pass finds it is not one type.

    Each rerun makes one more column text, so there are at most as many reruns as columns; nothing a
    failed pass computed is kept, and a call that fails (a row the reader cannot parse, in any pass)
    leaves the stream's columns read as they were before it.
    """
    before = set(source.text_columns) if isinstance(source, Stream) else None
    try:
        while True:
            try:
                return run()
            except ColumnNotOneType as changed:
                if before is None or changed.column in source.text_columns:
                    raise
                source.read_as_text(changed.column)
    except BaseException:
        if before is not None and source.text_columns != before:
            source.text_columns, source._schema = before, None
        raise


class Stream:
    """Data read in chunks from one or more Parquet or CSV files.

    Create it with :func:`stream`; pass it as ``data=`` to a front door.
    """

    engine = "stream"
    counted = True  # the bars may count rows: False where n is private (engines._prepare sets it)

    def __init__(
        self,
        paths: list[Path],
        fmt: str,
        chunk_rows: int,
        levels: dict | None,
        progress: bool,
        csv_options: dict | None = None,
    ) -> None:
        self.paths, self.format, self.chunk_rows = paths, fmt, chunk_rows
        self.levels, self.progress = levels, progress
        self.csv_options = dict(csv_options or {})
        self._schema = None
        # CSV columns found not to be one type in the files: read as text (module docstring)
        self.text_columns: set[str] = set()

    def __repr__(self) -> str:
        files = self.paths[0].name + (f" and {len(self.paths) - 1} more" if len(self.paths) > 1 else "")
        return f"<dpstats stream: {self.format} {files}, chunks of {self.chunk_rows} rows>"

    @property
    def what(self) -> str:
        return f"{self.format} data {self.paths[0].name}" + (
            f" (+{len(self.paths) - 1} files)" if len(self.paths) > 1 else ""
        )

    # ------------------------------------------------------------------ schema
    def arrow_schema(self):
        """The first file's schema (every chunk must match it)."""
        if self._schema is None:
            self._schema = self._file_schema(self.paths[0])
        return self._schema

    def _file_schema(self, path: Path):
        if self.format == "parquet":
            import pyarrow.parquet as pq

            with reading(path.name, "parquet"):
                return pq.ParquetFile(path).schema_arrow
        import pyarrow as pa

        with reading(path.name, "csv"), self._csv_reader(path, None) as reader:
            inferred = reader.schema
        if any(pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in inferred):
            raise unreadable(path.name, "csv")  # text that is not UTF-8 is inferred as bytes
        types = dict(self.csv_options.get("convert_options", {})).get("column_types") or {}
        declared = set(getattr(types, "names", types))  # a dict, or a pyarrow schema
        return pa.schema(
            [
                pa.field(f.name, pa.string()) if _text_in_csv(f, self.text_columns, declared) else f
                for f in inferred
            ]
        )

    def read_as_text(self, column: str) -> None:
        """Read ``column`` of a CSV stream as text from now on (a pass found it is not one type)."""
        self.text_columns.add(column)
        self._schema = None

    def schema_frame(self) -> pd.DataFrame:
        """An empty frame with the data's columns and pandas dtypes.

        Parquet columns that pandas wrote from a ``CategoricalDtype`` keep their categories
        (:meth:`pandas_categories`): declared, as the same dtype is in memory.
        """
        from .adapter import _unreadable_as_arrow

        empty = arrow_numbers(self.arrow_schema().empty_table(), refuse=())  # dates as numbers
        frame = empty.to_pandas(types_mapper=_unreadable_as_arrow)
        for col, dtype in self.pandas_categories().items():
            frame[col] = pd.Categorical([], dtype=dtype)
        return frame

    def pandas_categories(self) -> dict[str, pd.CategoricalDtype]:
        """The categories of Parquet columns that pandas wrote from a ``CategoricalDtype``.

        Declared, not read from the rows, under the same convention as a categorical column
        in memory (:mod:`dpstats.schema`): pandas writes such a column as an Arrow dictionary
        holding every category, used or not, in every row group, and marks it in the file's
        pandas metadata as ``categorical`` with the number of categories.  That metadata
        holds only the number and the order flag, not the categories: they are taken from
        the dictionary of the column's first row group in each file, and accepted only when
        its length equals the declared number and every file gives the same list.  An Arrow
        dictionary without that metadata (written by another tool, or dictionary-encoded
        strings) may hold only the values present in each row group, a function of the rows:
        such columns keep the named first pass (:meth:`distinct_values`), as does a column
        whose dictionaries disagree with the metadata.
        """
        if self.format != "parquet":
            return {}
        import pyarrow.parquet as pq

        found: dict[str, pd.CategoricalDtype] = {}
        for i, path in enumerate(self.paths):
            with reading(path.name, "parquet"):
                here = _declared_categories(pq.ParquetFile(path))
            found = here if i == 0 else {c: d for c, d in found.items() if here.get(c) == d}
        return found

    def _bar(self, desc: str):
        """The progress bar of a pass over the rows (:func:`~dpstats._progress.progress_bar`): rows out
        of the file's row count where n is public, no number at all where it is private (:attr:`counted`
        False)."""
        total = self.total_rows() if self.progress and self.counted else None
        return progress_bar(self.progress, total, desc, counted=self.counted, unit="rows")

    def total_rows(self) -> int | None:
        if self.format != "parquet":
            return None
        import pyarrow.parquet as pq

        total = 0
        for path in self.paths:
            with reading(path.name, "parquet"):
                total += pq.ParquetFile(path).metadata.num_rows
        return total

    # ------------------------------------------------------------------ reading
    def _csv_reader(self, path: Path, schema, short: _ShortRows | None = None):
        """pyarrow's streaming CSV reader, parsing on the calling thread (``use_threads=False``, unless
        ``csv_options`` says otherwise), so that the rows ``short`` keeps are met in the same order on
        every pass (:class:`_ShortRows`)."""
        from pyarrow import csv

        opts = dict(self.csv_options)
        read = {
            "block_size": self._csv_block_size(path),
            "use_threads": False,
            **opts.pop("read_options", {}),
        }
        parse = {"invalid_row_handler": short or _ShortRows(), **opts.pop("parse_options", {})}
        return csv.open_csv(
            path,
            read_options=csv.ReadOptions(**read),
            convert_options=self._csv_convert(schema),
            parse_options=csv.ParseOptions(**parse),
        )

    def _csv_convert(self, schema):
        from pyarrow import csv

        # empty fields are missing, as pandas.read_csv reads them
        conv = {"strings_can_be_null": True, **dict(self.csv_options).get("convert_options", {})}
        if schema is not None:
            conv["column_types"] = schema
        return csv.ConvertOptions(**conv)

    def _with_short_rows(self, reader, short: _ShortRows, schema) -> Iterator:
        """The reader's blocks, each followed by the rows with fields too few ``short`` kept while it
        was read (:class:`_ShortRows`), their missing fields empty; ``schema``: the columns read and
        their types, as the reader was given them (the blocks then keep only these columns)."""
        for block in reader:
            yield block.select(schema.names)
            yield from self._short_batches(short.take(), reader.schema.names, schema)
        yield from self._short_batches(short.take(), reader.schema.names, schema)

    def _short_batches(self, rows: list[str], names: list[str], schema) -> Iterator:
        """CSV ``rows`` of a file with columns ``names`` (their missing fields already empty): the
        columns of ``schema``, read with its types."""
        import io

        import pyarrow.csv as csv

        if not rows:
            return iter(())
        parse = dict(self.csv_options.get("parse_options", {}))
        parse.pop("invalid_row_handler", None)
        convert = self._csv_convert(schema)
        convert.include_columns = schema.names
        table = csv.read_csv(
            io.BytesIO("\n".join(rows).encode()),
            read_options=csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=csv.ParseOptions(**parse),
            convert_options=convert,
        )
        return iter(table.to_batches())

    def _csv_block_size(self, path: Path) -> int:
        """Bytes per block so that a block holds about ``chunk_rows`` rows."""
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
        rows = max(1, head.count(b"\n") - 1)
        per_row = max(1, len(head) // rows)
        return int(min(max(per_row * self.chunk_rows, 1 << 16), 1 << 30))

    def batches(
        self, columns: Sequence[str] | None = None, numeric: frozenset[str] | set[str] = frozenset()
    ) -> Iterator[tuple[object, str]]:
        """Record batches in file order, each with a description for messages.

        One batch is read ahead in a background thread, so that decoding the
        next chunk overlaps the statistics of this one (memory: two chunks).
        ``numeric``: columns numeric by declaration (:attr:`Layout.declared_numeric`), whose type
        may differ from file to file and chunk to chunk (it comes from the rows): a CSV reads them
        as text, and the layout reads each chunk's entries as numbers.
        """
        return _read_ahead(self._batches(columns, numeric))

    def _batches(
        self, columns: Sequence[str] | None = None, numeric=frozenset()
    ) -> Iterator[tuple[object, str]]:
        first = self.arrow_schema()
        for path in self.paths:
            schema = self._file_schema(path) if path != self.paths[0] else first
            self._check(first, schema, f"file {path.name}", columns, numeric, csv=self.format == "csv")
            for i, batch in enumerate(self._file_batches(path, columns, first, numeric)):
                where = f"chunk {i + 1} of {path.name}"
                self._check(first, batch.schema, where, columns, numeric)
                yield arrow_numbers(batch, refuse=()), where  # dates as numbers

    def _file_batches(self, path: Path, columns, first, numeric=frozenset()):
        if self.format == "parquet":
            import pyarrow.parquet as pq

            # pre_buffer=False: pyarrow's default pre-buffers the column chunks of every row group
            # it will read, so its memory grows with the file (measured: 1.0 GB at 10^6 x 51,
            # 1.4 GB at 2*10^6 x 51); without it memory is bounded by one row group
            with reading(path.name, "parquet"), pq.ParquetFile(path, pre_buffer=False) as pf:
                yield from pf.iter_batches(batch_size=self.chunk_rows, columns=columns)
            return
        import pyarrow as pa

        schema = first if columns is None else pa.schema([first.field(c) for c in columns])
        # declared numeric: read as text, whatever the first block's rows suggested (a later "n/a"
        # would fail the inferred double); the layout reads the entries as numbers
        schema = pa.schema([pa.field(f.name, pa.string()) if _as_text(f, numeric) else f for f in schema])
        short = _ShortRows(dict(self.csv_options.get("parse_options", {})).get("delimiter", ","))
        with reading(path.name, "csv"), self._csv_reader(path, schema, short) as reader:
            try:
                for batch in self._with_short_rows(reader, short, schema):
                    for start in range(0, batch.num_rows, self.chunk_rows):
                        yield _parsed_where_arrow_can(batch.slice(start, self.chunk_rows), numeric)
            except pa.ArrowInvalid as exc:  # its text quotes the row or the value: neither is repeated
                column = _converted_column(exc, first)
                if column is None:  # a row the parser cannot split, or text that is not UTF-8
                    raise unreadable(path.name, "csv") from None
                if column not in numeric and column not in self.text_columns:
                    raise ColumnNotOneType(column) from None  # read again, the column as text
                raise DataError(
                    f"{path.name}: a value of column '{column}' does not have the type of its "
                    "column in the first chunk. Declare the column numeric with a bounds= entry (an entry "
                    "that is not a number is then a missing value), make it one type throughout the file, "
                    "or declare its type with csv_options={'convert_options': {'column_types': ...}}."
                ) from None

    @staticmethod
    def _check(first, schema, where: str, columns, numeric=frozenset(), csv: bool = False) -> None:
        """Every chunk (and file) has the first's columns and kinds; ``csv``: a file whose first block
        suggests another kind for a column than the first file's makes that column text (module
        docstring, "Column types of a CSV file")."""
        want = list(first.names) if columns is None else list(columns)
        have = list(schema.names)
        have_set, want_set = set(have), set(want)  # wide files: 10^4 names, no quadratic scan
        missing = [c for c in want if c not in have_set]
        extra = [c for c in have if c not in want_set] if columns is None else []
        if missing or extra:
            raise schema_error(where, missing=missing, extra=extra)
        changed = [
            (c, str(first.field(c).type), str(schema.field(c).type))
            for c in want
            if c not in numeric and _kind(schema.field(c).type) != _kind(first.field(c).type)
        ]
        if changed and csv:
            raise ColumnNotOneType(changed[0][0])
        if changed:
            raise schema_error(where, changed=[(c, w, n) for c, w, n in changed])

    # ------------------------------------------------------------------ passes
    def _unchanged(self):
        """Around one pass: the files are those the call's first pass read (:mod:`.fingerprint`)."""
        return unchanged(lambda: self.paths, self.what, "|".join(str(p) for p in self.paths))

    def distinct_values(self, columns: list[str]) -> dict[str, list]:
        """First pass over the factor columns only: their distinct non-missing values."""
        import pyarrow.compute as pc

        seen: dict[str, set] = {c: set() for c in columns}
        with self._unchanged(), self._bar(f"first pass (levels) over {self.what}") as bar:
            for batch, _ in self.batches(columns):
                for c in columns:
                    seen[c].update(v for v in pc.unique(batch.column(c)).to_pylist() if v is not None)
                bar.update(batch.num_rows)
        return {c: list(v) for c, v in seen.items()}

    def statistics(self, layout: Layout, transform: Transform) -> EngineStats:
        """The pass: every chunk through the formula, reduced to statistics."""
        columns = None if len(layout.variables) == len(layout.columns) else list(layout.variables)
        if columns is not None:
            layout = _project(layout, columns)
        with (
            self._unchanged(),
            self._bar(f"pass over {self.what}") as bar,
            warnings.catch_warnings(),
        ):
            # rows dropped in a chunk are counted and warned about once, after the pass
            # (this loop runs in the calling thread, so the filter is safe here)
            warnings.simplefilter("ignore", DataWarning)

            def parts():
                for batch, where in self.batches(columns, layout.declared_numeric):
                    bar.update(batch.num_rows)
                    yield frame_statistics(layout, batch, transform, where)

            by_column = self.format == "parquet" and columnwise_applies(layout, transform)
            chunks = self._column_parts(layout, transform, columns, bar) if by_column else parts()
            return merge_all(chunks, layout.p, transform.gram)

    def frame_map(self, layout: Layout, fn) -> Iterator:
        """``fn`` of each chunk's model frame, in file order (one pass; :class:`dpstats.engines.RowPasses`).

        Each chunk goes through the formula the careful way (its rows with missing values
        filled or dropped by the schema's rule, as :func:`frame_statistics` does), so at most one
        chunk's frame is held, beside the chunk read ahead.
        """
        columns = None if len(layout.variables) == len(layout.columns) else list(layout.variables)
        if columns is not None:
            layout = _project(layout, columns)
        with self._unchanged(), self._bar(f"pass over {self.what}") as bar:
            for batch, where in self.batches(columns, layout.declared_numeric):
                bar.update(batch.num_rows)
                chunk = batch.to_pandas(split_blocks=True)
                layout.check_columns(chunk, where)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DataWarning)  # counted by the first pass, never shown
                    frame = layout.frame(chunk, where, deferred=False)
                yield fn(frame)

    def _column_parts(self, layout: Layout, transform: Transform, columns, bar) -> Iterator[EngineStats]:
        """Parquet, plain numeric design, no XᵀX: each row group read one column at a time.

        Only the response and one design column of one row group are held (module docstring,
        "Memory bound").  A row group with a null or non-finite value, or a column that is not
        float64, is read again in chunks by the careful route, which drops those rows.
        """
        import pyarrow.parquet as pq

        first = self.arrow_schema()
        names, response = layout.prototype.names, layout.prototype.response
        for path in self.paths:
            schema = self._file_schema(path) if path != self.paths[0] else first
            self._check(first, schema, f"file {path.name}", columns, layout.declared_numeric)
            with reading(path.name, "parquet"), pq.ParquetFile(path, pre_buffer=False) as pf:
                for i in range(pf.num_row_groups):
                    rows = pf.metadata.row_group(i).num_rows
                    read = _ColumnGroups(pf, i, ([response] if response else []) + names, rows)
                    stats = columnwise_statistics(read, names, response, rows, transform)
                    if stats is None and rows:
                        stats = self._careful_row_group(pf, i, layout, transform, columns, path)
                    bar.update(rows)
                    if stats is not None:
                        yield stats

    def _careful_row_group(self, pf, i: int, layout: Layout, transform: Transform, columns, path: Path):
        """One row group in chunks of ``chunk_rows`` through the formula (rows with missing values dropped)."""
        where = f"row group {i + 1} of {path.name}"
        batches = pf.iter_batches(batch_size=self.chunk_rows, row_groups=[i], columns=columns)
        return merge_all((frame_statistics(layout, b, transform, where) for b in batches), layout.p, False)


def _declared_categories(pf) -> dict[str, pd.CategoricalDtype]:
    """The categories of one Parquet file's columns that pandas wrote from a ``CategoricalDtype``
    (:meth:`Stream.pandas_categories`)."""
    import pyarrow as pa

    meta = pf.schema_arrow.pandas_metadata or {}
    here = {}
    for entry in meta.get("columns", []):
        name, info = entry.get("field_name"), entry.get("metadata") or {}
        if entry.get("pandas_type") != "categorical" or name not in pf.schema_arrow.names:
            continue
        if not pa.types.is_dictionary(pf.schema_arrow.field(name).type) or pf.num_row_groups == 0:
            continue
        chunk = pf.read_row_group(0, columns=[name]).column(name)
        dictionary = chunk.chunk(0).dictionary.to_pylist() if chunk.num_chunks else []
        if len(dictionary) == info.get("num_categories"):
            here[name] = pd.CategoricalDtype(dictionary, ordered=bool(info.get("ordered")))
    return here


class _ColumnGroups:
    """Columns of one Parquet row group, read in the order they are asked for, a group of
    ``COLUMN_GROUP_BYTES`` at a time (at least one column), each released once handed out.

    Narrow row groups of many columns are read in few calls (one call per column costs about
    60 µs of pyarrow's own work); long ones one column at a time.
    """

    def __init__(self, pf, index: int, order: list[str], rows: int) -> None:
        self.pf, self.index, self.order = pf, index, order
        self.position = {name: j for j, name in enumerate(order)}
        self.width = max(1, COLUMN_GROUP_BYTES // max(1, 8 * rows))
        self.held: dict = {}

    def __call__(self, name: str):
        if name not in self.held:
            start = self.position[name]
            group = self.order[start : start + self.width]
            table = self.pf.read_row_group(self.index, columns=group, use_threads=False)
            self.held = {c: table.column(c) for c in group}
        return self.held.pop(name)


def _read_ahead(items: Iterator) -> Iterator:
    """Iterate ``items`` with the next one produced in a background thread (errors re-raised here)."""
    import queue
    import threading

    slot: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                slot.put((item, None))
            slot.put((done, None))
        except BaseException as exc:  # handed to the consumer
            slot.put((done, exc))

    worker = threading.Thread(target=produce, daemon=True, name="dpstats-read-ahead")
    worker.start()
    try:
        while True:
            item, exc = slot.get()
            if exc is not None:
                raise exc
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full slot
            try:
                slot.get_nowait()
            except queue.Empty:
                pass
            worker.join(timeout=0.01)


def _converted_column(exc: Exception, schema) -> str | None:
    """The column of pyarrow's CSV conversion error ("In CSV column #k: CSV conversion error to double:
    invalid value '...'", k counting the file's columns, a public name; parsed on one thread, "Row #r: "
    comes before "CSV"), never the row or the value it quotes.

    None for every other error: a row the parser cannot split ("CSV parse error: Expected 4 columns, got
    5: <the row>"), or text that is not UTF-8 (a conversion "to string"), which no column type mends.
    Only the head of the text is read: the row or value it quotes may itself hold "column #k".
    """
    import re

    found = re.match(r"In CSV column #(\d+): (?:Row #\d+: )?CSV conversion error to (\w+)", str(exc))
    if found is None or found.group(2) in ("string", "large_string"):
        return None
    k = int(found.group(1))
    return schema.names[k] if k < len(schema.names) else None


def _kind(arrow_type) -> str:
    """What a column is to the formula: numbers, logicals or labels (int32 and int64 agree;
    a number turned into text does not)."""
    import pyarrow.types as pt

    if (
        pt.is_integer(arrow_type)
        or pt.is_floating(arrow_type)
        or pt.is_decimal(arrow_type)
        or pt.is_null(arrow_type)
    ):
        return "numeric"
    if pt.is_boolean(arrow_type):
        return "logical"
    if pt.is_dictionary(arrow_type):
        return _kind(arrow_type.value_type)
    if pt.is_string(arrow_type) or pt.is_large_string(arrow_type) or pt.is_string_view(arrow_type):
        return "text"
    return str(arrow_type)


def _as_text(field, numeric) -> bool:
    """A declared-numeric CSV column is read as text, but for one whose declared type is a date or time
    (``csv_options`` column types), read as numbers by that type (:mod:`dpstats.temporal`)."""
    return field.name in numeric and arrow_kind(field.type) is None


def _text_in_csv(field, text_columns, declared) -> bool:
    """A CSV column read as text: found not to be one type, or inferred as dates or times without
    a declared type (``pandas.read_csv`` reads such a column as text)."""
    inferred_time = arrow_kind(field.type) not in (None, "unreadable") and field.name not in declared
    return field.name in text_columns or inferred_time


def _project(layout: Layout, columns: list[str]) -> Layout:
    """The layout restricted to the columns the formula reads (projection pushdown)."""
    from dataclasses import replace

    return replace(layout, columns=list(columns))


def stream(
    path,
    *,
    chunk_rows: int = CHUNK_ROWS,
    levels: dict | None = None,
    progress: bool = False,
    format: str | None = None,
    csv_options: dict | None = None,
) -> Stream:
    """Read data in bounded-memory chunks from Parquet or CSV files (the streaming engine).

    Pass the result as ``data=`` to :func:`dpstats.dp_sis` (and the other
    front doors that accept engines): the formula is applied chunk by chunk and
    only sufficient statistics are kept, so peak memory does not grow with the
    number of rows.

    Parameters
    ----------
    path : str, Path, or list of them
        A ``.parquet`` / ``.csv`` file, a list of files, or a folder of files
        of one format (read in name order).  Every file must have the same
        columns and types (a :class:`~dpstats.errors.DataError` says which
        chunk differs).
    chunk_rows : int
        Rows per chunk (CSV: about that many).  Peak memory is at most
        max(chunk_rows, rows per row group) x columns read x 8 bytes x 5
        (module docstring, "Memory bound"), whatever the number of rows;
        Parquet with a plain numeric design and no XᵀX is read by columns of a
        row group, 2 MiB or one column at a time (max(rows per row group x 8
        bytes, 2 MiB) x 10).
    levels : dict, optional
        Declared levels of factor (string, categorical) columns,
        ``{"g": ["a", "b", "c"]}``.  Factors without declared levels are
        read in a first pass: a data-dependent step named in the privacy
        statement (``strict=True`` refuses it).  Logical columns need none.
    progress : bool
        tqdm progress bars during the passes, counting the rows read; where n is private (a private
        call under ``neighbouring="add_remove"``) a line naming the pass, with no number.
    format : {"parquet", "csv"}, optional
        Default: from the file extension.
    csv_options : dict, optional
        ``{"read_options": {...}, "parse_options": {...}, "convert_options": {...}}``
        passed to ``pyarrow.csv``.

    Returns
    -------
    Stream

    Raises
    ------
    DataError
        In the call it is given to: a file its reader cannot parse (a row with more fields than the
        header, bytes that are not UTF-8, a file that is not Parquet).  The message names the
        file and what to check, never a row, a line number or a byte position.  A row with fewer
        fields than the header has missing values in the fields it lacks, as ``pandas.read_csv``
        and R's ``read.csv`` read it.

    Examples
    --------
    >>> import tempfile, os, numpy as np, pandas as pd, dpstats as dp
    >>> df = dp.datasets.fan_lv(n=300, d=20, random_state=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "fan_lv.parquet")
    >>> df.to_parquet(path)
    >>> src = dp.engines.stream(path, chunk_rows=100)
    >>> fit = dp.dp_sis("y ~ .", data=src, eps=2.0, k=3, bounds=(-6, 6), random_state=1, oc_trials=0)
    >>> fit.n
    300
    """
    paths = _paths(path)
    fmt = format or _format(paths)
    if fmt not in FORMATS:  # the arguments' types and values: wrong whatever the data
        raise PrivacyParameterError(f"format must be one of {FORMATS}, got {fmt!r}.")
    check_reading(chunk_rows, levels)  # the arguments' types: wrong whatever the data
    return Stream(paths, fmt, chunk_rows, levels, bool(progress), csv_options)


def check_reading(chunk_rows: object, levels: object) -> None:
    """The reading arguments every engine source takes (:func:`stream`, ``on_duckdb``): ``chunk_rows`` a
    positive whole number, ``levels`` as a door's ``levels=`` (:func:`dpstats.schema.check_levels`)."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise PrivacyParameterError(f"chunk_rows must be a positive whole number, got {chunk_rows!r}.")
    check_levels(levels)


def _paths(path) -> list[Path]:
    items = list(path) if isinstance(path, (list, tuple)) else [path]
    out: list[Path] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise DataError(f"path must be a file name, a folder or a list of file names, got {item!r}.")
        p = Path(item)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.suffix.lower() in (".parquet", ".csv", ".pq"))
            if not files:
                raise DataError(f"folder {p} holds no .parquet or .csv file.")
            out.extend(files)
        elif not p.exists():
            raise DataError(f"file {p} does not exist; check the path.")
        else:
            out.append(p)
    return out


def _format(paths: list[Path]) -> str:
    kinds = {
        "parquet"
        if p.suffix.lower() in (".parquet", ".pq")
        else "csv"
        if p.suffix.lower() in (".csv", ".gz", ".bz2")
        else p.suffix
        for p in paths
    }
    if len(kinds) != 1 or not kinds <= set(FORMATS):
        raise DataError(
            f"cannot tell the format of {[p.name for p in paths][:3]} (extensions {sorted(kinds)}); "
            "give format='parquet' or format='csv', with one format for all files."
        )
    return kinds.pop()


class _ShortRows:
    """pyarrow's ``invalid_row_handler`` of a CSV stream: a row with fields too few is read with the
    missing fields empty (missing values), as ``pandas.read_csv`` and R's ``read.csv`` (``fill =
    TRUE``) read it; a row with a field too many stays an error (:func:`~dpstats.engines.files.unreadable`),
    as it is for pandas.  pyarrow can only skip a row: it is kept here, padded with delimiters, and
    read by :meth:`Stream._short_batches` after the block being read when it was met (the same
    place on every pass: the reader parses on one thread), so at most two blocks' rows are held.
    Every route reads the same rows, none with a message about them."""

    def __init__(self, delimiter: str = ",") -> None:
        import threading

        self.delimiter, self.rows, self.lock = (
            delimiter,
            [],
            threading.Lock(),
        )  # csv_options may ask for threads

    def __call__(self, row) -> str:
        if row.actual_columns >= row.expected_columns:
            return "error"
        with self.lock:
            self.rows.append(row.text + self.delimiter * (row.expected_columns - row.actual_columns))
        return "skip"

    def take(self) -> list[str]:
        with self.lock:
            rows, self.rows = self.rows, []
        return rows


def _parsed_where_arrow_can(batch, numeric):
    """The chunk with its declared-numeric text columns cast to float64 by Arrow where every entry of
    the column parses (the usual case: fast, and the chunk can take the Arrow route of the statistics);
    a column with an entry Arrow does not read ("n/a", " 1.5") stays text, read entry by entry by the
    layout (:func:`dpstats.schema.as_numbers`), which gives the same number for every entry Arrow reads.
    Either way each entry's number depends on that entry alone."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays, fields = list(batch.columns), list(batch.schema)
    for i, field in enumerate(fields):
        if field.name in numeric and pa.types.is_string(field.type):
            try:
                arrays[i] = pc.cast(arrays[i], pa.float64())
            except pa.ArrowInvalid:
                continue
            fields[i] = pa.field(field.name, pa.float64())
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
