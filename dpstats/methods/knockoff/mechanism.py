"""Methods I and II of Pournaderi & Xiang: DP fixed-X knockoffs (sensitivities and mechanisms).

Assumption 3: rows of X have l2 norm ≤ B (a public bound; rows are clipped to it)
and the smallest column norm C_min exceeds B.  Then η² = B²/(C_min² − B²) bounds
how much one replaced row can move the normalised design.

**What the guarantee is.**  The paper's sensitivities bound the change of the
release between two data sets that *both* follow the linear model y = Xβ + w,
w ~ N(0, σ²I) (the proof of Theorem 5, eq. (30), bounds ‖β̂ − β̄‖ of each by the
model's Gaussian noise).  That is a guarantee conditional on the model, not
differential privacy: a data set the model does not describe (one response of 10⁶)
is outside it, and no public bound on y makes it worst-case at a usable noise (for
data sets not following the model, ‖β̂‖ and the replaced row's residual grow like
√n·Y/C_min; by our estimate a worst-case Δ₂ is about ten times this one at n = 10⁴).  What is proved
here, and stated by the front door, is the conditional guarantee with the
replaced row arbitrary: if the data set D follows the model (with ‖β‖ ≤
beta_norm, noise sd ≤ σ and the declared design bounds), then except with
probability δ₂ every data set D′ that replaces any one row of D by any row
(x′, y′) — x′ clipped to ‖x′‖ ≤ B, y′ clipped to |y′| ≤ Y — gives a release
within (ε, δ₁) of D's, in both directions.  The model is not needed for the
replaced row.

Method II (Theorem 5) adds N(0, κ²I) to the released coefficients, κ the (ε, δ₁)
Gaussian calibration at l2 sensitivity Δ₂ (the paper states the classic
Δ₂·√(2 ln(1.25/δ₁))/ε; the theorem needs only an (ε, δ₁)-DP Gaussian step, and we use
the analytic one of Balle & Wang 2018, the least noise that is:
:func:`~dpstats.privacy.calibration.calibrate_gaussian`).

**Response bound** (:func:`response_bound`): every response is clipped to
[−Y, Y], Y = B·‖β‖ + σt with t = Φ̄⁻¹(δ₂/(8n)): then |x_iᵀβ| ≤ B‖β‖ and
max_i |w_i| ≤ σt (except with probability δ₂/4) leave every row of D unclipped,
and a replaced response moves by at most 2Y.

**Method II** (Theorem 5, re-derived for an arbitrary replaced row) releases
b + N(0, κ²I), b the OLS coefficients of y on Z = [X′ X̃′] (with Ũᵀy = ρg, ρ² the
residual sum of squares and g = z/√(‖z‖² + χ²_{n−2p}) the Haar draw,
:func:`~dpstats.methods.knockoff.filter.haar_uty`; the coupling below uses the same
g for both data sets).  With S = Σ′ (no floor: see the declared λ below),
A = I − sS⁻¹, CᵀC = 2sI − s²S⁻¹ and L = [[I, 0], [A, Cᵀ]], G = L·diag(S, I)·Lᵀ
(Lemma 1's G) and b = L⁻ᵀ[S⁻¹X′ᵀy; ρg], so with β̄ = (D⁻¹β, 0)

    ‖b − β̄‖ = ‖L⁻ᵀ diag(S^{-1/2}, I)[S^{-1/2}X′ᵀw; ρg]‖ ≤ √(‖P_X w‖² + ρ²‖g‖²)/√λ_min(G).

Let D″ be D with row i replaced by (x′, x′ᵀβ + w_i) (the model's response at x′,
same w).  Then

    ‖b(D) − b(D′)‖ ≤ ‖b(D) − β̄_D‖ + ‖β̄_D − β̄_D″‖ + ‖b(D″) − β̄_D″‖ + ‖b(D″) − b(D′)‖.

(a), (c): span(X″) ⊂ span(X̂₋ᵢ) ⊕ e_i (X̂₋ᵢ: X with row i zeroed, orthogonal to
e_i), so ‖P_X″ w‖² ≤ ‖P_X̂₋ᵢ w‖² + w_i², and the same holds for X; ρ² ≤ ‖w‖².
X̂₋ᵢ is fixed, so ‖P_X̂₋ᵢ w‖² ~ σ²χ²_{≤p}: by union bounds over the n rows,
except with probability 3δ₂/4 over w and δ₂/4 over g,

    ζ* = σ²(q_p + t² + q_n·β_g),   q_p ≥ the χ²_p quantile at δ₂/(4n),
    q_n ≥ the χ²_n quantile at δ₂/4,   β_g ≥ the Beta(p/2, (n − 2p)/2) quantile at δ₂/4

(Laurent–Massart bounds), bounds both squared norms (:func:`noise_bounds`; it replaces the paper's
ζ = 2pσ²/(1 − √((2/p) ln(2/δ₂))), which assumed both data sets follow the model,
and needs no condition on p).  (b): eq. (31), (C_min − √(C_min² − B²))‖β‖.
(d): D″ and D′ share the design and differ in y_i by |Δ| ≤ 2Y; S⁻¹X′ᵀy moves by
S⁻¹x̃Δ (x̃ the normalised row, ‖S^{-1/2}x̃‖² = h, its leverage, h ≤ min(1, η²/λ))
and ρ by at most √(1 − h)|Δ|, so (d) ≤ 2Y·√(h + (1 − h)β_g)/√λ_min(G).  Hence

    Δ₂ = 2√ζ*/√λ_G + (C_min − √(C_min² − B²))·‖β‖ + 2Y·√(h + (1 − h)β_g)/√λ_G,

λ_Σ a lower bound on λ_min(Σ′) for D and every neighbour: the declared
``lambda_min`` when λ_min(Σ′) ≥ (lambda_min + η²)/(1 − η²) on D (then, by eq.
(25), every neighbour keeps λ_min(Σ′) ≥ lambda_min and the floor of
:func:`~dpstats.methods.knockoff.filter.floor_lambda_min` never acts); (1 − η²)λ_min − η²
when λ_min is read from the data (Theorem 5's condition: it must be > 0 unless a ridge
is used).  λ_G is the matching lower bound on λ_min(G) (:func:`gram_lambda_bound`):
with s = 'lambda_min' (the declared lambda_min, or each data set's own λ_min(Σ′)) Lemma 1
gives λ_min(G) = min(s, 2μ_min − s) ≥ λ_Σ, so λ_G = λ_Σ; with s = 'equi' (s =
min(2λ, 1), Remark 1) the eigenvalues of G are s and 2μ − s over eigenvalues μ of Σ′,
so λ_min(G) = max(0, 2λ_min(Σ′) − 1) for each data set (s read from its own λ_min, or
from the declared lambda_min ≤ λ_min(Σ′)), and λ_G = max(0, 2λ_Σ − 1).  (Before this
was written down, the equi bound was taken at D's own λ_min(Σ′): when 2λ_min(Σ′) − 1 is
small and positive a neighbour's λ_min(G) can be far smaller, and
tests/test_knockoff_shrinkage_sensitivity.py exhibits a neighbour that moved b by
about 38 times that Δ₂.)  h ≤ min(1, η²/λ_Σ) is the leverage in Σ′, whatever s and ω².  The
release is (ε, δ₁ + δ₂) under the model: κ = Δ₂·√(2 ln(1.25/δ₁))/ε (or the analytic
calibration).

**Ridge** (Remark 2: b = M⁻¹v, M = G + ω²I, ω² = ``ridge``).  The release is
post-processing of v for Method I; for Method II every step above is redone with M.  v =
Gβ̄ + L[X′ᵀw; ρg] under the model (Aᵀ Σ′ = Σ′ − S), so b − M⁻¹Gβ̄ = M⁻¹L[X′ᵀw; ρg]
and L·diag(S^{1/2}, I) = G^{1/2}U (U orthogonal), whence for (a), (c) and (d)

    ‖M⁻¹G^{1/2}‖ = max_μ √μ/(μ + ω²) ≤ 1/√(λ_G + ω²)        (μ ≥ λ_G the eigenvalues of G),

the old terms with λ_G + ω² for λ_G (h keeps λ_Σ).  The signal of b is no longer β̄ but
the shrunk M⁻¹Gβ̄ = β̄ − ω²M⁻¹β̄, and (b) becomes

    ‖M_D⁻¹G_Dβ̄_D − M_D″⁻¹G_D″β̄_D″‖
        ≤ ‖M_D⁻¹G_D‖·‖β̄_D − β̄_D″‖ + ω²‖M_D⁻¹(G_D − G_D″)M_D″⁻¹β̄_D″‖
        ≤ (C_min − √(C_min² − B²))·‖β‖ + ω²·Γ·C″·‖β‖/(λ_G + ω²)²,

using M⁻¹G = I − ω²M⁻¹ and M_D″⁻¹ − M_D⁻¹ = M_D⁻¹(G_D − G_D″)M_D″⁻¹.  Γ bounds the
spectral norm of G_D − G_D″ = [[1, 1], [1, 1]] ⊗ (Σ′_D − Σ′_D″) − (s_D − s_D″)[[0, I],
[I, 0]] (eq. (18)): Γ = 2η²(1 + λ_max(Σ′)) + |Δs|.  The spectral form of eqs. (19)–(21):
D_D″(x′x′ᵀ − x xᵀ)D_D″ has norm ≤ max(‖D_D″x′‖², ‖D_D″x‖²) ≤ η², and D* = D_D″D_D⁻¹ = I + E
with ‖E‖ ≤ √(1 + η²) − 1 gives ‖D*Σ′D* − Σ′‖ ≤ ((1 + ‖E‖)² − 1)λ_max = η²λ_max (λ_max ≤
‖Σ′‖_F, so this is below eq. (21)'s Frobenius bound); |Δs| = 0 when s comes
from the declared lambda_min (public), η²(1 + λ_min) (eq. (25)) for s = λ_min(Σ′) read
from the rows and twice that for s = min(2λ_min, 1).  C″ bounds D″'s column norms:
√(C_max² + B²), and √n·B (every column of rows of norm ≤ B).  This last term
(:func:`ridge_shrinkage_shift`) is of the order of (b) and (d) when ω² is comparable to
λ_G; with ω² = 0 it vanishes and Δ₂ is the formula above.  Hence, in general,

    Δ₂ = 2√ζ*/√(λ_G + ω²) + (C_min − √(C_min² − B²))·‖β‖ + ω²Γ C″‖β‖/(λ_G + ω²)²
         + 2Y·√(h + (1 − h)β_g)/√(λ_G + ω²),      h = min(1, η²/λ_Σ).

Method I (Theorem 3) releases f(G + E, [X′ X̃′]ᵀy + e): E = θ₁[[0, I], [I, 0]] +
[[1, 1], [1, 1]] ⊗ θ₂ with θ₁ ~ Lap(η²(1 + λ_min)/ε₁) (the noisy λ_min = s in the
off-diagonal blocks) and θ₂ symmetric, zero diagonal, upper entries N(0, κ₁²),
κ₁ the (ε₂, δ₁) Gaussian calibration (analytic, as above; the paper's classic form is
√(2 ln(1.25/δ₁))/ε₂ times) at sensitivity η²(√2 + ‖Σ′‖_F); e ~ N(0, κ₂²I) with κ₂ from the l2
sensitivity of [X′ X̃′]ᵀy = G b (b the OLS coefficients).  Writing
Δ(Gb) = G′Δb + (ΔG)b gives the bound used here (our restatement of the paper's
eq. (10), built from the same ingredients, with Method II's Δ₂ and ζ* above):

    Δ_v = γ·Δ₂ + ‖ΔG‖_F·(C_max‖β‖ + √(ζ*/λ_min)),   γ = λ_max(G) = 2λ_max − λ_min,
    ‖ΔG‖_F ≤ 2(η²(√2 + ‖Σ′‖_F) + √p·η²(1 + λ_min)),

where C_max‖β‖ + √(ζ*/λ_min) bounds ‖b‖ of D (signal plus the projected noise).  The
total is (ε + ε₁ + ε₂, δ + δ₁ + δ₂) under the model.  Both noises are invariant under
swapping a column with its knockoff, so W stays antisymmetric and FDR control holds
(Theorems 4 and 6).

Remark 2: the sensitivities involve λ_min, ‖Σ′‖_F, λ_max, C_min, C_max of the data
and σ, ‖β‖ of the model.  :class:`Calibration` holds them; the front door says
which came from the data (a guarantee local to the observed data) and which were
declared (:mod:`dpstats.methods.knockoff.planning`).

**Declared c_min and lambda_min** are assumptions on D, like σ and ‖β‖: the
sensitivities above hold when D keeps them (C_min(D) ≥ c_min, λ_min(Σ′_D) ≥ the margin
(lambda_min + η²)/(1 − η²)), and the neighbour may be any row.  Nothing checks them on
the rows: with B, c_min and lambda_min declared, :func:`check_calibration` reads only
declared values, so whether the call refuses, what it says, the plan, the noise scales
and the charge are the same for every data set (a refusal read off the rows would be a
free, data-dependent bit).  lambda_min is enforced by construction
(:func:`~dpstats.methods.knockoff.filter.floor_lambda_min`: the release is defined
whatever the rows, and identical to the unfloored one when the margin holds); c_min
is not: enforcing it would change the construction (normalising by max(C_j, c_min)
leaves columns of norm below 1, a design whose sensitivities are not derived here): the
privacy statement names it (planning's assumptions: "not checked on the rows ... if it
fails, the guarantee does not hold"), and whether it held is a requested, non-private
diagnostic.  Where C_min or λ_min(Σ′) is read from the rows instead, that reading is a
named data-dependent step (refused under ``strict``), and its one refusal text shows no
value nor which condition failed; every refusal comes from the plan, before the charge.
tests/test_knockoff_shrinkage_sensitivity.py checks a neighbour that breaks each
declared assumption against one that keeps it.

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
    """The quantities every sensitivity uses (Assumption 3, Remark 2 and the response bound).

    ``lambda_min`` is a lower bound on λ_min(Σ′) (used in denominators),
    ``lambda_min_upper`` an upper bound (used in the sensitivity of λ_min itself);
    both equal the data's λ_min when it is used directly.  ``c_min_declared``,
    ``lambda_declared`` and ``b_declared`` (B declared, or drawn privately and
    charged) say which are public: only public values, and values derived from them
    alone, are shown in messages (``public`` when all three are).  ``n`` is the number of rows (public);
    ``response_bound`` the Y responses were clipped to (None: Y = B·‖β‖ + σt, as the
    front door computes it, :func:`response_bound`).
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
    n: int = 0
    response_bound: float | None = None
    c_min_declared: bool = False
    lambda_declared: bool = False
    b_declared: bool = False

    @property
    def public(self) -> bool:
        """B, C_min and λ_min all public: messages may show every value they use."""
        return self.b_declared and self.c_min_declared and self.lambda_declared

    @property
    def eta2(self) -> float:
        """η² = B²/(C_min² − B²) (Assumption 3); inf when C_min <= B, which the calibration check refuses."""
        gap = self.c_min**2 - self.B**2
        return self.B**2 / gap if gap > 0 else math.inf

    @property
    def lambda_neighbours(self) -> float:
        """λ_G, a lower bound on λ_min(G) for the data set and every neighbour (module docstring):
        the declared lambda_min (assumed with its margin), or (1 − η²)λ_min − η² (Theorem 5)."""
        if self.lambda_declared:
            return self.lambda_min
        return (1.0 - self.eta2) * self.lambda_min - self.eta2

    @property
    def lambda_margin(self) -> float:
        """(lambda_min + η²)/(1 − η²): the λ_min(Σ′) the data set needs so that every neighbour keeps
        the declared lambda_min (eq. (25))."""
        return (self.lambda_min + self.eta2) / (1.0 - self.eta2)


