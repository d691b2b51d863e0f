"""dp_glm: R's glm and statsmodels' GLM at eps = inf, sensitivities by search, the audit, refusals.

Oracles at eps = inf: R's ``glm`` run by Rscript on R's own data sets (infert, esoph with
``cbind``, warpbreaks, InsectSprays), and statsmodels' GLM on the same designs.  The fit is glm.fit's
(its default epsilon = 1e-8 stopping rule, covariance from the last step's working weights, at the
iterate before the last): estimates, standard errors, deviances and AIC equal R's default fit to 1e-10
relative (tests/test_glm_irls_as_r.py has more data sets, vcov and the printed summary).  Against R
with ``glm.control(epsilon = 1e-14)`` and statsmodels iterated to 1e-12, estimates agree to 1e-6 and
standard errors to 1e-5 relative: glm's default stopping leaves the weights of esoph's covariance up
to 3e-6 relative from the converged fit's.  The privacy of the release: the sensitivities (G2), (G3) of
:mod:`dpstats.methods.glm` checked by search over adversarial rows and iterates, and an
empirical audit of the whole adaptive release (every noisy Newton step) on a worst-case
neighbouring pair.  Coverage is tests/test_glm_coverage.py.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpstats as dp
from dpstats.errors import AssumptionError, FormulaError, NonPrivateWarning, PrivacyParameterError
from dpstats.formula import model_frame
from dpstats.methods import glm as m
from dpstats.privacy.accountant import Accountant

R_CASES = {
    "infert": ("case ~ spontaneous + induced + age", "binomial"),
    "esoph": ("cbind(ncases, ncontrols) ~ agegp + alcgp", "binomial"),
    "warpbreaks": ("breaks ~ wool + tension", "poisson"),
    "InsectSprays": ("count ~ spray", "poisson"),
}

R_SCRIPT = r"""
library(jsonlite)
args <- commandArgs(TRUE); out <- args[1]
cases <- list(infert = list(case ~ spontaneous + induced + age, binomial),
              esoph = list(cbind(ncases, ncontrols) ~ agegp + alcgp, binomial),
              warpbreaks = list(breaks ~ wool + tension, poisson),
              InsectSprays = list(count ~ spray, poisson))
res <- list()
for (nm in names(cases)) {
  d <- get(nm)
  f0 <- glm(cases[[nm]][[1]], family = cases[[nm]][[2]], data = d)
  f <- glm(cases[[nm]][[1]], family = cases[[nm]][[2]], data = d, control = glm.control(epsilon = 1e-14))
  s <- summary(f)$coefficients
  lev <- lapply(Filter(is.factor, d), function(v) list(levels = levels(v), ordered = is.ordered(v)))
  write.csv(d, file.path(out, paste0(nm, ".csv")), row.names = FALSE)
  res[[nm]] <- list(names = rownames(s), coef = unname(s[, 1]), se = unname(s[, 2]),
                    coef_default = unname(coef(f0)), se_default = unname(summary(f0)$coefficients[, 2]),
                    deviance = f0$deviance, null = f0$null.deviance, aic = f0$aic, iter = f0$iter,
                    df_residual = f0$df.residual, df_null = f0$df.null, factors = lev)
}
writeLines(toJSON(res, digits = NA, auto_unbox = TRUE), file.path(out, "glm.json"))
"""


def _nonprivate(formula, data, family, **kw):
    with pytest.warns(NonPrivateWarning):
        return dp.dp_glm(formula, data, eps=math.inf, family=family, **kw)


@pytest.fixture(scope="module")
def r_glm(tmp_path_factory):
    """R's glm on its data sets, with the data written out for Python (one Rscript run)."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not installed")
    out = tmp_path_factory.mktemp("r_glm")
    script = out / "glm.R"
    script.write_text(R_SCRIPT)
    subprocess.run(["Rscript", str(script), str(out)], check=True, capture_output=True, timeout=120)
    res = json.loads((out / "glm.json").read_text())
    frames = {}
    for name, info in res.items():
        df = pd.read_csv(out / f"{name}.csv")
        for col, lev in (info["factors"] or {}).items():
            levels = lev["levels"] if isinstance(lev["levels"], list) else [lev["levels"]]
            df[col] = pd.Categorical(df[col].astype(str), categories=levels, ordered=bool(lev["ordered"]))
        frames[name] = df
    return res, frames


