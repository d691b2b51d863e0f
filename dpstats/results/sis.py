"""Result of :func:`dpstats.dp_sis`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..plotting import Plot, new_figure, to_plot
from ..privacy.topk import largest_class_noise, recovery_curve
from ..simulate.chance import selection_chance
from ..simulate.sis import operating_characteristics
from .base import DPResult, OperatingCharacteristics, selected_section

if TYPE_CHECKING:
    from ..methods.sis import SISOptions, SISPlan, SISRelease


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class SISResult(DPResult):
    """DP-SIS: a privately selected, unordered set of k terms.

    Attributes
    ----------
    selected : list of str
        The selected terms, in design order.  The mechanism releases a set;
        no ranking among them is released.
    k, gamma, topk : selection parameters.
    noise_log_m, noise_expected_max : float
        log of the largest utility class size m and H_m, the expected largest
        noise term of the mechanism (paper Theorem A.3), in utility units.
    recovery_curve : DataFrame
        ``gap`` (score units) and ``bound``: lower bound on the probability of
        exact top-k recovery as a function of the private score gap ξ.
    """

    selected: list[str] = field(default_factory=list)
    k: int = 0
    gamma: float = 0.5
    topk: str = "canonical_lipschitz"
    sensitivity: float = 2.0
    scaling: str = ""
    noise_log_m: float = 0.0
    noise_expected_max: float = 0.0
    recovery_curve: pd.DataFrame | None = None

    title = "DP sure independence screening"
    p_noun = "candidate terms"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: SISOptions,
        plan: SISPlan,
        released: SISRelease,
        *,
        scaling: str,
        n: int | None,
        generator: np.random.Generator,
    ) -> SISResult:
        """The result of one call: the fields every result opens with (``opening``: method, call, n, p,
        terms, privacy), the options record, the privacy plan, the release, the frame's ``scaling`` text and
        ``n``, the n the sensitivity may use (None when private).  The operating characteristics are
        simulated from ``generator`` (the release's, drawn after it); where, under ``assume=``, precision or
        recall does not beat chance, it warns as :func:`dpstats.plan` does (:meth:`warn_at_chance`)."""
        n_public = n if options.neighbouring == "replace" else None
        oc = operating_characteristics(plan, n_public, options.oc_trials, options.assume, generator)
        logm, harmonic = largest_class_noise(plan.d, plan.k)
        curve = recovery_curve(plan.d, plan.k, plan.select_eps, options.gamma, plan.sensitivity)
        result = cls(
            **opening,
            operating_characteristics=OperatingCharacteristics.of(oc),
            selected=[opening["terms"][j] for j in released.chosen],
            k=plan.k,
            gamma=options.gamma,
            topk=options.topk,
            sensitivity=plan.sensitivity,
            scaling=scaling,
            noise_log_m=logm,
            noise_expected_max=harmonic,
            recovery_curve=recovery_table(*curve),
        )
        if options.assume is not None:
            signals = min(options.assume.signals, plan.d)
            result.warn_at_chance("dp_sis", selection_chance(signals, plan.k, plan.d))
        return result

    def _body_lines(self) -> list[str]:
        shown = self.selected if len(self.selected) <= 40 else self.selected[:40] + ["..."]
        lines = [
            f"Selected {len(self.selected)} of {self.p} candidate terms "
            f"(an unordered set; no ranking is released):"
        ]
        width = max((len(s) for s in shown), default=1) + 2
        per_line = max(1, 80 // width)
        for i in range(0, len(shown), per_line):
            lines.append("  " + "".join(s.ljust(width) for s in shown[i : i + per_line]).rstrip())
        lines += [
            "",
            f"Top-k mechanism: {self.topk} (k = {self.k}, gamma = {self.gamma:g})",
            f"Scaling: {self.scaling}",
            f"Expected largest noise term: {self.expected_max_noise:.3g} score units "
            f"(2·Δ·H_m/(gamma·eps), H_m = {self.noise_expected_max:.3g}); a score gap of about "
            f"{self.gap_for_recovery(0.5):.3g} gives exact recovery with probability >= 0.5",
        ]
        return lines

    @property
    def expected_max_noise(self) -> float:
        """The expected largest noise term in score units, 2·Δ·H_m/(gamma·eps): the one figure print,
        glance, the report's figure and its operating characteristics give."""
        return 2 * self.sensitivity * self.noise_expected_max / max(self.gamma * self.privacy.eps, 1e-300)

    def gap_for_recovery(self, prob: float) -> float:
        """Smallest tabulated score gap ξ at which the recovery bound reaches ``prob``."""
        curve = self.recovery_curve
        hit = curve.loc[curve["bound"] >= prob, "gap"]
        return float(hit.iloc[0]) if len(hit) else math.inf

    def _tidy(self) -> pd.DataFrame:
        chosen = set(self.selected)
        return pd.DataFrame({"term": self.terms, "selected": [t in chosen for t in self.terms]})

    def report_table(self) -> pd.DataFrame:
        return pd.DataFrame({"term": self.selected, "selected": True})

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "gamma": self.gamma,
            "topk": self.topk,
            "expected_max_noise": self.expected_max_noise,
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "selected": list(self.selected),
            "k": self.k,
            "gamma": self.gamma,
            "topk": self.topk,
            "sensitivity": self.sensitivity,
            "scaling": self.scaling,
            "noise_log_m": self.noise_log_m,
            "noise_expected_max": self.noise_expected_max,
            "recovery_curve": self.recovery_curve.to_dict(orient="list"),
        }

    def coef(self) -> dict[str, bool]:
        """Selection indicator per term (what ``coef()`` gives in R)."""
        return dict(zip(self.tidy()["term"], self.tidy()["selected"]))

    def plots(self) -> list[Plot]:
        curve = self.recovery_curve
        fig, ax = new_figure()
        ax.plot(curve["gap"], curve["bound"], color="#3b6fd8", lw=2, label="lower bound on P(exact top-k)")
        noise_gap = self.expected_max_noise
        ax.axvline(
            noise_gap, color="#b86e00", ls="--", label=f"expected largest noise ≈ {noise_gap:.3g} score units"
        )
        ax.set_xlabel("gap ξ between the k-th and (k+1)-th score (score units; private, unknown)")
        ax.set_ylabel("probability")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(frameon=False, loc="lower right")
        ax.set_title(f"When can k = {self.k} of {self.p} be recovered at eps = {self.privacy.eps:g}?")
        alt = (
            f"Recovery bound rises from 0 to 1 as the score gap grows; it reaches 0.5 at a gap of "
            f"{self.gap_for_recovery(0.5):.3g} and 0.95 at {self.gap_for_recovery(0.95):.3g}."
        )
        return [to_plot(fig, "Exact-recovery bound against the score gap", alt)]

    def report_sections(self) -> list[dict[str, Any]]:
        return [
            selected_section(
                "Selected terms",
                f"The mechanism released this set of {len(self.selected)} "
                "terms. Their order is not released.",
                self.selected,
            )
        ]


def recovery_table(gaps: np.ndarray, bound: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"gap": gaps, "bound": bound})
