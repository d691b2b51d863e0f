"""Operating characteristics: exact rows by default, error rates only under an explicit assume=."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.simulate import Assume

ERROR_RATE_WORDS = ("precision", "recall", "fdr", "power", "misclassification", "stability")


def _model_frame(n, d, assume, rng):
    s, rho, b = assume.signals, assume.correlation, assume.strength
    X = math.sqrt(rho) * rng.standard_normal((n, 1)) + math.sqrt(1 - rho) * rng.standard_normal((n, d))
    y = b * X[:, :s].sum(axis=1) + assume.noise * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df.insert(0, "y", y)
    return df


def _bounds(d, assume):
    c = assume.bound_sds
    return {"y": (-c * assume.response_sd(), c * assume.response_sd()), **{f"x{j}": (-c, c) for j in range(d)}}


@pytest.mark.parametrize("n, d, k, eps, model", [
    (400, 50, 3, 2.0, Assume(signals=3, strength=1.0)),
    (300, 40, 4, 3.0, Assume(signals=4, strength=0.6, noise=1.5, correlation=0.3)),
])
def test_sis_assumed_recall_matches_front_door_on_model_data(n, d, k, eps, model):
    # seeds 21 (data and mechanism) and 22 (simulation); 250 front-door runs on fresh data sets
    # versus 600 simulated trials; agreement within 2 combined standard errors.
    rng = np.random.default_rng(21)
    measured = []
    for _ in range(250):
        df = _model_frame(n, d, model, rng)
        fit = dp.dp_sis("y ~ .", data=df, eps=eps, k=k, bounds=_bounds(d, model), random_state=rng, oc_trials=0)
        measured.append(sum(t in fit.selected for t in df.columns[1:model.signals + 1]) / model.signals)
    fit = dp.dp_sis("y ~ .", data=df, eps=eps, k=k, bounds=_bounds(d, model), random_state=22,
                    assume=model, oc_trials=600)
    row = fit.operating_characteristics.table().set_index("quantity").filter(like="recall", axis=0).iloc[0]
    m, se = np.mean(measured), np.std(measured, ddof=1) / math.sqrt(len(measured))
    assert 0.1 < m < 0.95                       # a setting where recall is informative
    assert abs(row["estimate"] - m) <= 2 * math.hypot(row["std_error"], se)


def test_sis_default_has_exact_rows_only():
    df = _model_frame(100, 30, Assume(signals=2, strength=1.0), np.random.default_rng(0))
    fit = dp.dp_sis("y ~ .", data=df, eps=2.0, k=3, bounds=(-6, 6), random_state=0)
    oc = fit.operating_characteristics
    assert oc.trials == 0 and oc.assumption is None
    assert (oc.table()["std_error"] == 0).all()
    g50, g90 = oc.table()["estimate"].iloc[1:3]
    assert 0 < g50 < g90
    # the gap for probability 0.5 is where the tabulated recovery curve reaches 0.5
    assert fit.gap_for_recovery(0.5) == pytest.approx(g50, rel=0.02)
    assert dp.dp_sis("y ~ .", data=df, eps=2.0, k=3, bounds=(-6, 6), random_state=0,
                     oc_trials=0).operating_characteristics is None


def test_assume_requires_trials_and_builtin_score():
    df = _model_frame(60, 10, Assume(signals=2, strength=1.0), np.random.default_rng(1))
    with pytest.raises(PrivacyParameterError):
        dp.dp_sis("y ~ .", data=df, eps=1.0, k=2, bounds=(-6, 6), assume={"signals": 2, "strength": 1}, oc_trials=0)
    with pytest.raises(PrivacyParameterError):
        dp.dp_sis("y ~ .", data=df, eps=1.0, k=2, bounds=(-6, 6), assume={"signals": 2, "strenght": 1})
