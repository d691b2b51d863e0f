"""Sufficient statistics in one chunked pass (docs/architecture.md, "Layers": data).

Most methods need only n, Xᵀy, XᵀX, column sums, yᵀy and max-abs values.
:func:`cross_products` computes them in a single pass over row chunks, each
chunk small enough to stay in cache, so that the affine map onto declared
bounds, the clipping, the sums and the products cost one read of the data.
Engines for data that does not fit in memory feed the same accumulator
(:class:`CrossProductAccumulator`) chunk by chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._kernels import HAVE_NUMBA, fused_cross, fused_cross_bounded_columns, one_blas_thread
from .geometry import Box, clip_rows_l2, to_unit_interval

CHUNK_BYTES = 4 * 2**20
# Inputs with at least this many values use the fused one-pass kernel.
FUSED_MIN_VALUES = 2**22


@dataclass
class CrossStats:
    """Sufficient statistics of (X, y) on the scale they were computed on."""

    n: int
    xty: np.ndarray
    x_sum: np.ndarray
    y_sum: float
    yty: float
    x_maxabs: np.ndarray | None  # None on a declared-bounds fused pass (not needed there)
    y_maxabs: float
    xtx: np.ndarray | None = None
    n_clipped: int = 0
    x_min: np.ndarray | None = None
    x_max: np.ndarray | None = None
    finite: bool = True
    constant: np.ndarray | None = None

    def constant_columns(self) -> np.ndarray:
        """Boolean mask of columns whose values are all equal."""
        if self.constant is not None:
            return self.constant
        return self.x_min == self.x_max

    @property
    def x_mean(self) -> np.ndarray:
        return self.x_sum / self.n

    @property
    def y_mean(self) -> float:
        return self.y_sum / self.n


@dataclass
class CrossProductAccumulator:
    """Accumulates :class:`CrossStats` over row chunks.

    Parameters
    ----------
    p : int
        Number of columns.
    x_box, y_box : Box or None
        When given, chunks are mapped onto [-1, 1] (clipped) before use.
    gram : bool
        Also accumulate XᵀX.
    """

    p: int
    x_box: Box | None = None
    y_box: Box | None = None
    gram: bool = False
    n: int = 0
    n_clipped: int = 0
    xty: np.ndarray = field(init=False)
    x_sum: np.ndarray = field(init=False)
    xtx: np.ndarray | None = field(init=False)
    y_sum: float = 0.0
    yty: float = 0.0
    y_maxabs: float = 0.0
    finite: bool = True

    def __post_init__(self) -> None:
        self.xty = np.zeros(self.p)
        self.x_sum = np.zeros(self.p)
        self.x_min = np.full(self.p, np.inf)
        self.x_max = np.full(self.p, -np.inf)
        self.xtx = np.zeros((self.p, self.p)) if self.gram else None
        self._buf: np.ndarray | None = None

    def add(self, X: np.ndarray, y: np.ndarray) -> None:
        rows = X.shape[0]
        if rows == 0:
            return
        with np.errstate(over="ignore"):  # raw sums: non-finite if any value is NaN/inf (or huge: harmless)
            col_sum = X.sum(axis=0)
        self.finite = self.finite and bool(np.isfinite(col_sum).all()) and bool(np.isfinite(y).all())
        np.minimum(self.x_min, X.min(axis=0), out=self.x_min)
        np.maximum(self.x_max, X.max(axis=0), out=self.x_max)
        if self.x_box is not None:
            if self._buf is None or self._buf.shape[0] < rows:
                self._buf = np.empty((rows, self.p))
            X, clipped = to_unit_interval(X, self.x_box, out=self._buf[:rows])
            self.n_clipped += clipped
            col_sum = X.sum(axis=0)
        if self.y_box is not None:
            y, clipped = to_unit_interval(y, self.y_box)
            self.n_clipped += clipped
        self.n += rows
        self.xty += X.T @ y
        self.x_sum += col_sum
        self.y_sum += float(y.sum())
        self.yty += float(y @ y)
        self.y_maxabs = max(self.y_maxabs, float(np.abs(y).max()))
        if self.xtx is not None:
            self.xtx += X.T @ X

    def result(self) -> CrossStats:
        # max-abs on the computation scale follows from the raw ranges (the map is monotone)
        maxabs = maxabs_from_range(self.x_min, self.x_max, self.x_box) if self.n else np.zeros(self.p)
        return CrossStats(
            n=self.n,
            xty=self.xty,
            x_sum=self.x_sum,
            y_sum=self.y_sum,
            yty=self.yty,
            x_maxabs=maxabs,
            y_maxabs=self.y_maxabs,
            xtx=self.xtx,
            n_clipped=self.n_clipped,
            x_min=self.x_min,
            x_max=self.x_max,
            finite=self.finite,
        )


def chunk_rows(p: int, itemsize: int = 8) -> int:
    """Rows per chunk so that one chunk of p columns is about CHUNK_BYTES."""
    return max(64, CHUNK_BYTES // max(1, p * itemsize))


@one_blas_thread  # chunk-sized products: one thread is as fast, and idle BLAS threads spin
def cross_products(
    X: np.ndarray,
    y: np.ndarray,
    *,
    x_box: Box | None = None,
    y_box: Box | None = None,
    gram: bool = False,
    rows_per_chunk: int | None = None,
    ranges: bool = True,
) -> CrossStats:
    """Xᵀy, column sums, max-abs values (and XᵀX) in one pass over row chunks.

    Examples
    --------
    >>> X = np.array([[1., 2.], [3., 4.]]); y = np.array([1., -1.])
    >>> cross_products(X, y).xty
    array([-2., -2.])
    """
    n, p = X.shape
    if not gram and n * p >= FUSED_MIN_VALUES and HAVE_NUMBA:
        return _fused_cross_products(X, y, x_box, y_box, ranges)
    acc = CrossProductAccumulator(p=p, x_box=x_box, y_box=y_box, gram=gram)
    step = rows_per_chunk or chunk_rows(p)
    for start in range(0, n, step):
        acc.add(X[start : start + step], y[start : start + step])
    return acc.result()


def _fused_cross_products(
    X: np.ndarray, y: np.ndarray, x_box: Box | None, y_box: Box | None, ranges: bool = True
) -> CrossStats:
    """:func:`cross_products` through the fused kernel (one read of X).

    With ``ranges=False`` and declared bounds, per-column min/max/max-abs are not
    computed (a constant-column mask is), which lets the kernel run at memory speed.
    """
    y = np.asarray(y, dtype=float)
    finite_y = bool(np.isfinite(y).all())
    n_clipped = 0
    if y_box is not None:
        y, n_clipped = to_unit_interval(y, y_box)
    if not ranges and x_box is not None and X.flags.f_contiguous and not X.flags.c_contiguous:
        out = fused_cross_bounded_columns(X, y, x_box.center, x_box.halfwidth)
        return CrossStats(
            n=X.shape[0],
            xty=out["xty"],
            x_sum=out["x_sum"],
            y_sum=float(y.sum()),
            yty=float(y @ y),
            x_maxabs=None,
            y_maxabs=float(np.abs(y).max()),
            n_clipped=n_clipped + out["n_clipped"],
            finite=finite_y and bool(np.isfinite(out["raw_sum"]).all()),
            constant=out["constant"],
        )
    out = fused_cross(
        X, y, None if x_box is None else x_box.center, None if x_box is None else x_box.halfwidth
    )
    lo, hi = out["x_min"], out["x_max"]
    maxabs = maxabs_from_range(lo, hi, x_box)
    return CrossStats(
        n=X.shape[0],
        xty=out["xty"],
        x_sum=out["x_sum"],
        y_sum=float(y.sum()),
        yty=float(y @ y),
        x_maxabs=maxabs,
        y_maxabs=float(np.abs(y).max()),
        n_clipped=n_clipped + out["n_clipped"],
        x_min=lo,
        x_max=hi,
        finite=finite_y and bool(np.isfinite(out["raw_sum"]).all()),
    )


def maxabs_from_range(lo: np.ndarray, hi: np.ndarray, box: Box | None) -> np.ndarray:
    """Column max-abs on the computation scale from raw per-column min and max.

    With a box, the affine map onto [−1, 1] is monotone, so the extremes map to
    the extremes (then clipped).
    """
    if box is None:
        return np.maximum(np.abs(lo), np.abs(hi))
    lo_t = np.clip((lo - box.center) / box.halfwidth, -1, 1)
    hi_t = np.clip((hi - box.center) / box.halfwidth, -1, 1)
    return np.maximum(np.abs(lo_t), np.abs(hi_t))


@dataclass
class RowClippedGram:
    """[X y]ᵀ[X y] of the rows of X scaled onto an l2 ball, with what the pass counted.

    ``row_norm_max`` is the largest row norm of X before scaling; ``n_rows_clipped``
    the rows scaled; ``y_maxabs`` the largest |y| summed (none is private).
    """

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    row_norm_max: float
    n_rows_clipped: int
    y_maxabs: float = math.nan


@one_blas_thread
def row_clipped_gram(
    X: np.ndarray, y: np.ndarray, row_bound: float | None = None, rows_per_chunk: int | None = None
) -> RowClippedGram:
    """XᵀX, Xᵀy and yᵀy of the rows of X clipped to l2 norm ``row_bound``, in one pass over the rows.

    Each chunk of rows is copied once, next to its y, into a cache-sized block Z = [X y];
    rows of X with norm above ``row_bound`` are scaled back onto the ball in that block
    (:func:`dpstats.geometry.clip_rows_l2`'s rule), and one product Zᵀ Z gives the three
    statistics.  The largest row norm is recorded in the same pass, so without a bound
    (``row_bound=None``: nothing is clipped) the caller can take it as the bound.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Finite values (a model frame's design).
    y : ndarray of shape (n,)
    row_bound : float, optional
        The radius B of the ball (the knockoff filter's Assumption 3).
    rows_per_chunk : int, optional
        Default: a block of about ``CHUNK_BYTES``.

    Returns
    -------
    RowClippedGram

    Examples
    --------
    >>> X = np.array([[3.0, 4.0], [0.3, 0.4]]); y = np.array([1.0, 2.0])
    >>> g = row_clipped_gram(X, y, row_bound=1.0)
    >>> g.xtx.round(4).tolist(), g.row_norm_max, g.n_rows_clipped
    ([[0.45, 0.6], [0.6, 0.8]], 5.0, 1)
    """
    n, p = X.shape
    step = rows_per_chunk or chunk_rows(p + 1)
    block = np.empty((min(step, n), p + 1), order="F")  # column copies from a model frame's F-ordered X
    gram = np.zeros((p + 1, p + 1))
    sq_max, clipped = 0.0, 0
    for start in range(0, n, step):
        Z = block[: min(step, n - start)]
        x = Z[:, :p]
        x[...] = X[start : start + step]
        Z[:, p] = y[start : start + step]
        with np.errstate(over="ignore"):
            sq = np.einsum("ij,ij->i", x, x)
        if sq.size:
            sq_max = max(sq_max, float(sq.max()))
        if row_bound is not None and (over := sq > row_bound * row_bound).any():
            if np.isinf(sq).any():  # squares overflow: the careful rule of clip_rows_l2
                x[...], _ = clip_rows_l2(x, row_bound)
            else:
                x[over] *= (row_bound / np.sqrt(sq[over]))[:, None]
            clipped += int(over.sum())
        gram += Z.T @ Z
    return RowClippedGram(
        xtx=gram[:p, :p].copy(),
        xty=gram[:p, p].copy(),
        yty=float(gram[p, p]),
        row_norm_max=math.sqrt(sq_max),
        n_rows_clipped=clipped,
        y_maxabs=float(np.abs(y).max()) if n else 0.0,
    )


def block_rows(labels: np.ndarray, m: int) -> list[np.ndarray]:
    """The row indices of each of the m blocks, ascending within a block (those of ``labels == b``).

    One stable sort of the labels, so each block costs its own size, not a pass over all n rows
    (dp_two_stage's blocks, dp_gmm's sample-and-aggregate groups).

    Examples
    --------
    >>> [rows.tolist() for rows in block_rows(np.array([1, 0, 1, 2, 0]), 4)]
    [[1, 4], [0, 2], [3], []]
    """
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.cumsum(np.bincount(labels, minlength=m))[:-1])
