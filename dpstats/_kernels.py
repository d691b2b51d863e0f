"""Fused one-pass kernels for sufficient statistics (numba; numpy fallback).

numpy needs one pass over the data per operation (affine map, clip, product,
sum, min, max), and on large matrices those passes, not arithmetic, dominate.
These kernels read each value once and update every accumulator, in parallel
over row blocks (C order) or columns (Fortran order, e.g. a pandas frame's
block).  Used by :mod:`dpstats.stats` for large inputs; small inputs take the
numpy path, whose results the tests compare against these.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import threading

import numpy as np

# numba is a dependency, but the package stays usable without it.  It is imported (and the
# kernels compiled, or loaded from numba's on-disk cache) on the first kernel call, not when
# this module is imported: ``import numba`` alone costs about 0.25 s.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

prange = range  # numba.prange once the kernels are compiled (see _compiled)
_KERNELS: dict[str, dict] = {}
_LOCK = threading.Lock()
_READY = False


_BLAS_CONTROLLER = None
_BLAS_HAS_SCIPY = False


def one_blas_thread(fn):
    """Run ``fn`` with BLAS/LAPACK limited to one thread (a decorator for p x p algebra).

    Factorisations of a few hundred columns gain nothing from more threads, and a
    multi-threaded OpenBLAS whose threads wait for busy cores was measured taking
    100-200 ms over a 100 x 100 ``numpy.linalg.solve`` (0.1 ms on one thread).
    Results are those of the one-thread BLAS.

    Examples
    --------
    >>> @one_blas_thread
    ... def solve(A, b):
    ...     return np.linalg.solve(A, b)
    >>> solve(2 * np.eye(2), np.ones(2)).tolist()
    [0.5, 0.5]
    """

    @functools.wraps(fn)
    def limited(*args, **kwargs):
        with single_blas_thread():
            return fn(*args, **kwargs)

    return limited


def single_blas_thread():
    """A context manager limiting BLAS/LAPACK to one thread (:func:`one_blas_thread` as a ``with``).

    The libraries are found once per process (a scan of the loaded libraries, about
    a millisecond, more on a busy machine) and again once scipy, which brings its own
    OpenBLAS, has been loaded.

    Examples
    --------
    >>> with single_blas_thread():
    ...     np.linalg.solve(2 * np.eye(2), np.ones(2)).tolist()
    [0.5, 0.5]
    """
    global _BLAS_CONTROLLER, _BLAS_HAS_SCIPY
    with_scipy = "scipy.linalg" in sys.modules
    if _BLAS_CONTROLLER is None or (with_scipy and not _BLAS_HAS_SCIPY):
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER, _BLAS_HAS_SCIPY = ThreadpoolController(), with_scipy
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


def _kernel(**options):
    """Register a kernel for :func:`_compiled` to wrap with ``numba.njit(**options)``."""

    def register(fn):
        _KERNELS[fn.__name__] = options
        return fn

    return register


def _compiled() -> None:
    """Import numba and replace every registered kernel in this module by its numba dispatcher (once).

    All kernels are replaced before any is compiled, so a kernel that calls another
    (``_fused_columns`` calls ``fused_column``) finds the dispatcher, and ``prange``
    is numba's parallel range inside them.
    """
    global _READY
    if _READY:
        return
    with _LOCK:  # the engines' read-ahead thread may make the first call
        if _READY:
            return
        import numba

        g = globals()
        g["prange"] = numba.prange
        for name, options in _KERNELS.items():
            g[name] = numba.njit(**options)(g[name])
        _READY = True


def column_kernel():
    """The compiled one-column kernel :func:`fused_column` (for :mod:`dpstats.engines`); requires numba."""
    _compiled()
    return fused_column


@_kernel(parallel=True, cache=True)
def _fused_rows(X, y, center, halfwidth, use_box, nblocks):  # pragma: no cover - compiled
    n, p = X.shape
    xty = np.zeros((nblocks, p))
    xsum = np.zeros((nblocks, p))
    raw_sum = np.zeros((nblocks, p))
    xmin = np.full((nblocks, p), np.inf)
    xmax = np.full((nblocks, p), -np.inf)
    clipped = np.zeros(nblocks, np.int64)
    rows = (n + nblocks - 1) // nblocks
    for b in prange(nblocks):
        stop = min(n, (b + 1) * rows)
        for i in range(b * rows, stop):
            yi = y[i]
            for j in range(p):
                v = X[i, j]
                raw_sum[b, j] += v
                if v < xmin[b, j]:
                    xmin[b, j] = v
                if v > xmax[b, j]:
                    xmax[b, j] = v
                if use_box:
                    v = (v - center[j]) / halfwidth[j]
                    if v > 1.0:
                        v = 1.0
                        clipped[b] += 1
                    elif v < -1.0:
                        v = -1.0
                        clipped[b] += 1
                xty[b, j] += v * yi
                xsum[b, j] += v
    return xty, xsum, raw_sum, xmin, xmax, clipped


@_kernel(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def fused_column(x, y, mid, half, use_box):  # pragma: no cover - compiled
    """One column: (xᵀy, sum, raw sum, raw min, raw max, clipped count) in one read."""
    raw = 0.0
    a = 0.0
    s = 0.0
    lo = np.inf
    hi = -np.inf
    c = 0
    inv = 1.0 / half
    for i in range(x.size):
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


@_kernel(parallel=True, cache=True)
def _fused_columns(XT, y, center, halfwidth, use_box):  # pragma: no cover - compiled
    p = XT.shape[0]
    out = np.empty((6, p))
    for j in prange(p):
        a, s, r, lo, hi, c = fused_column(XT[j], y, center[j], halfwidth[j], use_box)
        out[0, j] = a
        out[1, j] = s
        out[2, j] = r
        out[3, j] = lo
        out[4, j] = hi
        out[5, j] = c
    return out[0], out[1], out[2], out[3], out[4], out[5].astype(np.int64)


@_kernel(parallel=True, cache=True, fastmath=True)
def _fused_columns_box(XT, y, center, halfwidth):  # pragma: no cover - compiled
    # Declared bounds: no per-element min/max (they defeat vectorisation and the
    # bounds are public); constant columns are found from the sum of squares.
    # fastmath is safe here: non-finite input is detected outside, from raw_sum.
    p, n = XT.shape
    out = np.zeros((5, p))
    clipped = np.zeros(p, np.int64)
    for j in prange(p):
        a = 0.0
        s = 0.0
        r = 0.0
        q = 0.0
        c = 0
        mid = center[j]
        inv = 1.0 / halfwidth[j]
        for i in range(n):
            v = XT[j, i]
            r += v
            q += v * v
            t = (v - mid) * inv
            c += (t > 1.0) + (t < -1.0)
            t = min(max(t, -1.0), 1.0)
            a += t * y[i]
            s += t
        out[0, j] = a
        out[1, j] = s
        out[2, j] = r
        out[3, j] = q
        clipped[j] = c
    return out, clipped


def fused_cross_bounded_columns(
    X: np.ndarray, y: np.ndarray, center: np.ndarray, halfwidth: np.ndarray
) -> dict:
    """Declared-bounds pass over a Fortran-ordered X at memory speed.

    Returns Xᵀy and column sums on the [−1, 1] scale, raw column sums (non-finite
    if any value is NaN/inf), the clipped count and a mask of constant columns
    (sum-of-squares screen, confirmed exactly on the flagged columns).
    """
    _compiled()
    n = X.shape[0]
    out, clipped = _fused_columns_box(
        X.T,
        np.ascontiguousarray(y, dtype=float),
        np.ascontiguousarray(center, dtype=float),
        np.ascontiguousarray(halfwidth, dtype=float),
    )
    raw, sq = out[2], out[3]
    with np.errstate(invalid="ignore", over="ignore"):
        mean_sq = sq / n
        var = mean_sq - (raw / n) ** 2
        flagged = np.flatnonzero(np.isfinite(var) & (var <= 1e-9 * np.maximum(mean_sq, 1e-300)))
    constant = np.zeros(X.shape[1], dtype=bool)
    for j in flagged:
        column = X[:, j]
        constant[j] = bool(column.min() == column.max())
    return {
        "xty": out[0],
        "x_sum": out[1],
        "raw_sum": raw,
        "n_clipped": int(clipped.sum()),
        "constant": constant,
    }


def fused_cross(
    X: np.ndarray, y: np.ndarray, center: np.ndarray | None = None, halfwidth: np.ndarray | None = None
) -> dict:
    """One pass: Xᵀy and column sums (after the optional affine map and clip to [−1, 1]),
    raw column sums (non-finite if any value is NaN/inf), raw min/max, clipped count.

    ``y`` must already be on its final scale.  Requires numba.
    """
    _compiled()
    p = X.shape[1]
    use_box = center is not None
    c = np.ascontiguousarray(center if use_box else np.zeros(p), dtype=float)
    h = np.ascontiguousarray(halfwidth if use_box else np.ones(p), dtype=float)
    y = np.ascontiguousarray(y, dtype=float)
    if X.flags.f_contiguous and not X.flags.c_contiguous:
        xty, xsum, raw, lo, hi, clipped = _fused_columns(X.T, y, c, h, use_box)
    else:
        from numba import get_num_threads

        blocks = 4 * get_num_threads()
        parts = _fused_rows(np.ascontiguousarray(X), y, c, h, use_box, blocks)
        xty, xsum, raw = (a.sum(axis=0) for a in parts[:3])
        lo, hi, clipped = parts[3].min(axis=0), parts[4].max(axis=0), parts[5]
    return {
        "xty": xty,
        "x_sum": xsum,
        "raw_sum": raw,
        "x_min": lo,
        "x_max": hi,
        "n_clipped": int(clipped.sum()),
    }
