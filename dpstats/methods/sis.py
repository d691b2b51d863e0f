"""DP sure independence screening (Swope et al., Algorithm 1), with a centred score.

Every column and y are mapped from their declared bounds onto [−1, 1] and
clipped; then a private top-k of one of two scores.

``center="mean"`` (the default with bounds): the centred cross-product
``C_j = Σ_i (x_ij − x̄_j)(y_i − ȳ) = x_jᵀy − (Σ_i x_ij)(Σ_i y_i)/n``, score
``|C_j|``, computed from the one-pass sufficient statistics.  It ranks columns
by |covariance| with y, whatever the position of the data inside the bounds.

``center="midpoint"``: the paper's score ``|x_jᵀ y|``, i.e. the columns
centred at the (public) midpoints of their bounds.  It ranks offsets from the
midpoints: a column far from its midpoint scores high even if uncorrelated.

Sensitivities (l∞ over j; every value lies in [−1, 1] after clipping):

Midpoint score.  Each product x_ij·y_i lies in [−1, 1]: replacing a row moves
each score by at most 2, adding or removing one by at most 1.

Centred score, replace one row (n fixed and public).  Let A = Σ x_ij and
B = Σ y_i over the n − 1 rows kept (|A|, |B| <= n − 1) and S their Σ x_ij·y_i.
As a function of the replaced row (x, y) ∈ [−1, 1]²,

    C_j(x, y) = S + x·y − (A + x)(B + y)/n
              = (1 − 1/n)·x·y − (B/n)·x − (A/n)·y + (S − A·B/n),

a bilinear function, so its extremes over the square are at the corners, and
the difference between two corners is 2|a ± b|, 2|a ± c| or 2|b ± c| with
a = 1 − 1/n, |b| = |B|/n <= a, |c| = |A|/n <= a.  Hence

    Δ_replace = max |C_j(D) − C_j(D')| <= 4(1 − 1/n),

attained: the n − 1 kept rows all (x, y) = (−1, −1), the replaced row (1, 1)
in D (C_j = 4(1 − 1/n)) and (1, −1) in D' (y constant, C_j = 0).

Centred score, add or remove one row.  Welford's update, with x̄, ȳ the means
of the n − 1 rows of the smaller data set and n the larger size,

    C_n = C_{n−1} + ((n − 1)/n)·(x − x̄)(y − ȳ),

and |x − x̄|, |y − ȳ| <= 2 give |C_n − C_{n−1}| <= 4(1 − 1/n) < 4, attained
in the limit (the same corner rows as above).  Under add/remove n is not
public, so the bound used is its supremum over n: Δ_add_remove = 4.

In every case | |C| − |C'| | <= |C − C'|, so the absolute value does not
increase the sensitivity.  Clipping to declared bounds is a fixed map applied
row by row, so no step depends on the data: pure eps-DP.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.accountant import LedgerEntry
from ..privacy.plan import Plan
from ..privacy.topk import SELECTORS, select_topk
from ..stats import CrossStats

SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}
"""l∞ sensitivity of the midpoint (paper's) score |x_jᵀ y|."""

SENSITIVITY_TEXT = {
    "replace": "Δ∞ = 2: replacing one row changes x_ij·y_i ∈ [−1, 1] by at most 2 in each score",
    "add_remove": "Δ∞ = 1: adding or removing one row adds or removes one x_ij·y_i ∈ [−1, 1]",
}

CENTERS = {"mean": "mean", "midpoint": "midpoint", "data": "mean", "bounds": "midpoint"}
"""Accepted ``center=`` values; "data" and "bounds" are the former names."""


CENTRED_NOTE = (
    "Scores are centred cross-products sum_i (x_ij - mean_j)(y_i - mean_y) of the values "
    "mapped onto [-1, 1] by the declared bounds; the means are part of the score, are not "
    "released, and are covered by the stated sensitivity (no data-dependent step)."
)


def centred_sensitivity(neighbouring: str, n: int | None) -> float:
    """l∞ sensitivity of |Σ_i (x_ij − x̄_j)(y_i − ȳ)| on [−1, 1] data (module docstring).

    ``n=None``: the number of rows analysed is not public (incomplete rows
    were dropped), and the bound 4 > 4(1 − 1/n), which holds for every n, is used.

    Examples
    --------
    >>> centred_sensitivity("replace", 4), centred_sensitivity("add_remove", 4), centred_sensitivity("replace", None)
    (3.0, 4.0, 4.0)
    """
    if neighbouring == "replace" and n is not None:
        return 4.0 * (1.0 - 1.0 / n)
    return 4.0


def centred_sensitivity_text(neighbouring: str, n: int | None) -> str:
    """Ledger wording of :func:`centred_sensitivity`, with its derivation in one line."""
    if neighbouring == "replace" and n is None:
        return (
            "Δ∞ = 4: replacing one row changes the centred cross-product by at most 4(1 − 1/n) < 4 for "
            "every n (the number of rows analysed is not public: rows with a missing value are dropped)"
        )
    if neighbouring == "replace":
        return (
            f"Δ∞ = 4(1 − 1/n) = {centred_sensitivity('replace', n):.6g} (n = {n}): the centred "
            "cross-product is bilinear in the replaced row (x, y) ∈ [−1, 1]², range at most "
            "4(1 − 1/n), attained"
        )
    return (
        "Δ∞ = 4: adding or removing one row changes the centred cross-product by "
        "((n − 1)/n)(x − x̄)(y − ȳ), at most 4(1 − 1/n) < 4 for every n (n is not public)"
    )


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


def scores_centred_on_unit_scale(stats: CrossStats) -> np.ndarray:
    """|Σ_i (x_ij − x̄_j)(y_i − ȳ)| = |x_jᵀy − (Σx_j)(Σy)/n| on data mapped into [−1, 1].

    Examples
    --------
    >>> from dpstats.stats import cross_products
    >>> X = np.array([[0.5, -1.0], [1.0, -1.0], [0.0, 1.0]]); y = np.array([0.2, 0.4, 0.0])
    >>> bool(np.allclose(scores_centred_on_unit_scale(cross_products(X, y)),
    ...                  np.abs((X - X.mean(0)).T @ (y - y.mean()))))
    True
    """
    return np.abs(stats.xty - stats.x_sum * stats.y_sum / stats.n)


scores_midpoint_then_data_centered = scores_centred_on_unit_scale  # the former name


def plan(
    *,
    d: int,
    k: int,
    eps: float,
    neighbouring: str,
    topk: str,
    score: str,
    n: int | None,
    declared_sensitivity: float | None = None,
) -> Plan:
    """The privacy plan of Algorithm 1: one private top-k of the d scores, all of eps.

    ``score`` is ``"centred"`` (the default with bounds, Δ∞ = 4(1 − 1/n) or 4),
    ``"midpoint"`` or ``"maxabs"`` (Δ∞ = 2 or 1), or ``"custom"`` with a
    ``declared_sensitivity``.  ``n`` enters only the centred score's replace-one
    sensitivity, where n is public (``None`` when it is not: Δ∞ = 4).

    Examples
    --------
    >>> p = plan(d=50, k=3, eps=1.0, neighbouring="replace", topk="canonical_lipschitz", score="centred", n=100)
    >>> p.entries[0].sensitivity[:15], p.eps
    ('Δ∞ = 4(1 − 1/n)', 1.0)
    """
    selector = SELECTORS[topk]
    centred = score == "centred"
    if score == "custom":
        text = f"user-declared Δ∞ = {declared_sensitivity:g} (of the scores after the stated mapping)"
    else:
        text = centred_sensitivity_text(neighbouring, n) if centred else SENSITIVITY_TEXT[neighbouring]
    name = "|sum_i (x_ij - mean_j)(y_i - mean_y)|" if centred else "|x_j'y|"
    entry = LedgerEntry(
        step=f"private top-{k} of {name} over {d} columns",
        mechanism=f"{topk} top-k",
        eps=eps,
        sensitivity=text,
        note=selector.accounting,
        event=selector.event(eps, k),
    )
    notes = [
        "The selected set is released without an order.",
        "The number of clipped values is not released.",
        *filter(None, [selector.statement_note]),
        *([CENTRED_NOTE] if centred else []),
        *([CUSTOM_SCORE_NOTE] if score == "custom" else []),
    ]
    return Plan(
        method="DP-SIS",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={f"score {name} (l-infinity over j)": text},
        assumptions=[CUSTOM_SCORE_ASSUMPTION] if score == "custom" else [],
        notes=notes,
    )


#: a custom score's non-finite values: mapped by construction, never checked on the rows
CUSTOM_SCORE_NOTE = (
    "Custom score: every non-finite value score(X, y) returns (NaN, ±inf) is replaced by 0 before the "
    "selection, by construction (whether any was is not checked, warned or released)."
)
CUSTOM_SCORE_ASSUMPTION = (
    "the user-declared sensitivity bounds the change of the custom scores, after non-finite values "
    "are replaced by 0, between neighbouring data sets"
)


def custom_scores(values: np.ndarray) -> np.ndarray:
    """A custom score's values with every non-finite one replaced by 0 (:data:`CUSTOM_SCORE_NOTE`).

    Examples
    --------
    >>> custom_scores(np.array([1.5, np.nan, np.inf, -np.inf])).tolist()
    [1.5, 0.0, 0.0, 0.0]
    """
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values), values, 0.0)


def sensitivity(score: str, neighbouring: str, n: int | None, declared: float | None = None) -> float:
    """The l∞ sensitivity of the scores in use (module docstring; ``declared`` for a custom score)."""
    if score == "custom":
        return float(declared)
    if score == "centred":
        return centred_sensitivity(neighbouring, n)
    return SENSITIVITY[neighbouring]


def private_top_k(
    scores: np.ndarray,
    k: int,
    eps: float,
    sensitivity: float,
    rng: np.random.Generator,
    topk: str = "canonical_lipschitz",
    gamma: float = 0.5,
) -> np.ndarray:
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
