"""Captions, tables and text channels name one quantity in one unit (audit finding 11)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

import dpstats as dp


def _sis_fit():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 50))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(50)]).assign(y=X[:, 0] + rng.uniform(-1, 1, 400))
    return dp.dp_sis("y ~ .", df, eps=1.0, k=3, bounds=(-2, 2), random_state=0)


def test_sis_expected_largest_noise_is_one_figure_in_score_units(tmp_path):
    fit = _sis_fit()
    oc = fit.operating_characteristics.table().set_index("quantity")["estimate"]
    score = oc[[q for q in oc.index if q.startswith("expected largest noise term (score units)")][0]]
    assert fit.glance()["expected_max_noise"].iloc[0] == score
    line = next(x for x in str(fit).splitlines() if "largest noise" in x)
    assert f"{score:.3g} score units" in line and "utility units" not in line
    html = open(fit.report(str(tmp_path / "s.html")), encoding="utf-8").read()
    assert f"expected largest noise ≈ {score:.3g} score units" in html


def test_exact_operating_characteristics_read_exact_not_a_zero_standard_error(tmp_path):
    html = open(_sis_fit().report(str(tmp_path / "s.html")), encoding="utf-8").read()
    oc = re.search(r'<section class="oc".*?</section>', html, re.S).group(0)
    cells = re.findall(
        r'<tr><th scope="row">[^<]*</th><td class="num">[^<]*</td><td class="num">([^<]*)</td>', oc
    )
    assert cells and set(cells) == {"exact"}