def calibration_from_data(
    st: ko.Normalised, B: float, sigma: float, beta_norm: float, response: float | None = None
) -> Calibration:
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
        n=st.n,
        response_bound=response,
    )


def check_assumption_3(B: float, c_min: float, *, public: bool = False) -> None:
    """C_min > B, or an :class:`AssumptionError` naming the fix.

    The values are shown only when both are ``public`` (declared, or B drawn
    privately and charged); a value read from the rows is never printed.
    """
    if not c_min > B:
        values = f" (declared c_min = {c_min:.4g}, B = {B:.4g})" if public else ""
        raise AssumptionError(
            f"Assumption 3 fails: the smallest column norm C_min must exceed the row bound B{values} "
            "(eta^2 = B^2/(C_min^2 - B^2) would be undefined). Use more rows n (column norms grow like "
            "sqrt(n)), a smaller declared bound B (bounds=), or drop near-empty columns."
        )


def check_calibration(cal: Calibration, ridge: float = 0.0, lambda_g: float | None = None) -> None:
    """Assumption 3 (C_min > B), and λ_G > 0: Theorem 5's condition (1 − η²)λ_min − η² > 0 where
    λ_min(Σ′) is read from the data, the declared lambda_min's margin (lambda_min + η²)/(1 − η²) <= 1
    (λ_min(Σ′) <= 1 always) where it is declared.

    Where B, C_min or λ_min(Σ′) is read from the rows, every failure that depends on it (a rank-deficient
    design too) raises one text, which shows no value: which condition failed depends on the rows.  A
    declared lambda_min's λ_G + ridge reads no row and is checked first, with its value.

    Examples
    --------
    >>> cal = Calibration(p=4, B=3.0, c_min=4.0, c_max=9.0, lambda_min=0.6, lambda_min_upper=1.0,
    ...                   lambda_max=4.0, fro=4.0, sigma=1.0, beta_norm=1.0, n=100,
    ...                   c_min_declared=True, lambda_declared=True, b_declared=True)
    >>> check_calibration(cal)
    Traceback (most recent call last):
    ...
    dpstats.errors.AssumptionError: the declared lambda_min = 0.6 cannot hold after one row is replaced: ...
    """
    lam = cal.lambda_min if lambda_g is None else lambda_g  # used where lambda_min is declared
    if cal.lambda_declared and not lam + ridge > 0:  # declared values only: no row is read
        raise AssumptionError(
            f"lambda_min(G) + ridge = {lam + ridge:.4g} must be positive (s = 'equi' makes G singular); "
            "use s='lambda_min' or a ridge stabiliser ridge=omega^2 > 0 (Remark 2)."
        )
    if not cal.public:
        if _calibration_fails(cal, ridge, lambda_g):
            raise AssumptionError(_not_calibrated(cal))
        return
    check_assumption_3(cal.B, cal.c_min, public=True)
    if cal.eta2 >= 1 or cal.lambda_margin > 1:
        need = f"{cal.lambda_margin:.4g}" if cal.eta2 < 1 else "more than 1"
        raise AssumptionError(
            f"the declared lambda_min = {cal.lambda_min:g} cannot hold after one row is replaced: that "
            f"needs lambda_min(Sigma') >= (lambda_min + eta^2)/(1 - eta^2) = {need} on the data (eq. (25); "
            f"eta^2 = B^2/(c_min^2 - B^2) = {cal.eta2:.4g}, B = {cal.B:.4g}, declared c_min = {cal.c_min:g}), "
            "and lambda_min(Sigma') <= 1. To fix: use more rows n (eta^2 falls like 1/n), a smaller row "
            "bound B (bounds=), a larger declared c_min if it holds, or a smaller declared lambda_min."
        )


