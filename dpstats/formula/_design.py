"""R's ``model.matrix``: coding each term's factors and naming the columns.

A factor in a term is coded by contrasts when the term without it is an
earlier term (or empty), otherwise by indicators of all its levels; without an
intercept the first factor of the first term holding one is coded by
indicators (``TermCode`` in R's ``model.c``).  The first variable of a term
varies fastest, and columns are named ``<variable><level or contrast>``.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError, FormulaError
from . import _bases
from ._eval import Chr, Fac, Num
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
    value, label: str, how: str, n: int, default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS
) -> tuple[np.ndarray, list[str]]:
    """The columns one variable contributes to a term, and their name suffixes."""
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
        if n == 0:
            return onehot[:, :0], []
        raise DataError(
            f"factor '{label}' has {len(value.levels)} level(s); contrasts need at least 2 "
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


def design(t: Terms, values: list, n: int, default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS):
    """Design matrix, column names, the term of each column, and the factors' levels."""
    blocks, names, terms = [], [], []
    if t.intercept:
        blocks, names, terms = [np.ones((n, 1))], [INTERCEPT], [INTERCEPT]
    for term, coding in zip(t.terms, codings(t, values)):
        cols, labels = np.ones((n, 1)), [""]
        for v, how in zip(sorted(term), coding):
            vcols, vlabels = variable_columns(values[v], t.labels[v], how, n, default_contrasts)
            cols = (
                np.hstack([cols * vcols[:, [j]] for j in range(vcols.shape[1])])
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


def factor_column_ranges(
    t: Terms, values: list, default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS
) -> dict[str, tuple[float, float]]:
    """The public range of every design column made of factors alone, from its coding (not the rows).

    A treatment dummy ranges over (0, 1); a ``contr.sum`` column over (-1, 1); a ``contr.poly``,
    Helmert or declared-matrix column over its matrix's entries; an interaction of factors over the
    products of its parts' entries. Columns with a numeric part are not listed (their range comes
    from declared bounds).
    """
    out: dict[str, tuple[float, float]] = {}
    for term, coding in zip(t.terms, codings(t, values)):
        parts = sorted(term)
        if not all(isinstance(values[v], Fac) for v in parts):
            continue
        cols: list[tuple[str, set]] = [("", {1.0})]
        for v, how in zip(parts, coding):
            f, label = values[v], t.labels[v]
            if how == "indicators" or len(f.levels) < 2:
                pieces = [(label + lev, {0.0, 1.0}) for lev in f.levels]
            else:
                matrix, names = contrast_matrix(f, label, default_contrasts)
                names = names if names is not None else [str(j) for j in range(1, matrix.shape[1] + 1)]
                pieces = [(label + nm, set(matrix[:, j].tolist())) for j, nm in enumerate(names)]
            cols = [
                (f"{a}:{b}" if a else b, {x * y for x in sa for y in sb})
                for b, sb in pieces
                for a, sa in cols
            ]
        for name, possible in cols:
            out[name] = (float(min(possible)), float(max(possible)))
    return out


def subset(value, keep: np.ndarray):
    """The value on the rows kept (scalars are broadcast)."""
    if isinstance(value, Fac):
        return Fac(value.codes[keep], value.levels, value.ordered, value.contrasts)
    if isinstance(value, Num):
        if value.values.ndim == 0:
            return Num(np.full(int(keep.sum()), float(value.values)), value.colnames, value.logical)
        return Num(value.values[keep], value.colnames, value.logical)
    if isinstance(value, Chr) and len(value.values) == len(keep):
        return Chr(value.values[keep])
    return value
