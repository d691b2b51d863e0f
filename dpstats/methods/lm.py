"""Private linear regression from noisy sufficient statistics, with parametric-bootstrap intervals.

The release (sufficient statistics perturbation, with an adaptive ridge in the
manner of AdaSSP, Wang 2018, "Revisiting differentially private linear
regression", Algorithm 2):

1. Every design column x_j and the response y are clipped to their declared
   bounds and mapped onto [-1, 1] (z_j = (x_j - c_j)/h_j, u = (y - c_y)/h_y);
   v = (1, z_1, ..., z_p, u) is one row's vector, with D = p + 1 entries that
   vary.  The statistic is the upper triangle of A = Σ v vᵀ without its
   (1, 1) entry n: the stacked [XᵀX, Xᵀy, yᵀy] of the bounded design with its
   intercept column.  n is public (replace-one-row), so it carries no noise.
2. A private lower bound on λ_min of the design block F (XᵀX in fitting
   coordinates) spends ``lambda_share`` of the budget; the ridge is
   λ = max(0, B − λ̃_min), B a bound on the spectral norm of the noise added
   to F that holds with probability 1 − ``failure_prob``.
3. θ̂ = (F̃ + λ I)⁻¹ F̃_y, mapped back to the formula's coefficients by the
   public affine map of the bounds.

Sensitivities under replace-one-row (n public), derived here once.

*Stacked statistic.*  Replacing row v by v' changes A by M = v vᵀ − v' v'ᵀ.
Each off-diagonal entry appears once in the released triangle and twice in
M, so ‖Δ‖₂² = (‖M‖_F² + Σ_i M_ii²)/2.  With v_0 = 1 and |v_i| ≤ 1,
‖M‖_F² = ‖v‖⁴ + ‖v'‖⁴ − 2(vᵀv')² ≤ 2(D + 1)² and Σ_i M_ii² ≤ D (M_00 = 0,
|v_i² − v'_i²| ≤ 1), hence

    Δ₂ = √((D + 1)² + D/2).

For the l1 norm, entry by entry: |v_i² − v'_i²| ≤ 1 (D diagonal entries),
|v_i − v'_i| ≤ 2 (D entries of the intercept row), |v_i v_j − v'_i v'_j| ≤ 2
(D(D − 1)/2 entries), hence Δ₁ = D + 2D + D(D − 1) = D(D + 2).

*λ_min.*  λ_min(F − w wᵀ + w' w'ᵀ) lies within max(‖w‖², ‖w'‖²) ≤ R² of
λ_min(F) (Weyl), R² the largest squared row norm in fitting coordinates:
p + 1 with an intercept (every coordinate in [-1, 1]), Σ_j (max(|lo_j|,
|hi_j|)/h_j)² without one.

Mechanisms: delta > 0 — the Gaussian mechanism accounted in zCDP (ρ from
(eps, delta) once; both steps are Gaussian, so exactly, as one Gaussian of μ² = 2ρ:
:func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`;
σ = Δ/√(2ρ_step), :func:`~dpstats.privacy.calibration.zcdp_gaussian_sigma`);
delta = 0 — the Laplace mechanism with scale Δ₁/eps_step, on the stacked statistic
or block by block (below).  eps = inf fits ordinary least squares with the classical
formulas (no noise, no ridge).

*Pure DP, block by block.*  The l1 bound splits over the statistic's three blocks: the
design block (XᵀX with the intercept row Σz) has Δ₁ = p + p(p − 1) + 2p = p(p + 2)
(diagonal entries move by at most 1, the others by at most 2), Xᵀy with Σu has
Δ₁ = 2(p + 1) and yᵀy has Δ₁ = 1; they add up to D(D + 2).  Released block by block
(three Laplace releases, basic composition), each gets the share of eps_stat that
minimises the estimate's error, about G⁻¹(e_y − E θ) (G the design block, e_y and E the
noise on Xᵀy and on G), whose variance grows as b_y² + b_X² ‖θ‖²: minimising
Σ_b c_b Δ₁,b²/eps_b² subject to Σ_b eps_b = eps_stat gives eps_b ∝ (c_b Δ₁,b²)^(1/3),
c = (‖θ‖², 1, 1), with ‖θ‖² taken as THETA_SQ = 1 (public; unit coordinates).  The
design block then carries more noise than in the stacked release, which the bootstrap's
data model recovers less well where the ridge is on, so the split is used only where its
noise bound B (:func:`spectral_bound`) is at most SPLIT_MAX_NOISE = 0.3 of the public n;
elsewhere the stacked release is kept.  Against diffprivlib's functional mechanism at the
same eps and bounds the split gives 0.6–1.0 times its coefficient error where the
stacked release gave 1.0–1.6 times (``benchmarks/bench_lm_vs_diffprivlib.py``), and the
coverage grid holds (``tests/test_lm_coverage.py``).

Intervals (post-processing, no privacy cost): a parametric bootstrap in the
manner of Ferrando, Wang & Sheldon (2022).  From the released statistics a
Gaussian model of the data is fitted (rows z ~ N(μ̂, Σ̂) in the unit box, Σ̂ the
released covariance shrunk by the known noise energy, :func:`shrunk_covariance`;
u = (1, z)ᵀη + e, e ~ N(0, σ²)); at the public n its data-level sufficient
statistics are drawn from their exact sampling law (Σ z ~ N(nμ̂, nΣ̂), the
centred scatter ~ Wishart(n − 1, Σ̂), Σ (1, z)e ~ N(0, σ² G), Σ e² given
those by the χ²_{n−p−1} residual), fresh privacy noise of the same scales is
added, and the whole release (λ_min bound, ridge, fit) is rerun.

The ridge shrinks: on average the release gives about Jθ + c, J = E[(F̃ + λI)⁻¹F]
(θ* is affine in the model's θ for fixed draws, so J and c are estimated
exactly from the draws).  Simulating at θ̂ itself would understate the bias
by the factor J (the plain percentile and pivot intervals under-cover badly
whenever the ridge is on).  So the bootstrap is *calibrated*: pass 1 at θ̂
gives J and c, the calibrated θ̃ solves Jθ̃ + c = θ̂, and pass 2 at θ̃ gives
the law of J⁻¹(θ* − E θ*), the pivot θ̂-deviation mapped to the θ scale.  The
interval is the pivot (basic) interval θ̃ − [q_{1−α/2}, q_{α/2}] of it, so it
widens by J⁻¹ where the privacy noise forces a strong ridge (an honest, wide
interval); with no ridge and little noise J ≈ I and it is the usual pivot
interval.  p.value inverts the same interval at 0.

*Std. Error and vcov* are read from the same quantiles as the interval, so that the columns hang
together as R's printCoefmat presents them: std.error is the interval's half-width over the normal
quantile, (q_{1−α/2} − q_{α/2})/(2 z_{1−α/2}) of the law (:func:`quantile_scales`), so Estimate ±
z·std.error spans the interval's width; statistic is θ̃/std.error; ``vcov()`` is D R D, D the
std.errors and R the draws' Gaussian rank correlation (:func:`rank_correlation`), so that its
diagonal is std.error² and a Wald test from ``coef()`` and ``vcov()`` (lmtest's coeftest) gives the
table's statistic.  The standard deviation and Pearson covariance of the draws were used before; where
the released Gram is near singular in a few replicates, J⁻¹ maps them to extreme draws that set the
s.d. and leave the quantiles alone (R's swiss, ``Fertility ~ .`` at eps = 8, seed 1: s.d. 14–24
times the scale the interval implies, and Est./SE no longer ordered the p-values).  Where the law
is near normal the two scales agree within Monte Carlo error (1 000 replicates: about 3% apart); where
its tails are Laplace-like (delta = 0 fits whose noise dominates the draws: quakes at eps = 1,
excess kurtosis 1.5–4.5) the quantile scale is 1–10% the larger, as the interval is wider.  Where the law is skewed (noise-dominated fits: the pivot
interval is far from symmetric about θ̃) no symmetric scale makes |statistic| order the p-values,
which follow the interval; the fit then says the noise dominates (below).  The reported estimate
(``coef()``, print's Estimate, ``tidy()``'s estimate) is the calibrated θ̃, so that coef, vcov,
confint and tidy describe one estimator; the AdaSSP ridge estimate θ̂ (smaller in mean squared
error than θ̃ where the ridge is strong) is kept as ``ridge_estimates`` (print's Ridge column).
``interval="percentile"`` takes the quantiles of θ̃ plus that law instead.

Limits, stated from released values (:func:`release_warnings`).  The data model is a plug-in:
with its Σ̂ taken as known, J is computed at Σ̂, not at the data's Σ.  Where the released
covariance does not resolve its smallest eigenvalues from the noise and the ridge dominates there
(the "data" rule of :func:`release_warnings`), J⁻¹ along those directions (1 + λ/(n s) for an
eigenvalue s) depends on eigenvalues and eigenvectors the release does not determine, and the
plug-in under-covers for collinear predictors: on the Gaussian twin of sklearn's diabetes design
(10 predictors; condition number about 1 300 in unit coordinates, s1–s2 correlated 0.90) the
slopes' mean coverage was 0.81 (s1 0.50) at n = 5 000, eps = 4 (Laplace, 200 replicates) and 0.87
at n = 50 000, while the same bootstrap with the design's true covariance covered 0.96–0.97.  So
there the bootstrap carries Σ̂'s own uncertainty (:func:`rereleased_designs`): each replicate's
design model is the released design block *re-released*, Ã plus fresh noise of the plan's scale,
its covariance shrunk as Σ̂ is, for its noise of variance 2τ² about the data's, and floored at
UNRESOLVED_FLOOR_SHARE = 0.1 of τ√p instead of 1/2.  The noise being symmetric, Ã + E* has the
law of Ã − E*: a design the release could have come from, so J and the pivot's law average over
the designs the release cannot tell apart instead of fixing one.  Neither part alone repairs it
(the re-release with the plug-in's shrinkage and 1/2 floor: 0.82 on the twin; the lower floor
alone: 0.87–0.90 on the diabetes rows, other slopes' coverage falling).  With both the twin
covers 0.98 (every slope at least 0.92) at n = 5 000 and 0.96 (at least 0.925) at n = 50 000,
conservatively where the design is least resolved; the grid's cells where the rule fires moved
by at most 4% in width.  The rule is public post-processing (released Ã, the ridge, n, the noise
scale), so the switch costs no privacy, and the fits say so in a note (print and summary; not a
warning, for the rule also fires on small correlated designs whose intervals cover), as do fits
whose ridge exceeds n times the released mean variance of the scaled predictors (the noise
dominates: the ridge more than halves the estimates; that one also warns, a
:class:`~dpstats.errors.ChanceWarning`, as dp_gmm and vertical_glm warn).  tests/test_lm_coverage.py, ``test_diabetes_twin_*``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats as sps

from .._kernels import one_blas_thread
from ..privacy.accountant import BudgetPlan, LedgerEntry
from ..privacy.calibration import zcdp_gaussian_sigma
from ..errors import FormulaError, PrivacyParameterError
from ..formula import missing_counts, names_offset, refuse_multivariate_response, split_formula
from ..geometry import Box
from ..privacy.bounds import PrivateBounds, bounds_step, is_auto
from ..privacy.plan import Plan
from ..schema import PublicN, Schema
from ..stats import CrossStats
from ..validation import check_delta, check_eps, check_fraction, check_neighbouring
from ._aliased import LM_TOL, estimable_columns, estimable_from_gram
from ._coordinates import DesignCoordinates
from ._options import Options

LAMBDA_SHARE = 0.1
UNRESOLVED_FLOOR_SHARE = 0.1  # re-released design models: eigenvalue floor in τ√p (unresolved designs)
THETA_SQ = 1.0  # ‖θ‖² in unit coordinates that the Laplace split is tuned for (module docstring)
SPLIT_MAX_NOISE = 0.3  # the split is used where its design noise bound B is at most this share of n
FAILURE_PROB = 0.05
INTERVALS = ("pivot", "percentile")


@dataclass(frozen=True, kw_only=True)
class Coordinates(DesignCoordinates):
    """dp_lm's fitting coordinates: the design's (:mod:`dpstats.methods._coordinates`) and the
    response's, mapped from its declared bounds (centre ``y_center``, half-width ``y_half``).

    With an intercept, w = (1, z) and r = u; without one, w_j = x_j/h_j and r = y/h_y.
    ``transform()`` maps the unit-box statistics' v = (1, z, u) to (w, r); ``to_original`` maps θ
    (fitting) to β (formula).  The response's fields are keyword-only.
    """

    y_center: float
    y_half: float

    def transform(self) -> np.ndarray:
        """T with (w, r) = T v, shape (k + 1, p + 2)."""
        p = self.p
        if self.intercept:
            return np.eye(p + 2)
        T = np.zeros((p + 1, p + 2))
        T[:p, 0] = self.x_center / self.x_half
        T[:p, 1 : p + 1] = np.eye(p)
        T[p, 0] = self.y_center / self.y_half
        T[p, p + 1] = 1.0
        return T

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, L) with β = a + L θ: the design's map scaled by the response's half-width, and the
        intercept shifted by its centre."""
        a, L = super().linear()
        if self.intercept:
            a[0] = self.y_center
        return a, self.y_half * L


