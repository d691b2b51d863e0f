"""The privacy plan of dp_gmm: the ρ of every step, from public inputs only.

Kamath, Sheffet, Singhal & Ullman (2019) compose the steps of their
Algorithm 1 (§4.1: private PCA, k calls of PGLoc, PSGE on each cluster) and
of their sample-and-aggregate reduction (§6, Theorem 6.1) by (advanced)
composition.  Here every step is a Gaussian mechanism or a pure-DP selection
(AboveThreshold, exponential mechanism: eps-DP ⇒ eps²/2-zCDP), accounted in
zCDP, which composes additively also adaptively (Bun & Steinke 2016,
Lemma 2.3), and converted to (eps, delta) once by Canonne, Kamath & Steinke's
(2020, Cor. 13) conversion, valid for any ρ-zCDP mechanism (the plan mixes
Gaussian and pure-DP steps, so the exact Gaussian conversion does not apply;
:class:`~dpstats.privacy.accountant.BudgetPlan`).  The shares of ρ are fixed
public fractions (``SPLIT``, ``SA_SPLIT``); the ledger shows each step's share
of (eps, delta) in proportion to its ρ.

The plan depends on d, k, eps, delta, the method, ``refine``, the public box and
the neighbouring relation, never on the rows (nor on n): it is computed, and
charged, before anything is released.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...geometry import Box
from ...privacy.accountant import BudgetPlan
from ...privacy.plan import Plan
from .options import ROWS_PER_COMPONENT, GMMOptions

#: default shares of ρ (Phase I)
SPLIT = {"radius": 0.04, "pca": 0.16, "cluster": 0.30, "pass1": 0.15, "pass2": 0.35}
#: default shares of ρ (sample and aggregate): a coarse Phase I fit, then the aggregation
SA_SPLIT = {
    "radius": 0.02,
    "pca": 0.10,
    "cluster": 0.20,
    "pass1": 0.10,
    "pass2": 0.13,
    "agg_radius": 0.05,
    "agg_means": 0.20,
    "agg_covs": 0.15,
    "agg_weights": 0.05,
}
RADIUS_QUANTILE = 0.98
RADIUS_FACTOR = 1.1

MECHANISMS = ["Gaussian (zCDP)", "Laplace AboveThreshold", "exponential mechanism"]
ASSUMPTIONS = [
    "accuracy (not privacy) assumes k well-separated Gaussian components (means apart by several "
    "component standard deviations, Kamath et al. 2019 Thm 1.1) whose means lie in the declared box",
    "accuracy assumes components of comparable scale; Phase II (terrific-ball recursion) is not implemented",
]
SA_ASSUMPTION = (
    "sample-and-aggregate accuracy assumes each group's EM fit finds the k "
    "components (groups large enough, EM started at the private coarse fit)"
)
NOTES = [
    "Weights, means and covariances are released with noise; predict() is post-processing.",
    "Grid offsets, group partitions and AboveThreshold/exponential-mechanism choices use numpy's "
    "generator (they release choices, not real numbers).",
    "The numbers of clipped rows are not released.",
]


@dataclass
class GMMPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with everything the release needs.

    ``rho`` holds the ρ of each step; ``k``, ``fit_method``, ``groups``, ``alpha``,
    ``var_floor`` and ``min_weight`` are the resolved options; ``box`` the public box that
    clips and centres the rows (None in a plan made without one: the planner, tests).
    """

    rho: dict = field(default_factory=dict)
    k: int = 1
    fit_method: str = "pca_cluster"
    groups: int | None = None
    alpha: float = 0.5
    var_floor: float = 1e-6
    min_weight: float = 0.0
    box: Box | None = None

    @property
    def max_radius(self) -> float:
        """The box's half-diagonal: the largest norm of a centred, clipped row."""
        return float(np.linalg.norm(self.box.halfwidth))