@pytest.mark.r
@pytest.mark.parametrize("name", list(R_CASES))
def test_eps_inf_equals_r_glm(r_glm, name):
    res, frames = r_glm
    formula, family = R_CASES[name]
    fit = _nonprivate(formula, frames[name], family)
    r = res[name]
    t = fit.tidy()
    assert list(t.term) == r["names"]
    np.testing.assert_allclose(t.estimate, r["coef_default"], rtol=1e-10, err_msg=name)
    np.testing.assert_allclose(t["std.error"], r["se_default"], rtol=1e-10, err_msg=name)
    np.testing.assert_allclose(t.estimate, r["coef"], rtol=1e-6, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(t["std.error"], r["se"], rtol=1e-5, err_msg=name)
    assert fit.deviance == pytest.approx(r["deviance"], rel=1e-10)
    assert fit.null_deviance == pytest.approx(r["null"], rel=1e-10)
    assert fit.aic == pytest.approx(r["aic"], rel=1e-10)
    assert (fit.iterations, fit.df_residual, fit.df_null) == (r["iter"], r["df_residual"], r["df_null"])
    text = str(fit.summary())
    for line in ("z value", "Pr(>|z|)", f"(Dispersion parameter for {family} family taken to be 1)"):
        assert line in text
    assert "Number of Fisher Scoring iterations: " + str(r["iter"]) in text


@pytest.mark.r
@pytest.mark.parametrize("name", list(R_CASES))
def test_eps_inf_equals_statsmodels_glm(r_glm, name):
    _, frames = r_glm
    formula, family = R_CASES[name]
    data = frames[name]
    fit = _nonprivate(formula, data, family)
    sm_family = sm.families.Binomial() if family == "binomial" else sm.families.Poisson()
    if name == "esoph":
        mf = model_frame("ncases ~ agegp + alcgp", data)
        endog = np.c_[data.ncases, data.ncontrols]
    else:
        mf = model_frame(formula, data)
        endog = mf.y
    ref = sm.GLM(endog, mf.X, family=sm_family).fit(tol=1e-12)
    np.testing.assert_allclose(fit.coefficients, ref.params, rtol=1e-6, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(fit.tidy()["std.error"], ref.bse, rtol=1e-5, err_msg=name)
    assert fit.deviance == pytest.approx(ref.deviance, rel=1e-6)


# ----------------------------------------------------------------------------- sensitivities
@pytest.mark.parametrize("family, p", [("binomial", 1), ("binomial", 3), ("poisson", 2), ("cbind", 2)])
def test_sensitivities_bound_every_replaced_row(family, p):
    """(G2), (G3) by search: box corners and random rows, responses at their extremes, iterates
    from 0 to |θ_j| = 30 (where the 0/1 score bound is nearly attained); never above the bound."""
    rng = np.random.default_rng(4)
    coords = m.Coordinates(np.zeros(p), np.ones(p), True)
    if family == "poisson":
        resp = m.response_range("poisson", counts=(0, 7))
    elif family == "cbind":
        resp = m.response_range("binomial", cbind=((0, 3), (0, 5)))
    else:
        resp = m.response_range("binomial")
    dg, dh = m.sensitivities(coords, resp)
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * p)).reshape(p, -1).T
    rows = np.r_[corners, rng.uniform(-1, 1, (40, p))]
    W = coords.rows(rows)
    iu = np.triu_indices(p + 1)
    worst_g = worst_h = 0.0
    for scale in (0.0, 1.0, 5.0, 30.0):
        for _ in range(6):
            theta = scale * rng.standard_normal(p + 1)
            for ys in _responses(resp):
                y, trials = ys
                g_rows = W * (y - m.mean_and_weight(W @ theta, trials, resp)[0])[:, None]
                v = m.mean_and_weight(W @ theta, trials, resp)[1]
                H_rows = np.einsum("r,ri,rj->rij", v, W, W)[:, iu[0], iu[1]]
                gd = np.linalg.norm(g_rows[:, None, :] - g_rows[None, :, :], axis=2)
                hd = np.linalg.norm(H_rows[:, None, :] - H_rows[None, :, :], axis=2)
                worst_g, worst_h = max(worst_g, gd.max()), max(worst_h, hd.max())
            # responses differing between the two rows: all pairs of extreme responses
            for (y1, m1), (y2, m2) in [(a, b) for a in _responses(resp) for b in _responses(resp)]:
                mu1, v1 = m.mean_and_weight(W @ theta, m1, resp)
                mu2, v2 = m.mean_and_weight(W @ theta, m2, resp)
                g1, g2 = W * (y1 - mu1)[:, None], W * (y2 - mu2)[:, None]
                worst_g = max(worst_g, np.linalg.norm(g1[:, None, :] - g2[None, :, :], axis=2).max())
    assert worst_g <= dg * (1 + 1e-12) and worst_h <= dh * (1 + 1e-12)
    assert worst_g > 0.5 * dg  # the search reaches the bound's order (the bound is not vacuous)


