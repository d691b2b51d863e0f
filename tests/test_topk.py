"""Canonical Lipschitz top-k: exact output distribution, numerics, bounds."""

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from dpstats.privacy.topk import (
    canonical_lipschitz,
    canonical_lipschitz_distribution,
    class_log_sizes,
    exact_recovery_bound,
    largest_class_noise,
    log_other_subsets,
    max_exponential_noise,
)


def literal_canonical_lipschitz(scores, k, eps, rng, gamma=0.5):
    """Algorithm 2 written as a literal double loop over the classes (reference).

    Classes partition the k-subsets: head ranks 1..h, rank h+1 excluded, tail rank t > k,
    body from ranks h+2..t-1; the exact top k is its own class (see dpstats.privacy.topk).
    """
    d = len(scores)
    order = sorted(range(d), key=lambda j: -scores[j])
    x = [scores[j] for j in order]
    eps1, eps2 = (1 - gamma) * eps, gamma * eps
    best, best_val = (k - 1, k), (eps2 / 2) * x[k - 1] - (eps1 / 2) * x[k] + rng.standard_exponential()
    for h in range(k):
        for t in range(k + 1, d + 1):
            logm = math.lgamma(t - h - 1) - math.lgamma(k - h) - math.lgamma(t - k)
            e = -math.log(1.0 - rng.random())  # -log U, U uniform on (0, 1]
            if logm < 40:  # F^-1(U^(1/m)) = -log(1 - U^(1/m))
                noise = -math.log(-math.expm1(-e / math.comb(t - h - 2, k - h - 1)))
            else:  # its asymptote log m - log(-log U); U^(1/m) rounds to 1 in doubles
                noise = logm - math.log(e)
            val = (eps2 / 2) * x[t - 1] - (eps1 / 2) * x[h] + noise
            if val > best_val:
                best, best_val = (h, t), val
    h, t = best
    if t == k:
        return tuple(sorted(order[:k]))
    body = list(rng.choice(range(h + 1, t - 1), size=k - h - 1, replace=False)) if k - h - 1 else []
    return tuple(sorted(order[j] for j in [*range(h), *body, t - 1]))


@pytest.mark.parametrize("k", [2, 3])
def test_output_distribution_matches_exact(k):
    """Chi-square goodness of fit, seed 20261121, 60 000 draws, alpha = 0.001."""
    scores = np.array([4.0, 3.2, 3.0, 1.5, 0.7, 0.0])
    exact = canonical_lipschitz_distribution(scores, k, eps=1.5)
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-6)
    rng = np.random.default_rng(20261121)
    draws = 60_000
    counts = Counter(tuple(int(i) for i in canonical_lipschitz(scores, k, 1.5, rng)) for _ in range(draws))
    keys = sorted(exact)
    assert set(counts) <= set(keys)
    observed = np.array([counts.get(s, 0) for s in keys])
    expected = np.array([exact[s] for s in keys]) * draws
    res = stats.chisquare(observed, expected * observed.sum() / expected.sum())
    assert res.pvalue > 1e-3, res


def test_literal_loop_matches_exact_distribution():
    scores = np.array([2.0, 1.5, 1.0, 0.0, -1.0])
    exact = canonical_lipschitz_distribution(scores, 2, eps=2.0)
    rng = np.random.default_rng(5)
    draws = 20_000
    counts = Counter(literal_canonical_lipschitz(list(scores), 2, 2.0, rng) for _ in range(draws))
    keys = sorted(exact)
    observed = np.array([counts.get(s, 0) for s in keys])
    expected = np.array([exact[s] for s in keys]) * draws
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-3


def test_huge_classes_stay_finite():
    rng = np.random.default_rng(0)
    logm = class_log_sizes(22283, 100)
    assert np.nanmax(logm[np.isfinite(logm)]) == pytest.approx(math.log(math.comb(22281, 99)), rel=1e-12)
    noise = max_exponential_noise(logm, rng)
    assert np.array_equal(np.isfinite(noise), np.isfinite(logm))  # invalid classes stay -inf
    assert not np.isnan(noise).any()
    out = canonical_lipschitz(rng.normal(size=22283), 100, 1.0, rng)
    assert len(set(out.tolist())) == 100 and np.all(np.diff(out) > 0)


def test_asymptotic_noise_matches_exact_distribution():
    """Max of m exponentials has CDF (1 − e^{−x})^m; KS test for log m = 50 (asymptote branch)."""
    rng = np.random.default_rng(11)
    logm = np.full(20_000, 50.0)
    draws = max_exponential_noise(logm, rng) - 50.0  # Gumbel in the limit
    assert stats.kstest(draws, stats.gumbel_r.cdf).pvalue > 1e-3
    draws_small = max_exponential_noise(np.full(20_000, math.log(3.0)), rng)
    assert stats.kstest(draws_small, lambda x: (1 - np.exp(-np.maximum(x, 0))) ** 3).pvalue > 1e-3


