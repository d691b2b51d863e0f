"""The result object every method returns (``docs/architecture.md``, "Layers").

:class:`DPResult` carries the call, sizes, outputs, the privacy statement,
operating characteristics and (non-private, opt-in) diagnostics, and renders
itself as R-like text (``print``, ``summary()``), broom-style tables
(``tidy()``, ``glance()``), plain JSON-able types (``to_dict()``) and a
self-contained HTML report (``report(path)``).  A subclass per method supplies
only what differs: its outputs, its table, its plots.

The diagnostics rule
--------------------
A value computed from the raw data that is not part of the release (rows
dropped, values clipped, class sizes, the non-private selection, comparisons
with a simulation's truth) reaches no output channel unless the user asked.
Front doors take ``diagnostics: bool = False`` (``truth=`` implies it) and
attach diagnostics only through :func:`attach_diagnostics`, which builds them
lazily, after the release, and only when requested.  Every channel reads them
through :meth:`DPResult.shown_diagnostics`: ``str``/``repr`` (never),
``summary()``, ``to_dict()``/``to_json()`` (hence the command line's ``--json``
and the R package's ``print``/``summary``/``tidy``), ``_repr_html_`` (never)
and ``report()`` (only with ``include_diagnostics=True`` as well).  The privacy
statement may *name* a data-dependent step but does not print its value.
"""

from __future__ import annotations

import dataclasses

import datetime as _dt
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from .._io import atomic_write, jsonable
from ..errors import ChanceWarning, caller_stacklevel
from ..formula import r_names
from ..plotting import Plot
from ..privacy.events import describe as describe_event
from ..privacy.statement import PrivacyStatement
from ..report import render_fragment, render_report
from ..simulate.chance import Chance, at_chance, chance_part, chance_warning, chance_where


@dataclass
class OperatingCharacteristics:
    """What a release implies about its own accuracy (``docs/architecture.md``, "Layers").

    ``rows`` hold ``quantity``, ``estimate``, ``std_error`` (Monte Carlo; 0 for
    exact values) and ``basis``: :data:`BASIS_RELEASED` for values that follow
    from released quantities and public inputs alone, :data:`BASIS_ASSUMED` for
    error rates simulated under the model the user stated with ``assume=``.
    ``model`` says how the figures were obtained; ``assumption`` is that model's
    ``describe()`` (``None`` when nothing was assumed); ``trials`` counts the
    simulated trials (0 when nothing was simulated).
    """

    rows: list[dict[str, Any]]
    model: str
    trials: int = 0
    assumption: str | None = None
    note: str = "computed from released quantities and public inputs only (post-processing, no privacy cost)"

    @classmethod
    def of(cls, fields: dict[str, Any] | None) -> OperatingCharacteristics | None:
        """From the fields a simulation returns (:mod:`dpstats.simulate`), or None when it returned none."""
        return None if fields is None else cls(**fields)

    def __post_init__(self) -> None:
        if self.assumption is not None and self.note == _NOTE_RELEASED:
            self.note = (
                "exact rows from released quantities and public inputs, simulated rows only under "
                "the assumed model; post-processing, no privacy cost"
            )
        for row in self.rows:
            row.setdefault("basis", BASIS_RELEASED)
            if row["basis"] == BASIS_ASSUMED and self.assumption is None:
                raise ValueError("a row simulated under an assumed model needs the assumption stated")

    @property
    def assumption_label(self) -> str | None:
        """The label every channel prints next to simulated error rates."""
        return None if self.assumption is None else f"under the assumed model: {self.assumption}"

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["quantity", "estimate", "std_error", "basis"])

    def chance_text(self, method: str, eps: float, chance: Mapping[str, Chance]) -> str:
        """The planner's ChanceWarning text for the rows simulated under the assumed model whose measure (the
        quantity's first word) does not beat its ``chance`` level, with the planner's rule
        (:mod:`dpstats.simulate.chance`); empty when every one does, or nothing was assumed.  From the
        assumed model and public inputs only: the rows are simulated, never read from the data."""
        parts = []
        for row in self.rows:
            measure = row["quantity"].split(" (")[0]
            level = chance.get(measure)
            if (
                level is not None
                and row["basis"] == BASIS_ASSUMED
                and at_chance(row["estimate"], row["std_error"], level)
            ):
                where = chance_where(eps, row["estimate"], row["std_error"])
                parts.append(chance_part(method, measure, level.text, where))
        return chance_warning(parts)

    def to_dict(self) -> dict:
        return {
            "rows": jsonable(self.rows),
            "model": self.model,
            "trials": self.trials,
            "assumption": self.assumption_label,
            "note": self.note,
        }


