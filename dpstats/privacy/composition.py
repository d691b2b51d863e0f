"""Tight composition of recorded privacy events, by dp_accounting.

:func:`compose` answers "what have these analyses cost?": it takes results, privacy statements,
ledger entries, accountants or :class:`~.events.PrivacyEvent` s, reads every step's event
(:mod:`.events`) and returns the (eps, delta) of their composition with the method that gave it.

How (every candidate below is a valid (eps, delta) bound for the *same* composed mechanism at the
*same* total delta, so their minimum is valid too; :attr:`Composition.method` names the one taken):

* **exact Gaussian** — when every step is Gaussian: k Gaussian mechanisms with multipliers σᵢ
  compose, also adaptively, to one Gaussian with multiplier (Σ σᵢ⁻²)^(−1/2) (Dong, Roth & Su 2022,
  Corollary 3.3), whose exact eps at delta is Balle & Wang's (2018, Theorem 8) characterisation
  inverted (:func:`gaussian_eps`; the analytic Gaussian of :mod:`.calibration`).
* **PLD** — privacy loss distributions (Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020;
  Doroshenko et al. 2022, "Connect the dots"), dp_accounting's pessimistic discretisation, an
  upper bound on the composition's privacy curve: Gaussian, scalar Laplace, and any (eps, delta)
  step by the pair that dominates every (eps, delta)-DP mechanism (Kairouz, Oh & Viswanath 2015);
  bounded-range and pure steps enter as eps-DP.  Not available with ρ-zCDP steps (no PLD).
* **RDP** — Rényi DP (Mironov 2017) by dp_accounting's RdpAccountant: Gaussian and Laplace exactly,
  zCDP steps as ρα, bounded range at eps²/8, pure eps at eps²/2.  Not available with (eps, delta)
  steps of delta > 0 (they have no RDP curve).
* **PLD + RDP** — the PLD part (Gaussian, Laplace, pure, (eps, delta)) at δ₁ and the RDP part
  (bounded range, zCDP) at δ₂ = δ − δ₁, added by basic composition (Dwork & Roth 2014, Theorem
  3.16: a mechanism made of an (ε₁, δ₁) and an (ε₂, δ₂) part is (ε₁+ε₂, δ₁+δ₂)-DP); δ₁ on a grid.
* **zCDP** — every step as δ-approximate ρ-zCDP (:meth:`~.events.PrivacyEvent.zcdp_cost`), summed
  (Bun & Steinke 2016, Lemma 2.3 and §8) and converted once (Canonne, Kamath & Steinke 2020,
  Cor. 13: :func:`~.calibration.zcdp_eps`).
* **basic** — the sum of the ledger's (eps, delta), when the requested delta covers its delta.

Delta-only steps (high-probability bounds) are taken out of delta first: the mechanisms are
composed at delta − Σ δᵢ.

Adaptivity.  The PLD and RDP figures are valid for a *sequence of mechanisms fixed in advance*
(each step's mechanism and parameters known beforehand, its input chosen adaptively: Zhu, Dong &
Wang 2022 for dominating pairs; Mironov 2017 for RDP).  When the analyses themselves (their
number or budgets) were chosen after seeing earlier outputs, use a filter: the accountant's
``composition="zcdp"`` (:mod:`.accountant`).

Accuracy.  PLDs are discretised at 1e-4 in the privacy loss (coarser for long compositions:
:func:`_vdi`; pessimistic, so eps can only be overstated, by at most the number
of non-Gaussian steps times that interval).  More than 16 distinct Laplace multipliers or pure
eps values are rounded to 17 values on a geometric grid in the conservative direction (less
noise, larger eps; :func:`_coarsen`).
dp_accounting is imported here, inside the functions, never by ``import dpstats``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..errors import PrivacyParameterError
from . import events as ev
from .calibration import gaussian_eps, golden_section, zcdp_eps

if TYPE_CHECKING:  # what compose() reads, for type checkers
    from .accountant import Accountant, LedgerEntry
    from .plan import Plan
    from .statement import PrivacyStatement

    class HasPrivacy(Protocol):
        """A result: anything with a privacy statement."""

        privacy: PrivacyStatement

    Composable: TypeAlias = (
        "HasPrivacy | PrivacyStatement | Plan | Accountant | LedgerEntry | ev.PrivacyEvent "
        "| dict[str, Any] | Sequence[Composable]"
    )
else:
    Composable = Any  # results, statements, plans, accountants, ledger entries, events, dicts, lists of these

_GROUPS = 16
_GRID = 200.0  # steps per factor e: 0.5 %


@dataclass(frozen=True)
class Composition:
    """The composed (eps, delta) of some steps and how it was obtained.

    ``basic_eps``/``basic_delta`` are the ledger's sums (basic composition) when the steps came
    with ledger entries (NaN for bare events without an (eps, delta)).
    """

    eps: float
    delta: float
    method: str
    basic_eps: float
    basic_delta: float
    steps: int
    candidates: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """eps / basic eps (1 when no tighter bound was found)."""
        return self.eps / self.basic_eps if self.basic_eps else math.nan

    def text(self) -> str:
        return (
            f"(eps = {self.eps:.4g}, delta = {self.delta:.3g}) by {self.method}; "
            f"basic composition: (eps = {self.basic_eps:.4g}, delta = {self.basic_delta:.3g})"
        )

    def to_dict(self) -> dict:
        return {
            "eps": self.eps,
            "delta": self.delta,
            "composition": self.method,
            "basic_eps": self.basic_eps,
            "basic_delta": self.basic_delta,
            "steps": self.steps,
            "candidates": dict(self.candidates),
        }

    def __iter__(self):  # eps, delta = dp.compose(...)
        return iter((self.eps, self.delta))


# ----------------------------------------------------------------------------- collecting
def collect(items: Composable) -> tuple[list[ev.PrivacyEvent], float, float]:
    """The leaf events of ``items`` and the basic sums of their (eps, delta).

    ``items``: a result (``.privacy``), a privacy statement or plan (``.ledger``/``.entries``), an
    accountant (``.ledger``), a ledger entry, an event or its dict, or a list of these.
    """
    out: list[ev.PrivacyEvent] = []
    sums = [0.0, 0.0]

    def visit(x) -> None:
        if isinstance(x, (list, tuple)):
            for y in x:
                visit(y)
        elif isinstance(x, ev.PrivacyEvent):
            out.extend(x.flat())
            e, d = _basic_of_event(x)
            sums[0] += e
            sums[1] += d
        elif isinstance(x, dict):
            visit(ev.PrivacyEvent.from_dict(x))
        elif hasattr(x, "privacy") and hasattr(x.privacy, "ledger"):
            visit(list(x.privacy.ledger))
        elif hasattr(x, "ledger") and not hasattr(x, "step"):
            visit(list(x.ledger))
        elif hasattr(x, "entries") and not hasattr(x, "step"):
            visit(list(x.entries))
        elif hasattr(x, "step") and hasattr(x, "eps"):
            out.extend(ev.of_entry(x).flat())
            sums[0] += x.eps
            sums[1] += x.delta
        else:
            raise TypeError(f"cannot read privacy events from {type(x).__name__}")

    visit(items)
    return out, sums[0], sums[1]


def _basic_of_event(e: ev.PrivacyEvent) -> tuple[float, float]:
    k = e.count
    if e.kind == "laplace":
        return k / e.noise_multiplier, 0.0
    if e.kind in ("pure", "bounded_range"):
        return k * e.eps, 0.0
    if e.kind == "eps_delta":
        return k * e.eps, k * e.delta
    if e.kind == "delta":
        return 0.0, k * e.delta
    if e.kind == "post_processing":
        return 0.0, 0.0
    if e.kind == "none":
        return math.inf, 0.0
    if e.kind == "composed":
        sums = [_basic_of_event(p) for p in e.parts]
        return k * math.fsum(s[0] for s in sums), k * math.fsum(s[1] for s in sums)
    return math.nan, math.nan  # Gaussian, zCDP: no (eps, delta) of their own


# ----------------------------------------------------------------------------- the parts
@dataclass
class _Parts:
    inv_sq: float = 0.0  # Σ count/σ² of the Gaussians
    laplace: Counter = field(default_factory=Counter)  # multiplier -> count
    pure: Counter = field(default_factory=Counter)  # eps -> count
    pure_rho: float = 0.0  # Σ ρ of pure steps (eps²/2 or recorded)
    br: Counter = field(default_factory=Counter)  # eps -> count
    eps_delta: Counter = field(default_factory=Counter)  # (eps, delta) -> count
    rho: float = 0.0  # Σ ρ of zCDP steps
    delta_steps: float = 0.0
    nonprivate: bool = False
    n: int = 0

    @classmethod
    def of(cls, leaves: list[ev.PrivacyEvent]) -> _Parts:
        p = cls()
        for e in leaves:
            k = e.count
            p.n += k
            if e.kind == "gaussian":
                p.inv_sq += k / e.noise_multiplier**2
            elif e.kind == "laplace":
                p.laplace[e.noise_multiplier] += k
            elif e.kind == "pure":
                p.pure[e.eps] += k
                p.pure_rho += k * (e.rho if e.rho is not None else 0.5 * e.eps**2)
            elif e.kind == "bounded_range":
                p.br[e.eps] += k
            elif e.kind == "eps_delta":
                p.eps_delta[(e.eps, e.delta)] += k
            elif e.kind == "zcdp":
                p.rho += k * e.rho
            elif e.kind == "delta":
                p.delta_steps += k * e.delta
            elif e.kind == "none":
                p.nonprivate = True
        return p

    @property
    def gaussian_multiplier(self) -> float:
        return 1.0 / math.sqrt(self.inv_sq) if self.inv_sq > 0 else math.inf

    @property
    def only_gaussian(self) -> bool:
        return not (self.laplace or self.pure or self.br or self.eps_delta or self.rho)


def _coarsen(counter: Counter, up: bool) -> Counter:
    """At most ``_GROUPS`` + 1 distinct values, rounded in the conservative direction.

    Values are rounded on a geometric grid — up for eps, down for noise multipliers — whose step
    is 0.5 % or 1/16 of the log range, whichever is larger: every step then counts as at least
    as costly as it was.
    """
    if len(counter) <= _GROUPS:
        return counter
    logs = {v: math.log(v) for v in counter}
    lo, hi = min(logs.values()), max(logs.values())
    width = max(1.0 / _GRID, (hi - lo) / _GROUPS)
    out: Counter = Counter()
    for value, k in counter.items():
        j = (logs[value] - lo) / width
        j = math.ceil(j - 1e-12) if up else math.floor(j + 1e-12)
        out[math.exp(lo + j * width) if j else math.exp(lo)] += k
    return out


# ----------------------------------------------------------------------------- accountants
def _pld(parts: _Parts, vdi: float):
    """One PLD of the Gaussian, Laplace, pure and (eps, delta) steps (None if there are none)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as PL

    plds = []
    if parts.inv_sq > 0:
        plds.append(PL.from_gaussian_mechanism(parts.gaussian_multiplier, value_discretization_interval=vdi))
    for m, k in _coarsen(parts.laplace, up=False).items():
        plds.append(PL.from_laplace_mechanism(m, value_discretization_interval=vdi).self_compose(k))
    for e, k in _coarsen(parts.pure, up=True).items():
        plds.append(_pure_pld(e, k, vdi))
    for (e, d), k in parts.eps_delta.items():
        dp = common.DifferentialPrivacyParameters(e, d)
        plds.append(PL.from_privacy_parameters(dp, value_discretization_interval=vdi).self_compose(k))
    return _compose_all(plds)