def _not_calibrated(cal: Calibration) -> str:
    """The one refusal where B, C_min or λ_min(Σ′) is read from the rows: it names the values read (public
    flags) and the conditions, never which failed nor any value."""
    read = " and ".join(
        name
        for name, public in (
            ("the row bound B", cal.b_declared),
            ("C_min", cal.c_min_declared),
            ("lambda_min(Sigma')", cal.lambda_declared),
        )
        if not public
    )
    theorem_5 = (
        "the declared lambda_min's margin ((lambda_min + eta^2)/(1 - eta^2) <= 1, eq. (25))"
        if cal.lambda_declared
        else "Theorem 5's condition (lambda_min(Sigma') > eta^2/(1 - eta^2))"
    )
    rank = "" if cal.lambda_declared else ", or the design is rank deficient"
    declare = " and ".join(
        text
        for text, public in (
            ("a public row bound bounds=", cal.b_declared),
            ("public lower bounds c_min= and lambda_min=", cal.c_min_declared and cal.lambda_declared),
        )
        if not public
    )
    return (
        f"the sensitivity cannot be calibrated on these data: with {read} read from the rows, Assumption 3 "
        f"(C_min > B) or {theorem_5}, eta^2 = B^2/(C_min^2 - B^2), does not hold{rank} (which one is not "
        f"shown: it depends on the rows). To fix: declare {declare}, use more "
        "rows n (column norms grow like sqrt(n)), a smaller row bound B (bounds=), drop near-empty or "
        "redundant columns, or a ridge stabiliser ridge=omega^2 (Remark 2)."
    )


