"""dp_felp on R's mlbench Soybean and BreastCancer (through rpy2): the paper's protocol, shortened.

The full 10-fold protocol with 20 learners is in ``benchmarks/bench_felp.py``; here 3 folds
and 5 learners keep the run short.  Tolerances are stated next to each assertion.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dpstats as dp
from dpstats.datasets import mlbench_frame
from dpstats.errors import NonPrivateWarning
from dpstats.simulate import felp as protocol

pytestmark = [pytest.mark.r, pytest.mark.slow]


@pytest.fixture(scope="module", params=["BreastCancer", "Soybean"])
def mlbench(request, rpy2_robjects):
    rpy2_robjects.r("suppressWarnings(requireNamespace('mlbench', quietly = TRUE))")
    return request.param, *mlbench_frame(request.param)


def test_mlbench_frame_matches_r(mlbench, rpy2_robjects):
    name, df, bounds = mlbench
    n_r = int(rpy2_robjects.r(f"sum(complete.cases({name}))")[0])
    assert len(df) == n_r and "Class" in df and len(bounds) == df.shape[1] - 1
    assert df["Class"].value_counts().min() >= 2


def test_front_door_with_public_bounds_is_strictly_covered(mlbench):
    name, df, bounds = mlbench
    for variant in ("paper", "strict"):
        refuted = (
            pytest.warns(NonPrivateWarning, match="variant='paper' uses FELP's Lemma 1")
            if variant == "paper"
            else contextlib.nullcontext()
        )
        with refuted:
            fit = dp.dp_felp(
                "Class ~ .",
                df,
                eps=1.0,
                bounds=bounds,
                variant=variant,
                n_estimators=5,
                random_state=0,
                strict=variant == "strict",
                oc_trials=0,
            )
        assert fit.privacy.covered and len(fit.selected) == max(1, round(0.1 * (df.shape[1] - 1)))
        assert (variant == "paper") == bool(fit.privacy.assumptions)


def test_paper_protocol_selected_features_beat_chance(mlbench):
    """Non-private top-10% beats the majority-class rate by >= 0.15 (SVM, C = 1); at eps = 10 the
    paper variant stays within 0.15 of the non-private ensemble (3-fold CV, 5 learners)."""
    name, df, _ = mlbench
    X = df.drop(columns="Class").to_numpy()
    y = df["Class"].cat.codes.to_numpy()
    tab = protocol.accuracy_vs_eps(X, y, [10.0], folds=3, n_estimators=5, noise_reps=2, random_state=1)
    svm = tab[tab["classifier"] == "SVM (C = 1)"].set_index("selection")["accuracy"]
    majority = np.bincount(y).max() / len(y)
    assert svm["non-private"] >= majority + 0.15, (name, svm.to_dict(), majority)
    assert svm["paper"] >= svm["non-private"] - 0.15, (name, svm.to_dict())
    assert svm["all features"] >= svm["non-private"] - 0.02  # 10% of the features loses accuracy
