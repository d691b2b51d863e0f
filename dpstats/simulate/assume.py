"""The explicit, public model under which error rates are simulated (``assume=``).

An operating characteristic such as precision, recall, FDR or power depends on
the unknown truth.  dpstats reports one only under a model the user states;
:class:`Assume` is that statement, printed with every number it produces.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..errors import PrivacyParameterError

RELEASED = "released"

#: the ``basis`` of an operating characteristic simulated under a stated model (the text of
#: ``dpstats.results.base.BASIS_ASSUMED``, which the results layer above checks rows against)
ASSUMED_BASIS = "under the assumed model"


def exact_row(quantity: str, value: float) -> dict:
    """An operating characteristic that follows from released quantities and public inputs alone
    (the results' default basis)."""
    return {"quantity": quantity, "estimate": float(value), "std_error": 0.0}


def assumed_row(quantity: str, estimate: float, std_error: float) -> dict:
    """An operating characteristic simulated under the model the user stated (Monte Carlo ``std_error``)."""
    return {"quantity": quantity, "estimate": estimate, "std_error": std_error, "basis": ASSUMED_BASIS}


@dataclass(frozen=True)
class Assume:
    """A linear Gaussian model of the data, stated by the user.

    Features are standard normal with pairwise correlation ``correlation``
    (one common factor); the response is
    ``y = strength · (x_1 + ... + x_signals) + noise · e`` with e ~ N(0, 1).
    Each variable's declared bounds are taken to be its mean ± ``bound_sds``
    standard deviations (mean at the midpoint), which fixes how the model maps
    onto the [−1, 1] scale the private scores use.

    Parameters
    ----------
    signals : int
        Number of true signals (nonzero coefficients), at least 1.
    strength : float
        Coefficient of each signal on the standardized scale (> 0).
    noise : float
        Standard deviation of the residual e (> 0).
    correlation : float in [0, 1)
        Pairwise correlation of the features.
    bound_sds : float
        Half-width of each variable's bounds in its standard deviations (> 0).

    Examples
    --------
    >>> from dpstats.simulate import Assume
    >>> a = Assume(signals=3, strength=0.5)
    >>> a.describe()
    '3 true signals of standardized coefficient 0.5 each, residual noise sd 1, features N(0, 1) with pairwise correlation 0; bounds at mean ± 3 sd'
    >>> Assume.coerce({"signals": 3, "strength": 0.5}) == a
    True
    """

    signals: int
    strength: float
    noise: float = 1.0
    correlation: float = 0.0
    bound_sds: float = 3.0

    def __post_init__(self) -> None:
        whole = isinstance(self.signals, numbers.Integral) or (  # R sends 8 as 8.0
            isinstance(self.signals, float) and self.signals.is_integer()
        )
        if isinstance(self.signals, bool) or not whole or self.signals < 1:
            raise PrivacyParameterError(f"assume: signals must be a whole number >= 1, got {self.signals!r}.")
        for name in ("strength", "noise", "bound_sds"):
            _positive(getattr(self, name), name)
        c = self.correlation
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (0.0 <= c < 1.0):
            raise PrivacyParameterError(f"assume: correlation must be in [0, 1), got {c!r}.")
        object.__setattr__(self, "signals", int(self.signals))
        for name in ("strength", "noise", "correlation", "bound_sds"):
            object.__setattr__(self, name, float(getattr(self, name)))

    def describe(self) -> str:
        """One line stating the model, printed next to every number it produces."""
        return (
            f"{self.signals} true signal{'s' if self.signals != 1 else ''} of standardized coefficient "
            f"{self.strength:g} each, residual noise sd {self.noise:g}, features N(0, 1) with pairwise "
            f"correlation {self.correlation:g}; bounds at mean ± {self.bound_sds:g} sd"
        )

    def response_sd(self) -> float:
        """sd of y: Var y = strength²·(s + s(s − 1)·correlation) + noise²."""
        s, b, r = self.signals, self.strength, self.correlation
        return math.sqrt(b * b * (s + s * (s - 1) * r) + self.noise**2)

    def features(self, n: int, p: int, rng: np.random.Generator) -> np.ndarray:
        """n rows of p N(0, 1) features with pairwise correlation ρ: √ρ·f + √(1 − ρ)·z, one common factor f."""
        factor = rng.standard_normal((n, 1))
        return math.sqrt(self.correlation) * factor + math.sqrt(1 - self.correlation) * rng.standard_normal(
            (n, p)
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def coerce(cls, value: Any, *, released: bool = False) -> Assume | str | None:
        """``None``, an :class:`Assume`, a dict of its fields, or (where allowed) ``"released"``."""
        if value is None or isinstance(value, cls):
            return value
        if isinstance(value, str) and value == RELEASED:
            if released:
                return RELEASED
            raise PrivacyParameterError(
                "assume='released' is not available for this method; pass "
                "dpstats.simulate.Assume(signals=..., strength=...)."
            )
        if isinstance(value, dict):
            unknown = set(value) - {f.name for f in fields(cls)}
            if unknown:
                raise PrivacyParameterError(
                    f"assume: unknown field(s) {sorted(unknown)}; expected {[f.name for f in fields(cls)]}."
                )
            return cls(**value)
        hint = " or 'released'" if released else ""
        raise PrivacyParameterError(
            f"assume must be a dpstats.simulate.Assume, a dict of its fields{hint}; got {value!r}."
        )


def describe(assume: Assume | str) -> str:
    """The printed statement of an assumption (``"released"`` included)."""
    if assume == RELEASED:
        return "the released estimates are the truth (plug-in)"
    return assume.describe()


def _positive(value: Any, name: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise PrivacyParameterError(f"assume: {name} must be a positive finite number, got {value!r}.")


def plug_in_only(value: Any, method: str) -> str | None:
    """``assume`` of a method that simulates only the plug-in model: None or ``"released"``.

    Examples
    --------
    >>> plug_in_only("released", "dp_gmm"), plug_in_only(None, "dp_gmm")
    ('released', None)
    """
    assume = Assume.coerce(value, released=True)
    if isinstance(assume, Assume):
        raise PrivacyParameterError(f"{method} simulates only the plug-in model: use assume='released'.")
    return assume