def _pure_pld(eps: float, k: int, vdi: float):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as PL

    dp = common.DifferentialPrivacyParameters(eps, 0.0)
    return PL.from_privacy_parameters(dp, value_discretization_interval=vdi).self_compose(k)


def _with_bounded_range(pld, parts: _Parts, vdi: float):
    """``pld`` composed with the bounded-range steps as pure eps steps."""
    plds = [pld] if pld is not None else []
    plds += [_pure_pld(e, k, vdi) for e, k in _coarsen(parts.br, up=True).items()]
    return _compose_all(plds)


def _compose_all(plds):
    if not plds:
        return None
    out = plds[0]
    for p in plds[1:]:
        out = out.compose(p)
    return out


def _vdi(parts: _Parts, eps_upper: float = math.inf) -> float:
    """PLD discretisation interval: 1e-4, coarser for long or expensive compositions.

    At least 1e-3 of the basic eps per step when there are more than 100 non-Gaussian steps, and
    at least 2e-5 of an upper bound on the answer (the zCDP figure): the PLD's support grows with
    the privacy loss range, and a pessimistic PLD overstates eps by at most (number of
    non-Gaussian steps + 1) × the interval.
    """
    k = sum(parts.laplace.values()) + sum(parts.pure.values()) + sum(parts.br.values())
    k += sum(parts.eps_delta.values())
    vdi = 1e-4
    if math.isfinite(eps_upper):
        vdi = max(vdi, 2e-5 * eps_upper)
    if k <= 100:
        return vdi
    basic = math.fsum(c / m for m, c in parts.laplace.items())
    basic += math.fsum(c * e for e, c in parts.pure.items()) + math.fsum(c * e for e, c in parts.br.items())
    basic += math.fsum(c * e for (e, _), c in parts.eps_delta.items())
    return max(vdi, 1e-3 * basic / k)


