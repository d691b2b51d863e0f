"""The GLM solver of one block: families, penalties, IRLS with step-halving, standard-error pieces.

Half the unit deviance per family (:data:`FAMILIES`), ridge and lasso penalties
(:class:`Penalty`), :func:`fit_block` (one party's block with the others' linear
predictors as an offset) and the pieces of the history standard errors
(:class:`SpanBasis`, :func:`orthonormal`, :func:`block_covariance`).  The derivations
are in the package docstring (:mod:`dpstats.methods.privreg`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import AssumptionError

_W_MIN = 1e-12


# --------------------------------------------------------------------------- families
@dataclass(frozen=True)
class Family:
    """A GLM family with its canonical link (so the IRLS weight is the variance)."""

    name: str
    linkinv: Callable[[np.ndarray], np.ndarray]
    variance: Callable[[np.ndarray], np.ndarray]
    unit_deviance: Callable[[np.ndarray, np.ndarray], np.ndarray]
    fixed_dispersion: bool
    link: str

    def deviance(self, y: np.ndarray, eta: np.ndarray) -> float:
        return float(np.sum(self.unit_deviance(y, self.linkinv(eta))))


def _xlogy_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0) / b), 0.0)
    return out


def _expit(eta: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * eta))


FAMILIES: dict[str, Family] = {
    "gaussian": Family(
        "gaussian", lambda e: e, lambda m: np.ones_like(m), lambda y, m: (y - m) ** 2, False, "identity"
    ),
    "binomial": Family(
        "binomial",
        _expit,
        lambda m: m * (1.0 - m),
        lambda y, m: 2.0 * (_xlogy_ratio(y, m) + _xlogy_ratio(1.0 - y, 1.0 - m)),
        True,
        "logit",
    ),
    "poisson": Family(
        "poisson",
        lambda e: np.exp(np.minimum(e, 700.0)),
        lambda m: m,
        lambda y, m: 2.0 * (_xlogy_ratio(y, m) - (y - m)),
        True,
        "log",
    ),
}


# --------------------------------------------------------------------------- penalties
@dataclass(frozen=True)
class Penalty:
    """``kind`` in {None, "ridge", "lasso"}; ``lam`` ≥ 0; ``mask`` marks penalized columns."""

    kind: str | None = None
    lam: float = 0.0

    def value(self, beta: np.ndarray, mask: np.ndarray) -> float:
        if self.kind == "ridge":
            return 0.5 * self.lam * float(np.sum((beta * mask) ** 2))
        if self.kind == "lasso":
            return self.lam * float(np.sum(np.abs(beta * mask)))
        return 0.0


def _soft(z: float, t: float) -> float:
    return math.copysign(max(abs(z) - t, 0.0), z)


def lasso_quadratic(
    G: np.ndarray,
    c: np.ndarray,
    lam_vec: np.ndarray,
    beta: np.ndarray,
    tol: float = 1e-14,
    max_sweeps: int = 10_000,
) -> np.ndarray:
    """Minimize ½βᵀGβ − cᵀβ + Σ_j lam_j|β_j| by cyclic soft-thresholding.

    Examples
    --------
    >>> lasso_quadratic(np.eye(2), np.array([2.0, 0.5]), np.array([1.0, 1.0]), np.zeros(2))
    array([1., 0.])
    """
    beta = beta.astype(float).copy()
    diag = np.diag(G)
    for _ in range(max_sweeps):
        change = 0.0
        for j in range(len(beta)):
            if diag[j] <= 0:
                continue
            partial = c[j] - G[j] @ beta + diag[j] * beta[j]
            new = _soft(partial, lam_vec[j]) / diag[j]
            change += abs(new - beta[j])
            beta[j] = new
        if change < tol * (1.0 + np.sum(np.abs(beta))):
            break
    return beta


# --------------------------------------------------------------------------- one block
@dataclass(frozen=True)
class BlockProblem:
    """One party's block objective, (1/2n)·deviance(y, Xβ + offset) + penalty(β): its columns ``X``,
    the response ``y``, the family, the penalty and the penalized columns (``mask``); ``chol`` the
    cached factor of the Gaussian solve (:func:`gaussian_cholesky`)."""

    X: np.ndarray
    y: np.ndarray
    family: Family
    penalty: Penalty
    mask: np.ndarray
    chol: tuple | None = None

    def objective(self, offset: np.ndarray, beta: np.ndarray) -> float:
        dev = self.family.deviance(self.y, self.X @ beta + offset)
        return dev / (2.0 * self.X.shape[0]) + self.penalty.value(beta, self.mask)


def fit_block(
    block: BlockProblem,
    offset: np.ndarray,
    beta0: np.ndarray,
    *,
    inner_tol: float = 1e-12,
    max_inner: int = 100,
) -> np.ndarray:
    """argmin over one block of the penalized GLM objective with a fixed offset.

    (1/2n)·deviance(y, Xβ + offset) + penalty(β).  Gaussian without lasso is
    one solve; otherwise IRLS (Newton on the block) with step-halving.

    Examples
    --------
    >>> X = np.column_stack([np.ones(4), [0., 1, 2, 3]])
    >>> block = BlockProblem(X, np.array([1., 3, 5, 7]), FAMILIES["gaussian"], Penalty(), np.array([0., 1]))
    >>> fit_block(block, np.zeros(4), np.zeros(2)).round(8)
    array([1., 2.])
    """
    X, y, family, penalty, mask = block.X, block.y, block.family, block.penalty, block.mask
    n = X.shape[0]
    if family.name == "gaussian" and penalty.kind != "lasso":
        rhs = X.T @ (y - offset)
        if block.chol is not None:
            from scipy.linalg import cho_solve

            return cho_solve(block.chol, rhs)
        return np.linalg.solve(_gram(X, np.ones(n), penalty, mask), rhs)
    beta = beta0.copy()
    obj = block.objective(offset, beta)
    for _ in range(max_inner):
        eta = X @ beta + offset
        mu = family.linkinv(eta)
        w = np.maximum(family.variance(mu), _W_MIN)
        z = X @ beta + (y - mu) / w
        if penalty.kind == "lasso":
            G = (X.T * w) @ X / n
            c = X.T @ (w * z) / n
            new = lasso_quadratic(G, c, penalty.lam * mask, beta)
        else:
            new = np.linalg.solve(_gram(X, w, penalty, mask), X.T @ (w * z))
        new, obj_new = _halve(block, offset, beta, new, obj)
        step = float(np.sum(np.abs(new - beta)))
        beta, obj = new, obj_new
        if step < inner_tol * (1.0 + float(np.sum(np.abs(beta)))):
            break
    return beta


def _gram(X: np.ndarray, w: np.ndarray, penalty: Penalty, mask: np.ndarray) -> np.ndarray:
    G = (X.T * w) @ X
    if penalty.kind == "ridge":
        G = G + X.shape[0] * penalty.lam * np.diag(mask)
    return G


def gaussian_cholesky(X: np.ndarray, penalty: Penalty, mask: np.ndarray):
    """Cached Cholesky factor of XᵀX (+ nλ·mask) for the Gaussian block solve."""
    from scipy.linalg import LinAlgError, cho_factor

    try:
        return cho_factor(_gram(X, np.ones(X.shape[0]), penalty, mask))
    except LinAlgError:
        raise AssumptionError(
            "a party's design block is rank deficient (collinear columns): XᵀX is singular. "
            "Remove the redundant column(s) or use penalty='ridge'."
        ) from None


def _halve(block: BlockProblem, offset: np.ndarray, beta: np.ndarray, new: np.ndarray, obj: float):
    """Step-halving: the first of new, (new + β)/2, ... that does not raise the objective (else β)."""
    obj_new = block.objective(offset, new)
    for _ in range(30):
        if math.isfinite(obj_new) and obj_new <= obj + 1e-12 * (1.0 + abs(obj)):
            return new, obj_new
        new = 0.5 * (new + beta)
        obj_new = block.objective(offset, new)
    return beta, obj


# --------------------------------------------------------------------------- SE history
class SpanBasis:
    """Incremental orthonormal basis of the span of received offset vectors.

    Gram–Schmidt with re-orthogonalization; a vector joins when its residual
    exceeds ``rel_tol`` times its norm; at most ``cap`` (= p_{-k}) vectors.
    """

    def __init__(self, n: int, cap: int, rel_tol: float = 1e-9) -> None:
        self.cap = cap
        self.rel_tol = rel_tol
        self.U = np.empty((n, 0))

    @property
    def rank(self) -> int:
        return self.U.shape[1]

    def add(self, v: np.ndarray) -> None:
        norm = float(np.linalg.norm(v))
        if self.rank >= self.cap or norm == 0.0:
            return
        r = v - self.U @ (self.U.T @ v)
        r = r - self.U @ (self.U.T @ r)
        rn = float(np.linalg.norm(r))
        if rn > self.rel_tol * norm:
            self.U = np.column_stack([self.U, r / rn])


def orthonormal(B: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column span of B (rank-revealing by the QR diagonal)."""
    if B.shape[1] == 0:
        return B
    q, r = np.linalg.qr(B)
    d = np.abs(np.diag(r))
    return q[:, d > 1e-10 * max(1.0, float(d.max()))]


def block_covariance(X: np.ndarray, w: np.ndarray, U: np.ndarray | None, dispersion: float) -> np.ndarray:
    """φ·[(Z W Z)⁻¹]_kk with Z = [X_k, U]: the inverse Schur complement.

    Examples
    --------
    >>> X = np.column_stack([np.ones(5), np.arange(5.)])
    >>> block_covariance(X, np.ones(5), None, 1.0).shape
    (2, 2)
    """
    A = (X.T * w) @ X
    if U is not None and U.shape[1]:
        B = (X.T * w) @ U
        C = (U.T * w) @ U
        A = A - B @ np.linalg.solve(C, B.T)
    return dispersion * np.linalg.inv(A)
