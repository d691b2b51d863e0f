"""Two rules of R's model frame that a non-private fit (eps = inf) follows, R itself the oracle (rpy2).

1. ``y ~ . - d``: R's model frame holds every variable of the expanded formula, ``d`` included
   (``attr(terms(Ozone ~ . - Solar.R, data = airquality), "variables")`` lists Solar.R), so
   ``na.omit`` drops the rows missing ``d`` though no term uses it: ``nrow(model.frame(Ozone ~ . -
   Solar.R, airquality))`` is 111, not 116.  dp_lm and dp_glm follow it on both routes of the model
   frame (plain numeric columns; a data set with a factor); these pass on the old code too and guard the
   rule (``formula_variables`` keeps removed variables, ``removed_variables`` gives them a fill of 0
   only in a private run under ``na_action="fill"``).
2. ``factor(x, levels = c(...))`` (and ``ordered()``, ``cut()``, ``C()`` of one, ``factor(x)``) written in
   the formula: lm and glm build their frame with ``drop.unused.levels = TRUE``, after ``na.omit``, so
   a level no analysed row holds has no column (``lm(len ~ factor(dose, levels = c(0.5, 1, 2, 4)),
   ToothGrowth)`` has 3 coefficients, not 4 with an NA) and a factor with contrasts that loses a level
   loses them, with R's warning.  At eps = inf dpstats now does the same.  A private fit keeps every
   declared level (the levels are public, the columns must not depend on the rows: neighbours have the
   same shapes), and so does ``levels=`` at eps = inf (dpstats' declaration, as the R package keeps it).

Tolerances: coefficients to 1e-8 relative (QR and IRLS on the same rows), names exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning
from neighbours import assert_same_view, reader_view

pytestmark = pytest.mark.r


def _quiet(door, formula, data, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = door(formula, data, **kwargs)
    return fit, [str(w.message) for w in caught if issubclass(w.category, DataWarning)]


def _r_coef(ro, call: str) -> tuple[list[str], np.ndarray]:
    cf = ro.r(f"coef({call})")
    return list(ro.r["names"](cf)), np.asarray(cf, float)


def _airquality(ro, with_factor: bool) -> pd.DataFrame:
    from dpstats.rbridge import load_r_dataset, to_r

    aq = load_r_dataset("airquality", "datasets")
    if with_factor:  # a factor column sends the frame through the general route
        aq["half"] = pd.Categorical(np.where(aq.Day > 15, "late", "early"))
    ro.globalenv["aq_frame"] = to_r(aq)
    return aq


# ------------------------------------------------------------------------------------ 1. y ~ . - d
@pytest.mark.parametrize("with_factor", [False, True], ids=["numeric", "with-factor"])
@pytest.mark.parametrize(
    "formula", ["Ozone ~ . - Solar.R", "Ozone ~ . - Solar.R - Day", "Ozone ~ Wind + Temp - Solar.R"]
)
def test_a_row_missing_a_removed_variable_is_dropped_as_in_r(rpy2_robjects, formula, with_factor):
    ro = rpy2_robjects
    aq = _airquality(ro, with_factor)
    n_r = int(ro.r(f"nrow(model.frame({formula}, aq_frame))")[0])
    assert n_r < int(ro.r("sum(complete.cases(aq_frame[names(aq_frame) != 'Solar.R']))")[0])
    for door, r_call, extra in [
        (dp.dp_lm, f"lm({formula}, aq_frame)", {}),
        (dp.dp_glm, f"glm({formula}, poisson, aq_frame)", {"family": "poisson"}),
    ]:
        names, expected = _r_coef(ro, r_call)
        fit, _ = _quiet(door, formula, aq, eps=np.inf, **extra)
        assert fit.n == n_r, door.__name__
        assert list(fit.terms) == names
        np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8, err_msg=door.__name__)


# ---------------------------------------------------------------- 2. declared levels in the formula
DOSE4 = "factor(dose, levels = c(0.5, 1, 2, 4))"
UNUSED = [
    f"len ~ {DOSE4}",
    "len ~ factor(dose, levels = c(4, 2, 1, 0.5))",  # the unused level is the baseline: 2 becomes it
    "len ~ ordered(dose, levels = c(0.5, 1, 2, 4))",  # polynomial contrasts on the 3 levels held
    "len ~ supp + cut(dose, c(0, 0.7, 1.5, 3, 5))",
    'len ~ factor(supp, levels = c("VC", "none", "OJ")) * dose',
    "len ~ as.factor(dose) + factor(supp, c('OJ', 'VC', 'XX'))",
]


@pytest.mark.parametrize("formula", UNUSED)
def test_an_unused_formula_level_is_dropped_at_eps_inf_as_lm_drops_it(rpy2_robjects, formula):
    from dpstats.rbridge import load_r_dataset

    tg = load_r_dataset("ToothGrowth", "datasets")
    names, expected = _r_coef(rpy2_robjects, f"lm({formula}, ToothGrowth)")
    fit, _ = _quiet(dp.dp_lm, formula, tg, eps=np.inf)
    assert list(fit.terms) == names
    np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8)
    counts = formula.replace("len ~", "round(len) ~")
    g, _ = _quiet(dp.dp_glm, counts, tg, eps=np.inf, family="poisson")
    names, expected = _r_coef(rpy2_robjects, f"glm({counts}, poisson, ToothGrowth)")
    assert list(g.terms) == names
    np.testing.assert_allclose(g.coefficients, expected, rtol=1e-8)


@pytest.mark.parametrize(
    "formula",
    ["Ozone ~ Wind + factor(Month, levels = c(5, 6, 7, 8, 9))", "Ozone ~ Wind + factor(Month)"],
)
def test_a_level_held_only_by_rows_na_omit_drops_is_dropped_as_lm_drops_it(rpy2_robjects, formula):
    from dpstats.rbridge import load_r_dataset, to_r

    aq = load_r_dataset("airquality", "datasets")
    aq.loc[aq.Month == 6, "Ozone"] = np.nan  # June is held only by rows na.omit drops
    rpy2_robjects.globalenv["aq_june"] = to_r(aq)
    names, expected = _r_coef(rpy2_robjects, f"lm({formula}, aq_june)")
    fit, _ = _quiet(dp.dp_lm, formula, aq, eps=np.inf)
    assert list(fit.terms) == names and not any(name.endswith(")6") for name in names)
    np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8)


def test_contrasts_set_by_c_are_dropped_with_the_level_with_rs_warning(rpy2_robjects):
    from dpstats.rbridge import load_r_dataset

    tg = load_r_dataset("ToothGrowth", "datasets")
    formula = f"len ~ C({DOSE4}, sum)"
    rpy2_robjects.r(
        f"c_fit <- withCallingHandlers(lm({formula}, ToothGrowth), warning = function(w) {{"
        "fit_warning <<- conditionMessage(w); invokeRestart('muffleWarning')})"
    )
    names, expected = _r_coef(rpy2_robjects, "c_fit")
    fit, notes = _quiet(dp.dp_lm, formula, tg, eps=np.inf)
    assert list(fit.terms) == names
    np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8)
    # dp_lm builds two frames (the data's boxes, then the fit's); Python's default filter and the R
    # package (rbridge's one entry per text) show the text once
    assert set(notes) == {rpy2_robjects.r("fit_warning")[0]}


def test_levels_declared_with_levels_are_kept_at_eps_inf():
    """dpstats' own declaration (levels=) fixes the columns at eps = inf too, as the R package keeps it."""
    from dpstats.rbridge import load_r_dataset

    tg = load_r_dataset("ToothGrowth", "datasets").assign(supp=lambda d: d.supp.astype(str))
    declared = {"supp": ["OJ", "VC", "XX"]}
    for formula in ["len ~ supp", "len ~ factor(supp)"]:
        fit, _ = _quiet(dp.dp_lm, formula, tg, eps=np.inf, levels=declared)
        assert fit.terms[-1].endswith("XX") and np.isnan(fit.coefficients[-1]), formula


