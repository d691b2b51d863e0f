"""An independent exact law of the canonical Lipschitz top-k mechanism (test helper).

Written from the paper's definitions (Swope et al., Appendix A: Definition A.2 and
Algorithm 2), not from :mod:`dpstats.privacy.topk`: every k-subset is enumerated, its
utility computed from its ranks, and the mechanism's output law obtained exactly.

The mechanism is report-noisy-max over "candidates" with i.i.d. standard exponential
noise (a class's max of m exponentials with a uniform member is the same as m
candidates with their own noise).  For candidate i with utility u_i, and
w = e^{-v}, a_j = e^{u_j - u_max}:

    P(i wins) = ∫ e^{-(v-u_i)} Π_{j≠i} (1 - e^{-(v-u_j)})_+ dv
              = e^{u_i - u_max} ∫_0^1 Π_{j≠i} (1 - s a_j) ds,

because the product vanishes unless v ≥ u_max.  The integrand is a polynomial of
degree N - 1 in s (N candidates), so Gauss–Legendre with ≥ N/2 nodes is exact up to
rounding; every factor lies in [0, 1], so the sum is well conditioned.

Variants (x sorted descending, 1-indexed ranks, eps1 = (1-γ)eps, eps2 = γ eps):

``"margin"``   dpstats' partition: a subset other than the top k has head 1..h, misses
               rank h+1 and has lowest rank t > k: u = eps2/2 x[t] − eps1/2 x[h+1];
               the top k has u = eps2/2 x[k] − eps1/2 x[k+1].
``"paper"``    the same partition, the top k with Algorithm 2 line 7's (eps2 − eps1)/2 x[k].
``"overlap"``  Algorithm 2 as written (the issue's restatement): classes (h, t) with the
               body drawn from ranks h+1..t−1, |C(h,t)| = C(t−h−1, k−h−1), each
               (class, member) pair a candidate with u = eps2/2 x[t] − eps1/2 x[h+1]; a
               subset in several classes collects the probability of each.
"""

from __future__ import annotations

from itertools import combinations, product

import numpy as np

VARIANTS = ("margin", "paper", "overlap")
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(96)
_S = (_NODES + 1) / 2  # nodes on [0, 1]
_W = _WEIGHTS / 2


def candidates(d: int, k: int, variant: str) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """(subsets of rank positions, rank index of the "tail" term, of the "head" term).

    Ranks are 0-indexed.  A candidate's utility is eps2/2·x[tail] − eps1/2·x[head]
    (for "paper"'s top k the two indices coincide: (eps2 − eps1)/2·x[k]).
    """
    sets, tails, heads = [], [], []
    if variant == "overlap":
        for h in range(k):
            for t in range(k, d + 1):
                if t == k and h != k - 1:
                    continue
                for body in combinations(range(h, t - 1), k - h - 1):
                    sets.append(tuple(sorted({*range(h), *body, t - 1})))
                    tails.append(t - 1)
                    heads.append(h)
        return sets, np.array(tails), np.array(heads)
    for ranks in combinations(range(d), k):
        if ranks == tuple(range(k)):
            tails.append(k - 1)
            heads.append(k if variant == "margin" else k - 1)
        else:
            h = next(i for i in range(k) if ranks[i] != i)  # ranks 0..h-1 held, rank h missed
            tails.append(ranks[-1])
            heads.append(h)
        sets.append(ranks)
    return sets, np.array(tails), np.array(heads)


def output_law(
    scores: np.ndarray, k: int, eps: float, variant: str = "margin", gamma: float = 0.5
) -> dict[tuple[int, ...], float]:
    """Exact P(output = S) for every k-subset S of item indices (one score vector)."""
    return dict(zip(subset_keys(scores.size, k), output_laws(scores[None, :], k, eps, variant, gamma)[0]))


def subset_keys(d: int, k: int) -> list[tuple[int, ...]]:
    return list(combinations(range(d), k))


