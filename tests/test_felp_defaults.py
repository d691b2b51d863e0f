"""dp_felp's strict defaults (one learner per 20 rows, each normalised) and its ChanceWarning.

The data are the issue's: 6 N(0, 1) features, y = 1{X1 − X2 + N(0, 0.5²) > 0}, bounds (−4, 4).
Recovery = the top 2 is exactly {x1, x2} (chance 1/15); benchmarks/bench_felp_defaults.py measured
1.00 over 3 data sets × 200 releases at n = 2 000, eps = 1 with the defaults, 0.06 with the
former ones (k = 20, ‖w‖ clipped at √(log 2/λ)).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods import felp as m

CALL = dict(bounds=(-4, 4), select=2, oc_trials=0, levels={"class": ["a", "b"]})


def _issue_rows(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = X[:, 0] - X[:, 1] + rng.normal(0.0, 0.5, n) > 0
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(6)])
    df.insert(0, "class", np.where(y, "b", "a"))
    return df


def _fit(df, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit = dp.dp_felp("class ~ .", df, **{**CALL, **kwargs})
    return fit, [str(w.message) for w in seen if issubclass(w.category, ChanceWarning)]


def test_defaults_recover_the_two_features_at_eps_1():
    """Seeds 0–2: every release selects {x1, x2} at n = 2 000, eps = 1 (k = 100 learners), no warning."""
    for seed in range(3):
        fit, chance = _fit(_issue_rows(2000, seed), eps=1.0, random_state=seed)
        assert set(fit.selected) == {"x1", "x2"} and fit.n_estimators == 100 and chance == []
        assert "Chance:" not in str(fit)


def test_the_former_defaults_warn_and_print_that_they_cannot_beat_chance():
    """k = 5, C = √(log 2) at eps = 1: noise s.d. per weight 2C/(kε)·√7 = 0.881 > r*(1) = 0.222."""
    fit, chance = _fit(_issue_rows(400, 1), eps=1.0, n_estimators=5, clip_norm=0.8326, random_state=1)
    assert len(chance) == 1 and "noise s.d. per weight 0.8811 exceeds 0.2223" in chance[0]
    assert f"Chance: {chance[0]}" in str(fit) and fit.chance == chance[0]


def test_the_warning_reads_public_inputs_only():
    """Two neighbouring data sets (row 0 replaced) give the same warning and the same print line."""
    df = _issue_rows(200, 3)
    other = df.copy()
    other.iloc[0, 1:] = 3.9
    other.iloc[0, 0] = "a" if df.iloc[0, 0] == "b" else "b"
    first, second = (_fit(d, eps=0.05, random_state=4) for d in (df, other))
    assert first[1] == second[1] and len(first[1]) == 1
    assert first[0].chance == second[0].chance


@pytest.mark.parametrize(
    ("sd_scale", "expected"),
    [(0.0, 1.0), (1e-3, 1.0), (1e3, 2 / 20)],
)
def test_best_case_precision_limits(sd_scale, expected):
    """No noise: the favoured features are selected; huge noise: a random choice, 2/20 (±0.02 at 2 000 draws)."""
    assert m.best_case_precision(sd_scale, 20, 2, 1.0) == pytest.approx(expected, abs=0.02)
