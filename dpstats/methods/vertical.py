"""Block coordinate descent for GLMs on vertically partitioned data (privreg).

van Kesteren, "Private Regression using Block Coordinate Descent" (R package
privreg): K parties hold the column blocks X_1, ..., X_K of the same n rows.
Party k repeatedly fits its own block with the other parties' current linear
predictors as an offset,

    β_k ← argmin_β  (1/n) Σ_i ℓ(y_i, x_ikᵀβ + o_ik) + λ·P(β),   o_k = Σ_{j≠k} X_j β_j,

and shares only its linear predictor η_k = X_k β_k.  Sweeps repeat until
Σ|Δβ| < tol over one sweep (privreg's rule).  ℓ is half the unit deviance, so
the objective is glmnet's: (1/2n)·RSS for the Gaussian family and −(1/n)·loglik
for the binomial and Poisson families.  Each block is solved by IRLS (Newton
with step-halving), with ridge ((λ/2)‖β‖²) or lasso (λ‖β‖₁, soft-thresholding
coordinate updates) penalties; the intercept is never penalized except in
DP mode (strong convexity).  Block minimization of a smooth convex loss plus a
block-separable penalty converges to the joint minimizer (Tseng 2001), so the
unpenalized fit equals the pooled GLM maximum-likelihood fit.

Standard errors (``se="history"``, the protocol's method, after privreg):
party k's block of the inverse Fisher information is the inverse of the Schur
complement X_kᵀW^{1/2}(I − P_{-k})W^{1/2}X_k, where P_{-k} projects onto
W^{1/2}·col(X_{-k}).  Party k never sees X_{-k}, but every offset it received
lies in col(X_{-k}); an orthonormal basis U of the span of the received
offsets replaces X_{-k}.  The result is exact when that span has the full
dimension p_{-k} (reported per block as ``exact``), and otherwise misses only
directions the iterations never excited; the rank is at most the number of
sweeps, so a fit that converges in fewer sweeps than p_{-k} is not exact.
``se="exact"`` (default): after convergence every party shares an orthonormal
basis Q_j of its column space col(X_j) (X_j = Q_j R_j, R_j kept secret), so
U spans col(X_{-k}) exactly and the standard errors equal the pooled ones.
This discloses the column spaces — what the history approaches anyway — and
says so.  ``se="conditional"`` uses (X_kᵀWX_k)⁻¹ (the other blocks held
fixed; too small when blocks correlate).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import AssumptionError

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
    "gaussian": Family("gaussian", lambda e: e, lambda m: np.ones_like(m),
                       lambda y, m: (y - m) ** 2, False, "identity"),
    "binomial": Family("binomial", _expit, lambda m: m * (1.0 - m),
                       lambda y, m: 2.0 * (_xlogy_ratio(y, m) + _xlogy_ratio(1.0 - y, 1.0 - m)),
                       True, "logit"),
    "poisson": Family("poisson", lambda e: np.exp(np.minimum(e, 700.0)), lambda m: m,
                      lambda y, m: 2.0 * (_xlogy_ratio(y, m) - (y - m)), True, "log"),
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


def lasso_quadratic(G: np.ndarray, c: np.ndarray, lam_vec: np.ndarray, beta: np.ndarray,
                    tol: float = 1e-14, max_sweeps: int = 10_000) -> np.ndarray:
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
def fit_block(X: np.ndarray, y: np.ndarray, offset: np.ndarray, beta0: np.ndarray, family: Family,
              penalty: Penalty, mask: np.ndarray, *, inner_tol: float = 1e-12,
              max_inner: int = 100, chol: tuple | None = None) -> np.ndarray:
    """argmin over one block of the penalized GLM objective with a fixed offset.

    (1/2n)·deviance(y, Xβ + offset) + penalty(β).  Gaussian without lasso is
    one solve; otherwise IRLS (Newton on the block) with step-halving.

    Examples
    --------
    >>> X = np.column_stack([np.ones(4), [0., 1, 2, 3]])
    >>> fit_block(X, np.array([1., 3, 5, 7]), np.zeros(4), np.zeros(2),
    ...           FAMILIES["gaussian"], Penalty(), np.array([0., 1])).round(8)
    array([1., 2.])
    """
    n = X.shape[0]
    if family.name == "gaussian" and penalty.kind != "lasso":
        rhs = X.T @ (y - offset)
        if chol is not None:
            from scipy.linalg import cho_solve

            return cho_solve(chol, rhs)
        return np.linalg.solve(_gram(X, np.ones(n), penalty, mask), rhs)
    beta = beta0.copy()
    obj = _objective(X, y, offset, beta, family, penalty, mask)
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
        new, obj_new = _halve(X, y, offset, beta, new, obj, family, penalty, mask)
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
            "Remove the redundant column(s) or use penalty='ridge'.") from None


def _objective(X, y, offset, beta, family, penalty, mask) -> float:
    dev = family.deviance(y, X @ beta + offset)
    return dev / (2.0 * X.shape[0]) + penalty.value(beta, mask)


def _halve(X, y, offset, beta, new, obj, family, penalty, mask):
    obj_new = _objective(X, y, offset, new, family, penalty, mask)
    for _ in range(30):
        if math.isfinite(obj_new) and obj_new <= obj + 1e-12 * (1.0 + abs(obj)):
            return new, obj_new
        new = 0.5 * (new + beta)
        obj_new = _objective(X, y, offset, new, family, penalty, mask)
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


# --------------------------------------------------------------------------- local block
@dataclass
class BlockFinal:
    """What a party releases at the end: its coefficients and their covariance."""

    beta: np.ndarray
    cov: np.ndarray | None
    rank: int
    p_other: int

    @property
    def exact(self) -> bool:
        return self.cov is not None and self.rank >= self.p_other


@dataclass
class LocalBlock:
    """One party's block: its columns, the shared y, and the update rule.

    ``sigma_eta`` > 0 adds N(0, σ²) noise to every released linear predictor
    after clipping it to [−eta_clip, eta_clip] (DP mode).  ``offset_clip``
    (Gaussian DP mode) clips the received offset to [−offset_clip, offset_clip]
    before the block fit (post-processing of released values).
    """

    X: np.ndarray
    y: np.ndarray
    family: Family
    penalty: Penalty
    mask: np.ndarray
    p_other: int
    se: str = "history"
    sigma_eta: float = 0.0
    eta_clip: float = math.inf
    noise: object = None
    offset_clip: float = math.inf
    beta: np.ndarray = field(init=False)
    basis: SpanBasis | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.beta = np.zeros(self.X.shape[1])
        self._chol = None
        if self.family.name == "gaussian" and self.penalty.kind != "lasso":
            self._chol = gaussian_cholesky(self.X, self.penalty, self.mask)
        if self.se == "history":
            self.basis = SpanBasis(self.X.shape[0], self.p_other)

    def update(self, offset: np.ndarray) -> tuple[np.ndarray, float]:
        """Fit the block given the others' linear predictor; return (shared η_k, Σ|Δβ_k|)."""
        if self.basis is not None:
            self.basis.add(offset)
        if math.isfinite(self.offset_clip):  # Gaussian DP mode: bounded offsets bound the residuals
            offset = np.clip(offset, -self.offset_clip, self.offset_clip)
        new = fit_block(self.X, self.y, offset, self.beta, self.family, self.penalty, self.mask,
                        chol=self._chol)
        change = float(np.sum(np.abs(new - self.beta)))
        self.beta = new
        eta = self.X @ new
        if self.sigma_eta > 0:
            # DP mode: the change is not shared (the stopping rule is a fixed number of sweeps)
            return self.noise.gaussian(np.clip(eta, -self.eta_clip, self.eta_clip), self.sigma_eta), None
        return eta, change

    def column_basis(self) -> np.ndarray:
        """Orthonormal basis Q_k of col(X_k) (X_k = Q_k R_k; R_k is not shared)."""
        q, r = np.linalg.qr(self.X)
        keep = np.abs(np.diag(r)) > 1e-10 * max(1.0, float(np.max(np.abs(np.diag(r)))))
        return q[:, keep]

    def finish(self, eta_total: np.ndarray, dispersion: float, sigma_beta: float = 0.0,
               other_basis: np.ndarray | None = None) -> BlockFinal:
        """Release β_k (noised in DP mode) and its covariance (not in DP mode).

        ``other_basis`` (se="exact"): the other parties' column-space bases, side by side.
        """
        if sigma_beta > 0:
            return BlockFinal(self.noise.gaussian(self.beta, sigma_beta), None, 0, self.p_other)
        if self.penalty.kind is not None or self.se == "none":
            return BlockFinal(self.beta.copy(), None, 0, self.p_other)
        mu = self.family.linkinv(eta_total)
        w = np.maximum(self.family.variance(mu), _W_MIN)
        U = self.basis.U if self.basis is not None else None
        rank = self.basis.rank if self.basis is not None else 0
        if self.se == "exact":
            if other_basis is None:
                raise ValueError("se='exact' needs the other parties' column bases")
            U = orthonormal(other_basis)
            rank = U.shape[1]
        try:
            cov = block_covariance(self.X, w, U, dispersion)
        except np.linalg.LinAlgError:
            cov = None
        return BlockFinal(self.beta.copy(), cov, rank, self.p_other)


