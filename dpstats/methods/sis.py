"""DP sure independence screening (Swope et al., Algorithm 1).

score_j = |x_jᵀ y| with every column and y mapped into [−1, 1]; a private
top-k of the scores.  Each product x_ij·y_i lies in [−1, 1], so one row moves
each score by at most 2 when it is replaced and by at most 1 when it is added
or removed (:data:`SENSITIVITY`).
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.topk import select_topk
from ..stats import CrossStats

SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}

SENSITIVITY_TEXT = {
    "replace": "Δ∞ = 2: replacing one row changes x_ij·y_i ∈ [−1, 1] by at most 2 in each score",
    "add_remove": "Δ∞ = 1: adding or removing one row adds or removes one x_ij·y_i ∈ [−1, 1]",
}


def default_k(d: int) -> int:
    """The paper's theoretical choice ⌊log d⌋, at least 1 (and below d)."""
    return max(1, min(d - 1, int(math.floor(math.log(d)))))


def scores_on_unit_scale(stats: CrossStats) -> np.ndarray:
    """|x_jᵀ y| for statistics computed on data already mapped into [−1, 1]."""
    return np.abs(stats.xty)


def scores_maxabs_centered(stats: CrossStats) -> np.ndarray:
    """The paper's experimental scaling: divide by max-abs, center by column means.

    Σ_i (x_ij/M_j − x̄_j/M_j)(y_i/M_y) = (x_jᵀy − n x̄_j ȳ)/(M_j M_y); centering
    one factor of a cross-product centers both.
    """
    centered = stats.xty - stats.x_sum * stats.y_sum / stats.n
    scale = stats.x_maxabs * stats.y_maxabs
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.abs(centered) / scale
    return np.where(scale > 0, out, 0.0)


def scores_midpoint_then_data_centered(stats: CrossStats) -> np.ndarray:
    """Scores on the [−1, 1] scale, then centered by the data's column means."""
    return np.abs(stats.xty - stats.x_sum * stats.y_sum / stats.n)


def private_top_k(scores: np.ndarray, k: int, eps: float, sensitivity: float,
                  rng: np.random.Generator, topk: str = "canonical_lipschitz",
                  gamma: float = 0.5) -> np.ndarray:
    """Select k indices of ``scores`` privately (scores are divided by their sensitivity)."""
    options = {"gamma": gamma} if topk == "canonical_lipschitz" else {}
    return select_topk(np.asarray(scores) / sensitivity, k, eps, rng, method=topk, **options)


# ---------------------------------------------------------------------- evaluation
def topk_accuracy(selected, truth) -> float:
    """|selected ∩ truth| / |truth|: the paper's top-k accuracy."""
    truth = set(truth)
    return len(truth & set(selected)) / max(1, len(truth))


def utility_class(selected, ranking, k: int) -> str:
    """TOP, GREAT, GOOD or NONE for a selected set, given the true ranking.

    TOP: exactly the true top k.  GREAT: all of the true top ⌈k/10⌉ and the
    rest within the top ⌈1.1k⌉.  GOOD: all of the true top ⌈k/100⌉ and the rest
    within the top ⌈1.5k⌉.  ``ranking`` lists items best first.
    """
    rank = {item: r for r, item in enumerate(ranking)}
    ranks = sorted(rank.get(s, len(ranking)) for s in selected)
    if ranks == list(range(k)):
        return "TOP"
    for label, head_frac, tail_mult in (("GREAT", 10, 1.1), ("GOOD", 100, 1.5)):
        head = math.ceil(k / head_frac)
        if set(range(head)) <= set(ranks) and max(ranks) < math.ceil(tail_mult * k):
            return label
    return "NONE"
