"""The exponential-mechanism family of private top-k selectors.

Three selectors listed next to the canonical Lipschitz mechanism of
:mod:`.canonical` in :data:`~dpstats.privacy.topk.SELECTORS`, so that
``dp_sis(..., topk=...)`` and ``dp_two_stage(..., topk=...)`` can swap them;
each is eps-DP (guarantees and sources below).  Their exact output laws, used
by the audits and tests, are in :mod:`.laws`.  Conventions:
docs/architecture.md, "Privacy conventions".

``"peeling"``
    k rounds of the exponential mechanism, eps/k each, each round choosing
    among the items not yet chosen (McSherry & Talwar 2007; basic composition).
``"oneshot_gumbel"``
    Add Gumbel noise once and report the k largest (Durfee & Rogers 2019).
    Its output has *exactly* the distribution of ``"peeling"`` (their Lemma
    4.2, the Gumbel-max trick applied k times), so the accounting is the same;
    it needs one pass instead of k.
``"joint"``
    The joint exponential mechanism (Gillenwater, Joseph, Medina & Diaz 2022):
    one exponential mechanism over all k! C(d, k) ordered sequences, with
    utility u(S) = −max_i (x_(i) − x_{s_i}), sampled exactly in
    O(d log d + dk log k) time without enumerating the sequences.

All selectors take scores already divided by their l∞ sensitivity (one
neighbouring change moves every score by at most 1) and return the selected
indices sorted: the released output is a set.

Monotone scores.  When one neighbouring change moves all scores in the same
direction (e.g. counts under add/remove-one-*user*, where a user adds to
counts and never subtracts), each selector admits a factor-2 saving: pass
``monotone=True``.  The caller must justify it; the front doors of dpstats
never do, because their scores (|x_jᵀy|, vote counts) are not monotone.
"""

from __future__ import annotations

import numpy as np

from .selector import Selector


def _em_scale(eps_step: float, sensitivity: float, monotone: bool) -> float:
    """Exponent multiplier a in P(j) ∝ exp(a·u_j) for an eps_step exponential mechanism.

    The exponential mechanism with a utility of sensitivity Δ is eps-DP with
    a = eps/(2Δ); with monotone utilities a = eps/Δ (McSherry & Talwar 2007,
    Theorem 6 and its monotone remark).
    """
    return eps_step / (sensitivity if monotone else 2.0 * sensitivity)


# ----------------------------------------------------------------------------- peeling
def peeling(
    scores: np.ndarray, k: int, eps: float, rng: np.random.Generator, monotone: bool = False
) -> np.ndarray:
    """Peeling exponential mechanism: k rounds of an eps/k exponential mechanism.

    Round i draws one item among those not yet chosen with probability
    ∝ exp(a·score_j), a = (eps/k)/2 (eps/k with ``monotone``).  Each round is
    (eps/k)-DP and k rounds compose to eps-DP (basic composition).

    Examples
    --------
    >>> peeling(np.array([50., 0, 40, 0]), 2, 20.0, np.random.default_rng(0))
    array([0, 2])
    """
    a = _em_scale(eps / k, 1.0, monotone)
    logits = a * np.asarray(scores, dtype=float)
    logits = logits - logits.max()
    available = np.ones(logits.size, dtype=bool)
    chosen = np.empty(k, dtype=int)
    for i in range(k):
        weights = np.where(available, np.exp(logits - logits[available].max()), 0.0)
        j = int(rng.choice(logits.size, p=weights / weights.sum()))
        chosen[i], available[j] = j, False
    return np.sort(chosen)


# ----------------------------------------------------------------------------- one-shot Gumbel
def oneshot_gumbel(
    scores: np.ndarray, k: int, eps: float, rng: np.random.Generator, monotone: bool = False
) -> np.ndarray:
    """One-shot top-k with Gumbel noise (Durfee & Rogers 2019).

    Adds independent Gumbel(0, 1/a) noise to every score, a = (eps/k)/2 (eps/k
    with ``monotone``), and reports the k largest.  By the Gumbel-max trick the
    ordered output has the distribution of :func:`peeling` with eps/k per
    round, hence eps-DP by basic composition.  (Durfee & Rogers also give a
    tighter (eps', delta) accounting; dpstats states only the pure one.)

    Examples
    --------
    >>> oneshot_gumbel(np.array([50., 0, 40, 0]), 2, 20.0, np.random.default_rng(0))
    array([0, 2])
    """
    a = _em_scale(eps / k, 1.0, monotone)
    noisy = np.asarray(scores, dtype=float) + rng.gumbel(0.0, 1.0 / a, size=np.size(scores))
    return np.sort(np.argpartition(-noisy, k - 1)[:k])


