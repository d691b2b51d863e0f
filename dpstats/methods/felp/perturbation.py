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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...geometry import Box
from ...privacy.plan import Plan
from ...privacy.randomness import FastNoise, NoiseSource
from .ensemble import EnsembleFit, ensemble
from .learner import data_box, scale_features
from .sensitivity import default_clip_norm, paper_sensitivity, strict_sensitivity


@dataclass
class Release:
    """What :func:`release` computed: the released weights and their order, and what led to them.

    ``lam`` is the λ used (tuned with ``lam="cv"``), ``sensitivity`` and
    ``scale`` the Δ and Δ/ε of step 4 (scale 0 for eps = inf).  ``fit`` (the
    noiseless ensemble) and ``n_clipped`` (values clipped to the bounds) are
    not private: diagnostics only.
    """

    weights: np.ndarray
    order: np.ndarray
    lam: float
    sensitivity: float
    scale: float
    fit: EnsembleFit
    n_clipped: int


def release(
    X: np.ndarray,
    y: np.ndarray,
    plan: Plan,
    noise: NoiseSource,
    *,
    box: Box | None,
    lam: float,
    lam_source: str,
    lam_grid: Sequence[float],
    select: int,
    n_estimators: int,
    sample_ratio: float,
    variant: str,
    clip_norm: float | None,
    tol: float,
    max_iter: int,
    n_neighbors: int,
    progress: Callable[[int], None] | None = None,
) -> Release:
    """Steps 1–4 (module docstring), spending exactly the eps of ``plan``'s ledger.

    ``box`` holds the public bounds of the columns of ``X`` (None: the data's
    minima and maxima, a step the front door has named); ``y`` holds class
    codes.  ``clip_norm`` is C of the strict variant (:func:`.sensitivity.clip_norm`).
    """
    U, n_clipped = scale_features(X, box if box is not None else data_box(X))
    if box is None:
        n_clipped = 0  # the data's own min/max: any count is floating-point rounding
    if lam_source == "cv":
        lam = _tune_lam(U, y, lam_grid, select, noise.generator)
    fit = ensemble(
        U,
        y,
        lam,
        n_estimators=n_estimators,
        sample_ratio=sample_ratio,  # steps 1-3
        variant=variant,
        clip_norm=clip_norm,
        gen=noise.generator,
        tol=tol,
        max_iter=max_iter,
        n_neighbors=n_neighbors,
        progress=progress,
    )
    sensitivity = (
        paper_sensitivity(len(y), lam) if variant == "paper" else strict_sensitivity(clip_norm, n_estimators)
    )
    eps = plan.entries[0].eps
    scale = 0.0 if math.isinf(eps) else sensitivity / eps
    # step 4; every coordinate of w_D is at most C (strict: clipped) or √(log 2/λ) (the exact
    # minimiser's norm bound): the public bound the floating-point safe sampler clamps to
    bound = clip_norm if variant == "strict" else default_clip_norm(lam)
    weights = fit.w_mean.copy() if scale == 0 else noise.l2_laplace(fit.w_mean, scale, eps=eps, bound=bound)
    return Release(
        weights=weights,
        order=rank_features(weights),
        lam=lam,
        sensitivity=sensitivity,
        scale=scale,
        fit=fit,
        n_clipped=n_clipped,
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
        w = ensemble(U, y, lam, n_estimators=5, gen=gen).w_mean
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


def selection_stability(
    w: np.ndarray, select: int, scale: float, gen: np.random.Generator, trials: int = 200
) -> tuple[float, float]:
    """Plug-in stability of the top-``select`` set: mean overlap when fresh noise is added.

    Treats the released weights as the truth (post-processing only) and
    returns the mean share of the top-``select`` set that a re-noised vector
    keeps, with its Monte Carlo standard error.
    """
    top = set(rank_features(w)[:select].tolist())
    noise = FastNoise(gen)
    shares = np.empty(trials)
    for t in range(trials):
        noisy = noise.l2_laplace(w, scale) if scale > 0 else w
        shares[t] = len(top & set(rank_features(noisy)[:select].tolist())) / select
    return float(shares.mean()), float(shares.std(ddof=1) / math.sqrt(trials))