_NOTE_RELEASED = OperatingCharacteristics.note
BASIS_RELEASED = "released quantities and public inputs"
BASIS_ASSUMED = "under the assumed model"


@dataclass
class DPResult:
    """Base class of all dpstats results.

    Subclasses set :attr:`title`, fill :attr:`outputs` and override
    :meth:`_body_lines`, :meth:`tidy`, :meth:`_glance_extra` and :meth:`plots`.
    """

    method: str
    call: dict[str, Any]
    n: int | None
    p: int
    terms: list[str]
    privacy: PrivacyStatement
    operating_characteristics: OperatingCharacteristics | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    diagnostics_requested: bool = False
    warnings: list[str] = field(default_factory=list)
    private_bounds: dict[str, Any] | None = None
    assumed_chance: str = ""  # :meth:`warn_at_chance`'s text (empty: none)
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    )

    title = "Differentially private analysis"
    p_noun = "terms"  # what p counts, as the report's sizes line names it

    # ------------------------------------------------------------------ text
    def call_text(self) -> str:
        args = ", ".join(f"{k} = {_r_value(v)}" for k, v in self.call.items() if v is not None)
        return f"{self.method}({args})"

    @property
    def heading(self) -> str:
        """The title as printed: at eps = inf the fit is a non-private reference, and says so (once).

        ``"Differentially private linear regression"`` would be false there:
        ``"Linear regression: non-private reference (eps = inf)"``.
        """
        if not math.isinf(self.privacy.eps):
            return self.title
        plain = re.sub(r"^(?:Differentially private|DP) ", "", self.title)
        return f"{plain[:1].upper()}{plain[1:]}: non-private reference (eps = inf)"

    def privacy_line(self) -> str:
        st = self.privacy
        if math.isinf(st.eps):  # the heading says what the fit is: no neighbouring relation, no mechanism
            return "Privacy: none (eps = inf)"
        bits = [
            st.guarantee_text(),
            f"neighbouring: {st.neighbouring.replace('_', '/')} one row",
            ", ".join(st.mechanisms),
        ]
        if st.data_dependent_steps:
            bits.append(f"{len(st.data_dependent_steps)} data-dependent step(s) not covered")
        if st.seeded:
            bits.append("seeded: for reproduction, not for release")
        return "Privacy: " + "; ".join(bits)

    def missing_lines(self) -> list[str]:
        """The rule for missing values where it can move the estimates: a private call under
        ``na_action="fill"``.  The same line whether or not any value was filled (the count is private)."""
        st = self.privacy
        if math.isinf(st.eps) or not st.missing_values.startswith('Missing values (na_action="fill")'):
            return []
        if st.n_private:  # variables without a public fill: their missing values dropped rows
            return [
                "Missing values: rows missing a variable without declared bounds were dropped (the number "
                "is not released); other missing values, if any, were replaced by public fills: filled values "
                "pull the estimates towards the fills."
            ]
        return [
            'Missing values, if any, were replaced by public fills (na_action = "fill"; the count is not '
            "released): filled values pull the estimates towards the fills."
        ]

    def _body_lines(self) -> list[str]:
        return []

    def _summary_body_lines(self) -> list[str]:
        """The body of :class:`Summary`: print's, unless a result's summary says more (summary.lm's R²)."""
        return self._body_lines()

    def __str__(self) -> str:
        lines = [self.heading, "", "Call:", self.call_text(), ""]
        lines += self._body_lines()
        if self.assumed_chance:
            lines += ["", f"Warning (under the assumed model): {self.assumed_chance}"]
        lines += ["", *self.bounds_level_line(), *self.missing_lines(), self.privacy_line()]
        return "\n".join(lines)

    def warn_at_chance(self, method: str, chance: Mapping[str, Chance]) -> None:
        """Where the operating characteristics simulated under ``assume=`` say a measure does not beat its
        ``chance`` level (the planner's rule and text, :meth:`OperatingCharacteristics.chance_text`), say
        so in print and summary and raise :class:`~dpstats.errors.ChanceWarning`, as :func:`dpstats.plan`
        does on the same public inputs and model.  Nothing at eps = inf or without such rows."""
        oc = self.operating_characteristics
        if oc is None or math.isinf(self.privacy.eps):
            return
        self.assumed_chance = oc.chance_text(method, self.privacy.eps, chance)
        if self.assumed_chance:
            self.warnings.append(self.assumed_chance)
            warnings.warn(self.assumed_chance, ChanceWarning, stacklevel=caller_stacklevel())

    def bounds_level_line(self) -> list[str]:
        """print()'s line on private bounds: their quantile level, which says how much they clip (empty
        without ``bounds="auto"``)."""
        pb = self.private_bounds
        if not pb:
            return []
        return [
            f"Private bounds: {pb['mode']}, quantile level {pb['level']:g} and {1 - pb['level']:g} (eps = "
            f"{pb['eps']:g}; values beyond them clipped; summary() lists them)"
        ]

    def __repr__(self) -> str:
        return self.__str__()

    def withhold_n(self) -> None:
        """Blank n, and every field computed from it (subclasses add theirs), where n is private."""
        self.n = None

    def withhold_read_values(self) -> dict[str, Any]:
        """Blank the fields read from the rows that the statement names in ``withheld``; return their
        values, which only requested diagnostics show (subclasses with such fields override)."""
        return {}

    def released_n(self) -> int | None:
        """n as every output channel shows it: None under add/remove-one-row privacy.

        Under add/remove neighbouring the number of rows is itself private, so it
        is not printed (it is a diagnostic, shown only on request); so is the
        number of rows analysed when incomplete rows were dropped
        (``na_action="omit"``, or variables without declared bounds).
        """
        private = self.privacy.neighbouring == "add_remove" or self.privacy.n_private
        return None if private else self.n

    def n_text(self) -> str:
        """``"n = 100"``, or why n is not shown."""
        n = self.released_n()
        if n is not None:
            return f"n = {n}"
        if self.privacy.neighbouring == "add_remove":
            return "n not released (add/remove one row: the number of rows is private)"
        return "n not released (rows with a missing value are dropped, so the number analysed is private)"

    def sizes_line(self) -> str:
        """The report's line of sizes: ``"n = 100 rows, p = 3 coefficients"`` (:attr:`p_noun` says what p
        counts)."""
        rows = " rows" if self.released_n() is not None else ""
        return f"{self.n_text()}{rows}, p = {self.p} {self.p_noun}"

    def header_line(self) -> str:
        """The summary's line under the call: ``"n = 100, p = 3"``."""
        return f"{self.n_text()}, p = {self.p}"

    def shown_diagnostics(self) -> dict[str, Any]:
        """The non-private diagnostics every output channel may show: empty unless requested."""
        return self.diagnostics if self.diagnostics_requested else {}

    def summary(self) -> Summary:
        """A full summary: outputs, privacy statement, ledger, characteristics."""
        return Summary(self)

    # ------------------------------------------------------------------ tables
    def tidy(self) -> pd.DataFrame:
        """One row per term (broom's ``tidy``), with the released private bounds' columns under ``bounds="auto"``."""
        return _bound_columns(self, self._tidy())

    def _tidy(self) -> pd.DataFrame:
        """The method's own tidy table (subclasses override this, not :meth:`tidy`)."""
        return pd.DataFrame({"term": self.terms})

    def bounds_lines(self) -> list[str]:
        """The released private bounds as text (empty without ``bounds="auto"``)."""
        pb = self.private_bounds
        if not pb:
            return []
        lines = [
            f"Private bounds (released, eps = {pb['eps']:g}; {pb['mode']}, quantile level {pb['level']:g}; "
            "values beyond them clipped):"
        ]
        if pb.get("row_norm_bound") is not None:
            lines.append(f"  row l2-norm bound B = {pb['row_norm_bound']:.6g}")
        pairs = pb.get("bounds") or {}
        shown = list(pairs.items())[:10]
        lines += [f"  {name}: [{lo:.6g}, {hi:.6g}]" for name, (lo, hi) in shown]
        if len(pairs) > len(shown):
            lines.append(f"  ... and {len(pairs) - len(shown)} more (tidy() has them all)")
        return lines

    def report_table(self) -> pd.DataFrame:
        """The table shown in the report's results section (default: ``tidy()``)."""
        return self.tidy()

    def report_table_note(self) -> str:
        """A sentence under the report's table when it shows part of ``tidy()`` (default: none)."""
        return ""

    def _glance_extra(self) -> dict[str, Any]:
        return {}

    def glance(self) -> pd.DataFrame:
        """One row per model (broom's ``glance``)."""
        row = {
            "method": self.method,
            "n": self.released_n(),
            "p": self.p,
            "eps": self.privacy.eps,
            "delta": self.privacy.delta,
            "neighbouring": self.privacy.neighbouring,
        }
        row.update(self._glance_extra())
        if self.private_bounds:
            pb = self.private_bounds
            row.update(
                {"bounds": f"auto ({pb['mode']})", "bounds_eps": pb["eps"], "bounds_level": pb["level"]}
            )
            if pb.get("row_norm_bound") is not None:
                row["row_norm_bound"] = pb["row_norm_bound"]
        row.update(
            {"seeded": self.privacy.seeded, "data_dependent_steps": len(self.privacy.data_dependent_steps)}
        )
        if self.privacy.refuted or self.privacy.conditional:
            row["guarantee"] = self.privacy.guarantee_text()
        return pd.DataFrame([row])

    def ledger(self) -> pd.DataFrame:
        """The privacy ledger as a table (one row per step)."""
        return pd.DataFrame([e.to_dict() for e in self.privacy.ledger])

    def outputs(self) -> dict[str, Any]:
        """Method outputs as plain types (override)."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able types (the R wrapper and the command line use this)."""
        out = {
            "class": type(self).__name__,
            "method": self.method,
            "title": self.title,
            "call": jsonable(self.call),
            "n": self.released_n(),
            "p": self.p,
            "terms": list(self.terms),
            "outputs": jsonable(self.outputs()),
            "tidy": jsonable(self.tidy().to_dict(orient="list")),
            "glance": jsonable(self.glance().iloc[0].to_dict()),
            "privacy": jsonable(self.privacy.to_dict()),
            "operating_characteristics": (
                self.operating_characteristics.to_dict() if self.operating_characteristics else None
            ),
            "diagnostics": jsonable(self.shown_diagnostics()),
            "warnings": list(self.warnings),
            "created": self.created,
        }
        if self.private_bounds:
            out["private_bounds"] = jsonable(self.private_bounds)
        return out

    def to_json(self, path: str | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False)
        if path:
            atomic_write(path, text)
        return text

    # ------------------------------------------------------------------ report
    def plots(self) -> list[Plot]:
        """Figures for the report (override)."""
        return []

    def report_sections(self) -> list[dict[str, Any]]:
        """Extra report sections: dicts with ``heading`` and ``html`` (override)."""
        return []

    def report(self, path: str, *, include_diagnostics: bool = False) -> str:
        """Write a self-contained HTML report to ``path`` and return the path."""
        html = render_report([self], include_diagnostics=include_diagnostics)
        atomic_write(path, html)
        return path

    def _repr_html_(self) -> str:
        return render_fragment(self)


