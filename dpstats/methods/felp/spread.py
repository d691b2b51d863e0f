"""Is the spread of FELP's released weights more than its privacy noise?  A test on released values only.

Step 4 releases w* = w_D + b, b L2-Laplace of scale s = Δ/ε on the d weights: b = R·U with ‖b‖ = R ~ Gamma(d, s)
and U uniform on the unit sphere, independent (:mod:`.perturbation`); each coordinate has variance
σ² = s²(d + 1) (:func:`~.sensitivity.noise_coordinate_sd`).  Under the null hypothesis that every true weight is
the same (no feature stands out: the selection is a random choice), the sample variance S² of the d released
weights is the noise's alone: (d − 1)S² = ‖P b‖² = R²·B with P the projection that removes the mean and
B = ‖P U‖² ~ Beta((d − 1)/2, 1/2), independent of R.  So S²/σ² = G²B/(d² − 1) with G ~ Gamma(d, 1): a law of
d alone, mean 1.  Its 95% quantile (:func:`null_spread_quantile`, by one-dimensional integration over B) is
about 1 + 1.645 · 2/√d for large d (G² has relative s.d. about 2/√d, more than a chi-square's √(2/d): the
coordinates of b share one radius, so a chi-square test would be too quick to see signal).

:func:`spread_text` warns (:class:`~dpstats.errors.ChanceWarning`) when S² is at most that quantile times σ²:
the spread is within what pure noise gives in 95% of releases, so the released weights do not show, at level
5%, that their order, and the selection, differ from a random choice.  When every true weight is the same it fires in 95% of
releases; it fires less as the true weights spread (their sample variance adds to S²'s mean).

:func:`best_spread_text` is its public counterpart, before anything is spent: the true weights' sample variance
is at most bound²/(d − 1) (bound ≥ ‖w_D‖, as :func:`~.sensitivity.chance_text`'s), so when even that leaves the
expected S²/σ² below the quantile, the test above reads most releases as noise, whatever the data.

Released values and public scales only (the weights, s, d, ``select``, eps): two neighbouring data sets give the
same kinds of message, the numbers in it being released.  The unseeded release clamps each weight to a public
bound (:mod:`.perturbation`), which can only lower S²: the test then warns more often, not less.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize
from scipy import stats as sps

SPREAD_LEVEL = 0.95  # the test's level: warn when S²/σ² is at most the null's 95% quantile
NULL_POINTS = 4000  # points over B in :func:`null_spread_quantile`


@lru_cache(maxsize=64)
def null_spread_quantile(d: int, level: float = SPREAD_LEVEL) -> float:
    """The ``level`` quantile of S²/σ² when every true weight is the same (module docstring); d ≥ 2.
    P(S²/σ² ≤ q) = E_B[F_G(√(q(d² − 1)/B))], the mean over B taken at ``NULL_POINTS`` equal-probability points.

    Examples
    --------
    >>> round(null_spread_quantile(50), 3), round(null_spread_quantile(5000), 3)
    (1.519, 1.047)
    """
    b = sps.beta.ppf((np.arange(NULL_POINTS) + 0.5) / NULL_POINTS, (d - 1) / 2.0, 0.5)
    scale = d * d - 1.0

    def cdf(q: float) -> float:
        return float(np.mean(sps.gamma.cdf(np.sqrt(q * scale / b), d)))

    return float(optimize.brentq(lambda q: cdf(q) - level, 1e-6, 100.0, xtol=1e-7))


def spread_ratio(weights: np.ndarray, scale: float) -> float:
    """S²/σ²: the sample variance of the released weights over the noise variance per weight."""
    sigma2 = scale * scale * (weights.size + 1)
    return float(np.var(weights, ddof=1)) / sigma2


def advice(eps: float, factor: float) -> str:
    """What would help: a larger eps·n (the noise s.d. per weight falls as 1/(eps·n) with the default learners,
    one per 20 rows), ``factor`` times at least when weights spread as far as their bound allows would not stand
    out at this call's (``factor`` > 1); and the planner for the user's own model."""
    at_least = (
        f", and even weights spread as far as their bound allows need eps·n about {factor:.2g} times this call's "
        "to stand out in half of the releases"
        if factor > 1.0
        else ""
    )
    return (
        f"Raise eps or n: the noise s.d. per weight falls as 1/(eps·n) with the default learners{at_least}; "
        f"dp.plan('dp_felp', n=..., p=..., eps=[{eps:g}, ...], assume=FelpModel(signals=..., shift=...)) "
        "predicts the recovery for your model at other eps and n"
    )


def best_case_factor(sd: float, d: int, bound: float) -> float:
    """The factor on eps·n (σ ∝ 1/(eps·n)) at which weights of the largest spread bound²/(d − 1) would make
    the expected S²/σ² reach the null's 95% quantile (stand out in about half of the releases)."""
    room = null_spread_quantile(d) - 1.0
    return math.sqrt(room * (d - 1)) * sd / bound


def spread_text(weights: np.ndarray, scale: float, eps: float, *, select: int, bound: float) -> str:
    """The post-release ChanceWarning's text when the spread of the released weights is not distinguishable
    from the privacy noise (S²/σ² at most the null's 95% quantile), or "" (module docstring).

    Examples
    --------
    >>> w = np.random.default_rng(1).normal(0.0, 0.571, 50)  # noise alone, s.d. 0.571 per weight
    >>> spread_text(w, 0.571 / math.sqrt(51), 1.0, select=5, bound=1.0)[:47]
    "dp_felp's released weights are mostly noise: th"
    >>> spread_text(np.r_[np.full(5, 3.0), np.zeros(45)], 0.01, 1.0, select=5, bound=1.0)
    ''
    """
    d = weights.size
    if d < 2 or scale <= 0.0 or not math.isfinite(eps) or select >= d:
        return ""
    ratio, limit = spread_ratio(weights, scale), null_spread_quantile(d)
    if ratio > limit:
        return ""
    sd = scale * math.sqrt(d + 1)
    return (
        f"dp_felp's released weights are mostly noise: their spread (s.d. {math.sqrt(ratio) * sd:.3g}) is within "
        f"what the privacy noise alone gives (s.d. {sd:.3g} per weight; pure noise spreads up to "
        f"{math.sqrt(limit) * sd:.3g} in 95% of releases), so they do not show that their top {select} differ "
        f"from a random choice of {select} of {d} (chance: {select / d:.0%} of them relevant). "
        + advice(eps, best_case_factor(sd, d, bound))
        + "."
    )


def best_spread_text(sd: float, d: int, eps: float, bound: float) -> str:
    """Before the spend, from public inputs: the part of :func:`~.sensitivity.chance_text` saying that even the
    largest spread the weights can have, bound²/(d − 1), would leave the expected S²/σ² below the test's
    quantile (so :func:`spread_text` would read most releases as noise), or ""."""
    if d < 2 or sd <= 0.0 or not math.isfinite(eps):
        return ""
    best = 1.0 + bound * bound / ((d - 1) * sd * sd)
    if best > null_spread_quantile(d):
        return ""
    return (
        f"even weights spread as far as their bound {bound:.4g} allows would add at most {best - 1.0:.0%} to the "
        f"spread the noise alone gives, which varies by up to {null_spread_quantile(d) - 1.0:.0%} between releases: "
        "most releases could not be told from noise"
    )
