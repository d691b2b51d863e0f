"""Slow audits: 10^5 runs per neighbour for the noise mechanisms, 5·10^4 for the
top-k selectors (2.5·10^4 for the slower joint sampler and DP-SIS), 1 500 through the
dp_sis front door (about 2 ms a run).

Seeded numpy noise is what these audits exercise (see dpstats.audit).  Each audit
passes when its Clopper–Pearson lower bound eps_lb (95%, Bonferroni inside) does
not exceed the claimed eps and delta_lb does not exceed the claimed delta.
Total time about 45 s on a loaded core.
"""

import numpy as np
import pytest

from dpstats import audit as A

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "case,low",
    [
        (lambda: A.laplace_case(1.0), 0.93),  # resolution ±0.05 at 10^5 runs
        (lambda: A.laplace_case(0.3, sensitivity=2.0), 0.25),
        (lambda: A.gaussian_case(1.0, 1e-5), 0.3),
        (lambda: A.gaussian_case(2.0, 1e-5), 1.0),
        (lambda: A.gaussian_case(0.9, 1e-5, calibration="classic"), 0.15),
    ],
)
def test_noise_mechanisms_at_1e5_runs(case, low):
    # claim holds (eps_lb <= eps, delta_lb <= delta) and the audit has power (eps_lb > low)
    res = A.audit(case(), n_runs=100_000, random_state=10)
    assert res.passed and res.eps_lb > low, res


def test_l2_laplace_at_5e4_runs():
    res = A.audit(A.l2_laplace_case(1.0, dim=3), n_runs=50_000, random_state=11)
    assert res.passed and res.eps_lb > 0.7, res


def test_broken_gaussian_caught_at_1e5_runs():
    res = A.audit(A.gaussian_case(2.0, 1e-5, broken=True), n_runs=100_000, random_state=12)
    assert not res.passed and res.eps_lb > 2.1, res


@pytest.mark.parametrize("selector", ["peeling", "oneshot_gumbel", "joint"])
def test_topk_family_on_exact_worst_pair_at_5e4_runs(selector):
    s1, s2, exact = A.worst_topk_pair(selector, 5, 2, 1.0, n_pairs=60, random_state=0)
    n_runs = 25_000 if selector == "joint" else 50_000  # the joint sampler is ~3x slower
    res = A.audit(A.topk_case(1.0, k=2, selector=selector, pair=(s1, s2)), n_runs=n_runs, random_state=13)
    # a valid lower bound on the pair's exact eps (0.02 allowed for quadrature error)
    assert res.passed and res.eps_lb <= exact + 0.02, (res, exact)
    assert res.eps_lb > 0.6 * exact, (res, exact)


def test_canonical_lipschitz_on_exact_worst_pair_at_5e4_runs():
    # FAILS at the time of writing: eps_lb ≈ 1.4 > claimed 1 (exact pair eps ≈ 1.58).
    s1, s2, exact = A.worst_topk_pair("canonical_lipschitz", 5, 3, 1.0, n_pairs=60, random_state=0)
    res = A.audit(A.topk_case(1.0, k=3, pair=(s1, s2)), n_runs=50_000, random_state=14)
    assert res.eps_lb <= exact + 0.02, (res, exact)  # the auditor is sound
    assert res.passed, f"canonical Lipschitz refuted: {res}"


@pytest.mark.parametrize("topk", ["canonical_lipschitz", "joint"])
def test_dp_sis_plain_on_worst_frames_at_25e3_runs(topk):
    # FAILS for canonical_lipschitz at the time of writing (the selector's defect, not DP-SIS's)
    k = 3 if topk == "canonical_lipschitz" else 2
    s1, s2, exact = A.worst_topk_pair(topk, 5, k, 1.0, n_pairs=60, random_state=0)
    res = A.audit(A.sis_case(1.0, pair=(s1, s2), k=k, topk=topk), n_runs=25_000, random_state=15)
    assert res.passed, res


def test_dp_sis_front_door_end_to_end():
    # 1 500 calls of dp_sis per neighbouring frame; FAILS at the time of writing (canonical Lipschitz)
    s1, s2, _ = A.worst_topk_pair("canonical_lipschitz", 5, 3, 1.0, n_pairs=60, random_state=0)
    res = A.audit(A.sis_case(1.0, pair=(s1, s2), k=3, front_door=True), n_runs=1_500, random_state=16)
    assert res.passed, res


def test_standard_table_controls_are_refuted():
    # every deliberately broken control in the benchmark's table is refuted at 3·10^4 runs
    broken = [c for c in A.standard_cases(1.0, n_pairs=40) if "BROKEN" in c.name]
    assert len(broken) == 5  # Laplace, Gaussian, L2-Laplace, peeling top-k, private BH
    for case in broken:
        res = A.audit(case, n_runs=30_000, random_state=17)
        assert not res.passed, res
    assert np.isfinite([c.eps for c in broken]).all()


def test_method_audits_at_2e4_runs():
    # every method's audit case (two-stage votes, FELP strict and paper, knockoff I/II,
    # dp_gmm steps, vertical GLM coefficients) is consistent with its claim at 2·10^4 runs
    cases = A.method_cases(1.0)
    assert len(cases) >= len(A.METHOD_LABELS)
    for case in cases:
        res = A.audit(case, n_runs=20_000, random_state=18)
        assert res.passed, res


def test_knockoff_method_two_worst_pair_is_within_its_claim():
    # the pair (row B·e_p, y at Theorem 5's residual bound) gave eps_lb ≈ 0.16 at 2·10^4 runs against the
    # paper's Δ₂.  Since the outside audit's F4 the responses are clipped to Y = B·beta_norm + σt (≈ 3.3
    # here, below the pair's ±18.6) and Δ₂ covers a replaced row anywhere within B and Y, a bound this
    # pair does not approach (eps_lb ≈ 0): the audit checks validity here; the power of the audit on the
    # clip is shown by test_knockoff_response_bound.py::test_the_audit_refutes_an_unclipped_response
    res = A.audit(A.knockoff_case(1.0, method="II"), n_runs=20_000, random_state=18)
    assert res.passed, res


def test_dp_gmm_end_to_end_at_3000_runs():
    # the whole dp_gmm pipeline (k=2, d=2, n=41), one corner row moved across the box, 3 000
    # front-door calls per neighbour (~10 s): consistent with (1, 1e-3); eps_lb ≈ 0 (weak power)
    res = A.audit(A.gmm_end_to_end_case(1.0, 1e-3), n_runs=3_000, random_state=19)
    assert res.passed, res
