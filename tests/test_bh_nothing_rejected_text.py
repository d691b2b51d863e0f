"""dp_bh with nothing rejected (audit finding 10): the p-value cut reads "none (no hypothesis rejected)" in
print and in the report, not 0, and a sentence gives the first cut, exp(log(q/m) − t), on the p scale."""

from __future__ import annotations

import html as html_lib
import math
import re

import numpy as np

import dpstats as dp


def _fit():
    rng = np.random.default_rng(1)
    values = np.r_[rng.uniform(0, 1e-8, 5), rng.uniform(0, 1, 25)]
    p = {f"h{j + 1}": float(v) for j, v in enumerate(values)}
    return dp.dp_bh(p, q=0.1, eps=2.0, eta=1.0, max_rejections=8, random_state=1)


def test_no_rejection_shows_no_cut_and_states_the_first_cut(tmp_path):
    fit = _fit()
    assert fit.rejected == [] and fit.threshold == 0.0  # the attribute keeps its documented 0
    first = math.exp(math.log(fit.q / fit.p) - fit.shift)
    text = str(fit)
    assert "p-value cut: none (no hypothesis rejected)" in text and "p-value cut: 0" not in text
    assert f"first cut {first:.3g}" in text
    page = html_lib.unescape(open(fit.report(str(tmp_path / "b.html")), encoding="utf-8").read())
    assert re.search(r"p-value cut</th><td>none \(no hypothesis rejected\)</td>", page)
    assert f"first cut {first:.3g}: BH's q/m = {fit.q / fit.p:.3g}, lowered by the shift t" in page
