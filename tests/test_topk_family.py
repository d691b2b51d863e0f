"""The exponential-mechanism top-k family: exact output laws and privacy accounting.

Distribution tests: at d = 6 the empirical law over index sets of each sampler
is compared with the exact law (enumeration of all ordered sequences) by a
chi-square test at level 0.001 (seeded, so each test is deterministic).
Accounting tests: for neighbouring score vectors (each score moved by at most
1) the exact laws never differ by more than a factor e^eps on any set.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from dpstats.privacy.topk import SELECTORS, exact_set_distribution, select_topk

FAMILY = ["peeling", "oneshot_gumbel", "joint"]
DRAWS = 20_000
ALPHA = 1e-3

CASES = [
    (np.array([3.0, 2.5, 2.0, 1.0, 0.5, 0.0]), 2, 2.0),
    (np.array([3.0, 2.5, 2.5, 1.0, 0.5, 0.0]), 3, 4.0),  # ties
    (np.array([0.0, 4.0, 1.0, 4.0, 2.0, 3.0]), 3, 1.0),  # unsorted input, ties
]


def _chi2_pvalue(
    method: str, scores: np.ndarray, k: int, eps: float, seed: int, monotone: bool = False
) -> float:
    exact = exact_set_distribution(scores, k, eps, method, monotone=monotone)
    rng = np.random.default_rng(seed)
    counts = Counter(
        tuple(select_topk(scores, k, eps, rng, method=method, monotone=monotone)) for _ in range(DRAWS)
    )
    assert set(counts) <= set(exact), "sampler produced a set outside the support"
    keys = sorted(exact)
    expected = np.array([exact[s] for s in keys]) * DRAWS
    observed = np.array([counts.get(s, 0) for s in keys], dtype=float)
    # pool cells with expected count < 5 into one
    small = expected < 5
    if small.any():
        expected = np.append(expected[~small], expected[small].sum())
        observed = np.append(observed[~small], observed[small].sum())
    return float(chisquare(observed, expected).pvalue)


def test_selectors_are_listed_explicitly():
    # SELECTORS is built in dpstats/privacy/topk/__init__.py, not by import side effects
    from dpstats.privacy.topk import canonical, family

    assert list(SELECTORS) == ["canonical_lipschitz", *FAMILY]
    assert SELECTORS["canonical_lipschitz"].select is canonical.canonical_lipschitz
    assert [SELECTORS[name].select for name in FAMILY] == [
        family.peeling,
        family.oneshot_gumbel,
        family.joint,
    ]


def test_registered():
    assert {"canonical_lipschitz", *FAMILY} <= set(SELECTORS)
    for name in FAMILY:
        assert "eps-DP" in SELECTORS[name].accounting
        assert SELECTORS[name].monotone_note


@pytest.mark.parametrize("method", FAMILY)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_exact_output_distribution(method, case):
    scores, k, eps = CASES[case]
    p = _chi2_pvalue(method, scores, k, eps, seed=20240 + case)
    assert p > ALPHA, f"{method} law differs from the exact enumeration (chi-square p = {p:.2g})"


@pytest.mark.parametrize("method", FAMILY)
def test_exact_output_distribution_monotone(method):
    p = _chi2_pvalue(method, np.array([2.0, 1.5, 1.0, 0.5, 0.0, 0.0]), 2, 1.5, seed=7, monotone=True)
    assert p > ALPHA


def test_chi_square_detects_a_wrong_law():
    # the test has power: peeling's samples against the joint law are rejected
    scores, k, eps = np.array([3.0, 2.5, 2.0, 1.0, 0.5, 0.0]), 2, 6.0
    exact = exact_set_distribution(scores, k, eps, "joint")
    rng = np.random.default_rng(1)
    counts = Counter(tuple(select_topk(scores, k, eps, rng, method="peeling")) for _ in range(DRAWS))
    keys = sorted(exact)
    obs = np.array([counts.get(s, 0) for s in keys], float)
    assert chisquare(obs, np.array([exact[s] for s in keys]) * DRAWS).pvalue < ALPHA


def test_peeling_and_oneshot_share_one_law():
    a = exact_set_distribution(np.array([1.0, 0.3, 2.0, 0.0]), 2, 1.0, "peeling")
    b = exact_set_distribution(np.array([1.0, 0.3, 2.0, 0.0]), 2, 1.0, "oneshot_gumbel")
    assert a == b


@pytest.mark.parametrize("method", FAMILY)
@pytest.mark.parametrize("monotone", [False, True])
def test_accounting_bound_on_neighbours(method, monotone):
    """max over sets |log P(S|x) − log P(S|x')| <= eps for 200 random neighbours x' of x."""
    rng = np.random.default_rng(11)
    eps, k = 1.0, 2
    worst = 0.0
    for _ in range(200):
        x = rng.integers(0, 4, size=5).astype(float)
        shift = rng.uniform(0, 1, size=5)
        step = shift if monotone else rng.uniform(-1, 1, size=5)
        p = exact_set_distribution(x, k, eps, method, monotone=monotone)
        q = exact_set_distribution(x + step, k, eps, method, monotone=monotone)
        worst = max(worst, max(abs(math.log(p[s]) - math.log(q[s])) for s in p))
    assert worst <= eps + 1e-9
    # and the bound is not vacuous: the mechanisms use a good part of the budget
    assert worst > 0.2 * eps


def test_joint_accounting_is_tight_enough_to_matter():
    """Non-monotone joint uses Δu = 2: with Δu = 1 the bound would be violated."""
    # found by a seeded search over small integer score vectors
    x = np.array([2.0, 2.0, 0.0, 3.0, 2.0])
    y = x + np.array([-1.0, -1.0, 1.0, 1.0, -1.0])
    p = exact_set_distribution(x, 2, 1.0, "joint", monotone=True)  # a = eps/2 (Δu = 1)
    q = exact_set_distribution(y, 2, 1.0, "joint", monotone=True)
    assert max(abs(math.log(p[s]) - math.log(q[s])) for s in p) > 1.0


@pytest.mark.parametrize("method", FAMILY)
def test_large_d_fast_and_valid(method):
    rng = np.random.default_rng(0)
    scores = rng.standard_normal(12625)
    out = select_topk(scores, 9, 1.0, rng, method=method)
    assert out.shape == (9,) and len(set(out.tolist())) == 9
    assert np.all(np.diff(out) > 0) and out.min() >= 0 and out.max() < 12625


@pytest.mark.parametrize("method", FAMILY)
def test_high_eps_recovers_top_k(method):
    scores = np.array([10.0, 0, 9, 0, 8, 0, 0, 0]) * 10
    out = select_topk(scores, 3, 50.0, np.random.default_rng(3), method=method)
    assert out.tolist() == [0, 2, 4]


def test_joint_k_100_no_nan():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal(3000) * 50
    out = select_topk(scores, 100, 2.0, rng, method="joint")
    assert len(set(out.tolist())) == 100