def _calibration_fails(cal: Calibration, ridge: float, lambda_g: float | None) -> bool:
    """Whether Assumption 3, Theorem 5's condition or full rank fails (values read from the rows)."""
    if not cal.c_min > cal.B or cal.eta2 >= 1:
        return True
    if not cal.lambda_declared and not cal.lambda_min > 1e-10 * max(1.0, cal.lambda_max):
        return True
    if cal.lambda_declared and cal.lambda_margin > 1:
        return True
    lam = cal.lambda_neighbours if lambda_g is None else lambda_g
    return not lam + ridge > 0


def zeta(p: int, sigma: float, delta2: float) -> float:
    """The paper's ζ = 2pσ²/(1 − √((2/p) ln(2/δ₂))): bounds ‖Pw‖² except with probability δ₂ for a data
    set that follows the model (Theorem 5).  The release uses :func:`noise_bounds`' ζ*, which also holds
    when the replaced row does not follow the model (module docstring); this one is kept for the audits."""
    t = math.sqrt(2.0 / p * math.log(2.0 / delta2))
    if t >= 1:
        raise AssumptionError(
            f"the noise bound zeta = 2p sigma^2/(1 - sqrt((2/p) ln(2/d))) is undefined for p = {p} "
            f"candidate columns, where d = {delta2:.3g} is the part of delta spent on the chance that "
            f"the bound fails: it needs p > 2 ln(2/d) = {2 * math.log(2 / delta2):.3g}. "
            "Use a larger delta (or give that part more of it with delta_split) or more candidate columns."
        )
    return 2.0 * p * sigma**2 / (1.0 - t)


