"""Empirical privacy auditing (DESIGN §7): a statistical lower bound on eps.

A mechanism claims (eps, delta)-DP.  The auditor runs it N times on each of two
neighbouring datasets D1, D2 (chosen by the caller to be worst-case: rows at the
bounds, a row that flips every score, ...), with independent randomness, and
reduces each output to membership in events:

* a scalar output (or a scalar ``statistic`` of it): events {x <= t} and
  {x > t} for thresholds t at pooled quantiles of the outputs;
* a categorical output (e.g. a selected set): events {output = c} for each
  category c.

The events are *chosen* on a held-out 20% of the runs (the candidates with the
largest held-out lower bound) and *tested* on the other 80%, so the choice does
not bias the test.  For each tested event E and both directions (D1 vs D2 and
D2 vs D1), one-sided Clopper–Pearson bounds p1⁻ <= P(M(D1) ∈ E) and
p2⁺ >= P(M(D2) ∈ E) give

    eps_lb   = ln((p1⁻ − delta) / p2⁺)          (= ln(p1⁻/p2⁺) when delta = 0)
    delta_lb = p1⁻ − e^eps · p2⁺ .

Every one-sided bound is taken at level alpha / (4 m) for m tested events
(Bonferroni over events, both directions and the two bounds of a ratio), so
with probability at least 1 − alpha the reported eps_lb is below the true eps
of the pair: an eps_lb above the claimed eps (equivalently delta_lb above the
claimed delta) refutes the claim.  With delta > 0 the pure ratio ln(p1⁻/p2⁺) may
exceed eps legitimately on rare events (the delta part), so the delta-adjusted
ratio is the test; both are reported.

What is exercised: the auditor runs mechanisms through their plain functions
(``dpstats.methods``, ``dpstats.privacy``) with *seeded numpy generators* —
vectorised over runs where the mechanism allows it — because OpenDP's
floating-point-safe samplers, used for unseeded releases, take about a second
per call and cannot be run 10⁵ times.  The audit therefore checks the
calibration (sensitivity, scale, budget split) and the sampling distribution of
the numpy path; the OpenDP path shares the same calibration and relies on
OpenDP's own proofs for the sampler.

Examples
--------
>>> import numpy as np
>>> from dpstats.audit import audit, laplace_case
>>> res = audit(laplace_case(eps=1.0), n_runs=20_000, random_state=0)
>>> res.passed, 0.5 < res.eps_lb <= 1.0
(True, True)
"""

from __future__ import annotations

import importlib.util
import math
from functools import lru_cache
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist

from .privacy.calibration import analytic_gaussian_sigma, classic_gaussian_sigma
from .privacy.randomness import NoiseSource

