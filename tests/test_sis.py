"""dp_sis end to end: outputs, privacy statement, scaling, errors, reproducibility."""

import json
import math

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import (
    BudgetExceededError,
    DataError,
    FormulaError,
    NonPrivateWarning,
    PrivacyParameterError,
)
from dpstats.methods import sis as sis_methods


@pytest.fixture(scope="module")
def synthetic():
    return dp.datasets.fan_lv(n=100, d=300, random_state=3)


def test_user_story(synthetic, tmp_path):
    fit = dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=5, bounds=(-1, 1), random_state=1)
    text = str(fit)
    assert 'dp_sis(formula = "y ~ .", eps = 1, k = 5, bounds = c(-1, 1), random_state = 1)' in text
    assert "Selected 5 of 300" in text and "Privacy: (1, 0)-DP" in text
    summary = " ".join(str(fit.summary()).split())
    assert "Diagnostics" not in summary and fit.diagnostics == {}
    assert "differentially private with respect to replacing one row" in summary
    assert "Ledger" in summary and "Operating characteristics" in summary
    tidy = fit.tidy()
    assert list(tidy.columns) == ["term", "selected"] and tidy["selected"].sum() == 5
    glance = fit.glance()
    assert glance.loc[0, "eps"] == 1.0 and glance.loc[0, "k"] == 5
    json.dumps(fit.to_dict(), allow_nan=False)
    path = fit.report(str(tmp_path / "sis.html"))
    html = open(path, encoding="utf-8").read()
    assert fit.privacy.plain_language()[:60] in html and "<svg" in html


def test_sensitivity_written_for_each_relation(synthetic):
    # the default (centred) score: 4(1 − 1/n) under replace, 4 under add/remove (methods/sis.py)
    replace = dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4), random_state=0, oc_trials=0)
    addrm = dp.dp_sis(
        "y ~ .",
        data=synthetic,
        eps=1.0,
        k=3,
        bounds=(-4, 4),
        random_state=0,
        oc_trials=0,
        neighbouring="add_remove",
    )
    assert "Δ∞ = 4(1 − 1/n) = 3.96 (n = 100)" in replace.privacy.ledger[0].sensitivity
    assert replace.sensitivity == pytest.approx(3.96, abs=1e-12)
    assert "Δ∞ = 4:" in addrm.privacy.ledger[0].sensitivity and addrm.sensitivity == 4.0
    assert "adding or removing one row" in addrm.privacy.plain_language()
    # the paper's midpoint score: 2 and 1
    replace = dp.dp_sis(
        "y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4), random_state=0, oc_trials=0, center="midpoint"
    )
    addrm = dp.dp_sis(
        "y ~ .",
        data=synthetic,
        eps=1.0,
        k=3,
        bounds=(-4, 4),
        random_state=0,
        oc_trials=0,
        neighbouring="add_remove",
        center="midpoint",
    )
    assert "Δ∞ = 2" in replace.privacy.ledger[0].sensitivity and replace.sensitivity == 2.0
    assert "Δ∞ = 1" in addrm.privacy.ledger[0].sensitivity and addrm.sensitivity == 1.0


def test_bounded_scores_are_the_papers_scores():
    rng = np.random.default_rng(2)
    X = rng.uniform(-3, 5, size=(40, 6))
    y = rng.uniform(0, 10, size=40)
    stats = dp.stats.cross_products(
        X,
        y,
        x_box=dp.geometry.resolve_box((-3, 5), list("abcdef")),
        y_box=dp.geometry.resolve_box((0, 10), ["y"]),
    )
    manual = np.abs(((X - 1) / 4).T @ ((y - 5) / 5))
    np.testing.assert_allclose(sis_methods.scores_on_unit_scale(stats), manual, rtol=1e-12)
    # max-abs + centering (paper experiments)
    raw = dp.stats.cross_products(X, y)
    xs, ys = X / np.abs(X).max(0), y / np.abs(y).max()
    manual = np.abs((xs - xs.mean(0)).T @ ys)
    np.testing.assert_allclose(sis_methods.scores_maxabs_centered(raw), manual, rtol=1e-12)


def test_clipping_bounds_each_product():
    X = np.array([[10.0, -10.0], [0.5, 0.2]])
    y = np.array([100.0, -1.0])
    box = dp.geometry.resolve_box((-1, 1), ["a", "b"])
    stats = dp.stats.cross_products(X, y, x_box=box, y_box=dp.geometry.resolve_box((-1, 1), ["y"]))
    assert stats.n_clipped == 3
    assert np.all(np.abs(stats.xty) <= 2)


