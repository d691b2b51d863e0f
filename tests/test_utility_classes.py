"""TOP / GREAT / GOOD as defined in Swope et al. §5 (Figure 8), on hand-made cases.

TOP: all of the top k.  GREAT: all of the top k/10, the rest from the top 11k/10.
GOOD (the text's second "GREAT"): all of the top k/100, the rest from the top 3k/2.
"The top x" = ranks r <= x, so floor(x), computed in integers.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpstats as dp
from dpstats import evaluate as ev
from dpstats.methods.sis import utility_class

RANKING = list(range(400))  # item i has rank i + 1


def _ranks(*one_based):
    return [r - 1 for r in one_based]


@pytest.mark.parametrize(
    "selected, k, expected",
    [
        (_ranks(*range(1, 11)), 10, "TOP"),
        (_ranks(*range(1, 10), 11), 10, "GREAT"),  # rank 11 <= 11k/10 = 11
        (_ranks(*range(1, 10), 12), 10, "GOOD"),  # 12 > 11 (the old ceil(1.1*10) = 12 said GREAT)
        (_ranks(*range(2, 11), 11), 10, "GOOD"),  # misses rank 1 = top k/10: not GREAT
        (_ranks(*range(2, 11), 15), 10, "GOOD"),  # k/100 = 0.1: no rank required; 15 <= 3k/2
        (_ranks(*range(2, 11), 16), 10, "NONE"),  # 16 > 15
        (_ranks(1, 2, 3, 4, 6), 5, "GOOD"),  # k/10 = 0.5: none required; 5 < 6 <= 7.5 = 3k/2
        (_ranks(2, 3, 4, 5, 1), 5, "TOP"),
        (_ranks(1, 2, 3, 4, 8), 5, "NONE"),  # 8 > 7.5
    ],
)
def test_hand_made_small_k(selected, k, expected):
    assert utility_class(selected, RANKING, k) == expected


def test_k_200_example_from_the_paper():
    # "if k = 200, DP-SIS performs GREAT if it selects all of the top 20 ... and the remaining 180
    # features are selected from the top 220"
    great = _ranks(*range(1, 21), *range(41, 221))
    assert utility_class(great, RANKING, 200) == "GREAT"
    assert utility_class(_ranks(*range(1, 21), *range(41, 220), 221), RANKING, 200) == "GOOD"
    # GOOD at k = 200: top 2 held, the rest from the top 300
    assert utility_class(_ranks(1, 2, *range(103, 301)), RANKING, 200) == "GOOD"
    assert utility_class(_ranks(1, *range(102, 301)), RANKING, 200) == "NONE"  # rank 2 missing
    assert utility_class(_ranks(1, 2, *range(103, 300), 301), RANKING, 200) == "NONE"


def test_classes_follow_the_given_ranking_not_item_labels():
    ranking = [5, 3, 9, 0, 1, 2, 4, 6, 7, 8]
    assert utility_class([9, 3, 5], ranking, 3) == "TOP"
    assert utility_class([0, 1, 2], ranking, 3) == "NONE"  # ranks 4..6 > 3k/2 = 4


def test_compare_selectors_ranks_by_nonprivate_scores_by_default():
    # At eps = 1e6 the private selector returns the non-private top k, so against the scores'
    # own order statistics TOP = 1 in every trial, whatever the truth; against the truth it is
    # TOP only when the scores' top k is the true support.
    gen = lambda rng: dp.datasets.fan_lv(n=60, d=200, random_state=rng)  # noqa: E731
    paper = ev.compare_selectors(gen, ["dp_sis"], [1e6], k=8, trials=15, random_state=2)
    truth = ev.compare_selectors(
        gen, ["dp_sis"], [1e6], k=8, trials=15, random_state=2, classes_against="truth"
    )
    assert paper.attrs["classes_against"] == "scores" and paper["TOP"].all()
    assert (truth["TOP"] == (truth["accuracy"] == 1.0)).all()
    assert truth["TOP"].mean() < 1.0  # the Fan–Lv scores' top 8 is often not the support
    with pytest.raises(ValueError, match="classes_against"):
        ev.compare_selectors(gen, ["dp_sis"], [1.0], k=8, trials=1, classes_against="support")


def test_score_ranking_is_descending_with_stable_ties():
    assert ev.score_ranking(np.array([1.0, 3.0, 3.0, 2.0])) == [1, 2, 3, 0]
