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

DP mode (``eps``/``delta``; binomial or Gaussian family, ridge penalty):
covariates (and, for the Gaussian family, y) are clipped to declared bounds,
every shared η_k is clipped to [−eta_clip, eta_clip] and noised, the final β_k
are noised, and a fixed number of sweeps runs.  The zCDP budget is split over
the K·T linear-predictor releases and the K coefficient releases
(:func:`noise_scales`, sensitivities :func:`binomial_ridge_sensitivities`,
:func:`gaussian_ridge_sensitivities`).

The two verbs every front door uses (``docs/architecture.md``, "Adding a
method"): :func:`plan` (the ledger, sensitivities, assumptions and what the
protocol discloses, from public inputs: n, K, the settings of
:func:`settings`, the row-norm bounds of :func:`clip_covariates`) and
:func:`release` (the slides' block coordinate descent, steps 1–3, with the
parties simulated in one process; :func:`release_from_statistics` for the
Gaussian fit from pooled sufficient statistics).  The networked protocol
(:class:`dpstats.vertical.Party`) uses the same settings, plan, noise scales,
row-id checks and :func:`block_coordinate_descent`.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import AssumptionError, DataError, PrivacyParameterError
from ..formula import INTERCEPT, ModelFrame, model_frame
from ..schema import Schema
from ..geometry import resolve_box
from ..privacy.accountant import LedgerEntry
from ..privacy.calibration import rho_from_eps_delta
from ..privacy.plan import Plan
from ..validation import check_delta, check_eps, check_fraction, check_neighbouring

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
def fit_block(
    X: np.ndarray,
    y: np.ndarray,
    offset: np.ndarray,
    beta0: np.ndarray,
    family: Family,
    penalty: Penalty,
    mask: np.ndarray,
    *,
    inner_tol: float = 1e-12,
    max_inner: int = 100,
    chol: tuple | None = None,
) -> np.ndarray:
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
            "Remove the redundant column(s) or use penalty='ridge'."
        ) from None


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
        new = fit_block(
            self.X, self.y, offset, self.beta, self.family, self.penalty, self.mask, chol=self._chol
        )
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

    def finish(
        self,
        eta_total: np.ndarray,
        dispersion: float,
        sigma_beta: float = 0.0,
        other_basis: np.ndarray | None = None,
    ) -> BlockFinal:
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
    offset: np.ndarray | float = 0.0  # the formula's offset() (R's glm offset), not a party's predictor

    @property
    def eta(self) -> np.ndarray:
        return self.offset + np.sum(self.etas, axis=0)


def block_coordinate_descent(
    blocks: Sequence,
    y: np.ndarray,
    family: Family,
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    fixed_rounds: bool = False,
    check_separation: bool = True,
    on_round: Callable[[dict], None] | None = None,
    offset: np.ndarray | None = None,
) -> BCDOutcome:
    """Sweep over the blocks until Σ|Δβ| < tol (or exactly ``max_iter`` sweeps if ``fixed_rounds``).

    ``blocks`` are objects with ``update(offset) -> (eta_k, change_k)``: local
    blocks or network proxies of remote parties.  Only their linear predictors
    (and the scalar Σ|Δβ_k|) reach this loop.  ``on_round`` receives each
    sweep's trace row (progress, logging).  ``offset`` is the formula's
    ``offset()`` (R's glm offset): a fixed part of every linear predictor.
    """
    n = y.shape[0]
    base = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    etas = [np.zeros(n) for _ in blocks]
    state = {"total": base.copy()}

    def sweep() -> tuple[float, float]:
        total, change = state["total"], 0.0
        for k, block in enumerate(blocks):
            offset = total - etas[k]
            eta_k, ch = block.update(offset)
            total = offset + eta_k
            etas[k] = eta_k
            change += ch if ch is not None else math.nan
        state["total"] = base + np.sum(etas, axis=0)
        return change, family.deviance(y, state["total"])

    def after(row: dict) -> None:
        if on_round is not None:
            on_round(row)
        if check_separation:
            check_no_separation(family, state["total"])

    it, converged, trace = run_sweeps(
        sweep, tol=tol, max_iter=max_iter, fixed_rounds=fixed_rounds, after=after
    )
    return BCDOutcome(etas=etas, iterations=it, converged=converged or fixed_rounds, trace=trace, offset=base)


