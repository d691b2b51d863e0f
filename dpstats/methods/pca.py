"""Private principal components: the top-k eigenvectors of a privately released covariance matrix.

The rows.  Each row is clipped to the public box, centred at its midpoint c and shrunk onto
the l2 ball of radius C about c: z = shrink_C(clip(x) − c), ‖z‖ ≤ C (C public: the box's
half-diagonal, which shrinks no row, or a declared ``radius``).  One pass of any engine
gives the sufficient statistics n, S = Σ z and M = Σ z zᵀ (:class:`Moments`).

``center="mean"`` (the default): principal components as statisticians mean them, those
of the covariance about the data's mean (R's ``prcomp(x)``), estimated privately.

1. M̃ = M + E, E symmetric with iid N(0, σ_M²) entries on and above the diagonal
   (Analyze Gauss: Dwork, Talwar, Thakurta & Zhang 2014, Algorithm 1).
2. S̃ = S + e, e ~ N(0, σ_S² I_d), where n is public (replace-one-row, no row dropped);
   where n is private (add/remove-one-row, or rows dropped for missing values) the
   released vector is Σ (z, C) + e, e ~ N(0, σ_S² I_{d+1}), whose last entry over C is
   the noisy count ñ (:func:`dpstats.privacy.pca.sum_sensitivity`).
3. Post-processing (no privacy cost): ñ = n (public) or max(released count, 2);
   μ̂ = S̃/ñ clipped to the box (the mean of clipped rows lies in it), the released
   mean is c + μ̂; Ĉ = (M̃ − ñ μ̂ μ̂ᵀ)/(ñ − 1), which is (M − S Sᵀ/n)/(n − 1), the
   sample covariance of the clipped rows, when there is no noise; the top-k eigenvectors
   of Ĉ are the loadings, its eigenvalues the variances (prcomp's ``sdev^2``), and
   λ_j/Σ_i max(λ_i, 0) over all d eigenvalues the proportion of variance.

Sensitivities (rows with ‖z‖ ≤ C, derived once here):

* M, Frobenius norm.  Replace-one: ‖z zᵀ − z' z'ᵀ‖²_F = ‖z‖⁴ + ‖z'‖⁴ − 2(zᵀz')² ≤ 2C⁴,
  so Δ_F = √2·C² (attained by orthogonal z, z' on the sphere); add/remove-one:
  ‖z zᵀ‖_F = ‖z‖² ≤ C², so Δ_F = C².  The released upper triangle changes in l2 by at most
  the Frobenius norm.  Replace-one with rows dropped for missing values adds add/remove
  changes, within √2·C².
* S (or Σ (z, C)), l2 norm.  Replace-one: ‖z − z'‖ ≤ 2C (z' = −z on the sphere), so
  Δ₂ = 2C; add/remove-one: ‖(z, C)‖ ≤ √2·C, so Δ₂ = √2·C; replace-one with rows dropped:
  max(2C, √2·C) = 2C.

Budget: every release is a Gaussian mechanism, so their composition is one Gaussian and
(eps, delta) becomes ρ = μ²/2 exactly (Balle & Wang 2018, Theorem 8:
:func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`); ``mean_share`` of ρ goes
to S, the rest to M (zCDP, and Gaussian DP, compose by adding ρ, Bun & Steinke 2016, Lemma 2.3); σ = Δ/√(2ρ_step) for each (Prop. 1.6).  The two ledger rows sum to (eps, delta).
A single joint Gaussian on the stacked (S/w, M) has a tighter joint sensitivity (the
worst pair for S, z' = −z, leaves M unchanged); the split is the simpler, stated analysis.

``center="midpoint"``: the earlier behaviour, kept for users who want it and for
:func:`dpstats.dp_gmm`'s step: Analyze Gauss alone on M with all of ρ; the loadings are the
top-k eigenvectors of M̃ and the eigenvalues are sums of squares about c, not variances
(``prcomp(x, center = c)``'s ``sdev^2`` times n − 1 at eps = inf).  The mechanism lives once
in :mod:`dpstats.privacy.pca`.

Noise level and resolved components (post-processing of released values and public inputs;
:func:`noise_bounds`).  N is the noise on the decomposed matrix in units of Σ(x − c)(x − c)ᵀ: the
released (ñ − 1)Ĉ minus the noiseless (n − 1)C of the clipped rows (``center="mean"``), or M̃ − M
(``"midpoint"``); α = ``NOISE_LEVEL_ALPHA`` = 0.05.

(a) Analyze Gauss.  E is symmetric with iid N(0, σ²) entries on and above the diagonal (g, d(d + 1)/2
    of them).  λ_max(E) is a √2σ-Lipschitz function of the standardised g: |λ_max(E) − λ_max(E')| ≤
    ‖E − E'‖_F ≤ √2·σ‖g − g'‖ (an off-diagonal entry counts twice).  Gaussian concentration (the
    Tsirelson–Ibragimov–Sudakov inequality; Boucheron, Lugosi & Massart 2013, Concentration
    Inequalities, Theorem 5.6) gives P(λ_max(E) ≥ E λ_max(E) + t) ≤ exp(−t²/(4σ²)).  And
    E λ_max(E) = E sup_u uᵀEu ≤ 2σ√d by the Sudakov–Fernique inequality (Vershynin 2018,
    High-Dimensional Probability, §7.2): E(uᵀEu − vᵀEv)² ≤ 2σ²‖uuᵀ − vvᵀ‖²_F =
    4σ²(1 − (uᵀv)²) ≤ 4σ²‖u − v‖² = E(Y_u − Y_v)² for Y_u = 2σ⟨h, u⟩, h ~ N(0, I_d), whose supremum
    over unit u has mean 2σE‖h‖ ≤ 2σ√d.  So τ_E = 2σ(√d + √ln(2/α)) bounds λ_max(E) except with
    probability α/2, and ‖E‖ = max(λ_max(E), λ_max(−E)) (−E has E's law) except with probability α.
(b) The mean (``center="mean"``).  N − E = nμ̄μ̄ᵀ − ñm̂m̂ᵀ, μ̄ = S/n the clipped rows' mean (in the box
    and, ‖z‖ ≤ C, in the ball) and m̂ the released one (the printed centre minus c).  With δ = m̂ − μ̄
    this is (n − ñ)μ̄μ̄ᵀ − ñ(m̂δᵀ + δm̂ᵀ − δδᵀ), of norm at most |n − ñ|r² + ñ(2‖m̂‖‖δ‖ + ‖δ‖²) for any
    r ≥ ‖μ̄‖; the clip to the box is a projection onto a convex set holding μ̄, so ‖δ‖ ≤ ‖S̃/ñ − μ̄‖ ≤
    (‖e‖ + |n − ñ|·r)/ñ.  The sums' noise e (with C(ñ − n) as a last entry where n is private) has
    ‖e‖/σ_S ~ χ_m, m = d or d + 1, so ‖e‖ ≤ q = σ_S·χ_m⁻¹(1 − α/2) except with probability α/2.  On
    that event |n − ñ| ≤ q/C (0 where n is public) and, from ‖μ̄‖ ≤ ‖m̂‖ + ‖δ‖,
    r = min(C, (‖m̂‖ + q/ñ)/(1 − q/(Cñ))); τ_B is the bound above with these.  Where n is public it
    is 2‖m̂‖q + q²/n.  A released count below 2 leaves nothing told apart (τ_B = ∞).
(c) The noise level τ = τ_E + τ_B (τ_E alone with ``"midpoint"``; τ/(ñ − 1) in the importance
    table's units with ``"mean"``): P(λ_max(N) ≥ τ) ≤ α.  Noise alone (a noiseless matrix 0: rows
    all equal, or all at c with ``"midpoint"``) puts a released variance at or above it in at most
    5% of releases; a variance below it is not told apart from noise.  The bound is conservative: on the iris twin of audit s15-stat3 (d = 4,
    n = 2000, eps = 1, box (0, 8)) it is 3.35 against a simulated 95% point of λ_max(N) of 1.23;
    on pure noise with d = 20 it is 1.6 times that point.
(d) A component is resolved when its variance is at or above τ and the released gap to each
    neighbouring eigenvalue (λ̂_{k+1} of the released matrix included) is at least τ_E, the bound on
    ‖E‖ of (a).  Davis–Kahan (1970; the sin θ theorem): the loading's angle θ to the noiseless one
    has sin θ ≤ ‖Nv‖/δ, δ the distance from the noiseless eigenvalue to the other released ones;
    the rule asks the released gap to exceed the noise's norm, that theorem's scale, and is not a
    proof of an angle bound (one needs δ ≥ ĝap − ‖N‖ > 0, and the operator-norm bounds above are
    about twice the noise at small d, so a proven 30° would leave unresolved loadings that are 5°
    off: iris, n = 2000, eps = 1).  To first order the loading moves by ‖P_⊥Nv‖/gap, about
    σ√(d − 1)/gap, which at gap τ_E is below tan 27°: a resolved loading is within about 30° of the
    noiseless one.  ``tests/test_pca_resolved.py`` checks the level on pure noise and the angle
    by simulation.
(e) How much a variance moves (:func:`variance_noise_sds`, first order in the noise).  v_j is the j-th
    noiseless loading, λ_j its variance, a_j = v_jᵀμ̄ (μ̄ the clipped rows' mean about c, inside the box,
    so not clipped again).  Analyze Gauss moves λ_j by v_jᵀEv_j = Σ_i v_ij²E_ii + 2Σ_{i<l} v_ij v_lj E_il,
    of variance σ²(Σ_i v_ij⁴ + 4Σ_{i<l} v_ij²v_lj²) = σ²(2 − Σ_i v_ij⁴).  The released mean adds its own:
    ñm̂m̂ᵀ = (S + e)(S + e)ᵀ/(n + η), η = ñ − n (0 where n is public), is nμ̄μ̄ᵀ + μ̄eᵀ + eμ̄ᵀ + eeᵀ/n −
    ημ̄μ̄ᵀ to first order in η, and Ĉ divides by ñ − 1 = (n − 1)(1 + η/(n − 1)), so
        λ̂_j − λ_j ≈ (v_jᵀEv_j − 2a_j g − g²/n + η(a_j² − λ_j))/(n − 1),   g = v_jᵀe ~ N(0, σ_S²),
    with η ~ N(0, σ_S²/C²) where n is private (the count's entry C·n carries noise σ_S).  E, e and η are
    independent and E g³ = 0, Var g² = 2σ_S⁴, so the s.d. is
        √(σ²(2 − Σ_i v_ij⁴) + 4a_j²σ_S² + 2σ_S⁴/n² + (σ_S/C)²(a_j² − λ_j)²) / (n − 1),
    the last term only where n is private.  The mean's terms grow with the mean's distance from c along
    v_j: with the mean along PC1 near a corner (largest coordinate 0.8; d = 3, box (−1, 1), mean_share =
    0.2, so σ_S ≈ 1.6σ) the
    spread of λ̂_1 over the noise is about twice √2σ/(n − 1) and within a few % of this s.d.
    (``tests/test_pca_noise_edge.py`` simulates it).  The print states it with the released v̂_j, λ̂_j,
    m̂ and ñ in place of the noiseless ones (post-processing); ``"midpoint"`` has the first term only,
    not divided by n − 1.

At eps = inf (NOT private) the plan has no mechanism and the release is exact:
``center="mean"`` gives ``prcomp(x)`` (divisor n − 1) for rows inside the box.  Under
add/remove-one-row n is private: the plan never reads it, and a data set of 0, 1 or 2
rows is released like any other (its statistics are then the noise, by construction).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi

from .._kernels import one_blas_thread
from ..errors import PrivacyParameterError
from ..formula import LEVELS_READ_NOT_SHOWN, missing_counts
from ..geometry import Box
from ..privacy.accountant import BudgetPlan, LedgerEntry
from ..privacy.bounds import is_auto
from ..privacy.calibration import CONVERSIONS, gaussian_rho_from_eps_delta, zcdp_gaussian_sigma
from ..privacy.pca import (
    PrivatePCA,
    noisy_symmetric,
    second_moment_sensitivity,
    sum_sensitivity,
    top_subspace,
)
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..schema import Schema
from ..validation import (
    check_eps,
    check_fraction,
    check_gaussian_delta,
    check_neighbouring,
    check_whole_in,
)
from ._options import Options

CENTERS = ("mean", "midpoint")
# of ρ, to the column sums (center="mean"); the rest to Σ zzᵀ.  benchmarks/bench_pca_mean_share.py
# (5 columns, n = 3000, eps 1 and 4, the mean 0, 3 or 6 off the midpoint of the box (−10, 10)): the
# median subspace angle at 0.25 was within 11% of the best of 0.05, 0.1, 0.25, 0.5 in every setting,
# where 0.05 lost up to 35% and 0.5 up to 31%.
MEAN_SHARE = 0.25
MIN_COUNT = 2.0  # the released count is floored here before dividing by ñ and ñ − 1 (post-processing)
NOISE_LEVEL_ALPHA = 0.05  # noise alone reaches the noise level in at most this share of releases

SENSITIVITY_TEXT = {
    "replace": "Δ_F = √2·C² (replace-one; rows in the ball of radius C)",
    "add_remove": "Δ_F = C² (add/remove-one; rows in the ball of radius C)",
}
SUM_SENSITIVITY_TEXT = {
    "replace": "Δ₂ = 2C (replace-one: ‖z − z'‖ ≤ 2C; rows in the ball of radius C)",
    "add_remove": "Δ₂ = √2·C (add/remove-one: ‖(z, C)‖ ≤ √2·C; rows in the ball of radius C)",
}


@dataclass(frozen=True)
class PCAOptions(Options):
    """dp_pca's options, checked once (defaults: the signature of :func:`dpstats.api.pca.dp_pca`).

    ``k`` is checked against the number of design columns when the frame is known
    (:func:`check_k`).
    """

    GAUSSIAN_PLAN = True  # both centres: one Gaussian conversion of (eps, delta) (:func:`plan`)

    formula: str
    k: Any
    eps: float
    delta: float
    bounds: Any
    radius: float | None
    center: str
    mean_share: float
    neighbouring: str
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> PCAOptions:
        """Cheap checks of dp_pca's arguments, before the data is read."""
        eps = check_eps(given["eps"], allow_inf=True)
        delta = check_gaussian_delta(  # at eps = inf (no noise) delta may be omitted
            given["delta"],
            "dp_pca needs delta > 0 at finite eps: it adds Gaussian noise (zCDP). Give e.g. delta=1e-6 "
            "(much smaller than 1/n).",
            eps,
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
        return cls.from_given(
            given,
            eps=eps,
            delta=delta,
            neighbouring=neighbouring,
            center=check_center(given["center"]),
            mean_share=check_fraction(given["mean_share"], "mean_share", low_open=True),
        )


def check_center(center: Any) -> str:
    """``"mean"`` or ``"midpoint"``; anything else (TRUE/FALSE included) is refused with both named."""
    if isinstance(center, str) and center in CENTERS:
        return center
    raise PrivacyParameterError(
        f'center must be "mean" (the covariance about the privately released mean, as prcomp(x)) or '
        f'"midpoint" (second moments about the declared box\'s midpoint), got {center!r}.'
    )


@dataclass(frozen=True)
class Moments:
    """The sufficient statistics of the clipped, centred, shrunk rows z (module docstring).

    ``gram`` is M = Σ z zᵀ, ``sums`` is S = Σ z (original units, about the box's midpoint),
    ``n`` the number of rows summed (private where the plan says so: then only the
    mechanism reads it), ``box`` the public box whose midpoint is c.
    """

    gram: np.ndarray
    sums: np.ndarray
    n: int
    box: Box


@dataclass
class PCAPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs: k, C, ρ and the noise σ's.

    ``sensitivity`` is Δ_F of M and ``sigma`` its noise sd; ``sum_sensitivity`` and
    ``sum_sigma`` are those of the sums (0 with ``center="midpoint"``); ``n_public`` says
    whether the release may use n as it is (else it releases a noisy count with the sums).
    """

    k: int = 1
    radius: float = 0.0
    rho: float = 0.0
    sensitivity: float = 0.0
    sigma: float = 0.0
    center: str = "mean"
    n_public: bool = True
    sum_sensitivity: float = 0.0
    sum_sigma: float = 0.0


@dataclass
class PCARelease:
    """What dp_pca releases, all of it post-processing of the noisy statistics.

    ``pca`` holds the loadings (``basis``), the top-k eigenvalues (variances of Ĉ with
    ``center="mean"``; sums of squares about c with ``"midpoint"``) and σ_M; ``centre`` is the
    point the scores are taken about (the released mean, or c); ``total`` is Σ max(λ_i, 0)
    over all d eigenvalues (the denominator of the proportions); ``count`` the released noisy
    n where n is private (``center="mean"``), else None; ``next_eigenvalue`` the (k + 1)-th
    eigenvalue of the decomposed matrix (None when k = d); ``noise_bound`` and ``gap_bound`` τ and
    τ_E of the module docstring, in units of Σ(x − c)(x − c)ᵀ (0 at eps = inf); ``variance_sds`` the
    s.d. of the noise on each of the k eigenvalues, (e) of the module docstring, in those units
    (None at eps = inf).
    """

    pca: PrivatePCA
    centre: np.ndarray
    total: float
    sum_noise_sd: float = 0.0
    count: float | None = None
    next_eigenvalue: float | None = None
    noise_bound: float = 0.0
    gap_bound: float = 0.0
    variance_sds: np.ndarray | None = None


def check_k(k: Any, d: int, *, shown: bool = True) -> int:
    """1 <= k <= d, the number of design columns (public: the formula and the declared levels); ``shown``
    False when levels were read from the rows, so d depends on the data and the text does not quote it."""
    most = (
        f"{d} (the number of design columns)"
        if shown
        else f"d, the number of design columns (d {LEVELS_READ_NOT_SHOWN})"
    )
    return check_whole_in(k, 1, d, f"k must be a whole number with 1 <= k <= {most}, got {k!r}.")


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


def plan(options: PCAOptions, radius: float, *, engine: str = "in-memory", n_public: bool = True) -> PCAPlan:
    """The privacy plan of one dp_pca release, from public inputs only.

    ``radius`` is the clipping radius C (public: the box's half-diagonal or the declared
    radius, :func:`clip_radius`); ``engine`` names the pass that computed the statistics;
    ``n_public`` whether the number of rows is public (replace-one-row and no row dropped).
    ``center="mean"``: two Gaussian steps (M, then the sums), split ``mean_share``;
    ``"midpoint"``: one Analyze Gauss step with all of (eps, delta).

    Examples
    --------
    >>> o = PCAOptions.partial(k=2, eps=1.0, delta=1e-6, neighbouring="replace", center="midpoint")
    >>> p = plan(o, 2.0)
    >>> p.eps, p.delta, p.entries[0].sensitivity[:10], round(p.sensitivity, 4)
    (1.0, 1e-06, 'Δ_F = √2·C', 5.6569)
    >>> p = plan(PCAOptions.partial(k=2, eps=1.0, delta=1e-6, neighbouring="replace", center="mean",
    ...                             mean_share=0.25), 2.0)
    >>> len(p.entries), round(sum(e.eps for e in p.entries), 12), p.sum_sensitivity
    (2, 1.0, 4.0)
    """
    if math.isinf(options.eps):
        return _nonprivate_plan(options, radius, engine)
    if options.center == "midpoint":
        return _midpoint_plan(options, radius, engine)
    return _mean_plan(options, radius, engine, n_public)


def _midpoint_plan(options: PCAOptions, radius: float, engine: str) -> PCAPlan:
    """center="midpoint": Analyze Gauss on Σ zzᵀ with the whole budget (dp_gmm's step)."""
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
        "The components are those of the second moments about the box's midpoint, not of the covariance "
        'about the mean (center="mean" gives those).',
        "The numbers of clipped values and shrunk rows are not released.",
        "Eigenvectors, their order and sign convention are post-processing of the noisy matrix.",
    ]
    return PCAPlan(
        method="DP PCA (Analyze Gauss)",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={"Σ xxᵀ (Frobenius)": f"{text}; C = {radius:.4g}"},
        notes=notes,
        k=k,
        radius=radius,
        rho=rho,
        sensitivity=sensitivity,
        sigma=zcdp_gaussian_sigma(sensitivity, rho),
        center="midpoint",
    )


def _mean_plan(options: PCAOptions, radius: float, engine: str, n_public: bool) -> PCAPlan:
    """center="mean": Gaussian noise on Σ zzᵀ (Analyze Gauss) and on the sums (with the count where
    n is private), ρ split ``mean_share`` to the sums; the covariance is post-processing."""
    k, neighbouring, share = int(options.k), options.neighbouring, float(options.mean_share)
    m_text, s_text = SENSITIVITY_TEXT[neighbouring], SUM_SENSITIVITY_TEXT[neighbouring]
    sums = "Σ (x − c)" if n_public else "Σ (x − c, C) (column sums and C·n: n is private)"
    budget = BudgetPlan(options.eps, options.delta, gaussian_only=True)
    rho_m = budget.add(
        "Σ (x − c)(x − c)ᵀ of the clipped rows + symmetric Gaussian noise (Analyze Gauss)",
        "Gaussian (zCDP)",
        1.0 - share,
        m_text,
    )
    rho_s = budget.add(
        f"{sums} of the clipped rows + Gaussian noise (the mean)", "Gaussian (zCDP)", share, s_text
    )
    m_sens, s_sens = second_moment_sensitivity(radius, neighbouring), sum_sensitivity(radius, neighbouring)
    count = "n as released" if n_public else "ñ the released count (floored at 2)"
    return PCAPlan(
        method="DP PCA (covariance about the private mean: Gaussian sums and Analyze Gauss)",
        neighbouring=neighbouring,
        entries=budget.entries(),
        sensitivities={
            "Σ (x − c)(x − c)ᵀ (Frobenius)": f"{m_text}; C = {radius:.4g}",
            f"{'Σ (x − c)' if n_public else 'Σ (x − c, C)'} (l2)": f"{s_text}; C = {radius:.4g}",
        },
        notes=[
            f"Rows clipped to the box and shrunk onto the ball of radius C = {radius:.4g} about its midpoint c; "
            f"the sums computed in one pass by the {engine} engine.",
            f"ρ = {budget.rho:.4g} from (eps, delta) ({CONVERSIONS['gaussian']}), split {1 - share:g} (Σ zzᵀ) / {share:g} (sums: mean_share).",
            f"Post-processing: the mean c + S̃/ñ (clipped to the box), the covariance "
            f"Ĉ = (M̃ − ñ μ̂μ̂ᵀ)/(ñ − 1) with {count}, its eigenvectors (order, sign convention) and "
            "eigenvalues (the variances) and the proportions of variance.",
            "The numbers of clipped values and shrunk rows are not released.",
        ],
        k=k,
        radius=radius,
        rho=budget.rho,
        sensitivity=m_sens,
        sigma=zcdp_gaussian_sigma(m_sens, rho_m),
        center="mean",
        n_public=n_public,
        sum_sensitivity=s_sens,
        sum_sigma=zcdp_gaussian_sigma(s_sens, rho_s),
    )


def _nonprivate_plan(options: PCAOptions, radius: float, engine: str) -> PCAPlan:
    """eps = inf: no mechanism, nothing to charge; the release is the exact top-k subspace."""
    k = int(options.k)
    what = (
        "the covariance about the mean"
        if options.center == "mean"
        else "Σ (x − c)(x − c)ᵀ about the box's midpoint c"
    )
    entry = LedgerEntry.nonprivate(f"exact top-{k} subspace of {what} (eps = inf, NOT private)")
    return PCAPlan(
        method="PCA (non-private reference)",
        neighbouring=options.neighbouring,
        entries=[entry],
        notes=[
            f"Rows clipped to the box (radius C = {radius:.4g} about its midpoint); the sums computed in one "
            f"pass by the {engine} engine; the exact eigenvectors of {what}, no noise."
        ],
        k=k,
        radius=radius,
        rho=math.inf,
        center=options.center,
    )


def release(moments: Moments, plan: PCAPlan, noise: NoiseSource) -> PCARelease:
    """The release the plan describes: noise on the statistics, then the eigen-decomposition.

    Any statistics are released the same way, those of no row (zero) or of one or two rows
    included: the subspace is then the noise's, by construction.

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> X = np.c_[gen.normal(3, 3, 2000), gen.normal(0, 0.1, 2000)]
    >>> box = Box(np.array([-20.0, -20.0]), np.array([20.0, 20.0]))
    >>> o = PCAOptions.partial(k=1, eps=1.0, delta=1e-6, neighbouring="replace", center="mean", mean_share=0.25)
    >>> r = release(Moments(X.T @ X, X.sum(axis=0), 2000, box), plan(o, 10.0), NoiseSource(0))
    >>> bool(abs(r.pca.basis[0, 0]) > 0.99), bool(abs(r.pca.eigenvalues[0] - 9) < 1)
    (True, True)
    """
    if plan.center == "midpoint":
        return _midpoint_release(moments, plan, noise)
    if math.isinf(plan.rho):
        return covariance_pca(
            moments.gram, moments.sums, max(float(moments.n), MIN_COUNT), moments.box, plan.k
        )
    gram = noisy_symmetric(moments.gram, plan.sigma, noise)
    if plan.n_public:
        sums, count = noise.gaussian(moments.sums, plan.sum_sigma), float(moments.n)
    else:  # Σ (z, C): the last entry is C·n
        noisy = noise.gaussian(np.append(moments.sums, plan.radius * moments.n), plan.sum_sigma)
        sums, count = noisy[:-1], float(noisy[-1] / plan.radius)
    out = covariance_pca(gram, sums, max(count, MIN_COUNT), moments.box, plan.k, noise_sd=plan.sigma)
    out.sum_noise_sd = plan.sum_sigma
    out.count = None if plan.n_public else count
    mean_norm = float(np.linalg.norm(out.centre - moments.box.center))
    out.noise_bound, out.gap_bound = noise_bounds(plan, len(sums), mean_norm, count)
    out.variance_sds = variance_noise_sds(
        plan, out.pca, out.centre - moments.box.center, max(count, MIN_COUNT)
    )
    return out


def _midpoint_release(moments: Moments, plan: PCAPlan, noise: NoiseSource) -> PCARelease:
    """Analyze Gauss on Σ zzᵀ (the draws of :func:`~dpstats.privacy.pca.private_pca_gram`, so dp_gmm's
    step for the same seed), or its exact eigenvectors at eps = inf."""
    gram = moments.gram if math.isinf(plan.rho) else noisy_symmetric(moments.gram, plan.sigma, noise)
    out = _decomposed(gram, plan.k, moments.box.center, plan.sigma)
    if not math.isinf(plan.rho):
        out.noise_bound, out.gap_bound = noise_bounds(plan, gram.shape[0], 0.0, float(moments.n))
        out.variance_sds = variance_noise_sds(plan, out.pca)
    return out


def variance_noise_sds(
    plan: PCAPlan, pca: PrivatePCA, mean: np.ndarray | None = None, count: float = math.nan
) -> np.ndarray:
    """The s.d. of the noise on each released eigenvalue, to first order, in units of Σ(x − c)(x − c)ᵀ:
    (e) of the module docstring, with the released loadings, variances, mean about c (``mean``) and
    count ñ (n where public) in place of the noiseless ones.  ``center="midpoint"``: σ√(2 − Σ_i v_ij⁴).

    Examples
    --------
    >>> o = PCAOptions.partial(k=1, eps=1.0, delta=1e-6, neighbouring="replace", center="midpoint")
    >>> p = plan(o, 2.0)
    >>> sd = variance_noise_sds(p, PrivatePCA(np.array([[1.0], [0.0]]), np.array([5.0]), p.sigma))
    >>> bool(np.isclose(sd[0], p.sigma))   # a loading on an axis: Var E_11 = σ²
    True
    """
    v = pca.basis
    var = plan.sigma**2 * (2.0 - (v**4).sum(axis=0))
    if plan.center == "mean":
        a, s2 = v.T @ mean, plan.sum_sigma**2
        var = var + 4.0 * a * a * s2 + 2.0 * s2 * s2 / count**2
        if not plan.n_public:  # the count's noise η, of s.d. σ_S/C
            var = var + s2 / plan.radius**2 * (a * a - pca.eigenvalues) ** 2
    return np.sqrt(var)


def noise_bounds(
    plan: PCAPlan, d: int, mean_norm: float, count: float, alpha: float = NOISE_LEVEL_ALPHA
) -> tuple[float, float]:
    """(τ, τ_E) of the module docstring, in units of Σ(x − c)(x − c)ᵀ: the noise level, which the largest
    eigenvalue of the noise alone reaches with probability at most ``alpha``, and the bound on the
    Analyze Gauss noise's norm that a resolved component's gaps must reach.

    From public inputs (the plan's σ's and C, d) and released values only: ``mean_norm`` is ‖m̂‖, the
    released mean's distance from the box's midpoint, and ``count`` the released count where n is
    private (else n).  ``center="midpoint"``: τ = τ_E.

    Examples
    --------
    >>> o = PCAOptions.partial(k=1, eps=1.0, delta=1e-6, neighbouring="replace", center="midpoint")
    >>> p = plan(o, 2.0)
    >>> level, gap = noise_bounds(p, 4, 0.0, 100.0)
    >>> level == gap, round(gap / p.sigma, 4)   # 2(√4 + √ln 40)
    (True, 7.8413)
    """
    gap = 2.0 * plan.sigma * (math.sqrt(d) + math.sqrt(math.log(2.0 / alpha)))
    if plan.center == "midpoint":
        return gap, gap
    if count < MIN_COUNT:  # the count is noise: nothing is told apart from it
        return math.inf, gap
    q = plan.sum_sigma * float(chi.ppf(1.0 - alpha / 2.0, d if plan.n_public else d + 1))
    if plan.n_public:
        return gap + 2.0 * mean_norm * q + q * q / count, gap
    eta, c = q / plan.radius, plan.radius  # |n − ñ| <= q/C on the event ‖e‖ <= q
    r = c if q >= c * count else min(c, (mean_norm + q / count) / (1.0 - q / (c * count)))
    shift = (q + eta * r) / count  # ‖m̂ − μ̄‖ <= this
    return gap + eta * r * r + count * (2.0 * mean_norm * shift + shift * shift), gap


def diagnostics(mf: Any, stats: Any) -> dict[str, Any]:
    """What ``diagnostics=True`` attaches, computed from the rows and not private: the model frame's counts
    of missing values and the number of rows the pass shrank onto the ball (``stats``: the engine's)."""
    return {**missing_counts(mf), "rows_shrunk_onto_ball": stats.n_rows_clipped}


def covariance_pca(
    gram: np.ndarray, sums: np.ndarray, count: float, box: Box, k: int, *, noise_sd: float = 0.0
) -> PCARelease:
    """Post-processing of (noisy) M, S and a count ñ >= 2: the mean, the covariance and its top-k PCA.

    μ̂ = S/ñ clipped to the box about its midpoint c; Ĉ = (M − ñ μ̂μ̂ᵀ)/(ñ − 1), which equals
    (M − S Sᵀ/ñ)/(ñ − 1) when μ̂ is inside the box (always, for exact statistics of rows in it).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 6.0]])
    >>> box = Box(np.array([-10.0, -10.0]), np.array([10.0, 10.0]))
    >>> r = covariance_pca(X.T @ X, X.sum(axis=0), 3.0, box, 2)
    >>> bool(np.allclose(r.pca.eigenvalues, np.linalg.eigvalsh(np.cov(X.T))[::-1])), r.centre.tolist()
    (True, [2.0, 3.0])
    """
    mean = np.clip(sums / count, box.lo - box.center, box.hi - box.center)
    cov = (gram - count * np.outer(mean, mean)) / (count - 1.0)
    return _decomposed(cov, k, box.center + mean, noise_sd)


@one_blas_thread  # d x d eigendecompositions: threads waiting for busy cores only slow them
def _decomposed(matrix: np.ndarray, k: int, centre: np.ndarray, noise_sd: float) -> PCARelease:
    """The top-k PCA of a symmetric ``matrix``, Σ max(λ_i, 0) over all its eigenvalues (the trace of its
    nearest PSD matrix, the proportions' denominator) and its (k + 1)-th eigenvalue (None when k = d)."""
    spectrum = np.linalg.eigvalsh(matrix)  # ascending
    return PCARelease(
        pca=top_subspace(matrix, k, noise_sd=noise_sd),
        centre=centre,
        total=float(np.clip(spectrum, 0.0, None).sum()),
        next_eigenvalue=float(spectrum[-k - 1]) if k < len(spectrum) else None,
    )
