"""R's bases, computed as R computes them: ``poly``, ``splines::ns``/``bs``,
``scale`` and the base contrasts (``contr.treatment``, ``contr.sum``,
``contr.helmert``, ``contr.poly``, ``contr.SAS``)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DataError


def poly(x: np.ndarray, degree: int, raw: bool) -> np.ndarray:
    """``poly(x, degree, raw)``: raw powers, or R's orthonormal polynomials (QR of centred powers)."""
    if np.isnan(x).any():
        raise DataError("poly() does not allow missing values (nor does R); remove those rows first.")
    if raw:
        return np.column_stack([x**j for j in range(1, degree + 1)])
    if degree >= np.unique(x).size:
        raise DataError(f"poly(): degree {degree} must be less than the number of unique points.")
    xc = x - x.mean()
    q, r = np.linalg.qr(np.vander(xc, degree + 1, increasing=True))
    return (q * np.sign(np.diag(r)))[:, 1:]


def _design(knots: np.ndarray, x: np.ndarray, ord_: int, deriv: int = 0) -> np.ndarray:
    """R's ``splines::splineDesign(knots, x, ord, derivs)`` for x within the boundary knots."""
    from scipy.interpolate import BSpline  # ~0.7 s to import: only formulas with bs()/ns() pay it

    nb = len(knots) - ord_
    spline = BSpline(knots, np.eye(nb), ord_ - 1, extrapolate=True)
    return spline(x, nu=deriv) if len(x) else np.empty((0, nb))


def _quantile_knots(x: np.ndarray, n_inner: int) -> np.ndarray:
    if n_inner <= 0:
        return np.empty(0)
    probs = np.linspace(0, 1, n_inner + 2)[1:-1]
    return np.quantile(x, probs)  # R's type 7


def _with_na(x: np.ndarray, fn) -> np.ndarray:
    """Evaluate a basis on the non-missing values; missing rows stay missing (as in R)."""
    ok = ~np.isnan(x)
    inner = fn(x[ok])
    out = np.full((len(x), inner.shape[1]), np.nan)
    out[ok] = inner
    return out


def bs(x, df=None, knots=None, degree=3, intercept=False, boundary=None) -> np.ndarray:
    """``splines::bs`` with R's defaults (knots at quantiles, boundary knots at the range)."""
    return _with_na(np.asarray(x, float), lambda v: _bs(v, df, knots, int(degree), intercept, boundary))


def _bs(x, df, knots, degree, intercept, boundary):
    ord_ = degree + 1
    outside = np.zeros(len(x), bool)
    if boundary is None:
        boundary = np.array([x.min(), x.max()]) if len(x) else np.array([0.0, 1.0])
    else:
        boundary = np.sort(np.asarray(boundary, float))
        outside = (x < boundary[0]) | (x > boundary[1])
    if df is not None and knots is None:
        knots = _quantile_knots(x[~outside], max(int(df) - ord_ + (1 - int(intercept)), 0))
    knots = np.empty(0) if knots is None else np.asarray(knots, float)
    aknots = np.sort(np.concatenate([np.repeat(boundary, ord_), knots]))
    basis = np.zeros((len(x), len(aknots) - ord_))
    inside = ~outside
    basis[inside] = _design(aknots, x[inside], ord_)
    scale = np.array([math.gamma(j + 1) for j in range(ord_)])
    for side, pivot in (
        (x < boundary[0], 0.75 * boundary[0] + 0.25 * aknots[ord_]),
        (x > boundary[1], 0.75 * boundary[1] + 0.25 * aknots[-ord_ - 1]),
    ):
        if side.any():
            tt = np.vstack([_design(aknots, np.array([pivot]), ord_, d) for d in range(ord_)])
            xs = np.column_stack([(x[side] - pivot) ** j for j in range(ord_)])
            basis[side] = xs @ (tt / scale[:, None])
    return basis if intercept else basis[:, 1:]


def ns(x, df=None, knots=None, intercept=False, boundary=None) -> np.ndarray:
    """``splines::ns``: natural cubic splines, R's knot placement and QR projection."""
    return _with_na(np.asarray(x, float), lambda v: _ns(v, df, knots, intercept, boundary))


