"""Sparse vector technique: AboveThreshold, and the private radius it gives.

Mechanism: :func:`above_threshold` is Lyu, Su & Li (2017, "Understanding the
Sparse Vector Technique for Differential Privacy"), Algorithm 1 with one
positive answer: Laplace noise on the threshold and on every query, release of
the index of the first noisy query above the noisy threshold.  Guarantee:
ε-DP for queries of sensitivity Δ, whatever their number (with c = 1 this is
Dwork & Roth 2014's AboveThreshold, Theorem 3.23).
Only an index is released, so numpy's generator is used (docs/architecture.md,
"Privacy conventions": a choice, not a released real number).

:func:`private_radius` applies it to nested counting queries "how many points
lie within radius r?" over a public ascending grid of radii
(:func:`geometric_grid`): the smallest radius holding at least a threshold
number of points, ε-DP.  dp_gmm chooses every scale it needs this way (the
clipping radius of the data, the side of the grid in which a cluster is
located, the clipping radius of each component).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def above_threshold(
    query: Callable[[int], float],
    n_queries: int,
    threshold: float,
    eps: float,
    gen: np.random.Generator,
    sensitivity: float = 1.0,
) -> int | None:
    """Index of the first query whose noisy value exceeds the noisy threshold.

    Lyu, Su & Li (2017), Algorithm 1 with one positive answer: threshold
    noise Lap(2Δ/ε), query noise Lap(4Δ/ε); ε-DP for queries of sensitivity
    Δ, whatever their number.  Only the index is released, so numpy's
    generator is used (a choice, not a released real number).

    Parameters
    ----------
    query : callable
        ``query(i)`` -> the i-th count (evaluated lazily, in order).
    n_queries : int
    threshold : float
        A public (or previously released) threshold.
    eps : float
    gen : numpy Generator
    sensitivity : float
        Sensitivity of every query.

    Returns
    -------
    int or None
        None when no query passes.

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> above_threshold(lambda i: [0, 10, 1000, 5000][i], 4, 900, eps=1.0, gen=gen)
    2
    """
    noisy_t = threshold + gen.laplace(0.0, 2.0 * sensitivity / eps)
    for i in range(n_queries):
        if query(i) + gen.laplace(0.0, 4.0 * sensitivity / eps) >= noisy_t:
            return i
    return None


def geometric_grid(low: float, high: float, ratio: float = 2**0.5) -> np.ndarray:
    """Public scales low, low·ratio, ... up to and including one ≥ high.

    Examples
    --------
    >>> geometric_grid(1.0, 4.0, 2.0).tolist()
    [1.0, 2.0, 4.0]
    """
    count = int(np.ceil(np.log(high / low) / np.log(ratio) - 1e-9)) + 1
    return low * ratio ** np.arange(count)


def private_radius(
    distances: np.ndarray, radii: Sequence[float], threshold: float, eps: float, gen: np.random.Generator
) -> float:
    """Smallest public radius (from ``radii``, ascending) holding ≥ threshold points, privately.

    Query i is #{distances <= radii[i]}: one row changes it by at most 1 under
    either neighbouring relation.  Returns the last radius when none passes.

    Examples
    --------
    >>> gen = np.random.default_rng(1)
    >>> d = np.abs(gen.normal(size=10000))
    >>> r = private_radius(d, geometric_grid(0.01, 100.0), 9900, eps=1.0, gen=gen)
    >>> 2.0 < r < 6.0
    True
    """
    radii = np.asarray(radii, dtype=float)
    sorted_d = np.sort(np.asarray(distances, dtype=float))
    counts = np.searchsorted(sorted_d, radii, side="right")
    hit = above_threshold(lambda i: float(counts[i]), len(radii), threshold, eps, gen)
    return float(radii[-1] if hit is None else radii[hit])
