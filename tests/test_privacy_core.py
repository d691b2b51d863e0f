"""Privacy core: accountant, ledger, statement, randomness policy."""

import math
import threading

import numpy as np
import pytest

from dpstats.errors import BudgetExceededError, NonPrivateWarning, PrivacyParameterError
from dpstats.privacy.accountant import Accountant, LedgerEntry
from dpstats.privacy.randomness import FastNoise, NoiseSource, make_generator
from dpstats.privacy.statement import DataDependence, PrivacyStatement


def test_accountant_spends_and_refuses_atomically():
    acc = Accountant(eps=1.0, delta=1e-6)
    acc.spend([LedgerEntry("a", "Laplace", 0.3), LedgerEntry("b", "Gaussian", 0.2, 5e-7)], "first")
    assert acc.spent_eps == pytest.approx(0.5) and acc.spent_delta == pytest.approx(5e-7)
    with pytest.raises(BudgetExceededError, match="Nothing was spent"):
        acc.spend([LedgerEntry("c", "Laplace", 0.6)], "too much")
    assert len(acc.charges) == 1 and acc.remaining_eps == pytest.approx(0.5)
    with pytest.raises(BudgetExceededError):
        acc.spend([LedgerEntry("d", "Gaussian", 0.1, 6e-7)], "delta too much")
    acc.spend([LedgerEntry("e", "Laplace", 0.5)], "exactly the rest")
    assert acc.remaining_eps == pytest.approx(0.0, abs=1e-12)
    assert [e.step for e in acc.ledger] == ["a", "b", "e"]


def test_ledger_sums_exactly_with_many_small_steps():
    entries = [LedgerEntry(f"s{i}", "Laplace", 0.1) for i in range(10)]
    acc = Accountant(eps=1.0)
    acc.spend(entries)  # fsum: ten 0.1 steps make exactly 1.0
    assert acc.spent_eps == 1.0


