"""dp_glm's fill of a missing response is the midpoint of its range (audit s16-rusers3, F03).

The fill was 0 for every family (a failure, a zero count) while the help and the privacy statement said
"the midpoint of the declared bounds, the response included".  Now a 0/1 response takes 0.5, the
midpoint of the range (0, 1) the family declares, and a Poisson count the midpoint of its declared
bounds, as every numeric variable (:func:`dpstats.methods.glm.response_fill`).  Oracles: R's glm on the
data filled by hand (eps = inf), and, for the private fit, the same seeded fit on the data filled by hand.
"""

from __future__ import annotations

import math
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning, NonPrivateWarning

MISSING = [0, 19, 39]  # R's rows 1, 20, 40


def _fit(formula, frame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        warnings.simplefilter("ignore", DataWarning)  # na_action="fill" at eps = inf says it is not glm's
        return dp.dp_glm(formula, frame, na_action="fill", **kw)


def test_at_eps_inf_a_missing_response_is_filled_as_glm_on_the_filled_data(rscript, tmp_path):
    """InsectSprays' count (bounds (0, 30): fill 15) and mtcars' am (binomial: fill 0.5), three values
    missing each; coefficients against R's glm on the data filled by hand, to 1e-7."""
    from dpstats.rbridge import load_r_dataset

    script = tmp_path / "fill.R"
    script.write_text(
        "i <- InsectSprays; i$count[c(1, 20, 40)] <- 15\n"
        "m <- mtcars; m$am[c(1, 20, 30)] <- 0.5\n"
        "cat(format(coef(glm(count ~ spray, poisson, i)), digits = 17), '\\n')\n"
        "cat(format(coef(suppressWarnings(glm(am ~ wt, binomial, m))), digits = 17), '\\n')\n"
    )
    out = subprocess.run([rscript, str(script)], check=True, capture_output=True, text=True, timeout=120)
    want = [np.array(line.split(), float) for line in out.stdout.strip().splitlines()]

    insects = load_r_dataset("InsectSprays", "datasets")
    insects.loc[MISSING, "count"] = np.nan
    counts = _fit("count ~ spray", insects, eps=math.inf, family="poisson", bounds={"count": (0, 30)})
    np.testing.assert_allclose(counts.coef().to_numpy(), want[0], rtol=1e-7)

    cars = load_r_dataset("mtcars", "datasets")
    cars.loc[cars.index[[0, 19, 29]], "am"] = np.nan
    binary = _fit("am ~ wt", cars, eps=math.inf, family="binomial")
    np.testing.assert_allclose(binary.coef().to_numpy(), want[1], rtol=1e-7)


@pytest.mark.parametrize(
    "family, fill, bounds",
    [("binomial", 0.5, {"x": (-1, 1)}), ("poisson", 10.0, {"x": (-1, 1), "y": (0, 20)})],
)
def test_a_private_fit_fills_a_missing_response_with_its_midpoint(family, fill, bounds):
    """Seed 3, eps = 2, n = 20000: the private fit of data with 50 responses missing equals, to the last
    digit, the same seeded fit of the data with those responses set to the midpoint by hand."""
    rng = np.random.default_rng(3)
    n = 20_000
    x = rng.uniform(-1, 1, n)
    y = rng.binomial(1, 1 / (1 + np.exp(-x))) if family == "binomial" else rng.poisson(np.exp(1 + 0.5 * x))
    missing = pd.DataFrame({"x": x, "y": y.astype(float)})
    missing.loc[rng.choice(n, 50, replace=False), "y"] = np.nan
    filled = missing.fillna({"y": fill})
    kw = dict(eps=2.0, delta=1e-6, family=family, bounds=bounds, random_state=3)
    a, b = _fit("y ~ x", missing, **kw), _fit("y ~ x", filled, **kw)
    np.testing.assert_array_equal(a.coefficients, b.coefficients)
    assert "the midpoint of the variable's declared bounds, the response included" in a.privacy.missing_values


def test_a_private_poisson_fit_needs_the_counts_bounds_for_their_fill_and_spends_nothing():
    """Without declared bounds a count has no midpoint, so no public fill: as cbind's columns and every
    numeric variable, the private fit refuses it before reading the rows (before s16 the fill was 0)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 500), "y": rng.poisson(2, 500).astype(float)})
    acc = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(dp.PrivacyParameterError, match=r"dp_glm needs declared bounds for 'y'"):
        dp.dp_glm("y ~ x", df, eps=1.0, delta=1e-6, family="poisson", bounds={"x": (-1, 1)}, accountant=acc)
    assert acc.charges == []
