"""Block coordinate descent for GLMs on vertically partitioned data (privreg).

van Kesteren, "Private Regression using Block Coordinate Descent" (R package
privreg): K parties hold the column blocks X_1, ..., X_K of the same n rows.
Party k repeatedly fits its own block with the other parties' current linear
predictors as an offset,

    β_k ← argmin_β  (1/n) Σ_i ℓ(y_i, x_ikᵀβ + o_ik) + λ·P(β),   o_k = Σ_{j≠k} X_j β_j,

and shares only its linear predictor η_k = X_k β_k (on its centred columns, below).
Sweeps repeat until a sweep's relative change is below tol (below; privreg
stopped at Σ|Δβ| < tol).  ℓ is half the unit deviance, so
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
offsets replaces X_{-k} (a member of a model with an intercept starts it with
the constant vector, the leader's intercept column: its centred sweeps move the
offsets it receives hardly at all along it).  The result is exact when that span has the full
dimension p_{-k} (reported per block as ``exact``), and otherwise misses only
directions the iterations never excited; the rank is at most the number of
sweeps, so a fit that converges in fewer sweeps than p_{-k} is not exact.
``se="exact"`` (default): after convergence every party shares an orthonormal
basis Q_j of its column space col(X_j) (X_j = Q_j R_j, R_j kept secret), so
U spans col(X_{-k}) exactly and the standard errors equal the pooled ones.
This discloses the column spaces — what the history approaches anyway — and
says so.  ``se="conditional"`` uses (X_kᵀWX_k)⁻¹ (the other blocks held
fixed; too small when blocks correlate).

Centring (:func:`centring`).  The sweeps converge at a rate set by the angles
between the blocks' column spaces.  A column far from zero (a date's days since
1970, about 19 700; a predictor near 1000 with sd 1; mtcars' hp and disp) is
nearly parallel to the leader's intercept column: each sweep then moves the fit
by a small fraction of the way (measured before centring: 10 000 sweeps and 99 %
off R's glm for a binomial or Poisson member column near 1000, 2 098 sweeps for
``am ~ hp + wt`` with hp at a member, 553 for infert's age).  So every party
solves its block, and shares its linear predictor, on its columns less constants
c_k: their means outside DP mode; in DP mode the declared bounds' midpoints,
which are public (a mean of the rows would be a release).  The leader's
intercept absorbs the constants: the parametrisation η = a + Σ_k (X_k − 1c_kᵀ)β_k
has the same slopes, and a = β_0 + Σ_k c_kᵀβ_k, so the sweeps are exact block
coordinate descent in it, for every family and, outside DP mode, every penalty
(the intercept is unpenalized); the limit is the same fit, reached at the speed
the blocks' correlations allow (after centring: 6 to 42 sweeps on those data,
within 1e-7 of R's glm).  At the end each party gives its shift c_kᵀβ_k with its
coefficients and the leader's intercept is a less their sum (:func:`finish_blocks`;
in DP mode from the noised β_k, post-processing, its noise sd the root of
σ_β,0² + Σ_k σ_β,k²‖c_k‖²).  Outside DP mode each member also sends its shift
every sweep, so the leader learns X_kβ_k as before (the history standard
errors' basis takes the offsets on the columns as they are), and the standard
errors are computed on the columns as they are.  The Gaussian fit from pooled
statistics does the same in the cross products (the centred Gram loses digits
to the cancellation of n·c² when a column's mean is 10⁴ times its spread or
more).  Without an intercept in the model nothing is centred.

The stopping rule (:func:`relative_change`, outside DP mode, in one process, from
pooled statistics and over the network alike, where the leader computes it from
the linear predictors it receives and y): a sweep's change of the parties'
linear predictor relative to its size, ‖Δη‖_W/(‖η‖_W + 0.1·√φ) < tol, in the
Fisher information's metric (W the IRLS weights, φ the dispersion): the change
of the coefficients relative to their size in standard-error units.  It is
unchanged when a column is shifted or rescaled or, Gaussian, the response
rescaled; privreg's Σ|Δβ| < tol is not, and stopped a Gaussian fit with y in
units of 10⁻⁶ and a member column times 10⁴ after 9 sweeps 3 % off (measured).
R's glm rule |dev − dev_old|/(|dev| + 0.1) < ε is relative too, but the deviance
is quadratic in the coefficients' error, so at ε = 1e-8 it stopped the linearly
converging sweeps with coefficients up to 2.2e-4 off R's own fit (measured:
8e-5 to 2.2e-4 on mtcars, 3.5e-5 on esoph; this rule within 1e-7).  DP mode has no stopping rule: exactly
``rounds`` sweeps run, a public number, and no change is computed.

DP mode (``eps``/``delta``; binomial or Gaussian family, ridge penalty):
covariates (and, for the Gaussian family, y) are clipped to declared bounds,
every shared η_k (on the columns centred at the bounds' midpoints) is clipped to
[−eta_clip, eta_clip] and noised, the final β_k are noised, and a fixed number
of sweeps runs.  A clipped column less its midpoint lies within ±(hi − lo)/2,
within max(|lo|, |hi|): the row-norm bounds R_k, and so the sensitivities and
noise scales, are those of the columns as they are (conservative).  The zCDP budget is split over
the K·T linear-predictor releases and the K coefficient releases
(:func:`noise_scales`, sensitivities :func:`binomial_ridge_sensitivities`,
:func:`gaussian_ridge_sensitivities`).

What the DP mode estimates.  Its objective is the one above with the ridge
penalty on every coefficient, the intercept included (the sensitivity needs
λ-strong convexity in all of β), on the clipped covariates centred at their
declared midpoints (so the intercept penalized is a, the one of that
parametrisation; with bounds symmetric about 0 nothing moves) and, Gaussian, the
clipped y: as eps → ∞ the noise vanishes and the release tends to that
objective's minimizer (tests/test_vertical_dp_large_eps.py), provided the
fixed ``rounds`` suffice (strongly correlated blocks need more than 10) and
every party's linear predictor stays within ±eta_clip (a clipped η_k passes a
truncated predictor to the others, a bias that no eps removes).  At finite eps
the noise on the shared predictors is not small: σ_η ≥ 2·eta_clip/√(2ρ_η), with
ρ_η = (1 − coef_share)·ρ/(K·T), and Δ₂(η) grows like 2R²/(λ√n) for small λ.  For
the Gaussian family that noise adds variance only (the block fit is linear in
the offset).  For the binomial family it is a bias: each block's logistic fit
takes the noise in its offset for signal and its slopes grow by a factor of
about √(1 + π·s_k²/8) (:func:`slope_inflation`; s_k² = Σ_(j≠k) σ_η,j²; less
under a strong penalty).  Simulated with n = 5000, K = 3, bounds ±3 and 10
rounds, the slopes came out ×2.0 at eps = 10⁶ with lam = 0.001 (factor 2.1),
×1.9 at eps = 10⁴ with lam = 0.01 (2.2) and ×1.3 at eps = 1000 with lam = 0.1
(1.6); at eps = 100 with lam = 0.1, σ_η > eta_clip and they came out ×2.1.
:func:`noise_warning` warns (ChanceWarning) above a 10 % inflation, and print
shows the factor.

The two verbs every front door uses (``docs/architecture.md``, "Adding a
method"): :func:`plan` (the ledger, sensitivities, assumptions, what the
protocol discloses and the noise scales, from public inputs: n, K, the
:class:`PrivregOptions`, the row-norm bounds of :func:`clip_covariates`) and
:func:`release` (the slides' block coordinate descent, steps 1–3, with the
parties simulated in one process on a :class:`Design`, or the Gaussian fit
from :class:`Pooled` sufficient statistics).  The networked protocol
(:class:`dpstats.vertical.Party`) uses the same options, plan, noise scales,
row-id checks and :func:`block_coordinate_descent`.

The package follows these sections, one module each: ``_glm`` (families, penalties, one
block's IRLS solver, the history standard-error pieces), ``_bcd`` (each party's block and
the sweep loop), ``_settings`` (the options, DP mode, row ids, the response), ``_parties``
(who holds which column and term), ``_plan`` (sensitivities, the zCDP split, the plan and
what the protocol discloses) and ``_release`` (clipping, the release, the final summaries).  Every public name is imported here, so
``from dpstats.methods import privreg as m; m.fit_block`` and the like keep working.
"""

