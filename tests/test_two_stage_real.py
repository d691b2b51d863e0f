"""Real high-dimensional data through rpy2: Chiaretti ALL (r-bioc-all) and Golub (r-bioc-multtest).

Response for ALL: y = 1 for T-cell, 0 for B-cell lineage (ALL$BT); for Golub:
y = golub.cl (1 = AML, 0 = ALL).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats import evaluate as ev

pytestmark = pytest.mark.r


@pytest.fixture(scope="module")
def chiaretti(rpy2_robjects):
    return ev.chiaretti_all()


def test_chiaretti_matches_r(chiaretti, rpy2_robjects):
    ro = rpy2_robjects
    assert chiaretti.shape == (128, 12626)
    assert int(chiaretti["y"].sum()) == 33  # 33 T-cell patients
    # spot-check values and names against R's exprs(ALL)
    assert list(chiaretti.columns[1:4]) == ["1000_at", "1001_at", "1002_f_at"]
    r_val = float(ro.r("exprs(ALL)[5, 17]")[0])
    assert chiaretti.iloc[16, 5] == pytest.approx(r_val)
    assert list(ro.r("as.character(ALL$BT)[1:3]"))[0].startswith("B") == (chiaretti["y"].iloc[0] == 0)


@pytest.mark.slow
def test_golub_matches_r(rpy2_robjects):
    g = ev.golub()
    assert g.shape == (38, 3052) and int(g["y"].sum()) == 11
    assert g.iloc[20, 100] == pytest.approx(float(rpy2_robjects.r("golub[100, 21]")[0]))


def test_two_stage_on_chiaretti(chiaretti):
    """k = floor(log d) = 9 on 128 x 12625: 11 blocks of 11-12 rows, a valid statement."""
    k = int(math.log(chiaretti.shape[1] - 1))
    fit = dp.dp_two_stage("y ~ .", chiaretti, eps=5.0, k=k, random_state=0, oc_trials=0)
    assert k == 9 and len(fit.selected) == 9 and fit.blocks == 11
    assert fit.block_sizes == (11, 12)
    assert fit.privacy.eps == 5.0 and not fit.privacy.data_dependent_steps


def test_two_stage_at_huge_eps_equals_nonprivate_votes(chiaretti):
    """eps = 1e6: the private top-k returns the non-private top-k of the same vote counts."""
    from dpstats.methods import two_stage as m

    X = chiaretti.drop(columns="y").to_numpy()
    y = chiaretti["y"].to_numpy()
    counts = m.two_stage_counts(X, y, 5, rng=np.random.default_rng(9))
    fit = dp.dp_two_stage(
        "y ~ .", chiaretti, eps=1e6, k=5, random_state=np.random.default_rng(9), oc_trials=0
    )
    # same seed, same block split: the selection is a top-5 of these counts (ties allowed)
    kth = np.sort(counts)[::-1][4]
    chosen = {chiaretti.columns.get_loc(t.strip("`")) - 1 for t in fit.selected}  # R writes `33039_at`
    assert all(counts[j] >= kth for j in chosen)
    assert {j for j in np.flatnonzero(counts > kth)} <= chosen


@pytest.mark.slow
def test_compare_selectors_on_chiaretti(chiaretti):
    """Truth = top-k of a non-private lasso.  At eps = 1e4 DP-SIS's mean accuracy over 5
    trials is within 0.05 of non-private SIS (whose scores do not vary between trials)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ev.compare_selectors(
            chiaretti,
            ["dp_sis", "sis_nonprivate", "dp_two_stage", "two_stage_nonprivate"],
            [1e4],
            k=[5, 9],
            trials=5,
            neighbouring="add_remove",
            random_state=2,
        )
    s = ev.summarise(res).set_index(["method", "k"])
    for k in (5, 9):
        assert abs(s.loc[("dp_sis", k)].accuracy - s.loc[("sis_nonprivate", k)].accuracy) < 0.05
        assert s.loc[("dp_two_stage", k)].accuracy > 0.2  # measured 0.4-0.6 (lasso truth)
