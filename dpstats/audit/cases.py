"""Audit cases for the privacy core's mechanisms, every top-k selector, DP-SIS and private BH.

Each case pairs a mechanism run through its plain functions (seeded numpy noise,
vectorised over runs where the sampler allows) with worst-case neighbouring inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..privacy.calibration import analytic_gaussian_sigma, classic_gaussian_sigma
from ..privacy.randomness import NoiseSource
from .auditor import AuditCase, repeat

# --------------------------------------------------------------------------- private quantile (bounds="auto")
QUANTILE_VALUES = (-2.0, -1.0, 0.0, 1.0, 2.0)
QUANTILE_CANDIDATES = np.array([-1.5, -0.5, 0.5, 1.5])


def _neighbours(data: tuple, neighbouring: str):
    """Every neighbour of ``data`` over :data:`QUANTILE_VALUES` (replace one row, or add/remove one)."""
    for i in range(len(data)):
        if neighbouring == "add_remove":
            yield data[:i] + data[i + 1 :]
            continue
        for v in QUANTILE_VALUES:
            if v != data[i]:
                yield data[:i] + (v,) + data[i + 1 :]
    if neighbouring == "add_remove":
        for v in QUANTILE_VALUES:
            yield data + (v,)


@lru_cache(maxsize=16)
def worst_quantile_pair(
    level: float, eps: float, n: int = 3, neighbouring: str = "replace"
) -> tuple[tuple, tuple, float]:
    """The neighbouring pair of small data sets with the largest exact eps of the private quantile.

    Enumerates every data set of ``n`` values from :data:`QUANTILE_VALUES` and
    every neighbour, scoring the exact output laws of
    :func:`dpstats.privacy.bounds.quantile_law` on :data:`QUANTILE_CANDIDATES`.
    """
    from itertools import product

    from ..privacy.bounds import quantile_law

    best = ((), (), -1.0)
    for data in product(QUANTILE_VALUES, repeat=n):
        p1 = quantile_law(np.array(data), QUANTILE_CANDIDATES, level, eps, neighbouring)
        for other in _neighbours(data, neighbouring):
            p2 = quantile_law(np.array(other), QUANTILE_CANDIDATES, level, eps, neighbouring)
            pair_eps = float(np.max(np.abs(np.log(p1) - np.log(p2))))
            if pair_eps > best[2]:
                best = (data, other, pair_eps)
    return best


def quantile_case(eps: float = 1.0, level: float = 0.5, broken: bool = False) -> AuditCase:
    """The private quantile of ``bounds="auto"`` on its exact-worst replace-one pair.

    :func:`dpstats.privacy.bounds.private_quantile` on four candidates; the
    output is the candidate drawn (a category).  ``broken=True`` runs it with
    2·eps (sensitivity halved).
    """
    from ..privacy.bounds import private_quantile

    d1, d2, exact = worst_quantile_pair(level, eps)
    run_eps = 2 * eps if broken else eps

    def single(data: tuple, rng: np.random.Generator) -> float:
        return private_quantile(np.array(data), level, QUANTILE_CANDIDATES, run_eps, rng)

    return AuditCase(
        name=f"private quantile (level {level:g}{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        kind="category",
        neighbours=f"{list(d1)} vs {list(d2)}: the exact-worst replace-one pair of 3 rows",
        exercised="privacy.bounds.private_quantile (Gumbel-max exponential mechanism), seeded numpy",
        exact_eps=exact,
    )


# --------------------------------------------------------------------------- standard cases


def _numpy_noise(rng: np.random.Generator) -> NoiseSource:
    """The privacy core's noise source on a seeded numpy generator (not OpenDP)."""
    return NoiseSource(random_state=rng, secure=False)


