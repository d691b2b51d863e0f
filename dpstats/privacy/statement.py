"""The privacy statement attached to every result (docs/architecture.md, "Privacy conventions").

It records what was bought — (eps, delta), the neighbouring relation, the
mechanisms and their sensitivities, the ledger — and what the guarantee does
*not* cover: data-dependent calibration steps, assumptions, and whether the run
was seeded.  :class:`DataDependence` collects the data-dependent steps while a
front door validates its inputs, so that ``strict=True`` refuses before any
budget is spent.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

from ..errors import DPStatsError, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ..formula import columns_read
from ..geometry import derivable_columns
from .accountant import LedgerEntry, total_delta, total_eps
from .mechanism_names import mechanism_name

ROWS_DROPPED_TEXT = "(the number of rows read is public; the number analysed, after rows were dropped, is not, and is not shown)"
NEIGHBOURING_TEXT = {
    "replace": "replacing one row with another (the number of rows n is public)",
    "add_remove": "adding or removing one row",
}


class DataDependence:
    """Collects data-dependent calibration steps; refuses them under ``strict``.

    Examples
    --------
    >>> dd = DataDependence(strict=False)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     dd.add("max-abs scaling", fix="declare bounds=")
    >>> dd.steps
    ['max-abs scaling']
    """

    def __init__(self, strict: bool, bounds: Any = None) -> None:
        self.strict = bool(strict)
        self.steps: list[str] = []
        self.missing_values = ""
        self.n_private = False  # rows may have been dropped: n analysed is not shown
        self.bounds = bounds  # the declared bounds= (for the note on interactions' derived bounds)
        self.notes: list[str] = []
        self.pending: list[str] | None = None  # warnings held until the call's checks have passed (run)
        # levels read from the rows: the design's columns (and their count) depend on the data
        self.columns_read = False

    def hold_warnings(self) -> None:
        """Hold the steps' warnings until :meth:`release_warnings`: a call that a later check refuses
        (a column not in the data) then raises its error alone, not after warnings about a fit never made."""
        self.pending = []

    def release_warnings(self) -> None:
        """Issue the held warnings, in order; later steps warn at once."""
        pending, self.pending = self.pending or [], None
        for text in pending:
            warnings.warn(text, NonPrivateWarning, stacklevel=caller_stacklevel())

    def refusal(self, err: DPStatsError) -> DPStatsError:
        """The error a call raises once a data-dependent step has been named: the same class, its text
        followed by the steps, whose held warnings it replaces (they are then not given).

        Whether such an error occurs may depend on the rows through the named steps; its text must
        not (the sites that raise it show no number read from the rows), and it says which steps
        were taken, so that neither the step nor its warning is lost.  Without a named step the
        error is returned as it is.  An error already so raised by a door run inside this one
        (dp_select_infer's selector) gets one sentence naming this call's steps, then the inner door's.

        Examples
        --------
        >>> from dpstats.errors import DataError
        >>> dd = DataDependence(strict=False)
        >>> dd.hold_warnings()
        >>> dd.add("levels of 'g' read from the rows", fix="declare them")
        >>> str(dd.refusal(DataError("too few rows.")))[:60]
        'too few rows. (Raised after a data-dependent step not covere'
        """
        if not self.steps:
            return err
        self.pending = None  # the error names the steps: their warnings are not given as well
        text, inner = getattr(err, "unstepped", (str(err), []))
        steps = list(dict.fromkeys([*self.steps, *inner]))
        out = type(err)(
            f"{text} (Raised after a data-dependent step not covered by the privacy guarantee, so whether "
            f"this error occurs may depend on the rows: {'; '.join(steps)}.)"
        )
        out.unstepped = (text, steps)  # an outer door's refusal names these steps in the same sentence
        out.__cause__, out.__suppress_context__ = err.__cause__, True
        return out.with_traceback(err.__traceback__)

    def rule_for_missing(self, text: str) -> None:
        """How missing values were treated (a rule stated in every statement; not a step)."""
        self.missing_values = text

    def name_frame_steps(self, mf: Any) -> None:
        """Name a model frame's data-dependent steps (strict refuses) and state its rule for missing values.

        The schema's steps (levels read from the rows, rows dropped under
        ``na_action="omit"`` or for variables without declared bounds) are named
        from the arguments and the dtypes, never from whether the data hold a
        missing value; counts are never shown (they appear only in requested
        diagnostics).  The rule for missing values goes into every statement.
        Then the steps an engine's first pass took (factor levels read from the
        rows) and the formula's data-dependent terms (``scale()``, orthogonal
        ``poly()``, spline knots at quantiles).
        """
        for step, fix in mf.schema_steps:
            self.add(step, fix=fix)
        self.columns_read = columns_read(mf)
        self.n_private = self.n_private or mf.n_data_dependent
        if mf.schema_rule:
            self.rule_for_missing(mf.schema_rule)
        for step, fix in [*getattr(mf, "engine_steps", ()), *mf.data_dependent_terms]:
            self.add(step, fix=fix)
        self.note(derived_bounds_note(self.bounds, mf))

    def note(self, text: str) -> None:
        """A sentence for the statement's notes (once; an empty text is no note)."""
        if text and text not in self.notes:
            self.notes.append(text)

    def add(self, step: str, fix: str) -> None:
        """Name a step (strict refuses it); a step already named is not named again, so that the list
        depends on the arguments only, never on which route the rows sent the call down."""
        if step in self.steps:
            return
        if self.strict:
            raise PrivacyParameterError(
                f"strict=True refuses the data-dependent step '{step}': it is not covered by "
                f"the privacy guarantee. To fix: {fix}"
            )
        self.steps.append(step)
        text = f"data-dependent step not covered by the privacy guarantee: {step}. {fix[:1].upper()}{fix[1:]}"
        if self.pending is not None:
            self.pending.append(text)
            return
        warnings.warn(text, NonPrivateWarning, stacklevel=caller_stacklevel())


