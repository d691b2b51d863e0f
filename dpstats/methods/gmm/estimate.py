"""Private per-component estimation on the original coordinates.

Kamath et al. (2019), the last step of Phase I: once the rows are partitioned
into k clusters (by released centres: post-processing), each cluster's weight,
mean and covariance are estimated with clipped noisy statistics.

For cluster j with reference point a_j (released) the deviations
u = x − a_j are shrunk onto a ball of radius r_j (chosen privately by
AboveThreshold as the radius holding ~``QUANTILE`` of the cluster, times
``RADIUS_FACTOR``).  Released, with Gaussian noise:

* counts n_j: one replaced row leaves one cluster and joins another, l2
  sensitivity √2 (1 under add/remove);
* sums S_j = Σ u: dividing cluster j's sum by r_j, the joint vector changes by
  at most 2 (same cluster) or √2 (two clusters) under replace-one, 1 under
  add/remove; noise sd on S_j is r_j·Δ/√(2ρ);
* second moments M_j = Σ uuᵀ (upper triangle): divided by r_j², l2 sensitivity
  √2 under replace-one (‖uuᵀ − vvᵀ‖_F ≤ √2 r²; or r² in each of two clusters)
  and 1 under add/remove; or, for a spherical pass, Σ‖u‖² (sensitivity √2 /
  1 after dividing by r_j²);
* the radii: one AboveThreshold over a public grid of t for the count of rows
  with ‖x − a_j‖ ≤ t·scale_j in their own cluster j; moving one row changes
  that count by at most 1 under either relation.  The threshold is the noisy
  total count less five noise scales (so noise rarely overshoots), at least
  half of it: t holds most rows, and ``RADIUS_FACTOR`` widens it.

Covariances are projected onto the positive-definite cone and shrunk towards
a multiple of the identity by a weight computed from the (public) noise
level — both post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...privacy.calibration import svt_eps, zcdp_gaussian_sigma
from ...privacy.randomness import NoiseSource
from ...privacy.sparse_vector import private_radius

PASS_SPLIT = {"count": 0.1, "radius": 0.15, "sum": 0.35, "second": 0.4}
QUANTILE = 0.98
RADIUS_FACTOR = 1.3
COUNT_SENS = {"replace": math.sqrt(2.0), "add_remove": 1.0}
SUM_SENS = {"replace": 2.0, "add_remove": 1.0}
SECOND_SENS = {"replace": math.sqrt(2.0), "add_remove": 1.0}


def joint_radius(
    scaled_norms: np.ndarray, grid: np.ndarray, n_noisy: float, rho: float, gen: np.random.Generator
) -> float:
    """Private t: the smallest grid value with #{scaled norm <= t} above the threshold."""
    eps = svt_eps(rho)
    threshold = max(0.5 * n_noisy, min(QUANTILE * n_noisy, n_noisy - 5 * 4 / eps))
    return private_radius(scaled_norms, grid, threshold, eps, gen)


@dataclass
class Components:
    """Released mixture parameters and the noise levels behind them."""

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    counts: np.ndarray
    radii: np.ndarray
    mean_noise_sd: np.ndarray
    cov_noise_sd: np.ndarray


@dataclass(frozen=True)
class PassSpec:
    """The public settings of one estimation pass (:func:`estimate_components`).

    Attributes
    ----------
    radii_grid : ndarray
        Public ascending candidate clipping radii.
    neighbouring : {"replace", "add_remove"}
    full_cov : bool
        Full covariances (True) or spherical σ_j² I (False).
    var_floor : float
        Smallest eigenvalue allowed in a released covariance.
    scales : ndarray (k,), optional
        Released scale of each cluster; the clipping radius of cluster j is
        r_j = ``RADIUS_FACTOR`` · t · scales[j] with one private t for all.
    """

    radii_grid: np.ndarray
    neighbouring: str = "replace"
    full_cov: bool = True
    var_floor: float = 1e-6
    scales: np.ndarray | None = None


