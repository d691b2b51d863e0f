"""dp_gmm's release: Phase I ("pca_cluster") and sample-and-aggregate.

Kamath, Sheffet, Singhal & Ullman (2019), "Differentially Private Algorithms
for Learning Mixtures of Separated Gaussians", with the ρ of each step from
:func:`.budget.plan`:

* ``pca_cluster`` — their Algorithm 1 (§4, the "easy case" of Phase I):

  0. rows clipped to the public box and centred at its midpoint; a private
     clipping radius C (AboveThreshold, :func:`private_clip_radius`) and the
     rows shrunk onto the ball of radius C (the paper assumes the ball);
  1. private PCA: the top-k subspace of Σ xxᵀ + symmetric Gaussian noise
     (§4.1, §4.2.2, Lemma 3.1; :mod:`dpstats.privacy.pca`), skipped when k >= d;
  2. k rounds of PGLoc, locate a small ball holding many projected points and
     remove it (§4.2.3, Algorithm 5, Theorem 4.11; :mod:`.cluster`);
  3. PSGE on each cluster (§4.2.4, Algorithm 6, Theorem 4.16;
     :mod:`.estimate`) in two kinds of passes: a spherical pass on the
     partition by the nearest located centre (the paper's clusters are the
     located balls, which at the separations used here would overlap:
     :mod:`.cluster`), then ``refine``
     full-covariance passes on the partition by the most probable component of
     the previous pass (private hard-EM steps, which make different scales
     workable; not in the paper, whose Algorithm 1 assumes equal scales).  A
     round that located an earlier round's component again (:func:`located_twice`,
     from released centres, radii and pass-1 means) gets no rows in these passes,
     so it collapses and the fit is flagged, rather than one component being
     released as two halves.

* ``sample_aggregate`` — their §6 (Theorem 6.1): the rows are split into m
  groups, a non-private EM fit (scikit-learn) runs on each, components are
  aligned to a private coarse fit (Algorithm 1 above with part of the
  budget), and the aligned means and covariances are averaged with Gaussian
  noise after clipping to a private radius around the coarse fit (the
  paper's "locate a small ball, then average privately", Theorem 6.2, with
  the coarse fit as the located centre and AboveThreshold for the radius);
  weights are noisy counts of the most probable aggregated component.

Not implemented: Phase II, the recursive "terrific ball" split of §5
(Algorithms 2–4) for components of very different scales.  In its place,
components of different scales are handled by partitioning with each located
cluster's scale and by ``refine`` private hard-EM passes (shown for scales
0.25/1/4 with axis ratio 8 in ``benchmarks/bench_gmm.py``); mixtures whose
components overlap in the private PCA plane, or differ in scale by much more,
are outside what is shown to work here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...formula import ModelFrame, missing_counts
from ...geometry import Box, range_box
from ...privacy.bounds import declared_bounds, design_box
from ...privacy.calibration import svt_eps, zcdp_gaussian_sigma
from ...privacy.pca import PrivatePCA, private_pca
from ...privacy.randomness import NoiseSource
from ...privacy.sparse_vector import geometric_grid, private_radius
from ...privacy.statement import DataDependence
from ...stats import block_rows
from .accuracy import collapse_cause
from .budget import RADIUS_FACTOR, RADIUS_QUANTILE, GMMPlan
from .cluster import ClusterSpec, Located, cube_sides, nearest, private_clusters, repeated
from .estimate import COUNT_SENS, Components, PassSpec, estimate_components, shrink_to_pd
from .model import map_assign
from .options import GMMOptions, assumption_holds


@dataclass
class PhaseOne:
    """Everything Phase I released (plus the non-released partition, for later steps)."""

    clip_radius: float
    pca: PrivatePCA | None
    located: list[Located]
    centres_projected: np.ndarray
    pass1: Components
    final: Components
    located_twice: list[int] = field(default_factory=list)  # rounds that found a component again


@dataclass
class Released:
    """What :func:`release` released: Phase I, and the components returned (after §6 if asked).

    ``collapsed`` lists the components (0-based) whose released weight is below the plan's
    ``min_weight`` (post-processing of the released weights).
    """

    phase_one: PhaseOne
    components: Components
    collapsed: list[int] = field(default_factory=list)

    def collapse_message(self, min_weight: float, located: bool | None) -> str:
        """The loud warning of a failed fit (its collapsed components named, 1-based) and its likely cause
        (:func:`.accuracy.collapse_cause`; ``located`` is :func:`.accuracy.location_holds`)."""
        weights = self.components.weights
        return (
            f"FIT FAILED: component(s) {', '.join(str(j + 1) for j in self.collapsed)} collapsed (noisy weight "
            f"{', '.join(f'{weights[j]:.3g}' for j in self.collapsed)} < min_weight = {min_weight:.3g}); "
            "the released mixture should not be used as a k-component fit. The budget of this call was "
            "spent. " + collapse_cause(weights, self.collapsed, located, self.phase_one.located_twice)
        )


def release(
    X: np.ndarray, plan: GMMPlan, noise: NoiseSource, progress: Callable[[int], None] | None = None
) -> Released:
    """Algorithm 1 (and §6 for ``method="sample_aggregate"``) with the ρ of ``plan``.

    Step 0: the rows are clipped to the plan's public box and centred at its
    midpoint; C is searched for up to the box's half-diagonal.  The released means
    are clipped to the box (post-processing).  ``progress``
    is called with 1 after each group's EM fit (sample-and-aggregate).

    No step needs a row and none reads n as public unless the plan's relation makes it
    public (replace-one-row): under add/remove-one-row a data set of 0, 1 or 2 rows is
    released like any other, from the noise alone (noisy counts near 0, cells drawn among
    empty ones, a group without rows contributing the coarse fit), by construction.
    """
    box = plan.box
    Xc = np.clip(X, box.lo, box.hi) - box.center
    p1 = phase_one(Xc, plan, noise)
    comps = p1.final
    if plan.fit_method == "sample_aggregate":
        comps = sample_aggregate(Xc, comps, plan, noise, progress=progress)
    # the public box holds the means (post-processing): a noisy sum over a near-empty cluster can leave it
    comps.means = np.clip(comps.means, box.lo - box.center, box.hi - box.center)
    collapsed = [int(j) for j in np.flatnonzero(comps.weights < plan.min_weight)]
    return Released(phase_one=p1, components=comps, collapsed=collapsed)


def clip_box(bounds, mf: ModelFrame, dd: DataDependence) -> Box:
    """Step 0's box, which clips and centres the rows: the declared ``bounds`` as a box of the design's
    columns or, without them, the data's per-column min and max (a data-dependent step, named in ``dd``)."""
    if bounds is not None:
        return design_box(declared_bounds(bounds, mf), mf)
    dd.add(
        "the box that clips and centres the rows is the data's per-column min and max",
        fix="declare public bounds, e.g. bounds=(-12, 12) or bounds={'x1': (0, 10), ...}",
    )
    X = mf.X
    return range_box(X.min(axis=0, initial=np.inf), X.max(axis=0, initial=-np.inf))


