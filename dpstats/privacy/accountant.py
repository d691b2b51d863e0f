"""Budget accounting: the accountant, its ledger, and zCDP budget plans.

An :class:`Accountant` holds an (eps, delta) budget under basic sequential
composition (Dwork & Roth 2014, Theorem 3.16): the (eps, delta) of steps add
up — or, with ``composition="zcdp"``, under a zCDP filter that costs each step by
its recorded mechanism (:mod:`.filters` states both rules and why each is valid
when analyses are chosen adaptively).  A front door plans its steps as :class:`LedgerEntry` records, asks the
accountant to :meth:`Accountant.spend` their sum *before* touching the data,
and the accountant refuses — atomically, under a lock — a spend that would
exceed the budget.  The ledger of every charge is kept.

A :class:`BudgetPlan` accounts a pipeline of Gaussian and pure-DP steps in
zero-concentrated DP instead (Bun & Steinke 2016; conversions in
:mod:`.calibration`: exact for all-Gaussian plans, Canonne, Kamath & Steinke 2020
otherwise): the budget becomes one ρ, split across the steps by public fractions,
and the ledger shows each step's share of (eps, delta), with its own ρ and its own
eps by itself (a share is not a guarantee of the step alone).
Conventions: docs/architecture.md, "Privacy conventions".
"""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import asdict, dataclass, field

from ..errors import BudgetExceededError, PrivacyParameterError
from .calibration import CONVERSIONS, gaussian_rho_from_eps_delta, rho_from_eps_delta, standalone_eps
from .events import PrivacyEvent, gaussian_rho, of_entry, zcdp
from .filters import TEXT, check_composition, zcdp_budget, zcdp_cost, zcdp_eps
from .mechanism_names import GAUSSIAN, mechanism_name


@dataclass(frozen=True)
class LedgerEntry:
    """One privacy-consuming step of an analysis.

    Parameters
    ----------
    step : str
        What the step releases, e.g. ``"top-k selection of |x_j' y|"``.
    mechanism : str
        The mechanism: its readable name, or a code that :func:`~.mechanism_names.mechanism_name`
        turns into one (``"canonical_lipschitz top-k"`` is shown as "canonical Lipschitz mechanism
        (top-k)").
    eps, delta : float
        Its share of the budget: the entries of a call sum to its (eps, delta).  For a step of a
        :class:`BudgetPlan` (``rho`` set) this is a share of the composition's budget in proportion
        to the step's ρ, not a guarantee of the step alone; otherwise the step's own guarantee.
    sensitivity : str
        The sensitivity used, with the neighbouring relation it holds for.
    event : PrivacyEvent, optional
        The mechanism as a structured privacy event (:mod:`.events`: Gaussian with its noise
        multiplier, Laplace, bounded range, zCDP, delta-only, ...), from which tight composition
        (:mod:`.composition`) and the zCDP filter read the step's cost.  Without one the step
        counts as a generic (eps, delta) step.
    rho : float, optional
        A :class:`BudgetPlan` step's own ρ (zCDP).
    eps_alone, delta_alone : float, optional
        A :class:`BudgetPlan` step's own guarantee by itself: it is (eps_alone, delta_alone)-DP,
        delta_alone being the plan's delta and eps_alone computed as the plan calibrates
        (:func:`~dpstats.privacy.calibration.standalone_eps`).  None where (eps, delta) is already
        the step's own guarantee.
    """

    step: str
    mechanism: str
    eps: float
    delta: float = 0.0
    sensitivity: str = ""
    note: str = ""
    event: PrivacyEvent | None = None
    rho: float | None = None
    eps_alone: float | None = None
    delta_alone: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", mechanism_name(self.mechanism))
        if isinstance(self.event, dict):  # the plain JSON form, as the methods write it
            object.__setattr__(self, "event", PrivacyEvent.from_dict(self.event))

    @classmethod
    def nonprivate(cls, step: str) -> LedgerEntry:
        """The one entry of a run at eps = inf: no mechanism, no sensitivity, not private.

        Examples
        --------
        >>> LedgerEntry.nonprivate("OLS (eps = inf, NOT private)").mechanism
        'none (eps = inf)'
        """
        return cls(step, "none (eps = inf)", math.inf, sensitivity="not applicable", event={"kind": "none"})

    @property
    def privacy_event(self) -> PrivacyEvent:
        """``event``, or the generic (eps, delta) step when none was recorded."""
        return of_entry(self)

    def to_dict(self) -> dict:
        """Plain types; ``rho``, ``eps_alone`` and ``delta_alone`` only for a :class:`BudgetPlan`'s step."""
        out = asdict(self)
        out["event"] = self.privacy_event.to_dict()
        if self.rho is None:
            for key in ("rho", "eps_alone", "delta_alone"):
                out.pop(key)
        return out


