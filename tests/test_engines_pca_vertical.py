"""Private PCA (dp_gmm's Analyze Gauss step) and the Gaussian vertical GLM on streamed and Dask data.

Private PCA: with ``center="midpoint"`` the released basis and noisy eigenvalues from a Parquet,
CSV or Dask source equal the in-memory computation of dp_gmm's step at dp_pca's ρ (``private_pca`` on the
box-clipped, centred, ball-clipped rows) for the same seed, to relative 1e-8 (Σ xxᵀ agrees to
~1e-13; the eigen-decomposition of a matrix with well-separated eigenvalues amplifies that by
< 10^3).  With the default ``center="mean"`` every engine's release (basis, variances, released
mean) equals the in-memory one for the same seed, to the same tolerance, and at eps = inf it is
numpy's covariance PCA of the clipped rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats import engines
from dpstats.api.pca import dp_pca
from dpstats.errors import BudgetExceededError, DataError, NonPrivateWarning, PrivacyParameterError
from dpstats.simulate.gmm import simulate_gmm
from dpstats.privacy.accountant import Accountant
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.pca import private_pca
from dpstats.privacy.randomness import NoiseSource

RTOL = 1e-8


@pytest.fixture(scope="module")
def gmm_data(tmp_path_factory):
    df, _ = simulate_gmm(6000, d=5, k=3, random_state=3)
    root = tmp_path_factory.mktemp("pca")
    df.to_parquet(root / "g.parquet", row_group_size=1500)
    df.to_csv(root / "g.csv", index=False)
    return df, root


def _sources(df, root, name):
    return {
        "parquet": engines.stream(root / f"{name}.parquet", chunk_rows=1100),
        "csv": engines.stream(root / f"{name}.csv", chunk_rows=1100),
        "dask": engines.on_dask(df, npartitions=3),
    }


def _in_memory_step(df, lo, hi, C, k, eps, delta, seed):
    """dp_gmm's step on rows: clip to the box, centre, shrink onto the ball of radius C, Analyze Gauss."""
    X = df.to_numpy(dtype=float)
    Xc = np.clip(X, lo, hi) - (lo + hi) / 2
    norms = np.linalg.norm(Xc, axis=1)
    Xb = Xc * np.minimum(1.0, C / np.maximum(norms, 1e-300))[:, None]
    return private_pca(Xb, k, C, gaussian_rho_from_eps_delta(eps, delta), "replace", NoiseSource(seed))


@pytest.mark.parametrize("radius", [None, 9.0])
def test_dp_pca_equals_in_memory_step_on_every_engine(gmm_data, radius):
    df, root = gmm_data
    lo, hi, k = -12.0, 12.0, 2
    C = np.sqrt(df.shape[1]) * 12.0 if radius is None else radius
    ref = _in_memory_step(df, lo, hi, C, k, 1.0, 1e-6, 7)
    if radius is not None:  # the ball really clips some rows, so the row bound is exercised
        assert (np.linalg.norm(np.clip(df.to_numpy(), lo, hi), axis=1) > radius).sum() > 50
    call = dict(k=k, eps=1.0, delta=1e-6, bounds=(lo, hi), radius=radius, center="midpoint", random_state=7)
    fits = {"memory": dp_pca("~ .", df, **call)}
    for label, src in _sources(df, root, "g").items():
        fits[label] = dp_pca("~ .", src, **call)
    for label, fit in fits.items():
        np.testing.assert_allclose(fit.basis, ref.basis, rtol=RTOL, atol=1e-10, err_msg=label)
        np.testing.assert_allclose(fit.eigenvalues, ref.eigenvalues, rtol=RTOL, err_msg=label)
        assert fit.noise_sd == pytest.approx(ref.noise_sd, rel=1e-12)
        assert fit.n == len(df) and fit.terms == list(df.columns)
        assert sum(e.eps for e in fit.privacy.ledger) == 1.0 and fit.privacy.delta == 1e-6
        assert fit.privacy.data_dependent_steps == []
    assert fits["parquet"].engine == "stream" and "Analyze Gauss" in str(fits["dask"].summary())