@dataclass(frozen=True)
class NoiseBounds:
    """The bounds the sensitivity rests on, each failing with probability δ₂/4 (module docstring).

    ``zeta`` is ζ* = σ²(q_p + t² + q_n·β_g), bounding ‖P_X w‖² + ρ²‖g‖² for the data set and for any
    neighbour's design; ``t`` bounds max_i |w_i|/σ; ``beta_g`` bounds ‖g‖², the Haar draw's squared norm.
    """

    zeta: float
    t: float
    beta_g: float


def noise_bounds(p: int, n: int, sigma: float, delta2: float) -> NoiseBounds:
    """ζ*, t and β_g for p candidates, n rows (augmented to 2p when fewer) and failure probability δ₂.

    Each of the four bounds fails with probability at most δ₂/4.  t is the exact normal quantile; the
    chi-square quantiles are Laurent & Massart's (2000, Lemma 1) closed-form bounds, P(χ²_k ≥ k +
    2√(kx) + 2x) ≤ e^{−x} and P(χ²_k ≤ k − 2√(kx)) ≤ e^{−x}, a few percent above the exact ones and
    computed without scipy (a first call loads none); β_g bounds ‖g‖² = χ²_p/(χ²_p + χ²_{n−2p}) by
    their upper and lower bounds, each at δ₂/8.

    Examples
    --------
    >>> b = noise_bounds(30, 2000, 1.0, 5e-4)
    >>> round(b.t, 2), round(b.beta_g, 4), round(b.zeta, 1)
    (5.41, 0.0477, 246.1)
    """
    quarter = delta2 / 4.0
    rows = max(int(n), 2 * p)
    t = normal_quantile(quarter / (2.0 * rows))  # P(max_i |w_i| > σt) <= 2n Φ̄(t)
    q_p = chi2_above(p, math.log(rows / quarter))  # P(some ‖P_X̂₋ᵢ w‖² > σ² q_p) <= n e^{−x}
    q_n = chi2_above(rows, math.log(1.0 / quarter))
    rest = rows - 2 * p
    low = chi2_below(rest, math.log(2.0 / quarter)) if rest > 0 else 0.0
    high = chi2_above(p, math.log(2.0 / quarter))
    beta_g = 1.0 if low <= 0 else high / (high + low)
    return NoiseBounds(zeta=sigma**2 * (q_p + t * t + q_n * beta_g), t=t, beta_g=beta_g)


