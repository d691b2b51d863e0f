"""dp_lm's Std. Error, statistic and vcov() hang together with its interval and p-value.

Audit s14-ruser, F1: on R's swiss (``Fertility ~ .``, eps = 8, delta = 1e-6, seed 1) the Std. Error was
the s.d. of the bootstrap draws, 14-24 times the scale the 95% interval implies (a few extreme draws from
a near-singular released Gram), and Est./SE no longer ordered the p-values.  std.error is now the
interval's half-width over z and vcov() is D R D (methods.lm, "Std. Error and vcov").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as sps

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods import lm as m

SWISS_BOUNDS = {
    "Fertility": (0, 100),
    "Agriculture": (0, 100),
    "Examination": (0, 100),
    "Education": (0, 100),
    "Catholic": (0, 100),
    "Infant.Mortality": (10, 30),
}
Z975 = float(sps.norm.ppf(0.975))
NEAR_TIE = 1.10  # |statistic| within 10% of each other: the two bootstrap p-values may come either way


@pytest.fixture(scope="module")
def swiss_fits(rpy2_robjects):
    """The audit's call (its R script f1_lm_se_vs_interval.R) for seeds 1-10, default n_boot = 1000."""
    from dpstats.rbridge import to_pandas

    swiss = to_pandas(rpy2_robjects.r("swiss"))
    fits = {}
    for seed in range(1, 11):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ChanceWarning)  # every seed: the noise dominates (n = 47)
            fits[seed] = dp.dp_lm(
                "Fertility ~ .", swiss, eps=8.0, delta=1e-6, bounds=SWISS_BOUNDS, random_state=seed
            )
    return fits


@pytest.mark.r
def test_swiss_std_error_times_z_is_the_intervals_half_width(swiss_fits):
    """For every coefficient of seeds 1-10, std.error * qnorm(0.975) is within 10% of the half-width of
    confint() (the audit's ratio was up to 24 at seed 1, 2.3 at seeds 5 and 7)."""
    for seed, fit in swiss_fits.items():
        t = fit.tidy()
        ci = fit.confint().to_numpy()
        half = (ci[:, 1] - ci[:, 0]) / 2.0
        np.testing.assert_allclose(t["std.error"] * Z975, half, rtol=0.10, err_msg=f"seed {seed}")


@pytest.mark.r
def test_vcov_diagonal_is_std_error_squared_and_coeftest_gives_tidys_statistic(swiss_fits):
    """vcov() = D R D: its diagonal is std.error² (1e-12), it is positive semi-definite, and coef() /
    sqrt(diag(vcov())) is tidy()'s statistic (what lmtest::coeftest computes)."""
    for seed, fit in swiss_fits.items():
        t, V = fit.tidy(), fit.vcov().to_numpy()
        np.testing.assert_allclose(np.diag(V), t["std.error"] ** 2, rtol=1e-12, err_msg=f"seed {seed}")
        np.testing.assert_allclose(V, V.T, rtol=0, atol=0)
        assert np.linalg.eigvalsh(V)[0] >= -1e-12 * np.abs(V).max(), seed
        np.testing.assert_allclose(fit.coef() / np.sqrt(np.diag(V)), t["statistic"], rtol=1e-12)


def _misordered_pairs(fit) -> list[tuple[str, str]]:
    """Pairs (i, j) with |statistic_i| more than NEAR_TIE times |statistic_j| but p_i > p_j."""
    t = fit.tidy()
    a, p, terms = np.abs(t["statistic"].to_numpy()), t["p.value"].to_numpy(), t["term"].tolist()
    return [
        (terms[i], terms[j])
        for i in range(a.size)
        for j in range(a.size)
        if a[i] > NEAR_TIE * a[j] and p[i] > p[j]
    ]


@pytest.mark.r
@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(
            1,
            marks=pytest.mark.xfail(
                strict=True,
                reason="the pivot law is strongly skewed (Agriculture's interval runs 4.8 below its estimate "
                "and 9.9 above): the p-values follow the asymmetric interval, which no symmetric std.error "
                "can order (methods.lm, 'Std. Error and vcov')",
            ),
        ),
        *range(2, 11),
    ],
)
def test_swiss_p_values_are_ordered_by_abs_statistic(swiss_fits, seed):
    """Within each fit a larger |statistic| has a p-value no larger, except near-ties (|statistic| within
    10%: seeds 3 and 10 each have one pair 4-5% apart whose p-values differ by 0.012-0.014).  With the s.d.
    of the draws as std.error seeds 7 and 10 failed this too."""
    assert _misordered_pairs(swiss_fits[seed]) == []


def test_interval_table_scale_is_the_normal_sd_and_ignores_a_few_extreme_draws():
    """Oracle: draws from a known normal law (sd 2 and 0.5, correlation -0.6), B = 1000, seed 4.  std.error
    is within 10% of the true sd (the quantile scale's Monte Carlo s.e. is about 3% here) and vcov within
    0.1 in correlation; 5 draws in 1000 blown up by 1e4 (what a near-singular released Gram gives) move
    the s.d. of the draws by more than 10 times but std.error and the correlation by less than 5%."""
    rng = np.random.default_rng(4)
    sd, corr = np.array([2.0, 0.5]), -0.6
    cov = np.outer(sd, sd) * np.array([[1.0, corr], [corr, 1.0]])
    draws = rng.multivariate_normal(np.zeros(2), cov, 1000)
    estimate = np.array([1.0, -0.2])
    clean = m.interval_table(estimate, draws, 0.95, "pivot")
    np.testing.assert_allclose(clean["std.error"], sd, rtol=0.10)
    V = clean["vcov"]
    assert abs(V[0, 1] / np.sqrt(V[0, 0] * V[1, 1]) - corr) < 0.1
    np.testing.assert_allclose(np.diag(V), clean["std.error"] ** 2, rtol=1e-12)
    np.testing.assert_allclose(clean["statistic"], estimate / clean["std.error"], rtol=1e-12)
    wild = draws.copy()
    wild[:5] *= 1e4
    assert (wild.std(axis=0) > 10 * draws.std(axis=0)).all()
    dirty = m.interval_table(estimate, wild, 0.95, "pivot")
    np.testing.assert_allclose(dirty["std.error"], clean["std.error"], rtol=0.05)
    np.testing.assert_allclose(dirty["vcov"], clean["vcov"], rtol=0.10)


@pytest.mark.parametrize("conf_level", [0.9, 0.95, 0.99])
def test_std_error_spans_the_interval_at_the_fits_level(conf_level):
    """At any conf_level (percentile and pivot intervals alike) std.error * z_{1-α/2} is exactly the
    interval's half-width (1e-12): confint() and Estimate ± z·SE have the same width."""
    draws = np.random.default_rng(5).standard_t(4, (1000, 3))
    z = float(sps.norm.isf((1 - conf_level) / 2))
    for interval in m.INTERVALS:
        t = m.interval_table(np.zeros(3), draws, conf_level, interval)
        np.testing.assert_allclose(t["std.error"] * z, (t["conf.high"] - t["conf.low"]) / 2, rtol=1e-12)
