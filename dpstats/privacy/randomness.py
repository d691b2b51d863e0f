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
makes a vector of l2 sensitivity Δ eps-DP at scale Δ/eps.  OpenDP has no
L2-Laplace sampler; an unseeded release draws it by :func:`snapped_l2_laplace`
(OpenDP's exact Laplace and Gaussian draws as ingredients, then snapping).
Conventions: docs/architecture.md, "Privacy conventions".

Start-up cost: OpenDP is loaded on the first unseeded draw, and only its
``mod``, ``domains``, ``metrics`` and ``measurements`` modules (about 0.05 s);
``opendp.prelude`` would also import scikit-learn through ``opendp.extras``
(about 1.3 s).  ``benchmarks/bench_sampler_startup.py`` measures it.
"""

from __future__ import annotations

import functools
import math
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


@functools.cache
def _opendp_parts():
    """OpenDP's vector domain, metrics and noise constructors, imported once and only what is needed.

    ``opendp.prelude`` imports ``opendp.extras`` and with it scikit-learn (about
    1.3 s); these four modules take about 0.05 s.
    """
    from opendp.domains import atom_domain, vector_domain
    from opendp.measurements import make_gaussian, make_laplace
    from opendp.metrics import l1_distance, l2_distance
    from opendp.mod import enable_features

    enable_features("contrib")
    domain = vector_domain(atom_domain(T=float, nan=False))
    return domain, l1_distance(T=float), l2_distance(T=float), make_laplace, make_gaussian


def _opendp_vector_measurement(kind: str, scale: float, k: int | None = None):
    """OpenDP's vector Laplace (``kind="laplace"``) or Gaussian measurement at ``scale``.

    ``k`` is OpenDP's noise granularity 2^k (None: OpenDP's default).
    """
    domain, l1, l2, make_laplace, make_gaussian = _opendp_parts()
    extra = {} if k is None else {"k": k}
    if kind == "laplace":
        return make_laplace(domain, l1, scale=float(scale), **extra)
    return make_gaussian(domain, l2, scale=float(scale), **extra)


SNAP_INFLATE = 1.0 + 2.0**-10  # snapped_l2_laplace's scale factor: its floating-point slack
_UNIT_ROUNDOFF = 2.0**-53
_FINEST_K = -1074  # OpenDP's finest granularity for f64: the draw is exact, then rounded to nearest


def snap_grid(d: int, scale: float, eps: float, bound: float) -> tuple[float, float]:
    """``(Λ, B)``: the power-of-two grid and the clamp of :func:`snapped_l2_laplace`.

    B = bound + 64·s·(√(d+1) + 1) with s = ``scale``·:data:`SNAP_INFLATE`
    (rounded up to a multiple of Λ) and Λ the smallest power of two with
    d·(−ln(1 − 2η/Λ)) <= slack/4, where η = 36·2⁻⁵³·B bounds the
    floating-point error at a cell edge and slack = eps·(1 − 1/SNAP_INFLATE).

    Examples
    --------
    >>> lam, B = snap_grid(30, 0.1, 1.0, 1.0)
    >>> lam == 2.0 ** round(math.log2(lam)) and lam < 1e-6 < B
    True
    """
    s = scale * SNAP_INFLATE
    slack = eps * (1.0 - 1.0 / SNAP_INFLATE)
    bound_out = bound + 64.0 * s * (math.sqrt(d + 1.0) + 1.0)
    eta = 36.0 * _UNIT_ROUNDOFF * bound_out
    lam = 2.0 ** math.ceil(math.log2(2.0 * eta / -math.expm1(-slack / (4.0 * d))))
    if math.sqrt(d) * eta / s > slack / 4 or lam > bound_out:  # only for eps below about 1e-9·d
        raise PrivacyParameterError(
            f"eps = {eps:g} is too small for a floating-point safe L2-Laplace release of {d} values; "
            "use a larger eps or fewer values."
        )
    return lam, math.ceil(bound_out / lam) * lam


def snapped_l2_laplace(values: np.ndarray, scale: float, eps: float, bound: float) -> np.ndarray:
    """``values`` + L2-Laplace noise, safe against floating-point attacks (OS entropy, no numpy draws).

    Parameters
    ----------
    values : ndarray
        The d values to release; each is clamped to [−``bound``, ``bound``]
        first (1-Lipschitz per coordinate, so the l2 sensitivity Δ does not grow).
    scale : float
        Δ/eps, the nominal scale.  The noise is drawn at s = scale·(1 + 2⁻¹⁰).
    eps : float
        The eps the release claims (Δ = eps·scale).
    bound : float
        A public bound on |values_j|.

    Returns
    -------
    ndarray
        y = clamp_B(Λ·round(fl(clamp(w) + b̃)/Λ)), on the grid ΛZ within [−B, B]
        (:func:`snap_grid`): the same set of outputs whatever the input.

    Notes
    -----
    Construction.  b = R·G/‖G‖ with R ~ Gamma(d, s) = Σ E_i, E_i ~ Exp(s),
    and G ~ N(0, I_d) (uniform direction).  E_i = |L_i| and G_i come from
    OpenDP's Laplace and Gaussian samplers (OS entropy; exact draws on the
    grid 2⁻¹⁰⁷⁴, rounded to the nearest double); the sums are
    ``math.fsum`` (correctly rounded).  Floating-point error analysis, with
    u = 2⁻⁵³: R̃ = R(1 ± 2u), ‖G̃‖ = ‖G‖(1 ± 3u), b̃_j = b_j(1 ± 8u), and the
    sum w + b̃ adds u·|w + b̃|.  Snapping to Λ and clamping at B make every
    division by Λ, rounding and product exact.

    Privacy.  The ideal mechanism y* = clamp_B(snap_Λ(clamp(w) + b)) with the
    exact b is post-processing of the L2-Laplace mechanism at scale s, so its
    privacy loss is at most Δ/s = eps/(1 + 2⁻¹⁰).  The computed y differs
    from y* only when w_j + b_j lies within η = 36u·B of an edge of its cell
    (every relevant edge has |edge| <= B + Λ/2, so |b_j| <= 2.5B there).  For
    any output t, the event {y = t} is therefore contained in the box of b
    values giving y* = t widened by η per side, and contains the box narrowed
    by η.  Mapping the widened box onto the box moves a point by at most η
    per coordinate; the L2-Laplace density is (1/s)-log-Lipschitz in ‖·‖₂ and
    the Jacobian is at most (1 + 2η/Λ)^d, so
    |ln P(y = t) − ln P(y* = t)| <= τ = d·(−ln(1 − 2η/Λ)) + √d·η/s.
    :func:`snap_grid` chooses Λ with both terms <= slack/4, so the privacy
    loss of y is at most eps/(1 + 2⁻¹⁰) + 2τ <= eps: exactly the claimed eps,
    whatever the low-order bits of w (Mironov 2012's attack needs outputs
    reachable from one input and not the other; here every grid point in
    [−B, B] is reachable from every input, with probabilities within the
    bound).  OpenDP's ingredients are exact draws of the discrete Laplace
    and Gaussian laws on the grid 2⁻¹⁰⁷⁴: they differ from the continuous
    laws by moving each value less than 2⁻¹⁰⁷⁴, far below η, and by
    pointwise factors of order exp(2⁻¹⁰⁷⁴/s), negligible against the slack.

    Cost: d OpenDP Laplace and d Gaussian draws (about 0.5 ms per value on a
    loaded machine); the grid Λ is far below the noise (e.g. d = 30,
    eps = 1: Λ ≈ 10⁻⁸·s, against a noise s.d. of s·√(d+1) per coordinate).

    Examples
    --------
    >>> y = snapped_l2_laplace(np.zeros(3), scale=1.0, eps=1.0, bound=1.0)
    >>> y.shape
    (3,)
    """
    w = np.asarray(values, dtype=float)
    d = w.size
    lam, bound_out = snap_grid(d, scale, eps, bound)
    s = scale * SNAP_INFLATE
    zeros = [0.0] * d
    radius = math.fsum(abs(e) for e in _opendp_vector_measurement("laplace", s, _FINEST_K)(zeros))
    while True:
        g = np.asarray(_opendp_vector_measurement("gaussian", 1.0, _FINEST_K)(zeros), dtype=float)
        norm = math.sqrt(math.fsum((g * g).tolist()))
        if norm > 0:  # G = 0 has probability 0
            break
    noisy = np.clip(w.ravel(), -bound, bound) + radius * (g / norm)
    return np.clip(np.round(noisy / lam) * lam, -bound_out, bound_out).reshape(w.shape)


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

    def l2_laplace(
        self, values: np.ndarray, scale: float, *, eps: float | None = None, bound: float | None = None
    ) -> np.ndarray:
        """Return ``values + b`` with density of b ∝ exp(−‖b‖₂ / scale).

        ‖b‖ ~ Gamma(d, scale) and b/‖b‖ is uniform on the sphere (the
        multivariate "L2-Laplace" of Chaudhuri, Monteleoni & Sarwate 2011).
        Secure (unseeded) draws go through :func:`snapped_l2_laplace`, which
        needs the claimed ``eps`` and a public ``bound`` on |values_j|; seeded
        draws use numpy and the statement says so.
        """
        values = np.asarray(values, dtype=float)
        if self.secure and self._secure_available():
            if eps is None or bound is None:
                raise TypeError("a secure l2_laplace draw needs eps= and bound= (see snapped_l2_laplace)")
            self.samplers.add(
                "snapped L2-Laplace from OpenDP Laplace and Gaussian draws (floating-point safe)"
            )
            return snapped_l2_laplace(values, scale, eps, bound)
        noise = _l2_laplace_draw(values.size, scale, self.generator)
        self.samplers.add("numpy L2-Laplace (seeded, not floating-point hardened)")
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

    def l2_laplace(
        self, values, scale: float, *, eps: float | None = None, bound: float | None = None
    ) -> np.ndarray:
        """Return ``values + b`` with density of b ∝ exp(−‖b‖₂ / ``scale``), as a seeded :meth:`NoiseSource.l2_laplace`.

        ``eps`` and ``bound`` are accepted for the same call signature and unused.
        """
        values = np.asarray(values, dtype=float)
        return values + _l2_laplace_draw(values.size, scale, self.generator).reshape(values.shape)
