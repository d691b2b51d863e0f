"""dp_gmm pipelines: Phase I ("pca_cluster") and sample-and-aggregate.

Kamath, Sheffet, Singhal & Ullman (2019), "Differentially Private Algorithms
for Learning Mixtures of Separated Gaussians":

* ``pca_cluster`` — their Phase I ("easy case"): a private clipping radius,
  private PCA (:mod:`dpstats.privacy.pca`), private clustering in the projected space
  (:mod:`.gmm_cluster`), then private estimation per component
  (:mod:`.gmm_estimate`) in two passes: a spherical pass on the Voronoi
  partition of the located centres, and a full-covariance pass on the
  partition by the most probable component of the first pass (a private
  hard-EM step, which is what makes different scales workable).
* ``sample_aggregate`` — their §6: the rows are split into m groups, a
  non-private EM fit (scikit-learn) runs on each, components are aligned to a
  private coarse fit (the Phase I pipeline with part of the budget), and the
  aligned means and covariances are averaged with Gaussian noise after
  clipping to a private radius around the coarse fit (the paper's "locate a
  small ball, then average privately", with the coarse fit as the located
  centre and AboveThreshold for the radius); weights are noisy counts of the
  most probable aggregated component.

Phase II (the recursive "terrific ball" split for components of very
different scales) is NOT implemented; see the module docstring of
:mod:`dpstats.api.gmm`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..privacy.accountant import BudgetPlan
from ..privacy.calibration import svt_eps, zcdp_gaussian_sigma
from ..privacy.pca import PrivatePCA, private_pca
from ..privacy.randomness import NoiseSource
from ..privacy.sparse_vector import geometric_grid, private_radius
from .gmm_cluster import Located, private_clusters
from .gmm_estimate import COUNT_SENS, Components, estimate_components, shrink_to_pd
from .gmm_model import map_assign

#: default shares of ρ (Phase I)
SPLIT = {"radius": 0.04, "pca": 0.16, "cluster": 0.30, "pass1": 0.15, "pass2": 0.35}
#: default shares of ρ (sample and aggregate): a coarse Phase I fit, then the aggregation
SA_SPLIT = {"radius": 0.02, "pca": 0.10, "cluster": 0.20, "pass1": 0.10, "pass2": 0.13,
            "agg_radius": 0.05, "agg_means": 0.20, "agg_covs": 0.15, "agg_weights": 0.05}
RADIUS_QUANTILE = 0.98
RADIUS_FACTOR = 1.1


def _sens(neighbouring: str, replace: str, add_remove: str) -> str:
    return replace if neighbouring == "replace" else add_remove


def plan_budget(plan: BudgetPlan, method: str, k: int, use_pca: bool, neighbouring: str,
                refine: int = 1) -> dict:
    """Reserve each step's ρ in ``plan`` (which records the ledger); return the ρ by step.

    ``refine`` full-covariance estimation passes share the "pass2" fraction,
    the last (released) pass twice as much as each earlier one.
    """
    split = dict(SPLIT if method == "pca_cluster" else SA_SPLIT)
    if not use_pca:
        split.pop("pca")
    total = sum(split.values())
    f = {key: v / total for key, v in split.items()}
    rel = "replace-one" if neighbouring == "replace" else "add/remove-one"
    rho: dict = {}
    rho["radius"] = plan.add(
        "clipping radius C of the centred rows (AboveThreshold over a public radius grid, threshold "
        f"{RADIUS_QUANTILE:.0%} of n)", "Laplace AboveThreshold", f["radius"],
        "Δ = 1 per count #{‖x − c‖ ≤ r}" + ("" if neighbouring == "replace" else "; noisy n (Δ = 1)"))
    if use_pca:
        rho["pca"] = plan.add(
            "private PCA: top-k subspace of Σ xxᵀ + symmetric noise (Analyze Gauss)", "Gaussian", f["pca"],
            _sens(neighbouring, "Δ_F = √2·C² (replace-one; rows in the ball of radius C)",
                  "Δ_F = C² (add/remove-one)"))
    rho["cluster"] = []
    for j in range(k):
        rho["cluster"].append(plan.add(
            f"clustering round {j + 1} of {k}: active count, grid side (AboveThreshold), cell "
            "(exponential mechanism), refined centre", "Gaussian; Laplace AboveThreshold; exponential",
            f["cluster"] / k,
            _sens(neighbouring, "counts Δ = 1; max cell count Δ = 1; cell score Δ = 1; ball sum Δ₂ = 2r",
                  "counts Δ = 1; max cell count Δ = 1; cell score Δ = 1; ball sum Δ₂ = r"),
            note=f"{rel}"))
    rho["pass1"] = plan.add(
        "estimation pass 1 (spherical): counts, clipping radii, clipped sums, Σ‖u‖²", "Gaussian; Laplace "
        "AboveThreshold", f["pass1"],
        _sens(neighbouring, "counts Δ₂ = √2; sums Δ₂ = 2·r_j; Σ‖u‖² Δ₂ = √2·r_j² (per-cluster scaled); "
              "radius queries Δ = 1 in 2 clusters", "counts Δ₂ = 1; sums r_j; Σ‖u‖² r_j²; radius queries Δ = 1"))
    rho["pass2"] = []
    # the last pass is the one released: it gets twice the share of each earlier pass
    weights = [1.0] * (refine - 1) + [2.0 if refine > 1 else 1.0]
    for i in range(refine):
        rho["pass2"].append(plan.add(
            f"estimation pass {i + 2} (full covariance, MAP partition of pass {i + 1}): counts, radii, sums, "
            "Σuuᵀ", "Gaussian; Laplace AboveThreshold", f["pass2"] * weights[i] / sum(weights),
            _sens(neighbouring, "counts Δ₂ = √2; sums Δ₂ = 2·r_j; Σuuᵀ Δ_F = √2·r_j²; radius queries Δ = 1 "
                  "in 2 clusters", "counts Δ₂ = 1; sums r_j; Σuuᵀ r_j²; radius queries Δ = 1")))
    if method == "sample_aggregate":
        rho["agg_radius"] = plan.add(
            "aggregation clipping radii (AboveThreshold over groups' distances to the coarse fit)",
            "Laplace AboveThreshold", f["agg_radius"], "Δ = 1 (one row changes one group)")
        rho["agg_means"] = plan.add("aggregated means (average of m clipped, whitened group means)",
                                    "Gaussian", f["agg_means"],
                                    "Δ₂ = 2·r_μ·√k / m (one group's k whitened means move)")
        rho["agg_covs"] = plan.add("aggregated covariances (average of m clipped, whitened group covariances)",
                                   "Gaussian", f["agg_covs"], "Δ_F = 2·r_Σ·√k / m")
        rho["agg_weights"] = plan.add(
            "weights: noisy counts of the most probable aggregated component", "Gaussian", f["agg_weights"],
            _sens(neighbouring, "Δ₂ = √2 (one row moves between two counts)", "Δ₂ = 1"))
    return rho


@dataclass
class PhaseOne:
    """Everything Phase I released (plus the non-released partition, for later steps)."""

    clip_radius: float
    pca: PrivatePCA | None
    located: list[Located]
    centres_projected: np.ndarray
    pass1: Components
    final: Components
    extra: dict = field(default_factory=dict)


def private_clip_radius(Xc: np.ndarray, max_radius: float, rho: float, neighbouring: str,
                        noise: NoiseSource) -> float:
    """C = 1.1 × (private radius holding 99 % of the rows), at most ``max_radius``."""
    norms = np.linalg.norm(Xc, axis=1)
    n = float(len(Xc))
    if neighbouring == "add_remove":
        n = float(noise.gaussian(np.array([n]), zcdp_gaussian_sigma(1.0, rho / 2))[0])
        rho = rho / 2
    grid = geometric_grid(max_radius / 1024, max_radius, 2 ** 0.25)
    eps = svt_eps(rho)
    # aim below n by five noise scales of the queries (public), so that the noise
    # rarely pushes the answer past the radius holding (almost) every row
    threshold = max(0.5 * n, min(RADIUS_QUANTILE * n, n - 5 * 4 / eps))
    r = private_radius(norms, grid, threshold, eps, noise.generator)
    return min(max_radius, RADIUS_FACTOR * r)


def phase_one(Xc: np.ndarray, k: int, max_radius: float, rho: dict, neighbouring: str, noise: NoiseSource,
              alpha: float = 0.5, var_floor: float = 1e-6) -> PhaseOne:
    """Run Phase I on centred, box-clipped rows ``Xc`` with the ρ of :func:`plan_budget`."""
    n, d = Xc.shape
    C = private_clip_radius(Xc, max_radius, rho["radius"], neighbouring, noise)
    norms = np.linalg.norm(Xc, axis=1)
    scale = np.minimum(1.0, C / np.maximum(norms, 1e-300))
    Xb = Xc * scale[:, None]
    if "pca" in rho:
        pca = private_pca(Xb, min(k, d), C, rho["pca"], neighbouring, noise)
        Y = pca.project(Xb)
        basis = pca.basis
    else:
        pca, Y, basis = None, Xb, np.eye(d)
    sides = geometric_grid(C / 512, 2 * C, 2 ** 0.25)
    located = private_clusters(Y, k, C, sides, rho["cluster"], neighbouring, noise, alpha=alpha,
                               n_public=n if neighbouring == "replace" else None)
    centres = np.array([loc.centre for loc in located])
    sides_found = np.array([loc.side for loc in located])
    # partition by a spherical MAP rule whose scale is each cluster's located side
    # (post-processing; with equal sides it is the Voronoi partition of the centres)
    labels0 = scaled_nearest(Y, centres, sides_found)
    # pass 1: radii in units of each cluster's located grid side; pass 2: of its pass-1 σ̂·√d
    grid = geometric_grid(max_radius / 1024 / sides_found.min(), 4 * max_radius / sides_found.min(), 2 ** 0.125)
    pass1 = estimate_components(Xc, labels0, centres @ basis.T, rho["pass1"], neighbouring, noise, grid,
                                full_cov=False, var_floor=var_floor, scales=sides_found)
    current = pass1
    for rho_pass in rho["pass2"]:
        labels = map_assign(Xc, current.weights, current.means, current.covariances)
        spread = np.sqrt(np.trace(current.covariances, axis1=1, axis2=2))
        grid = geometric_grid(max_radius / 1024 / spread.max(), 4 * max_radius / spread.min(), 2 ** 0.125)
        current = estimate_components(Xc, labels, current.means, rho_pass, neighbouring, noise, grid,
                                      full_cov=True, var_floor=var_floor, scales=spread)
    final = current
    return PhaseOne(clip_radius=C, pca=pca, located=located, centres_projected=centres, pass1=pass1,
                    final=final)


def scaled_nearest(Y: np.ndarray, centres: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """argmin_j ‖y − c_j‖²/s_j² + q·log s_j²: the MAP rule of spherical N(c_j, s_j² I), equal weights."""
    q = Y.shape[1]
    d2 = ((Y[:, None, :] - centres[None]) ** 2).sum(-1)
    return (d2 / scales ** 2 + q * np.log(scales ** 2)).argmin(axis=1)


def default_groups(n: int, k: int, d: int) -> int:
    """m = n / (group size), group size max(200, 25·k·(d+1)) rows."""
    return n // max(200, 25 * k * (d + 1))


def sample_aggregate(Xc: np.ndarray, coarse: Components, m: int, rho: dict, neighbouring: str,
                     noise: NoiseSource, var_floor: float = 1e-6, progress: bool = False) -> Components:
    """The paper's §6: EM on m disjoint groups, aligned to ``coarse``, privately averaged.

    Each row gets an iid uniform group label (public randomness), so one row
    (replaced, or added/removed) changes one group's fit.  Each group's fit is
    initialised at the released coarse fit and its components are matched to
    the coarse ones by the Hungarian method (post-processing of released
    values and the group's own rows).  Each component is expressed in the
    whitened coordinates of its coarse fit (μ̄_j, Σ̄_j = L_j L_jᵀ): the group
    mean as L_j⁻¹(μ − μ̄_j), clipped to l2 radius r_μ; the group covariance
    as L_j⁻¹ Σ L_j⁻ᵀ − I, clipped to Frobenius radius r_Σ; r_μ and r_Σ are
    chosen by AboveThreshold (90 % of groups inside, times 1.5).  One group's
    k clipped blocks move by at most 2r√k in l2, so the averages over m
    groups have sensitivity 2r√k/m.
    """
    from scipy.optimize import linear_sum_assignment
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture
    import warnings

    n, d = Xc.shape
    k = len(coarse.weights)
    gen = noise.generator
    # iid uniform group labels (public randomness): adding, removing or replacing one row
    # changes exactly one group and leaves every other row's group as it was
    label = gen.integers(0, m, size=n)
    order = np.argsort(label, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(label, minlength=m))[:-1])
    precisions = np.linalg.inv(coarse.covariances)
    W, M, S = np.empty((m, k)), np.empty((m, k, d)), np.empty((m, k, d, d))
    iterator = groups
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(groups, desc="group EM fits")
    for g, rows in enumerate(iterator):
        gm = GaussianMixture(k, covariance_type="full", weights_init=coarse.weights, means_init=coarse.means,
                             precisions_init=precisions, reg_covar=max(var_floor, 1e-6), max_iter=50)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(Xc[rows])
        cost = ((gm.means_[:, None, :] - coarse.means[None]) ** 2).sum(-1)
        _, perm = linear_sum_assignment(cost.T)
        W[g], M[g], S[g] = gm.weights_[perm], gm.means_[perm], gm.covariances_[perm]
    # work in each coarse component's whitened coordinates: z = L_j⁻¹(μ − μ̄_j), L_j⁻¹ Σ L_j⁻ᵀ − I
    chol = np.linalg.cholesky(coarse.covariances)
    inv = np.linalg.inv(chol)
    dM = np.einsum("jab,gjb->gja", inv, M - coarse.means[None])
    dS = np.einsum("jab,gjbc,jdc->gjad", inv, S, inv) - np.eye(d)
    dist_mu = np.sqrt((dM ** 2).sum(-1)).max(axis=1)
    dist_cov = np.sqrt((dS ** 2).sum((-1, -2))).max(axis=1)
    eps_r = svt_eps(rho["agg_radius"] / 2)
    grid = geometric_grid(1e-3, 1e2, 2 ** 0.25)
    r_mu = 1.5 * private_radius(dist_mu, grid, 0.9 * m, eps_r, gen)
    r_cov = 1.5 * private_radius(dist_cov, grid, 0.9 * m, eps_r, gen)
    dM = _clip_norm(dM, r_mu, axes=(-1,))
    dS = _clip_norm(dS, r_cov, axes=(-1, -2))
    sd_mu = zcdp_gaussian_sigma(2 * r_mu * math.sqrt(k) / m, rho["agg_means"])
    sd_cov = zcdp_gaussian_sigma(2 * r_cov * math.sqrt(k) / m, rho["agg_covs"])
    sd_w = zcdp_gaussian_sigma(COUNT_SENS[neighbouring], rho["agg_weights"])
    means = coarse.means + np.einsum("jab,jb->ja", chol, noise.gaussian(dM.mean(0), sd_mu))
    iu = np.triu_indices(d)
    covs = np.empty((k, d, d))
    for j in range(k):
        upper = noise.gaussian(dS[:, j].mean(0)[iu], sd_cov)
        white = np.zeros((d, d))
        white[iu] = upper
        white = white + np.triu(white, 1).T + np.eye(d)
        # towards the coarse fit, and no direction below a quarter of its variance (post-processing)
        white = shrink_to_pd(white, sd_cov, 0.25, target=np.eye(d))
        covs[j] = shrink_to_pd(chol[j] @ white @ chol[j].T, 0.0, var_floor)
    # weights: noisy counts of the most probable component under the aggregated
    # means and covariances (a partition: l2 sensitivity √2 replace-one, 1 add/remove)
    labels = map_assign(Xc, coarse.weights, means, covs)
    counts = noise.gaussian(np.bincount(labels, minlength=k).astype(float), sd_w)
    weights = np.clip(counts, 1.0, None)
    return Components(weights=weights / weights.sum(), means=means, covariances=covs,
                      counts=counts, radii=np.full(k, r_mu),
                      mean_noise_sd=sd_mu * np.sqrt(np.trace(coarse.covariances, axis1=1, axis2=2) / d),
                      cov_noise_sd=np.full(k, sd_cov))


def _clip_norm(A: np.ndarray, radius: float, axes: tuple[int, ...]) -> np.ndarray:
    norms = np.sqrt((A ** 2).sum(axis=axes, keepdims=True))
    return A * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
