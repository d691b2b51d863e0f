"""Private FDR control: Benjamini-Hochberg on p-values, privately (Dwork, Su & Zhang 2021).

Three routes, one :func:`plan` and one :func:`release` that dispatch on the route (:class:`BHOptions`):

* **raw p-values** (computed from the private data): the private BH of
  :mod:`dpstats.privacy.fdr` — p-values truncated below at a public ν, log
  p-values of declared ℓ∞ sensitivity η, Report Noisy Min peeling of the k
  smallest with Laplace noise, and a BH step-up on the fresh noisy values with
  the threshold lowered by t = λ log(5k/q).  Privacy: (eps, delta)-DP for the
  neighbouring relation under which η holds (derivation in
  :mod:`dpstats.privacy.fdr`); the guarantee rests on the declared η.  FDR:
  at most (m0/m)·q·H_k + q/10 under any dependence between valid p-values.
* **a private fit's p-values** (already released by a DP mechanism): plain BH
  on them is post-processing (Dwork & Roth 2014, Prop. 2.1) and costs nothing.
  Its FDR is that of BH on those p-values: at most (m0/m)·q when they are valid
  and independent or PRDS, at most q·H_m under arbitrary dependence (Benjamini
  & Yekutieli 2001) — and only approximately so, since a private fit's p-values
  are valid only as far as its inference accounts for the privacy noise.
* **a formula on bounded data** (``dp_bh("y ~ .", data=..., bounds=..., sigma=...)``):
  two-sided z-tests of the marginal slope of y on each design column,
  computed from the raw rows under declared bounds and a declared σ; their
  η is *derived* (equations (5)-(7) below), not declared, and they are
  released only through the private BH of the first route.
* **eps = inf on raw p-values, or on the formula route** (the marginal z-tests' p-values computed
  exactly from the clipped rows, without noise): not private, the reference: R's ``p.adjust(p, method = "BH")``
  computed as R computes it (:func:`p_adjust_bh`; a missing p-value stays missing and is not
  counted in m, as R's default ``n``), hypothesis i rejected when its adjusted p-value is at most q.
  No public rule maps the p-values (nothing is private to protect); ``eta``, ``truncate`` and
  ``max_rejections`` belong to the private mechanism and play no part.  Warned
  (:class:`~dpstats.errors.NonPrivateWarning`) as every door's eps = inf; refused under ``strict``.

When no rejection can come from evidence (:func:`chance_text`)
--------------------------------------------------------------
No truncated log p-value is below log ν, and any rejection needs a noisy value at or below the
loosest cut log(qk/m) − t.  When g = log ν + t − log(qk/m) > 0 a rejection therefore needs a fresh
noise below −g, whatever the data (:func:`dpstats.privacy.fdr.rejection_gap`): :func:`plan` warns
(:class:`~dpstats.errors.ChanceWarning`, before any budget is spent) with the eps, and on the formula
route the n, that would bring λ down to λ* = log(qk/(mν))/log(5k/q).  On the formula route η shrinks
like 1/√n, so this takes large n: with m = 200, k = 20, q = 0.1, y bounds of width 10 and σ = 1.1,
n >= 7.3·10⁶ at eps = 1 and n >= 4.6·10⁵ at eps = 4.

Sensitivity η for p-values of z-tests on bounded data (:func:`eta_two_sided_z`)
-------------------------------------------------------------------------------
A two-sided z-test has p(z) = 2Φ̄(|z|).  If one neighbouring change moves z by
at most Δz (a public bound, e.g. :func:`z_mean_delta` for a mean of data in
[lo, hi] with a public σ and public n: Δz = (hi − lo)/(σ√n) under replace-one),
then u = |z| moves by at most Δz too.  The truncated log p-value is
g(u) = max(log 2Φ̄(u), log ν), non-increasing in u and constant beyond
u_ν = Φ̄⁻¹(ν/2).  Its slope is −h(u), h(u) = φ(u)/Φ̄(u) the hazard of the normal,
which increases in u.  Hence for |u − u'| <= Δz

    |g(u) − g(u')| <= log Φ̄(max(u_ν − Δz, 0)) − log Φ̄(u_ν) <= Δz · h(u_ν),   (4)

the left bound being attained at u = max(u_ν − Δz, 0), u' = u_ν: that is η.
The right side is the cruder "Δz times the largest hazard over the truncated
range".  tests/test_bh.py checks (4) by brute force on all neighbouring data
sets of a small grid.

Marginal slope z-tests on bounded data (:func:`marginal_slope_z`, :func:`z_slope_delta`)
-----------------------------------------------------------------------------------------
Rows (x_i, y_i), i = 1..n, with each design column clipped to its declared
[a_j, b_j] and the response to [a_y, b_y]; W_j = b_j − a_j, W_y = b_y − a_y;
n is public (replace one row).  Hypothesis j says the marginal slope of y on
x_j is zero; precisely, H0j: given the column x_j, the y_i are independent
with a common mean and variance at most σ² (σ declared, public).  The statistic

    S_j = Σ_i (x_ij − x̄_j)(y_i − ȳ),   z_j = S_j / (σ τ_j √n),   τ_j = W_j / 2   (5)

is the OLS slope of y on x_j alone times a public constant.  Under H0j,
E[S_j | x_j] = 0 and Var(S_j | x_j) <= σ² Σ_i (x_ij − x̄_j)² = σ² n v_j <= σ² n τ_j²,
since the variance v_j (divisor n) of values in an interval of width W_j is at
most (W_j/2)² (Popoviciu).  So z_j is centred with variance at most 1 and, y
being bounded, asymptotically normal (Lindeberg): p_j = 2Φ̄(|z_j|) is an
asymptotically valid, conservative p-value.  The public τ_j stands where the
usual test has the data's √v_j (a data-dependent denominator); the price is
power when v_j < τ_j².

Sensitivity.  Replace the last row (x, y) by (x', y') (any row, by symmetry).
With ā and b̄ the means of the other n − 1 rows' x_j and y (inside the bounds),

    S' − S = (1 − 1/n) [(x' − ā)(y' − b̄) − (x − ā)(y − b̄)].                      (6)

Rescaled to the unit square (u = (x − a_j)/W_j, α = (ā − a_j)/W_j, and v, β
likewise for y), the bracket is W_j W_y [(u' − α)(v' − β) − (u − α)(v − β)];
its first product is at most max{(1−α)(1−β), αβ}, its second at least
−max{α(1−β), (1−α)β}, and these are two of four non-negative products that
sum to 1.  Hence |S' − S| <= (1 − 1/n) W_j W_y, attained (the other rows at
(a_j, a_y), the last moved from (a_j, a_y) to (b_j, b_y)), and

    Δz_j = (1 − 1/n) W_j W_y / (σ τ_j √n) = 2 (1 − 1/n) W_y / (σ √n),              (7)

the same for every j.  One row moves every z_j at once, but η is an ℓ∞ bound,
so η = eta_two_sided_z(Δz, ν) by (4).  Clipping is a per-row map, so it keeps
neighbours neighbours.  Add/remove-one-row is not offered (n is in z's scale).

Why marginal tests, not the z of a multiple regression: there
t_j = β̂_j / (σ̂ √[(XᵀX)⁻¹]_jj), and one row can move (XᵀX)⁻¹ without bound when
XᵀX is near-singular, so no finite Δz exists without a lower bound on
λ_min(XᵀX) — a data-dependent quantity.  Multiple-regression tests go through
dp_lm (which releases such a bound privately) and BH on its released p-values
(the post-processing route).  tests/test_bh.py checks (6)-(7) by brute force.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import log_ndtr, ndtri

from ..errors import ChanceWarning, DataError, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ..formula import INTERCEPT, LEVELS_READ_NOT_SHOWN, ModelFrame
from ..geometry import Box
from ..privacy.accountant import LedgerEntry
from ..privacy.bounds import design_box, is_auto, response_box
from ..privacy.calibration import CONVERSIONS
from ..privacy.fdr import (
    PeelingCalibration,
    PrivateBH,
    any_rejection_bound,
    fdr_bound,
    harmonic,
    largest_useful_scale,
    peeling_scale,
    private_bh,
    rejection_gap,
    threshold_shift,
)
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..privacy.statement import PrivacyStatement
from ..schema import PublicN, Schema
from ..validation import (
    check_delta,
    check_eps,
    check_fraction,
    check_neighbouring,
    check_whole_in,
    columns_read,
)
from ._options import Options
from ._search import smallest_reaching

ETA_DEFAULT = 0.01
TRUNCATE_DEFAULT = 1e-10
MAX_REJECTIONS_DEFAULT = 20
PRIVATE, MARGINAL_Z, POST_PROCESSING = "private", "marginal z-tests", "post-processing"
NONPRIVATE = "non-private"  # the plan's route at eps = inf (raw p-values): R's p.adjust(method = "BH")
NONPRIVATE_FIT = 'Benjamini-Hochberg on the raw p-values, as R\'s p.adjust(method = "BH")'
Z_REFERENCE = "Benjamini-Hochberg on the exact marginal z-tests' p-values, as R's p.adjust(method = \"BH\")"


@dataclass(frozen=True)
class BHRejections:
    """Plain Benjamini-Hochberg on released p-values: rejected indices and the p-value cut."""

    rejected: np.ndarray
    threshold: float


def benjamini_hochberg(p_values: np.ndarray, q: float) -> BHRejections:
    """BH step-up at level q: reject the R smallest, R = max{r : p_(r) <= q r / m}.

    Examples
    --------
    >>> benjamini_hochberg(np.array([0.001, 0.2, 0.012, 0.9]), 0.05).rejected.tolist()
    [0, 2]
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    cuts = q * np.arange(1, p.size + 1) / p.size
    passing = np.flatnonzero(p[order] <= cuts)
    R = int(passing[-1] + 1) if passing.size else 0
    return BHRejections(np.sort(order[:R]), float(cuts[R - 1]) if R else 0.0)


