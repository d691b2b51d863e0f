"""Fixed-X knockoffs from sufficient statistics (Barber & Candès 2015; Pournaderi & Xiang).

Everything the fixed-X knockoff filter with an OLS statistic needs is a function of
n, XᵀX, Xᵀy and yᵀy:

* columns are normalised to unit l2 norm, X′ = X D⁻¹, Σ′ = X′ᵀX′;
* knockoffs X̃ = X′(I − Σ′⁻¹S) + ŨC with CᵀC = 2S − SΣ′⁻¹S and Ũ (n × p)
  orthonormal, orthogonal to X′;
* with Ũ Haar-distributed in the orthogonal complement of X′ and independent of y,
  Ũᵀy = Ũᵀr (r the OLS residual) has the law of ‖r‖ times the first p coordinates
  of a uniform unit vector of R^{n−p}: ``‖r‖·z/√(‖z‖² + χ²_{n−2p})`` with
  z ~ N(0, I_p).  :func:`knockoff_cross_products` samples it in O(p), so a fit never
  forms an n × n (or even n × p) matrix.  :func:`materialise_knockoffs` builds X̃
  itself (QR route) for users who want the matrix; both give the same law, and the
  same numbers when handed the same Ũᵀy.

The augmented Gram matrix is G = [[Σ′, Σ′ − S], [Σ′ − S, Σ′]].  The OLS
coefficients of y on [X′ X̃′] are b = G⁻¹[X′ X̃′]ᵀy; the feature statistics W are
antisymmetric functions of b (swapping column j with its knockoff swaps b_j and
b_{j+p}, flipping the sign of W_j).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..._kernels import one_blas_thread
from ...errors import AssumptionError

# --------------------------------------------------------------------- sufficient statistics


@dataclass
class Normalised:
    """Sufficient statistics after column normalisation (the paper's X′).

    Attributes
    ----------
    n, p : int
        Rows (after any augmentation to 2p rows) and columns.
    sigma : ndarray (p, p)
        Σ′ = X′ᵀX′ (unit diagonal).
    xty : ndarray (p,)
        X′ᵀy.
    rss : float
        ‖r‖², the residual sum of squares of y on X.
    col_norms : ndarray (p,)
        Column norms c_j of the (clipped) raw design: X′ = X diag(c)⁻¹ (a zero column stays zero).
    names : list of str, optional
        Column names, for messages.
    """

    n: int
    p: int
    sigma: np.ndarray
    xty: np.ndarray
    rss: float
    col_norms: np.ndarray
    names: list[str] | None = None

    @property
    def eigenvalues(self) -> np.ndarray:
        if not hasattr(self, "_eig"):
            self._eig = np.linalg.eigvalsh(self.sigma)
        return self._eig

    @property
    def lambda_min(self) -> float:
        return float(self.eigenvalues[0])

    @property
    def lambda_max(self) -> float:
        return float(self.eigenvalues[-1])

    @property
    def ols(self) -> np.ndarray:
        """OLS coefficients of y on X′ (normalised scale), Σ′⁻¹X′ᵀy (least squares when Σ′ is singular)."""
        return solve(self.sigma, self.xty)


@one_blas_thread
def normalise(
    n: int,
    xtx: np.ndarray,
    xty: np.ndarray,
    yty: float | None = None,
    *,
    rss: float | None = None,
    names: list[str] | None = None,
) -> Normalised:
    """Normalise columns to unit norm and compute the residual sum of squares.

    Never refuses the data: a zero column stays zero (its diagonal in Σ′ is 1)
    and a singular Σ′ is solved by least squares.  Whether Σ′ is invertible is
    checked by :func:`check_full_rank` where λ_min(Σ′) is read from the data, or
    enforced by :func:`floor_lambda_min` where a lower bound is declared.

    Examples
    --------
    >>> X = np.array([[1., 0.], [0., 2.], [1., 1.], [2., 0.], [0., 1.]])
    >>> y = np.array([1., 2., 0., 1., 3.])
    >>> st = normalise(5, X.T @ X, X.T @ y, float(y @ y))
    >>> np.allclose(np.diag(st.sigma), 1.0)
    True
    """
    xtx = np.asarray(xtx, dtype=float)
    xty = np.asarray(xty, dtype=float)
    p = xtx.shape[0]
    names = names or [f"x{j + 1}" for j in range(p)]
    c = np.sqrt(np.clip(np.diag(xtx), 0.0, None))
    scale = np.where(c > 0, c, 1.0)
    sigma = xtx / np.outer(scale, scale)
    sigma = (sigma + sigma.T) / 2
    np.fill_diagonal(sigma, 1.0)
    xty_n = xty / scale
    if rss is None:
        rss = float(yty) - float(xty_n @ solve(sigma, xty_n))
    return Normalised(
        n=int(n), p=p, sigma=sigma, xty=xty_n, rss=max(float(rss), 0.0), col_norms=c, names=names
    )


def solve(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A⁻¹v, or the least-squares solution when A is singular (a zero or duplicated column)."""
    try:
        return np.linalg.solve(A, v)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, v, rcond=None)[0]


