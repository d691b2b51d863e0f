"""Matplotlib figures rendered as inline SVG (``docs/architecture.md``, "Layers").

Figures are drawn with the non-interactive Agg backend, saved as SVG text with
no external references, and carry an accessible title.  :class:`Plot` is the
figure record results hand to the report.

This module imports nothing of dpstats (results import it, never the reverse),
and matplotlib only when the first figure is drawn, so ``import dpstats`` and
results that are never plotted do not pay for it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass
class Plot:
    """An inline SVG figure with an accessible title and description."""

    title: str
    alt: str
    svg: str


@lru_cache(maxsize=1)
def _pyplot():
    """matplotlib.pyplot on the Agg backend with dpstats' rcParams (set once, on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update({"svg.fonttype": "path", "figure.dpi": 100, "font.size": 10})
    return plt


def new_figure(width: float = 6.4, height: float = 3.6):
    """A figure and axes with dpstats' house style."""
    fig, ax = _pyplot().subplots(figsize=(width, height))
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def to_plot(fig, title: str, alt: str) -> Plot:
    """Close ``fig`` and return it as an inline-SVG :class:`Plot`."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<svg ", f'<svg role="img" aria-label="{_escape(alt)}" ', svg, count=1)
    svg = re.sub(r"(<svg[^>]*>)", rf"\1<title>{_escape(title)}</title>", svg, count=1)
    return Plot(title=title, alt=alt, svg=svg)


_SVG_ID = re.compile(r'\bid="([^"]+)"')


def prefix_svg_ids(svg: str, prefix: str) -> str:
    """``svg`` with every id, and every reference to one (``href="#…"``, ``url(#…)``), prefixed.

    Matplotlib numbers its ids per figure (figure_1, axes_1, glyph names), so two figures
    on one page would repeat them; a prefix per figure makes them unique.

    Examples
    --------
    >>> prefix_svg_ids('<g id="a"><use xlink:href="#a"/><path clip-path="url(#a)"/></g>', "f2")
    '<g id="f2-a"><use xlink:href="#f2-a"/><path clip-path="url(#f2-a)"/></g>'
    """
    ids = set(_SVG_ID.findall(svg))
    if not ids:
        return svg
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    pattern = re.compile(rf'(\bid="|href="#|url\(#)({alternatives})(?=[")])')
    return pattern.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def coefficient_plot(terms, estimates, low=None, high=None, *, title: str, xlabel: str, alt: str) -> Plot:
    """Released coefficients as points, one row per term (top to bottom), with intervals if given."""
    fig, ax = new_figure(height=max(2.0, 0.45 * len(terms) + 1.0))
    rows = list(range(len(terms)))[::-1]
    if low is not None and high is not None:
        ax.hlines(rows, low, high, color="#6f8fd6", lw=3, label="interval")
    ax.plot(estimates, rows, "o", color="#3b6fd8", label="estimate")
    ax.axvline(0.0, color="#5a6373", lw=1, ls=":")
    ax.set_yticks(rows, [str(t) for t in terms])
    ax.set_xlabel(xlabel)
    return to_plot(fig, title, alt)
