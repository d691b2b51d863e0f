"""FELP's base learner: local-learning feature weights (Liu 2018, §1.1; Logo).

Liu (2018), "Differentially private ensemble feature selection based on
local learning" (FELP), §1.1, takes its base learner FWELL from Li, Yang &
Ji (2016) and Logo (Sun, Todorovic & Goodison 2010, "Local learning based
feature selection for high-dimensional data analysis").  Plain functions of
arrays (docs/architecture.md, "Layers"), in the order a learner runs them:

* :func:`scale_features` maps every feature onto [0, 1] and divides by √d, so
  that each margin vector has ``‖z_i‖₂ <= 1`` (the norm bound the paper's
  Lemma 1 needs).
* :func:`nearest_hit_miss` finds, for every row, its nearest hit (same class)
  and nearest miss (any other class) in the weighted L1 metric
  ``d_w(a, b) = Σ_k w_k |a_k − b_k|``; vectorised (one C-level distance matrix,
  or a BLAS pre-filter plus exact re-ranking for large subsets).
* :func:`margins` gives ``z_i = |x_i − NM(x_i)| − |x_i − NH(x_i)|`` (the
  paper's definition under eq. 1) so that the hypothesis margin is
  ``d_w(x_i, NM) − d_w(x_i, NH) = wᵀ z_i``.
* :func:`solve_weights` minimises eq. (2), ``(1/m) Σ l(wᵀ z_i) + λ‖w‖²`` with
  the logistic loss of eq. (1), ``l(t) = log(1 + exp(−t))``, over ``w >= 0``
  (Logo's objective, Sun et al. eq. 7); strongly convex, solved by L-BFGS-B
  with bounds.
* :func:`logo` alternates neighbour search and the convex solve until the
  relative change ``‖w_t − w_{t−1}‖₂ / ‖w_{t−1}‖₂`` is below ``tol`` (0.01)
  or the neighbours stop changing, at most ``max_iter`` (10) rounds.  With a
  single hard nearest hit/miss the re-assignment falls into 2-cycles (we saw
  a constant 20–30% change on Wdbc); averaging over K = 10 neighbours and the
  relaxation ``w_t = ½ w_{t−1} + ½ solve(z(w_{t−1}))`` (same fixed points)
  make Wdbc converge in 4–5 rounds.  On wide synthetic data the change
  levels off near 2% and the cap ends the loop; how many learners
  converged is reported as a (non-private) diagnostic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import cdist
from scipy.special import expit

from ..._kernels import single_blas_thread
from ...geometry import Box, to_unit_interval

TOL = 1e-2
MAX_ITER = 10
RELAX = 0.5  # w_t = (1 − RELAX) w_{t−1} + RELAX · solve(z(w_{t−1}))
EXACT_LIMIT = 2e8  # m * m * d above this: BLAS pre-filter + exact re-ranking
N_NEIGHBORS = 10  # K nearest hits and misses averaged in the margins
CANDIDATE_FACTOR = 2  # pre-filter keeps CANDIDATE_FACTOR * K candidates per side


# ---------------------------------------------------------------------- scaling
def scale_features(X: np.ndarray, box: Box) -> tuple[np.ndarray, int]:
    """Map each column from [lo, hi] onto [0, 1] (clipping), then divide by √d.

    Every coordinate of a margin vector then lies in [−1/√d, 1/√d], so
    ``‖z_i‖₂ <= 1`` whatever the neighbours are.

    Returns the scaled array and the number of clipped values (not private).

    Examples
    --------
    >>> from dpstats.geometry import Box
    >>> U, _ = scale_features(np.array([[0.0, 2.0], [1.0, 4.0]]),
    ...                       Box(np.array([0.0, 0.0]), np.array([1.0, 4.0])))
    >>> np.round(U * np.sqrt(2), 3).tolist()
    [[0.0, 0.5], [1.0, 1.0]]
    """
    U, n_clipped = to_unit_interval(np.asarray(X, dtype=float), box)
    U += 1.0
    U *= 0.5 / math.sqrt(U.shape[1])
    return U, n_clipped


def data_box(X: np.ndarray) -> Box:
    """Column minima and maxima of the data (a data-dependent step)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return Box(lo.astype(float), hi.astype(float))


