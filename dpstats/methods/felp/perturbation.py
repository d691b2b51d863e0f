"""FELP's release by output perturbation: Liu (2018), §1.3, steps 1–4, after the plan's charge.

:func:`release` maps the features onto the scale the sensitivity needs
(:func:`.learner.scale_features`), tunes λ by cross-validation when asked (a
non-private, data-dependent step the front door has named), runs the
ensemble (steps 1–3, :func:`.ensemble.ensemble`), and step 4: adds to the
average w_D the L2-Laplace noise b of density ∝ exp(−ε‖b‖₂/Δ) (eq. 12 with
Δ = 2/(nλ) in the paper variant, 2C/k in the strict one; ‖b‖ ~ Gamma(d, Δ/ε),
uniform direction) and returns w*_D = w_D + b.  The features with the
largest released weights are selected: post-processing.  An unseeded release
draws b by :func:`dpstats.privacy.randomness.snapped_l2_laplace` (floating-point
safe; each weight clamped to the public bound C, or √(log 2/λ) in the paper
variant), a seeded one by numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...formula import ModelFrame, missing_counts
from ...privacy.randomness import NoiseSource
from .ensemble import EnsembleFit, EnsembleSpec, ensemble
from .learner import data_box, scale_features
from .sensitivity import FELPPlan


@dataclass
class Release:
    """What :func:`release` computed: the released weights and their order, and what led to them.

    ``lam`` is the λ used (tuned with ``lam="cv"``), ``sensitivity`` and
    ``scale`` the Δ and Δ/ε of step 4 (scale 0 for eps = inf); ``top`` the indices of the
    selected features, largest released weight first.  ``fit`` (the noiseless ensemble) and
    ``n_clipped`` (values clipped to the bounds) are not private: diagnostics only.
    """

    weights: np.ndarray
    order: np.ndarray
    lam: float
    sensitivity: float
    scale: float
    fit: EnsembleFit
    n_clipped: int
    top: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))


def diagnostics(mf: ModelFrame, released: Release, class_counts: np.ndarray, truth: list[str] | None) -> dict:
    """dp_felp's requested diagnostics (not private): rows dropped, values clipped, the learners'
    convergence and clipping, the ``class_counts`` (by class, in the frame's order of ``mf.classes``); with
    ``truth`` the share of true features selected, with and without noise."""
    fit, select, names = released.fit, len(released.top), list(mf.names)
    diag = {
        **missing_counts(mf),
        "values_clipped": released.n_clipped,
        "learners_converged": int(sum(fit.converged)),
        "learner_rounds": list(fit.n_iter),
        "learners_clipped_to_C": fit.n_clipped,
        "class_counts": dict(zip([str(c) for c in mf.classes], class_counts.tolist())),
    }
    if truth is not None:
        selected = [names[j] for j in released.top]
        nonprivate = [names[j] for j in rank_features(fit.w_mean)[:select]]
        diag["selected_true_share"] = len(set(selected) & set(truth)) / select
        diag["nonprivate_selected"] = nonprivate
        diag["nonprivate_true_share"] = len(set(nonprivate) & set(truth)) / select
    return diag


def release(
    X: np.ndarray,
    y: np.ndarray,
    plan: FELPPlan,
    noise: NoiseSource,
    progress: Callable[[int], None] | None = None,
) -> Release:
    """Steps 1–4 (module docstring), spending exactly the eps of the plan's step 4.

    The plan's ``box`` holds the public bounds of the columns of ``X`` (None: the data's
    minima and maxima, a step the front door has named); ``y`` holds class codes.
    """
    box = plan.box
    U, n_clipped = scale_features(X, box if box is not None else data_box(X))
    if box is None:
        n_clipped = 0  # the data's own min/max: any count is floating-point rounding
    lam = plan.lam
    if plan.lam_source == "cv":
        lam = _tune_lam(U, y, plan.lam_grid, plan.select, noise.generator)
    fit = ensemble(U, y, lam, gen=noise.generator, spec=plan.spec, progress=progress)  # steps 1-3
    sensitivity, eps = plan.sensitivity(lam), plan.release_eps
    scale = 0.0 if math.isinf(eps) else sensitivity / eps
    # step 4; every coordinate of w_D is at most the plan's public bound, which the
    # floating-point safe sampler clamps to
    bound = plan.weight_bound(lam)
    weights = fit.w_mean.copy() if scale == 0 else noise.l2_laplace(fit.w_mean, scale, eps=eps, bound=bound)
    order = rank_features(weights)
    return Release(
        weights=weights,
        order=order,
        lam=lam,
        sensitivity=sensitivity,
        scale=scale,
        fit=fit,
        n_clipped=n_clipped,
        top=order[: plan.select],
    )


def _tune_lam(U, y, grid, select, gen) -> float:
    """5-fold CV of 3-NN accuracy on the top features of a 5-learner ensemble (data-dependent).

    scikit-learn's warnings about small classes (their sizes are read from the rows) are
    silenced: a warning is an output channel; the step itself is named in the statement.
    """
    import warnings

    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    best, best_acc = grid[0], -1.0
    counts = np.bincount(y)
    min_count = int(counts[counts > 0].min())  # classes present (a declared class may be absent)
    folds = max(2, min(5, min_count))
    for lam in grid:
        w = ensemble(U, y, lam, gen=gen, spec=EnsembleSpec(n_estimators=5)).w_mean
        cols = rank_features(w)[:select]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            acc = cross_val_score(
                KNeighborsClassifier(3),
                U[:, cols],
                y,
                cv=StratifiedKFold(folds, shuffle=True, random_state=0),
            ).mean()
        if acc > best_acc + 1e-12:
            best, best_acc = lam, acc
    return float(best)


def rank_features(w: np.ndarray) -> np.ndarray:
    """Feature indices by decreasing weight (stable for ties)."""
    return np.argsort(-np.asarray(w), kind="stable")