def estimate_components(
    X: np.ndarray, labels: np.ndarray, refs: np.ndarray, rho: float, noise: NoiseSource, spec: PassSpec
) -> Components:
    """One private estimation pass (module docstring); ρ-zCDP in total.

    Parameters
    ----------
    X : ndarray (n, d)
        Rows (centred at the public centre, clipped to the public box); none is needed:
        a cluster without rows gets a count, mean and covariance from the noise and the
        public floor alone.
    labels : ndarray of int (n,)
        Cluster of each row (a function of the row and released values).
    refs : ndarray (k, d)
        Released reference points a_j.
    rho : float
    noise : NoiseSource
    spec : PassSpec

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> X = np.r_[gen.normal(-4, 1, (4000, 2)), gen.normal(4, 1, (4000, 2))]
    >>> lab = (X[:, 0] > 0).astype(int)
    >>> from dpstats.privacy.sparse_vector import geometric_grid
    >>> c = estimate_components(X, lab, np.array([[-4., -4.], [4., 4.]]), 1.0, NoiseSource(2),
    ...                         PassSpec(geometric_grid(0.1, 50.0)))
    >>> np.round(c.means).tolist()
    [[-4.0, -4.0], [4.0, 4.0]]
    """
    neighbouring, var_floor, full_cov, scales = spec.neighbouring, spec.var_floor, spec.full_cov, spec.scales
    k, d = refs.shape
    rho_c, rho_r, rho_s, rho_m = (rho * PASS_SPLIT[s] for s in ("count", "radius", "sum", "second"))
    raw_counts = np.bincount(labels, minlength=k).astype(float)
    counts = noise.gaussian(raw_counts, zcdp_gaussian_sigma(COUNT_SENS[neighbouring], rho_c))
    scales = np.ones(k) if scales is None else np.asarray(scales, dtype=float)
    dev = X - refs[labels]
    norms = np.linalg.norm(dev, axis=1)
    t = joint_radius(
        norms / scales[labels], spec.radii_grid, float(np.clip(counts, 0, None).sum()), rho_r, noise.generator
    )
    radii = RADIUS_FACTOR * t * scales
    sd_sum = zcdp_gaussian_sigma(SUM_SENS[neighbouring], rho_s)
    sd_second = zcdp_gaussian_sigma(SECOND_SENS[neighbouring], rho_m)
    means, covs = np.empty((k, d)), np.empty((k, d, d))
    mean_sd, cov_sd = np.empty(k), np.empty(k)
    for j in range(k):
        inside = labels == j
        U, nrm, r = dev[inside], norms[inside], radii[j]
        big = nrm > r
        U[big] *= (r / nrm[big])[:, None]
        n_j = max(counts[j], 1.0)
        m = noise.gaussian(U.sum(axis=0), r * sd_sum) / n_j
        # the mean of deviations clipped to norm r has norm <= r (post-processing clamp)
        m *= min(1.0, r / max(float(np.linalg.norm(m)), 1e-300))
        means[j] = refs[j] + m
        mean_sd[j], cov_sd[j] = r * sd_sum / n_j, r * r * sd_second / n_j
        if full_cov:
            iu = np.triu_indices(d)
            upper = noise.gaussian((U.T @ U)[iu], r * r * sd_second)
            second = np.zeros((d, d))
            second[iu] = upper
            second = second + np.triu(second, 1).T
            covs[j] = shrink_to_pd(second / n_j - np.outer(m, m), cov_sd[j], var_floor, cap=r * r)
        else:
            total = float(noise.gaussian(np.array([(nrm.clip(max=r) ** 2).sum()]), r * r * sd_second)[0])
            var = max(total / n_j - m @ m, 0.0) / d
            covs[j] = np.eye(d) * max(var, var_floor, 1e-4 * (r / (math.sqrt(d) + 3)) ** 2)
    weights = np.clip(counts, 1.0, None)
    return Components(
        weights=weights / weights.sum(),
        means=means,
        covariances=covs,
        counts=counts,
        radii=radii,
        mean_noise_sd=mean_sd,
        cov_noise_sd=cov_sd,
    )


def shrink_to_pd(
    cov: np.ndarray, noise_sd: float, var_floor: float, target: np.ndarray | None = None, cap: float = np.inf
) -> np.ndarray:
    """Shrink a noisy covariance towards ``target`` by its known noise level, then make it PD.

    ``target`` defaults to (tr Ĉ/d)·I.  λ = min(1, E‖N‖²_F / ‖Ĉ − target‖²_F)
    with E‖N‖²_F = d²·noise_sd² (the Ledoit–Wolf weight when the noise
    variance is known); eigenvalues below
    ``max(var_floor, 1e-3·tr/d, 2·noise_sd·√d)`` (the last is the noise's
    spectral scale: smaller eigenvalues are not resolved) are raised to it,
    and eigenvalues above ``cap`` (r² for deviations clipped to norm r) are
    lowered to it.  Post-processing.

    Examples
    --------
    >>> c = shrink_to_pd(np.array([[1.0, 2.0], [2.0, 1.0]]), 0.0, 1e-6)
    >>> bool(np.all(np.linalg.eigvalsh(c) > 0))
    True
    """
    d = cov.shape[0]
    cov = (cov + cov.T) / 2
    level = min(max(np.trace(cov) / d, var_floor), cap)
    if target is None:
        target = level * np.eye(d)
    dist2 = float(((cov - target) ** 2).sum())
    lam = 1.0 if dist2 <= 0 else min(1.0, d * d * noise_sd**2 / dist2)
    shrunk = lam * target + (1 - lam) * cov
    vals, vecs = np.linalg.eigh(shrunk)
    # eigenvalues below the noise's spectral scale (≈ 2·sd·√d) are not resolved: raise them to it
    vals = np.clip(vals, min(max(var_floor, 1e-3 * level, 2 * noise_sd * math.sqrt(d)), cap), cap)
    return (vecs * vals) @ vecs.T