from __future__ import annotations

from ._bcd import (
    BCDOutcome,
    BlockFinal,
    LocalBlock,
    Sweeps,
    block_coordinate_descent,
    centring,
    check_no_separation,
    dispersion_estimate,
    gaussian_bcd_statistics,
    pooled_covariance,
    relative_change,
    run_sweeps,
)
from ._glm import (
    FAMILIES,
    BlockProblem,
    Family,
    Penalty,
    SpanBasis,
    block_covariance,
    fit_block,
    gaussian_cholesky,
    lasso_quadratic,
    orthonormal,
)
from ._plan import (
    INFLATION_LIMIT,
    METHOD,
    STATISTICS_MODE_NOTE,
    binomial_ridge_sensitivities,
    PrivregPlan,
    disclosure_text,
    gaussian_ridge_sensitivities,
    largest_coefficients,
    noise_scales,
    noise_warning,
    NoiseRule,
    NOISE_WARNING_AFTER_STEPS,
    plan,
    received_noise,
    slope_inflation,
)
from ._parties import assign_terms, check_statistics_mode, combine, party_columns, response_fill
from ._release import (
    DeclaredScales,
    Design,
    Pooled,
    Released,
    clip_covariates,
    clip_response,
    clip_to_bounds,
    dispersion_and_deviance,
    fit_summaries,
    finish_blocks,
    midpoints,
    not_released_summaries,
    release,
    smallest_bounds,
    statistics_finals,
)
from ._settings import (
    DELTA_REFUSAL,
    PENALTIES,
    SE_METHODS,
    PrivregOptions,
    check_offset,
    check_response,
    check_rows,
    response_frame,
    row_id_hash,
)

