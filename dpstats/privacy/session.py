"""A session of analyses declared in advance, accounted by PLD, and calibrated within one budget.

"How much noise can each planned analysis have within a total budget?"  A :class:`SessionPlan`
holds a total (eps, delta) and the *slots* of the analyses to come, each a fixed mechanism: a
Gaussian of a given noise multiplier σ/Δ (:meth:`SessionPlan.gaussian_fits`) or an (eps, delta)
step (:meth:`SessionPlan.add`).  The slots are composed by PLD (:mod:`.composition`) when they are
declared, and a declaration that would exceed the total is refused.

:meth:`SessionPlan.gaussian_fits` solves for the common Gaussian noise multiplier of k fits by
bisection on the PLD composition of the session (with the slots already declared), and gives each
fit the per-fit (eps, delta) that yields that noise under the package's calibration of the
method (:func:`per_fit_budget`): ``"gaussian"`` for the methods whose every step is a Gaussian
mechanism (dp_lm with delta > 0, dp_glm, dp_pca, vertical_glm: ρ = μ²/2 exactly) or ``"zcdp"``
(the eps at which a plan mixing Gaussian and pure-DP steps in zCDP, as dp_gmm's, has ρ = 1/(2m²)
by Canonne, Kamath & Steinke 2020; such a plan is still refused by the slot, below).  Each fit
gets δ = delta/k, so basic composition of the per-fit budgets also stays within delta.

:meth:`SessionPlan.accountant` returns the session's accountant: it admits an analysis into the
first unused slot that dominates it — a Gaussian slot of multiplier m takes analyses whose steps
are all Gaussian with Σ 1/mᵢ² ≤ 1/m² (they compose to one Gaussian of multiplier
(Σ 1/mᵢ²)^(−1/2) ≥ m); an (eps, delta) slot takes any analysis whose ledger sums to at most its
(eps, delta).  Why this is valid when the analyses are chosen adaptively: :mod:`.filters`,
``"pld"``.

A Gaussian slot refuses an analysis with any other step, however much noise its Gaussian steps
have, because the session's figure composes the slots' privacy-loss distributions and needs each
slot dominated at every eps.  The Gaussian of multiplier m has δ_m(ε) → 0 as ε grows.
dp_knockoff (Method II) at the slot's (eps, delta) is a Gaussian of multiplier m_k ≥ m (at δ/2)
and a sensitivity bound that fails with probability δ₂ = δ/2: its profile is only bounded by
δ_{m_k}(ε) + δ₂, which stays above δ₂, so no Gaussian dominates it.  (Ten such fits in the ten
Gaussian slots of (3.2, 1e-5) compose to eps 3.2018 at 1e-5, above the session's 3.2.)  A ρ-zCDP
plan with ρ ≤ 1/(2m²) (dp_gmm) is not dominated either: a pure ε-DP step, randomized response, has
δ(0) = tanh(ε/2) = 0.462 at ε = 1, the Gaussian of the same ρ = ε²/2 only 2Φ(1/2) − 1 = 0.383.
Such analyses take an (eps, delta) slot (:meth:`SessionPlan.add`): every (eps, delta)-DP
mechanism is dominated by the (eps, delta) pair the slot composes (Kairouz, Oh & Viswanath 2015).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import BudgetExceededError, PrivacyParameterError
from . import events as ev
from .accountant import Accountant, Charge, LedgerEntry, even_share
from .calibration import analytic_gaussian_sigma, rho_from_eps_delta, zcdp_eps
from .composition import Composition, compose, gaussian_eps
from .filters import TEXT


# the event kinds (:mod:`.events`) a Gaussian slot takes, and the words for the others in a refusal
GAUSSIAN_SLOT_TAKES = {"gaussian", "post_processing"}
OTHER_STEPS = {
    "laplace": "Laplace",
    "pure": "pure-DP",
    "bounded_range": "exponential-mechanism (bounded range)",
    "eps_delta": "generic (eps, delta)",
    "zcdp": "zCDP",
    "delta": "delta-only (a high-probability bound that fails with probability delta)",
    "none": "non-private",
}


@dataclass
class Slot:
    """One declared analysis: a label, its mechanism, and whether an analysis has filled it."""

    label: str
    event: ev.PrivacyEvent
    eps: float = math.nan  # the per-fit budget to pass to the front door
    delta: float = math.nan
    used_by: str | None = None

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "event": self.event.to_dict(),
            "eps": self.eps,
            "delta": self.delta,
            "used_by": self.used_by,
        }


@dataclass
class SessionPlan:
    """A total (eps, delta) and the analyses declared against it, composed by PLD.

    Examples
    --------
    >>> s = SessionPlan(eps=3.2, delta=1e-5)
    >>> fits = s.gaussian_fits(10, calibration="gaussian")
    >>> round(fits[0].eps, 2), round(fits[0].delta, 12), round(s.composition().eps, 2)
    (1.02, 1e-06, 3.2)
    """

    eps: float
    delta: float
    slots: list[Slot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (self.eps > 0 and math.isfinite(self.eps)):
            raise PrivacyParameterError(f"SessionPlan eps must be positive and finite, got {self.eps!r}.")
        if not (0 <= self.delta < 1):
            raise PrivacyParameterError(f"SessionPlan delta must be in [0, 1), got {self.delta!r}.")

    def totals(self) -> tuple[float, float]:
        """The session's total (eps, delta)."""
        return self.eps, self.delta

    # ------------------------------------------------------------------ declaring
    def composition(self, extra: list[ev.PrivacyEvent] = ()) -> Composition:
        """The PLD composition of the declared slots (and ``extra``) at the session's delta."""
        events = [s.event for s in self.slots] + list(extra)
        if not events:
            return Composition(0.0, self.delta, "nothing declared", 0.0, 0.0, 0)
        return compose(events, delta=self.delta)

    def _declare(self, slots: list[Slot]) -> list[Slot]:
        c = self.composition([s.event for s in slots])
        if c.eps > self.eps * (1 + 1e-9):
            raise BudgetExceededError(
                f"declaring {len(slots)} more analyses would make the session cost eps = {c.eps:.4g} at "
                f"delta = {self.delta:g} ({c.method}), more than its eps = {self.eps:g}. Nothing was "
                "declared."
            )
        self.slots.extend(slots)
        return slots

    def add(self, label: str, eps: float, delta: float = 0.0) -> Slot:
        """Declare one analysis of budget (eps, delta): it is accounted as a generic (eps, delta) step."""
        return self._declare([Slot(label, ev.eps_delta(eps, delta), eps, delta)])[0]

    def gaussian_fits(self, k: int, calibration: str = "gaussian", label: str = "fit") -> list[Slot]:
        """Declare k Gaussian analyses sharing what is left of the budget; return their slots.

        The common noise multiplier m is the smallest m whose k Gaussians,
        composed by PLD with the slots already declared, cost at most eps at delta (bisection, to
        1e-5 relative).  Each slot's (eps, delta) is what to pass to the front door so that its
        calibration (``"gaussian"``, the default, for the doors whose every step is Gaussian, or
        ``"zcdp"`` for a zCDP plan: :func:`per_fit_budget`) gives noise multiplier >= m, with delta/k
        each.  :meth:`accountant` admits into these slots only analyses whose every step is Gaussian
        (dp_lm with delta > 0, dp_glm, dp_pca, vertical_glm); dp_knockoff, dp_gmm and the others need
        an (eps, delta) slot, :meth:`add` (module docstring).
        """
        if not (isinstance(k, int) and k >= 1):
            raise PrivacyParameterError(f"k must be a positive integer, got {k!r}.")
        if calibration not in ("zcdp", "gaussian"):
            raise PrivacyParameterError(f"calibration must be 'zcdp' or 'gaussian', got {calibration!r}.")
        if not self.delta > 0:
            raise PrivacyParameterError("Gaussian analyses need a session delta > 0.")

        def cost(m: float) -> float:  # slots are Gaussian or (eps, delta) steps: PLD always applies
            events = [sl.event for sl in self.slots] + [ev.gaussian(m)] * k
            return compose(events, delta=self.delta, method="exact_gaussian" if not self.slots else "pld").eps

        lo = hi = 1.0
        while cost(hi) > self.eps:
            lo, hi = hi, 2.0 * hi
        while cost(lo) <= self.eps and lo > 1e-6:
            lo, hi = lo / 2.0, lo
        while hi - lo > 1e-5 * hi:  # cost(lo) > eps >= cost(hi)
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if cost(mid) > self.eps else (lo, mid)
        m = hi
        delta_i = even_share(self.delta, k)  # 1e-5 / 10 is 1.0000000000000002e-06, and ten of it exceed 1e-5
        eps_i, m_i = per_fit_budget(m, delta_i, calibration)
        slots = [Slot(f"{label} {j + 1}", ev.gaussian(m), eps_i, delta_i) for j in range(k)]
        return self._declare(slots)

    # ------------------------------------------------------------------ charging
    def accountant(self) -> SessionAccountant:
        """An accountant that admits analyses into the declared slots (module docstring)."""
        return SessionAccountant(eps=self.eps, delta=self.delta, session=self)

    def to_dict(self) -> dict:
        c = self.composition()
        return {
            "composition": "pld",
            "composition_text": TEXT["pld"],
            "eps": self.eps,
            "delta": self.delta,
            "declared_eps": c.eps,
            "declared_method": c.method,
            "slots": [s.to_dict() for s in self.slots],
        }

    def summary(self) -> str:
        c = self.composition()
        used = sum(s.used_by is not None for s in self.slots)
        return (
            f"Session plan: {TEXT['pld']}\n"
            f"  budget:   (eps = {self.eps:.6g}, delta = {self.delta:.6g})\n"
            f"  declared: {len(self.slots)} analyses, together (eps = {c.eps:.6g}, delta = {c.delta:.6g}) "
            f"by {c.method}\n"
            f"  run:      {used} of {len(self.slots)}"
        )


