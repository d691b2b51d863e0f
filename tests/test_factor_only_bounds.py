"""A design of factors only needs no declared bounds (audit s14-glmuser, finding 3).

A factor's dummies are bounded by their coding's public range and a binomial 0/1 response by the
family, so ``bounds=None`` with such a formula must be the fully private fit: no data-dependent step,
accepted under ``strict=True``, the same fit as ``bounds={}``. Where a bound is still needed (a Poisson
count response, whose missing values take its midpoint; a numeric predictor) the advice names a column of the formula, never a made-up 'x'.

Data: R's own esoph (ordered factors agegp, alcgp; expanded to one row per subject, ``case`` 0/1)
and warpbreaks (wool * tension; ``long`` = breaks > 26, and breaks as a count), read through rpy2
and resampled with replacement (R's set.seed(1)) to n = 20 000 so that a private fit is not refused
as too noisy. The comparisons are exact (same seed, same arithmetic): no tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.formula import model_frame
from dpstats.methods import glm as mglm
from dpstats.methods.lm import data_range_fix
from dpstats.methods.privreg._release import covariate_bounds
from dpstats.privacy.statement import DataDependence
from neighbours import assert_same_view, reader_view

pytestmark = pytest.mark.r

R_TWINS = {
    "esoph": (
        "es <- esoph[rep(seq_len(nrow(esoph)), esoph$ncases + esoph$ncontrols), c('agegp', 'alcgp')];"
        "es$case <- unlist(mapply(function(a, b) c(rep(1, a), rep(0, b)), esoph$ncases, esoph$ncontrols));"
        "set.seed(1); d <- es[sample(nrow(es), 20000, TRUE), ]; rownames(d) <- NULL; d",
        "case ~ agegp + alcgp",
    ),
    "warpbreaks": (
        "set.seed(1); d <- warpbreaks[sample(nrow(warpbreaks), 20000, TRUE), ];"
        "d$long <- as.integer(d$breaks > 26); rownames(d) <- NULL; d",
        "long ~ wool * tension",
    ),
}
SEED = 7


def r_frame(ro, code: str) -> pd.DataFrame:
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter):
        df = ro.conversion.rpy2py(ro.r(code))
    return df.reset_index(drop=True)


@pytest.fixture(scope="module")
def twins(rpy2_robjects):
    return {name: (r_frame(rpy2_robjects, code), formula) for name, (code, formula) in R_TWINS.items()}


def fit_quietly(formula, df, eps=1.0, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_glm(formula, df, eps=eps, delta=1e-6, random_state=SEED, **kw)
    return fit, [str(w.message) for w in caught if issubclass(w.category, dp.NonPrivateWarning)]


def response_declared(formula: str) -> dict:
    """The 0/1 response declared as numbers by its bounds entry, as strict=True needs (session 16): the
    factors still need no bounds."""
    return {formula.split("~")[0].strip(): (0, 1)}


@pytest.mark.parametrize("name", list(R_TWINS))
def test_factor_only_binomial_default_bounds_is_fully_private(twins, name):
    df, formula = twins[name]
    # refused before s14: the data's min and max
    fit, steps = fit_quietly(formula, df, strict=True, bounds=response_declared(formula))
    assert steps == []
    assert fit.privacy.data_dependent_steps == []
    assert "does not cover" not in fit.privacy.plain_language() and "min and max" not in str(fit.summary())
    declared_none, _ = fit_quietly(formula, df, bounds={})
    np.testing.assert_array_equal(fit.coefficients, declared_none.coefficients)


def test_poisson_factor_only_needs_the_count_bound_alone_and_names_it(twins):
    """The count's bounds give its missing values their fill, the midpoint (s16-rusers3 F03): without
    them the call is refused, strict or not, naming the count (before s16: a data-dependent step)."""
    df, _ = twins["warpbreaks"]
    for strict in (True, False):
        with pytest.raises(PrivacyParameterError) as err:
            fit_quietly("breaks ~ wool + tension", df, family="poisson", strict=strict)
        msg = str(err.value)
        assert "declared bounds for 'breaks'" in msg and "bounds={'breaks': (lo, hi)}" in msg
        assert "design columns" not in msg and "'x'" not in msg
    fit, steps = fit_quietly(
        "breaks ~ wool + tension", df, family="poisson", bounds={"breaks": (0, 80)}, eps=30
    )
    assert steps == [] and fit.privacy.data_dependent_steps == []


def test_design_step_advice_names_the_formulas_variables():
    """Where the design step still fires (a numeric column without a bound, e.g. on a route whose
    schema does not refuse it first), its advice names that variable: x for x and for x:g."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"y": rng.integers(0, 2, 50), "g": pd.Categorical(rng.choice(["a", "b"], 50)), "age": rng.random(50)}
    )
    mf = model_frame("y ~ g * age", df)
    keep = [j for j, nm in enumerate(mf.names) if nm != "(Intercept)"]
    ranges = mglm.DataRanges(mf.X[:, keep].min(0), mf.X[:, keep].max(0), lambda i: 1.0)
    dd = DataDependence(strict=True)
    with pytest.raises(PrivacyParameterError, match=r"e\.g\. bounds=\{'age': \(lo, hi\)\}"):
        mglm.coordinates(None, mf, keep, ranges, dd)
    dd = DataDependence(strict=True)
    mf_factors = model_frame("y ~ g", df)
    coords = mglm.coordinates(None, mf_factors, [1], ranges, dd)  # no step: the dummy's (0, 1)
    assert dd.steps == [] and (coords.x_center.tolist(), coords.x_half.tolist()) == ([0.5], [0.5])
    with pytest.raises(PrivacyParameterError, match=r"e\.g\. bounds=\{'age': \(lo, hi\)\}"):
        covariate_bounds(mf, None)
    assert covariate_bounds(mf_factors, None) == {}
    assert "bounds={'breaks': (lo, hi)}" in data_range_fix("breaks ~ wool + tension")


