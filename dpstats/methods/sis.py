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
    """TOP, GREAT, GOOD or NONE for a selected set, given a ranking of the items.

    The definitions of Swope et al. §5 (after Shekelyan & Loukides 2022; the
    text's second "GREAT" is GOOD): TOP selects all of the top k; GREAT selects
    all of the top k/10 and the rest come from the top 11k/10; GOOD selects all
    of the top k/100 and the rest come from the top 3k/2.  The paper states the
    fractions without rounding ("the top 20 ... from the top 220" at k = 200);
    "the top x" is read as the ranks r ≤ x, i.e. ⌊x⌋, in integer arithmetic
    (k // 10, 11k // 10, k // 100, 3k // 2).  At k = 10: GREAT needs rank 1
    and ranks ≤ 11; GOOD needs ranks ≤ 15 (k // 100 = 0).

    ``ranking`` lists items best first.  The paper ranks by the order statistics
    of the non-private scores (:func:`dpstats.evaluate.compare_selectors`'s
    default ``classes_against="scores"``); a ranking that puts the true support
    first measures something else (``classes_against="truth"``).

    Examples
    --------
    >>> utility_class([0, 1, 2, 3, 4, 5, 6, 7, 8, 10], list(range(30)), 10)
    'GREAT'
    >>> utility_class([1, 2, 3, 4, 5, 6, 7, 8, 9, 14], list(range(30)), 10)
    'GOOD'
    """
    rank = {item: r for r, item in enumerate(ranking)}
    ranks = sorted(rank.get(s, len(ranking)) for s in selected)
    if ranks == list(range(k)):
        return "TOP"
    for label, head, tail in (("GREAT", k // 10, 11 * k // 10), ("GOOD", k // 100, 3 * k // 2)):
        if set(range(head)) <= set(ranks) and max(ranks) < tail:
            return label
    return "NONE"


# ---------------------------------------------------------------------- operating characteristics
def simulate_precision_recall(n: int, d: int, k: int, eps: float, sensitivity: float,
                              rng: np.random.Generator, *, trials: int = 50, s: int = 8,
                              noise_var: float = 1.5, gamma: float = 0.5,
                              topk: str = "canonical_lipschitz", progress: bool = False) -> dict:
    """Precision and recall of DP-SIS under the paper's synthetic model.

    Uses only public quantities (n, d, k, eps).  The s true columns and y are
    drawn in full; the d − s null scores are drawn from their distribution
    given y: x_jᵀy/(M_j M_y) with x_jᵀy ~ N(0, ‖y‖²) and M_j the max-abs of n
    standard normals (inverse-CDF draw), a normal approximation that ignores the
    weak dependence between x_jᵀy and M_j.  Scores are centered as in the paper.
    """
    from scipy.stats import norm

    from ..datasets import fan_lv_coefficients

    s = min(s, d - 1)
    precision, recall = np.empty(trials), np.empty(trials)
    iterator = range(trials)
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc="operating characteristics", leave=False)
    for t in iterator:
        beta = fan_lv_coefficients(s, s, n, rng)
        Xs = rng.standard_normal((n, s))
        y = Xs @ beta + rng.normal(0, math.sqrt(noise_var), n)
        yc = y - y.mean()
        My = np.abs(y).max()
        true_scores = np.abs((Xs - Xs.mean(0)).T @ yc) / (np.abs(Xs).max(0) * My)
        m_null = norm.ppf((1 + rng.random(d - s) ** (1 / n)) / 2)
        null_scores = np.abs(rng.standard_normal(d - s) * np.linalg.norm(yc)) / (m_null * My)
        scores = np.concatenate([true_scores, null_scores])
        chosen = private_top_k(scores, k, eps, sensitivity, rng, topk=topk, gamma=gamma)
        hits = np.count_nonzero(chosen < s)
        precision[t], recall[t] = hits / k, hits / s
    se = lambda v: float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")  # noqa: E731
    return {"precision": (float(precision.mean()), se(precision)),
            "recall": (float(recall.mean()), se(recall)), "s": s}
