"""dp_gmm warns (ChanceWarning) before spending when its clustering step cannot locate the components
(audit s13-stat3, finding 5: at n = 272, Old-Faithful-like data, 16/100 runs at eps = 4 failed with no warning).

The rule (dpstats.methods.gmm.accuracy.location_warning) is Dwork & Roth's Theorem 3.24 for the
AboveThreshold of each clustering round: when the rows a round looks for at the most favourable
weights, alpha·n/k, are at most its accuracy 8(ln L + ln 4)/eps_svt at probability 1/2, it may stop at a
side whose cells are empty.  Public inputs only: n (replace one row), d, k, eps, delta, method, alpha.
Data model: the audit's (gmm_collapse_calibration.py): weights (0.36, 0.64), means (2.04, 54.5) and
(4.29, 80.0), sds (0.27, 5.9) and (0.41, 5.9), bounds (1, 6) × (40, 100); oracle: sklearn's adjusted
Rand index against the true labels.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods.gmm import GMMOptions, location_warning

W = np.array([0.36, 0.64])
MU = np.array([[2.04, 54.5], [4.29, 80.0]])
SD = np.array([[0.27, 5.9], [0.41, 5.9]])
BOUNDS = {"eruptions": (1, 6), "waiting": (40, 100)}


def _options(eps: float, k: int = 2) -> GMMOptions:
    return GMMOptions.partial(
        eps=eps, delta=1e-6, method="pca_cluster", k=k, alpha=0.5, refine=3, neighbouring="replace"
    )


def _faithful(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    z = rng.choice(2, size=n, p=W)
    X = MU[z] + SD[z] * rng.standard_normal((n, 2))
    return pd.DataFrame(X, columns=["eruptions", "waiting"]), z


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_rule_fires_at_the_audit_s_n_272_and_not_at_2720_or_10000(eps):
    with pytest.warns(ChanceWarning, match="cannot locate the components at n = 272"):
        assert location_warning(272, 2, _options(eps)) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        assert location_warning(2720, 2, _options(eps)) is None
        assert location_warning(10_000, 2, _options(eps)) is None
    assert location_warning(None, 2, _options(eps)) is None  # n private: nothing said


def test_stated_n_and_eps_are_where_the_rule_turns_silent():
    with pytest.warns(ChanceWarning) as caught:
        location_warning(272, 2, _options(4.0))
    text = str(caught[0].message)
    n_needed = int(re.search(r"needs n >= (\d+)", text).group(1))
    eps_needed = float(re.search(r"eps >= ([0-9.]+) at this n", text).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        assert location_warning(n_needed, 2, _options(4.0)) is None
        assert location_warning(272, 2, _options(eps_needed * 1.01)) is None
    with pytest.warns(ChanceWarning):
        location_warning(n_needed - 1, 2, _options(4.0))
    with pytest.warns(ChanceWarning):
        location_warning(272, 2, _options(eps_needed * 0.99))


def test_front_door_warns_before_spending():
    df, _ = _faithful(272, np.random.default_rng(0))
    acc = dp.Accountant(eps=10.0, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        with pytest.raises(ChanceWarning, match="cannot locate the components"):
            dp.dp_gmm("~ .", df, k=2, eps=4.0, delta=1e-6, bounds=BOUNDS, accountant=acc, random_state=1)
    assert acc.spent_eps == 0.0
    with pytest.warns(ChanceWarning, match="cannot locate the components"):
        fit = dp.dp_gmm("~ .", df, k=2, eps=4.0, delta=1e-6, bounds=BOUNDS, random_state=1, oc_trials=0)
    assert any("cannot locate the components" in w for w in fit.warnings)


def test_the_rule_separates_failing_fits_from_working_ones():
    """15 runs per cell (data and noise seeded from 11): at n = 272, eps = 4 (warned) at most 7 fits reach
    ARI >= 0.8 (the audit: 21 %; here 8/40 at 40 runs); at n = 2 720, eps = 4 (silent) at least 14 do (the audit:
    100 %)."""
    rng = np.random.default_rng(11)
    good = {}
    for n in (272, 2720):
        good[n] = 0
        for _ in range(15):
            df, z = _faithful(n, rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dp.dp_gmm(
                    "~ .",
                    df,
                    k=2,
                    eps=4.0,
                    delta=1e-6,
                    bounds=BOUNDS,
                    oc_trials=0,
                    random_state=int(rng.integers(2**31)),
                )
            good[n] += adjusted_rand_score(z, fit.predict(df)) >= 0.8
    assert good[272] <= 7 and good[2720] >= 14
