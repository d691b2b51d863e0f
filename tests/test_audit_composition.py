"""Empirical audits of composed claims (issue 29): the Clopper–Pearson lower bound on eps of a
composed pair stays at or below the eps that ``dp.compose`` states for it.

* Two Gaussian releases on the worst pair f(D1) = 0, f(D2) = Δ: the pair's output (x₁, x₂) is
  audited through x₁ + x₂, the likelihood-ratio statistic (the composition is one Gaussian of
  multiplier σ/√2, so no event can do better).
* Two one-shot Gumbel top-k selections (the package's selector, vectorised over runs with its
  noise scale 2k/eps) on the shift pair of :func:`dpstats.audit.cases.shift_pair`: the output is
  the pair of selected sets, and the claim is the composition of 2k bounded-range steps (RDP at
  eps²/8 each) — the claim that goes beyond basic composition.

Seeds are fixed; the bound holds with probability >= 1 − alpha = 0.95 for a correct claim, and
each audit also refutes a claim below the truth (a control that the audit has power).
"""

from __future__ import annotations

import numpy as np
import pytest

import dpstats as dp
from dpstats import audit as A
from dpstats.audit.cases import shift_pair
from dpstats.privacy import events as ev
from dpstats.privacy.calibration import analytic_gaussian_sigma
from dpstats.privacy.topk.family import _em_scale

N_RUNS = 200_000


def test_a_composed_pair_of_gaussian_releases_is_audited_below_its_composed_eps():
    sigma = analytic_gaussian_sigma(1.0, 1e-2)  # each release (1, 1e-2)-DP; Δ = 1
    claim = dp.compose([ev.gaussian(sigma)] * 2, delta=2e-2)
    assert claim.eps < 2.0 * 0.8  # well below basic composition
    rng1, rng2 = (np.random.default_rng(s) for s in np.random.SeedSequence(29).spawn(2))
    out1 = rng1.normal(0.0, sigma, (N_RUNS, 2)).sum(axis=1)
    out2 = rng2.normal(1.0, sigma, (N_RUNS, 2)).sum(axis=1)
    r = A.audit_outputs(out1, out2, eps=claim.eps, delta=claim.delta, name="2 Gaussians")
    print(f"claimed {claim.eps:.3f} ({claim.method}), audited eps_lb {r.eps_lb:.3f}")
    assert r.passed and r.eps_lb <= claim.eps, r
    assert r.eps_lb > 0.5 * claim.eps  # the audit is not vacuous
    assert not A.audit_outputs(out1, out2, eps=0.4 * claim.eps, delta=claim.delta).passed


def _gumbel_topk_sets(scores: np.ndarray, k: int, eps: float, n: int, rng) -> np.ndarray:
    """One-shot Gumbel top-k (privacy.topk.family.oneshot_gumbel), n runs at once, as bit masks."""
    a = _em_scale(eps / k, 1.0, False)
    noisy = scores[None, :] + rng.gumbel(0.0, 1.0 / a, size=(n, scores.size))
    top = np.argpartition(-noisy, k - 1, axis=1)[:, :k]
    return (1 << top).sum(axis=1)


@pytest.mark.parametrize("k,eps_each", [(3, 1.5)])
def test_two_topk_selections_are_audited_below_their_composed_eps(k, eps_each):
    d = 6
    s1, s2 = shift_pair(d, k)
    claim = dp.compose([ev.selection_event("oneshot_gumbel", eps_each, k)] * 2, delta=1e-3)
    assert claim.eps < 2 * eps_each  # the bounded-range accounting beats basic composition
    rng1, rng2 = (np.random.default_rng(s) for s in np.random.SeedSequence(30).spawn(2))
    n = N_RUNS // 2  # category events: 100 000 runs keep the audit to a few seconds
    pair1 = _gumbel_topk_sets(s1, k, eps_each, n, rng1) * 64 + _gumbel_topk_sets(s1, k, eps_each, n, rng1)
    pair2 = _gumbel_topk_sets(s2, k, eps_each, n, rng2) * 64 + _gumbel_topk_sets(s2, k, eps_each, n, rng2)
    r = A.audit_outputs(
        pair1.tolist(), pair2.tolist(), eps=claim.eps, delta=claim.delta, kind="category", n_events=6
    )
    print(f"claimed {claim.eps:.3f} ({claim.method}), audited eps_lb {r.eps_lb:.3f}")
    assert r.passed and r.eps_lb <= claim.eps, r
    assert r.eps_lb > 0.3 * claim.eps  # the audit is not vacuous
    assert not A.audit_outputs(
        pair1.tolist(), pair2.tolist(), eps=0.3 * claim.eps, delta=claim.delta, kind="category", n_events=6
    ).passed
