"""Self-contained HTML reports rendered with jinja2 (``docs/architecture.md``, "Layers").

Templates live in the repository's top-level ``templates/`` folder and ship
inside the wheel as ``dpstats/templates`` (``setup.py`` maps the folder to the
package ``dpstats.templates``): a shared base, a per-result block, and one small
block per method (``templates/methods/<method>.html.j2``).  :func:`templates_dir`
finds them in a source checkout and in an installed package alike.  No network
assets: styles are inline and plots are inline SVG.

This module imports nothing of :mod:`dpstats.results`: results import it and call
:func:`render_report` / :func:`render_fragment` with themselves, and it reads them
through the :class:`ReportableResult` protocol (duck typing).  jinja2 is imported
when the first report is rendered, so ``import dpstats`` does not pay for it.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import platform
import re
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ._io import atomic_write
from ._rnumbers import format_one
from ._version import __version__

if TYPE_CHECKING:
    import jinja2
    import pandas as pd
    from markupsafe import Markup

    from .plotting import Plot


class ReportableResult(Protocol):
    """What a report reads from a result (:class:`dpstats.results.DPResult` provides it all)."""

    method: str
    title: str
    privacy: Any
    operating_characteristics: Any
    warnings: list[str]

    def report_table(self) -> pd.DataFrame: ...

    def plots(self) -> list[Plot]: ...

    def report_sections(self) -> list[dict[str, Any]]: ...

    def shown_diagnostics(self) -> dict[str, Any]: ...


def _is_result(obj: Any) -> bool:
    """One result (rather than a sequence of them), recognised by what a report reads."""
    return hasattr(obj, "privacy") and hasattr(obj, "report_table")


def templates_dir() -> Path:
    """The folder the report templates are read from.

    In a source checkout (or an editable install) that is the repository's top-level
    ``templates/`` beside the ``dpstats`` package and ``pyproject.toml``; in an installed
    wheel it is the package data of ``dpstats.templates``.

    Examples
    --------
    >>> (templates_dir() / "base.html.j2").is_file()
    True
    """
    package = Path(__file__).resolve().parent
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "templates" / "base.html.j2").is_file():
        return checkout / "templates"
    return package / "templates"


@lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    """The jinja2 environment of dpstats' packaged templates (built once, on first use).

    Examples
    --------
    >>> template_environment().filters["num"](0.123456)
    '0.1235'
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda v, digits=4: _num(v, digits)
    env.filters["svg_ids"] = _svg_ids
    env.filters["shown"] = _shown
    env.filters["count"] = _count
    env.filters["promote_headings"] = _promote_headings
    return env


def _shown(v) -> str:
    """A value as a reader reads it: numbers to 4 significant digits, lists joined by commas.

    Examples
    --------
    >>> _shown(["x11", "x19"]), _shown(0.6666666666666666)
    ('x11, x19', '0.6667')
    """
    if isinstance(v, (list, tuple, set)):
        return ", ".join(_num(x) for x in v) if v else "none"
    return _num(v)


def _svg_ids(svg: str, prefix: str) -> str:
    from .plotting import prefix_svg_ids

    return prefix_svg_ids(svg, prefix)


#: Warnings that say a result should not be read as a fit: shown in a box at the top of the result
#: (with a lead naming the problem) rather than only in the Warnings list at its end.
HEADLINE_WARNINGS = (
    (re.compile(r"fit failed", re.IGNORECASE), "The fit failed."),
    (re.compile(r"dominated by noise", re.IGNORECASE), "The release is dominated by noise."),
)


def headline_warnings(warnings: Sequence[str]) -> list[dict[str, str]]:
    """The warnings a reader must see before any number: ``{"lead", "text"}`` each, in order.

    Any result whose warnings say the fit failed or is dominated by noise gets them at the top
    of its report; the rest stay in the Warnings list at the end.

    Examples
    --------
    >>> [w["lead"] for w in headline_warnings(["FIT FAILED: component(s) 2 collapsed", "n is small"])]
    ['The fit failed.']
    """
    shown = []
    for text in warnings:
        lead = next((lead for rule, lead in HEADLINE_WARNINGS if rule.search(text)), None)
        if lead is not None:
            shown.append({"lead": lead, "text": text})
    return shown


def top_warnings(result: Any) -> list[dict[str, str]]:
    """What a reader must see before any number of ``result``: its :func:`headline_warnings`, then the
    notes the result itself puts there (``headline_notes()``, e.g. dp_glm's withheld intervals), each
    ``{"lead", "text"}``.  The report's boxes at the top and the demo index's headlines read this.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> [w["lead"] for w in top_warnings(NS(warnings=["FIT FAILED: component(s) 1 collapsed"]))]
    ['The fit failed.']
    """
    notes = result.headline_notes() if hasattr(result, "headline_notes") else []
    return headline_warnings(result.warnings) + list(notes)


def short_warning(text: str) -> str:
    """A warning's first clause (up to its first parenthesis, semicolon or sentence end), for one line.

    Examples
    --------
    >>> short_warning("FIT FAILED: component(s) 1 collapsed (noisy weight 0.001 < 0.0167); more.")
    'FIT FAILED: component(s) 1 collapsed'
    """
    return re.split(r" \(|; |\. ", text, maxsplit=1)[0].rstrip(".")


def _num(v, digits: int = 4) -> str:
    """A value as the report prints it: integers whole with thousands separators, other numbers as R's
    ``format(x, digits = digits)`` (print's coefficient tables: fixed unless scientific is narrower).

    Examples
    --------
    >>> [_num(v) for v in (100000, -16448.4, 0.123456, 1e-7, float("nan"))]
    ['100,000', '-16448', '0.1235', '1e-07', 'NA']
    """
    if v is None:
        return "NA"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return format_one(x, digits)


