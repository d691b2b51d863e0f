"""The result of :func:`dpstats.dp_select_infer`: a selected set and a private fit on it, one ledger.

Part B's fit is a dp_lm (:class:`~dpstats.results.lm.LMResult`) or, with ``infer="glm"``, a dp_glm
(:class:`~dpstats.results.glm.GLMResult`): the coefficient block, glance and outputs are then the
fit's own (z statistics, the family, deviances not released), and ``predict`` takes ``type``.
"""

from __future__ import annotations

import pandas as pd

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import DataError, PrivacyParameterError
from ..formula import INTERCEPT
from ..methods.select_infer import Pipeline, SelectInferOptions, SplitFrame, as_named, final_formula
from ..report import ledger_table_html
from .base import DPResult, escape_text
from .glm import GLMResult
from .lm import (
    LMResult,
    design_with_levels,
    fit_levels,
    na_pass,
    newdata_frame,
    recomputed_terms,
    refuse_recomputed,
)

# part B's fit's fields the result carries as its own
FIT_FIELDS = (
    "coefficients",
    "table",
    "vcov_matrix",
    "sigma",
    "df_residual",
    "conf_level",
    "ridge",
    "inference",
    "noise",
    "intercept",
    "calibrated_estimates",  # what part B's statistics, p-values and intervals are about (coefficients too)
    "ridge_estimates",
)


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
        Number of candidate columns (``glance()``'s ``p``; its ``df`` is the final model's, its ``n`` all
        rows and its ``nobs`` part B's; ``tidy()`` and ``glance()`` name the final model in ``model``).
    n_select, n_infer : int
        Rows in part A and part B (public: they follow from n and ``split``).
    selection : DPResult
        Part A's own result (its ledger, statement and selection).
    fit : LMResult or None
        Part B's own dp_lm or dp_glm result (None when nothing was selected).
    fit_door : str
        The front door part B ran: ``"dp_lm"`` or ``"dp_glm"``.
    variables : list of str
        The data columns the formula used (``predict`` reads only these from newdata, so a ``.``
        in the formula means the fit's columns, not newdata's).
    selected_terms : list of str
        The final model's terms, in the formula's order: each term that holds a selected column, whole
        (R's convention: a factor's term enters with all its columns when any of them was selected), and
        the margins R's coding of an interaction with a factor needs
        (:func:`dpstats.methods.select_infer.selected_terms`).
        Part B fits exactly their columns.
    selected_formula : str
        The final model's formula, as R's ``formula()`` of it
        (:func:`dpstats.methods.select_infer.final_formula`): the response on
        :attr:`selected_terms` (``y ~ 1`` when nothing was selected), which ``lm`` codes as part B's
        design; :attr:`formula` is the candidates'.
    """

    selector: str = ""
    selected: list[str] | None = None
    candidates: int = 0
    n_select: int | None = 0
    n_infer: int | None = 0
    selection: DPResult | None = None
    fit: LMResult | None = None
    fit_door: str = "dp_lm"
    variables: list[str] = field(default_factory=list)
    selected_terms: list[str] = field(default_factory=list)
    selected_formula: str = ""

    title = "Differentially private select-then-infer"
    p_noun = "candidate columns"

    @classmethod
    def of(
        cls, opening: dict[str, Any], options: SelectInferOptions, released: Pipeline, frame: SplitFrame
    ) -> SelectInferResult:
        """The result of a :func:`dpstats.dp_select_infer` call: the door's ``opening`` (method, call, n,
        p: the candidates, statement), the call's options, what the two parts released and the split frame
        (the candidates, the parts' sizes, the model frame whose coding ``predict()`` re-applies).  Part B's
        fit is renamed in place: its ``y ~ .`` quotes a column such as ```factor(cyl)8```, which the result
        names as the formula does."""
        fit = released.fit
        if fit is not None:
            fit.table = fit.table.assign(term=as_named(frame, fit.table["term"]))
            fit.terms = as_named(frame, fit.terms)
        fitted = {} if fit is None else {name: getattr(fit, name) for name in FIT_FIELDS}
        res = cls(
            **{**opening, "terms": [] if fit is None else list(fit.terms)},
            selector=f"dp_{options.select}",
            selected=released.selected,
            candidates=len(frame.names),
            n_select=len(frame.part_a),
            n_infer=len(frame.part_b),
            selection=released.selection,
            fit=fit,
            fit_door=options.fit_door,
            formula=options.formula,
            **fit_levels(frame.mf, nonprivate=False),  # for predict()
            # the selected terms' data-dependent steps: predict() refuses them (nothing read from the rows is kept)
            data_dependent_terms=recomputed_terms(frame.mf, {}, within=released.terms),
            variables=list(frame.mf.variables),
            selected_terms=released.terms,
            selected_formula=final_formula(options.formula, frame.mf, released.terms),
            **fitted,
        )
        if fit is None:
            res.warnings.append("the selector selected no term; nothing was fitted on part B.")
        else:  # part B's intervals rest on its own model: its statement's assumptions are the call's too
            res.privacy.assumptions = res.privacy.assumptions + [
                f"part B ({fit.method}): {a}" for a in fit.privacy.assumptions
            ]
        return res

    def header_line(self) -> str:
        """The summary's first line: the rows, the parts, the candidates, the selected and the final model."""
        selected = len(self.selected or [])
        fit = "nothing fitted"
        if self.fit is not None:
            fit = f"part B's fit has {len(self.terms)} coefficients ({self.selected_formula})"
        line = f"{self.candidates} candidate columns, {selected} selected; {fit}"
        if self.released_n() is None:
            return f"{self.n_text()}; {line}"
        return f"n = {self.n} (part A {self.n_select} rows, part B {self.n_infer} rows); {line}"

    @property
    def glm(self) -> GLMResult | None:
        """Part B's dp_glm fit, or None (dp_lm, or nothing selected)."""
        return self.fit if isinstance(self.fit, GLMResult) else None

    def headline_notes(self) -> list[dict[str, str]]:
        """Part B's dp_glm intervals withheld, for the top of the report (:meth:`GLMResult.headline_notes`)."""
        return self.glm.headline_notes() if self.glm is not None else []

    def predict(self, newdata: pd.DataFrame | dict, type: str = "link") -> np.ndarray:  # noqa: A002 (R's argument name)
        """Predictions from the selected terms (newdata holds the original columns); with a dp_glm fit
        ``type="response"`` gives the mean (probability or expected count), as :meth:`GLMResult.predict`.
        A row of newdata with a missing value in a variable of the formula is predicted as NaN (R's
        ``na.pass``), as :meth:`LMResult.predict`."""
        if type not in ("link", "response"):
            raise PrivacyParameterError(f'type must be "link" or "response", got {type!r}.')
        if self.fit is None:
            raise DataError("nothing was selected, so there is no fitted model to predict from.")
        mf, rows = na_pass(self._new_design, self._fit_columns(newdata), self._coded_formula())
        if mf is None:
            return rows.fill(None)
        eta = mf.X @ self.coefficients
        return rows.fill(self.glm.mean(eta) if (self.glm is not None and type == "response") else eta)

    def _fit_columns(self, newdata) -> pd.DataFrame:
        """newdata's columns that the fit's formula used: a ``.`` then expands over the fit's columns."""
        newdata = newdata_frame(newdata)  # a data frame or a dict of columns, else refused by name
        return newdata[[c for c in newdata.columns if c in self.variables]] if self.variables else newdata

    def _coded_formula(self) -> str:
        """The formula newdata is coded by: the final model's (:attr:`selected_formula`, so a missing value
        in a variable no selected term uses predicts, as R's predict of the final model) when its columns
        are coded as the candidates' formula coded them, which holds for terms of numeric variables without
        interactions; else the candidates' formula (a factor's coding can depend on the other terms)."""
        plain = all(":" not in t and t not in self.factor_levels for t in self.selected_terms)
        return self.selected_formula if self.selected_terms and plain else self.formula

    def _new_design(self, newdata):
        """newdata's design in the fit's terms: the intercept and the selected columns (R's
        ``predict(se.fit = TRUE)`` reads it through :func:`dpstats.rbridge.newdata_design_for_r`).  A selected
        term whose values depend on the data as a whole (orthogonal ``poly()``, knots from the rows) is
        refused: the DP fit keeps nothing read from the rows to evaluate it on newdata."""
        refuse_recomputed(self.data_dependent_terms, private=True)
        formula = self._coded_formula()
        # the final model's formula has no factor term, hence no contrasts to apply
        coding = self.coding if formula == self.formula else {**self.coding, "contrasts": {}}
        mf = design_with_levels(formula, self.factor_levels, self._fit_columns(newdata), **coding)
        columns = [t for t in self.terms if t != INTERCEPT]  # the final model's: the selected terms, whole
        absent = [t for t in columns if t not in mf.names]
        if absent:
            raise DataError(
                f"newdata gives no design column {absent[0]!r} (a column of the final model; the design of "
                f"newdata has {mf.names[:6]}): give newdata the variables the fit was given, with the same "
                "factor levels."
            )
        mf.X = np.column_stack([np.ones(mf.n)] + [mf.X[:, mf.names.index(t)] for t in columns])
        mf.names = [INTERCEPT] + columns
        return mf

    def withhold_n(self) -> None:
        """n is private: so are the parts' sizes, which follow from it, and each part's own n."""
        super().withhold_n()
        self.n_select = self.n_infer = None
        for part in (self.selection, self.fit):
            if part is not None:
                part.withhold_n()
                hidden = "not shown: it may follow from the part's size, which follows from the private n"
                part.privacy.ledger = [replace(e, sensitivity=hidden) for e in part.privacy.ledger]

    def pipeline_lines(self) -> list[str]:
        sizes = (
            f"part A ({self.n_select} rows) and part B ({self.n_infer} rows)"
            if self.n_select is not None
            else "part A and part B (their sizes follow from n: not shown)"
        )
        lines = [
            f"Pipeline: {self.n_text()} split at random (independently of the data) into {sizes}.",
            f"  1. {self.selector} on part A selected {len(self.selected or [])} of {self.candidates} columns: "
            + (", ".join(self.selected) if self.selected else "none"),
        ]
        if self.fit is not None:
            family = f" ({self.glm.family})" if self.glm is not None else ""
            lines.append(
                f"  2. {self.fit_door}{family} on part B: {self.selected_formula} (the terms of the selected "
                f"columns, each whole as lm fits a term); {self.inference}."
            )
            lines.append(
                f"  Its estimates and intervals are for the coefficients of {self.selected_formula}, those "
                f"{self.fit_door[3:]} of it estimates (a term left out is absorbed by the terms kept), not those "
                f"of {self.formula}; they hold given the selection, made on other rows."
            )
        lines.append("  Each part spent the whole budget (parallel composition on disjoint rows).")
        return lines

    def _body_lines(self) -> list[str]:
        lines = self.pipeline_lines() + [""]
        # part B's own lines: its n is the rows it was fitted on (R's nobs of the final model)
        return lines + (self.fit._body_lines() if self.fit is not None else ["No term selected; no fit."])

    def _tidy(self):
        """Part B's coefficient table, each row naming the model it is about (``model``: the final model's
        formula, not the candidates')."""
        out = self.glm._tidy() if self.glm is not None else super()._tidy()
        return out.assign(model=self.selected_formula)

    def _glance_extra(self) -> dict[str, Any]:
        """Part B's glance (``nobs``: part B's rows; ``df``: the final model's) beside the pipeline's fields:
        ``model`` (the final model's formula), the selector and the parts' sizes; the base's ``n`` is all
        rows, its ``p`` the candidate columns."""
        out = self.fit._glance_extra() if self.fit is not None else {}  # part B's: its rows are nobs
        out.update(
            {
                "model": self.selected_formula,
                "selector": self.selector,
                "selected": len(self.selected or []),
                "n_select": self.n_select,
                "n_infer": self.n_infer,
            }
        )
        return out

    def outputs(self) -> dict[str, Any]:
        if self.glm is not None:
            out = self.glm.outputs()
        else:
            out = super().outputs() if self.fit is not None else {}
        out.update(
            {
                "selector": self.selector,
                "selected": list(self.selected or []),
                "n_select": self.n_select,
                "n_infer": self.n_infer,
                "selected_formula": self.selected_formula,
                "fit_door": self.fit_door,
                "selection_ledger": [e.to_dict() for e in self.selection.privacy.ledger]
                if self.selection
                else [],
                "fit_ledger": [e.to_dict() for e in self.fit.privacy.ledger] if self.fit else [],
            }
        )
        return out

    def ledger(self) -> pd.DataFrame:
        """The privacy ledger by part: part A's steps (the selector's own ledger) and part B's (dp_lm's or
        dp_glm's), each with its eps and delta, so each part's rows sum to the call's (eps, delta).  The
        parts read disjoint rows, so their budgets do not add (parallel composition): the call is
        charged (eps, delta) once, the one entry of ``privacy.ledger``, whose event
        :func:`dpstats.compose` reads."""
        rows = [
            {"part": f"{label} ({res.method})", **entry.to_dict()}
            for label, res in (("A", self.selection), ("B", self.fit))
            if res is not None
            for entry in res.privacy.ledger
        ]
        return pd.DataFrame(rows)

    def report_sections(self) -> list[dict[str, Any]]:
        """The pipeline in words, then each part's ledger as the report's ledger table."""
        html = [f"<pre>{escape_text(chr(10).join(self.pipeline_lines()))}</pre>"]
        for label, res in (("Part A ledger", self.selection), ("Part B ledger", self.fit)):
            if res is not None:
                html.append(f"<h4>{escape_text(f'{label} ({res.method})')}</h4>{ledger_table_html(res)}")
        sections = [{"heading": "Pipeline", "html": "".join(html)}]
        if self.glm is not None:
            return sections + self.glm.report_sections()
        return sections + (super().report_sections() if self.fit is not None else [])
