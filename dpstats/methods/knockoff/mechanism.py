"""Methods I and II of Pournaderi & Xiang: DP fixed-X knockoffs (sensitivities and mechanisms).

Assumption 3: rows of X have l2 norm ≤ B (a public bound; rows are clipped to it)
and the smallest column norm C_min exceeds B.  Then η² = B²/(C_min² − B²) bounds
how much one replaced row can move the normalised design.

Method II (Theorem 5) releases the OLS coefficients of y on [X′ X̃′] plus
N(0, κ²I) noise, κ the (ε, δ₁) Gaussian calibration at l2 sensitivity Δ₂ (the paper
states the classic Δ₂·√(2 ln(1.25/δ₁))/ε; the theorem needs only an (ε, δ₁)-DP
Gaussian step, and we use the analytic one of Balle & Wang 2018, the least noise that
is: :func:`~dpstats.privacy.calibration.calibrate_gaussian`) with

    Δ₂ = 2√ζ / √((1 − η²)λ_min(Σ′) − η²) + (C_min − √(C_min² − B²))·‖β‖,
    ζ  = 2pσ² / (1 − √((2/p) ln(2/δ₂))),

where ζ bounds ‖P w‖² (w's projection on the 2p-dimensional span) except with
probability δ₂; so the release is (ε, δ₁ + δ₂)-DP.  It needs
λ_min(Σ′) > η²/(1 − η²).  A ridge ω² (Remark 2) adds ω²I to G and ω² under the
square root.

Method I (Theorem 3) releases f(G + E, [X′ X̃′]ᵀy + e): E = θ₁[[0, I], [I, 0]] +
[[1, 1], [1, 1]] ⊗ θ₂ with θ₁ ~ Lap(η²(1 + λ_min)/ε₁) (the noisy λ_min = s in the
off-diagonal blocks) and θ₂ symmetric, zero diagonal, upper entries N(0, κ₁²),
κ₁ the (ε₂, δ₁) Gaussian calibration (analytic, as above; the paper's classic form is
√(2 ln(1.25/δ₁))/ε₂ times) at sensitivity η²(√2 + ‖Σ′‖_F); e ~ N(0, κ₂²I) with κ₂ from the l2
sensitivity of [X′ X̃′]ᵀy = G b (b the OLS coefficients).  Writing
Δ(Gb) = G′Δb + (ΔG)b gives the bound used here (our restatement of the paper's
eq. (10), built from the same ingredients):

    Δ_v = γ·Δ₂ + ‖ΔG‖_F·(C_max‖β‖ + √(ζ/λ_min)),   γ = λ_max(G) = 2λ_max − λ_min,
    ‖ΔG‖_F ≤ 2(η²(√2 + ‖Σ′‖_F) + √p·η²(1 + λ_min)),

where C_max‖β‖ + √(ζ/λ_min) bounds ‖b‖ (signal plus the projected noise).  The
total is (ε + ε₁ + ε₂, δ + δ₁ + δ₂)-DP.  Both noises are invariant under swapping a
column with its knockoff, so W stays antisymmetric and FDR control holds
(Theorems 4 and 6).

Remark 2: the sensitivities involve λ_min, ‖Σ′‖_F, λ_max, C_min, C_max of the data
and σ, ‖β‖ of the model.  :class:`Calibration` holds them; the front door says
which came from the data (a guarantee local to the observed data) and which were
declared (:mod:`dpstats.methods.knockoff.planning`).

:func:`release` is one whole release: rows augmented to 2p when p < n < 2p,
knockoffs (Ũᵀy sampled, or X̃′ materialised by QR), the noisy release of
eq. (9) or Theorem 5 (:func:`run_mechanism`), then the knockoff(+) threshold
and selection as post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..._kernels import one_blas_thread
from ...errors import AssumptionError
from ...geometry import clip_rows_l2
from ...privacy.calibration import calibrate_gaussian
from . import filter as ko


@dataclass
class Calibration:
    """The quantities every sensitivity uses (Assumption 3 and Remark 2).

    ``lambda_min`` is a lower bound on λ_min(Σ′) (used in denominators),
    ``lambda_min_upper`` an upper bound (used in the sensitivity of λ_min itself);
    both equal the data's λ_min when it is used directly.  ``public`` is True when
    C_min and λ_min are declared, so messages may show them.
    """

    p: int
    B: float
    c_min: float
    c_max: float
    lambda_min: float
    lambda_min_upper: float
    lambda_max: float
    fro: float
    sigma: float
    beta_norm: float
    public: bool = False

    @property
    def eta2(self) -> float:
        """η² = B²/(C_min² − B²) (Assumption 3)."""
        return self.B**2 / (self.c_min**2 - self.B**2)


def calibration_from_data(st: ko.Normalised, B: float, sigma: float, beta_norm: float) -> Calibration:
    """Calibration with every design quantity read from the data (the paper's setting)."""
    return Calibration(
        p=st.p,
        B=B,
        c_min=float(st.col_norms.min()),
        c_max=float(st.col_norms.max()),
        lambda_min=st.lambda_min,
        lambda_min_upper=st.lambda_min,
        lambda_max=st.lambda_max,
        fro=float(np.linalg.norm(st.sigma)),
        sigma=sigma,
        beta_norm=beta_norm,
    )


def check_assumption_3(B: float, c_min: float, *, public: bool = True) -> None:
    """C_min > B, or an :class:`AssumptionError` naming the fix.

    The values are shown only when C_min is ``public`` (declared); a C_min read
    from the rows is not printed.
    """
    if not c_min > B:
        values = f" (declared c_min = {c_min:.4g}, B = {B:.4g})" if public else ""
        raise AssumptionError(
            f"Assumption 3 fails: the smallest column norm C_min must exceed the row bound B{values} "
            "(eta^2 = B^2/(C_min^2 - B^2) would be undefined). Use more rows n (column norms grow like "
            "sqrt(n)), a smaller declared bound B (bounds=), or drop near-empty columns."
        )


def zeta(p: int, sigma: float, delta2: float) -> float:
    """ζ = 2pσ²/(1 − √((2/p) ln(2/δ₂))): bounds ‖Pw‖² except with probability δ₂."""
    t = math.sqrt(2.0 / p * math.log(2.0 / delta2))
    if t >= 1:
        raise AssumptionError(
            f"the noise bound zeta = 2p sigma^2/(1 - sqrt((2/p) ln(2/d))) is undefined for p = {p} "
            f"candidate columns, where d = {delta2:.3g} is the part of delta spent on the chance that "
            f"the bound fails: it needs p > 2 ln(2/d) = {2 * math.log(2 / delta2):.3g}. "
            "Use a larger delta (or give that part more of it with delta_split) or more candidate columns."
        )
    return 2.0 * p * sigma**2 / (1.0 - t)


def ols_sensitivity(
    cal: Calibration, zeta_value: float, ridge: float = 0.0, lambda_g: float | None = None
) -> float:
    """Δ₂ of the OLS (ridge ω²) coefficients on [X′ X̃′] (Theorem 5).

    Raises :class:`AssumptionError` when (1 − η²)λ − η² + ω² <= 0, i.e. the
    condition λ_min(Σ′) > η²/(1 − η²) of Theorem 5 fails.
    """
    eta2 = cal.eta2
    lam = cal.lambda_min if lambda_g is None else lambda_g
    denom = (1.0 - eta2) * lam - eta2 + ridge
    if not denom > 0 or eta2 >= 1:
        need = eta2 / (1.0 - eta2) if eta2 < 1 else math.inf
        values = (  # declared C_min and lambda_min are public; values read from the rows are not shown
            f": here lambda_min = {lam:.4g} but eta^2/(1 - eta^2) = {need:.4g} (eta^2 = B^2/(C_min^2 - B^2) "
            f"= {eta2:.4g}, B = {cal.B:.4g}, declared c_min = {cal.c_min:.4g})"
            if cal.public
            else " (with lambda_min and C_min read from the data)"
        )
        ridge_needed = f" > {max(0.0, -((1.0 - eta2) * lam - eta2)):.3g}" if cal.public else ""
        raise AssumptionError(
            f"Theorem 5 needs lambda_min(Sigma') > eta^2/(1 - eta^2){values}. To fix: use more rows n "
            "(eta^2 falls like 1/n), a smaller row bound B (bounds=), larger declared c_min/lambda_min "
            f"if they hold, or a ridge stabiliser ridge=omega^2{ridge_needed} (Remark 2)."
        )
    shift = cal.c_min - math.sqrt(cal.c_min**2 - cal.B**2)  # C_min − B/η
    return 2.0 * math.sqrt(zeta_value) / math.sqrt(denom) + shift * cal.beta_norm


def lambda_sensitivity(cal: Calibration) -> float:
    """Δ of λ_min(Σ′) (hence of s): η²(1 + λ_min)."""
    return cal.eta2 * (1.0 + cal.lambda_min_upper)


def gram_sensitivity(cal: Calibration) -> float:
    """Frobenius Δ of Σ′ off its diagonal: η²(√2 + ‖Σ′‖_F)."""
    return cal.eta2 * (math.sqrt(2.0) + cal.fro)


def cross_product_sensitivity(cal: Calibration, zeta_value: float) -> float:
    """l2 Δ of [X′ X̃′]ᵀy = G b (module docstring; our restatement of eq. (10))."""
    d2 = ols_sensitivity(cal, zeta_value)
    gamma = 2.0 * cal.lambda_max - cal.lambda_min
    d_gram = 2.0 * (gram_sensitivity(cal) + math.sqrt(cal.p) * lambda_sensitivity(cal))
    b_norm = cal.c_max * cal.beta_norm + math.sqrt(zeta_value / cal.lambda_min)
    return gamma * d2 + d_gram * b_norm


# --------------------------------------------------------------------- noise scales


@dataclass
class Scales:
    """Noise scales of one release, with the sensitivities they came from."""

    method: str
    sensitivities: dict[str, float] = field(default_factory=dict)
    laplace_s: float = 0.0  # Method I: θ₁ scale
    kappa1: float = 0.0  # Method I: θ₂ sd
    kappa2: float = 0.0  # Method I: e sd
    kappa: float = 0.0  # Method II: coefficient noise sd
    calibrations: list[str] = field(default_factory=list)

    def table(self) -> dict[str, float]:
        """The public noise of the release: the sensitivities and the scales drawn with (a result's ``noise``)."""
        out = dict(self.sensitivities)
        if self.method == "II":
            out["kappa (coefficient noise sd)"] = self.kappa
        elif self.method == "I":
            out.update(
                {
                    "theta1 Laplace scale": self.laplace_s,
                    "kappa1 (Gram noise sd)": self.kappa1,
                    "kappa2 (cross-product noise sd)": self.kappa2,
                }
            )
        return out


def scales_method_two(
    cal: Calibration,
    eps: float,
    delta1: float,
    delta2: float,
    ridge: float = 0.0,
    lambda_g: float | None = None,
) -> Scales:
    """κ for Method II (Theorem 5)."""
    z = zeta(cal.p, cal.sigma, delta2)
    d2 = ols_sensitivity(cal, z, ridge, lambda_g)
    kappa, how = calibrate_gaussian(eps, delta1, d2)
    return Scales(
        "II", {"zeta": z, "Delta2 (coefficients, l2)": d2, "eta^2": cal.eta2}, kappa=kappa, calibrations=[how]
    )


def scales_method_one(
    cal: Calibration, eps: float, eps1: float, eps2: float, delta: float, delta1: float, delta2: float
) -> Scales:
    """θ₁ scale, κ₁ and κ₂ for Method I (Theorem 3)."""
    z = zeta(cal.p, cal.sigma, delta2)
    d_lam, d_gram = lambda_sensitivity(cal), gram_sensitivity(cal)
    d_v = cross_product_sensitivity(cal, z)
    kappa1, how1 = calibrate_gaussian(eps2, delta1, d_gram)
    kappa2, how2 = calibrate_gaussian(eps, delta, d_v)
    lap = 0.0 if math.isinf(eps1) else d_lam / eps1
    return Scales(
        "I",
        {
            "zeta": z,
            "eta^2": cal.eta2,
            "Delta lambda_min (Laplace)": d_lam,
            "Delta Sigma' (Frobenius)": d_gram,
            "Delta cross-products (l2)": d_v,
        },
        laplace_s=lap,
        kappa1=kappa1,
        kappa2=kappa2,
        calibrations=[how1, how2],
    )


# --------------------------------------------------------------------- mechanisms


@dataclass
class Release:
    """What one run of the mechanism releases (and the W it implies)."""

    coefficients: np.ndarray  # b, length 2p (normalised scale)
    W: np.ndarray
    gram: np.ndarray | None = None  # Method I: G + E
    cross_products: np.ndarray | None = None  # Method I: [X′ X̃′]ᵀy + e


@one_blas_thread
def run_mechanism(
    st: ko.Normalised,
    s: float,
    scales: Scales,
    noise,
    *,
    statistic: str = "csm",
    ridge: float = 0.0,
    uty: np.ndarray | None = None,
    v: np.ndarray | None = None,
) -> Release:
    """Run Method I or II (or the non-private filter when all scales are 0).

    ``v`` (the cross-products [X′ X̃′]ᵀy) may be given, e.g. from a materialised
    X̃; otherwise it is formed from the sufficient statistics with Ũᵀy sampled
    (or ``uty``).
    """
    if v is None:
        v = ko.knockoff_cross_products(st, s, noise.generator, uty)
    G = ko.augmented_gram(st.sigma, s)
    p2 = 2 * st.p
    if scales.method == "I":
        theta1 = float(noise.laplace(np.zeros(1), scales.laplace_s)[0])
        iu = np.triu_indices(st.p, 1)
        theta2 = np.zeros((st.p, st.p))
        theta2[iu] = noise.gaussian(np.zeros(iu[0].size), scales.kappa1)
        theta2 = theta2 + theta2.T
        swap = np.block([[np.zeros((st.p, st.p)), np.eye(st.p)], [np.eye(st.p), np.zeros((st.p, st.p))]])
        G_rel = G + theta1 * swap + np.kron(np.ones((2, 2)), theta2)
        v_rel = noise.gaussian(v, scales.kappa2)
        b = ko.solve(G_rel + ridge * np.eye(p2), v_rel)
        return Release(b, ko.STATISTICS[statistic](b), gram=G_rel, cross_products=v_rel)
    b = noise.gaussian(ko.solve(G + ridge * np.eye(p2), v), scales.kappa)
    return Release(b, ko.STATISTICS[statistic](b))


# --------------------------------------------------------------------- one release


@dataclass
class Released:
    """One release: the mechanism's output, its threshold and selection, and what was built for it."""

    mechanism: Release
    threshold: float
    chosen: np.ndarray  # indices with W_j >= T
    augmented: ko.Normalised  # the statistics the mechanism ran on (2p rows when n < 2p)
    s_value: float  # the s of S = sI the knockoffs were built with
    knockoffs: np.ndarray | None = None  # X̃′ when materialised (not private)


def release(
    st: ko.Normalised, plan, noise, *, design: tuple[np.ndarray, np.ndarray] | None = None
) -> Released:
    """Run Method I or II as planned (``plan``: a :class:`~dpstats.methods.knockoff.planning.KnockoffPlan`,
    whose options give the statistic, the target FDR, the offset and the ridge).

    The draws, in order: the augmented responses (p < n < 2p), then either X̃′
    by QR (when the raw ``design`` (X, y) is given) or Ũᵀy, then the noise of
    eq. (9) or Theorem 5.  The threshold T and the selection W_j ≥ T are
    post-processing (Theorems 4 and 6).
    """
    o = plan.options
    st_aug, _ = ko.augment_rows(st, noise.generator)
    Xk = v = None
    if design is not None:
        Xk, v = materialise(design[0], design[1], plan.row_bound, st, st_aug, plan.s_value, noise.generator)
    rel = run_mechanism(st_aug, plan.s_value, plan.scales, noise, statistic=o.statistic, ridge=o.ridge, v=v)
    T = ko.knockoff_threshold(rel.W, o.fdr, o.offset)
    return Released(
        mechanism=rel,
        threshold=T,
        chosen=ko.select(rel.W, T),
        augmented=st_aug,
        s_value=plan.s_value,
        knockoffs=Xk,
    )


def materialise(
    X: np.ndarray,
    y: np.ndarray,
    B: float,
    st: ko.Normalised,
    st_aug: ko.Normalised,
    s_value: float,
    gen: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """X̃′ by QR on the clipped, normalised design (augmented by zero rows when n < 2p), and [X′ X̃′]ᵀy."""
    Xn = clip_rows_l2(X, B)[0] / np.where(st.col_norms > 0, st.col_norms, 1.0)  # a zero column stays zero
    yy = y
    if st_aug.n > st.n:
        extra = st_aug.n - st.n
        Xn = np.vstack([Xn, np.zeros((extra, st.p))])
        yy = np.concatenate([y, gen.normal(0.0, math.sqrt(st.rss / (st.n - st.p)), extra)])
    Xk, _ = ko.materialise_knockoffs(Xn, s_value, gen)
    return Xk, np.concatenate([st.xty, Xk.T @ yy])
