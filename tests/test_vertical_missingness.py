"""vertical_glm at eps = inf drops incomplete rows as R's glm(na.action = na.omit) and says so as R does.

R's summary.glm prints "(k observations deleted due to missingness)" under the deviance lines; dp_lm and
dp_glm print it at eps = inf from one helper (results.base.deleted_due_to_missingness), and vertical_glm
now does too.  Oracle: R's glm on airquality (rpy2): k = nobs dropped by na.omit, the coefficients to
1e-6 relative (measured 9.5e-8 for the Poisson fit in 15 sweeps; 3e-6 in 2 566 before each party's
columns were centred); statsmodels' GLM(missing="drop") gives the same number of rows.  A private fit (finite eps) prints no count: the
number of rows dropped is private.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm

import dpstats as dp

AQ = "Ozone ~ Solar.R + Wind + Temp"
PARTIES = [["Solar.R"], ["Wind", "Temp"]]


def _line(k: int) -> str:
    return f"  ({k} observation{'s' if k > 1 else ''} deleted due to missingness)"


@pytest.fixture(scope="module")
def airquality():
    from dpstats.rbridge import load_r_dataset

    return load_r_dataset("airquality", "datasets")


@pytest.mark.r
@pytest.mark.parametrize("family", ["gaussian", "poisson"])
def test_eps_inf_prints_rs_count_of_deleted_rows(rpy2_robjects, airquality, family):
    r = rpy2_robjects.r
    k = int(r(f"length(glm({AQ}, family = {family}, data = airquality, na.action = na.omit)$na.action)")[0])
    expected = np.asarray(r(f"coef(glm({AQ}, family = {family}, data = airquality, na.action = na.omit))"))
    assert k == 42
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.vertical_glm(AQ, airquality, parties=PARTIES, family=family)
    np.testing.assert_allclose(fit.coefficients["estimate"], expected, rtol=1e-6)
    text = str(fit)
    assert _line(k) in text.splitlines()
    assert text.index("Residual deviance") < text.index(_line(k)) < text.index("Standard errors")
    assert _line(k) in str(fit.summary())


def test_count_agrees_with_statsmodels_and_dp_glm(airquality):
    X = sm.add_constant(airquality[["Solar.R", "Wind", "Temp"]])
    kept = sm.GLM(airquality["Ozone"], X, family=sm.families.Gaussian(), missing="drop").fit().nobs
    k = len(airquality) - int(kept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vertical = dp.vertical_glm(AQ, airquality, parties=PARTIES)
        lm = dp.dp_lm(AQ, airquality, eps=np.inf)
    assert _line(k) in str(vertical).splitlines() and _line(k) in str(lm).splitlines()


def test_private_fit_prints_no_count(airquality):
    bounds = {"Ozone": (0, 170), "Solar.R": (0, 340), "Wind": (0, 21), "Temp": (50, 100)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.vertical_glm(
            AQ, airquality, parties=PARTIES, eps=1.0, delta=1e-6, lam=0.1, penalty="ridge", bounds=bounds,
            random_state=0,
        )  # fmt: skip
    assert "deleted due to missingness" not in str(fit)