def diagnostics(
    mf: ModelFrame,
    released: Released,
    options: GMMOptions,
    centre: np.ndarray,
    n_public: bool,
    versus_truth: Callable[..., dict],
) -> dict:
    """dp_gmm's requested diagnostics (not private): the rows dropped; with ``options.truth``, the released
    mixture against it by ``versus_truth(truth, labels, means)`` (the rows' MAP labels, 1-based, and the
    released means, shifted back by the box's ``centre``); when n is private, whether the rows per component
    that the plan assumed held.  ``options`` are resolved for the frame (:func:`.options.resolve`)."""
    comps = released.components
    diag = missing_counts(mf)
    if options.truth is not None:
        labels = map_assign(mf.X, comps.weights, comps.means + centre, comps.covariances) + 1
        diag.update(versus_truth(options.truth, labels, comps.means + centre))
    if not n_public:  # the assumption stated instead of a check (not private)
        diag["rows_per_component_assumption_holds"] = assumption_holds(options, mf.n, mf.p)
    return diag


def private_clip_radius(
    Xc: np.ndarray, max_radius: float, rho: float, neighbouring: str, noise: NoiseSource
) -> float:
    """C = 1.1 × (private radius holding 98 % of the rows), at most ``max_radius`` (step 0)."""
    norms = np.linalg.norm(Xc, axis=1)
    n = float(len(Xc))
    if neighbouring == "add_remove":
        n = float(noise.gaussian(np.array([n]), zcdp_gaussian_sigma(1.0, rho / 2))[0])
        rho = rho / 2
    grid = geometric_grid(max_radius / 1024, max_radius, 2**0.25)
    eps = svt_eps(rho)
    # aim below n by five noise scales of the queries (public), so that the noise
    # rarely pushes the answer past the radius holding (almost) every row
    threshold = max(0.5 * n, min(RADIUS_QUANTILE * n, n - 5 * 4 / eps))
    r = private_radius(norms, grid, threshold, eps, noise.generator)
    return min(max_radius, RADIUS_FACTOR * r)


