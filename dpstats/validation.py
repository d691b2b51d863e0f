"""Cheap argument checks shared by the front doors (docs/architecture.md, "One call, step by step").

Each check raises a :class:`~dpstats.errors.DPStatsError` subclass that names
the argument, the value and the fix.  Front doors call these before they build
a model frame or charge an accountant.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from .errors import DataError, PrivacyParameterError, caller_stacklevel
from .formula import LEVELS_READ_NOT_SHOWN, columns_read  # the doors' checks import it from here too
from .privacy.accountant import Accountant

NEIGHBOURING = ("replace", "add_remove")


def check_eps(eps, name: str = "eps", allow_inf: bool = False) -> float:
    """eps must be a positive finite number (or inf where a method allows it: the non-private fit)."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a positive number, got {eps!r}.")
    eps = float(eps)
    if math.isnan(eps) or eps <= 0 or (math.isinf(eps) and not allow_inf):
        if allow_inf:
            raise PrivacyParameterError(
                f"{name} must be a positive number, got {eps}; inf runs the non-private fit."
            )
        hint = " (eps = inf is not private; use a finite budget such as 1.0)"
        raise PrivacyParameterError(f"{name} must be a positive finite number, got {eps}{hint}.")
    return eps


def check_delta(delta, n: int | None = None, name: str = "delta", allow_zero: bool = True) -> float:
    """delta must lie in [0, 1) (or (0, 1)); delta >= 1/n is warned about."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or math.isnan(float(delta)):
        raise PrivacyParameterError(f"{name} must be a number in [0, 1), got {delta!r}.")
    delta = float(delta)
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        rng = "[0, 1)" if allow_zero else "(0, 1)"
        raise PrivacyParameterError(
            f"{name} must be in {rng}, got {delta}; a typical choice is 1/n² or 1e-6."
        )
    if n and delta >= 1 / n:
        warnings.warn(
            f"{name} = {delta:g} is at least 1/n = {1 / n:g}: such a delta allows releasing a "
            "whole row; choose delta much smaller than 1/n.",
            UserWarning,
            stacklevel=caller_stacklevel(),
        )
    return delta


def check_neighbouring(neighbouring: str, supported=NEIGHBOURING) -> str:
    if neighbouring not in supported:
        raise PrivacyParameterError(f"neighbouring must be one of {list(supported)}, got {neighbouring!r}.")
    return neighbouring


def check_fraction(
    value, name: str, low: float = 0.0, high: float = 1.0, low_open: bool = False, high_open: bool = True
) -> float:
    """A number in an interval, e.g. gamma in [0, 1) or fdr in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(float(value)):
        raise PrivacyParameterError(f"{name} must be a number, got {value!r}.")
    value = float(value)
    ok_low = value > low if low_open else value >= low
    ok_high = value < high if high_open else value <= high
    if not (ok_low and ok_high):
        lb, hb = ("(" if low_open else "["), (")" if high_open else "]")
        raise PrivacyParameterError(f"{name} must be in {lb}{low}, {high}{hb}, got {value}.")
    return value


def check_whole_in(value, low: int, high: int, message: str) -> int:
    """``value`` as an int when it is a whole number with ``low <= value <= high``; else ``message``
    raised as a PrivacyParameterError when it is no whole number (the argument's type, wrong whatever
    the data) and as a DataError when it is one out of the range the design allows.

    Examples
    --------
    >>> check_whole_in(3, 1, 5, "k must be 1..5")
    3
    >>> check_whole_in("3", 1, 5, "k must be 1..5")
    Traceback (most recent call last):
    ...
    dpstats.errors.PrivacyParameterError: k must be 1..5
    """
    whole = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if whole and low <= value <= high:
        return int(value)
    raise (DataError if whole else PrivacyParameterError)(message)


def check_k(k, d: int, name: str = "k", *, shown: bool = True) -> int:
    """1 <= k < d: a k that is not a whole number is a parameter error, one out of range for the design's
    d a data error.  ``shown`` False: d depends on levels read from the rows (:func:`columns_read`), so
    the texts do not quote it.

    Examples
    --------
    >>> check_k(5, 3, shown=False)
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: k = 5 is out of range: it must satisfy 1 <= k < d, where d is the number of ...
    """
    d_is = f"d = {d}" if shown else "d"
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):  # the argument's type: no data involved
        raise PrivacyParameterError(f"{name} must be a whole number with 1 <= {name} < {d_is}, got {k!r}.")
    k = int(k)
    if not 1 <= k < d:
        unshown = f" (d {LEVELS_READ_NOT_SHOWN})" if not shown else ""
        raise DataError(
            f"{name} = {k} is out of range: it must satisfy 1 <= {name} < d, where {d_is} is the "
            f"number of candidate columns{unshown}. Choose a smaller k or add columns."
        )
    return k


