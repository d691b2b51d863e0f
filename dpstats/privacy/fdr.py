"""Private Benjamini-Hochberg: Laplace peeling of noisy log p-values, then a shifted BH step-up.

The procedure follows the structure of Dwork, Su & Zhang, "Differentially private
false discovery rate control" (Journal of Privacy and Confidentiality 11(2), 2021;
arXiv 1807.04209), Algorithm "PrivateBHq": truncate every p-value below at a
public ν, take logarithms, select the k smallest by *Report Noisy Min with
peeling* (Laplace noise, a fresh noisy value for each selected hypothesis), and
run a BH step-up on the noisy values with a threshold lowered to absorb the
noise.  We could not reach the paper's text from this machine (only its
abstract and a third-party re-implementation), so the calibration, the
threshold shift and the FDR bound below are derived here, in full, and are
what the code does; where they differ from the paper, these hold.

Input and neighbouring relation
-------------------------------
m p-values p_i(D).  The user declares η: for neighbouring data sets D, D'
(the relation of the analysis that produced the p-values, e.g. replace one
row), every truncated log p-value moves by at most η,

    |log max(p_i(D), ν) − log max(p_i(D'), ν)| <= η   for all i at once   (1)

(ℓ∞ sensitivity η of the vector ℓ_i = log max(p_i, ν)).  For p-values of
z-tests on bounded data, :func:`dpstats.methods.bh.eta_two_sided_z` derives η.

Mechanism (what :func:`private_bh` releases)
-------------------------------------------
For j = 1..k (k = ``max_rejections``): draw W ~ Lap(λ) on every hypothesis not
yet selected, select i_j = argmin (ℓ_i + W_i) (Report Noisy Min), and draw a
fresh Z_j ~ Lap(λ); the released value is ỹ_j = ℓ_{i_j} + Z_j.  Then sort
ỹ_(1) <= ... <= ỹ_(k) and let

    J = max{ j <= k : ỹ_(j) <= log(q j / m) − t },   t = λ log(5k/q)          (2)

and reject the J hypotheses with the smallest noisy values (none if no j).
Released: the k selected indices in peeling order, their noisy values, J.

Privacy (derived here)
----------------------
* One Report Noisy Min step on a vector of ℓ∞ sensitivity η with Lap(λ)
  noise is (2η/λ)-DP: fixing the other noises, i wins iff W_i < c(W_{−i}) − ℓ_i,
  and under (1) the bound c − ℓ_i moves by at most 2η; the Laplace density ratio
  over a shift of 2η is at most e^{2η/λ} (Dwork & Roth 2014, Claim 3.9 with the
  factor 2 for scores that can move both ways).
* The fresh value ℓ_{i_j} + Z_j is the Laplace mechanism: (η/λ)-DP (Theorem 3.6).
* Pure DP (δ = 0), basic composition over 2k steps: ε = 3kη/λ, so
  λ = 3kη/ε.
* δ > 0: an ε₀-DP step is ε₀²/2-zCDP (Bun & Steinke 2016, Prop. 1.4); the k
  peels cost ρ = k((2η/λ)² + (η/λ)²)/2 = 5kη²/(2λ²) (zCDP adds up, also
  adaptively, Lemma 2.3) and ρ-zCDP is (ε, δ)-DP by Canonne, Kamath & Steinke
  (2020, Cor. 13; :func:`~.calibration.rho_from_eps_delta`), so λ = η√(5k/(2ρ))
  with ρ from (ε, δ).  For small ε, ρ ≈ ε²/(4 log 1/δ) (Bun & Steinke's
  ρ + 2√(ρ log 1/δ) = ε, which the corollary improves on) and
  λ ≈ η√(10 k log(1/δ))/ε, the scale of the paper's peeling.  The smaller of
  the two scales is used.
* Sorting, the step-up and the rejection set are post-processing.

FDR (derived here; not the paper's theorem)
-------------------------------------------
Let G be the event that every fresh noise satisfies Z_j >= −t.  By the union
bound P(not G) <= k·½·e^{−t/λ} = q/10 with t of (2).  On G every rejected
hypothesis has log max(p_i, ν) <= ỹ + t <= log(q R / m), R = J the number of
rejections, so p_i <= q R / m: the rejection set is *self-consistent*
(Blanchard & Roquain 2008).  For any random R in {1..k} and a valid null p-value
U (P(U <= u) <= u), E[1{U <= cR}/R] <= c·H_k with H_k = 1 + 1/2 + ... + 1/k
(write 1/R = Σ_{r>=R} (1/r − 1/(r+1)) + 1/(k+1) and use 1{U <= cR} <= 1{U <= cr}
for r >= R).  Summing over the m0 true nulls with c = q/m:

    FDR <= (m0/m)·q·H_k + q/10                                                  (3)

under ANY dependence between the p-values (nulls need only be valid).  Under
independence BH's own FDR is (m0/m)·q; the factor H_k is the price of a proof
that does not use independence, and simulations (tests/test_bh_slow.py) show
the realised FDR below q.  The bound, its slack (H_k − 1 + 1/10 relative to q)
and its assumption (valid null p-values) are written in every statement.

Noise: the selection noises only choose indices (numpy's generator); the k
released values are drawn by :class:`~.randomness.NoiseSource` (OpenDP's
floating-point-safe Laplace when not seeded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .calibration import rho_from_eps_delta
from .randomness import NoiseSource

#: P(some fresh noise falls below −t) <= q / SHIFT_FAILURE_DIVISOR, with t = λ log(k·DIVISOR/(2q)).
SHIFT_FAILURE_DIVISOR = 10.0


@dataclass(frozen=True)
class PeelingCalibration:
    """The Laplace scale λ of the peeling and how it was calibrated."""

    scale: float
    composition: str


@dataclass(frozen=True)
class PrivateBH:
    """What :func:`private_bh` releases: the peeled hypotheses, their noisy values and the rejections.

    Attributes
    ----------
    peeled : ndarray of int (k,)
        Indices selected by Report Noisy Min, in peeling order.
    noisy_log_p : ndarray (k,)
        The fresh noisy log p-value of each peeled index (same order).
    rejected : ndarray of int (J,)
        Indices rejected, by increasing noisy value.
    threshold_log : float
        log(q J / m) − t, the noisy log p-value cut (−inf when nothing is rejected).
    shift : float
        t = λ log(5k/q), the threshold shift of equation (2).
    """

    peeled: np.ndarray
    noisy_log_p: np.ndarray
    rejected: np.ndarray
    threshold_log: float
    shift: float


def peeling_scale(eps: float, delta: float, k: int, eta: float) -> PeelingCalibration:
    """Laplace scale λ making k Report-Noisy-Min peels with fresh values (eps, delta)-DP.

    Pure: λ = 3kη/ε (basic composition of 2k steps of cost 2η/λ and η/λ).
    δ > 0: also λ = η√(5k/(2ρ)) with ρ-zCDP worth (ε, δ) (Bun & Steinke 2016,
    Prop. 1.4; Canonne, Kamath & Steinke 2020, Cor. 13); the smaller scale is used.  ε = inf
    gives λ = 0.

    Examples
    --------
    >>> peeling_scale(1.0, 0.0, 10, 0.01).scale
    0.3
    >>> cal = peeling_scale(1.0, 1e-6, 100, 0.01)
    >>> cal.composition, round(cal.scale, 3)
    ('zCDP', 1.013)
    """
    if math.isinf(eps):
        return PeelingCalibration(0.0, "none (eps = inf)")
    pure = 3.0 * k * eta / eps
    if delta <= 0:
        return PeelingCalibration(pure, "basic")
    zcdp = eta * math.sqrt(5.0 * k / (2.0 * rho_from_eps_delta(eps, delta)))
    return PeelingCalibration(zcdp, "zCDP") if zcdp < pure else PeelingCalibration(pure, "basic")


def threshold_shift(scale: float, k: int, q: float) -> float:
    """t = λ log(5k/q): all k fresh Lap(λ) noises exceed −t with probability >= 1 − q/10.

    Examples
    --------
    >>> round(threshold_shift(1.0, 10, 0.1), 4)
    6.2146
    """
    return scale * math.log(k * SHIFT_FAILURE_DIVISOR / (2.0 * q))


def rejection_gap(scale: float, k: int, q: float, m: int, truncate: float) -> float:
    """g = log ν + t − log(qk/m): how far below zero a fresh noise must fall for any rejection.

    Any rejection needs some ỹ_(j) <= log(qj/m) − t <= log(qk/m) − t (the loosest of the k cuts of
    (2)), and every released value is ỹ_j = ℓ_{i_j} + Z_j >= log ν + Z_j, since no truncated log
    p-value is below log ν.  So a rejection needs Z_j <= −g for some j, whatever the data.  When
    g > 0 even the strongest evidence the truncation allows (p <= ν) is rejected only if its noise
    falls below −g, i.e. with probability below ½: the cut lies beyond what evidence can reach, and
    a rejection is the noise's doing (:func:`any_rejection_bound`).

    Examples
    --------
    >>> round(rejection_gap(50.54, 20, 0.1, 200, 1e-10), 1)  # the formula route at n = 20 000, eps = 1
    330.7
    """
    return math.log(truncate) + threshold_shift(scale, k, q) - math.log(q * k / m)


def any_rejection_bound(scale: float, k: int, q: float, m: int, truncate: float) -> float:
    """P(at least one rejection) <= 1 − (1 − ½e^{−g/λ})^k whatever the data, when g >= 0 (else 1).

    The k fresh noises Z_j ~ Lap(λ) are independent of each other and of the peeling, and each
    falls below −g with probability ½e^{−g/λ} (g of :func:`rejection_gap`).

    Examples
    --------
    >>> round(any_rejection_bound(5.681, 20, 0.1, 200, 1e-10), 3)  # formula route, n = 10⁵, eps = 4
    0.227
    """
    gap = rejection_gap(scale, k, q, m, truncate)
    if gap < 0 or scale == 0:
        return 1.0 if gap < 0 else 0.0
    return float(-math.expm1(k * math.log1p(-0.5 * math.exp(-gap / scale))))


def largest_useful_scale(k: int, q: float, m: int, truncate: float) -> float:
    """λ* = log(qk/(mν)) / log(5k/q): the largest Laplace scale with g <= 0 (0 if qk/m <= ν).

    Examples
    --------
    >>> round(largest_useful_scale(20, 0.1, 200, 1e-10), 3)
    2.667
    """
    room = math.log(q * k / (m * truncate))
    return max(room, 0.0) / math.log(k * SHIFT_FAILURE_DIVISOR / (2.0 * q))


def fdr_bound(q: float, k: int) -> float:
    """The FDR bound (3) with m0 = m: q·H_k + q/10, valid under any dependence.

    Examples
    --------
    >>> round(fdr_bound(0.1, 1), 4)
    0.11
    """
    return q * harmonic(k) + q / SHIFT_FAILURE_DIVISOR


def harmonic(k: int) -> float:
    """H_k = 1 + 1/2 + ... + 1/k."""
    return math.fsum(1.0 / r for r in range(1, k + 1))


def truncated_log_p(p_values: np.ndarray, truncate: float) -> np.ndarray:
    """ℓ_i = log max(p_i, ν): the quantity whose sensitivity η the user declares."""
    return np.log(np.maximum(np.asarray(p_values, dtype=float), truncate))


def peel_noisy_min(values: np.ndarray, k: int, scale: float, generator: np.random.Generator) -> np.ndarray:
    """Indices of k Report-Noisy-Min peels: each step argmin of values + Lap(scale) over the rest.

    Only indices are returned (a choice: numpy's generator); fresh noisy values
    are drawn by the caller.  scale = 0 gives the k smallest (ties by index).

    Examples
    --------
    >>> peel_noisy_min(np.array([3.0, 1.0, 2.0]), 2, 0.0, np.random.default_rng(0)).tolist()
    [1, 2]
    """
    remaining = np.arange(values.size)
    chosen = np.empty(k, dtype=int)
    for j in range(k):
        noisy = values[remaining] + (generator.laplace(0.0, scale, remaining.size) if scale else 0.0)
        pick = int(np.argmin(noisy))
        chosen[j] = remaining[pick]
        remaining = np.delete(remaining, pick)
    return chosen


def step_up(noisy_log_p: np.ndarray, q: float, m: int, shift: float) -> int:
    """J of equation (2): the largest j with the j-th smallest noisy value <= log(qj/m) − shift (0 if none)."""
    ordered = np.sort(noisy_log_p)
    cuts = np.log(q * np.arange(1, ordered.size + 1) / m) - shift
    passing = np.flatnonzero(ordered <= cuts)
    return int(passing[-1] + 1) if passing.size else 0


def private_bh(
    p_values: np.ndarray,
    *,
    q: float,
    k: int,
    truncate: float,
    calibration: PeelingCalibration,
    noise: NoiseSource,
) -> PrivateBH:
    """The private BH release of the module docstring (Report Noisy Min peeling, shifted step-up).

    Examples
    --------
    >>> p = np.r_[1e-9, 1e-8, np.linspace(0.05, 1, 18)]
    >>> cal = peeling_scale(1.0, 0.0, 4, 0.01)
    >>> out = private_bh(p, q=0.1, k=4, truncate=1e-12, calibration=cal, noise=NoiseSource(0))
    >>> sorted(out.rejected.tolist())
    [0, 1]
    """
    values = truncated_log_p(p_values, truncate)
    peeled = peel_noisy_min(values, k, calibration.scale, noise.generator)
    noisy = noise.laplace(values[peeled], calibration.scale)
    shift = threshold_shift(calibration.scale, k, q)
    J = step_up(noisy, q, values.size, shift)
    order = np.argsort(noisy, kind="stable")
    threshold = math.log(q * J / values.size) - shift if J else -math.inf
    return PrivateBH(
        peeled=peeled,
        noisy_log_p=noisy,
        rejected=peeled[order[:J]],
        threshold_log=threshold,
        shift=shift,
    )
