"""Sources whose rows arrive as Arrow record batches of a query that is run again for every pass.

A DuckDB relation (the record-batch route of :mod:`dpstats.engines.duckdb_engine`) and a polars
LazyFrame (:mod:`dpstats.engines.polars_engine`) are queries, not rows: each pass over them asks
the library to run the query again, projected to the formula's columns, and hand its result in
record batches of about ``chunk_rows`` rows, which go through the streaming engine's chunk
functions (:func:`~dpstats.engines.accumulate.frame_statistics` for the statistics,
:func:`~dpstats.engines.accumulate.chunk_map` for the further passes of
:class:`dpstats.engines.RowPasses`).  The batches come in the query's order, so the chunk sums
are added in a fixed order and a pass is reproducible.  dpstats holds a few batches at a time
(rows x columns x 8 bytes x CHUNKS_IN_FLIGHT, as :mod:`dpstats.engines.stream`); the library's
own scan buffers are its own (measured in ``benchmarks/bench_lazy_sources_memory.py``).

Messages name a batch without its number: how many batches a query gave is a function of its
number of rows, which is private under add/remove-one-row.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

from .._progress import progress_bar
from ..errors import DataWarning
from .accumulate import EngineStats, Transform, chunk_map, frame_statistics, merge_all
from .layout import Layout
from .stream import _project, _read_ahead


class BatchSource:
    """The passes of a source that reads its rows as record batches (module docstring).

    A subclass gives ``engine``, ``what`` (the data, for messages), ``progress``, ``schema_frame()``,
    ``distinct_values(columns)`` and ``_batches(columns, numeric)``, the record batches of one run of
    the query projected to ``columns`` (``numeric``: columns numeric by declaration), each with a
    description for messages.
    """

    engine = ""
    progress = False
    counted = True  # the bars may count rows: False where n is private (engines._prepare sets it)
    what = "the data"

    def _batches(self, columns: list[str], numeric=frozenset()) -> Iterator[tuple[object, str]]:
        raise NotImplementedError

    def _batch_statistics(self, layout: Layout, transform: Transform) -> EngineStats:
        """One pass: every batch through the formula, reduced to statistics, merged in order."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)  # as the streaming engine: counted, not warned
            parts = (frame_statistics(*read, transform, where) for *read, where in self._pass(layout))
            return merge_all(parts, layout.p, transform.gram)

    def frame_map(self, layout: Layout, fn: Callable) -> Iterator:
        """``fn`` of each batch's model frame, in the query's order (one pass of
        :class:`dpstats.engines.RowPasses`): at most one batch's frame is held, beside the batch
        read ahead."""
        from .adapter import native_errors

        with native_errors(self.what):
            for projected, batch, where in self._pass(layout):
                yield chunk_map(projected, batch, fn, where)

    def _pass(self, layout: Layout) -> Iterator[tuple[Layout, object, str]]:
        """One run of the query, projected to the formula's columns: the projected layout, each batch
        (read ahead) and its description, the bar counting its rows where it may."""
        columns = list(layout.variables)
        layout = _project(layout, columns)
        with progress_bar(
            self.progress, None, f"pass over {self.what}", counted=self.counted, unit="rows"
        ) as bar:
            for batch, where in _read_ahead(self._batches(columns, layout.declared_numeric)):
                bar.update(batch.num_rows)
                yield layout, batch, where
