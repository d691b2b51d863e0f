"""Noise calibration: every Gaussian-mechanism and zCDP conversion of dpstats.

The (eps, delta) Gaussian mechanism releases f(D) + N(0, sigma² I) for an f of
l2 sensitivity ``sensitivity``; two calibrations of sigma:

* :func:`classic_gaussian_sigma` — sigma = Δ₂·sqrt(2 ln(1.25/δ))/ε, the textbook
  bound (Dwork & Roth 2014, Theorem A.1), proven only for ε < 1.
* :func:`analytic_gaussian_sigma` — the smallest sigma for which the mechanism is
  (ε, δ)-DP, from the exact characterisation of Balle & Wang (2018,
  "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8):
  the mechanism is (ε, δ)-DP iff

      Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

  :func:`gaussian_delta` evaluates the left side (Φ from the C library's erfc,
  log Φ in the far tail from its asymptotic series); sigma is found by
  bisection on it (it decreases in σ), and from ε = 1e12 in closed form from the first term
  (σ → Δ/√(2ε); the derivation is in the function's docstring).  Valid for every finite
  ε > 0, and never larger than the classic sigma.
* :func:`calibrate_gaussian` — what the doors use: the analytic sigma for every ε
  (the classic one, where the papers state it, adds noise the budget does not need).

Zero-concentrated DP (Bun & Steinke 2016, "Concentrated Differential Privacy:
Simplifications, Extensions, and Lower Bounds"), for pipelines accounted in
zCDP and converted to (eps, delta) once (dp_lm, dp_glm, dp_gmm, dp_pca, vertical_glm,
dp_bh, private bounds, the zCDP filter):

* ρ-zCDP implies (ε, δ)-DP for

      δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1 − 1/α)^α

  (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy",
  Prop. 12 and Cor. 13), for every ρ-zCDP mechanism, also one that mixes pure-DP
  parts counted at ε²/2.  At every α it is tighter than Bun & Steinke's
  ρ + 2√(ρ log(1/δ)) (Prop. 1.3), which dpstats used before.
  :func:`zcdp_eps` is the map (ρ, δ) → ε, :func:`rho_from_eps_delta` its
  conservative inverse (numerics there).
* Where every step is a Gaussian mechanism, their composition (also adaptive) is
  one Gaussian with μ² = Σ (Δᵢ/σᵢ)² = 2ρ (Dong, Roth & Su 2022, Cor. 3.3), which is
  (ε, δ)-DP exactly when Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) ≤ δ (Balle & Wang 2018,
  Theorem 8): :func:`gaussian_rho_from_eps_delta` gives the largest such ρ = μ²/2,
  tighter still.  :data:`CONVERSIONS` names both for the privacy statement.
* The Gaussian mechanism with noise N(0, σ²) is (Δ²/2σ²)-zCDP (Prop. 1.6):
  :func:`zcdp_gaussian_sigma`, σ = Δ/√(2ρ).
* An ε-DP mechanism (e.g. Laplace AboveThreshold) is ε²/2-zCDP (Prop. 1.4):
  :func:`svt_eps`.
* The exponential mechanism (ε-DP) is ε²/8-zCDP (Cesar & Rogers 2021,
  bounded range): :func:`em_eps`.
* zCDP composes additively, also adaptively (Lemma 2.3).

Conventions: docs/architecture.md, "Privacy conventions".
"""

from __future__ import annotations

import math
import sys
from functools import lru_cache
from statistics import NormalDist

from ..errors import PrivacyParameterError


def _check(eps: float, delta: float, sensitivity: float) -> None:
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise PrivacyParameterError(f"eps must be a positive finite number, got {eps!r}.")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise PrivacyParameterError(
            f"delta must be in (0, 1) for the Gaussian mechanism, got {delta!r}; try 1e-6."
        )
    if not (isinstance(sensitivity, (int, float)) and math.isfinite(sensitivity) and sensitivity > 0):
        raise PrivacyParameterError(f"sensitivity must be a positive finite number, got {sensitivity!r}.")


