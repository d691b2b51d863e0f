"""Private PCA by "Analyze Gauss" (Dwork, Talwar, Thakurta & Zhang 2014).

Mechanism: release the top-q eigenvectors of Σ xxᵀ + E, E a symmetric matrix
of iid Gaussian entries (upper triangle, mirrored).  Guarantee: ρ-zCDP with
σ = Δ_F/√(2ρ) (the Gaussian mechanism on the upper triangle, whose l2 norm is
at most the Frobenius norm; Bun & Steinke 2016, Prop. 1.6); the eigenvectors
are post-processing.  Used by dp_pca (from a Gram matrix computed by any
engine, :func:`private_pca_gram`) and by dp_gmm: Kamath, Sheffet, Singhal &
Ullman (2019), Phase I projects the data onto the top-k subspace of the noisy
second-moment matrix; for separated components this subspace nearly contains
the component means (their Lemma 3.4 / §3.2; Lemma 4.8, Theorem 9 of Dwork
et al., bounds the effect of the noise).

The rows are first centred at a public point and shrunk onto a ball of
radius C (``clip_rows_l2``).  A = Σ xxᵀ then changes, in Frobenius norm, by
at most ‖xxᵀ − yyᵀ‖_F ≤ √2·C² when one row is replaced (‖xxᵀ − yyᵀ‖²_F =
‖x‖⁴ + ‖y‖⁴ − 2(xᵀy)²) and by ‖xxᵀ‖_F ≤ C² when one is added or removed.
Symmetric noise (iid Gaussian on the upper triangle, mirrored) is added.

Covariance about the mean (dp_pca's default, :mod:`dpstats.methods.pca`) adds a second
Gaussian release: the column sums S = Σ z of the same clipped, centred rows z (‖z‖ ≤ C),
and, where the number of rows n is private, n with them as the last entry of Σ (z, C)
(:func:`sum_sensitivity`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .calibration import zcdp_gaussian_sigma
from .randomness import NoiseSource

PCA_SENSITIVITY = {"replace": math.sqrt(2.0), "add_remove": 1.0}
SUM_SENSITIVITY = {"replace": 2.0, "add_remove": math.sqrt(2.0)}


@dataclass
class PrivatePCA:
    """The released subspace: basis (d × q, orthonormal) and noisy eigenvalues."""

    basis: np.ndarray
    eigenvalues: np.ndarray
    noise_sd: float

    def project(self, X: np.ndarray) -> np.ndarray:
        return X @ self.basis


def second_moment_sensitivity(radius: float, neighbouring: str) -> float:
    """Frobenius sensitivity of Σ xxᵀ for rows in a ball of ``radius``."""
    return PCA_SENSITIVITY[neighbouring] * radius**2


def sum_sensitivity(radius: float, neighbouring: str) -> float:
    """l2 sensitivity of the released sums of rows z in the ball of ``radius`` C about a public centre.

    Replace-one, n public: S = Σ z changes by z − z', ‖z − z'‖₂ ≤ ‖z‖ + ‖z'‖ ≤ 2C (attained by
    z' = −z on the sphere).  Where n is private, the released vector is Σ (z, C), whose last entry
    is C·n: under add/remove-one it changes by (z, C), ‖(z, C)‖₂ ≤ √(C² + C²) = √2·C; under
    replace-one with rows dropped for missing values (the analysed set may then gain or lose a row
    as well as have one replaced) the change is (z − z', 0), (z, C) or −(z, C): at most
    max(2C, √2·C) = 2C.  So Δ₂ = 2C (replace-one) and √2·C (add/remove-one), with or without the
    count entry.

    Examples
    --------
    >>> sum_sensitivity(3.0, "replace"), round(sum_sensitivity(3.0, "add_remove"), 4)
    (6.0, 4.2426)
    """
    return SUM_SENSITIVITY[neighbouring] * radius


def private_pca(
    X: np.ndarray, q: int, radius: float, rho: float, neighbouring: str, noise: NoiseSource
) -> PrivatePCA:
    """Top-``q`` subspace of Σ xxᵀ + E, E symmetric Gaussian (ρ-zCDP).

    Parameters
    ----------
    X : ndarray (n, d)
        Rows already centred at a public point and inside the ball of ``radius``.
    q : int
        Dimension of the subspace (k, or d when k >= d).
    radius : float
        Public (or privately chosen) clipping radius C.
    rho : float
        zCDP budget of this step.
    neighbouring : {"replace", "add_remove"}
    noise : NoiseSource

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> X = np.c_[gen.normal(0, 3, 2000), gen.normal(0, 0.1, 2000)]
    >>> pca = private_pca(X, 1, 10.0, 1.0, "replace", NoiseSource(0))
    >>> bool(abs(pca.basis[0, 0]) > 0.99)
    True
    """
    return private_pca_gram(X.T @ X, q, radius, rho, neighbouring, noise)


def private_pca_gram(
    gram: np.ndarray, q: int, radius: float, rho: float, neighbouring: str, noise: NoiseSource
) -> PrivatePCA:
    """:func:`private_pca` from the second-moment matrix Σ xxᵀ of the clipped rows.

    The same noise and post-processing as :func:`private_pca`, for callers that
    computed Σ xxᵀ in a streamed or distributed pass (:mod:`dpstats.engines`).

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> X = np.c_[gen.normal(0, 3, 2000), gen.normal(0, 0.1, 2000)]
    >>> a = private_pca_gram(X.T @ X, 1, 10.0, 1.0, "replace", NoiseSource(0))
    >>> bool(abs(a.basis[0, 0]) > 0.99)
    True
    """
    sigma = zcdp_gaussian_sigma(second_moment_sensitivity(radius, neighbouring), rho)
    return top_subspace(noisy_symmetric(gram, sigma, noise), q, noise_sd=sigma)


def noisy_symmetric(matrix: np.ndarray, sigma: float, noise: NoiseSource) -> np.ndarray:
    """``matrix`` plus symmetric noise: iid N(0, σ²) on and above the diagonal, mirrored below.

    The Gaussian mechanism on the upper triangle (d(d + 1)/2 values, drawn in
    ``np.triu_indices`` order), whose l2 change is at most the Frobenius change of the matrix.

    Examples
    --------
    >>> m = noisy_symmetric(np.eye(3), 0.5, NoiseSource(0))
    >>> bool(np.array_equal(m, m.T)), m.shape
    (True, (3, 3))
    """
    d = matrix.shape[0]
    iu = np.triu_indices(d)
    noisy = np.zeros((d, d))
    noisy[iu] = noise.gaussian(matrix[iu], sigma)
    return noisy + np.triu(noisy, 1).T


def top_subspace(matrix: np.ndarray, q: int, *, noise_sd: float = 0.0) -> PrivatePCA:
    """The top-``q`` eigenvectors and eigenvalues of a symmetric ``matrix``, each vector's largest entry
    positive (a deterministic sign convention).  Post-processing: applied to a noisy Σ xxᵀ it is the
    release of :func:`private_pca_gram`; applied to the exact one (``noise_sd`` 0) it is the non-private
    reference of ``dp_pca`` at eps = inf.

    Examples
    --------
    >>> top_subspace(np.diag([1.0, 4.0]), 1).basis.ravel().tolist()
    [0.0, 1.0]
    """
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1][:q]
    basis = vectors[:, order]
    signs = np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(q)])
    signs[signs == 0] = 1.0
    return PrivatePCA(basis=basis * signs, eigenvalues=values[order], noise_sd=noise_sd)
