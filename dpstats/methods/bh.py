"""Private FDR control: Benjamini-Hochberg on p-values, privately (Dwork, Su & Zhang 2021).

Three routes, one plan each:

* **raw p-values** (computed from the private data): the private BH of
  :mod:`dpstats.privacy.fdr` — p-values truncated below at a public ν, log
  p-values of declared ℓ∞ sensitivity η, Report Noisy Min peeling of the k
  smallest with Laplace noise, and a BH step-up on the fresh noisy values with
  the threshold lowered by t = λ log(5k/q).  Privacy: (eps, delta)-DP for the
  neighbouring relation under which η holds (derivation in
  :mod:`dpstats.privacy.fdr`); the guarantee rests on the declared η.  FDR:
  at most (m0/m)·q·H_k + q/10 under any dependence between valid p-values.
* **a private fit's p-values** (already released by a DP mechanism): plain BH
  on them is post-processing (Dwork & Roth 2014, Prop. 2.1) and costs nothing.
  Its FDR is that of BH on those p-values: at most (m0/m)·q when they are valid
  and independent or PRDS, at most q·H_m under arbitrary dependence (Benjamini
  & Yekutieli 2001) — and only approximately so, since a private fit's p-values
  are valid only as far as its inference accounts for the privacy noise.
* **a formula on bounded data** (``dp_bh("y ~ .", data=..., bounds=..., sigma=...)``):
  two-sided z-tests of the marginal slope of y on each design column,
  computed from the raw rows under declared bounds and a declared σ; their
  η is *derived* (equations (5)-(7) below), not declared, and they are
  released only through the private BH of the first route.

Sensitivity η for p-values of z-tests on bounded data (:func:`eta_two_sided_z`)
-------------------------------------------------------------------------------
A two-sided z-test has p(z) = 2Φ̄(|z|).  If one neighbouring change moves z by
at most Δz (a public bound, e.g. :func:`z_mean_delta` for a mean of data in
[lo, hi] with a public σ and public n: Δz = (hi − lo)/(σ√n) under replace-one),
then u = |z| moves by at most Δz too.  The truncated log p-value is
g(u) = max(log 2Φ̄(u), log ν), non-increasing in u and constant beyond
u_ν = Φ̄⁻¹(ν/2).  Its slope is −h(u), h(u) = φ(u)/Φ̄(u) the hazard of the normal,
which increases in u.  Hence for |u − u'| <= Δz

    |g(u) − g(u')| <= log Φ̄(max(u_ν − Δz, 0)) − log Φ̄(u_ν) <= Δz · h(u_ν),   (4)

the left bound being attained at u = max(u_ν − Δz, 0), u' = u_ν: that is η.
The right side is the cruder "Δz times the largest hazard over the truncated
range".  tests/test_bh.py checks (4) by brute force on all neighbouring data
sets of a small grid.

Marginal slope z-tests on bounded data (:func:`marginal_slope_z`, :func:`z_slope_delta`)
-----------------------------------------------------------------------------------------
Rows (x_i, y_i), i = 1..n, with each design column clipped to its declared
[a_j, b_j] and the response to [a_y, b_y]; W_j = b_j − a_j, W_y = b_y − a_y;
n is public (replace one row).  Hypothesis j says the marginal slope of y on
x_j is zero; precisely, H0j: given the column x_j, the y_i are independent
with a common mean and variance at most σ² (σ declared, public).  The statistic

    S_j = Σ_i (x_ij − x̄_j)(y_i − ȳ),   z_j = S_j / (σ τ_j √n),   τ_j = W_j / 2   (5)

is the OLS slope of y on x_j alone times a public constant.  Under H0j,
E[S_j | x_j] = 0 and Var(S_j | x_j) <= σ² Σ_i (x_ij − x̄_j)² = σ² n v_j <= σ² n τ_j²,
since the variance v_j (divisor n) of values in an interval of width W_j is at
most (W_j/2)² (Popoviciu).  So z_j is centred with variance at most 1 and, y
being bounded, asymptotically normal (Lindeberg): p_j = 2Φ̄(|z_j|) is an
asymptotically valid, conservative p-value.  The public τ_j stands where the
usual test has the data's √v_j (a data-dependent denominator); the price is
power when v_j < τ_j².

Sensitivity.  Replace the last row (x, y) by (x', y') (any row, by symmetry).
With ā and b̄ the means of the other n − 1 rows' x_j and y (inside the bounds),

    S' − S = (1 − 1/n) [(x' − ā)(y' − b̄) − (x − ā)(y − b̄)].                      (6)

Rescaled to the unit square (u = (x − a_j)/W_j, α = (ā − a_j)/W_j, and v, β
likewise for y), the bracket is W_j W_y [(u' − α)(v' − β) − (u − α)(v − β)];
its first product is at most max{(1−α)(1−β), αβ}, its second at least
−max{α(1−β), (1−α)β}, and these are two of four non-negative products that
sum to 1.  Hence |S' − S| <= (1 − 1/n) W_j W_y, attained (the other rows at
(a_j, a_y), the last moved from (a_j, a_y) to (b_j, b_y)), and

    Δz_j = (1 − 1/n) W_j W_y / (σ τ_j √n) = 2 (1 − 1/n) W_y / (σ √n),              (7)

the same for every j.  One row moves every z_j at once, but η is an ℓ∞ bound,
so η = eta_two_sided_z(Δz, ν) by (4).  Clipping is a per-row map, so it keeps
neighbours neighbours.  Add/remove-one-row is not offered (n is in z's scale).

Why marginal tests, not the z of a multiple regression: there
t_j = β̂_j / (σ̂ √[(XᵀX)⁻¹]_jj), and one row can move (XᵀX)⁻¹ without bound when
XᵀX is near-singular, so no finite Δz exists without a lower bound on
λ_min(XᵀX) — a data-dependent quantity.  Multiple-regression tests go through
dp_lm (which releases such a bound privately) and BH on its released p-values
(the post-processing route).  tests/test_bh.py checks (6)-(7) by brute force.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..privacy.accountant import LedgerEntry
from ..privacy.fdr import (
    PeelingCalibration,
    PrivateBH,
    fdr_bound,
    harmonic,
    peeling_scale,
    private_bh,
)
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource

ETA_DEFAULT = 0.01
TRUNCATE_DEFAULT = 1e-10


@dataclass(frozen=True)
class BHRejections:
    """Plain Benjamini-Hochberg on released p-values: rejected indices and the p-value cut."""

    rejected: np.ndarray
    threshold: float


def benjamini_hochberg(p_values: np.ndarray, q: float) -> BHRejections:
    """BH step-up at level q: reject the R smallest, R = max{r : p_(r) <= q r / m}.

    Examples
    --------
    >>> benjamini_hochberg(np.array([0.001, 0.2, 0.012, 0.9]), 0.05).rejected.tolist()
    [0, 2]
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    cuts = q * np.arange(1, p.size + 1) / p.size
    passing = np.flatnonzero(p[order] <= cuts)
    R = int(passing[-1] + 1) if passing.size else 0
    return BHRejections(np.sort(order[:R]), float(cuts[R - 1]) if R else 0.0)