def plan(options: GMMOptions, d: int, *, box: Box | None = None, n_public: bool = True) -> GMMPlan:
    """The ledger, sensitivities, assumptions and notes of one dp_gmm release.

    ``options`` are resolved for the frame (:func:`.options.resolve`); ``d`` is the number
    of columns, ``box`` the public box of the rows.  Private PCA (Algorithm 1, step 1) is
    planned only when k < d; otherwise the clustering runs in the original coordinates.
    When n is private (``n_public`` False: decided by the relation and the schema, never
    by the rows) the statement says that the rows per component are assumed, not checked.

    Examples
    --------
    >>> o = GMMOptions.partial(eps=1.0, delta=1e-6, method="pca_cluster", k=2, neighbouring="replace", refine=3)
    >>> p = plan(o, 4)
    >>> len(p.entries), round(p.eps, 12), sorted(p.rho)
    (8, 1.0, ['cluster', 'pass1', 'pass2', 'pca', 'radius'])
    """
    method, k, neighbouring = options.method, int(options.k), options.neighbouring
    budget = BudgetPlan(options.eps, options.delta)
    rho = plan_budget(budget, method, k, use_pca=k < d, neighbouring=neighbouring, refine=options.refine)
    entries = budget.entries()
    notes = [
        f"Composition in zCDP: total ρ = {budget.rho:.5g}, converted once to (eps, delta): {budget.conversion}; "
        "each ledger row shows its share of (eps, delta) in proportion to its ρ.",
        *NOTES,
    ]
    assumptions = [*ASSUMPTIONS, *([SA_ASSUMPTION] if method == "sample_aggregate" else [])]
    return GMMPlan(
        method="DP Gaussian mixture",
        neighbouring=neighbouring,
        entries=entries,
        mechanisms=list(MECHANISMS),
        sensitivities={e.step.split(":")[0]: e.sensitivity for e in entries},
        assumptions=assumptions + ([] if n_public else [ROWS_PER_COMPONENT]),
        notes=notes,
        rho=rho,
        k=k,
        fit_method=method,
        groups=options.groups,
        alpha=options.alpha,
        var_floor=options.var_floor,
        min_weight=options.min_weight,
        box=box,
    )


def _sens(neighbouring: str, replace: str, add_remove: str) -> str:
    return replace if neighbouring == "replace" else add_remove


def plan_budget(
    plan: BudgetPlan, method: str, k: int, use_pca: bool, neighbouring: str, refine: int = 1
) -> dict:
    """Reserve each step's ρ in ``plan`` (which records the ledger); return the ρ by step.

    ``refine`` full-covariance estimation passes share the "pass2" fraction,
    the last (released) pass twice as much as each earlier one.
    """
    split = dict(SPLIT if method == "pca_cluster" else SA_SPLIT)
    if not use_pca:
        split.pop("pca")
    total = sum(split.values())
    f = {key: v / total for key, v in split.items()}
    rho = _reserve_phase_one(plan, f, k, use_pca, neighbouring)
    rho["pass1"], rho["pass2"] = _reserve_estimation(plan, f, neighbouring, refine)
    if method == "sample_aggregate":
        rho.update(_reserve_aggregation(plan, f, neighbouring))
    return rho


