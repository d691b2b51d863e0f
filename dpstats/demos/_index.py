"""The demo's index page and closing table, built from the results' public ``glance()`` and ``tidy()``.

Every number on the page comes from a result object the demo made (or, for a simulation report,
from its summary table): the method, n, p, eps and delta from ``glance()``, the headline (terms
selected, clusters found, coefficients) from ``tidy()``.  Nothing is typed in.  The page is
rendered with the reports' own templates (``templates/index.html.j2``) and is self-contained.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._io import atomic_write
from ..report import short_warning, software_versions, template_environment, top_warnings

MAX_NAMES = 8
CONSOLE_NAMES = 4


def _names(terms: Sequence[str], most: int = MAX_NAMES) -> str:
    shown = ", ".join(terms[:most])
    return shown + (f", … (+{len(terms) - most})" if len(terms) > most else "")


def _selection_headline(tidy: pd.DataFrame, glance: pd.Series, most: int) -> str:
    chosen = tidy.loc[tidy["selected"].astype(bool), "term"].astype(str).tolist()
    if not chosen:
        threshold = glance.get("threshold")
        tail = " (knockoff+ threshold is infinite)" if threshold is not None and math.isinf(threshold) else ""
        return "nothing selected" + tail
    return f"selected {len(chosen)} of {glance['p']}: {_names(chosen, most)}"


def _rejection_headline(tidy: pd.DataFrame, glance: pd.Series, most: int) -> str:
    rejected = tidy.loc[tidy["rejected"].astype(bool), "hypothesis"].astype(str).tolist()
    if not rejected:
        return f"nothing rejected at q = {glance['q']:g}"
    return f"rejected {len(rejected)} of {glance['p']} at q = {glance['q']:g}: {_names(rejected, most)}"


def _mixture_headline(tidy: pd.DataFrame, failed: bool) -> str:
    weights = tidy.groupby("component", sort=True)["weight"].first()
    shares = ", ".join(f"{w:.2f}" for w in weights)
    found = "components released" if failed else "clusters found"  # a failed fit found no k clusters
    return f"{len(weights)} {found}, weights {shares}"


def _coefficient_headline(tidy: pd.DataFrame, most: int) -> str:
    terms = [f"{t} {e:+.3g}" for t, e in zip(tidy["term"], tidy["estimate"])]
    return "coefficients " + _names(terms, most)


def headline(result: Any, most: int = MAX_NAMES) -> str:
    """One line on what a result found, read from its ``tidy()`` (and ``glance()``), led by the warnings
    its report shows at the top (:func:`dpstats.report.top_warnings`: a failed fit, a release dominated by
    noise, withheld intervals), so that the index never reads as a success where the report does not.

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=60, d=20, random_state=1)
    >>> fit = dp.dp_sis("y ~ .", data=df, eps=1.0, k=2, bounds=(-4, 4), random_state=1, oc_trials=0)
    >>> headline(fit).startswith("selected 2 of 20: ")
    True
    """
    alerts = top_warnings(result)
    found = _found(result, most, failed=any(w["lead"] == "The fit failed." for w in alerts))
    return " ".join([*(f"{w['lead'][:-1]} ({short_warning(w['text'])})." for w in alerts), found])


def _found(result: Any, most: int, failed: bool) -> str:
    """What the result released, in one line, from its ``tidy()`` and ``glance()``."""
    tidy = result.tidy()
    glance = result.glance().iloc[0]
    if "selected" in tidy.columns:
        return _selection_headline(tidy, glance, most)
    if {"hypothesis", "rejected"} <= set(tidy.columns):
        return _rejection_headline(tidy, glance, most)
    if {"component", "weight"} <= set(tidy.columns):
        return _mixture_headline(tidy, failed)
    if "estimate" in tidy.columns:
        return _coefficient_headline(tidy, most)
    return f"{len(tidy)} released rows"


def result_row(result: Any, most: int = MAX_NAMES) -> dict[str, Any]:
    """The index's line for one result: method, n (when public), p, eps, delta and the headline."""
    glance = result.glance().iloc[0]
    return {
        "method": str(glance["method"]),
        "n": glance.get("n"),
        "p": glance.get("p"),
        "eps": float(glance["eps"]),
        "delta": float(glance.get("delta", 0.0)),
        "headline": headline(result, most),
    }


def summary_rows(summary: pd.DataFrame, n: int | None, p: int | None) -> list[dict[str, Any]]:
    """Index lines for a simulation report: each method's accuracy at the largest eps and k simulated."""
    top = summary[(summary["eps"] == summary["eps"].max()) & (summary["k"] == summary["k"].max())]
    return [
        {
            "method": str(row.method),
            "n": n,
            "p": p,
            "eps": float(row.eps),
            "delta": 0.0,
            "headline": (
                f"share of the true signals among the top {row.k} over {row.trials} simulated data sets: "
                f"{row.accuracy:.2f} (s.e. {row.accuracy_se:.2f})"
            ),
        }
        for row in top.itertuples()
    ]


def report_rows(report: Any, most: int = MAX_NAMES) -> list[dict[str, Any]]:
    if report.results:
        return [result_row(r, most) for r in report.results]
    if report.summary is not None:
        return summary_rows(report.summary, report.n, report.p)
    return []


def eps_spent(report: Any) -> str:
    """The eps a report's analyses spend together (basic composition), as text.

    Non-private analyses (eps = ∞, e.g. a reference filter or a non-DP GLM) are named apart
    rather than summed; a simulation report spends nothing on real data.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> eps_spent(NS(results=[], summary=None))
    'simulation'
    """
    if not report.results:
        return "simulation"
    values = [float(r.glance().iloc[0]["eps"]) for r in report.results]
    finite = [v for v in values if math.isfinite(v)]
    parts = [f"{math.fsum(finite):g}"] if finite else []
    if len(finite) < len(values):
        parts.append("non-private")
    return " + ".join(parts)


def render_index(reports: Sequence[Any], index_path: Path) -> str:
    """The index page (HTML) listing ``reports``, with links relative to ``index_path``."""
    entries = [
        {
            "href": Path(os.path.relpath(Path(r.path).resolve(), index_path.resolve().parent)).as_posix(),
            "name": Path(r.path).name,
            "shows": r.shows,
            "why": r.why,
            "rows": report_rows(r),
            "eps_spent": eps_spent(r),
        }
        for r in reports
    ]
    return (
        template_environment()
        .get_template("index.html.j2")
        .render(
            title="dpstats demo: what each report shows",
            entries=entries,
            inf=math.inf,
            versions=software_versions(),
            generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )


def write_index(reports: Sequence[Any], path: str | Path) -> Path:
    """Write the index page to ``path`` (atomically) and return it."""
    path = Path(path)
    atomic_write(str(path), render_index(reports, path))
    return path


def _eps_text(eps: float) -> str:
    return "non-private" if math.isinf(eps) else f"{eps:g}"


def closing_table(reports: Sequence[Any]) -> str:
    """The short table the demo prints at the end: one line per analysis (report, method, found, eps)."""
    lines = []
    for r in reports:
        for i, row in enumerate(report_rows(r, CONSOLE_NAMES)):
            name = Path(r.path).name if i == 0 else ""
            eps = "simulation" if not r.results else _eps_text(row["eps"])
            lines.append((name, row["method"], row["headline"], eps))
    header = ("report", "method", "what it found", "eps spent")
    widths = [max(len(str(row[i])) for row in [header, *lines]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths[:3]) + f"  {{:>{widths[3]}}}"
    return "\n".join(fmt.format(*row) for row in [header, *lines])