def phase_one(Xc: np.ndarray, plan: GMMPlan, noise: NoiseSource) -> PhaseOne:
    """Run Algorithm 1 on centred, box-clipped rows ``Xc`` with the ρ of :func:`.budget.plan_budget`."""
    n, d = Xc.shape
    k, rho, neighbouring, max_radius = plan.k, plan.rho, plan.neighbouring, plan.max_radius
    # step 0: private radius C, rows shrunk onto the ball of radius C
    C = private_clip_radius(Xc, max_radius, rho["radius"], neighbouring, noise)
    norms = np.linalg.norm(Xc, axis=1)
    Xb = Xc * np.minimum(1.0, C / np.maximum(norms, 1e-300))[:, None]
    # step 1: private PCA (when k < d), projection onto the released subspace
    if "pca" in rho:
        pca = private_pca(Xb, min(k, d), C, rho["pca"], neighbouring, noise)
        Y, basis = pca.project(Xb), pca.basis
    else:
        pca, Y, basis = None, Xb, np.eye(d)
    # step 2: k rounds of PGLoc in the projected space
    sides = cube_sides(C)
    n_public = n if neighbouring == "replace" else None
    spec = ClusterSpec(k, C, sides, neighbouring, alpha=plan.alpha, n_public=n_public)
    located = private_clusters(Y, spec, rho["cluster"], noise)
    centres = np.array([loc.centre for loc in located])
    # step 3: PSGE on each cluster
    pass1, final, twice = _estimate(Xc, Y, basis, located, plan, noise)
    return PhaseOne(
        clip_radius=C,
        pca=pca,
        located=located,
        centres_projected=centres,
        pass1=pass1,
        final=final,
        located_twice=twice,
    )


def _estimate(
    Xc: np.ndarray,
    Y: np.ndarray,
    basis: np.ndarray,
    located: list[Located],
    plan: GMMPlan,
    noise: NoiseSource,
) -> tuple[Components, Components, list[int]]:
    """Step 3: a spherical pass, then the full-covariance (private hard-EM) passes; (pass 1, last pass,
    the rounds that located a component twice: :func:`located_twice`)."""
    centres = np.array([loc.centre for loc in located])
    sides_found = np.array([loc.side for loc in located])
    max_radius, neighbouring, var_floor = plan.max_radius, plan.neighbouring, plan.var_floor
    # the Voronoi partition of the located centres (post-processing).  Not scaled by each cluster's
    # located side: the side varies up to 3 times between equal components (grid offset, rows already
    # removed) and a MAP rule scaled by it gave whole components to a neighbour (audit s16-stat4, F1);
    # components of different scales are sorted out by the full-covariance passes
    labels0 = nearest(Y, centres)
    # pass 1: radii in units of each cluster's located grid side; pass 2: of its pass-1 σ̂·√d
    grid = geometric_grid(max_radius / 1024 / sides_found.min(), 4 * max_radius / sides_found.min(), 2**0.125)
    spec = PassSpec(grid, neighbouring, full_cov=False, var_floor=var_floor, scales=sides_found)
    pass1 = estimate_components(Xc, labels0, centres @ basis.T, plan.rho["pass1"], noise, spec)
    twice = located_twice(pass1, repeated(located))
    current = pass1
    for rho_pass in plan.rho["pass2"]:
        # a component located twice gets no rows (post-processing): it is released from the noise alone
        weights = np.where(np.isin(np.arange(len(located)), twice), 0.0, current.weights)
        labels = map_assign(Xc, weights, current.means, current.covariances)
        spread = np.sqrt(np.trace(current.covariances, axis1=1, axis2=2))
        grid = geometric_grid(max_radius / 1024 / spread.max(), 4 * max_radius / spread.min(), 2**0.125)
        spec = PassSpec(grid, neighbouring, full_cov=True, var_floor=var_floor, scales=spread)
        current = estimate_components(Xc, labels, current.means, rho_pass, noise, spec)
    return pass1, current, twice