# --------------------------------------------------------------------------- the sweep loop
@dataclass
class BCDOutcome:
    etas: list[np.ndarray]
    iterations: int
    converged: bool
    trace: list[dict]

    @property
    def eta(self) -> np.ndarray:
        return np.sum(self.etas, axis=0)


def block_coordinate_descent(blocks: Sequence, y: np.ndarray, family: Family, *, tol: float = 1e-8,
                             max_iter: int = 10_000, fixed_rounds: bool = False,
                             check_separation: bool = True, progress: bool = False,
                             on_round: Callable[[dict], None] | None = None) -> BCDOutcome:
    """Sweep over the blocks until Σ|Δβ| < tol (or exactly ``max_iter`` sweeps if ``fixed_rounds``).

    ``blocks`` are objects with ``update(offset) -> (eta_k, change_k)``: local
    blocks or network proxies of remote parties.  Only their linear predictors
    (and the scalar Σ|Δβ_k|) reach this loop.
    """
    n = y.shape[0]
    etas = [np.zeros(n) for _ in blocks]
    state = {"total": np.zeros(n)}

    def sweep() -> tuple[float, float]:
        total, change = state["total"], 0.0
        for k, block in enumerate(blocks):
            offset = total - etas[k]
            eta_k, ch = block.update(offset)
            total = offset + eta_k
            etas[k] = eta_k
            change += ch if ch is not None else math.nan
        state["total"] = np.sum(etas, axis=0)
        return change, family.deviance(y, state["total"])

    def after(row: dict) -> None:
        if on_round is not None:
            on_round(row)
        if check_separation:
            check_no_separation(family, state["total"])

    it, converged, trace = run_sweeps(sweep, tol=tol, max_iter=max_iter, fixed_rounds=fixed_rounds,
                                      progress=progress, after=after)
    return BCDOutcome(etas=etas, iterations=it, converged=converged or fixed_rounds, trace=trace)