def per_fit_budget(m: float, delta: float, calibration: str) -> tuple[float, float]:
    """(eps, the noise multiplier it yields) for one fit of noise multiplier >= m at ``delta``.

    ``"gaussian"`` (every step Gaussian: the door's Gaussians of total ρ are one Gaussian, ρ from
    :func:`~.calibration.gaussian_rho_from_eps_delta`, or one Gaussian calibrated by
    :func:`~.calibration.calibrate_gaussian`): eps = the exact eps of multiplier m at delta
    (Balle & Wang 2018), and the multiplier is the analytic σ at (eps, delta), m up to the
    bisections' 1e-12.  ``"zcdp"`` (plans mixing Gaussian and pure-DP steps in zCDP): ρ =
    1/(2m²), eps = :func:`~.calibration.zcdp_eps` (Canonne, Kamath & Steinke 2020), and the
    multiplier is 1/√(2ρ(eps, δ)) with ρ(eps, δ) = :func:`~.calibration.rho_from_eps_delta`,
    rounded down, so at least m.

    Examples
    --------
    >>> eps, m = per_fit_budget(5.0, 1e-6, "zcdp")
    >>> round(m, 9)
    5.0
    >>> eps, m = per_fit_budget(5.0, 1e-6, "gaussian")
    >>> round(eps, 4), round(m, 9)
    (0.8341, 5.0)
    """
    if calibration == "zcdp":
        eps = zcdp_eps(1.0 / (2.0 * m * m), delta)
        return eps, 1.0 / math.sqrt(2.0 * rho_from_eps_delta(eps, delta))
    eps = gaussian_eps(m, delta)
    return eps, analytic_gaussian_sigma(eps, delta, 1.0)


