"""The planner's canonical Lipschitz selector over an eps grid has the reference selector's law at each eps.

:func:`canonical_lipschitz_grid` draws the class noise once for the whole grid;
at each eps its output must follow the law of :func:`canonical_lipschitz`.  At
small d against the exact law (:func:`canonical_lipschitz_distribution`,
numerical integration), at larger d (classes past the log m = 40 asymptote)
against the reference selector by a two-sample chi-square on the number of
the exact top k selected.  Seeds and the level alpha = 0.001 are stated per test.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats

from dpstats.privacy.topk import (
    canonical_lipschitz,
    canonical_lipschitz_distribution,
    canonical_lipschitz_grid,
)

EPS = [0.5, 1.5, 4.0]


@pytest.mark.parametrize(("k", "gamma", "utility"), [(2, 0.5, "margin"), (3, 0.3, "paper")])
def test_each_eps_matches_the_exact_law(k, gamma, utility):
    """Chi-square goodness of fit at every eps, seed 20261123, 30 000 grid draws, alpha = 0.001."""
    scores = np.array([4.0, 3.2, 3.0, 1.5, 0.7, 0.0])
    rng = np.random.default_rng(20261123)
    draws = 30_000
    counts = [Counter() for _ in EPS]
    for _ in range(draws):
        for i, chosen in enumerate(canonical_lipschitz_grid(scores, k, EPS, rng, gamma, utility)):
            counts[i][tuple(int(j) for j in chosen)] += 1
    for eps, observed_counts in zip(EPS, counts):
        exact = canonical_lipschitz_distribution(scores, k, eps, gamma=gamma, exact_top_utility=utility)
        keys = sorted(exact)
        assert set(observed_counts) <= set(keys)
        observed = np.array([observed_counts.get(s, 0) for s in keys])
        expected = np.array([exact[s] for s in keys])
        res = stats.chisquare(observed, expected * draws / expected.sum())
        assert res.pvalue > 1e-3, (eps, res)


def test_large_d_matches_the_reference_selector():
    """d = 300, k = 20 (largest class log m ≈ 60: the asymptote branch); seeds 7 (scores), 8, 9.

    The number of the exact top 20 selected, 4000 draws per selector and eps,
    compared by a chi-square test of homogeneity (bins with fewer than 5
    expected pooled), alpha = 0.001.
    """
    scores = np.sort(np.random.default_rng(7).normal(size=300))[::-1] * 3.0
    eps_grid = [5.0, 20.0]
    grid_rng, ref_rng = np.random.default_rng(8), np.random.default_rng(9)
    draws = 4000
    grid_hits = np.array(
        [
            [np.count_nonzero(c < 20) for c in canonical_lipschitz_grid(scores, 20, eps_grid, grid_rng)]
            for _ in range(draws)
        ]
    )
    for i, eps in enumerate(eps_grid):
        ref_hits = np.array(
            [np.count_nonzero(canonical_lipschitz(scores, 20, eps, ref_rng) < 20) for _ in range(draws)]
        )
        table = np.array([np.bincount(grid_hits[:, i], minlength=21), np.bincount(ref_hits, minlength=21)])
        table = _pool_small(table)
        assert table.shape[1] >= 3, table  # the test has something to compare
        assert stats.chi2_contingency(table).pvalue > 1e-3, (eps, table)


def test_shares_the_noise_across_eps():
    """Common random numbers: at two nearly equal eps the winning class (hence the selected item of
    lowest score, its tail) coincides always, against rarely for two independent calls; seeds 3, 4."""
    scores = np.random.default_rng(3).normal(size=200) * 2.0

    def tail(chosen):
        return int(chosen[np.argmin(scores[chosen])])

    rng = np.random.default_rng(4)
    pairs = [canonical_lipschitz_grid(scores, 10, [3.0, 3.0 * (1 + 1e-12)], rng) for _ in range(200)]
    independent = [
        (canonical_lipschitz(scores, 10, 3.0, rng), canonical_lipschitz(scores, 10, 3.0, rng))
        for _ in range(200)
    ]
    assert all(tail(a) == tail(b) for a, b in pairs)
    assert sum(tail(a) == tail(b) for a, b in independent) < 100


def _pool_small(table: np.ndarray) -> np.ndarray:
    """Merge adjacent columns until every column's total is at least 10 (5 expected per row)."""
    cols, acc = [], np.zeros(2, dtype=int)
    for j in range(table.shape[1]):
        acc = acc + table[:, j]
        if acc.sum() >= 10:
            cols.append(acc)
            acc = np.zeros(2, dtype=int)
    if acc.sum() and cols:
        cols[-1] = cols[-1] + acc
    return np.array(cols).T