def total_eps(entries: list[LedgerEntry]) -> float:
    """Sum of the eps of ``entries`` (exactly rounded, :func:`math.fsum`)."""
    return math.fsum(e.eps for e in entries)


def total_delta(entries: list[LedgerEntry]) -> float:
    """Sum of the delta of ``entries`` (exactly rounded, :func:`math.fsum`)."""
    return math.fsum(e.delta for e in entries)


def remainder(total: float, parts: list[float]) -> float:
    """The last share of ``total`` after ``parts``: the float r with ``fsum(parts + [r]) == total``.

    ``total − fsum(parts)`` is rounded, and the rounded sum can then exceed ``total`` by an ulp
    (0.01 − 0.001 + 0.001 gives 0.010000000000000002); r is moved by ulps until the sum is ``total``,
    or just above it where no float hits it (a stated total is never below what its parts spend).

    Examples
    --------
    >>> math.fsum([0.002, remainder(0.01, [0.002])])
    0.01
    >>> math.fsum([0.001, remainder(0.01, [0.001])])  # no float hits it: the sum is just above
    0.010000000000000002
    """
    r = total - math.fsum(parts)
    if not math.isfinite(total):
        return r
    while r > 0 and math.fsum([*parts, r]) > total:
        r = math.nextafter(r, -math.inf)
    while math.fsum([*parts, r]) < total:
        r = math.nextafter(r, math.inf)
    return r


def exact_shares(total: float, shares: list[float]) -> list[float]:
    """``shares`` of ``total`` (fractions summing to 1) as floats whose fsum is ``total``.

    The last is :func:`remainder`; where no float for it hits ``total`` (0.001 + r never gives 0.01
    exactly), the first is lowered by its own, smaller ulps until one does (at most 64), moving an
    apportionment by about 1e-16 of itself and the guarantee not at all: it is the composition's.

    Examples
    --------
    >>> math.fsum(exact_shares(0.01, [0.1, 0.9]))
    0.01
    """
    parts = [total * f for f in shares[:-1]]
    last = remainder(total, parts)
    for _ in range(64 if parts and math.isfinite(total) else 0):
        if math.fsum([*parts, last]) == total:
            break
        parts[0] = math.nextafter(parts[0], -math.inf)
        last = remainder(total, parts)
    return [*parts, last]


def even_share(total: float, k: int) -> float:
    """Each of k equal shares of ``total``: total/k to 15 significant digits, lowered by ulps until k of
    them sum (fsum) to at most ``total``.

    Examples
    --------
    >>> 1e-5 / 10, even_share(1e-5, 10)
    (1.0000000000000002e-06, 1e-06)
    """
    share = float(f"{total / k:.15g}")
    while math.fsum([share] * k) > total:
        share = math.nextafter(share, 0.0)
    return share


@dataclass
class Charge:
    """One accepted spend: a label and the entries whose sum was charged."""

    label: str
    entries: list[LedgerEntry]

    @property
    def eps(self) -> float:
        return total_eps(self.entries)

    @property
    def delta(self) -> float:
        return total_delta(self.entries)


