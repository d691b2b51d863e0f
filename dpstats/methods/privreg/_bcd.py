"""Block coordinate descent: each party's block state and the sweep loop over the parties.

:class:`LocalBlock` (what one party holds and updates), :func:`block_coordinate_descent`
(the slides' steps 1–3, the sweeps until Σ|Δβ| < tol or a fixed number in DP mode),
the Gaussian fit from pooled sufficient statistics and the pooled covariance pieces
(:mod:`dpstats.methods.privreg`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import AssumptionError
from ._glm import (
    _W_MIN,
    BlockProblem,
    Family,
    Penalty,
    SpanBasis,
    block_covariance,
    fit_block,
    gaussian_cholesky,
    orthonormal,
)


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
    before the block fit (post-processing of released values).  ``centre``
    (:func:`centres_block`): the block is solved on its columns less their means, the shared
    η_k = X_kβ_k still on the columns as they are (module docstring of
    :mod:`dpstats.methods.privreg`, "Centring").
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
    centre: bool = False
    beta: np.ndarray = field(init=False)
    basis: SpanBasis | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.beta = np.zeros(self.X.shape[1])
        self._fit_X = self.X - self.X.mean(axis=0) if self.centre else self.X  # the block solve's columns
        self._chol = None
        if self.family.name == "gaussian" and self.penalty.kind != "lasso":
            self._chol = gaussian_cholesky(self._fit_X, self.penalty, self.mask)
        if self.se == "history":
            self.basis = SpanBasis(self.X.shape[0], self.p_other)

    def update(self, offset: np.ndarray) -> tuple[np.ndarray, float]:
        """Fit the block given the others' linear predictor; return (shared η_k, Σ|Δβ_k|)."""
        if self.basis is not None:
            self.basis.add(offset)
        if math.isfinite(self.offset_clip):  # Gaussian DP mode: bounded offsets bound the residuals
            offset = np.clip(offset, -self.offset_clip, self.offset_clip)
        problem = BlockProblem(self._fit_X, self.y, self.family, self.penalty, self.mask, self._chol)
        new = fit_block(problem, offset, self.beta)
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


def centres_block(family: str, dp: bool, model_intercept: bool, holds_intercept: bool) -> bool:
    """Whether a block is solved on its centred columns (:class:`LocalBlock`): the Gaussian family
    outside DP mode, in a model whose intercept another block (the leader's) holds.

    Its update is then exact block coordinate descent in the parametrisation with the block's columns
    centred (the constant they leave out is the leader's intercept's to fit), so the sweeps reach the
    same fit at the speed the blocks' correlations allow; on the columns as they are, a column far from
    zero (a date's days, 19 700) is nearly collinear with the intercept and the sweeps crawl (module
    docstring of :mod:`dpstats.methods.privreg`, "Centring").

    Examples
    --------
    >>> centres_block("gaussian", False, True, False), centres_block("binomial", False, True, False)
    (True, False)
    """
    return family == "gaussian" and not dp and model_intercept and not holds_intercept


# --------------------------------------------------------------------------- the sweep loop
@dataclass(frozen=True)
class Sweeps:
    """When the sweeps stop: Σ|Δβ| < ``tol`` within ``max_iter`` sweeps (privreg's rule), or, with
    ``fixed`` (DP mode), after exactly ``max_iter`` sweeps (no data-dependent stopping)."""

    tol: float = 1e-8
    max_iter: int = 10_000
    fixed: bool = False


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
    sweeps: Sweeps = Sweeps(),
    *,
    check_separation: bool = True,
    on_round: Callable[[dict], None] | None = None,
    offset: np.ndarray | None = None,
    deviance: bool = True,
) -> BCDOutcome:
    """Sweep over the blocks until Σ|Δβ| < tol (or exactly ``max_iter`` sweeps if ``sweeps.fixed``).

    ``blocks`` are objects with ``update(offset) -> (eta_k, change_k)``: local
    blocks or network proxies of remote parties.  Only their linear predictors
    (and the scalar Σ|Δβ_k|) reach this loop.  ``on_round`` receives each
    sweep's trace row (progress, logging).  ``offset`` is the formula's
    ``offset()`` (R's glm offset): a fixed part of every linear predictor.
    ``deviance`` False (DP mode): the trace's deviance is NaN, not computed: deviance(y, η) is a
    function of the raw y with no noise of its own, which a DP fit does not release.
    Where the other blocks are solved on centred columns (their ``centre``, :func:`centres_block`),
    the first block (the leader's, whose intercept absorbs the constants they leave out) is swept
    last: every sweep then ends on the linear predictor of the centred parametrisation's iterate,
    which the trace reads.
    """
    n = y.shape[0]
    base = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    etas = [np.zeros(n) for _ in blocks]
    state = {"total": base.copy()}
    centred = any(getattr(block, "centre", False) for block in blocks[1:])
    order = [*range(1, len(blocks)), 0] if centred else range(len(blocks))

    def sweep() -> tuple[float, float]:
        total, change = state["total"], 0.0
        for k in order:
            block = blocks[k]
            offset = total - etas[k]
            eta_k, ch = block.update(offset)
            total = offset + eta_k
            etas[k] = eta_k
            change += ch if ch is not None else math.nan
        state["total"] = base + np.sum(etas, axis=0)
        return change, family.deviance(y, state["total"]) if deviance else math.nan

    def after(row: dict) -> None:
        if on_round is not None:
            on_round(row)
        if check_separation:
            check_no_separation(family, state["total"])

    it, converged, trace = run_sweeps(sweep, sweeps, after=after)
    return BCDOutcome(etas=etas, iterations=it, converged=converged or sweeps.fixed, trace=trace, offset=base)