#: pass-1 means closer than this, in pooled sds, are one component located twice (:func:`located_twice`)
SPLIT_SDS = 2.2


def located_twice(pass1: Components, repeats: dict[int, int]) -> list[int]:
    """The rounds (0-based) that located an earlier round's component again (post-processing).

    A round whose centre lies inside an earlier ball (:func:`.cluster.repeated`) and whose released
    pass-1 mean lies within ``SPLIT_SDS`` pooled standard deviations of that round's: the two clusters
    are the parts of one component, not two components.  The parts of one spherical Gaussian cut
    through its mean have means 2·√(2/π) ≈ 1.6 sd apart, 1.6–1.9 pooled sds in d >= 2 (their pooled
    variance is σ²(1 − 2/(πd))), a little more for a cut off the mean; the closest pair the clustering
    separates in the audit's fits (s16-stat4) is 4.0 sd apart.  Pairs in between overlap, and are
    outside what the method is shown to fit.

    Examples
    --------
    >>> c = Components(np.array([0.5, 0.5]), np.array([[0.0, 0.0], [1.6, 0.0]]), np.stack([np.eye(2)] * 2),
    ...                np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
    >>> located_twice(c, {1: 0}), located_twice(c, {})
    ([1], [])
    """
    d = pass1.means.shape[1]
    var = np.trace(pass1.covariances, axis1=1, axis2=2) / d
    return [
        j
        for j, i in repeats.items()
        if np.linalg.norm(pass1.means[j] - pass1.means[i]) < SPLIT_SDS * math.sqrt((var[i] + var[j]) / 2)
    ]