def test_no_bounds_is_data_dependent_and_strict_refuses(synthetic):
    with (
        pytest.warns(NonPrivateWarning, match="max-abs"),
        pytest.warns(NonPrivateWarning, match="centered by their data means"),
        # no declared bounds, so no public fill: incomplete rows would be dropped (named for every such call)
        pytest.warns(NonPrivateWarning, match="without declared bounds"),
    ):
        fit = dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=3, random_state=0, oc_trials=0)
    assert len(fit.privacy.data_dependent_steps) == 3
    assert "does not cover" in fit.privacy.plain_language()
    acc = dp.Accountant(eps=5)
    with pytest.raises(PrivacyParameterError, match="strict=True refuses"):
        dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=3, strict=True, accountant=acc)
    assert acc.spent_eps == 0
    bounded = dp.dp_sis(
        "y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4), strict=True, random_state=0, oc_trials=0
    )
    assert bounded.privacy.data_dependent_steps == [] and bounded.privacy.covered


def test_defaults_and_reproducibility(synthetic):
    a = dp.dp_sis("y ~ .", data=synthetic, eps=2.0, bounds=(-4, 4), random_state=9, oc_trials=0)
    b = dp.dp_sis("y ~ .", data=synthetic, eps=2.0, bounds=(-4, 4), random_state=9, oc_trials=0)
    assert a.k == math.floor(math.log(300)) and a.selected == b.selected
    assert a.privacy.seeded and "seeded" in str(a)
    c = dp.dp_sis("y ~ .", data=synthetic, eps=2.0, bounds=(-4, 4), oc_trials=0)
    assert not c.privacy.seeded


def test_high_eps_recovers_the_nonprivate_top_k(synthetic):
    fit = dp.dp_sis(
        "y ~ .",
        data=synthetic,
        eps=1e6,
        k=8,
        bounds=(-4.5, 4.5),
        random_state=0,
        oc_trials=0,
        truth=synthetic.attrs["support"],
    )
    assert sorted(fit.selected) == fit.diagnostics["nonprivate_sis_selected"]


def test_custom_score_with_declared_sensitivity(synthetic):
    score = lambda X, y: np.abs(np.corrcoef(X.T, y)[-1, :-1])  # noqa: E731
    fit = dp.dp_sis(
        "y ~ .", data=synthetic, eps=1.0, k=4, score=score, score_sensitivity=0.5, random_state=0, oc_trials=0
    )
    assert "user-declared" in fit.privacy.ledger[0].sensitivity
    with pytest.raises(PrivacyParameterError, match="score_sensitivity"):
        dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=4, score=score)