@dataclass(frozen=True)
class BHAdjusted(BHRejections):
    """BH at eps = inf: the rejections, the cut q·R/m and R's adjusted p-values (NaN where p is missing)."""

    adjusted: np.ndarray = field(default_factory=lambda: np.empty(0))


def p_adjust_bh(p_values: np.ndarray) -> np.ndarray:
    """R's ``p.adjust(p, method = "BH")``, operation for operation: over the m non-missing p-values in
    decreasing order, ``pmin(1, cummin(m / i * p))`` with i = m, ..., 1; a missing (NaN) p-value stays NaN.

    Examples
    --------
    >>> p_adjust_bh(np.array([0.01, np.nan, 0.04, 0.03])).round(4).tolist()  # R: 0.03 NA 0.04 0.04
    [0.03, nan, 0.04, 0.04]
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    kept = ~np.isnan(p)
    pk, m = p[kept], int(np.count_nonzero(kept))
    if m == 0:
        return out
    order = np.argsort(-pk, kind="stable")  # R's order(p, decreasing = TRUE)
    i = np.arange(m, 0, -1, dtype=float)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.minimum.accumulate(m / i * pk[order]))
    out[kept] = adjusted
    return out


def nonprivate_bh(p_values: np.ndarray, q: float) -> BHAdjusted:
    """BH at eps = inf as R users run it: reject where ``p.adjust(p, "BH") <= q``; the cut q·R/m (m the
    non-missing p-values, R the rejections; 0 when none)."""
    adjusted = p_adjust_bh(p_values)
    rejected = np.flatnonzero(adjusted <= q)
    m = int(np.count_nonzero(~np.isnan(adjusted)))
    return BHAdjusted(rejected, q * rejected.size / m if rejected.size else 0.0, adjusted)


def nonprivate_warning(options: BHOptions) -> None:
    """eps = inf on raw p-values: the warning every door gives at eps = inf (its refusal under
    ``strict`` is in :meth:`BHOptions.check`)."""
    if options.route == PRIVATE and math.isinf(options.eps):
        warnings.warn(
            f"eps = inf: {NONPRIVATE_FIT}, NOT private.", NonPrivateWarning, stacklevel=caller_stacklevel()
        )


# --------------------------------------------------------------------------- eta derivation
def z_mean_delta(lo: float, hi: float, n: int, sigma: float, neighbouring: str = "replace") -> float:
    """Δz of z = √n (x̄ − μ₀)/σ for data in [lo, hi], public σ and n.

    Replacing one row moves x̄ by at most (hi − lo)/n, so z by (hi − lo)/(σ√n).
    Add/remove-one is not offered: n (in z's scale) would be private.  Public as
    ``dpstats.z_mean_delta``: with :func:`eta_two_sided_z` it gives ``dp_bh``'s ``eta`` for
    p-values of one-sample z-tests of means on bounded data.

    Parameters
    ----------
    lo, hi : float
        Public bounds of the data (values outside are to be clipped before the test).
    n : int
        The public number of rows.
    sigma : float
        The public standard deviation in the z statistic's denominator.
    neighbouring : str
        ``"replace"`` only.

    Returns
    -------
    float
        The largest change of z when one row is replaced.

    Examples
    --------
    >>> z_mean_delta(0.0, 1.0, 10_000, 0.5)
    0.02
    """
    if neighbouring != "replace":
        raise ValueError("z_mean_delta holds under replace-one-row (n public); got " + repr(neighbouring))
    return (hi - lo) / (sigma * math.sqrt(n))


def eta_two_sided_z(delta_z: float, truncate: float = TRUNCATE_DEFAULT) -> float:
    """η of equation (4): the largest change of log max(2Φ̄(|z|), ν) when z moves by at most Δz.

    Public as ``dpstats.eta_two_sided_z``: the ``eta`` to declare to ``dp_bh`` for raw p-values of
    two-sided z-tests whose statistics each move by at most ``delta_z`` between neighbouring data
    sets (e.g. :func:`z_mean_delta` for means of bounded data); ``truncate`` must be the ``truncate``
    given to ``dp_bh``.  The normal hazard increases, so the largest change sits at the
    truncation point u_ν = Φ̄⁻¹(ν/2): η = log Φ̄(u_ν − Δz) − log Φ̄(u_ν).

    Parameters
    ----------
    delta_z : float
        A public bound on how far one row moves each z statistic.
    truncate : float
        ν, the p-value truncation of ``dp_bh`` (its default here too).

    Returns
    -------
    float
        η, the sensitivity of log max(p, ν).

    Examples
    --------
    >>> eta = eta_two_sided_z(0.002, 1e-10)
    >>> round(eta, 5), eta <= 0.002 * hazard_bound(1e-10)
    (0.01323, True)
    """
    u_nu = float(-ndtri(truncate / 2.0))
    lower = max(u_nu - delta_z, 0.0)
    return float(log_ndtr(-lower) - log_ndtr(-u_nu))


def hazard_bound(truncate: float) -> float:
    """h(u_ν) = φ(u_ν)/Φ̄(u_ν), the largest hazard over the truncated range (the slope bound in (4))."""
    u_nu = float(-ndtri(truncate / 2.0))
    return float(math.exp(-0.5 * u_nu * u_nu - 0.5 * math.log(2 * math.pi) - log_ndtr(-u_nu)))


def z_slope_delta(y_lo: float, y_hi: float, n: int, sigma: float, neighbouring: str = "replace") -> float:
    """Δz of equation (7): the most one replaced row moves any marginal slope z_j of (5).

    Δz = 2(1 − 1/n)(y_hi − y_lo)/(σ√n), whatever the design columns' bounds
    (each column is scaled by its own half-width τ_j).

    Examples
    --------
    >>> round(z_slope_delta(-1.0, 1.0, 10_000, 1.0), 6)
    0.039996
    """
    if neighbouring != "replace":
        raise ValueError("z_slope_delta holds under replace-one-row (n public); got " + repr(neighbouring))
    return 2.0 * (1.0 - 1.0 / n) * (y_hi - y_lo) / (sigma * math.sqrt(n))


@dataclass(frozen=True)
class MarginalZ:
    """The statistics of (5) on clipped data: z_j, their p-values, and how many values were clipped."""

    z: np.ndarray
    p_values: np.ndarray
    n_clipped: int


def marginal_slope_z(
    X: np.ndarray, y: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray, y_lo: float, y_hi: float, sigma: float
) -> MarginalZ:
    """Two-sided z-tests of each column's marginal slope, equation (5), after clipping to the bounds.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> out = marginal_slope_z(X, np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0]), np.array([4.0]),
    ...                        -2.0, 2.0, 1.0)
    >>> out.z.round(4).tolist(), out.n_clipped
    ([0.75], 0)
    """
    Xc = np.clip(X, x_lo, x_hi)
    yc = np.clip(y, y_lo, y_hi)
    n_clipped = int(np.count_nonzero(Xc != X) + np.count_nonzero(yc != y))
    S = (Xc - Xc.mean(axis=0)).T @ (yc - yc.mean())
    tau = (np.asarray(x_hi, dtype=float) - np.asarray(x_lo, dtype=float)) / 2.0
    z = S / (sigma * tau * math.sqrt(y.size))
    return MarginalZ(z=z, p_values=2.0 * np.exp(log_ndtr(-np.abs(z))), n_clipped=n_clipped)


@dataclass(frozen=True)
class SlopeTests:
    """The public inputs of Δz in (7): n (replace one row), the response's bound width W_y, and σ;
    ``columns_public`` False when levels were read from the rows, so the number m of hypotheses (one
    per design column) depends on the data and no text quotes it or a number derived from it."""

    n: int
    y_width: float
    sigma: float
    columns_public: bool = True

    @property
    def delta_z(self) -> float:
        return z_slope_delta(0.0, self.y_width, self.n, self.sigma)


# --------------------------------------------------------------------------- options
@dataclass(frozen=True)
class BHOptions(Options):
    """dp_bh's options, checked once (defaults: the signature of :func:`dpstats.dp_bh`).

    ``route`` is :data:`PRIVATE` (raw p-values), :data:`MARGINAL_Z` (a formula on bounded
    rows) or :data:`POST_PROCESSING` (a private fit's released p-values), from the first
    argument.  On the private route ``eta`` is the η the guarantee rests on
    (:data:`ETA_DEFAULT` unless ``eta_declared``); on the formula route it is derived by the plan.
    """

    PUBLIC_N = PublicN("dp_bh's formula route", "n is in every z-statistic's scale")

    route: str
    formula: str | None
    q: float
    eps: float | None
    delta: float
    eta: float | None
    eta_declared: bool
    truncate: float
    max_rejections: int | None
    neighbouring: str
    bounds: Any
    sigma: float | None
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> BHOptions:
        """Cheap checks of dp_bh's arguments for the route its first argument takes (nothing read)."""
        q = given["q"]
        if isinstance(q, (pd.DataFrame, Mapping)):  # q of the wrong type (the data given by position)
            raise PrivacyParameterError(
                "pass the data by name: dp_bh('y ~ .', data=df, q=0.1, ...); q is the target FDR."
            )
        q = check_fraction(q, "q", low_open=True)
        neighbouring = check_neighbouring(given["neighbouring"])
        if isinstance(given["p_values"], str):
            return cls.from_given(
                given, route=MARGINAL_Z, formula=given["p_values"], q=q, **_formula_checks(given)
            )
        _refuse_formula_arguments(given)
        fit = given["p_values"]
        if hasattr(fit, "tidy") and _is_private_fit(fit):
            _refuse_budget_for_post_processing(given)
            _refuse_uncovered_fit_under_strict(fit.privacy, given["strict"])
            return cls.from_given(given, route=POST_PROCESSING, formula=None, q=q, eta_declared=False)
        if given["eps"] is None:
            raise PrivacyParameterError(
                "eps is needed for raw p-values (private BH spends budget); give e.g. eps=1.0. "
                "Only a private fit's released p-values can be post-processed without eps."
            )
        eps = check_eps(given["eps"], allow_inf=True)
        if math.isinf(eps) and given["strict"]:
            raise PrivacyParameterError(
                "strict=True refuses eps = inf (a non-private analysis); give a finite eps."
            )
        return cls.from_given(
            given,
            route=PRIVATE,
            formula=None,
            q=q,
            neighbouring=neighbouring,
            eps=eps,
            delta=check_delta(given["delta"]),
            eta=_check_eta(given["eta"], given["strict"]) if math.isfinite(eps) else given["eta"],
            eta_declared=given["eta"] is not None,
            truncate=check_fraction(given["truncate"], "truncate", low_open=True),
        )


def _formula_checks(given: Mapping[str, Any]) -> dict[str, Any]:
    """The formula route's checks, in order (nothing read before them); its checked values."""
    if given["eps"] is None:
        raise PrivacyParameterError(
            "eps is needed for the formula route (private BH spends budget); e.g. eps=1.0."
        )
    eps, delta = check_eps(given["eps"], allow_inf=True), check_delta(given["delta"])
    if math.isinf(eps) and given["strict"]:
        raise PrivacyParameterError(
            "strict=True refuses eps = inf (a non-private analysis); give a finite eps."
        )
    if given["eta"] is not None:
        raise PrivacyParameterError(
            "eta is derived on the formula route (from the bounds, n and sigma); leave eta out."
        )
    if given["neighbouring"] != "replace":
        raise PrivacyParameterError(
            'the formula route holds under neighbouring="replace" only: n is in every z-statistic\'s scale.'
        )
    data, bounds, sigma = given["data"], given["bounds"], given["sigma"]
    if data is None:
        raise DataError(
            "a formula needs data=: a data frame (pandas, polars, Arrow, DuckDB) or a dict of columns."
        )
    if bounds is None or is_auto(bounds):
        raise PrivacyParameterError(
            "bounds= is needed on the formula route: declare public bounds of every column and of the "
            "response, e.g. bounds=(-4, 4) or bounds={'x1': (0, 1), 'y': (-5, 5)} (bounds from the data "
            "or bounds='auto' are not offered here)."
        )
    if (
        isinstance(sigma, bool)
        or not isinstance(sigma, numbers.Real)
        or not (math.isfinite(sigma) and sigma > 0)
    ):
        raise PrivacyParameterError(
            f"sigma must be a positive finite number (the public sd of the response under a null), got "
            f"{sigma!r}; e.g. sigma=1.0."
        )
    truncate = check_fraction(given["truncate"], "truncate", low_open=True)
    return {"eps": eps, "delta": delta, "sigma": float(sigma), "truncate": truncate, "eta_declared": False}


def _refuse_formula_arguments(given: Mapping[str, Any]) -> None:
    named = [name for name in ("data", "bounds", "sigma", "levels", "na_action") if given[name] is not None]
    if named:
        raise DataError(
            f"{', '.join(named)} apply only when the first argument is a formula (e.g. dp_bh('y ~ .', "
            f"data=df, ...)); leave {' and '.join(named)} out for p-values or a fit."
        )


def _is_private_fit(fit) -> bool:
    """A fit whose p-values were released by a DP mechanism: it carries a finite-eps privacy statement."""
    statement = getattr(fit, "privacy", None)
    return isinstance(statement, PrivacyStatement) and math.isfinite(statement.eps)


def _refuse_budget_for_post_processing(given: Mapping[str, Any]) -> None:
    named = [name for name in ("eps", "eta", "max_rejections") if given[name] is not None]
    if named:
        raise PrivacyParameterError(
            f"this fit's p-values are already private, so BH on them is post-processing and spends no "
            f"budget; {', '.join(named)} would have no effect. Leave {' and '.join(named)} out."
        )


def _refuse_uncovered_fit_under_strict(statement: PrivacyStatement, strict: bool) -> None:
    if strict and statement.data_dependent_steps:
        raise PrivacyParameterError(
            "strict=True refuses a fit whose guarantee does not cover its data-dependent steps ("
            + "; ".join(statement.data_dependent_steps)
            + "); refit it with strict=True (declared bounds) first."
        )


def _check_eta(eta, strict: bool) -> float:
    if eta is None:
        if strict:
            raise PrivacyParameterError(
                "strict=True refuses the default eta: the guarantee rests on eta, the largest change of "
                "log max(p, truncate) between neighbouring data sets; declare it, e.g. "
                "eta=dpstats.eta_two_sided_z(delta_z, truncate) for z-tests on bounded data."
            )
        return ETA_DEFAULT
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real) or not (math.isfinite(eta) and eta > 0):
        raise PrivacyParameterError(
            f"eta must be a positive finite number (the sensitivity of log p-values), got {eta!r}; "
            "e.g. eta=0.01."
        )
    return float(eta)


