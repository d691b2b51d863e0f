"""Exact output laws of the private top-k selectors (small d only).

Not mechanisms: these compute, for given scores, the probability of every
index set a selector can return, so that audits (:mod:`dpstats.audit`) and
tests can measure a selector's exact privacy loss on neighbouring score vectors
and check its sampler against its law (chi-square).  The canonical Lipschitz
law integrates the classes' noisy-utility densities numerically (report-noisy-max
with exponential noise, Shekelyan & Loukides 2022); the exponential-mechanism
family's laws enumerate ordered sequences (McSherry & Talwar 2007; Durfee &
Rogers 2019, Lemma 4.2; Gillenwater et al. 2022).
"""

from __future__ import annotations

import numpy as np

from .canonical import class_log_sizes, class_members, class_utilities
from .family import _em_scale, _joint_sensitivity


def canonical_lipschitz_distribution(
    scores: np.ndarray,
    k: int,
    eps: float,
    gamma: float = 0.5,
    grid: int = 200_001,
    exact_top_utility: str = "margin",
) -> dict[tuple[int, ...], float]:
    """Exact output distribution of :func:`~dpstats.privacy.topk.canonical_lipschitz` (small d only).

    P(class c wins) = ∫ g_c(v) Π_{c'≠c} G_{c'}(v) dv, with G_c(v) = (1 − e^{−(v−u_c)})^{m_c}
    the CDF of the class's noisy utility, integrated numerically (trapezoid on
    ``grid`` points); each member of the winning class is equally likely.
    Returns {sorted index tuple: probability}.

    Examples
    --------
    >>> law = canonical_lipschitz_distribution(np.array([3., 2, 0]), 2, 1.0, grid=20_001)
    >>> round(float(sum(law.values())), 3)
    1.0
    """
    d = scores.size
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    x = np.asarray(scores, dtype=float)[order]
    util = class_utilities(x, k, (1 - gamma) * eps, gamma * eps, exact_top_utility)
    logm = class_log_sizes(d, k)
    cells = [(h, t) for h in range(k) for t in range(k, d + 1) if np.isfinite(logm[h, t - k])]
    u = np.array([util[h, t - k] for h, t in cells])
    m = np.exp(np.array([logm[h, t - k] for h, t in cells]))
    v = np.linspace(u.min(), u.max() + 60.0, grid)
    xs = v[None, :] - u[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_cdf = np.where(xs > 0, m[:, None] * np.log1p(-np.exp(-np.maximum(xs, 1e-300))), -np.inf)
        log_dens = np.where(
            xs > 0,
            np.log(m)[:, None] - xs + (m[:, None] - 1) * np.log1p(-np.exp(-np.maximum(xs, 1e-300))),
            -np.inf,
        )
    total = log_cdf.sum(axis=0)
    probs = {}
    for i, (h, t) in enumerate(cells):
        with np.errstate(invalid="ignore"):
            others = np.where(np.isfinite(log_cdf[i]), total - log_cdf[i], _others_excluding(log_cdf, i))
        p_class = float(np.trapezoid(np.exp(log_dens[i] + others), v))
        for ranks in class_members(h, t, k):
            member = tuple(sorted(int(order[j]) for j in ranks))
            probs[member] = probs.get(member, 0.0) + p_class / m[i]
    return probs


def _others_excluding(log_cdf: np.ndarray, i: int) -> np.ndarray:
    return np.delete(log_cdf, i, axis=0).sum(axis=0)


def exact_set_distribution(
    scores: np.ndarray, k: int, eps: float, method: str, monotone: bool = False
) -> dict[tuple[int, ...], float]:
    """Exact output distribution over index sets by enumeration (small d only).

    For ``"peeling"``/``"oneshot_gumbel"``: Σ over orderings of the product of
    the per-round exponential-mechanism probabilities.  For ``"joint"``: the
    exponential mechanism over all ordered sequences, summed to sets.  Used by
    the tests to check the samplers.

    Examples
    --------
    >>> dist = exact_set_distribution(np.array([3., 2, 0]), 2, 1.0, "joint")
    >>> round(sum(dist.values()), 12)
    1.0
    """
    from itertools import permutations

    from scipy.special import logsumexp  # scipy.special: ~0.2 s to import, loaded on first use

    x = np.asarray(scores, dtype=float)
    seqs = list(permutations(range(x.size), k))
    if method == "joint":
        xs = np.sort(x)[::-1]
        a = eps / (2.0 * _joint_sensitivity(monotone))
        logp = np.array([-a * max(xs[i] - x[s] for i, s in enumerate(seq)) for seq in seqs])
        logp -= logsumexp(logp)
    elif method in ("peeling", "oneshot_gumbel"):
        a = _em_scale(eps / k, 1.0, monotone)
        logp = np.empty(len(seqs))
        for t, seq in enumerate(seqs):
            rest, lp = list(range(x.size)), 0.0
            for s in seq:
                lp += a * x[s] - logsumexp(a * x[rest])
                rest.remove(s)
            logp[t] = lp
    else:
        raise ValueError(f"no exact enumeration for selector {method!r}")
    out: dict[tuple[int, ...], float] = {}
    for seq, lp in zip(seqs, logp):
        key = tuple(sorted(seq))
        out[key] = out.get(key, 0.0) + float(np.exp(lp))
    return out