@pytest.mark.parametrize("radius", [None, 9.0])
def test_dp_pca_about_the_mean_is_the_same_on_every_engine(gmm_data, radius):
    df, root = gmm_data
    call = dict(k=2, eps=1.0, delta=1e-6, bounds=(-12.0, 12.0), radius=radius, random_state=7)
    ref = dp_pca("~ .", df, **call)
    assert ref.center == "mean" and [e.step[:17] for e in ref.privacy.ledger] == [
        "Σ (x − c)(x − c)ᵀ",
        "Σ (x − c) of the ",
    ]
    for label, src in _sources(df, root, "g").items():
        fit = dp_pca("~ .", src, **call)
        np.testing.assert_allclose(fit.basis, ref.basis, rtol=RTOL, atol=1e-10, err_msg=label)
        np.testing.assert_allclose(fit.eigenvalues, ref.eigenvalues, rtol=RTOL, err_msg=label)
        np.testing.assert_allclose(fit.centre, ref.centre, rtol=RTOL, err_msg=label)
        assert fit.sum_noise_sd == ref.sum_noise_sd > 0


@pytest.mark.filterwarnings("ignore::dpstats.errors.NonPrivateWarning")
@pytest.mark.parametrize("radius", [None, 9.0])
def test_dp_pca_about_the_mean_at_eps_inf_is_numpy_on_the_clipped_rows(gmm_data, radius):
    """The clipped, shrunk rows' covariance (numpy, divisor n − 1) on a stream: variances to relative 1e-9."""
    df, root = gmm_data
    lo, hi = -12.0, 12.0
    c = np.sqrt(df.shape[1]) * hi if radius is None else radius
    z = np.clip(df.to_numpy(), lo, hi)
    z = z * np.minimum(1.0, c / np.linalg.norm(z, axis=1))[:, None]  # the box's midpoint is 0
    values, vectors = np.linalg.eigh(np.cov(z.T))
    fit = dp_pca(
        "~ .",
        engines.stream(root / "g.parquet", chunk_rows=1100),
        k=3,
        eps=np.inf,
        delta=0,
        bounds=(lo, hi),
        radius=radius,
    )
    np.testing.assert_allclose(fit.eigenvalues, values[::-1][:3], rtol=1e-9)
    np.testing.assert_allclose(np.abs(fit.basis.T @ vectors[:, ::-1][:, :3]), np.eye(3), atol=1e-7)
    np.testing.assert_allclose(fit.centre, z.mean(axis=0), rtol=1e-10, atol=1e-12)


def test_dp_pca_validates_before_spending_and_names_data_dependence(gmm_data):
    df, root = gmm_data
    src = engines.stream(root / "g.parquet")
    acc = Accountant(eps=2.0, delta=1e-5)
    with pytest.raises(DataError, match="k must be"):
        dp_pca("~ .", src, k=9, eps=1.0, delta=1e-6, bounds=(-12, 12), accountant=acc)
    with pytest.raises(PrivacyParameterError, match="k must be a whole number"):  # the argument's type
        dp_pca("~ .", src, k="2", eps=1.0, delta=1e-6, bounds=(-12, 12), accountant=acc)
    with pytest.raises(PrivacyParameterError, match="delta > 0"):
        dp_pca("~ .", src, k=2, eps=1.0, delta=0, bounds=(-12, 12), accountant=acc)
    with pytest.raises(PrivacyParameterError, match="same positive width"):
        dp_pca(
            "~ .",
            src,
            k=2,
            eps=1.0,
            delta=1e-6,
            bounds={"x1": (0, 1), "x2": (0, 2)},
            radius=1.0,
            accountant=acc,
        )
    assert acc.spent_eps == 0.0
    dp_pca("~ .", src, k=2, eps=1.5, delta=1e-6, bounds=(-12, 12), accountant=acc, random_state=1)
    assert acc.spent_eps == pytest.approx(1.5)
    with pytest.raises(BudgetExceededError):
        dp_pca("~ .", src, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), accountant=acc)
    with pytest.warns(NonPrivateWarning):
        fit = dp_pca("~ .", src, k=2, eps=1.0, delta=1e-6, random_state=1)
    assert any("min and max" in s for s in fit.privacy.data_dependent_steps)
    with pytest.raises(PrivacyParameterError, match="strict"):
        dp_pca("~ .", src, k=2, eps=1.0, delta=1e-6, strict=True)


def test_dp_gmm_refuses_engine_input_and_points_to_dp_pca(gmm_data):
    import dpstats as dp

    df, root = gmm_data
    for src in _sources(df, root, "g").values():
        with pytest.raises(DataError, match="dp_pca"):
            dp.dp_gmm("~ .", src, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12))