def rejections(max_rejections: int | None, m: int, *, shown: bool = True) -> int:
    """k, the number of hypotheses peeled: ``max_rejections`` checked against the m hypotheses
    (public: their count, unless ``shown`` is False: levels read from the rows), or min(m, 20).

    Examples
    --------
    >>> rejections(None, 50), rejections(3, 50)
    (20, 3)
    """
    if max_rejections is None:
        return min(m, MAX_REJECTIONS_DEFAULT)
    return check_whole_in(
        max_rejections,
        1,
        m,
        "max_rejections must be a whole number with 1 <= max_rejections <= "
        + (
            f"{m} (the number of p-values)"
            if shown
            else f"m, the number of p-values (one per design column; m {LEVELS_READ_NOT_SHOWN})"
        )
        + f", got {max_rejections!r}.",
    )


# --------------------------------------------------------------------------- hypotheses
@dataclass(frozen=True)
class Hypotheses:
    """What BH runs on: each hypothesis' name and p-value (private: never released on the private
    routes).  On the formula route also the tests behind them, their n (public: replace one row),
    the public inputs of Δz and the frame's counts (diagnostics only)."""

    names: list[str]
    p_values: np.ndarray
    n: int = 0
    tests: MarginalZ | None = None
    setting: SlopeTests | None = None
    rows_dropped: int = 0
    values_filled: int = 0
    given: np.ndarray | None = None  # raw route: the p-values as given, before the public rule (eps = inf)


