"""Canonical Lipschitz private top-k (Shekelyan & Loukides 2022).

Mechanism: report-noisy-max with exponential noise over all k-subsets, grouped
into O(dk) classes by (head, tail) of their ranks (Algorithm 2 in the appendix
of Swope et al., "Feature Selection from Differentially Private
Correlations").  Guarantee: eps-DP for the whole set in one shot, for scores
already divided by their sensitivity (one neighbouring change moves every score
by at most 1); the output is a *set*, returned sorted, its internal order not
released.  Conventions: docs/architecture.md, "Privacy conventions".

Utility of the exact top k.  Algorithm 2 line 7 gives the class of the exact top
k the utility (eps2 − eps1)/2·x[k] (line 17's formula at h = k−1, t = k).  We use
(eps2/2)·x[k] − (eps1/2)·x[k+1]: rank k is its worst member and rank k+1 its
best non-member, exactly as line 17 reads for every other class, so each
utility moves by at most eps/2 when every score moves by at most 1.  Both are
eps-DP; an independent exact computation of the output law
(``tests/test_topk_exact_eps.py``: every 3-subset of 7 items, adversarial
search over neighbouring score vectors) finds the worst log-ratio equal to eps
for ours to within 1e-9 (tight), and no more than 0.895·eps for line 7's, which
spends less of the budget and recovers the exact top k less often
(``benchmarks/bench_topk_line7.py``).  Line 7's utility is available as
``exact_top_utility="paper"``.  The exact output law is in :mod:`.laws`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from .selector import Selector

# log m above which -log(1 - U^(1/m)) is replaced by its asymptote
# log m - log(-log U); the relative error is below m^-1 < 1e-17 there.
_ASYMPTOTE_LOG_M = 40.0


# --------------------------------------------------------------------------- canonical Lipschitz
# Classes partition the k-subsets by (head, tail) of their ranks (1-indexed, scores sorted
# descending): a subset other than the top k holds ranks 1..h, not rank h+1 (h < k), its
# lowest rank is t (t > k), and the other k-h-1 come from ranks h+2..t-1.  The exact top k
# is a class of its own, stored in cell (h = k-1, t = k).  The appendix of the DP-SIS paper,
# as restated in our issue, lets the body also use rank h+1, so classes overlap and a set
# collects probability from several of them; our exact audit measured eps = 1.58 for a
# claimed 1 (d = 5, k = 3).  With the partition every subset has one utility and the
# mechanism is report-noisy-max over subsets with a Lipschitz utility.


def _log_gamma_table(n: int) -> np.ndarray:
    """log Γ(m) for the integers m = 0..n (Γ(0) = inf): math.lgamma, so the first dp_sis call needs
    no scipy.special (0.2 to 0.3 s to import, most of the R package's first-call Python imports)."""
    return np.array([math.inf] + [math.lgamma(m) for m in range(1, n + 1)])


def _digamma(x: float) -> float:
    """ψ(x) for x > 0: recurrence up to 10, then the asymptotic series (within 1e-13 of scipy's)."""
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return acc + math.log(x) - 0.5 / x - series


@lru_cache(maxsize=4)
def _class_log_sizes(d: int, k: int) -> np.ndarray:
    lgam = _log_gamma_table(d + 1)  # every argument below is a whole number in 0..d
    h = np.arange(k)[:, None]
    t = np.arange(k, d + 1)[None, :]
    with np.errstate(invalid="ignore"):
        logm = lgam[t - h - 1] - lgam[k - h] - lgam[t - k]
    logm = np.where(t == k, np.where(h == k - 1, 0.0, -np.inf), logm)
    logm.setflags(write=False)
    return logm


def class_log_sizes(d: int, k: int) -> np.ndarray:
    """log |C(h, t)| on the grid h = 0..k-1, t = k..d.

    |C(h, t)| = C(t−h−2, k−h−1) for t > k; the exact top k is the single member
    of cell (k−1, k); the other cells with t = k are empty (−inf).  Cached: the
    grid depends only on (d, k), which are public.
    """
    return _class_log_sizes(int(d), int(k)).copy()


EXACT_TOP_UTILITIES = ("margin", "paper")


def class_utilities(
    x_sorted: np.ndarray, k: int, eps1: float, eps2: float, exact_top_utility: str = "margin"
) -> np.ndarray:
    """L(h, t) = (eps2/2)·x[t] − (eps1/2)·x[h+1] (1-indexed, x sorted descending).

    The exact top-k cell (k−1, k) gets (eps2/2)·x[k] − (eps1/2)·x[k+1] with
    ``exact_top_utility="margin"`` (its tail is rank k and its first excluded
    rank is k+1), or Algorithm 2 line 7's (eps2 − eps1)/2·x[k] with ``"paper"``.
    """
    d = x_sorted.size
    tail = x_sorted[k - 1 : d]  # x[t], t = k..d
    first_out = x_sorted[:k]  # x[h+1], h = 0..k-1
    util = (eps2 / 2) * tail[None, :] - (eps1 / 2) * first_out[:, None]
    if exact_top_utility == "margin":
        util[k - 1, 0] = (eps2 / 2) * x_sorted[k - 1] - (eps1 / 2) * x_sorted[k]
    elif exact_top_utility != "paper":  # "paper": line 17's formula at (k−1, k) is line 7's
        raise ValueError(f"exact_top_utility must be one of {EXACT_TOP_UTILITIES}, got {exact_top_utility!r}")
    return util


def max_exponential_noise(logm: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Max of m iid standard exponentials, drawn as F⁻¹(U^{1/m}), for each log m.

    F⁻¹(U^{1/m}) = −log(1 − U^{1/m}) = −log(−expm1(−E/m)) with E = −log U ~ Exp(1);
    for huge m it tends to log m − log E, which is used past log m = 40 so that
    no m is ever formed (log C(22282, 99) ≈ 632 overflows a double).  Empty
    classes (log m = −inf) get −inf.
    """
    e = np.maximum(rng.standard_exponential(logm.shape), np.finfo(float).tiny)
    out = logm - np.log(e)  # -inf stays -inf: empty classes never win
    small = np.isfinite(logm) & (logm < _ASYMPTOTE_LOG_M)
    if small.any():
        es, ls = e[small], logm[small]
        out[small] = -np.log(-np.expm1(-es * np.exp(-ls)))
    return out


def canonical_lipschitz(
    scores: np.ndarray,
    k: int,
    eps: float,
    rng: np.random.Generator,
    gamma: float = 0.5,
    exact_top_utility: str = "margin",
) -> np.ndarray:
    """Canonical Lipschitz top-k (Shekelyan & Loukides 2022), vectorised O(dk).

    Parameters
    ----------
    scores : ndarray of shape (d,)
        Scores divided by their sensitivity.
    k : int
        Number of items to select, 1 <= k < d.
    eps : float
        Privacy parameter; eps1 = (1 − gamma)·eps, eps2 = gamma·eps.
    gamma : float in [0, 1)
        Split between the head and tail terms of the utility.
    exact_top_utility : {"margin", "paper"}
        Utility of the exact top k: ``"margin"`` (default) (eps2/2)·x[k] −
        (eps1/2)·x[k+1], whose eps-DP bound is tight; ``"paper"`` Algorithm 2
        line 7's (eps2 − eps1)/2·x[k], also eps-DP but with worst-case privacy
        loss about 0.895·eps (exact search, d = 7, k = 3) and a lower chance of
        returning the exact top k (see the module docstring).

    Returns
    -------
    ndarray
        The selected indices, sorted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> canonical_lipschitz(np.array([100., 0, 0, 90]), 2, 10.0, rng, exact_top_utility="paper")
    array([0, 3])

    Notes
    -----
    Each class C(h, t) (see the comment above :func:`class_log_sizes`) gets its
    utility plus the max of |C(h, t)| standard exponentials; the winning class's
    member is drawn uniformly.  This is report-noisy-max with exponential noise
    over all k-subsets, grouped by class so that the work is O(dk).
    """
    d = scores.size
    order = np.argsort(-scores, kind="stable")
    x = scores[order]
    eps1, eps2 = (1 - gamma) * eps, gamma * eps
    noisy = class_utilities(x, k, eps1, eps2, exact_top_utility)
    noisy += max_exponential_noise(_class_log_sizes(d, k), rng)
    h, t_index = np.unravel_index(int(np.argmax(noisy)), noisy.shape)
    return np.sort(order[_class_member(int(h), int(t_index) + k, k, rng)])


def canonical_lipschitz_grid(
    scores: np.ndarray,
    k: int,
    eps_values: np.ndarray,
    rng: np.random.Generator,
    gamma: float = 0.5,
    exact_top_utility: str = "margin",
) -> list[np.ndarray]:
    """:func:`canonical_lipschitz` at every eps of a grid on one score vector, for simulations.

    At each eps the output has exactly the law of :func:`canonical_lipschitz`
    (same arguments), at about the cost of one call for the whole grid: the
    scores are sorted once, and the classes' noise (the max of |C(h, t)|
    standard exponentials, the O(dk) draw that dominates a call) is drawn once
    and added to the utilities of every eps.  Why the law at each eps is
    unchanged: the utilities are linear in eps (L_eps(h, t) = eps·L_1(h, t),
    since eps1 and eps2 are the fixed shares (1 − gamma)·eps and gamma·eps), so
    at one eps the winning class is the argmax of L_eps + N with N a draw of
    the same independent class noises the single call draws, and the winner's
    member is drawn uniformly afresh for each eps.  Only the joint law across
    eps differs: the selections at different eps share N (common random
    numbers, which a planner wants).  Not for releases: a release is one eps,
    one call.

    Returns
    -------
    list of ndarray
        The selected indices (sorted) at each eps of ``eps_values``, in order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> [s.tolist() for s in canonical_lipschitz_grid(np.array([100., 0, 0, 90]), 2, [10.0, 20.0], rng)]
    [[0, 3], [0, 3]]
    """
    d = scores.size
    order = np.argsort(-scores, kind="stable")
    x = scores[order]
    unit = class_utilities(x, k, 1 - gamma, gamma, exact_top_utility)
    noise = max_exponential_noise(_class_log_sizes(d, k), rng)
    out = []
    for eps in np.asarray(eps_values, dtype=float):
        h, t_index = np.unravel_index(int(np.argmax(eps * unit + noise)), unit.shape)
        out.append(np.sort(order[_class_member(int(h), int(t_index) + k, k, rng)]))
    return out


def _class_member(h: int, t: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted-rank positions (0-indexed) of a uniform member of C(h, t)."""
    if t == k:
        return np.arange(k)
    body_size = k - h - 1
    body = h + 1 + rng.choice(t - h - 2, size=body_size, replace=False) if body_size else np.empty(0, int)
    return np.concatenate([np.arange(h), body, [t - 1]]).astype(int)


def class_members(h: int, t: int, k: int):
    """Every member of C(h, t) as a tuple of 0-indexed rank positions (small d only)."""
    from itertools import combinations

    if t == k:
        yield tuple(range(k))
        return
    for body in combinations(range(h + 1, t - 1), k - h - 1):
        yield (*range(h), *body, t - 1)


def largest_class_noise(d: int, k: int) -> tuple[float, float]:
    """(log m, H_m) for the largest class: E[max of m Exp(1)] = H_m (Theorem A.3)."""
    logm = float(np.max(_class_log_sizes(d, k)))
    if logm < _ASYMPTOTE_LOG_M:
        harmonic = _digamma(math.exp(logm) + 1) + float(np.euler_gamma)
    else:
        harmonic = logm + float(np.euler_gamma)
    return logm, harmonic


def log_other_subsets(d: int, k: int) -> float:
    """log(C(d, k) − 1): the number of k-subsets of d items other than the exact top k.

    Equal to log Σ |C(h, t)| over every class but the exact top k's, since the
    classes partition the k-subsets (within 1e-12 relative of that sum,
    ``tests/test_topk.py``), without forming the O(dk) grid.

    Examples
    --------
    >>> round(float(np.exp(log_other_subsets(5, 3))), 9)   # C(5, 3) − 1
    9.0
    """
    log_all = math.lgamma(d + 1) - math.lgamma(k + 1) - math.lgamma(d - k + 1)
    return log_all + float(np.log(-np.expm1(-log_all))) if log_all > 0 else -np.inf


def exact_recovery_bound(gap: np.ndarray, d: int, k: int, eps: float, gamma: float = 0.5) -> np.ndarray:
    """Lower bound on P(output = exact top-k) as a function of the score gap.

    ``gap`` = x[k] − x[k+1] in sensitivity units.  The exact top k is the single
    member of its class, with utility (eps2/2)x[k] − (eps1/2)x[k+1]; every other
    class has t ≥ k+1 and h+1 ≤ k, so its utility is lower by
    (eps2/2)(x[k] − x[t]) + (eps1/2)(x[h+1] − x[k+1]) ≥ eps·gap/2.  A union bound
    over the other members gives P(miss) ≤ ½ · Σ_{other classes} |C(h,t)| · e^{−eps·gap/2}
    (P(E − E' > a) = e^{−a}/2 for independent standard exponentials).  This is
    our derivation of the paper's Theorem 4.1-type statement.  The classes
    partition the k-subsets, so Σ_{other classes} |C(h,t)| = C(d, k) − 1, in closed
    form (:func:`log_other_subsets`): O(1) in d and k.
    """
    log_others = log_other_subsets(d, k)
    log_miss = np.log(0.5) + log_others - eps * np.asarray(gap, dtype=float) / 2
    return np.clip(1 - np.exp(np.minimum(log_miss, 0.0)), 0.0, 1.0)


def recovery_gaps(probs: Sequence[float], d: int, k: int, eps: float, gamma: float = 0.5) -> list[float]:
    """Smallest gaps (sensitivity units) at which :func:`exact_recovery_bound` reaches each of ``probs``.

    A root search on the bound: evaluated on a geometric grid, then on a fine grid
    between the bracketing points (relative accuracy about 1e-5); three vectorised
    calls.  A probability the bound never reaches gives ``inf``.

    Examples
    --------
    >>> g = recovery_gaps((0.5, 0.9), d=50, k=3, eps=2.0)
    >>> [round(float(exact_recovery_bound(np.array(x), 50, 3, 2.0)), 3) for x in g]
    [0.5, 0.9]
    """
    coarse = np.geomspace(1e-8, 1e8, 2001) / eps
    bound = exact_recovery_bound(coarse, d, k, eps, gamma)
    fine = []
    for prob in probs:
        i = int(np.argmax(bound >= prob))
        if bound[i] < prob:
            fine.append(math.inf)
            continue
        grid = np.linspace(coarse[max(i - 1, 0)] if i else 0.0, coarse[i], 4001)
        fine.append(float(grid[np.argmax(exact_recovery_bound(grid, d, k, eps, gamma) >= prob)]))
    return fine


def recovery_curve(
    d: int, k: int, eps: float, gamma: float, sensitivity: float
) -> tuple[np.ndarray, np.ndarray]:
    """(score gaps, lower bound on P(exact top-k)) in score units, for plotting and printing.

    200 gaps from 0 to twice the expected largest class noise (plus a margin), with the
    exact crossings of 0.5, 0.9 and 0.95 added (:func:`recovery_gaps`), so that a printed
    gap for recovery is the curve's own figure, not the next point of the grid.
    """
    logm, _ = largest_class_noise(d, k)
    gaps = np.linspace(0.0, 2 * 2 * sensitivity * (logm + 10) / max(gamma * eps, 1e-12), 200)
    crossings = sensitivity * np.array(recovery_gaps((0.5, 0.9, 0.95), d, k, eps, gamma))
    gaps = np.union1d(gaps, crossings[np.isfinite(crossings)])
    return gaps, exact_recovery_bound(gaps / sensitivity, d, k, eps, gamma)


CANONICAL_LIPSCHITZ = Selector(
    name="canonical_lipschitz",
    select=canonical_lipschitz,
    accounting="eps-DP for the whole set in one shot (Lipschitz mechanism, no composition over the k picks)",
    statement_note=(
        "Canonical Lipschitz top-k: the exact top k has utility (eps2/2)x[k] - (eps1/2)x[k+1] "
        "instead of Algorithm 2 line 7's (eps2 - eps1)/2 x[k]; an exact check finds both eps-DP, "
        "ours tight (worst privacy loss = eps), line 7's at most about 0.895 eps."
    ),
)
