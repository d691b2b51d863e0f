"""One huge value in a row gives its neighbour's warnings on the streamed and Dask routes (the s14
attacker audit's finding F1).

The chunked routes' first pass (dp_glm's frame) used to sum raw,
unclipped products: with one row at y = 1e200 (or cbind's s, or x = 1e308) numpy warned "overflow
encountered in matmul" where the neighbour (that row in bounds) did not.  D is 20000 rows (seed 1);
D' changes row 0 only.  Warnings are recorded with the "always" filter, so each is seen.  dp_lm, whose
passes clip to the declared bounds, is checked alike.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines

BOUNDS = {"x": (-1, 1), "y": (0, 10), "s": (0, 1), "f": (0, 1)}
GLM = {
    "poisson y": ("y ~ x", "poisson", "y", 1e200),
    "cbind s": ("cbind(s, f) ~ x", "binomial", "s", 1e200),
    "poisson x": ("y ~ x", "poisson", "x", 1e308),  # row 0 has y = 2: x·y overflows
}


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 20000
    return pd.DataFrame(
        {
            "y": rng.poisson(2, n).astype(float),
            "s": rng.integers(0, 2, n).astype(float),
            "f": rng.integers(0, 2, n).astype(float),
            "x": rng.uniform(-1, 1, n),
        }
    )


def _route(df: pd.DataFrame, route: str, path):
    if route == "stream":
        df.to_parquet(path)
        return engines.stream(path, chunk_rows=4000)
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(df, npartitions=3)


def _warnings(door, *args, **kwargs) -> list[tuple[str, str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        door(*args, **kwargs)
    return sorted({(w.category.__name__, str(w.message)) for w in caught})


def _pair(column: str, value: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    d, d2 = _data(), _data()
    d.loc[0, column], d2.loc[0, column] = 0.0, value
    return d, d2


@pytest.mark.parametrize("route", ["stream", "dask"])
@pytest.mark.parametrize("case", sorted(GLM))
def test_dp_glm_neighbours_with_one_huge_value_warn_alike(tmp_path, route, case):
    formula, family, column, value = GLM[case]
    seen = []
    for i, df in enumerate(_pair(column, value)):
        data = _route(df, route, tmp_path / f"d{i}.parquet")
        how = dict(eps=4.0, delta=1e-6, family=family, bounds=BOUNDS, random_state=3)
        seen.append(_warnings(dp.dp_glm, formula, data, **how))
    assert seen[0] == seen[1]
    assert not any(kind == "RuntimeWarning" for kind, _ in seen[1])


@pytest.mark.parametrize("route", ["stream", "dask"])
def test_dp_lm_neighbours_with_one_huge_response_warn_alike(tmp_path, route):
    seen = []
    for i, df in enumerate(_pair("y", 1e200)):
        data = _route(df[["y", "x"]], route, tmp_path / f"d{i}.parquet")
        bounds = {"x": BOUNDS["x"], "y": BOUNDS["y"]}
        seen.append(_warnings(dp.dp_lm, "y ~ x", data, eps=1.0, delta=1e-6, bounds=bounds, random_state=3))
    assert seen[0] == seen[1]
    assert not any(kind == "RuntimeWarning" for kind, _ in seen[1])


def _knockoff_data() -> pd.DataFrame:
    return dp.datasets.fan_lv(n=600, d=20, random_state=3)


KNOCKOFF = dict(eps=1.0, delta=1e-5, sigma=1.0, beta_norm=5.0, lambda_min=0.5, random_state=3)


def _knockoff_route(df: pd.DataFrame, route: str, path):
    return df if route == "pandas" else _route(df, route, path)


@pytest.mark.parametrize("route", ["pandas", "stream", "dask"])
def test_dp_knockoff_row_bound_from_data_refuses_a_huge_row_without_numpy_warnings(tmp_path, route):
    """B read from the data clips nothing: the pass's raw XᵀX overflowed on x1 = 1e308 (the chunked
    routes warned "overflow encountered in matmul", every route "invalid value encountered in
    divide", then a LinAlgError).  Now that neighbour is refused by a DataError before any spend, its
    message naming the data-dependent steps (whether it occurs may depend on the rows), and no
    RuntimeWarning on either neighbour."""
    d, d2 = _knockoff_data(), _knockoff_data()
    d2.loc[0, "x1"] = 1e308
    ordinary = _warnings(
        dp.dp_knockoff, "y ~ .", _knockoff_route(d, route, tmp_path / "d.parquet"), **KNOCKOFF
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(dp.errors.DataError, match="row-norm bound B read from the data.*Raised after"):
            dp.dp_knockoff("y ~ .", _knockoff_route(d2, route, tmp_path / "d2.parquet"), **KNOCKOFF)
    assert not any(w.category is RuntimeWarning for w in caught)
    assert not any(kind == "RuntimeWarning" for kind, _ in ordinary)


@pytest.mark.parametrize("route", ["stream", "dask"])
@pytest.mark.parametrize("column, value", [("x1", 1e308), ("y", 1e200)])
def test_dp_knockoff_declared_row_bound_neighbours_warn_alike(tmp_path, route, column, value):
    seen = []
    for i, df in enumerate((_knockoff_data(), _knockoff_data())):
        df.loc[0, column] = [0.0, value][i]
        data = _route(df, route, tmp_path / f"d{i}.parquet")
        seen.append(_warnings(dp.dp_knockoff, "y ~ .", data, bounds=8.0, **KNOCKOFF))
    assert seen[0] == seen[1]
    assert not any(kind == "RuntimeWarning" for kind, _ in seen[1])


def _sis_route(df: pd.DataFrame, route: str, path):
    if route == "pandas":
        return df
    if route == "polars":
        return pytest.importorskip("polars").from_pandas(df)
    if route == "arrow":
        return pytest.importorskip("pyarrow").Table.from_pandas(df)
    if route == "duckdb":
        connection = pytest.importorskip("duckdb").connect()
        connection.register("d", df)
        return connection.table("d")
    return _route(df, route, path)


SIS_CASES = [
    (column, value, route)
    for column, value in [("x", 1e308), ("y", 1e200)]
    for route in ["pandas", "stream", "dask", "polars", "arrow", "duckdb"]
    if (column, route) != ("y", "duckdb")  # DuckDB's SQL sums never warned on a huge response
]


@pytest.mark.parametrize("na_action", ["fill", "omit"])
@pytest.mark.parametrize("column, value, route", SIS_CASES)
def test_dp_sis_maxabs_score_neighbours_with_one_huge_value_warn_alike(
    tmp_path, route, column, value, na_action
):
    """bounds=None (the max-abs scaled score) summed raw products, then divided by the max-abs values:
    the huge neighbour alone warned "overflow encountered in multiply"/"in matmul" on every route.  The
    pass now scales each value to x/M first; the scores (and so the selection) are unchanged elsewhere."""
    seen = []
    for i, df in enumerate(_pair(column, value)):
        df = df[["y", "x", "s"]]
        data = _sis_route(df, route, tmp_path / f"d{i}.parquet")
        how = dict(eps=1.0, k=1, random_state=3, na_action=na_action)
        seen.append(_warnings(dp.dp_sis, "y ~ x + s", data, **how))
    assert seen[0] == seen[1]
    assert not any(kind == "RuntimeWarning" for kind, _ in seen[1])
    assert "NonPrivateWarning" in {kind for kind, _ in seen[1]}  # the max-abs scaling is named


def test_dp_sis_maxabs_score_of_scaled_values_equals_the_raw_formula():
    """The score of values scaled first equals |Σ (x_j − x̄_j)(y − ȳ)|/(M_j M_y) computed by numpy on the
    raw values (rtol 1e-12; seed 5), a column of zeros scoring 0."""
    from dpstats.geometry import maxabs_box
    from dpstats.methods import sis
    from dpstats.stats import cross_products

    rng = np.random.default_rng(5)
    X, y = rng.normal(3, 2, (500, 4)), rng.poisson(4, 500).astype(float)
    X[:, 2] = 0.0
    M, M_y = np.abs(X).max(axis=0), np.abs(y).max()
    stats = cross_products(X, y, x_box=maxabs_box(M), y_box=maxabs_box(M_y))
    expected = np.abs((X - X.mean(axis=0)).T @ (y - y.mean())) / np.where(M > 0, M * M_y, 1.0)
    np.testing.assert_allclose(sis.SCORES["maxabs"](stats), expected, rtol=1e-12, atol=1e-12)