def _responses(resp):
    """Extreme responses (y, trials) of one row, as arrays broadcast over the rows."""
    if resp.family == "poisson":
        return [(np.array(0.0), np.array(1.0)), (np.array(resp.top), np.array(1.0))]
    if resp.top == 1.0:
        return [(np.array(0.0), np.array(1.0)), (np.array(1.0), np.array(1.0))]
    us, uf = resp.counts  # cbind(s, f): each column at 0 or its own bound
    return [(np.array(s), np.array(s + f)) for s in (0.0, us) for f in (0.0, uf) if s + f > 0]


# ----------------------------------------------------------------------------- audit
def test_whole_release_passes_the_empirical_audit():
    from dpstats.audit import audit
    from dpstats.audit.cases import glm_release_case

    res = audit(glm_release_case(eps=1.0, delta=1e-5), n_runs=3_000, random_state=3)
    assert res.passed, res
    broken = audit(glm_release_case(eps=1.0, delta=1e-5, broken=True), n_runs=3_000, random_state=3)
    assert not broken.passed, broken  # the audit has power: a tenth of the noise is caught


def test_whole_poisson_release_passes_the_empirical_audit():
    """The Poisson release with its total-count start (G3', G7'): the replaced row moves the count by
    its whole Δ = Y; 3 000 transcripts (seed 3), and a tenth of the noise is refuted."""
    from dpstats.audit import audit
    from dpstats.audit.cases import glm_release_case

    res = audit(glm_release_case(eps=1.0, delta=1e-5, family="poisson"), n_runs=3_000, random_state=3)
    assert res.passed, res
    broken = audit(
        glm_release_case(eps=1.0, delta=1e-5, family="poisson", broken=True), n_runs=3_000, random_state=3
    )
    assert not broken.passed, broken


# ----------------------------------------------------------------------------- DP runs
def _logistic(n=40_000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(0, 4, n), "g": rng.choice(["a", "b"], n)}
    )
    eta = -0.3 + 0.8 * df.x1 - 0.4 * df.x2 + 0.5 * (df.g == "b")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    df["cnt"] = rng.poisson(np.exp(0.2 + 0.5 * df.x1))
    return df


BOUNDS = {"x1": (-1, 1), "x2": (0, 4), "cnt": (0, 15)}
LEVELS = {"g": ["a", "b"]}


