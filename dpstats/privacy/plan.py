"""A method's privacy plan: what it will release and what that costs, before the release.

Every method in :mod:`dpstats.methods` exposes a ``plan`` that returns a
:class:`Plan` computed from public inputs (n under replace-one-row, d, k,
eps, delta, declared bounds) and from named data-dependent values where the
user chose them: the ledger entries with their sensitivities, the
assumptions and the notes of the privacy statement.  The front door charges
``plan.entries`` to the accountant before any noise is drawn, and turns the
plan into the result's :class:`~dpstats.privacy.statement.PrivacyStatement`
after the release (see ``docs/architecture.md``, "One call, step by step").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .accountant import LedgerEntry, total_delta, total_eps
from .randomness import NoiseSource
from .statement import DataDependence, PrivacyStatement


@dataclass
class Plan:
    """The ledger, sensitivities, assumptions and notes of one release.

    ``mechanisms`` names the mechanisms for the statement; left empty, they
    are read off the ledger entries.

    Examples
    --------
    >>> entry = LedgerEntry(step="private top-3 of |x_j'y|", mechanism="canonical_lipschitz top-k",
    ...                     eps=1.0, sensitivity="Δ∞ = 2")
    >>> plan = Plan(method="DP-SIS", neighbouring="replace", entries=[entry])
    >>> plan.eps, plan.delta
    (1.0, 0.0)
    >>> plan.statement(DataDependence(strict=True), NoiseSource(0)).budget_text()
    '(1, 0)'
    """

    method: str
    neighbouring: str
    entries: list[LedgerEntry]
    sensitivities: dict[str, str] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mechanisms: list[str] = field(default_factory=list)
    refuted: str = ""
    conditional: str = ""  # the model the guarantee is conditional on ("": differential privacy)
    withheld: list[str] = field(default_factory=list)  # names of values read from the rows: never shown

    @property
    def eps(self) -> float:
        return total_eps(self.entries)

    @property
    def delta(self) -> float:
        return total_delta(self.entries)

    def statement(self, dd: DataDependence, noise: NoiseSource) -> PrivacyStatement:
        """The privacy statement of the release this plan describes."""
        return PrivacyStatement(
            method=self.method,
            eps=self.eps,
            delta=self.delta,
            neighbouring=self.neighbouring,
            ledger=self.entries,
            mechanisms=list(self.mechanisms),
            sensitivities=dict(self.sensitivities),
            assumptions=list(self.assumptions),
            data_dependent_steps=list(dd.steps),
            seeded=noise.seeded,
            samplers=sorted(noise.samplers),
            notes=list(self.notes) + [n for n in getattr(dd, "notes", ()) if n not in self.notes],
            refuted=self.refuted,
            conditional=self.conditional,
            missing_values=dd.missing_values,
            n_private=dd.n_private,
            withheld=list(self.withheld),
        )
