"""Data-generating processes for dp_gmm simulations and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError


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


def truth_diagnostics(truth: MixtureTruth | np.ndarray, predicted: np.ndarray, means: np.ndarray) -> dict:
    """A released mixture against the simulation truth (not private: requested diagnostics only).

    ``predicted`` are the released mixture's assignments of the rows the fit used, ``means``
    its released means.  Gives the adjusted Rand index against the true labels and, for a
    :class:`MixtureTruth` with as many components, the mean error in units of each matched
    component's largest standard deviation.
    """
    from scipy.optimize import linear_sum_assignment
    from sklearn.metrics import adjusted_rand_score

    labels = truth.labels if isinstance(truth, MixtureTruth) else np.asarray(truth)
    if labels.shape != predicted.shape:
        raise DataError(  # the number of rows used is not shown: it is private when rows may be dropped
            "truth must give one label per row the fit used (a 1-d array); its length does not match."
        )
    diag = {"ari_vs_truth": float(adjusted_rand_score(labels, predicted))}
    if isinstance(truth, MixtureTruth) and truth.means.shape == means.shape:
        cost = ((means[:, None] - truth.means[None]) ** 2).sum(-1)
        rows, cols = linear_sum_assignment(cost)
        sd = np.sqrt([np.linalg.eigvalsh(truth.covariances[c]).max() for c in cols])
        diag["mean_error_sigma_units"] = float(np.mean(np.sqrt(cost[rows, cols]) / sd))
    return diag