def _rdp(parts: _Parts, include_gaussian_laplace_pure: bool):
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as R

    acc = R.RdpAccountant()
    rho = parts.rho + math.fsum(c * e * e / 8.0 for e, c in parts.br.items())
    if include_gaussian_laplace_pure:
        if parts.inv_sq > 0:
            acc.compose(dpa.GaussianDpEvent(parts.gaussian_multiplier))
        for m, k in parts.laplace.items():
            acc.compose(dpa.LaplaceDpEvent(m), k)
        rho += parts.pure_rho
    if rho > 0:
        acc.compose(dpa.ZCDpEvent(rho))
    return acc


def _zcdp_upper(leaves: list[ev.PrivacyEvent], delta_m: float) -> float:
    """The zCDP figure (an upper bound on the answer), or inf when it does not apply."""
    rho = math.fsum(e.zcdp_cost()[0] for e in leaves if e.kind != "delta")
    d_approx = math.fsum(e.zcdp_cost()[1] for e in leaves if e.kind == "eps_delta")
    if delta_m - d_approx > 0:
        return _zcdp_eps(rho, delta_m - d_approx)
    return math.inf


def _best_split(total) -> float:
    """The f in (0, 1) minimising ``total(f)``: a coarse grid, then golden-section search around its best."""
    grid = [0.001, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.999]
    values = [total(f) for f in grid[1:-1]]
    i = min(range(len(values)), key=values.__getitem__)
    lo, hi = grid[i], grid[i + 2]
    x, fx = golden_section(total, lo, hi, steps=6)
    return min((values[i], grid[i + 1]), (fx, x))[1]