def test_dp_fit_is_seeded_reproducible_and_near_the_mle():
    df = _logistic()
    fit = dp.dp_glm("y ~ x1 + x2 + g", df, eps=2.0, delta=1e-6, bounds=BOUNDS, levels=LEVELS, random_state=7)
    again = dp.dp_glm(
        "y ~ x1 + x2 + g", df, eps=2.0, delta=1e-6, bounds=BOUNDS, levels=LEVELS, random_state=7
    )
    np.testing.assert_array_equal(fit.coefficients, again.coefficients)
    assert list(fit.tidy().columns) == [
        "term",
        "estimate",
        "std.error",
        "statistic",
        "p.value",
        "conf.low",
        "conf.high",
    ]
    np.testing.assert_allclose(fit.coefficients, [-0.3, 0.8, -0.4, 0.5], atol=0.15)
    assert fit.privacy.eps == pytest.approx(2.0) and fit.privacy.delta == pytest.approx(1e-6)
    # two releases per noisy Newton step, the count of successes and the refinement step's score (G5'')
    assert len(fit.privacy.ledger) == 2 * (m.PILOT_STEPS + 1) + 2
    assert all(e.privacy_event.kind == "gaussian" for e in fit.privacy.ledger)
    assert not fit.withheld and np.all(np.isfinite(fit.tidy()["std.error"]))
    json.dumps(fit.to_dict())
    text = str(fit.summary())
    assert "z value" in text and "Deviances and AIC: not released" in text


def test_poisson_and_cbind_releases():
    df = _logistic()
    pois = dp.dp_glm("cnt ~ x1", df, eps=2.0, delta=1e-6, family="poisson", bounds=BOUNDS, random_state=1)
    np.testing.assert_allclose(pois.coefficients, [0.2, 0.5], atol=0.15)
    # one row per household of 1..5 trials: s successes and f failures, each bounded by 5
    rng = np.random.default_rng(8)
    trials = rng.integers(1, 6, 30_000)
    x = rng.uniform(-1, 1, 30_000)
    s = rng.binomial(trials, 1 / (1 + np.exp(-(0.4 - 0.7 * x))))
    fam = pd.DataFrame({"s": s, "f": trials - s, "x": x})
    fit = dp.dp_glm(
        "cbind(s, f) ~ x",
        fam,
        eps=1.0,
        delta=1e-6,
        bounds={"x": (-1, 1), "s": (0, 5), "f": (0, 5)},
        random_state=2,
    )
    assert fit.terms == ["(Intercept)", "x"]
    np.testing.assert_allclose(fit.coefficients, [0.4, -0.7], atol=0.1)
    assert np.all(np.isfinite(fit.tidy()["conf.low"]))


def test_predict_link_and_response():
    df = _logistic(n=2000)
    fit = _nonprivate("y ~ x1 + x2", df, "binomial")
    new = pd.DataFrame({"x1": [0.0, 0.5], "x2": [1.0, 2.0]})
    eta = fit.predict(new)
    np.testing.assert_allclose(
        eta, fit.coefficients[0] + new.x1 * fit.coefficients[1] + new.x2 * fit.coefficients[2]
    )
    np.testing.assert_allclose(fit.predict(new, type="response"), 1 / (1 + np.exp(-eta)))
    with pytest.raises(PrivacyParameterError, match="type"):  # an argument, not the data
        fit.predict(new, type="terms")


def test_refusal_before_any_spend_from_public_inputs():
    df = _logistic(n=3000)
    acc = Accountant(eps=5.0, delta=1e-5)
    terms = " + ".join(f"x{j}" for j in range(1, 11))
    wide = df.assign(**{f"x{j}": df.x1 for j in range(3, 11)})
    with pytest.raises(AssumptionError, match="Nothing was spent"):
        dp.dp_glm(f"y ~ {terms}", wide, eps=1.0, delta=1e-6, bounds=(-4, 4), accountant=acc, random_state=0)
    assert acc.spent_eps == 0 and not acc.charges