# ----------------------------------------------------------------------------- joint EM
def joint(
    scores: np.ndarray, k: int, eps: float, rng: np.random.Generator, monotone: bool = False
) -> np.ndarray:
    """Joint exponential mechanism over ordered k-sequences (Gillenwater et al. 2022).

    Utility u(S) = −max_i (x_(i) − x_{s_i}), x_(i) the i-th largest score.
    With scores of l∞ sensitivity 1 every x_(i) and every x_j moves by at most
    1, so Δu ≤ 2 in general and Δu ≤ 1 when all scores move in the same
    direction (``monotone``, the setting of Gillenwater et al.).  A sequence is
    drawn with probability ∝ exp(eps·u(S)/(2Δu)): eps-DP in one shot.

    Sampling (exact; no sequence is enumerated): order the dk pairs (i, j) by
    their error e(i, j) = x_(i) − x_j (ties: larger i first, then by rank of
    j).  Every sequence has a unique largest pair in this order; the number of
    sequences whose largest pair is r = (i, j) is Π_{i'≠i} (m_{i'}(r) − i' + 1)
    with m_{i'}(r) the number of pairs of row i' up to r (the admitted sets
    are nested, so choices are counted position by position).  Draw r with
    probability ∝ count(r)·exp(−eps·e(r)/(2Δu)) in log space, then fill the
    other positions uniformly from their admitted sets.  The rows are sorted
    runs, so the stable (tim)sort of the dk pairs costs O(dk log k).

    Examples
    --------
    >>> joint(np.array([50., 0, 40, 0]), 2, 20.0, np.random.default_rng(0))
    array([0, 2])
    """
    x = np.asarray(scores, dtype=float)
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    a = eps / (2.0 * _joint_sensitivity(monotone))
    pos, rank, err = _sorted_pairs(xs, k)
    log_count = _log_sequence_counts(pos, rank, k)
    logw = np.where(np.isfinite(log_count), log_count - a * err, -np.inf)
    r = _draw_log_weights(logw, rng)
    seq = _fill_sequence(pos, rank, r, k, rng)
    return np.sort(order[seq])


def _joint_sensitivity(monotone: bool) -> float:
    """Δu of u(S) = −max_i (x_(i) − x_{s_i}) for scores with Δ∞ = 1.

    x_(i) and x_{s_i} each move by at most 1: Δu ≤ 2; when all scores move in
    the same direction both move by a value in [0, 1] (or [−1, 0]): Δu ≤ 1.
    """
    return 1.0 if monotone else 2.0


def _sorted_pairs(xs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (position i, rank j) pairs sorted by error x_(i) − x_(j), ties larger i first.

    Row i of ``xs[i] - xs`` is increasing in j, so the rows are sorted runs;
    laid out from i = k−1 down to 0, a stable sort keeps ties in that order.
    """
    d = xs.size
    rows = np.arange(k - 1, -1, -1)
    err = (xs[rows][:, None] - xs[None, :]).ravel()
    idx = np.argsort(err, kind="stable")
    pos = np.repeat(rows, d)[idx]
    rank = np.tile(np.arange(d), k)[idx]
    return pos, rank, err[idx]


def _log_sequence_counts(pos: np.ndarray, rank: np.ndarray, k: int) -> np.ndarray:
    """log of the number of sequences whose largest pair is each pair r (−inf if none).

    count(r) = Π_{i'≠i} (m_{i'}(r) − i'), 0-indexed positions, with m_{i'}(r)
    the admitted items of row i' after pair r.  Row i's admitted set after its
    pair (i, j) is the rank prefix 0..j, so its factor moves from j − i to
    j + 1 − i: the product is a running sum of log increments, and it is zero
    until every row has a positive factor (row i turns positive at j = i).
    The own factor j + 1 − i is >= 1 whenever all the others are positive,
    because the admitted sets are nested.
    """
    gap = (rank - pos).astype(float)  # j − i
    with np.errstate(divide="ignore", invalid="ignore"):
        new = np.where(gap >= 0, np.log(gap + 1), 0.0)
        old = np.where(gap >= 1, np.log(np.maximum(gap, 1)), 0.0)
    total = np.cumsum(new - old)
    zeros = k - np.cumsum(rank == pos)
    return np.where(zeros == 0, total - new, -np.inf)


def _draw_log_weights(logw: np.ndarray, rng: np.random.Generator) -> int:
    """Index drawn with probability ∝ exp(logw), via the Gumbel-max trick."""
    finite = np.isfinite(logw)
    g = np.where(finite, logw + rng.gumbel(size=logw.size), -np.inf)
    return int(np.argmax(g))


def _fill_sequence(pos: np.ndarray, rank: np.ndarray, r: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform sequence (ranks) whose largest pair is r: s_i = j, others uniform.

    Position i' draws uniformly from its admitted rank prefix 0..m_{i'}(r)−1
    minus the items already used (and minus j, which sits at position i);
    rejection needs at most m/(m − used) <= k tries on average.
    """
    i_star, j_star = int(pos[r]), int(rank[r])
    m = np.bincount(pos[: r + 1], minlength=k)
    seq = np.empty(k, dtype=int)
    taken = {j_star}
    for i in range(k):
        if i == i_star:
            seq[i] = j_star
            continue
        while True:
            j = int(rng.integers(m[i]))
            if j not in taken:
                break
        seq[i] = j
        taken.add(j)
    return seq


PEELING = Selector(
    name="peeling",
    select=peeling,
    accounting=(
        "eps-DP by basic composition of k exponential mechanisms with eps/k each (P ∝ exp(eps·score/(2k·Δ∞)))"
    ),
    monotone_note="with monotone scores each round may use exp(eps·score/(k·Δ∞))",
)
ONESHOT_GUMBEL = Selector(
    name="oneshot_gumbel",
    select=oneshot_gumbel,
    accounting=(
        "eps-DP: Gumbel noise of scale 2k·Δ∞/eps added once, top k reported; the output "
        "has the law of peeling with eps/k per round (Durfee & Rogers 2019, Lemma 4.2)"
    ),
    monotone_note="with monotone scores the Gumbel scale may be k·Δ∞/eps",
)
JOINT = Selector(
    name="joint",
    select=joint,
    accounting=(
        "eps-DP in one shot: exponential mechanism over ordered k-sequences with utility "
        "−max_i (x_(i) − x_{s_i}) of sensitivity 2Δ∞ (Gillenwater et al. 2022)"
    ),
    monotone_note="with monotone scores the utility's sensitivity is Δ∞, halving the noise",
)