@dataclass
class LMPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with the public noise scales the release and the bootstrap use.

    ``noise`` is "gaussian", "laplace" or "none"; ``stat_scale`` is σ (Gaussian)
    or b (Laplace) of every released entry of the stacked statistic;
    ``lambda_scale`` the same for the λ_min release.
    """

    coords: Coordinates | None = None
    options: LMOptions | None = None  # the call's options (conf_level, n_boot, interval for the release)
    noise: str = "none"
    stat_scale: float = 0.0  # the design block's (XᵀX with the intercept row); Gaussian: every entry's
    xy_scale: float = 0.0  # the Xᵀy block's (with Σu)
    yy_scale: float = 0.0  # yᵀy's
    lambda_scale: float = 0.0
    failure_prob: float = FAILURE_PROB
    l2_sensitivity: float = 0.0
    l1_sensitivity: float = 0.0
    lambda_sensitivity: float = 0.0

    @property
    def nonprivate(self) -> bool:
        return self.noise == "none"

    def stat_sd(self) -> float:
        """Standard deviation of the noise on one released entry of the design block."""
        return self.stat_scale * (math.sqrt(2.0) if self.noise == "laplace" else 1.0)

    def entry_scales(self) -> np.ndarray:
        """The noise scale of every entry of the released upper triangle (``np.triu_indices``; n's is 0)."""
        iu, blocks = statistic_blocks(self.coords.p + 2)
        scales = np.zeros(iu[0].size)
        for block, scale in zip(blocks, (self.stat_scale, self.xy_scale, self.yy_scale)):
            scales[block] = scale
        return scales


def statistic_blocks(m: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, ...]]:
    """The upper triangle's indices and its three blocks as masks: the design block XᵀX with the
    intercept row (Σz, without n), Xᵀy with Σu, and yᵀy."""
    iu = np.triu_indices(m)
    row, col = iu
    yy = (row == m - 1) & (col == m - 1)
    xy = (col == m - 1) & ~yy
    xx = ~(yy | xy | ((row == 0) & (col == 0)))
    return iu, (xx, xy, yy)


def laplace_shares(p: int) -> tuple[float, float, float]:
    """The shares of the statistic's eps for XᵀX, Xᵀy and yᵀy under the Laplace mechanism
    (module docstring, "Pure DP, block by block"): w_b ∝ (c_b Δ₁,b²)^(1/3), c = (THETA_SQ, 1, 1)."""
    weights = [(d * d * c) ** (1.0 / 3.0) for d, c in zip(block_l1_sensitivities(p), (THETA_SQ, 1.0, 1.0))]
    total = sum(weights)
    return tuple(w / total for w in weights)


def block_l1_sensitivities(p: int) -> tuple[float, float, float]:
    """Δ₁ of XᵀX (with Σz), Xᵀy (with Σu) and yᵀy under replace-one-row in the unit box (module docstring)."""
    return float(p * (p + 2)), float(2 * (p + 1)), 1.0


def stacked_sensitivities(p: int) -> tuple[float, float]:
    """(Δ₂, Δ₁) of the stacked statistic for p design columns (module docstring).

    Examples
    --------
    >>> [round(v, 4) for v in stacked_sensitivities(2)]
    [4.1833, 15.0]
    """
    D = p + 1
    return math.sqrt((D + 1) ** 2 + D / 2.0), float(D * (D + 2))


INFERENCE_MIN_LEVEL = 0.95  # bounds="auto" must keep at least this share of each column inside each bound


def require_covering_bounds(step: PrivateBounds) -> PrivateBounds:
    """Make a private-bounds step refuse levels below INFERENCE_MIN_LEVEL: clipping biases every coefficient."""
    step.min_level, step.min_level_for = INFERENCE_MIN_LEVEL, "dp_lm (clipping biases the coefficients)"
    return step