SHARE_NOTE = (
    "eps share, delta share: each step's share of the call's budget in proportion to its rho (they sum to "
    "the total, which is the guarantee of the steps together, not of a step alone); rho: the step's own "
    "zCDP rho; eps alone: the step's own eps by itself at delta = {delta:g}."
)


def deleted_due_to_missingness(n_deleted: int | None, eps: float) -> list[str]:
    """R's ``(k observations deleted due to missingness)`` line of a non-private fit (eps = inf) that left
    ``n_deleted`` incomplete rows out; nothing at finite eps, where the count is private, or when none was.

    Examples
    --------
    >>> deleted_due_to_missingness(42, math.inf)
    ['  (42 observations deleted due to missingness)']
    >>> deleted_due_to_missingness(42, 1.0)
    []
    """
    if not n_deleted or math.isfinite(eps):
        return []
    return [f"  ({n_deleted} observation{'s' if n_deleted > 1 else ''} deleted due to missingness)"]


def ledger_lines(table: pd.DataFrame) -> list[str]:
    """A ledger table as indented text lines; a zCDP plan's shares are named as shares, next to each
    step's own rho and its eps alone, with a note saying which is which."""
    # dp_select_infer's ledger has a part column
    shown = [c for c in ("part", "step", "mechanism", "eps", "delta") if c in table]
    shares = "rho" in table and table["rho"].notna().any()
    if not shares:
        return _indent(table[shown].to_string(index=False))
    view = table[shown + ["rho", "eps_alone"]].rename(
        columns={"eps": "eps share", "delta": "delta share", "eps_alone": "eps alone"}
    )
    for column in ("rho", "eps alone"):  # "-": a step whose (eps, delta) is its own guarantee
        view[column] = [f"{v:.6g}" if pd.notna(v) else "-" for v in view[column]]
    delta = float(table["delta_alone"].dropna().iloc[0])
    return _indent(view.to_string(index=False)) + _wrap(SHARE_NOTE.format(delta=delta)).splitlines()