@dataclass
class Accountant:
    """An (eps, delta) budget, shared across calls: a privacy filter (:mod:`.filters`).

    Parameters
    ----------
    eps : float
        Total eps budget (``math.inf`` for no limit).
    delta : float
        Total delta budget.
    composition : {"basic", "zcdp"}
        ``"basic"`` (default): the (eps, delta) of the steps add up; valid for pure budgets and
        kept as the default so that every budget and ledger means what it meant before.
        ``"zcdp"``: each step costs its mechanism's ρ (Gaussian Δ²/(2σ²), pure eps²/2, bounded
        range eps²/8) and delta-only steps their δ; many Gaussian or selection steps then fit in
        a budget that their summed eps would exceed.  Both are valid when analyses are chosen
        adaptively.  For PLD accounting declare the session in advance (:class:`~.session.SessionPlan`).
    delta_reserve : float, optional
        Under ``"zcdp"``: the part of delta kept for delta-only steps and the δ of generic
        (eps, δ) steps (default delta/10); ρ is converted at delta − delta_reserve.

    Examples
    --------
    >>> acc = Accountant(eps=1.0)
    >>> _ = acc.spend([LedgerEntry("a count", "Laplace", 0.4)], label="first")
    >>> round(acc.remaining_eps, 10)
    0.6
    >>> z = Accountant(eps=1.0, delta=1e-6, composition="zcdp")
    >>> round(z.budget_rho, 5)
    0.02413
    """

    eps: float = math.inf
    delta: float = 0.0
    composition: str = "basic"
    delta_reserve: float | None = None
    charges: list[Charge] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, value in (("eps", self.eps), ("delta", self.delta)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise PrivacyParameterError(f"Accountant {name} must be a number, got {value!r}.")
        if not (self.eps > 0) or math.isnan(self.eps):
            raise PrivacyParameterError(f"Accountant eps must be > 0, got {self.eps}.")
        if not (0 <= self.delta < 1):
            raise PrivacyParameterError(f"Accountant delta must be in [0, 1), got {self.delta}.")
        check_composition(self.composition)
        if self.composition == "zcdp":
            if self.delta_reserve is None:
                self.delta_reserve = self.delta / 10.0
            if not (0 <= self.delta_reserve < self.delta) and not math.isinf(self.eps):
                raise PrivacyParameterError(
                    f"Accountant delta_reserve must be in [0, delta), got {self.delta_reserve}."
                )
            zcdp_budget(self.eps, self.delta, self.delta_reserve)  # refuses a pure budget
        elif self.delta_reserve is not None:
            raise PrivacyParameterError("delta_reserve applies only with composition='zcdp'.")

    # ------------------------------------------------------------------ zCDP filter
    @property
    def budget_rho(self) -> float:
        """ρ_B of the zCDP filter (NaN under basic composition)."""
        if self.composition != "zcdp":
            return math.nan
        return zcdp_budget(self.eps, self.delta, self.delta_reserve)

    @property
    def spent_rho(self) -> float:
        """Σ ρ of the accepted steps (by their events)."""
        return zcdp_cost(self.ledger)[0]

    @property
    def remaining_rho(self) -> float:
        return self.budget_rho - self.spent_rho

    @property
    def spent_delta_steps(self) -> float:
        """Σ δ of delta-only and generic (eps, δ) steps, under the zCDP filter."""
        return zcdp_cost(self.ledger)[1]

    @property
    def composition_text(self) -> str:
        return TEXT[self.composition]

    @property
    def spent_eps(self) -> float:
        """Basic: Σ eps.  zCDP: the eps the spent ρ is worth at delta − delta_reserve."""
        if self.composition == "zcdp":
            return zcdp_eps(self.spent_rho, self.delta - self.delta_reserve) if self.charges else 0.0
        return math.fsum(c.eps for c in self.charges)

    @property
    def spent_delta(self) -> float:
        """Basic: Σ delta.  zCDP: delta − delta_reserve (once anything is spent) + Σ δ of delta steps."""
        if self.composition == "zcdp":
            if not self.charges:
                return 0.0
            return self.delta - self.delta_reserve + self.spent_delta_steps
        return math.fsum(c.delta for c in self.charges)

    @property
    def remaining_eps(self) -> float:
        return self.eps - self.spent_eps

    @property
    def remaining_delta(self) -> float:
        return self.delta - self.spent_delta

    @property
    def ledger(self) -> list[LedgerEntry]:
        """Every entry of every accepted charge, in order."""
        return [e for c in self.charges for e in c.entries]

    def check(self, eps: float, delta: float) -> None:
        """Raise :class:`BudgetExceededError` if (eps, delta) does not fit.

        Under ``"zcdp"`` the cost depends on the mechanisms, which the front door knows only
        after its plan: this early check refuses an exhausted filter (nothing read), and
        :meth:`spend` refuses exactly, by the events, before any noise is drawn.
        """
        tol = 1e-12
        if not (eps >= 0 and delta >= 0):  # NaN or negative would disable or refund the budget
            raise PrivacyParameterError(
                f"a spend must have eps >= 0 and delta >= 0, got (eps={eps}, delta={delta}); nothing was spent."
            )
        if self.composition == "zcdp":
            if eps > 0 and self.remaining_rho <= tol * self.budget_rho:
                raise BudgetExceededError(
                    f"the zCDP accountant has spent its rho = {self.budget_rho:.4g}. Nothing was spent; "
                    "use a new Accountant."
                )
            return
        if self.spent_eps + eps > self.eps * (1 + tol) or self.spent_delta + delta > self.delta + tol * max(
            self.delta, 1e-300
        ):
            raise BudgetExceededError(
                f"this analysis needs (eps={eps:g}, delta={delta:g}) but the accountant has "
                f"(eps={self.remaining_eps:g}, delta={self.remaining_delta:g}) left of "
                f"(eps={self.eps:g}, delta={self.delta:g}). Nothing was spent; lower eps/delta "
                "or use a new Accountant."
            )

    def spend(self, entries: list[LedgerEntry], label: str = "") -> Charge:
        """Charge the sum of ``entries`` atomically, or refuse without spending."""
        eps, delta = total_eps(entries), total_delta(entries)
        for e in entries:
            if not (e.eps >= 0 and e.delta >= 0):
                raise PrivacyParameterError(
                    f"ledger entry '{e.step}' has eps={e.eps}, delta={e.delta}; both must be >= 0. "
                    "Nothing was spent."
                )
        with self._lock:
            if self.composition == "zcdp":
                self._check_rho(entries)
            else:
                self.check(eps, delta)
            charge = Charge(label=label, entries=list(entries))
            self.charges.append(charge)
        return charge

    def withdraw(self, charge: Charge) -> None:
        """Take back an accepted ``charge`` whose call released nothing and whose failure says nothing
        about the data (a file changed between its passes): the argument, and why nothing else is
        withdrawn, is :mod:`.reservation`'s.  A charge no longer held is left alone."""
        with self._lock:
            self.charges[:] = [c for c in self.charges if c is not charge]

    def _check_rho(self, entries: list[LedgerEntry]) -> None:
        """The zCDP filter's rule (:mod:`.filters`): Σ ρ ≤ ρ_B and Σ δ_steps ≤ delta_reserve."""
        self.check_rho(*zcdp_cost(entries))

    def check_steps(self, kinds: set[str]) -> None:
        """Refuse, before anything is drawn, a call with steps of event ``kinds`` this accountant can take
        whatever their cost: basic composition and the zCDP filter take every kind (only a declared
        session's Gaussian slots do not, :meth:`~.session.SessionAccountant.check_steps`)."""

    def check_rho(self, rho: float, dsteps: float = 0.0, *, least: bool = False) -> None:
        """Under ``"zcdp"``, raise :class:`BudgetExceededError` if ρ (and δ of delta-only steps) does
        not fit; a front door prices a call this way from public inputs before it draws from the rows
        (``least``: ρ is a lower bound of the call's cost, and the message says so).  Under ``"basic"``
        nothing is checked here (:meth:`check` is the rule)."""
        if self.composition != "zcdp":
            return
        spent_rho, spent_d = zcdp_cost(self.ledger)
        tol = 1e-12
        if spent_rho + rho > self.budget_rho * (1 + tol) or spent_d + dsteps > self.delta_reserve * (1 + tol):
            raise BudgetExceededError(
                f"this analysis needs rho {'>=' if least else '='} {rho:.4g} (and delta = {dsteps:.3g} for its high-probability "
                f"steps) but the zCDP accountant has rho = {self.budget_rho - spent_rho:.4g} (and delta = "
                f"{self.delta_reserve - spent_d:.3g}) left of rho = {self.budget_rho:.4g}, from (eps="
                f"{self.eps:g}, delta={self.delta:g}). Nothing was spent; lower eps/delta or use a new "
                "Accountant."
            )

    # ------------------------------------------------------------------ presentation
    def summary(self) -> str:
        """Budget, spent and remaining, and the composition rule, in words."""
        lines = [f"Privacy accountant: {self.composition_text}"]
        lines.append(f"  budget:    (eps = {self.eps:.6g}, delta = {self.delta:.6g})")
        if self.composition == "zcdp":
            lines.append(
                f"  rho:       budget {self.budget_rho:.6g}, spent {self.spent_rho:.6g}, remaining "
                f"{self.remaining_rho:.6g} (converted at delta = {self.delta - self.delta_reserve:.3g} by "
                "Canonne, Kamath & Steinke 2020; "
                f"{self.delta_reserve:.3g} reserved for delta-only steps, {self.spent_delta_steps:.3g} used)"
            )
        lines.append(f"  spent:     (eps = {self.spent_eps:.6g}, delta = {self.spent_delta:.6g})")
        lines.append(f"  remaining: (eps = {self.remaining_eps:.6g}, delta = {self.remaining_delta:.6g})")
        lines.append(f"  {len(self.charges)} analyses, {len(self.ledger)} ledger steps")
        return "\n".join(lines)

    def __repr__(self) -> str:
        rho = (
            f", rho spent {self.spent_rho:.4g} of {self.budget_rho:.4g}" if self.composition == "zcdp" else ""
        )
        return (
            f"Accountant(eps={self.eps:g}, delta={self.delta:g}, composition={self.composition!r}: "
            f"spent (eps={self.spent_eps:.4g}, delta={self.spent_delta:.3g}){rho}, "
            f"{len(self.charges)} analyses)"
        )

    def to_dict(self) -> dict:
        """Budget, spent, remaining, the rule used and the ledger (with events), as plain values."""
        out = {
            "composition": self.composition,
            "composition_text": self.composition_text,
            "eps": self.eps,
            "delta": self.delta,
            "spent_eps": self.spent_eps,
            "spent_delta": self.spent_delta,
            "remaining_eps": self.remaining_eps,
            "remaining_delta": self.remaining_delta,
            "ledger": [dict(e.to_dict(), analysis=c.label) for c in self.charges for e in c.entries],
        }
        if self.composition == "zcdp":
            out.update(
                budget_rho=self.budget_rho,
                spent_rho=self.spent_rho,
                remaining_rho=self.remaining_rho,
                delta_reserve=self.delta_reserve,
            )
        return out


@dataclass
class BudgetPlan:
    """ρ for each named step, and the ledger entries that apportion (eps, delta).

    Every step is a Gaussian mechanism or a pure-DP selection, accounted in
    zCDP (Bun & Steinke 2016) and converted to (eps, delta) once: the budget
    (eps, delta) becomes ρ, ρ is split across steps by fixed public fractions
    (zCDP composes additively, also adaptively: Lemma 2.3), and the ledger shows
    each step's share of (eps, delta) in proportion to its ρ (the shares sum
    exactly to (eps, delta); the guarantee is that of the composition, not of any
    step alone), and next to it each step's own ρ and its own eps at the plan's
    delta by itself (``rho``, ``eps_alone``, ``delta_alone``; larger than its share).

    The conversion (:data:`~dpstats.privacy.calibration.CONVERSIONS`):
    ``gaussian_only=True`` — every step is a Gaussian mechanism, so their composition is one
    Gaussian and ρ is the exact :func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`;
    :meth:`add` refuses any other mechanism, so the plan cannot hold a step that the exact
    conversion does not cover.  Otherwise (default) ρ is
    :func:`~dpstats.privacy.calibration.rho_from_eps_delta` (Canonne, Kamath & Steinke 2020,
    valid for any ρ-zCDP mechanism).

    Examples
    --------
    >>> plan = BudgetPlan(eps=1.0, delta=1e-6, gaussian_only=True)
    >>> r = plan.add("a count", "Gaussian", 0.5, "Δ₂ = 1")
    >>> r2 = plan.add("a mean", "Gaussian", 0.5, "Δ₂ = 2")
    >>> round(sum(e.eps for e in plan.entries()), 12), round(plan.rho, 5)
    (1.0, 0.02801)
    >>> round(BudgetPlan(eps=1.0, delta=1e-6).rho, 5)
    0.02436
    """

    eps: float
    delta: float
    gaussian_only: bool = False
    rho: float = field(init=False)
    steps: list[tuple[str, str, float, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        convert = gaussian_rho_from_eps_delta if self.gaussian_only else rho_from_eps_delta
        self.rho = convert(self.eps, self.delta)

    @property
    def conversion(self) -> str:
        """How ρ was obtained from (eps, delta), in words (for the statement)."""
        return CONVERSIONS["gaussian" if self.gaussian_only else "zcdp"]

    def add(self, step: str, mechanism: str, fraction: float, sensitivity: str, note: str = "") -> float:
        """Reserve ``fraction`` of ρ for ``step``; return that step's ρ."""
        if self.gaussian_only and not _is_gaussian(mechanism):
            raise AssertionError(f"step {step!r} ({mechanism}) is not Gaussian: this plan converts ρ exactly")
        self.steps.append((step, mechanism, float(fraction), sensitivity, note))
        return fraction * self.rho

    def entries(self) -> list[LedgerEntry]:
        """Ledger entries whose eps and delta sum exactly (fsum) to the budget."""
        total = math.fsum(s[2] for s in self.steps)
        if total > 1 + 1e-9:
            raise AssertionError(f"budget fractions sum to {total} > 1")
        out: list[LedgerEntry] = []
        shares = [s[2] / total for s in self.steps]
        parts = zip(exact_shares(self.eps, shares), exact_shares(self.delta, shares))
        for (step, mech, frac, sens, note), (eps_i, delta_i) in zip(self.steps, parts):
            rho_i = frac * self.rho
            text = f"ρ = {rho_i:.4g}-zCDP" + (f"; {note}" if note else "")
            out.append(
                LedgerEntry(
                    step=step,
                    mechanism=mech,
                    eps=eps_i,
                    delta=delta_i,
                    sensitivity=sens,
                    note=text,
                    event=(gaussian_rho if _is_gaussian(mech) else zcdp)(rho_i),
                    rho=rho_i,
                    eps_alone=standalone_eps(rho_i, self.delta, gaussian=_is_gaussian(mech)),
                    delta_alone=self.delta,
                )
            )
        return out


def _is_gaussian(mechanism: str) -> bool:
    """A BudgetPlan step named as one Gaussian mechanism (its event is then ``gaussian``)."""
    return mechanism_name(mechanism) in GAUSSIAN
