"""The planner for dp_felp (issue 19): bad input, reproducibility, limits, and agreement with the front door.

The front door's data here are drawn row by row with numpy (not through
``dpstats.simulate.felp.planted``), and its two measures are computed from what
the front door's result shows: the selected names against the planted ones, and
σ²/s² with σ = scale·√(d + 1) (the L2-Laplace law: E‖b‖² = scale²·d(d + 1)) and
s² the sample variance of the released weights.  Agreement is within 2
combined Monte Carlo standard errors (each side's SE in quadrature); seeds are
stated per test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning, DataError, NonPrivateWarning, PrivacyParameterError
from dpstats.planner import FelpModel

SMALL = FelpModel(signals=3, shift=2.0)


def _plan(**kwargs):
    base = {"n": 100, "p": 20, "eps": [1e3], "k": 3, "n_estimators": 5, "assume": SMALL, "trials": 6}
    base.update(kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChanceWarning)
        return dp.plan("dp_felp", random_state=base.pop("random_state", 0), **base)


def _estimate(pl, measure: str, eps: float | None = None) -> tuple[float, float]:
    part = pl.table[pl.table.measure == measure]
    row = part.iloc[0] if eps is None else part[part.eps == eps].iloc[0]
    return float(row.estimate), float(row.std_error)


def _rows(n: int, d: int, model: FelpModel, rng: np.random.Generator) -> pd.DataFrame:
    """Equal class shares, N(0, 1) features, planted ones shifted by shift·(c − (K − 1)/2)."""
    K = model.n_classes
    y = rng.permutation(np.arange(n) % K)
    X = rng.normal(size=(n, d))
    X[:, : model.signals] += model.shift * (y[:, None] - (K - 1) / 2)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
    df.insert(0, "class", pd.Categorical([f"c{c}" for c in y]))
    return df


def _front_door(n, d, k, n_estimators, model, eps, runs, seed):
    """Precision at k and noise share of ``runs`` front-door fits on fresh data, as lists."""
    rng = np.random.default_rng(seed)
    truth = {f"x{j + 1}" for j in range(model.signals)}
    precision, share = [], []
    for _ in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # eps = inf in the limit test only
            fit = dp.dp_felp(
                "class ~ .",
                _rows(n, d, model, rng),
                eps=eps,
                select=k,
                n_estimators=n_estimators,
                variant="strict",
                bounds=model.box(),
                random_state=int(rng.integers(2**31)),
            )
        precision.append(len(truth & set(fit.selected)) / k)
        sigma2 = fit.noise_scale**2 * (d + 1)
        share.append(min(1.0, sigma2 / float(np.var(fit.weights, ddof=1))))
    return precision, share


def _agree(predicted: float, predicted_se: float, measured: list[float]) -> None:
    mean, se = float(np.mean(measured)), float(np.std(measured, ddof=1) / math.sqrt(len(measured)))
    assert abs(predicted - mean) <= 2 * math.hypot(predicted_se, se), (
        f"planner {predicted:.3f} ± {predicted_se:.3f}, front door {mean:.3f} ± {se:.3f}"
    )


# ----------------------------------------------------------------------------- fast


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"variant": "I"}, PrivacyParameterError, "variant for dp_felp"),
        ({"variant": []}, PrivacyParameterError, "variant for dp_felp"),
        ({"bounds": "auto"}, PrivacyParameterError, "cannot yet predict"),
        ({"bounds": "midpoint"}, PrivacyParameterError, "bounds for dp_felp"),
        ({"k": 20}, DataError, "k = 20 is out of range"),
        ({"n_estimators": 0}, DataError, "n_estimators must be a whole number >= 1"),
        ({"lam": -1.0}, PrivacyParameterError, "lam"),
        ({"assume": FelpModel(signals=20)}, DataError, "signals must be < p"),
        ({"assume": {"signals": 3, "separation": 2.0}}, PrivacyParameterError, "unknown field"),
        ({"assume": "planted"}, PrivacyParameterError, "FelpModel or a dict"),
        ({"eps": [0.0]}, PrivacyParameterError, "eps"),
        ({"n": 8}, DataError, "fewer than 2 rows each"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        _plan(**kwargs)


def test_model_rejects_bad_fields():
    with pytest.raises(PrivacyParameterError, match="n_classes must be >= 2"):
        FelpModel(n_classes=1)
    with pytest.raises(PrivacyParameterError, match="shift must be a positive"):
        FelpModel(shift=-1.0)


def test_same_seed_same_plan_other_seed_other_plan():
    a, b, c = _plan(random_state=3), _plan(random_state=3), _plan(random_state=4)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert not a.table.estimate.equals(c.table.estimate)


def test_plan_states_the_model_the_ledger_and_no_budget():
    pl = _plan(eps=[10.0, 1e3])
    text = str(pl)
    assert "no data was read; no budget was charged" in text and pl.assumption == SMALL.describe()
    assert pl.ledger["dp_felp (strict)"][0]["mechanism"] == "L2-Laplace mechanism (output perturbation)"
    assert "2C/k" in pl.ledger["dp_felp (strict)"][0]["sensitivity"]
    assert set(pl.table.measure) == {"precision", "recall", "noise_share"}


def test_huge_eps_is_the_nonprivate_ensembles_recovery():
    """eps = 1e9 against the front door at eps = inf (no noise), 40 data sets each; seeds 11 and 12.

    The noise share tends to 0 (σ ∝ 1/eps); precision at k agrees with the
    non-private ensemble's within 2 combined SEs.
    """
    model = FelpModel(signals=3, shift=1.0)
    pl = _plan(eps=[1e9], assume=model, trials=40, random_state=11)
    share, _ = _estimate(pl, "noise_share")
    assert share < 1e-6
    measured, _ = _front_door(100, 20, 3, 5, model, math.inf, runs=40, seed=12)
    _agree(*_estimate(pl, "precision"), measured)


def test_chance_warning_at_small_eps_and_none_at_huge_eps():
    """Precision of a random choice is planted/d = 3/20; at eps = 0.1 the strict variant cannot beat it."""
    with pytest.warns(ChanceWarning, match="planted/d = 0.15"):
        dp.plan("dp_felp", n=100, p=20, eps=0.1, k=3, n_estimators=5, assume=SMALL, trials=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        dp.plan("dp_felp", n=100, p=20, eps=1e6, k=3, n_estimators=5, assume=SMALL, trials=6, random_state=0)


def test_both_variants_are_planned_and_the_paper_one_is_flagged():
    pl = _plan(variant=("strict", "paper"), eps=[300.0])
    assert set(pl.table.method) == {"dp_felp (strict)", "dp_felp (paper)"}
    assert any("refute" in note for note in pl.notes)
    share = pl.table[pl.table.measure == "noise_share"].set_index("method").estimate
    # the paper variant's Δ = 2/(nλ) = 0.02 is below the strict 2C/k = 0.4 (n = 100, k = 5, λ = 1, C = 1), but
    # the strict learners are normalised to norm 1 while the paper's weights are ~z̄/(4λ), a few 10⁻³: at
    # eps = 300 the noise share is 0.001 (strict) against 0.035 (paper), seed 0, 6 trials
    assert share["dp_felp (strict)"] < share["dp_felp (paper)"]


def test_target_along_n_stays_where_the_strict_split_is_defined():
    """Solving for n never plans fewer than 2 rows per learner (n >= 2·n_estimators)."""
    pl = _plan(n=[40, 100], eps=[1e4], target={"precision": 0.9}, trials=4)
    sol = pl.solutions[0]
    assert sol.axis == "n" and all(x >= 10 for x, _, _ in sol.evaluated)


def test_cli_plan_felp(capsys):
    from dpstats.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChanceWarning)
        code = main(
            ["plan", "felp", "--n", "100", "--p", "20", "--eps", "1000", "--signals", "3", "--strength", "2"]
            + ["--arg", "k=3", "--arg", "n_estimators=5", "--trials", "4", "--seed", "0"]
        )
    assert code == 0
    printed = capsys.readouterr().out
    assert "dp_felp (strict)" in printed and "3 planted features" in printed


# ----------------------------------------------------------------------------- slow


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "d", "k", "n_estimators", "model", "eps", "seed"),
    [
        (200, 50, 5, 10, FelpModel(signals=5, shift=1.5), 1000.0, 1),
        (300, 40, 4, 5, FelpModel(signals=4, shift=1.0), 30.0, 2),
        (150, 30, 3, 5, FelpModel(signals=3, shift=2.0, n_classes=3), 1000.0, 3),
    ],
)
def test_planner_agrees_with_the_front_door(n, d, k, n_estimators, model, eps, seed):
    """Strict variant, declared box; planner 150 trials (seed), front door 100 data sets (seed + 1000)."""
    pl = _plan(
        n=n, p=d, k=k, n_estimators=n_estimators, assume=model, eps=[eps], trials=150, random_state=seed
    )
    precision, share = _front_door(n, d, k, n_estimators, model, eps, runs=100, seed=1000 + seed)
    _agree(*_estimate(pl, "precision"), precision)
    _agree(*_estimate(pl, "noise_share"), share)