def _count(v) -> str:
    """A count (n, p) as a whole number with thousands separators, whether given as an int or a float.

    Examples
    --------
    >>> _count(1e5), _count(20), _count(None)
    ('100,000', '20', 'NA')
    """
    if isinstance(v, float) and v.is_integer():
        return f"{int(v):,}"
    return _num(v)


def _promote_headings(html: str, promote: bool) -> Markup:
    """``html`` with every h3..h6 one level up where ``promote`` (a page of one result, whose h1 is the
    result's own heading, so its sections are h2: no level is skipped)."""
    from markupsafe import Markup

    if not promote:
        return Markup(html)
    return Markup(re.sub(r"(</?h)([3-6])\b", lambda m: f"{m.group(1)}{int(m.group(2)) - 1}", str(html)))


def software_versions() -> dict[str, str]:
    """Versions of dpstats, Python, numpy, scipy, pandas and the platform, printed in every report.

    Examples
    --------
    >>> sorted(software_versions())
    ['dpstats', 'numpy', 'pandas', 'platform', 'python', 'scipy']
    """
    import numpy
    import pandas
    import scipy

    return {
        "dpstats": __version__,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "platform": platform.platform(),
    }


def _context(result: ReportableResult, include_diagnostics: bool, key: str = "result-1") -> dict:
    """What result.html.j2 reads of one result; ``key`` makes its ids unique on the page."""
    import jinja2

    method_template = f"methods/{result.method}.html.j2"
    try:
        template_environment().get_template(method_template)
    except jinja2.TemplateNotFound:
        method_template = None
    tidy = result.report_table()
    headline = top_warnings(result)
    return {
        "key": key,
        "r": result,
        "headline_warnings": headline,
        "other_warnings": [w for w in result.warnings if w not in {h["text"] for h in headline}],
        "st": result.privacy,
        "ledger": ledger_rows(result),
        "tidy_columns": list(tidy.columns),
        "tidy_rows": tidy.head(500).to_dict(orient="records"),
        "tidy_truncated": len(tidy) > 500,
        "n_tidy": len(tidy),
        "table_note": result.report_table_note() if hasattr(result, "report_table_note") else "",
        "plots": result.plots(),
        "sections": result.report_sections(),
        "oc": result.operating_characteristics,
        "method_template": method_template,
        "include_diagnostics": include_diagnostics,
        "diagnostics": result.shown_diagnostics() if include_diagnostics else {},
    }


def ledger_rows(result: ReportableResult) -> list[dict]:
    """The rows of a result's ledger as the report's ledger table reads them (each with its event in words)."""
    from .privacy.events import describe

    return [dict(e.to_dict(), event_text=describe(e.privacy_event)) for e in result.privacy.ledger]


def ledger_table_html(result: ReportableResult) -> str:
    """A result's ledger as the report's ledger table (templates/ledger.html.j2), for a section of another
    result's report (dp_select_infer's part ledgers)."""
    macro = template_environment().get_template("ledger.html.j2").module.ledger_table
    return str(macro(ledger_rows(result), result.privacy.eps, result.privacy.delta))


def render_report(
    results: Sequence[ReportableResult], *, include_diagnostics: bool = False, title: str | None = None
) -> str:
    """Render one result, or a comparison of several, as a complete HTML page."""
    results = list(results)
    if not results:
        raise ValueError("render_report needs at least one result")
    items = [_context(r, include_diagnostics, f"result-{i}") for i, r in enumerate(results, start=1)]
    total_eps = math.fsum(r.privacy.eps for r in results)
    total_delta = math.fsum(r.privacy.delta for r in results)
    composed = _composed(results) if len(results) > 1 else None
    page_title = title or (
        getattr(results[0], "heading", results[0].title)
        if len(results) == 1
        else f"Comparison of {len(results)} analyses"
    )
    return (
        template_environment()
        .get_template("base.html.j2")
        .render(
            title=page_title,
            items=items,
            comparison=len(results) > 1,
            total_eps=total_eps,
            total_delta=total_delta,
            composed=composed,
            any_seeded=any(r.privacy.seeded for r in results),
            versions=software_versions(),
            generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )


def _composed(results: Sequence[ReportableResult]):
    """The tight composition of the compared analyses at their summed delta (None if it fails)."""
    from .privacy.composition import compose

    try:
        return compose(list(results))
    except Exception:  # noqa: BLE001 - the basic line is still shown
        return None


def render_fragment(result: ReportableResult) -> str:
    """The result block alone, for notebooks (``_repr_html_``)."""
    import secrets

    key = f"result-{secrets.token_hex(4)}"  # several fragments may share one notebook page
    return template_environment().get_template("fragment.html.j2").render(item=_context(result, False, key))


def report(
    results: ReportableResult | Sequence[ReportableResult],
    path: str,
    *,
    include_diagnostics: bool = False,
    title: str | None = None,
) -> str:
    """Write a report for one result or a comparison of several to ``path``.

    Examples
    --------
    >>> import dpstats as dp, tempfile, os
    >>> df = dp.datasets.fan_lv(n=50, d=20, random_state=1)
    >>> fit = dp.dp_sis("y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), random_state=1)
    >>> path = dp.report([fit, fit], os.path.join(tempfile.mkdtemp(), "cmp.html"))
    """
    if _is_result(results):
        results = [results]
    html = render_report(results, include_diagnostics=include_diagnostics, title=title)
    atomic_write(path, html)
    return path