class Summary:
    """The text (and HTML) summary of a result, like R's ``summary()``."""

    def __init__(self, result: DPResult) -> None:
        self.result = result

    def __str__(self) -> str:
        r = self.result
        st = r.privacy
        lines = [r.heading, "", "Call:", r.call_text(), "", r.header_line(), ""]
        lines += r._summary_body_lines()
        if r.private_bounds:
            lines += [""] + r.bounds_lines()
        lines += ["", *r.missing_lines(), "Privacy statement:", _wrap(st.plain_language()), "", "Ledger:"]
        lines += ledger_lines(r.ledger())
        lines += [
            "",
            "Events (what each step's noise is, for composing it with other analyses: dpstats.compose):",
        ]
        lines += [f"  {i}. {describe_event(e.privacy_event)}" for i, e in enumerate(st.ledger, start=1)]
        if st.sensitivities:
            lines += ["", "Sensitivities:"] + [f"  {k}: {v}" for k, v in st.sensitivities.items()]
        if st.data_dependent_steps:
            lines += ["", "Data-dependent steps (NOT covered by the guarantee):"]
            lines += [f"  - {s}" for s in st.data_dependent_steps]
        if st.assumptions:
            lines += ["", "Assumptions:"] + [f"  - {a}" for a in st.assumptions]
        if st.samplers and not math.isinf(st.eps):  # at eps = inf no noise is drawn (the heading says so)
            lines += ["", "Noise samplers: " + "; ".join(sorted(st.samplers))]
        oc = r.operating_characteristics
        if oc is not None:
            lines += ["", f"Operating characteristics ({oc.note}):"]
            lines += _indent(oc.table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            lines += ["  How obtained: " + oc.model]
            if oc.assumption_label:
                lines += [
                    f"  Rows marked '{BASIS_ASSUMED}' ({oc.trials} simulated trials) hold only "
                    f"{oc.assumption_label}"
                ]
        shown = r.shown_diagnostics()
        if shown:
            lines += ["", "Diagnostics (NOT private: requested by the user; do not release):"]
            lines += [f"  {k}: {_short(v)}" for k, v in shown.items()]
        if r.warnings:
            lines += ["", "Warnings:"] + [f"  - {w}" for w in r.warnings]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return render_fragment(self.result)


# ---------------------------------------------------------------------- helpers
def _bound_columns(result: DPResult, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with ``bound_lo``/``bound_hi`` columns from released private bounds, by term."""
    pairs = (result.private_bounds or {}).get("bounds") or {}
    if not pairs or "term" not in table.columns:
        return table
    table = table.copy()
    table["bound_lo"] = [pairs.get(t, (math.nan, math.nan))[0] for t in table["term"]]
    table["bound_hi"] = [pairs.get(t, (math.nan, math.nan))[1] for t in table["term"]]
    return table


def attach_diagnostics(result: DPResult, requested: bool, build: Callable[[], dict[str, Any]]) -> DPResult:
    """Attach non-private diagnostics to ``result`` only when the user asked for them.

    ``build`` is called (after everything released has been computed) only
    when ``requested``; otherwise no diagnostic is computed and every output
    channel shows none (:meth:`DPResult.shown_diagnostics`).  Under
    add/remove-one-row privacy the number of rows is private: ``result.n``
    becomes None (attributes are an output channel too) and n is kept only
    as the diagnostic ``rows_used_n``, when requested.

    Examples
    --------
    >>> from dpstats.privacy.accountant import LedgerEntry
    >>> from dpstats.privacy.statement import PrivacyStatement
    >>> entry = LedgerEntry(step="a count", mechanism="Laplace", eps=1.0)
    >>> st = PrivacyStatement(method="demo", eps=1.0, delta=0.0, neighbouring="replace", ledger=[entry])
    >>> r = DPResult(method="demo", call={}, n=10, p=1, terms=["x"], privacy=st)
    >>> attach_diagnostics(r, False, lambda: {"rows_dropped": 3}).shown_diagnostics()
    {}
    >>> attach_diagnostics(r, True, lambda: {"rows_dropped": 3}).shown_diagnostics()
    {'rows_dropped': 3}
    """
    read = result.withhold_read_values()
    if requested:
        result.diagnostics = dict(build()) | read
        if result.released_n() is None:
            result.diagnostics["rows_used_n"] = result.n
        result.diagnostics_requested = True
    if result.released_n() is None:
        result.withhold_n()
    return result


def escape_text(text: str) -> str:
    """Escape text for an HTML element's content (report sections written in Python)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def selected_section(heading: str, intro: str, names: list[str], *, ordered: bool = False) -> dict[str, Any]:
    """A report section listing selected names (``ordered`` when the order is itself released)."""
    tag = "ol" if ordered else "ul"
    items = "".join(f"<li>{escape_text(n)}</li>" for n in names)
    return {"heading": heading, "html": f"<p>{intro}</p><{tag} class='selected-list'>{items}</{tag}>"}


def _r_value(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return "Inf" if math.isinf(v) else f"{v:g}"
    if isinstance(v, (list, tuple)):
        if len(v) > 6:
            return f"c({', '.join(_r_value(x) for x in v[:6])}, ...)"
        return f"c({', '.join(_r_value(x) for x in v)})"
    if isinstance(v, dict):
        items = list(v.items())[:6]
        names = r_names([str(k) for k, _ in items])  # `a b` = ...: in backticks, as R's deparse writes it
        shown = ", ".join(f"{k} = {_r_value(x)}" for k, (_, x) in zip(names, items))
        return "list(" + shown + (", ..." if len(v) > 6 else "") + ")"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):  # a model stated by the user (Assume, …)
        return _r_value({f.name: getattr(v, f.name) for f in dataclasses.fields(v)})
    return str(v)


def _wrap(text: str, width: int = 88) -> str:
    import textwrap

    return textwrap.fill(
        text, width=width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
    )


def _indent(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines()]


def _short(v: Any) -> str:
    s = str(jsonable(v))
    return s if len(s) < 200 else s[:197] + "..."
