"""The planner's engine: simulate a method's outcomes over an eps (and n) grid, solve for a target.

A :class:`Simulator` knows one method (or one variant, e.g. knockoff Method II):
its measures, which way each is better, the level each must beat to be worth
spending budget on (chance), and ``run(n, eps_values, rng, trials)``, which
returns per-trial outcomes for every eps at once.  Within one call the same
simulated data sets are used at every eps (common random numbers), so the
predicted curves are smooth in eps and the search for a target compares like
with like.

Nothing here reads data or charges a budget: every input is public (n, p, k,
eps, delta, declared bounds) or part of the stated model.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..methods._search import smallest_reaching
from ..simulate import mean_and_se

BOUNDS = ("declared", "midpoint", None, "auto")

#: method -> predictor(n=, p=, eps=, model=) -> (eps left for the analysis, the model as the analysis sees it
#: under the private bounds (e.g. a wider bound_sds), a note for the plan).  Filled by the private-bounds
#: feature (issue 19, "Private bounds"; ``dpstats.planner`` registers dp_sis's); a method missing here cannot
#: plan bounds="auto" yet.  Re-exported as ``dpstats.planner.AUTO_BOUNDS`` (the same dict).
AUTO_BOUNDS: dict[str, Callable] = {}

#: how many halvings/doublings the bracketing search may take beyond the grid
SEARCH_STEPS = 8
#: the target search's resolution: it stops when the smallest value found to reach the target is
#: within this ratio of the largest found not to (2 %, about the Monte Carlo resolution of 200 trials
#: on a steep curve)
TOLERANCE = 0.02
#: a simulated value reaches a target when the one-sided bound of this confidence does
#: (estimate − z·s.e. >= target): the eps (or n) named is verified, not a point estimate of the crossing
CONFIDENCE = 0.95
_Z = float(NormalDist().inv_cdf(CONFIDENCE))


def whole(value: Any, name: str, low: int) -> int:
    """``value`` as an int if it is a whole number >= ``low`` (a whole float too).  Not a whole number: a
    PrivacyParameterError (the argument's type, wrong whatever the design); below ``low``: a DataError
    (``low`` follows the design, as n's smallest for p)."""
    ok = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not ok or value < low:
        error = DataError if ok and not isinstance(value, bool) else PrivacyParameterError
        raise error(f"{name} must be a whole number >= {low}, got {value!r}.")
    return int(value)


def check_bounds(bounds: Any, method: str, allowed: dict) -> None:
    """Refuse a ``bounds`` the method cannot plan: ``"auto"`` without a registered predictor, or one not in ``allowed``."""
    if bounds == "auto":
        if method not in AUTO_BOUNDS:
            raise PrivacyParameterError(
                f"bounds='auto' cannot be planned for {method} yet: the planner cannot yet predict "
                "the cost of private bounds for it. Plan with bounds='declared' (the model's bounds) instead."
            )
        return
    if bounds not in allowed:
        raise PrivacyParameterError(f"bounds must be one of {list(BOUNDS)}, got {bounds!r}.")


@dataclass
class Chance:
    """The level a measure must beat for the plan to be worth its budget, and why."""

    level: float
    text: str


def selection_chance(signals: int, k: int, p: int) -> dict[str, Chance]:
    """Precision s/d and recall k/d of choosing k of p columns at random (dp_sis, dp_two_stage)."""
    why = f"random selection of {k} of {p} columns"
    return {
        "precision": Chance(signals / p, f"{why}: precision s/d = {signals / p:.3g}"),
        "recall": Chance(k / p, f"{why}: recall k/d = {k / p:.3g}"),
    }


def one_step_ledger(step: str, mechanism: str, sensitivity: str, delta: float = 0.0) -> list[dict]:
    """A plan's ledger of one step that takes all of eps (and ``delta``)."""
    return [
        {"step": step, "mechanism": mechanism, "eps_share": 1.0, "delta": delta, "sensitivity": sensitivity}
    ]


def whole_eps_step(entry: Any) -> list[dict]:
    """A method's one ledger entry (a ``LedgerEntry`` of its ``plan``) as the plan's ledger, all of eps on it."""
    return one_step_ledger(entry.step, entry.mechanism, entry.sensitivity)


@dataclass
class Simulator:
    """One method's simulated outcomes under a stated model, from public inputs only."""

    method: str
    measures: tuple[str, ...]
    primary: str
    run: Callable[[int, np.ndarray, np.random.Generator, int], dict[str, np.ndarray]]
    lower_is_better: tuple[str, ...] = ()
    chance: dict[str, Chance] = field(default_factory=dict)
    ledger: Callable[[int], list[dict]] = lambda n: []
    notes: list[str] = field(default_factory=list)
    #: measures that are ratios, not shares: a target for them is any positive number (e.g. width_ratio 1.5)
    ratios: tuple[str, ...] = ()


@dataclass
class Grid:
    """The grid a plan is simulated on, its Monte Carlo size and its seed."""

    ns: list[int]
    eps: list[float]
    trials: int
    seed: int


def auto_bounds_simulator(
    make: Callable[[Any], Simulator], predictor: Callable, model: Any, p: int
) -> Simulator:
    """A simulator for ``bounds="auto"``: at each eps the private bounds take their share first.

    ``predictor(n=, p=, eps=, model=)`` returns (eps left for the analysis, the model as the
    analysis sees it under the private bounds, a note); ``make(model)`` is the method's
    simulator with declared bounds.  The same data sets are not shared across eps here,
    since the model seen may differ at each eps.
    """
    template = make(model)

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        out = {m: np.empty((eps.size, trials)) for m in template.measures}
        for i, e in enumerate(eps):
            eps_left, seen, _ = predictor(n=n, p=p, eps=float(e), model=model)
            part = make(seen).run(n, np.array([eps_left]), rng, trials)
            for m in template.measures:
                out[m][i] = part[m][0]
        return out

    return Simulator(
        method=template.method,
        measures=template.measures,
        primary=template.primary,
        run=run,
        lower_is_better=template.lower_is_better,
        chance=template.chance,
        ledger=template.ledger,
        ratios=template.ratios,
        notes=[*template.notes, "bounds='auto': private bounds spend part of each eps first (AUTO_BOUNDS)"],
    )


def simulate_grid(sims: Sequence[Simulator], grid: Grid) -> pd.DataFrame:
    """One row per (method, n, eps, measure): estimate, std_error (Monte Carlo) and trials (those in
    which the measure is defined: all of them, except where a method gives nothing to measure)."""
    rows = []
    for sim in sims:
        for n in grid.ns:
            rows += _cell_rows(sim, n, np.asarray(grid.eps, dtype=float), grid.trials, grid.seed)
    return pd.DataFrame(rows, columns=["method", "n", "eps", "measure", "estimate", "std_error", "trials"])


def _cell_rows(sim: Simulator, n: int, eps: np.ndarray, trials: int, seed: int) -> list[dict]:
    outcomes = sim.run(int(n), eps, _generator(seed, n), trials)
    rows = []
    for i, e in enumerate(eps):
        for measure in sim.measures:
            est, se = defined_mean_and_se(outcomes[measure][i])
            rows.append(
                {
                    "method": sim.method,
                    "n": int(n),
                    "eps": float(e),
                    "measure": measure,
                    "estimate": est,
                    "std_error": se,
                    "trials": int(np.sum(~np.isnan(np.asarray(outcomes[measure][i], dtype=float)))),
                }
            )
    return rows


def defined_mean_and_se(values) -> tuple[float, float]:
    """Mean and Monte Carlo standard error over the trials where the measure is defined (not NaN).

    A measure is undefined in a trial where the method gives nothing to measure (dp_glm's
    withheld intervals; every trial of a cell the front door refuses); such a cell's share is a
    measure of its own.  All NaN: (NaN, NaN).

    Examples
    --------
    >>> defined_mean_and_se([1.0, float("nan"), 0.0])
    (0.5, 0.5)
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return mean_and_se(v) if v.size else (math.nan, math.nan)


def _generator(seed: int, n: int) -> np.random.Generator:
    """The same data sets at every eps for one n (common random numbers), independent across n."""
    return np.random.default_rng([seed, int(n)])


def chance_flags(sims: Sequence[Simulator], table: pd.DataFrame) -> pd.DataFrame:
    """Rows where a measure does not beat its chance level by 2 Monte Carlo standard errors; ``worse``:
    the prediction is more than 2 standard errors on the wrong side of chance (worse than chance),
    else it is within 2 of it."""
    flagged = []
    for sim in sims:
        for measure, chance in sim.chance.items():
            part = table[(table.method == sim.method) & (table.measure == measure)]
            se = part.std_error.fillna(0.0)
            better = -1.0 if measure in sim.lower_is_better else 1.0
            ahead = better * (part.estimate - chance.level)  # how far the prediction is better than chance
            bad = part[ahead <= 2 * se]
            for row, worse in zip(bad.itertuples(), (ahead < -2 * se)[bad.index]):
                flagged.append(
                    {
                        "method": sim.method,
                        "n": row.n,
                        "eps": row.eps,
                        "measure": measure,
                        "estimate": row.estimate,
                        "std_error": row.std_error,
                        "chance": chance.level,
                        "why": chance.text,
                        "worse": bool(worse),
                    }
                )
    return pd.DataFrame(
        flagged, columns=["method", "n", "eps", "measure", "estimate", "std_error", "chance", "why", "worse"]
    )


# ----------------------------------------------------------------------------- solving for a target


@dataclass
class Solution:
    """Where a measure reaches its target along one axis (eps or n), for one method and the other axis fixed.

    ``value`` is an eps (or n) the search simulated, and ``estimate`` and ``std_error`` are the
    measure's Monte Carlo estimate and standard error there: the estimate's one-sided
    :data:`CONFIDENCE` bound reaches the target.  ``tolerance``: the search's resolution (the
    largest value found not to reach is within this ratio − 1 below ``value``)."""

    method: str
    measure: str
    target: float
    axis: str
    fixed: dict
    value: float | None
    status: str
    evaluated: list[tuple[float, float, float]]
    estimate: float | None = None
    std_error: float | None = None
    confidence: float = 0.0
    tolerance: float = 0.0

    def text(self) -> str:
        fixed = ", ".join(f"{k} = {v:g}" for k, v in self.fixed.items())
        head = f"{self.method}: {self.measure} {self._sign()} {self.target:g} ({fixed})"
        if self.value is None:
            return f"{head}: {self.status}"
        return f"{head}: needs {self.axis} ≈ {_fmt(self.value, self.axis)} ({self.verified_text()}; {self.status})"

    def verified_text(self) -> str:
        """What the simulation gave at ``value`` and the confidence with which it reaches the target."""
        side = "at most" if self._sign() == "<=" else "at least"
        return (
            f"{self.measure} {self.estimate:.3g} ± {self.std_error:.2g} (Monte Carlo s.e.) simulated at that "
            f"{self.axis}, {side} {self.target:g} with one-sided {self.confidence:.0%} confidence"
        )

    def _sign(self) -> str:
        return "<=" if self.status.startswith("lower") else ">="

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "measure": self.measure,
            "target": self.target,
            "axis": self.axis,
            "fixed": self.fixed,
            "value": self.value,
            "estimate": self.estimate,
            "std_error": self.std_error,
            "confidence": self.confidence,
            "tolerance": self.tolerance,
            "status": self.status,
            "evaluated": [list(t) for t in self.evaluated],
        }


def _fmt(value: float, axis: str) -> str:
    return f"{int(round(value))}" if axis == "n" else f"{value:.3g}"


def solve(
    sim: Simulator,
    measure: str,
    target: float,
    *,
    axis: str,
    fixed: float,
    table: pd.DataFrame,
    grid: Grid,
    search: tuple[float, float],
) -> Solution:
    """The smallest eps (or n) on ``axis`` at which ``measure`` reaches ``target``, verified by simulation.

    A value *reaches* the target when the one-sided :data:`CONFIDENCE` bound of its simulated
    estimate does (estimate − z·s.e. >= target, or + for a measure where lower is better).  The
    search brackets the answer between a value that does not reach and one that does: the first
    grid value that reaches and the grid value before it; else doubling above the grid or halving
    below it (at most :data:`SEARCH_STEPS` steps, never leaving ``search``).  It then bisects on
    log(axis) (:func:`dpstats.methods._search.smallest_reaching`), simulating each midpoint with
    the grid's trials, until the bracket is within :data:`TOLERANCE`; the value named is the
    smallest one simulated that reaches, never an interpolation between simulated values, so it
    does not depend on the grid beyond that tolerance and Monte Carlo error.  If the target is not
    reached within ``search`` the solution says so and gives no value.
    """
    other = "n" if axis == "eps" else "eps"
    part = table[(table.method == sim.method) & (table.measure == measure) & (table[other] == fixed)]
    pts = sorted(zip(part[axis].astype(float), part.estimate.astype(float), part.std_error.astype(float)))
    run = _Search(sim, measure, target, axis, fixed, grid, search, list(pts))
    hit = next((i for i, pt in enumerate(pts) if run.meets(pt)), None)
    if hit is not None and hit > 0:
        return run.bisect(pts[hit - 1], pts[hit], "within the grid")
    bracket = run.below(pts[0]) if hit == 0 else run.above(pts[-1])
    if isinstance(bracket, Solution):
        return bracket
    return run.bisect(*bracket, "bracketed beyond the grid")


@dataclass
class _Search:
    """The search of :func:`solve`: every point it evaluates is kept in ``evaluated``."""

    sim: Simulator
    measure: str
    target: float
    axis: str
    fixed: float
    grid: Grid
    search: tuple[float, float]
    evaluated: list

    @property
    def lower(self) -> bool:
        return self.measure in self.sim.lower_is_better

    def meets(self, point: tuple[float, float, float]) -> bool:
        """Whether the one-sided :data:`CONFIDENCE` bound of a simulated (x, estimate, s.e.) reaches the
        target (False where the measure is undefined or its s.e. unknown)."""
        _, est, se = point
        margin = _Z * se
        return est + margin <= self.target if self.lower else est - margin >= self.target

    def evaluate(self, x: float) -> tuple[float, float, float]:
        x = float(round(x)) if self.axis == "n" else float(x)
        known = next((pt for pt in self.evaluated if pt[0] == x), None)
        if known is not None:
            return known
        n, e = (int(x), self.fixed) if self.axis == "n" else (int(self.fixed), x)
        out = self.sim.run(n, np.array([e]), _generator(self.grid.seed, n), self.grid.trials)
        est, se = defined_mean_and_se(out[self.measure][0])
        self.evaluated.append((x, est, se))
        return x, est, se

    def done(self, point: tuple | None, status: str) -> Solution:
        other = "n" if self.axis == "eps" else "eps"
        prefix = "lower is better; " if self.lower else ""
        value, est, se = (None, None, None) if point is None else point
        return Solution(
            self.sim.method,
            self.measure,
            self.target,
            self.axis,
            {other: self.fixed},
            value,
            prefix + status,
            self.evaluated,
            est,
            se,
            CONFIDENCE,
            TOLERANCE,
        )

    def below(self, first: tuple) -> tuple | Solution:
        """Met at the smallest grid value: halve until it is not met (or the search range ends)."""
        above = first
        for _ in range(SEARCH_STEPS):
            x = above[0] / 2
            if x < self.search[0] or (self.axis == "n" and round(x) == round(above[0])):
                break
            pt = self.evaluate(x)
            if not self.meets(pt):
                return pt, above
            above = pt
        return self.done(above, f"reached at every {self.axis} searched, down to {above[0]:g}")

    def above(self, last: tuple) -> tuple | Solution:
        """Not met on the grid: double until it is met (or the search range ends)."""
        below = last
        for _ in range(SEARCH_STEPS):
            x = below[0] * 2
            if x > self.search[1]:
                break
            pt = self.evaluate(x)
            if self.meets(pt):
                return below, pt
            below = pt
        return self.done(
            None,
            f"not reached for {self.axis} up to {below[0]:g} (the search range ends at {self.search[1]:g})",
        )

    def bisect(self, below: tuple, above: tuple, where: str) -> Solution:
        """Bisect on log(axis) between a value that does not reach and one that does; name the smallest
        simulated value that reaches."""
        x = smallest_reaching(
            lambda v: self.meets(self.evaluate(v)), below[0], above[0], tolerance=math.log1p(TOLERANCE)
        )
        point = self.evaluate(x)  # already simulated: the search only returns values it evaluated
        return self.done(point, f"{where}, bisection on log {self.axis} to {TOLERANCE:.0%}")
