"""dp_sis and dp_knockoff warn, as dp.plan does, when their operating characteristics under ``assume=`` say
the release cannot beat chance (audit s15-stat3, F02: dp_sis reported precision 0.033 (se 0.004) against
chance 0.025 at n = 2000, d = 200, k = 5, eps = 2 and was silent in 40 of 40 calls, while dp.plan on the
same inputs raised ChanceWarning).

One rule and one text (:mod:`dpstats.simulate.chance`): a measure within 2 Monte Carlo standard errors of
its chance level (dp_sis: precision s/d and recall k/d; dp_knockoff: power 0.05).  Only the assumed model
and public inputs enter (the rows are simulated), so the warning is the same for neighbouring data sets.
dp_two_stage takes no ``assume=`` (its operating characteristics are hypothetical vote counts): nothing to
warn about there.

Designs: the audit's (5 signals of standardized coefficient 0.25, N(0, 1) features clipped to (−3, 3),
noise sd 1, data seed 1000, random_state 0, oc_trials 400); a fine one (d = 50, coefficient 0.5:
precision 0.95); dp_knockoff at n = 20 000, p = 30, 10 signals ±4 with every scale declared (the audit's
knockoff design), assumed strength 4 (power 1) and 0.02 (power 0.016).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.simulate import Assume
from dpstats.simulate.knockoff import default_row_bound

AUDIT = Assume(signals=5, strength=0.25, noise=1, bound_sds=3)


def _caught(fn) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in seen if issubclass(w.category, ChanceWarning)]


def _sis_data(d: int, strength: float, seed: int = 1000, n: int = 2000) -> tuple[pd.DataFrame, dict]:
    g = np.random.default_rng(seed)
    X = np.clip(g.normal(size=(n, d)), -3, 3)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = X[:, :5] @ np.full(5, strength) + g.normal(size=n)
    return df, {**{f"x{j}": (-3, 3) for j in range(d)}, "y": (-6, 6)}


def _sis(df, bounds, model, **kw):
    return _caught(
        lambda: dp.dp_sis("y ~ .", df, eps=2.0, k=5, bounds=bounds, assume=model, random_state=0, **kw)
    )


def _words(texts: list[str]) -> list[str]:
    """The warnings without the estimates they quote: ``eps = 2 (0.028, s.e. 0.0051)`` is ``eps = 2``."""
    return [re.sub(r" \([-0-9.e+]+, s\.e\. [-0-9.e+na]+\)", "", t) for t in texts]


def test_dp_sis_at_chance_under_its_assumed_model_warns_with_the_planner_s_text():
    df, bounds = _sis_data(200, 0.25)
    fit, caught = _sis(df, bounds, AUDIT, oc_trials=400)
    oc = fit.operating_characteristics.table().set_index("quantity")
    precision = oc.loc["precision (share of the 5 selected that are true)"]
    assert precision.estimate <= 5 / 200 + 2 * precision.std_error  # at chance, as the audit found
    plan, planned = _caught(
        lambda: dp.plan(
            "dp_sis", n=2000, p=200, eps=[2.0], k=5, assume=AUDIT, random_state=1, bounds="declared"
        )
    )
    # the same rule and the same words; each states its own simulation's estimate (other draws)
    assert len(planned) == 1 and _words(caught) == _words(planned)
    assert re.search(r"at eps = 2 \(0\.0\d+, s\.e\. 0\.00\d+\)", caught[0])
    assert caught[0].startswith("cannot beat chance: dp_sis: predicted precision is within 2 SE of chance")
    assert f"Warning (under the assumed model): {caught[0]}" in str(fit)
    assert caught[0] in str(fit.summary()) and caught[0] in fit.to_dict()["warnings"]


def test_dp_sis_is_silent_where_its_assumed_model_beats_chance_or_nothing_is_assumed():
    df, bounds = _sis_data(50, 0.5, seed=1)
    fit, caught = _sis(df, bounds, Assume(signals=5, strength=0.5, noise=1, bound_sds=3), oc_trials=200)
    assert fit.operating_characteristics.table().estimate.iloc[-2] > 0.9 and caught == []
    assert "Warning (under the assumed model)" not in str(fit)
    df, bounds = _sis_data(200, 0.25)
    fit, caught = _sis(df, bounds, None)  # no data model: no error rates, no chance judgement
    assert caught == [] and fit.assumed_chance == ""


def test_the_warning_reads_no_data_neighbouring_data_sets_give_the_same_text():
    df, bounds = _sis_data(200, 0.25)
    other = df.copy()
    other.iloc[0] = 0.0  # one row replaced
    _, first = _sis(df, bounds, AUDIT, oc_trials=400)
    _, second = _sis(other, bounds, AUDIT, oc_trials=400)
    assert first and first == second


@pytest.fixture(scope="module")
def knockoff_data() -> tuple[pd.DataFrame, dict]:
    n, p, s = 20_000, 30, 10
    g = np.random.default_rng(2024)
    X = g.normal(size=(n, p))
    bound = default_row_bound(n, p)
    norms = np.linalg.norm(X, axis=1)
    X[norms > bound] *= (bound / norms[norms > bound])[:, None]
    b = np.zeros(p)
    b[:s] = 4 * np.where(np.arange(s) % 2, -1, 1)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = X @ b + g.normal(size=n)
    declared = {
        "bounds": bound,
        "sigma": 1.0,
        "beta_norm": float(np.linalg.norm(b)),
        "c_min": 0.9 * math.sqrt(n),
        "lambda_min": 0.9 * np.linalg.eigvalsh(np.corrcoef(X.T)).min(),
    }
    return df, declared


@pytest.mark.parametrize("strength, warns", [(0.02, True), (4.0, False)])
def test_dp_knockoff_warns_when_power_under_its_assumed_model_is_at_chance(knockoff_data, strength, warns):
    df, declared = knockoff_data
    fit, caught = _caught(
        lambda: dp.dp_knockoff(
            "y ~ .",
            df,
            eps=4.0,
            delta=1e-6,
            fdr=0.2,
            random_state=0,
            assume=Assume(signals=10, strength=strength),
            oc_trials=50,
            **declared,
        )
    )
    power = fit.operating_characteristics.table().set_index("quantity").estimate
    assert (power["power (share of the 10 assumed signals selected)"] < 0.05) == warns
    if warns:
        assert _words(caught) == [
            "cannot beat chance: dp_knockoff (Method II): predicted power is within 2 SE of chance (power below "
            "0.05: the filter practically never selects) at eps = 4. Spending this budget would buy noise."
        ]
    else:
        assert caught == [] and fit.assumed_chance == ""
