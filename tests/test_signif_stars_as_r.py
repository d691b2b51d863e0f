"""Significance stars at printCoefmat's cut points, as R marks them.

Oracle: R 4.2 through Rscript.  printCoefmat marks p-values with
``symnum(p, cutpoints = c(0, 0.001, 0.01, 0.05, 0.1, 1), symbols = c("***", "**", "*", ".", " "))``,
whose intervals are right-closed (p = 0.05 gets "*"), and shows the stars column and its legend only
when some p-value is below 0.1.  The p-values are each cut point, the doubles next to it on either
side, 0 and 1; they go to R with 17 significant digits, which reads them back exactly.
Checked: :func:`dpstats.results._coefmat.stars` against ``symnum``; an eps = inf ``dp_lm`` fit (whose
printing dp_glm and dp_select_infer share) given these p-values prints R's table line for line; a
``vertical_glm`` fit's stars column and legend follow the same rule.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.results._coefmat import SIGNIF_LEGEND, stars

pytestmark = pytest.mark.r

CUTS = (0.001, 0.01, 0.05, 0.1)
AT_CUTS = [0.0] + [q for c in CUTS for q in (np.nextafter(c, 0), c, np.nextafter(c, 1))]  # 13 values
K = len(AT_CUTS) - 1  # predictors: with the intercept one term per p-value


def _r(rscript: str, code: str) -> str:
    out = subprocess.run([rscript, "-e", code], capture_output=True, text=True, check=True)
    return out.stdout


def _r_vector(p) -> str:
    return "c(" + ", ".join("NA" if np.isnan(v) else f"{v:.17g}" for v in p) + ")"


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(200, K)), columns=[f"x{i}" for i in range(1, K + 1)])
    df["y"] = df.sum(axis=1) + rng.normal(size=200)
    return df


def test_stars_equal_r_symnum(rscript):
    p = [*AT_CUTS, 0.5, 1.0, np.nan]
    code = (
        f"s <- symnum({_r_vector(p)}, corr = FALSE, na = FALSE,"
        " cutpoints = c(0, 0.001, 0.01, 0.05, 0.1, 1), symbols = c('***', '**', '*', '.', ' '));"
        "cat(jsonlite::toJSON(as.vector(unclass(s))))"
    )
    assert [stars(v) for v in p] == json.loads(_r(rscript, code))
    assert [stars(c) for c in CUTS] == ["***", "**", "*", "."]


def _plain(lines: list[str]) -> list[str]:
    return [line.rstrip().replace("‘", "'").replace("’", "'") for line in lines]


@pytest.mark.filterwarnings("ignore::dpstats.NonPrivateWarning")
def test_a_fit_prints_printcoefmat_s_stars_at_the_cut_points(rscript):
    fit = dp.dp_lm("y ~ .", _data(), eps=float("inf"))
    fit.table["p.value"] = AT_CUTS
    t = fit.table
    matrix = ", ".join(
        f"'{head}' = {_r_vector(t[col])}"
        for head, col in [
            ("Estimate", "estimate"),
            ("Std. Error", "std.error"),
            ("t value", "statistic"),
            ("Pr(>|t|)", "p.value"),
        ]
    )
    printed = _r(
        rscript,
        f"options(width = 200); m <- cbind({matrix}); rownames(m) <- c({', '.join(map(repr, t['term']))});"
        "printCoefmat(m, digits = 4)",
    ).splitlines()
    lines = str(fit).splitlines()
    start = lines.index("Coefficients:") + 1
    assert _plain(lines[start : start + len(printed)]) == _plain(printed)
    assert lines[start + len(printed) - 1] == SIGNIF_LEGEND


def _stars_column(lines: list[str], rows: int) -> list[str]:
    """The marks after each row of a vertical_glm table ("" where there is none)."""
    last = [line.split()[-1] for line in lines[1 : rows + 1]]
    return [m if m and set(m) <= {"*", "."} else "" for m in last]


def test_vertical_glm_marks_the_cut_points_as_r(rscript):
    df = _data()
    parties = [[f"x{i}" for i in range(1, 7)], [f"x{i}" for i in range(7, K + 1)]]
    fit = dp.vertical_glm("y ~ .", df, parties=parties)
    fit.coefficients["p_value"] = AT_CUTS
    code = (
        f"s <- symnum({_r_vector(AT_CUTS)}, corr = FALSE, na = FALSE,"
        " cutpoints = c(0, 0.001, 0.01, 0.05, 0.1, 1), symbols = c('***', '**', '*', '.', ' '));"
        "cat(jsonlite::toJSON(trimws(as.vector(unclass(s)))))"
    )
    lines = str(fit).splitlines()
    table = lines[lines.index("Coefficients:") + 1 :]
    assert _stars_column(table, len(AT_CUTS)) == json.loads(_r(rscript, code))
    assert SIGNIF_LEGEND in lines


@pytest.mark.filterwarnings("ignore::dpstats.NonPrivateWarning")
def test_no_stars_column_nor_legend_unless_some_p_is_below_0_1(rscript):
    """printCoefmat: ``signif.stars && any(pv < 0.1)``: p = 0.1 itself does not open the column."""
    p = [0.1] + [0.5] * (len(AT_CUTS) - 1)
    printed = _r(
        rscript,
        f"m <- cbind(Estimate = 1, 'Std. Error' = 1, 't value' = 1, 'Pr(>|t|)' = {_r_vector(p)});"
        "printCoefmat(m, digits = 4)",
    )
    assert "Signif" not in printed
    df = _data()
    fit = dp.dp_lm("y ~ .", df, eps=float("inf"))
    fit.table["p.value"] = p
    vertical = dp.vertical_glm("y ~ .", df, parties=[["x1"], [f"x{i}" for i in range(2, K + 1)]])
    vertical.coefficients["p_value"] = p
    for text in (str(fit), str(vertical)):
        assert "Signif. codes" not in text
        assert not any(line.rstrip().endswith((" .", "*")) for line in text.splitlines())
