"""predict() on a value outside the levels a formula declares inline, factor(x, levels = c(...)) (outside
audit round 2, N6): R's factor() makes the value NA, so predict.lm/predict.glm (na.pass) give NA for that
row and predict the others.  Before, dpstats raised "a term of the formula is not finite (e.g. log() of a
value <= 0)", naming log() for a factor.  Oracle: R's lm/glm on R's mtcars and iris via Rscript, eps = inf
(the ordinary fit), predictions to rtol 1e-8 and NA exactly where R has NA."""

from __future__ import annotations

import math
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning
from dpstats.rbridge import load_r_dataset

CASES = {  # door, R's call, formula, data set, newdata (R literal, and as a dict)
    "lm numeric levels": (
        "lm",
        "mpg ~ wt + factor(cyl, levels = c(4, 6, 8))",
        "mtcars",
        "data.frame(wt = c(2.5, 3, 3.2), cyl = c(4, 5, 8))",
        {"wt": [2.5, 3.0, 3.2], "cyl": [4, 5, 8]},
    ),
    "lm text levels": (
        "lm",
        "Sepal.Length ~ Petal.Width + factor(Species, levels = c('setosa', 'versicolor', 'virginica'))",
        "iris",
        "data.frame(Petal.Width = c(0.2, 1.3, 2), Species = c('setosa', 'zz', 'virginica'))",
        {"Petal.Width": [0.2, 1.3, 2.0], "Species": ["setosa", "zz", "virginica"]},
    ),
    "glm binomial, response scale": (
        "glm",
        "am ~ wt + factor(vs, levels = c(0, 1))",
        "mtcars",
        "data.frame(wt = c(2.5, 3, 3.2, 2), vs = c(0, 2, 1, 1))",
        {"wt": [2.5, 3.0, 3.2, 2.0], "vs": [0, 2, 1, 1]},
    ),
}


@pytest.fixture(scope="module")
def r_predictions(rscript, tmp_path_factory):
    lines = []
    for door, formula, data, newdata, _ in CASES.values():
        fit = f"lm({formula}, data = {data})" if door == "lm" else f"glm({formula}, binomial, {data})"
        kind = "" if door == "lm" else ", type = 'response'"
        lines.append(f"cat(format(predict({fit}, newdata = {newdata}{kind}), digits = 17), '\\n')")
    script = tmp_path_factory.mktemp("r") / "predict.R"
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run([rscript, str(script)], check=True, capture_output=True, text=True, timeout=120)
    rows = out.stdout.strip().splitlines()
    return {
        name: np.array([float("nan") if v == "NA" else float(v) for v in row.split()])
        for name, row in zip(CASES, rows)
    }


@pytest.mark.parametrize("name", list(CASES))
def test_a_value_outside_inline_levels_predicts_na_as_in_r(name, r_predictions):
    door, formula, data, _, newdata = CASES[name]
    frame = load_r_dataset(data, "datasets")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        if door == "lm":
            got = dp.dp_lm(formula, frame, eps=math.inf).predict(pd.DataFrame(newdata))
        else:
            fit = dp.dp_glm(formula, frame, family="binomial", eps=math.inf)
            got = fit.predict(pd.DataFrame(newdata), type="response")
    want = r_predictions[name]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(want).sum() == 1  # the oracle has its NA where the level is outside
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-8)


def test_private_fit_predicts_na_for_the_row_and_the_others_as_before():
    """The audit's call: a DP fit, newdata with g = 'zz'; the first row's prediction is the one it has alone."""
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x1": rng.uniform(0, 10, 400), "g": rng.choice(["a", "b", "c"], 400)})
    d["y"] = d.x1 + rng.normal(0, 1, 400)
    with warnings.catch_warnings():  # text g: its levels are still named as read from the rows (see report)
        warnings.simplefilter("ignore", NonPrivateWarning)
        fit = dp.dp_lm(
            "y ~ x1 + factor(g, levels = c('a', 'b', 'c'))", d, eps=1, delta=1e-6,
            bounds={"x1": (0, 10), "y": (-5, 15)}, random_state=1,
        )  # fmt: skip
    got = fit.predict(pd.DataFrame({"x1": [1.0, 2.0], "g": ["a", "zz"]}))
    alone = fit.predict(pd.DataFrame({"x1": [1.0], "g": ["a"]}))
    assert np.isnan(got[1]) and got[0] == alone[0]


def test_log_of_a_value_outside_its_domain_still_says_so():
    """The other way a term is not finite is unchanged: a message naming it (R would give NaN with a warning)."""
    d = pd.DataFrame({"x": [1.0, 2, 3, 4, 5, 6], "y": [1.0, 2, 2, 4, 5, 7]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        fit = dp.dp_lm("y ~ log(x)", d, eps=math.inf)
    with pytest.raises(dp.errors.DataError, match=r"log\(\) of a value <= 0"):
        fit.predict(pd.DataFrame({"x": [1.0, -1.0]}))