P_VALUE_RULE = (
    "p-values are mapped by a public rule before anything else: a missing (NaN) p-value counts as 1 "
    "(never rejected) and values outside [0, 1] are clipped to it; nothing is checked on them"
)


def public_rule(p: np.ndarray) -> np.ndarray:
    """:data:`P_VALUE_RULE`: p-values computed from private data are private, so no check on them may
    refuse (a refusal would release that one of them is NaN or out of range; DESIGN, threat model).

    Examples
    --------
    >>> public_rule(np.array([0.2, np.nan, 1.5, -0.1])).tolist()
    [0.2, 1.0, 1.0, 0.0]
    """
    return np.where(np.isnan(p), 1.0, np.clip(p, 0.0, 1.0))


def hypotheses(p_values) -> Hypotheses:
    """Names and p-values from an array, Series, dict, or a fit's ``tidy()`` (columns ``term`` and
    ``p.value``, intercept left out), mapped by :func:`public_rule`: nothing is checked on their values."""
    if hasattr(p_values, "tidy"):
        table = p_values.tidy()
        missing = {"term", "p.value"} - set(getattr(table, "columns", []))
        if missing:
            raise DataError(
                f"a fit given to dp_bh needs tidy() with columns 'term' and 'p.value'; missing {sorted(missing)}."
            )
        table = table[table["term"] != INTERCEPT]
        p_values = pd.Series(table["p.value"].to_numpy(dtype=float), index=table["term"].astype(str))
    if isinstance(p_values, Mapping):
        names, values = [str(k) for k in p_values], list(p_values.values())
    elif isinstance(p_values, pd.Series):
        names, values = [str(k) for k in p_values.index], p_values.to_numpy()
    else:
        names, values = None, p_values
    try:
        p = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(  # the conversion error would quote a value: not shown
            "p_values must be numbers in [0, 1]; some could not be read as numbers (text or objects?)."
        ) from None
    if p.ndim != 1 or p.size == 0:
        raise DataError(f"p_values must be a non-empty 1-d collection of numbers, got shape {p.shape}.")
    given, p = p, public_rule(p)
    names = [f"H{i + 1}" for i in range(p.size)] if names is None else names
    if len(set(names)) < len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})[:3]
        raise DataError(f"p_values' names must be unique (one per hypothesis); repeated: {repeated}.")
    return Hypotheses(names, p, given=given)