def chi2_above(k: float, x: float) -> float:
    """k + 2√(kx) + 2x: χ²_k exceeds it with probability at most e^{−x} (Laurent & Massart 2000)."""
    return k + 2.0 * math.sqrt(k * x) + 2.0 * x


def chi2_below(k: float, x: float) -> float:
    """k − 2√(kx) (0 at least): χ²_k falls below it with probability at most e^{−x} (Laurent & Massart)."""
    return max(0.0, k - 2.0 * math.sqrt(k * x))


def normal_quantile(upper: float) -> float:
    """t with P(N(0, 1) > t) = ``upper`` (0 < upper <= 1/2), by bisection on math.erfc (no scipy).

    Examples
    --------
    >>> round(normal_quantile(0.025), 6)
    1.959964
    """
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > upper:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return hi


def response_bound(B: float, beta_norm: float, sigma: float, n: int, p: int, delta2: float) -> float:
    """Y = B·‖β‖ + σt: responses are clipped to [−Y, Y] (module docstring, "Response bound").

    Under the model, |x_iᵀβ| <= B‖β‖ and max_i |w_i| <= σt except with probability δ₂/4, so no row
    of the data set is clipped; a replaced row's response moves by at most 2Y.

    Examples
    --------
    >>> round(response_bound(6.0, 1.0, 1.0, 2000, 30, 5e-4), 3)
    11.411
    """
    return float(B * beta_norm + sigma * noise_bounds(p, n, 1.0, delta2).t)


