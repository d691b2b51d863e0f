"""A report's results table that shows part of tidy() says so (the report audit's #14): dp_felp shows
its highest-weight features, dp_gmm the means of its first 6 variables."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.report import render_report


def _felp_data(d: int) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, d))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = pd.Categorical(np.where(X[:, 0] - X[:, 1] > 0, "a", "b"))
    return df


def test_felp_report_says_it_shows_the_top_features_of_all():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_felp("y ~ .", _felp_data(30), eps=1.0, bounds=(-4, 4), random_state=1)
    assert len(fit.report_table()) == 20 and len(fit.tidy()) == 30
    html = render_report([fit])
    assert "The 20 features of highest released weight, of 30; all are in tidy()." in html


def test_a_report_showing_the_whole_table_has_no_such_note():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_felp("y ~ .", _felp_data(6), eps=1.0, bounds=(-4, 4), random_state=1)
    assert fit.report_table_note() == "" and "highest released weight, of" not in render_report([fit])


def test_gmm_report_says_it_shows_the_means_of_the_first_six_variables():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(3000, 8)), columns=[f"v{j}" for j in range(8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_gmm("~ .", df, k=2, eps=1.0, delta=1e-6, bounds=(-5, 5), random_state=1)
    assert "The means of the first 6 of 8 variables; all are in tidy()." in render_report([fit])
