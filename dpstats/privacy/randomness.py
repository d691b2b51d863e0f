"""Randomness policy and every noise sampler of dpstats.

``random_state=None`` draws a fresh seed from the operating system's entropy;
an integer (or a numpy ``Generator``) makes the run reproducible, and the privacy
statement then says "seeded: for reproduction, not for release".

Released real numbers are drawn by :class:`NoiseSource`.  When the run is not
seeded it uses OpenDP's samplers, which are safe against floating-point attacks
(Mironov 2012, "On Significance of the Least Significant Bits for Differential
Privacy"); a seeded run uses numpy so that it can be reproduced.  Outputs
that are only a choice (an index set) use numpy's generator either way.
Simulations, which release nothing, draw from :class:`FastNoise` (numpy only,
the same draws in the same order as a seeded :class:`NoiseSource`).

Samplers: Laplace and Gaussian noise (the Laplace and Gaussian mechanisms,
Dwork & Roth 2014, Theorems 3.6 and A.1; their calibration is in
:mod:`.calibration`), and the multivariate "L2-Laplace" noise with density
∝ exp(−‖b‖₂/scale) (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1), which
makes a vector of l2 sensitivity Δ eps-DP at scale Δ/eps.  Conventions:
docs/architecture.md, "Privacy conventions".
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

from ..errors import PrivacyParameterError

RandomState = int | np.random.Generator | None


def make_generator(random_state: RandomState) -> tuple[np.random.Generator, bool]:
    """Return ``(generator, seeded)`` for a ``random_state`` argument.

    Examples
    --------
    >>> gen, seeded = make_generator(1)
    >>> seeded
    True
    """
    if random_state is None:
        return np.random.default_rng(secrets.randbits(128)), False
    if isinstance(random_state, np.random.Generator):
        return random_state, True
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise PrivacyParameterError(
                f"random_state must be a non-negative integer, got {random_state}; "
                "use random_state=None for a release."
            )
        return np.random.default_rng(int(random_state)), True
    raise PrivacyParameterError(
        "random_state must be None (a release), a non-negative integer or a "
        f"numpy Generator; got {type(random_state).__name__}."
    )


def _opendp_vector_measurement(kind: str, scale: float):
    import opendp.prelude as odp

    odp.enable_features("contrib")
    domain = odp.vector_domain(odp.atom_domain(T=float, nan=False))
    if kind == "laplace":
        return odp.m.make_laplace(domain, odp.l1_distance(T=float), scale=float(scale))
    return odp.m.make_gaussian(domain, odp.l2_distance(T=float), scale=float(scale))


def _numpy_add(kind: str, values: np.ndarray, scale: float, generator: np.random.Generator) -> np.ndarray:
    """``values`` plus iid numpy Laplace(0, scale) (``kind="laplace"``) or N(0, scale²) noise."""
    if kind == "laplace":
        return values + generator.laplace(0.0, scale, size=values.shape)
    return values + generator.normal(0.0, scale, size=values.shape)


def _l2_laplace_draw(d: int, scale: float, generator: np.random.Generator) -> np.ndarray:
    """b in R^d with density ∝ exp(−‖b‖₂/scale): uniform direction, then ‖b‖ ~ Gamma(d, scale)."""
    direction = generator.standard_normal(d)
    direction /= np.linalg.norm(direction)
    radius = generator.gamma(shape=d, scale=scale)
    return radius * direction


@dataclass
class NoiseSource:
    """Draws noise for released values and records which samplers were used.

    Parameters
    ----------
    random_state : None, int or numpy Generator
        ``None`` for a release (OS entropy, OpenDP samplers); an integer for a
        reproducible run that is not meant for release.
    secure : bool, optional
        Force (True) or forbid (False) OpenDP's samplers.  Default: secure when
        not seeded.

    Examples
    --------
    >>> src = NoiseSource(random_state=3)
    >>> noisy = src.laplace(np.zeros(2), scale=1.0)
    >>> noisy.shape, src.seeded
    ((2,), True)
    """

    random_state: RandomState = None
    secure: bool | None = None
    generator: np.random.Generator = field(init=False)
    seeded: bool = field(init=False)
    samplers: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.generator, self.seeded = make_generator(self.random_state)
        if self.secure is None:
            self.secure = not self.seeded

    def _secure_available(self) -> bool:
        try:
            import opendp  # noqa: F401
        except ImportError:  # pragma: no cover - opendp is a dependency
            return False
        return True

    def _add(self, kind: str, values: np.ndarray, scale: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        if scale == 0:
            return values.copy()
        if self.secure and self._secure_available():
            measurement = _opendp_vector_measurement(kind, scale)
            out = np.asarray(measurement(values.ravel().tolist()), dtype=float)
            self.samplers.add(f"OpenDP {kind} (floating-point safe)")
            return out.reshape(values.shape)
        self.samplers.add(f"numpy {kind} (seeded, not floating-point hardened)")
        return _numpy_add(kind, values, scale, self.generator)

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        """Return ``values`` plus iid Laplace(0, ``scale``) noise."""
        return self._add("laplace", values, scale)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        """Return ``values`` plus iid N(0, ``sigma``²) noise."""
        return self._add("gaussian", values, sigma)

    def l2_laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        """Return ``values + b`` with density of b ∝ exp(−‖b‖₂ / scale).

        ‖b‖ ~ Gamma(d, scale) and b/‖b‖ is uniform on the sphere (the
        multivariate "L2-Laplace" of Chaudhuri, Monteleoni & Sarwate 2011).
        OpenDP has no such sampler; numpy draws it and the statement says so.
        """
        values = np.asarray(values, dtype=float)
        noise = _l2_laplace_draw(values.size, scale, self.generator)
        self.samplers.add("numpy L2-Laplace (Gamma norm, uniform direction)")
        return values + noise.reshape(values.shape)


class FastNoise:
    """numpy noise with :class:`NoiseSource`'s interface, for simulations only.

    Draws exactly what a seeded :class:`NoiseSource` on the same generator
    draws, in the same order, without recording samplers; never OpenDP, so it
    is not for released values (a simulation releases nothing).

    Parameters
    ----------
    generator : numpy Generator

    Examples
    --------
    >>> a = FastNoise(np.random.default_rng(5)).gaussian(np.zeros(3), 1.0)
    >>> b = NoiseSource(np.random.default_rng(5)).gaussian(np.zeros(3), 1.0)
    >>> bool(np.array_equal(a, b))
    True
    """

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator

    def _add(self, kind: str, values, scale: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return _numpy_add(kind, values, scale, self.generator) if scale else values.copy()

    def gaussian(self, values, sigma: float) -> np.ndarray:
        """Return ``values`` plus iid N(0, ``sigma``²) noise (a copy when sigma = 0)."""
        return self._add("gaussian", values, sigma)

    def laplace(self, values, scale: float) -> np.ndarray:
        """Return ``values`` plus iid Laplace(0, ``scale``) noise (a copy when scale = 0)."""
        return self._add("laplace", values, scale)

    def l2_laplace(self, values, scale: float) -> np.ndarray:
        """Return ``values + b`` with density of b ∝ exp(−‖b‖₂ / ``scale``), as :meth:`NoiseSource.l2_laplace`."""
        values = np.asarray(values, dtype=float)
        return values + _l2_laplace_draw(values.size, scale, self.generator).reshape(values.shape)
