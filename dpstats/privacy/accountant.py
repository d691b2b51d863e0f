"""Budget accounting: the accountant, its ledger, and zCDP budget plans.

An :class:`Accountant` holds an (eps, delta) budget under basic sequential
composition (Dwork & Roth 2014, Theorem 3.16): the (eps, delta) of steps add
up.  A front door plans its steps as :class:`LedgerEntry` records, asks the
accountant to :meth:`Accountant.spend` their sum *before* touching the data,
and the accountant refuses — atomically, under a lock — a spend that would
exceed the budget.  The ledger of every charge is kept.

A :class:`BudgetPlan` accounts a pipeline of Gaussian and pure-DP steps in
zero-concentrated DP instead (Bun & Steinke 2016; conversions in
:mod:`.calibration`): the budget becomes one ρ, split across the steps by
public fractions, and the ledger shows each step's share of (eps, delta).
Conventions: docs/architecture.md, "Privacy conventions".
"""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import asdict, dataclass, field

from ..errors import BudgetExceededError, PrivacyParameterError
from .calibration import rho_from_eps_delta
from .events import PrivacyEvent, gaussian_rho, of_entry, zcdp


@dataclass(frozen=True)
class LedgerEntry:
    """One privacy-consuming step of an analysis.

    Parameters
    ----------
    step : str
        What the step releases, e.g. ``"top-k selection of |x_j' y|"``.
    mechanism : str
        The mechanism, e.g. ``"canonical Lipschitz top-k"``.
    eps, delta : float
        Its share of the budget.
    sensitivity : str
        The sensitivity used, with the neighbouring relation it holds for.
    event : PrivacyEvent, optional
        The mechanism as a structured privacy event (:mod:`.events`: Gaussian with its noise
        multiplier, Laplace, bounded range, zCDP, delta-only, ...), from which tight composition
        (:mod:`.composition`) and the zCDP filter read the step's cost.  Without one the step
        counts as a generic (eps, delta) step.
    """

    step: str
    mechanism: str
    eps: float
    delta: float = 0.0
    sensitivity: str = ""
    note: str = ""
    event: PrivacyEvent | None = None

    def __post_init__(self) -> None:
        if isinstance(self.event, dict):  # the plain JSON form, as the methods write it
            object.__setattr__(self, "event", PrivacyEvent.from_dict(self.event))

    @property
    def privacy_event(self) -> PrivacyEvent:
        """``event``, or the generic (eps, delta) step when none was recorded."""
        return of_entry(self)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["event"] = self.privacy_event.to_dict()
        return out


def total_eps(entries: list[LedgerEntry]) -> float:
    """Sum of the eps of ``entries`` (exactly rounded, :func:`math.fsum`)."""
    return math.fsum(e.eps for e in entries)


def total_delta(entries: list[LedgerEntry]) -> float:
    """Sum of the delta of ``entries`` (exactly rounded, :func:`math.fsum`)."""
    return math.fsum(e.delta for e in entries)


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
    """An (eps, delta) budget under basic composition, shared across calls.

    Parameters
    ----------
    eps : float
        Total eps budget (``math.inf`` for no limit).
    delta : float
        Total delta budget.

    Examples
    --------
    >>> acc = Accountant(eps=1.0)
    >>> _ = acc.spend([LedgerEntry("a count", "Laplace", 0.4)], label="first")
    >>> round(acc.remaining_eps, 10)
    0.6
    """

    eps: float = math.inf
    delta: float = 0.0
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

    @property
    def spent_eps(self) -> float:
        return math.fsum(c.eps for c in self.charges)

    @property
    def spent_delta(self) -> float:
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
        """Raise :class:`BudgetExceededError` if (eps, delta) does not fit."""
        tol = 1e-12
        if not (eps >= 0 and delta >= 0):  # NaN or negative would disable or refund the budget
            raise PrivacyParameterError(
                f"a spend must have eps >= 0 and delta >= 0, got (eps={eps}, delta={delta}); nothing was spent."
            )
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
            self.check(eps, delta)
            charge = Charge(label=label, entries=list(entries))
            self.charges.append(charge)
        return charge


@dataclass
class BudgetPlan:
    """ρ for each named step, and the ledger entries that apportion (eps, delta).

    Every step is a Gaussian mechanism or a pure-DP selection, accounted in
    zCDP (Bun & Steinke 2016) and converted to (eps, delta) once: the budget
    (eps, delta) becomes ρ by :func:`~dpstats.privacy.calibration.rho_from_eps_delta`,
    ρ is split across steps by fixed public fractions (zCDP composes additively,
    also adaptively: Lemma 2.3), and the ledger shows each step's share of
    (eps, delta) in proportion to its ρ (the shares sum exactly to (eps, delta);
    the guarantee is that of the composition, not of any step alone).

    Examples
    --------
    >>> plan = BudgetPlan(eps=1.0, delta=1e-6)
    >>> r = plan.add("a count", "Gaussian", 0.5, "Δ₂ = 1")
    >>> r2 = plan.add("a mean", "Gaussian", 0.5, "Δ₂ = 2")
    >>> round(sum(e.eps for e in plan.entries()), 12)
    1.0
    """

    eps: float
    delta: float
    rho: float = field(init=False)
    steps: list[tuple[str, str, float, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rho = rho_from_eps_delta(self.eps, self.delta)

    def add(self, step: str, mechanism: str, fraction: float, sensitivity: str, note: str = "") -> float:
        """Reserve ``fraction`` of ρ for ``step``; return that step's ρ."""
        self.steps.append((step, mechanism, float(fraction), sensitivity, note))
        return fraction * self.rho

    def entries(self) -> list[LedgerEntry]:
        """Ledger entries whose eps and delta sum exactly (fsum) to the budget."""
        total = math.fsum(s[2] for s in self.steps)
        if total > 1 + 1e-9:
            raise AssertionError(f"budget fractions sum to {total} > 1")
        out: list[LedgerEntry] = []
        for i, (step, mech, frac, sens, note) in enumerate(self.steps):
            share = frac / total
            if i == len(self.steps) - 1:
                eps_i = self.eps - math.fsum(e.eps for e in out)
                delta_i = self.delta - math.fsum(e.delta for e in out)
            else:
                eps_i, delta_i = self.eps * share, self.delta * share
            text = f"ρ = {frac * self.rho:.4g}-zCDP" + (f"; {note}" if note else "")
            out.append(
                LedgerEntry(
                    step=step,
                    mechanism=mech,
                    eps=eps_i,
                    delta=delta_i,
                    sensitivity=sens,
                    note=text,
                    event=(gaussian_rho if mech.lower() in ("gaussian", "gaussian (zcdp)") else zcdp)(
                        frac * self.rho
                    ),
                )
            )
        return out
