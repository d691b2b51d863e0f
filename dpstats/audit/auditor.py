"""The auditor: events chosen on held-out runs, Clopper–Pearson bounds on eps and delta.

See :mod:`dpstats.audit` for the method and what it exercises.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist

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

    kind: str  # "le", "gt" or "eq"
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
        return {
            "mechanism": self.name,
            "claimed_eps": self.claimed_eps,
            "claimed_delta": self.claimed_delta,
            "exact_pair_eps": self.exact_eps,
            "eps_lb": self.eps_lb,
            "delta_lb": self.delta_lb,
            "runs_per_dataset": self.n_runs,
            "events_tested": self.n_events,
            "best_event": f"{self.event} ({self.direction})",
            "verdict": "pass" if self.passed else "FAIL",
        }

    def __str__(self) -> str:
        verdict = "consistent with" if self.passed else "REFUTES"
        return (
            f"audit of {self.name}: eps_lb = {self.eps_lb:.4f} (claimed {self.claimed_eps:g}), "
            f"delta_lb = {self.delta_lb:.3g} (claimed {self.claimed_delta:g}); {verdict} the "
            f"claim at level {self.alpha:g} [{self.n_runs} runs per dataset, {self.n_events} events, "
            f"best: {self.event}, {self.direction}]"
        )


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


def _directional_bounds(
    c1: int, n1: int, c2: int, n2: int, level: float, eps: float, delta: float
) -> tuple[float, float, float, float, float]:
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


def audit_outputs(
    out1: Sequence,
    out2: Sequence,
    *,
    eps: float,
    delta: float = 0.0,
    kind: str = "scalar",
    alpha: float = 0.05,
    n_events: int = 4,
    n_thresholds: int = 64,
    held_out: float = 0.2,
    name: str = "mechanism",
    neighbours: str = "",
    exercised: str = "",
    exact_eps: float | None = None,
) -> AuditResult:
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
    chosen = [candidates[i] for i in np.argsort(-scores, kind="stable")[: max(1, n_events)]]
    level = alpha / (4 * len(chosen))
    tests = [
        (event, direction, _directional_bounds(*counts, level, eps, delta))
        for event in chosen
        for direction, counts in zip(("D1 vs D2", "D2 vs D1"), _counts_both(event, test1, test2))
    ]
    event, direction, (adj, _, _, p_lo, p_hi) = max(tests, key=lambda t: (t[2][0], t[2][1]))
    return AuditResult(
        name=name,
        claimed_eps=eps,
        claimed_delta=delta,
        eps_lb=adj,
        delta_lb=max(t[2][1] for t in tests),
        eps_lb_pure=max(t[2][2] for t in tests),
        n_runs=n,
        n_test=n - h,
        n_events=len(chosen),
        alpha=alpha,
        event=str(event),
        direction=direction,
        p_lower=p_lo,
        p_upper=p_hi,
        neighbours=neighbours,
        exercised=exercised,
        exact_eps=exact_eps,
    )


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


def audit(
    case: AuditCase,
    n_runs: int = 100_000,
    *,
    random_state: int = 0,
    alpha: float = 0.05,
    held_out: float = 0.2,
) -> AuditResult:
    """Run ``case`` ``n_runs`` times on each neighbour and audit the outputs.

    D1 and D2 get independent generators spawned from ``random_state``.

    Examples
    --------
    >>> from dpstats.audit import laplace_case
    >>> r = audit(laplace_case(eps=1.0, broken=True), n_runs=5_000, random_state=1)
    >>> r.passed   # the halved-sensitivity Laplace is caught
    False
    """
    seq1, seq2 = np.random.SeedSequence(random_state).spawn(2)
    out1 = case.run(case.d1, n_runs, np.random.default_rng(seq1))
    out2 = case.run(case.d2, n_runs, np.random.default_rng(seq2))
    if case.statistic is not None:
        out1, out2 = case.statistic(out1), case.statistic(out2)
    return audit_outputs(
        out1,
        out2,
        eps=case.eps,
        delta=case.delta,
        kind=case.kind,
        alpha=alpha,
        n_events=case.n_events,
        held_out=held_out,
        name=case.name,
        neighbours=case.neighbours,
        exercised=case.exercised,
        exact_eps=case.exact_eps,
    )


def format_table(results: Sequence[AuditResult]) -> str:
    """A plain-text table of claimed eps vs audited eps_lb (and the pair's exact eps if known)."""
    head = (
        f"{'mechanism':54s} {'claimed':>8s} {'delta':>7s} {'exact':>7s} {'eps_lb':>7s} "
        f"{'delta_lb':>8s} {'runs':>7s}  verdict"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        exact = "" if r.exact_eps is None else f"{r.exact_eps:.3f}"
        lines.append(
            f"{r.name[:54]:54s} {r.claimed_eps:8.3g} {r.claimed_delta:7.0g} {exact:>7s} "
            f"{r.eps_lb:7.3f} {r.delta_lb:8.2g} {r.n_runs:7d}  "
            f"{'pass' if r.passed else 'FAIL (claim refuted)'}"
        )
    return "\n".join(lines)