def _ns(x, df, knots, intercept, boundary):
    outside = np.zeros(len(x), bool)
    if boundary is None:
        boundary = np.array([x.min(), x.max()]) if len(x) else np.array([0.0, 1.0])
    else:
        boundary = np.sort(np.asarray(boundary, float))
        outside = (x < boundary[0]) | (x > boundary[1])
    if df is not None and knots is None:
        knots = _quantile_knots(x[~outside], max(int(df) - 1 - int(intercept), 0))
    knots = np.empty(0) if knots is None else np.asarray(knots, float)
    aknots = np.sort(np.concatenate([np.repeat(boundary, 4), knots]))
    basis = np.zeros((len(x), len(aknots) - 4))
    basis[~outside] = _design(aknots, x[~outside], 4)
    for side, pivot in ((x < boundary[0], boundary[0]), (x > boundary[1], boundary[1])):
        if side.any():
            tt = np.vstack([_design(aknots, np.array([pivot]), 4, d) for d in (0, 1)])
            basis[side] = np.column_stack([np.ones(side.sum()), x[side] - pivot]) @ tt
    const = _design(aknots, boundary, 4, 2)
    if not intercept:
        const, basis = const[:, 1:], basis[:, 1:]
    return _qr_qty(const.T, basis.T).T[:, 2:]


def _qr_qty(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``qr.qty(qr(a), b)`` with LINPACK's Householder convention (dqrdc2/dqrsl), as R computes it."""
    a, b = np.array(a, float), np.array(b, float)
    m, p = a.shape
    for col in range(min(p, m - 1)):
        v = a[col:, col]
        nrm = np.linalg.norm(v)
        if nrm == 0:
            continue
        nrm = math.copysign(nrm, v[0]) if v[0] != 0 else nrm
        v /= nrm
        v[0] += 1.0
        for j in range(col + 1, p):
            a[col:, j] -= (v @ a[col:, j]) / v[0] * v
        b[col:] -= np.outer(v, (v @ b[col:]) / v[0])
    return b


def scale(x: np.ndarray, center, scale_) -> np.ndarray:
    """``scale(x, center, scale)`` for a vector: R's n - 1, missing values ignored."""
    ok = ~np.isnan(x)
    if center is True:
        x = x - x[ok].mean()
    elif center is not False:
        x = x - float(center)
    if scale_ is True:
        m = int(ok.sum())
        x = x / math.sqrt(float(np.sum(x[ok] ** 2)) / max(m - 1, 1))
    elif scale_ is not False:
        x = x / float(scale_)
    return x[:, None]


CONTRASTS = ("contr.treatment", "contr.sum", "contr.helmert", "contr.poly", "contr.SAS")


def contrast_matrix(name: str, levels: list[str]) -> tuple[np.ndarray, list[str] | None]:
    """R's ``contr.*`` on these levels: the matrix and its column names (None: numbered)."""
    return contrast_function(name, levels)


def contrast_function(
    name: str, levels: list[str], base: int = 1, contrasts: bool = True, scores=None
) -> tuple[np.ndarray, list[str] | None]:
    """R's ``contr.<name>(levels, base =, contrasts =, scores =)``: the matrix and its column names.

    ``levels`` are the level labels (``contr.sum(3)`` is called with ``["1", "2", "3"]``).
    Column names as R gives them: the levels left in for treatment and SAS, ``.L .Q .C ^4``
    for poly, none (``None``: R numbers them) for sum and helmert.

    Examples
    --------
    >>> m, names = contrast_function("contr.treatment", ["1", "2", "3"], base=2)
    >>> m.tolist(), names
    ([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], ['1', '3'])
    """
    k = len(levels)
    eye = np.eye(k)
    if name == "contr.SAS":
        name, base = "contr.treatment", k
    if not contrasts and name != "contr.poly":
        return eye, list(levels)
    if k < 2:
        raise DataError(f"{name}() needs at least 2 levels (as in R).")
    if name == "contr.treatment":
        if not 1 <= base <= k:
            raise DataError(
                f"contr.treatment(): base = {base} must be between 1 and the number of levels, {k}."
            )
        keep = [j for j in range(k) if j != base - 1]
        return eye[:, keep], [levels[j] for j in keep]
    if name == "contr.sum":
        return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))]), None
    if name == "contr.helmert":
        m = np.zeros((k, k - 1))
        for j in range(k - 1):
            m[: j + 1, j], m[j + 1, j] = -1.0, j + 1.0
        return m, None
    x = np.arange(1, k + 1, dtype=float) if scores is None else np.asarray(scores, float)
    if len(x) != k:
        raise DataError("contr.poly(): scores = must give one number per level.")
    if np.unique(x).size < k:
        raise DataError("contr.poly(): scores = must be distinct.")
    q, r = np.linalg.qr(np.vander(x - x.mean(), k, increasing=True))
    z = q * np.sign(np.diag(r))
    if not contrasts:
        z[:, 0] = 1.0
        return z, [f"^{j}" for j in range(k)]
    suffix = [".L", ".Q", ".C"] + [f"^{j}" for j in range(4, k)]
    return z[:, 1:], suffix[: k - 1]
