"""R's bases, computed as R computes them: ``poly``, ``splines::ns``/``bs``,
``scale`` and the base contrasts (``contr.treatment``, ``contr.sum``,
``contr.helmert``, ``contr.poly``, ``contr.SAS``)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DataError


def poly(x: np.ndarray, degree: int, raw: bool) -> np.ndarray:
    """``poly(x, degree, raw)``: raw powers, or R's orthonormal polynomials (QR of centred powers)."""
    return poly_fit(x, degree, raw)[0]


def poly_fit(x: np.ndarray, degree: int, raw: bool) -> tuple[np.ndarray, tuple | None]:
    """``poly(x, degree, raw)`` and, for orthogonal polynomials, R's ``attr(, "coefs")``: ``alpha`` and
    ``norm2`` of the three-term recurrence that gives the same basis at any other x (:func:`poly_at`).

    With ``Z = Q diag(R)`` the unnormalised columns of the QR of the centred powers (R's
    ``qr.qy(QR, diag(diag(R)))``, which no sign convention changes), ``norm2_j = ||Z_j||^2`` and
    ``alpha_j = <x - xbar, Z_j^2> / norm2_j + xbar``, as ``stats::poly`` computes them.
    """
    if np.isnan(x).any():
        raise DataError("poly() does not allow missing values (nor does R); remove those rows first.")
    if raw:
        return np.column_stack([x**j for j in range(1, degree + 1)]), None
    if degree >= np.unique(x).size:
        raise DataError(f"poly(): degree {degree} must be less than the number of unique points.")
    xbar = x.mean()
    xc = x - xbar
    q, r = np.linalg.qr(np.vander(xc, degree + 1, increasing=True))
    d = np.diag(r)
    norm2 = d**2
    alpha = ((xc @ (q * d) ** 2) / norm2 + xbar)[:degree]
    return (q * np.sign(d))[:, 1:], (tuple(alpha.tolist()), (1.0, *norm2.tolist()))


def poly_at(x: np.ndarray, coefs: tuple) -> np.ndarray:
    """The training data's orthonormal polynomials at ``x``, from their ``coefs`` (:func:`poly_fit`):
    R's ``poly(x, degree, coefs = list(alpha, norm2))``, the call ``predict()`` makes (makepredictcall).

    ``Z_0 = 1``, ``Z_1 = x - alpha_0``, ``Z_{j+1} = (x - alpha_j) Z_j - (norm2_{j+1} / norm2_j) Z_{j-1}``,
    each ``Z_j`` divided by ``sqrt(norm2_{j+1})`` (``norm2`` starts with R's leading 1).
    """
    alpha, norm2 = (np.asarray(c, float) for c in coefs)
    degree = alpha.size
    z = np.ones((x.size, degree + 1))
    z[:, 1] = x - alpha[0]
    for j in range(1, degree):
        z[:, j + 1] = (x - alpha[j]) * z[:, j] - (norm2[j + 1] / norm2[j]) * z[:, j - 1]
    return (z / np.sqrt(norm2[1:]))[:, 1:]


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


def spline_knots(kind: str, x, df, knots, degree: int, intercept: bool, boundary) -> tuple[tuple, tuple]:
    """The knots and boundary knots ``splines::ns`` (``kind="ns"``) or ``bs`` places from the rows of ``x``
    (missing values left out): inner knots at quantiles for ``df``, boundary knots at the range; what
    R's ``predict()`` evaluates newdata with (makepredictcall keeps ``knots`` and ``Boundary.knots``)."""
    x = np.asarray(x, float)
    x = x[~np.isnan(x)]
    if boundary is None:
        boundary = np.array([x.min(), x.max()]) if len(x) else np.array([0.0, 1.0])
        inside = x
    else:
        boundary = np.sort(np.asarray(boundary, float))
        inside = x[(x >= boundary[0]) & (x <= boundary[1])]
    if df is not None and knots is None:
        extra = degree + 1 - (1 - int(intercept)) if kind == "bs" else 1 + int(intercept)
        knots = _quantile_knots(inside, max(int(df) - extra, 0))
    knots = np.empty(0) if knots is None else np.asarray(knots, float)
    return tuple(np.atleast_1d(knots).tolist()), tuple(boundary.tolist())


