"""dp_knockoff on streamed and Dask data equals dp_knockoff in memory (same data, same seed).

Equality is to floating-point summation order: W statistics and coefficients are
compared with relative tolerance 1e-7 (the statistics agree to ~1e-13; the OLS
solve and the Haar sampling amplify that by the condition number, below 10^3
here), selections exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import NonPrivateWarning

RTOL = 1e-7


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df = dp.datasets.fan_lv(n=10_000, d=40, random_state=11)
    root = tmp_path_factory.mktemp("ko")
    df.to_parquet(root / "k.parquet", row_group_size=2500)
    df.to_csv(root / "k.csv", index=False)
    return df, root


def _sources(df, root):
    return {
        "parquet": engines.stream(root / "k.parquet", chunk_rows=1500),
        "csv": engines.stream(root / "k.csv", chunk_rows=1500),
        "dask": engines.on_dask(df, npartitions=3),
    }


def _same_fit(ref, fit, label):
    assert fit.selected == ref.selected, label
    assert (fit.n, fit.p, fit.terms) == (ref.n, ref.p, ref.terms), label
    np.testing.assert_allclose(fit.W, ref.W, rtol=RTOL, atol=1e-9, err_msg=label)
    np.testing.assert_allclose(fit.coefficients, ref.coefficients, rtol=RTOL, atol=1e-9, err_msg=label)
    assert fit.threshold == pytest.approx(ref.threshold, rel=RTOL), label
    assert fit.privacy.eps == ref.privacy.eps and fit.privacy.delta == ref.privacy.delta
    assert [e.step for e in fit.privacy.ledger] == [e.step for e in ref.privacy.ledger]


@pytest.mark.parametrize("method", ["II", "I"])
def test_dp_knockoff_identical_across_engines(data, method):
    df, root = data
    kw = dict(
        eps=5.0,
        delta=1e-6,
        fdr=0.2,
        method=method,
        bounds=8.0,
        sigma=1.5,
        beta_norm=4.0,
        c_min=80.0,
        lambda_min=0.5,
        random_state=5,
        oc_trials=0,
    )
    ref = dp.dp_knockoff("y ~ .", data=df, **kw)
    assert method == "I" or len(ref.selected) >= 3  # a selection to compare, not an empty one
    for label, src in _sources(df, root).items():
        _same_fit(ref, dp.dp_knockoff("y ~ .", data=src, **kw), f"{method} {label}")


def test_dp_knockoff_data_dependent_bound_and_nonprivate_reference(data):
    df, root = data
    kw = dict(eps=math.inf, delta=1e-6, fdr=0.2, random_state=3, oc_trials=0)
    with pytest.warns(NonPrivateWarning):
        ref = dp.dp_knockoff("y ~ .", data=df, **kw)
    with pytest.warns(NonPrivateWarning):
        fit = dp.dp_knockoff("y ~ .", data=engines.stream(root / "k.parquet", chunk_rows=500), **kw)
    _same_fit(ref, fit, "non-private, B from the data")
    assert fit.row_bound == pytest.approx(ref.row_bound, rel=1e-12)
    with pytest.warns(NonPrivateWarning):
        ref = dp.dp_knockoff("y ~ .", data=df, eps=1.0, delta=1e-6, random_state=3, oc_trials=0)
    with pytest.warns(NonPrivateWarning):
        fit = dp.dp_knockoff(
            "y ~ .", data=engines.stream(root / "k.parquet"), eps=1.0, delta=1e-6, random_state=3, oc_trials=0
        )
    _same_fit(ref, fit, "private, data-dependent calibration")
    assert fit.privacy.data_dependent_steps == ref.privacy.data_dependent_steps


def test_materialised_knockoffs_refused_before_spending(data):
    df, root = data
    budget = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(dp.DataError, match="needs the rows in memory .*knockoffs='shortcut'"):
        dp.dp_knockoff(
            "y ~ .",
            data=engines.stream(root / "k.parquet"),
            eps=1.0,
            delta=1e-6,
            bounds=8.0,
            knockoffs="materialise",
            accountant=budget,
            oc_trials=0,
        )
    assert budget.spent_eps == 0


def test_front_doors_that_need_rows_refuse_streams_clearly(data):
    """vertical_glm exchanges linear predictors row by row; dp_gmm clusters rows: both need rows."""
    df, root = data
    src = engines.stream(root / "k.parquet")
    budget = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(dp.DataError, match="only for family='gaussian' without penalty"):
        dp.vertical_glm("y ~ x1 + x2 + x3", src, parties=[["x1", "x2"], ["x3"]], family="poisson")
    with pytest.raises(dp.DataError, match="pandas DataFrame"):
        dp.dp_gmm("~ x1 + x2", src, k=2, eps=1.0, delta=1e-6, bounds=(-5, 5), accountant=budget)
    assert budget.spent_eps == 0
