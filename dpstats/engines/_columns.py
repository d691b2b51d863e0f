"""Statistics straight from Arrow column buffers (no copy into a 2-D array).

A Parquet batch arrives as one buffer per column.  For Xᵀy, column sums,
min/max and clipping (no XᵀX), each column is reduced where it lies by one
compiled loop that reads every value once — the same quantities as
:func:`dpstats._kernels.fused_cross`, which needs a 2-D array.  The loop runs
without the GIL, so the read-ahead thread decodes the next batch meanwhile.
"""

from __future__ import annotations

import numpy as np

from ..geometry import Box, to_unit_interval
from ..stats import CrossStats

try:
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - numba is a dependency
    HAVE_NUMBA = False


if HAVE_NUMBA:

    @njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    def _column(x, y, mid, half, use_box):  # pragma: no cover - compiled
        raw = 0.0
        a = 0.0
        s = 0.0
        lo = np.inf
        hi = -np.inf
        c = 0
        inv = 1.0 / half
        for i in range(x.size):  # branch-free so that the loop vectorises
            v = x[i]
            raw += v
            lo = min(lo, v)
            hi = max(hi, v)
            if use_box:
                t = (v - mid) * inv
                c += (t > 1.0) + (t < -1.0)
                v = min(max(t, -1.0), 1.0)
            a += v * y[i]
            s += v
        return a, s, raw, lo, hi, c


def column_statistics(columns: list[np.ndarray], y: np.ndarray, x_box: Box | None,
                      y_box: Box | None) -> CrossStats | None:
    """:class:`CrossStats` (no XᵀX) of the design whose columns are ``columns``; None without numba."""
    if not HAVE_NUMBA:
        return None
    p = len(columns)
    finite_y = bool(np.isfinite(y).all())
    n_clipped = 0
    if y_box is not None:
        y, n_clipped = to_unit_interval(y, y_box)
    y = np.ascontiguousarray(y, dtype=float)
    out = np.empty((p, 6))
    use_box = x_box is not None
    for j, x in enumerate(columns):
        mid = float(x_box.center[j]) if use_box else 0.0
        half = float(x_box.halfwidth[j]) if use_box else 1.0
        out[j] = _column(x, y, mid, half, use_box)
    lo, hi = out[:, 3].copy(), out[:, 4].copy()
    if use_box:
        lo_t = np.clip((lo - x_box.center) / x_box.halfwidth, -1, 1)
        hi_t = np.clip((hi - x_box.center) / x_box.halfwidth, -1, 1)
        maxabs = np.maximum(np.abs(lo_t), np.abs(hi_t))
    else:
        maxabs = np.maximum(np.abs(lo), np.abs(hi))
    return CrossStats(
        n=y.size, xty=out[:, 0].copy(), x_sum=out[:, 1].copy(), y_sum=float(y.sum()), yty=float(y @ y),
        x_maxabs=maxabs, y_maxabs=float(np.abs(y).max()), n_clipped=n_clipped + int(out[:, 5].sum()),
        x_min=lo, x_max=hi, finite=finite_y and bool(np.isfinite(out[:, 2]).all()))
