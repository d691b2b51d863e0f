"""The accountant's composition rules, and why each is valid when analyses are chosen adaptively.

An :class:`~dpstats.privacy.accountant.Accountant` admits spends one at a time; the analyst may
choose each next analysis — which method, which budget — after seeing earlier outputs.  A rule
that admits a spend only while a running total stays within a budget fixed in advance is a
*privacy filter* (Rogers, Roth, Ullman & Vadhan 2016, "Privacy Odometers and Filters"); the
guarantee at the end is the budget's, whatever the adaptive choices were.

``"basic"`` (the default)
    Admit while Σ eps ≤ eps and Σ delta ≤ delta.  Basic composition is a valid filter (Rogers et
    al. 2016, Theorem 3.6 — the sum rule holds with adaptively chosen parameters).  It works for
    pure budgets (delta = 0) and is what every existing ledger was checked against.
``"zcdp"``
    Admit while Σ ρ ≤ ρ_B and Σ δ_steps ≤ δ_reserve, each step costed by its recorded event
    (:meth:`~.events.PrivacyEvent.zcdp_cost`: Gaussian Δ²/(2σ²), pure eps²/2, bounded range
    eps²/8, zCDP ρ, a generic (eps, δ) step eps²/2 plus δ, a delta-only step δ).  ρ_B is the
    largest ρ whose ρ-zCDP is (eps, δ − δ_reserve)-DP by Canonne, Kamath & Steinke (2020, Cor. 13;
    :func:`~.calibration.rho_from_eps_delta`), which holds for any ρ-zCDP mechanism whatever its
    steps are (the filter cannot know in advance that they will all be Gaussian).  Valid
    under fully adaptive choice: Rényi/zCDP filters (Feldman & Zrnic 2021, "Individual Privacy
    Accounting via a Rényi Filter", Theorem 3.1 — a sequence whose summed RDP at order α stays
    within the budget's is RDP at α; zCDP is RDP at every α with ρα) and, with the δ-steps,
    approximate-zCDP filters (Whitehouse, Ramdas, Rogers & Wu 2023, "Fully-Adaptive Composition in
    Differential Privacy"), converted once to (eps, delta − δ_reserve + δ_reserve) = (eps, delta).
``"pld"``
    Only for a session declared in advance (:class:`~.session.SessionPlan`): each declared slot
    is a fixed mechanism (a Gaussian of a given multiplier, or an (eps, delta) step), the slots are
    composed by PLD before anything runs, and an analysis is admitted into an unused slot only if
    its own mechanisms are dominated by the slot's.  Adaptive composition of mechanisms each
    dominated by a pair fixed in advance is dominated by the composition of the pairs (Zhu, Dong &
    Wang 2022, Theorem 10; Dong, Roth & Su 2022, Theorem 3.2), so the declared PLD figure holds
    whatever is run in the slots and in whatever order.  A PLD rule that lets the *parameters* be
    chosen adaptively is not valid in general, which is why there is no ``Accountant(composition=
    "pld")`` without a declared session.
"""

from __future__ import annotations

import math

from ..errors import PrivacyParameterError
from . import calibration
from .calibration import rho_from_eps_delta

COMPOSITIONS = ("basic", "zcdp", "pld")

TEXT = {
    "basic": "basic composition (a privacy filter, valid when analyses are chosen adaptively: "
    "Rogers, Roth, Ullman & Vadhan 2016)",
    "zcdp": "zCDP filter (valid when analyses are chosen adaptively: Feldman & Zrnic 2021; "
    "Whitehouse, Ramdas, Rogers & Wu 2023)",
    "pld": "PLD accounting of a session declared in advance (dp_accounting; Zhu, Dong & Wang 2022)",
}


def zcdp_budget(eps: float, delta: float, reserve: float) -> float:
    """ρ_B of a zCDP filter: the largest ρ whose conversion at delta − reserve is within eps."""
    if math.isinf(eps):
        return math.inf
    if not (delta - reserve > 0):
        raise PrivacyParameterError(
            f"composition='zcdp' needs delta > delta_reserve (got delta = {delta:g}, delta_reserve = "
            f"{reserve:g}): zCDP converts to (eps, delta) only with delta > 0. Use composition='basic' "
            "for a pure budget."
        )
    return rho_from_eps_delta(eps, delta - reserve)


def zcdp_eps(rho: float, delta: float) -> float:
    """eps of ρ-zCDP at delta (Canonne, Kamath & Steinke 2020, Cor. 13: :func:`~.calibration.zcdp_eps`)."""
    return calibration.zcdp_eps(rho, delta)


def zcdp_cost(entries) -> tuple[float, float]:
    """(Σ ρ, Σ δ) of ledger entries, from their events."""
    rho = delta = 0.0
    for e in entries:
        r, d = e.privacy_event.zcdp_cost()
        rho, delta = rho + r, delta + d
    return rho, delta


def check_composition(composition: str) -> str:
    if composition not in ("basic", "zcdp"):
        raise PrivacyParameterError(
            f"Accountant composition must be 'basic' or 'zcdp', got {composition!r}; for PLD "
            "accounting declare the session in advance with dp.SessionPlan."
        )
    return composition
