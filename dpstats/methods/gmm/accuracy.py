"""The accuracy rate of the paper's Theorem 1.1 and the public rule that it is vacuous.

:func:`theorem_accuracy` solves Kamath, Sheffet, Singhal & Ullman (2019), Theorem 1.1, for the
accuracy alpha at a given n; :func:`vacuous_warning` applies it before anything is spent, from
public inputs only (n where public, d, k, eps, delta), at the most favourable weights (every
component 1/k), and after the release at the smallest released weight of a component that did not
collapse (a collapse is warned with its cause, :func:`collapse_cause`): when alpha is infinite
there, the theorem's sample-size condition fails at this n and eps.  :func:`location_warning` applies,
before anything is spent, the accuracy of the clustering step's AboveThreshold (Dwork & Roth 2014,
Theorem 3.24): when it exceeds the number of rows a round looks for, the located clusters, and so
the fit, may be noise.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ...errors import ChanceWarning, caller_stacklevel
from ...formula import LEVELS_READ_NOT_SHOWN
from ...privacy.calibration import svt_eps
from .budget import plan
from .cluster import ROUND_SPLIT, cube_sides
from .._search import smallest_reaching
from .options import GMMOptions

#: the start of :func:`vacuous_warning`'s text (the results tell its pre-spend text from others by it)
VACUOUS_OPENING = "dp_gmm's release carries no accuracy guarantee"
#: what the texts say for d when levels were read from the rows (:func:`~dpstats.validation.columns_read`)
UNSHOWN_D = f"d {LEVELS_READ_NOT_SHOWN}"
#: AboveThreshold's failure probability at which :func:`location_warning` reads Theorem 3.24
LOCATION_BETA = 0.5


def theorem_accuracy(n: int, d: int, k: int, eps: float, delta: float, w_min: float) -> float:
    """Accuracy alpha at which Theorem 1.1 of Kamath, Sheffet, Singhal & Ullman (2019) is met with n samples.

    The theorem's sample size is
    n = (d²/(α² w_min) + d²/(α w_min eps) + poly(k)·d^{3/2}/(w_min eps)) · polylog(…)
    (Theorem 1.1, "Main, Informal"; the plain-text copy of the paper in
    /work/shared/papers lost its formulas, the form is the published statement's).
    Constants we had to fix: every absolute constant is 1, poly(k) = k and the
    polylog factor is log(1/δ) (its δ part; the other logarithms are dropped), so
    the result is an order of magnitude, not a guarantee.  Solving
    A α² − (d²/eps) α − d² = 0 with A = n·w_min/log(1/δ) − k d^{3/2}/eps gives α;
    ``inf`` when A <= 0 (n below the theorem's requirement).

    Examples
    --------
    >>> round(theorem_accuracy(20000, 2, 3, 1.0, 1e-6, 1 / 3), 3)
    0.096
    >>> theorem_accuracy(150, 2, 3, 5.0, 1e-5, 0.05)
    inf
    """
    if w_min <= 0 or not np.isfinite(eps):
        return math.inf if w_min <= 0 else 0.0
    A = n * w_min / math.log(1 / delta) - k * d**1.5 / eps
    if A <= 0:
        return math.inf
    b = d * d / eps
    return float((b + math.sqrt(b * b + 4 * A * d * d)) / (2 * A))


def vacuous_warning(
    n: int | None,
    d: int,
    k: int,
    eps: float,
    delta: float,
    w_min: float | None = None,
    *,
    d_shown: bool = True,
) -> str | None:
    """Warn (:class:`~dpstats.errors.ChanceWarning`) when Theorem 1.1's sample-size condition cannot hold.

    The rule: alpha of :func:`theorem_accuracy` is infinite, i.e. n·w_min/log(1/δ) <= k·d^{3/2}/eps:
    the smallest component has fewer rows than the theorem's privacy term needs to locate it, at
    any accuracy.  Before anything is spent (``w_min`` None) it is applied at w_min = 1/k, the most
    favourable mixture (alpha only grows as the smallest weight shrinks), from public inputs only;
    after the release at the smallest released weight of a component that did not collapse (post-processing
    of released values; :meth:`~dpstats.results.gmm.GMMResult.smallest_weight`).
    Nothing is checked when n is private (``n`` None).  A finite alpha >= 1 is not warned: with the
    constants set to 1 it is an order of magnitude only (d = 10, k = 3, n = 10 000, eps = 1 gives
    1.2 while the method recovers the mixture; tests/test_gmm.py), and the printed result says so.
    ``d_shown`` False (levels read from the rows, so d depends on the data): the text does not quote d.
    Returns the text (also warned), or None.

    Examples
    --------
    >>> vacuous_warning(None, 2, 3, 5.0, 1e-5) is None  # n private: nothing is said
    True
    >>> vacuous_warning(20000, 2, 3, 1.0, 1e-6) is None
    True
    """
    if n is None:
        return None
    w = 1.0 / k if w_min is None else w_min
    if math.isfinite(theorem_accuracy(n, d, k, eps, delta, w)):
        return None
    which = (
        "even if every component had weight 1/k"
        if w_min is None
        else f"at the smallest released weight {w_min:.3g} (collapsed components left out)"
    )
    d_is = f"d = {d}" if d_shown else f"d columns ({UNSHOWN_D})"
    text = (
        f"{VACUOUS_OPENING}: with n = {n} rows, {d_is}, k = {k}, eps = {eps:g}, "
        f"delta = {delta:g} the accuracy alpha of Kamath et al.'s Theorem 1.1 is Inf {which} (the rows of "
        "the smallest component are below the theorem's requirement k·d^1.5·log(1/delta)/eps), so the released weights, means and covariances may be far from "
        "any mixture in the data. Raise eps or n, fit fewer components (k) or columns, or declare tighter "
        "bounds."
    )
    warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
    return text


def svt_accuracy(eps: float, queries: int, beta: float = LOCATION_BETA) -> float:
    """8(ln L + ln(2/β))/ε: AboveThreshold's accuracy over L queries (Dwork & Roth 2014, Theorem 3.24).

    With threshold noise Lap(2/ε) and query noise Lap(4/ε) (:func:`dpstats.privacy.sparse_vector.above_threshold`),
    with probability at least 1 − β the query it stops at is at least T − a, and every query before it
    at most T + a.

    Examples
    --------
    >>> round(svt_accuracy(1.0, 41), 2)
    40.8
    """
    return 8.0 * (math.log(queries) + math.log(2.0 / beta)) / eps


def location_rows(n: int, options: GMMOptions) -> float:
    """The rows one clustering round looks for at the most favourable weights (every one 1/k): alpha·n/k.

    Round j's target is alpha × (active rows)/(k − j) (:func:`.cluster.private_clusters`), and with equal
    weights the active rows are n(k − j)/k.
    """
    return options.alpha * n / options.k


def location_eps(d: int, options: GMMOptions) -> float:
    """The eps of one clustering round's AboveThreshold, from the plan's ρ (public inputs only)."""
    rho_round = plan(options, d).rho["cluster"][0]
    return svt_eps(rho_round * ROUND_SPLIT["svt"])


def location_holds(n: int | None, d: int, options: GMMOptions) -> bool | None:
    """Whether the rows a clustering round looks for, alpha·n/k, exceed its AboveThreshold's accuracy
    (:func:`location_warning`'s rule, False when it warns); None when n is private."""
    if n is None:
        return None
    return location_rows(n, options) > svt_accuracy(location_eps(d, options), len(cube_sides(1.0)))


def location_warning(n: int | None, d: int, options: GMMOptions, *, d_shown: bool = True) -> str | None:
    """Warn (:class:`~dpstats.errors.ChanceWarning`) when the clustering step cannot find a component.

    Each of the k rounds runs AboveThreshold over the L = 41 public cube sides (:func:`.cluster.cube_sides`)
    and stops at the first side where a cell holds about alpha·n/k rows (:func:`location_rows`, at the
    most favourable weights 1/k).  Theorem 3.24 of Dwork & Roth (2014) guarantees, with probability
    1/2, only that the side it stops at has a cell of at least alpha·n/k − a rows, a =
    :func:`svt_accuracy`.  When alpha·n/k <= a that says nothing: AboveThreshold may stop at a side
    whose cells are (nearly) empty, the exponential mechanism then draws a cell among empty ones, and
    the released means sit where the noise put them (both on one blob, or off every blob).  Decided
    from n (public), d, k, eps, delta, the method and alpha, before anything is spent; nothing is said
    when n is private.  ``d_shown`` False (levels read from the rows): AboveThreshold's eps, and so its
    accuracy and the n or eps needed, depend on d (the private PCA is planned only when k < d), so the
    text quotes none of them.  Returns the text (also warned), or None.

    Examples
    --------
    >>> o = GMMOptions.partial(eps=4.0, delta=1e-6, method="pca_cluster", k=2, alpha=0.5, refine=3,
    ...                        neighbouring="replace")
    >>> location_warning(2720, 2, o) is None
    True
    """
    if location_holds(n, d, options) in (None, True):
        return None
    eps_svt, sides = location_eps(d, options), len(cube_sides(1.0))
    rows, accuracy = location_rows(n, options), svt_accuracy(eps_svt, sides)
    if not d_shown:
        text = _location_text_without_d(n, options.k, rows)
        warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
        return text
    n_needed = math.ceil(accuracy * options.k / options.alpha)
    text = (
        f"dp_gmm's clustering cannot locate the components at n = {n}: each of its k = {options.k} rounds looks "
        f"for a grid cell holding alpha·n/k = {rows:.4g} rows (the most, at equal weights), with AboveThreshold "
        f"at eps = {eps_svt:.3g} over {sides} grid sides, whose accuracy at probability 1/2 is "
        f"{accuracy:.4g} rows (Dwork & Roth 2014, Thm 3.24): it may stop at a side whose cells are empty, and "
        f"the released means then sit where the noise put them. It needs n >= {n_needed} at this eps, or "
        f"eps >= {_eps_needed(n, d, options):.3g} at this n (or a smaller k)."
    )
    warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
    return text


#: a component holding at least this many times the median weight of the other (not collapsed) ones
#: is read as two components merged, when another component collapsed (:func:`collapse_cause`)
MERGED_RATIO = 1.6


def merged_component(weights: np.ndarray, collapsed: list[int]) -> int | None:
    """The component (0-based) that likely holds two merged components, from the released weights: the
    heaviest one not collapsed, when some component collapsed and it holds at least ``MERGED_RATIO`` times
    the median weight of the other components not collapsed (at least one); else None.

    Examples
    --------
    >>> merged_component(np.array([0.2, 0.4, 0.2, 0.2, 0.0]), [4])
    1
    >>> merged_component(np.array([0.25, 0.25, 0.25, 0.25, 0.0]), [4]) is None
    True
    """
    kept = [j for j in range(len(weights)) if j not in collapsed]
    if not collapsed or len(kept) < 2:
        return None
    heaviest = max(kept, key=lambda j: weights[j])
    others = np.median([weights[j] for j in kept if j != heaviest])
    return heaviest if weights[heaviest] >= MERGED_RATIO * others else None


def collapse_cause(
    weights: np.ndarray, collapsed: list[int], located: bool | None, repeats: list[int] = ()
) -> str:
    """The likely cause of collapsed components, and what helps, from released weights and public inputs.

    ``located`` is :func:`location_holds` (None when n is private).  False: the clustering's
    AboveThreshold is at or below its accuracy, so a round may have stopped on noise (a larger eps or
    n helps; the pre-spend warning said so).  True: the budget locates components of weight 1/k, so
    the cause is the clustering or k, not the noise; with :func:`merged_component`, the clustering
    put two components under one located centre (audit s16-stat4, finding F1: a larger eps did not help
    there), which another random_state (new grid offsets, a new release) often undoes (6 to 10 in 10
    random states on the audit's failed fits).  ``repeats`` are the rounds that located an earlier
    component again (:func:`.pipeline.located_twice`, from released centres, radii and pass-1 means): a
    collapsed one among them means no other component held the rows a round looks for.
    """
    if located is False:
        return (
            "Likely cause: a budget too small for n: the clustering's AboveThreshold is at or below its "
            "accuracy (the warning before the spend), so a round may have stopped on an empty cell. "
            "Raise eps or n, or use a smaller k."
        )
    again = [j for j in collapsed if j in repeats]
    if again:
        return (
            f"Likely cause: clustering round(s) {', '.join(str(j + 1) for j in again)} located a component "
            "already found (its centre fell inside the ball an earlier round removed, and its rows' mean "
            "near that round's): no other component held the rows a round looks for (alpha × active rows / "
            "components left), so the mixture has fewer than k separated components with that many rows "
            "(components a few sd apart count as one), or a component too small to be located. A larger "
            "eps does not change that. Try a smaller k."
        )
    merged = merged_component(weights, collapsed)
    if located is None:
        return (
            "Likely causes: k larger than the number of separated components, components that overlap "
            "or that the clustering step merged (one component then holds about twice the weight of the "
            "others), or a budget too small for n. Try a smaller k, a larger eps, another random_state (a "
            "new release, whose eps and delta add to this one's), or lower min_weight if small components "
            "are expected."
        )
    if merged is None:
        return (
            "Likely causes: k larger than the number of separated components, or components that overlap. "
            "The budget locates components of weight 1/k (AboveThreshold's accuracy is below the rows each "
            "clustering round looks for), so a larger eps is unlikely to help. Try a smaller k, or lower "
            "min_weight if small components are expected."
        )
    others = np.median([w for j, w in enumerate(weights) if j not in collapsed and j != merged])
    return (
        f"Likely cause: the clustering step merged two components under one located centre: component "
        f"{merged + 1} holds weight {weights[merged]:.3g}, {weights[merged] / others:.3g} times the median "
        f"{others:.3g} of the others (unless the mixture's weights are that unequal), and the collapsed "
        "component(s) got almost no rows. It is not the noise: the budget locates components of weight 1/k "
        "(AboveThreshold's accuracy is below the rows each clustering round looks for), so a larger eps or n "
        "does not prevent it; it happens when two components lie close against the grid cells of the "
        "clustering in the private PCA plane (a few sd apart, or about 6 when k is 8 or more). What helps: another random_state often separates them (new grid "
        "offsets; a new release, whose eps and delta add to this one's), or k - 1 components if two of them "
        "may be that close."
    )


def _location_text_without_d(n: int, k: int, rows: float) -> str:
    """:func:`location_warning`'s text when d depends on levels read from the rows: no number derived from d."""
    return (
        f"dp_gmm's clustering cannot locate the components at n = {n}: each of its k = {k} rounds looks "
        f"for a grid cell holding alpha·n/k = {rows:.4g} rows (the most, at equal weights), with AboveThreshold "
        "over the grid sides, whose accuracy at probability 1/2 (Dwork & Roth 2014, Thm 3.24) is no smaller: it "
        "may stop at a side whose cells are empty, and the released means then sit where the noise put them. "
        f"AboveThreshold's eps, its accuracy and the n or eps that would be enough depend on d ({UNSHOWN_D}). "
        "Raise eps or n, or use a smaller k."
    )


def _eps_needed(n: int, d: int, options: GMMOptions) -> float:
    """The smallest eps (to 0.1 %) at which :func:`location_warning` is silent for this n: bracketed by
    factors of e from the call's eps (planning at an eps near e^50 overflows), then bisected."""
    sides = len(cube_sides(1.0))

    def enough(eps: float) -> bool:
        scaled = replace(options, eps=eps)
        return location_rows(n, scaled) > svt_accuracy(location_eps(d, scaled), sides)

    lo, hi = options.eps, options.eps * math.e  # bracket upwards by factors of e (the plan overflows far up)
    while not enough(hi):
        lo, hi = hi, hi * math.e
        if hi > math.exp(50.0):
            return math.inf
    return smallest_reaching(enough, lo, hi)


def pre_spend_warnings(n: int | None, d: int, options: GMMOptions, *, d_shown: bool = True) -> str | None:
    """Both public rules before anything is spent (:func:`vacuous_warning` at weights 1/k, then
    :func:`location_warning`), each warned; their texts joined, or None.  ``d_shown`` False: levels
    were read from the rows, so neither text quotes d or a number derived from it."""
    texts = [
        vacuous_warning(n, d, options.k, options.eps, options.delta, d_shown=d_shown),
        location_warning(n, d, options, d_shown=d_shown),
    ]
    return "\n".join(t for t in texts if t) or None
