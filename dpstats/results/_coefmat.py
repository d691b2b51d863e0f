"""R's ``printCoefmat`` layout of a coefficient table, as ``print(summary(glm(...)))`` and
``print(summary(lm(...)))`` show it (``digits = max(3, getOption("digits") - 3)`` = 4).

Ported from R 4.2's ``stats::printCoefmat``, ``base::format.pval`` and the C routine ``formatReal``
(src/main/format.c) that ``format(x, digits =)`` calls:

* the estimate-like columns (all before the test statistic) are rounded together to
  ``max(1, digits - digmin)`` decimals, ``digmin = 1 + floor(log10(min |value|))`` over non-zero values, and formatted as one
  vector: common decimals across them; a non-zero value that would print as 0 is reformatted alone
  with ``digits - 1`` significant digits;
* the statistic is rounded to ``dig.tst = digits - 1`` decimals, then formatted to ``digits``;
* p-values by ``format.pval(p, digits = dig.tst, eps = .Machine$double.eps)``: those >= 1e-4 and those
  below formatted as two vectors, those below eps as ``<2e-16`` (``< 2e-16`` beside wider entries);
* significance stars only when some p-value is below 0.1, by ``symnum``'s right-closed intervals
  (p = 0.05 gets ``*``); NA cells print ``NA``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._rnumbers import format_real

DOUBLE_EPS = 2.220446049250313e-16
DIGITS = 4
STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, "."))
SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


def format_pval(values: Sequence[float], digits: int = DIGITS - 1, eps: float = DOUBLE_EPS) -> list[str]:
    """R's ``format.pval(pv, digits = digits, eps = eps)`` (NaN as ``NA``).

    Examples
    --------
    >>> format_pval([0.005523, 0.2, 1e-20])
    ['0.00552', '0.20000', '< 2e-16']
    >>> format_pval([1e-20, 3e-5])
    ['<2e-16', '3e-05']
    """
    out = ["NA" if math.isnan(v) else "" for v in values]
    shown = [i for i, v in enumerate(values) if not math.isnan(v) and v >= eps]
    fixed = [i for i in shown if values[i] == 0 or _fixed_p(math.floor(math.log10(values[i])), digits)]
    for group in (fixed, [i for i in shown if i not in fixed]):
        for i, text in zip(group, format_real([values[i] for i in group], digits)):
            out[i] = text
    tiny = [i for i, v in enumerate(values) if not math.isnan(v) and v < eps]
    if tiny:
        wide = max((len(out[i]) for i in shown), default=0)
        sep = "" if not shown or wide <= 6 else " "
        for i in tiny:
            out[i] = f"<{sep}{format_real([eps], 1)[0]}"
    return out


def _fixed_p(exponent: int, digits: int) -> bool:
    """format.pval's fixed-notation group (R 4.2): p >= 1e-3, or >= 1e-4 with digits > 1."""
    return exponent >= -3 or (exponent == -4 and digits > 1)


def stars(p: float | None) -> str:
    """printCoefmat's significance code of one p-value ("" for NA).

    ``symnum(p, cutpoints = c(0, 0.001, 0.01, 0.05, 0.1, 1), symbols = c("***", "**", "*", ".", " "))``
    cuts into right-closed intervals, so a p-value at a cut point gets the stronger code.

    Examples
    --------
    >>> [stars(p) for p in (0.001, 0.0011, 0.05, 0.1, 0.5)]
    ['***', '**', '*', '.', ' ']
    """
    if p is None or not math.isfinite(p):
        return ""
    return next((code for cut, code in STARS if p <= cut), " ")


def signif_codes(p_values: Sequence[float | None]) -> list[str] | None:
    """printCoefmat's stars column: each p-value's :func:`stars`, or None (no column and no
    :data:`SIGNIF_LEGEND`) unless some p-value is below 0.1 (``signif.stars && any(pv < 0.1)``)."""
    shown = [p for p in p_values if p is not None and math.isfinite(p)]
    return [stars(p) for p in p_values] if any(p < 0.1 for p in shown) else None


def estimate_columns(block: np.ndarray, digits: int = DIGITS) -> list[list[str]]:
    """The estimate-like columns (an n × k array) as printCoefmat writes them: rounded together to
    ``max(1, digits - digmin)`` decimals (digmin from the smallest non-zero magnitude) and formatted as one vector; a non-zero value shown as 0 (or
    a zero not) reformatted alone to ``digits - 1``.

    Examples
    --------
    >>> estimate_columns(np.array([[-0.0323, 0.0336], [-1.0844, 0.3800]]))
    [['-0.0323', '-1.0844'], [' 0.0336', ' 0.3800']]
    """
    values = np.asarray(block, float)
    shown = np.abs(values[np.isfinite(values) & (values != 0)])
    digmin = 1 + math.floor(math.log10(shown.min())) if shown.size else 1  # max(1, digits - range) in R
    rounded = np.round(values, max(1, digits - digmin))
    flat = format_real(rounded.T.ravel().tolist(), digits)
    cells = [flat[j * values.shape[0] : (j + 1) * values.shape[0]] for j in range(values.shape[1])]
    for j in range(values.shape[1]):
        for i in range(values.shape[0]):
            x, text = values[i, j], cells[j][i]
            if math.isfinite(x) and (x == 0) != (float(text) == 0):
                cells[j][i] = format_real([x], max(1, digits - 1))[0]
    return cells


def coefmat_lines(
    rows: Sequence[str],
    estimates: dict[str, Sequence[float]],
    statistic: tuple[str, Sequence[float]],
    p_value: tuple[str, Sequence[str]],
    signif: Sequence[str] | None,
) -> list[str]:
    """The table as R's ``print.default`` of printCoefmat's character matrix shows it: row names
    left-justified, every column right-justified to its header or widest cell, one space apart.
    ``p_value`` holds the p-values already written; ``signif`` the stars (None: no stars column)."""
    est = estimate_columns(np.column_stack([np.asarray(v, float) for v in estimates.values()]))
    stat = format_real(np.round(np.asarray(statistic[1], float), DIGITS - 1).tolist(), DIGITS)
    columns = [*zip(estimates, est), (statistic[0], stat), (p_value[0], list(p_value[1]))]
    if signif is not None:
        width = max(len(s) for s in signif)
        columns.append(("", [s.ljust(width) for s in signif]))
    name_width = max(len(r) for r in rows)
    widths = [max(len(head), *(len(c) for c in cells)) for head, cells in columns]
    lines = [" " * name_width + "".join(" " + head.rjust(w) for (head, _), w in zip(columns, widths))]
    for i, row in enumerate(rows):
        lines.append(
            row.ljust(name_width) + "".join(" " + c[i].rjust(w) for (_, c), w in zip(columns, widths))
        )
    return lines