def check_candidates(door: str, formula: str, mf) -> None:
    """At least 2 candidate columns in the frame ``mf``; the text quotes their number only when it does
    not depend on levels read from the rows (:func:`columns_read`)."""
    if mf.p >= 2:
        return
    gives = (
        f"gives {mf.p}"
        if not columns_read(mf)
        else f"gives fewer on these rows (the number of its columns {LEVELS_READ_NOT_SHOWN})"
    )
    raise DataError(f"{door} needs at least 2 candidate columns, the formula '{formula}' {gives}.")


def check_regression_rows(
    door: str, options: Any, n: int, coefficients: int, predictors: int, *, columns_public: bool = True
) -> None:
    """A regression's design against its rows (``options``: the door's, with ``formula`` and ``eps``): more
    rows than coefficients and, in a private fit (finite eps), one predictor column at least besides the
    intercept.  At eps = inf the intercept-only model (``y ~ 1``) is fitted, as R's
    ``lm(y ~ 1)`` and ``glm(y ~ 1)``: the null model of ``step()``, ``drop1()`` and ``anova(null, fit)``.
    ``n`` must be public (the doors that call this require it).

    ``columns_public`` False: the design's columns depend on levels read from the rows (a named step),
    so both failures give one text, which shows neither count.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_regression_rows("dp_lm", SimpleNamespace(formula="y ~ 1", eps=math.inf), 40, 1, 0)  # lm(y ~ 1)
    >>> check_regression_rows("dp_lm", SimpleNamespace(formula="y ~ g", eps=1.0), 40, 40, 39, columns_public=False)
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: dp_lm needs more rows than coefficients and at least one predictor column, ...
    """
    formula, private = options.formula, math.isfinite(options.eps)
    if not columns_public and (coefficients >= n or predictors == 0):
        raise DataError(
            f"{door} needs more rows than coefficients and at least one predictor column, and the design "
            f"of '{formula}' on these n = {n} rows has not (the number of its columns {LEVELS_READ_NOT_SHOWN}); "
            "or use fewer terms, or screen them first on part of the rows (dp_select_infer)."
        )
    if coefficients >= n:
        raise DataError(
            f"{door} needs more rows than coefficients, but n = {n} <= {coefficients}; use fewer terms, "
            "or screen them first on part of the rows (dp_select_infer)."
        )
    if predictors == 0 and private:
        raise DataError(
            f"the formula '{formula}' has no predictor columns: a private {door} needs at least one (its "
            "noise and intervals are calibrated for the slopes of declared predictors; the intercept-only "
            "model has no private fit). Nothing was spent. Fit it at eps = inf (not private): there it is "
            f"{'lm' if door == 'dp_lm' else 'glm'}(y ~ 1), the null model that step(), drop1() and "
            "anova(null, fit) use."
        )


def check_accountant(accountant) -> Accountant | None:
    if accountant is not None and not isinstance(accountant, Accountant):
        raise PrivacyParameterError(
            f"accountant must be a dpstats Accountant or None, got {type(accountant).__name__}."
        )
    return accountant


def check_oc_trials(oc_trials, assume=None) -> int:
    """Trials of the operating-characteristics simulation: a whole number >= 0, and >= 2 under ``assume=``."""
    if isinstance(oc_trials, bool) or not isinstance(oc_trials, numbers.Integral) or oc_trials < 0:
        raise PrivacyParameterError(f"oc_trials must be a whole number >= 0, got {oc_trials!r}.")
    if assume is not None and oc_trials < 2:
        raise PrivacyParameterError("assume= needs oc_trials >= 2 simulated trials.")
    return int(oc_trials)


def check_strict(strict) -> bool:
    if not isinstance(strict, bool):
        raise PrivacyParameterError(f"strict must be True or False, got {strict!r}.")
    return strict


def check_truth(truth, names: list[str]) -> list[str] | None:
    """User-supplied truth (simulations) must name terms of the model; checked before charging."""
    if truth is None:
        return None
    if isinstance(truth, str):
        truth = [truth]
    truth = list(truth)
    known = set(names)
    unknown = [t for t in truth if t not in known]
    if unknown:
        raise DataError(
            f"truth names {unknown[:5]} are not terms of the model; terms look like "
            f"{names[:3]}. Use the design's column names (see result.terms)."
        )
    return truth


def check_gaussian_delta(delta, refusal: str, eps: float = 1.0) -> float:
    """delta in (0, 1) for a method that adds Gaussian noise; delta not given (``None``) or 0 is refused
    with ``refusal`` (the method's own words: why it needs delta > 0 and what to give).

    At ``eps = inf`` no noise is added, so delta is not needed: ``None`` is 0.0, and any delta in
    [0, 1) is taken (unused).
    """
    if math.isinf(eps):
        return 0.0 if delta is None else check_delta(delta)
    if delta is None or (isinstance(delta, numbers.Real) and not isinstance(delta, bool) and delta == 0):
        raise PrivacyParameterError(refusal)
    return check_delta(delta, allow_zero=False)
