"""summary()'s coefficient table is laid out as R's printCoefmat lays it out (audit s14-glmuser, finding 5).

Oracle: R 4.2 itself, through Rscript (no rpy2 conversion in between).
* The formatter alone: R's printed ``printCoefmat(coef(summary(fit)), digits = 4)`` (summary.glm's and
  summary.lm's call) for glm and lm fits on R's data sets and on tables with zero, NA and tiny entries,
  against :func:`dpstats.results._coefmat.coefmat_lines` fed R's own numbers (written with 17
  significant digits): equal character for character.
* The doors: ``summary(dp_glm(..., eps = inf))`` on MASS::birthwt, infert and mtcars against R's
  ``summary(glm(...))`` with its default control (the eps = inf fit is glm.fit's, to ~1e-15),
  and ``summary(dp_lm(..., eps = inf))`` against ``summary(lm(...))``: the rows from the header to the
  legend equal R's. R's legend quotes are typographic in a UTF-8 locale; its text is compared apart
  from the quote characters.
"""

from __future__ import annotations

import json
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.results._coefmat import coefmat_lines, format_pval, stars

pytestmark = pytest.mark.r

TABLES = {
    "birthwt": "glm(low ~ age + lwt + race + smoke, binomial, bw)",
    "infert": "glm(case ~ spontaneous + induced + age, binomial, infert)",
    "mtcars_glm": "glm(am ~ wt + hp, binomial, mtcars)",
    "warpbreaks": "glm(breaks ~ wool * tension, poisson, warpbreaks)",
    "esoph": "glm(cbind(ncases, ncontrols) ~ agegp + alcgp, binomial, esoph)",
    "mtcars_lm": "lm(mpg ~ wt + hp + factor(cyl), mtcars)",
    "trees": "lm(log(Volume) ~ log(Girth) + log(Height), trees)",
    "aliased": "lm(mpg ~ wt + I(2 * wt) + hp, mtcars)",
    "tiny_p": "lm(weight ~ group, PlantGrowth)",
    "cars": "lm(dist ~ speed, cars)",
}

R_SETUP = (
    "bw <- MASS::birthwt; bw$race <- factor(bw$race, labels = c('white', 'black', 'other'));"
    "options(width = 200);"
)


def _r(rscript: str, code: str) -> str:
    out = subprocess.run([rscript, "-e", R_SETUP + code], capture_output=True, text=True, check=True)
    return out.stdout


@pytest.fixture(scope="module")
def r_tables(rscript):
    code = (
        "res <- list(); for (nm in names(calls)) { m <- coef(summary(eval(parse(text = calls[[nm]]))));"
        "m <- if (inherits(eval(parse(text = calls[[nm]])), 'glm')) m else m;"
        "res[[nm]] <- list(rows = rownames(m), cols = colnames(m),"
        " values = lapply(seq_len(ncol(m)), function(j) sprintf('%.17g', m[, j])),"
        " printed = capture.output(printCoefmat(m, digits = 4))) };"
        "cat(jsonlite::toJSON(res, auto_unbox = FALSE))"
    )
    calls = "calls <- list(" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in TABLES.items()) + ");"
    return json.loads(_r(rscript, calls + code))


@pytest.mark.parametrize("name", list(TABLES))
def test_formatter_prints_r_numbers_as_printcoefmat(r_tables, name):
    table = r_tables[name]
    values = [np.array([float(v) for v in col]) for col in table["values"]]
    cols = table["cols"]
    p = values[-1]
    signif = [stars(v) for v in p] if np.any(p < 0.1) else None
    ours = coefmat_lines(
        table["rows"],
        dict(zip(cols[:-2], values[:-2])),
        (cols[-2], values[-2]),
        (cols[-1], format_pval(p.tolist())),
        signif,
    )
    printed = [line for line in table["printed"] if line and not line.startswith(("---", "Signif"))]
    assert ours == printed


def test_aliased_rows_print_na_as_r_does(rscript):
    """An aliased coefficient's row (NA everywhere) and a statistic with NA: printCoefmat's 'NA'."""
    printed = _r(
        rscript,
        "m <- cbind(Estimate = c(1.5, NA, -0.25), 'Std. Error' = c(0.1, NA, 0.05),"
        "'t value' = c(15, NA, -5), 'Pr(>|t|)' = c(1e-20, NA, 3e-4));"
        "rownames(m) <- c('(Intercept)', 'x2', 'x3'); printCoefmat(m, digits = 4)",
    ).splitlines()
    p = [1e-20, np.nan, 3e-4]
    ours = coefmat_lines(
        ["(Intercept)", "x2", "x3"],
        {"Estimate": [1.5, np.nan, -0.25], "Std. Error": [0.1, np.nan, 0.05]},
        ("t value", [15, np.nan, -5]),
        ("Pr(>|t|)", format_pval(p)),
        [stars(v) for v in p],
    )
    assert ours == [line for line in printed if line and not line.startswith(("---", "Signif"))]


DOORS = [
    ("birthwt", "low ~ age + lwt + race + smoke", "binomial"),
    ("infert", "case ~ spontaneous + induced + age", "binomial"),
    ("mtcars", "am ~ wt + hp", "binomial"),
    ("mtcars", "mpg ~ wt + hp + factor(cyl)", None),
    ("PlantGrowth", "weight ~ group", None),
]


def _block(lines: list[str]) -> list[str]:
    """From the 'Coefficients:' line to the legend, the legend's quotes made plain."""
    start = next(i for i, line in enumerate(lines) if line.startswith("Coefficients:"))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("Signif.")), None)
    block = lines[start : (end + 1 if end is not None else start + 1)]
    return [line.replace("‘", "'").replace("’", "'") for line in block]


@pytest.mark.parametrize("data,formula,family", DOORS, ids=[f"{d[0]}:{d[1]}" for d in DOORS])
def test_summary_coefficients_equal_r_summary(rscript, tmp_path, data, formula, family):
    source = "bw" if data == "birthwt" else data
    path = tmp_path / "d.csv"
    fit_r = f"glm({formula}, {family}, d)" if family else f"lm({formula}, d)"
    printed = _r(
        rscript,
        f"d <- {source}; write.csv(d, '{path}', row.names = FALSE); print(summary({fit_r}))",
    ).splitlines()
    df = pd.read_csv(path)
    for col in ("race", "group"):
        if col in df:
            df[col] = pd.Categorical(
                df[col], list(dict.fromkeys(_r(rscript, f"cat(levels({source}${col}), sep = '\\n')").split()))
            )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = (
            dp.dp_glm(formula, df, eps=np.inf, family=family) if family else dp.dp_lm(formula, df, eps=np.inf)
        )
    ours = _block(str(fit.summary()).splitlines())
    theirs = _block(printed)
    assert ours[: len(theirs)] == theirs