def sample_aggregate(
    Xc: np.ndarray,
    coarse: Components,
    plan: GMMPlan,
    noise: NoiseSource,
    progress: Callable[[int], None] | None = None,
) -> Components:
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
    k, d = len(coarse.weights), Xc.shape[1]
    m, rho, neighbouring, var_floor = plan.groups, plan.rho, plan.neighbouring, plan.var_floor
    gen = noise.generator
    M, S = _group_fits(Xc, coarse, m, gen, var_floor, progress)
    # work in each coarse component's whitened coordinates: z = L_j⁻¹(μ − μ̄_j), L_j⁻¹ Σ L_j⁻ᵀ − I
    chol = np.linalg.cholesky(coarse.covariances)
    inv = np.linalg.inv(chol)
    dM = np.einsum("jab,gjb->gja", inv, M - coarse.means[None])
    dS = np.einsum("jab,gjbc,jdc->gjad", inv, S, inv) - np.eye(d)
    dist_mu = np.sqrt((dM**2).sum(-1)).max(axis=1)
    dist_cov = np.sqrt((dS**2).sum((-1, -2))).max(axis=1)
    eps_r = svt_eps(rho["agg_radius"] / 2)
    grid = geometric_grid(1e-3, 1e2, 2**0.25)
    r_mu = 1.5 * private_radius(dist_mu, grid, 0.9 * m, eps_r, gen)
    r_cov = 1.5 * private_radius(dist_cov, grid, 0.9 * m, eps_r, gen)
    dM = _clip_norm(dM, r_mu, axes=(-1,))
    dS = _clip_norm(dS, r_cov, axes=(-1, -2))
    sd_mu = zcdp_gaussian_sigma(2 * r_mu * math.sqrt(k) / m, rho["agg_means"])
    sd_cov = zcdp_gaussian_sigma(2 * r_cov * math.sqrt(k) / m, rho["agg_covs"])
    means = coarse.means + np.einsum("jab,jb->ja", chol, noise.gaussian(dM.mean(0), sd_mu))
    covs = _aggregate_covariances(dS, chol, sd_cov, var_floor, noise)
    # weights: noisy counts of the most probable component under the aggregated
    # means and covariances (a partition: l2 sensitivity √2 replace-one, 1 add/remove)
    labels = map_assign(Xc, coarse.weights, means, covs)
    sd_w = zcdp_gaussian_sigma(COUNT_SENS[neighbouring], rho["agg_weights"])
    counts = noise.gaussian(np.bincount(labels, minlength=k).astype(float), sd_w)
    weights = np.clip(counts, 1.0, None)
    return Components(
        weights=weights / weights.sum(),
        means=means,
        covariances=covs,
        counts=counts,
        radii=np.full(k, r_mu),
        mean_noise_sd=sd_mu * np.sqrt(np.trace(coarse.covariances, axis1=1, axis2=2) / d),
        cov_noise_sd=np.full(k, sd_cov),
    )


def _group_fits(
    Xc: np.ndarray,
    coarse: Components,
    m: int,
    gen: np.random.Generator,
    var_floor: float,
    progress: Callable[[int], None] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Means and covariances (m, k, ...) of the non-private EM fit on each of m random groups, aligned.

    A group with fewer than k·(d+1) rows (possible when n is private and only assumed large
    enough) contributes the released coarse fit in place of an EM fit, by construction: that
    is a fixed point inside every clipping radius, so one row still moves one group's
    contribution only, and no error or warning depends on the group sizes.
    """
    import warnings

    from scipy.optimize import linear_sum_assignment
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    n, d = Xc.shape
    k = len(coarse.weights)
    # iid uniform group labels (public randomness): adding, removing or replacing one row
    # changes exactly one group and leaves every other row's group as it was
    label = gen.integers(0, m, size=n)
    groups = block_rows(label, m)
    precisions = np.linalg.inv(coarse.covariances)
    M, S = np.empty((m, k, d)), np.empty((m, k, d, d))
    for g, rows in enumerate(groups):
        if len(rows) < k * (d + 1):  # too few rows to fit: the released coarse fit stands in
            M[g], S[g] = coarse.means, coarse.covariances
            if progress is not None:
                progress(1)
            continue
        gm = GaussianMixture(
            k,
            covariance_type="full",
            weights_init=coarse.weights,
            means_init=coarse.means,
            precisions_init=precisions,
            reg_covar=max(var_floor, 1e-6),
            max_iter=50,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(Xc[rows])
        cost = ((gm.means_[:, None, :] - coarse.means[None]) ** 2).sum(-1)
        _, perm = linear_sum_assignment(cost.T)
        M[g], S[g] = gm.means_[perm], gm.covariances_[perm]
        if progress is not None:
            progress(1)
    return M, S


def _aggregate_covariances(
    dS: np.ndarray, chol: np.ndarray, sd_cov: float, var_floor: float, noise: NoiseSource
) -> np.ndarray:
    """Noisy average of the clipped, whitened group covariances, mapped back and made PD."""
    k, d = chol.shape[0], chol.shape[1]
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
    return covs


def _clip_norm(A: np.ndarray, radius: float, axes: tuple[int, ...]) -> np.ndarray:
    norms = np.sqrt((A**2).sum(axis=axes, keepdims=True))
    return A * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