def test_large_gap_recovers_exact_top_k_and_bound_is_valid():
    rng = np.random.default_rng(1)
    scores = np.concatenate([np.full(5, 100.0), np.zeros(45)])
    assert all(canonical_lipschitz(scores, 5, 2.0, rng).tolist() == [0, 1, 2, 3, 4] for _ in range(50))
    gaps = np.linspace(0, 200, 50)
    bound = exact_recovery_bound(gaps, 50, 5, 2.0)
    assert np.all(np.diff(bound) >= 0) and bound[0] == 0 and bound[-1] > 0.99
    # the bound is a lower bound: check it against simulation at a moderate gap
    gap = float(gaps[np.argmax(bound > 0.5)])
    scores = np.concatenate([np.full(5, gap), np.zeros(45)])
    hits = np.mean(
        [canonical_lipschitz(scores, 5, 2.0, rng).tolist() == [0, 1, 2, 3, 4] for _ in range(2000)]
    )
    assert hits >= exact_recovery_bound(np.array([gap]), 50, 5, 2.0)[0] - 0.03


@pytest.mark.parametrize("d, k", [(2, 1), (5, 3), (7, 3), (10, 9), (60, 5), (200, 8), (22283, 100)])
def test_other_subsets_closed_form_equals_sum_over_classes(d, k):
    """The recovery bound's C(d, k) − 1 equals the sum of every other class's size (the classes
    partition the k-subsets); oracles: exact integer arithmetic (math.comb) and the class grid."""
    logm = class_log_sizes(d, k)
    logm[k - 1, 0] = -np.inf
    finite = logm[np.isfinite(logm)]
    grid_sum = float(finite.max() + np.log(np.exp(finite - finite.max()).sum())) if finite.size else -np.inf
    exact = math.log(math.comb(d, k) - 1) if math.comb(d, k) > 1 else -math.inf
    assert log_other_subsets(d, k) == pytest.approx(exact, rel=1e-12, abs=1e-12)
    assert log_other_subsets(d, k) == pytest.approx(grid_sum, rel=1e-12, abs=1e-12)


def test_largest_class_noise_is_harmonic_number():
    logm, h = largest_class_noise(6, 2)  # h = 0, t = 6: C(4, 1) = 4 members
    assert math.exp(logm) == pytest.approx(4) and h == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4)


def test_classes_partition_the_k_subsets():
    from dpstats.privacy.topk import class_members

    for d, k in [(6, 1), (6, 2), (7, 3), (8, 5)]:
        logm = class_log_sizes(d, k)
        members = [
            m
            for h in range(k)
            for t in range(k, d + 1)
            if np.isfinite(logm[h, t - k])
            for m in class_members(h, t, k)
        ]
        assert len(members) == len(set(members)) == math.comb(d, k)
        assert np.exp(logm[np.isfinite(logm)]).sum() == pytest.approx(math.comb(d, k))


def test_exact_eps_within_claim_on_neighbouring_scores():
    """Exact law on pairs of score vectors that differ by at most 1 per coordinate."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(40):
        a = rng.uniform(0, 4, size=5)
        b = a + rng.uniform(-1, 1, size=5)
        pa = canonical_lipschitz_distribution(a, 3, 1.0, grid=40_001)
        pb = canonical_lipschitz_distribution(b, 3, 1.0, grid=40_001)
        worst = max(worst, max(abs(math.log(pa[s] / pb[s])) for s in pa))
    assert worst <= 1.0 + 1e-3, worst


def test_class_sizes_and_harmonic_number_without_scipy_equal_scipys():
    """The canonical selector's class log-sizes (math.lgamma on whole numbers) and H_m (ψ by its
    asymptotic series) equal scipy.special's gammaln and digamma, which the first call no longer imports."""
    from scipy.special import digamma, gammaln

    from dpstats.privacy.topk import canonical

    for d, k in [(5, 3), (50, 7), (2000, 10)]:
        h, t = np.arange(k)[:, None], np.arange(k, d + 1)[None, :]
        with np.errstate(invalid="ignore"):
            ref = gammaln(t - h - 1) - gammaln(k - h) - gammaln(t - k)
        ref = np.where(t == k, np.where(h == k - 1, 0.0, -np.inf), ref)
        got = canonical._class_log_sizes(d, k)
        assert np.array_equal(np.isfinite(got), np.isfinite(ref))
        np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12, atol=1e-10)
    for x in (1.0, 1.5, 9.99, 10.0, 11.3, 1e3, 1e10):
        assert canonical._digamma(x) == pytest.approx(float(digamma(x)), rel=1e-13, abs=1e-13)