def output_laws(
    scores: np.ndarray, k: int, eps: float, variant: str = "margin", gamma: float = 0.5
) -> np.ndarray:
    """log-free law for many score vectors: array (M, C(d, k)) in :func:`subset_keys` order."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    m, d = scores.shape
    sets, tails, heads = candidates(d, k, variant)
    order = np.lexsort((np.broadcast_to(np.arange(d), (m, d)), -scores), axis=1)  # descending, stable
    x = np.take_along_axis(scores, order, axis=1)
    eps1, eps2 = (1 - gamma) * eps, gamma * eps
    u = eps2 / 2 * x[:, tails] - eps1 / 2 * x[:, heads]  # (M, N)
    a = np.exp(u - u.max(axis=1, keepdims=True))
    log_factors = np.log1p(-_S[None, None, :] * a[:, :, None])  # (M, N, nodes)
    others = log_factors.sum(axis=1, keepdims=True) - log_factors
    p_cand = a * (np.exp(others) @ _W)  # (M, N)
    keys = {key: i for i, key in enumerate(subset_keys(d, k))}
    items = np.stack([order[:, list(s)] for s in sets], axis=1)  # (M, N, k) item indices
    items.sort(axis=2)
    code = (items * d ** np.arange(k - 1, -1, -1)).sum(axis=2)
    code_of = {sum(v * d ** (k - 1 - i) for i, v in enumerate(key)): j for key, j in keys.items()}
    cols = np.vectorize(code_of.__getitem__)(code)
    out = np.zeros((m, len(keys)))
    np.add.at(out, (np.repeat(np.arange(m), len(sets)), cols.ravel()), p_cand.ravel())
    return out


def corners(d: int) -> np.ndarray:
    """All 3^d offsets in {−1, 0, 1}^d: the corners and edge midpoints of the sensitivity box."""
    return np.array(list(product((-1.0, 0.0, 1.0), repeat=d)))


def worst_log_ratio(
    base: np.ndarray, offsets: np.ndarray, k: int, eps: float, variant: str
) -> tuple[float, np.ndarray]:
    """max over offsets and subsets of |log P(S | base) − log P(S | base + offset)|."""
    laws = output_laws(np.vstack([base, base + offsets]), k, eps, variant)
    with np.errstate(divide="ignore"):
        logs = np.log(laws)
    ratio = np.abs(logs[1:] - logs[0]).max(axis=1)
    i = int(np.argmax(ratio))
    return float(ratio[i]), base + offsets[i]


def adversarial_search(
    d: int,
    k: int,
    eps: float,
    variant: str,
    *,
    seed: int = 0,
    starts: int = 30,
    steps: int = 60,
    scales=(1.0, 3.0, 10.0, 30.0, 100.0),
) -> tuple[float, np.ndarray, np.ndarray]:
    """Worst |log-ratio| over neighbouring score vectors (every score moves by at most 1).

    Random starts (uniform scores at several spreads) against every corner of the
    sensitivity box {−1, 0, 1}^d plus 200 random offsets in [−1, 1]^d, then a hill
    climb on the base vector (Gaussian steps that shrink on failure).  Returns
    (worst, base, neighbour).
    """
    rng = np.random.default_rng(seed)
    box = corners(d)

    def score(base):
        offsets = np.vstack([box, rng.uniform(-1, 1, size=(200, d))])
        return worst_log_ratio(base, offsets, k, eps, variant)

    best = (-1.0, None, None)
    for i in range(starts):
        base = rng.uniform(0, scales[i % len(scales)], size=d)
        val, nb = score(base)
        step = scales[i % len(scales)] / 4
        for _ in range(steps):
            cand = base + rng.normal(0, step, size=d)
            cval, cnb = score(cand)
            if cval > val:
                base, val, nb = cand, cval, cnb
            else:
                step *= 0.9
        if val > best[0]:
            best = (val, base, nb)
    return best