def check_auto_bounds_level(options: Any, n: int, d: int, shown: bool) -> None:
    """Refuse, before any spend, a ``bounds="auto"`` dp_lm on n rows and at most d terms that would clip too much.

    ``options``: the caller's record (its ``bounds``, ``eps`` and ``delta``).  The level a box resolves falls
    with the number of quantiles it releases, which is largest at d terms, so checking d covers every
    smaller selected set.  ``shown`` False: d follows levels read from the rows, and the refusal quotes
    nothing that follows from it (:meth:`~dpstats.privacy.bounds.PrivateBounds.plan_box`).
    """
    if not is_auto(options.bounds):
        return
    step, _, _ = bounds_step(
        options.bounds, options.eps, options.delta, bounds_eps=None, neighbouring="replace"
    )
    step.columns_shown = shown
    require_covering_bounds(step).plan_box(n, d, response=True)


@dataclass(frozen=True)
class LMOptions(Options):
    """dp_lm's options, checked once (defaults: the signature of :func:`dpstats.dp_lm`)."""

    PUBLIC_N = PublicN("dp_lm", "n is exact in the released XᵀX (its intercept entry)")
    GAUSSIAN_PLAN = True  # delta > 0: BudgetPlan(eps, delta, gaussian_only); delta = 0 is Laplace

    formula: str
    eps: float
    delta: float
    bounds: Any
    conf_level: float
    n_boot: int
    interval: str
    lambda_share: float
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> LMOptions:
        """Cheap checks of dp_lm's arguments, before the data is read."""
        check_neighbouring(given["neighbouring"], supported=("replace",))
        refuse_multivariate_response(given["formula"], "dp_lm")
        n_boot = given["n_boot"]
        if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 100:
            raise PrivacyParameterError(
                f"n_boot must be a whole number >= 100 (bootstrap replicates), got {n_boot!r}."
            )
        if given["interval"] not in INTERVALS:
            raise PrivacyParameterError(
                f"interval must be one of {list(INTERVALS)}, got {given['interval']!r}."
            )
        options = cls.from_given(
            given,
            eps=check_eps(given["eps"], allow_inf=True),
            delta=check_delta(given["delta"]),
            conf_level=check_fraction(given["conf_level"], "conf_level", low_open=True),
            lambda_share=check_fraction(given["lambda_share"], "lambda_share", low_open=True),
            n_boot=int(n_boot),
        )
        refuse_private_offset(options.formula, options.eps)
        return options


def data_range_fix(formula: Any) -> str:
    """The advice of the data-range step (bounds left undeclared): the response a dp_lm always needs
    bounds for, by its name in the formula, and every numeric variable.

    Examples
    --------
    >>> data_range_fix("breaks ~ tension")
    "declare public bounds of the response and of every numeric variable, e.g. bounds={'breaks': (lo, hi)}"
    """
    lhs = split_formula(formula, False)[0] if isinstance(formula, str) and "~" in formula else None
    example = f", e.g. bounds={{{lhs.strip()!r}: (lo, hi)}}" if lhs else ""
    return f"declare public bounds of the response and of every numeric variable{example}"


def refuse_private_offset(formula: Any, eps: float) -> None:
    """A private fit refuses ``offset()`` before anything is read or spent; eps = inf fits it as ``lm``
    does (the response less the offset, :func:`dpstats.engines.offset_response`).

    Every sensitivity and the λ_min rule here are those of the response clipped to its declared bounds;
    with an offset the regression is of y − offset, whose bounds nobody declared (y's bounds and the
    offset's do not bound it unless the offset's are declared too, and a bound read from the rows would
    be a release)."""
    if math.isfinite(eps) and names_offset(formula):
        raise FormulaError(
            f"dp_lm fits offset() ('{formula}') at eps = inf only, as lm does. A private fit does not offer "
            "it: its noise is calibrated to the response's declared bounds, and with an offset the response "
            "is y minus the offset, which no declared bound covers. Instead: add y minus the offset to the "
            "data as a column of its own and fit it with its public bounds declared (the same estimates as "
            "lm with the offset); or put the offset's variable in the design with declared bounds (its slope "
            "is then estimated, not fixed at 1); or fit without privacy (eps = Inf). Nothing was read or spent."
        )


#: What the parametric bootstrap's intervals and p-values rest on (the privacy statement lists them, as
#: dp_glm's lists its model's): the Gaussian model of the rows and errors it simulates from.
BOOTSTRAP_ASSUMPTIONS = (
    "the intervals and p-values come from a parametric bootstrap under a linear model with independent "
    "Gaussian errors of equal variance (y = Xβ + e, e ~ N(0, σ²)): with errors that are heteroscedastic, "
    "heavy-tailed or dependent, or a mean not linear in the terms, they need not cover",
    "the bootstrap draws the design's rows from a Gaussian fitted to the released statistics: binary, "
    "factor or skewed columns are not Gaussian, and the coverage there is approximate",
)
DECLARED_BOUNDS_ASSUMPTION = (
    "the declared bounds contain the data: clipped values bias the coefficients, and the intervals then "
    "cover the coefficients of the clipped data, not of the raw data"
)


def plan(
    options: LMOptions,
    coords: Coordinates,
    *,
    engine: str = "in-memory",
    failure_prob: float = FAILURE_PROB,
    clipped_at: float | None = None,
    n: int | None = None,
) -> LMPlan:
    """The privacy plan of one dp_lm release (public inputs only): ``options``' eps, delta and
    lambda_share, the public coordinates of the bounds.

    Examples
    --------
    >>> c = Coordinates(np.zeros(2), np.ones(2), True, y_center=0.0, y_half=1.0)
    >>> pl = plan(LMOptions.partial(eps=1.0, delta=0.0, lambda_share=LAMBDA_SHARE), c)
    >>> [round(e.eps, 3) for e in pl.entries], pl.noise
    ([0.1, 0.9], 'laplace')
    """
    pl = _plan(options, coords, engine, failure_prob, n)
    pl.options = options
    if math.isfinite(options.eps):  # the bootstrap's model (module docstring, "Intervals")
        pl.assumptions.extend(BOOTSTRAP_ASSUMPTIONS)
    if clipped_at is not None:  # bounds released privately at the clipped_at and 1 - clipped_at quantiles
        pl.assumptions.append(
            f"the intervals cover the coefficients of the data clipped to the private bounds (near the "
            f"{1 - clipped_at:g} and {clipped_at:g} quantiles), not of the raw data: clipping attenuates them; "
            "declared bounds that contain the data avoid this"
        )
    elif math.isfinite(options.eps):
        pl.assumptions.append(DECLARED_BOUNDS_ASSUMPTION)
    return pl


def _plan(options: LMOptions, coords: Coordinates, engine: str, failure_prob: float, n: int | None) -> LMPlan:
    eps, delta, lambda_share = options.eps, options.delta, options.lambda_share
    if math.isinf(eps):
        return _nonprivate_plan(coords, engine)
    l2, l1 = stacked_sensitivities(coords.p)
    r2 = coords.row_norm_sq()
    stat_text = f"Δ₂ = √((D+1)² + D/2) = {l2:.4g}, D = p + 1 = {coords.p + 1} (replace-one, unit box)"
    lam_text = f"Δ = R² = {r2:.4g} (Weyl; replace-one, largest squared row norm)"
    lam_step = "private lower bound on λ_min(XᵀX) (chooses the ridge λ, AdaSSP)"
    stat_step = (
        "stacked [XᵀX, Xᵀy, yᵀy] of the bounded design with intercept column (upper triangle, n exact)"
    )
    if delta > 0:
        budget = BudgetPlan(eps, delta, gaussian_only=True)
        rho_lam = budget.add(lam_step, "Gaussian (zCDP)", lambda_share, lam_text)
        rho_stat = budget.add(stat_step, "Gaussian (zCDP)", 1.0 - lambda_share, stat_text)
        entries = budget.entries()
        noise, stat_scale, lam_scale = (
            "gaussian",
            zcdp_gaussian_sigma(l2, rho_stat),
            zcdp_gaussian_sigma(r2, rho_lam),
        )
        how = (
            f"ρ = {budget.rho:.4g}-zCDP from (eps, delta), split {lambda_share:g} / {1 - lambda_share:g}; "
            f"both steps Gaussian: {budget.conversion}"
        )
    else:
        split = n is not None and _split_noise(coords, eps, lambda_share, failure_prob) <= SPLIT_MAX_NOISE * n
        if split:
            entries, (stat_scale, xy_scale, yy_scale), lam_scale = _laplace_plan(
                coords, eps, lambda_share, lam_text
            )
            shares = "/".join(f"{e.eps / eps:.3g}" for e in entries)
            how = f"eps split {shares} (λ_min, XᵀX, Xᵀy, yᵀy, block by block; basic composition)"
        else:
            eps_lam, eps_stat = eps * lambda_share, eps - eps * lambda_share
            l1_text = f"Δ₁ = D(D+2) = {l1:.4g}, D = {coords.p + 1} (replace-one, unit box)"
            entries = [
                LedgerEntry(
                    step=lam_step,
                    mechanism="Laplace",
                    eps=eps_lam,
                    sensitivity=lam_text,
                    event={"kind": "laplace", "noise_multiplier": 1.0 / eps_lam},  # scalar, scale R²/eps_lam
                ),
                LedgerEntry(
                    step=stat_step,
                    mechanism="Laplace",
                    eps=eps_stat,
                    sensitivity=l1_text,
                    event={"kind": "pure", "eps": eps_stat},  # vector Laplace: pure eps (privacy.events)
                ),
            ]
            stat_scale, lam_scale = l1 / eps_stat, r2 / eps_lam
            xy_scale = yy_scale = stat_scale
            how = f"eps split {lambda_share:g} / {1 - lambda_share:g} (basic composition)"
        noise = "laplace"
    return LMPlan(
        method="DP linear regression (noisy sufficient statistics, AdaSSP ridge)",
        neighbouring="replace",
        entries=entries,
        sensitivities={
            "stacked [XᵀX, Xᵀy, yᵀy] (l2)": stat_text,
            "stacked [XᵀX, Xᵀy, yᵀy] (l1)": f"Δ₁ = D(D+2) = {l1:.4g} (replace-one, unit box; entry by entry)",
            "λ_min(XᵀX)": lam_text,
        },
        notes=_notes(coords, engine, how, failure_prob),
        coords=coords,
        noise=noise,
        stat_scale=stat_scale,
        xy_scale=xy_scale if noise == "laplace" else stat_scale,
        yy_scale=yy_scale if noise == "laplace" else stat_scale,
        lambda_scale=lam_scale,
        failure_prob=failure_prob,
        l2_sensitivity=l2,
        l1_sensitivity=l1,
        lambda_sensitivity=r2,
    )


