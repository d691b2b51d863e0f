"""dpstats.simulate: the assumed-model object and the sufficient-statistics simulators."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from dpstats.errors import PrivacyParameterError
from dpstats.simulate import Assume, sis_scores, sis_trials


def _rows_scores(n, d, assume, rng, score):
    """Scores computed from generated rows of the same model (no clipping: the simulator ignores it)."""
    s, rho, b = assume.signals, assume.correlation, assume.strength
    f = rng.standard_normal((n, 1))
    X = math.sqrt(rho) * f + math.sqrt(1 - rho) * rng.standard_normal((n, d))
    y = b * X[:, :s].sum(axis=1) + assume.noise * rng.standard_normal(n)
    u, v = X / assume.bound_sds, y / (assume.bound_sds * assume.response_sd())
    if score == "centred":
        return np.abs((u - u.mean(0)).T @ (v - v.mean()))
    return np.abs(u.T @ v)


@pytest.mark.parametrize("score", ["centred", "midpoint"])
@pytest.mark.parametrize("rho", [0.0, 0.4])
def test_simulated_scores_match_scores_from_rows(score, rho):
    # seed 11, 1500 draws each; two-sample KS on a signal column and a null column,
    # and on the sum of all scores (joint dependence); reject at p < 0.001 (per test).
    n, d, reps = 25, 6, 1500
    assume = Assume(signals=2, strength=0.6, noise=1.2, correlation=rho)
    rng = np.random.default_rng(11)
    sim = np.array([sis_scores(n, d, assume, rng, score=score) for _ in range(reps)])
    rows = np.array([_rows_scores(n, d, assume, rng, score) for _ in range(reps)])
    for a, b in ((sim[:, 0], rows[:, 0]), (sim[:, -1], rows[:, -1]), (sim.sum(1), rows.sum(1))):
        assert stats.ks_2samp(a, b).pvalue > 1e-3


def test_ks_check_has_power_against_a_wrong_model():
    # the same check rejects when the rows come from a different strength (seed 12)
    n, d, reps = 25, 6, 1500
    rng = np.random.default_rng(12)
    sim = np.array([sis_scores(n, d, Assume(signals=2, strength=0.6), rng) for _ in range(reps)])
    rows = np.array(
        [_rows_scores(n, d, Assume(signals=2, strength=0.9), rng, "centred") for _ in range(reps)]
    )
    assert stats.ks_2samp(sim[:, 0], rows[:, 0]).pvalue < 1e-3


def test_cost_does_not_depend_on_n():
    # the draw count is the same at n = 50 and n = 10**9: the generator ends in the same state
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    sis_scores(50, 1000, Assume(signals=4, strength=0.3), a)
    sis_scores(10**9, 1000, Assume(signals=4, strength=0.3), b)
    assert a.bit_generator.state == b.bit_generator.state


def test_trials_rise_with_strength_and_eps():
    rng = np.random.default_rng(5)
    kw = dict(trials=60, sensitivity=4.0)
    weak = sis_trials(200, 500, 4, 2.0, Assume(signals=4, strength=0.05), rng, **kw)["recall"].mean()
    strong = sis_trials(200, 500, 4, 200.0, Assume(signals=4, strength=1.0), rng, **kw)["recall"].mean()
    assert weak < 0.2 and strong > 0.9


def test_assume_validates_and_coerces():
    with pytest.raises(PrivacyParameterError):
        Assume(signals=0, strength=1.0)
    with pytest.raises(PrivacyParameterError):
        Assume(signals=2, strength=1.0, correlation=1.0)
    with pytest.raises(PrivacyParameterError):
        Assume.coerce({"signals": 2, "strenght": 1.0})
    with pytest.raises(PrivacyParameterError):
        Assume.coerce("released")
    assert Assume.coerce("released", released=True) == "released"
    a = Assume.coerce({"signals": 2, "strength": 1})
    assert isinstance(a.strength, float) and "2 true signals" in a.describe()
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.signals = 3


def test_assume_accepts_whole_doubles_from_r():
    assert Assume.coerce({"signals": 8.0, "strength": 1.0}).signals == 8
    with pytest.raises(PrivacyParameterError):
        Assume(signals=2.5, strength=1.0)
