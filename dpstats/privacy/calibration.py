"""Noise calibration for the Gaussian mechanism (DESIGN §2.5).

Two calibrations of sigma for releasing f(D) + N(0, sigma² I) with l2
sensitivity ``sensitivity``:

* :func:`classic_gaussian_sigma` — sigma = Δ₂·sqrt(2 ln(1.25/δ))/ε, the textbook
  bound (Dwork & Roth 2014, Theorem A.1), proven only for ε < 1.
* :func:`analytic_gaussian_sigma` — the smallest sigma for which the mechanism is
  (ε, δ)-DP, from the exact characterisation of Balle & Wang (2018,
  "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8):
  the mechanism is (ε, δ)-DP iff

      Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

  :func:`gaussian_delta` evaluates the left side; sigma is found by bisection
  on it (it decreases in σ).  Valid for every ε > 0, and never larger than the
  classic sigma.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from ..errors import PrivacyParameterError


def _check(eps: float, delta: float, sensitivity: float) -> None:
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise PrivacyParameterError(f"eps must be a positive finite number, got {eps!r}.")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise PrivacyParameterError(
            f"delta must be in (0, 1) for the Gaussian mechanism, got {delta!r}; try 1e-6.")
    if not (isinstance(sensitivity, (int, float)) and math.isfinite(sensitivity) and sensitivity > 0):
        raise PrivacyParameterError(
            f"sensitivity must be a positive finite number, got {sensitivity!r}.")


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
            "use analytic_gaussian_sigma (Balle & Wang 2018), valid for every eps.")
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps


def gaussian_delta(eps: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Smallest δ for which N(0, σ²) noise on a Δ₂-sensitive f is (ε, δ)-DP.

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) (Balle & Wang 2018,
    Theorem 8); the second term is evaluated in log space.

    Examples
    --------
    >>> gaussian_delta(1.0, sigma=1e6) < 1e-12
    True
    """
    if not (sigma > 0):
        raise PrivacyParameterError(f"sigma must be positive, got {sigma!r}.")
    a = sensitivity / (2 * sigma)
    b = eps * sigma / sensitivity
    first = float(ndtr(a - b))
    second = math.exp(eps + float(log_ndtr(-a - b)))
    return max(0.0, first - second)


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0,
                            rtol: float = 1e-12) -> float:
    """Smallest σ with ``gaussian_delta(eps, σ, sensitivity) <= delta``.

    Balle & Wang (2018), Theorem 8, solved by bisection (Brent's method) on σ;
    the returned σ is nudged up by ``rtol`` so that the constraint holds after
    rounding.

    Examples
    --------
    >>> sigma = analytic_gaussian_sigma(1.0, 1e-5)
    >>> gaussian_delta(1.0, sigma) <= 1e-5
    True
    >>> sigma < classic_gaussian_sigma(0.99, 1e-5)
    True
    """
    _check(eps, delta, sensitivity)

    def excess(sigma: float) -> float:
        return gaussian_delta(eps, sigma, sensitivity) - delta

    lo = hi = sensitivity
    while excess(hi) > 0:
        hi *= 2
    while excess(lo) <= 0 and lo > 1e-300:
        lo /= 2
    sigma = brentq(excess, lo, hi, xtol=1e-15 * hi, rtol=1e-14)
    sigma *= 1 + rtol
    while excess(sigma) > 0:  # guard against the root landing a hair below
        sigma *= 1 + 1e-9
    return float(sigma)
