"""Slow statistical checks of dp_felp."""

from __future__ import annotations

import math

import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning
from dpstats.simulate.felp import planted

pytestmark = pytest.mark.slow


def test_nonprivate_ensemble_recovers_planted_features_in_95_percent_of_seeds():
    """eps = inf, the default 20-learner ensemble: the top 10 equal the 10 planted features
    (of 100; two classes 1.5 s.d. apart along them, n = 200) in >= 19 of 20 seeds."""
    truth = {f"x{j}" for j in range(1, 11)}
    hits = 0
    for seed in range(20):
        df = planted(n=200, d=100, s=10, shift=1.5, random_state=100 + seed)
        with pytest.warns(NonPrivateWarning, match="eps = inf|variant='paper'"):
            fit = dp.dp_felp(
                "class ~ .", df, eps=math.inf, variant="paper", bounds=(-6, 6), random_state=seed, oc_trials=0
            )
        hits += set(fit.selected) == truth
    assert hits >= 19, f"recovered in {hits} of 20 seeds"
