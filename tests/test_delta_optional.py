"""delta is needed only where Gaussian noise is added (the R audit's F07: ``dp_pca(~ ., USArrests, k = 2,
eps = Inf)`` stopped with "argument "delta" is missing", as ``prcomp`` never would).

At eps = inf no noise is added: dp_pca and dp_knockoff run without a delta and give what they give with
one.  At finite eps a missing delta is refused before the data is read or the budget charged, in words
that say a delta > 0 is needed (Gaussian noise) and give an example value.

Oracle: numpy's eigen-decomposition of ``np.cov`` of the rows (R's ``prcomp(x)$sdev^2``), to relative 1e-10
(the same 3 × 3 matrix decomposed in double precision).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.privacy.accountant import Accountant

BOX = {"a": (-4.0, 4.0), "b": (-4.0, 4.0), "c": (-4.0, 4.0)}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 3)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, 0.3], [0.0, 0.0, 0.6]])
    return pd.DataFrame(np.clip(x, -4, 4), columns=list("abc"))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        return fn(*args, **kwargs)


def test_pca_at_eps_inf_needs_no_delta_and_is_prcomp(frame):
    fit = _quiet(dp.dp_pca, "~ .", frame, k=2, eps=math.inf)
    expected = np.sort(np.linalg.eigvalsh(np.cov(frame.to_numpy(), rowvar=False)))[::-1][:2]
    np.testing.assert_allclose(fit.eigenvalues, expected, rtol=1e-10)
    with_delta = _quiet(dp.dp_pca, "~ .", frame, k=2, eps=math.inf, delta=0)
    np.testing.assert_array_equal(fit.eigenvalues, with_delta.eigenvalues)
    assert fit.privacy.delta == 0.0


def test_knockoff_at_eps_inf_needs_no_delta():
    df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    fit = _quiet(dp.dp_knockoff, "y ~ .", df, eps=math.inf, fdr=0.2, random_state=1, oc_trials=0)
    again = _quiet(
        dp.dp_knockoff, "y ~ .", df, eps=math.inf, delta=1e-6, fdr=0.2, random_state=1, oc_trials=0
    )
    assert fit.variant == "non-private" and list(fit.selected) == list(again.selected)


CALLS = {
    "dp_pca": lambda df, acc: dp.dp_pca("~ .", df, k=2, eps=1.0, bounds=BOX, accountant=acc),
    "dp_gmm": lambda df, acc: dp.dp_gmm("~ .", df, k=2, eps=1.0, bounds=BOX, accountant=acc),
    "dp_knockoff": lambda df, acc: dp.dp_knockoff("a ~ .", df, eps=1.0, bounds=8.0, accountant=acc),
    "dp_glm": lambda df, acc: dp.dp_glm("I(a > 0) ~ b", df, eps=1.0, bounds=BOX, accountant=acc),
}


@pytest.mark.parametrize("door", sorted(CALLS))
def test_finite_eps_without_delta_is_refused_naming_delta_and_an_example(frame, door):
    acc = Accountant(eps=10.0, delta=1e-3)
    with pytest.raises(PrivacyParameterError) as err:
        CALLS[door](frame, acc)
    text = str(err.value)
    assert "delta > 0" in text and "Gaussian" in text and "delta=1e-6" in text, text
    assert acc.spent_eps == 0.0 and acc.spent_delta == 0.0  # refused before any charge