def slope_boxes(mf: ModelFrame, bounds: Any) -> tuple[list[str], Box, Box]:
    """The formula route's hypotheses (one per design column) and the declared boxes of the
    columns and the response; a column or bound left out is an error."""
    names = [nm for nm in mf.names if nm != INTERCEPT]
    if not names:
        raise DataError(f"the formula '{mf.formula}' has no predictor columns; dp_bh needs at least one.")
    x_box = design_box(bounds, mf, names)  # columns named by their terms where levels were read
    return names, x_box, response_box(bounds, mf)


def slope_hypotheses(mf: ModelFrame, boxes: tuple[list[str], Box, Box], options: BHOptions) -> Hypotheses:
    """The marginal slope z-tests (5) of the model frame's rows clipped to the declared boxes."""
    names, x_box, y_box = boxes
    lo_y, hi_y = float(y_box.lo[0]), float(y_box.hi[0])
    tests = marginal_slope_z(mf.X, mf.y, x_box.lo, x_box.hi, lo_y, hi_y, options.sigma)
    shown = not columns_read(mf)  # else the number of hypotheses depends on the rows
    rejections(options.max_rejections, len(names), shown=shown)
    n = int(mf.y.size)
    if options.delta > 0:
        check_delta(options.delta, n)
    setting = SlopeTests(n, hi_y - lo_y, options.sigma, columns_public=shown)
    return Hypotheses(names, tests.p_values, n, tests, setting, int(mf.n_dropped), int(mf.n_filled))