def derived_bounds_note(bounds: Any, mf: Any) -> str:
    """The statement's sentence on columns bounded from their parts' public bounds (interactions,
    monotone functions and powers of a variable).

    It names the terms (labels from the formula, never a column's name, which may hold a level read
    from the rows) whose every part has a public bound under a per-variable ``bounds=`` mapping:
    public inputs only, so neighbouring data sets get the same sentence.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> mf = SimpleNamespace(names=["x", "z", "x:z"], terms=["x", "z", "x:z"], interaction_parts={"x:z": ("x", "z")})
    >>> derived_bounds_note({"x": (0, 1), "z": (-1, 1)}, mf)[:51]
    "Columns of the term(s) 'x:z' without a bound declar"
    """
    parts = getattr(mf, "interaction_parts", None) or {}
    columns = derivable_columns(bounds, parts)
    if not columns:
        return ""
    term_of = dict(zip(mf.names, mf.terms))
    terms = ", ".join(repr(t) for t in dict.fromkeys(term_of.get(c, c) for c in columns))
    # a part with knots is a formula._design.SplineColumn (ns() or bs())
    splines = any(hasattr(part, "knots") for c in columns for part in parts[c])
    return (
        f"Columns of the term(s) {terms} without a bound declared for the column itself are bounded by "
        "arithmetic on public bounds alone, no row read: an interaction's by the product of its parts' "
        "bounds (the numeric variables' declared bounds, the factor codings' ranges), a monotone function "
        "or a power of a variable (log(x), sqrt(x), I(x^2), poly(x, k, raw = TRUE)) by the image of the "
        "variable's declared bounds, a product of powers of variables (poly(x, z, degree = k, raw = TRUE)) "
        "by the product of their images"
        + (
            ", a column of ns(x, ...) or bs(x, ...) with the knots the formula writes by its range over "
            "x's declared bounds."
            if splines
            else "."
        )
    )


