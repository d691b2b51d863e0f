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
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..simulate import mean_and_se
from ..simulate.chance import Chance as Chance
from ..simulate.chance import at_chance
from ..simulate.chance import selection_chance as selection_chance

BOUNDS = ("declared", "midpoint", None, "auto")

#: method -> predictor(n=, p=, eps=, model=) -> (eps left for the analysis, the model as the analysis sees it
#: under the private bounds (e.g. a wider bound_sds), a note for the plan).  Filled by the private-bounds
#: feature (issue 19, "Private bounds"; ``dpstats.planner`` registers dp_sis's); a method missing here cannot
#: plan bounds="auto" yet.  Re-exported as ``dpstats.planner.AUTO_BOUNDS`` (the same dict).
AUTO_BOUNDS: dict[str, Callable] = {}

#: how many halvings/doublings the bracketing search may take beyond the grid, and bisection steps after
SEARCH_STEPS = 8
BISECTIONS = 5


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
    """Rows where a measure does not beat its chance level by 2 Monte Carlo standard errors
    (:func:`dpstats.simulate.chance.at_chance`, the rule the front doors apply under ``assume=``)."""
    flagged = []
    for sim in sims:
        for measure, chance in sim.chance.items():
            part = table[(table.method == sim.method) & (table.measure == measure)]
            bad = part[at_chance(part.estimate, part.std_error, chance, measure in sim.lower_is_better)]
            for row in bad.itertuples():
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
                    }
                )
    return pd.DataFrame(
        flagged, columns=["method", "n", "eps", "measure", "estimate", "std_error", "chance", "why"]
    )


# ----------------------------------------------------------------------------- solving for a target


@dataclass
class Solution:
    """Where a measure reaches its target along one axis (eps or n), for one method and the other axis fixed."""

    method: str
    measure: str
    target: float
    axis: str
    fixed: dict
    value: float | None
    status: str
    evaluated: list[tuple[float, float, float]]

    def text(self) -> str:
        fixed = ", ".join(f"{k} = {v:g}" for k, v in self.fixed.items())
        head = f"{self.method}: {self.measure} {self._sign()} {self.target:g} ({fixed})"
        if self.value is None:
            return f"{head}: {self.status}"
        return f"{head}: needs {self.axis} ≈ {_fmt(self.value, self.axis)} ({self.status})"

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
    """The smallest eps (or n) on ``axis`` at which ``measure`` reaches ``target``.

    On the grid: the first grid value that meets the target, linearly
    interpolated in log(axis) with the grid value before it.  Off the grid:
    a bracketing search (doubling above the grid, halving below it, at most
    :data:`SEARCH_STEPS` steps, never leaving ``search``) followed by
    :data:`BISECTIONS` bisections in log scale.  If the target is not reached
    within ``search`` the solution says so and gives no value.
    """
    other = "n" if axis == "eps" else "eps"
    part = table[(table.method == sim.method) & (table.measure == measure) & (table[other] == fixed)]
    pts = sorted(zip(part[axis].astype(float), part.estimate.astype(float), part.std_error.astype(float)))
    run = _Search(sim, measure, target, axis, fixed, grid, search, list(pts))
    hit = next((i for i, pt in enumerate(pts) if run.meets(pt[1])), None)
    if hit is not None and hit > 0:
        return run.done(_interpolate(pts[hit - 1], pts[hit], target), "interpolated on the grid")
    bracket = run.below(pts[0]) if hit == 0 else run.above(pts[-1])
    if isinstance(bracket, Solution):
        return bracket
    return run.done(_interpolate(*run.bisect(*bracket), target), "found by bracketing search beyond the grid")


@dataclass
class _Search:
    """The bracketing search of :func:`solve`: every point it evaluates is kept in ``evaluated``."""

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

    def meets(self, value: float) -> bool:
        return value <= self.target if self.lower else value >= self.target

    def evaluate(self, x: float) -> tuple[float, float, float]:
        x = float(round(x)) if self.axis == "n" else float(x)
        n, e = (int(x), self.fixed) if self.axis == "n" else (int(self.fixed), x)
        out = self.sim.run(n, np.array([e]), _generator(self.grid.seed, n), self.grid.trials)
        est, se = defined_mean_and_se(out[self.measure][0])
        self.evaluated.append((x, est, se))
        return x, est, se

    def done(self, value: float | None, status: str) -> Solution:
        other = "n" if self.axis == "eps" else "eps"
        prefix = "lower is better; " if self.lower else ""
        return Solution(
            self.sim.method,
            self.measure,
            self.target,
            self.axis,
            {other: self.fixed},
            value,
            prefix + status,
            self.evaluated,
        )

    def below(self, first: tuple) -> tuple | Solution:
        """Met at the smallest grid value: halve until it is not met (or the search range ends)."""
        above = first
        for _ in range(SEARCH_STEPS):
            x = above[0] / 2
            if x < self.search[0] or (self.axis == "n" and round(x) == round(above[0])):
                break
            pt = self.evaluate(x)
            if not self.meets(pt[1]):
                return pt, above
            above = pt
        return self.done(above[0], f"reached at every {self.axis} searched, down to {above[0]:g}")

    def above(self, last: tuple) -> tuple | Solution:
        """Not met on the grid: double until it is met (or the search range ends)."""
        below = last
        for _ in range(SEARCH_STEPS):
            x = below[0] * 2
            if x > self.search[1]:
                break
            pt = self.evaluate(x)
            if self.meets(pt[1]):
                return below, pt
            below = pt
        return self.done(
            None,
            f"not reached for {self.axis} up to {below[0]:g} (the search range ends at {self.search[1]:g})",
        )

    def bisect(self, below: tuple, above: tuple) -> tuple[tuple, tuple]:
        for _ in range(BISECTIONS):
            mid = math.sqrt(below[0] * above[0])
            if self.axis == "n" and abs(round(mid) - below[0]) < 1:
                break
            pt = self.evaluate(mid)
            below, above = (below, pt) if self.meets(pt[1]) else (pt, above)
        return below, above


def _interpolate(a: tuple, b: tuple, target: float) -> float:
    """Linear in log(x) between two (x, estimate, se) points straddling the target."""
    (x0, f0, _), (x1, f1, _) = a, b
    if f1 == f0:
        return x1
    t = min(max((target - f0) / (f1 - f0), 0.0), 1.0)
    return float(math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0))))