def _split_noise(coords: Coordinates, eps: float, lambda_share: float, failure_prob: float) -> float:
    """B of :func:`spectral_bound` for the design block's noise under the block-by-block split (public inputs)."""
    share = laplace_shares(coords.p)[0]
    b = block_l1_sensitivities(coords.p)[0] / (eps * (1 - lambda_share) * share)
    T = coords.transform()[:-1, :-1]
    tail = 2.0 * math.sqrt(coords.p + 1) + 2.0 * math.sqrt(math.log(1.0 / failure_prob))
    return float(np.linalg.norm(T, 2)) ** 2 * math.sqrt(2.0) * b * tail


def _laplace_plan(
    coords: Coordinates, eps: float, lambda_share: float, lam_text: str
) -> tuple[list[LedgerEntry], tuple[float, float, float], float]:
    """Pure DP: the ledger (λ_min, then the three blocks), the blocks' Laplace scales and λ_min's."""
    eps_lam, eps_stat = eps * lambda_share, eps - eps * lambda_share
    entries = [
        LedgerEntry(
            step="private lower bound on λ_min(XᵀX) (chooses the ridge λ, AdaSSP)",
            mechanism="Laplace",
            eps=eps_lam,
            sensitivity=lam_text,
            event={"kind": "laplace", "noise_multiplier": 1.0 / eps_lam},  # scalar, scale R²/eps_lam
        )
    ]
    p, scales = coords.p, []
    blocks = ("XᵀX and Σz (upper triangle, n exact)", "Xᵀy and Σy", "yᵀy")
    texts = ("Δ₁ = p(p+2)", "Δ₁ = 2(p+1)", "Δ₁ = 1")
    for block, text, delta1, share in zip(blocks, texts, block_l1_sensitivities(p), laplace_shares(p)):
        eps_b = eps_stat * share
        scales.append(delta1 / eps_b)
        entries.append(
            LedgerEntry(
                step=f"{block} of the bounded design",
                mechanism="Laplace",
                eps=eps_b,
                sensitivity=f"{text} = {delta1:.4g}, p = {p} (replace-one, unit box; entry by entry)",
                event={"kind": "pure", "eps": eps_b},  # vector Laplace: pure eps (privacy.events)
            )
        )
    return entries, tuple(scales), coords.row_norm_sq() / eps_lam


def _notes(coords: Coordinates, engine: str, how: str, failure_prob: float) -> list[str]:
    return [
        f"Values clipped to the declared bounds and mapped onto [-1, 1]; statistics computed in one pass by "
        f"the {engine} engine. The numbers of clipped values are not released.",
        f"Budget: {how}.",
        "Ridge chosen as in AdaSSP (Wang 2018): λ = max(0, B − λ̃_min), λ̃_min a private lower bound on "
        f"λ_min(XᵀX) holding with probability {1 - failure_prob:g}, B a bound on the spectral norm of the "
        f"noise on XᵀX holding with probability {1 - failure_prob:g}.",
        "Intervals, standard errors and p-values: parametric bootstrap from the released statistics "
        "(Ferrando, Wang & Sheldon 2022), pivot intervals; post-processing, no privacy cost.",
    ]


def _nonprivate_plan(coords: Coordinates, engine: str) -> LMPlan:
    entry = LedgerEntry.nonprivate("ordinary least squares on the exact statistics (eps = inf, NOT private)")
    return LMPlan(
        method="linear regression (non-private reference)",
        neighbouring="replace",
        entries=[entry],
        notes=[f"Statistics computed in one pass by the {engine} engine; classical OLS formulas."],
        coords=coords,
    )


# ------------------------------------------------------------------ release
@dataclass
class LMFit:
    """What one release gives: coefficients, ridge, residual variance and the noisy statistic."""

    coefficients: np.ndarray  # β, formula coordinates
    theta: np.ndarray  # fitting coordinates
    ridge: float
    lambda_min_lower: float
    sigma2: float  # residual variance in fitting coordinates (r units)
    noisy_gram: np.ndarray  # released Ã (unit coordinates, (p+2)²)
    df_residual: int


def noisy_gram(gram: np.ndarray, pl: LMPlan, noise) -> np.ndarray:
    """Ã: the upper triangle of A (without A_00 = n) plus noise, block by block, mirrored."""
    iu, blocks = statistic_blocks(gram.shape[0])
    upper = gram[iu].astype(float)
    add = noise.gaussian if pl.noise == "gaussian" else noise.laplace
    scales = (pl.stat_scale, pl.xy_scale, pl.yy_scale)
    if len(set(scales)) == 1:  # one scale (the Gaussian route): one draw for the whole triangle
        blocks, scales = (blocks[0] | blocks[1] | blocks[2],), scales[:1]
    for block, scale in zip(blocks, scales):
        upper[block] = add(upper[block], scale)
    out = np.empty_like(gram, dtype=float)
    out[iu] = upper
    out[(iu[1], iu[0])] = upper
    return out


def spectral_bound(pl: LMPlan) -> float:
    """B: ‖E‖₂ ≤ s·(2√m + 2√log(1/ρ_f)) for the noise E on the design block (Wigner norm + Gaussian concentration).

    s is the per-entry noise sd (Laplace: √2·b, used as a heuristic), m the
    unit design dimension p + 1, scaled by ‖T_w‖₂² for fitting coordinates.
    """
    m = pl.coords.p + 1
    T = pl.coords.transform()[:-1, :-1]
    scale = float(np.linalg.norm(T, 2)) ** 2
    return scale * pl.stat_sd() * (2.0 * math.sqrt(m) + 2.0 * math.sqrt(math.log(1.0 / pl.failure_prob)))


def lambda_margin(pl: LMPlan) -> float:
    """The one-sided margin that makes the noisy λ_min a lower bound with probability 1 − ρ_f."""
    if pl.noise == "gaussian":
        return pl.lambda_scale * float(sps.norm.isf(pl.failure_prob))
    return pl.lambda_scale * math.log(1.0 / (2.0 * pl.failure_prob))


@dataclass
class LMRelease:
    """What dp_lm releases: the fit, its table (estimates' inference) and how the inference was made."""

    fit: LMFit
    table: dict[str, np.ndarray]
    inference: str
    calibrated: np.ndarray | None = None  # the calibrated (de-shrunk) estimates θ̃ (module docstring)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # release_warnings: (kind, text)


def release(gram: np.ndarray, pl: LMPlan, noise, estimable: np.ndarray | None = None) -> LMRelease:
    """The whole release of one dp_lm call: the noisy statistics and the fit
    (:func:`release_statistics`), then its intervals by the calibrated parametric bootstrap
    (post-processing; the classical OLS table at eps = inf).  n is the public A_00 of ``gram``."""
    o, n = pl.options, int(gram[0, 0])
    fit = release_statistics(gram, n, pl, noise, estimable)
    if pl.nonprivate:
        return LMRelease(
            fit, ols_table(fit, pl, o.conf_level), f"classical OLS (t on {fit.df_residual} residual df)"
        )
    bt = bootstrap(
        fit, n, pl, n_boot=o.n_boot, conf_level=o.conf_level, rng=noise.generator, interval=o.interval
    )
    how = f"calibrated parametric bootstrap, {o.interval} intervals, 2 x {o.n_boot} replicates"
    return LMRelease(fit, bt.table, how, bt.centre, bt.rules)  # statistic = calibrated estimate / std.error


