"""Privacy accounting for dp_gmm: zero-concentrated DP (zCDP) across all steps.

Every step of :func:`dpstats.dp_gmm` is a Gaussian mechanism or a pure-DP
selection, so the whole pipeline is accounted in zCDP (Bun & Steinke 2016)
and converted to (eps, delta) once:

* Gaussian mechanism, l2 sensitivity Δ, noise N(0, σ²): (Δ²/2σ²)-zCDP
  (Bun & Steinke, Prop. 1.6), so σ = Δ / √(2ρ).
* Laplace AboveThreshold (one positive answer) is ε-DP (Lyu, Su & Li 2017,
  Alg. 1), hence ε²/2-zCDP (Bun & Steinke, Prop. 1.4).
* The exponential mechanism with a sensitivity-1 score is ε-DP and
  ε²/8-zCDP (Cesar & Rogers 2021, bounded range).
* zCDP composes additively, also adaptively (Bun & Steinke, Lemma 2.3), and
  ρ-zCDP implies (ρ + 2√(ρ log(1/δ)), δ)-DP (Bun & Steinke, Prop. 1.3).

The budget (eps, delta) is turned into ρ by inverting the last bound
(:func:`rho_from_eps_delta`), ρ is split across steps by fixed public
fractions, and the ledger shows each step's share of (eps, delta) in
proportion to its ρ (the shares sum exactly to (eps, delta); the guarantee is
that of the composition, not of any step alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..privacy.accountant import LedgerEntry


def rho_from_eps_delta(eps: float, delta: float) -> float:
    """Largest ρ with ρ + 2√(ρ log(1/δ)) <= eps (Bun & Steinke 2016, Prop. 1.3).

    Examples
    --------
    >>> rho = rho_from_eps_delta(1.0, 1e-6)
    >>> round(rho + 2 * math.sqrt(rho * math.log(1e6)), 12)
    1.0
    """
    log_term = math.log(1.0 / delta)
    return (math.sqrt(log_term + eps) - math.sqrt(log_term)) ** 2


def gaussian_sigma(sensitivity: float, rho: float) -> float:
    """Noise standard deviation of a ρ-zCDP Gaussian mechanism: Δ/√(2ρ)."""
    return sensitivity / math.sqrt(2.0 * rho)


def svt_eps(rho: float, copies: int = 1) -> float:
    """ε of a Laplace AboveThreshold worth ρ when ``copies`` runs see one row.

    ε-DP gives ε²/2-zCDP; ``copies`` parallel runs on a partition that one
    replaced row can touch (2 under replace-one) cost copies·ε²/2.
    """
    return math.sqrt(2.0 * rho / copies)


def em_eps(rho: float) -> float:
    """ε of an exponential mechanism worth ρ-zCDP (ε²/8, Cesar & Rogers 2021)."""
    return math.sqrt(8.0 * rho)


@dataclass
class BudgetPlan:
    """ρ for each named step, and the ledger entries that apportion (eps, delta).

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
            out.append(LedgerEntry(step=step, mechanism=mech, eps=eps_i, delta=delta_i,
                                   sensitivity=sens, note=text))
        return out
