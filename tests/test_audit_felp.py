"""FELP audits: the strict variant's worst pair, and what the paper variant's Lemma 1 costs.

What the paper variant's assumption costs
-----------------------------------------
``dp_felp(variant="paper")`` adds L2-Laplace noise calibrated to the FELP
paper's Lemma 1, Δ = 2/(nλ), whose proof treats each margin z_i as a function
of row i alone.  But z_i is built from row i's nearest hits and misses, so
one replaced row can enter the neighbourhoods of many rows.  On
``felp_overreach_frames`` (n = 200 rows in [0, 1/√2]², 180 of class 0 in a
tight cluster, the replaced class-1 row placed on a class-0 row vs in its own
cluster; λ = 1, k = 20 bootstrap learners, K = 10 neighbours) the coupled
ensemble average moves by 0.60–2.23 × 2/(nλ) over five draws (seeds
SeedSequence([0, i]), i < 5).  The L2-Laplace release's privacy loss on that
pair is eps·‖Δw̄‖/Δ, so the paper variant's stated eps is not a guarantee on
such data: at eps = 1 the auditor's lower bound is 1.05 (10⁵ runs), above the
claim.  The strict variant (disjoint subsets, norms clipped at C, Δ = 2C/k)
stays within its bound on the same pair (≤ 0.10 × 2C/k).
"""

import numpy as np
import pytest

from dpstats import audit as A


def test_paper_variant_sensitivity_can_exceed_its_claim():
    # five coupled bootstrap draws (same subsets on both neighbours), front-door defaults λ=1, k=20, K=10
    paper = A.felp_sensitivity_check("paper", lam=1.0, n_estimators=20, draws=5, pair="overreach")
    assert paper["claimed_sensitivity"] == pytest.approx(2 / (200 * 1.0))
    # measured: ratios 1.84, 0.91, 2.23, 1.60, 0.60 (deterministic given the seeds); the claim is
    # broken when any ratio exceeds 1, we require a clear margin
    assert paper["ratio"] > 1.5, paper
    assert sum(r > 1 for r in paper["ratios"]) >= 2, paper
    # the margin bound the paper assumes holds on this data: coordinates in [0, 1/√d]
    (U1, _), (U2, _) = A.felp_overreach_frames()
    assert U1.min() >= 0 and U1.max() <= 1 / np.sqrt(U1.shape[1]) + 1e-12
    assert np.count_nonzero(np.any(U1 != U2, axis=1)) == 1  # a replace-one neighbour
    # the strict variant on the same pair and draws stays within 2C/k
    strict = A.felp_sensitivity_check("strict", lam=1.0, n_estimators=20, draws=5, pair="overreach")
    assert strict["ratio"] <= 1.0, strict


def test_paper_variant_release_is_refuted_by_the_auditor():
    # the release conditional on one coupled draw: exact loss 1.13·eps; 10^5 runs give eps_lb 1.05 > 1
    case = A.felp_case(1.0, "paper", lam=1.0, n_estimators=20, pair="overreach")
    assert case.exact_eps > 1.0, case.neighbours
    res = A.audit(case, n_runs=100_000, random_state=0)
    assert not res.passed and res.eps_lb > 1.0, res


def test_strict_worst_pair_has_power_and_holds():
    # one subset's learner moves from ≈0 to its largest weights: 0.21·(2C/k) on every draw checked
    check = A.felp_sensitivity_check("strict", draws=5, pair="worst")
    assert 0.15 < min(check["ratios"]) and check["ratio"] <= 1.0, check
    case = A.felp_case(1.0, "strict", pair="worst")
    assert 0.15 < case.exact_eps <= 1.0, case.neighbours
    # 10^5 runs per neighbour: eps_lb 0.159 (vs ≈0 on the corner pair), below the exact 0.21 and eps = 1
    res = A.audit(case, n_runs=100_000, random_state=0)
    assert res.passed and 0.1 < res.eps_lb <= case.exact_eps + 0.02, res
