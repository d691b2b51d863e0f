"""Aliased columns of a design, as R's ``lm`` and ``glm`` find them (eps = inf only).

R fits by a QR decomposition with *limited* column pivoting (LINPACK's ``dqrdc2``): the columns
are taken in the design's order, and a column whose norm, after the columns kept before it are
projected out, falls below ``tol`` times its original norm is moved to the end and not fitted.
Its coefficient is reported as ``NA`` ("not defined because of singularities"), and the fit, its
covariance, its residual degrees of freedom (n − rank) and its predictions use the others.

:func:`estimable_columns` applies the same rule, column by column in the design's order, to any
matrix whose columns have the design's inner products: the rows themselves, or the triangular
factor of a QR decomposition of them, or a square root of the design's Gram matrix (the streamed
route, which holds only the cross products: a square root of them resolves a column's relative
residual to about 1e-8, so there the tolerance is GRAM_TOL = 1e-6, and only a column whose residual
lies between 1e-7 and 1e-6 of its norm is treated otherwise than by R).

Privacy: this reads the rows and decides the shape of what is shown (which coefficients are NA),
so it is used by the non-private fits only (eps = inf, whose readers may see the data) and by the
non-private diagnostics asked for with ``diagnostics=True``.  A private fit never calls it: its
ridge and noise handle a singular Gram matrix, and nothing it shows depends on the design's rank.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError

LM_TOL = 1e-7  # lm.fit's tol (qr(x, tol = 1e-07))
GLM_TOL = 1e-11  # glm.fit's min(1e-07, control$epsilon / 1000) with glm.control()'s epsilon = 1e-8
GRAM_TOL = 1e-6  # on cross products: a square root of them resolves relative residuals to about 1e-8


def estimable_columns(A: np.ndarray, tol: float = LM_TOL) -> np.ndarray:
    """Boolean mask of the columns of ``A`` (n × k) that R's pivoted QR keeps, in their order.

    A column is kept when its residual norm, after projecting out the columns kept before it, is at
    least ``tol`` times its own norm; an all-zero column is never kept.  Projections are classical
    Gram–Schmidt done twice (as accurate as Householder for this test).

    Examples
    --------
    >>> x = np.array([1.0, 2.0, 4.0, 7.0])
    >>> estimable_columns(np.c_[np.ones(4), x, 2 * x, x**2]).tolist()
    [True, True, False, True]
    >>> estimable_columns(np.c_[np.ones(4), np.zeros(4), x]).tolist()
    [True, False, True]
    """
    A = np.asarray(A, float)
    if A.shape[0] > 2 * A.shape[1]:
        A = np.linalg.qr(A, mode="r")  # same inner products, k × k
    keep = np.zeros(A.shape[1], dtype=bool)
    Q = np.zeros((A.shape[0], 0))
    for j in range(A.shape[1]):
        col = A[:, j]
        norm = float(np.linalg.norm(col))
        if norm == 0.0 or not np.isfinite(norm):
            continue
        r = col - Q @ (Q.T @ col)
        r = r - Q @ (Q.T @ r)
        left = float(np.linalg.norm(r))
        if left >= tol * norm:
            keep[j] = True
            Q = np.c_[Q, r / left]
    return keep


def estimable_from_gram(gram: np.ndarray, tol: float = GRAM_TOL) -> np.ndarray:
    """:func:`estimable_columns` of a design known by its Gram matrix XᵀX only (streamed data): the
    test runs on a square root S (SᵀS = XᵀX) of the Gram scaled to unit diagonal (the test is
    invariant to each column's scale), at the tolerance the cross products resolve.

    Examples
    --------
    >>> x = np.array([1.0, 2.0, 4.0, 7.0])
    >>> X = np.c_[np.ones(4), x, 2 * x, x**2]
    >>> estimable_from_gram(X.T @ X).tolist()
    [True, True, False, True]
    """
    gram = (gram + gram.T) / 2.0
    d = np.sqrt(np.clip(np.diag(gram), 0.0, None))
    scale = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
    vals, vecs = np.linalg.eigh(gram * np.outer(scale, scale))
    root = np.sqrt(np.clip(vals, 0.0, None))[:, None] * vecs.T
    return estimable_columns(root, tol) & (d > 0)


def singularities_note(k: int) -> str:
    """R's header of the coefficient table: ``(1 not defined because of singularities)``."""
    return f"({k} not defined because of singularities)"


def refuse_aliased(door: str, names: list[str], keep: np.ndarray) -> None:
    """Raise a :class:`~dpstats.errors.DataError` naming the aliased design columns (``keep`` False),
    for a non-private fit that cannot report them as NA (the design's column names are public).

    Examples
    --------
    >>> refuse_aliased("vertical_glm", ["(Intercept)", "wt", "wt2"], np.array([True, True, False]))
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: vertical_glm: the design column(s) 'wt2' are linear combinations of the columns before them (aliased), so their coefficients are not defined; R's lm and glm report them as NA. Drop them from the formula (e.g. '... - wt2'); a factor level no row takes gives such a column: drop unused levels first (droplevels() in R). Nothing was spent.
    """
    aliased = [nm for nm, k in zip(names, keep) if not k]
    if not aliased:
        return
    listed = ", ".join(f"'{nm}'" for nm in aliased)
    raise DataError(
        f"{door}: the design column(s) {listed} are linear combinations of the columns before them (aliased), "
        "so their coefficients are not defined; R's lm and glm report them as NA. Drop them from the formula "
        f"(e.g. '... - {aliased[0]}'); a factor level no row takes gives such a column: drop unused levels "
        "first (droplevels() in R). Nothing was spent."
    )
