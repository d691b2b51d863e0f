"""The accuracy rate of the paper's Theorem 1.1 and the public rule that it is vacuous.

:func:`theorem_accuracy` solves Kamath, Sheffet, Singhal & Ullman (2019), Theorem 1.1, for the
accuracy alpha at a given n; :func:`vacuous_warning` applies it before anything is spent, from
public inputs only (n where public, d, k, eps, delta), at the most favourable weights (every
component 1/k), and after the release at the smallest released weight: when alpha is infinite
there, the theorem's sample-size condition fails at this n and eps.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...errors import ChanceWarning, caller_stacklevel


def theorem_accuracy(n: int, d: int, k: int, eps: float, delta: float, w_min: float) -> float:
    """Accuracy alpha at which Theorem 1.1 of Kamath, Sheffet, Singhal & Ullman (2019) is met with n samples.

    The theorem's sample size is
    n = (d²/(α² w_min) + d²/(α w_min eps) + poly(k)·d^{3/2}/(w_min eps)) · polylog(…)
    (Theorem 1.1, "Main, Informal"; the plain-text copy of the paper in
    /work/shared/papers lost its formulas, the form is the published statement's).
    Constants we had to fix: every absolute constant is 1, poly(k) = k and the
    polylog factor is log(1/δ) (its δ part; the other logarithms are dropped), so
    the result is an order of magnitude, not a guarantee.  Solving
    A α² − (d²/eps) α − d² = 0 with A = n·w_min/log(1/δ) − k d^{3/2}/eps gives α;
    ``inf`` when A <= 0 (n below the theorem's requirement).

    Examples
    --------
    >>> round(theorem_accuracy(20000, 2, 3, 1.0, 1e-6, 1 / 3), 3)
    0.096
    >>> theorem_accuracy(150, 2, 3, 5.0, 1e-5, 0.05)
    inf
    """
    if w_min <= 0 or not np.isfinite(eps):
        return math.inf if w_min <= 0 else 0.0
    A = n * w_min / math.log(1 / delta) - k * d**1.5 / eps
    if A <= 0:
        return math.inf
    b = d * d / eps
    return float((b + math.sqrt(b * b + 4 * A * d * d)) / (2 * A))


def vacuous_warning(
    n: int | None, d: int, k: int, eps: float, delta: float, w_min: float | None = None
) -> str | None:
    """Warn (:class:`~dpstats.errors.ChanceWarning`) when Theorem 1.1's sample-size condition cannot hold.

    The rule: alpha of :func:`theorem_accuracy` is infinite, i.e. n·w_min/log(1/δ) <= k·d^{3/2}/eps:
    the smallest component has fewer rows than the theorem's privacy term needs to locate it, at
    any accuracy.  Before anything is spent (``w_min`` None) it is applied at w_min = 1/k, the most
    favourable mixture (alpha only grows as the smallest weight shrinks), from public inputs only;
    after the release at the smallest released weight (post-processing of a released value).
    Nothing is checked when n is private (``n`` None).  A finite alpha >= 1 is not warned: with the
    constants set to 1 it is an order of magnitude only (d = 10, k = 3, n = 10 000, eps = 1 gives
    1.2 while the method recovers the mixture; tests/test_gmm.py), and the printed result says so.
    Returns the text (also warned), or None.

    Examples
    --------
    >>> vacuous_warning(None, 2, 3, 5.0, 1e-5) is None  # n private: nothing is said
    True
    >>> vacuous_warning(20000, 2, 3, 1.0, 1e-6) is None
    True
    """
    if n is None:
        return None
    w = 1.0 / k if w_min is None else w_min
    if math.isfinite(theorem_accuracy(n, d, k, eps, delta, w)):
        return None
    which = (
        "even if every component had weight 1/k"
        if w_min is None
        else f"at the smallest released weight {w_min:.3g}"
    )
    text = (
        f"dp_gmm's release carries no accuracy guarantee: with n = {n} rows, d = {d}, k = {k}, eps = {eps:g}, "
        f"delta = {delta:g} the accuracy alpha of Kamath et al.'s Theorem 1.1 is Inf {which} (the rows of "
        "the smallest component are below the theorem's requirement k·d^1.5·log(1/delta)/eps), so the released weights, means and covariances may be far from "
        "any mixture in the data. Raise eps or n, fit fewer components (k) or columns, or declare tighter "
        "bounds."
    )
    warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
    return text