def release_statistics(
    gram: np.ndarray, n: int, pl: LMPlan, noise, estimable: np.ndarray | None = None
) -> LMFit:
    """Release the noisy statistic and the λ_min bound, then fit (steps 1–3 of the module docstring).

    ``gram`` is A = Σ v vᵀ of the unit-box rows v = (1, z, u) (its A_00 is n).  ``estimable`` is
    used at eps = inf only (:func:`ols_fit`).

    Examples
    --------
    >>> from dpstats.privacy.randomness import NoiseSource
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(-1, 1, (5000, 2)); u = 0.5 * z[:, 0] + 0.1 * rng.normal(size=5000)
    >>> v = np.c_[np.ones(5000), z, np.clip(u, -1, 1)]
    >>> c = Coordinates(np.zeros(2), np.ones(2), True, y_center=0.0, y_half=1.0)
    >>> fit = release_statistics(v.T @ v, 5000, plan(LMOptions.partial(eps=5.0, delta=1e-6, lambda_share=LAMBDA_SHARE), c), NoiseSource(1))
    >>> bool(abs(fit.coefficients[1] - 0.5) < 0.05)
    True
    """
    T = pl.coords.transform()
    k = pl.coords.k
    if pl.nonprivate:
        return ols_fit(gram, n, pl, estimable)
    design = (T @ gram @ T.T)[:k, :k]
    add = noise.gaussian if pl.noise == "gaussian" else noise.laplace
    lam_noisy = float(add(np.array([np.linalg.eigvalsh(design)[0]]), pl.lambda_scale)[0])
    released = noisy_gram(gram, pl, noise)
    return fit_released(released, lam_noisy, n, pl)


def diagnostics(frame: Any, options: LMOptions, estimable: np.ndarray | None) -> dict[str, Any]:
    """What ``diagnostics=True`` attaches, computed from the rows and not private: the frame's counts of
    missing values, the values clipped, and the ordinary least squares estimates by term (R's lm, aliased
    columns NaN).  ``frame`` is the door's (its model frame ``mf``, ``gram``, ``n``, ``names``, ``coords``
    and ``n_clipped``); ``estimable``: the columns R's pivoted QR keeps, None to test the cross products."""
    exact = release_statistics(
        frame.gram, frame.n, plan(replace(options, eps=math.inf), frame.coords), None, estimable
    )
    return {
        **missing_counts(frame.mf),
        "values_clipped": frame.n_clipped,
        "ols_estimates_nonprivate": dict(zip(frame.names, exact.coefficients.tolist())),
    }


def fit_released(released: np.ndarray, lam_noisy: float, n: int, pl: LMPlan) -> LMFit:
    """Post-processing of the two releases: ridge from the λ_min bound, then the fit."""
    T, k = pl.coords.transform(), pl.coords.k
    F = T @ released @ T.T
    lam_lower = max(0.0, lam_noisy - lambda_margin(pl))
    ridge = max(0.0, spectral_bound(pl) - lam_lower)
    theta = _solve(F[:k, :k] + ridge * np.eye(k), F[:k, k])
    return LMFit(
        pl.coords.to_original(theta), theta, ridge, lam_lower, _sigma2(F, theta, n, k), released, n - k
    )


def ols_fit(gram: np.ndarray, n: int, pl: LMPlan, estimable: np.ndarray | None = None) -> LMFit:
    """Ordinary least squares on the exact statistics (eps = inf, NOT private), as R's ``lm``.

    Columns aliased with those before them (R's pivoted QR, :mod:`dpstats.methods._aliased`) are
    not fitted: their coefficients are NaN (R's NA) and the residual degrees of freedom are
    n − rank.  ``estimable`` (a mask over the coefficients, intercept first) is found from the rows
    by the caller where it holds them, else here from the cross products.
    """
    T, k = pl.coords.transform(), pl.coords.k
    F = T @ gram @ T.T
    keep = estimable_from_gram(raw_design_gram(gram, pl.coords)) if estimable is None else estimable
    theta = np.zeros(k)
    theta[keep] = np.linalg.solve(F[np.ix_(keep, keep)], F[:k, k][keep])
    rank = int(keep.sum())
    coefficients = pl.coords.to_original(theta)
    coefficients[~keep] = np.nan
    sigma2 = _sigma2(F, theta, n, k) * (n - k) / (n - rank)
    return LMFit(coefficients, theta, 0.0, math.nan, sigma2, gram, n - rank)


def estimable_clipped(X: np.ndarray, coords: DesignCoordinates) -> np.ndarray:
    """The columns of the design ``X`` (rows as read, columns intercept first) that R's pivoted QR keeps
    once each predictor is clipped to its declared box, as the fit's cross products clip it: a column
    the box makes constant is aliased with the intercept (its coefficient NA), as R's ``lm`` of the
    clipped rows says.  Non-private: for eps = inf and the requested diagnostics only.

    Examples
    --------
    >>> X = np.c_[np.ones(4), [2.0, 3.0, 5.0, 4.0], [1.0, -1.0, 0.5, 0.0]]
    >>> estimable_clipped(X, DesignCoordinates(np.array([0.5, 0.0]), np.array([0.5, 1.0]), True)).tolist()
    [True, False, True]
    """
    j = int(coords.intercept)
    clipped = X.astype(float, copy=True)
    clipped[:, j:] = np.clip(X[:, j:], coords.x_center - coords.x_half, coords.x_center + coords.x_half)
    return estimable_columns(clipped, LM_TOL)


def raw_design_gram(gram: np.ndarray, coords: Coordinates) -> np.ndarray:
    """XᵀX of the formula's design (intercept first) from the stacked A of the unit-box rows: x = c + h z."""
    p = coords.p
    M = np.eye(p + 1)
    M[1:, 0] = coords.x_center
    M[1:, 1:] = np.diag(coords.x_half)
    G = M @ gram[: p + 1, : p + 1] @ M.T
    return G if coords.intercept else G[1:, 1:]


def _solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(M, b, rcond=None)[0]


def released_sigma(fit: LMFit, coords: Coordinates, nonprivate: bool) -> float:
    """σ̂ in the response's units: post-processing of the released statistics (their yᵀy, Xᵀy, XᵀX and the
    fit θ̂) and the public n.  NaN where a private fit's residual sum of squares from them fell below 0 and
    was floored (the noise on yᵀy swamps the residual variance): 0 would read as an exact fit."""
    if fit.sigma2 == 0 and not nonprivate:
        return math.nan
    return coords.y_half * math.sqrt(fit.sigma2)


def _sigma2(F: np.ndarray, theta: np.ndarray, n: int, k: int) -> float:
    """RSS/(n − k) from the statistics: rᵀr − 2θᵀWᵀr + θᵀWᵀWθ (floored at 0)."""
    rss = F[k, k] - 2.0 * theta @ F[:k, k] + theta @ F[:k, :k] @ theta
    return max(float(rss), 0.0) / (n - k)


# ------------------------------------------------------------------ classical OLS (eps = inf)
def ols_table(fit: LMFit, pl: LMPlan, conf_level: float) -> dict[str, Any]:
    """Classical OLS: vcov = σ̂² (XᵀX)⁻¹, t statistics and intervals on n − k degrees of freedom, and the
    model's fit statistics (``"fit_statistics"``: :func:`ols_fit_statistics`)."""
    T, k = pl.coords.transform(), pl.coords.k
    F = T @ fit.noisy_gram @ T.T
    _, L = pl.coords.linear()
    keep = ~np.isnan(fit.coefficients)  # aliased columns (ols_fit) have NA rows and columns, as R's vcov
    V = np.zeros((k, k))
    V[np.ix_(keep, keep)] = fit.sigma2 * np.linalg.inv(F[np.ix_(keep, keep)])
    vcov = L @ V @ L.T
    vcov[~keep, :] = vcov[:, ~keep] = np.nan
    se = np.sqrt(np.diag(vcov))
    stat = fit.coefficients / se
    q = sps.t.ppf(0.5 + conf_level / 2.0, fit.df_residual)
    return {
        "vcov": vcov,
        "std.error": se,
        "statistic": stat,
        "p.value": 2.0 * sps.t.sf(np.abs(stat), fit.df_residual),
        "conf.low": fit.coefficients - q * se,
        "conf.high": fit.coefficients + q * se,
        "fit_statistics": ols_fit_statistics(fit, pl, F),
    }