# --------------------------------------------------------------------------- statistics


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds, each holding with probability >= 1 − alpha.

    Returns ``(lower, upper)``: lower = Beta⁻¹(alpha; x, n − x + 1) and
    upper = Beta⁻¹(1 − alpha; x + 1, n − x), with the conventions 0 and 1 at
    the edges.

    Examples
    --------
    >>> lo, hi = clopper_pearson(50, 100, 0.025)
    >>> round(lo, 3), round(hi, 3)
    (0.398, 0.602)
    """
    x, n = int(successes), int(trials)
    lower = 0.0 if x == 0 else float(beta_dist.ppf(alpha, x, n - x + 1))
    upper = 1.0 if x == n else float(beta_dist.ppf(1 - alpha, x + 1, n - x))
    return lower, upper


@dataclass(frozen=True)
class Event:
    """An event on outputs: a threshold on a scalar or one category."""

    kind: str          # "le", "gt" or "eq"
    value: Any

    def indicator(self, outputs) -> np.ndarray:
        if self.kind == "le":
            return np.asarray(outputs) <= self.value
        if self.kind == "gt":
            return np.asarray(outputs) > self.value
        return np.fromiter((o == self.value for o in outputs), dtype=bool, count=len(outputs))

    def __str__(self) -> str:
        if self.kind == "eq":
            return f"output = {self.value!r}"
        return f"x {'<=' if self.kind == 'le' else '>'} {self.value:.6g}"


@dataclass
class AuditResult:
    """The outcome of one audit.

    Attributes
    ----------
    eps_lb : float
        Largest delta-adjusted lower bound ln((p1⁻ − delta)/p2⁺) over the tested
        events and directions (−inf when no event gave a positive numerator).
    delta_lb : float
        Largest p1⁻ − e^eps·p2⁺ over the tested events and directions (>= 0).
    eps_lb_pure : float
        Largest ln(p1⁻/p2⁺), ignoring delta.
    passed : bool
        ``eps_lb <= claimed_eps`` and ``delta_lb <= claimed_delta``.
    """

    name: str
    claimed_eps: float
    claimed_delta: float
    eps_lb: float
    delta_lb: float
    eps_lb_pure: float
    n_runs: int
    n_test: int
    n_events: int
    alpha: float
    event: str
    direction: str
    p_lower: float
    p_upper: float
    neighbours: str = ""
    exercised: str = ""
    exact_eps: float | None = None

    @property
    def passed(self) -> bool:
        return self.eps_lb <= self.claimed_eps and self.delta_lb <= self.claimed_delta

    def row(self) -> dict:
        """One row of the audit table (plain types)."""
        return {"mechanism": self.name, "claimed_eps": self.claimed_eps,
                "claimed_delta": self.claimed_delta, "exact_pair_eps": self.exact_eps,
                "eps_lb": self.eps_lb,
                "delta_lb": self.delta_lb, "runs_per_dataset": self.n_runs,
                "events_tested": self.n_events, "best_event": f"{self.event} ({self.direction})",
                "verdict": "pass" if self.passed else "FAIL"}

    def __str__(self) -> str:
        verdict = "consistent with" if self.passed else "REFUTES"
        return (f"audit of {self.name}: eps_lb = {self.eps_lb:.4f} (claimed {self.claimed_eps:g}), "
                f"delta_lb = {self.delta_lb:.3g} (claimed {self.claimed_delta:g}); {verdict} the "
                f"claim at level {self.alpha:g} [{self.n_runs} runs per dataset, {self.n_events} events, "
                f"best: {self.event}, {self.direction}]")


def _as_keys(outputs) -> list[Hashable]:
    """Categorical outputs as hashable keys (arrays/sets become sorted tuples)."""
    keys = []
    for o in outputs:
        if isinstance(o, (set, frozenset)):
            keys.append(tuple(sorted(o)))
        elif isinstance(o, (np.ndarray, list, tuple)):
            keys.append(tuple(np.asarray(o).ravel().tolist()))
        else:
            keys.append(o)
    return keys


def candidate_events(held1, held2, kind: str, n_thresholds: int = 64) -> list[Event]:
    """Candidate events from the held-out runs of both datasets.

    Scalars: thresholds at ``n_thresholds`` pooled quantiles (levels 1/(q+1) ..
    q/(q+1)), each giving {x <= t} and {x > t}.  Categories: one event per
    category seen in the held-out runs.
    """
    if kind == "scalar":
        pooled = np.concatenate([np.asarray(held1, float), np.asarray(held2, float)])
        levels = np.arange(1, n_thresholds + 1) / (n_thresholds + 1)
        thresholds = np.unique(np.quantile(pooled, levels))
        return [Event(k, float(t)) for t in thresholds for k in ("le", "gt")]
    if kind == "category":
        return [Event("eq", c) for c in dict.fromkeys(list(held1) + list(held2))]
    raise ValueError(f"kind must be 'scalar' or 'category', got {kind!r}")


def _directional_bounds(c1: int, n1: int, c2: int, n2: int, level: float, eps: float,
                        delta: float) -> tuple[float, float, float, float, float]:
    """(eps_lb, delta_lb, eps_lb_pure, p1⁻, p2⁺) for P1(E) vs P2(E) at one-sided ``level``."""
    p1_lo, _ = clopper_pearson(c1, n1, level)
    _, p2_hi = clopper_pearson(c2, n2, level)
    pure = math.log(p1_lo / p2_hi) if p1_lo > 0 else -math.inf
    adj = math.log((p1_lo - delta) / p2_hi) if p1_lo > delta else -math.inf
    dlb = max(0.0, p1_lo - math.exp(eps) * p2_hi) if math.isfinite(eps) else 0.0
    return adj, dlb, pure, p1_lo, p2_hi


def _held_out_scores(events: list[Event], a, b, eps: float, delta: float) -> np.ndarray:
    """Held-out score of each event: its delta-adjusted eps lower bound, best direction.

    Unadjusted one-sided Clopper–Pearson bounds at level 0.05, vectorised over
    events; ranking by this bound also ranks by delta_lb against the claim
    (delta_lb > delta  <=>  bound > eps).
    """
    c1 = np.array([int(e.indicator(a).sum()) for e in events])
    c2 = np.array([int(e.indicator(b).sum()) for e in events])
    n1, n2 = len(a), len(b)

    def adjusted(x1, m1, x2, m2):
        with np.errstate(divide="ignore", invalid="ignore"):
            lo = np.where(x1 > 0, beta_dist.ppf(0.05, x1, m1 - x1 + 1), 0.0)
            hi = np.where(x2 < m2, beta_dist.ppf(0.95, x2 + 1, m2 - x2), 1.0)
            return np.where(lo > delta, np.log(np.maximum(lo - delta, 1e-300) / hi), -np.inf)

    return np.maximum(adjusted(c1, n1, c2, n2), adjusted(c2, n2, c1, n1))


def audit_outputs(out1: Sequence, out2: Sequence, *, eps: float, delta: float = 0.0,
                  kind: str = "scalar", alpha: float = 0.05, n_events: int = 4,
                  n_thresholds: int = 64, held_out: float = 0.2, name: str = "mechanism",
                  neighbours: str = "", exercised: str = "",
                  exact_eps: float | None = None) -> AuditResult:
    """Audit two samples of outputs, from D1 and from D2, against a claimed (eps, delta).

    Parameters
    ----------
    out1, out2 : sequences of the same length N
        Outputs of independent runs on D1 and on D2 (scalars, or categories
        such as tuples of selected indices).
    eps, delta : float
        The claim under audit.
    kind : {"scalar", "category"}
        How outputs become events.
    alpha : float
        The bound holds with probability >= 1 − alpha (Bonferroni inside).
    n_events : int
        Number of events chosen on the held-out runs and tested on the rest.
    held_out : float
        Share of the runs used only to choose the events.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.laplace(0, 1, 20_000), rng.laplace(1, 1, 20_000)
    >>> r = audit_outputs(a, b, eps=1.0, name="Laplace(1)")
    >>> r.passed and r.eps_lb > 0.6
    True
    >>> audit_outputs(a, b, eps=0.5).passed   # claim eps = 0.5 is refuted
    False
    """
    n = min(len(out1), len(out2))
    if n < 50:
        raise ValueError(f"an audit needs at least 50 runs per dataset, got {n}")
    if kind == "category":
        out1, out2 = _as_keys(out1), _as_keys(out2)
    else:
        out1, out2 = np.asarray(out1, float).ravel(), np.asarray(out2, float).ravel()
    h = max(1, int(round(held_out * n)))
    hold1, hold2, test1, test2 = out1[:h], out2[:h], out1[h:n], out2[h:n]
    candidates = candidate_events(hold1, hold2, kind, n_thresholds)
    scores = _held_out_scores(candidates, hold1, hold2, eps, delta)
    chosen = [candidates[i] for i in np.argsort(-scores, kind="stable")[:max(1, n_events)]]
    level = alpha / (4 * len(chosen))
    tests = [(event, direction, _directional_bounds(*counts, level, eps, delta))
             for event in chosen
             for direction, counts in zip(("D1 vs D2", "D2 vs D1"), _counts_both(event, test1, test2))]
    event, direction, (adj, _, _, p_lo, p_hi) = max(tests, key=lambda t: (t[2][0], t[2][1]))
    return AuditResult(name=name, claimed_eps=eps, claimed_delta=delta, eps_lb=adj,
                       delta_lb=max(t[2][1] for t in tests), eps_lb_pure=max(t[2][2] for t in tests),
                       n_runs=n, n_test=n - h, n_events=len(chosen), alpha=alpha, event=str(event),
                       direction=direction, p_lower=p_lo, p_upper=p_hi, neighbours=neighbours,
                       exercised=exercised, exact_eps=exact_eps)


def _counts_both(event: Event, test1, test2):
    c1, c2 = int(event.indicator(test1).sum()), int(event.indicator(test2).sum())
    return ((c1, len(test1), c2, len(test2)), (c2, len(test2), c1, len(test1)))


# --------------------------------------------------------------------------- running mechanisms

#: A batched mechanism: ``run(data, n_runs, rng) -> outputs`` (length n_runs).
Runner = Callable[[Any, int, np.random.Generator], Sequence]


def repeat(single: Callable[[Any, np.random.Generator], Any], progress: bool = False) -> Runner:
    """Turn a one-run mechanism ``single(data, rng)`` into a batched runner (a loop).

    Every run draws from the same generator, so runs are independent.

    Examples
    --------
    >>> run = repeat(lambda data, rng: data + rng.normal())
    >>> len(run(0.0, 5, np.random.default_rng(0)))
    5
    """
    def run(data, n_runs: int, rng: np.random.Generator) -> list:
        iterator = range(n_runs)
        if progress:
            from tqdm.auto import tqdm
            iterator = tqdm(iterator, desc="audit runs", leave=False)
        return [single(data, rng) for _ in iterator]
    return run


@dataclass
class AuditCase:
    """A mechanism with a claim and a worst-case pair of neighbouring inputs.

    Parameters
    ----------
    name : str
        Row label of the audit table.
    run : Runner
        ``run(data, n_runs, rng)`` returns ``n_runs`` outputs on ``data``.
    d1, d2 : any
        The neighbouring inputs (datasets, or the statistics they determine).
    eps, delta : float
        The claim.
    kind : {"scalar", "category"}
    statistic : callable, optional
        Maps the list/array of outputs to scalars (e.g. a log-likelihood ratio).
    neighbours : str
        Why the pair is worst-case.
    exercised : str
        Which code path is run (plain function, front door, numpy or OpenDP noise).
    exact_eps : float, optional
        The exact eps of the mechanism on this pair, when it can be computed.
    max_runs : int, optional
        A cap on runs for slow (front-door) cases.
    """

    name: str
    run: Runner
    d1: Any
    d2: Any
    eps: float
    delta: float = 0.0
    kind: str = "scalar"
    statistic: Callable[[Sequence], np.ndarray] | None = None
    neighbours: str = ""
    exercised: str = "plain function, seeded numpy noise"
    n_events: int = 4
    exact_eps: float | None = None
    max_runs: int | None = None


def audit(case: AuditCase, n_runs: int = 100_000, *, random_state: int = 0, alpha: float = 0.05,
          held_out: float = 0.2) -> AuditResult:
    """Run ``case`` ``n_runs`` times on each neighbour and audit the outputs.

    D1 and D2 get independent generators spawned from ``random_state``.

    Examples
    --------
    >>> r = audit(laplace_case(eps=1.0, broken=True), n_runs=5_000, random_state=1)
    >>> r.passed   # the halved-sensitivity Laplace is caught
    False
    """
    seq1, seq2 = np.random.SeedSequence(random_state).spawn(2)
    out1 = case.run(case.d1, n_runs, np.random.default_rng(seq1))
    out2 = case.run(case.d2, n_runs, np.random.default_rng(seq2))
    if case.statistic is not None:
        out1, out2 = case.statistic(out1), case.statistic(out2)
    return audit_outputs(out1, out2, eps=case.eps, delta=case.delta, kind=case.kind, alpha=alpha,
                         n_events=case.n_events, held_out=held_out, name=case.name,
                         neighbours=case.neighbours, exercised=case.exercised, exact_eps=case.exact_eps)


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
        run=run, d1=0.0, d2=float(sensitivity), eps=eps,
        neighbours="f(D1) = 0, f(D2) = Δ₁: the changed row moves f by its full sensitivity",
        exercised="NoiseSource.laplace, seeded numpy, all runs in one vector")


def gaussian_case(eps: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0,
                  calibration: str = "analytic", broken: bool = False) -> AuditCase:
    """Gaussian mechanism through :meth:`NoiseSource.gaussian`, vectorised.

    sigma from :func:`~dpstats.privacy.calibration.analytic_gaussian_sigma`
    (Balle & Wang 2018) or the classic bound; neighbours f(D1) = 0, f(D2) = Δ₂.
    """
    sens = sensitivity / 2 if broken else sensitivity
    sigma = (analytic_gaussian_sigma(eps, delta, sens) if calibration == "analytic"
             else classic_gaussian_sigma(eps, delta, sens))

    def run(f: float, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        return _numpy_noise(rng).gaussian(np.full(n_runs, f), sigma)

    return AuditCase(
        name=f"Gaussian ({calibration} σ={sigma:.3g}{', sensitivity halved: BROKEN' if broken else ''})",
        run=run, d1=0.0, d2=float(sensitivity), eps=eps, delta=delta,
        neighbours="f(D1) = 0, f(D2) = Δ₂", exercised="NoiseSource.gaussian, seeded numpy, vectorised")


def l2_laplace_case(eps: float = 1.0, sensitivity: float = 1.0, dim: int = 3,
                    broken: bool = False) -> AuditCase:
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
        run=repeat(single), d1=c1, d2=c2, eps=eps, statistic=statistic,
        neighbours="f(D1) = 0, f(D2) = Δ₂·e₁ (the full l2 sensitivity)",
        exercised="NoiseSource.l2_laplace, seeded numpy, one call per run")


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
    if selector == "canonical_lipschitz":
        from .privacy.topk import canonical_lipschitz_distribution
        return lambda s, k, eps: canonical_lipschitz_distribution(s, k, eps, grid=20_001)
    try:
        from .privacy.topk_family import exact_set_distribution
    except ImportError:  # pragma: no cover - the family module is part of the core
        return None
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


def worst_topk_pair(selector: str, d: int, k: int, eps: float, n_pairs: int = 200,
                    random_state: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
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
def _worst_topk_pair(selector: str, d: int, k: int, eps: float, n_pairs: int,
                     random_state: int) -> tuple[np.ndarray, np.ndarray, float]:
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


def topk_case(eps: float = 1.0, d: int = 4, k: int = 2, selector: str = "canonical_lipschitz",
              broken: bool = False, pair: tuple[np.ndarray, np.ndarray] | None = None,
              **options) -> AuditCase:
    """A top-k selector from :data:`dpstats.privacy.SELECTORS` on neighbouring scores.

    ``pair`` defaults to the :func:`shift_pair`; pass the result of
    :func:`worst_topk_pair` to audit the exact-worst pair.  The output is the
    selected set (a category).  ``broken=True`` runs the selector with 2·eps
    (sensitivity halved).
    """
    from .privacy.topk import select_topk

    s1, s2 = shift_pair(d, k) if pair is None else (np.asarray(pair[0], float), np.asarray(pair[1], float))
    run_eps = 2 * eps if broken else eps

    def single(scores: np.ndarray, rng: np.random.Generator) -> tuple:
        return tuple(select_topk(scores, k, run_eps, rng, method=selector, **options).tolist())

    return AuditCase(
        name=f"top-k {selector} (d={s1.size}, k={k}{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single), d1=s1, d2=s2, eps=eps, kind="category", n_events=6,
        neighbours=f"scores {s1.tolist()} vs {s2.tolist()} (every score moves by at most the sensitivity)",
        exercised="privacy.topk.select_topk, seeded numpy generator, one call per run")


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


def sis_case(eps: float = 1.0, pair: tuple[np.ndarray, np.ndarray] | None = None, k: int = 2,
             topk: str = "canonical_lipschitz", front_door: bool = False,
             broken: bool = False) -> AuditCase:
    """DP-SIS on the neighbouring frames of :func:`sis_frames` (replace-one, bounds (−1, 1)).

    ``front_door=False`` computes each frame's scores once with the method's
    plain functions (``stats.cross_products``, ``methods.sis.scores_on_unit_scale``)
    and repeats only ``methods.sis.private_top_k``; ``front_door=True`` calls
    :func:`dpstats.dp_sis` for every run (about 1 ms per run).  ``broken=True``
    divides the scores by half the replace-one sensitivity.
    """
    from .methods import sis as m

    s1, s2 = shift_pair(4, k) if pair is None else pair
    d1, d2 = sis_frames(s1, s2)
    sensitivity = m.SENSITIVITY["replace"] / (2 if broken else 1)
    if front_door:
        from .api.sis import dp_sis

        def single(frame, rng):
            fit = dp_sis("y ~ .", frame, eps, k=k, bounds=(-1, 1), topk=topk, random_state=rng,
                         oc_trials=0)
            names = list(frame.columns[1:])
            return tuple(sorted(names.index(nm) for nm in fit.selected))
        exercised = "dpstats.dp_sis front door per run, seeded numpy generator"
    else:
        from .geometry import resolve_box
        from .stats import cross_products

        def scores_of(frame):
            names = [c for c in frame.columns if c != "y"]
            stats = cross_products(frame[names].to_numpy(), frame["y"].to_numpy(),
                                   x_box=resolve_box((-1, 1), names), y_box=resolve_box((-1, 1), ["y"]))
            return m.scores_on_unit_scale(stats)

        d1, d2 = scores_of(d1), scores_of(d2)

        def single(scores, rng):
            return tuple(m.private_top_k(scores, k, eps, sensitivity, rng, topk=topk).tolist())
        exercised = "stats.cross_products + methods.sis.private_top_k, seeded numpy generator"
    return AuditCase(
        name=f"DP-SIS {'front door' if front_door else 'plain'} ({topk}, d={len(s1)}, k={k}"
             f"{', sensitivity halved: BROKEN' if broken else ''})",
        run=repeat(single), d1=d1, d2=d2, eps=eps, kind="category", n_events=6,
        neighbours="one row replaced at the bounds, moving each |x_j'y| by up to 2 (the sensitivity)",
        exercised=exercised)


# --------------------------------------------------------------------------- catalogue

#: Front doors being written in parallel, audited once their modules exist.
OPTIONAL_MODULES = {
    "two-stage": "dpstats.api.two_stage",
    "knockoff": "dpstats.api.knockoff",
    "dp_gmm": "dpstats.api.gmm",
    "FELP": "dpstats.api.felp",
    "vertical GLM": "dpstats.api.vertical",
}


def available(module: str) -> bool:
    """True when ``module`` can be imported (its file has landed)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def standard_cases(eps: float = 1.0, n_pairs: int = 150) -> list[AuditCase]:
    """The audit table's mechanisms: core noise, every top-k selector, DP-SIS, broken controls.

    Top-k selectors and DP-SIS are audited on the neighbouring pair with the
    largest exact eps found by :func:`worst_topk_pair` (``n_pairs`` random
    candidates); canonical Lipschitz at d = 5, k = 3, the others at d = 5, k = 2.
    """
    from .privacy.topk import SELECTORS

    cases = [laplace_case(eps), gaussian_case(eps, 1e-5, calibration="analytic"),
             gaussian_case(min(eps, 0.9), 1e-5, calibration="classic"),
             gaussian_case(2 * eps, 1e-5, calibration="analytic"), l2_laplace_case(eps)]
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
    broken_pair = worst_topk_pair("peeling", 5, 2, 2 * eps, n_pairs=n_pairs)
    broken_topk = topk_case(eps, k=2, selector="peeling", broken=True, pair=broken_pair[:2])
    broken_topk.exact_eps = broken_pair[2]
    # the broken Gaussian is audited at 2·eps: at eps = 1 its excess lives in events too rare for 10^5 runs
    cases += [laplace_case(eps, broken=True), gaussian_case(2 * eps, 1e-5, broken=True),
              l2_laplace_case(eps, broken=True), broken_topk]
    return cases


