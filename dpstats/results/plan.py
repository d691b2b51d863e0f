"""The planner's result: predicted accuracy over an eps (and n) grid, with no data read and no budget charged.

:class:`PlanResult` is a small class of its own, not a :class:`~dpstats.results.base.DPResult`:
a plan has no privacy statement because nothing is released and nothing is
spent.  It renders like the other results: ``print`` (short, R-like),
``summary()``, ``tidy()`` (one row per method × n × eps × measure), ``glance()``,
``to_dict()`` and a self-contained HTML report with the curves.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._io import atomic_write, jsonable
from ..plotting import Plot
from ..privacy.mechanism_names import mechanism_name

NO_DATA = "no data was read; no budget was charged"
#: The level of the intervals whose coverage the dp_lm and dp_glm planners simulate (95%).
NOMINAL_COVERAGE = 0.95


@dataclass
class PlanResult:
    """What :func:`dpstats.plan` predicts; every number holds only under ``assumption``.

    Attributes
    ----------
    table : DataFrame
        method, n, eps, measure, estimate, std_error (Monte Carlo), trials.
    flags : DataFrame
        The (method, n, eps, measure) whose prediction does not beat chance by 2 standard errors;
        ``worse``: it is more than 2 standard errors worse than chance.
    solutions : list
        Where the target is reached (:class:`dpstats.planner.core.Solution`).
    """

    method: str
    call: dict[str, Any]
    p: int
    ns: list[int]
    eps: list[float]
    assumption: str
    model: dict[str, Any]
    table: pd.DataFrame
    measures: list[str]
    primary: str
    chance: dict[str, dict]
    flags: pd.DataFrame
    solutions: list
    ledger: dict[str, list[dict]]
    notes: list[str]
    settings: dict[str, Any]
    seed: int
    trials: int
    session: str | None = None  # how a declared session budget was shared (dpstats.plan's session=)
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    )

    title = "Plan: predicted accuracy before spending any budget"

    def __post_init__(self) -> None:
        # the mechanisms by the names a result's ledger shows (privacy.mechanism_names)
        self.ledger = {
            method: [dict(e, mechanism=mechanism_name(e["mechanism"])) for e in entries]
            for method, entries in self.ledger.items()
        }

    # ------------------------------------------------------------------ text
    def call_text(self) -> str:
        args = ", ".join(f"{k} = {_value(v)}" for k, v in self.call.items() if k != "method")
        return f'plan("{self.method}", {args})'

    def wide(self, measure: str | None = None) -> pd.DataFrame:
        """The predictions of one measure (default: the main one) as method × n rows by eps columns."""
        part = self.table[self.table.measure == (measure or self.primary)]
        refused = self._refused()
        cells = part.assign(
            cell=[
                "refused" if (m, n, e) in refused else f"{est:.3f} ({se:.3f})"
                for m, n, e, est, se in zip(part.method, part.n, part.eps, part.estimate, part.std_error)
            ]
        )
        return cells.pivot_table(index=["method", "n"], columns="eps", values="cell", aggfunc="first")

    def _refused(self) -> set[tuple]:
        """The (method, n, eps) cells whose front door refuses the call before spending (measure ``refused``)."""
        part = self.table[(self.table.measure == "refused") & (self.table.estimate == 1.0)]
        return set(zip(part.method, part.n, part.eps))

    def chance_text(self) -> str:
        """The warning: where a planned eps (or n) cannot beat chance."""
        if not len(self.flags):
            return ""
        parts = []
        keys = ["method", "measure", "why", "worse"]
        for (method, measure, why, worse), grp in self.flags.groupby(keys, sort=False):
            where = ", ".join(
                f"eps = {e:g}"
                + (f" and n = {n}" if len(self.ns) > 1 else "")
                + f" ({est:.3g}, s.e. {se:.2g})"
                for e, n, est, se in zip(grp.eps, grp.n, grp.estimate, grp.std_error)
            )
            verdict = "more than 2 SE worse than chance" if worse else "within 2 SE of chance"
            parts.append(f"{method}: predicted {measure} is {verdict} ({why}) at {where}")
        return "cannot beat chance: " + "; ".join(parts) + ". Spending this budget would buy noise."

    def _header(self) -> list[str]:
        """Title, the no-data line, the call and the assumed model: the top of print and summary."""
        return [
            self.title,
            f"({NO_DATA})",
            "",
            "Call:",
            self.call_text(),
            "",
            "Assumed model: " + self.assumption,
        ] + (["", "Session: " + self.session] if self.session else [])

    def _lines(self) -> list[str]:
        lines = self._header() + [""]
        lines.append(
            f"Predicted {self.primary} (Monte Carlo s.e.; {self.trials} simulated data sets per cell):"
        )
        lines += _table_lines(self.wide())
        if self._refused():
            lines.append(
                "refused: the front door refuses these calls before spending anything (see the notes)"
            )
        for sol in self.solutions:
            lines.append("Target: " + sol.text())
        if len(self.flags):
            lines += ["", "Warning: " + self.chance_text()]
        return lines

    def __str__(self) -> str:
        return "\n".join(self._lines())

    def __repr__(self) -> str:
        return self.__str__()

    def summary(self) -> str:
        """Every measure, the ledger the analysis would charge, the chance levels, the targets and notes."""
        lines = self._header()
        for measure in self.measures:
            lines += ["", f"Predicted {measure}:"] + _table_lines(self.wide(measure))
        lines += [
            "",
            "What the analysis would charge (shares of each eps of the grid; n = " + f"{self.ns[0]}):",
        ]
        for method, entries in self.ledger.items():
            for e in entries:
                sens = f"; {e['sensitivity']}" if e.get("sensitivity") else ""
                lines.append(
                    f"  {method}: {e['step']} [{e['mechanism']}] eps × {e['eps_share']:g}, delta {e['delta']:.3g}{sens}"
                )
        lines += ["", "Chance levels:"]
        for method, levels in self.chance.items():
            for measure, c in levels.items():
                lines.append(f"  {method} {measure}: {c['level']:.3g} ({c['text']})")
        for sol in self.solutions:
            pts = ", ".join(f"{x:g}: {f:.3f}" for x, f, _ in sorted(sol.evaluated))
            lines += ["", "Target: " + sol.text(), f"  evaluated ({sol.axis}: {sol.measure}): {pts}"]
        if len(self.flags):
            lines += ["", "Warning: " + self.chance_text()]
        lines += ["", "Notes:"] + [f"  - {n}" for n in self.notes]
        lines.append(f"  - simulation seed {self.seed}: a plan is a simulation, no privacy is at stake")
        return "\n".join(lines)

    # ------------------------------------------------------------------ tables
    def tidy(self) -> pd.DataFrame:
        """One row per method × n × eps × measure: estimate, std.error, trials, chance level, beats_chance."""
        out = self.table.rename(columns={"std_error": "std.error"}).copy()
        out["chance"] = [
            self.chance.get(m, {}).get(meas, {}).get("level", math.nan)
            for m, meas in zip(out.method, out.measure)
        ]
        flagged = set(zip(self.flags.method, self.flags.n, self.flags.eps, self.flags.measure))
        out["beats_chance"] = [
            None if math.isnan(c) else (m, n, e, meas) not in flagged
            for m, n, e, meas, c in zip(out.method, out.n, out.eps, out.measure, out.chance)
        ]
        return out.reset_index(drop=True)

    def glance(self) -> pd.DataFrame:
        sol = self.solutions[0] if self.solutions else None
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "p": self.p,
                    "n_min": min(self.ns),
                    "n_max": max(self.ns),
                    "eps_min": min(self.eps),
                    "eps_max": max(self.eps),
                    "trials": self.trials,
                    "assumption": self.assumption,
                    "target_measure": None if sol is None else sol.measure,
                    "target_value": None if sol is None else sol.value,
                    "cannot_beat_chance": int(len(self.flags)),
                    "data_read": False,
                    "budget_charged": 0.0,
                }
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "method": self.method,
                "call": self.call,
                "statement": NO_DATA,
                "assumption": self.assumption,
                "model": self.model,
                "tidy": self.tidy().to_dict(orient="list"),
                "glance": self.glance().iloc[0].to_dict(),
                "chance": self.chance,
                "warning": self.chance_text() or None,
                "targets": [s.to_dict() for s in self.solutions],
                "ledger": self.ledger,
                "notes": self.notes,
                "session": self.session,
                "seed": self.seed,
                "created": self.created,
            }
        )

    def to_json(self, path: str | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            atomic_write(path, text)
        return text

    # ------------------------------------------------------------------ report
    def plots(self) -> list[Plot]:
        """One figure per measure: predicted estimate ± 2 s.e. against eps (log scale), one line per method × n."""
        from ..plotting import new_figure, to_plot

        figs = []
        for measure in self.measures:
            fig, ax = new_figure()
            part = self.table[self.table.measure == measure]
            for (method, n), grp in part.groupby(["method", "n"]):
                grp = grp.sort_values("eps")
                label = method + (f", n = {n}" if len(self.ns) > 1 else "")
                ax.errorbar(
                    grp.eps,
                    grp.estimate,
                    yerr=2 * grp.std_error.fillna(0),
                    marker="o",
                    capsize=3,
                    label=label,
                )
            lines = []
            for levels in self.chance.values():
                if measure in levels:
                    ax.axhline(levels[measure]["level"], color="#5a6373", linestyle=":", linewidth=1)
                    lines.append("dotted line: chance level")
            if (
                measure == "coverage"
            ):  # the planned intervals are 95% intervals (planner/lm.py, planner/glm.py)
                ax.axhline(NOMINAL_COVERAGE, color="#5a6373", linestyle="--", linewidth=1)
                lines.append(f"dashed line: the nominal level {NOMINAL_COVERAGE:g}")
            ax.set_xscale("log")
            ax.set_xlabel("eps")
            ax.set_ylabel(measure)
            ax.legend(fontsize=8)
            figs.append(
                to_plot(
                    fig,
                    f"Predicted {measure} against eps",
                    f"Predicted {measure} with ±2 Monte Carlo standard errors"
                    + "".join(f"; {line}" for line in dict.fromkeys(lines))
                    + ". "
                    f"Under the assumed model: {self.assumption}.",
                )
            )
        return figs

    def report(self, path: str) -> str:
        """Write a self-contained HTML report (curves, table, assumptions, targets) to ``path``."""
        from ..report import software_versions, template_environment

        html = (
            template_environment()
            .get_template("plan.html.j2")
            .render(
                r=self,
                no_data=NO_DATA,
                plots=self.plots(),
                tidy_columns=list(self.tidy().columns),
                tidy_rows=self.tidy().to_dict(orient="records"),
                versions=software_versions(),
            )
        )
        atomic_write(path, html)
        return path


def _value(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "c(" + ", ".join(_value(x) for x in v) + ")"
    if isinstance(v, float):
        return f"{v:g}"
    if v is None:
        return "NULL"
    return str(v)


def _table_lines(wide: pd.DataFrame) -> list[str]:
    """A method × n by eps table as plain rows (one header line, as R prints a data frame)."""
    flat = wide.reset_index()
    flat.columns = ["method", "n"] + [f"eps = {e:g}" for e in wide.columns]
    return flat.to_string(index=False).splitlines()
