"""dp.plan("dp_glm"): width relative to glm's and coverage against the front door, and the door's refusals.

The planner simulates dp_glm's release on K = 1000 grouped design points per data set
(``dpstats.planner.glm``); here the front door runs on rows drawn one by one with numpy, with
statsmodels' GLM as the reference interval, and the two must agree within 3 combined Monte
Carlo standard errors.  The cells the planner marks refused must be exactly those the door
refuses before spending (its public rule (G5)), which on the coverage grid of
tests/test_glm_coverage.py are the cells listed there as refused.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from scipy.special import expit

import dpstats as dp
import test_glm_coverage as coverage
from dpstats.errors import AssumptionError, DataError, PrivacyParameterError
from dpstats.planner import GLMModel
from dpstats.planner.glm import clipped_poisson
from dpstats.privacy.accountant import Accountant
from dpstats.simulate import Assume


def _front_door(family: str, n: int, eps: float, reps: int, seed: int) -> tuple[list, list]:
    """dp_glm on ``reps`` data sets of the planner's default model with p = 3 (rows drawn here)."""
    model = GLMModel().resolved(family)
    beta = model.coefficients(3)
    rng = np.random.default_rng(seed)
    names = ["x1", "x2", "x3"]
    bounds = {**{nm: (-3.0, 3.0) for nm in names}, "y": (0.0, 20.0)}
    ratios, covered = [], []
    for t in range(reps):
        X = np.clip(rng.standard_normal((n, 3)), -3, 3)
        eta = beta[0] + X @ beta[1:]
        if family == "binomial":
            y, fam = (rng.random(n) < expit(eta)).astype(float), sm.families.Binomial()
        else:
            y, fam = np.minimum(rng.poisson(np.exp(eta)), 20).astype(float), sm.families.Poisson()
        ref = sm.GLM(y, sm.add_constant(X), family=fam).fit().conf_int()
        fit = dp.dp_glm(
            "y ~ .", pd.DataFrame(X, columns=names).assign(y=y), eps=eps, delta=1e-6, family=family,
            bounds=bounds, random_state=seed * 1000 + t,
        )  # fmt: skip
        if fit.withheld:
            continue
        low, high = fit.table["conf.low"].to_numpy(), fit.table["conf.high"].to_numpy()
        ratios.append(float(np.median((high - low) / (ref[:, 1] - ref[:, 0]))))
        covered.append(float(np.mean((low <= beta) & (beta <= high))))
    return ratios, covered


@pytest.mark.parametrize(
    ("family", "n", "eps", "seed"), [("binomial", 5_000, 1.0, 1), ("poisson", 20_000, 2.0, 2)]
)
def test_plan_predicts_the_width_and_coverage_the_front_door_gives(family, n, eps, seed):
    """Default model, p = 3; 200 planned data sets (seed 0), 60 front-door data sets (seed 1 or 2).

    ``-s`` prints both sides; README.md ("Know before you spend") quotes the binomial line.  Measured with
    6 pilot steps (dp_glm's default; the figures move with it): binomial width ratio 3.66 ± 0.02
    planned, 3.69 ± 0.05 by the door, coverage 0.959 and 0.950; Poisson (n = 20 000, eps = 2) 3.77 ±
    0.02 and 3.78 ± 0.04, coverage 0.949 and 0.946.
    """
    pl = dp.plan("dp_glm", n=n, p=3, eps=eps, delta=1e-6, family=family, trials=200, random_state=0)
    got = pl.tidy().set_index("measure")
    ratios, covered = _front_door(family, n, eps, 60, seed)
    print(
        f"\n{family} n={n} eps={eps:g}: planned width/glm {got.loc['width_ratio', 'estimate']:.2f} "
        f"(s.e. {got.loc['width_ratio', 'std.error']:.2f}), coverage {got.loc['coverage', 'estimate']:.3f}; "
        f"door {np.mean(ratios):.2f} (s.e. {np.std(ratios, ddof=1) / math.sqrt(len(ratios)):.2f}), "
        f"coverage {np.mean(covered):.3f}"
    )  # -s prints the figures README.md quotes ("Know before you spend")
    for measure, values in (("width_ratio", ratios), ("coverage", covered)):
        se = math.hypot(got.loc[measure, "std.error"], np.std(values, ddof=1) / math.sqrt(len(values)))
        assert abs(got.loc[measure, "estimate"] - np.mean(values)) <= 3 * se, (measure, got.loc[measure])
    assert 0.93 <= got.loc["coverage", "estimate"] <= 0.97
    assert got.loc["refused", "estimate"] == 0.0 and got.loc["withheld", "estimate"] <= 0.05


def test_refused_cells_are_the_doors_refusals_on_the_coverage_grid():
    """The planner's refused cells on the coverage grid (family × n × p × eps) equal the cells the
    coverage test lists as refused, and the door refuses exactly those with nothing spent."""
    refused = set()
    for family in coverage.FAMILIES:
        for p in coverage.PS:
            pl = dp.plan(
                "dp_glm", n=list(coverage.NS), p=p, eps=list(coverage.EPSS), delta=coverage.DELTA,
                family=family, trials=2, random_state=0, assume={"count_bound": coverage.Y},
            )  # fmt: skip
            part = pl.table[(pl.table.measure == "refused") & (pl.table.estimate == 1.0)]
            refused |= {(family, int(n), p, float(e)) for n, e in zip(part.n, part.eps)}
            shown = pl.table[pl.table.measure == "coverage"]
            assert list(shown.estimate.isna()) == [
                (family, int(n), p, float(e)) in refused for n, e in zip(shown.n, shown.eps)
            ]
    assert refused == coverage.REFUSED
    rng = np.random.default_rng(3)
    for family, n, p, eps in sorted(refused)[:3]:
        df = pd.DataFrame(rng.uniform(-1, 1, (n, p)), columns=[f"x{j}" for j in range(p)]).assign(y=0.0)
        acc = Accountant(eps=10.0, delta=1e-5)
        bounds = {**{f"x{j}": (-1, 1) for j in range(p)}, "y": (0, coverage.Y)}
        with pytest.raises(AssumptionError, match="Nothing was spent"):
            dp.dp_glm(
                "y ~ .", df, eps=eps, delta=coverage.DELTA, family=family, bounds=bounds, accountant=acc
            )
        assert acc.spent_eps == 0.0