def laplace_case(eps: float = 1.0, sensitivity: float = 1.0, broken: bool = False) -> AuditCase:
    """Laplace mechanism f + Lap(Δ₁/eps) through :meth:`NoiseSource.laplace`, vectorised.

    Neighbours: f(D1) = 0, f(D2) = Δ₁ — a count or bounded sum whose changed row
    moves it by the full sensitivity.  ``broken=True`` calibrates with Δ₁/2
    (the deliberately broken mechanism the auditor must refute).
    """
    scale = (sensitivity / 2 if broken else sensitivity) / eps

    def run(f: float, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        return _numpy_noise(rng).laplace(np.full(n_runs, f), scale)

    return AuditCase(
        name=f"Laplace (Δ₁={sensitivity:g}{', sensitivity halved: BROKEN' if broken else ''})",
        run=run,
        d1=0.0,
        d2=float(sensitivity),
        eps=eps,
        neighbours="f(D1) = 0, f(D2) = Δ₁: the changed row moves f by its full sensitivity",
        exercised="NoiseSource.laplace, seeded numpy, all runs in one vector",
    )


def gaussian_case(
    eps: float = 1.0,
    delta: float = 1e-5,
    sensitivity: float = 1.0,
    calibration: str = "analytic",
    broken: bool = False,
) -> AuditCase:
    """Gaussian mechanism through :meth:`NoiseSource.gaussian`, vectorised.

    sigma from :func:`~dpstats.privacy.calibration.analytic_gaussian_sigma`
    (Balle & Wang 2018) or the classic bound; neighbours f(D1) = 0, f(D2) = Δ₂.
    """
    sens = sensitivity / 2 if broken else sensitivity
    sigma = (
        analytic_gaussian_sigma(eps, delta, sens)
        if calibration == "analytic"
        else classic_gaussian_sigma(eps, delta, sens)
    )

    def run(f: float, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        return _numpy_noise(rng).gaussian(np.full(n_runs, f), sigma)

    return AuditCase(
        name=f"Gaussian ({calibration} σ={sigma:.3g}{', sensitivity halved: BROKEN' if broken else ''})",
        run=run,
        d1=0.0,
        d2=float(sensitivity),
        eps=eps,
        delta=delta,
        neighbours="f(D1) = 0, f(D2) = Δ₂",
        exercised="NoiseSource.gaussian, seeded numpy, vectorised",
    )


def l2_laplace_case(
    eps: float = 1.0, sensitivity: float = 1.0, dim: int = 3, broken: bool = False
) -> AuditCase:
    """Multivariate L2-Laplace (density ∝ exp(−eps‖b‖₂/Δ₂)) via :meth:`NoiseSource.l2_laplace`.

    Neighbours f(D1) = 0 and f(D2) = Δ₂·e₁ in ``dim`` dimensions.  Each output
    is reduced to its log-likelihood-ratio statistic (‖x − f(D2)‖ − ‖x − f(D1)‖)/Δ₂
    ∈ [−1, 1], the most powerful scalar reduction (Neyman–Pearson).  The
    sampler draws one vector per call, so runs are a loop.
    """
    scale = (sensitivity / 2 if broken else sensitivity) / eps
    c1, c2 = np.zeros(dim), np.eye(dim)[0] * sensitivity

    def single(centre: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _numpy_noise(rng).l2_laplace(centre, scale)

    def statistic(outputs) -> np.ndarray:
        x = np.asarray(outputs, float)
        return (np.linalg.norm(x - c2, axis=1) - np.linalg.norm(x - c1, axis=1)) / sensitivity

    return AuditCase(
        name=f"L2-Laplace (d={dim}{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=c1,
        d2=c2,
        eps=eps,
        statistic=statistic,
        neighbours="f(D1) = 0, f(D2) = Δ₂·e₁ (the full l2 sensitivity)",
        exercised="NoiseSource.l2_laplace, seeded numpy, one call per run",
    )


def shift_pair(d: int = 4, k: int = 2, level: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Sensitivity-1 score vectors that differ by exactly 1 in every coordinate.

    D1 favours the first k items by one unit and D2 the last d − k: every score
    moves by the full sensitivity, in opposite directions.

    Examples
    --------
    >>> shift_pair(3, 1)
    (array([3.5, 2.5, 2.5]), array([2.5, 3.5, 3.5]))
    """
    s1 = np.full(d, level)
    s1[:k] += 0.5
    s1[k:] -= 0.5
    return s1, 2 * level - s1


def exact_distribution(selector: str) -> Callable[[np.ndarray, int, float], dict] | None:
    """The exact set distribution of a registered top-k selector, if dpstats has one."""
    from ..privacy.topk.laws import canonical_lipschitz_distribution, exact_set_distribution

    if selector == "canonical_lipschitz":
        return lambda s, k, eps: canonical_lipschitz_distribution(s, k, eps, grid=20_001)
    if selector in ("peeling", "oneshot_gumbel", "joint"):
        return lambda s, k, eps: exact_set_distribution(s, k, eps, selector)
    return None


def exact_pair_eps(pmf1: dict, pmf2: dict) -> float:
    """max over sets S of |ln P1(S)/P2(S)|: the exact eps of a set-valued mechanism on one pair.

    Examples
    --------
    >>> round(exact_pair_eps({(0,): 0.5, (1,): 0.5}, {(0,): 0.25, (1,): 0.75}), 4)
    0.6931
    """
    worst = 0.0
    for s in set(pmf1) | set(pmf2):
        p, q = pmf1.get(s, 0.0), pmf2.get(s, 0.0)
        if p > 0 or q > 0:
            worst = max(worst, math.inf if min(p, q) <= 0 else abs(math.log(p / q)))
    return worst


def worst_topk_pair(
    selector: str, d: int, k: int, eps: float, n_pairs: int = 200, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray, float]:
    """Search sensitivity-1 neighbouring score pairs for the largest exact eps (cached).

    Scores s1 on the integer grid 1..4, s2 = s1 + a vector in {−1, 0, 1}^d
    (one neighbouring change moves each score by at most the sensitivity);
    the exact distributions of :func:`exact_distribution` give each pair's
    exact eps.  The :func:`shift_pair` is always a candidate.  Returns
    ``(s1, s2, exact eps)`` of the worst pair found.

    Examples
    --------
    >>> s1, s2, exact = worst_topk_pair("joint", 3, 1, 1.0, n_pairs=5)
    >>> bool(np.max(np.abs(s1 - s2)) <= 1 and exact <= 1.0)
    True
    """
    s1, s2, exact = _worst_topk_pair(selector, int(d), int(k), float(eps), int(n_pairs), int(random_state))
    return s1.copy(), s2.copy(), exact


@lru_cache(maxsize=64)
def _worst_topk_pair(
    selector: str, d: int, k: int, eps: float, n_pairs: int, random_state: int
) -> tuple[np.ndarray, np.ndarray, float]:
    dist = exact_distribution(selector)
    if dist is None:
        raise ValueError(f"no exact distribution for selector {selector!r}")
    rng = np.random.default_rng(random_state)
    candidates = [shift_pair(d, k)]
    for _ in range(n_pairs):
        s1 = rng.integers(1, 5, d).astype(float)
        candidates.append((s1, s1 + rng.choice([-1.0, 0.0, 1.0], d)))
    best = (candidates[0][0], candidates[0][1], -1.0)
    for s1, s2 in candidates:
        e = exact_pair_eps(dist(s1, k, eps), dist(s2, k, eps))
        if e > best[2]:
            best = (s1, s2, e)
    return best


def topk_case(
    eps: float = 1.0,
    d: int = 4,
    k: int = 2,
    selector: str = "canonical_lipschitz",
    broken: bool = False,
    pair: tuple[np.ndarray, np.ndarray] | None = None,
    **options,
) -> AuditCase:
    """A top-k selector from :data:`dpstats.privacy.SELECTORS` on neighbouring scores.

    ``pair`` defaults to the :func:`shift_pair`; pass the result of
    :func:`worst_topk_pair` to audit the exact-worst pair.  The output is the
    selected set (a category).  ``broken=True`` runs the selector with 2·eps
    (sensitivity halved).
    """
    from ..privacy.topk import select_topk

    s1, s2 = shift_pair(d, k) if pair is None else (np.asarray(pair[0], float), np.asarray(pair[1], float))
    run_eps = 2 * eps if broken else eps

    def single(scores: np.ndarray, rng: np.random.Generator) -> tuple:
        return tuple(select_topk(scores, k, run_eps, rng, method=selector, **options).tolist())

    return AuditCase(
        name=f"top-k {selector} (d={s1.size}, k={k}{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=s1,
        d2=s2,
        eps=eps,
        kind="category",
        n_events=6,
        neighbours=f"scores {s1.tolist()} vs {s2.tolist()} (every score moves by at most the sensitivity)",
        exercised="privacy.topk.select_topk, seeded numpy generator, one call per run",
    )


def sis_frames(s1: np.ndarray, s2: np.ndarray) -> tuple:
    """Neighbouring data frames (bounds (−1, 1), replace one row) whose DP-SIS scores are 2·s1, 2·s2.

    ``s1, s2`` are non-negative score vectors in sensitivity units with
    ‖s1 − s2‖∞ <= 1.  y = 1 in every row; the replaced row is −(s2 − s1) in
    D1 and +(s2 − s1) in D2 (a change of 2·(s2 − s1), the full replace-one
    sensitivity where |s2 − s1| = 1); the shared rows sum to s1 + s2, split
    into two alternating values so that no column is constant.
    """
    import pandas as pd

    s1, s2 = np.asarray(s1, float), np.asarray(s2, float)
    diff = s2 - s1
    base_sum = s1 + s2
    n_base = 2 * int(math.ceil(np.max(np.abs(base_sum)))) + 4
    base = np.tile(base_sum / n_base, (n_base, 1))
    base[0::2] += 0.25
    base[1::2] -= 0.25
    cols = [f"x{j + 1}" for j in range(s1.size)]
    frames = []
    for row in (-diff, diff):
        frame = pd.DataFrame(np.vstack([base, row]), columns=cols)
        frame.insert(0, "y", 1.0)
        frames.append(frame)
    return frames[0], frames[1]


def sis_case(
    eps: float = 1.0,
    pair: tuple[np.ndarray, np.ndarray] | None = None,
    k: int = 2,
    topk: str = "canonical_lipschitz",
    front_door: bool = False,
    broken: bool = False,
) -> AuditCase:
    """DP-SIS's midpoint score on the frames of :func:`sis_frames` (replace-one, bounds (−1, 1)).

    ``front_door=False`` computes each frame's scores once with the method's
    plain functions (``stats.cross_products``, ``methods.sis.scores_on_unit_scale``)
    and repeats only ``methods.sis.private_top_k``; ``front_door=True`` calls
    :func:`dpstats.dp_sis` for every run (about 1 ms per run).  ``broken=True``
    divides the scores by half the replace-one sensitivity.
    """
    from ..methods import sis as m

    s1, s2 = shift_pair(4, k) if pair is None else pair
    d1, d2 = sis_frames(s1, s2)
    sensitivity = m.SENSITIVITY["replace"] / (2 if broken else 1)
    if front_door:
        from ..api.sis import dp_sis

        def single(frame, rng):
            fit = dp_sis(
                "y ~ .",
                frame,
                eps,
                k=k,
                bounds=(-1, 1),
                center="midpoint",
                topk=topk,
                random_state=rng,
                oc_trials=0,
            )
            names = list(frame.columns[1:])
            return tuple(sorted(names.index(nm) for nm in fit.selected))

        exercised = "dpstats.dp_sis front door per run, seeded numpy generator"
    else:
        from ..geometry import resolve_box
        from ..stats import cross_products

        def scores_of(frame):
            names = [c for c in frame.columns if c != "y"]
            stats = cross_products(
                frame[names].to_numpy(),
                frame["y"].to_numpy(),
                x_box=resolve_box((-1, 1), names),
                y_box=resolve_box((-1, 1), ["y"]),
            )
            return m.scores_on_unit_scale(stats)

        d1, d2 = scores_of(d1), scores_of(d2)

        def single(scores, rng):
            return tuple(m.private_top_k(scores, k, eps, sensitivity, rng, topk=topk).tolist())

        exercised = "stats.cross_products + methods.sis.private_top_k, seeded numpy generator"
    return AuditCase(
        name=f"DP-SIS {'front door' if front_door else 'plain'} ({topk}, d={len(s1)}, k={k}"
        f"{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        kind="category",
        n_events=6,
        neighbours="one row replaced at the bounds, moving each |x_j'y| by up to 2 (the sensitivity)",
        exercised=exercised,
    )


def sis_centred_frames(s1: np.ndarray, s2: np.ndarray, n: int = 4) -> tuple:
    """Neighbouring frames (bounds (−1, 1), replace one row) whose centred DP-SIS scores are Δ·s1, Δ·s2.

    ``s1, s2`` are 0/1 vectors and Δ = 4(1 − 1/n) the replace-one sensitivity of
    the centred score.  The n − 1 kept rows are all −1 (x and y); the replaced
    row has y = 1 and x_j = 2·s_j − 1.  Then C_j = 2(1 − 1/n)(x_j − (−1)) is Δ
    where x_j = 1 and 0 (a constant column) where x_j = −1: the corner pair on
    which the exhaustive search (tests/test_sis_centred.py) attains Δ, applied
    to every column at once.
    """
    import pandas as pd

    frames = []
    for s in (np.asarray(s1, float), np.asarray(s2, float)):
        if not np.isin(s, (0.0, 1.0)).all():
            raise ValueError("sis_centred_frames takes 0/1 score vectors")
        x = np.vstack([-np.ones((n - 1, s.size)), 2 * s - 1])
        frame = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(s.size)])
        frame.insert(0, "y", np.r_[-np.ones(n - 1), 1.0])
        frames.append(frame)
    return frames[0], frames[1]


@lru_cache(maxsize=16)
def _worst_binary_pair(selector: str, d: int, k: int, eps: float) -> tuple[np.ndarray, np.ndarray, float]:
    dist = exact_distribution(selector)
    if dist is None:
        raise ValueError(f"no exact distribution for selector {selector!r}")
    vectors = [np.array(bits, float) for bits in np.ndindex(*(2,) * d)]
    laws = [dist(v, k, eps) for v in vectors]
    best = (vectors[0], vectors[0], -1.0)
    for i, j in np.ndindex(len(vectors), len(vectors)):
        if i < j:
            e = exact_pair_eps(laws[i], laws[j])
            if e > best[2]:
                best = (vectors[i], vectors[j], e)
    return best


def worst_binary_pair(selector: str, d: int, k: int, eps: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The 0/1 score pair (in sensitivity units) with the largest exact eps, by enumeration.

    Examples
    --------
    >>> s1, s2, exact = worst_binary_pair("peeling", 3, 1, 1.0)
    >>> bool(exact <= 1.0), int(np.abs(s1 - s2).sum())
    (True, 3)
    """
    s1, s2, exact = _worst_binary_pair(selector, int(d), int(k), float(eps))
    return s1.copy(), s2.copy(), exact


def sis_centred_case(
    eps: float = 1.0, d: int = 5, k: int = 1, topk: str = "peeling", n: int = 4, broken: bool = False
) -> AuditCase:
    """DP-SIS with the centred score on its worst neighbouring frames (replace one row).

    The frames come from :func:`sis_centred_frames` on the 0/1 pair of
    :func:`worst_binary_pair` for ``topk``: every centred score moves by the
    full sensitivity 4(1 − 1/n), in opposite directions.  Each frame's scores
    are computed once with ``stats.cross_products`` and
    ``methods.sis.scores_centred_on_unit_scale``; runs repeat
    ``methods.sis.private_top_k`` with ``methods.sis.centred_sensitivity``
    (halved with ``broken=True``).  The default selector is the peeling
    exponential mechanism, whose exact law is known, so that the case tests the
    score's sensitivity and not the canonical Lipschitz selector.
    """
    from ..geometry import resolve_box
    from ..methods import sis as m
    from ..stats import cross_products

    s1, s2, exact = worst_binary_pair(topk, d, k, eps)
    frames = sis_centred_frames(s1, s2, n)
    sensitivity = m.centred_sensitivity("replace", n) / (2 if broken else 1)

    def scores_of(frame):
        names = [c for c in frame.columns if c != "y"]
        stats = cross_products(
            frame[names].to_numpy(),
            frame["y"].to_numpy(),
            x_box=resolve_box((-1, 1), names),
            y_box=resolve_box((-1, 1), ["y"]),
        )
        return m.scores_centred_on_unit_scale(stats)

    def single(scores, rng):
        return tuple(m.private_top_k(scores, k, eps, sensitivity, rng, topk=topk).tolist())

    case = AuditCase(
        name=f"DP-SIS centred score ({topk}, d={d}, k={k}, n={n}"
        f"{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=scores_of(frames[0]),
        d2=scores_of(frames[1]),
        eps=eps,
        kind="category",
        n_events=6,
        neighbours=f"corner rows: scores {s1.tolist()} vs {s2.tolist()} times 4(1 − 1/n) (the sensitivity)",
        exercised="stats.cross_products + methods.sis.scores_centred_on_unit_scale + private_top_k, seeded numpy",
    )
    case.exact_eps = None if broken else exact
    return case


def standard_cases(eps: float = 1.0, n_pairs: int = 150) -> list[AuditCase]:
    """The audit table's mechanisms: core noise, every top-k selector, DP-SIS, broken controls.

    Top-k selectors and DP-SIS are audited on the neighbouring pair with the
    largest exact eps found by :func:`worst_topk_pair` (``n_pairs`` random
    candidates); canonical Lipschitz at d = 5, k = 3, the others at d = 5, k = 2.
    """
    from ..privacy.topk import SELECTORS

    cases = [
        laplace_case(eps),
        gaussian_case(eps, 1e-5, calibration="analytic"),
        gaussian_case(min(eps, 0.9), 1e-5, calibration="classic"),
        gaussian_case(2 * eps, 1e-5, calibration="analytic"),
        l2_laplace_case(eps),
    ]
    sis_pair = None
    for selector in SELECTORS:
        k = 3 if selector == "canonical_lipschitz" else 2
        if exact_distribution(selector) is None:
            cases.append(topk_case(eps, d=5, k=k, selector=selector))
            continue
        s1, s2, exact = worst_topk_pair(selector, 5, k, eps, n_pairs=n_pairs)
        case = topk_case(eps, k=k, selector=selector, pair=(s1, s2))
        case.exact_eps = exact
        cases.append(case)
        if selector == "canonical_lipschitz":
            sis_pair = (s1, s2, exact)
    for front_door in (False, True):
        sis = sis_case(eps, pair=sis_pair[:2], k=3, front_door=front_door)
        sis.exact_eps = sis_pair[2]
        sis.max_runs = 5_000 if front_door else None
        cases.append(sis)
    cases.append(sis_centred_case(eps))
    cases.append(private_bh_case(eps))
    cases.append(quantile_case(eps))
    broken_pair = worst_topk_pair("peeling", 5, 2, 2 * eps, n_pairs=n_pairs)
    broken_topk = topk_case(eps, k=2, selector="peeling", broken=True, pair=broken_pair[:2])
    broken_topk.exact_eps = broken_pair[2]
    # the broken Gaussian is audited at 2·eps: at eps = 1 its excess lives in events too rare for 10^5 runs
    cases += [
        laplace_case(eps, broken=True),
        gaussian_case(2 * eps, 1e-5, broken=True),
        l2_laplace_case(eps, broken=True),
        broken_topk,
        private_bh_case(eps, broken=True),
    ]
    return cases


def private_bh_case(eps: float = 1.0, eta: float = 0.05, q: float = 0.1, broken: bool = False) -> AuditCase:
    """Private BH (:func:`dpstats.privacy.fdr.private_bh`) on neighbouring log p-values, m = 2, k = 1.

    D1 has log p = (c, c) and D2 has (c + η, c − η): one row moves both truncated
    log p-values by the declared η in opposite directions (the move that shifts
    Report Noisy Min's choice most), with c on the rank-1 cut log(q/m) − t so that
    the rejection flips about half the time.  Output: (peeled index, rejected or
    not).  ``broken=True`` calibrates λ for η/4 (the auditor must refute it).
    """
    from ..privacy.fdr import peeling_scale, private_bh, threshold_shift

    m, k, truncate = 2, 1, 1e-300
    calibration = peeling_scale(eps, 0.0, k, eta / 4 if broken else eta)
    c = math.log(q / m) - threshold_shift(calibration.scale, k, q)

    def single(p_values, rng):
        out = private_bh(
            p_values, q=q, k=k, truncate=truncate, calibration=calibration, noise=_numpy_noise(rng)
        )
        return (int(out.peeled[0]), int(out.rejected.size))

    return AuditCase(
        name=f"private BH peeling (m=2, k=1, η={eta:g}{', η quartered: BROKEN' if broken else ''})",
        run=repeat(single),
        d1=np.exp([c, c]),
        d2=np.exp([c + eta, c - eta]),
        eps=eps,
        kind="category",
        n_events=4,
        neighbours="log p = (c, c) vs (c + η, c − η), c on the rank-1 cut: both move by η, in opposite directions",
        exercised="privacy.fdr.private_bh (peeling, fresh values, step-up), seeded numpy",
    )


def lm_statistics_case(
    eps: float = 1.0, n: int = 20, seed: int = 0, delta: float = 0.0, split: bool = False
) -> AuditCase:
    """dp_lm's Laplace (delta = 0) or Gaussian zCDP (delta > 0) release of the stacked [XᵀX, Xᵀy, yᵀy] (p = 1, delta = 0), through ``methods.lm.release``.

    Unit-box rows v = (1, z, u); the replaced row is (1, 1, 1) in D1 and
    (1, 0, 0) in D2, which moves the released triangle by 1 in each of its five
    entries (l1 change 5; the claimed Δ₁ = D(D+2) = 8 is a bound over all
    pairs).  Each run releases the λ_min bound and the statistic with the
    module's noise scales; the output is the Laplace log-likelihood ratio of
    the released entries (Laplace) or their projection on the difference
    (Gaussian), the most powerful statistics for this pair.  The claim audited
    is the whole release's (eps, delta) (the λ_min share is not in the statistic).
    """
    from ..methods import lm

    rng0 = np.random.default_rng(seed)
    base = np.c_[np.ones(n - 1), rng0.uniform(-1, 1, (n - 1, 2))]
    grams = []
    for last in ([1.0, 1.0, 1.0], [1.0, 0.0, 0.0]):
        V = np.vstack([base, last])
        grams.append(V.T @ V)
    plan = lm.plan(
        lm.LMOptions.partial(eps=eps, delta=delta, lambda_share=lm.LAMBDA_SHARE),
        lm.Coordinates(np.zeros(1), np.ones(1), True, y_center=0.0, y_half=1.0),
        n=10**9 if split else None,  # a public n this large chooses the block-by-block Laplace release
    )
    iu = np.triu_indices(3)
    a, b = grams[0][iu][1:], grams[1][iu][1:]

    def single(gram, rng):
        released = lm.release_statistics(gram, n, plan, _numpy_noise(rng)).noisy_gram[iu][1:]
        if delta > 0:
            return float((released - (a + b) / 2) @ (a - b))
        return float(np.sum((np.abs(released - b) - np.abs(released - a)) / plan.entry_scales()[1:]))

    kind = ("Laplace by blocks" if split else "Laplace") if delta == 0 else "Gaussian zCDP"
    return AuditCase(
        name=f"dp_lm stacked statistics ({kind}, p=1, Δ₁={plan.l1_sensitivity:g}, Δ₂={plan.l2_sensitivity:.3g})",
        run=repeat(single),
        d1=grams[0],
        d2=grams[1],
        eps=eps,
        delta=delta,
        neighbours="replaced unit-box row (1, 1, 1) vs (1, 0, 0): every released entry moves by 1",
        exercised="methods.lm.release with NoiseSource on seeded numpy (λ_min bound and statistic)",
    )


# --------------------------------------------------------------------------- dp_glm (noisy Newton)
class _RecordingNoise:
    """Seeded numpy Gaussian noise that keeps every released vector and its scale (the transcript)."""

    def __init__(self, rng: np.random.Generator, scale: float = 1.0) -> None:
        self.rng, self.scale, self.released = rng, scale, []

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        out = values + self.rng.normal(0.0, sigma * self.scale, np.shape(values))
        self.released.append((out, sigma * self.scale))
        return out


def glm_release_case(  # noqa: PLR0913 (the audit's settings)
    eps: float = 1.0,
    delta: float = 1e-5,
    n: int = 20,
    seed: int = 0,
    broken: bool = False,
    family: str = "binomial",
) -> AuditCase:
    """dp_glm's whole adaptive release (the start's count, every noisy Newton step and, binomial, the
    refinement step's score and the final Hessian and score at their two points) through
    ``methods.glm.release``.

    One covariate in the unit box, n rows.  Binomial: the replaced row is w = (1, 1), y = 1 in D1
    and w' = (1, −1), y' = 0 in D2 (at θ = 0 the score sum moves by (1, 0) and the Hessian's upper
    triangle by (0, 1/2, 0)).  Poisson (counts bounded by Y = 3): y = Y in D1 and y' = 0 in D2, with
    the same w and w', so the total count of (G3') moves by its whole Δ = Y.  The output of a run is the privacy loss log p₁/p₂ of its whole
    transcript: every release (the count of successes, each step's Hessian and score, the
    refinement step's score), with the exact sums of both data sets at its (public) query point.  This is the most powerful statistic for the pair, so the
    audit tests the composition over adaptively chosen steps as it is run.  ``broken`` releases
    with a tenth of the noise (a control the audit must refute).
    """
    from ..methods import glm

    rng0 = np.random.default_rng(seed)
    top = 1.0 if family == "binomial" else 3.0
    response = (
        glm.response_range("binomial") if family == "binomial" else glm.response_range(family, (0, top))
    )
    base = np.c_[np.ones(n - 1), rng0.uniform(-1, 1, n - 1)]
    base_y = rng0.integers(0, int(top) + 1, n - 1).astype(float)
    data = [
        glm.Rows(np.vstack([base, [1.0, 1.0]]), np.r_[base_y, top], np.ones(n)),
        glm.Rows(np.vstack([base, [1.0, -1.0]]), np.r_[base_y, 0.0], np.ones(n)),
    ]
    options = glm.GLMOptions.partial(
        family=family,
        eps=eps,
        delta=delta,
        pilot_steps=glm.PILOT_STEPS,
        pilot_share=glm.PILOT_SHARE,
        hessian_share=glm.HESSIAN_SHARE,
    )
    plan = glm.plan(options, glm.Coordinates(np.zeros(1), np.ones(1), True), response, None)
    iu = np.triu_indices(2)

    refine_pass = int(bool(plan.count_sd)) + plan.steps - 1  # the pass whose score alone is released

    def released_queries(call: int, g: np.ndarray, H: np.ndarray) -> list[np.ndarray]:
        """What the release publishes from one pass, in order: the count of successes (G5''), the
        refinement step's score, or a Newton step's Hessian (upper triangle) and score; binomial, after
        the refinement, the final Hessian and the final score from two passes at two points (G5''')."""
        if plan.count_sd and call == 0:  # the successes g₀ + 2H₀₀ at θ = 0, or the total count g₀ + H₀₀
            return [np.array([g[0] + (2.0 if family == "binomial" else 1.0) * H[0, 0]])]
        if plan.refine_sd and call in (refine_pass, refine_pass + 2):
            return [g]
        if plan.refine_sd and call == refine_pass + 1:
            return [H[iu]]
        return [H[iu], g]

    def single(rows, rng):
        queries = []

        def data_pass(theta, resp):
            both = [released_queries(len(queries), *d(theta, resp)) for d in data]
            queries.append(both)
            return rows(theta, resp)

        noise = _RecordingNoise(rng, 0.1 if broken else 1.0)
        glm.release(data_pass, plan, noise)
        pairs = [pair for q1, q2 in queries for pair in zip(q1, q2)]
        assert len(pairs) == len(noise.released)
        loss = 0.0
        for (out, sd), (a, b) in zip(noise.released, pairs):
            loss += (np.sum((out - b) ** 2) - np.sum((out - a) ** 2)) / (2.0 * sd * sd)
        return float(loss)

    return AuditCase(
        name=f"dp_glm {family} noisy Newton ({plan.steps} steps, Gaussian zCDP{', BROKEN' if broken else ''})",
        run=repeat(single),
        d1=data[0],
        d2=data[1],
        eps=eps,
        delta=delta,
        neighbours=f"replaced row (1, 1), y = {top:g} vs (1, -1), y = 0: moves the score and the Hessian at every step",
        exercised="methods.glm.release (pilot and final step) with seeded numpy noise; loss of the transcript",
    )