def _zcdp_eps(rho: float, delta: float) -> float:
    if rho == 0:
        return 0.0
    if not (delta > 0):
        return math.inf
    return zcdp_eps(rho, delta)


# ----------------------------------------------------------------------------- compose
METHODS = ("auto", "exact_gaussian", "pld", "rdp", "pld+rdp", "zcdp", "basic")
LABELS = {
    "exact_gaussian": "exact Gaussian composition (Dong, Roth & Su 2022; Balle & Wang 2018)",
    "pld": "PLD accounting (dp_accounting)",
    "rdp": "RDP accounting (dp_accounting)",
    "pld+rdp": "PLD + RDP accounting (dp_accounting), parts added by basic composition",
    "zcdp": "zCDP composition (Bun & Steinke 2016; converted by Canonne, Kamath & Steinke 2020)",
    "basic": "basic composition",
    "none": "not private (eps = inf)",
}


def _candidates(method, parts, leaves, delta, delta_m, basic_eps, basic_delta) -> dict[str, float]:
    """Every valid bound that applies (or only ``method``'s), by name."""
    cands: dict[str, float] = {}
    want = (lambda m: True) if method == "auto" else (lambda m: m == method)

    if want("basic") and basic_delta <= delta * (1 + 1e-12) and math.isfinite(basic_eps):
        cands["basic"] = basic_eps
    if want("exact_gaussian") and parts.only_gaussian:
        cands["exact_gaussian"] = gaussian_eps(parts.gaussian_multiplier, delta_m) if parts.inv_sq else 0.0
        if method == "auto":  # exact: no other bound can be smaller
            return cands
    if want("zcdp"):
        rho = math.fsum(e.zcdp_cost()[0] for e in leaves if e.kind != "delta")
        d_approx = math.fsum(e.zcdp_cost()[1] for e in leaves if e.kind == "eps_delta")
        if delta_m - d_approx > 0 or rho == 0:
            cands["zcdp"] = _zcdp_eps(rho, delta_m - d_approx)
    vdi = _vdi(parts, _zcdp_upper(leaves, delta_m))  # the same grid whichever method is asked for
    gaussian_only_pld = not (parts.laplace or parts.pure or parts.eps_delta)
    pld = _pld(parts, vdi) if (want("pld") or (want("pld+rdp") and not gaussian_only_pld)) else None
    if want("pld") and parts.rho == 0:
        full = _with_bounded_range(pld, parts, vdi)
        cands["pld"] = 0.0 if full is None else float(full.get_epsilon_for_delta(delta_m))
    if want("rdp") and not parts.eps_delta and delta_m > 0:
        cands["rdp"] = float(_rdp(parts, True).get_epsilon(delta_m))
    has_rdp_part = parts.rho > 0 or parts.br
    has_pld_part = parts.inv_sq > 0 or parts.laplace or parts.pure or parts.eps_delta
    if want("pld+rdp") and has_rdp_part and has_pld_part and delta_m > 0:
        rdp = _rdp(parts, False)
        if gaussian_only_pld:  # the PLD part is one Gaussian: its exact curve, no discretisation

            def part(d: float, _coarse: bool) -> float:
                return gaussian_eps(parts.gaussian_multiplier, d)

        else:
            coarse = _pld(parts, max(vdi, 1e-3)) if vdi < 1e-3 else pld  # only to find the split

            def part(d: float, use_coarse: bool) -> float:
                return float((coarse if use_coarse else pld).get_epsilon_for_delta(d))

        f = _best_split(lambda f: part(f * delta_m, True) + float(rdp.get_epsilon((1 - f) * delta_m)))
        cands["pld+rdp"] = part(f * delta_m, False) + float(rdp.get_epsilon((1 - f) * delta_m))
    return cands