# --------------------------------------------------------------------------- Gaussian vertical GLM
# Coefficients equal the in-memory (row-based) fit to relative 1e-8 and SEs to 1e-6: both paths run the
# same sweeps (same blocks, order, tol 1e-8 and stopping rule), so they stop at the same sweep and differ
# only by floating-point summation order (~1e-13, amplified by cond(XᵀX) < 10^2 here).
PARTIES = [["x1", "x2", "g"], ["x3", "x4"], ["x5"]]


@pytest.fixture(scope="module")
def glm_data(tmp_path_factory):
    import pandas as pd

    gen = np.random.default_rng(21)
    n = 5000
    X = gen.standard_normal((n, 5)) + 0.5 * gen.standard_normal((n, 1))  # correlated across parties
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 6)])
    df["g"] = pd.Categorical(gen.choice(["a", "b", "c"], n))
    df["y"] = 1.0 + df.x1 - 0.5 * df.x3 + 0.25 * df.x5 + (df.g == "b") + gen.standard_normal(n)
    root = tmp_path_factory.mktemp("vglm")
    df.to_parquet(root / "v.parquet", row_group_size=1200)
    return df, root


def test_gaussian_vertical_glm_from_statistics_equals_row_based_fit(glm_data):
    import dpstats as dp

    df, root = glm_data
    ref = dp.vertical_glm("y ~ .", df, parties=PARTIES)
    assert ref.converged and ref.iterations > 3  # a real multi-sweep descent, not one solve
    srcs = {
        "parquet": engines.stream(root / "v.parquet", chunk_rows=900, levels={"g": ["a", "b", "c"]}),
        "dask": engines.on_dask(df, npartitions=4, levels={"g": ["a", "b", "c"]}),
    }
    for label, src in srcs.items():
        fit = dp.vertical_glm("y ~ .", src, parties=PARTIES)
        assert fit.terms == ref.terms and fit.n == ref.n, label
        assert fit.iterations == ref.iterations and fit.converged, label
        np.testing.assert_allclose(
            fit.coefficients["estimate"], ref.coefficients["estimate"], rtol=1e-8, atol=1e-12, err_msg=label
        )
        np.testing.assert_allclose(
            fit.coefficients["std_error"], ref.coefficients["std_error"], rtol=1e-6, err_msg=label
        )
        assert fit.dispersion == pytest.approx(ref.dispersion, rel=1e-8)
        assert fit.deviance == pytest.approx(ref.deviance, rel=1e-8)
        assert "SIMULATED FROM POOLED SUFFICIENT STATISTICS" in fit.privacy.notes[0]
        assert "not the networked protocol" in fit.privacy.notes[0]
        assert "SIMULATED FROM POOLED SUFFICIENT STATISTICS" in str(fit.summary())
    # the pooled and conditional SE options also come from the statistics
    for se in ("pooled", "conditional"):
        a = dp.vertical_glm("y ~ .", df, parties=PARTIES, se=se)
        b = dp.vertical_glm("y ~ .", srcs["parquet"], parties=PARTIES, se=se)
        np.testing.assert_allclose(
            b.coefficients["std_error"], a.coefficients["std_error"], rtol=1e-6, err_msg=se
        )


def test_vertical_glm_stream_refused_for_other_families_penalties_and_dp(glm_data):
    import dpstats as dp

    df, root = glm_data
    src = engines.stream(root / "v.parquet", levels={"g": ["a", "b", "c"]})
    with pytest.raises(DataError, match="only for family='gaussian' without penalty"):
        dp.vertical_glm("y ~ x1 + x3", src, parties=[["x1"], ["x3"]], family="poisson")
    with pytest.raises(DataError, match="only for family='gaussian' without penalty"):
        dp.vertical_glm("y ~ x1 + x3", src, parties=[["x1"], ["x3"]], penalty="ridge", lam=0.1)
    acc = Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(DataError, match="only for family='gaussian' without penalty"):
        dp.vertical_glm(
            "y ~ x1 + x3",
            src,
            parties=[["x1"], ["x3"]],
            family="binomial",
            penalty="ridge",
            lam=0.1,
            eps=1.0,
            delta=1e-6,
            bounds=(-5, 5),
            accountant=acc,
        )
    assert acc.spent_eps == 0.0
    with pytest.raises(DataError, match="se='history'"):
        dp.vertical_glm("y ~ x1 + x3", src, parties=[["x1"], ["x3"]], se="history")
    with pytest.raises(DataError, match="'x9'"):
        dp.vertical_glm("y ~ x1 + x3", src, parties=[["x1", "x9"], ["x3"]])