def test_refused_cells_print_as_refused_in_every_channel(tmp_path):
    pl = dp.plan("dp_glm", n=[5000, 50000], p=10, eps=[1.0, 4.0], delta=1e-6, family="poisson", trials=4,
                 random_state=1)  # fmt: skip
    text = str(pl)
    assert "refused" in text and "refuses these calls before spending" in text
    tidy = pl.tidy().set_index(["n", "eps", "measure"])
    assert tidy.loc[(5000, 1.0, "refused"), "estimate"] == 1.0
    assert math.isnan(tidy.loc[(5000, 1.0, "width_ratio"), "estimate"])
    assert tidy.loc[(5000, 1.0, "width_ratio"), "trials"] == 0  # no data set measured where the door refuses
    assert tidy.loc[(50000, 4.0, "width_ratio"), "trials"] >= 1
    assert pl.to_dict()["tidy"]["estimate"]  # JSON-able with the refused cells
    assert "no data was read" in open(pl.report(str(tmp_path / "plan.html"))).read()


def test_plan_solves_for_a_width_ratio_and_plans_a_session():
    pl = dp.plan("dp_glm", n=5000, p=3, eps=[1.0, 4.0], delta=1e-6, target=2.0, trials=20, random_state=0)
    (sol,) = pl.solutions
    assert sol.measure == "width_ratio" and sol.axis == "eps" and 1.0 < sol.value < 4.0
    ses = dp.plan("glm", n=50000, p=3, session=(3.0, 1e-5), analyses=4, trials=4, random_state=0)
    assert ses.session and "dp_glm fits declared in a session" in ses.session
    assert 0 < ses.eps[0] < 3.0


def test_the_model_is_stated_and_accepts_an_assume_or_a_dict():
    pl = dp.plan("dp_glm", n=5000, p=4, eps=2.0, delta=1e-6, trials=2, random_state=0,
                 assume={"signals": 1, "strength": -0.4, "binary": 2, "correlation": 0.3})  # fmt: skip
    assert pl.assumption.startswith("logistic regression, logit P(y = 1) = 0 + -0.4·(x1)")
    assert "the last 2 features binary" in pl.assumption and pl.model["binary"] == 2
    pl = dp.plan("dp_glm", n=5000, p=3, eps=2.0, delta=1e-6, family="poisson", trials=2, random_state=0,
                 assume=Assume(signals=1, strength=0.3))  # fmt: skip
    assert pl.assumption.startswith("Poisson regression, log E(y) = 1 + 0.3·(x1)")
    assert "counts clipped at the declared bound 20" in pl.assumption
    X = GLMModel(binary=2, correlation=0.5).resolved("binomial").features(2000, 4, np.random.default_rng(0))
    assert set(np.unique(X[:, 2:])) == {0.0, 1.0} and np.abs(X[:, :2]).max() <= 3.0
    assert np.corrcoef(X[:, 0], X[:, 3])[0, 1] > 0.2  # binary predictors correlated with the others


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"delta": None}, PrivacyParameterError, "give delta > 0"),
        ({"delta": 0.0}, PrivacyParameterError, "pure eps-DP is not offered"),
        ({"family": "gamma"}, PrivacyParameterError, "family must be one of"),
        ({"n": 4}, DataError, r"dp_glm needs n > p \+ 1"),
        ({"bounds": "auto"}, PrivacyParameterError, "cannot be planned for dp_glm"),
        ({"assume": {"binary": 5}}, PrivacyParameterError, "binary must be at most p = 3"),
        ({"assume": {"noise": 2.0}}, PrivacyParameterError, "unknown field"),
        ({"assume": Assume(signals=1, strength=1.0, noise=2.0)}, PrivacyParameterError, "no residual noise"),
        ({"target": {"width_ratio": -1.0}}, PrivacyParameterError, "positive finite ratio"),
        ({"target": {"coverage": 1.5}}, PrivacyParameterError, "target coverage"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, match):
    base = {"n": 5000, "p": 3, "eps": 1.0, "delta": 1e-6, "trials": 2, "random_state": 0, **kwargs}
    with pytest.raises(error, match=match):
        dp.plan("dp_glm", **base)


def test_clipped_poisson_is_the_law_of_a_clipped_count():
    """The multinomial's values and probabilities are those of min(Poisson(μ), Y), the far tail merged."""
    mu = np.array([0.5, 3.0, 7.5])
    for top in (20.0, 5.5, 4.0):
        values, probs = clipped_poisson(mu, top)
        assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-14)
        support = np.arange(200.0)
        exact = [np.sum(np.minimum(support, top) * sps.poisson.pmf(support, m_)) for m_ in mu]
        assert np.allclose(probs @ values, exact, rtol=0, atol=1e-12), top
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rng = np.random.default_rng(0)
        draws = np.minimum(rng.poisson(3.0, 200_000), 5.5)
        values, probs = clipped_poisson(np.array([3.0]), 5.5)
        for v, q in zip(values, probs[0]):
            assert abs(np.mean(draws == v) - q) <= 4 * math.sqrt(q * (1 - q) / draws.size) + 1e-12
