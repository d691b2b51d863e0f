"""Matplotlib figures rendered as inline SVG (DESIGN §6).

Figures are drawn with the non-interactive Agg backend, saved as SVG text with
no external references, and carry an accessible title.
"""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .results.base import Plot  # noqa: E402

matplotlib.rcParams.update({"svg.fonttype": "path", "figure.dpi": 100, "font.size": 10})


def new_figure(width: float = 6.4, height: float = 3.6):
    """A figure and axes with dpstats' house style."""
    fig, ax = plt.subplots(figsize=(width, height))
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def to_plot(fig, title: str, alt: str) -> Plot:
    """Close ``fig`` and return it as an inline-SVG :class:`Plot`."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<svg ", f'<svg role="img" aria-label="{_escape(alt)}" ', svg, count=1)
    svg = re.sub(r"(<svg[^>]*>)", rf"\1<title>{_escape(title)}</title>", svg, count=1)
    return Plot(title=title, alt=alt, svg=svg)


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