def ols_fit_statistics(fit: LMFit, pl: LMPlan, F: np.ndarray) -> dict[str, float]:
    """broom's ``glance(lm)`` from the exact statistics (eps = inf, NOT private), as R computes them.

    ``summary.lm``: R² = 1 − RSS/TSS with TSS about the mean (with an intercept) or about 0, the
    adjusted R² on (n − int)/rdf, the F statistic of every coefficient but the intercept on
    (rank − int, rdf) degrees of freedom (NaN for an intercept-only model, as broom); ``logLik.lm``:
    −n/2 (log 2π + 1 − log n + log RSS) on rank + 1 parameters, whence AIC and BIC; the deviance is RSS.
    ``F`` is the stacked statistic in fitting coordinates (w, r), r = (y − c)/h with an intercept, y/h
    without, as :func:`ols_table` computed it.
    """
    k = pl.coords.k
    n, rdf, intercept = int(round(fit.noisy_gram[0, 0])), fit.df_residual, int(pl.coords.intercept)
    rank, scale = n - rdf, pl.coords.y_half**2
    rss = scale * fit.sigma2 * rdf
    tss = scale * (F[k, k] - (F[0, k] ** 2 / F[0, 0] if intercept else 0.0))
    df = rank - intercept
    r2 = 1.0 - rss / tss if tss > 0 else math.nan
    f = ((tss - rss) / df) / (rss / rdf) if df > 0 and rss > 0 else math.nan
    return {
        "r.squared": r2,
        "adj.r.squared": 1.0 - (1.0 - r2) * (n - intercept) / rdf,
        "statistic": f,
        "p.value": float(sps.f.sf(f, df, rdf)) if df > 0 else math.nan,
        "df": float(df) if df > 0 else math.nan,
        **likelihood_statistics(rss, n, rank + 1),
    }


def likelihood_statistics(rss: float, n: int, params: int) -> dict[str, float]:
    """``logLik.lm``'s −n/2 (log 2π + 1 − log n + log RSS) on ``params`` parameters (the coefficients
    and σ), whence AIC and BIC, and the deviance RSS; inf at RSS = 0 (an exact fit), as R's.  Exact
    statistics only (eps = inf): a private fit's RSS is noisy, and so would these be (no likelihood).

    Examples
    --------
    >>> s = likelihood_statistics(40.0, 12, 3)
    >>> round(s["logLik"], 4), round(s["AIC"] + 2 * s["logLik"], 12)
    (-24.2511, 6.0)
    """
    loglik = -0.5 * n * (math.log(2.0 * math.pi) + 1.0 - math.log(n) + math.log(rss)) if rss > 0 else math.inf
    return {
        "logLik": loglik,
        "AIC": -2.0 * loglik + 2.0 * params,
        "BIC": -2.0 * loglik + math.log(n) * params,
        "deviance": rss,
    }


# ------------------------------------------------------------------ parametric bootstrap
@dataclass
class Bootstrap:
    """Bootstrap draws of β and the table they give."""

    draws: np.ndarray  # (n_boot, k): the pivot's law placed at the calibrated centre
    interval: str
    table: dict[str, np.ndarray] = field(default_factory=dict)
    centre: np.ndarray = field(default_factory=lambda: np.empty(0))  # calibrated β̃
    rules: list[tuple[str, str]] = field(default_factory=list)  # release_warnings, which chose the draws


def data_model(
    released: np.ndarray, n: int, fit: LMFit, pl: LMPlan
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(μ̂, Σ̂, η̂, σ̂²) of the Gaussian data model in unit coordinates, from released values only.

    η̂ are the coefficients of u on (1, z) implied by θ̂: (w, r) = T v.
    """
    p = pl.coords.p
    mu = released[0, 1 : p + 1] / n
    cov = shrunk_covariance(released_covariance(released, n, p), pl.stat_sd() / n)
    T, k = pl.coords.transform(), pl.coords.k
    Tw, Tr = T[:k], T[k]
    eta = Tw[:, : p + 1].T @ fit.theta
    eta[0] -= Tr[0]
    return mu, cov, eta, max(fit.sigma2, 1e-12)


def shrunk_covariance(cov: np.ndarray, noise_sd: float, floor_share: float = 0.5) -> np.ndarray:
    """The data model's Σ̂ from the noisy covariance of the unit-box rows (its entries carry noise of sd τ).

    Two steps, both post-processing of released values:

    1. Linear shrinkage towards m̄I, m̄ = tr(C̃)/p (at least τ/√p, the noise sd
       of tr(C̃)/p: a mean variance below its own noise cannot be told from it),
       with the weight ρ = min(1, p²τ² / ‖C̃ − m̄I‖_F²): the noise's expected
       share of the observed dispersion about m̄I (Ledoit & Wolf 2004, with the
       noise energy known exactly instead of estimated).
    2. Eigenvalues floored at min(τ√p / 2, m̄) (``floor_share`` = 1/2 of τ√p; the
       re-released models of an unresolved design use UNRESOLVED_FLOOR_SHARE).  Eigenvalues below the noise's
       spectral scale τ√p cannot be told from zero; flooring them near zero makes
       the bootstrap's design nearly singular and its intervals thousands of
       times too wide, flooring them at the noise's scale overstates the design.
       Half that scale (never above the mean variance) was chosen by simulation:
       dp_lm's coverage lay in [0.92, 0.97] at n = 10³, p ∈ {3, 10}, eps ∈ {0.5,
       1, 5}, Gaussian and Laplace noise, for independent, AR(0.6) and
       heteroscedastic AR(0.4) designs (tests/test_lm_coverage.py).

    Examples
    --------
    >>> noisy = np.array([[0.30, 0.45], [0.45, 0.40]])  # indefinite: the noise is as large as Σ
    >>> np.round(np.linalg.eigvalsh(noisy), 3)
    array([-0.103,  0.803])
    >>> np.round(np.linalg.eigvalsh(shrunk_covariance(noisy, noise_sd=0.3)), 3)
    array([0.295, 0.405])
    """
    p = cov.shape[0]
    cov = (cov + cov.T) / 2.0
    mean_var = max(float(np.trace(cov)) / p, noise_sd / math.sqrt(p))
    target = mean_var * np.eye(p)
    dispersion = float(np.sum((cov - target) ** 2))
    noise_energy = p * p * noise_sd**2
    rho = 1.0 if dispersion <= noise_energy else noise_energy / dispersion
    vals, vecs = np.linalg.eigh(rho * target + (1.0 - rho) * cov)
    floor = max(
        1e-6, 1e-3 * float(np.mean(np.abs(vals))), min(floor_share * noise_sd * math.sqrt(p), mean_var)
    )
    return (vecs * np.maximum(vals, floor)) @ vecs.T


def released_covariance(released: np.ndarray, n: int, p: int) -> np.ndarray:
    """The released covariance of the unit-box rows, Σ z zᵀ/n − z̄ z̄ᵀ from Ã (noisy, not shrunk)."""
    mu = released[0, 1 : p + 1] / n
    cov = released[1 : p + 1, 1 : p + 1] / n - np.outer(mu, mu)
    return (cov + cov.T) / 2.0


UNRESOLVED_DESIGN = (
    "the released covariance of the scaled predictors has an eigenvalue below the noise's spectral "
    "scale τ√p, where the ridge dominates: the release does not resolve the design there, so the "
    "bootstrap re-releases its design model in every replicate and the intervals of collinear "
    "predictors are wide (coverage 0.96–0.98 at nominal 0.95 in dpstats' simulation of a design "
    "with two predictors correlated 0.9); drop or combine collinear predictors, or raise eps or n"
)
NOISE_DOMINATED = (
    "the estimates are dominated by noise: the ridge λ exceeds n times the released mean variance "
    "of the scaled predictors, so it more than halves them and the intervals are wide; raise eps or "
    "n, or use fewer predictors"
)
RELEASE_RULES = (UNRESOLVED_DESIGN, NOISE_DOMINATED)  # fixed texts: whether one shows is a released value


def release_warnings(fit: LMFit, n: int, pl: LMPlan) -> list[tuple[str, str]]:
    """The public rules on a private fit (module docstring, "Limits"), as (kind, text), kind "data" or
    "chance"; from released values (Ã, the ridge) and public inputs (n, the noise scale) only.

    *Unresolved calibration* ("data"): the ridge is on, the released covariance C̃ of the scaled
    predictors is resolved as anisotropic (its dispersion about m̃I exceeds the noise energy p²τ²,
    the shrinkage weight of :func:`shrunk_covariance` below 1), its smallest eigenvalue is below the
    noise's spectral scale τ√p (cannot be told from 0) and the ridge exceeds n·τ√p there.
    *Noise-dominated* ("chance"): the ridge exceeds n·m̃, m̃ = tr(C̃)/p the released mean variance
    (then only this one: the design's shape is then noise too).  The texts are fixed (no released
    number): neighbours' messages may differ only in whether a rule fires.
    """
    p = pl.coords.p
    if pl.nonprivate or fit.ridge <= 0 or p == 0:
        return []
    tau = pl.stat_sd() / n
    cov = released_covariance(fit.noisy_gram, n, p)
    mean_var = float(np.trace(cov)) / p
    edge, smallest = tau * math.sqrt(p), float(np.linalg.eigvalsh(cov)[0])
    dispersion = float(np.sum((cov - mean_var * np.eye(p)) ** 2))
    dominated = fit.ridge > n * max(mean_var, 0.0)
    out = []
    if not dominated and p > 1 and dispersion > p * p * tau**2 and smallest < edge < fit.ridge / n:
        out.append(("data", UNRESOLVED_DESIGN))
    if dominated:
        out.append(("chance", NOISE_DOMINATED))
    return out


def simulate_grams(
    mu: np.ndarray,
    cov: np.ndarray,
    eta: np.ndarray,
    sigma2: float,
    n: int,
    size: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``size`` draws of A = Σ v vᵀ, v = (1, z, u), from the Gaussian data model's exact sampling law.

    Σ z ~ N(nμ, nΣ); Σ (z − z̄)(z − z̄)ᵀ ~ Wishart(n − 1, Σ) (Bartlett);
    g = Σ (1, z) e ~ N(0, σ² G); Σ e² = gᵀG⁻¹g + σ² χ²_{n−p−1}.  ``mu`` and ``cov`` are one
    model's, or one per draw (shapes (size, p) and (size, p, p)).
    """
    p = mu.shape[-1]
    chol = np.linalg.cholesky(cov)
    z = rng.standard_normal((size, p))
    s = n * mu + math.sqrt(n) * (z @ chol.T if chol.ndim == 2 else np.einsum("bij,bj->bi", chol, z))
    scatter = _wishart(chol, n - 1, size, rng)
    G = np.empty((size, p + 1, p + 1))
    G[:, 0, 0] = n
    G[:, 0, 1:] = s
    G[:, 1:, 0] = s
    G[:, 1:, 1:] = scatter + np.einsum("bi,bj->bij", s, s) / n
    xi = rng.standard_normal((size, p + 1))
    g = math.sqrt(sigma2) * np.einsum("bij,bj->bi", np.linalg.cholesky(G), xi)
    Geta = G @ eta
    # g = σ L ξ with G = L Lᵀ, so gᵀG⁻¹g = σ²‖ξ‖² (no solve with L)
    uu = (
        eta @ Geta.T
        + 2.0 * g @ eta
        + sigma2 * np.sum(xi * xi, axis=1)
        + sigma2 * rng.chisquare(n - p - 1, size)
    )
    A = np.empty((size, p + 2, p + 2))
    A[:, : p + 1, : p + 1] = G
    A[:, : p + 1, p + 1] = Geta + g
    A[:, p + 1, : p + 1] = Geta + g
    A[:, p + 1, p + 1] = uu
    return A