def test_accountant_charged_exactly_and_refuses(synthetic):
    acc = dp.Accountant(eps=1.5)
    dp.dp_sis(
        "y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4), accountant=acc, random_state=0, oc_trials=0
    )
    assert acc.spent_eps == 1.0 and acc.ledger[0].eps == 1.0
    with pytest.raises(BudgetExceededError):
        dp.dp_sis("y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4), accountant=acc)
    assert acc.spent_eps == 1.0


BAD_INPUTS = [
    (dict(formula="y ~ x1 + nope"), FormulaError, "'nope'"),
    (dict(eps=0), PrivacyParameterError, "eps"),
    (dict(eps=-1), PrivacyParameterError, "eps"),
    (dict(eps=float("nan")), PrivacyParameterError, "eps"),
    (dict(eps=float("inf")), PrivacyParameterError, "eps"),
    (dict(k=0), DataError, "k = 0"),
    (dict(k=300), DataError, "k = 300"),
    (dict(k=2.5), PrivacyParameterError, "whole number"),  # the argument's type, not the data
    (dict(k="3"), PrivacyParameterError, "whole number"),
    (dict(gamma=1.0), PrivacyParameterError, "gamma"),
    (dict(neighbouring="swap"), PrivacyParameterError, "neighbouring"),
    (dict(bounds=(1, -1)), PrivacyParameterError, "lo < hi"),
    (dict(bounds={"x1": (0, 1)}), PrivacyParameterError, "bounds are missing"),
    (dict(topk="nonsense"), PrivacyParameterError, "topk"),
    (dict(truth=["x1", "not_a_term"]), DataError, "not_a_term"),
    (dict(random_state=-3), PrivacyParameterError, "random_state"),
]


@pytest.mark.parametrize("change,error,message", BAD_INPUTS)
def test_bad_input_is_refused_without_spending(synthetic, change, error, message):
    args = dict(formula="y ~ .", data=synthetic, eps=1.0, k=3, bounds=(-4, 4))
    args.update(change)
    acc = dp.Accountant(eps=10)
    with pytest.raises(error, match=message):
        dp.dp_sis(accountant=acc, **args)
    assert acc.spent_eps == 0 and acc.charges == []


def test_bad_data_is_refused_without_spending():
    acc = dp.Accountant(eps=10)
    df = pd.DataFrame(
        {"y": [1.0, 2, 3, 4], "x": ["a", "b", "a", "b"], "z": [1.0, 1, 1, 1], "w": [0.1, 0.5, 0.2, 0.3]}
    )
    with pytest.raises(DataError, match="at least 2 candidate"):
        dp.dp_sis("y ~ w", data=df, eps=1, k=1, bounds=(-5, 5), accountant=acc)
    with pytest.raises(DataError, match="numeric response"):
        dp.dp_sis("x ~ w + y", data=df, eps=1, k=1, bounds=(-5, 5), accountant=acc)
    with pytest.raises(DataError, match="complete row"):
        dp.dp_sis("y ~ .", data=df.iloc[:1], eps=1, k=1, bounds=(-5, 5), accountant=acc)
    with pytest.raises(DataError, match="duplicate"):
        dp.dp_sis("y ~ .", data=pd.concat([df, df[["w"]]], axis=1), eps=1, k=1, accountant=acc)
    assert acc.charges == []


def test_missing_values_filled_by_default_and_dropped_only_on_request(synthetic):
    """Issue 26: under replace-one-row the default na_action="fill" drops no row (n = rows read, public,
    and the sensitivity 4(1 - 1/n) keeps its meaning); the count filled is a diagnostic only.
    na_action="omit" is a named step (strict refuses) and then the n-free bound 4 is used."""
    df = synthetic.copy()
    df.iloc[[0, 5], 3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = dp.dp_sis(
            "y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), strict=True, random_state=0, oc_trials=0
        )
    assert fit.n == 100 and fit.privacy.covered and fit.diagnostics == {}
    assert "(n = 100)" in fit.privacy.ledger[0].sensitivity
    fit = dp.dp_sis(
        "y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), random_state=0, oc_trials=0, diagnostics=True
    )
    assert fit.diagnostics["values_filled_for_missing"] == 2
    assert fit.diagnostics["rows_dropped_for_missing_values"] == 0
    with pytest.warns(NonPrivateWarning, match='na_action="omit"'):
        omitted = dp.dp_sis(
            "y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), na_action="omit", random_state=0, oc_trials=0
        )
    assert omitted.released_n() is None and omitted.privacy.ledger[0].sensitivity.startswith("Δ∞ = 4:")
    with pytest.raises(PrivacyParameterError, match='na_action="omit"'):
        dp.dp_sis("y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), na_action="omit", strict=True)


def test_factor_columns_enter_as_dummies_with_automatic_bounds():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {"y": rng.normal(size=60), "x": rng.normal(size=60), "g": rng.choice(["a", "b", "c"], size=60)}
    )
    fit = dp.dp_sis(
        "y ~ .",
        data=df,
        eps=1.0,
        k=2,
        bounds={"y": (-3, 3), "x": (-3, 3)},
        levels={"g": ["a", "b", "c"]},
        random_state=0,
        oc_trials=0,
    )
    assert fit.terms == ["x", "gb", "gc"]


def test_operating_characteristics_rise_with_eps():
    from dpstats.simulate import Assume, mean_and_se, sis_trials

    model = Assume(signals=8, strength=0.4)
    low, high = (
        mean_and_se(
            sis_trials(100, 500, 8, e, model, np.random.default_rng(0), trials=40, sensitivity=2.0)["recall"]
        )
        for e in (1.0, 1000.0)
    )
    assert high[0] > low[0] + 2 * max(high[1], low[1])


def test_utility_classes():
    ranking = [f"x{i}" for i in range(30)]
    assert sis_methods.utility_class(ranking[:10], ranking, 10) == "TOP"
    assert sis_methods.utility_class(ranking[:9] + ["x10"], ranking, 10) == "GREAT"
    assert sis_methods.utility_class(["x0"] + ranking[5:14], ranking, 10) == "GOOD"
    assert sis_methods.utility_class(ranking[1:11], ranking, 10) == "GOOD"  # top k//100 = 0 required
    assert sis_methods.utility_class(ranking[1:10] + ["x15"], ranking, 10) == "NONE"  # rank 16 > 3k/2
    assert sis_methods.topk_accuracy(["a", "b", "c"], ["a", "c", "d"]) == pytest.approx(2 / 3)


def test_printed_score_gap_is_the_operating_characteristics_figure():
    """print and summary describe one quantity with one number: the gap giving exact recovery with
    probability 0.5 in the text equals the operating characteristics' row (it was the next point of
    the plotting grid, 8.73 against 8.602)."""
    df = dp.datasets.fan_lv(n=200, d=10, random_state=0)
    fit = dp.dp_sis("y ~ .", df, eps=1, k=2, bounds=(-6, 6), random_state=1)
    row = next(r for r in fit.operating_characteristics.rows if "prob >= 0.5" in r["quantity"])
    assert fit.gap_for_recovery(0.5) == pytest.approx(row["estimate"], rel=1e-4)
    assert f"a score gap of about {row['estimate']:.3g} " in str(fit)
