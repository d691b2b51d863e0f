"""Private PCA as a method of its own: Analyze Gauss on the Gram matrix of clipped rows.

Dwork, Talwar, Thakurta & Zhang (2014), Algorithm 1 ("Analyze Gauss"):
release the top-k eigenvectors of A = Σ xxᵀ + E, E symmetric with iid
N(0, σ²) entries on and above the diagonal, for rows x in a ball of radius C.
It is step 1 of Kamath et al. (2019), Algorithm 1 (:mod:`dpstats.methods.gmm`),
and the mechanism lives once in :mod:`dpstats.privacy.pca`.  Here it is a
release of its own: one ledger row holding the whole (eps, delta), from a
Gram matrix that any engine computes in one pass, where dp_gmm spends a ρ
share on it inside its zCDP plan over rows in memory.

Privacy: ‖xxᵀ − yyᵀ‖_F ≤ √2·C² (replace-one) and ‖xxᵀ‖_F ≤ C²
(add/remove-one); σ = Δ_F/√(2ρ) gives ρ-zCDP (Bun & Steinke 2016,
Prop. 1.6).  The release is one Gaussian mechanism, so ρ = μ²/2 with μ the largest
for which it is (eps, delta)-DP exactly (Balle & Wang 2018, Theorem 8:
:func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`).

The two verbs: :func:`plan` (from :class:`PCAOptions` and the public radius C) and
:func:`release` (from Σ xxᵀ, the plan and the noise source).  Neither reads n: under
add/remove-one-row n is private, and a data set of 0, 1 or 2 rows gives a Gram matrix
like any other (zero or of low rank), whose release is the noise alone, by construction.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import PrivacyParameterError
from ..geometry import Box
from ..privacy.accountant import LedgerEntry
from ..privacy.bounds import is_auto
from ..privacy.calibration import CONVERSIONS, gaussian_rho_from_eps_delta, zcdp_gaussian_sigma
from ..privacy.pca import PrivatePCA, private_pca_gram, second_moment_sensitivity
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..schema import Schema
from ..validation import check_eps, check_gaussian_delta, check_neighbouring, check_whole_in
from ._options import Options

SENSITIVITY_TEXT = {
    "replace": "Δ_F = √2·C² (replace-one; rows in the ball of radius C)",
    "add_remove": "Δ_F = C² (add/remove-one; rows in the ball of radius C)",
}


@dataclass(frozen=True)
class PCAOptions(Options):
    """dp_pca's options, checked once (defaults: the signature of :func:`dpstats.api.pca.dp_pca`).

    ``k`` is checked against the number of design columns when the frame is known
    (:func:`check_k`).
    """

    formula: str
    k: Any
    eps: float
    delta: float
    bounds: Any
    radius: float | None
    neighbouring: str
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> PCAOptions:
        """Cheap checks of dp_pca's arguments, before the data is read."""
        eps = check_eps(given["eps"])
        delta = check_gaussian_delta(
            given["delta"], "dp_pca needs delta > 0: it adds Gaussian noise (zCDP). Use e.g. delta=1e-6."
        )
        neighbouring = check_neighbouring(given["neighbouring"])
        radius = given["radius"]
        if radius is not None and not (
            isinstance(radius, numbers.Real)
            and not isinstance(radius, bool)
            and math.isfinite(radius)
            and radius > 0
        ):
            raise PrivacyParameterError(
                f"radius must be a positive number (public clipping radius), got {radius!r}."
            )
        bounds = given["bounds"]
        if radius is not None and is_auto(bounds):
            raise PrivacyParameterError(
                'radius= needs declared bounds (the box sets the units of the ball); with bounds="auto" '
                "omit radius (C is then the released box's half-diagonal)."
            )
        return cls.from_given(given, eps=eps, delta=delta, neighbouring=neighbouring)


