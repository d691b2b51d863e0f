"""The exact fits behind eps = inf and ``diagnostics=True`` never crash a call: they are R's lm and glm of
the rows they describe, aliased columns NA, or say why they are not computed.

R's oracle (one Rscript run): lm of mtcars with wt clipped to the declared (0, 1), which makes it
constant (all of mtcars' wt exceed 1), so R's pivoted QR finds it aliased with the intercept.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import NonPrivateWarning
from dpstats.rbridge import load_r_dataset

from r_oracle import run_r_json

R_SCRIPT = r"""
library(jsonlite)
out <- commandArgs(TRUE)[1]
mt <- transform(mtcars, wt = pmin(pmax(wt, 0), 1))
lm_fit <- coef(lm(mpg ~ wt + hp, mt))
res <- list(lm = unname(ifelse(is.na(lm_fit), "NA", lm_fit)))
writeLines(toJSON(res, digits = NA, auto_unbox = TRUE), file.path(out, "r.json"))
"""

BOUNDS = {"wt": (0, 1), "hp": (50, 340), "mpg": (10, 34)}  # wt: all of mtcars' lie above 1


@pytest.fixture(scope="module")
def r_fits(rscript, tmp_path_factory):
    res = run_r_json(rscript, tmp_path_factory.mktemp("exact"), R_SCRIPT)
    return {"lm": np.array([np.nan if v == "NA" else float(v) for v in res["lm"]])}


def _mtcars(route: str, tmp_path):
    mt = load_r_dataset("mtcars", "datasets")[["mpg", "wt", "hp"]]
    if route == "polars":
        return pl.from_pandas(mt)
    if route == "stream":
        mt.to_parquet(tmp_path / "mt.parquet")
        return engines.stream(tmp_path / "mt.parquet")
    return mt


@pytest.mark.r
@pytest.mark.parametrize("route", ["pandas", "polars", "stream"])
@pytest.mark.parametrize("eps", [math.inf, 1.0])
def test_lm_of_a_column_the_bounds_make_constant_is_rs_lm_of_the_clipped_rows(r_fits, route, eps, tmp_path):
    """Was numpy's LinAlgError (Singular matrix) in memory: the rank was tested on the rows before clipping."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(
            "mpg ~ wt + hp",
            _mtcars(route, tmp_path),
            eps=eps,
            delta=1e-5 if eps < math.inf else 0.0,
            bounds=BOUNDS,
            diagnostics=True,
            random_state=2,
            n_boot=200,
        )
    exact = np.array(list(fit.diagnostics["ols_estimates_nonprivate"].values()))
    np.testing.assert_allclose(exact, r_fits["lm"], rtol=1e-8, equal_nan=True)
    if eps == math.inf:
        np.testing.assert_allclose(fit.coefficients, r_fits["lm"], rtol=1e-8, equal_nan=True)
        assert fit.aliased_terms() == ["wt"]


def test_glm_diagnostics_say_why_rs_glm_refuses_the_rows():
    """A binomial response outside [0, 1] is clipped by the private fit; R's glm refuses it, and the
    diagnostics say so instead of crashing the call (was scipy's ValueError on non-finite values)."""
    rng = np.random.default_rng(4)
    n = 20_000
    df = pd.DataFrame({"x": rng.uniform(-1, 1, n)})
    df["y"] = (rng.random(n) < 0.5).astype(float) + (df.x > 0.99)  # a few 2s
    fit = dp.dp_glm(
        "y ~ x", df, eps=2.0, delta=1e-6, bounds={"x": (-1, 1), "y": (0, 1)}, diagnostics=True, random_state=1
    )
    assert np.all(np.isfinite(fit.coefficients))
    note = fit.diagnostics["glm_estimates_nonprivate"]
    assert note.startswith("not computed: R's glm refuses the rows as read: family='binomial' needs 0 <= y")


def test_select_infer_part_b_ols_gives_aliased_columns_na_as_lm():
    """Part B's non-private OLS was numpy's minimum-norm least squares, which splits a coefficient
    between a column and its copy; lm gives the copy NA and the column the whole slope."""
    rng = np.random.default_rng(3)
    n = 2000
    df = pd.DataFrame({"x": rng.uniform(-1, 1, n), "z": rng.uniform(-1, 1, n)})
    df["x2"] = 2 * df.x
    df["y"] = 1 + 2 * df.x + 0.5 * rng.normal(size=n)
    bounds = {"x": (-1, 1), "x2": (-2, 2), "z": (-1, 1), "y": (-5, 5)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        res = dp.dp_select_infer(
            "y ~ x + x2 + z", df, eps=2, delta=1e-6, k=2, bounds=bounds, diagnostics=True, random_state=1
        )
    assert res.selected == ["x", "x2"]
    ols = res.diagnostics["ols_part_b_nonprivate"]
    assert math.isnan(ols["x2"])
    assert ols["x"] == pytest.approx(2.0, abs=0.1) and ols["(Intercept)"] == pytest.approx(1.0, abs=0.1)