def gram_lambda_bound(cal: Calibration, s_kind: str = "lambda_min") -> float:
    """λ_G, a lower bound on λ_min(G) for the data set and every neighbour (module docstring).

    ``s_kind`` "lambda_min": λ_Σ = :attr:`Calibration.lambda_neighbours` (Lemma 1); "equi":
    max(0, 2λ_Σ − 1), since λ_min(G) = max(0, 2λ_min(Σ′) − 1) for s = min(2λ, 1).

    Examples
    --------
    >>> cal = Calibration(p=4, B=1.0, c_min=10.0, c_max=20.0, lambda_min=0.6, lambda_min_upper=0.6,
    ...                   lambda_max=2.0, fro=2.5, sigma=1.0, beta_norm=1.0, n=400)
    >>> round(cal.lambda_neighbours, 4), round(gram_lambda_bound(cal, "equi"), 4)
    (0.5838, 0.1677)
    """
    lam = cal.lambda_neighbours
    return lam if s_kind == "lambda_min" else max(0.0, 2.0 * lam - 1.0)


def ridge_shrinkage_shift(
    cal: Calibration, ridge: float, lam_ridged: float, s_kind: str = "lambda_min"
) -> float:
    """ω²·Γ·C″·‖β‖/(λ_G + ω²)²: how far one replaced row moves the ridge's shrunk signal M⁻¹Gβ̄ beyond eq.
    (31)'s shift of β̄ (module docstring, "Ridge"); 0 without a ridge.  ``lam_ridged`` is λ_G + ω²."""
    if ridge <= 0:
        return 0.0
    s_moves = 0.0 if cal.lambda_declared else lambda_sensitivity(cal) * (2.0 if s_kind == "equi" else 1.0)
    sigma_change = cal.eta2 * (1.0 + cal.lambda_max)  # spectral norm of Σ′_D − Σ′_D″ (eqs. (19)–(21))
    gram_change = 2.0 * sigma_change + s_moves  # Γ, spectral norm of G_D − G_D″ (eq. (18))
    column = math.sqrt(cal.c_max**2 + cal.B**2)  # C″, the neighbour's largest column norm
    if cal.n > 0:
        column = min(column, math.sqrt(cal.n) * cal.B)
    return ridge * gram_change * column * cal.beta_norm / lam_ridged**2