__all__ = [
    # the GLM solver of one block
    "Family",
    "FAMILIES",
    "Penalty",
    "lasso_quadratic",
    "BlockProblem",
    "fit_block",
    "gaussian_cholesky",
    "SpanBasis",
    "orthonormal",
    "block_covariance",
    # block coordinate descent
    "BlockFinal",
    "LocalBlock",
    "BCDOutcome",
    "Sweeps",
    "block_coordinate_descent",
    "centring",
    "relative_change",
    "run_sweeps",
    "gaussian_bcd_statistics",
    "check_no_separation",
    "dispersion_estimate",
    "pooled_covariance",
    # settings and checks
    "SE_METHODS",
    "DELTA_REFUSAL",
    "PENALTIES",
    "PrivregOptions",
    "row_id_hash",
    "check_rows",
    "response_frame",
    "check_offset",
    "check_response",
    # the parties and their columns
    "party_columns",
    "combine",
    "assign_terms",
    "check_statistics_mode",
    "response_fill",
    # the plan
    "binomial_ridge_sensitivities",
    "gaussian_ridge_sensitivities",
    "METHOD",
    "STATISTICS_MODE_NOTE",
    "PrivregPlan",
    "plan",
    "noise_scales",
    "largest_coefficients",
    "noise_warning",
    "NoiseRule",
    "NOISE_WARNING_AFTER_STEPS",
    "received_noise",
    "slope_inflation",
    "INFLATION_LIMIT",
    "disclosure_text",
    # the release
    "clip_covariates",
    "midpoints",
    "DeclaredScales",
    "smallest_bounds",
    "clip_response",
    "clip_to_bounds",
    "Design",
    "Pooled",
    "Released",
    "release",
    "finish_blocks",
    "not_released_summaries",
    "dispersion_and_deviance",
    "fit_summaries",
    "statistics_finals",
]