@pytest.mark.parametrize(
    "kw, error",
    [
        ({"delta": 0.0}, PrivacyParameterError),
        ({"family": "gaussian"}, PrivacyParameterError),
        ({"pilot_steps": 0}, PrivacyParameterError),
        ({"pilot_share": 1.0}, PrivacyParameterError),
        ({"neighbouring": "add_remove"}, PrivacyParameterError),
        ({"bounds": "auto"}, PrivacyParameterError),
        ({"na_action": "omit"}, PrivacyParameterError),
    ],
)
def test_bad_arguments_are_refused_without_charge(kw, error):
    df = _logistic(n=2000)
    acc = Accountant(eps=5.0, delta=1e-5)
    args = {"eps": 1.0, "delta": 1e-6, "bounds": BOUNDS, "accountant": acc, **kw}
    with pytest.raises(error):
        dp.dp_glm("y ~ x1", df, **args)
    assert not acc.charges


def test_cbind_of_expressions_and_offsets_are_refused():
    df = _logistic(n=500).assign(f=1)
    with pytest.raises(FormulaError, match="cbind"):
        dp.dp_glm("cbind(y, 1 - y) ~ x1", df, eps=1.0, delta=1e-6, bounds={**BOUNDS, "y": (0, 1)})
    with pytest.raises(FormulaError, match="offset"):
        dp.dp_glm("y ~ x1 + offset(x2)", df, eps=1.0, delta=1e-6, bounds=BOUNDS)


def test_strict_refuses_eps_inf_and_data_range_bounds():
    df = _logistic(n=3000)
    with pytest.raises(PrivacyParameterError, match="strict"):
        dp.dp_glm("y ~ x1", df, eps=math.inf, strict=True)
    # without bounds x1 has no public fill, so its incomplete rows would be dropped and n made private:
    # refused whatever strict says, before the data-range step is reached (audit F4)
    with pytest.raises(PrivacyParameterError, match="cannot drop rows with a missing value in 'x1'"):
        dp.dp_glm("y ~ x1", df, eps=1.0, delta=1e-6, strict=True, bounds={"y": (0, 1)})  # y declared, x1 not