def ols_sensitivity(
    cal: Calibration, bounds: NoiseBounds, ridge: float = 0.0, s_kind: str = "lambda_min"
) -> float:
    """Δ₂ of the OLS (ridge ω²) coefficients on [X′ X̃′], knockoffs with S = sI of ``s_kind``, for any
    replaced row (module docstring).

    Raises :class:`AssumptionError` when the calibration fails (:func:`check_calibration`).
    """
    lam_g = gram_lambda_bound(cal, s_kind)
    check_calibration(cal, ridge, lam_g)
    lam = lam_g + ridge  # λ_G + ω²
    lam_sigma = cal.lambda_neighbours  # λ_Σ
    Y = cal.B * cal.beta_norm + cal.sigma * bounds.t if cal.response_bound is None else cal.response_bound
    h = min(1.0, cal.eta2 / lam_sigma) if lam_sigma > 0 else 1.0  # the replaced row's leverage in Σ′
    model = 2.0 * math.sqrt(bounds.zeta) / math.sqrt(lam)  # (a) + (c)
    shift = (cal.c_min - math.sqrt(cal.c_min**2 - cal.B**2)) * cal.beta_norm  # (b), eq. (31)
    shrunk = ridge_shrinkage_shift(cal, ridge, lam, s_kind)  # (b) with a ridge: the shrunk signal moves
    replaced = 2.0 * Y * math.sqrt(h + (1.0 - h) * bounds.beta_g) / math.sqrt(lam)  # (d)
    return model + shift + shrunk + replaced


def lambda_sensitivity(cal: Calibration) -> float:
    """Δ of λ_min(Σ′) (hence of s): η²(1 + λ_min)."""
    return cal.eta2 * (1.0 + cal.lambda_min_upper)


def gram_sensitivity(cal: Calibration) -> float:
    """Frobenius Δ of Σ′ off its diagonal: η²(√2 + ‖Σ′‖_F)."""
    return cal.eta2 * (math.sqrt(2.0) + cal.fro)


def cross_product_sensitivity(cal: Calibration, bounds: NoiseBounds) -> float:
    """l2 Δ of [X′ X̃′]ᵀy = G b (module docstring; our restatement of eq. (10))."""
    d2 = ols_sensitivity(cal, bounds)
    gamma = 2.0 * cal.lambda_max - cal.lambda_min
    d_gram = 2.0 * (gram_sensitivity(cal) + math.sqrt(cal.p) * lambda_sensitivity(cal))
    b_norm = cal.c_max * cal.beta_norm + math.sqrt(bounds.zeta / cal.lambda_min)
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
    s_kind: str = "lambda_min",
) -> Scales:
    """κ for Method II (Theorem 5, for any replaced row; ridge ω² and knockoffs ``s_kind``)."""
    bounds = noise_bounds(cal.p, cal.n, cal.sigma, delta2)
    d2 = ols_sensitivity(cal, bounds, ridge, s_kind)
    kappa, how = calibrate_gaussian(eps, delta1, d2)
    return Scales(
        "II",
        {**_bound_values(cal, bounds), "Delta2 (coefficients, l2)": d2, "eta^2": cal.eta2},
        kappa=kappa,
        calibrations=[how],
    )


def scales_method_one(
    cal: Calibration, eps: float, eps1: float, eps2: float, delta: float, delta1: float, delta2: float
) -> Scales:
    """θ₁ scale, κ₁ and κ₂ for Method I (Theorem 3, for any replaced row)."""
    check_calibration(cal)  # before η² is used: C_min <= B would divide by zero
    bounds = noise_bounds(cal.p, cal.n, cal.sigma, delta2)
    d_lam, d_gram = lambda_sensitivity(cal), gram_sensitivity(cal)
    d_v = cross_product_sensitivity(cal, bounds)
    kappa1, how1 = calibrate_gaussian(eps2, delta1, d_gram)
    kappa2, how2 = calibrate_gaussian(eps, delta, d_v)
    lap = 0.0 if math.isinf(eps1) else d_lam / eps1
    return Scales(
        "I",
        {
            **_bound_values(cal, bounds),
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


RESPONSE_KEY = "response bound Y"


def _bound_values(cal: Calibration, bounds: NoiseBounds) -> dict[str, float]:
    """ζ* and the response bound Y, as the noise table shows them."""
    Y = cal.B * cal.beta_norm + cal.sigma * bounds.t if cal.response_bound is None else cal.response_bound
    return {"zeta": bounds.zeta, RESPONSE_KEY: Y}


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
