"""A private dp_lm's deviance, logLik, AIC and BIC from its released sigma (audit s13-ruser, finding 3).

R's deviance()/logLik() of a DP dp_lm were refused as "not released" while sigma() gave the residual
standard error from the released statistics, and RSS = sigma² · df.residual.  glance() (and through it
R's deviance(), logLik(), AIC(), BIC()) now gives them from sigma and the public n, with R's formulas
(logLik.lm); dp_glm keeps refusing (nothing it releases determines its deviance).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats.results.lm import released_fit_statistics


@pytest.mark.r
def test_the_formulas_are_rs_logLik_lm_on_the_exact_sigma(rpy2_robjects):
    """At eps = inf sigma is lm's, so the formulas must give R's deviance(), logLik(), AIC(), BIC() of
    lm(mpg ~ wt + hp + factor(cyl), mtcars) to 1e-10 (relative)."""
    from dpstats.rbridge import to_pandas

    r = rpy2_robjects.r
    mtcars = to_pandas(r("mtcars"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        fit = dp.dp_lm("mpg ~ wt + hp + factor(cyl)", mtcars, eps=math.inf)
    ours = released_fit_statistics(fit.sigma, fit.df_residual, len(fit.terms))
    ref = r("f <- lm(mpg ~ wt + hp + factor(cyl), mtcars); c(deviance(f), logLik(f), AIC(f), BIC(f))")
    np.testing.assert_allclose([ours[k] for k in ("deviance", "logLik", "AIC", "BIC")], list(ref), rtol=1e-10)


def test_a_private_fit_glances_them_from_its_released_sigma():
    """At eps = 3 on 2000 rows (seed 4, sigma resolved): deviance = sigma² · df.residual and logLik, AIC,
    BIC follow from it as logLik.lm's formula does, on k + 1 degrees of freedom."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(2000, 2))
    y = np.clip(0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.3 * rng.standard_normal(2000), -2, 2)
    data = {"x1": X[:, 0], "x2": X[:, 1], "y": y}
    fit = dp.dp_lm("y ~ x1 + x2", data, eps=3.0, delta=1e-6, bounds=(-2, 2), random_state=4)
    g = fit.glance().iloc[0]
    assert math.isfinite(fit.sigma) and fit.df_residual == 1997
    rss = fit.sigma**2 * 1997
    assert g["deviance"] == pytest.approx(rss, rel=1e-12)
    ll = -0.5 * 2000 * (math.log(2 * math.pi) + 1 - math.log(2000) + math.log(rss))
    assert g["logLik"] == pytest.approx(ll, rel=1e-12)
    assert g["AIC"] == pytest.approx(-2 * ll + 2 * 4, rel=1e-12)
    assert g["BIC"] == pytest.approx(-2 * ll + math.log(2000) * 4, rel=1e-12)
    assert math.isnan(g["r.squared"])  # needs the exact total sum of squares: not released


def test_they_are_nan_where_sigma_is_or_n_is_private():
    assert all(math.isnan(v) for v in released_fit_statistics(math.nan, 10, 2).values())
    assert all(math.isnan(v) for v in released_fit_statistics(1.0, None, 2).values())
