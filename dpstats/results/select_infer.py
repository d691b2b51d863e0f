"""The result of :func:`dpstats.dp_select_infer`: a selected set and a private fit on it, one ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import DPResult, escape_text
from .lm import LMResult


@dataclass(repr=False)
class SelectInferResult(LMResult):
    """Select on part A, infer on part B: :class:`LMResult` on the selected terms, plus the pipeline.

    Attributes
    ----------
    selector : str
        The selector run on part A (``"dp_sis"``, ``"dp_two_stage"``, ``"dp_knockoff"``).
    selected : list of str
        The released selected design columns.
    candidates : int
        Number of candidate columns.
    n_select, n_infer : int
        Rows in part A and part B (public: they follow from n and ``split``).
    selection : DPResult
        Part A's own result (its ledger, statement and selection).
    fit : LMResult or None
        Part B's own dp_lm result (None when nothing was selected).
    """

    selector: str = ""
    selected: list[str] | None = None
    candidates: int = 0
    n_select: int = 0
    n_infer: int = 0
    selection: DPResult | None = None
    fit: LMResult | None = None

    title = "Differentially private select-then-infer"

    def predict(self, newdata) -> np.ndarray:
        """Predictions from the selected terms (newdata holds the original columns)."""
        from ..formula import model_frame, split_formula

        if self.fit is None:
            raise ValueError("nothing was selected, so there is no fitted model to predict from.")
        rhs = split_formula(self.formula, one_sided=False)[1]
        mf = model_frame(f"~ {rhs}", newdata, one_sided=True, min_rows=1, check_constant=False)
        X = np.column_stack([np.ones(mf.n)] + [mf.X[:, mf.names.index(t)] for t in self.selected])
        return X @ self.coefficients

    def pipeline_lines(self) -> list[str]:
        lines = [
            f"Pipeline: {self.n_text()} split at random (independently of the data) into part A "
            f"({self.n_select} rows) and part B ({self.n_infer} rows).",
            f"  1. {self.selector} on part A selected {len(self.selected or [])} of {self.candidates} terms: "
            + (", ".join(self.selected) if self.selected else "none"),
        ]
        if self.fit is not None:
            lines.append(f"  2. dp_lm on part B with the selected terms; {self.inference}.")
        lines.append("  Each part spent the whole budget (parallel composition on disjoint rows).")
        return lines

    def _body_lines(self) -> list[str]:
        lines = self.pipeline_lines() + [""]
        return lines + (super()._body_lines() if self.fit is not None else ["No term selected; no fit."])

    def _glance_extra(self) -> dict[str, Any]:
        out = super()._glance_extra() if self.fit is not None else {}
        out.update(
            {
                "selector": self.selector,
                "selected": len(self.selected or []),
                "n_select": self.n_select,
                "n_infer": self.n_infer,
            }
        )
        return out

    def outputs(self) -> dict[str, Any]:
        out = super().outputs() if self.fit is not None else {}
        out.update(
            {
                "selector": self.selector,
                "selected": list(self.selected or []),
                "n_select": self.n_select,
                "n_infer": self.n_infer,
                "selection_ledger": [e.to_dict() for e in self.selection.privacy.ledger]
                if self.selection
                else [],
                "fit_ledger": [e.to_dict() for e in self.fit.privacy.ledger] if self.fit else [],
            }
        )
        return out

    def report_sections(self) -> list[dict[str, Any]]:
        parts = ["\n".join(self.pipeline_lines())]
        for label, res in (("Part A ledger", self.selection), ("Part B ledger", self.fit)):
            if res is not None:
                parts.append(
                    f"{label} ({res.method}):\n"
                    + res.ledger()[["step", "mechanism", "eps", "delta"]].to_string(index=False)
                )
        sections = [{"heading": "Pipeline", "html": f"<pre>{escape_text(chr(10).join(parts))}</pre>"}]
        return sections + (super().report_sections() if self.fit is not None else [])
