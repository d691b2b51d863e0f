"""dp_pca at eps = inf (the non-private reference) and ``PCAResult.predict``.

Oracle: statsmodels' PCA (``method="eig"``, no demeaning, no standardising, loadings not
normalised) on the rows centred at the declared box's midpoint c, which is what dp_pca
decomposes (Σ (x − c)(x − c)ᵀ of rows clipped to the box and, at the default radius, not
shrunk).  Loadings agree up to each column's sign, to 1e-10; eigenvalues and scores to relative
1e-10.  Data: 200 seeded rows of three correlated columns, inside the declared box (so nothing
is clipped).  R's ``prcomp`` on R's data sets is the oracle of the R package's tests
(r_wrapper/tests/testthat/test-pca.R).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.multivariate.pca import PCA

import dpstats as dp
from dpstats.errors import DataError, FormulaError, NonPrivateWarning, PrivacyParameterError

BOX = {"a": (-10.0, 10.0), "b": (-6.0, 10.0), "c": (-8.0, 4.0)}
CENTRE = np.array([0.0, 2.0, -2.0])  # the box's midpoints


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    z = rng.standard_normal((200, 3))
    X = z @ np.array([[2.0, 0.8, -0.5], [0.0, 1.2, 0.4], [0.0, 0.0, 0.7]])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    assert all(df[c].between(lo, hi).all() for c, (lo, hi) in BOX.items())
    return df


def _reference(df: pd.DataFrame, k: int) -> PCA:
    return PCA(
        df.to_numpy() - CENTRE, ncomp=k, demean=False, standardize=False, normalize=False, method="eig"
    )


def _aligned(basis: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``basis`` with each column's sign matched to ``ref`` (eigenvectors are defined up to sign)."""
    return basis * np.sign(np.sum(basis * ref, axis=0))


def _inf_fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return dp.dp_pca("~ .", df, k=kw.pop("k", 2), eps=math.inf, delta=0, bounds=BOX, **kw)


def test_eps_inf_is_the_exact_pca_of_the_rows_centred_at_the_box_midpoint(frame):
    ref = _reference(frame, 3)
    fit = _inf_fit(frame, k=3)
    np.testing.assert_allclose(_aligned(fit.basis, ref.loadings), ref.loadings, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.eigenvalues, ref.eigenvals[:3], rtol=1e-10)
    assert fit.noise_sd == 0.0 and fit.centre.tolist() == CENTRE.tolist()
    assert str(fit).splitlines()[0] == "Principal components: non-private reference (eps = inf)"
    assert "\nEigenvalues: " in str(fit) and "Noisy" not in str(fit)


def test_eps_inf_warns_once_refuses_strict_and_charges_no_finite_budget(frame):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_pca("~ .", frame, k=2, eps=math.inf, delta=0)  # no bounds: the data's range, no step
    assert [str(w.message) for w in caught] == ["eps = inf: exact PCA, no noise, NOT private."]
    assert fit.privacy.data_dependent_steps == [] and math.isinf(fit.privacy.eps)
    assert [e.mechanism for e in fit.privacy.ledger] == ["none (eps = inf)"]
    with pytest.raises(PrivacyParameterError, match="strict=True refuses eps = inf"):
        dp.dp_pca("~ .", frame, k=2, eps=math.inf, delta=0, bounds=BOX, strict=True)
    with pytest.raises(PrivacyParameterError, match="dp_pca needs delta > 0"):  # a private call still does
        dp.dp_pca("~ .", frame, k=2, eps=1.0, delta=0, bounds=BOX)


def test_predict_gives_the_scores_on_the_components_with_na_pass(frame):
    ref = _reference(frame, 2)
    fit = _inf_fit(frame)
    signs = np.sign(np.sum(fit.basis * ref.loadings, axis=0))
    np.testing.assert_allclose(fit.predict(frame) * signs, ref.factors, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.predict(frame.to_numpy()), fit.predict(frame), rtol=0, atol=0)
    holed = frame.head(4).copy()
    holed.loc[1, "b"] = np.nan
    out = fit.predict(holed)
    assert out.shape == (4, 2) and np.isnan(out[1]).all() and np.isfinite(out[[0, 2, 3]]).all()
    with pytest.raises(
        DataError, match=r"newdata gives columns \['a', 'b'\], the fit used \['a', 'b', 'c'\]"
    ):
        fit.predict(frame[["a", "b"]])  # "~ ." over newdata's own columns
    named = dp.dp_pca("~ a + b + c", frame, k=2, eps=2.0, delta=1e-6, bounds=BOX, random_state=3)
    with pytest.raises(FormulaError, match="newdata has no column 'c'"):
        named.predict(frame[["a", "b"]])


def test_a_private_fit_predicts_with_its_released_basis(frame):
    fit = dp.dp_pca("~ a + b + c", frame, k=2, eps=2.0, delta=1e-6, bounds=BOX, random_state=3)
    np.testing.assert_allclose(fit.predict(frame.head(5)), (frame.head(5).to_numpy() - CENTRE) @ fit.basis)
    assert fit.predict(frame.head(5)).shape == (5, 2)