@dataclass(repr=False)
class SessionAccountant(Accountant):
    """The accountant of a :class:`SessionPlan`: each analysis fills one declared slot."""

    session: SessionPlan | None = None
    composition: str = "basic"  # reported as "pld" (see composition_text)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._slot_of: dict[int, Slot] = {}  # id of an accepted charge -> the slot it filled

    @property
    def composition_text(self) -> str:
        return TEXT["pld"]

    def _fits(self, slot: Slot, entries: list[LedgerEntry]) -> bool:
        if slot.used_by is not None:
            return False
        if slot.event.kind == "gaussian":
            leaves = [leaf for e in entries for leaf in e.privacy_event.flat()]
            if any(leaf.kind not in GAUSSIAN_SLOT_TAKES for leaf in leaves):
                return False
            inv = math.fsum(
                leaf.count / leaf.noise_multiplier**2 for leaf in leaves if leaf.kind == "gaussian"
            )
            return inv <= (1.0 / slot.event.noise_multiplier**2) * (1 + 1e-9)
        return self._within(slot, math.fsum(e.eps for e in entries), math.fsum(e.delta for e in entries))

    def check(self, eps: float, delta: float) -> None:
        if not (eps >= 0 and delta >= 0):
            raise PrivacyParameterError(
                f"a spend must have eps >= 0 and delta >= 0, got (eps={eps}, delta={delta}); nothing was spent."
            )
        if eps > 0 and all(s.used_by is not None for s in self.session.slots):
            raise BudgetExceededError(
                "every analysis declared in this session has run. Nothing was spent; declare more "
                "analyses in the SessionPlan (within its budget) or use a new one."
            )
        unused = [s for s in self.session.slots if s.used_by is None]
        if eps > 0 and not any(s.event.kind == "gaussian" or self._within(s, eps, delta) for s in unused):
            raise BudgetExceededError(self._refusal(set(), (eps, delta)))  # before anything is read

    @staticmethod
    def _within(slot: Slot, eps: float, delta: float) -> bool:
        """(eps, delta) fits the (eps, delta) slot ``slot``."""
        return eps <= slot.eps * (1 + 1e-12) and delta <= slot.delta * (1 + 1e-12) + 1e-300

    def spend(self, entries: list[LedgerEntry], label: str = "") -> Charge:
        with self._lock:
            if math.fsum(e.eps for e in entries) == 0 and math.fsum(e.delta for e in entries) == 0:
                charge = Charge(label=label, entries=list(entries))
                self.charges.append(charge)
                return charge
            for slot in self.session.slots:
                if self._fits(slot, entries):
                    slot.used_by = label or f"analysis {len(self.charges) + 1}"
                    charge = Charge(label=label, entries=list(entries))
                    self.charges.append(charge)
                    self._slot_of[id(charge)] = slot
                    return charge
        kinds = {leaf.kind for e in entries for leaf in e.privacy_event.flat()}
        sums = math.fsum(e.eps for e in entries), math.fsum(e.delta for e in entries)
        raise BudgetExceededError(self._refusal(kinds, sums))

    def withdraw(self, charge: Charge) -> None:
        """Take back a charge (:meth:`Accountant.withdraw`) and free the slot it filled."""
        with self._lock:
            held = any(c is charge for c in self.charges)
            self.charges[:] = [c for c in self.charges if c is not charge]
            slot = self._slot_of.pop(id(charge), None) if held else None
            if slot is not None:
                slot.used_by = None

    def check_steps(self, kinds: set[str]) -> None:
        """Refuse, before anything is drawn, a call with steps of ``kinds`` that no unused slot can take:
        only Gaussian slots are left and some kind is not Gaussian (the private bounds' exponential
        mechanisms, which :func:`dpstats.api._common.run` prices before their draw)."""
        unused = [s for s in self.session.slots if s.used_by is None]
        if unused and all(s.event.kind == "gaussian" for s in unused) and kinds - GAUSSIAN_SLOT_TAKES:
            raise BudgetExceededError(self._refusal(kinds, None))

    def _refusal(self, kinds: set[str], sums: tuple[float, float] | None) -> str:
        """Why no unused slot takes an analysis whose steps are of ``kinds`` and sum to ``sums`` (eps, delta),
        and what to do instead (public inputs only: the call's mechanisms and budget)."""
        unused = [s for s in self.session.slots if s.used_by is None]
        other = [OTHER_STEPS[k] for k in sorted(kinds - GAUSSIAN_SLOT_TAKES)]
        why = []
        if any(s.event.kind == "gaussian" for s in unused):
            why.append(
                "a Gaussian slot takes only analyses whose every step is Gaussian, and this one also has "
                f"{' and '.join(other)} steps, which no Gaussian noise accounts for"
                if other
                else "its Gaussian steps have less noise than any unused Gaussian slot's: pass that slot's "
                "eps and delta to the front door"
            )
        if sums is not None and any(s.event.kind != "gaussian" for s in unused):
            why.append(
                f"it costs (eps = {sums[0]:.6g}, delta = {sums[1]:.6g}), more than any unused (eps, delta) "
                "slot takes"
            )
        return (
            f"this analysis fits none of the session's unused declared analyses: {'; '.join(why) or 'every one has run'}. Nothing "
            "was spent. An analysis that is not all Gaussian (dp_knockoff, dp_gmm, pure-DP selections, "
            'bounds="auto") needs an (eps, delta) slot: declare one with SessionPlan.add(label, eps, delta) '
            "within the session's budget and pass that eps and delta, or spend it outside the session."
        )

    @property
    def spent_eps(self) -> float:
        """The PLD composition of the slots filled so far, at the session's delta."""
        used = [s.event for s in self.session.slots if s.used_by is not None]
        return compose(used, delta=self.delta).eps if used else 0.0

    @property
    def spent_delta(self) -> float:
        return self.delta if any(s.used_by is not None for s in self.session.slots) else 0.0

    def summary(self) -> str:
        return (
            self.session.summary()
            + "\n"
            + f"  spent:    (eps = {self.spent_eps:.6g}, delta = {self.spent_delta:.6g})"
        )

    def __repr__(self) -> str:
        used = sum(s.used_by is not None for s in self.session.slots)
        return (
            f"SessionAccountant(eps={self.eps:g}, delta={self.delta:g}, composition='pld': "
            f"{used} of {len(self.session.slots)} declared analyses run)"
        )

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.update(composition="pld", composition_text=TEXT["pld"], session=self.session.to_dict())
        return out
