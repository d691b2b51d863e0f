"""Floating-point attacks on released real numbers (issue 10, part 3).

Mironov (2012, "On significance of the least significant bits for differential
privacy", CCS) showed that the textbook Laplace sampler

    y = x − b·sgn(u)·ln(1 − 2|u|),   u = k·2⁻⁵³ − ½ (a 53-bit uniform double),

run in double precision, releases values whose low-order bits depend on ``x``:
the set of doubles reachable from one input differs from the set reachable from
a neighbouring input, so an attacker who sees an output that is *impossible*
from ``x1`` knows with certainty that the input was ``x0``.

These tests

1. implement the naive sampler and an exact reachability oracle that inverts it
   (recover the candidate ``k`` from ``y − x`` and re-run the sampler on a few
   neighbouring ``k`` to absorb rounding), and measure the vulnerability on
   ``x0 = 0``, ``x1 = 1``, ``b = 1`` (claimed eps = Δ/b = 1);
2. show that releases through ``NoiseSource(random_state=None)`` (OpenDP's
   samplers) carry no such certificate: under the same oracle the four
   reachability patterns have likelihood ratios within the claimed e^eps
   (Clopper–Pearson, Bonferroni), and the low 8 mantissa bits of the output
   have the same distribution from ``x0`` and ``x1`` (chi-square), for both
   the Laplace and the Gaussian path; the seeded numpy path (documented in the
   privacy statement as "seeded: not for release") serves as the power control.

Randomness: the naive sampler and the seeded path use fixed seeds.  The OpenDP
path draws from OS entropy by design (it cannot be seeded), so those tests are
genuinely random; their false-failure probabilities are stated at each
threshold (at most 1e-3 per assertion).  Sample size N = 20 000 per input.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from dpstats.audit.auditor import clopper_pearson
from dpstats.privacy.randomness import NoiseSource

N = 20_000  # outputs per input
B = 1.0  # Laplace scale; sensitivity 1 between x0 and x1, so eps = 1
X0, X1 = 0.0, 1.0  # neighbouring inputs
EPS = 1.0 / B
SEARCH = 3  # neighbouring k values tried by the oracle (±SEARCH)
P_FLOOR = 1e-3  # chi-square p-value below which low bits are "input-dependent"
ALPHA = 1e-3  # family-wise level of the Clopper–Pearson eps lower bound
TWO53 = 2**53


# --------------------------------------------------------------------------- the attack


def naive_laplace(x: float, k: np.ndarray, b: float = B) -> np.ndarray:
    """Textbook inverse-CDF Laplace: x − b·sgn(u)·ln(1 − 2|u|), u = k·2⁻⁵³ − ½.

    ``k`` in [1, 2⁵³ − 1]; every step is a plain double operation, as in
    Mironov (2012, §3).  ``k·2⁻⁵³`` and the subtraction of ½ are exact.
    """
    u = np.ldexp(np.asarray(k, dtype=np.float64), -53) - 0.5
    return x - b * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))


def reachable(y: np.ndarray, x: float, b: float = B, search: int = SEARCH) -> np.ndarray:
    """True where ``y`` is an exact output of :func:`naive_laplace` from input ``x``.

    Inverts the sampler: |u| = (1 − e^{−|y−x|/b})/2 with sgn(u) = sgn(y − x),
    k ≈ (u + ½)·2⁵³, then re-runs the sampler on k − search … k + search and
    checks for bit-exact equality with ``y``.
    """
    y = np.asarray(y, dtype=np.float64)
    noise = y - x
    u = np.sign(noise) * (-np.expm1(-np.abs(noise) / b)) / 2.0
    k0 = np.rint((u + 0.5) * float(TWO53)).astype(np.int64)
    hit = np.zeros(y.shape, dtype=bool)
    for step in range(-search, search + 1):
        k = np.clip(k0 + step, 1, TWO53 - 1)
        hit |= naive_laplace(x, k, b) == y
    return hit


def draw_naive(x: float, seed: int, n: int = N) -> np.ndarray:
    k = np.random.default_rng(seed).integers(1, TWO53, size=n)
    return naive_laplace(x, k)


# --------------------------------------------------------------------------- statistics


def patterns(y: np.ndarray) -> np.ndarray:
    """Reachability pattern per output: 2·[reachable from x0] + [reachable from x1]."""
    return 2 * reachable(y, X0).astype(int) + reachable(y, X1).astype(int)


def eps_lower_bound(cat0: np.ndarray, cat1: np.ndarray, alpha: float = ALPHA) -> float:
    """Clopper–Pearson lower bound on the privacy loss over the 4 reachability patterns.

    For each pattern c and each direction, ln(p_a(c)⁻ / p_b(c)⁺) with one-sided
    bounds at level alpha/16 (Bonferroni over 4 patterns × 2 directions × 2
    bounds); the maximum is a valid lower bound on eps with probability ≥ 1 − alpha.
    """
    level = alpha / 16
    best = 0.0
    for c in range(4):
        counts = (int(np.sum(cat0 == c)), int(np.sum(cat1 == c)))
        for a, b in ((0, 1), (1, 0)):
            lower, _ = clopper_pearson(counts[a], N, level)
            _, upper = clopper_pearson(counts[b], N, level)
            if lower > 0:
                best = max(best, float(np.log(lower / upper)))
    return best


def low_bits(y: np.ndarray, bits: int = 8) -> np.ndarray:
    """The last ``bits`` bits of the IEEE-754 mantissa of each double."""
    return (np.ascontiguousarray(y, dtype=np.float64).view(np.uint64) & ((1 << bits) - 1)).astype(np.int64)


def low_bit_pvalue(y0: np.ndarray, y1: np.ndarray) -> float:
    """Chi-square test that the last 8 mantissa bits have one distribution for x0 and x1."""
    table = np.vstack([np.bincount(low_bits(y0), minlength=256), np.bincount(low_bits(y1), minlength=256)])
    table = table[:, table.sum(axis=0) > 0]
    return float(chi2_contingency(table)[1])


def release(kind: str, x: float, random_state=None) -> tuple[np.ndarray, set[str]]:
    src = NoiseSource(random_state=random_state)
    draw = src.laplace if kind == "laplace" else src.gaussian
    return draw(np.full(N, x), B), src.samplers


@pytest.fixture(scope="module")
def opendp_laplace() -> tuple[np.ndarray, np.ndarray]:
    y0, used0 = release("laplace", X0)
    y1, used1 = release("laplace", X1)
    assert used0 == used1 == {"OpenDP laplace (floating-point safe)"}
    return y0, y1


# --------------------------------------------------------------------------- (1) the vulnerability


def test_oracle_recognises_every_naive_output_from_its_own_input():
    """No false negatives: all N naive outputs are reachable from the input that made them."""
    for x, seed in ((X0, 11), (X1, 12)):
        assert reachable(draw_naive(x, seed), x).all()


def test_naive_laplace_outputs_certify_the_input():
    """Mironov's attack: most naive outputs from x0 are impossible from x1.

    Measured (seed 11, N = 20 000): 79.9% of outputs from x0 = 0 are not
    reachable from x1 = 1 (and, seed 12, ~80% of outputs from x1 are not
    reachable from x0).  On those outputs the attacker names the input with
    certainty, so the privacy loss is unbounded although eps = 1 is claimed.
    """
    y0, y1 = draw_naive(X0, 11), draw_naive(X1, 12)
    unreachable_from_x1 = ~reachable(y0, X1)
    unreachable_from_x0 = ~reachable(y1, X0)
    assert unreachable_from_x1.mean() > 0.5
    assert unreachable_from_x0.mean() > 0.5
    # Pattern "reachable from x0 only" never occurs under x1 (probability 0),
    # yet occurs for most x0 outputs: the Clopper–Pearson bound on eps is far
    # above the claimed 1 (about ln(0.79 / 5e-4) ≈ 7.4).
    cat0, cat1 = patterns(y0), patterns(y1)
    assert np.sum(cat1 == 2) == 0
    assert eps_lower_bound(cat0, cat1) > 5 * EPS


def test_naive_laplace_low_bits_reveal_the_input():
    """Power control for the low-bit test: the naive sampler fails it (p ≈ 0)."""
    assert low_bit_pvalue(draw_naive(X0, 21), draw_naive(X1, 22)) < 1e-10


# --------------------------------------------------------------------------- (2) our release path


def test_opendp_laplace_outputs_certify_nothing(opendp_laplace):
    """Under the same oracle, OpenDP outputs give no certain answer.

    The oracle's verdict "impossible from x1" fires on a large share of the
    outputs that x1 itself produced (measured ≈ 55%, vs ≈ 76% of x0's), so it
    certifies nothing; and the four reachability patterns have likelihood
    ratios within e^eps: the Clopper–Pearson lower bound on eps (family-wise
    level 1e-3) stays ≤ the claimed eps = 1 (measured: bound ≈ 0.5, largest point ratio ≈ e^0.6).
    """
    y0, y1 = opendp_laplace
    cat0, cat1 = patterns(y0), patterns(y1)
    # The naive sampler's certificates ("reachable from x0 only" under x0, and
    # vice versa) never occur under the other input; here both occur under the
    # other input too (measured ≈ 9% and ≈ 18% of outputs, not 0).
    assert np.mean(cat1 == 2) > 0.01
    assert np.mean(cat0 == 1) > 0.01
    assert np.mean(~reachable(y1, X1)) > 0.3
    assert eps_lower_bound(cat0, cat1) <= EPS


def test_opendp_laplace_low_bits_do_not_depend_on_the_input(opendp_laplace):
    """Last 8 mantissa bits: same distribution from x0 and x1 (chi-square, 255 df).

    False-failure probability P_FLOOR = 1e-3 (OpenDP cannot be seeded).
    """
    y0, y1 = opendp_laplace
    assert low_bit_pvalue(y0, y1) > P_FLOOR


def test_opendp_gaussian_low_bits_do_not_depend_on_the_input():
    y0, used0 = release("gaussian", X0)
    y1, used1 = release("gaussian", X1)
    assert used0 == used1 == {"OpenDP gaussian (floating-point safe)"}
    assert low_bit_pvalue(y0, y1) > P_FLOOR


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_seeded_numpy_path_is_not_hardened(kind):
    """The seeded path (numpy, "seeded: not for release") does leak low bits.

    This is the documented reason a seeded run is for reproduction only, and
    the power control for the OpenDP low-bit tests above (seeds 31, 32).
    """
    y0, used = release(kind, X0, random_state=31)
    y1, _ = release(kind, X1, random_state=32)
    assert used == {f"numpy {kind} (seeded, not floating-point hardened)"}
    assert low_bit_pvalue(y0, y1) < 1e-10