def _wishart(chol: np.ndarray, df: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Bartlett: W = L B Bᵀ Lᵀ, B lower triangular, B_ii² ~ χ²_{df−i}, B_ij ~ N(0, 1) below."""
    p = chol.shape[-1]
    B = np.tril(rng.standard_normal((size, p, p)), -1)
    idx = np.arange(p)
    B[:, idx, idx] = np.sqrt(rng.chisquare(df - idx, (size, p)))
    LB = chol @ B
    return LB @ np.swapaxes(LB, 1, 2)


def _congruence(T: np.ndarray, X: np.ndarray) -> np.ndarray:
    """T X Tᵀ for a batch X (the identity map is skipped: the intercept model's T is I)."""
    if T.shape[0] == T.shape[1] and np.array_equal(T, np.eye(T.shape[0])):
        return X
    return T @ X @ T.T


def refit_batch(A: np.ndarray, n: int, pl: LMPlan, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rerun the release on simulated statistics with fresh noise of the same scales.

    Returns θ* (fitting coordinates, one row per draw) and M, the per-draw linear
    map of the model's θ into θ*: θ* = M θ + c with M = (F̃ + λI)⁻¹ F, F the
    noise-free design block of the draw (Xᵀy = F θ + noise, so θ* is affine in θ).
    """
    size, m, _ = A.shape
    T, k = pl.coords.transform(), pl.coords.k
    draw = rng.normal if pl.noise == "gaussian" else rng.laplace
    rhs = np.empty((size, k, k + 1))  # [design | Xᵀy], the right-hand sides
    rhs[..., :k] = _congruence(T[:k], A)
    lam = np.linalg.eigvalsh(rhs[..., :k])[:, 0] + draw(0.0, pl.lambda_scale, size)
    iu = np.triu_indices(m)
    E = np.zeros((size, m, m))
    E[:, iu[0], iu[1]] = draw(0.0, pl.entry_scales(), (size, iu[0].size))  # n's scale is 0
    E += np.swapaxes(np.triu(E, 1), 1, 2)
    E += A  # A + E, in place: one batch array fewer (a caller passing its only reference frees A here)
    del A
    F = _congruence(T, E)
    del E
    lam_lower = np.maximum(0.0, lam - lambda_margin(pl))
    ridge = np.maximum(0.0, spectral_bound(pl) - lam_lower)
    rhs[..., k] = F[:, :k, k]
    R = F[:, :k, :k]
    R[:, np.arange(k), np.arange(k)] += ridge[:, None]
    sol = _solve_batch(R, rhs)
    return sol[..., k], sol[..., :k]


def _solve_batch(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(M) @ b


def rereleased_designs(
    released: np.ndarray, n: int, pl: LMPlan, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``size`` design models (μ*, Σ*) as the released design block would be re-released: Ã plus fresh
    noise of the plan's scale on the design block, then the released covariance shrunk
    (:func:`shrunk_covariance`, floor UNRESOLVED_FLOOR_SHARE·τ√p).  Shapes (size, p), (size, p, p).

    The re-released covariance carries noise of variance 2τ² about the data's (the release's and the
    replicate's), so its shrinkage weight is that of the noise sd √2·τ."""
    p = pl.coords.p
    iu, (xx, _, _) = statistic_blocks(p + 2)
    draw = rng.normal if pl.noise == "gaussian" else rng.laplace
    E = np.zeros((size, p + 2, p + 2))
    E[:, iu[0][xx], iu[1][xx]] = draw(0.0, pl.stat_scale, (size, int(xx.sum())))
    A = released + E + np.swapaxes(np.triu(E, 1), 1, 2)
    tau = pl.stat_sd() / n
    sd, share = math.sqrt(2.0) * tau, UNRESOLVED_FLOOR_SHARE / math.sqrt(2.0)  # floor: share·τ√p
    covs = [shrunk_covariance(released_covariance(a, n, p), sd, share) for a in A]
    return A[:, 0, 1 : p + 1] / n, np.stack(covs)


BATCH = 500  # draws per batch where a (p+2)² batch array fits BATCH_BYTES
BATCH_BYTES = 64 * 2**20


def batch_size(m: int) -> int:
    """Draws per bootstrap batch for (m × m) statistics: BATCH while one batch array of them stays within
    BATCH_BYTES (m ≤ 129, p ≤ 127), else as many as fit (at least 1).

    The random stream depends on the batch size (each batch draws its variables in turn), so seeded
    outputs stay those of BATCH wherever it fits; larger designs get smaller batches, the same law.

    Examples
    --------
    >>> batch_size(12), batch_size(129), batch_size(130), batch_size(1002)
    (500, 500, 496, 8)
    """
    return max(1, min(BATCH, BATCH_BYTES // (8 * m * m)))


@one_blas_thread  # batches of small factorisations: threads only wait for each other
def _draws(
    fit: LMFit, theta: np.ndarray, n: int, pl: LMPlan, size: int, rng, batch: int, rerelease: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """θ* draws and the mean of their maps M from the Gaussian data model with coefficients θ (fitting
    coordinates); with ``rerelease`` each draw's design model is re-released (:func:`rereleased_designs`).

    Only E[M] is used (module docstring), so the maps are summed batch by batch
    rather than kept (n_boot·k² numbers)."""
    model = LMFit(
        fit.coefficients, theta, 0.0, math.nan, sigma2_at(fit.noisy_gram, theta, n, pl), fit.noisy_gram, 0
    )
    mu, cov, eta, sigma2 = data_model(fit.noisy_gram, n, model, pl)
    thetas, total = [], None
    for start in range(0, size, batch):
        count = min(batch, size - start)
        if rerelease:
            mu, cov = rereleased_designs(fit.noisy_gram, n, pl, count, rng)
        th, M = refit_batch(simulate_grams(mu, cov, eta, sigma2, n, count, rng), n, pl, rng)
        thetas.append(th)
        total = M.sum(axis=0) if total is None else total + M.sum(axis=0)
    return np.concatenate(thetas), total / size


def sigma2_at(released: np.ndarray, theta: np.ndarray, n: int, pl: LMPlan) -> float:
    """Residual variance at θ from the released statistics (fitting coordinates)."""
    T, k = pl.coords.transform(), pl.coords.k
    return _sigma2(T @ released @ T.T, theta, n, k)


def bootstrap(
    fit: LMFit,
    n: int,
    pl: LMPlan,
    *,
    n_boot: int,
    conf_level: float,
    rng: np.random.Generator,
    interval: str = "pivot",
    batch: int | None = None,
) -> Bootstrap:
    """The calibrated parametric bootstrap (module docstring): std.error, intervals, statistic, p.value, vcov.

    Pass 1 draws at θ̂ give J = E[M] and the mean offset c̄; the calibrated
    coefficients θ̃ solve J θ̃ + c̄ = θ̂ (the model under which the release
    would on average give what was released).  Pass 2 draws at θ̃; their
    deviations, mapped back through J⁻¹, are the pivot's law: the interval is
    θ̃ minus their quantiles (on the formula's scale).

    Examples
    --------
    >>> from dpstats.privacy.randomness import NoiseSource
    >>> c = Coordinates(np.zeros(1), np.ones(1), True, y_center=0.0, y_half=1.0)
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(-1, 1, 2000); u = np.clip(0.3 * z + 0.2 * rng.normal(size=2000), -1, 1)
    >>> v = np.c_[np.ones(2000), z, u]
    >>> pl = plan(LMOptions.partial(eps=2.0, delta=1e-6, lambda_share=LAMBDA_SHARE), c)
    >>> fit = release_statistics(v.T @ v, 2000, pl, NoiseSource(1))
    >>> bt = bootstrap(fit, 2000, pl, n_boot=200, conf_level=0.95, rng=np.random.default_rng(3))
    >>> bool(bt.table["conf.low"][1] < 0.3 < bt.table["conf.high"][1])
    True
    """
    rules = release_warnings(fit, n, pl)
    unresolved = any(kind == "data" for kind, _ in rules)
    batch = batch or batch_size(pl.coords.p + 2)
    th, J = _draws(fit, fit.theta, n, pl, n_boot, rng, batch, unresolved)
    offset = th.mean(axis=0) - J @ fit.theta  # the mean of θ* − M θ̂
    theta_c = _solve(J, fit.theta - offset)
    th2, J2 = _draws(fit, theta_c, n, pl, n_boot, rng, batch, unresolved)
    deviations = (th2 - th2.mean(axis=0)) @ np.linalg.pinv(J2).T
    _, L = pl.coords.linear()
    centre = pl.coords.to_original(theta_c)
    draws = centre + deviations @ L.T
    table = interval_table(centre, draws, conf_level, interval)
    return Bootstrap(draws, interval, table, centre, rules)


def interval_table(
    estimate: np.ndarray, draws: np.ndarray, conf_level: float, interval: str
) -> dict[str, np.ndarray]:
    """Intervals, standard errors, statistics and p-values from bootstrap draws of β.

    std.error is the interval's half-width over z_{1−α/2} and vcov D R D (:func:`quantile_scales`,
    :func:`rank_correlation`; module docstring, "Std. Error and vcov"), so that Estimate ± z·std.error
    spans the interval and coef() with vcov() tests what the table shows.
    """
    alpha = 1.0 - conf_level
    lo_q, hi_q = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    centred = 2.0 * estimate - draws if interval == "pivot" else draws
    low, high = (2.0 * estimate - hi_q, 2.0 * estimate - lo_q) if interval == "pivot" else (lo_q, hi_q)
    se = quantile_scales(lo_q, hi_q, conf_level)
    B = draws.shape[0]
    below = (1 + np.sum(centred <= 0, axis=0)) / (B + 1)
    above = (1 + np.sum(centred >= 0, axis=0)) / (B + 1)
    return {
        "vcov": rank_correlation(draws) * np.outer(se, se),
        "std.error": se,
        "statistic": estimate / se,
        "p.value": np.minimum(1.0, 2.0 * np.minimum(below, above)),
        "conf.low": low,
        "conf.high": high,
    }


def quantile_scales(lo_q: np.ndarray, hi_q: np.ndarray, conf_level: float) -> np.ndarray:
    """The scale the interval implies: (q_{1−α/2} − q_{α/2}) / (2 z_{1−α/2}), the interval's half-width
    (pivot or percentile) over the normal quantile; a normal law's standard deviation.

    Examples
    --------
    >>> draws = np.random.default_rng(1).normal(0.0, 2.0, (20000, 1))
    >>> lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    >>> np.round(quantile_scales(lo, hi, 0.95), 1)
    array([2.])
    """
    return (hi_q - lo_q) / (2.0 * float(sps.norm.isf((1.0 - conf_level) / 2.0)))


def rank_correlation(draws: np.ndarray) -> np.ndarray:
    """The Gaussian rank correlation of the draws' columns: Pearson's of their normal scores
    Φ⁻¹(rank/(B + 1)) (Boudt, Cornelissen & Croux 2012).  A correlation matrix (unit diagonal,
    positive semi-definite), the normal law's correlation where the draws are normal, and not moved
    by a few extreme draws.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> x = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], 20000)
    >>> x[:5] *= 1e6  # a few extreme draws: Pearson's correlation follows them, this one does not
    >>> bool(abs(rank_correlation(x)[0, 1] - 0.6) < 0.02)
    True
    """
    B, k = draws.shape
    scores = sps.norm.ppf(sps.rankdata(draws, axis=0) / (B + 1))
    R = np.corrcoef(scores, rowvar=False).reshape(k, k)
    R = (R + R.T) / 2.0  # symmetric to the last bit, with a unit diagonal: D R D's diagonal is D²
    np.fill_diagonal(R, 1.0)
    return R


def stacked_gram(
    cross: CrossStats, names: list[str], x_box: Box, y_box: Box, intercept_name: str
) -> tuple[np.ndarray, Coordinates, list[str]]:
    """The stacked A = Σ v vᵀ, v = (1, z, u), from one pass's cross products, with the public
    coordinates of the bounds and the coefficients' names (intercept first).

    ``x_box`` covers every name, the intercept's column included (its entry is dropped).
    """
    keep = [j for j, nm in enumerate(names) if nm != intercept_name]
    intercept = len(keep) < len(names)
    p = len(keep)
    A = np.zeros((p + 2, p + 2))
    A[0, 0] = cross.n
    A[0, 1 : p + 1] = cross.x_sum[keep]
    A[1 : p + 1, 1 : p + 1] = cross.xtx[np.ix_(keep, keep)]
    A[0, p + 1] = cross.y_sum
    A[1 : p + 1, p + 1] = cross.xty[keep]
    A[p + 1, p + 1] = cross.yty
    A = np.triu(A) + np.triu(A, 1).T
    coords = Coordinates(
        x_box.center[keep],
        x_box.halfwidth[keep],
        intercept,
        y_center=float(y_box.center[0]),
        y_half=float(y_box.halfwidth[0]),
    )
    return A, coords, ([intercept_name] if intercept else []) + [names[j] for j in keep]


def box_with_intercept(x_box: Box, names: list[str], intercept_name: str) -> Box:
    """The design box with the intercept column's (0, 2): it maps the constant 1 to 0 (dropped later)."""
    lo, hi, it = [], [], iter(range(len(x_box.lo)))
    for nm in names:
        if nm == intercept_name:
            lo.append(0.0)
            hi.append(2.0)
        else:
            j = next(it)
            lo.append(x_box.lo[j])
            hi.append(x_box.hi[j])
    return Box(np.array(lo), np.array(hi))


def public_inputs(pl: LMPlan, n: int, eps: float, delta: float) -> dict[str, Any]:
    """What a downstream procedure (e.g. private BH) may use: all public, nothing from the raw data."""
    c = pl.coords
    return {
        "kind": pl.noise,
        "stat_scale": pl.stat_scale,
        "lambda_scale": pl.lambda_scale,
        "l2_sensitivity": pl.l2_sensitivity,
        "l1_sensitivity": pl.l1_sensitivity,
        "lambda_sensitivity": pl.lambda_sensitivity,
        "x_center": c.x_center.tolist(),
        "x_half": c.x_half.tolist(),
        "y_center": c.y_center,
        "y_half": c.y_half,
        "n": n,
        "eps": eps,
        "delta": delta,
    }