@dataclass
class PCAPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs: k, C, ρ and the noise σ.

    ``sensitivity`` is Δ_F as a number (the ledger's text says how it is derived).
    """

    k: int = 1
    radius: float = 0.0
    rho: float = 0.0
    sensitivity: float = 0.0
    sigma: float = 0.0


def check_k(k: Any, d: int) -> int:
    """1 <= k <= d, the number of design columns (public: the formula and the declared levels)."""
    return check_whole_in(
        k, 1, d, f"k must be a whole number with 1 <= k <= {d} (the number of design columns), got {k!r}."
    )


def row_bound(bounds: Any, radius: float | None) -> float | None:
    """The engine's row bound C/h in the box's unit coordinates (all half-widths h equal).

    The pass maps each column by (x − c)/h, so a row of norm C in original
    units has norm C/h there when every column has half-width h.
    """
    if radius is None:
        return None  # C = ‖h‖: rows clipped to the box already lie in the ball
    if bounds is None:
        raise PrivacyParameterError(
            "radius= needs declared bounds (the box sets the units of the ball); "
            "give bounds=(lo, hi) or omit radius."
        )
    pairs = list(bounds.values()) if isinstance(bounds, dict) else [bounds]
    widths = {float(hi) - float(lo) for lo, hi in pairs}
    if len(widths) != 1 or not next(iter(widths)) > 0:
        raise PrivacyParameterError(
            f"radius = {radius:g} needs bounds of the same positive width for every column, got widths "
            f"{sorted(widths)}; declare equal-width bounds, e.g. bounds=(-12, 12), or omit radius."
        )
    return float(radius) / (widths.pop() / 2.0)


def check_equal_widths(box: Box, names: list[str], radius: float | None) -> None:
    """A declared radius needs every design column to have the same half-width (the engine's unit ball)."""
    h = np.asarray(box.halfwidth, dtype=float)
    if radius is not None and not np.allclose(h, h[0], rtol=1e-12, atol=0.0):
        raise PrivacyParameterError(
            f"radius = {radius:g} needs every design column to have bounds of the same width, but "
            f"{[names[j] for j in np.flatnonzero(h != h[0])][:3]} differ (0/1 dummies are bounded "
            "by (0, 1)); declare equal-width bounds or omit radius (then C = the box's half-diagonal)."
        )


def clip_radius(box: Box, radius: float | None) -> float:
    """C: the declared radius, or the box's half-diagonal ‖h‖ (no row is shrunk)."""
    return float(np.linalg.norm(box.halfwidth)) if radius is None else float(radius)


def plan(options: PCAOptions, radius: float, *, engine: str = "in-memory") -> PCAPlan:
    """The privacy plan of one Analyze Gauss release: one Gaussian step, all of (eps, delta).

    ``radius`` is the clipping radius C (public: the box's half-diagonal or
    the declared radius, :func:`clip_radius`); ``engine`` names the pass that computed Σ xxᵀ.

    Examples
    --------
    >>> o = PCAOptions.partial(k=2, eps=1.0, delta=1e-6, neighbouring="replace")
    >>> p = plan(o, 2.0)
    >>> p.eps, p.delta, p.entries[0].sensitivity[:10], round(p.sensitivity, 4)
    (1.0, 1e-06, 'Δ_F = √2·C', 5.6569)
    """
    k, neighbouring = int(options.k), options.neighbouring
    text = SENSITIVITY_TEXT[neighbouring]
    rho = gaussian_rho_from_eps_delta(options.eps, options.delta)
    sensitivity = second_moment_sensitivity(radius, neighbouring)
    entry = LedgerEntry(
        step=f"private PCA: top-{k} subspace of Σ xxᵀ + symmetric Gaussian noise (Analyze Gauss)",
        mechanism="Gaussian (zCDP)",
        eps=options.eps,
        delta=options.delta,
        sensitivity=text,
        note=f"ρ = {rho:.4g}; one Gaussian: {CONVERSIONS['gaussian']}",
        event={"kind": "gaussian", "rho": rho},
    )
    notes = [
        f"Rows clipped to the box, centred at its midpoint and shrunk onto the ball of radius C = {radius:.4g}; "
        f"Σ xxᵀ computed in one pass by the {engine} engine.",
        "The numbers of clipped values and shrunk rows are not released.",
        "Eigenvectors, their order and sign convention are post-processing of the noisy matrix.",
    ]
    return PCAPlan(
        method="DP PCA (Analyze Gauss)",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={"Σ xxᵀ (Frobenius)": text.replace("C", f"C (C = {radius:.4g})", 1)},
        notes=notes,
        k=k,
        radius=radius,
        rho=rho,
        sensitivity=sensitivity,
        sigma=zcdp_gaussian_sigma(sensitivity, rho),
    )


def release(gram: np.ndarray, plan: PCAPlan, noise: NoiseSource) -> PrivatePCA:
    """The top-k subspace of ``gram`` (Σ xxᵀ of rows in the ball of radius C) + symmetric Gaussian noise.

    Any Gram matrix is released the same way, that of no row (zero) or of one or two rows
    (rank 1 or 2) included: the subspace is then the noise's, by construction.

    Examples
    --------
    >>> X = np.c_[np.random.default_rng(0).normal(0, 3, 2000), np.zeros(2000)]
    >>> o = PCAOptions.partial(k=1, eps=1.0, delta=1e-6, neighbouring="replace")
    >>> pca = release(X.T @ X, plan(o, 10.0), NoiseSource(0))
    >>> bool(abs(pca.basis[0, 0]) > 0.99)
    True
    """
    return private_pca_gram(gram, plan.k, plan.radius, plan.rho, plan.neighbouring, noise)
