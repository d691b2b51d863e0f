"""vertical_glm's exact Gaussian fit equals R's lm when a party other than the leader holds a column far
from zero: a date (days since 1970, about 19 700) or a column times 10⁴ plus a level.

Such a column is nearly collinear with the leader's intercept, and the block coordinate descent on the
columns as they are crawled: 10 000 sweeps, not converged, the intercept 84 % off.  Each such party now
solves its block on its centred columns (dpstats.methods.privreg, "Centring").  R's oracle (one Rscript
run): lm on the same rows, the date read by as.Date (lm takes its days, as dpstats.temporal does).
Every route: in memory (standard errors "exact" and "history"), streamed Parquet (the fit from the
pooled cross products), and two networked parties on the loopback.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.vertical import Party, run_on_loopback

from r_oracle import run_r_json

R_SCRIPT = r"""
library(jsonlite)
out <- commandArgs(TRUE)[1]
d <- read.csv(file.path(out, "d.csv"))
d$day <- as.Date(d$day)
fit <- function(f) {
  s <- summary(lm(f, d))$coefficients
  list(terms = rownames(s), coef = unname(s[, 1]), se = unname(s[, 2]))
}
res <- list(day = fit(y ~ x + z + day), big = fit(y ~ z + xb))
writeLines(toJSON(res, digits = NA), file.path(out, "r.json"))
"""

CASES = {  # formula, parties (the leader first: it holds y and the intercept)
    "day": ("y ~ x + z + day", [["x", "z"], ["day"]]),
    "big": ("y ~ z + xb", [["z"], ["xb"]]),
}


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 400
    days = pd.Timestamp("2023-12-01") + pd.to_timedelta(rng.integers(0, 300, n), unit="D")
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    df["day"] = pd.Series(days).dt.date.astype("date32[pyarrow]")  # a date: its days since 1970, as R's lm
    df["xb"] = 1e4 * df.x + 5e4
    df["y"] = 3 + 0.01 * (days.to_numpy().astype("datetime64[D]").astype(float) - 19700) + 2 * df.x - df.z
    df["y"] += rng.normal(size=n)
    return df


@pytest.fixture(scope="module")
def r_fits(rscript, tmp_path_factory):
    out = tmp_path_factory.mktemp("far")
    _data().assign(day=lambda d: d.day.astype(str)).to_csv(out / "d.csv", index=False, float_format="%.17g")
    return run_r_json(rscript, out, R_SCRIPT)


def _fit(route: str, formula: str, parties: list[list[str]], tmp_path):
    df = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if route == "stream":  # the dates as datetime.date objects: Arrow's date32, read as its days
            df.assign(day=df.day.astype(object)).to_parquet(tmp_path / "d.parquet")
            return dp.vertical_glm(formula, engines.stream(tmp_path / "d.parquet"), parties=parties)
        if route == "network":
            df["id"] = [f"r{i}" for i in range(len(df))]
            lhs, rhs = formula.split("~")
            leader = [t.strip() for t in rhs.split("+") if t.strip() in parties[0]]
            members = [
                Party(df[["id", "y", *parties[0]]], b"k" * 32, name="A", formula=f"y ~ {' + '.join(leader)}",
                      row_id="id", timeout=10),
                Party(df[["id", *parties[1]]], b"k" * 32, name="B", row_id="id", timeout=10),
            ]  # fmt: skip
            results, errors = run_on_loopback(members, timeout=60, family="gaussian")
            assert not errors
            return results["A"]
        return dp.vertical_glm(formula, df, parties=parties, se=route)


@pytest.mark.r
@pytest.mark.parametrize("route", ["exact", "history", "stream", "network"])
@pytest.mark.parametrize("case", list(CASES))
def test_gaussian_fit_with_a_member_column_far_from_zero_is_rs_lm(r_fits, case, route, tmp_path):
    formula, parties = CASES[case]
    ref = r_fits[case]
    fit = _fit(route, formula, parties, tmp_path)
    assert fit.converged and fit.iterations < 50
    table = fit.coefficients.set_index("term").loc[ref["terms"]]
    np.testing.assert_allclose(table["estimate"], ref["coef"], rtol=1e-6)
    np.testing.assert_allclose(table["std_error"], ref["se"], rtol=1e-6)


def test_a_stalled_fit_says_to_centre_the_column():
    """The binomial family is not centred (its block fit on centred columns is no block minimizer):
    a member's date still stalls the sweeps, and the note says what to do."""
    df = _data()
    df["b"] = (df.y > df.y.median()).astype(float)
    fit = dp.vertical_glm("b ~ x + day", df, parties=[["x"], ["day"]], family="binomial", max_iter=30)
    assert not fit.converged
    assert "centre a party's column that lies far from zero by a public constant" in fit.warnings[0]
    centred = dp.vertical_glm("b ~ x + I(day - 19700)", df, parties=[["x"], ["day"]], family="binomial")
    assert centred.converged and centred.iterations < 100
