"""Signal models the planner simulates under, beyond :class:`dpstats.simulate.Assume`.

Every model states itself with ``describe()``; the planner prints that line
next to every prediction.  :class:`FanLv` is the DP-SIS paper's synthetic design
(random coefficient sizes and signs); :class:`KnockoffModel` is the knockoff
paper's Figure-1 model (equal amplitudes); :class:`MixtureModel` is a mixture of
separated spherical Gaussians; :class:`FelpModel` is the planted-feature
classification data of :func:`dpstats.simulate.felp.planted`; :class:`GLMModel` is a logistic or
Poisson regression with correlated and binary predictors (dp_glm).  A plain :class:`~dpstats.simulate.Assume` is
accepted wherever its fields make sense and is converted here.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, replace
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


@dataclass(frozen=True)
class GLMModel:
    """A logistic or Poisson regression with correlated and binary predictors (dp_glm's planner).

    Features: p standard normals with pairwise correlation ``correlation`` (one common factor,
    as :class:`~dpstats.simulate.Assume`); the last ``binary`` of them are replaced by
    1{feature > 0} (binary predictors, correlated with the others, declared bounds (0, 1)); the
    others are clipped to their declared bounds, mean ± ``bound_sds`` sd.  The linear predictor is
    ``intercept + strength · (x_1 + ... + x_signals)``; the response is Bernoulli (logit link) or
    Poisson (log link), a count clipped at its declared bound ``count_bound``.  ``strength`` and
    ``intercept`` left as None take the family's default (binomial 0.5 and 0, Poisson 0.25 and 1:
    mean counts near e = 2.7, far below the default count bound 20).

    Examples
    --------
    >>> GLMModel().resolved("poisson").describe()[:50]
    'Poisson regression, log E(y) = 1 + 0.25·(x1 + x2) '
    >>> GLMModel(binary=1).resolved("binomial").coefficients(3).tolist()
    [0.0, 0.5, 0.5, 0.0]
    """

    signals: int = 2
    strength: float | None = None
    intercept: float | None = None
    correlation: float = 0.0
    binary: int = 0
    bound_sds: float = 3.0
    count_bound: float = 20.0
    family: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "signals", _whole(self.signals, "signals"))
        ok = isinstance(self.binary, numbers.Integral) or (
            isinstance(self.binary, float) and self.binary.is_integer()
        )
        if isinstance(self.binary, bool) or not ok or self.binary < 0:
            raise PrivacyParameterError(f"assume: binary must be a whole number >= 0, got {self.binary!r}.")
        object.__setattr__(self, "binary", int(self.binary))
        for name in ("strength", "intercept"):
            value = getattr(self, name)
            if value is not None:
                _finite(value, name)
                object.__setattr__(self, name, float(value))
        c = self.correlation
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not 0.0 <= c < 1.0:
            raise PrivacyParameterError(f"assume: correlation must be in [0, 1), got {c!r}.")
        _positive(self.bound_sds, "bound_sds")
        _positive(self.count_bound, "count_bound")
        for name in ("correlation", "bound_sds", "count_bound"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.family not in (None, "binomial", "poisson"):
            raise PrivacyParameterError(
                f"assume: family must be 'binomial' or 'poisson', got {self.family!r}."
            )

    def resolved(self, family: str) -> GLMModel:
        """The model for ``family``, with the family's default strength and intercept filled in."""
        strength = self.strength if self.strength is not None else (0.5 if family == "binomial" else 0.25)
        intercept = self.intercept if self.intercept is not None else (0.0 if family == "binomial" else 1.0)
        return replace(self, strength=strength, intercept=intercept, family=family)

    def coefficients(self, p: int) -> np.ndarray:
        """(intercept, slopes): the first min(signals, p) slopes equal ``strength``, the others 0."""
        slopes = np.zeros(p)
        slopes[: min(self.signals, p)] = self.strength
        return np.r_[self.intercept, slopes]

    def bounds(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """Declared (lo, hi) of the p features: ± ``bound_sds`` for the continuous, (0, 1) for the binary."""
        cont = p - min(self.binary, p)
        lo = np.r_[np.full(cont, -self.bound_sds), np.zeros(p - cont)]
        hi = np.r_[np.full(cont, self.bound_sds), np.ones(p - cont)]
        return lo, hi

    def features(self, rows: int, p: int, rng: np.random.Generator) -> np.ndarray:
        """``rows`` design points of p features, clipped to their declared bounds."""
        z = math.sqrt(1 - self.correlation) * rng.standard_normal((rows, p))
        z += math.sqrt(self.correlation) * rng.standard_normal((rows, 1))
        cont = p - min(self.binary, p)
        z[:, cont:] = z[:, cont:] > 0
        lo, hi = self.bounds(p)
        return np.clip(z, lo, hi)

    def describe(self) -> str:
        link = "logit P(y = 1)" if self.family == "binomial" else "log E(y)"
        name = "logistic regression" if self.family == "binomial" else "Poisson regression"
        terms = " + ".join(f"x{j + 1}" for j in range(min(self.signals, 3))) + (
            " + ..." if self.signals > 3 else ""
        )
        counts = (
            f"; counts clipped at the declared bound {self.count_bound:g}" if self.family == "poisson" else ""
        )
        binary = (
            f"; the last {self.binary} features binary, 1{{N(0, 1) > 0}}, bounds (0, 1)"
            if self.binary
            else ""
        )
        return (
            f"{name}, {link} = {self.intercept:g} + {self.strength:g}·({terms}) ({self.signals} signal"
            f"{'s' if self.signals != 1 else ''}, other slopes 0){counts}; features N(0, 1) with pairwise "
            f"correlation {self.correlation:g}, bounds at mean ± {self.bound_sds:g} sd (clipped){binary}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"model": "glm", **asdict(self)}


def glm_model(assume: Any) -> GLMModel:
    """A :class:`GLMModel` from ``None`` (its defaults), itself, a dict of its fields, or an
    :class:`~dpstats.simulate.Assume` (signals, strength, correlation and bound_sds; its residual noise
    has no place in a GLM and must be left at 1)."""
    if assume is None:
        return GLMModel()
    if isinstance(assume, GLMModel):
        return assume
    if isinstance(assume, Assume):
        if assume.noise != 1.0:
            raise PrivacyParameterError(
                "assume: a GLM has no residual noise; leave Assume's noise at 1 or pass a dpstats.planner.GLMModel."
            )
        return GLMModel(
            signals=assume.signals,
            strength=assume.strength,
            correlation=assume.correlation,
            bound_sds=assume.bound_sds,
        )
    if isinstance(assume, dict):
        return GLMModel(**_fields(assume, GLMModel))
    raise PrivacyParameterError(
        f"assume for dp_glm must be a dpstats.planner.GLMModel, an Assume or a dict; got {assume!r}."
    )


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


def _finite(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise PrivacyParameterError(f"assume: {name} must be a finite number, got {value!r}.")
