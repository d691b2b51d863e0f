"""A private dp_lm's deviance from its released sigma; no logLik, AIC or BIC (audits s13-ruser F3, s16-rusers3 F6).

R's deviance() of a DP dp_lm was refused as "not released" while sigma() gave the residual standard
error from the released statistics, and RSS = sigma² · df.residual: glance() (and R's deviance()) give
it from sigma and the public n (s13).  logLik, AIC and BIC were computed from that RSS too, and R's
AIC(f1, f2, f3) laid them out for a model choice that ranks noise: a log-likelihood from a noisy RSS is
no likelihood of the data (it can exceed the least-squares maximum) and separately noised fits' are not
comparable.  They are NaN in a private fit's glance (R refuses logLik(), AIC(), BIC()), as dp_glm's (s16).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats.results.lm import released_deviance


@pytest.mark.r
def test_the_deviance_from_sigma_is_rs_deviance_lm_on_the_exact_sigma(rpy2_robjects):
    """At eps = inf sigma is lm's, so sigma² · df.residual must be R's deviance() of
    lm(mpg ~ wt + hp + factor(cyl), mtcars) to 1e-10 (relative)."""
    from dpstats.rbridge import to_pandas

    r = rpy2_robjects.r
    mtcars = to_pandas(r("mtcars"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        fit = dp.dp_lm("mpg ~ wt + hp + factor(cyl)", mtcars, eps=math.inf)
    ref = r("deviance(lm(mpg ~ wt + hp + factor(cyl), mtcars))")
    np.testing.assert_allclose(released_deviance(fit.sigma, fit.df_residual), list(ref), rtol=1e-10)


def test_a_private_fit_glances_its_deviance_from_sigma_and_no_likelihood():
    """At eps = 3 on 2000 rows (seed 4, sigma resolved): deviance = sigma² · df.residual; logLik, AIC,
    BIC, R² and the F test are NaN (as a private dp_glm's logLik, AIC and BIC)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(2000, 2))
    y = np.clip(0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.3 * rng.standard_normal(2000), -2, 2)
    data = {"x1": X[:, 0], "x2": X[:, 1], "y": y}
    fit = dp.dp_lm("y ~ x1 + x2", data, eps=3.0, delta=1e-6, bounds=(-2, 2), random_state=4)
    g = fit.glance().iloc[0]
    assert math.isfinite(fit.sigma) and fit.df_residual == 1997
    assert g["deviance"] == pytest.approx(fit.sigma**2 * 1997, rel=1e-12)
    for name in ("logLik", "AIC", "BIC", "r.squared", "statistic"):
        assert math.isnan(g[name]), name


def test_the_deviance_is_nan_where_sigma_is_or_n_is_private():
    assert math.isnan(released_deviance(math.nan, 10))
    assert math.isnan(released_deviance(1.0, None))
