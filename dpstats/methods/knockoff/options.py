"""The options of one DP knockoff filter call, checked once from the public call (:func:`dpstats.dp_knockoff`).

:class:`KnockoffOptions` is the frozen record the front door builds from its
arguments before anything is read; the plan (:func:`~dpstats.methods.knockoff.planning.plan`)
and the release (:func:`~dpstats.methods.knockoff.mechanism.release`) read it.  The
defaults are written once, in the front door's signature.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import AssumptionError, PrivacyParameterError
from ...privacy.bounds import is_auto
from ...schema import PublicN, Schema
from ...validation import check_eps, check_gaussian_delta, check_fraction, check_neighbouring, check_oc_trials
from .._options import Options
from . import filter as ko

ROUTES = ("shortcut", "materialise", "materialize")


@dataclass(frozen=True)
class KnockoffOptions(Options):
    """dp_knockoff's options, checked once (defaults: the signature of :func:`dpstats.dp_knockoff`).

    ``eps_split`` and ``delta_split`` are the checked fractions (``delta_split``
    filled with equal shares when not given); ``assume`` is the coerced model of
    the operating characteristics (the front door coerces it: it is a simulate
    record); every other field is the argument as given.

    Examples
    --------
    >>> given = dict(formula="y ~ .", eps=1.0, delta=1e-6, fdr=0.1, method="I", statistic="csm",
    ...              bounds=None, sigma=None, beta_norm=None, c_min=None, lambda_min=None, ridge=0.0,
    ...              s="lambda_min", offset=1, knockoffs="shortcut", eps_split=(0.5, 0.25, 0.25),
    ...              delta_split=None, neighbouring="replace", truth=None, assume=None, oc_trials=0)
    >>> KnockoffOptions.check(given).delta_split
    (0.3333333333333333, 0.3333333333333333, 0.3333333333333333)
    """

    PUBLIC_N = PublicN(
        "dp_knockoff",
        "its statistics are normalised by n, and its checks (n > p, delta < 1/n) and operating "
        "characteristics read n",
        dropped="its checks and operating characteristics then read no n, and its augmentation step is "
        "named whatever n is",
    )

    formula: str
    eps: float
    delta: float
    fdr: float
    method: str
    statistic: str
    bounds: Any
    sigma: float | None
    beta_norm: float | None
    c_min: float | None
    lambda_min: float | None
    ridge: float
    s: str
    offset: int
    knockoffs: str
    eps_split: tuple[float, ...]
    delta_split: tuple[float, ...]
    truth: Sequence[str] | None
    assume: Any
    oc_trials: int
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> KnockoffOptions:
        """Cheap checks of dp_knockoff's arguments, in the order they were always made, before the data is read."""
        method = given["method"]
        eps = check_eps(given["eps"], allow_inf=True)
        delta = check_gaussian_delta(  # at eps = inf (no noise) delta may be omitted
            given["delta"],
            "dp_knockoff needs delta > 0 at finite eps: its steps add Gaussian noise, and part of delta "
            "bounds the chance that its sensitivity bound fails. Give e.g. delta=1e-6 (much smaller than 1/n).",
            eps,
        )
        check_fraction(given["fdr"], "fdr", 0.0, 1.0, low_open=True)
        if method not in ("I", "II"):
            raise PrivacyParameterError(f"method must be 'I' or 'II' (the paper's Methods), got {method!r}.")
        if given["statistic"] not in ko.STATISTICS:
            raise PrivacyParameterError(
                f"statistic must be one of {sorted(ko.STATISTICS)}, got {given['statistic']!r}."
            )
        _check_declared(given)
        _check_filter(given)
        check_neighbouring(given["neighbouring"], supported=("replace",))
        check_oc_trials(given["oc_trials"])
        delta_split = given["delta_split"]
        return cls.from_given(
            given,
            delta=delta,
            eps_split=fractions(given["eps_split"], 3, "eps_split"),
            delta_split=(
                fractions(delta_split, 3 if method == "I" else 2, "delta_split")
                if delta_split is not None
                else ((1 / 3,) * 3 if method == "I" else (0.5, 0.5))
            ),
        )


def _check_declared(given: Mapping[str, Any]) -> None:
    """The row-norm bound B and the declared bounds of the sensitivities (Remark 2, Assumption 3)."""
    bounds = given["bounds"]
    if not (bounds is None or is_auto(bounds)):  # bounds="auto": checked by the front door's bounds step
        if not isinstance(bounds, numbers.Real):
            raise PrivacyParameterError(
                "bounds for dp_knockoff is one number B, the public bound on the l2 norm of each row of the "
                f"design (Assumption 3), e.g. bounds=10.0; got {bounds!r}."
            )
        positive(bounds, "bounds (the row-norm bound B)")
    for name in ("sigma", "beta_norm", "c_min"):
        positive(given[name], name)
    lambda_min = given["lambda_min"]
    if lambda_min is not None and (positive(lambda_min, "lambda_min") > 1):
        raise PrivacyParameterError(f"lambda_min is a lower bound on λ_min(Σ′) <= 1, got {lambda_min}.")


def _check_filter(given: Mapping[str, Any]) -> None:
    """The ridge, s, offset and the knockoffs' route."""
    ridge, s, offset = given["ridge"], given["s"], given["offset"]
    if (
        isinstance(ridge, bool)
        or not isinstance(ridge, numbers.Real)
        or not (math.isfinite(ridge) and ridge >= 0)
    ):
        raise PrivacyParameterError(f"ridge (omega^2) must be a finite number >= 0, got {ridge!r}.")
    if s not in ko.S_CHOICES:
        raise PrivacyParameterError(f"s must be one of {list(ko.S_CHOICES)}, got {s!r}.")
    if s == "equi" and (given["method"] == "I" or ridge <= 0):
        raise AssumptionError(
            "s='equi' makes the augmented Gram matrix G singular (lambda_min(G) = 0), so OLS on "
            "[X' X~'] and the sensitivity bounds fail. Use s='lambda_min' (the paper), or Method II "
            "with a ridge stabiliser ridge > 0."
        )
    if offset not in (0, 1) or isinstance(offset, bool):
        raise PrivacyParameterError(f"offset must be 1 (knockoff+) or 0 (knockoff), got {offset!r}.")
    if given["knockoffs"] not in ROUTES:
        raise PrivacyParameterError(
            f"knockoffs must be 'shortcut' or 'materialise', got {given['knockoffs']!r}."
        )


def positive(value, name: str, allow_none: bool = True) -> float | None:
    """``value`` as a float when it is a positive finite number (None passes when allowed)."""
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise PrivacyParameterError(f"{name} must be a positive finite number, got {value!r}.")
    return float(value)


def fractions(values, count: int, name: str) -> tuple[float, ...]:
    """``count`` fractions in (0, 1) summing to 1, as floats."""
    try:
        vals = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise PrivacyParameterError(
            f"{name} must be {count} fractions summing to 1, got {values!r}."
        ) from None
    if (
        len(vals) != count
        or any(not (0 < v < 1) for v in vals)
        or not math.isclose(sum(vals), 1.0, rel_tol=1e-9)
    ):
        raise PrivacyParameterError(
            f"{name} must be {count} fractions in (0, 1) summing to 1, got {values!r}."
        )
    return vals
