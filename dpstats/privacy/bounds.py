"""Private bounds: DP quantiles over a public geometric grid (``bounds="auto"``).

Mechanism (Smith 2011, "Privacy-preserving statistical estimation with
optimal convergence rates"; the scoring of OpenDP's
``make_quantile_score_candidates``): to release an α-quantile of values
x_1..x_n, score every candidate c of a *public* grid by

    u(c) = −|(1 − α)·#{i: x_i < c} − α·#{i: x_i > c}|,

which is −n·|F_n(c) − α| when no value equals c, and draw one candidate by the
exponential mechanism, P(c) ∝ μ(c)·exp(ε·u(c)/(2Δu)) (McSherry & Talwar 2007)
with a public base measure μ (:func:`base_measure`: a factor e per octave
away from the public scale ``hint``, and another beyond ±hint in the bound's
outward direction, so that the tie among candidates beyond the data is broken
towards the data),
sampled by the Gumbel-max trick of :func:`dpstats.privacy.topk.oneshot_gumbel`
with k = 1 (the released value is a choice among public candidates, so
numpy's generator draws it; no real number is computed from the data).

Sensitivity of u (derived here, stated in every ledger entry):

* replace one row: a row leaving {x < c} for {x > c} moves (1 − α)L − αG by
  −(1 − α) − α = −1; every other move by (1 − α) or α.  Δu = 1.
* add/remove one row: L or G (not both) moves by one: Δu = max(α, 1 − α).
  The raw n enters u only through these counts, so n needs no separate
  noising: the guarantee covers it.

Accuracy (Dwork & Roth 2014, Theorem 3.11): with probability >= 1 − β the
released c has |u(c) − max u| <= 2Δu(ln m + ln(1/β))/ε over m candidates,
i.e. its empirical level is within :func:`quantile_error` of α (plus the gap
of the grid).  Candidates are ±hint·2^(j/128), |j| <= 2560 (2^-20..2^20 times a
public ``hint``), and 0: 10 243 candidates, 0.54% apart (concentrated data,
e.g. row maxima of microarrays, need the fine grid).

Levels.  An extreme level cannot be resolved when n·ε is small: every
candidate beyond the data scores alike (−(1 − α)·n), and the mechanism then
wanders over the whole grid.  At α = 1 − error those m candidates weigh at
most m·exp(−ε·error·n/2) = β together, so under replace-one-row (n public)
the level used is ``max(0.5, min(α, 1 − error))``: with probability >= 1 − β
the bound lands within the data.  Under add/remove (n private) the level
asked for is used unchanged.  The level used is stated.

Composition over columns (``mode``):

* ``"pooled"``: one box for all columns from one value per row — the row's
  smallest and largest entry (a lower and an upper quantile, 2 mechanisms of
  sensitivity Δu each; a row's replacement moves each count by at most one);
  the l2 norm bound is one mechanism on the row norms.
* ``"per_column"``: a lower and an upper quantile for each of d columns,
  2d mechanisms.  They compose by basic composition (ε_b/(2d) each), or, when
  the bounds step has a δ share, in zCDP: each ε_j-exponential mechanism is
  ε_j²/8-zCDP (Cesar & Rogers 2021), ρ_b = ρ(ε_b, δ_b) (Canonne, Kamath &
  Steinke 2020: :mod:`.calibration`) is split evenly, whichever gives the larger ε_j.
  Basic composition spends no δ (a norm bound's one quantile always, a pooled box's
  2 or 4 as a rule): the δ share set aside then goes back to the analysis.
* ``"auto"``: per-column when :func:`predict_bound_error` for it is at most
  ``tolerance`` (0.05 of level), else pooled; under add/remove (n private)
  pooled.

Degenerate columns (all values equal): both quantiles land on neighbouring
candidates; a released box with lo >= hi is widened to the grid points
around it (post-processing), so it is always a valid box.  Missing and
non-finite values are dropped with their rows before (the front doors' rule).
Conventions: docs/architecture.md, "Private bounds".
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field, replace
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypeAlias

import numpy as np

from ..errors import ChanceWarning, DPStatsError, PrivacyParameterError, caller_stacklevel
from ..formula import ModelFrame, columns_read, dummy_columns, interaction_parts
from ..geometry import Box, BoundsSpec, derived_bounds, resolve_box
from ..formula._design import INTERCEPT
from .accountant import LedgerEntry, remainder
from .plan import Plan
from .calibration import em_eps, rho_from_eps_delta
from .topk.family import oneshot_gumbel

OCTAVES = 20
PER_OCTAVE = 128
DEFAULT_SHARE = 0.1
DEFAULT_LEVEL = 0.99
FAILURE = 0.1
TOLERANCE = 0.05
# below this level a bound is noise: with probability 1 − β an upper bound's empirical level is at least
# level − error = 2·level − 1 (error = 1 − level at the floor), which reaches the median only from 0.75
USEFUL_LEVEL = 0.75
MODES = ("auto", "pooled", "per_column")
MECHANISM = "exponential mechanism over a public geometric grid (DP quantile, Smith 2011)"


def candidate_grid(hint: float = 1.0, *, signed: bool = True) -> np.ndarray:
    """The public candidates: ±hint·2^(j/128), |j| <= 2560, and 0 (``signed``), sorted.

    Examples
    --------
    >>> g = candidate_grid()
    >>> g.size, bool(g[0] == -(2.0**20)), bool(g[-1] == 2.0**20)
    (10243, True, True)
    >>> candidate_grid(signed=False).size
    5121
    """
    steps = np.arange(-OCTAVES * PER_OCTAVE, OCTAVES * PER_OCTAVE + 1) / PER_OCTAVE
    magnitudes = hint * np.exp2(steps)
    return np.concatenate([-magnitudes[::-1], [0.0], magnitudes]) if signed else magnitudes


def utility_sensitivity(level: float, neighbouring: str) -> float:
    """Δu of the quantile score: 1 (replace one row), max(α, 1 − α) (add/remove)."""
    return 1.0 if neighbouring == "replace" else max(level, 1.0 - level)


def quantile_utility(values: np.ndarray, candidates: np.ndarray, level: float) -> np.ndarray:
    """u(c) = −|(1 − α)·#{x < c} − α·#{x > c}| for every candidate c (sorted).

    Examples
    --------
    >>> quantile_utility(np.arange(10.0), np.array([-1.0, 4.5, 20.0]), 0.5).tolist()
    [-5.0, -0.0, -5.0]
    """
    s = np.sort(np.asarray(values, dtype=float))
    below = np.searchsorted(s, candidates, side="left")
    above = s.size - np.searchsorted(s, candidates, side="right")
    return -np.abs((1.0 - level) * below - level * above)


def base_measure(candidates: np.ndarray, side: str | None, hint: float = 1.0) -> np.ndarray:
    """Log weights of the public base measure over the candidates.

    For a bound (``side`` ``"upper"`` or ``"lower"``): −|log2(|c|/hint)| (one
    nat per octave away from the public scale, 0 itself exempt) minus the
    octaves beyond ±hint in the bound's outward direction (upward for an
    upper bound, downward for a lower one); ``None``: uniform.
    Data-independent, so the mechanism stays eps-DP with any of them
    (McSherry & Talwar 2007 state the exponential mechanism over a base
    measure).  It breaks the tie among candidates beyond the data, which all
    score −(1 − α)·n, towards the data, and keeps the log grid's many
    candidates near 0 from outweighing the data when n·eps is small.

    Examples
    --------
    >>> base_measure(np.array([-4.0, -1.0, 0.0, 0.5, 4.0]), "upper").tolist()
    [-2.0, 0.0, 0.0, -1.0, -4.0]
    """
    c = np.asarray(candidates, dtype=float)
    if side is None:
        return np.zeros(c.size)
    outward = c / hint if side == "upper" else -c / hint
    with np.errstate(divide="ignore"):
        magnitude = np.where(c == 0, 0.0, np.abs(np.log2(np.abs(c) / hint)))
    return 0.0 - magnitude - np.log2(np.maximum(outward, 1.0))


def _logits(values, candidates, level, eps, neighbouring, side, hint) -> np.ndarray:
    """Exponent of P(c) ∝ μ(c)·exp(ε·u(c)/(2Δu))."""
    u = quantile_utility(values, candidates, level)
    return eps * u / (2.0 * utility_sensitivity(level, neighbouring)) + base_measure(candidates, side, hint)


def quantile_law(
    values: np.ndarray,
    candidates: np.ndarray,
    level: float,
    eps: float,
    neighbouring: str = "replace",
    side: str | None = None,
    hint: float = 1.0,
) -> np.ndarray:
    """Exact output probabilities of :func:`private_quantile` (for audits and tests)."""
    logits = _logits(values, candidates, level, eps, neighbouring, side, hint)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def private_quantile(
    values: np.ndarray,
    level: float,
    candidates: np.ndarray,
    eps: float,
    rng: np.random.Generator,
    neighbouring: str = "replace",
    side: str | None = None,
    hint: float = 1.0,
) -> float:
    """An eps-DP α-quantile of ``values``: one candidate drawn by the exponential mechanism.

    ``side`` and ``hint`` choose the base measure (:func:`base_measure`):
    ``"upper"`` for an upper bound, ``"lower"`` for a lower one.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> q = private_quantile(x, 0.5, candidate_grid(), 1.0, np.random.default_rng(1))
    >>> abs(q) < 0.1
    True
    """
    # oneshot_gumbel draws j with probability ∝ exp((eps/2)·score_j): score = logits/(eps/2)
    scores = _logits(values, candidates, level, eps, neighbouring, side, hint) * (2.0 / eps)
    return float(candidates[oneshot_gumbel(scores, 1, eps, rng)[0]])


def quantile_error(n: int, eps_each: float, m: int, failure: float = FAILURE) -> float:
    """Level error of one released quantile with probability >= 1 − β (Δu = 1).

    2(ln m + ln(1/β))/(ε·n) (Dwork & Roth 2014, Theorem 3.11, divided by n).

    Examples
    --------
    >>> round(quantile_error(10_000, 0.1, 10_243), 4)
    0.0231
    """
    return 2.0 * (math.log(m) + math.log(1.0 / failure)) / (eps_each * n)


def mechanism_count(mode: str, d: int, norm: bool = False) -> int:
    """Quantiles released: 1 for a norm bound, 2 (pooled box) or 2d (per-column box)."""
    if norm:
        return 1
    return 2 if mode == "pooled" else 2 * d


def split_budget(eps: float, delta: float, count: int) -> tuple[float, float, str]:
    """ε of each of ``count`` quantiles, the δ used, and how they compose.

    Basic composition gives ε/count each (δ = 0); with δ > 0, zCDP gives
    em_eps(ρ(ε, δ)/count) (each exponential mechanism ε_j²/8-zCDP; ρ(ε, δ) by
    Canonne, Kamath & Steinke 2020, :func:`~.calibration.rho_from_eps_delta`).  The
    larger ε_j is taken.

    Examples
    --------
    >>> split_budget(1.0, 0.0, 4)[0]
    0.25
    >>> split_budget(1.0, 1e-6, 2000)[2].startswith("zCDP")
    True
    """
    basic = eps / count
    if delta > 0 and count > 1:
        zcdp = em_eps(rho_from_eps_delta(eps, delta) / count)
        if zcdp > basic:
            how = f"zCDP: {count} exponential mechanisms, ε_j²/8 each (Cesar & Rogers 2021; Canonne, Kamath & Steinke 2020)"
            return zcdp, delta, how
    return basic, 0.0, f"basic composition of {count} exponential mechanisms"


def predict_bound_error(
    n: int,
    d: int,
    eps_bounds: float,
    *,
    delta_bounds: float = 0.0,
    mode: str = "per_column",
    norm: bool = False,
    failure: float = FAILURE,
) -> float:
    """Predicted level error of each released bound, from public inputs only.

    With probability >= 1 − ``failure`` each released bound's empirical level
    is within this of its target (grid gap aside).  For the planner.

    Examples
    --------
    >>> predict_bound_error(100, 2000, 0.5, mode="per_column") > 1
    True
    >>> predict_bound_error(10_000, 2000, 1.0, mode="pooled") < 0.01
    True
    """
    count = mechanism_count(mode, d, norm)
    eps_each = split_budget(eps_bounds, delta_bounds, count)[0]
    return quantile_error(n, eps_each, candidate_grid().size, failure)


def choose_mode(
    n: int | None, d: int, eps_bounds: float, delta_bounds: float = 0.0, tolerance: float = TOLERANCE
) -> str:
    """The documented rule: per-column when its predicted error is <= ``tolerance``, else pooled.

    ``n=None`` (add/remove: n private) gives pooled.

    Examples
    --------
    >>> choose_mode(100_000, 2, 1.0), choose_mode(100, 12_625, 1.0), choose_mode(None, 2, 1.0)
    ('per_column', 'pooled', 'pooled')
    """
    if n is None:
        return "pooled"
    per_column = predict_bound_error(n, d, eps_bounds, delta_bounds=delta_bounds, mode="per_column")
    return "per_column" if per_column <= tolerance else "pooled"


def usable_level(target: float, n: int | None, eps_each: float, m: int) -> float:
    """The level used: ``max(0.5, min(target, 1 − error))``; the target itself when n is private.

    Examples
    --------
    >>> usable_level(0.99, 10_000, 1.0, 10_243), usable_level(0.99, 100, 0.1, 10_243)
    (0.99, 0.5)
    """
    if n is None:
        return target
    return max(0.5, min(target, 1.0 - quantile_error(n, eps_each, m)))


@dataclass(frozen=True)
class AutoBounds:
    """Options of ``bounds="auto"`` (``bounds=AutoBounds(...)`` to change them).

    Parameters
    ----------
    share : float in (0, 1)
        Share of the analysis' eps spent on the bounds (and of its delta, when the
        quantiles compose in zCDP; else the analysis keeps all of delta); default 0.1.
    eps : float, optional
        An absolute eps for the bounds instead (less than the analysis' eps).
    mode : {"auto", "pooled", "per_column"}
        How bounds compose over columns (module docstring); default by the rule
        of :func:`choose_mode`.
    level : float in (0.5, 1)
        Target quantile level of the upper bounds (1 − level for the lower);
        default 0.99; lowered as stated when n·eps cannot resolve it.
    hint : float > 0
        Public scale: the grid is ±hint·2^-20..2^20; default 1.

    Examples
    --------
    >>> AutoBounds(share=0.2).share
    0.2
    """

    share: float = DEFAULT_SHARE
    eps: float | None = None
    mode: str = "auto"
    level: float = DEFAULT_LEVEL
    hint: float = 1.0

    def eps_of(self, eps: float) -> float:
        """The eps the bounds take out of an analysis's ``eps``: ``eps`` if set, else ``share`` of it."""
        return self.eps if self.eps is not None else self.share * eps

    def __post_init__(self) -> None:
        _real(self.share, "AutoBounds share (the share of eps spent on bounds)")
        if not 0 < self.share < 1:
            raise PrivacyParameterError(
                f"the share of eps spent on private bounds must be in (0, 1), got {self.share}; e.g. 0.1."
            )
        if self.eps is not None:
            _real(self.eps, "bounds_eps")
            if not (math.isfinite(self.eps) and self.eps > 0):
                raise PrivacyParameterError(f"bounds_eps must be a positive finite number, got {self.eps}.")
        if self.mode not in MODES:
            raise PrivacyParameterError(f"AutoBounds mode must be one of {list(MODES)}, got {self.mode!r}.")
        _real(self.level, "AutoBounds level")
        if not 0.5 < self.level < 1:
            raise PrivacyParameterError(f"AutoBounds level must be in (0.5, 1), got {self.level}; e.g. 0.99.")
        _real(self.hint, "AutoBounds hint")
        if not (math.isfinite(self.hint) and self.hint > 0):
            raise PrivacyParameterError(
                f"AutoBounds hint is a public scale and must be a positive finite number, got {self.hint}; "
                "the sign of the data is found by the mechanism (the grid is symmetric)."
            )


Bounds: TypeAlias = BoundsSpec | Literal["auto"] | AutoBounds
"""``bounds=`` of a door that offers private bounds: declared (lo, hi) or per variable, ``"auto"``
or :class:`AutoBounds` (released privately first), or None (the data's range, a named step)."""
RowNormBound: TypeAlias = float | Literal["auto"] | AutoBounds | None
"""dp_knockoff's ``bounds=``: one public bound B on the l2 norm of each row, or private, or None."""


def _real(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a number, got {value!r}.")


@dataclass
class PrivateBounds:
    """The private-bounds step of one analysis: its budget, its releases and its ledger entry.

    Made by the front door (:func:`bounds_step`)
    before the data is read; :meth:`box` and :meth:`norm` run the mechanisms
    when the frame is built; the skeleton charges :meth:`entry` with the
    method's ledger, before the release.

    Examples
    --------
    >>> step = PrivateBounds(AutoBounds(), eps=1.0, delta=0.0, neighbouring="replace")
    >>> step.start(np.random.default_rng(0))
    >>> X = np.random.default_rng(1).normal(size=(5000, 3))
    >>> box = step.box(X, ["a", "b", "c"])
    >>> lo, hi = box["a"]
    >>> bool(-4 < lo < -1.5 and 1.5 < hi < 4)
    True
    """

    options: AutoBounds
    eps: float
    delta: float
    neighbouring: str
    generator: np.random.Generator | None = field(default=None, repr=False)
    # the door whose options record holds the analysis's budget: the delta set aside for these bounds
    # and not spent by them goes back to it (_hand_back)
    analysis: Any = field(default=None, repr=False)
    released: dict[str, tuple[float, float]] = field(default_factory=dict)
    row_norm: float | None = None
    mode: str | None = None
    level: float | None = None
    composition: str = ""
    delta_used: float = 0.0
    what: list[str] = field(default_factory=list)
    requested: tuple[float, float] = (math.nan, math.nan)
    min_level: float = 0.0  # set by a door whose estimates clipping would bias (dp_lm: 0.95)
    min_level_for: str = ""
    # rows were dropped (na_action="omit"): n is read from the rows, and no text may quote it
    n_private: bool = False
    draws: int = 0  # quantiles drawn from the rows so far: once one is, the step must be charged
    # False once levels were read from the rows (formula.columns_read): the number of columns, hence of
    # quantiles and every level or eps derived from it, depends on the data, and the refusal quotes none
    columns_shown: bool = True
    name_steps: Callable[[Any], None] | None = field(default=None, repr=False)

    def start(
        self,
        generator: np.random.Generator,
        name_steps: Callable[[Any], None] | None = None,
        analysis: Any = None,
    ) -> None:
        """Hand the step the release's generator (the skeleton does, before the frame), what names a
        model frame's data-dependent steps (:meth:`~dpstats.privacy.statement.DataDependence.name_frame_steps`):
        run on the frame before the first draw, so that strict refuses them before anything is drawn, and
        the door whose ``options`` record gets back the delta these bounds do not spend (:meth:`_hand_back`)."""
        self.generator = generator
        self.name_steps = name_steps
        self.analysis = analysis

    def frame_ready(self, mf: ModelFrame) -> None:
        """The frame the bounds are drawn for: its steps are named now, before the draw (idempotent)."""
        self.n_private = bool(getattr(mf, "n_data_dependent", False))
        self.columns_shown = not columns_read(mf)
        if self.name_steps is not None and not self.draws:
            self.name_steps(mf)

    def _draw(
        self, values: np.ndarray, level: float, eps_each: float, side: str, signed: bool = True
    ) -> float:
        if self.generator is None:
            raise AssertionError("PrivateBounds.start() must be called before a mechanism runs")
        grid = candidate_grid(self.options.hint, signed=signed)
        self.draws += 1  # counted before the draw: an error inside it still finds the step drawn
        return private_quantile(
            values, level, grid, eps_each, self.generator, self.neighbouring, side, self.options.hint
        )

    def _plan(self, n: int, d: int, count: int, mode: str) -> float:
        eps_each, self.delta_used, self.composition = split_budget(self.eps, self.delta, count)
        self._hand_back()
        public_n = n if self.neighbouring == "replace" else None
        self.mode = mode
        self.level = usable_level(self.options.level, public_n, eps_each, candidate_grid().size)
        shown_n = None if self.n_private else public_n
        if self.level < min(self.min_level, self.options.level):
            needs = f"{self.min_level_for} needs level {min(self.min_level, self.options.level):g} or more"
            raise PrivacyParameterError(self._too_coarse(shown_n, count, needs) + " Nothing was spent.")
        if self.level < min(USEFUL_LEVEL, self.options.level) and not self.draws:
            needs = (
                f"bounds that are not noise (each column's median inside the box) need level {USEFUL_LEVEL:g}"
            )
            text = self._too_coarse(shown_n, count, needs, target=USEFUL_LEVEL)
            warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
        return eps_each

    def _hand_back(self) -> None:
        """Give the analysis the delta set aside for these bounds that they do not spend.

        :func:`bounds_step` sets ``delta`` aside before the rows are read; whether the quantiles use it
        (zCDP) or not (basic composition: pure DP) follows from the mode and their number, known only
        now.  The analysis then has the call's delta less what the bounds spend, so that the ledger
        sums to the call's (eps, delta) either way.  Its eps is the call's less the bounds' as before.
        A door that copied its options before the draw (dp_gmm's resolved ones) takes delta from
        ``options`` after it.
        """
        if self.analysis is None or self.delta_used == self.delta:
            return
        rest = remainder(self.requested[1], [self.delta_used])
        self.analysis.options = replace(self.analysis.options, delta=rest)

    def _too_coarse(self, n: int | None, count: int, needs: str, target: float | None = None) -> str:
        """Why n·eps cannot resolve ``target`` (default ``min_level``) and what to do (public inputs only).

        ``n`` is None where it is private (add/remove-one-row, or rows dropped for missing values):
        the text then quotes no number that follows from it.  With ``columns_shown`` False the count of
        quantiles follows the design's columns, read from the rows: the text then quotes neither it nor
        what follows from it (the level resolved, the bounds_eps needed).
        """
        target = min(self.min_level, self.options.level) if target is None else target
        declare = (
            "Declare public bounds= (the usual fix: a rounded range every value lies in, known without "
            "looking at the rows), or "
        )
        if n is None:  # the level, the mode and the count of quantiles all follow from n here: none is quoted
            return (
                f'bounds="auto" with bounds_eps = {self.eps:g} cannot resolve quantile level {target:g} from '
                "the rows analysed (their number is private, so it is not quoted): each bound may land far "
                f"inside the data and clip much of each column. {declare}raise bounds_eps or n."
            )
        if not self.columns_shown:
            return (
                f'bounds="auto" with bounds_eps = {self.eps:g} cannot resolve quantile level {target:g}; '
                f"{needs}: the private quantiles drawn, and so the level each resolves and the bounds_eps that "
                "would be enough, follow the number of design columns (levels were read from the rows, so it "
                f"is not shown). {declare}declare the levels (levels=) to see the bounds_eps needed."
            )
        said = (
            f'bounds="auto" with n = {n} and bounds_eps = {self.eps:g} ({count} private quantiles) can only '
            f"resolve quantile level {self.level:.3g}, so about {1 - self.level:.0%} of each column would lie "
            f"beyond each bound and be clipped; {needs}{self._rows_enough(n, count, target)}. "
        )
        return said + declare + self._eps_fix(n, count, target)

    def _eps_fix(self, n: int, count: int, target: float) -> str:
        """ "raise bounds_eps to X or more (...)": the least bounds eps that resolves ``target`` at n rows."""
        m = candidate_grid().size

        def level_at(eps_b: float) -> float:
            return usable_level(
                self.options.level, n, split_budget(eps_b, self.delta * eps_b / self.eps, count)[0], m
            )

        lo, hi = self.eps, self.eps
        while level_at(hi) < target and hi < 1e9:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = (lo + hi) / 2.0
            lo, hi = (lo, mid) if level_at(mid) >= target else (mid, hi)
        total = self.requested[0]
        return (
            f"raise bounds_eps to {hi:.3g} or more (of eps = {total:g}, leaving {total - hi:.3g} for the fit)."
            if math.isfinite(total) and hi < total
            else f"raise n: bounds_eps would need {hi:.3g}, more than eps = {total:g}."
        )

    def _rows_enough(self, n: int | None, count: int, target: float) -> str:
        """ ", which this bounds_eps reaches from n = N rows": N from :func:`quantile_error` (public inputs;
        empty when n is private)."""
        if n is None:
            return ""
        eps_each = split_budget(self.eps, self.delta, count)[0]
        m = candidate_grid().size
        rows = math.ceil(quantile_error(1, eps_each, m) / (1.0 - target))
        return f", which bounds_eps = {self.eps:g} reaches from n = {rows} rows"

    def box(
        self, X: np.ndarray, names: list[str], y: np.ndarray | None = None, response: str | None = None
    ) -> dict[str, tuple[float, float]]:
        """Private (lo, hi) for every column of ``X`` (and for ``y``), as a ``bounds=`` mapping.

        The budget is split over every quantile released here (module
        docstring); ``y``, when given, is bounded as one more column.
        """
        X = np.asarray(X, dtype=float)
        X = X.reshape(len(X), -1) if X.ndim != 2 else X  # (0, d) stays (0, d): n may be private and 0
        n, d = X.shape
        eps_each = self.plan_box(n, d, y is not None)
        mode = self.mode
        out: dict[str, tuple[float, float]] = {}
        if mode == "pooled" and d:
            pair = self._pair(X.min(axis=1), X.max(axis=1), eps_each)
            out = {nm: pair for nm in names}
        else:
            for j, nm in enumerate(names):
                out[nm] = self._pair(X[:, j], X[:, j], eps_each)
        if y is not None:
            out[response] = self._pair(y, y, eps_each)
        self.released = out
        self.what = [f"{mode} box of the {d} design column(s)"] + (
            [f"box of the response '{response}'"] if y is not None else []
        )
        return dict(out)

    def plan_box(self, n: int, d: int, response: bool) -> float:
        """Mode, level and ε of each quantile of a box for n rows and d columns (public inputs; no draw).

        Raises :class:`~dpstats.errors.PrivacyParameterError` when the level falls
        below ``min_level``, so a door can check before anything is spent.
        """
        public_n = n if self.neighbouring == "replace" else None
        mode = self.options.mode
        if mode == "auto":
            mode = "per_column" if d == 1 else choose_mode(public_n, d, self.eps, self.delta)
        count = mechanism_count(mode, d) + (2 if response else 0)
        return self._plan(n, d, count, mode)

    def _pair(self, low_values: np.ndarray, high_values: np.ndarray, eps_each: float) -> tuple[float, float]:
        lo = self._draw(low_values, 1.0 - self.level, eps_each, "lower")
        hi = self._draw(high_values, self.level, eps_each, "upper")
        if lo >= hi:  # post-processing: the grid points around the pair (a constant column lands here)
            grid = candidate_grid(self.options.hint)
            lo, hi = min(lo, hi), max(lo, hi)
            lo = float(grid[max(np.searchsorted(grid, lo, side="left") - 1, 0)])
            hi = float(grid[min(np.searchsorted(grid, hi, side="right"), grid.size - 1)])
        return lo, hi

    def norm(self, X: np.ndarray) -> float:
        """A private upper bound B on the rows' l2 norms: their ``level``-quantile."""
        X = np.asarray(X, dtype=float)
        eps_each = self._plan(X.shape[0], X.shape[1], 1, "pooled")
        with np.errstate(over="ignore"):
            norms = np.linalg.norm(X, axis=1)
        self.row_norm = self._draw(norms, self.level, eps_each, "upper", signed=False)
        self.what = ["bound B on the rows' l2 norms"]
        return self.row_norm

    def entry(self) -> LedgerEntry:
        """The ledger entry of this step (after :meth:`box` or :meth:`norm` ran)."""
        if self.mode is None:
            raise AssertionError("the private-bounds step was set up but never ran")
        sens = utility_sensitivity(self.level, self.neighbouring)
        relation = "replace one row" if self.neighbouring == "replace" else "add/remove one row"
        return LedgerEntry(
            step="private bounds: " + "; ".join(self.what),
            mechanism=MECHANISM,
            eps=self.eps,
            delta=self.delta_used,
            sensitivity=f"Δu = {sens:g} (counts below/above a candidate, {relation})",
            note=f"quantile level {self.level:g}; {self.composition}; grid ±{self.options.hint:g}·2^±20",
            event=(  # exponential mechanisms: ε_j²/8 each, at most eps²/8 in all under basic composition
                {"kind": "zcdp", "rho": rho_from_eps_delta(self.eps, self.delta_used)}
                if self.delta_used > 0
                else {"kind": "pure", "eps": self.eps, "rho": self.eps**2 / 8.0}
            ),
        )

    def zcdp_cost_range(self) -> tuple[float, float]:
        """The least and the largest ρ :meth:`entry` can charge, from public inputs (before any draw).

        The entry is ``zcdp`` at ρ(eps, delta) when the quantiles compose in zCDP (delta > 0 and many
        quantiles), else ``pure`` at eps²/8; which one depends on n and the columns, not on the values.
        """
        rhos = [self.eps**2 / 8.0] + ([rho_from_eps_delta(self.eps, self.delta)] if self.delta > 0 else [])
        return min(rhos), max(rhos)

    def check_affordable(self, accountant: Any, public_rho: float = 0.0) -> None:
        """Under a zCDP accountant, refuse before any draw a call that cannot fit: these bounds at their
        largest cost (so that a later refusal can always charge them), or the call at its least cost
        from public inputs (the bounds' least ρ and ``public_rho``, the method's plan's; see
        :meth:`~dpstats.methods._options.Options.public_rho`).  Basic composition was checked on the
        whole (eps, delta) before anything was read."""
        if accountant is None:
            return
        accountant.check_steps({"bounded_range"})  # exponential mechanisms: a session's Gaussian slot refuses
        least, most = self.zcdp_cost_range()
        accountant.check_rho(least + public_rho, least=True)
        accountant.check_rho(most, least=True)

    def charged_refusal(self, err: Exception, accountant: Any, label: str) -> Exception:
        """After a draw, the error a call raises: the step is charged first (to ``accountant`` when
        there is one), and the error says so.

        A quantile drawn from the rows is a release whatever follows it: an error that came after it
        for free could be repeated at will, each time with a fresh draw shaping whether it occurs (and,
        before, its text).  Charged, the bounds are a released value, which a message may quote.
        A :class:`~dpstats.errors.DPStatsError` is returned as the same class with the sentence added
        ("Nothing was spent" becomes "Nothing but the private bounds was spent"); any other error
        gets it as a note.
        """
        entry = self.entry()
        if accountant is not None:
            accountant.spend([entry], label=f"{label}: private bounds, drawn before the call was refused")
        where = " to the accountant" if accountant is not None else ""
        delta = f", delta = {entry.delta:g}" if entry.delta > 0 else ""
        said = (
            f"The private bounds (eps = {entry.eps:g}{delta}) had been drawn from the rows before this "
            f"error, so their share was charged{where}: it is spent."
        )
        if not isinstance(err, DPStatsError):
            err.add_note(said)
            return err
        text = str(err).replace("Nothing was spent", "Nothing but the private bounds was spent")
        out = type(err)(f"{text} {said}")
        out.__cause__, out.__suppress_context__ = err.__cause__, True
        return out.with_traceback(err.__traceback__)

    def add_to(self, plan: Plan) -> None:
        """Put this step's ledger entry first in the method's plan, and its note in the statement."""
        if self.mode is None:
            raise PrivacyParameterError(
                'bounds="auto" is not used by this analysis (no declared bounds are needed with these '
                "options); drop bounds=. Nothing was spent."
            )
        plan.entries = [self.entry()] + list(plan.entries)
        plan.notes = list(plan.notes) + [self.statement_note()]
        plan.sensitivities = {"private bounds": self.entry().sensitivity, **plan.sensitivities}

    def statement_note(self) -> str:
        """The sentence the privacy statement carries."""
        return (
            f"Bounds were computed privately ({self.mode}, quantile level {self.level:g} and "
            f"{1 - self.level:g}, eps = {self.eps:g}) and are released; values beyond them were clipped."
        )

    def to_dict(self) -> dict:
        """The released bounds and how they were obtained (public: they are DP outputs)."""
        return {
            "mode": self.mode,
            "level": self.level,
            "eps": self.eps,
            "delta": self.delta_used,
            "bounds": {k: list(v) for k, v in self.released.items()},
            "row_norm_bound": self.row_norm,
        }


def is_auto(bounds: Any) -> bool:
    """True for ``bounds="auto"``, an :class:`AutoBounds` or its step."""
    return isinstance(bounds, (AutoBounds, PrivateBounds)) or (isinstance(bounds, str) and bounds == "auto")


def auto_bounds(bounds: Any, eps: float, *, bounds_eps: float | None, streamed: str | None) -> Any:
    """``bounds`` as given, or the checked :class:`AutoBounds` it asks for.

    ``bounds="auto"`` becomes ``AutoBounds()``; ``bounds_eps`` (allowed with it only)
    replaces its eps.  Refused before anything is read: data not in memory (``streamed``
    names its type: streamed, Dask or DuckDB data), an infinite eps, and a bounds eps that
    leaves nothing for the analysis.

    Examples
    --------
    >>> auto_bounds("auto", 1.0, bounds_eps=0.2, streamed=None).eps
    0.2
    """
    if isinstance(bounds, str) and bounds == "auto":
        bounds = AutoBounds()
    if not isinstance(bounds, AutoBounds):
        if bounds_eps is not None:
            raise PrivacyParameterError(
                'bounds_eps applies only with bounds="auto"; drop it or set bounds="auto".'
            )
        return bounds
    if streamed is not None:
        raise PrivacyParameterError(
            f'bounds="auto" needs the data in memory (a data frame), got {streamed}; for streamed, '
            "Dask, DuckDB or polars LazyFrame data declare public bounds=, or compute private bounds on an "
            "in-memory sample (or frame: a LazyFrame's .collect()) first."
        )
    if eps is None or not math.isfinite(eps):
        raise PrivacyParameterError(
            'bounds="auto" spends part of a finite eps (DP mode); give a finite eps or declare bounds=.'
        )
    if bounds_eps is not None:
        bounds = replace(bounds, eps=bounds_eps)
    eps_b = bounds.eps_of(eps)
    if not eps_b < eps:
        raise PrivacyParameterError(
            f"bounds_eps = {eps_b:g} must be less than eps = {eps:g}: the rest of eps pays for the analysis."
        )
    return bounds


def bounds_step(
    bounds: Any,
    eps: float,
    delta: float = 0.0,
    *,
    bounds_eps: float | None,
    neighbouring: str,
    streamed: str | None = None,
) -> tuple[Any, float, float]:
    """``(bounds, eps, delta)`` for a front door: a private-bounds step and the remainder, or unchanged.

    ``bounds="auto"`` (or an :class:`AutoBounds`) becomes a :class:`PrivateBounds` step spending
    ``bounds_eps`` (default: ``share`` = 10% of eps), with the same share of delta set aside; the
    method gets the rest.  Quantiles composed by basic composition spend no delta: the step then
    hands the share back to the method once its mode is known (:meth:`PrivateBounds._hand_back`),
    and the method has the whole delta.  Every check runs here (:func:`auto_bounds`), before the
    data is read and before anything is spent.

    Examples
    --------
    >>> step, eps, delta = bounds_step("auto", 1.0, 1e-6, bounds_eps=None, neighbouring="replace")
    >>> round(step.eps, 6), round(eps, 6), delta
    (0.1, 0.9, 9e-07)
    """
    bounds = auto_bounds(bounds, eps, bounds_eps=bounds_eps, streamed=streamed)
    if not isinstance(bounds, AutoBounds):
        return bounds, eps, delta
    eps_b = bounds.eps_of(eps)
    delta_b = delta * eps_b / eps
    step = PrivateBounds(bounds, eps=eps_b, delta=delta_b, neighbouring=neighbouring, requested=(eps, delta))
    return step, eps - eps_b, remainder(delta, [delta_b])


def declared_bounds(bounds: Any, mf: ModelFrame, *, response: bool = True) -> Any:
    """The bounds a door resolves: as declared, or released privately now for ``mf``'s columns.

    For a private-bounds step, the design's columns (factor dummies excepted:
    they are bounded by their coding) and, with ``response``, the response get a
    private (lo, hi) each, returned as a ``bounds=`` mapping.
    """
    if not isinstance(bounds, PrivateBounds):
        return bounds
    bounds.frame_ready(mf)
    fixed = set(dummy_columns(mf)) | {INTERCEPT}
    keep = [j for j, nm in enumerate(mf.names) if nm not in fixed]
    y = mf.y if response and mf.y is not None else None
    return bounds.box(mf.X[:, keep], [mf.names[j] for j in keep], y, mf.response if y is not None else None)


def row_norm_bound(bounds: Any, mf: ModelFrame) -> Any:
    """The row l2-norm bound B a door uses: as declared, or released privately now from ``mf``'s design."""
    if not isinstance(bounds, PrivateBounds):
        return bounds
    bounds.frame_ready(mf)
    return bounds.norm(mf.X)


def design_box(
    bounds: Any, mf: ModelFrame, names: Sequence[str] | None = None, *, open_missing: bool = False
) -> Box | None:
    """The box of the design's columns (``names``, default all) from resolved bounds: factor dummies
    are bounded by their coding, (0, 1) for treatment contrasts; an interaction's column, unless
    declared itself, by the product of its parts' bounds when each part has a public one
    (:func:`dpstats.geometry.derived_bounds`). A column without a bound that a data-dependent term makes
    (orthogonal ``poly()``, knots from the rows) is refused naming that step and its fix;
    ``open_missing``: a column without a public bound gets (-inf, inf) instead of being refused."""
    shown = dict(zip(mf.names, mf.terms)) if getattr(mf, "levels_read", False) else None
    calls = getattr(mf, "step_calls", None) or {}
    steps = {nm: calls[c] for nm, term in zip(mf.names, mf.terms) for c in calls if c in term}
    return resolve_box(
        bounds,
        mf.names if names is None else names,
        dummies=dummy_columns(mf),
        shown=shown,
        parts=interaction_parts(mf),
        steps=steps,
        open_missing=open_missing,
    )


def response_box(bounds: Any, mf: ModelFrame, *, open_missing: bool = False) -> Box | None:
    """The box of the response from resolved bounds: its own declared bound, or, for a public function
    of one variable (``log(mpg) ~ wt``), the image of the variable's declared bounds, as for a predictor
    (:func:`dpstats.geometry.derived_bounds`); ``open_missing`` as in :func:`design_box`."""
    return resolve_box(bounds, [mf.response], parts=interaction_parts(mf), open_missing=open_missing)


def public_column_bounds(bounds: Any, mf: ModelFrame) -> dict[str, tuple[float, float]]:
    """The bounds of ``mf``'s columns that follow from public inputs without a declaration of their
    own: factor dummies' coding ranges, and interactions' products of their parts' bounds (for a
    door that hands the design, as columns, to other doors)."""
    return {**dummy_columns(mf), **derived_bounds(bounds, interaction_parts(mf))}


def variables_to_declare(mf: ModelFrame, names: Sequence[str] | None = None) -> list[str]:
    """What a ``bounds=`` mapping must name for the design columns ``names`` (default all) to be bounded
    when nothing is declared: [] when every column's bound is public (factor dummies by their coding,
    interactions of factors alone by the product of their codings). Otherwise the numeric variables
    behind the columns without one (``x`` for ``x:gb``, ``wt`` for ``log(wt)``), or the column itself,
    named by its term where the design's names hold levels read from the rows. From the formula and
    the schema alone: neighbouring data sets give the same list.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> df = pd.DataFrame({"y": [0, 1, 1], "g": pd.Categorical(["a", "b", "a"]), "x": [1.0, 2, 3]})
    >>> variables_to_declare(model_frame("y ~ g", df)), variables_to_declare(model_frame("y ~ g * x", df))
    ([], ['x'])
    """
    parts = interaction_parts(mf)
    public = set(dummy_columns(mf)) | set(derived_bounds({}, parts)) | {INTERCEPT}
    shown = dict(zip(mf.names, mf.terms)) if getattr(mf, "levels_read", False) else {}
    out: list[str] = []
    for name in mf.names if names is None else names:
        if name in public:
            continue
        numeric = [p if isinstance(p, str) else getattr(p, "variable", None) for p in parts.get(name, ())]
        out.extend([p for p in numeric if p] or [shown.get(name, name)])
    return list(dict.fromkeys(out))


def bounds_example(variables: Sequence[str]) -> str:
    """Advice naming the variables to declare: ``bounds={'age': (lo, hi), 'lwt': (lo, hi)}`` (three at most).

    Examples
    --------
    >>> bounds_example(["age"])
    "bounds={'age': (lo, hi)}"
    """
    shown = ", ".join(f"{name!r}: (lo, hi)" for name in variables[:3])
    return f"bounds={{{shown}{', ...' if len(variables) > 3 else ''}}}"


@contextmanager
def charged_if_drawn(step: PrivateBounds | None, accountant: Any, label: str) -> Iterator[None]:
    """An error raised once the private bounds have drawn from the rows charges them and says so
    (:meth:`PrivateBounds.charged_refusal`); before any draw, or without private bounds, it passes as it is."""
    try:
        yield
    except Exception as err:
        if step is None or not step.draws:
            raise
        out = step.charged_refusal(err, accountant, label)
        if out is err:
            raise
        raise out  # noqa: B904 (the original's cause is kept, its text is in the new one)
