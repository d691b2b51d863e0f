"""The empirical auditor (dpstats.audit) and the Gaussian calibration: fast suite.

Every audit here runs the mechanism through the privacy core or the method's
plain functions with *seeded numpy generators*; the OpenDP samplers used for
unseeded releases are not exercised (too slow for thousands of runs).

Statistical tolerances are stated at each assertion.  An audit's eps_lb is a
lower bound holding with probability >= 1 − alpha (alpha = 0.05, Bonferroni
inside), so a correct mechanism fails an audit with probability <= 0.05 per
seed; fixed seeds make the suite deterministic.
"""

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import binomtest, norm

from dpstats import audit as A
from dpstats.errors import PrivacyParameterError
from dpstats.privacy.calibration import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian_delta


# ----------------------------------------------------------------------------- Clopper–Pearson
@pytest.mark.parametrize("x,n", [(0, 50), (1, 50), (25, 50), (49, 50), (50, 50), (3, 10_000)])
def test_clopper_pearson_matches_exact_binomial_interval(x, n):
    # one-sided bounds at alpha are the ends of the exact two-sided (1 − 2 alpha) interval
    lo, hi = A.clopper_pearson(x, n, 0.025)
    ci = binomtest(x, n).proportion_ci(confidence_level=0.95, method="exact")
    assert lo == pytest.approx(ci.low, abs=1e-10) and hi == pytest.approx(ci.high, abs=1e-10)


def test_clopper_pearson_lower_bound_covers():
    # P(lower <= p) >= 1 − alpha: over 4000 binomial draws the miss rate is <= alpha = 0.1
    # plus 3 binomial standard errors (0.1 + 3·sqrt(0.1·0.9/4000) ≈ 0.114)
    rng = np.random.default_rng(5)
    p, n = 0.07, 300
    misses = sum(A.clopper_pearson(int(x), n, 0.1)[0] > p for x in rng.binomial(n, p, 4000))
    assert misses / 4000 <= 0.114


# ----------------------------------------------------------------------------- auditor
def test_correct_laplace_passes_with_power():
    # a correct eps = 1 Laplace: eps_lb <= 1 (the claim holds) and > 0.85 (the events reach it)
    res = A.audit(A.laplace_case(eps=1.0), n_runs=20_000, random_state=0)
    assert res.passed and 0.85 < res.eps_lb <= 1.0, res
    assert res.delta_lb == 0 and res.n_test == 16_000


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_broken_laplace_with_halved_sensitivity_is_caught(seed):
    # sensitivity halved => true eps = 2; the audit must refute the claimed eps = 1
    res = A.audit(A.laplace_case(eps=1.0, broken=True), n_runs=5_000, random_state=seed)
    assert not res.passed and res.eps_lb > 1.3, res


def test_broken_l2_laplace_is_caught_and_correct_passes():
    good = A.audit(A.l2_laplace_case(eps=1.0), n_runs=5_000, random_state=3)
    bad = A.audit(A.l2_laplace_case(eps=1.0, broken=True), n_runs=5_000, random_state=3)
    assert good.passed and not bad.passed, (good, bad)


def test_broken_gaussian_is_caught_at_eps_2():
    # halved sensitivity at claimed (2, 1e-5): the delta-adjusted bound exceeds eps
    bad = A.audit(A.gaussian_case(2.0, 1e-5, broken=True), n_runs=30_000, random_state=4)
    assert not bad.passed and bad.delta_lb > 1e-5, bad


def test_false_alarm_rate_is_below_alpha():
    # 40 audits of exact Laplace samples at the true eps: each fails with prob <= 0.05;
    # P(Binomial(40, 0.05) >= 6) < 0.015, so more than 5 failures would refute the bound
    rng = np.random.default_rng(11)
    fails = 0
    for _ in range(40):
        a, b = rng.laplace(0.0, 1.0, 2_000), rng.laplace(1.0, 1.0, 2_000)
        fails += not A.audit_outputs(a, b, eps=1.0).passed
    assert fails <= 5


def test_events_are_chosen_on_held_out_runs_only():
    # permuting the tested 80% cannot change the chosen event; changing the held-out 20% can
    rng = np.random.default_rng(2)
    a, b = rng.laplace(0, 1, 5_000), rng.laplace(1, 1, 5_000)
    r1 = A.audit_outputs(a, b, eps=1.0)
    a2, b2 = a.copy(), b.copy()
    rng.shuffle(a2[1000:]), rng.shuffle(b2[1000:])
    r2 = A.audit_outputs(a2, b2, eps=1.0)
    assert (r1.event, r1.eps_lb) == (r2.event, r2.eps_lb)


