"""At eps = inf the non-private reference is R's complete-case fit, bounds declared or not (audit F03).

Oracle: R's ``lm`` and ``glm`` (default ``na.action = na.omit``) on R's ``airquality`` (rpy2), whose
Ozone (the response) and Solar.R have missing values: 111 complete rows of 153.  Coefficients must
equal R's to 1e-10.  ``na_action="fill"`` given explicitly still fills, and says so in a warning; a
private call keeps its default, the public fill.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpstats as dp

pytestmark = pytest.mark.r

MODEL = "Ozone ~ Solar.R + Wind + Temp"
BOUNDS = {"Ozone": (0, 170), "Solar.R": (0, 340), "Wind": (0, 21), "Temp": (55, 100)}


@pytest.fixture(scope="module")
def r_fits(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    return {
        "airquality": to_pandas(ro.r("airquality")),
        "lm": np.asarray(ro.r(f"coef(lm({MODEL}, airquality))")),
        "nobs": int(ro.r(f"nobs(lm({MODEL}, airquality))")[0]),
        "glm": np.asarray(ro.r("coef(glm(Ozone > 60 ~ Solar.R + Wind + Temp, binomial, airquality))")),
    }


def _quiet(door, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = door(*args, **kwargs)
    return fit, [str(w.message) for w in caught]


def test_lm_reference_with_bounds_is_r_lm_on_complete_cases(r_fits):
    fit, _ = _quiet(dp.dp_lm, MODEL, r_fits["airquality"], eps=math.inf, bounds=BOUNDS)
    assert r_fits["nobs"] == 111 and fit.n == r_fits["nobs"]
    np.testing.assert_allclose(fit.coef().to_numpy(), r_fits["lm"], rtol=0, atol=1e-10)


def test_glm_reference_with_bounds_is_r_glm_on_complete_cases(r_fits):
    air = r_fits["airquality"].assign(high=lambda d: (d.Ozone > 60).where(d.Ozone.notna()))
    fit, _ = _quiet(
        dp.dp_glm,
        "high ~ Solar.R + Wind + Temp",
        air,
        eps=math.inf,
        family="binomial",
        bounds={k: v for k, v in BOUNDS.items() if k != "Ozone"},
        levels={"high": [False, True]},
    )
    np.testing.assert_allclose(fit.coef().to_numpy(), r_fits["glm"], rtol=0, atol=1e-8)


def test_explicit_fill_at_inf_fills_and_says_so(r_fits):
    fit, messages = _quiet(
        dp.dp_lm, MODEL, r_fits["airquality"], eps=math.inf, bounds=BOUNDS, na_action="fill"
    )
    assert fit.n == 153
    assert not np.allclose(fit.coef().to_numpy(), r_fits["lm"], atol=1e-3)
    assert any('na_action="fill" at eps = inf' in m and "not R's complete-case lm()" in m for m in messages)
    assert fit.call["na_action"] == "fill"


def test_private_default_still_fills(r_fits):
    fit = dp.dp_lm(
        MODEL, r_fits["airquality"], eps=1.0, delta=1e-5, bounds=BOUNDS, random_state=1, n_boot=200
    )
    assert fit.n == 153 and "na_action" not in fit.call
