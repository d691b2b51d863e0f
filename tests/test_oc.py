"""Operating characteristics: exact rows by default, error rates only under an explicit assume=."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.simulate import Assume

# the quantity names of simulated error-rate rows (the knockoff call itself legitimately names its target FDR)
ERROR_RATE_WORDS = (
    "precision (",
    "recall (",
    "fdr (target",
    "power (",
    "misclassification rate",
    "stability:",
)


def _model_frame(n, d, assume, rng):
    s, rho, b = assume.signals, assume.correlation, assume.strength
    X = math.sqrt(rho) * rng.standard_normal((n, 1)) + math.sqrt(1 - rho) * rng.standard_normal((n, d))
    y = b * X[:, :s].sum(axis=1) + assume.noise * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df.insert(0, "y", y)
    return df


def _bounds(d, assume):
    c = assume.bound_sds
    return {
        "y": (-c * assume.response_sd(), c * assume.response_sd()),
        **{f"x{j}": (-c, c) for j in range(d)},
    }


@pytest.mark.parametrize(
    "n, d, k, eps, model",
    [
        (400, 50, 3, 4.0, Assume(signals=3, strength=1.0)),
        (300, 40, 4, 6.0, Assume(signals=4, strength=0.6, noise=1.5, correlation=0.3)),
    ],
)
def test_sis_assumed_recall_matches_front_door_on_model_data(n, d, k, eps, model):
    # seeds 21 (data and mechanism) and 22 (simulation); 250 front-door runs on fresh data sets
    # versus 600 simulated trials; agreement within 2 combined standard errors.
    rng = np.random.default_rng(21)
    measured = []
    for _ in range(250):
        df = _model_frame(n, d, model, rng)
        fit = dp.dp_sis(
            "y ~ .", data=df, eps=eps, k=k, bounds=_bounds(d, model), random_state=rng, oc_trials=0
        )
        measured.append(sum(t in fit.selected for t in df.columns[1 : model.signals + 1]) / model.signals)
    fit = dp.dp_sis(
        "y ~ .", data=df, eps=eps, k=k, bounds=_bounds(d, model), random_state=22, assume=model, oc_trials=600
    )
    row = fit.operating_characteristics.table().set_index("quantity").filter(like="recall", axis=0).iloc[0]
    m, se = np.mean(measured), np.std(measured, ddof=1) / math.sqrt(len(measured))
    assert 0.1 < m < 0.95  # a setting where recall is informative
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
    assert (
        dp.dp_sis(
            "y ~ .", data=df, eps=2.0, k=3, bounds=(-6, 6), random_state=0, oc_trials=0
        ).operating_characteristics
        is None
    )


def test_assume_requires_trials_and_builtin_score():
    df = _model_frame(60, 10, Assume(signals=2, strength=1.0), np.random.default_rng(1))
    with pytest.raises(PrivacyParameterError):
        dp.dp_sis(
            "y ~ .", data=df, eps=1.0, k=2, bounds=(-6, 6), assume={"signals": 2, "strength": 1}, oc_trials=0
        )
    with pytest.raises(PrivacyParameterError):
        dp.dp_sis("y ~ .", data=df, eps=1.0, k=2, bounds=(-6, 6), assume={"signals": 2, "strenght": 1})


# ---------------------------------------------------------------- every channel, every front door
def _fits(assume):
    from dpstats.simulate.felp import planted
    from dpstats.simulate.gmm import simulate_gmm

    sis_df = _model_frame(200, 20, Assume(signals=2, strength=1.0), np.random.default_rng(2))
    ko_df = _model_frame(2000, 30, Assume(signals=3, strength=0.5), np.random.default_rng(3))
    gmm_df, _ = simulate_gmm(3000, d=3, k=2, random_state=0)
    felp_df = planted(n=100, d=12, s=3, shift=2.0, random_state=0)
    model = Assume(signals=2, strength=0.5) if assume else None
    plug_in = "released" if assume else None
    return {
        "dp_sis": dp.dp_sis(
            "y ~ .", sis_df, eps=2.0, k=2, bounds=(-8, 8), random_state=0, assume=model, oc_trials=20
        ),
        "dp_knockoff": dp.dp_knockoff(
            "y ~ .",
            ko_df,
            eps=1.0,
            delta=1e-4,
            bounds=12.0,
            sigma=1.0,
            beta_norm=2.0,
            c_min=40.0,  # with every scale public the rates under assume= can be simulated (none read)
            lambda_min=0.5,
            random_state=0,
            assume=model,
            oc_trials=20,
        ),
        "dp_gmm": dp.dp_gmm(
            "~ .",
            gmm_df,
            k=2,
            eps=1.0,
            delta=1e-6,
            bounds=(-12, 12),
            random_state=0,
            assume=plug_in,
            oc_trials=200,
        ),
        "dp_felp": dp.dp_felp(
            "class ~ .",
            felp_df,
            eps=1.0,
            n_estimators=3,
            bounds=(-6, 6),
            random_state=0,
            assume=plug_in,
            oc_trials=20,
        ),
    }


def _channels(fit, tmp_path):
    html = open(fit.report(str(tmp_path / f"{fit.method}.html")), encoding="utf-8").read()
    return {
        "summary": str(fit.summary()),
        "json": fit.to_json(),
        "report": html,
        "glance": fit.glance().to_string(),
        "tidy": fit.tidy().to_string(),
    }


@pytest.mark.filterwarnings("ignore::dpstats.errors.NonPrivateWarning")
def test_no_error_rates_without_assume_in_any_channel(tmp_path):
    for name, fit in _fits(assume=False).items():
        oc = fit.operating_characteristics
        assert oc.assumption is None and oc.trials == 0, name
        assert (oc.table()["basis"] == "released quantities and public inputs").all(), name
        for channel, text in _channels(fit, tmp_path).items():
            lower = text.lower()
            assert "under the assumed model" not in lower, (name, channel)
            for word in ERROR_RATE_WORDS:
                assert word not in lower, (name, channel, word)


@pytest.mark.filterwarnings("ignore::dpstats.errors.NonPrivateWarning")
def test_error_rates_under_assume_are_labelled_in_every_channel(tmp_path):
    for name, fit in _fits(assume=True).items():
        oc = fit.operating_characteristics
        label = oc.assumption_label
        assert label.startswith("under the assumed model: "), name
        assert (oc.table()["basis"] == "under the assumed model").any(), name
        chans = _channels(fit, tmp_path)
        assert label in chans["summary"], name
        assert json.loads(chans["json"])["operating_characteristics"]["assumption"] == label, name
        assert label.replace("±", "&plusmn;") in chans["report"] or label in chans["report"], name


def test_theorem_accuracy_falls_with_n_and_eps():
    from dpstats.results.gmm import theorem_accuracy

    a = [theorem_accuracy(n, 4, 2, 1.0, 1e-6, 0.5) for n in (10**4, 10**5, 10**6)]
    assert a[0] > a[1] > a[2] > 0
    assert theorem_accuracy(10**5, 4, 2, 10.0, 1e-6, 0.5) < a[1]
    assert theorem_accuracy(50, 4, 2, 1.0, 1e-6, 0.5) == math.inf  # n below the theorem's requirement
    # at large n the rate is the non-private d/sqrt(n w_min / log(1/delta))
    n = 10**12
    assert theorem_accuracy(n, 4, 2, 1.0, 1e-6, 0.5) == pytest.approx(
        4 / math.sqrt(n * 0.5 / math.log(1e6)), rel=1e-3
    )


def test_knockoff_released_plug_in_and_default_rows():
    df = _model_frame(400, 8, Assume(signals=2, strength=0.5), np.random.default_rng(3))
    with pytest.warns(dp.NonPrivateWarning):
        fit = dp.dp_knockoff("y ~ .", df, eps=math.inf, delta=1e-6, random_state=0)
    q = fit.operating_characteristics.table().set_index("quantity")["estimate"]
    assert q["number selected"] == len(fit.selected)
    assert q["knockoff threshold T (released W)"] == fit.threshold
    with pytest.warns(dp.NonPrivateWarning):
        plug = dp.dp_knockoff(
            "y ~ .", df, eps=math.inf, delta=1e-6, random_state=0, assume="released", oc_trials=30
        )
    assert plug.operating_characteristics.assumption_label.endswith("(plug-in)")