def run_sweeps(
    sweep: Callable[[], tuple[float, float]],
    *,
    tol: float,
    max_iter: int,
    fixed_rounds: bool = False,
    after: Callable[[dict], None] | None = None,
) -> tuple[int, bool, list[dict]]:
    """Repeat ``sweep() -> (Σ|Δβ|, deviance)`` until Σ|Δβ| < ``tol`` (or ``max_iter`` sweeps).

    With ``fixed_rounds`` exactly ``max_iter`` sweeps run.  Each sweep's trace row
    goes to ``after`` (which may raise to stop the fit).  Returns (sweeps run,
    converged, trace).
    """
    trace: list[dict] = []
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        change, deviance = sweep()
        row = {"iteration": it, "sum_abs_change": change, "deviance": deviance}
        trace.append(row)
        if after is not None:
            after(row)
        if not fixed_rounds and change < tol:
            converged = True
            break
    return it, converged, trace


def gaussian_bcd_statistics(
    xtx: np.ndarray,
    xty: np.ndarray,
    yty: float,
    index: Sequence[np.ndarray],
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    on_round: Callable[[dict], None] | None = None,
) -> tuple[np.ndarray, BCDOutcome, float]:
    """Gaussian block coordinate descent on the sufficient statistics XᵀX, Xᵀy, yᵀy.

    The sweeps of :func:`block_coordinate_descent` with :class:`LocalBlock`
    (Gaussian, unpenalized), written in the statistics: block k's update
    β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_{j≠k} X_kᵀX_j β_j) (since X_kᵀ(y − offset) with
    offset = Σ_{j≠k} X_jβ_j), blocks in order, each using the others' latest
    β; stop when Σ|Δβ| over a sweep < ``tol``.  The trace's deviance is
    RSS = yᵀy − 2βᵀXᵀy + βᵀXᵀXβ.  Returns (β, outcome without linear
    predictors, RSS).  ``on_round`` receives each sweep's trace row.

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
            "Remove the redundant column(s) or use penalty='ridge'."
        ) from None
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

    it, converged, trace = run_sweeps(sweep, tol=tol, max_iter=max_iter, after=on_round)
    return beta, BCDOutcome(etas=[], iterations=it, converged=converged, trace=trace), rss()


def check_no_separation(family: Family, eta: np.ndarray) -> None:
    """Binomial: fitted probabilities at 0 or 1 mean (quasi-)complete separation."""
    if family.name != "binomial":
        return
    if np.any(np.abs(eta) > 30.0):
        raise AssumptionError(
            "perfect (or quasi-complete) separation in the binomial model: some fitted "
            "probabilities are numerically 0 or 1, so the maximum-likelihood estimate does not "
            "exist (coefficients diverge). Remove the separating column(s) or use "
            "penalty='ridge' with lam > 0."
        )


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
    d_eta = math.sqrt(4.0 * eta_clip**2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta


def gaussian_ridge_sensitivities(
    n: int, radius: float, lam: float, eta_clip: float, y_bound: float, offset_bound: float
) -> tuple[float, float]:
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
    d_eta = math.sqrt(4.0 * eta_clip**2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta


# --------------------------------------------------------------------------- settings
SE_METHODS = ("exact", "history", "conditional", "pooled", "none")
PENALTIES = (None, "ridge", "lasso")


def check_fit(
    family: str,
    penalty: str | None,
    lam: float,
    tol: float,
    max_iter: int,
    rounds: int,
    se: str,
    conf_level: float,
) -> float:
    """Cheap checks of the fit's arguments (no data touched); returns the validated ``conf_level``.

    Examples
    --------
    >>> check_fit("gaussian", None, 0.0, 1e-8, 100, 10, "exact", 0.95)
    0.95
    """
    if family not in FAMILIES:
        raise DataError(f"family must be one of {sorted(FAMILIES)}, got {family!r}.")
    if penalty not in PENALTIES:
        raise PrivacyParameterError(f"penalty must be None, 'ridge' or 'lasso', got {penalty!r}.")
    if not _real(lam) or lam < 0 or not math.isfinite(lam):
        raise PrivacyParameterError(f"lam must be a finite number >= 0, got {lam!r}.")
    if penalty is not None and lam <= 0:
        raise PrivacyParameterError(f"penalty={penalty!r} needs lam > 0, got lam={lam!r}.")
    if not _real(tol) or not (0 < tol < 1):
        raise PrivacyParameterError(f"tol must be in (0, 1), got {tol!r}; privreg uses 1e-8.")
    for name, value in (("max_iter", max_iter), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise PrivacyParameterError(f"{name} must be a positive integer, got {value!r}.")
    if se not in SE_METHODS:
        raise PrivacyParameterError(f"se must be one of {list(SE_METHODS)}, got {se!r}.")
    return check_fraction(conf_level, "conf_level", 0.0, 1.0)


def settings(
    family: str,
    penalty: str | None,
    lam: float,
    conf_level: float,
    eps: float | None,
    delta: float | None,
    rounds: int,
    eta_clip: float,
    coef_share: float,
    neighbouring: str,
) -> dict:
    """The fit's settings, read by :func:`plan`, :func:`noise_scales` and :func:`release`.

    ``eps`` None or inf gives the exact (non-private) protocol (``"eps": None``);
    otherwise the DP mode's arguments are checked: binomial or Gaussian family,
    ridge penalty with lam > 0, replace-one-row, delta in (0, 1) (default 1e-6).

    Examples
    --------
    >>> s = settings("binomial", "ridge", 1.0, 0.95, 1.0, None, 10, 4.0, 0.1, "replace")
    >>> s["eps"], s["delta"], s["rounds"]
    (1.0, 1e-06, 10)
    """
    if _real(eps) and math.isinf(eps) and eps > 0:
        eps = None  # eps = inf: the non-private protocol (what `dpstats run --eps inf` gives)
    spec = {
        "conf_level": conf_level,
        "eps": None,
        "delta": 0.0,
        "neighbouring": "replace",
        "rounds": int(rounds),
        "eta_clip": float(eta_clip),
        "coef_share": coef_share,
        "lam": float(lam),
        "family": family,
        "penalty": penalty,
    }
    if eps is None:
        if delta is not None:
            raise PrivacyParameterError("delta was given without eps; give both for DP mode.")
        spec["neighbouring"] = check_neighbouring(neighbouring)
        return spec
    spec["eps"] = check_eps(eps)
    spec["delta"] = check_delta(1e-6 if delta is None else delta, allow_zero=False)
    spec["neighbouring"] = check_neighbouring(neighbouring, supported=("replace",))
    _check_dp_mode(family, penalty, eta_clip)
    spec["coef_share"] = check_fraction(coef_share, "coef_share", 0.0, 1.0)
    if not 0 < spec["coef_share"] < 1:
        raise PrivacyParameterError(f"coef_share must be strictly between 0 and 1, got {coef_share!r}.")
    return spec


def fit_settings(
    family: str,
    penalty: str | None,
    lam: float,
    tol: float,
    max_iter: int,
    se: str,
    conf_level: float,
    eps: float | None,
    delta: float | None,
    rounds: int,
    eta_clip: float,
    coef_share: float,
    neighbouring: str = "replace",
) -> dict:
    """:func:`check_fit` then :func:`settings` (a party of the networked protocol checks both at once).

    Examples
    --------
    >>> fit_settings("gaussian", None, 0.0, 1e-8, 100, "exact", 0.95, None, None, 10, 4.0, 0.1)["eps"] is None
    True
    """
    conf_level = check_fit(family, penalty, lam, tol, max_iter, rounds, se, conf_level)
    return settings(family, penalty, lam, conf_level, eps, delta, rounds, eta_clip, coef_share, neighbouring)


def _check_dp_mode(family, penalty, eta_clip) -> None:
    if family == "poisson":
        raise PrivacyParameterError(
            "DP mode (eps=) is not available for family='poisson': the gradient of the Poisson loss "
            "under the log link, (exp(η) − y)·x, is unbounded in η, so no sensitivity of the block "
            "estimator can be derived from bounds on the data. Use family='gaussian' or 'binomial' "
            "with penalty='ridge', or drop eps."
        )
    if penalty != "ridge":
        raise PrivacyParameterError(
            "DP mode (eps=) needs penalty='ridge' with lam > 0 (family='binomial' or 'gaussian'): the "
            "sensitivity of the block estimator is derived from the lam-strong convexity of the ridge "
            f"objective and a bounded loss gradient. Got family={family!r}, penalty={penalty!r}."
        )
    if not _real(eta_clip) or not (0 < eta_clip < math.inf):
        raise PrivacyParameterError(f"eta_clip must be a positive finite number, got {eta_clip!r}.")


def _real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and not math.isnan(float(x))


# --------------------------------------------------------------------------- rows and response
def row_id_hash(ids, salt: bytes = b"") -> str:
    """SHA-256 of the ordered row ids (never the data): parties compare it to agree on rows.

    Examples
    --------
    >>> row_id_hash([1, 2, 3]) == row_id_hash([1, 2, 3]) != row_id_hash([1, 3, 2])
    True
    """
    h = hashlib.sha256(b"dpstats-vertical-row-ids\x00" + salt)
    for v in ids:
        b = str(v).encode("utf-8")
        h.update(len(b).to_bytes(4, "big") + b)
    return h.hexdigest()


def check_rows(hashes: Sequence[str], counts: Sequence[int], names: Sequence[str]) -> None:
    """Raise a DataError naming the first party whose row count or row-id hash differs.

    Examples
    --------
    >>> check_rows([row_id_hash([1, 2])] * 2, [2, 2], ["A", "B"])   # the same rows: no error
    """
    for name, c, h in zip(names[1:], counts[1:], hashes[1:]):
        if c != counts[0]:
            raise DataError(
                f"party {name!r} has {c} rows but {names[0]!r} has {counts[0]}: parties "
                "must hold the same rows. Align the data sets on a common row id."
            )
        if h != hashes[0]:
            raise DataError(
                f"party {name!r} holds different row ids, or the same ids in a different "
                f"order, than {names[0]!r} (row-id hashes differ). Sort every party's "
                "data by the shared row id."
            )


def response_frame(
    formula: str, frame, family: str, schema: Schema | None = None, *, check_constant: bool = False
) -> tuple[ModelFrame, str]:
    """Model frame; a two-level factor response is coded 0/1 for the binomial family (as R's glm).

    ``schema`` (:mod:`dpstats.schema`): declared levels and the rule for missing values.
    ``check_constant`` refuses constant columns: for the non-private fit only, whose
    readers may see the data (a DP fit must not refuse on a fact read from the rows).
    """
    try:
        return model_frame(formula, frame, schema=schema, check_constant=check_constant), ""
    except DataError as exc:
        if family != "binomial" or "numeric response is needed" not in str(exc):
            raise
    mf = model_frame(formula, frame, response="factor", schema=schema, check_constant=check_constant)
    if len(mf.classes) != 2:
        raise DataError(
            f"family='binomial' needs a 0/1 or two-level response; {mf.response!r} has another number of "
            "levels (not shown: levels read from the rows are not released)."
        )
    mf.y = mf.y.astype(float)
    return mf, f"P({mf.response} = {mf.classes[1]!r}) is modelled (first level {mf.classes[0]!r} coded 0)"


def check_response(y: np.ndarray, family: str, name: str | None) -> None:
    """The response must suit the family: 0/1 for binomial, counts >= 0 for Poisson."""
    if y is None:
        raise DataError("the formula needs a response, e.g. 'y ~ .'.")
    if family == "binomial" and not np.all((y == 0) | (y == 1)):
        raise DataError(f"family='binomial' needs a 0/1 response; {name!r} has other values.")
    if family == "poisson" and np.any(y < 0):
        raise DataError(f"family='poisson' needs a non-negative count response; {name!r} has negatives.")


# --------------------------------------------------------------------------- DP mode: clipping
def clip_covariates(mf: ModelFrame, owner: np.ndarray, K: int, bounds) -> tuple[np.ndarray, list[float]]:
    """Covariates clipped to their declared bounds, and each party's row-norm bound R_k.

    R_k² = Σ over party k's columns of max(|lo|, |hi|)² (the intercept counts 1):
    a public bound on ‖x_ik‖ from the declared bounds alone.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> mf = model_frame("y ~ a + b", pd.DataFrame({"y": [0., 1, 1], "a": [5., 0, 1], "b": [0., 1, 2]}))
    >>> X, radius = clip_covariates(mf, np.array([0, 0, 1]), 2, (-3, 4))
    >>> X[:, 1].tolist(), radius
    ([4.0, 0.0, 1.0], [4.123105625617661, 4.0])
    """
    if bounds is None:
        raise PrivacyParameterError(
            "DP mode needs public bounds on the covariates, e.g. bounds=(-3, 3) or "
            "bounds={'x1': (0, 1), ...}: they bound each party's row norm R_k."
        )
    cols = [nm for nm in mf.names if nm != INTERCEPT]
    dummies = {nm for nm, term in zip(mf.names, mf.terms) if term in mf.factor_levels}
    box = resolve_box(bounds, cols, dummies=dummies)
    X = mf.X.copy()
    big = np.maximum(np.abs(box.lo), np.abs(box.hi))
    sq = np.zeros(K)
    for j, nm in enumerate(mf.names):
        if nm == INTERCEPT:
            sq[owner[j]] += 1.0
            continue
        i = cols.index(nm)
        X[:, j] = np.clip(X[:, j], box.lo[i], box.hi[i])
        sq[owner[j]] += big[i] ** 2
    return X, [math.sqrt(s) for s in sq]


def clip_response(mf: ModelFrame, bounds) -> tuple[np.ndarray, float]:
    """Gaussian DP mode: clip y to its declared bounds; return (clipped y, B_y = max |bound|)."""
    name = mf.response
    if isinstance(bounds, Mapping) and name not in bounds:
        raise PrivacyParameterError(
            f"family='gaussian' in DP mode needs public bounds on the response {name!r} too: add "
            f"bounds={{..., {name!r}: (lo, hi)}} (y is clipped to them; they bound the loss gradient)."
        )
    box = resolve_box({name: bounds[name]} if isinstance(bounds, Mapping) else bounds, [name])
    lo, hi = float(box.lo[0]), float(box.hi[0])
    return np.clip(mf.y, lo, hi), max(abs(lo), abs(hi))


# --------------------------------------------------------------------------- the plan
METHOD = "vertical GLM (block coordinate descent)"

STATISTICS_MODE_NOTE = (
    "SIMULATED FROM POOLED SUFFICIENT STATISTICS: the data came from the streaming/Dask engine, so XᵀX, Xᵀy "
    "and yᵀy of all parties' columns were computed together in one pass and the parties' block coordinate "
    "descent was run on them (block update β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_(j≠k) X_kᵀX_jβ_j), the same sweeps "
    "and stopping rule). This is not the networked protocol: no linear predictors were exchanged; the "
    "disclosure notes below describe what that protocol would reveal."
)


def plan(
    spec: dict,
    n: int,
    K: int,
    radius: Sequence[float] | None = None,
    y_bound: float | None = None,
    *,
    simulated: bool,
    statistics: bool = False,
) -> Plan:
    """The privacy plan of the fit, from public inputs: n, K, the settings and the row-norm bounds.

    Exact mode: one ledger entry with eps = inf (linear predictors shared
    exactly; no guarantee) and notes saying what the protocol reveals.  DP mode
    (``spec["eps"]`` set): K·T clipped, noised linear predictors and K noised
    coefficient blocks under zCDP composition (:func:`noise_scales`).
    ``radius`` lists every party's row-norm bound R_k; ``y_bound`` is B_y
    (Gaussian DP mode).  ``simulated``: the parties ran in one process;
    ``statistics``: from pooled sufficient statistics (streamed/Dask data).

    Examples
    --------
    >>> s = settings("binomial", "ridge", 1.0, 0.95, 1.0, 1e-6, 10, 4.0, 0.1, "replace")
    >>> p = plan(s, 1000, 2, [2.0, 1.5], simulated=True)
    >>> p.eps, p.delta, p.entries[0].mechanism
    (1.0, 1e-06, 'Gaussian mechanism, zCDP composition')
    """
    dp = spec["eps"] is not None
    entry = _dp_entry(spec, n, K, radius, y_bound) if dp else _exact_entry(K)
    notes = ([STATISTICS_MODE_NOTE] if statistics else []) + disclosure_text(K, dp, simulated)
    return Plan(
        method=METHOD,
        neighbouring=spec["neighbouring"],
        entries=[entry],
        sensitivities={"per release": entry.sensitivity},
        assumptions=_dp_assumptions(spec["family"]) if dp else [],
        notes=notes,
    )


def noise_scales(
    spec: dict, n: int, K: int, radius: Sequence[float], y_bound: float | None = None
) -> tuple[list[float], list[float]]:
    """(σ_η, σ_β) of each party listed in ``radius``: σ = Δ₂/√(2ρ_release).

    The zCDP budget ρ (Bun & Steinke 2016, Prop. 1.3, from eps and delta) is
    split: (1 − coef_share)·ρ over the K·T linear-predictor releases and
    coef_share·ρ over the K coefficient releases; a Gaussian release with
    sensitivity Δ₂ and scale σ costs Δ₂²/(2σ²).

    Examples
    --------
    >>> s = settings("binomial", "ridge", 1.0, 0.95, 1.0, 1e-6, 10, 4.0, 0.1, "replace")
    >>> sig_eta, sig_beta = noise_scales(s, 1000, 2, [2.0])
    >>> len(sig_eta), sig_eta[0] > sig_beta[0]
    (1, True)
    """
    rho_eta, rho_beta = _rho_shares(spec, K)
    deltas = [_sensitivities(spec, n, K, R, y_bound) for R in radius]
    return (
        [d_eta / math.sqrt(2 * rho_eta) for d_eta, _ in deltas],
        [d_beta / math.sqrt(2 * rho_beta) for _, d_beta in deltas],
    )


def _rho_shares(spec: dict, K: int) -> tuple[float, float]:
    """ρ of one linear-predictor release and of one coefficient release."""
    rho = rho_from_eps_delta(spec["eps"], spec["delta"])
    T, share = spec["rounds"], spec["coef_share"]
    return (1 - share) * rho / (K * T), share * rho / K


def _sensitivities(spec: dict, n: int, K: int, R: float, y_bound: float | None) -> tuple[float, float]:
    """(Δ₂(η), Δ₂(β)) of a party with row-norm bound R, replace one row."""
    lam, C = spec["lam"], spec["eta_clip"]
    if spec["family"] == "gaussian":  # squared loss: gradient bounded via |y| ≤ B_y, |offset| ≤ (K−1)C
        return gaussian_ridge_sensitivities(n, R, lam, C, y_bound, (K - 1) * C)
    return binomial_ridge_sensitivities(n, R, lam, C)


def _exact_entry(K: int) -> LedgerEntry:
    return LedgerEntry(
        step=f"block coordinate descent over {K} parties: exact linear predictors "
        "shared every sweep, coefficients and standard errors released",
        mechanism="none (not differentially private)",
        eps=math.inf,
        sensitivity="not bounded: exact values are shared",
        event={"kind": "none"},
    )


def _dp_entry(spec: dict, n: int, K: int, radius, y_bound) -> LedgerEntry:
    T, share, C = spec["rounds"], spec["coef_share"], spec["eta_clip"]
    sens = []
    for R in radius:
        d_eta, d_beta = _sensitivities(spec, n, K, R, y_bound)
        sens.append(f"Δ₂(η)={d_eta:.4g}, Δ₂(β)={d_beta:.4g} (R={R:.4g})")
    if spec["family"] == "gaussian":
        sens.append(
            f"squared loss with |y| ≤ B_y={y_bound:.4g}, received offsets clipped to "
            f"±(K−1)·eta_clip={(K - 1) * C:.4g}, Δ₂(β) = 2R(B_y+O)(1+R/√λ)/(nλ)"
        )
    rho = rho_from_eps_delta(spec["eps"], spec["delta"])
    return LedgerEntry(
        step=f"{K}×{T} clipped linear predictors (n-vectors) and {K} coefficient blocks",
        mechanism="Gaussian mechanism, zCDP composition",
        eps=spec["eps"],
        delta=spec["delta"],
        sensitivity="replace one row, per party: " + "; ".join(sens),
        note=(
            f"total rho = {rho:.6g} (Bun & Steinke Prop. 1.3 from eps, delta); "
            f"{1 - share:g} of rho over {K * T} linear-predictor releases, {share:g} over {K} "
            "coefficient releases; each Gaussian release costs Δ²/(2σ²)"
        ),
        event={"kind": "gaussian", "rho": rho},
    )


def _dp_assumptions(family: str) -> list[str]:
    return [
        "the outcome y is public to the parties (the guarantee holds for every fixed y)",
        "covariates clipped to the declared bounds; every block is solved to its exact "
        "minimizer (the inner solver stops at 1e-12)",
        *(
            [
                "gaussian family: y clipped to its declared bounds and every received offset "
                "clipped to ±(K−1)·eta_clip before the block fit"
            ]
            if family == "gaussian"
            else []
        ),
        "the number of sweeps is fixed in advance",
    ]


def disclosure_text(K: int, dp: bool, simulated: bool) -> list[str]:
    """What the protocol reveals, in plain words."""
    lines = [
        "The outcome y is held by the first party and sent to every party in the clear "
        "(as in privreg); it is not protected."
    ]
    if dp:
        lines += [
            "Every sweep each party reveals its linear predictor X_kβ_k clipped and with Gaussian "
            "noise; the stopping rule is a fixed number of sweeps (no data-dependent stopping).",
            "Final coefficients are released with Gaussian noise; standard errors are not released.",
            "The guarantee protects each party's covariates against the other parties and anyone "
            "who sees the messages, for every value of the shared y.",
        ]
    else:
        lines += [
            "Every sweep each party reveals its exact linear predictor η_k = X_kβ_k (an n-vector) to "
            "the leader, and receives the exact sum of the other parties' linear predictors. Over "
            "the sweeps these vectors span (up to) the other parties' column spaces: the other "
            "parties learn each party's columns up to an unknown linear transform. This protocol "
            "gives NO formal privacy guarantee.",
            "With se='exact' (the default) each party also shares an orthonormal basis of its "
            "column space after convergence, so that the standard errors are exact: its columns "
            "are then known up to an unknown invertible linear transform.",
            "Each party also reveals the scalar Σ|Δβ_k| every sweep (the stopping rule), and at the "
            "end its coefficients and standard errors.",
        ]
    if K > 2 and not dp:
        lines.append(
            f"With {K} parties a member receives only the sum of the others' linear predictors; "
            "the leader receives each one separately."
        )
    if simulated:
        lines.append(
            "This fit simulated the parties in one process; the deployment with one process per "
            "party over encrypted TCP is dpstats.vertical.Party."
        )
    return lines


# --------------------------------------------------------------------------- the release
@dataclass
class Released:
    """What a fit releases: the sweeps' outcome, every block's final coefficients, the fit's summaries."""

    out: BCDOutcome
    finals: list[BlockFinal]
    index: list[np.ndarray]
    dispersion: float
    deviance: float
    pooled: np.ndarray | None = None


def release(
    X: np.ndarray,
    y: np.ndarray,
    owner: np.ndarray,
    terms: Sequence[str],
    spec: dict,
    *,
    se: str,
    tol: float,
    max_iter: int,
    sigmas: tuple | None,
    noise,
    on_round: Callable[[dict], None] | None = None,
    offset: np.ndarray | None = None,
) -> Released:
    """Block coordinate descent with the parties simulated in one process (the slides' steps 1–3).

    1. β ← 0; 2. for each party k: the offset is the others' linear predictors
    (y_res^k = y − Σ_{j≠k} X_jβ_j) and β_k is the block's (penalized GLM)
    minimizer given it; 3. repeat until Σ|Δβ| < ``tol`` — in DP mode exactly
    ``spec["rounds"]`` sweeps, each shared η_k clipped and noised with
    ``sigmas[0][k]`` and the final β_k with ``sigmas[1][k]``
    (:func:`noise_scales`).  ``owner[j]`` is the party of design column j
    (every party owns at least one).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(50), rng.standard_normal((50, 2))])
    >>> y = X @ np.array([1.0, 2.0, -1.0]) + rng.standard_normal(50)
    >>> s = settings("gaussian", None, 0.0, 0.95, None, None, 10, 4.0, 0.1, "replace")
    >>> r = release(X, y, np.array([0, 0, 1]), ["(Intercept)", "a", "b"], s, se="exact", tol=1e-10,
    ...             max_iter=1000, sigmas=None, noise=None)
    >>> bool(np.allclose(np.concatenate([f.beta for f in r.finals]), np.linalg.lstsq(X, y, rcond=None)[0]))
    True
    """
    dp, fam, K = spec["eps"] is not None, FAMILIES[spec["family"]], int(owner.max()) + 1
    pen = Penalty(spec["penalty"], spec["lam"])
    index = [np.flatnonzero(owner == k) for k in range(K)]
    offset_clip = (K - 1) * spec["eta_clip"] if dp and spec["family"] == "gaussian" else math.inf
    blocks = [
        LocalBlock(
            X[:, ix],
            y,
            fam,
            pen,
            _mask(terms, ix, dp),
            X.shape[1] - len(ix),
            se="none" if dp else (se if se in ("exact", "history") else "conditional"),
            sigma_eta=sigmas[0][k] if dp else 0.0,
            eta_clip=spec["eta_clip"],
            noise=noise,
            offset_clip=offset_clip,
        )
        for k, ix in enumerate(index)
    ]
    out = block_coordinate_descent(
        blocks,
        y,
        fam,
        tol=tol,
        max_iter=spec["rounds"] if dp else max_iter,
        fixed_rounds=dp,
        check_separation=(spec["penalty"] is None and not dp),
        on_round=on_round,
        offset=offset,
    )
    finals = finish_blocks(blocks, out, fam, y, X.shape[1], sigmas[1] if dp else None)
    pooled = None
    if se == "pooled" and not dp and spec["penalty"] is None:
        disp = dispersion_estimate(fam, y, out.eta, X.shape[0] - X.shape[1])
        pooled = pooled_covariance(X, fam, out.eta, disp)
    summaries = (
        not_released_summaries(fam)
        if dp
        else dispersion_and_deviance(fam, y, out.eta, X.shape[0] - X.shape[1])
    )
    return Released(out, finals, index, *summaries, pooled=pooled)


def release_from_statistics(
    xtx: np.ndarray,
    xty: np.ndarray,
    yty: float,
    owner: np.ndarray,
    n: int,
    *,
    se: str,
    tol: float,
    max_iter: int,
    on_round: Callable[[dict], None] | None = None,
) -> Released:
    """The Gaussian, unpenalized, exact fit from pooled sufficient statistics (streamed/Dask data).

    The sweeps of :func:`gaussian_bcd_statistics`; standard errors from
    σ̂²(XᵀX)⁻¹, σ̂² = RSS/(n − p) (R's summary.lm).
    """
    index = [np.flatnonzero(owner == k) for k in range(int(owner.max()) + 1)]
    beta, out, rss = gaussian_bcd_statistics(
        xtx, xty, yty, index, tol=tol, max_iter=max_iter, on_round=on_round
    )
    finals, pooled = statistics_finals(xtx, beta, rss, n, index, se)
    df_resid = n - xtx.shape[0]
    return Released(out, finals, index, rss / df_resid if df_resid > 0 else math.nan, rss, pooled=pooled)


def _mask(terms: Sequence[str], ix: np.ndarray, dp: bool) -> np.ndarray:
    """Penalized columns: all in DP mode (strong convexity), all but the intercept otherwise."""
    if dp:
        return np.ones(len(ix))
    return np.array([0.0 if terms[j] == INTERCEPT else 1.0 for j in ix])


def finish_blocks(blocks, out: BCDOutcome, fam: Family, y: np.ndarray, p: int, sig_beta) -> list[BlockFinal]:
    """Ask every block for its final coefficients (and covariance)."""
    disp = dispersion_estimate(fam, y, out.eta, y.shape[0] - p)
    others = [None] * len(blocks)
    if getattr(blocks[0], "se", None) == "exact" and blocks[0].penalty.kind is None:
        bases = [b.column_basis() for b in blocks]
        others = [np.column_stack([q for j, q in enumerate(bases) if j != k]) for k in range(len(blocks))]
    return [
        b.finish(out.eta, disp, sig_beta[k] if sig_beta else 0.0, others[k]) for k, b in enumerate(blocks)
    ]


def not_released_summaries(fam: Family) -> tuple[float, float]:
    """A DP fit's dispersion and deviance: functions of the raw y, so not released (NaN; 1 where fixed)."""
    return (1.0 if fam.fixed_dispersion else math.nan), math.nan


def dispersion_and_deviance(
    fam: Family, y: np.ndarray, eta: np.ndarray, df_resid: int
) -> tuple[float, float]:
    """The fit's dispersion estimate and deviance, from y and the final linear predictor."""
    return dispersion_estimate(fam, y, eta, df_resid), fam.deviance(y, eta)


def statistics_finals(xtx: np.ndarray, beta: np.ndarray, rss: float, n: int, index, se: str):
    """Block results with SEs from σ̂²(XᵀX)⁻¹, σ̂² = RSS/(n − p) (R's summary.lm)."""
    p = xtx.shape[0]
    disp = rss / (n - p) if n > p else math.nan
    cov = disp * np.linalg.inv(xtx)
    finals = []
    for ix in index:
        p_other = p - len(ix)
        if se == "exact":  # the Schur complement of the exact bases is the pooled block
            finals.append(BlockFinal(beta[ix].copy(), cov[np.ix_(ix, ix)], p_other, p_other))
        elif se == "conditional":
            finals.append(BlockFinal(beta[ix].copy(), disp * np.linalg.inv(xtx[np.ix_(ix, ix)]), 0, p_other))
        else:
            finals.append(BlockFinal(beta[ix].copy(), None, 0, p_other))
    return finals, (cov if se == "pooled" else None)