@one_blas_thread
def check_full_rank(st: Normalised, tol: float = 1e-10) -> None:
    """Refuse a zero column or a rank-deficient design (where λ_min(Σ′) is read from the data).

    Only for the paths that already read λ_min(Σ′) from the rows (a named
    data-dependent step, or eps = inf); the message carries no value read
    from the rows.
    """
    if (st.col_norms <= 0).any() or st.lambda_min <= tol * max(1.0, st.lambda_max):
        raise AssumptionError(
            "the design is rank deficient (a zero column, or columns that are (nearly) linearly "
            "dependent), so fixed-X knockoffs cannot be built from the data's own lambda_min(Sigma'). "
            "Drop redundant columns (e.g. a duplicated variable), screen first with dp_sis, or declare "
            "a public lower bound lambda_min= (the normalised Gram matrix is then regularised to it)."
        )


@one_blas_thread
def floor_lambda_min(st: Normalised, lambda_min: float) -> tuple[Normalised, bool]:
    """Σ′ regularised so that λ_min(Σ′) >= the declared ``lambda_min`` (unit diagonal kept).

    Σ″ = (Σ′ + cI)/(1 + c) has eigenvalues (μ + c)/(1 + c); the least c >= 0
    giving λ_min(Σ″) >= ``lambda_min`` is c = (lambda_min − λ_min)/(1 − lambda_min).
    Where the declared bound holds (c = 0) nothing changes.  Returns the
    statistics and whether they held the bound already (a non-private fact:
    shown only as a requested diagnostic).
    """
    held = st.lambda_min >= lambda_min
    if held or lambda_min >= 1:
        return st, held
    c = (lambda_min - st.lambda_min) / (1.0 - lambda_min)
    sigma = (st.sigma + c * np.eye(st.p)) / (1.0 + c)
    out = Normalised(
        n=st.n, p=st.p, sigma=sigma, xty=st.xty, rss=st.rss, col_norms=st.col_norms, names=st.names
    )
    out._eig = np.maximum((st.eigenvalues + c) / (1.0 + c), lambda_min)
    return out, held


def augment_rows(st: Normalised, gen: np.random.Generator) -> tuple[Normalised, float]:
    """Augment p < n < 2p to n = 2p rows, as R's ``create.fixed`` does.

    R's knockoff package appends 2p − n rows of zeros to X and draws the matching
    responses from N(0, σ̂²), σ̂² = RSS/(n − p).  Zero rows change neither XᵀX nor
    Xᵀy; they add σ̂²·χ²_{2p−n} to the residual sum of squares.  Returns the
    augmented statistics and σ̂² (a data-dependent quantity).
    """
    if st.n >= 2 * st.p:
        return st, math.nan
    sigma2 = st.rss / (st.n - st.p)
    extra = sigma2 * gen.chisquare(2 * st.p - st.n)
    return Normalised(
        n=2 * st.p, p=st.p, sigma=st.sigma, xty=st.xty, rss=st.rss + extra, col_norms=st.col_norms
    ), sigma2


