"""The report's sizes line names what p counts for each door: candidate terms only where the door
selects among them (dp_lm and the other fits have coefficients, dp_bh hypotheses, dp_gmm and dp_pca
variables)."""

from __future__ import annotations

import re
import warnings

import pytest

from dpstats.report import render_report
from front_door_calls import DOORS

NOUN = {
    "dp_sis": "candidate terms",
    "dp_two_stage": "candidate terms",
    "dp_knockoff": "candidate terms",
    "dp_felp": "candidate terms",
    "dp_select_infer": "candidate columns",
    "dp_lm": "coefficients",
    "dp_glm": "coefficients",
    "vertical_glm": "coefficients",
    "dp_gmm": "variables",
    "dp_pca": "variables",
    "dp_bh (p-values)": "hypotheses",
    "dp_bh (formula)": "hypotheses",
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_the_sizes_line_names_what_p_counts(door):
    fn, args, kwargs = DOORS[door]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(*args, **kwargs, random_state=2)
    (sizes,) = re.findall(r'<p class="sizes">(.*?)</p>', render_report([res]))
    if door.startswith("dp_bh"):  # n_text counts the hypotheses: said once, rows named as rows
        assert sizes.count("hypotheses") == 1 and f"{res.p} hypotheses" in sizes
        assert door == "dp_bh (p-values)" or sizes.startswith(f"n = {res.n} rows; ")
    else:
        assert sizes.endswith(f"p = {res.p} {NOUN[door]}.")