def test_concurrent_spends_never_overspend():
    acc = Accountant(eps=1.0)
    accepted = []

    def worker():
        for _ in range(50):
            try:
                acc.spend([LedgerEntry("x", "Laplace", 0.013)])
                accepted.append(1)
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == int(1.0 // 0.013)
    assert acc.spent_eps <= 1.0 + 1e-12


def test_accountant_rejects_bad_budgets():
    with pytest.raises(PrivacyParameterError):
        Accountant(eps=0)
    with pytest.raises(PrivacyParameterError):
        Accountant(eps=1, delta=1.0)


def test_statement_checks_ledger_sum_and_speaks_plainly():
    entries = [
        LedgerEntry("a", "Laplace", 0.25, sensitivity="Δ1 = 2"),
        LedgerEntry("b", "Gaussian", 0.75, 1e-6),
    ]
    st = PrivacyStatement(
        "test", 1.0, 1e-6, "replace", entries, data_dependent_steps=["max-abs scaling"], seeded=True
    )
    text = st.plain_language()
    assert "(1, 1e-06)-differentially private" in text and "replacing one row" in text
    assert "max-abs scaling" in text and "not for release" in text
    assert st.mechanisms == ["Laplace mechanism", "Gaussian mechanism"]
    with pytest.raises(AssertionError):
        PrivacyStatement("test", 2.0, 1e-6, "replace", entries)


def test_data_dependence_warns_or_refuses():
    dd = DataDependence(strict=False)
    with pytest.warns(NonPrivateWarning, match="max-abs"):
        dd.add("max-abs scaling", fix="declare bounds")
    assert dd.steps == ["max-abs scaling"]
    with pytest.raises(PrivacyParameterError, match="strict=True refuses.*declare bounds"):
        DataDependence(strict=True).add("max-abs scaling", fix="declare bounds")


def test_seeded_runs_reproduce_and_say_so():
    a, b = NoiseSource(random_state=7), NoiseSource(random_state=7)
    np.testing.assert_array_equal(a.laplace(np.zeros(5), 1.0), b.laplace(np.zeros(5), 1.0))
    assert a.seeded and any("numpy" in s for s in a.samplers)


def test_unseeded_runs_use_opendp_samplers():
    src = NoiseSource(random_state=None)
    out = src.laplace(np.zeros(2000), 2.0)
    assert not src.seeded and any("OpenDP" in s for s in src.samplers)
    assert np.std(out) == pytest.approx(2.0 * math.sqrt(2), rel=0.1)
    g = src.gaussian(np.zeros(2000), 3.0)
    assert np.std(g) == pytest.approx(3.0, rel=0.1)


def test_l2_laplace_norm_is_gamma():
    from scipy import stats

    src = NoiseSource(random_state=3)
    d, scale = 5, 0.7
    norms = np.array([np.linalg.norm(src.l2_laplace(np.zeros(d), scale)) for _ in range(3000)])
    assert stats.kstest(norms, stats.gamma(a=d, scale=scale).cdf).pvalue > 0.001


def test_fast_noise_draws_what_a_seeded_noise_source_draws():
    # simulations (FastNoise) and seeded releases (NoiseSource) share the numpy samplers
    fast, src = FastNoise(np.random.default_rng(11)), NoiseSource(np.random.default_rng(11))
    for name, scale in (("laplace", 0.5), ("gaussian", 2.0), ("l2_laplace", 0.7), ("gaussian", 0.0)):
        a = getattr(fast, name)(np.arange(6.0).reshape(2, 3), scale)
        b = getattr(src, name)(np.arange(6.0).reshape(2, 3), scale)
        assert np.array_equal(a, b), name
    assert fast.generator.random() == src.generator.random()


def test_calibrate_gaussian_is_analytic_for_every_eps():
    """The doors' Gaussian calibration is the analytic one for every eps (it was the classic one below
    eps = 1, which adds noise the budget does not need: 19.38 against 14.06 here)."""
    from dpstats.privacy.calibration import (
        analytic_gaussian_sigma,
        calibrate_gaussian,
        classic_gaussian_sigma,
    )

    assert calibrate_gaussian(0.5, 1e-5, 2.0)[0] == analytic_gaussian_sigma(0.5, 1e-5, 2.0)
    assert calibrate_gaussian(0.5, 1e-5, 2.0)[0] < classic_gaussian_sigma(0.5, 1e-5, 2.0)
    assert calibrate_gaussian(1.5, 1e-5, 2.0)[0] == analytic_gaussian_sigma(1.5, 1e-5, 2.0)
    assert calibrate_gaussian(math.inf, 1e-5, 2.0) == (0.0, "none (eps = inf)")


def test_normal_cdf_and_its_log_equal_scipy():
    """Oracle: scipy.special.ndtr and log_ndtr, on a grid through both tails and the switch points."""
    from scipy.special import log_ndtr, ndtr

    from dpstats.privacy.calibration import log_normal_cdf, normal_cdf

    xs = np.concatenate([np.linspace(-80, 12, 9201), [-37.0, -37.0 - 1e-9, -36.9, -1e-12, 0.0, 1e-12]])
    for x in xs:
        if x > -37:
            assert normal_cdf(x) == pytest.approx(ndtr(x), rel=1e-13, abs=0), x
        assert log_normal_cdf(x) == pytest.approx(log_ndtr(x), rel=1e-13, abs=1e-300), x


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 10.0, 50.0])
@pytest.mark.parametrize("delta", [0.3, 1e-3, 1e-6, 1e-12])
def test_analytic_gaussian_sigma_equals_brent_on_scipy(eps, delta):
    """Oracle: the same condition (Balle & Wang 2018, Theorem 8) through scipy's ndtr/log_ndtr and
    Brent's method; the bisection's sigma agrees to 1e-12 relative and is feasible there too."""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr, ndtr

    from dpstats.privacy.calibration import analytic_gaussian_sigma

    def excess(sigma, sens):
        a, b = sens / (2 * sigma), eps * sigma / sens
        return float(ndtr(a - b)) - math.exp(eps + float(log_ndtr(-a - b))) - delta

    for sens in (0.2, 1.0, 40.0):
        lo, hi = sens * 1e-6, sens * 1e6
        root = brentq(excess, lo, hi, args=(sens,), xtol=1e-15 * sens, rtol=1e-15)
        ours = analytic_gaussian_sigma(eps, delta, sens)
        assert ours == pytest.approx(root, rel=1e-11)
        assert excess(ours, sens) <= 0


