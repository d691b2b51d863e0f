"""R's ``model.matrix``: coding each term's factors and naming the columns.

A factor in a term is coded by contrasts when the term without it is an
earlier term (or empty), otherwise by indicators of all its levels; without an
intercept the first factor of the first term holding one is coded by
indicators (``TermCode`` in R's ``model.c``).  The first variable of a term
varies fastest, and columns are named ``<variable><level or contrast>``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError, FormulaError
from ..geometry import MONOTONE, Monomial, Transformed, product_interval
from . import _bases
from ._eval import Chr, Fac, Num, bind, constant
from ._parse import call_name, deparse, parse
from ._terms import Terms

INTERCEPT = "(Intercept)"
DEFAULT_CONTRASTS = ("contr.treatment", "contr.poly")  # R's default options(contrasts =)


def codings(t: Terms, values: list) -> list[list[str]]:
    """For each term, how each of its variables is coded: numeric, contrasts or indicators."""
    seen: set = set()
    out = []
    for term in t.terms:
        row = []
        for v in sorted(term):
            if not isinstance(values[v], Fac):
                row.append("numeric")
            else:
                margin = term - {v}
                row.append("contrasts" if not margin or margin in seen else "indicators")
        seen.add(term)
        out.append(row)
    if not t.intercept:
        for term, row in zip(t.terms, out):
            factor_at = [i for i, v in enumerate(sorted(term)) if isinstance(values[v], Fac)]
            if factor_at:
                row[factor_at[0]] = "indicators"
                break
    return out


def variable_columns(
    value,
    label: str,
    how: str,
    n: int,
    default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS,
    levels_read: bool = False,
) -> tuple[np.ndarray, list[str]]:
    """The columns one variable contributes to a term, and their name suffixes.

    ``levels_read``: a private call read some factor's levels from the rows (a named step).  Then a
    factor coded by contrasts with fewer than two levels contributes no column, as at n = 0, rather
    than an error: how many levels occur is read from the rows, and an error on it would be a release.
    """
    if how == "numeric":
        x = value.values if value.values.ndim == 2 else value.values[:, None]
        if x.shape[1] == 1:
            return x, [label]
        names = value.colnames or [str(j) for j in range(1, x.shape[1] + 1)]
        return x, [label + nm for nm in names]
    onehot = np.zeros((n, len(value.levels)))
    ok = value.codes >= 0
    onehot[np.flatnonzero(ok), value.codes[ok]] = 1.0
    if how == "indicators":
        return onehot, [label + lev for lev in value.levels]
    if len(value.levels) < 2:
        if n == 0 or levels_read:
            return onehot[:, :0], []
        raise DataError(
            f"factor '{label}' has fewer than 2 levels; contrasts need at least 2 "
            "(as in R). Remove it from the formula or check the rows kept."
        )
    matrix, names = contrast_matrix(value, label, default_contrasts)
    names = names if names is not None else [str(j) for j in range(1, matrix.shape[1] + 1)]
    return onehot @ matrix, [label + nm for nm in names]


def contrast_matrix(
    f: Fac, label: str = "the factor", default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS
) -> tuple[np.ndarray, list[str] | None]:
    """The factor's contrasts: set by C() or declared, else R's default in force
    (``options(contrasts =)``: treatment for unordered factors, polynomial for ordered ones)."""
    how, what = f.contrasts or ("levels", default_contrasts[1 if f.ordered else 0])
    k = len(f.levels)
    if how != "matrix":
        labels = f.levels if how == "levels" else [str(j) for j in range(1, k + 1)]
        return _bases.contrast_matrix(what, labels)
    values, names = what.values, what.names
    if values.shape[0] != k:
        raise FormulaError(
            f"the contrasts of {label} have {values.shape[0]} rows, but the factor has a different number "
            "of levels; give one row per level (e.g. contr.sum(nlevels(f)) for the factor's own levels)."
        )
    if what.rows is not None and what.rows != list(f.levels) and sorted(what.rows) == sorted(f.levels):
        values = values[
            [what.rows.index(lev) for lev in f.levels]
        ]  # rows named by the levels: matched by name
    # otherwise by position, as R's contrasts<- takes a matrix (it names the rows by the levels)
    m = k - 1 if what.how_many is None else what.how_many
    if values.shape[1] < m:
        raise FormulaError(
            f"the contrasts of {label} have {values.shape[1]} column(s), fewer than the {m} asked for; "
            "R would complete them with orthogonal columns, which dpstats does not: give all the columns, "
            "or set how.many (C(f, m, how.many = ...)) to the number of columns given."
        )
    return values[:, :m], None if names is None else list(names[:m])


def design(
    t: Terms,
    values: list,
    n: int,
    default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS,
    levels_read: bool = False,
):
    """Design matrix, column names, the term of each column, and the factors' levels (``levels_read``: as
    :func:`variable_columns`)."""
    blocks, names, terms = [], [], []
    if t.intercept:
        blocks, names, terms = [np.ones((n, 1))], [INTERCEPT], [INTERCEPT]
    for term, coding in zip(t.terms, codings(t, values)):
        cols, labels = np.ones((n, 1)), [""]
        for v, how in zip(sorted(term), coding):
            vcols, vlabels = variable_columns(values[v], t.labels[v], how, n, default_contrasts, levels_read)
            cols = (
                np.hstack([_product(cols, vcols[:, [j]]) for j in range(vcols.shape[1])])
                if vcols.shape[1]
                else np.empty((n, 0))
            )
            labels = [f"{a}:{b}" if a else b for b in vlabels for a in labels]
        blocks.append(cols)
        names += labels
        terms += [t.label(term)] * len(labels)
    levels = {
        t.labels[i]: list(v.levels)
        for i, v in enumerate(values)
        if isinstance(v, Fac) and any(i in term for term in t.terms)
    }
    X = np.hstack(blocks) if blocks else np.empty((n, 0))
    return np.ascontiguousarray(X, dtype=float), names, terms, levels


def _product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """An interaction's columns times one more part, as exact as floating point allows.

    The parts are finite here (missing and non-finite values were filled or their rows dropped), but
    their product can overflow to ±inf (then clipped to the column's bounds), and a part of 0 times
    an overflowed ∞ gives NaN where the exact product is 0: it is set to 0, so that a NaN, which
    clipping would keep, never reaches a statistic.  No overflow warning is raised (the rows decide it).
    """
    with np.errstate(all="ignore"):
        out = left * right
    zero_times_inf = ((left == 0) & np.isinf(right)) | ((right == 0) & np.isinf(left))
    out[np.isnan(out) & zero_times_inf] = 0.0
    return out


Part = str | tuple[float, float] | Transformed | Monomial
"""A factor of a design column: a numeric column's name (its bound is declared) or a coding's range."""


def column_parts(
    t: Terms, values: list, default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS
) -> dict[str, tuple[Part, ...]]:
    """What every design column (the intercept aside) is the elementwise product of, from public inputs.

    A column of a term is the product of one column of each of its variables (R's ``model.matrix``);
    each such part is either a numeric column, given by the name it has as a column of its own (``"x1"``,
    ``"poly(x, 2)1"``), whose bound the user declares, or a factor's coding column, given by the range of
    its coding's values: (0, 1) for a treatment dummy or an indicator, (-1, 1) for ``contr.sum``, the
    matrix's entries for polynomial, Helmert or declared contrasts. The coding, not the rows, fixes them.

    Examples
    --------
    >>> from dpstats.formula._parse import parse
    >>> from dpstats.formula._terms import build_terms
    >>> from dpstats.formula._eval import Fac, Num
    >>> t = build_terms("y ~ x*g", parse("y"), parse("x*g"), [])
    >>> values = [Num(np.zeros(3)), Num(np.zeros(3)), Fac(np.zeros(3, int), ["a", "b"], False, None)]
    >>> column_parts(t, values)
    {'x': ('x',), 'gb': ((0.0, 1.0),), 'x:gb': ('x', (0.0, 1.0))}
    """
    out: dict[str, tuple[Part, ...]] = {}
    for term, coding in zip(t.terms, codings(t, values)):
        cols: list[tuple[str, tuple[Part, ...]]] = [("", ())]
        for v, how in zip(sorted(term), coding):
            pieces = _pieces(values[v], t.labels[v], how, default_contrasts)
            cols = [(f"{a}:{b}" if a else b, pa + (pb,)) for b, pb in pieces for a, pa in cols]
        out.update(cols)
    return out


def _pieces(value, label: str, how: str, default_contrasts: tuple[str, str]) -> list[tuple[str, Part]]:
    """The columns one variable contributes to a term (as :func:`variable_columns` names them), each with
    its part: the column's own name when numeric, the range of its coding when a factor."""
    if how == "numeric":
        shape = np.shape(value.values)
        if len(shape) < 2 or shape[1] == 1:
            return [(label, _numeric_part(label, label))]
        names = value.colnames or [str(j) for j in range(1, shape[1] + 1)]
        return [(label + nm, _numeric_part(label, label + nm, nm)) for nm in names]
    if how == "indicators" or len(value.levels) < 2:
        return [(label + lev, (0.0, 1.0)) for lev in value.levels]
    matrix, names = contrast_matrix(value, label, default_contrasts)
    names = names if names is not None else [str(j) for j in range(1, matrix.shape[1] + 1)]
    return [
        (label + nm, (float(matrix[:, j].min()), float(matrix[:, j].max()))) for j, nm in enumerate(names)
    ]


def _numeric_part(label: str, column: str, suffix: str | None = None) -> Part:
    """A numeric column's part: a public function of one variable when its formula term is one
    (``log(wt)``, ``sqrt(x)``, ``I(x^2)``, column j of ``poly(x, k, raw = TRUE)``, which is x^j), or
    a product of powers of variables (column ``1.2`` of ``poly(x, z, degree = 3, raw = TRUE)``, x·z²),
    so that its bound follows from the variables'; otherwise the column's own name.  ``suffix``: the
    column's name within a matrix term (``"2"``, ``"1.2"``)."""
    try:
        node = parse(label)
    except FormulaError:
        return column
    fn = call_name(node)
    args = [(name, arg) for name, arg in node.args] if node.kind == "call" else []
    first = args[0][1] if args and args[0][0] is None else None
    if first is None or first.kind != "name":
        inner = first if fn == "I" and len(args) == 1 else None
        if inner is not None and inner.kind == "binary" and inner.value == "^":
            base, exponent = inner.args
            if base.kind == "name" and exponent.kind == "num" and float(exponent.value).is_integer():
                if float(exponent.value) >= 1:
                    return Transformed(column, base.value, "power", int(exponent.value))
        return column
    if fn in MONOTONE and len(args) == 1:
        return Transformed(column, first.value, fn)
    if fn in ("ns", "bs"):  # one column (no suffix): the basis's first
        return _spline_part(column, node, first.value, suffix or "1")
    raw = any(n == "raw" and deparse(a) in ("TRUE", "T") for n, a in args)
    if fn == "poly" and raw and suffix is not None:
        return _raw_poly_part(column, args, suffix)
    return column


@dataclass(frozen=True)
class SplineColumn(Transformed):
    """Column ``index`` (from 0) of ``ns(x, ...)``/``bs(x, ...)`` with public knots: bounded, unless declared
    itself, by the column's range over the variable's declared interval (:func:`~dpstats.formula._bases.basis_range`),
    the knots and boundary knots being read from the formula, never the rows.

    Examples
    --------
    >>> SplineColumn("ns(x, knots = 3, Boundary.knots = c(1, 6))2", "x", "ns", knots=(3.0,),
    ...              boundary=(1.0, 6.0), index=1).interval((1.0, 6.0))
    (-0.2418850539061595, 0.8012361928869052)
    """

    knots: tuple[float, ...] = ()
    boundary: tuple[float, float] = (0.0, 1.0)
    degree: int = 3
    intercept: bool = False
    index: int = 0

    def interval(self, pair: tuple[float, float] | None) -> tuple[float, float] | None:
        if pair is None:
            return None
        args = (self.knots, self.boundary, self.degree, self.intercept, self.index)
        lo, hi = _bases.basis_range(self.function, *args, *pair)
        return (lo + 0.0, hi + 0.0) if np.isfinite([lo, hi]).all() else None


def _spline_part(column: str, node, variable: str, suffix: str) -> Part:
    """Column ``suffix`` of ``ns``/``bs`` of a variable: a :class:`SplineColumn` where its knots are public
    (Boundary.knots given, and knots given or no df: as ``_eval._spline`` places none from the rows), the
    column's own name otherwise."""
    try:
        args = bind(call_name(node), node)
        if "Boundary.knots" not in args or ("knots" not in args and "df" in args) or not suffix.isdigit():
            return column
        knots = constant(args.get("knots"), "knots=")
        boundary = sorted(float(b) for b in constant(args["Boundary.knots"], "Boundary.knots="))
        degree = int(constant(args.get("degree"), "degree=", 3)) if call_name(node) == "bs" else 3
        intercept = bool(constant(args.get("intercept"), "intercept=", False))
    except (FormulaError, TypeError, ValueError):
        return column  # the evaluation of the term says what is wrong
    knots = tuple(float(k) for k in np.atleast_1d(np.asarray([] if knots is None else knots, float)))
    if len(boundary) != 2:
        return column
    return SplineColumn(
        column,
        variable,
        call_name(node),
        1,
        knots,
        (boundary[0], boundary[1]),
        degree,
        intercept,
        int(suffix) - 1,
    )


def _raw_poly_part(column: str, args: list, suffix: str) -> Part:
    """Column ``suffix`` of ``poly(..., raw = TRUE)``: R names it by its powers, one per variable
    (``"2"`` is x², ``"1.2"`` is x·z²), the variables being the arguments without a name (a number
    after a single variable is the degree, as :func:`dpstats.formula._eval._poly` reads it).  The
    column's own name when an argument is not a variable.

    Examples
    --------
    >>> from dpstats.formula._parse import parse
    >>> args = parse("poly(x, z, degree = 2, raw = TRUE)").args
    >>> _raw_poly_part("p1.1", args, "1.1"), _raw_poly_part("p0.2", args, "0.2").power
    (Monomial(label='p1.1', powers=(('x', 1), ('z', 1))), 2)
    """
    dots = [a for name, a in args if name is None]
    if len(dots) == 2 and dots[1].kind == "num":
        dots = dots[:1]
    pieces = suffix.split(".")
    if (
        len(pieces) != len(dots)
        or not all(p.isdigit() for p in pieces)
        or any(a.kind != "name" for a in dots)
    ):
        return column
    powers: dict[str, int] = {}
    for arg, piece in zip(dots, pieces):
        if int(piece):  # poly(x, x, ...) twice the same variable: its powers add up
            powers[arg.value] = powers.get(arg.value, 0) + int(piece)
    if len(powers) == 1:
        ((variable, power),) = powers.items()
        return Transformed(column, variable, "power", power)
    return Monomial(column, tuple(powers.items()))


def factor_column_ranges(parts: dict[str, tuple[Part, ...]]) -> dict[str, tuple[float, float]]:
    """The public range of every design column made of factors alone, from its coding (not the rows).

    A treatment dummy ranges over (0, 1); a ``contr.sum`` column over (-1, 1); a ``contr.poly``,
    Helmert or declared-matrix column over its matrix's entries; an interaction of factors over the
    products of its parts' ranges (:func:`dpstats.geometry.product_interval`). ``parts``: :func:`column_parts`. Columns
    with a numeric part are not listed (their bound comes from declared bounds).
    """
    return {nm: product_interval(p) for nm, p in parts.items() if all(isinstance(x, tuple) for x in p)}


def product_parts(parts: dict[str, tuple[Part, ...]]) -> dict[str, tuple[Part, ...]]:
    """The columns of :func:`column_parts` whose bound may follow from their parts': products with a
    numeric part, public functions of one variable (:class:`~dpstats.geometry.Transformed`) and
    products of powers of variables (:class:`~dpstats.geometry.Monomial`)."""
    numeric = {nm: p for nm, p in parts.items() if not all(isinstance(x, tuple) for x in p)}
    return {nm: p for nm, p in numeric.items() if len(p) > 1 or isinstance(p[0], (Transformed, Monomial))}


def response_part(response: str | None) -> dict[str, tuple[Part, ...]]:
    """The response's entry for :func:`product_parts`' mapping when it is a public function of one
    variable (``log(mpg)``, ``sqrt(y)``, ``I(y^2)``): its bound then follows from the variable's
    declared bounds, as a predictor's does; empty otherwise (a plain column, ``cbind()``, none).

    Examples
    --------
    >>> response_part("log(mpg)")
    {'log(mpg)': (Transformed(label='log(mpg)', variable='mpg', function='log', power=1),)}
    >>> response_part("mpg"), response_part("cbind(s, f)"), response_part(None)
    ({}, {}, {})
    """
    if not response:
        return {}
    part = _numeric_part(response, response)
    return {response: (part,)} if isinstance(part, (Transformed, Monomial)) else {}


def subset(value, keep: np.ndarray):
    """The value on the rows kept (scalars are broadcast)."""
    if isinstance(value, Fac):
        return replace(value, codes=value.codes[keep])
    if isinstance(value, Num):
        if value.values.ndim == 0:
            return Num(np.full(int(keep.sum()), float(value.values)), value.colnames, value.logical)
        return Num(value.values[keep], value.colnames, value.logical)
    if isinstance(value, Chr) and len(value.values) == len(keep):
        return replace(value, values=value.values[keep])
    return value