def _bs(x, df, knots, degree, intercept, boundary):
    ord_ = degree + 1
    knots, boundary = (
        np.asarray(v, float) for v in spline_knots("bs", x, df, knots, degree, intercept, boundary)
    )
    outside = (x < boundary[0]) | (x > boundary[1])
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
    knots, boundary = (np.asarray(v, float) for v in spline_knots("ns", x, df, knots, 3, intercept, boundary))
    outside = (x < boundary[0]) | (x > boundary[1])
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


def basis_range(kind: str, knots, boundary, degree: int, intercept: bool, column: int, lo: float, hi: float):
    """The range of column ``column`` (from 0) of ``ns``/``bs`` with public knots over x in [lo, hi].

    Between consecutive knots (the boundary knots included, and beyond them) a column is a polynomial of
    degree at most ``degree`` (``ns``: cubic inside, linear outside), so its extremes over [lo, hi] lie at
    the pieces' ends or where its derivative vanishes: each piece's polynomial is interpolated at
    ``degree + 1`` Chebyshev nodes, the real roots of its derivative (and a grid, against a root lost to
    rounding) evaluated with the basis itself.  Reads public inputs only.

    Examples
    --------
    >>> basis_range("bs", [3.0], [1.0, 6.0], 3, False, 3, 1.0, 6.0)  # the last B-spline: 0 to 1 at x = 6
    (0.0, 1.0)
    """
    knots = np.atleast_1d(np.asarray([] if knots is None else knots, float))

    def column_at(x: np.ndarray) -> np.ndarray:
        x = np.atleast_1d(np.asarray(x, float))
        basis = (
            ns(x, None, knots, intercept, boundary)
            if kind == "ns"
            else bs(x, None, knots, degree, intercept, boundary)
        )
        return basis[:, column]

    breaks = np.unique(np.clip(np.concatenate([[lo, hi], knots, np.asarray(boundary, float)]), lo, hi))
    d = degree if kind == "bs" else 3
    nodes = (1 - np.cos(np.pi * (np.arange(d + 1) + 0.5) / (d + 1))) / 2
    points = [breaks]
    for a, b in zip(breaks[:-1], breaks[1:]):
        coef = np.polynomial.polynomial.polyfit(nodes, column_at(a + (b - a) * nodes), d)
        roots = np.polynomial.polynomial.polyroots(np.polynomial.polynomial.polyder(coef)) if d > 1 else []
        t = np.real(np.asarray(roots))[np.abs(np.imag(np.asarray(roots))) < 1e-6] if len(roots) else []
        t = np.concatenate([np.asarray(t, float), np.linspace(0, 1, 65)])
        points.append(a + (b - a) * t[(t >= 0) & (t <= 1)])
    values = column_at(np.concatenate(points))
    return float(values.min()), float(values.max())


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
    return scale_at(x, scale_parameters(x, center, scale_))


def scale_parameters(x: np.ndarray, center, scale_) -> tuple:
    """The centre and scale ``scale(x, center, scale)`` uses (R's ``attr(, "scaled:center")`` and
    ``"scaled:scale"``; False for none): the mean and the root mean square about it (n - 1) where
    ``center`` or ``scale`` is TRUE, the given numbers otherwise."""
    ok = ~np.isnan(x)
    c = x[ok].mean() if center is True else center if center is False else float(center)
    if scale_ is True:
        xc = x if c is False else x - c
        s = math.sqrt(float(np.sum(xc[ok] ** 2)) / max(int(ok.sum()) - 1, 1))
    else:
        s = scale_ if scale_ is False else float(scale_)
    return c, s


def scale_at(x: np.ndarray, parameters: tuple) -> np.ndarray:
    """``scale(x, center = c, scale = s)`` with the centre and scale given (:func:`scale_parameters`)."""
    c, s = parameters
    if c is not False:
        x = x - c
    if s is not False:
        x = x / s
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