def _exact_gaussian_delta(eps: float, sigma: float):
    """Balle & Wang's δ(ε) at sensitivity 1 in 200-digit arithmetic (mpmath's ncdf and exp)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(200):
        e, s = mpmath.mpf(eps), mpmath.mpf(sigma)
        a, b = 1 / (2 * s), e * s
        return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b)


@pytest.mark.parametrize("eps", [1e12, 1e20, 1e300, 1.7976931348623157e308])
def test_analytic_gaussian_sigma_at_huge_eps(eps):
    """It raised OverflowError from eps ~ 1e20 (e^ε·Φ(−a−b) in floating point; a ≈ b ≈ √(ε/2), so
    the bisection cannot resolve a − b either).  Oracle: δ(σ) exact in 200 digits (mpmath): σ meets
    the constraint, 3e-12 less does not, and σ·√(2ε) → 1 (σ → Δ/√(2ε))."""
    from dpstats.privacy.calibration import (
        analytic_gaussian_sigma,
        gaussian_delta,
        gaussian_rho_from_eps_delta,
    )

    sigma = analytic_gaussian_sigma(eps, 1e-5)
    assert _exact_gaussian_delta(eps, sigma) <= 1e-5 < _exact_gaussian_delta(eps, sigma * (1 - 3e-12))
    assert sigma * math.sqrt(2) * math.sqrt(eps) == pytest.approx(1.0, rel=5e-6)
    assert gaussian_delta(eps, sigma) == pytest.approx(
        float(_exact_gaussian_delta(eps, sigma)), rel=1e-4, abs=1e-300
    )
    assert 0 < gaussian_rho_from_eps_delta(eps, 1e-5) < math.inf
    assert analytic_gaussian_sigma(eps, 1e-5, 3.0) == pytest.approx(3 * sigma, rel=1e-15)


def test_analytic_gaussian_sigma_refuses_a_sigma_below_the_doubles():
    from dpstats.privacy.calibration import analytic_gaussian_sigma

    with pytest.raises(PrivacyParameterError, match="below the smallest normal double; use a smaller eps"):
        analytic_gaussian_sigma(1e300, 1e-5, 1e-200)


def test_make_generator_validates():
    assert make_generator(None)[1] is False
    with pytest.raises(PrivacyParameterError):
        make_generator(-1)
    with pytest.raises(PrivacyParameterError):
        make_generator("seed")


def test_data_dependent_step_warnings_point_at_the_users_call():
    # every front door reaches DataDependence.add through the skeleton; the warning names the caller's line
    import dpstats as dp
    from dpstats.errors import NonPrivateWarning

    df = dp.datasets.fan_lv(n=100, d=20, random_state=0)
    with pytest.warns(NonPrivateWarning) as caught:
        dp.dp_sis("y ~ .", df, eps=1.0, random_state=0)
    assert {w.filename for w in caught} == {__file__}
    # the formula layer's and a method's own warnings too (rows dropped; FELP's paper variant)
    gappy = df.copy()
    gappy.loc[3, "x2"] = float("nan")
    with pytest.warns(UserWarning) as caught:
        dp.dp_sis("y ~ .", gappy, eps=1.0, bounds=(-5, 5), random_state=0)
        labelled = df.assign(y=(df["y"] > 0).map({True: "a", False: "b"}))
        dp.dp_felp("y ~ x1 + x3", labelled, eps=1.0, n_estimators=2, random_state=0)
    assert len(caught) >= 3 and {w.filename for w in caught} == {__file__}
