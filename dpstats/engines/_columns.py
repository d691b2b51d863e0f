"""Statistics straight from Arrow column buffers (no copy into a 2-D array).

A Parquet batch arrives as one buffer per column.  For Xᵀy, column sums,
min/max and clipping (no XᵀX), each column is reduced where it lies by one
compiled loop that reads every value once — the same quantities as
:func:`dpstats._kernels.fused_cross`, which needs a 2-D array.  The loop runs
without the GIL, so the read-ahead thread decodes the next batch meanwhile.
The columns may be an iterator that reads each from a file only when its turn
comes (the streaming engine's Parquet route: one column of a row group in memory).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..geometry import Box, to_unit_interval
from ..stats import CrossStats, maxabs_from_range

from .._kernels import HAVE_NUMBA, column_kernel


def column_statistics(
    columns: Iterable[np.ndarray], y: np.ndarray, x_box: Box | None, y_box: Box | None, p: int | None = None
) -> CrossStats | None:
    """:class:`CrossStats` (no XᵀX) of the design whose columns are ``columns``; None without numba.

    ``columns`` is a list, or an iterator of the ``p`` columns in order (each is reduced and
    released before the next is drawn).
    """
    if not HAVE_NUMBA:
        return None
    p = len(columns) if p is None else p
    finite_y = bool(np.isfinite(y).all())
    n_clipped = 0
    if y_box is not None:
        y, n_clipped = to_unit_interval(y, y_box)
    y = np.ascontiguousarray(y, dtype=float)
    out = np.empty((p, 6))
    use_box = x_box is not None
    _column = column_kernel()
    center = x_box.center if use_box else np.zeros(p)
    halfwidth = x_box.halfwidth if use_box else np.ones(p)
    for j, x in enumerate(columns):
        mid, half = float(center[j]), float(halfwidth[j])
        out[j] = _column(x, y, mid, half, use_box)
    lo, hi = out[:, 3].copy(), out[:, 4].copy()
    maxabs = maxabs_from_range(lo, hi, x_box)
    return CrossStats(
        n=y.size,
        xty=out[:, 0].copy(),
        x_sum=out[:, 1].copy(),
        y_sum=float(y.sum()),
        yty=float(y @ y),
        x_maxabs=maxabs,
        y_maxabs=float(np.abs(y).max()),
        n_clipped=n_clipped + int(out[:, 5].sum()),
        x_min=lo,
        x_max=hi,
        finite=finite_y and bool(np.isfinite(out[:, 2]).all()),
    )
