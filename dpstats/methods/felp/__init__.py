"""FELP: ensemble feature weighting by local learning, with output perturbation.

After Liu (2018), "Differentially private ensemble feature selection based on
local learning" (基于局部学习的差分隐私集成特征选择算法), whose base learner is
Logo (Sun, Todorovic & Goodison 2010).  Read top to bottom against the paper:

* :mod:`.options` — the options record (:class:`FELPOptions`), checked once from the
  public call, and the checks of the model frame (features, classes, ``select``).
* :mod:`.learner` — §1.1: margin vectors z_i = |x_i − NM(x_i)| − |x_i − NH(x_i)|
  and the weights minimising eq. (2) with the logistic loss of eq. (1), on
  features scaled so that ‖z_i‖₂ <= 1.
* :mod:`.sensitivity` — §1.2–1.3, Lemma 1 (eqs. 6–11), eq. (12), Theorem 1: the
  privacy plan, computed from public inputs before the data are touched:
  the paper variant's sensitivity 2/(nλ) (refuted; its assumptions are
  stated) or the strict variant's 2C/k (k learners, default one per 20 rows,
  each normalised to ‖w‖ = C = 1 or clipped to a given C), the ledger entry,
  the notes, and the public check that the release can beat chance.
* :mod:`.ensemble` — the pseudo-code's steps 1–3: k samples (bootstrap, or
  a disjoint partition in the strict variant), k learners (clipped to C in
  the strict variant), their average w_D.
* :mod:`.perturbation` — steps 1–4: the release, w*_D = w_D + b with L2-Laplace
  noise b, and the selection of the largest weights (post-processing); the requested
  (non-private) :func:`diagnostics`.

The two verbs a front door uses are :func:`plan` (options, n, d, the public box) and
:func:`release` (rows, plan, noise); plain functions of arrays, no printing, no I/O
(docs/architecture.md, "Layers").
"""

from .ensemble import EnsembleFit, EnsembleSpec, ensemble, subsets
from .learner import (
    MAX_ITER,
    N_NEIGHBORS,
    TOL,
    LogoFit,
    data_box,
    logo,
    margins,
    nearest_hit_miss,
    neighbour_masks,
    scale_features,
    solve_weights,
)
from .options import (
    FELPOptions,
    check_classes,
    check_features,
    check_select,
    check_subsets,
    declared_classes,
    name_read_classes,
)
from .sensitivity import (
    DEFAULT_LAM,
    PAPER_N_ESTIMATORS,
    PAPER_VARIANT_REFUTED,
    ROWS_PER_LEARNER,
    VARIANTS,
    FELPPlan,
    best_case_precision,
    chance_text,
    check_paper_variant,
    clip_norm,
    default_clip_norm,
    default_select,
    frame_sizes,
    logo_norm_bound,
    n_estimators_for,
    name_data_dependent_steps,
    noise_coordinate_sd,
    paper_sensitivity,
    plan,
    strict_sensitivity,
)
from .perturbation import Release, diagnostics, rank_features, release

__all__ = [
    "FELPOptions",
    "FELPPlan",
    "EnsembleSpec",
    "check_classes",
    "check_features",
    "check_select",
    "check_subsets",
    "declared_classes",
    "name_read_classes",
    "plan",
    "frame_sizes",
    "release",
    "Release",
    "diagnostics",
    "clip_norm",
    "check_paper_variant",
    "name_data_dependent_steps",
    "PAPER_VARIANT_REFUTED",
    "DEFAULT_LAM",
    "PAPER_N_ESTIMATORS",
    "ROWS_PER_LEARNER",
    "VARIANTS",
    "default_select",
    "default_clip_norm",
    "logo_norm_bound",
    "n_estimators_for",
    "chance_text",
    "best_case_precision",
    "paper_sensitivity",
    "strict_sensitivity",
    "noise_coordinate_sd",
    "scale_features",
    "data_box",
    "nearest_hit_miss",
    "neighbour_masks",
    "margins",
    "solve_weights",
    "logo",
    "LogoFit",
    "TOL",
    "MAX_ITER",
    "N_NEIGHBORS",
    "ensemble",
    "subsets",
    "EnsembleFit",
    "rank_features",
]