# ------------------------------------------------------------------ private fits keep declared levels
def _dose_neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)
    a = pd.DataFrame({"dose": rng.choice([0.5, 1.0, 2.0], 3000), "x": rng.uniform(-1, 1, 3000)})
    a["len"] = np.clip(5 + 8 * a.dose + a.x + rng.normal(0, 2, 3000), 0, 40)
    a["long"] = (a.len > 15).astype(float)
    b = a.copy()
    b.loc[7, "dose"] = 4.0  # the neighbour: one row holds the level no row of a holds
    return a, b


@pytest.mark.parametrize(
    "door, kwargs",
    [
        (dp.dp_lm, dict(eps=2.0, delta=1e-6, n_boot=100)),
        (dp.dp_glm, dict(eps=2.0, delta=1e-6, family="binomial")),
    ],
    ids=["dp_lm", "dp_glm"],
)
def test_a_private_fit_keeps_every_declared_level_so_neighbours_look_the_same(door, kwargs):
    a, b = _dose_neighbours()
    formula = f"{'long' if door is dp.dp_glm else 'len'} ~ x + {DOSE4}"
    kwargs = {"bounds": {"x": (-1, 1), "len": (0, 40)} if door is dp.dp_lm else {"x": (-1, 1)}, **kwargs}
    views = [reader_view(door, formula, d, random_state=5, **kwargs) for d in (a, b)]
    assert_same_view(*views, door.__name__)
    assert [t for t in views[0]["terms"] if t.startswith("factor")] == [f"{DOSE4}{lev}" for lev in (1, 2, 4)]


def test_streamed_data_at_eps_inf_keeps_the_declared_levels(tmp_path):
    """Chunks are coded by a layout made before any row is read, so a stream's columns are the declared
    levels at eps = inf too (as the R package keeps a file's): the unused level's coefficient is NA."""
    from dpstats import engines
    from dpstats.rbridge import load_r_dataset

    tg = load_r_dataset("ToothGrowth", "datasets")
    tg.to_parquet(path := tmp_path / "tg.parquet")
    fit, _ = _quiet(dp.dp_lm, f"len ~ {DOSE4}", engines.stream(str(path), chunk_rows=7), eps=np.inf)
    assert list(fit.terms) == ["(Intercept)"] + [f"{DOSE4}{lev}" for lev in (1, 2, 4)]
    in_memory, _ = _quiet(dp.dp_lm, f"len ~ {DOSE4}", tg, eps=np.inf)
    np.testing.assert_allclose(fit.coefficients[:3], in_memory.coefficients, rtol=1e-8)
    assert np.isnan(fit.coefficients[3])
