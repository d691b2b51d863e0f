"""Result of :func:`dpstats.dp_two_stage`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..plotting import Plot, new_figure, to_plot
from ..simulate.two_stage import operating_characteristics
from .base import DPResult, OperatingCharacteristics, selected_section

if TYPE_CHECKING:
    import numpy as np

    from ..methods.two_stage import Release, TwoStageOptions, TwoStagePlan


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class TwoStageResult(DPResult):
    """Two-stage selection: lasso votes on disjoint blocks, then a private top-k.

    Attributes
    ----------
    selected : list of str
        The selected terms (an unordered set; neither the vote counts nor a
        ranking are released).
    k, lam, blocks, block_sizes, vote, topk, gamma : the selection's parameters; ``block_sizes``
        (smallest, largest) is None under add/remove-one-row, where it would reveal the private n
        (a requested diagnostic then).
    lasso : str
        Solver and tolerance used for the block fits.
    second_stage : DataFrame or None
        Coefficients of the optional second-stage fit on the selected terms,
        with a ``label`` column saying whether it is private.
    second_stage_kind : str or None
        ``"private_ols"`` (noisy sufficient statistics, covered by eps) or
        ``"ols"`` (NOT private).
    """

    selected: list[str] = field(default_factory=list)
    k: int = 0
    lam: float = 0.1
    blocks: int = 0
    block_sizes: tuple[int, int] | None = (0, 0)
    vote: str = "topk"
    topk: str = "canonical_lipschitz"
    gamma: float = 0.5
    lasso: str = ""
    second_stage: pd.DataFrame | None = None
    second_stage_kind: str | None = None

    title = "Two-stage private selection (subsample-and-aggregate lasso votes)"
    p_noun = "candidate terms"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: TwoStageOptions,
        plan: TwoStagePlan,
        released: Release,
        *,
        k: int,
        blocks: int,
        generator: np.random.Generator,
    ) -> TwoStageResult:
        """The result of one call: the fields every result opens with (``opening``: method, call, n, p,
        terms, privacy), the options record, the privacy plan, the release, the frame's ``k`` and number
        of ``blocks``.  The operating characteristics are simulated from ``generator`` (the release's,
        drawn after it)."""
        oc = operating_characteristics(plan, options.oc_trials, generator)
        selected = [opening["terms"][j] for j in released.chosen]
        return cls(
            **opening,
            operating_characteristics=OperatingCharacteristics.of(oc),
            selected=selected,
            k=k,
            lam=options.lam,
            blocks=blocks,
            # sizes follow from n: not an attribute under add/remove (a requested diagnostic then)
            block_sizes=released.block_sizes(blocks) if options.neighbouring == "replace" else None,
            vote=options.vote,
            topk=options.topk,
            gamma=options.gamma,
            lasso=options.lasso.text(),
            second_stage=second_stage_table(options.second_stage, selected, released.beta),
            second_stage_kind=options.second_stage,
        )

    def _block_size_text(self) -> str:
        if (
            self.released_n() is None or self.block_sizes is None
        ):  # sizes follow from n, private under add/remove
            return ""
        lo, hi = self.block_sizes
        return f" of {lo}" + (f"-{hi}" if hi != lo else "") + " rows"

    def _body_lines(self) -> list[str]:
        shown = self.selected if len(self.selected) <= 40 else self.selected[:40] + ["..."]
        lines = [
            f"Selected {len(self.selected)} of {self.p} candidate terms "
            "(an unordered set; vote counts and ranking are not released):"
        ]
        width = max((len(s) for s in shown), default=1) + 2
        per_line = max(1, 80 // width)
        for i in range(0, len(shown), per_line):
            lines.append("  " + "".join(s.ljust(width) for s in shown[i : i + per_line]).rstrip())
        lines += [
            "",
            f"Stage 1: {self.blocks} disjoint blocks"
            + self._block_size_text()
            + f"; lasso (lambda = {self.lam:g}) on each; "
            + (
                "each block votes for its top-k |coef|"
                if self.vote == "topk"
                else "each block votes for its whole support"
            ),
            f"  solver: {self.lasso}",
            f"Private top-k of vote counts: {self.topk} (k = {self.k})",
        ]
        if self.second_stage is not None:
            label = (
                "private (noisy sufficient statistics)"
                if self.second_stage_kind == "private_ols"
                else "NOT PRIVATE (ordinary least squares on the raw data)"
            )
            lines += ["", f"Stage 2 fit on the selected terms, {label}:"]
            lines += [
                "  " + s
                for s in self.second_stage.to_string(
                    index=False, float_format=lambda v: f"{v:.4g}"
                ).splitlines()
            ]
        return lines

    def _tidy(self) -> pd.DataFrame:
        chosen = set(self.selected)
        out = pd.DataFrame({"term": self.terms, "selected": [t in chosen for t in self.terms]})
        if self.second_stage is not None:
            est = dict(zip(self.second_stage["term"], self.second_stage["estimate"]))
            out["estimate"] = [est.get(t, float("nan")) for t in self.terms]
            out["estimate_label"] = "private" if self.second_stage_kind == "private_ols" else "NOT private"
        return out

    def report_table(self) -> pd.DataFrame:
        if self.second_stage is not None:
            return self.second_stage
        return pd.DataFrame({"term": self.selected, "selected": True})

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "lam": self.lam,
            "blocks": self.blocks,
            "vote": self.vote,
            "topk": self.topk,
            "second_stage": self.second_stage_kind or "none",
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "selected": list(self.selected),
            "k": self.k,
            "lam": self.lam,
            "blocks": self.blocks,
            "block_sizes": list(self.block_sizes)
            if self.block_sizes and self.released_n() is not None
            else None,
            "vote": self.vote,
            "topk": self.topk,
            "gamma": self.gamma,
            "lasso": self.lasso,
            "second_stage_kind": self.second_stage_kind,
            "second_stage": (None if self.second_stage is None else self.second_stage.to_dict(orient="list")),
        }

    def coef(self) -> dict[str, float | bool]:
        """Second-stage estimates per selected term, else the selection indicator."""
        if self.second_stage is not None:
            return dict(zip(self.second_stage["term"], self.second_stage["estimate"]))
        return {t: t in set(self.selected) for t in self.terms}

    def plots(self) -> list[Plot]:
        oc = self.operating_characteristics
        if oc is None or not oc.rows:
            return []
        table = oc.table()
        gaps = [r["gap"] for r in oc.rows]
        fig, ax = new_figure()
        ax.errorbar(
            gaps,
            table["estimate"],
            yerr=2 * table["std_error"],
            marker="o",
            color="#3b6fd8",
            capsize=3,
            label="expected share recovered ± 2 s.e.",
        )
        ax.set_xlabel(f"votes of each true feature (others 0), out of {self.blocks} blocks")
        ax.set_ylabel("share of the k recovered")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(frameon=False, loc="lower right")
        ax.set_title(f"How many votes does recovering k = {self.k} need at eps = {self.privacy.eps:g}?")
        alt = (
            "Simulated expected share of the k features that all received the given number "
            "of votes (the others none) which the private top-k returns: "
            + ", ".join(f"{g} votes: {e:.2f}" for g, e in zip(gaps, table["estimate"]))
            + "."
        )
        return [to_plot(fig, "Recovery against the vote margin", alt)]

    def report_sections(self) -> list[dict[str, Any]]:
        return [
            selected_section(
                "Selected terms",
                f"The mechanism released this set of {len(self.selected)} "
                "terms. Their order and their vote counts are not released.",
                self.selected,
            )
        ]


SECOND_STAGE_LABELS = {
    "ols": "NOT private (ordinary least squares)",
    "private_ols": "private (Laplace sufficient statistics)",
}


def second_stage_table(kind: str | None, selected: list[str], beta) -> pd.DataFrame | None:
    """The second stage's estimates (intercept first, then the selected terms), labelled private or not.

    Examples
    --------
    >>> second_stage_table("ols", ["x1"], [0.5, 2.0])["label"].tolist()
    ['NOT private (ordinary least squares)', 'NOT private (ordinary least squares)']
    """
    if kind is None:
        return None
    return pd.DataFrame(
        {"term": ["(Intercept)", *selected], "estimate": beta, "label": SECOND_STAGE_LABELS[kind]}
    )