def test_intervals_are_withheld_when_the_released_hessian_is_too_noisy():
    """A design whose information is far below the public refusal rule's yardstick: x2 nearly
    constant inside wide bounds, so λ_min(H) ≪ B; the estimates are released, the intervals not."""
    rng = np.random.default_rng(5)
    n = 40_000
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": 0.001 * rng.standard_normal(n)})
    df["y"] = (rng.random(n) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = dp.dp_glm(
            "y ~ x1 + x2", df, eps=1.0, delta=1e-6, bounds={"x1": (-1, 1), "x2": (-1, 1)}, random_state=3
        )
    assert fit.withheld and "withheld" in fit.inference
    assert fit.tidy()["std.error"].isna().all() and fit.tidy()["conf.low"].isna().all()
    assert np.all(np.isfinite(fit.coefficients))


def test_nonprivate_reference_drops_incomplete_rows_as_r_glm_and_private_fit_refuses_it():
    """As dp_lm (schema.PublicN): na_action="omit" refused at a finite eps; at eps = inf the IRLS fit
    drops the incomplete rows as R's glm(na.action = na.omit) and equals statsmodels' GLM (1e-6)."""
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (300, 2)), columns=["a", "b"])
    df["y"] = (rng.uniform(size=300) < 1 / (1 + np.exp(-2 * df.a))).astype(float)
    df.loc[[3, 50], "b"] = np.nan
    with pytest.raises(dp.PrivacyParameterError, match='dp_glm cannot use na_action="omit"'):
        dp.dp_glm("y ~ a + b", df, eps=1.0, delta=1e-6, bounds=(-1, 1), na_action="omit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        fit = dp.dp_glm("y ~ a + b", df, eps=math.inf, bounds=(-1, 1), na_action="omit")
    reference = smf.glm("y ~ a + b", df, family=sm.families.Binomial()).fit()
    assert fit.n == 298
    np.testing.assert_allclose(fit.coef().to_numpy(), reference.params.to_numpy(), atol=1e-6)


@pytest.mark.parametrize("door", ["dp_lm", "dp_glm"])
@pytest.mark.parametrize(
    "formula, message",
    [
        ("y ~ .", "{door} needs more rows than coefficients, but n = 6 <= 7; use fewer terms"),
        ("y ~ 1", "the formula 'y ~ 1' has no predictor columns: a private {door} needs at least one"),
    ],
)
def test_regressions_refuse_designs_their_rows_cannot_fit_before_spending(door, formula, message):
    """One rule for dp_lm and dp_glm (validation.check_regression_rows), before anything is spent:
    more rows than coefficients (n = 6 rows read, public under replace-one-row with declared bounds)
    and, in a private fit, at least one predictor besides the intercept (eps = inf fits y ~ 1, as R:
    test_intercept_only_models_at_eps_inf_are_rs_null_models)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (6, 6)), columns=[f"x{j}" for j in range(6)])
    df["y"] = (df.x0 > 0).astype(float)
    acc = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(dp.DataError, match=re.escape(message.format(door=door))):
        getattr(dp, door)(formula, df, eps=1.0, delta=1e-6, bounds=(-1, 1), accountant=acc)
    assert acc.spent_eps == 0 and acc.charges == []


RESPONSE_EXPRESSIONS = {  # R's glm takes a logical or factor expression as the binomial response
    "I(mpg > 20) ~ wt": "mtcars",
    "mpg > 20 ~ wt": "mtcars",
    "factor(am) ~ wt": "mtcars",
    'Species == "virginica" ~ Sepal.Length': "iris",
}


def test_response_expressions_fit_as_rs_glm_does(rscript, tmp_path):
    """eps = inf against R's glm(binomial) on R's mtcars and iris: logical expressions count TRUE as
    1, a factor expression models its second level (coefficients to 1e-6)."""
    from dpstats.rbridge import load_r_dataset

    script = tmp_path / "r.R"
    lines = [f"cat(coef(glm({f}, binomial, {d})), '\\n')" for f, d in RESPONSE_EXPRESSIONS.items()]
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run([rscript, str(script)], check=True, capture_output=True, text=True, timeout=120)
    r_coefs = [np.array(line.split(), float) for line in out.stdout.strip().splitlines()]
    for (formula, data), want in zip(RESPONSE_EXPRESSIONS.items(), r_coefs):
        frame = load_r_dataset(data, "datasets")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            fit = dp.dp_glm(formula, frame, eps=math.inf)
        np.testing.assert_allclose(fit.coef().to_numpy(), want, rtol=1e-6, err_msg=formula)


def test_private_response_expressions_name_their_data_dependent_steps():
    """A logical expression of a bounded column needs no step; factor(am) reads its levels from the
    rows, a named step that strict=True refuses before anything is spent."""
    from dpstats.rbridge import load_r_dataset

    big = pd.concat([load_r_dataset("mtcars", "datasets")] * 200, ignore_index=True)
    kw = dict(eps=2.0, delta=1e-6, bounds={"wt": (1, 6), "mpg": (10, 35)}, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_glm("I(mpg > 20) ~ wt", big, strict=True, **kw)
    assert fit.terms == ["(Intercept)", "wt"]
    acc = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(PrivacyParameterError, match=r"factor\(am\) reads its levels from the rows"):
        dp.dp_glm(
            "factor(am) ~ wt",
            big,
            strict=True,
            accountant=acc,
            **{**kw, "bounds": {**kw["bounds"], "am": (0, 1)}},
        )
    assert acc.spent_eps == 0