def classic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Textbook Gaussian sigma Δ₂·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1).

    Raises :class:`~dpstats.errors.PrivacyParameterError` for ε >= 1, where the
    theorem does not hold; use :func:`analytic_gaussian_sigma` there.

    Examples
    --------
    >>> round(classic_gaussian_sigma(0.5, 1e-5), 4)
    9.6896
    """
    _check(eps, delta, sensitivity)
    if eps >= 1:
        raise PrivacyParameterError(
            f"the classic Gaussian calibration is proven only for eps < 1, got eps = {eps}; "
            "use analytic_gaussian_sigma (Balle & Wang 2018), valid for every eps."
        )
    return _classic_sigma(eps, delta, sensitivity)


def _classic_sigma(eps: float, delta: float, sensitivity: float) -> float:
    """Δ₂·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1), unchecked."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps


def gaussian_delta(eps: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Smallest δ for which N(0, σ²) noise on a Δ₂-sensitive f is (ε, δ)-DP.

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) (Balle & Wang 2018,
    Theorem 8); the second term is evaluated in log space.  With a = Δ/(2σ), b = εσ/Δ
    (so 2ab = ε), its log in the far tail is ε − (a + b)²/2 + log(series) = −(a − b)²/2 +
    log(series) (:func:`_log_tail`): no huge ε cancelling a huge square, so no overflow at
    any finite ε.

    Examples
    --------
    >>> gaussian_delta(1.0, sigma=1e6) < 1e-12
    True
    """
    if not (sigma > 0):
        raise PrivacyParameterError(f"sigma must be positive, got {sigma!r}.")
    a = sensitivity / (2 * sigma)
    b = eps * sigma / sensitivity
    first = normal_cdf(a - b)
    if -a - b > _ERFC_TAIL:  # here ε = 2ab < (a + b)²/2 < 685: no cancellation
        second = math.exp(eps + log_normal_cdf(-a - b))
    else:  # e^ε φ(a + b) = φ(a − b) as 2ab = ε
        second = math.exp(-0.5 * (a - b) ** 2 + _log_tail(-a - b))
    return max(0.0, first - second)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_ERFC_TAIL = -37.0  # below it Φ(x) < 1e-299 nears the end of the normal doubles: the series takes over


def normal_cdf(x: float) -> float:
    """Φ(x) = erfc(−x/√2)/2, accurate to a few ulps in both tails (equal to ``scipy.special.ndtr``
    within 1e-13 relative, ``tests/test_privacy_core.py``).

    Examples
    --------
    >>> normal_cdf(0.0), round(normal_cdf(1.959963984540054), 12)
    (0.5, 0.975)
    """
    return 0.5 * math.erfc(-x * _SQRT_HALF)


def log_normal_cdf(x: float) -> float:
    """log Φ(x) without underflow (equal to ``scipy.special.log_ndtr`` within 1e-13 relative).

    For x > 0, log1p(−Φ(−x)); down to x = −37, the log of :func:`normal_cdf`; below, the
    asymptotic series Φ(x) = φ(x)/(−x) · Σ_k (−1)^k (2k−1)!!/x^{2k} (Abramowitz & Stegun
    26.2.12), whose terms past k = 10 are below 1e-20 there.

    Examples
    --------
    >>> round(log_normal_cdf(-50.0), 6)
    -1254.831361
    """
    if x > 0:
        return math.log1p(-normal_cdf(-x))
    if x > _ERFC_TAIL:
        return math.log(normal_cdf(x))
    return -0.5 * x * x + _log_tail(x)


def _log_tail(x: float) -> float:
    """log Φ(x) + x²/2 for x <= −37: −log(−x) − log √(2π) + log Σ_k (−1)^k (2k−1)!!/x^{2k}
    (Abramowitz & Stegun 26.2.12, terms past k = 10 below 1e-20)."""
    z, term, series = 1.0 / (x * x), 1.0, 1.0
    for k in range(1, 11):
        term *= -(2 * k - 1) * z
        series += term
    return -math.log(-x) - _LOG_SQRT_2PI + math.log(series)


_EPS_FIRST_TERM = 1e12  # from here analytic_gaussian_sigma solves the first term alone (docstring)


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0, rtol: float = 1e-12) -> float:
    """Smallest σ with ``gaussian_delta(eps, σ, sensitivity) <= delta``.

    Balle & Wang (2018), Theorem 8, solved by bisection on σ to 1e-15 relative
    (the end of the bracket where the constraint holds); the returned σ is
    nudged up by ``rtol`` so that the constraint holds after rounding.

    For ε >= 1e12 the bisection cannot resolve the constraint: a = Δ/(2σ) and b = εσ/Δ are both
    near √(ε/2) at the root and their difference, which decides δ, is lost to rounding once
    √ε·1e-16 nears 1.  There σ solves the first term alone, Φ(a − b) = δ: with z = Φ⁻¹(δ) and
    u = σ/Δ, 1/(2u) − εu = z gives u = 1/(z + √(z² + 2ε)) (the root of εu² + zu − 1/2 = 0,
    rationalised; no cancellation), then nudged up by ``rtol``.  The second term is positive,
    so δ(σ) < Φ(a − b) = δ: the constraint holds exactly, not only in floating point.  This σ
    exceeds the smallest one by a relative ≈ 1/(2ε) <= 5e-13 (the second term is ≈ φ(z)/√(2ε),
    which moves the root's a − b by ≈ 1/√(2ε), and σ by that over a + b ≈ √(2ε)), below ``rtol``.
    σ → Δ/√(2ε) as ε → ∞; every finite ε gives a positive σ.

    Examples
    --------
    >>> sigma = analytic_gaussian_sigma(1.0, 1e-5)
    >>> gaussian_delta(1.0, sigma) <= 1e-5
    True
    >>> sigma < classic_gaussian_sigma(0.99, 1e-5)
    True
    """
    _check(eps, delta, sensitivity)
    if eps >= _EPS_FIRST_TERM:
        z = NormalDist().inv_cdf(delta)
        sigma = sensitivity / (z + _SQRT_2 * math.sqrt(eps + z * z / 2)) * (1 + rtol)  # 2ε may overflow
        if sigma < sys.float_info.min:  # subnormal or 0: too few bits to round up
            raise PrivacyParameterError(
                f"eps = {eps:g} at sensitivity {sensitivity:g} needs a Gaussian sigma near "
                f"{sensitivity:g}/sqrt(2 eps), below the smallest normal double; use a smaller eps."
            )
        return sigma

    def excess(sigma: float) -> float:
        return gaussian_delta(eps, sigma, sensitivity) - delta

    lo = hi = sensitivity
    while excess(hi) > 0:
        hi *= 2
    while excess(lo) <= 0 and lo > 1e-300:
        lo /= 2
    while hi - lo > 1e-15 * hi:  # excess(lo) > 0 >= excess(hi)
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    sigma = hi * (1 + rtol)
    while excess(sigma) > 0:  # guard against the root landing a hair below
        sigma *= 1 + 1e-9
    return float(sigma)


def calibrate_gaussian(eps: float, delta: float, sensitivity: float) -> tuple[float, str]:
    """Gaussian sigma for (eps, delta)-DP at l2 ``sensitivity``, and the calibration used.

    The analytic sigma of Balle & Wang (2018, Theorem 8) — the smallest for which the
    mechanism is (eps, delta)-DP — for every eps; no noise (0) for ε = inf.  Papers that
    state the classic Δ₂·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1; e.g. Pournaderi
    & Xiang's κ for ε < 1) need only an (ε, δ)-DP Gaussian step; the analytic sigma is one,
    with less noise (:func:`classic_gaussian_sigma` stays for comparison and audits).

    Returns
    -------
    (float, str)
        sigma, and a label of the calibration for the privacy statement.

    Examples
    --------
    >>> sigma, how = calibrate_gaussian(0.5, 1e-5, 1.0)
    >>> round(sigma, 4), how
    (7.0318, 'analytic (Balle & Wang 2018)')
    >>> sigma < classic_gaussian_sigma(0.5, 1e-5)
    True
    """
    if math.isinf(eps):
        return 0.0, "none (eps = inf)"
    return analytic_gaussian_sigma(eps, delta, sensitivity), "analytic (Balle & Wang 2018)"


# --------------------------------------------------------------------------- zCDP
#: how each zCDP budget is converted to (eps, delta), for the privacy statement
CONVERSIONS = {
    "zcdp": "ρ-zCDP is (eps, δ)-DP for δ = inf over α > 1 of e^((α−1)(αρ−eps))·(1 − 1/α)^α/(α−1) "
    "(Canonne, Kamath & Steinke 2020, Cor. 13)",
    "gaussian": "Gaussian releases of total ρ compose to one Gaussian of μ = √(2ρ) (Dong, Roth & Su "
    "2022, Cor. 3.3), (eps, δ)-DP exactly when Φ(−eps/μ + μ/2) − e^eps·Φ(−eps/μ − μ/2) ≤ δ "
    "(Balle & Wang 2018, Thm 8)",
}

_ORDER_STEP = 0.5  # coarse grid step in log(α − 1)
_ORDER_SPAN = 32  # grid points on each side of Bun & Steinke's optimal order
_ORDER_TOL = 1e-8  # golden-section tolerance in log(α − 1): eps to ~1e-16 relative (flat at the optimum)
_RHO_RTOL = 1e-12  # bisection width of the inverse, relative
_EVAL_MARGIN = 1e-12  # the inverse meets eps·(1 − this): room for the evaluation's rounding (~1e-15)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _eps_at_order(rho: float, log_inv_delta: float, s: float) -> float:
    """ε of ρ-zCDP at δ = e^(−log_inv_delta) through the order α = 1 + s alone (CKS 2020, Prop. 12).

    Solving δ = e^((α−1)(αρ−ε))(1 − 1/α)^α/(α−1) for ε: ε = αρ + (log(1/δ) − log α)/(α − 1)
    + log(1 − 1/α), with log(1 − 1/α) = −log1p(1/s) (no cancellation for large α).
    """
    return (1.0 + s) * rho + (log_inv_delta - math.log1p(s)) / s - math.log1p(1.0 / s)


def golden_section(
    f, lo: float, hi: float, *, tol: float = 0.0, steps: int | None = None
) -> tuple[float, float]:
    """(x, f(x)) with the smallest f(x) seen by golden-section search on [lo, hi] (f unimodal there), until
    the bracket is narrower than ``tol`` or after ``steps`` steps.

    Examples
    --------
    >>> x, fx = golden_section(lambda t: (t - 0.3) ** 2, 0.0, 1.0, tol=1e-9)
    >>> round(x, 6), fx < 1e-12
    (0.3, True)
    """
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa, fb = f(a), f(b)
    best = min((fa, a), (fb, b))
    step = 0
    while hi - lo > tol and (steps is None or step < steps):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = f(b)
        best, step = min(best, (fa, a), (fb, b)), step + 1
    return best[1], best[0]


@lru_cache(maxsize=4096)
def zcdp_eps(rho: float, delta: float) -> float:
    """Smallest ε for which a ρ-zCDP mechanism is (ε, δ)-DP by Canonne, Kamath & Steinke (2020, Cor. 13).

    ε = max(0, inf_{α>1} [αρ + (log(1/δ) − log α)/(α − 1) + log(1 − 1/α)]), the corollary's δ
    solved for ε at each order.  The infimum is searched over t = log(α − 1): a grid of step
    0.5 spanning ±16 around Bun & Steinke's optimal order α − 1 = √(log(1/δ)/ρ), then golden
    section between the best grid point's neighbours (to 1e-8 in t; it finds the minimum of a
    brute-force scan, ``tests/test_calibration_zcdp.py``).  Every order gives a valid bound, so
    the value returned — that at the best order found — is valid whatever the search finds, and it
    is never above Bun & Steinke's ρ + 2√(ρ log(1/δ)) (their order is on the grid, and there the
    corollary's factor (1 − 1/α)^α/(α − 1) is below 1).  A negative infimum means (0, δ)-DP: 0.

    Examples
    --------
    >>> round(zcdp_eps(0.5, 1e-6), 4)
    5.2215
    >>> zcdp_eps(0.5, 1e-6) < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    True
    """
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    log_inv_delta = math.log(1.0 / delta)
    centre = 0.5 * (math.log(log_inv_delta) - math.log(rho))

    def eps_at(t: float) -> float:
        return _eps_at_order(rho, log_inv_delta, math.exp(t))

    grid = [centre + _ORDER_STEP * j for j in range(-_ORDER_SPAN, _ORDER_SPAN + 1)]
    values = [eps_at(t) for t in grid]
    i = min(range(len(values)), key=values.__getitem__)
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    return max(0.0, min(values[i], golden_section(eps_at, lo, hi, tol=_ORDER_TOL)[1]))


@lru_cache(maxsize=4096)
def rho_from_eps_delta(eps: float, delta: float) -> float:
    """Largest ρ for which ρ-zCDP gives (eps, delta)-DP by :func:`zcdp_eps` (CKS 2020, Cor. 13), rounded down.

    Bisection on ρ for ``zcdp_eps(ρ, delta) <= eps·(1 − 1e-12)``, from Bun & Steinke's ρ
    (ρ + 2√(ρ log(1/δ)) = eps, a lower end since the corollary is tighter) to a doubling upper
    end, until the bracket is 1e-12 wide (relative); the lower end is returned, at which the
    inequality was evaluated to hold.  So ``zcdp_eps(rho_from_eps_delta(eps, delta), delta) <= eps``
    always, with 1e-12 to spare for the floating-point error of evaluating the corollary
    (about 1e-15 relative), and ρ is within about 2e-12 (relative) of the exact largest ρ.
    Valid for any ρ-zCDP mechanism, so for plans mixing Gaussian and pure-DP steps.

    Examples
    --------
    >>> rho = rho_from_eps_delta(1.0, 1e-6)
    >>> round(rho, 5), zcdp_eps(rho, 1e-6) <= 1.0
    (0.02436, True)
    >>> rho > (math.sqrt(math.log(1e6) + 1) - math.sqrt(math.log(1e6))) ** 2  # Bun & Steinke's
    True
    """
    if math.isinf(eps):
        return math.inf
    if not eps > 0:  # ρ = 0 is (0, δ)-DP; NaN or a negative eps is no budget
        if eps == 0:
            return 0.0
        raise PrivacyParameterError(f"eps must be >= 0, got {eps!r}.")
    target = eps * (1.0 - _EVAL_MARGIN)
    log_term = math.log(1.0 / delta)
    lo = (math.sqrt(log_term + target) - math.sqrt(log_term)) ** 2
    while zcdp_eps(lo, delta) > target:  # not expected (the corollary is tighter): stay safe
        lo /= 2.0
    hi = 2.0 * lo
    while zcdp_eps(hi, delta) <= target:
        lo, hi = hi, 2.0 * hi
    while hi - lo > _RHO_RTOL * hi:  # zcdp_eps(lo) <= target < zcdp_eps(hi)
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if zcdp_eps(mid, delta) <= target else (lo, mid)
    return lo


@lru_cache(maxsize=4096)
def gaussian_rho_from_eps_delta(eps: float, delta: float) -> float:
    """Largest total ρ = μ²/2 of Gaussian releases that is (eps, delta)-DP: exact, for all-Gaussian plans.

    Gaussian mechanisms of multipliers σᵢ/Δᵢ compose, also adaptively, to one Gaussian of
    μ² = Σ (Δᵢ/σᵢ)² = 2 Σ ρᵢ (Dong, Roth & Su 2022, Cor. 3.3), which is (eps, delta)-DP exactly
    when δ(eps) of Balle & Wang (2018, Theorem 8) is at most delta.  μ = 1/σ for the
    smallest such σ at sensitivity 1 (:func:`analytic_gaussian_sigma`: bisection to 1e-15,
    nudged up by 1e-12 and checked), so ρ is rounded down.  Only for plans whose every step
    is a Gaussian mechanism; any other plan uses :func:`rho_from_eps_delta`.

    Examples
    --------
    >>> rho = gaussian_rho_from_eps_delta(1.0, 1e-6)
    >>> round(rho, 5), gaussian_delta(1.0, 1 / math.sqrt(2 * rho)) <= 1e-6
    (0.02801, True)
    """
    if math.isinf(eps):
        return math.inf
    sigma = analytic_gaussian_sigma(eps, delta, 1.0)
    return 0.5 / (sigma * sigma)


def gaussian_eps(noise_multiplier: float, delta: float) -> float:
    """Exact eps at ``delta`` of a Gaussian mechanism with multiplier σ/Δ (Balle & Wang 2018, Thm 8).

    Examples
    --------
    >>> round(gaussian_eps(analytic_gaussian_sigma(1.0, 1e-6), 1e-6), 6)
    1.0
    """
    if not (delta > 0):
        return math.inf
    if math.isinf(noise_multiplier):
        return 0.0
    if gaussian_delta(0.0, noise_multiplier) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, noise_multiplier) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_delta(mid, noise_multiplier) > delta else (lo, mid)
        if hi - lo < 1e-13 * hi:
            break
    return hi


def standalone_eps(rho: float, delta: float, gaussian: bool) -> float:
    """The eps at ``delta`` of one ρ-zCDP step by itself, as the plans calibrate: exact for a Gaussian
    mechanism (:func:`gaussian_eps` of its multiplier 1/√(2ρ), Balle & Wang 2018), else Canonne,
    Kamath & Steinke's conversion (:func:`zcdp_eps`).  An upper bound either way (rounded up).

    Examples
    --------
    >>> round(standalone_eps(gaussian_rho_from_eps_delta(1.0, 1e-6), 1e-6, gaussian=True), 6)
    1.0
    >>> standalone_eps(0.01, 1e-6, gaussian=False) >= standalone_eps(0.01, 1e-6, gaussian=True)
    True
    """
    if gaussian:
        return gaussian_eps(math.inf if rho == 0 else 1.0 / math.sqrt(2.0 * rho), delta)
    return zcdp_eps(rho, delta)


def zcdp_gaussian_sigma(sensitivity: float, rho: float) -> float:
    """Noise standard deviation of a ρ-zCDP Gaussian mechanism: Δ₂/√(2ρ) (Bun & Steinke, Prop. 1.6).

    Examples
    --------
    >>> zcdp_gaussian_sigma(1.0, 0.5)
    1.0
    """
    return sensitivity / math.sqrt(2.0 * rho)


def svt_eps(rho: float, copies: int = 1) -> float:
    """ε of an ε-DP mechanism (Laplace AboveThreshold) worth ρ when ``copies`` runs see one row.

    ε-DP gives ε²/2-zCDP (Bun & Steinke, Prop. 1.4); ``copies`` parallel runs
    on a partition that one replaced row can touch (2 under replace-one) cost
    copies·ε²/2.

    Examples
    --------
    >>> svt_eps(0.5)
    1.0
    """
    return math.sqrt(2.0 * rho / copies)


def em_eps(rho: float) -> float:
    """ε of an exponential mechanism worth ρ-zCDP (ε²/8, Cesar & Rogers 2021, bounded range).

    Examples
    --------
    >>> em_eps(0.125)
    1.0
    """
    return math.sqrt(8.0 * rho)
