"""R's ``format()`` of numbers, one port used by every printed and reported number: the C routine
``formatReal`` (R 4.2, src/main/format.c) that ``format(x, digits =)``, ``print`` and
``as.character``/``deparse`` (at 15 significant digits) call to choose fixed or scientific notation."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _sci(x: float, digits: int) -> tuple[int, int]:
    """formatReal's ``scientific``: (exponent, significant digits needed) of ``x`` at ``digits``."""
    if x == 0:
        return 0, 1
    mantissa, exponent = f"{abs(x):.{digits - 1}e}".split("e")
    return int(exponent), len(mantissa.replace(".", "").rstrip("0")) or 1


def format_real(values: Sequence[float], digits: int = 7) -> list[str]:
    """R's ``format(x, digits = digits)`` of the finite values of a numeric vector (common width,
    fixed or scientific notation for all, as ``formatReal`` decides; NaN as ``NA``).

    Examples
    --------
    >>> format_real([0.37999, -1.5, 12.0], 4)
    [' 0.38', '-1.50', '12.00']
    >>> format_real([1.2e-10, 3.4e-7], 4)
    ['1.2e-10', '3.4e-07']
    """
    values = [float(v) + 0.0 for v in values]  # -0.0 prints as 0, as in R
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return ["NA" if math.isnan(v) else ("Inf" if v > 0 else "-Inf") for v in values]
    neg = int(any(v < 0 for v in finite))
    rgt, mxsl, mxns, mxe, mne = 0, -(10**9), 0, -(10**9), 10**9
    for v in finite:
        kpower, nsig = _sci(v, digits)
        left = kpower + 1
        sleft = int(v < 0) + (1 if left <= 0 else left)
        rgt, mxsl = max(rgt, nsig - left), max(mxsl, sleft)
        mxns, mxe, mne = max(mxns, nsig), max(mxe, kpower), min(mne, kpower)
    width_fixed = mxsl + rgt + (rgt != 0)
    e_digits = 2 if (mxe >= 100 or mne <= -99) else 1
    d_sci = mxns - 1
    width_sci = neg + (d_sci > 0) + d_sci + 4 + e_digits
    if width_fixed <= width_sci:
        texts = [f"{v:.{rgt}f}" if math.isfinite(v) else "NA" for v in values]
    else:
        texts = [f"{v:.{d_sci}e}" if math.isfinite(v) else "NA" for v in values]
    width = max(len(t) for t in texts)
    return [t.rjust(width) for t in texts]


def format_one(value: float, digits: int) -> str:
    """R's ``format(value, digits = digits)`` of one finite number: the fewest significant digits (at most
    ``digits``) that give it, fixed or scientific, whichever is narrower.

    Examples
    --------
    >>> [format_one(v, 4) for v in (9.109e-12, 0.0012345678, 0.5, 123456.7)]
    ['9.109e-12', '0.001235', '0.5', '123457']
    """
    return format_real([value], digits)[0].strip()


def matrix_lines(
    rows: Sequence[str], columns: Sequence[tuple[str, Sequence[float]]], digits: int = 7, width: int = 80
) -> list[str]:
    """R's ``print(m, digits = digits)`` of a numeric matrix with row and column names (R's
    printMatrix): each column formatted on its own by :func:`format_real` (common decimals within a
    column), right-justified to its widest cell or name with one space before it, row names
    left-justified; columns that do not fit in ``width`` (``getOption("width")``) go on to a new block
    with the row names again.

    Examples
    --------
    >>> for line in matrix_lines(["sd", "prop"], [("PC1", [1.0873, 0.82]), ("PC2", [0.34874, 0.08613])], 4):
    ...     print(line)
           PC1     PC2
    sd   1.087 0.34874
    prop 0.820 0.08613
    """
    name_width = max((len(r) for r in rows), default=0)
    cells = [format_real(values, digits) for _, values in columns]
    widths = [1 + max(len(head), *(len(c) for c in col)) for (head, _), col in zip(columns, cells)]
    lines: list[str] = []
    start = 0
    while start < len(columns):
        stop, used = start + 1, name_width + widths[start]
        while stop < len(columns) and used + widths[stop] < width:
            used += widths[stop]
            stop += 1
        block = range(start, stop)
        lines.append(" " * name_width + "".join(columns[j][0].rjust(widths[j]) for j in block))
        lines += [
            row.ljust(name_width) + "".join(cells[j][i].rjust(widths[j]) for j in block)
            for i, row in enumerate(rows)
        ]
        start = stop
    return lines
