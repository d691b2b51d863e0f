"""At eps = inf a fit is a non-private reference: its print and summary say so once, in the heading.

The title "Differentially private linear regression" would be false there, and the privacy line
repeated it ("NOT private (eps = inf); neighbouring: replace one row; none (eps = inf)").
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods.knockoff.mechanism import zeta


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(60, 2))
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": 0.5 * x[:, 0] + rng.normal(0, 0.3, 60)})


def test_eps_inf_reads_as_a_non_private_fit_once(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x1 + x2", data=frame, eps=math.inf)
    text, summary = str(fit), str(fit.summary())
    for out in (text, summary):
        assert out.splitlines()[0] == "Linear regression: non-private reference (eps = inf)"
        assert "Differentially private" not in out
    assert text.splitlines()[-1] == "Privacy: none (eps = inf)"
    assert "Noise samplers" not in summary  # no noise is drawn
    report = fit_report(fit)  # the page's h1 heads it; the result's h2 would repeat it, so it is left out
    assert "<h1>Linear regression: non-private reference (eps = inf)</h1>" in report
    assert report.count("non-private reference (eps = inf)</h") == 1


def fit_report(fit) -> str:
    from dpstats.report import render_report

    return render_report([fit])


def test_a_private_fit_keeps_its_title_and_privacy_line(frame):
    fit = dp.dp_lm("y ~ x1 + x2", data=frame, eps=1.0, bounds=(-2, 2), random_state=1)
    assert str(fit).splitlines()[0] == "Differentially private linear regression"
    assert str(fit).splitlines()[-1].startswith("Privacy: (1, 0)-DP; neighbouring: replace one row")


def test_knockoff_bound_error_names_no_internal_variable():
    with pytest.raises(dp.AssumptionError) as e:
        zeta(4, 1.0, 1e-6)
    msg = str(e.value)
    assert "delta2" not in msg and "delta_split" in msg and "part of delta" in msg