# --------------------------------------------------------------------- knockoff construction

S_CHOICES = ("lambda_min", "equi")


def knockoff_s(lambda_min: float, kind: str = "lambda_min") -> float:
    """The (scalar) diagonal s of S.

    ``"lambda_min"``: s = λ_min(Σ′), the paper's choice (Lemma 1: then
    λ_min(G) = λ_min(Σ′) and λ_max(G) = 2λ_max(Σ′) − λ_min(Σ′)).
    ``"equi"``: s = min(2λ_min, 1) (Barber & Candès' equicorrelated knockoffs);
    G is then singular when 2λ_min <= 1, so it needs a ridge ω² > 0 with OLS.
    """
    if kind == "lambda_min":
        return float(lambda_min)
    return float(min(2.0 * lambda_min, 1.0))


def gram_lambda_min(lambda_min: float, s: float) -> float:
    """λ_min(G) for S = sI: eigenvalues of G are s and 2μ − s over eigenvalues μ of Σ′."""
    return float(min(s, 2.0 * lambda_min - s))


def psd_factor(M: np.ndarray) -> np.ndarray:
    """C with CᵀC = M for symmetric positive semi-definite M.

    The Cholesky factor (C upper triangular with positive diagonal, unique) when M
    is positive definite, as for s = λ_min; otherwise the eigen route with tiny
    negative eigenvalues clipped.
    """
    M = (M + M.T) / 2
    try:
        return np.linalg.cholesky(M).T
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(M)
        return np.sqrt(np.clip(w, 0.0, None))[:, None] * v.T


def knockoff_parts(sigma: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (I − Σ′⁻¹S, C) with CᵀC = 2S − SΣ′⁻¹S, S = sI."""
    p = sigma.shape[0]
    try:
        sinv = np.linalg.inv(sigma)
    except np.linalg.LinAlgError:  # a zero column (no refusal on the rows): the pseudo-inverse
        sinv = np.linalg.pinv(sigma)
    sinv = (sinv + sinv.T) / 2
    return np.eye(p) - s * sinv, psd_factor(2 * s * np.eye(p) - s * s * sinv)


def augmented_gram(sigma: np.ndarray, s: float) -> np.ndarray:
    """G = [[Σ′, Σ′ − S], [Σ′ − S, Σ′]], the Gram matrix of [X′ X̃′]."""
    off = sigma - s * np.eye(sigma.shape[0])
    return np.block([[sigma, off], [off, sigma]])


def haar_uty(rss: float, n: int, p: int, gen: np.random.Generator) -> np.ndarray:
    """Sample Ũᵀy in O(p): ‖r‖·z/√(‖z‖² + χ²_{n−2p}), z ~ N(0, I_p)."""
    z = gen.standard_normal(p)
    rest = gen.chisquare(n - 2 * p) if n > 2 * p else 0.0
    return math.sqrt(rss) * z / math.sqrt(float(z @ z) + rest)


def knockoff_cross_products(
    st: Normalised, s: float, gen: np.random.Generator | None = None, uty: np.ndarray | None = None
) -> np.ndarray:
    """[X′ X̃′]ᵀy from sufficient statistics (length 2p).

    X̃′ᵀy = (I − Σ′⁻¹S)ᵀX′ᵀy + CᵀŨᵀy; Ũᵀy is sampled by :func:`haar_uty` unless given.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = X[:, 0] + rng.normal(size=40)
    >>> st = normalise(40, X.T @ X, X.T @ y, float(y @ y))
    >>> knockoff_cross_products(st, st.lambda_min, rng).shape
    (6,)
    """
    a, c = knockoff_parts(st.sigma, s)
    if uty is None:
        uty = haar_uty(st.rss, st.n, st.p, gen)
    return np.concatenate([st.xty, a.T @ st.xty + c.T @ uty])


def materialise_knockoffs(
    Xn: np.ndarray, s: float, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Build X̃′ itself (QR route) and return (X̃′, Ũ); memory O(np).

    Ũ = an orthonormal basis of (I − QQᵀ)Z for Gaussian Z (Q from the QR of X′),
    with the signs of R's diagonal fixed so that Ũ is Haar-distributed.
    ``Xn`` must have unit-norm columns and n >= 2p rows.
    """
    n, p = Xn.shape
    q, _ = np.linalg.qr(Xn)
    for _ in range(5):  # redraw in the (probability-0) event that Z is nearly inside span(X′)
        z = gen.standard_normal((n, p))
        z -= q @ (q.T @ z)
        u, r = np.linalg.qr(z)
        if np.abs(np.diag(r)).min() > 1e-8 * math.sqrt(n):
            break
    u *= np.sign(np.diag(r))
    sigma = Xn.T @ Xn
    a, c = knockoff_parts(sigma, s)
    return Xn @ a + u @ c, u


# --------------------------------------------------------------------- statistics and threshold


def stat_csm(b: np.ndarray) -> np.ndarray:
    """CSM, paper eq. (7): W_j = sign(|b_j| − |b_{j+p}|)·max(|b_j|, |b_{j+p}|)."""
    p = b.shape[-1] // 2
    x, k = np.abs(b[..., :p]), np.abs(b[..., p:])
    return np.sign(x - k) * np.maximum(x, k)


def stat_lcd(b: np.ndarray) -> np.ndarray:
    """LCD, paper eq. (6): W_j = |b_j| − |b_{j+p}|."""
    p = b.shape[-1] // 2
    return np.abs(b[..., :p]) - np.abs(b[..., p:])


STATISTICS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"csm": stat_csm, "lcd": stat_lcd}


