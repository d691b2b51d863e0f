"""A Gaussian mixture as released parameters: densities, posteriors, assignments.

Everything here is post-processing of released weights, means and
covariances; it costs no privacy.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import logsumexp


def log_joint(X: np.ndarray, weights: np.ndarray, means: np.ndarray, covs: np.ndarray) -> np.ndarray:
    """log w_j + log N(x | μ_j, Σ_j) for every row and component, shape (n, k).

    Examples
    --------
    >>> lj = log_joint(np.zeros((1, 2)), np.array([1.0]), np.zeros((1, 2)), np.eye(2)[None])
    >>> round(float(lj[0, 0]), 4) == round(float(-np.log(2 * np.pi)), 4)
    True
    """
    n, d = X.shape
    out = np.empty((n, len(weights)))
    for j, (w, mu, cov) in enumerate(zip(weights, means, covs)):
        chol = np.linalg.cholesky(cov)
        z = solve_triangular(chol, (X - mu).T, lower=True, check_finite=False)
        logdet = 2 * np.log(np.diag(chol)).sum()
        out[:, j] = np.log(max(w, 1e-300)) - 0.5 * (d * np.log(2 * np.pi) + logdet + (z**2).sum(0))
    return out


def posterior(X, weights, means, covs) -> np.ndarray:
    """Posterior component probabilities, shape (n, k)."""
    lj = log_joint(X, weights, means, covs)
    return np.exp(lj - logsumexp(lj, axis=1, keepdims=True))


def map_assign(X, weights, means, covs) -> np.ndarray:
    """Most probable component of each row."""
    return log_joint(X, weights, means, covs).argmax(axis=1)


def mean_log_likelihood(X, weights, means, covs) -> float:
    """Average log-density of the rows under the mixture."""
    return float(logsumexp(log_joint(X, weights, means, covs), axis=1).mean())


def ellipse_points(mean2: np.ndarray, cov2: np.ndarray, level: float = 2.0, num: int = 100) -> np.ndarray:
    """Points on the ``level``-standard-deviation ellipse of a 2-d Gaussian."""
    vals, vecs = np.linalg.eigh(cov2)
    t = np.linspace(0, 2 * np.pi, num)
    circle = np.c_[np.cos(t), np.sin(t)] * (level * np.sqrt(np.maximum(vals, 0)))
    return circle @ vecs.T + mean2