def method_cases(eps: float = 1.0) -> list[AuditCase]:
    """Audits of the methods in :data:`OPTIONAL_MODULES` whose modules have landed."""
    cases: list[AuditCase] = []
    for label, module in OPTIONAL_MODULES.items():
        if available(module) and label in _METHOD_CASES:
            cases += _METHOD_CASES[label](eps)
    return cases


#: label -> factory of audit cases, for the methods written in parallel.
_METHOD_CASES: dict[str, Callable[[float], list[AuditCase]]] = {}


def two_stage_case(eps: float = 1.0, topk: str = "canonical_lipschitz", k: int = 2) -> AuditCase:
    """dp_two_stage's private step: top-k of lasso vote counts, on neighbouring block coefficients.

    Six blocks' lasso coefficients over d = 5 features; replacing one row
    changes one block's fit, which here moves its vote from features {0, 1}
    to {2, 3} (the change that moves the most counts, by 1 each in opposite
    directions).  Counts come from ``methods.two_stage.vote_counts``, scaled by
    ``methods.two_stage.SENSITIVITY``, and the selector is the front door's
    (``SELECTORS[topk].select``); the lasso fits themselves are deterministic
    functions of the blocks and are not re-run.
    """
    from .methods import two_stage as ts
    from .privacy.topk import SELECTORS

    base = np.array([[3.0, 2, 1, 0, 0], [0, 2, 3, 1, 0], [1, 0, 0, 3, 2], [2, 3, 0, 0, 1],
                     [0, 0, 2, 1, 3]])
    coefs1 = np.vstack([base, [3.0, 2, 0, 0, 0]])
    coefs2 = np.vstack([base, [0.0, 0, 3, 2, 0]])
    sens = ts.SENSITIVITY["replace"]
    c1, c2 = ts.vote_counts(coefs1, k) / sens, ts.vote_counts(coefs2, k) / sens
    options = {"gamma": 0.5} if topk == "canonical_lipschitz" else {}

    def single(counts, rng):
        return tuple(np.sort(SELECTORS[topk].select(counts, k, eps, rng, **options)).tolist())

    dist = exact_distribution(topk)
    case = AuditCase(
        name=f"two-stage vote top-k ({topk}, d=5, k={k}, 6 blocks)", run=repeat(single), d1=c1, d2=c2,
        eps=eps, kind="category", n_events=6,
        neighbours=f"one block's vote moves from {{0,1}} to {{2,3}}: counts {c1.tolist()} vs {c2.tolist()}",
        exercised="methods.two_stage.vote_counts + SELECTORS[topk].select, seeded numpy generator")
    if dist is not None:
        case.exact_eps = exact_pair_eps(dist(c1, k, eps), dist(c2, k, eps))
    return case