# --------------------------------------------------------------------------- eta derivation
def z_mean_delta(lo: float, hi: float, n: int, sigma: float, neighbouring: str = "replace") -> float:
    """Δz of z = √n (x̄ − μ₀)/σ for data in [lo, hi], public σ and n.

    Replacing one row moves x̄ by at most (hi − lo)/n, so z by (hi − lo)/(σ√n).
    Add/remove-one is not offered: n (in z's scale) would be private.

    Examples
    --------
    >>> z_mean_delta(0.0, 1.0, 10_000, 0.5)
    0.02
    """
    if neighbouring != "replace":
        raise ValueError("z_mean_delta holds under replace-one-row (n public); got " + repr(neighbouring))
    return (hi - lo) / (sigma * math.sqrt(n))


def eta_two_sided_z(delta_z: float, truncate: float = TRUNCATE_DEFAULT) -> float:
    """η of equation (4): the largest change of log max(2Φ̄(|z|), ν) when z moves by at most Δz.

    Examples
    --------
    >>> eta = eta_two_sided_z(0.002, 1e-10)
    >>> round(eta, 5), eta <= 0.002 * hazard_bound(1e-10)
    (0.01323, True)
    """
    u_nu = float(-ndtri(truncate / 2.0))
    lower = max(u_nu - delta_z, 0.0)
    return float(log_ndtr(-lower) - log_ndtr(-u_nu))


