"""polars engine: a LazyFrame read in record batches by polars' streaming engine, never collected whole.

``data=pl.scan_parquet("file.parquet")`` (or any LazyFrame) on a front door that works from
sufficient statistics (dp_lm, dp_sis, dp_pca, dp_knockoff's default route, dp_glm at a finite
eps with a numeric response) is read by this engine (:mod:`dpstats.engines.adapter` decides;
:func:`on_polars` makes the source explicitly).  Each pass asks polars to run the query again,
projected to the formula's columns and cast as a door reads a LazyFrame into pandas (a polars
``Categorical`` as text, decimals as float64: :func:`dpstats.engines.adapter.projected`), with
``LazyFrame.collect_batches`` (polars' streaming engine, the query's order kept), and each batch
of about ``chunk_rows`` rows goes through the streaming engine's chunk functions
(:class:`~dpstats.engines.batches.BatchSource`).  The statistics equal those of the same rows in
memory up to the order of floating-point summation.  Doors that need the rows read a LazyFrame
into pandas (the formula's columns only), as does every door with a polars version that lacks
``LazyFrame.collect_batches``.

Memory: dpstats holds a few batches, as :mod:`dpstats.engines.stream`; polars' streaming engine
holds its own scan buffers, a few hundred MB for a Parquet scan that grow far less than the rows
(``benchmarks/bench_lazy_sources_memory.py``: dp_lm over 5*10^6 rows of 9 columns 371 MB above the
warmed-up process, 442 MB at 1.5*10^7, where reading them into pandas took 875 MB and 2.4 GB; the
Parquet stream 99 MB).

Types, as in memory: a polars ``Enum`` declares its levels (a Categorical with the Enum's
categories); factor levels not declared (``levels=``, an ``Enum``, booleans) are read by a first
query of the distinct values, the named data-dependent step of the other engines.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from ..errors import DataError
from .accumulate import EngineStats, Transform
from .batches import BatchSource
from .layout import Layout
from .stream import CHUNK_ROWS, check_reading


class PolarsSource(BatchSource):
    """A polars LazyFrame as data; create it with :func:`on_polars`."""

    engine = "polars"
    what = "the polars LazyFrame"

    def __init__(self, frame, *, chunk_rows: int, levels: dict | None, progress: bool) -> None:
        self.frame, self.chunk_rows, self.levels, self.progress = frame, chunk_rows, levels, progress
        self.given_as = "a polars.LazyFrame"  # for messages (engines.type_name)
        self._schema: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return f"<dpstats polars source: a LazyFrame, batches of {self.chunk_rows} rows>"

    def schema_frame(self) -> pd.DataFrame:
        """An empty frame with the LazyFrame's columns and the pandas dtypes a door reads them as,
        from its schema alone (no row is read, no query run).  An ``Enum`` is a Categorical with its
        categories; a column of a type with no reading as a number or a factor keeps its Arrow type,
        refused by the layout if the formula uses it (as :class:`~dpstats.engines.DuckDBSource` does)."""
        import polars as pl

        from .adapter import _arrow_to_pandas, native_errors, projected

        if self._schema is None:
            with native_errors(self.what):
                schema = self.frame.collect_schema()
            empty = projected(pl.DataFrame(schema=schema), list(schema.names()), refuse=())[0]
            self._schema = _arrow_to_pandas(
                empty.to_native().to_arrow(), dictionaries_declared=True, refuse=()
            )
        return self._schema.copy()

    def distinct_values(self, columns: list[str]) -> dict[str, list]:
        """First query over the factor columns only: their distinct non-missing values."""
        from .adapter import native_errors, projected

        out = {}
        with native_errors(self.what):
            for c in columns:
                query = projected(self.frame, [c])[0].to_native().drop_nulls().unique()
                out[c] = query.collect(engine="streaming").to_series().to_list()
        return out

    def statistics(self, layout: Layout, transform: Transform) -> EngineStats:
        """The pass: the query's record batches through the formula, reduced to statistics."""
        from .adapter import native_errors

        with native_errors(self.what):
            return self._batch_statistics(layout, transform)

    def _batches(self, columns: list[str], numeric=frozenset()) -> Iterator[tuple[object, str]]:
        """Record batches of one run of the query, projected to ``columns`` (``numeric`` columns are
        read as numbers chunk by chunk, by the layout, as from a Parquet file).

        polars' own frames are taken and turned into Arrow here, not read through the Arrow stream
        interface: a query that fails then raises polars' error, which :func:`~dpstats.engines.adapter.
        native_errors` names without its message (through the stream interface it is an ``OSError``
        whose message quotes the values a cast refused)."""
        from .adapter import projected

        query = projected(self.frame, columns)[0].to_native()
        for frame in query.collect_batches(
            chunk_size=self.chunk_rows, maintain_order=True, engine="streaming"
        ):
            for batch in frame.to_arrow().to_batches():
                yield batch, f"a record batch of {self.what}"


def on_polars(
    data, *, chunk_rows: int = CHUNK_ROWS, levels: dict | None = None, progress: bool = False
) -> PolarsSource:
    """Read a polars LazyFrame in record batches (the polars engine), never collected whole.

    A front door that works from sufficient statistics makes this source with the defaults when
    given a LazyFrame (``data=pl.scan_parquet(...)``); call it to choose them.

    Parameters
    ----------
    data : polars.LazyFrame
        The query, e.g. ``pl.scan_parquet("d.parquet").filter(pl.col("year") == 2024)``.
    chunk_rows : int
        Rows per record batch (``collect_batches(chunk_size=...)``).
    levels : dict, optional
        Declared levels of text columns, ``{"g": ["a", "b"]}`` (as ``levels=`` on a door).
    progress : bool
        A tqdm bar over the batches of each pass, counting rows; where n is private (a private call
        under ``neighbouring="add_remove"``) a line naming the pass, with no number.

    Returns
    -------
    PolarsSource

    Examples
    --------
    >>> import polars as pl, dpstats as dp
    >>> lazy = pl.from_pandas(dp.datasets.fan_lv(n=300, d=10, random_state=0)).lazy()
    >>> fit = dp.dp_lm("y ~ x1 + x2", on_polars(lazy, chunk_rows=100), eps=1.0, delta=1e-6, bounds=(-6, 6),
    ...                random_state=1)
    >>> fit.n, fit.engine
    (300, 'polars')
    """
    from .adapter import _kind, type_name

    if _kind(data) != "polars lazy":
        raise DataError(
            f"on_polars needs a polars LazyFrame (pl.scan_parquet(...), df.lazy()); got {type_name(data)}."
        )
    if not hasattr(data, "collect_batches"):
        raise DataError(
            "on_polars needs a polars version with LazyFrame.collect_batches; upgrade polars, or pass the "
            "LazyFrame itself as data= (it is then read into pandas)."
        )
    check_reading(chunk_rows, levels)  # the arguments' types: wrong whatever the data
    return PolarsSource(data, chunk_rows=chunk_rows, levels=levels, progress=bool(progress))
