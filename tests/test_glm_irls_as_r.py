"""dp_glm at eps = inf is R's glm.fit: the same iterate, covariance, iteration count and printed summary.

The outside R-user audit (s14-ruser, F3): vcov differed from glm's by up to 9e-6 (mean relative),
one printed p-value in the last digit, because the fit iterated past glm's stopping rule and took
the covariance at the converged iterate, where glm.fit stops at |dev − dev_old|/(|dev| + 0.1) <
1e-8 and summary.glm takes it from the last step's weighted QR (weights of the iterate before).
Oracle: R's ``glm`` with its default ``glm.control()``, through rpy2, on R's own data sets
(UCBAdmissions and Titanic as data frames, Titanic also as cbind counts, InsectSprays, esoph,
infert, warpbreaks, and offsets).  Tolerances: coefficients, vcov (every entry; entries zero in
exact arithmetic, below 1e-13 of the largest, compared absolutely at that scale), standard errors,
deviances and AIC to 1e-10 relative; iteration count and the printed summary's lines exactly.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning

pytestmark = pytest.mark.r

TITANIC = "local({t <- as.data.frame(Titanic); t[rep(seq_len(nrow(t)), t$Freq), 1:4]})"
TITANIC_COUNTS = "reshape(as.data.frame(Titanic), idvar = c('Class', 'Sex', 'Age'), timevar = 'Survived', direction = 'wide')"
CASES = {
    "UCBAdmissions": ("as.data.frame(UCBAdmissions)", "Freq ~ Admit * Gender + Dept", "poisson"),
    "Titanic": (TITANIC, "Survived ~ Class + Sex + Age", "binomial"),
    "Titanic_cbind": (TITANIC_COUNTS, "cbind(Freq.Yes, Freq.No) ~ Class + Sex + Age", "binomial"),
    "InsectSprays": ("InsectSprays", "count ~ spray", "poisson"),
    "esoph": ("esoph", "cbind(ncases, ncontrols) ~ agegp + alcgp + tobgp", "binomial"),
    "infert": ("infert", "case ~ spontaneous + induced + age + parity", "binomial"),
    "warpbreaks": ("warpbreaks", "breaks ~ wool * tension", "poisson"),
    "esoph_offset": (
        "transform(esoph, ntot = ncases + ncontrols)",
        "ncases ~ agegp + alcgp + offset(log(ntot))",
        "poisson",
    ),
    "insect_offset0": (
        "transform(InsectSprays, hours = rep(c(1, 2, 4), length.out = 72))",
        "count ~ 0 + spray + offset(log(hours))",
        "poisson",
    ),
    "infert_offset": ("infert", "case ~ spontaneous + induced + offset(0.1 * age)", "binomial"),
}


def _frame(ro) -> pd.DataFrame:
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter):
        df = ro.conversion.rpy2py(ro.r("d"))
    return df.reset_index(drop=True)


def _fit_both(ro, name: str):
    data_expr, formula, family = CASES[name]
    ro.r(f"d <- {data_expr}; rownames(d) <- NULL; g <- glm({formula}, family = {family}, data = d)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_glm(formula, _frame(ro), eps=float("inf"), family=family)
    return fit


def _close(actual, expected, rtol=1e-10):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-13 * np.max(np.abs(expected)))


@pytest.mark.parametrize("name", list(CASES))
def test_eps_inf_is_glm_to_1e10(rpy2_robjects, name):
    ro = rpy2_robjects
    fit = _fit_both(ro, name)
    assert list(fit.terms) == list(ro.r("names(coef(g))"))
    _close(fit.coefficients, ro.r("unname(coef(g))"))
    _close(fit.vcov_matrix, ro.r("unname(vcov(g))"))
    _close(fit.tidy()["std.error"], ro.r("unname(coef(summary(g))[, 2])"))
    _close(fit.tidy()["p.value"], ro.r("unname(coef(summary(g))[, 4])"), rtol=1e-8)
    for ours, theirs in [
        (fit.deviance, "deviance(g)"),
        (fit.null_deviance, "g$null.deviance"),
        (fit.aic, "AIC(g)"),
    ]:
        assert ours == pytest.approx(float(ro.r(theirs)[0]), rel=1e-10)
    assert fit.iterations == int(ro.r("g$iter")[0])


def _summary_lines(text: str) -> list[str]:
    """The coefficient table and the deviance/AIC/iteration lines of a glm summary (the signif. legend,
    whose quotes differ by locale, left out)."""
    lines = text.splitlines()
    start = lines.index("Coefficients:")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Number of Fisher Scoring"))
    return [ln.rstrip() for ln in lines[start : end + 1] if not ln.startswith("Signif. codes")]


@pytest.mark.parametrize("name", ["UCBAdmissions", "Titanic", "esoph", "infert_offset"])
def test_printed_summary_is_glms(rpy2_robjects, name):
    """The audit's case: UCBAdmissions' DeptC printed 0.727356 where glm prints 0.727355."""
    ro = rpy2_robjects
    fit = _fit_both(ro, name)
    theirs = "\n".join(ro.r("capture.output(summary(g))"))
    assert _summary_lines(str(fit.summary())) == _summary_lines(theirs)


def test_summary_says_the_intervals_are_wald_not_profiled():
    """confint(glm) profiles the likelihood; ours are Wald: the summary and print say so in one line."""
    df = pd.DataFrame({"x": np.arange(8.0), "y": [0, 0, 1, 0, 1, 0, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_glm("y ~ x", df, eps=float("inf"))
    for text in (str(fit.summary()), str(fit)):
        lines = [ln for ln in text.splitlines() if ln.startswith("Intervals (0.95):")]
        assert len(lines) == 1 and re.search(r"Wald.*confint\.default.*confint\(glm\) profiles", lines[0])


def test_separation_stops_where_glm_does_with_its_warning(rpy2_robjects):
    """Complete separation: glm.fit runs its 25 iterations and warns; so does the eps = inf fit (R's words)."""
    ro = rpy2_robjects
    ro.r("d <- data.frame(x = 0:5, y = c(0, 0, 0, 1, 1, 1)); g <- suppressWarnings(glm(y ~ x, binomial, d))")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_glm("y ~ x", _frame(ro), eps=float("inf"))
    ours = [str(w.message) for w in caught if w.category is DataWarning]
    assert ours == ["glm.fit: fitted probabilities numerically 0 or 1 occurred"]
    assert fit.warnings == ours
    assert fit.iterations == int(ro.r("g$iter")[0]) == 25
    _close(fit.coefficients, ro.r("unname(coef(g))"), rtol=1e-8)