def hazard_bound(truncate: float) -> float:
    """h(u_ν) = φ(u_ν)/Φ̄(u_ν), the largest hazard over the truncated range (the slope bound in (4))."""
    u_nu = float(-ndtri(truncate / 2.0))
    return float(math.exp(-0.5 * u_nu * u_nu - 0.5 * math.log(2 * math.pi) - log_ndtr(-u_nu)))


def z_slope_delta(y_lo: float, y_hi: float, n: int, sigma: float, neighbouring: str = "replace") -> float:
    """Δz of equation (7): the most one replaced row moves any marginal slope z_j of (5).

    Δz = 2(1 − 1/n)(y_hi − y_lo)/(σ√n), whatever the design columns' bounds
    (each column is scaled by its own half-width τ_j).

    Examples
    --------
    >>> round(z_slope_delta(-1.0, 1.0, 10_000, 1.0), 6)
    0.039996
    """
    if neighbouring != "replace":
        raise ValueError("z_slope_delta holds under replace-one-row (n public); got " + repr(neighbouring))
    return 2.0 * (1.0 - 1.0 / n) * (y_hi - y_lo) / (sigma * math.sqrt(n))


@dataclass(frozen=True)
class MarginalZ:
    """The statistics of (5) on clipped data: z_j, their p-values, and how many values were clipped."""

    z: np.ndarray
    p_values: np.ndarray
    n_clipped: int


def marginal_slope_z(
    X: np.ndarray, y: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray, y_lo: float, y_hi: float, sigma: float
) -> MarginalZ:
    """Two-sided z-tests of each column's marginal slope, equation (5), after clipping to the bounds.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> out = marginal_slope_z(X, np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0]), np.array([4.0]),
    ...                        -2.0, 2.0, 1.0)
    >>> out.z.round(4).tolist(), out.n_clipped
    ([0.75], 0)
    """
    Xc = np.clip(X, x_lo, x_hi)
    yc = np.clip(y, y_lo, y_hi)
    n_clipped = int(np.count_nonzero(Xc != X) + np.count_nonzero(yc != y))
    S = (Xc - Xc.mean(axis=0)).T @ (yc - yc.mean())
    tau = (np.asarray(x_hi, dtype=float) - np.asarray(x_lo, dtype=float)) / 2.0
    z = S / (sigma * tau * math.sqrt(y.size))
    return MarginalZ(z=z, p_values=2.0 * np.exp(log_ndtr(-np.abs(z))), n_clipped=n_clipped)


