"""Data-generating processes for dp_gmm simulations and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class MixtureTruth:
    """The true mixture behind simulated data (for non-private diagnostics)."""

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    labels: np.ndarray


def simulate_gmm(
    n: int,
    d: int = 10,
    k: int = 3,
    *,
    radius: float = 8.0,
    scales=None,
    anisotropy: float = 1.0,
    weights=None,
    random_state: int | None = None,
) -> tuple[pd.DataFrame, MixtureTruth]:
    """Draw n rows from a mixture of k Gaussians in d dimensions.

    The issue's benchmark model by default: equal weights, unit spherical
    components, means at distance ``radius`` from the origin in uniformly random
    directions.  ``scales`` (one σ per component) and ``anisotropy`` (ratio of
    the largest to the smallest axis, randomly rotated) give non-spherical
    components of different scales.

    Examples
    --------
    >>> df, truth = simulate_gmm(300, d=4, k=2, random_state=0)
    >>> df.shape, truth.means.shape
    ((300, 4), (2, 4))
    """
    gen = np.random.default_rng(random_state)
    directions = gen.normal(size=(k, d))
    means = radius * directions / np.linalg.norm(directions, axis=1, keepdims=True)
    scales = np.ones(k) if scales is None else np.asarray(scales, dtype=float)
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    covs = np.empty((k, d, d))
    for j in range(k):
        axes = np.geomspace(1.0, anisotropy, d) if anisotropy != 1 else np.ones(d)
        axes = axes / np.sqrt(np.mean(axes**2))
        rot, _ = np.linalg.qr(gen.normal(size=(d, d)))
        covs[j] = (rot * (scales[j] * axes) ** 2) @ rot.T
    labels = gen.choice(k, size=n, p=w)
    X = np.empty((n, d))
    for j in range(k):
        idx = np.flatnonzero(labels == j)
        chol = np.linalg.cholesky(covs[j])
        X[idx] = means[j] + gen.standard_normal((len(idx), d)) @ chol.T
    frame = pd.DataFrame(X, columns=[f"x{i + 1}" for i in range(d)])
    return frame, MixtureTruth(weights=w, means=means, covariances=covs, labels=labels)
