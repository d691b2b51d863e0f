"""p-values in reports are written as print writes them (audit finding 9): R's ``format.pval`` with
``eps = .Machine$double.eps`` for a p-value that underflows (R's oracle: Rscript), and dp_lm's bootstrap
floor 2/(B + 1) as ``<`` it, in the results table and in the summary layout alike."""

from __future__ import annotations

import html as html_lib
import re
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp

BOUNDS = {"x1": (-3, 3), "x2": (-3, 3), "y": (-20, 20)}


def _data(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, 2)), -3, 3)
    y = 5 * X[:, 0] + rng.standard_normal(n)  # x1's t is about 350: its p-value underflows to 0
    return pd.DataFrame(X, columns=["x1", "x2"]).assign(y=y)


def _report_cells(fit, tmp_path) -> dict[str, str]:
    html = open(fit.report(str(tmp_path / "r.html")), encoding="utf-8").read()
    table = re.search(r'<table class="results-table">(.*?)</table>', html, re.S).group(1)
    header = re.findall(r"<th>([^<]*)</th>", table)
    rows = [  # each row headed by its term (<th scope="row">), then its cells
        re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", row)
        for row in re.findall(r'<tr><th scope="row">.*?</tr>', table)
    ]
    at = header.index("p.value")
    return {row[0]: html_lib.unescape(row[at]) for row in rows}


@pytest.mark.r
def test_an_underflowed_p_value_reads_as_r_prints_it(rscript, tmp_path):
    r_text = subprocess.run(
        [rscript, "-e", "cat(format.pval(0, digits = 1, eps = .Machine$double.eps))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert r_text == "<2e-16"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("y ~ x1 + x2", _data(), eps=float("inf"), bounds=BOUNDS)
    assert fit.tidy().set_index("term").loc["x1", "p.value"] == 0.0  # tidy keeps the number
    assert _report_cells(fit, tmp_path)["x1"] == r_text
    assert any(line.startswith("x1 ") and r_text in line for line in str(fit).splitlines())


def test_the_bootstrap_floor_reads_as_print_writes_it(tmp_path):
    fit = dp.dp_lm("y ~ x1 + x2", _data(), eps=1.0, delta=1e-6, bounds=BOUNDS, n_boot=200, random_state=1)
    floor = 2 / 201
    assert fit.tidy().set_index("term").loc["x1", "p.value"] == pytest.approx(floor)
    cells = _report_cells(fit, tmp_path)
    assert cells["x1"] == "<0.01"
    printed = {line.split()[0]: line for line in str(fit).splitlines() if line.startswith(("x1 ", "x2 "))}
    assert "<0.01" in printed["x1"].split()  # the floor mark as print writes it
    # other cells: the same number; print lays its p column out with common decimals (printCoefmat:
    # "1.000"), the report's tidy table each cell alone (R's format(x, 4): "1")
    shown = float(printed["x2"].split()[-1])
    assert float(cells["x2"]) == pytest.approx(shown, abs=5e-4)