# --------------------------------------------------------------------------- plans
def plan_private(
    *,
    q: float,
    m: int,
    k: int,
    eps: float,
    delta: float,
    eta: float | None,
    truncate: float,
    neighbouring: str = "replace",
) -> tuple[Plan, PeelingCalibration]:
    """The plan of private BH on raw p-values: one ledger entry for the k peels.

    ``eta=None`` means the default :data:`ETA_DEFAULT`, which the statement
    names as a default rather than a declaration.

    Examples
    --------
    >>> plan, cal = plan_private(q=0.1, m=100, k=10, eps=1.0, delta=0.0, eta=0.01,
    ...                          truncate=1e-10)
    >>> plan.eps, round(cal.scale, 3)
    (1.0, 0.3)
    """
    eta_declared = eta is not None
    eta = ETA_DEFAULT if eta is None else eta
    cal = peeling_scale(eps, delta, k, eta)
    entry = LedgerEntry(
        step=f"Report Noisy Min peeling of the {k} smallest of {m} truncated log p-values, "
        "each with a fresh noisy value",
        mechanism="Laplace peeling (Report Noisy Min)",
        eps=eps,
        delta=delta,
        sensitivity=f"ℓ∞ sensitivity η = {eta:g} of log max(p, ν) (declared by the user)",
        note=f"Lap(λ = {cal.scale:.4g}); {_composition_text(cal.composition, k)}",
        event=(
            {"kind": "zcdp", "rho": 5.0 * k * eta**2 / (2.0 * cal.scale**2)}
            if cal.composition == "zCDP"
            else {"kind": "pure", "eps": eps}
        ),
    )
    eta_text = "declared" if eta_declared else "the default (not derived from your data)"
    relation = "replace one row" if neighbouring == "replace" else "add or remove one row"
    plan = Plan(
        method="private Benjamini-Hochberg",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={
            "log max(p_i, ν), every i at once": f"η = {eta:g} ({eta_text}), ν = {truncate:g}",
            "one Report Noisy Min step": "2η/λ-DP (scores may move both ways)",
            "one fresh noisy value": "η/λ-DP (Laplace mechanism)",
        },
        assumptions=[
            f"the guarantee rests on η = {eta:g} ({eta_text}): for neighbouring data sets ({relation}) each "
            f"log max(p_i, {truncate:g}) changes by at most η",
            "the FDR bound needs valid null p-values (P(p <= u) <= u); it holds under any dependence",
        ],
        notes=[
            f"Private BH structure of Dwork, Su & Zhang (2021): p-values truncated at ν = {truncate:g}, "
            f"{k} Report Noisy Min peels of the log p-values with Lap(λ = {cal.scale:.4g}), BH step-up on "
            "the fresh noisy values; calibration and bound derived in dpstats.privacy.fdr.",
            f"Threshold shift t = λ log(5k/q) = {cal.scale * math.log(5 * k / q):.4g} on the log scale: "
            "all k fresh noises exceed −t with probability >= 1 − q/10.",
            f"FDR <= (m0/m)·q·H_k + q/10 <= {fdr_bound(q, k):.4g} (H_{k} = {harmonic(k):.4g}), "
            "under any dependence between valid p-values (derived in dpstats.privacy.fdr).",
            "Raw p-values are not released: only the peeled hypotheses, their noisy p-values, "
            "the rejections and the noisy threshold.",
        ],
    )
    return plan, cal


@dataclass(frozen=True)
class SlopeTests:
    """The public inputs of Δz in (7): n (replace one row), the response's bound width W_y, and σ."""

    n: int
    y_width: float
    sigma: float

    @property
    def delta_z(self) -> float:
        return z_slope_delta(0.0, self.y_width, self.n, self.sigma)