def _reserve_phase_one(plan: BudgetPlan, f: dict, k: int, use_pca: bool, neighbouring: str) -> dict:
    """Clipping radius, private PCA (Algorithm 1, step 1) and k rounds of PGLoc (step 2)."""
    rel = "replace-one" if neighbouring == "replace" else "add/remove-one"
    rho: dict = {}
    rho["radius"] = plan.add(
        "clipping radius C of the centred rows (AboveThreshold over a public radius grid, threshold "
        f"{RADIUS_QUANTILE:.0%} of n)",
        "Laplace AboveThreshold",
        f["radius"],
        "Δ = 1 per count #{‖x − c‖ ≤ r}" + ("" if neighbouring == "replace" else "; noisy n (Δ = 1)"),
    )
    if use_pca:
        rho["pca"] = plan.add(
            "private PCA: top-k subspace of Σ xxᵀ + symmetric noise (Analyze Gauss)",
            "Gaussian (zCDP)",
            f["pca"],
            _sens(
                neighbouring,
                "Δ_F = √2·C² (replace-one; rows in the ball of radius C)",
                "Δ_F = C² (add/remove-one)",
            ),
        )
    rho["cluster"] = []
    for j in range(k):
        rho["cluster"].append(
            plan.add(
                f"clustering round {j + 1} of {k}: active count, grid side (AboveThreshold), cell "
                "(exponential mechanism), refined centre",
                "Gaussian (zCDP); Laplace AboveThreshold; exponential",
                f["cluster"] / k,
                _sens(
                    neighbouring,
                    "counts Δ = 1; max cell count Δ = 1; cell score Δ = 1; ball sum Δ₂ = 2r",
                    "counts Δ = 1; max cell count Δ = 1; cell score Δ = 1; ball sum Δ₂ = r",
                ),
                note=f"{rel}",
            )
        )
    return rho


def _reserve_estimation(
    plan: BudgetPlan, f: dict, neighbouring: str, refine: int
) -> tuple[float, list[float]]:
    """PSGE on each cluster (Algorithm 1, step 3): a spherical pass, then ``refine`` full-covariance passes."""
    pass1 = plan.add(
        "estimation pass 1 (spherical): counts, clipping radii, clipped sums, Σ‖u‖²",
        "Gaussian (zCDP); Laplace AboveThreshold",
        f["pass1"],
        _sens(
            neighbouring,
            "counts Δ₂ = √2; sums Δ₂ = 2·r_j; Σ‖u‖² Δ₂ = √2·r_j² (per-cluster scaled); "
            "radius queries Δ = 1 in 2 clusters",
            "counts Δ₂ = 1; sums r_j; Σ‖u‖² r_j²; radius queries Δ = 1",
        ),
    )
    # the last pass is the one released: it gets twice the share of each earlier pass
    weights = [1.0] * (refine - 1) + [2.0 if refine > 1 else 1.0]
    pass2 = []
    for i in range(refine):
        pass2.append(
            plan.add(
                f"estimation pass {i + 2} (full covariance, MAP partition of pass {i + 1}): counts, radii, sums, "
                "Σuuᵀ",
                "Gaussian (zCDP); Laplace AboveThreshold",
                f["pass2"] * weights[i] / sum(weights),
                _sens(
                    neighbouring,
                    "counts Δ₂ = √2; sums Δ₂ = 2·r_j; Σuuᵀ Δ_F = √2·r_j²; radius queries Δ = 1 in 2 clusters",
                    "counts Δ₂ = 1; sums r_j; Σuuᵀ r_j²; radius queries Δ = 1",
                ),
            )
        )
    return pass1, pass2


def _reserve_aggregation(plan: BudgetPlan, f: dict, neighbouring: str) -> dict:
    """§6: radii, averaged means and covariances of the m group fits, and the weights."""
    return {
        "agg_radius": plan.add(
            "aggregation clipping radii (AboveThreshold over groups' distances to the coarse fit)",
            "Laplace AboveThreshold",
            f["agg_radius"],
            "Δ = 1 (one row changes one group)",
        ),
        "agg_means": plan.add(
            "aggregated means (average of m clipped, whitened group means)",
            "Gaussian (zCDP)",
            f["agg_means"],
            "Δ₂ = 2·r_μ·√k / m (one group's k whitened means move)",
        ),
        "agg_covs": plan.add(
            "aggregated covariances (average of m clipped, whitened group covariances)",
            "Gaussian (zCDP)",
            f["agg_covs"],
            "Δ_F = 2·r_Σ·√k / m",
        ),
        "agg_weights": plan.add(
            "weights: noisy counts of the most probable aggregated component",
            "Gaussian (zCDP)",
            f["agg_weights"],
            _sens(neighbouring, "Δ₂ = √2 (one row moves between two counts)", "Δ₂ = 1"),
        ),
    }