def compose(items: Composable, delta: float | None = None, method: str = "auto") -> Composition:
    """The (eps, delta) that the steps of ``items`` cost together (module docstring).

    Parameters
    ----------
    items
        Results, privacy statements, plans, accountants, ledger entries, events (or their dicts),
        or a list of these.
    delta : float, optional
        The total delta to state eps at.  Default: the basic sum of the ledger's delta, so the
        figure is directly comparable to basic composition.
    method : str
        ``"auto"`` (the smallest valid bound) or one of :data:`METHODS` to force one.

    Examples
    --------
    >>> import dpstats as dp
    >>> from dpstats.privacy import events as ev
    >>> c = dp.compose([ev.laplace(2.0)] * 20, delta=1e-6)
    >>> c.method, round(c.eps, 2), c.basic_eps
    ('PLD accounting (dp_accounting)', 9.67, 10.0)
    """
    if method not in METHODS:
        raise PrivacyParameterError(f"method must be one of {METHODS}, got {method!r}.")
    leaves, basic_eps, basic_delta = collect(items)
    parts = _Parts.of(leaves)
    if delta is None:
        delta = basic_delta if math.isfinite(basic_delta) else 0.0
    if not (0 <= delta < 1):
        raise PrivacyParameterError(f"delta must be in [0, 1), got {delta!r}.")
    if parts.nonprivate or math.isinf(basic_eps):
        return Composition(math.inf, delta, LABELS["none"], math.inf, basic_delta, parts.n)
    delta_m = delta - parts.delta_steps
    if delta_m < 0:
        raise PrivacyParameterError(
            f"delta = {delta:g} is below the {parts.delta_steps:g} of the high-probability (delta-only) "
            "steps; state a larger delta."
        )
    cands = _candidates(method, parts, leaves, delta, delta_m, basic_eps, basic_delta)
    cands = {k: v for k, v in cands.items() if not math.isnan(v)}
    if not cands:
        raise PrivacyParameterError(
            f"composition method {method!r} does not apply to these steps at delta = {delta:g}"
            + ("; state delta > 0 for Gaussian or zCDP steps." if delta_m == 0 else ".")
        )
    name = min(cands, key=cands.get)
    return Composition(
        eps=cands[name],
        delta=delta,
        method=LABELS[name],
        basic_eps=basic_eps,
        basic_delta=basic_delta,
        steps=parts.n,
        candidates=cands,
    )
