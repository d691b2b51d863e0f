"""Sufficient statistics of one chunk, and the merge of chunks (docs/architecture.md, "Layers": data).

Every engine reduces its chunks with the same two functions:
:func:`chunk_statistics` turns one chunk of rows into an :class:`EngineStats`
(the fused kernel of :mod:`dpstats._kernels` or
:class:`~dpstats.stats.CrossProductAccumulator`, as
:func:`dpstats.stats.cross_products` chooses), and :func:`merge` adds two of
them.  Sums add, extremes take the extreme, so the merged statistics equal the
in-memory ones up to the order of floating-point summation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..errors import DataWarning
from ..geometry import Box, clip_response, to_unit_interval
from ..stats import CrossProductAccumulator, CrossStats, chunk_rows, cross_products
from ..temporal import arrow_numbers, read_columns
from .._kernels import HAVE_NUMBA
from ._columns import column_statistics
from .layout import Layout


@dataclass
class Transform:
    """What is done to each row before it is summed.

    ``x_box``/``y_box`` map columns from declared bounds onto [−1, 1] (clipped);
    ``row_bound`` then scales rows of the design with l2 norm above it back onto
    the ball (knockoff Assumption 3); ``row_norms`` records the largest row norm
    (before clipping); ``y_clip`` clips finite responses to [−y_clip, y_clip]
    without mapping them (the knockoff filter's response bound).  ``gram`` asks for XᵀX.
    """

    x_box: Box | None = None
    y_box: Box | None = None
    gram: bool = False
    row_bound: float | None = None
    row_norms: bool = False
    y_clip: float | None = None
    ranges_only: bool = False

    @property
    def rowwise(self) -> bool:
        """Rows are clipped, measured or their responses clipped: the row-by-row route."""
        return self.row_bound is not None or self.row_norms or self.y_clip is not None


@dataclass
class EngineStats:
    """Statistics of a pass: the cross products plus what the engines count.

    Attributes
    ----------
    cross : CrossStats
        n, Xᵀy, column sums, yᵀy, max-abs, XᵀX (if asked), raw per-column min/max.
    n_dropped : int
        Rows dropped for missing or non-finite values (not private).
    n_filled : int
        Values replaced by their public fill (``na_action="fill"``; not private).
    row_norm_max : float
        Largest l2 row norm of the (box-mapped) design before row clipping
        (0 when not asked for).
    n_rows_clipped : int
        Rows scaled back onto the ``row_bound`` ball (not private).
    chunks : int
        Number of chunks reduced.
    boxes : (Box or None, Box or None)
        The declared boxes of the design and the response the pass mapped and clipped the
        values with (``boxes(mf)`` of :func:`dpstats.engines.sufficient_statistics`).
    """

    cross: CrossStats
    n_dropped: int = 0
    n_filled: int = 0
    row_norm_max: float = 0.0
    n_rows_clipped: int = 0
    chunks: int = 1
    boxes: tuple[Box | None, Box | None] = (None, None)

    @property
    def n(self) -> int:
        return self.cross.n

    def box_gram(self, x_box: Box) -> np.ndarray:
        """XᵀX of the rows clipped to the box and centred at its midpoint (private PCA's input).

        The pass maps columns onto [−1, 1] by (x − c)/h; the clipped, centred rows
        are h·(that), so their Gram matrix is diag(h)·XᵀX·diag(h).
        """
        if self.cross.xtx is None:
            raise ValueError("box_gram needs a pass with gram=True.")
        h = np.asarray(x_box.halfwidth, dtype=float)
        return self.cross.xtx * np.outer(h, h)

    def box_sums(self, x_box: Box) -> np.ndarray:
        """Σ (x − c) of the rows clipped to the box (and onto the pass's row bound), c its midpoint:
        h times the column sums of the mapped rows (:meth:`box_gram`'s companion)."""
        return self.cross.x_sum * np.asarray(x_box.halfwidth, dtype=float)


def empty_stats(p: int, gram: bool) -> EngineStats:
    """The statistics of no rows (the identity of :func:`merge`)."""
    acc = CrossProductAccumulator(p=p, gram=gram)
    return EngineStats(acc.result(), chunks=0)


def merge(a: EngineStats, b: EngineStats) -> EngineStats:
    """Statistics of the union of two disjoint sets of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.stats import cross_products
    >>> X, y = np.arange(8.).reshape(4, 2), np.array([1., -1, 2, 0])
    >>> parts = [EngineStats(cross_products(X[:2], y[:2])), EngineStats(cross_products(X[2:], y[2:]))]
    >>> merge(*parts).cross.xty.tolist() == cross_products(X, y).xty.tolist()
    True
    """
    x, z = a.cross, b.cross
    if x.n == 0:
        return replace(
            b,
            n_dropped=a.n_dropped + b.n_dropped,
            n_filled=a.n_filled + b.n_filled,
            chunks=a.chunks + b.chunks,
        )
    if z.n == 0:
        return replace(
            a,
            n_dropped=a.n_dropped + b.n_dropped,
            n_filled=a.n_filled + b.n_filled,
            chunks=a.chunks + b.chunks,
        )
    cross = CrossStats(
        n=x.n + z.n,
        xty=x.xty + z.xty,
        x_sum=x.x_sum + z.x_sum,
        y_sum=x.y_sum + z.y_sum,
        yty=x.yty + z.yty,
        x_maxabs=np.maximum(x.x_maxabs, z.x_maxabs),
        y_maxabs=max(x.y_maxabs, z.y_maxabs),
        xtx=None if x.xtx is None else x.xtx + z.xtx,
        n_clipped=x.n_clipped + z.n_clipped,
        x_min=np.minimum(x.x_min, z.x_min),
        x_max=np.maximum(x.x_max, z.x_max),
        finite=x.finite and z.finite,
    )
    return EngineStats(
        cross,
        n_dropped=a.n_dropped + b.n_dropped,
        n_filled=a.n_filled + b.n_filled,
        row_norm_max=max(a.row_norm_max, b.row_norm_max),
        n_rows_clipped=a.n_rows_clipped + b.n_rows_clipped,
        chunks=a.chunks + b.chunks,
    )


def merge_all(parts, p: int, gram: bool) -> EngineStats:
    """Merge statistics in the order given (a fixed order makes the sums reproducible)."""
    total = empty_stats(p, gram)
    for part in parts:
        total = merge(total, part)
    return total


def array_statistics(X: np.ndarray, y: np.ndarray | None, t: Transform) -> EngineStats:
    """Statistics of one block of rows of a design already built."""
    y0 = np.zeros(X.shape[0]) if y is None else y
    if t.ranges_only:
        return EngineStats(_ranges(X, y0))
    if not t.rowwise:
        return EngineStats(cross_products(X, y0, x_box=t.x_box, y_box=t.y_box, gram=t.gram))
    return _row_clipped(X, y0, t)


def _ranges(X: np.ndarray, y: np.ndarray) -> CrossStats:
    """n, raw min/max, max |y| and finiteness of a block; the sums left at zero (nothing multiplied)."""
    p = X.shape[1]
    empty = X.shape[0] == 0
    lo = np.full(p, np.inf) if empty else X.min(axis=0)
    hi = np.full(p, -np.inf) if empty else X.max(axis=0)
    finite = bool(np.isfinite(lo).all() and np.isfinite(hi).all() and np.isfinite(y).all()) or empty
    return CrossStats(
        n=X.shape[0],
        xty=np.zeros(p),
        x_sum=np.zeros(p),
        y_sum=0.0,
        yty=0.0,
        x_maxabs=np.maximum(np.abs(lo), np.abs(hi)),
        y_maxabs=0.0 if empty else float(np.abs(y).max()),
        x_min=lo,
        x_max=hi,
        finite=finite,
    )


def _row_clipped(X: np.ndarray, y: np.ndarray, t: Transform) -> EngineStats:
    """Box map, then rows onto the l2 ball of radius ``row_bound``, then the sums."""
    p = X.shape[1]
    acc = CrossProductAccumulator(p=p, y_box=t.y_box, gram=t.gram)
    raw_min, raw_max = np.full(p, np.inf), np.full(p, -np.inf)
    norm_max, rows_clipped, n_clipped = 0.0, 0, 0
    step = chunk_rows(p)
    for start in range(0, X.shape[0], step):
        block = X[start : start + step]
        np.minimum(raw_min, block.min(axis=0), out=raw_min)
        np.maximum(raw_max, block.max(axis=0), out=raw_max)
        if t.x_box is not None:
            block, c = to_unit_interval(block, t.x_box)
            n_clipped += c
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))  # inf for a huge row: scaled to 0, or B refused
        norm_max = max(norm_max, float(norms.max())) if norms.size else norm_max
        if t.row_bound is not None:
            over = norms > t.row_bound
            if over.any():
                block = block.copy() if t.x_box is None else block
                block[over] *= (t.row_bound / norms[over])[:, None]
                rows_clipped += int(over.sum())
        part = y[start : start + step]
        with np.errstate(over="ignore", invalid="ignore") if t.row_bound is None else nullcontext():
            acc.add(block, part if t.y_clip is None else clip_response(part, t.y_clip))
    cross = acc.result()
    cross.x_min, cross.x_max = raw_min, raw_max
    cross.n_clipped += n_clipped
    return EngineStats(cross, row_norm_max=norm_max, n_rows_clipped=rows_clipped)


def frame_statistics(layout: Layout, chunk, t: Transform, where: str) -> EngineStats:
    """Statistics of one chunk of raw rows: formula, dropped rows, transform, sums.

    ``chunk`` is a pandas DataFrame or a pyarrow RecordBatch.  A batch of a
    plain numeric design with no missing value goes straight from Arrow to
    one column-major array (no pandas frame); otherwise plain numeric designs
    take the deferred route of ``model_frame`` (X a view of the chunk), and a
    chunk found to hold a non-finite value is rebuilt the careful way, its
    incomplete rows dropped and counted.
    """
    if not isinstance(chunk, pd.DataFrame):
        chunk = arrow_numbers(chunk, refuse=())  # dates as numbers (dpstats.temporal)
        stats = _arrow_statistics(layout, chunk, t)
        if stats is not None:
            return stats
        chunk = chunk.to_pandas(split_blocks=True)
    chunk = read_columns(chunk, refuse=())
    layout.check_columns(chunk, where)
    mf = layout.frame(chunk, where, deferred=True)
    stats = array_statistics(mf.X, mf.y, t) if mf.n else empty_stats(layout.p, t.gram)
    if not mf.checked and not stats.cross.finite:
        mf = layout.frame(chunk, where, deferred=False)
        stats = array_statistics(mf.X, mf.y, t) if mf.n else empty_stats(layout.p, t.gram)
    stats.n_dropped, stats.n_filled = mf.n_dropped, mf.n_filled
    if mf.y is None:
        stats.cross.y_sum = stats.cross.yty = stats.cross.y_maxabs = 0.0
    return stats


def chunk_map(layout: Layout, chunk, fn: Callable, where: str):
    """``fn`` of one chunk's model frame (a pass of :class:`dpstats.engines.RowPasses`), the frame built
    the careful way: its rows with missing values filled or dropped by the schema's rule, as
    :func:`frame_statistics` does, nothing warned (the first pass counted them).  ``chunk`` is a
    pandas DataFrame or a pyarrow RecordBatch."""
    if not isinstance(chunk, pd.DataFrame):
        chunk = chunk.to_pandas(split_blocks=True)
    layout.check_columns(chunk, where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        frame = layout.frame(chunk, where, deferred=False)
    return fn(frame)


def _arrow_statistics(layout: Layout, batch, t: Transform) -> EngineStats | None:
    """The fast route for a plain float64 design without nulls; None if it does not apply.

    Non-finite values (inf, NaN stored as a value) make it give up too, and the
    careful route drops those rows.  So does a removed variable (``y ~ . - x``),
    whose missing values drop rows as R does.
    """
    if not layout.plain or batch.num_rows == 0 or not _design_variables_only(layout):
        return None
    names = layout.prototype.names
    response = layout.prototype.response
    cols = names + ([response] if response else [])
    if any(not _plain_float(batch.column(c)) for c in cols):
        return None
    if columnwise_applies(layout, t):  # column by column, no copy
        return columnwise_statistics(batch.column, names, response, batch.num_rows, t)
    y = batch.column(response).to_numpy() if response else None
    X = np.asarray(batch.select(names).to_tensor(row_major=True))  # one copy, row-major
    stats = array_statistics(X, y, t)
    if not stats.cross.finite:
        return None
    if y is None:
        stats.cross.y_sum = stats.cross.yty = stats.cross.y_maxabs = 0.0
    return stats


def _design_variables_only(layout: Layout) -> bool:
    """Every variable the formula uses is a design column or the response (none is removed)."""
    proto = layout.prototype
    return set(layout.variables) <= set(proto.names) | ({proto.response} if proto.response else set())


def columnwise_applies(layout: Layout, t: Transform) -> bool:
    """Whether :func:`columnwise_statistics` can serve a pass: a plain numeric design with no removed
    variable, no XᵀX, no row clipping, and the compiled column kernel (numba)."""
    plain = layout.plain and _design_variables_only(layout)
    return HAVE_NUMBA and plain and not (t.gram or t.rowwise or t.ranges_only)


class _NotPlain(Exception):
    """A column holds a null or is not float64: the careful route takes the chunk."""


def _plain_float(column) -> bool:
    import pyarrow as pa

    return column.type == pa.float64() and not column.null_count


def _plain_values(column) -> np.ndarray:
    if not _plain_float(column):
        raise _NotPlain
    return column.to_numpy()


def columnwise_statistics(read, names: list[str], response: str | None, n_rows: int, t: Transform):
    """Statistics of a plain float64 design read one column at a time (no XᵀX); None if it does not apply.

    ``read(name)`` returns the pyarrow column ``name`` of the chunk; it is called for the response,
    then for each design column in turn, and each column is reduced by the compiled column kernel and
    released before the next is read (:func:`dpstats.engines._columns.column_statistics`), so only
    one design column is held at a time.  None when a column holds a null, is not float64 or holds a
    non-finite value (the careful route then drops those rows) or numba is missing.
    """
    if n_rows == 0:
        return None
    try:
        y = _plain_values(read(response)) if response else np.zeros(n_rows)
        columns = (_plain_values(read(c)) for c in names)
        cross = column_statistics(columns, y, t.x_box, t.y_box, p=len(names))
    except _NotPlain:
        return None
    if cross is None or not cross.finite:
        return None
    if not response:
        cross.y_sum = cross.yty = cross.y_maxabs = 0.0
    return EngineStats(cross)