def felp_frames(n: int = 40, d: int = 4, seed: int = 0) -> tuple:
    """Neighbouring FELP inputs on the unit box: the last row moves to the opposite corner, label flipped."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    U = rng.uniform(0, 1, (n, d)) * 0.5
    U[:, 0] = (y + rng.uniform(0, 1, n)) / 2          # one informative feature
    U1, U2 = U.copy(), U.copy()
    y1, y2 = y.copy(), y.copy()
    U1[-1], y1[-1] = 1.0, 1
    U2[-1], y2[-1] = 0.0, 0
    return (U1, y1), (U2, y2)


def felp_sensitivity_check(variant: str = "strict", lam: float = 0.1, n_estimators: int = 5,
                           draws: int = 20, n: int = 40, d: int = 4, random_state: int = 0) -> dict:
    """Largest ‖w̄(D1) − w̄(D2)‖₂ over coupled subset draws, against the sensitivity FELP claims.

    The ensemble average w̄ is computed with ``methods.felp.ensemble`` on the
    neighbouring inputs of :func:`felp_frames` with the *same* subset draw
    (coupled randomness: for the strict variant the bound 2C/k holds for every
    partition, so the coupled maximum must stay below it).  The claimed
    sensitivity is ``strict_sensitivity(C, k)`` or the paper's Lemma 1,
    ``paper_sensitivity(n, lam)``.  The ratio observed/claimed is the factor by
    which the claimed eps understates the true eps of the L2-Laplace release
    (its privacy loss is eps·‖Δw̄‖/Δ).
    """
    from .methods import felp as fm

    (U1, y1), (U2, y2) = felp_frames(n, d)
    C = fm.default_clip_norm(lam)
    claimed = fm.strict_sensitivity(C, n_estimators) if variant == "strict" else fm.paper_sensitivity(n, lam)
    worst = 0.0
    for i in range(draws):
        seed = np.random.SeedSequence([random_state, i])
        w1 = fm.ensemble(U1, y1, lam, n_estimators=n_estimators, variant=variant,
                         gen=np.random.default_rng(seed)).w_mean
        w2 = fm.ensemble(U2, y2, lam, n_estimators=n_estimators, variant=variant,
                         gen=np.random.default_rng(seed)).w_mean
        worst = max(worst, float(np.linalg.norm(w1 - w2)))
    return {"variant": variant, "claimed_sensitivity": claimed, "observed": worst, "ratio": worst / claimed}


def felp_case(eps: float = 1.0, variant: str = "strict", lam: float = 0.1, n_estimators: int = 5,
              random_state: int = 0) -> AuditCase:
    """FELP's release w̄ + L2-Laplace(Δ/eps) on one coupled subset draw of :func:`felp_frames`.

    The ensemble (about 0.1 s) is fitted once per neighbour with the same
    subset draw; the runs redraw only the L2-Laplace noise (``NoiseSource.l2_laplace``),
    reduced to the log-likelihood-ratio statistic.  Conditional on the draw
    this is the released mechanism; with the paper variant's sensitivity it
    shows what the unverified Lemma 1 costs when the observed change exceeds it.
    """
    from .methods import felp as fm

    (U1, y1), (U2, y2) = felp_frames()
    C = fm.default_clip_norm(lam)
    sens = fm.strict_sensitivity(C, n_estimators) if variant == "strict" else fm.paper_sensitivity(len(y1), lam)
    scale = sens / eps
    seed = np.random.SeedSequence([random_state, 99])
    w1 = fm.ensemble(U1, y1, lam, n_estimators=n_estimators, variant=variant,
                     gen=np.random.default_rng(seed)).w_mean
    w2 = fm.ensemble(U2, y2, lam, n_estimators=n_estimators, variant=variant,
                     gen=np.random.default_rng(seed)).w_mean

    def single(centre, rng):
        return _numpy_noise(rng).l2_laplace(centre, scale)

    def statistic(outputs):
        x = np.asarray(outputs, float)
        return (np.linalg.norm(x - w2, axis=1) - np.linalg.norm(x - w1, axis=1)) / scale

    return AuditCase(
        name=f"FELP {variant} (k={n_estimators}, λ={lam:g}, coupled draw)", run=repeat(single), d1=w1,
        d2=w2, eps=eps, statistic=statistic,
        neighbours="last row moved to the opposite corner of the box with its label flipped",
        exercised="methods.felp.ensemble once per neighbour + NoiseSource.l2_laplace per run",
        exact_eps=eps * float(np.linalg.norm(w1 - w2)) / sens)


def knockoff_frames(n: int = 2000, p: int = 16, B: float = 1.0, sigma: float = 0.5, seed: int = 0) -> tuple:
    """Neighbouring frames for dp_knockoff: rows of norm <= B, y = Xβ + N(0, σ²) with ‖β‖ = 1.

    The replaced (last) row is at the row-norm bound along x1 with y three
    noise s.d. above its mean in D1 and three below in D2: the largest change
    the model (the paper's Remark 2 assumptions) makes plausible.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X *= 0.9 * B / np.linalg.norm(X, axis=1, keepdims=True)   # every row at 0.9·B
    beta = np.zeros(p)
    beta[:3] = 1 / np.sqrt(3)
    y = X @ beta + sigma * rng.standard_normal(n)
    frames = []
    for sign in (1.0, -1.0):
        Xc, yc = X.copy(), y.copy()
        Xc[-1] = 0.0
        Xc[-1, 0] = B
        yc[-1] = B * beta[0] + sign * 3 * sigma
        frame = pd.DataFrame(Xc, columns=[f"x{j + 1}" for j in range(p)])
        frame.insert(0, "y", yc)
        frames.append(frame)
    return frames[0], frames[1]


def knockoff_case(eps: float = 1.0, delta: float = 1e-2, method: str = "II") -> AuditCase:
    """dp_knockoff's release (Method I or II), audited on the released W statistic of x1.

    One front-door call per neighbour (declared bounds, sigma, beta_norm,
    c_min, lambda_min, so the noise scales are data-independent) captures the
    arguments the front door passes to ``methods.knockoff_dp.run_mechanism``;
    each run then calls ``run_mechanism`` with a fresh seeded numpy
    ``NoiseSource`` (the knockoff's Haar draw and the DP noise are redrawn),
    and the output is reduced to W₁, the statistic of the feature the
    replaced row moves.
    """
    from .api.knockoff import dp_knockoff
    from .methods import knockoff_dp as kd

    d1, d2 = knockoff_frames()
    captured = []
    original = kd.run_mechanism

    def spy(st, s, scales, noise, **kwargs):
        captured.append((st, s, scales, kwargs))
        return original(st, s, scales, noise, **kwargs)

    kwargs = dict(eps=eps, delta=delta, method=method, bounds=1.0, sigma=0.5, beta_norm=1.0, c_min=8.0,
                  lambda_min=0.5, random_state=0, oc_trials=0, strict=True)
    kd.run_mechanism = spy
    try:
        for frame in (d1, d2):
            dp_knockoff("y ~ .", frame, **kwargs)
    finally:
        kd.run_mechanism = original
    (st1, s1, scales1, kw1), (st2, s2, scales2, _) = captured
    if s1 != s2 or scales1 != scales2:
        raise AssertionError("knockoff noise scales depend on the data although every calibration was declared")

    def single(st, rng):
        return float(original(st, s1, scales1, _numpy_noise(rng), **kw1).W[0])

    return AuditCase(
        name=f"knockoff Method {method} (p=16, W of x1)", run=repeat(single), d1=st1, d2=st2, eps=eps,
        delta=delta, neighbours="last row at the row-norm bound along x1, y at +3σ vs −3σ",
        exercised="dp_knockoff calibration (captured) + methods.knockoff_dp.run_mechanism per run")


def gmm_radius_case(eps: float = 1.0) -> AuditCase:
    """dp_gmm's private clipping radius (AboveThreshold over a public radius grid).

    Neighbours: 200 points at distances 1..200 from the public centre; the
    replaced point sits at distance 0 in D1 and beyond the largest radius in
    D2, so every query count drops by 1 (the sensitivity).  Output: the chosen
    radius (a category).  Runs ``methods.gmm_svt.private_radius``.
    """
    from .methods.gmm_svt import geometric_grid, private_radius

    base = np.arange(1.0, 200.0)
    d1, d2 = np.append(base, 0.0), np.append(base, 1e9)
    radii = geometric_grid(8.0, 256.0, 2.0)

    def single(distances, rng):
        return private_radius(distances, radii, 60.0, eps, rng)

    return AuditCase(
        name="dp_gmm step: private radius (AboveThreshold)", run=repeat(single), d1=d1, d2=d2, eps=eps,
        kind="category", n_events=6,
        neighbours="one point inside every radius vs outside every radius: all counts move by 1",
        exercised="methods.gmm_svt.private_radius, seeded numpy generator")


def gmm_pca_case(eps: float = 1.0, delta: float = 1e-6, radius: float = 1.0) -> AuditCase:
    """dp_gmm's private PCA (Gaussian noise on Σ xxᵀ, ρ-zCDP) at the (eps, delta) its ρ implies.

    ρ = ``rho_from_eps_delta(eps, delta)`` (Bun & Steinke); rows in the ball of
    ``radius``; the replaced row is radius·e₁ in D1 and radius·e₂ in D2 (the
    Frobenius change √2·radius², the replace-one sensitivity).  With q = d = 2
    the released basis and eigenvalues give back the noisy second moment M;
    the statistic M₁₁ − M₂₂ is the most powerful reduction.
    """
    from .methods.gmm_budget import rho_from_eps_delta
    from .methods.gmm_pca import private_pca

    rho = rho_from_eps_delta(eps, delta)
    rng0 = np.random.default_rng(0)
    base = rng0.uniform(-0.5, 0.5, (50, 2)) * radius
    d1, d2 = np.vstack([base, [radius, 0.0]]), np.vstack([base, [0.0, radius]])

    def single(X, rng):
        pca = private_pca(X, 2, radius, rho, "replace", _numpy_noise(rng))
        M = pca.basis @ np.diag(pca.eigenvalues) @ pca.basis.T
        return M[0, 0] - M[1, 1]

    return AuditCase(
        name=f"dp_gmm step: private PCA (ρ={rho:.3g} zCDP as ({eps:g}, {delta:g}))", run=repeat(single),
        d1=d1, d2=d2, eps=eps, delta=delta,
        neighbours="replaced row radius·e1 vs radius·e2 (Frobenius change √2·radius²)",
        exercised="methods.gmm_pca.private_pca with NoiseSource on seeded numpy")


def vertical_frames(n: int = 50, seed: int = 0) -> tuple:
    """One party's block for vertical_glm's DP mode: intercept + one covariate in [−1, 1], y ∈ {0, 1}.

    The replaced row is (1, 1) with y = 1 in D1 and (1, −1) with y = 0 in D2.
    Returns ((X1, y1), (X2, y2), R) with R = √2 the block's row-norm bound.
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x))).astype(float)
    X = np.column_stack([np.ones(n), x])
    X1, X2, y1, y2 = X.copy(), X.copy(), y.copy(), y.copy()
    X1[-1, 1], y1[-1] = 1.0, 1.0
    X2[-1, 1], y2[-1] = -1.0, 0.0
    return (X1, y1), (X2, y2), math.sqrt(2.0)


def vertical_coefficient_case(eps: float = 1.0, delta: float = 1e-6, lam: float = 5.0) -> AuditCase:
    """vertical_glm's DP coefficient release for one party: ridge-logistic block + Gaussian noise.

    The block is fitted once per neighbour with ``methods.vertical.fit_block``
    (fixed offset, as in the sensitivity argument); Δ₂(β) from
    ``methods.vertical.binomial_ridge_sensitivities``; σ = Δ₂/√(2ρ) with
    ρ = ``rho_from_eps_delta(eps, delta)`` (the whole budget on this one
    release, so the claim is (eps, delta)); runs draw the Gaussian noise
    vectorised through ``NoiseSource.gaussian``; the statistic is the
    projection on β(D2) − β(D1).  The measured ‖β(D1) − β(D2)‖ relative to
    Δ₂(β) is written into ``neighbours``.
    """
    from .methods import vertical as vm

    (X1, y1), (X2, y2), R = vertical_frames()
    fam, pen, mask = vm.FAMILIES["binomial"], vm.Penalty("ridge", lam), np.ones(2)
    offset = np.zeros(len(y1))
    b1 = vm.fit_block(X1, y1, offset, np.zeros(2), fam, pen, mask)
    b2 = vm.fit_block(X2, y2, offset, np.zeros(2), fam, pen, mask)
    _, d_beta = vm.binomial_ridge_sensitivities(len(y1), R, lam, 4.0)
    sigma = d_beta / math.sqrt(2 * vm.rho_from_eps_delta(eps, delta))
    direction = (b2 - b1) / max(np.linalg.norm(b2 - b1), 1e-300)

    def run(beta, n_runs, rng):
        return _numpy_noise(rng).gaussian(np.tile(beta, (n_runs, 1)), sigma) @ direction

    return AuditCase(
        name=f"vertical GLM coefficient release (ridge logistic, λ={lam:g})", run=run, d1=b1, d2=b2,
        eps=eps, delta=delta,
        neighbours=("replaced row (1, 1, y=1) vs (1, −1, y=0): ‖β(D1) − β(D2)‖ = "
                    f"{np.linalg.norm(b2 - b1) / d_beta:.3f}·Δ₂(β)"),
        exercised="methods.vertical.fit_block once per neighbour + NoiseSource.gaussian, vectorised")


_METHOD_CASES.update({
    "two-stage": lambda eps: [two_stage_case(eps), two_stage_case(eps, topk="joint")],
    "FELP": lambda eps: [felp_case(eps, "strict"), felp_case(eps, "paper")],
    "knockoff": lambda eps: [knockoff_case(eps, method="I"), knockoff_case(eps, method="II")],
    "dp_gmm": lambda eps: [gmm_radius_case(eps), gmm_pca_case(eps)],
    "vertical GLM": lambda eps: [vertical_coefficient_case(eps)],
})


def format_table(results: Sequence[AuditResult]) -> str:
    """A plain-text table of claimed eps vs audited eps_lb (and the pair's exact eps if known)."""
    head = (f"{'mechanism':54s} {'claimed':>8s} {'delta':>7s} {'exact':>7s} {'eps_lb':>7s} "
            f"{'delta_lb':>8s} {'runs':>7s}  verdict")
    lines = [head, "-" * len(head)]
    for r in results:
        exact = "" if r.exact_eps is None else f"{r.exact_eps:.3f}"
        lines.append(f"{r.name[:54]:54s} {r.claimed_eps:8.3g} {r.claimed_delta:7.0g} {exact:>7s} "
                     f"{r.eps_lb:7.3f} {r.delta_lb:8.2g} {r.n_runs:7d}  "
                     f"{'pass' if r.passed else 'FAIL (claim refuted)'}")
    return "\n".join(lines)