def knockoff_threshold(W: np.ndarray, fdr: float, offset: int = 1) -> float:
    """Knockoff(+) threshold T = min{t > 0 : (offset + #{W_j ≤ −t}) / max(1, #{W_j ≥ t}) ≤ q}.

    t ranges over the nonzero |W_j|; ``math.inf`` when no t qualifies (empty
    selection).  ``offset=1`` is knockoff+ (FDR control), ``offset=0`` the
    knockoff filter (modified FDR).

    Examples
    --------
    >>> knockoff_threshold(np.array([5., 4., 3., 2., -1.]), fdr=0.4)
    2.0
    """
    W = np.asarray(W, dtype=float)
    ts = np.unique(np.abs(W[W != 0]))
    if ts.size == 0:
        return math.inf
    neg = np.sort(-W[W < 0])  # magnitudes of negative W
    pos = np.sort(W[W > 0])
    n_neg = neg.size - np.searchsorted(neg, ts, side="left")  # #{W <= -t}
    n_pos = pos.size - np.searchsorted(pos, ts, side="left")  # #{W >= t}
    ok = (offset + n_neg) / np.maximum(1, n_pos) <= fdr
    return float(ts[np.argmax(ok)]) if ok.any() else math.inf


def select(W: np.ndarray, threshold: float) -> np.ndarray:
    """Indices with W_j ≥ T (W_j = 0 is never selected)."""
    if math.isinf(threshold):
        return np.array([], dtype=int)
    return np.flatnonzero((W >= threshold) & (W > 0))


def empty_selection_reason(p: int, fdr: float, offset: int, *, private: bool = True) -> str:
    """Why knockoff+ can select nothing: it needs at least (offset)/q positive W's (``private``: a run
    with finite eps, which more budget helps)."""
    need = math.ceil(offset / fdr) if offset else 1
    more = "add budget (larger eps or n)" if private else "use more rows (larger n)"
    return (
        f"the threshold is infinite, so nothing is selected: knockoff{'+' if offset else ''} "
        f"at target FDR q = {fdr:g} needs at least {need} statistics W_j > 0 above every "
        f"negative one before it can select anything (p = {p}). Raise fdr, {more}, or use offset=0 "
        "(controls a modified FDR)."
    )