def run_sweeps(
    sweep: Callable[[], tuple[float, float]],
    sweeps: Sweeps,
    after: Callable[[dict], None] | None = None,
) -> tuple[int, bool, list[dict]]:
    """Repeat ``sweep() -> (Σ|Δβ|, deviance)`` until Σ|Δβ| < ``sweeps.tol`` (or ``max_iter`` sweeps).

    With ``sweeps.fixed`` exactly ``max_iter`` sweeps run.  Each sweep's trace row
    goes to ``after`` (which may raise to stop the fit).  Returns (sweeps run,
    converged, trace).
    """
    trace: list[dict] = []
    it, converged = 0, False
    for it in range(1, sweeps.max_iter + 1):
        change, deviance = sweep()
        row = {"iteration": it, "sum_abs_change": change, "deviance": deviance}
        trace.append(row)
        if after is not None:
            after(row)
        if not sweeps.fixed and change < sweeps.tol:
            converged = True
            break
    return it, converged, trace


def gaussian_bcd_statistics(
    xtx: np.ndarray,
    xty: np.ndarray,
    yty: float,
    index: Sequence[np.ndarray],
    sweeps: Sweeps = Sweeps(),
    on_round: Callable[[dict], None] | None = None,
    intercept: int | None = None,
) -> tuple[np.ndarray, BCDOutcome, float]:
    """Gaussian block coordinate descent on the sufficient statistics XᵀX, Xᵀy, yᵀy.

    The sweeps of :func:`block_coordinate_descent` with :class:`LocalBlock`
    (Gaussian, unpenalized), written in the statistics: block k's update
    β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_{j≠k} X_kᵀX_j β_j) (since X_kᵀ(y − offset) with
    offset = Σ_{j≠k} X_jβ_j), blocks in order, each using the others' latest
    β; stop when Σ|Δβ| over a sweep < ``sweeps.tol``.  With the ``intercept``'s
    column index, a block without it is solved on its centred columns, as :func:`centres_block`
    (and the intercept's block is swept last): X̃ = X_k − 1cᵀ with c = X_kᵀ1/n, so
    X̃ᵀX̃ = X_kᵀX_k − n ccᵀ and X̃ᵀ(y − offset) = X_kᵀ(y − offset) − c·1ᵀ(y − offset).  The trace's deviance is
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

    means = [_column_means(xtx, ix, intercept) for ix in index]
    n = 0.0 if intercept is None else float(xtx[intercept, intercept])
    try:
        chols = [cho_factor(xtx[np.ix_(ix, ix)] - n * np.outer(c, c)) for ix, c in zip(index, means)]
    except LinAlgError:
        raise AssumptionError(
            "a party's design block is rank deficient (collinear columns): XᵀX is singular. "
            "Remove the redundant column(s) or use penalty='ridge'."
        ) from None
    beta = np.zeros(xtx.shape[0])

    def rss() -> float:
        return float(yty - 2.0 * beta @ xty + beta @ xtx @ beta)

    # the intercept's block last, after the centred blocks (block_coordinate_descent's intercept_last)
    order = sorted(range(len(index)), key=lambda k: intercept is not None and intercept in index[k])

    def sweep() -> tuple[float, float]:
        change = 0.0
        for ix, chol, c in ((index[k], chols[k], means[k]) for k in order):
            own = beta[ix]
            # X_kᵀ(y − offset) = X_kᵀy − X_kᵀX β + X_kᵀX_k β_k
            rhs = xty[ix] - xtx[ix] @ beta + xtx[np.ix_(ix, ix)] @ own
            if c.any():  # less c·1ᵀ(y − offset): the centred columns' (a block without the intercept)
                rhs = rhs - c * (xty[intercept] - xtx[intercept] @ beta + xtx[intercept, ix] @ own)
            new = cho_solve(chol, rhs)
            change += float(np.sum(np.abs(new - own)))
            beta[ix] = new
        return change, rss()

    it, converged, trace = run_sweeps(sweep, sweeps, after=on_round)
    return beta, BCDOutcome(etas=[], iterations=it, converged=converged, trace=trace), rss()


def _column_means(xtx: np.ndarray, ix: np.ndarray, intercept: int | None) -> np.ndarray:
    """The means c = X_kᵀ1/n of a block's columns, zeros where the block is not centred (no intercept
    in the model, or the block holds it)."""
    if intercept is None or intercept in ix:
        return np.zeros(len(ix))
    return xtx[intercept, ix] / xtx[intercept, intercept]


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