def test_category_outputs_and_errors():
    rng = np.random.default_rng(0)
    # randomized response on one bit with eps = ln 3: P(truth) = 3/4
    a = [(0,) if u < 0.75 else (1,) for u in rng.random(20_000)]
    b = [(1,) if u < 0.75 else (0,) for u in rng.random(20_000)]
    ok = A.audit_outputs(a, b, eps=math.log(3), kind="category")
    assert ok.passed and ok.eps_lb > 0.9, ok
    assert not A.audit_outputs(a, b, eps=0.5, kind="category").passed
    with pytest.raises(ValueError, match="at least 50 runs"):
        A.audit_outputs([1.0] * 10, [2.0] * 10, eps=1.0)


# ----------------------------------------------------------------------------- Gaussian calibration
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (0.5, 1e-5), (1.0, 1e-5), (4.0, 1e-8)])
def test_analytic_sigma_is_minimal_and_tighter_than_classic(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    assert gaussian_delta(eps, sigma) <= delta < gaussian_delta(eps, sigma * (1 - 1e-6))
    if eps < 1:
        assert sigma < classic_gaussian_sigma(eps, delta)


def test_gaussian_delta_matches_privacy_loss_integral():
    # independent check of Balle & Wang Theorem 8: delta(eps) = E_P[(1 − e^{eps − L})_+]
    # with L(x) = (x·Δ − Δ²/2)/σ² the privacy loss of N(0,σ²) vs N(Δ,σ²) at x ~ N(0, σ²)... mirrored
    eps, sigma, sens = 0.7, 1.3, 1.0

    def integrand(x):
        loss = (sens**2 / 2 - x * sens) / sigma**2  # log p0(x)/p1(x)
        return norm.pdf(x, 0, sigma) * max(0.0, 1 - math.exp(eps - loss))

    numeric = integrate.quad(integrand, -40, 40, points=[0.0], limit=200)[0]
    assert gaussian_delta(eps, sigma, sens) == pytest.approx(numeric, rel=1e-6)


def test_calibration_rejects_bad_parameters():
    with pytest.raises(PrivacyParameterError, match="eps < 1"):
        classic_gaussian_sigma(2.0, 1e-5)
    for bad in [(0, 1e-5), (1.0, 0.0), (1.0, 1.0), (math.inf, 1e-5), (1.0, 1e-5, -1.0)]:
        with pytest.raises(PrivacyParameterError):
            analytic_gaussian_sigma(*bad)


# ----------------------------------------------------------------------------- top-k against exact laws
@pytest.mark.parametrize("selector", ["peeling", "oneshot_gumbel", "joint"])
def test_family_exact_eps_within_claim_on_random_pairs(selector):
    # exact laws (no sampling): the worst of 40 random neighbouring pairs at d = 4, k = 2
    s1, s2, exact = A.worst_topk_pair(selector, 4, 2, 1.0, n_pairs=40, random_state=7)
    assert exact <= 1.0 + 1e-6, (s1, s2, exact)


@pytest.mark.parametrize("selector", ["peeling", "oneshot_gumbel", "joint"])
def test_family_audit_on_exact_worst_pair(selector):
    s1, s2, exact = A.worst_topk_pair(selector, 4, 2, 1.0, n_pairs=40, random_state=7)
    res = A.audit(A.topk_case(1.0, k=2, selector=selector, pair=(s1, s2)), n_runs=4_000, random_state=1)
    # eps_lb is a 95% lower bound on the pair's exact eps; allow 0.02 for integration error
    assert res.passed and res.eps_lb <= exact + 0.02, (res, exact)


def test_canonical_lipschitz_exact_eps_within_claim():
    # The exact law of the implemented canonical Lipschitz mechanism
    # (privacy.topk.canonical_lipschitz_distribution) on neighbouring score pairs.
    # At the time of writing this FAILS: pair eps ≈ 1.58 > 1 at d = 5, k = 3 (and ln 2 at
    # claimed eps = 0.01 on the shift pair), because classes C(h, t) overlap (a member may hold
    # rank h+1), so a set's probability sums over several classes.  See the audit report.
    s1, s2, exact = A.worst_topk_pair("canonical_lipschitz", 5, 3, 1.0, n_pairs=40, random_state=0)
    assert exact <= 1.0 + 1e-6, f"canonical Lipschitz is not 1-DP on {s1} vs {s2}: exact eps {exact:.3f}"


def test_shift_pair_and_sis_frames_have_the_intended_scores():
    s1, s2 = A.shift_pair(4, 2)
    assert np.max(np.abs(s1 - s2)) == 1.0
    d1, d2 = A.sis_frames(np.array([3.0, 3, 1, 2, 4]), np.array([3.0, 4, 2, 1, 4]))
    assert len(d1) == len(d2) and (d1.iloc[:-1] == d2.iloc[:-1]).all().all()  # one row replaced
    assert d1.abs().max().max() <= 1 and d2.abs().max().max() <= 1  # inside the bounds
    assert np.allclose(np.abs(d1.iloc[:, 1:].sum()), 2 * np.array([3.0, 3, 1, 2, 4]))
    assert np.allclose(np.abs(d2.iloc[:, 1:].sum()), 2 * np.array([3.0, 4, 2, 1, 4]))


def test_sis_front_door_equals_plain_path_run_for_run():
    # the front-door audit and the plain-function audit exercise the same draws:
    # with the same generator state the two paths select the same set, for 100 states
    pair = (np.array([3.0, 3, 1, 2, 4]), np.array([3.0, 4, 2, 1, 4]))
    plain = A.sis_case(1.0, pair=pair, k=3)
    front = A.sis_case(1.0, pair=pair, k=3, front_door=True)
    for seed in range(100):
        a = plain.run(plain.d1, 1, np.random.default_rng(seed))
        b = front.run(front.d1, 1, np.random.default_rng(seed))
        assert a == b


def test_every_method_has_audit_cases():
    assert A.METHOD_LABELS == ("two-stage", "knockoff", "dp_gmm", "FELP", "vertical GLM")
    for label in A.METHOD_LABELS:
        assert A.methods._METHOD_CASES[label](1.0), label


# ----------------------------------------------------------------------------- methods


@pytest.mark.parametrize("topk", ["joint", "peeling", "canonical_lipschitz"])
def test_two_stage_vote_selection_audit(topk):
    # the exact eps of the vote-count pair must be within the claim (FAILS for canonical_lipschitz at
    # the time of writing: the selector's defect), and the empirical audit must agree
    case = A.two_stage_case(1.0, topk=topk)
    assert np.max(np.abs(case.d1 - case.d2)) == 1.0  # one block's vote moves every count by <= 1
    assert case.exact_eps <= 1.0 + 1e-6, f"{topk}: exact eps {case.exact_eps:.3f} on the vote pair"
    res = A.audit(case, n_runs=4_000, random_state=5)
    assert res.passed and res.eps_lb <= case.exact_eps + 0.02, res


def test_felp_strict_sensitivity_holds_on_coupled_draws():
    # strict variant: for every partition the average moves by <= 2C/k; 10 coupled draws of the
    # worst-corner neighbours stay below it, and the audited release is consistent with eps = 1
    check = A.felp_sensitivity_check("strict", draws=10)
    assert check["observed"] <= check["claimed_sensitivity"], check
    res = A.audit(A.felp_case(1.0, "strict"), n_runs=3_000, random_state=6)
    assert res.passed, res


@pytest.mark.parametrize("method", ["I", "II"])
def test_knockoff_release_audit(method):
    # the front door's own (declared, data-independent) calibration, captured; 3 000 runs of
    # run_mechanism per neighbour, released b on the worst pair: consistent with (1, 0.01)
    res = A.audit(A.knockoff_case(1.0, method=method), n_runs=3_000, random_state=7)
    assert res.passed, res


def test_gmm_steps_audit():
    # AboveThreshold radius (pure eps) and private PCA (rho-zCDP read as (1, 1e-6)) on worst neighbours
    for case in (A.gmm_radius_case(1.0), A.gmm_pca_case(1.0)):
        res = A.audit(case, n_runs=5_000, random_state=8)
        assert res.passed, res


def test_vertical_coefficient_sensitivity_and_audit():
    # the block's coefficient change on both replaced-row pairs stays within 2R/(n·lam), the worst
    # pair (offset ±10, y flipped) reaches > 0.9 of it, and the Gaussian release calibrated from it
    # is consistent with (1, 1e-6) and has power at 10^5 runs (eps_lb ≈ 0.31; the milder pair ≈ 0.07)
    from dpstats.methods import privreg as vm

    for lam in (0.1, 1.0, 5.0):
        (X1, y1), (X2, y2), R = A.vertical_frames()
        (W1, z1, o1), (W2, z2, o2), _ = A.vertical_worst_frames()
        args = (vm.FAMILIES["binomial"], vm.Penalty("ridge", lam), np.ones(2))
        bound = vm.binomial_ridge_sensitivities(len(y1), R, lam, 4.0)[1]
        b1 = vm.fit_block(vm.BlockProblem(X1, y1, *args), np.zeros(len(y1)), np.zeros(2))
        b2 = vm.fit_block(vm.BlockProblem(X2, y2, *args), np.zeros(len(y2)), np.zeros(2))
        assert np.linalg.norm(b1 - b2) <= bound
        w1 = vm.fit_block(vm.BlockProblem(W1, z1, *args), o1, np.zeros(2))
        w2 = vm.fit_block(vm.BlockProblem(W2, z2, *args), o2, np.zeros(2))
        assert np.linalg.norm(w1 - w2) <= bound
    assert np.linalg.norm(w1 - w2) > 0.9 * bound  # lam = 5: the bound is nearly attained
    res = A.audit(A.vertical_coefficient_case(1.0), n_runs=100_000, random_state=9)
    assert res.passed and res.eps_lb > 0.2, res
