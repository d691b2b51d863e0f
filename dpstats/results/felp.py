"""Result of :func:`dpstats.dp_felp`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..methods.felp.sensitivity import PAPER_VARIANT_REFUTED, warn_chance
from ..plotting import Plot, new_figure, to_plot
from ..simulate.assume import assumed_row, describe, exact_row
from ..simulate.felp import selection_stability
from .base import DPResult, OperatingCharacteristics, selected_section

if TYPE_CHECKING:
    from ..methods.felp import FELPOptions, FELPPlan, Release


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class FELPResult(DPResult):
    """DP-FELP: released feature weights and the top ``select`` features by weight.

    Attributes
    ----------
    weights : ndarray
        The released (noisy) average weight vector, one weight per term.
    selected : list of str
        The ``select`` terms with the largest released weights, largest first
        (the order is post-processing of the released weights).
    variant : {"strict", "paper"}
        ``"paper"``'s stated eps is refuted (``privacy.refuted`` says why).
    lam, lam_source : the ridge parameter and where it came from
        ("fixed default", "user" or "cv" — the last is data-dependent).
    sensitivity, noise_scale : float
        ℓ2 sensitivity Δ of the average and the L2-Laplace scale Δ/eps.
    clip_norm : float or None
        C of the strict variant.
    normalised : bool
        The strict variant's learners were normalised to ‖w‖ = C (the default), not clipped.
    chance : str
        Why, from public inputs, the release cannot beat chance; or, when they said nothing, why the
        released weights' spread is not distinguishable from their noise (empty when neither).
    """

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    selected: list[str] = field(default_factory=list)
    select: int = 0
    variant: str = "strict"
    lam: float = 1.0
    lam_source: str = "fixed default"
    n_estimators: int = 20
    sample_ratio: float = 0.9
    sensitivity: float = 0.0
    noise_scale: float = 0.0
    clip_norm: float | None = None
    normalised: bool = False
    chance: str = ""
    classes: list[str] | None = field(default_factory=list)  # None: read from the rows, not shown
    scaling: str = ""

    title = "DP ensemble feature weighting by local learning (FELP)"
    p_noun = "candidate terms"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: FELPOptions,
        plan: FELPPlan,
        released: Release,
        *,
        classes: Sequence | None,
        generator: np.random.Generator,
    ) -> FELPResult:
        """The result of one call: the fields every result opens with (``opening``: method, call, n, p,
        terms, privacy), the options record, the privacy plan, the release, the response's ``classes``
        where they are public (None: read from the rows, not shown).  The operating characteristics are
        simulated from ``generator`` (the release's, drawn after it)."""
        result = cls(
            **opening,
            weights=released.weights,
            selected=[opening["terms"][j] for j in released.top],
            select=plan.select,
            variant=options.variant,
            lam=released.lam,
            lam_source=options.lam_source,
            n_estimators=plan.spec.n_estimators,
            sample_ratio=options.sample_ratio,
            sensitivity=released.sensitivity,
            noise_scale=released.scale,
            clip_norm=plan.clip_norm,
            normalised=plan.normalise,
            chance=plan.chance_text(),
            classes=None if classes is None else [str(c) for c in classes],
            scaling=(
                "declared bounds mapped onto [0, 1], clipped, divided by √d"
                if plan.box is not None
                else "data min/max mapped onto [0, 1], divided by √d (data-dependent)"
            ),
            warnings=[f"{PAPER_VARIANT_REFUTED}: the stated eps is not a valid DP guarantee"]
            if options.variant == "paper"
            else [],
        )
        result.operating_characteristics = felp_oc(result, options.oc_trials, generator, options.assume)
        if not result.chance:  # the test of the released weights' spread (methods.felp.spread)
            result.chance = plan.released_chance_text(released.weights, released.scale, released.lam)
            warn_chance(result.chance)
        return result

    def _classes_text(self) -> str:
        if self.classes is None:  # read from the rows: neither they nor their number is an output
            return "classes read from the rows, not shown"
        shown = ", ".join(self.classes[:6]) + (", ..." if len(self.classes) > 6 else "")
        return f"{len(self.classes)} classes: {shown}"

    def _body_lines(self) -> list[str]:
        ranks = self.ranks()
        lines = [
            f"Selected the top {self.select} of {self.p} features by released weight "
            f"({self._classes_text()}):"
        ]
        table = self.tidy().sort_values("rank").head(max(self.select, 10))
        for _, row in table.iterrows():
            mark = "*" if row["selected"] else " "
            lines.append(f"  {mark} {int(row['rank']):>4d}  {row['term']:<28s} {row['weight']: .4g}")
        if self.p > len(table):
            lines.append(f"    ... {self.p - len(table)} more (see tidy())")
        lines += [
            "",
            f"Variant: {self.variant}"
            + (" (stated eps REFUTED: not a valid DP guarantee)" if self.variant == "paper" else "")
            + f"; k = {self.n_estimators} learners"
            + (
                f" on bootstrap samples of ⌈{self.sample_ratio:g}n⌉ rows"
                if self.variant == "paper"
                else f" on disjoint subsets, weights normalised to ‖w‖ = C = {self.clip_norm:g}"
                if self.normalised
                else f" on disjoint subsets, weights clipped to ‖w‖ <= C = {self.clip_norm:.4g}"
            ),
            f"lambda = {self.lam:g} ({self.lam_source}); sensitivity = {self.sensitivity:.4g}; "
            f"noise scale = {self.noise_scale:.4g} (noise s.d. per weight "
            f"{self.noise_scale * math.sqrt(self.p + 1):.4g})",
            f"Scaling: {self.scaling}",
        ] + ([f"Chance: {self.chance}"] if self.chance else [])
        del ranks
        return lines

    def ranks(self) -> np.ndarray:
        """Rank (1 = largest released weight) of every term."""
        order = np.argsort(-self.weights, kind="stable")
        ranks = np.empty(self.p, dtype=int)
        ranks[order] = np.arange(1, self.p + 1)
        return ranks

    def _tidy(self) -> pd.DataFrame:
        chosen = set(self.selected)
        return pd.DataFrame(
            {
                "term": self.terms,
                "weight": self.weights,
                "rank": self.ranks(),
                "selected": [t in chosen for t in self.terms],
            }
        )

    def report_table(self) -> pd.DataFrame:
        return self.tidy().sort_values("rank").head(max(self.select, 20)).reset_index(drop=True)

    def report_table_note(self) -> str:
        shown = len(self.report_table())
        if shown == len(self.terms):
            return ""
        return f"The {shown} features of highest released weight, of {len(self.terms)}; all are in tidy()."

    def coef(self) -> dict[str, float]:
        """Released weight per term (what ``coef()`` gives in R)."""
        return dict(zip(self.terms, self.weights.tolist()))

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "select": self.select,
            "lam": self.lam,
            "lam_source": self.lam_source,
            "n_estimators": self.n_estimators,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "weights": self.weights.tolist(),
            "selected": list(self.selected),
            "select": self.select,
            "variant": self.variant,
            "lam": self.lam,
            "lam_source": self.lam_source,
            "n_estimators": self.n_estimators,
            "sample_ratio": self.sample_ratio,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
            "clip_norm": self.clip_norm,
            "classes": None if self.classes is None else list(self.classes),
            "scaling": self.scaling,
        }

    def plots(self) -> list[Plot]:
        order = np.argsort(-self.weights, kind="stable")
        shown = order[: min(self.p, 60)]
        w = self.weights[shown]
        fig, ax = new_figure(width=7.0, height=3.8)
        colors = ["#3b6fd8" if i < self.select else "#9aa5b1" for i in range(len(shown))]
        ax.bar(np.arange(1, len(shown) + 1), w, color=colors)
        ax.axvline(self.select + 0.5, color="#b86e00", ls="--", label=f"cut: top {self.select} selected")
        sd = self.noise_scale * math.sqrt(self.p + 1)
        if sd > 0:
            ax.axhspan(-sd, sd, color="#b86e00", alpha=0.12, label=f"± noise s.d. per weight ({sd:.3g})")
        ax.axhline(0, color="black", lw=0.6)
        if len(shown) <= 30:
            ax.set_xticks(np.arange(1, len(shown) + 1))
            ax.set_xticklabels([self.terms[j] for j in shown], rotation=70, ha="right", fontsize=7)
        ax.set_xlabel("features ranked by released weight" + (" (top 60)" if self.p > 60 else ""))
        ax.set_ylabel("released weight")
        ax.legend(frameon=False, loc="upper right")
        ax.set_title(f"Released FELP weights, {self.variant} variant, eps = {self.privacy.eps:g}")
        alt = (
            f"Bar chart of the {len(shown)} largest released weights in decreasing order; the first "
            f"{self.select} ({', '.join(self.selected[:5])}{', ...' if self.select > 5 else ''}) are "
            f"selected, the noise s.d. per weight is {sd:.3g}."
        )
        return [to_plot(fig, "Released weights ranked, with the selection cut", alt)]

    def report_sections(self) -> list[dict[str, Any]]:
        return [
            selected_section(
                "Selected features",
                f"The {self.select} features with the largest released "
                "weights, largest first. The order is derived from the released weights "
                "(post-processing).",
                self.selected,
                ordered=True,
            )
        ]


def felp_oc(
    result: FELPResult, trials: int, gen: np.random.Generator, assume: str | None = None
) -> OperatingCharacteristics | None:
    """Exact noise s.d. and spread of the released weights; plug-in stability only under ``assume``.

    Without ``assume`` every row is a function of the released weights and the public
    noise scale.  With ``assume="released"`` (the plug-in model: the released weights are
    the true weights) fresh L2-Laplace noise of the same scale is added ``trials`` times and
    the share of the top set kept is reported.
    """
    if not trials:
        return None
    released, select, scale = result.weights, result.select, result.noise_scale
    rows = [
        exact_row("noise s.d. per weight (scale·√(d+1), exact)", scale * math.sqrt(released.size + 1)),
        exact_row("spread (s.d.) of the released weights", float(np.std(released, ddof=1))),
    ]
    model = "exact, from the released weights and the public noise scale; no data model"
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    share, se = selection_stability(released, select, scale, gen, trials)
    rows.append(assumed_row(f"stability: share of the top {select} kept under fresh noise", share, se))
    model += (
        "; stability simulated by adding fresh L2-Laplace noise of the same scale to the released "
        "weights and recomputing the top set"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=describe(assume))