def plan_marginal_z(
    *,
    q: float,
    m: int,
    k: int,
    eps: float,
    delta: float,
    setting: SlopeTests,
    truncate: float,
) -> tuple[Plan, PeelingCalibration]:
    """The plan of private BH on the marginal slope z-tests (5): η derived by (7) and (4), not declared.

    Examples
    --------
    >>> plan, cal = plan_marginal_z(q=0.1, m=20, k=5, eps=1.0, delta=0.0,
    ...                             setting=SlopeTests(n=10**6, y_width=2.0, sigma=1.0), truncate=1e-10)
    >>> plan.eps, round(cal.scale / (3 * 5), 5)
    (1.0, 0.02645)
    """
    n, y_width, sigma, delta_z = setting.n, setting.y_width, setting.sigma, setting.delta_z
    eta = eta_two_sided_z(delta_z, truncate)
    plan, cal = plan_private(q=q, m=m, k=k, eps=eps, delta=delta, eta=eta, truncate=truncate)
    why = (
        f"η = {eta:.4g} derived: Δz = 2(1 − 1/n)·W_y/(σ√n) = {delta_z:.4g} (n = {n}, W_y = {y_width:g}, "
        f"σ = {sigma:g}, replace one row), then η = log Φ̄(u_ν − Δz) − log Φ̄(u_ν), u_ν = Φ̄⁻¹(ν/2)"
    )
    plan.entries = [
        replace(
            plan.entries[0],
            step=f"Report Noisy Min peeling of the {k} smallest of {m} truncated log p-values of marginal "
            "slope z-tests, each with a fresh noisy value",
            sensitivity=f"ℓ∞ sensitivity of log max(p, ν): {why}",
        )
    ]
    plan.method = "private Benjamini-Hochberg on marginal slope z-tests"
    plan.sensitivities = {
        "centred cross product S_j = Σ(x_ij − x̄_j)(y_i − ȳ)": "(1 − 1/n)·W_j·W_y (replace one row; attained)",
        "z_j = S_j/(σ·(W_j/2)·√n), every j at once": f"Δz = {delta_z:.4g}",
        **{key: value for key, value in plan.sensitivities.items() if not key.startswith("log max")},
        "log max(p_i, ν), every i at once": f"η = {eta:.4g} (derived from the bounds, n and σ), ν = {truncate:g}",
    }
    plan.assumptions = [
        "privacy rests on the declared bounds (values outside are clipped) and on n being public "
        "(replace one row); it holds whatever the data's law",
        f"the p-values are valid (conservative) under H0j: given x_j, the y_i are independent with a common "
        f"mean and variance at most σ² = {sigma:g}² (normal approximation for bounded y)",
        plan.assumptions[1],
    ]
    plan.notes = [
        "Hypothesis j: zero marginal slope of the response on design column j; z_j scales the centred "
        "cross product by the public σ and half-width W_j/2, never by the data's spread "
        "(derivation in dpstats.methods.bh).",
        *plan.notes[:-1],
        "Raw z-statistics and p-values are not released: only the peeled hypotheses, their noisy p-values, "
        "the rejections and the noisy threshold.",
    ]
    return plan, cal


def _composition_text(composition: str, k: int) -> str:
    if composition == "basic":
        return f"basic composition of {2 * k} steps: eps = 3kη/λ"
    if composition == "zCDP":
        return "zCDP: ρ = 5kη²/(2λ²), converted once with ρ + 2√(ρ log 1/δ) = eps"
    return composition


def plan_post_processing(*, q: float, m: int, neighbouring: str = "replace") -> Plan:
    """The plan of BH on a private fit's released p-values: post-processing, zero budget.

    Examples
    --------
    >>> plan_post_processing(q=0.1, m=5).eps
    0.0
    """
    entry = LedgerEntry(
        step=f"Benjamini-Hochberg at q = {q:g} on {m} released p-values",
        mechanism="post-processing",
        eps=0.0,
        delta=0.0,
        sensitivity="none: a function of released values only",
        note="post-processing of a DP release costs no budget (Dwork & Roth 2014, Prop. 2.1)",
        event={"kind": "post_processing"},
    )
    return Plan(
        method="Benjamini-Hochberg on private p-values",
        neighbouring=neighbouring,
        entries=[entry],
        assumptions=[
            "FDR <= (m0/m)·q if the released p-values are valid and independent or PRDS, and "
            f"<= q·H_m = {q * harmonic(m):.4g} under arbitrary dependence (Benjamini & Yekutieli 2001); "
            "a private fit's p-values are valid only as far as its inference accounts for the privacy noise, "
            "so this FDR control is approximate",
        ],
        notes=["BH used only the fit's released p-values: no extra privacy budget was spent."],
    )


def release_private(
    p_values: np.ndarray,
    *,
    q: float,
    k: int,
    truncate: float,
    calibration: PeelingCalibration,
    noise: NoiseSource,
) -> PrivateBH:
    """Run the private BH of :func:`dpstats.privacy.fdr.private_bh` on raw p-values."""
    return private_bh(p_values, q=q, k=k, truncate=truncate, calibration=calibration, noise=noise)
