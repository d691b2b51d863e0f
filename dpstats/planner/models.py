"""Signal models the planner simulates under, beyond :class:`dpstats.simulate.Assume`.

Every model states itself with ``describe()``; the planner prints that line
next to every prediction.  :class:`FanLv` is the DP-SIS paper's synthetic design
(random coefficient sizes and signs); :class:`KnockoffModel` is the knockoff
paper's Figure-1 model (equal amplitudes); :class:`MixtureModel` is a mixture of
separated spherical Gaussians; :class:`FelpModel` is the planted-feature
classification data of :func:`dpstats.simulate.felp.planted`.  A plain :class:`~dpstats.simulate.Assume` is
accepted wherever its fields make sense and is converted here.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import PrivacyParameterError
from ..simulate import Assume, fan_lv_coefficients


@dataclass(frozen=True)
class FanLv:
    """The DP-SIS paper's synthetic design (Fan & Lv 2008, §3.3.1; the paper's eq. (5)-(6)).

    Features iid N(0, 1); ``signals`` coefficients w_i = (−1)^u (a + |z|) with
    u ~ Bernoulli(0.4), z ~ N(0, 1), a = 4 log n / √n, drawn afresh for every
    simulated data set; residual variance ``noise_var``.  Declared bounds (when
    used) sit at mean ± ``bound_sds`` sd of each variable.

    Examples
    --------
    >>> FanLv().describe().startswith("the DP-SIS paper's design")
    True
    """

    signals: int = 8
    noise_var: float = 1.5
    bound_sds: float = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "signals", _whole(self.signals, "signals"))
        _positive(self.noise_var, "noise_var")
        _positive(self.bound_sds, "bound_sds")

    def describe(self) -> str:
        return (
            f"the DP-SIS paper's design (Fan & Lv 2008 §3.3.1): {self.signals} true signals, coefficients "
            f"±(4 log n/√n + |z|), z ~ N(0, 1), sign negative with probability 0.4, redrawn per data set; "
            f"features iid N(0, 1); residual variance {self.noise_var:g}; bounds at mean ± {self.bound_sds:g} sd"
        )

    def as_assume(self) -> Assume:
        """The :class:`Assume` carrying the noise and bounds (its strength is replaced per trial)."""
        return Assume(
            signals=self.signals, strength=1.0, noise=math.sqrt(self.noise_var), bound_sds=self.bound_sds
        )

    def coefficients(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return fan_lv_coefficients(self.signals, self.signals, n, rng)

    def to_dict(self) -> dict[str, Any]:
        return {"model": "fan_lv", **asdict(self)}


@dataclass(frozen=True)
class KnockoffModel:
    """The knockoff paper's Figure-1 model (Pournaderi & Xiang).

    X with iid N(0, 1) entries, ``signals`` coefficients equal to ``amplitude``
    at random positions (:func:`dpstats.simulate.paper_beta`), y = Xβ + w,
    w ~ N(0, ``noise``²).  Defaults are the paper's: 15 signals of amplitude 4.5.

    Examples
    --------
    >>> KnockoffModel().describe().startswith("the knockoff paper's Figure-1 model")
    True
    """

    signals: int = 15
    amplitude: float = 4.5
    noise: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "signals", _whole(self.signals, "signals"))
        _positive(self.amplitude, "amplitude")
        _positive(self.noise, "noise")

    def describe(self) -> str:
        return (
            f"the knockoff paper's Figure-1 model: X with iid N(0, 1) entries, {self.signals} coefficients "
            f"equal to {self.amplitude:g} at random positions, y = Xβ + N(0, {self.noise:g}²)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"model": "knockoff", **asdict(self)}


@dataclass(frozen=True)
class MixtureModel:
    """k spherical unit-variance Gaussians with means ``separation`` apart (equal weights by default).

    Means are placed at distance ``separation``/√2 from the origin along
    orthogonal directions (so every pair is exactly ``separation`` apart);
    ``weights`` default to equal.

    Examples
    --------
    >>> MixtureModel(k=2, separation=8.0).describe().startswith("2 spherical N(mu_j, I) components")
    True
    """

    k: int = 2
    separation: float = 8.0
    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", _whole(self.k, "k"))
        _positive(self.separation, "separation")
        if self.weights is not None:
            w = tuple(float(v) for v in self.weights)
            if len(w) != self.k or min(w) <= 0:
                raise PrivacyParameterError(
                    f"assume: weights must be {self.k} positive numbers, got {self.weights!r}."
                )
            object.__setattr__(self, "weights", tuple(v / sum(w) for v in w))

    def weight_vector(self) -> np.ndarray:
        return np.full(self.k, 1.0 / self.k) if self.weights is None else np.asarray(self.weights)

    def means(self, d: int) -> np.ndarray:
        if d < self.k:
            raise PrivacyParameterError(f"the mixture model needs p >= k = {self.k} dimensions, got p = {d}.")
        means = np.zeros((self.k, d))
        means[np.arange(self.k), np.arange(self.k)] = self.separation / math.sqrt(2)
        return means

    def describe(self) -> str:
        w = (
            "equal weights"
            if self.weights is None
            else "weights " + ", ".join(f"{v:.3g}" for v in self.weights)
        )
        return f"{self.k} spherical N(mu_j, I) components, means {self.separation:g} apart (pairwise), {w}"

    def to_dict(self) -> dict[str, Any]:
        return {"model": "mixture", **asdict(self)}


@dataclass(frozen=True)
class FelpModel:
    """Classes in equal shares separated along ``signals`` planted features (:func:`dpstats.simulate.felp.planted`).

    Feature x_j is N(0, 1) plus, for the planted j <= ``signals``, the class
    mean ``shift``·(c − (K − 1)/2) of class c = 0..K−1 (K = ``n_classes``,
    classes in equal shares); the other features are noise.  Declared bounds
    (when used) are one box for every feature, ``bound_sds`` sd beyond the
    extreme class means.

    Examples
    --------
    >>> FelpModel(signals=3).describe().startswith("2 classes in equal shares")
    True
    >>> FelpModel(shift=2.0).box()
    (-5.0, 5.0)
    """

    signals: int = 10
    shift: float = 1.5
    n_classes: int = 2
    bound_sds: float = 4.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "signals", _whole(self.signals, "signals"))
        object.__setattr__(self, "n_classes", _whole(self.n_classes, "n_classes"))
        if self.n_classes < 2:
            raise PrivacyParameterError(f"assume: n_classes must be >= 2, got {self.n_classes}.")
        _positive(self.shift, "shift")
        _positive(self.bound_sds, "bound_sds")

    def box(self) -> tuple[float, float]:
        """The declared bounds of every feature: ``bound_sds`` sd beyond the extreme class means."""
        edge = self.shift * (self.n_classes - 1) / 2 + self.bound_sds
        return (-edge, edge)

    def describe(self) -> str:
        lo, hi = self.box()
        return (
            f"{self.n_classes} classes in equal shares separated along {self.signals} planted features "
            f"(class means {self.shift:g} apart per planted feature), other features pure noise; "
            f"features N(class mean, 1); bounds [{lo:g}, {hi:g}] on every feature"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"model": "felp", **asdict(self)}


def felp_model(assume: Any) -> FelpModel:
    """A :class:`FelpModel` from ``None`` (its defaults), itself, or a dict of its fields."""
    if assume is None:
        return FelpModel()
    if isinstance(assume, FelpModel):
        return assume
    if isinstance(assume, dict):
        return FelpModel(**_fields(assume, FelpModel))
    raise PrivacyParameterError(f"assume for dp_felp must be a FelpModel or a dict; got {assume!r}.")


def knockoff_model(assume: Any) -> KnockoffModel:
    """A :class:`KnockoffModel` from ``None`` (the paper's), itself, a dict, or an uncorrelated Assume."""
    if assume is None:
        return KnockoffModel()
    if isinstance(assume, KnockoffModel):
        return assume
    if isinstance(assume, Assume):
        if assume.correlation != 0:
            raise PrivacyParameterError(
                "assume: the knockoff planner simulates uncorrelated features (correlation=0)."
            )
        return KnockoffModel(signals=assume.signals, amplitude=assume.strength, noise=assume.noise)
    if isinstance(assume, dict):
        return KnockoffModel(**_fields(assume, KnockoffModel))
    raise PrivacyParameterError(
        f"assume for dp_knockoff must be a KnockoffModel, an Assume or a dict; got {assume!r}."
    )


def selection_model(assume: Any) -> Assume | FanLv:
    """A selection model from ``None`` (the DP-SIS paper's design), an Assume, a FanLv, or a dict of either."""
    if assume is None:
        return FanLv()
    if isinstance(assume, (Assume, FanLv)):
        return assume
    if isinstance(assume, dict):
        if assume.get("model") == "fan_lv":
            return FanLv(**_fields({k: v for k, v in assume.items() if k != "model"}, FanLv))
        return Assume.coerce(assume)
    raise PrivacyParameterError(
        f"assume for selection must be a dpstats.simulate.Assume, a dpstats.planner.FanLv or a dict; got {assume!r}."
    )


def mixture_model(assume: Any, k: int | None) -> MixtureModel:
    if assume is None:
        return MixtureModel(k=k or 2)
    if isinstance(assume, MixtureModel):
        return assume
    if isinstance(assume, dict):
        return MixtureModel(**_fields({"k": k or 2, **assume}, MixtureModel))
    raise PrivacyParameterError(f"assume for dp_gmm must be a MixtureModel or a dict; got {assume!r}.")


def _fields(values: dict, cls) -> dict:
    allowed = set(cls.__dataclass_fields__)
    unknown = set(values) - allowed - {"model"}
    if unknown:
        raise PrivacyParameterError(
            f"assume: unknown field(s) {sorted(unknown)}; expected {sorted(allowed)}."
        )
    return {k: v for k, v in values.items() if k in allowed}


def _whole(value: Any, name: str) -> int:
    ok = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not ok or value < 1:
        raise PrivacyParameterError(f"assume: {name} must be a whole number >= 1, got {value!r}.")
    return int(value)


def _positive(value: Any, name: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise PrivacyParameterError(f"assume: {name} must be a positive finite number, got {value!r}.")