@pytest.mark.parametrize("name", list(R_TWINS))
def test_factor_only_neighbours_look_the_same(twins, name):
    df, formula = twins[name]
    other = df.copy()
    response = formula.split("~")[0].strip()
    other.loc[0, response] = 1 - other.loc[0, response]  # one row replaced: its outcome and a factor
    factor = {"esoph": "agegp", "warpbreaks": "tension"}[name]
    levels = list(df[factor].cat.categories)
    other.loc[0, factor] = levels[(levels.index(df.loc[0, factor]) + 1) % len(levels)]
    kw = dict(eps=1.0, delta=1e-6, random_state=SEED, strict=True)
    binomial = dict(kw, bounds=response_declared(formula))
    assert_same_view(
        reader_view(dp.dp_glm, formula, df, **binomial),
        reader_view(dp.dp_glm, formula, other, **binomial),
        name,
    )
    poisson = dict(kw, family="poisson")
    if name == "warpbreaks":  # the refusal naming the count column is the same for both
        other.loc[1, "breaks"] = 70
        one = reader_view(dp.dp_glm, "breaks ~ wool + tension", df, **poisson)
        two = reader_view(dp.dp_glm, "breaks ~ wool + tension", other, **poisson)
        assert one["error"] is not None
        assert_same_view(one, two, "poisson", released=False)


def test_vertical_glm_binomial_factor_only_needs_no_bounds(twins):
    df, _ = twins["esoph"]
    kw = dict(
        parties=[["agegp"], ["alcgp"]],
        family="binomial",
        penalty="ridge",
        lam=1.0,
        eps=1.0,
        delta=1e-6,
        random_state=SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", dp.NonPrivateWarning)
        fit = dp.vertical_glm("case ~ agegp + alcgp", df, strict=True, bounds={"case": (0, 1)}, **kw)
        declared_none = dp.vertical_glm("case ~ agegp + alcgp", df, bounds={}, **kw)
    assert fit.privacy.data_dependent_steps == []
    assert fit.coef() == declared_none.coef()