# ---------------------------------------------------------------------- neighbours
def nearest_hit_miss(
    U: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    ids: np.ndarray | None = None,
    n_neighbors: int = N_NEIGHBORS,
    exact_limit: float = EXACT_LIMIT,
    masks: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest hits and misses of every row in the metric Σ_k w_k |a_k − b_k|.

    A row is never its own neighbour, nor is another copy of the same original
    row (``ids``: original row index of each row, for bootstrap samples).
    Returns two (m, K) index arrays, nearest first, padded with −1 where a row
    has fewer than K hits (or misses).

    When ``m² d <= exact_limit`` the full distance matrix is computed in C
    (scipy ``cdist``); otherwise the ``CANDIDATE_FACTOR·K`` nearest hits and
    misses in the weighted Euclidean metric (one BLAS product) are re-ranked
    by the exact weighted L1 distance.

    Examples
    --------
    >>> U = np.array([[0.0], [0.1], [1.0], [0.9]]); y = np.array([0, 0, 1, 1])
    >>> hit, miss = nearest_hit_miss(U, y, np.ones(1), n_neighbors=1)
    >>> hit.ravel().tolist(), miss.ravel().tolist()
    ([1, 0, 3, 2], [3, 3, 1, 1])
    """
    m, d = U.shape
    hit_pen, miss_pen = neighbour_masks(y, ids) if masks is None else masks
    K = max(1, min(n_neighbors, m - 1))
    if m * m * d <= exact_limit:
        D = cdist(U * w, U * w, metric="cityblock")
        return _k_smallest(D + hit_pen, K), _k_smallest(D + miss_pen, K)
    V = (U * np.sqrt(w)).astype(np.float32)  # pre-filter only: single precision is enough
    sq = np.einsum("ij,ij->i", V, V)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (V @ V.T)
    return _rerank(U, w, D2 + hit_pen, K), _rerank(U, w, D2 + miss_pen, K)


def neighbour_masks(y: np.ndarray, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Additive masks (0 allowed, +inf not) for hits and misses; they do not depend on w."""
    m = len(y)
    ids = np.arange(m) if ids is None else np.asarray(ids)
    same_row = ids[:, None] == ids[None, :]
    same_class = y[:, None] == y[None, :]
    hit_pen = np.where(same_class & ~same_row, np.float32(0), np.float32(np.inf))
    miss_pen = np.where(same_class, np.float32(np.inf), np.float32(0))
    return hit_pen, miss_pen


def _k_smallest(Dm: np.ndarray, K: int) -> np.ndarray:
    """Column indices of the K smallest finite entries per row, sorted; −1 where none."""
    K = min(K, Dm.shape[1])
    part = (
        np.argpartition(Dm, K - 1, axis=1)[:, :K] if K < Dm.shape[1] else np.tile(np.arange(K), (len(Dm), 1))
    )
    vals = np.take_along_axis(Dm, part, axis=1)
    order = np.argsort(vals, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1)
    idx[~np.isfinite(np.take_along_axis(vals, order, axis=1))] = -1
    return idx


def _rerank(U: np.ndarray, w: np.ndarray, D2: np.ndarray, K: int) -> np.ndarray:
    kc = min(CANDIDATE_FACTOR * K, D2.shape[1])
    cand = _k_smallest(D2, kc)
    out = np.full((U.shape[0], K), -1)
    for start in range(0, U.shape[0], 128):  # chunks bound the m × kc × d temporary
        rows = slice(start, start + 128)
        c = cand[rows]
        l1 = np.abs(U[rows, None, :] - U[np.maximum(c, 0)]) @ w
        l1[c < 0] = np.inf
        best = _k_smallest(l1, K)
        out[rows] = np.where(best >= 0, np.take_along_axis(c, np.maximum(best, 0), axis=1), -1)
    return out


def margins(U: np.ndarray, hit: np.ndarray, miss: np.ndarray) -> np.ndarray:
    """Margin vectors z_i = E|x_i − NM(x_i)| − E|x_i − NH(x_i)| of rows with both neighbours.

    The expectations are uniform over the K nearest misses and hits (a
    K-nearest-neighbour kernel, as in ReliefF; K = 1 is the hard nearest hit
    and miss of the FELP paper).  Rows without a hit or a miss are left out.
    """
    ok = (hit[:, 0] >= 0) & (miss[:, 0] >= 0)
    return _mean_abs_diff(U, miss, ok) - _mean_abs_diff(U, hit, ok)


def _mean_abs_diff(U: np.ndarray, nb: np.ndarray, ok: np.ndarray) -> np.ndarray:
    out = np.zeros((int(ok.sum()), U.shape[1]))
    rows = np.flatnonzero(ok)
    counts = (nb[rows] >= 0).sum(axis=1)
    for k in range(nb.shape[1]):
        j = nb[rows, k]
        have = j >= 0
        out[have] += np.abs(U[rows[have]] - U[j[have]])
    return out / counts[:, None]


# ---------------------------------------------------------------------- convex step
def solve_weights(Z: np.ndarray, lam: float, w0: np.ndarray | None = None) -> np.ndarray:
    """argmin over w >= 0 of (1/m) Σ log(1 + exp(−wᵀ z_i)) + λ‖w‖² (FELP eq. 2 with the loss of eq. 1).

    The objective is 2λ-strongly convex, so the minimiser is unique; L-BFGS-B
    with bound constraints finds it (projected-gradient norm below 1e-10).

    Examples
    --------
    >>> Z = np.array([[0.5, -0.1], [0.4, 0.0]])
    >>> w = solve_weights(Z, lam=0.1)
    >>> bool(w[0] > 0 and w[1] == 0)
    True
    """
    d = Z.shape[1]
    if Z.shape[0] == 0:
        return np.zeros(d)
    m = Z.shape[0]

    def fun(w):
        t = Z @ w
        grad = -(Z.T @ expit(-t)) / m + 2.0 * lam * w
        return np.logaddexp(0.0, -t).mean() + lam * (w @ w), grad

    start = np.zeros(d) if w0 is None else np.maximum(w0, 0.0)
    res = minimize(
        fun,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * d,
        options={"maxiter": 1000, "gtol": 1e-10, "ftol": 1e-14},
    )
    return np.maximum(res.x, 0.0)


@dataclass
class LogoFit:
    """One base learner: weights, rounds used, and whether it met the tolerance."""

    w: np.ndarray
    n_iter: int
    converged: bool


def logo(
    U: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    ids: np.ndarray | None = None,
    n_neighbors: int = N_NEIGHBORS,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    exact_limit: float = EXACT_LIMIT,
) -> LogoFit:
    """Logo local-learning feature weights (Sun, Todorovic & Goodison 2010, Alg. 1).

    Start from uniform weights; repeat: nearest hits and misses under the
    current weights, margins, convex solve, relaxed step (``RELAX``).  Stop
    when the relative change of
    w is below ``tol`` or the neighbours did not change (then w cannot change),
    after at most ``max_iter`` rounds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30); U = rng.uniform(size=(60, 5)) / np.sqrt(5)
    >>> U[:, 0] = (y + rng.uniform(size=60)) / 2 / np.sqrt(5)
    >>> fit = logo(U, y, lam=0.01)
    >>> int(np.argmax(fit.w))
    0
    """
    # single-threaded BLAS: the solver's many small mat-vecs are 10-100x slower when OpenBLAS
    # threads compete for busy cores, and the one large product loses little
    with single_blas_thread():
        return logo_unlimited(U, y, lam, ids, n_neighbors, tol, max_iter, exact_limit)


def logo_unlimited(U, y, lam, ids, n_neighbors, tol, max_iter, exact_limit) -> LogoFit:
    """:func:`logo` on the BLAS threads as they are: for a caller that has limited them once around
    many learners (:func:`.ensemble.ensemble`)."""
    d = U.shape[1]
    w = np.ones(d)
    previous = None
    masks = neighbour_masks(y, ids)
    for it in range(1, max_iter + 1):
        hit, miss = nearest_hit_miss(U, y, w, ids, n_neighbors, exact_limit, masks)
        if previous is not None and np.array_equal(hit, previous[0]) and np.array_equal(miss, previous[1]):
            return LogoFit(w, it - 1, True)
        w_new = solve_weights(margins(U, hit, miss), lam, w0=w if it > 1 else None)
        if it > 1:  # relaxation: damps the 2-cycles of neighbour re-assignment; same fixed points
            w_new = (1.0 - RELAX) * w + RELAX * w_new
        change = np.linalg.norm(w_new - w) / max(np.linalg.norm(w), 1e-300)
        w, previous = w_new, (hit, miss)
        if not np.any(w > 0):
            return LogoFit(w, it, True)
        if change < tol:
            return LogoFit(w, it, True)
    return LogoFit(w, max_iter, False)
