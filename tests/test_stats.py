"""Sufficient statistics: the fused one-pass kernel equals the numpy path."""

import ast
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import stats as st
from dpstats._kernels import HAVE_NUMBA
from dpstats.errors import NonPrivateWarning
from dpstats.geometry import resolve_box


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is a declared dependency; fallback path only")
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("bounded", [False, True])
def test_fused_kernel_equals_numpy_path(order, bounded, monkeypatch):
    rng = np.random.default_rng(0)
    X = np.asarray(rng.normal(size=(30_000, 150)) * 2, order=order)
    y = rng.normal(size=30_000) * 3
    xb = resolve_box((-3, 3), [f"c{j}" for j in range(150)]) if bounded else None
    yb = resolve_box((-4, 4), ["y"]) if bounded else None
    fused = st.cross_products(X, y, x_box=xb, y_box=yb)
    monkeypatch.setattr(st, "FUSED_MIN_VALUES", 10**12)
    plain = st.cross_products(X, y, x_box=xb, y_box=yb)
    for name in ("xty", "x_sum", "x_maxabs", "x_min", "x_max"):
        np.testing.assert_allclose(getattr(fused, name), getattr(plain, name), rtol=1e-10, atol=1e-8)
    assert fused.n_clipped == plain.n_clipped and fused.finite and plain.finite
    assert fused.y_sum == pytest.approx(plain.y_sum) and fused.yty == pytest.approx(plain.yty)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is a declared dependency; fallback path only")
def test_bounded_pass_without_ranges_equals_numpy_path(monkeypatch):
    rng = np.random.default_rng(3)
    X = np.asarray(rng.normal(size=(30_000, 150)) * 2, order="F")
    X[:, 7] = 2.5  # constant
    X[:, 8] = 2.5
    X[17, 8] = 2.5 + 1e-7  # nearly constant: flagged by the screen, cleared exactly
    y = rng.normal(size=30_000) * 3
    xb = resolve_box((-3, 3), [f"c{j}" for j in range(150)])
    yb = resolve_box((-4, 4), ["y"])
    fast = st.cross_products(X, y, x_box=xb, y_box=yb, ranges=False)
    monkeypatch.setattr(st, "FUSED_MIN_VALUES", 10**12)
    plain = st.cross_products(X, y, x_box=xb, y_box=yb)
    np.testing.assert_allclose(fast.xty, plain.xty, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(fast.x_sum, plain.x_sum, rtol=1e-10, atol=1e-8)
    assert fast.n_clipped == plain.n_clipped and fast.x_maxabs is None
    np.testing.assert_array_equal(fast.constant_columns(), plain.constant_columns())
    assert fast.constant_columns()[7] and not fast.constant_columns()[8]


@pytest.mark.parametrize("big", [False, True])
def test_non_finite_values_are_found_in_the_statistics_pass(big):
    rng = np.random.default_rng(1)
    n = 30_000 if big else 50
    df = pd.DataFrame(rng.normal(size=(n, 150)), columns=[f"x{j}" for j in range(150)])
    df.insert(0, "y", rng.normal(size=n))
    df.iloc[3, 7] = np.nan
    df.iloc[9, 100] = np.inf
    # found by the fused pass, then filled by the declared bounds' midpoint (issue 26): no row dropped
    fit = dp.dp_sis(
        "y ~ .", data=df, eps=1.0, k=3, bounds=(-5, 5), random_state=0, oc_trials=0, diagnostics=True
    )
    assert fit.n == n and fit.diagnostics["values_filled_for_missing"] == 2
    with pytest.warns(NonPrivateWarning, match='na_action="omit"'):
        fit = dp.dp_sis(
            "y ~ .",
            data=df,
            eps=1.0,
            k=3,
            bounds=(-5, 5),
            na_action="omit",
            random_state=0,
            oc_trials=0,
            diagnostics=True,
        )
    # dropping rows makes n private: the attribute hides it, the requested diagnostics show it
    assert fit.n is None and fit.diagnostics["rows_used_n"] == n - 2


@pytest.mark.parametrize("big", [False, True])
def test_constant_columns_found_in_the_statistics_pass(big):
    rng = np.random.default_rng(2)
    n = 30_000 if big else 50
    df = pd.DataFrame(rng.normal(size=(n, 150)), columns=[f"x{j}" for j in range(150)])
    df.insert(0, "y", rng.normal(size=n))
    df["x20"] = 1.5
    names = [c for c in df.columns if c != "y"]
    xb, yb = resolve_box((-5, 5), names), resolve_box((-5, 5), ["y"])
    stats = st.cross_products(df[names].to_numpy(), df["y"].to_numpy(), x_box=xb, y_box=yb, ranges=False)
    assert np.flatnonzero(stats.constant_columns()).tolist() == [20]
    # a DP fit does not refuse it: whether a column is constant depends on single rows (issue 26)
    acc = dp.Accountant(eps=2)
    fit = dp.dp_sis("y ~ .", data=df, eps=1.0, k=3, bounds=(-5, 5), accountant=acc, oc_trials=0)
    assert "x20" in fit.terms and len(acc.charges) == 1


@pytest.mark.parametrize("rows_per_chunk", [None, 7])
def test_row_clipped_gram_equals_clipped_products(rows_per_chunk):
    """Oracle: the rows scaled onto the ball by hand, then XᵀX, Xᵀy, yᵀy with numpy; a row whose
    squared norm overflows lands on the ball too (scaled by its largest entry first)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(103, 6)) * rng.uniform(0.2, 3.0, size=(103, 1))
    X[50] = [1e200, -1e200, 0, 0, 1e199, 0]
    y = rng.normal(size=103)
    B = 4.0
    top = np.abs(X).max(axis=1, keepdims=True)
    norms = np.linalg.norm(X / top, axis=1) * top[:, 0]  # without overflow
    Xc = np.where((norms > B)[:, None], X / top / np.linalg.norm(X / top, axis=1, keepdims=True) * B, X)
    g = st.row_clipped_gram(X, y, B, rows_per_chunk=rows_per_chunk)
    np.testing.assert_allclose(g.xtx, Xc.T @ Xc, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g.xty, Xc.T @ y, rtol=1e-12, atol=1e-12)
    assert g.yty == pytest.approx(float(y @ y), rel=1e-13)
    assert g.n_rows_clipped == int((norms > B).sum()) > 1
    assert np.isinf(g.row_norm_max)  # the overflowing row: its squared norm is not a double
    X[50] = 0.5
    free = st.row_clipped_gram(X, y, None, rows_per_chunk=rows_per_chunk)
    np.testing.assert_allclose(free.xtx, X.T @ X, rtol=1e-12)
    assert free.n_rows_clipped == 0
    assert free.row_norm_max == pytest.approx(np.linalg.norm(X, axis=1).max(), rel=1e-13)


def test_single_blas_thread_limits_the_openblas_scipy_loads_after_the_first_limit():
    """The BLAS controller is found again once scipy (its own OpenBLAS) is loaded: a limit taken after
    scipy.linalg's import holds every BLAS library at one thread, though the first was taken before."""
    code = (
        "import numpy as np; from dpstats._kernels import single_blas_thread\n"
        "with single_blas_thread(): pass\n"
        "import scipy.linalg; from threadpoolctl import threadpool_info\n"
        "with single_blas_thread(): print(sorted({(i['filepath'], i['num_threads']) for i in threadpool_info()"
        " if i['user_api'] == 'blas'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    libraries = ast.literal_eval(out)
    assert len(libraries) >= 1 and all(threads == 1 for _, threads in libraries), libraries