@dataclass
class PrivacyStatement:
    """What privacy an analysis bought, and what its guarantee does not cover.

    ``refuted`` is empty for a valid guarantee; otherwise it says why the
    stated (eps, delta) is known not to hold (e.g. FELP's paper variant), and
    every rendering of the statement says that it is not a valid
    differential privacy guarantee.

    ``conditional`` is empty for differential privacy; otherwise it is the
    condition on the data set (a model its rows follow, e.g. the knockoff
    filter's linear model) under which the (eps, delta) bound holds for any
    replaced row, and every rendering says that this is a conditional
    guarantee, not differential privacy.
    """

    method: str
    eps: float
    delta: float
    neighbouring: str
    ledger: list[LedgerEntry]
    mechanisms: list[str] = field(default_factory=list)
    sensitivities: dict[str, str] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    data_dependent_steps: list[str] = field(default_factory=list)
    seeded: bool = False
    samplers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refuted: str = ""
    conditional: str = ""
    missing_values: str = ""
    n_private: bool = False
    # names of the method's values read from the rows (named data-dependent steps) that no output shows
    withheld: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        ledger_eps, ledger_delta = total_eps(self.ledger), total_delta(self.ledger)
        if not (
            math.isclose(ledger_eps, self.eps, rel_tol=1e-12, abs_tol=0)
            or (math.isinf(ledger_eps) and math.isinf(self.eps))
        ):
            raise AssertionError(f"ledger eps {ledger_eps} != statement eps {self.eps}")
        if not math.isclose(ledger_delta, self.delta, rel_tol=1e-12, abs_tol=1e-300):
            raise AssertionError(f"ledger delta {ledger_delta} != statement delta {self.delta}")
        if not self.mechanisms:
            self.mechanisms = list(dict.fromkeys(e.mechanism for e in self.ledger))
        self.mechanisms = [mechanism_name(m) for m in self.mechanisms]

    @property
    def pure(self) -> bool:
        return self.delta == 0

    @property
    def covered(self) -> bool:
        """True when no data-dependent step weakens the guarantee."""
        return not self.data_dependent_steps

    def budget_text(self) -> str:
        return f"({_fmt(self.eps)}, {_fmt(self.delta)})"

    def guarantee_text(self) -> str:
        """``"(1, 0)-DP"``, ``"NOT private (eps = inf)"``, the refuted claim or the conditional one, in a few
        words."""
        if math.isinf(self.eps):
            return "NOT private (eps = inf)"
        if self.refuted:
            return f"stated {self.budget_text()}-DP is REFUTED: not a valid DP guarantee"
        if self.conditional:
            return f"{self.budget_text()} conditional on a model: NOT differential privacy"
        return f"{self.budget_text()}-DP"

    def plain_language(self) -> str:
        """A paragraph a non-specialist can read."""
        text = self._guarantee_text()
        if self.data_dependent_steps:
            text += (
                " The guarantee does not cover these data-dependent steps, which make it local to "
                "the observed data: " + "; ".join(self.data_dependent_steps) + "."
            )
        if self.missing_values:
            text += " " + self.missing_values
        if self.assumptions:
            text += " It rests on these assumptions: " + "; ".join(self.assumptions) + "."
        return text + self._seeded_text()

    def lead_text(self) -> str:
        """The guarantee in a few sentences, as a report leads with it.

        The rest of :meth:`plain_language` is shown beside it in a report: the data-dependent
        steps and the assumptions as lists, the handling of missing values in a collapsible block.
        """
        return self._guarantee_text() + self._seeded_text()

    def _seeded_text(self) -> str:
        if not self.seeded:
            return ""
        return " The run was seeded: it is for reproduction, not for release, because a known seed makes the noise predictable."

    def _guarantee_text(self) -> str:
        if self.refuted and not math.isinf(self.eps):
            text = (
                f"This {self.method} analysis is NOT differentially private as stated: it was calibrated "
                f"for {self.budget_text()}-differential privacy, but that guarantee is refuted "
                f"({self.refuted}), so the stated eps is not a valid differential privacy guarantee. "
                "Do not release these outputs as private."
            )
        elif math.isinf(self.eps):
            text = (
                f"This {self.method} analysis is NOT differentially private: it was run with "
                "eps = inf, as a non-private reference."
            )
        else:
            relation = NEIGHBOURING_TEXT[self.neighbouring]
            if (
                self.n_private and self.neighbouring == "replace"
            ):  # rows were dropped: n read is public, n analysed not
                relation = relation.replace("(the number of rows n is public)", ROWS_DROPPED_TEXT)
            bound = f"the probability of any output changes by at most a factor of e^{_fmt(self.eps)}" + (
                f" (plus {_fmt(self.delta)})" if self.delta else ""
            )
            if self.conditional:
                text = (
                    f"This {self.method} analysis is NOT differentially private: its {self.budget_text()} "
                    f"guarantee is conditional on a model, with respect to {relation}. If "
                    f"{self.conditional}, then whether or not any one person's row is changed, {bound}. "
                    "For data sets the model does not describe there is no guarantee."
                )
            else:
                text = (
                    f"This {self.method} analysis is {self.budget_text()}-differentially private "
                    f"with respect to {relation}: whether or not any one "
                    f"person's row is changed, {bound}."
                )
        return text

    def to_dict(self) -> dict:
        out = {
            "method": self.method,
            "eps": self.eps,
            "delta": self.delta,
            "neighbouring": self.neighbouring,
            "mechanisms": list(self.mechanisms),
            "sensitivities": dict(self.sensitivities),
            "ledger": [e.to_dict() for e in self.ledger],
            "assumptions": list(self.assumptions),
            "data_dependent_steps": list(self.data_dependent_steps),
            "seeded": self.seeded,
            "samplers": sorted(self.samplers),
            "notes": list(self.notes),
            "missing_values": self.missing_values,
            "statement": self.plain_language(),
        }
        if self.refuted:  # only present when the stated guarantee is known not to hold
            out["refuted"] = self.refuted
            out["valid_guarantee"] = False
        if self.conditional:  # only present when the guarantee holds under a model, not for every data set
            out["conditional"] = self.conditional
            out["differentially_private"] = False
        return out


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "inf"
    return f"{x:.6g}"
