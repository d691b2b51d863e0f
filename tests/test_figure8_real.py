"""Figure 8 of the DP-SIS paper, in kind, on the Chiaretti ALL microarrays (slow, needs R).

Swope et al. §5: "while its top-10 accuracy is around 20% at eps = 20, the figure
demonstrates that it performs very well on the TOP, GREAT, and GOOD metrics. This
indicates that the lower accuracy is a function of the correlation metric used in
DP-SIS".  Claims checked at small scale (k = 10, replace-one-row, classes against the
non-private scores' order statistics as the paper defines them; seed 0, 60 draws):

* TOP ⊆ GREAT ⊆ GOOD, and each rate is non-decreasing in eps within 2 standard errors;
* at the largest eps the rates are near 1 (TOP >= 0.9) while accuracy against the
  non-private lasso's top 10 stays low (<= 0.5): the selector recovers the order
  statistics it is given; the correlation ranking, not the selector, limits accuracy.

On ALL the rise happens between eps = 20 and 100 under replace-one-row (sensitivity 2),
not by eps = 20 as on the paper's Chin data (benchmarks/bench_figure8.py, README).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats import evaluate as ev

pytestmark = [pytest.mark.slow, pytest.mark.r]

EPS = [10.0, 40.0, 100.0, 200.0]
TRIALS = 60


@pytest.fixture(scope="module")
def summary(rpy2_robjects):
    res = ev.compare_selectors(ev.chiaretti_all(), ["dp_sis"], EPS, k=10, trials=TRIALS, random_state=0)
    assert res.attrs["classes_against"] == "scores"
    return ev.summarise(res).set_index("eps")


def test_classes_are_nested_and_rise_with_eps(summary):
    assert (summary["TOP"] <= summary["GREAT"]).all() and (summary["GREAT"] <= summary["GOOD"]).all()
    for label in ("TOP", "GREAT", "GOOD"):
        p = summary[label].to_numpy()
        se = np.sqrt(np.maximum(p * (1 - p), 1 / TRIALS) / TRIALS)  # floor: a rate of 0 or 1 still has noise
        for i in range(len(p) - 1):
            assert p[i + 1] >= p[i] - 2 * np.hypot(se[i], se[i + 1]), (label, EPS[i], p)


def test_order_statistics_recovered_while_accuracy_stays_low(summary):
    top = summary.loc[EPS[-1]]
    assert top["TOP"] >= 0.9 and top["GOOD"] >= 0.9, top
    assert top["accuracy"] <= 0.5, top
    assert summary.loc[EPS[0], "GOOD"] < top["GOOD"]
