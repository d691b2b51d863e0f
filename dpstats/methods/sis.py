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

Empty and one-row frames.  Under add/remove-one-row n is private, so no error
may depend on it: the door runs on any number of rows, 0 and 1 included.  The
centred score (and the max-abs scaled one) of a frame with fewer than 2 rows is
0, by construction: one row is its own mean (C_j = 0 exactly), and no rows give
0/0, defined as 0.  Welford's update from 0 rows to 1 (C stays 0) and from 1 to
2 (|C_2| = |(1/2)(x − x̄)(y − ȳ)| <= 2) stays within Δ = 4, so the release is then
the selector's noise alone, under the same guarantee.

The release (:func:`release`) computes the scores from the one-pass statistics
(or takes a custom score's values), divides them by the sensitivity that
:func:`plan` derived once, as a number (:attr:`SISPlan.sensitivity`; the
ledger's text is written from the same number), and runs the private top-k of
:mod:`dpstats.privacy.topk`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataError, PrivacyParameterError
from ..formula import LEVELS_READ_NOT_SHOWN, missing_counts
from ..privacy.accountant import LedgerEntry
from ..privacy.bounds import is_auto
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..privacy.topk import SELECTORS, select_topk
from ..schema import Schema
from ..stats import CrossStats
from ..validation import check_eps, check_fraction, check_neighbouring, check_oc_trials
from ._options import Options

SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}
"""l∞ sensitivity of the midpoint (paper's) score |x_jᵀ y|."""

CENTERS = {"mean": "mean", "midpoint": "midpoint", "data": "mean", "bounds": "midpoint"}
"""Accepted ``center=`` values; "data" and "bounds" are the former names."""

SCORE_NAMES = ("centred", "midpoint", "maxabs", "custom")
"""The scores a call computes (:func:`score_kind`)."""

CENTRED_NOTE = (
    "Scores are centred cross-products sum_i (x_ij - mean_j)(y_i - mean_y) of the values "
    "mapped onto [-1, 1] by the declared bounds; the means are part of the score, are not "
    "released, and are covered by the stated sensitivity (no data-dependent step)."
)


@dataclass(frozen=True)
class SISOptions(Options):
    """dp_sis's options, checked once (defaults: the signature of :func:`dpstats.dp_sis`).

    ``assume`` is the :class:`dpstats.simulate.Assume` the door coerced (methods do not
    import :mod:`dpstats.simulate`); ``center`` is "mean" or "midpoint" (former names mapped).
    """

    formula: str
    eps: float
    k: int | None
    bounds: Any
    gamma: float
    center: str
    score: Callable[[np.ndarray, np.ndarray], np.ndarray] | None
    score_sensitivity: float | None
    topk: str
    neighbouring: str
    truth: Sequence[str] | None
    assume: Any
    oc_trials: int
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> SISOptions:
        """Cheap checks of dp_sis's arguments, before the data is read (``given["assume"]`` coerced)."""
        eps = check_eps(given["eps"])
        neighbouring = check_neighbouring(given["neighbouring"])
        gamma = check_fraction(given["gamma"], "gamma", 0.0, 1.0)
        if given["topk"] not in SELECTORS:
            raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {given['topk']!r}.")
        center = given["center"]
        if center is not None and center not in CENTERS:
            raise PrivacyParameterError(f"center must be 'mean' or 'midpoint', got {center!r}.")
        declared = _check_custom_score(given["score"], given["score_sensitivity"], neighbouring)
        assume = given["assume"]
        oc_trials = check_oc_trials(given["oc_trials"], assume)
        if assume is not None and given["score"] is not None:
            raise PrivacyParameterError(
                "assume= simulates the built-in score; it cannot simulate a custom score=."
            )
        if assume is not None and neighbouring == "add_remove":
            raise PrivacyParameterError(
                "assume= simulates at the number of rows, which is private under neighbouring='add_remove'; "
                "simulate at a public n instead with dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)."
            )
        return cls.from_given(
            given,
            eps=eps,
            neighbouring=neighbouring,
            gamma=gamma,
            center=CENTERS.get(center, "mean"),
            score_sensitivity=declared,
            oc_trials=oc_trials,
        )

    def check_schema(self, schema: Schema) -> None:
        """``assume=`` needs the public n of the rows read, which ``na_action="omit"`` makes private."""
        if self.assume is not None and schema.na_action == "omit":
            raise PrivacyParameterError(
                'assume= simulates at the number of rows analysed, which na_action="omit" makes private; '
                'keep the default na_action="fill" (n = rows read), or simulate at a public n with '
                "dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)."
            )

    @property
    def min_rows(self) -> int:
        """The fewest rows a frame may have: 2 where n is public; 0 under add/remove, where n is
        private and no error may depend on it (the scores of fewer than 2 rows are 0, module docstring)."""
        return 0 if self.neighbouring == "add_remove" else 2


def _check_custom_score(score, score_sensitivity, neighbouring: str) -> float | None:
    """The declared sensitivity of a custom score, validated (None for the built-in scores)."""
    if score is None:
        if score_sensitivity is not None:
            raise PrivacyParameterError("score_sensitivity is only used with a custom score=.")
        return None
    if not callable(score):
        raise PrivacyParameterError("score must be a callable score(X, y) -> array of d scores.")
    if score_sensitivity is None:
        raise PrivacyParameterError(
            "a custom score= needs score_sensitivity=: the largest change of any score when one "
            f"row is {'replaced' if neighbouring == 'replace' else 'added or removed'}."
        )
    return check_eps(score_sensitivity, name="score_sensitivity")


def score_kind(options: SISOptions) -> str:
    """The score a call computes: "custom", "maxabs" (no bounds), else "centred" or "midpoint"."""
    if options.score is not None:
        return "custom"
    if options.bounds is None:
        return "maxabs"
    return "centred" if options.center == "mean" else "midpoint"


def scaling(options: SISOptions, dd: DataDependence) -> str:
    """How the scores see the data (the result's ``scaling``); the max-abs scaling's data-dependent
    steps (no bounds declared) are named in ``dd``."""
    kind = score_kind(options)
    if kind == "custom":
        return "user-supplied score with declared sensitivity"
    if kind == "maxabs":
        dd.add(
            "each column and y scaled by its max-abs value (the paper's experiments)",
            fix="declare public bounds, e.g. bounds=(-1, 1) or bounds={'y': (0, 10), ...}",
        )
        dd.add(
            "columns centered by their data means",
            fix="declare public bounds; the midpoint of the bounds is then used",
        )
        return "max-abs scaled and mean-centered (data-dependent)"
    auto = is_auto(options.bounds)
    which = "private bounds (released first)" if auto else "declared bounds"
    if kind == "centred":
        return f"{which} mapped onto [-1, 1], values clipped, centred cross-product"
    return f"{which} mapped onto [-1, 1] (midpoint-centered), values clipped"


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


def sensitivity(score: str, neighbouring: str, n: int | None, declared: float | None = None) -> float:
    """The l∞ sensitivity of the scores in use (module docstring; ``declared`` for a custom score)."""
    if score == "custom":
        return float(declared)
    if score == "centred":
        return centred_sensitivity(neighbouring, n)
    return SENSITIVITY[neighbouring]


def sensitivity_text(score: str, neighbouring: str, n: int | None, value: float) -> str:
    """The ledger's wording of the sensitivity ``value`` (:func:`sensitivity`), its derivation in one line.

    Examples
    --------
    >>> [sensitivity_text(s, "replace", 4, v).split(":")[0] for s, v in (("midpoint", 2.0), ("centred", 3.0))]
    ['Δ∞ = 2', 'Δ∞ = 4(1 − 1/n) = 3 (n = 4)']
    """
    if score == "custom":
        return f"user-declared Δ∞ = {value:g} (of the scores after the stated mapping)"
    if score != "centred" and neighbouring == "replace":
        return (
            f"Δ∞ = {value:g}: replacing one row changes x_ij·y_i ∈ [−1, 1] by at most {value:g} in each score"
        )
    if score != "centred":
        return f"Δ∞ = {value:g}: adding or removing one row adds or removes one x_ij·y_i ∈ [−1, 1]"
    if neighbouring == "replace" and n is None:
        return (
            f"Δ∞ = {value:g}: replacing one row changes the centred cross-product by at most 4(1 − 1/n) < 4 "
            "for every n (the number of rows analysed is not public: rows with a missing value are dropped)"
        )
    if neighbouring == "replace":
        return (
            f"Δ∞ = 4(1 − 1/n) = {value:.6g} (n = {n}): the centred "
            "cross-product is bilinear in the replaced row (x, y) ∈ [−1, 1]², range at most "
            "4(1 − 1/n), attained"
        )
    return (
        f"Δ∞ = {value:g}: adding or removing one row changes the centred cross-product by "
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
    one factor of a cross-product centers both.  Fewer than 2 rows: 0 by
    construction (module docstring).
    """
    if stats.n < 2:
        return np.zeros_like(np.asarray(stats.xty, dtype=float))
    centered = stats.xty - stats.x_sum * stats.y_sum / stats.n
    scale = stats.x_maxabs * stats.y_maxabs
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.abs(centered) / scale
    return np.where(scale > 0, out, 0.0)


def scores_centred_on_unit_scale(stats: CrossStats) -> np.ndarray:
    """|Σ_i (x_ij − x̄_j)(y_i − ȳ)| = |x_jᵀy − (Σx_j)(Σy)/n| on data mapped into [−1, 1].

    A frame of fewer than 2 rows scores 0, by construction: one row is its own
    mean, and no rows would give 0/0 (module docstring).

    Examples
    --------
    >>> from dpstats.stats import cross_products
    >>> X = np.array([[0.5, -1.0], [1.0, -1.0], [0.0, 1.0]]); y = np.array([0.2, 0.4, 0.0])
    >>> bool(np.allclose(scores_centred_on_unit_scale(cross_products(X, y)),
    ...                  np.abs((X - X.mean(0)).T @ (y - y.mean()))))
    True
    >>> scores_centred_on_unit_scale(cross_products(X[:0], y[:0])).tolist()
    [0.0, 0.0]
    """
    if stats.n < 2:
        return np.zeros_like(np.asarray(stats.xty, dtype=float))
    return np.abs(stats.xty - stats.x_sum * stats.y_sum / stats.n)


scores_midpoint_then_data_centered = scores_centred_on_unit_scale  # the former name

SCORES = {
    "centred": scores_centred_on_unit_scale,
    "midpoint": scores_on_unit_scale,
    "maxabs": scores_centred_on_unit_scale,
}
"""The built-in scores, from the one-pass statistics (a custom score's values come from the door).  The
max-abs score's pass already scaled every value to x/M (boxes [−M, M], M read first), so its score is
the centred one of those values, :func:`scores_maxabs_centered` without a product of raw values (one
huge value overflowed it, and warned where its neighbour did not)."""


@dataclass
class SISPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs, as numbers.

    ``sensitivity`` is the l∞ sensitivity of the scores, derived once (the ledger's
    text is written from it); ``select_eps`` the eps of the private top-k (the ledger's
    entry; a private-bounds step may be put before it).
    """

    score: str = "centred"
    sensitivity: float = 1.0
    d: int = 0
    k: int = 1
    select_eps: float = 0.0
    topk: str = "canonical_lipschitz"
    gamma: float = 0.5


def plan(options: SISOptions, *, d: int, k: int, n: int | None, score: str | None = None) -> SISPlan:
    """The privacy plan of Algorithm 1: one private top-k of the d scores, all of ``options.eps``.

    ``score`` is :func:`score_kind` of ``options`` unless given: ``"centred"`` (the
    default with bounds, Δ∞ = 4(1 − 1/n) or 4), ``"midpoint"`` or ``"maxabs"`` (Δ∞ = 2
    or 1), or ``"custom"`` with ``options.score_sensitivity``.  ``n`` enters only the
    centred score's replace-one sensitivity, where n is public (``None`` when it is
    not: Δ∞ = 4).

    Examples
    --------
    >>> o = SISOptions.partial(eps=1.0, neighbouring="replace", topk="canonical_lipschitz")
    >>> p = plan(o, d=50, k=3, n=100, score="centred")
    >>> p.entries[0].sensitivity[:15], p.eps, p.sensitivity
    ('Δ∞ = 4(1 − 1/n)', 1.0, 3.96)
    """
    score = score_kind(options) if score is None else score
    neighbouring, eps, selector = options.neighbouring, options.eps, SELECTORS[options.topk]
    value = sensitivity(score, neighbouring, n, options.score_sensitivity)
    text = sensitivity_text(score, neighbouring, n, value)
    name = "|sum_i (x_ij - mean_j)(y_i - mean_y)|" if score == "centred" else "|x_j'y|"
    entry = LedgerEntry(
        step=f"private top-{k} of {name} over {d} columns",
        mechanism=f"{options.topk} top-k",
        eps=eps,
        sensitivity=text,
        note=selector.accounting,
        event=selector.event(eps, k),
    )
    notes = [
        "The selected set is released without an order.",
        "The number of clipped values is not released.",
        *filter(None, [selector.statement_note]),
        *([CENTRED_NOTE] if score == "centred" else []),
        *(CUSTOM_SCORE_NOTES if score == "custom" else []),
    ]
    return SISPlan(
        method="DP-SIS",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={f"score {name} (l-infinity over j)": text},
        assumptions=[CUSTOM_SCORE_ASSUMPTION] if score == "custom" else [],
        notes=notes,
        score=score,
        sensitivity=value,
        d=d,
        k=k,
        select_eps=eps,
        topk=options.topk,
        gamma=options.gamma,
    )


#: a custom score's non-finite values and a result of the wrong shape: mapped by construction, never
#: checked on the rows
CUSTOM_SCORE_NOTES = [
    "Custom score: every non-finite value score(X, y) returns (NaN, ±inf) is replaced by 0 before the "
    "selection, by construction (whether any was is not checked, warned or released).",
    "Custom score: its contract (d numbers) is checked on a public probe, 2 rows of zeros, before the "
    "data is read; a result of another shape on the data, or an exception raised on the data, is replaced "
    "by d zeros, by construction (whether it was is not checked, warned or released).",
]
CUSTOM_SCORE_NOTE = CUSTOM_SCORE_NOTES[0]
CUSTOM_SCORE_ASSUMPTION = (
    "the user-declared sensitivity bounds the change of the custom scores, after non-finite values "
    "are replaced by 0 (and a result of the wrong shape by zeros), between neighbouring data sets"
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


UNSHOWN_D = f"d numbers, one per design column (d {LEVELS_READ_NOT_SHOWN})"


def _call_score(score: Callable, X: np.ndarray, y: np.ndarray, d_is: str) -> np.ndarray:
    try:
        return np.asarray(score(X, y), dtype=float)
    except Exception as exc:  # the user's function: refused before the charge, its values not shown
        raise DataError(
            f"score(X, y) raised {type(exc).__name__}; fix the score function (it must return "
            f"{d_is}). Nothing was spent."
        ) from None


def probe_score(score: Callable, d: int, *, shown: bool = True) -> None:
    """A custom score's contract, checked on public input before the rows are scored.

    ``score`` is called on 2 rows of zeros with the design's d columns (its
    warnings silenced: they would come from the probe, not the data); a result
    that is not d numbers, or an exception, is refused before anything is spent.
    The refusal depends on d and the function only, never on the rows' values; ``shown`` False
    (levels read from the rows, so d depends on the rows): the text quotes neither d nor the
    shape returned (a function of d).

    Examples
    --------
    >>> probe_score(lambda X, y: np.abs(X.T @ y), 3)
    >>> probe_score(lambda X, y: X.T @ y[:, None], 3)
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: score() must return 3 numbers, got shape (3, 1) on a public probe (2 rows of zeros). Nothing was spent.
    """
    d_is = f"{d} numbers" if shown else UNSHOWN_D
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        values = _call_score(score, np.zeros((2, d)), np.zeros(2), d_is)
    if values.shape != (d,):
        got = f"got shape {values.shape}" if shown else "got another shape"
        raise DataError(
            f"score() must return {d_is}, {got} on a public probe (2 rows of zeros). Nothing was spent."
        )


def score_rows(score: Callable, X: np.ndarray, y: np.ndarray, *, shown: bool = True) -> np.ndarray:
    """A custom score on the rows, after its contract passed :func:`probe_score` (public input; ``shown``
    as there), mapped by construction (:data:`CUSTOM_SCORE_NOTES`): a result that is not d numbers, or
    an exception raised on the rows, becomes d zeros; non-finite values 0.

    Examples
    --------
    >>> X = np.ones((5, 3)); y = np.ones(5)
    >>> score_rows(lambda X, y: X.T @ y, X, y).tolist()
    [5.0, 5.0, 5.0]
    >>> score_rows(lambda X, y: X.T @ y if len(y) < 3 else np.ones(2), X, y).tolist()  # shape by construction
    [0.0, 0.0, 0.0]
    >>> score_rows(lambda X, y: X.T @ y if len(y) < 3 else 1 / 0, X, y).tolist()  # raising, by construction
    [0.0, 0.0, 0.0]
    """
    d = X.shape[1]
    probe_score(score, d, shown=shown)
    try:
        values = np.asarray(score(X, y), dtype=float)
    except Exception:  # the user's function on the rows: d zeros by construction (stated)
        return np.zeros(d)
    return custom_scores(values) if values.shape == (d,) else np.zeros(d)


@dataclass
class SISRelease:
    """What :func:`release` computed: the scores (not released) and the private selection."""

    scores: np.ndarray
    chosen: np.ndarray


def release(scores_or_stats: np.ndarray | CrossStats, plan: SISPlan, noise: NoiseSource) -> SISRelease:
    """Algorithm 1's release: the scores (from one-pass statistics, or a custom score's mapped
    values), divided by ``plan.sensitivity``, then a private top-k at ``plan.select_eps``.

    Examples
    --------
    >>> from dpstats.stats import cross_products
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (500, 6)); y = np.clip(X[:, 2] + 0.1 * rng.normal(size=500), -1, 1)
    >>> o = SISOptions.partial(eps=50.0, neighbouring="replace", topk="canonical_lipschitz", gamma=0.5)
    >>> pl = plan(o, d=6, k=1, n=500, score="centred")
    >>> release(cross_products(X, y), pl, NoiseSource(1)).chosen.tolist()
    [2]
    """
    scores = (
        scores_or_stats if isinstance(scores_or_stats, np.ndarray) else SCORES[plan.score](scores_or_stats)
    )
    chosen = private_top_k(
        scores, plan.k, plan.select_eps, plan.sensitivity, noise.generator, topk=plan.topk, gamma=plan.gamma
    )
    return SISRelease(scores=scores, chosen=chosen)


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


def diagnostics(mf, released: SISRelease, truth: list[str] | None, k: int, n_clipped: int) -> dict:
    """dp_sis's requested diagnostics (not private): :func:`selection_diagnostics` of the released
    selection beside the non-private top ``k`` of the scores.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> mf = SimpleNamespace(n_dropped=0, n_filled=0, names=["a", "b", "c"])
    >>> released = SISRelease(scores=np.array([3.0, 1.0, 2.0]), chosen=np.array([0, 1]))
    >>> diagnostics(mf, released, None, 2, 0)["nonprivate_sis_selected"]
    ['a', 'c']
    """
    nonprivate = [mf.names[j] for j in np.argsort(-released.scores, kind="stable")[:k]]
    selected = [mf.names[j] for j in released.chosen]
    return selection_diagnostics(mf, selected, nonprivate, truth, k, n_clipped, "sis")


def selection_diagnostics(
    mf, selected: list[str], nonprivate: list[str], truth, k: int, n_clipped: int, method: str
) -> dict:
    """The non-private diagnostics of a private selection (shown only when asked): rows dropped,
    values filled and clipped, the non-private selection ``nonprivate`` and, with a stated
    ``truth`` (simulations), the accuracies of both selections against it.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> mf = SimpleNamespace(n_dropped=0, n_filled=2)
    >>> d = selection_diagnostics(mf, ["a", "c"], ["a", "b"], ["a", "b", "e"], 2, 0, "sis")
    >>> d["nonprivate_sis_selected"], d["topk_accuracy_vs_truth"], d["nonprivate_sis_accuracy_vs_truth"]
    (['a', 'b'], 0.5, 1.0)
    """
    diag = {
        **missing_counts(mf),
        "values_clipped": n_clipped,
        f"nonprivate_{method}_selected": sorted(nonprivate),
    }
    if truth is None:
        return diag
    head = truth[:k] if len(truth) >= k else truth
    diag.update(
        {
            "topk_accuracy_vs_truth": topk_accuracy(selected, head),
            "utility_class_vs_truth": utility_class(selected, truth, k) if len(truth) >= k else "n/a",
            f"nonprivate_{method}_accuracy_vs_truth": topk_accuracy(nonprivate, head),
        }
    )
    return diag