# --------------------------------------------------------------------------- the plan
@dataclass
class BHPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs: the route, q, k, ν,
    the peeling's calibration (λ; None on the post-processing route) and η (and Δz, σ on the
    formula route)."""

    route: str = PRIVATE
    q: float = 0.1
    k: int = 0
    truncate: float = TRUNCATE_DEFAULT
    calibration: PeelingCalibration | None = None
    eta: float | None = None
    delta_z: float | None = None
    sigma: float | None = None


def plan(options: BHOptions, m: int, setting: SlopeTests | None = None) -> BHPlan:
    """The plan of one dp_bh release from public inputs: the options, the number m of hypotheses
    and, on the formula route, the public inputs of Δz.

    Raw p-values: one ledger entry for the k peels (η declared, or the default, which the
    statement names as a default rather than a declaration).  Formula route: the same with η
    derived by (7) and (4).  A private fit's p-values: post-processing, zero budget.

    Examples
    --------
    >>> pl = plan(BHOptions.partial(route=PRIVATE, q=0.1, eps=1.0, delta=0.0, eta=0.01, eta_declared=True,
    ...                             truncate=1e-10, max_rejections=10, neighbouring="replace"), 100)
    >>> pl.eps, round(pl.calibration.scale, 3)
    (1.0, 0.3)
    >>> formula = BHOptions.partial(route=MARGINAL_Z, q=0.1, eps=1.0, delta=0.0, truncate=1e-10,
    ...                             max_rejections=5, neighbouring="replace", sigma=1.0)
    >>> pl = plan(formula, 20, SlopeTests(n=10**6, y_width=2.0, sigma=1.0))
    >>> pl.eps, round(pl.calibration.scale / (3 * 5), 5)
    (1.0, 0.02645)
    >>> plan(BHOptions.partial(route=POST_PROCESSING, q=0.1, neighbouring="replace"), 5).eps
    0.0
    """
    if options.route == POST_PROCESSING:
        return _plan_post_processing(options.q, m, options.neighbouring)
    if options.route in (PRIVATE, MARGINAL_Z) and math.isinf(options.eps):
        return _plan_nonprivate(options.q, m, options.neighbouring, options.route == MARGINAL_Z)
    k = rejections(options.max_rejections, m, shown=setting is None or setting.columns_public)
    if options.route == MARGINAL_Z:
        plan = _plan_marginal_z(options, m, k, setting)
    else:
        text = "declared" if options.eta_declared else "the default (not derived from your data)"
        plan = _plan_peeling(options, m, k, options.eta, text)
        plan.notes.append(P_VALUE_RULE[0].upper() + P_VALUE_RULE[1:] + ".")
    warn_chance(chance_text(options, plan, m, setting))
    return plan


# --------------------------------------------------------------------------- cannot beat chance
def warn_chance(text: str) -> None:
    """A :class:`~dpstats.errors.ChanceWarning` with ``text`` (none if empty); raised by :func:`plan`,
    before any budget is spent."""
    if text:
        warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())


def chance_text(options: BHOptions, pl: BHPlan, m: int, setting: SlopeTests | None = None) -> str:
    """Why no rejection can come from evidence (empty if one can), from public inputs only.

    By :func:`dpstats.privacy.fdr.rejection_gap`, when g = log ν + t − log(qk/m) > 0 the loosest cut
    of the step-up lies g below the smallest value a truncated log p-value can take: even p <= ν is
    rejected only when its noise falls below −g, and a rejection is the noise's doing.  The text says
    what would close the gap (λ <= λ* of :func:`~dpstats.privacy.fdr.largest_useful_scale`): the eps
    at this n, and on the formula route the n at this eps (on the raw route, the η).

    Examples
    --------
    >>> formula = BHOptions.partial(route=MARGINAL_Z, q=0.1, eps=1.0, delta=0.0, truncate=1e-10,
    ...                             max_rejections=20, neighbouring="replace", sigma=1.1)
    >>> setting = SlopeTests(n=20_000, y_width=10.0, sigma=1.1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     pl = plan(formula, 200, setting)
    >>> print(chance_text(formula, pl, 200, setting))  # doctest: +ELLIPSIS
    dp_bh cannot reject on evidence here: ... P(any rejection) <= 0.0143 whatever the data, ... eps >= 18.95 at this n, or n >= 7 320 996 at this eps.
    """
    if pl.calibration is None or pl.calibration.scale == 0:
        return ""
    k, q, nu, scale = pl.k, pl.q, pl.truncate, pl.calibration.scale
    gap = rejection_gap(scale, k, q, m, nu)
    if gap <= 0:
        return ""
    if setting is not None and not setting.columns_public:
        return CHANCE_AFTER_LEVELS
    shift = threshold_shift(scale, k, q)  # t of (2)
    cut = (math.log(q * k / m) - shift) / math.log(10)  # log10 of the loosest cut
    head = (
        f"dp_bh cannot reject on evidence here: a rejection needs a noisy p-value at or below "
        f"(q·k/m)·e^(−t) = {_power_of_ten(cut)} (t = {shift:.4g}), but no p-value counts below "
        f"ν = {nu:g}, so even p <= ν is rejected only when its Laplace noise (λ = {scale:.4g}) falls "
        f"{gap:.4g} below zero on the log scale: P(any rejection) <= "
        f"{any_rejection_bound(scale, k, q, m, nu):.3g} whatever the data, and a rejection is the "
        f"noise's doing (the FDR bound still holds). "
    )
    return head + _what_would_help(options, pl, scale, largest_useful_scale(k, q, m, nu), setting)


CHANCE_AFTER_LEVELS = (
    "dp_bh cannot reject on evidence here: a rejection needs a noisy p-value at or below (q·k/m)·e^(−t), "
    "but no p-value counts below ν (truncate), so even p <= ν is rejected only when its Laplace noise falls "
    "below zero on the log scale by more than the noise can be expected to, and a rejection is the noise's "
    "doing (the FDR bound still holds). The number m of hypotheses (one per design column), and so k, the "
    "noise scale and the eps or n that would be enough, depend on levels read from the rows and are not "
    "shown: declare the levels (levels=) to have them quoted; or raise eps or n, or lower max_rejections."
)
""":func:`chance_text` when levels were read from the rows (:attr:`SlopeTests.columns_public` False)."""


def _power_of_ten(log10_value: float) -> str:
    """10^x as text, also below the smallest float (e.g. x = -400 gives '1e-400')."""
    if log10_value > -300:
        return f"{10**log10_value:.3g}"
    return f"{10 ** (log10_value % 1):.3g}e{math.floor(log10_value)}"


def _what_would_help(
    options: BHOptions, pl: BHPlan, scale: float, useful: float, setting: SlopeTests | None
) -> str:
    """The eps (this n), the n (this eps, formula route) or the η (raw route) that bring λ to λ*."""
    if useful <= 0:
        return "No eps or n helps while q·k/m <= ν: lower truncate or raise max_rejections."
    k, eps, delta, nu = pl.k, options.eps, options.delta, pl.truncate

    def scale_at(eps_: float, eta: float) -> float:
        return peeling_scale(eps_, delta, k, eta).scale

    eps_needed = smallest_reaching(lambda e: scale_at(e, pl.eta) <= useful, eps, 1e12)
    text = f"A rejection on evidence needs λ <= {useful:.4g}: eps >= {eps_needed:.4g} at this " + (
        "n" if setting is not None else "eta"
    )
    if setting is None:
        return text + f", or eta <= {pl.eta * useful / scale:.3g} at this eps."

    def eta_at(n: float) -> float:
        return eta_two_sided_z(z_slope_delta(0.0, setting.y_width, max(int(n), 2), setting.sigma), nu)

    n_needed = smallest_reaching(lambda n: scale_at(eps, eta_at(n)) <= useful, setting.n, 1e18)
    n_text = f"{math.ceil(n_needed):,}".replace(",", " ")
    return text + f", or n >= {n_text} at this eps."


def _plan_peeling(options: BHOptions, m: int, k: int, eta: float, eta_text: str) -> BHPlan:
    """Private BH on m raw p-values whose log max(p, ν) moves by at most η: the k peels."""
    q, eps, delta, truncate, neighbouring = (
        options.q,
        options.eps,
        options.delta,
        options.truncate,
        options.neighbouring,
    )
    cal = peeling_scale(eps, delta, k, eta)
    entry = LedgerEntry(
        step=f"Report Noisy Min peeling of the {k} smallest of {m} truncated log p-values, "
        "each with a fresh noisy value",
        mechanism="Laplace peeling (Report Noisy Min)",
        eps=eps,
        delta=delta,
        sensitivity=f"ℓ∞ sensitivity η = {eta:g} of log max(p, ν) (declared by the user)",
        note=f"Lap(λ = {cal.scale:.4g}); {_composition_text(cal.composition, k)}",
        event=(
            {"kind": "zcdp", "rho": 5.0 * k * eta**2 / (2.0 * cal.scale**2)}
            if cal.composition == "zCDP"
            else {"kind": "pure", "eps": eps}
        ),
    )
    relation = "replace one row" if neighbouring == "replace" else "add or remove one row"
    return BHPlan(
        method="private Benjamini-Hochberg",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={
            "log max(p_i, ν), every i at once": f"η = {eta:g} ({eta_text}), ν = {truncate:g}",
            "one Report Noisy Min step": "2η/λ-DP (scores may move both ways)",
            "one fresh noisy value": "η/λ-DP (Laplace mechanism)",
        },
        assumptions=[
            f"the guarantee rests on η = {eta:g} ({eta_text}): for neighbouring data sets ({relation}) each "
            f"log max(p_i, {truncate:g}) changes by at most η",
            "the FDR bound needs valid null p-values (P(p <= u) <= u); it holds under any dependence",
        ],
        notes=[
            f"Private BH structure of Dwork, Su & Zhang (2021): p-values truncated at ν = {truncate:g}, "
            f"{k} Report Noisy Min peels of the log p-values with Lap(λ = {cal.scale:.4g}), BH step-up on "
            "the fresh noisy values; the calibration and the FDR bound are dpstats' own derivation.",
            f"Threshold shift t = λ log(5k/q) = {threshold_shift(cal.scale, k, q):.4g} on the log scale: "
            "all k fresh noises exceed −t with probability >= 1 − q/10.",
            f"FDR <= (m0/m)·q·H_k + q/10 <= {fdr_bound(q, k):.4g} (H_{k} = {harmonic(k):.4g}), "
            "under any dependence between valid p-values (dpstats' own derivation).",
            "Raw p-values are not released: only the peeled hypotheses, their noisy p-values, "
            "the rejections and the noisy threshold.",
        ],
        route=options.route,
        q=q,
        k=k,
        truncate=truncate,
        calibration=cal,
        eta=eta,
    )


def _plan_marginal_z(options: BHOptions, m: int, k: int, setting: SlopeTests) -> BHPlan:
    """Private BH on the marginal slope z-tests (5): η derived by (7) and (4), not declared."""
    n, y_width, sigma, delta_z, truncate = (
        setting.n,
        setting.y_width,
        setting.sigma,
        setting.delta_z,
        options.truncate,
    )
    eta = eta_two_sided_z(delta_z, truncate)
    pl = _plan_peeling(options, m, k, eta, "declared")
    why = (
        f"η = {eta:.4g} derived: Δz = 2(1 − 1/n)·W_y/(σ√n) = {delta_z:.4g} (n = {n}, W_y = {y_width:g}, "
        f"σ = {sigma:g}, replace one row), then η = log Φ̄(u_ν − Δz) − log Φ̄(u_ν), u_ν = Φ̄⁻¹(ν/2)"
    )
    pl.entries = [
        replace(
            pl.entries[0],
            step=f"Report Noisy Min peeling of the {k} smallest of {m} truncated log p-values of marginal "
            "slope z-tests, each with a fresh noisy value",
            sensitivity=f"ℓ∞ sensitivity of log max(p, ν): {why}",
        )
    ]
    pl.method = "private Benjamini-Hochberg on marginal slope z-tests"
    pl.sensitivities = {
        "centred cross product S_j = Σ(x_ij − x̄_j)(y_i − ȳ)": "(1 − 1/n)·W_j·W_y (replace one row; attained)",
        "z_j = S_j/(σ·(W_j/2)·√n), every j at once": f"Δz = {delta_z:.4g}",
        **{key: value for key, value in pl.sensitivities.items() if not key.startswith("log max")},
        "log max(p_i, ν), every i at once": f"η = {eta:.4g} (derived from the bounds, n and σ), ν = {truncate:g}",
    }
    pl.assumptions = [
        "privacy rests on the declared bounds (values outside are clipped) and on n being public "
        "(replace one row); it holds whatever the data's law",
        f"the p-values are valid (conservative) under H0j: given x_j, the y_i are independent with a common "
        f"mean and variance at most σ² = {sigma:g}² (normal approximation for bounded y)",
        pl.assumptions[1],
    ]
    pl.notes = [
        "Hypothesis j: zero marginal slope of the response on design column j; z_j scales the centred "
        "cross product by the public σ and half-width W_j/2, never by the data's spread, so that η "
        "follows from the declared bounds and σ alone.",
        *pl.notes[:-1],
        "Raw z-statistics and p-values are not released: only the peeled hypotheses, their noisy p-values, "
        "the rejections and the noisy threshold.",
    ]
    pl.delta_z, pl.sigma = delta_z, sigma
    return pl


def _composition_text(composition: str, k: int) -> str:
    if composition == "basic":
        return f"basic composition of {2 * k} steps: eps = 3kη/λ"
    if composition == "zCDP":
        return f"zCDP: ρ = 5kη²/(2λ²), converted once: {CONVERSIONS['zcdp']}"
    return composition


def _plan_post_processing(q: float, m: int, neighbouring: str) -> BHPlan:
    """BH on a private fit's released p-values: post-processing, zero budget."""
    entry = LedgerEntry(
        step=f"Benjamini-Hochberg at q = {q:g} on {m} released p-values",
        mechanism="post-processing",
        eps=0.0,
        delta=0.0,
        sensitivity="none: a function of released values only",
        note="post-processing of a DP release costs no budget (Dwork & Roth 2014, Prop. 2.1)",
        event={"kind": "post_processing"},
    )
    return BHPlan(
        method="Benjamini-Hochberg on private p-values",
        neighbouring=neighbouring,
        entries=[entry],
        assumptions=[
            "FDR <= (m0/m)·q if the released p-values are valid and independent or PRDS, and "
            f"<= q·H_m = {q * harmonic(m):.4g} under arbitrary dependence (Benjamini & Yekutieli 2001); "
            "a private fit's p-values are valid only as far as its inference accounts for the privacy noise, "
            "so this FDR control is approximate",
        ],
        notes=["BH used only the fit's released p-values: no extra privacy budget was spent."],
        route=POST_PROCESSING,
        q=q,
    )


def _plan_nonprivate(q: float, m: int, neighbouring: str, z_tests: bool = False) -> BHPlan:
    """eps = inf on raw p-values, or on the formula route's marginal z-tests (``z_tests``, their p-values
    computed exactly, without noise): R's BH, not private."""
    fit = Z_REFERENCE if z_tests else NONPRIVATE_FIT
    return BHPlan(
        method="Benjamini-Hochberg (non-private reference, as R's p.adjust)"
        + (" on marginal slope z-tests" if z_tests else ""),
        neighbouring=neighbouring,
        entries=[LedgerEntry.nonprivate(f"{fit} at q = {q:g} on {m} p-values (eps = inf, NOT private)")],
        assumptions=[
            f"FDR <= (m0/m)·q if the p-values are valid and independent or PRDS, and <= q·H_m = "
            f"{q * harmonic(m):.4g} under arbitrary dependence (Benjamini & Yekutieli 2001)"
        ],
        notes=[
            "p-values used as given, as R's p.adjust uses them: a missing one stays missing (NA) and is not "
            "counted in m; hypothesis i is rejected when its adjusted p-value is at most q."
        ],
        route=NONPRIVATE,
        q=q,
    )


# --------------------------------------------------------------------------- the release
def release(hyp: Hypotheses, pl: BHPlan, noise: NoiseSource) -> PrivateBH | BHRejections:
    """BH on the hypotheses' p-values as planned: the private BH of
    :func:`dpstats.privacy.fdr.private_bh` (both private routes), plain BH on a private fit's
    released p-values (post-processing), or R's BH on the p-values as given (eps = inf)."""
    p_values = hyp.p_values
    if pl.route == NONPRIVATE:
        return nonprivate_bh(hyp.given if hyp.given is not None else p_values, pl.q)
    if pl.route == POST_PROCESSING:
        return benjamini_hochberg(p_values, pl.q)
    return private_bh(p_values, q=pl.q, k=pl.k, truncate=pl.truncate, calibration=pl.calibration, noise=noise)


def diagnostics(hyp: Hypotheses, q: float) -> dict[str, Any]:
    """What ``diagnostics=True`` attaches, computed from the data and not private: the raw p-values and
    non-private BH's rejections at level ``q``, and on the formula route the raw z's and the frame's counts."""
    names, tests = hyp.names, hyp.tests
    exact = benjamini_hochberg(hyp.p_values, q)
    shown = {
        "raw_p_values": dict(zip(names, hyp.p_values.tolist())),
        "non_private_bh_rejected": [names[i] for i in exact.rejected],
    }
    if tests is None:
        return shown
    counts = {"values_clipped": tests.n_clipped, "rows_dropped": hyp.rows_dropped}
    return {
        "raw_z": dict(zip(names, tests.z.tolist())),
        **shown,
        **counts,
        "values_filled": hyp.values_filled,
    }


def after_fit(fit: PrivacyStatement, pl: BHPlan) -> PrivacyStatement:
    """The statement of BH on a private fit's p-values: the fit's guarantee, with BH's zero-cost step."""
    return PrivacyStatement(
        method=f"{fit.method}, then Benjamini-Hochberg",
        eps=fit.eps,
        delta=fit.delta,
        neighbouring=fit.neighbouring,
        ledger=list(fit.ledger) + list(pl.entries),
        mechanisms=list(fit.mechanisms) + ["post-processing"],
        sensitivities=dict(fit.sensitivities),
        assumptions=list(fit.assumptions) + list(pl.assumptions),
        data_dependent_steps=list(fit.data_dependent_steps),
        seeded=fit.seeded,
        samplers=list(fit.samplers),
        notes=list(fit.notes) + list(pl.notes),
    )
