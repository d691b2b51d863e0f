"""Block coordinate descent: each party's block state and the sweep loop over the parties.

:class:`LocalBlock` (what one party holds and updates), :func:`block_coordinate_descent`
(the slides' steps 1–3, the sweeps until the relative change of :func:`relative_change` is below tol, or a
fixed number in DP mode),
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
    """What a party releases at the end: its coefficients and their covariance.

    ``shift`` = cᵀβ_k and ``shift_sd`` = σ_β‖c‖ (DP mode) for a block solved on its columns less the
    constants c (:class:`LocalBlock`): the leader's intercept is the centred fit's less the sum of every
    block's shift (:func:`finish_blocks`), and its noise sd grows by the shifts' (post-processing of the
    released β_k with public c).
    """

    beta: np.ndarray
    cov: np.ndarray | None
    rank: int
    p_other: int
    shift: float = 0.0
    shift_sd: float = 0.0

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
    (:func:`centring`): the block is solved, and its linear predictor shared, on its columns less
    these constants (module docstring of :mod:`dpstats.methods.privreg`, "Centring"); ``intercept``
    the position of the model's intercept among the columns (the leader's block), whose coefficient
    is then the centred fit's until :func:`finish_blocks` maps it back.
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
    centre: np.ndarray | None = None
    intercept: int | None = None
    beta: np.ndarray = field(init=False)
    basis: SpanBasis | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.beta = np.zeros(self.X.shape[1])
        self._fit_X = self.X if self.centre is None else self.X - self.centre  # the block solve's columns
        self._chol = None
        if self.family.name == "gaussian" and self.penalty.kind != "lasso":
            self._chol = gaussian_cholesky(self._fit_X, self.penalty, self.mask)
        if self.se == "history":
            self.basis = SpanBasis(self.X.shape[0], self.p_other)
            if self.centre is not None and self.intercept is None:  # a member: 1 lies in col(X_{-k})
                self.basis.add(np.ones(self.X.shape[0]))

    def update(self, offset: np.ndarray, seen: np.ndarray | None = None) -> tuple[np.ndarray, float | None]:
        """Fit the block given the others' linear predictor; return (shared η_k, its shift cᵀβ_k).

        η_k is on the block's fitted columns (less ``centre``); the shift (None in DP mode, where it is
        not shared) turns it into X_kβ_k.  ``seen`` (the leader's block): the received offset on the
        other parties' columns as they are, which the history standard errors' basis takes instead.
        """
        if self.basis is not None:
            self.basis.add(offset if seen is None else seen)
        if math.isfinite(self.offset_clip):  # Gaussian DP mode: bounded offsets bound the residuals
            offset = np.clip(offset, -self.offset_clip, self.offset_clip)
        problem = BlockProblem(self._fit_X, self.y, self.family, self.penalty, self.mask, self._chol)
        self.beta = fit_block(problem, offset, self.beta)
        eta = self._fit_X @ self.beta
        if self.sigma_eta > 0:
            # DP mode: nothing else is shared (the stopping rule is a fixed number of sweeps)
            return self.noise.gaussian(np.clip(eta, -self.eta_clip, self.eta_clip), self.sigma_eta), None
        return eta, self.shift(self.beta)

    def shift(self, beta: np.ndarray) -> float:
        """cᵀβ: what the block's centring took out of its linear predictor (0 without centring)."""
        return 0.0 if self.centre is None else float(self.centre @ beta)

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
        """Release β_k (noised in DP mode) and its covariance (not in DP mode), with its shift.

        ``other_basis`` (se="exact"): the other parties' column-space bases, side by side.  The
        covariance is that of the coefficients on the columns as they are.
        """
        if sigma_beta > 0:
            beta = self.noise.gaussian(self.beta, sigma_beta)
            spread = 0.0 if self.centre is None else sigma_beta * float(np.linalg.norm(self.centre))
            return BlockFinal(beta, None, 0, self.p_other, self.shift(beta), spread)
        shift = self.shift(self.beta)
        if self.penalty.kind is not None or self.se == "none":
            return BlockFinal(self.beta.copy(), None, 0, self.p_other, shift)
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
        return BlockFinal(self.beta.copy(), cov, rank, self.p_other, shift)


def centring(X: np.ndarray, intercept: int | None = None, declared: np.ndarray | None = None) -> np.ndarray:
    """The constants a block's columns are centred by for the sweeps (:class:`LocalBlock`) in a model
    with an intercept: the ``declared`` ones (DP mode: the declared bounds' midpoints, public) or,
    outside DP mode, the columns' means; 0 for the intercept's column (``intercept``, the leader's).

    The leader's intercept absorbs the constants, so block coordinate descent on the centred columns
    is exact block coordinate descent in that parametrisation, for every family and, outside DP mode,
    every penalty (slopes unchanged, the intercept unpenalized): its limit is the same fit, reached at
    the speed the blocks' correlations allow.  On the columns as they are, a column far from zero is
    nearly collinear with the intercept and the sweeps crawl (module docstring of
    :mod:`dpstats.methods.privreg`, "Centring").  Without an intercept in the model nothing absorbs
    the constants: the callers centre nothing.

    Examples
    --------
    >>> X = np.column_stack([np.ones(3), [999.0, 1000.0, 1001.0]])
    >>> centring(X, 0).tolist(), centring(X, 0, np.array([0.0, 995.0])).tolist()
    ([0.0, 1000.0], [0.0, 995.0])
    """
    centre = X.mean(axis=0) if declared is None else np.where(np.isfinite(declared), declared, 0.0)
    if intercept is not None:
        centre[intercept] = 0.0
    return centre


# --------------------------------------------------------------------------- the sweep loop
@dataclass(frozen=True)
class Sweeps:
    """When the sweeps stop: the :func:`relative_change` of a sweep below ``tol`` within ``max_iter``
    sweeps, or, with ``fixed`` (DP mode), after exactly ``max_iter`` sweeps (no data-dependent stopping)."""

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


def relative_change(family: Family, eta: np.ndarray, before: np.ndarray, mu: np.ndarray, dev: float) -> float:
    """A sweep's change of the fit relative to its size: ‖η − η_before‖_W / (‖η‖_W + 0.1·√φ).

    η is the parties' linear predictor (the formula's offset left out), ‖v‖²_W = Σ w_i v_i² with the
    IRLS weights w = V(μ) at the sweep's end (1 for the Gaussian family), and φ the dispersion: 1 for
    the binomial and Poisson families, the mean squared residual dev/n for the Gaussian.  In the
    Fisher information's metric ‖Xδ‖²_W/φ = δᵀIδ, so this is the change of the coefficients over the
    coefficients, both in standard-error units, the 0.1 guarding a fit near η = 0.  It does not
    move when a column is shifted or rescaled, nor the Gaussian response; the sweeps stop when it
    falls below ``tol`` (:class:`Sweeps`).  Not R's glm rule |Δdev|/(|dev| + 0.1) < ε: the deviance
    is quadratic in the coefficients' error, and block coordinate descent converges linearly (not as
    Newton's steps), so at ε = 1e-8 that rule stopped with coefficients up to 2.2e-4 off R's glm on
    mtcars and esoph (measured), this one within 1e-7.

    Examples
    --------
    >>> from dpstats.methods.privreg import FAMILIES
    >>> fam = FAMILIES["gaussian"]
    >>> eta, dev = np.array([1.0, 2.0, 3.0]), 0.5
    >>> f"{relative_change(fam, eta, eta - 1e-9, eta, dev):.4g}"
    '4.579e-10'
    >>> f"{relative_change(fam, 1e-6 * eta, 1e-6 * (eta - 1e-9), 1e-6 * eta, 1e-12 * dev):.4g}"  # y in 1e-6
    '4.579e-10'
    """
    w = np.maximum(family.variance(mu), _W_MIN)
    phi = 1.0 if family.fixed_dispersion else dev / eta.shape[0]
    step = math.sqrt(float(np.sum(w * (eta - before) ** 2)))
    size = math.sqrt(float(np.sum(w * eta**2))) + 0.1 * math.sqrt(max(phi, 0.0))
    if size > 0:
        return step / size
    return 0.0 if step == 0 else math.inf


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
    """Sweep over the blocks until the :func:`relative_change` of a sweep < tol (or exactly ``max_iter``
    sweeps if ``sweeps.fixed``).

    ``blocks`` are objects with ``update(offset, seen) -> (eta_k, shift_k)``: local blocks or network
    proxies of remote parties.  Only their linear predictors (on their centred columns, with the
    shifts cᵀβ_k that centring took out; :class:`LocalBlock`) reach this loop.  The first block is the
    leader's (its intercept absorbs the others' centring); its history basis is given the offset on
    the others' columns as they are (``seen``).  ``on_round`` receives each sweep's trace row
    (progress, logging).  ``offset`` is the formula's ``offset()`` (R's glm offset): a fixed part of
    every linear predictor.  ``deviance`` False (DP mode): the trace's relative change and deviance
    are NaN, not computed: both are functions of the raw y with no noise of their own, which a DP fit
    does not release, and the sweeps are a fixed number.
    """
    n = y.shape[0]
    base = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    etas = [np.zeros(n) for _ in blocks]
    shifts: list[float | None] = [0.0 for _ in blocks]
    state = {"total": base.copy(), "eta": np.zeros(n)}

    def sweep() -> tuple[float, float]:
        total = state["total"]
        for k, block in enumerate(blocks):
            offset = total - etas[k]
            others = [s for j, s in enumerate(shifts) if j != k]
            seen = offset + sum(others) if k == 0 and None not in others else None
            etas[k], shifts[k] = block.update(offset, seen)
            total = offset + etas[k]
        before, state["eta"] = state["eta"], np.sum(etas, axis=0)
        state["total"] = base + state["eta"]
        if not deviance:
            return math.nan, math.nan
        dev = family.deviance(y, state["total"])
        return relative_change(family, state["eta"], before, family.linkinv(state["total"]), dev), dev

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
    """Repeat ``sweep() -> (relative change, deviance)`` until the change < ``sweeps.tol`` (or
    ``max_iter`` sweeps).

    With ``sweeps.fixed`` exactly ``max_iter`` sweeps run.  Each sweep's trace row
    goes to ``after`` (which may raise to stop the fit).  Returns (sweeps run,
    converged, trace).
    """
    trace: list[dict] = []
    it, converged = 0, False
    for it in range(1, sweeps.max_iter + 1):
        change, deviance = sweep()
        row = {"iteration": it, "relative_change": change, "deviance": deviance}
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
    (Gaussian, unpenalized), written in the statistics.  With the ``intercept``'s column index every
    column is centred by its mean (:func:`centring`): Z = X − 1cᵀ, c = Xᵀ1/n (0 for the intercept), so
    ZᵀZ = XᵀX − (Xᵀ1)cᵀ − c(1ᵀX) + n·ccᵀ and Zᵀy = Xᵀy − c·1ᵀy.  Block k's update is
    θ_k = (Z_kᵀZ_k)⁻¹(Z_kᵀy − Σ_{j≠k} Z_kᵀZ_jθ_j), blocks in order, each using the others' latest θ;
    the sweep's :func:`relative_change` is ‖ZΔθ‖/(‖Zθ‖ + 0.1·√(RSS/n)) and the trace's deviance
    RSS = yᵀy − 2θᵀZᵀy + θᵀZᵀZθ.  The coefficients on the columns as they are: θ, with the
    intercept less cᵀθ.  Returns (β, outcome without linear predictors, RSS).  ``on_round`` receives
    each sweep's trace row.

    Examples
    --------
    >>> X = np.column_stack([np.ones(6), [0., 1, 2, 3, 4, 5], [1., 0, 2, 1, 3, 1]])
    >>> y = X @ np.array([1., 2., -1.])
    >>> blocks = [np.array([0, 1]), np.array([2])]
    >>> b, out, rss = gaussian_bcd_statistics(X.T @ X, X.T @ y, float(y @ y), blocks, intercept=0)
    >>> b.round(6).tolist(), out.converged
    ([1.0, 2.0, -1.0], True)
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    gram, zty, c = _centred_statistics(xtx, xty, intercept)
    try:
        chols = [cho_factor(gram[np.ix_(ix, ix)]) for ix in index]
    except LinAlgError:
        raise AssumptionError(
            "a party's design block is rank deficient (collinear columns): XᵀX is singular. "
            "Remove the redundant column(s) or use penalty='ridge'."
        ) from None
    theta = np.zeros(xtx.shape[0])
    n = 0.0 if intercept is None else float(xtx[intercept, intercept])

    def rss() -> float:
        return float(yty - 2.0 * theta @ zty + theta @ gram @ theta)

    def sweep() -> tuple[float, float]:
        before = theta.copy()
        for ix, chol in zip(index, chols):
            # Z_kᵀ(y − offset) = Z_kᵀy − Z_kᵀZ θ + Z_kᵀZ_k θ_k
            theta[ix] = cho_solve(chol, zty[ix] - gram[ix] @ theta + gram[np.ix_(ix, ix)] @ theta[ix])
        step, dev = theta - before, rss()
        spread = 0.1 * math.sqrt(max(dev, 0.0) / n) if n > 0 else 0.0
        size = math.sqrt(max(float(theta @ gram @ theta), 0.0)) + spread
        change = math.sqrt(max(float(step @ gram @ step), 0.0))
        return (change / size if size > 0 else (0.0 if change == 0 else math.inf)), dev

    it, converged, trace = run_sweeps(sweep, sweeps, after=on_round)
    beta = theta.copy()
    if intercept is not None:
        beta[intercept] -= float(c @ theta)
    return beta, BCDOutcome(etas=[], iterations=it, converged=converged, trace=trace), rss()


def _centred_statistics(
    xtx: np.ndarray, xty: np.ndarray, intercept: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ZᵀZ, Zᵀy, c) of the columns centred by their means (:func:`gaussian_bcd_statistics`); the
    statistics as they are and c = 0 without an intercept."""
    c = np.zeros(xtx.shape[0])
    if intercept is None:
        return xtx, xty, c
    ones = xtx[:, intercept]  # Xᵀ1
    c = ones / ones[intercept]
    c[intercept] = 0.0
    gram = xtx - np.outer(ones, c) - np.outer(c, ones) + ones[intercept] * np.outer(c, c)
    return gram, xty - c * xty[intercept], c


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