def run_sweeps(sweep: Callable[[], tuple[float, float]], *, tol: float, max_iter: int,
               fixed_rounds: bool = False, progress: bool = False,
               after: Callable[[dict], None] | None = None) -> tuple[int, bool, list[dict]]:
    """Repeat ``sweep() -> (Σ|Δβ|, deviance)`` until Σ|Δβ| < ``tol`` (or ``max_iter`` sweeps).

    With ``fixed_rounds`` exactly ``max_iter`` sweeps run.  Each sweep's trace row
    goes to ``after`` (which may raise to stop the fit).  Returns (sweeps run,
    converged, trace).
    """
    trace: list[dict] = []
    bar = _bar(max_iter, progress)
    it, converged = 0, False
    try:
        for it in range(1, max_iter + 1):
            change, deviance = sweep()
            row = {"iteration": it, "sum_abs_change": change, "deviance": deviance}
            trace.append(row)
            if after is not None:
                after(row)
            if bar is not None:
                bar.update(1)
            if not fixed_rounds and change < tol:
                converged = True
                break
    finally:
        if bar is not None:
            bar.close()
    return it, converged, trace


def gaussian_bcd_statistics(xtx: np.ndarray, xty: np.ndarray, yty: float, index: Sequence[np.ndarray], *,
                            tol: float = 1e-8, max_iter: int = 10_000,
                            progress: bool = False) -> tuple[np.ndarray, BCDOutcome, float]:
    """Gaussian block coordinate descent on the sufficient statistics XᵀX, Xᵀy, yᵀy.

    The sweeps of :func:`block_coordinate_descent` with :class:`LocalBlock`
    (Gaussian, unpenalized), written in the statistics: block k's update
    β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_{j≠k} X_kᵀX_j β_j) (since X_kᵀ(y − offset) with
    offset = Σ_{j≠k} X_jβ_j), blocks in order, each using the others' latest
    β; stop when Σ|Δβ| over a sweep < ``tol``.  The trace's deviance is
    RSS = yᵀy − 2βᵀXᵀy + βᵀXᵀXβ.  Returns (β, outcome without linear
    predictors, RSS).

    Examples
    --------
    >>> X = np.column_stack([np.ones(6), [0., 1, 2, 3, 4, 5], [1., 0, 2, 1, 3, 1]])
    >>> y = X @ np.array([1., 2., -1.])
    >>> b, out, rss = gaussian_bcd_statistics(X.T @ X, X.T @ y, float(y @ y), [np.array([0, 1]), np.array([2])])
    >>> b.round(6).tolist(), out.converged
    ([1.0, 2.0, -1.0], True)
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    try:
        chols = [cho_factor(xtx[np.ix_(ix, ix)]) for ix in index]
    except LinAlgError:
        raise AssumptionError(
            "a party's design block is rank deficient (collinear columns): XᵀX is singular. "
            "Remove the redundant column(s) or use penalty='ridge'.") from None
    beta = np.zeros(xtx.shape[0])

    def rss() -> float:
        return float(yty - 2.0 * beta @ xty + beta @ xtx @ beta)

    def sweep() -> tuple[float, float]:
        change = 0.0
        for ix, chol in zip(index, chols):
            own = beta[ix]
            # X_kᵀ(y − offset) = X_kᵀy − X_kᵀX β + X_kᵀX_k β_k
            rhs = xty[ix] - xtx[ix] @ beta + xtx[np.ix_(ix, ix)] @ own
            new = cho_solve(chol, rhs)
            change += float(np.sum(np.abs(new - own)))
            beta[ix] = new
        return change, rss()

    it, converged, trace = run_sweeps(sweep, tol=tol, max_iter=max_iter, progress=progress)
    return beta, BCDOutcome(etas=[], iterations=it, converged=converged, trace=trace), rss()


def _bar(total: int, progress: bool):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="block coordinate descent", unit="sweep")


def check_no_separation(family: Family, eta: np.ndarray) -> None:
    """Binomial: fitted probabilities at 0 or 1 mean (quasi-)complete separation."""
    if family.name != "binomial":
        return
    if np.any(np.abs(eta) > 30.0):
        raise AssumptionError(
            "perfect (or quasi-complete) separation in the binomial model: some fitted "
            "probabilities are numerically 0 or 1, so the maximum-likelihood estimate does not "
            "exist (coefficients diverge). Remove the separating column(s) or use "
            "penalty='ridge' with lam > 0.")


def dispersion_estimate(family: Family, y: np.ndarray, eta: np.ndarray, df_resid: int) -> float:
    """1 for binomial/Poisson; RSS/(n − p) for the Gaussian family (R's summary.glm)."""
    if family.fixed_dispersion:
        return 1.0
    if df_resid <= 0:
        return math.nan
    return float(np.sum((y - eta) ** 2) / df_resid)


def pooled_covariance(X: np.ndarray, family: Family, eta: np.ndarray, dispersion: float) -> np.ndarray:
    """φ (XᵀWX)⁻¹ with all columns in one place (simulation reference only)."""
    w = np.maximum(family.variance(family.linkinv(eta)), _W_MIN)
    return dispersion * np.linalg.inv((X.T * w) @ X)


# --------------------------------------------------------------------------- DP calibration
def binomial_ridge_sensitivities(n: int, radius: float, lam: float, eta_clip: float) -> tuple[float, float]:
    """(Δ₂ of a released clipped linear predictor, Δ₂ of a block's coefficients).

    Replace-one-row, offsets fixed (adaptive composition): the logistic loss is
    1-Lipschitz in η and the ridge objective is λ-strongly convex, so
    ‖β − β'‖₂ ≤ 2R/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8).  Rows
    other than the replaced one move by at most R·2R/(nλ) each; the replaced
    row's clipped entry by at most 2C: Δ₂(η) ≤ √(4C² + 4R⁴/(nλ²)).
    """
    d_beta = 2.0 * radius / (n * lam)
    d_eta = math.sqrt(4.0 * eta_clip ** 2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta


def gaussian_ridge_sensitivities(n: int, radius: float, lam: float, eta_clip: float, y_bound: float,
                                 offset_bound: float) -> tuple[float, float]:
    """(Δ₂ of a released clipped linear predictor, Δ₂ of a block's coefficients), Gaussian family.

    Same argument as :func:`binomial_ridge_sensitivities` (replace one row,
    offsets fixed by adaptive composition), with the gradient bound of the
    squared loss in place of the logistic one.  The block objective is
    F(β) = (1/n)Σ_i ½(y_i − o_i − x_iᵀβ)² + (λ/2)‖β‖² with |y_i| ≤ B_y (y
    clipped to its bounds), |o_i| ≤ O (the received offset clipped to
    O = (K−1)·eta_clip) and ‖x_i‖ ≤ R (covariates clipped; intercept counts 1).

    1. Norm of the minimizer: (λ/2)‖β̂‖² ≤ F(β̂) ≤ F(0) ≤ (B_y + O)²/2, so
       ‖β̂‖ ≤ (B_y + O)/√λ.
    2. Row gradient: ∇_β ℓ_i = −(y_i − o_i − x_iᵀβ̂)·x_i, so
       ‖∇ℓ_i‖ ≤ G = R·(B_y + O)·(1 + R/√λ) at β̂, for any row within the bounds.
    3. F is λ-strongly convex; for the neighbour F' (row i replaced),
       ∇F'(β̂) = (∇ℓ'_i(β̂) − ∇ℓ_i(β̂))/n, hence
       λ‖β̂ − β̂'‖² ≤ ⟨∇F'(β̂) − ∇F'(β̂'), β̂ − β̂'⟩ ≤ (2G/n)‖β̂ − β̂'‖ and
       Δ₂(β) = 2G/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8 form;
       the binomial case has G = R since the logistic loss is 1-Lipschitz).
    4. Released η = clip(Xβ̂, ±C): each unchanged row moves ≤ R·Δ₂(β), the
       replaced row ≤ 2C, so Δ₂(η) ≤ √(4C² + n·R²·Δ₂(β)²) (as in the binomial case).

    Examples
    --------
    >>> d_eta, d_beta = gaussian_ridge_sensitivities(1000, 1.0, 1.0, 1.0, 1.0, 0.0)
    >>> round(d_beta, 6)   # 2·1·1·(1 + 1)/(1000·1)
    0.004
    """
    grad = radius * (y_bound + offset_bound) * (1.0 + radius / math.sqrt(lam))
    d_beta = 2.0 * grad / (n * lam)
    d_eta = math.sqrt(4.0 * eta_clip ** 2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta
