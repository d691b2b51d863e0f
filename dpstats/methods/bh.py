"""Private FDR control: Benjamini-Hochberg on p-values, privately (Dwork, Su & Zhang 2021).

Two routes, one plan each:

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
