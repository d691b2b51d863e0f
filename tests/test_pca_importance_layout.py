"""dp_pca's "Importance of components" table laid out as R prints it (audit s14-ruser F5).

Oracle: R itself, one Rscript run (marker ``r``). ``print.summary.prcomp`` prints
``summary(prcomp(x))$importance`` with ``print(m, digits = max(3, getOption("digits") - 3))``, i.e.
digits = 4: each column formatted on its own to common decimals (R's printMatrix and formatReal), the
proportions rounded to 5 decimals by ``summary.prcomp``, columns wrapped at ``width = 80``. dp_pca's
table has the variances (``sdev^2``) as a first row; at eps = inf its numbers are prcomp's (to 1e-10,
tests/test_pca_reference.py), so the printed lines must equal R's
``print(rbind(Variance = sdev^2, importance), digits = 4)`` character for character, on USArrests and
swiss (both k = p and k < p), mtcars (11 components: two blocks, a column in scientific notation) and
longley. ``matrix_lines`` alone is checked on a seeded matrix of mixed magnitudes and signs (seed 5).
"""

from __future__ import annotations

import json
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats._rnumbers import matrix_lines

pytestmark = pytest.mark.r

CASES = {"USArrests": (4, 2), "swiss": (6, 3), "mtcars": (11,), "longley": (7,)}

R_SCRIPT = r"""
library(jsonlite)
out <- commandArgs(TRUE)[1]
cases <- fromJSON(commandArgs(TRUE)[2])
res <- list()
for (nm in names(cases)) {
  x <- get(nm)
  write.csv(x, file.path(out, paste0(nm, ".csv")), row.names = FALSE)
  p <- prcomp(x)
  for (k in cases[[nm]]) {
    imp <- rbind(Variance = p$sdev[1:k]^2, summary(p)$importance[, 1:k, drop = FALSE])
    res[[paste(nm, k)]] <- capture.output(print(imp, digits = 4))
  }
}
set.seed(5)
m <- matrix(rnorm(36) * 10^sample(-6:6, 36, replace = TRUE), 3,
            dimnames = list(c("a", "longer row", "c"), paste0("Col", 1:12)))
write.csv(m, file.path(out, "m.csv"))
res[["m 4"]] <- capture.output(print(m, digits = 4))
res[["m 7"]] <- capture.output(print(m))
writeLines(toJSON(res), file.path(out, "printed.json"))
"""


@pytest.fixture(scope="module")
def printed(rscript, tmp_path_factory):
    out = tmp_path_factory.mktemp("importance")
    (out / "p.R").write_text(R_SCRIPT)
    cases = json.dumps({name: list(ks) for name, ks in CASES.items()})
    subprocess.run([rscript, str(out / "p.R"), str(out), cases], check=True, capture_output=True, timeout=120)
    return out, json.loads((out / "printed.json").read_text())


@pytest.mark.parametrize("name, k", [(name, k) for name, ks in CASES.items() for k in ks])
def test_importance_table_is_rs_print_of_summary_prcomp(printed, name, k):
    out, r = printed
    data = pd.read_csv(out / f"{name}.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.errors.NonPrivateWarning)
        fit = dp.dp_pca("~ .", data, k=k, eps=float("inf"))
    expected = ["Importance of components:", *r[f"{name} {k}"]]
    for text in (str(fit), str(fit.summary())):
        lines = text.splitlines()
        at = lines.index(expected[0])
        assert lines[at : at + len(expected)] == expected


@pytest.mark.parametrize("digits", [4, 7])
def test_matrix_lines_is_rs_print_of_a_numeric_matrix(printed, digits):
    out, r = printed
    m = pd.read_csv(out / "m.csv", index_col=0)
    columns = [(str(c), m[c].tolist()) for c in m.columns]
    assert matrix_lines([str(i) for i in m.index], columns, digits=digits) == r[f"m {digits}"]
    assert np.isfinite(m.to_numpy()).all()
