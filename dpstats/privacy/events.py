"""Privacy events: what each ledger step's mechanism costs, as data that any accountant can recompose.

A :class:`~dpstats.privacy.accountant.LedgerEntry` states its share of (eps, delta) — the figure
basic composition adds up — and, in ``event``, the mechanism behind it as a :class:`PrivacyEvent`:
enough to compose the steps of many analyses tightly (:mod:`.composition`: privacy loss
distributions and Rényi DP through dp_accounting) or in zCDP (the accountant's filter).  Events are
plain JSON-able dicts in every channel (``to_dict()``, the report's ledger, R), and
:meth:`PrivacyEvent.from_dict` reads them back.

Kinds (sensitivities are those of the neighbouring relation in force, so every event is a
sensitivity-1 mechanism after scaling):

``gaussian``
    N(0, σ²) noise on an l2-sensitivity-Δ₂ query: ``noise_multiplier`` = σ/Δ₂.  Several Gaussian
    releases with total ρ = Σ Δ²/(2σ²) are recorded as one Gaussian with multiplier 1/√(2ρ): the
    composition of Gaussian mechanisms, also adaptive, is exactly one Gaussian mechanism with
    μ² = Σ μᵢ² (Dong, Roth & Su 2022, Corollary 3.3; μ = Δ/σ).
``laplace``
    Laplace noise of scale b on a *scalar* query of sensitivity Δ₁: ``noise_multiplier`` = b/Δ₁
    (pure 1/multiplier-DP).  Vector Laplace releases are recorded as ``pure``: their privacy loss
    is not dominated by the scalar Laplace pair in general.
``pure``
    Any eps-DP mechanism (``eps``); ``rho`` optionally a known zCDP bound tighter than eps²/2
    (Bun & Steinke 2016, Prop. 1.4).
``bounded_range``
    ``count`` rounds of an eps-bounded-range mechanism (the exponential mechanism, Gumbel-max,
    peeling): eps-DP and eps²/8-zCDP each (Durfee & Rogers 2019; Dong, Durfee & Rogers 2020;
    Cesar & Rogers 2021).
``eps_delta``
    A generic (eps, delta)-DP step: only its (eps, delta) is known.
``zcdp``
    A ρ-zCDP step (e.g. a pipeline of Gaussian and selection steps accounted in zCDP).
``delta``
    A high-probability bound failing with probability ``delta``: a delta-only step.
``none``
    No privacy (eps = inf) — or ``post_processing``: zero cost.
``composed``
    Several of the above (``parts``) in one ledger step.

Selections (:func:`selection_event`): the peeling exponential mechanism and the one-shot Gumbel
top-k (same output law, Durfee & Rogers 2019, Lemma 4.2) are k rounds of an (eps/k)-exponential
mechanism, hence k bounded-range steps; the joint exponential mechanism is one eps-bounded-range
step.  The canonical Lipschitz top-k (:mod:`.topk.canonical`) is report-noisy-max with
*exponential* noise over k-subsets — the permute-and-flip family, not the Gumbel-max one — and we
could not derive a bounded-range property for it: its exact law reaches a worst privacy loss of
eps (tight, ``tests/test_topk_exact_eps.py``) and nothing we know bounds the spread between its
largest and smallest log-ratio by eps.  It is recorded as a pure eps step (eps²/2-zCDP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

KINDS = (
    "gaussian",
    "laplace",
    "pure",
    "bounded_range",
    "eps_delta",
    "zcdp",
    "delta",
    "none",
    "post_processing",
    "composed",
)


@dataclass(frozen=True)
class PrivacyEvent:
    """One mechanism's cost, in the terms an accountant needs (kinds: module docstring).

    Examples
    --------
    >>> gaussian(sigma=4.0, sensitivity=2.0).to_dict()
    {'kind': 'gaussian', 'noise_multiplier': 2.0}
    >>> PrivacyEvent.from_dict(bounded_range(0.5, count=3).to_dict()).zcdp_cost()
    (0.09375, 0.0)
    """

    kind: str
    noise_multiplier: float | None = None
    eps: float | None = None
    delta: float | None = None
    rho: float | None = None
    count: int = 1
    parts: tuple[PrivacyEvent, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown privacy event kind {self.kind!r}; one of {KINDS}")

    def to_dict(self) -> dict:
        """Plain JSON-able dict: only the fields the kind uses."""
        out: dict = {"kind": self.kind}
        for name in ("noise_multiplier", "eps", "delta", "rho"):
            value = getattr(self, name)
            if value is not None:
                out[name] = float(value)
        if self.count != 1:
            out["count"] = int(self.count)
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
        return out

    @classmethod
    def from_dict(cls, d: dict) -> PrivacyEvent:
        """Inverse of :meth:`to_dict`, through the constructors below (so eps = inf reads as ``none``,
        delta = 0 as ``pure``, and ``{"kind": "gaussian", "rho": ρ}`` as the Gaussian of total ρ).

        Examples
        --------
        >>> PrivacyEvent.from_dict({"kind": "gaussian", "rho": 0.5}).noise_multiplier
        1.0
        """
        kind, k = d["kind"], int(d.get("count", 1))
        m, eps, delta, rho = (d.get(x) for x in ("noise_multiplier", "eps", "delta", "rho"))
        if kind == "gaussian":
            return gaussian(m, 1.0, k) if m is not None else gaussian_rho(rho)
        if kind == "laplace":
            return laplace(m, 1.0, k)
        if kind == "pure":
            return pure(eps, rho, k)
        if kind == "bounded_range":
            return bounded_range(eps, k)
        if kind == "eps_delta":
            e = eps_delta(eps, delta)
            return e if k == 1 else cls("composed", count=k, parts=(e,))
        if kind == "zcdp":
            return zcdp(rho * k)
        if kind == "delta":
            return delta_only(delta * k)
        if kind == "composed":
            return cls("composed", count=k, parts=tuple(cls.from_dict(p) for p in d.get("parts", ())))
        return cls(kind)

    def flat(self) -> list[PrivacyEvent]:
        """The leaf events, ``composed`` expanded (counts kept)."""
        if self.kind != "composed":
            return [self]
        return [leaf for p in self.parts for _ in range(self.count) for leaf in p.flat()]

    def zcdp_cost(self) -> tuple[float, float]:
        """(ρ, δ): this event as δ-approximate ρ-zCDP (Bun & Steinke 2016, Def. 8.1), for the filter.

        Gaussian Δ²/(2σ²) (Prop. 1.6); pure and Laplace eps²/2 (Prop. 1.4) unless a tighter ρ is
        recorded; bounded range eps²/8 (Cesar & Rogers 2021); (eps, delta)-DP is δ-approximate
        eps²/2-zCDP (Bun & Steinke, Prop. 8.3 region); delta steps cost δ only; none is infinite.
        """
        k = self.count
        if self.kind == "gaussian":
            return k / (2.0 * self.noise_multiplier**2), 0.0
        if self.kind == "laplace":
            return k * 0.5 / self.noise_multiplier**2, 0.0
        if self.kind == "pure":
            rho = self.rho if self.rho is not None else 0.5 * self.eps**2
            return k * rho, 0.0
        if self.kind == "bounded_range":
            return k * self.eps**2 / 8.0, 0.0
        if self.kind == "eps_delta":
            return k * 0.5 * self.eps**2, k * self.delta
        if self.kind == "zcdp":
            return k * self.rho, 0.0
        if self.kind == "delta":
            return 0.0, k * self.delta
        if self.kind == "post_processing":
            return 0.0, 0.0
        if self.kind == "none":
            return math.inf, 0.0
        rho = delta = 0.0
        for p in self.parts:
            r, d = p.zcdp_cost()
            rho, delta = rho + k * r, delta + k * d
        return rho, delta


# ----------------------------------------------------------------------------- constructors
def gaussian(sigma: float, sensitivity: float = 1.0, count: int = 1) -> PrivacyEvent:
    """N(0, σ²) on an l2-sensitivity-Δ₂ query: noise multiplier σ/Δ₂ (``count`` identical releases)."""
    if math.isinf(sigma) or sigma == 0:
        return none() if sigma == 0 else post_processing()
    return PrivacyEvent("gaussian", noise_multiplier=float(sigma) / float(sensitivity), count=int(count))


def gaussian_rho(rho: float) -> PrivacyEvent:
    """Gaussian releases of total ρ = Σ Δ²/(2σ²), as the one Gaussian they compose to: multiplier 1/√(2ρ)."""
    if math.isinf(rho):
        return none()
    if rho == 0:
        return post_processing()
    return PrivacyEvent("gaussian", noise_multiplier=1.0 / math.sqrt(2.0 * rho))


def laplace(scale: float, sensitivity: float = 1.0, count: int = 1) -> PrivacyEvent:
    """Laplace of scale b on a scalar query of sensitivity Δ₁: noise multiplier b/Δ₁."""
    if scale == 0:
        return none()
    return PrivacyEvent("laplace", noise_multiplier=float(scale) / float(sensitivity), count=int(count))


def pure(eps: float, rho: float | None = None, count: int = 1) -> PrivacyEvent:
    """An eps-DP step (optionally also ρ-zCDP with a ρ below eps²/2)."""
    if math.isinf(eps):
        return none()
    if eps == 0:
        return post_processing()
    return PrivacyEvent("pure", eps=float(eps), rho=None if rho is None else float(rho), count=int(count))


def bounded_range(eps: float, count: int = 1) -> PrivacyEvent:
    """``count`` rounds of an eps-bounded-range mechanism (exponential mechanism, Gumbel-max)."""
    if math.isinf(eps):
        return none()
    return PrivacyEvent("bounded_range", eps=float(eps), count=int(count))


def eps_delta(eps: float, delta: float = 0.0) -> PrivacyEvent:
    """A generic (eps, delta)-DP step; pure when delta = 0."""
    if math.isinf(eps):
        return none()
    if delta == 0:
        return pure(eps)
    return PrivacyEvent("eps_delta", eps=float(eps), delta=float(delta))


def zcdp(rho: float) -> PrivacyEvent:
    """A ρ-zCDP step."""
    if math.isinf(rho):
        return none()
    return PrivacyEvent("zcdp", rho=float(rho))


def delta_only(delta: float) -> PrivacyEvent:
    """A high-probability bound that fails with probability ``delta`` (a delta-only step)."""
    return PrivacyEvent("delta", delta=float(delta))


def none() -> PrivacyEvent:
    """No privacy: eps = inf."""
    return PrivacyEvent("none")


def post_processing() -> PrivacyEvent:
    """Zero cost: a function of released values only."""
    return PrivacyEvent("post_processing")


def composed(*parts: PrivacyEvent) -> PrivacyEvent:
    """Several mechanisms in one ledger step."""
    return PrivacyEvent("composed", parts=tuple(parts))


def selection_event(topk: str, eps: float, k: int) -> PrivacyEvent:
    """The event of a private top-k selector of :data:`~dpstats.privacy.topk.SELECTORS` at eps.

    Peeling and one-shot Gumbel: k bounded-range rounds of eps/k; joint: one eps-bounded-range
    step; canonical Lipschitz (and any other): pure eps (module docstring says why).

    Examples
    --------
    >>> selection_event("peeling", 1.0, 4).to_dict()
    {'kind': 'bounded_range', 'eps': 0.25, 'count': 4}
    >>> selection_event("canonical_lipschitz", 1.0, 4).kind
    'pure'
    """
    if math.isinf(eps):
        return none()
    if topk in ("peeling", "oneshot_gumbel"):
        return bounded_range(eps / k, count=k)
    if topk == "joint":
        return bounded_range(eps)
    return pure(eps)


def of_entry(entry) -> PrivacyEvent:
    """The event of a ledger entry; entries without one count as generic (eps, delta) steps."""
    event = getattr(entry, "event", None)
    if isinstance(event, dict):
        return PrivacyEvent.from_dict(event)
    if event is not None:
        return event
    return eps_delta(entry.eps, entry.delta)


def describe(event: PrivacyEvent) -> str:
    """A short human-readable line for a ledger's "Event" column.

    Examples
    --------
    >>> describe(gaussian(8.0, 2.0))
    'Gaussian, σ/Δ = 4'
    >>> describe(composed(bounded_range(0.25, count=4), delta_only(1e-7)))
    'bounded range, eps = 0.25 × 4; delta-only, δ = 1e-07'
    """
    times = f" × {event.count}" if event.count != 1 else ""
    k = event.kind
    if k == "gaussian":
        return f"Gaussian, σ/Δ = {event.noise_multiplier:.4g}{times}"
    if k == "laplace":
        return f"Laplace, b/Δ = {event.noise_multiplier:.4g}{times}"
    if k == "pure":
        rho = f" (ρ = {event.rho:.4g})" if event.rho is not None else ""
        return f"pure, eps = {event.eps:.4g}{rho}{times}"
    if k == "bounded_range":
        return f"bounded range, eps = {event.eps:.4g}{times}"
    if k == "eps_delta":
        return f"(eps, delta) = ({event.eps:.4g}, {event.delta:.3g}){times}"
    if k == "zcdp":
        return f"zCDP, ρ = {event.rho:.4g}{times}"
    if k == "delta":
        return f"delta-only, δ = {event.delta:.3g}{times}"
    if k == "composed":
        return "; ".join(describe(p) for p in event.parts) + times
    return {"none": "not private", "post_processing": "post-processing"}[k]
