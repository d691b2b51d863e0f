"""dp_sis and dp_two_stage: no error depends on the rows, and the release is the method's.

Issue 26's residuals for these doors, and issue 27's walk of eps:

* under ``neighbouring="add_remove"`` n is private, so data sets of 0, 1 and 2 rows must give
  the same messages and shapes (the centred score of fewer than 2 rows is 0 by construction,
  and a block with fewer than 2 rows casts no vote: the release is then noise only);
* a custom ``score=`` is checked on a public probe (2 rows of zeros) before the rows are scored;
  a result of the wrong shape on the rows becomes d zeros by construction (stated), not an error;
* the plan carries every number the release uses: the sensitivity (the ledger's text is written
  from it) and the eps of each step (also when a private-bounds step comes first).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods import sis as sis_m
from dpstats.methods import two_stage as ts_m
from neighbours import assert_same_view, reader_view

FORMULA = "y ~ x1 + x2 + x3 + x4"


def _rows(n: int, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["y"] = np.clip(df["x1"] + 0.2 * rng.standard_normal(n), -1, 1)
    return df


def _abs_cross(X, y):
    return np.abs(X.T @ y)


ADD_REMOVE_CALLS = {
    "dp_sis centred": (dp.dp_sis, dict(eps=2.0, k=2, bounds=(-1, 1))),
    "dp_sis midpoint": (dp.dp_sis, dict(eps=2.0, k=2, bounds=(-1, 1), center="midpoint")),
    "dp_sis max-abs": (dp.dp_sis, dict(eps=2.0, k=2)),
    "dp_sis custom score": (dp.dp_sis, dict(eps=2.0, k=2, score=_abs_cross, score_sensitivity=1.0)),
    "dp_two_stage": (dp.dp_two_stage, dict(eps=2.0, k=2, blocks=3, bounds=(-1, 1))),
    "dp_two_stage private_ols": (
        dp.dp_two_stage,
        dict(eps=2.0, k=2, blocks=3, bounds=(-1, 1), second_stage="private_ols"),
    ),
}


def _unordered(view: dict) -> dict:
    """The view with tidy()'s estimate column as a multiset: which terms hold the second stage's
    estimates is the released selection (the structure of the rest must be the same)."""
    tidy = view.get("to_dict", {}).get("tidy", {})
    if "estimate" in tidy:
        tidy["estimate"] = sorted(tidy["estimate"], key=str)
    return view


@pytest.mark.parametrize("label", sorted(ADD_REMOVE_CALLS))
def test_add_remove_runs_on_0_1_and_2_rows_with_the_same_messages_and_shapes(label):
    fn, kwargs = ADD_REMOVE_CALLS[label]
    kwargs = dict(kwargs, neighbouring="add_remove", oc_trials=0, random_state=5)
    views = {n: _unordered(reader_view(fn, FORMULA, _rows(n), **kwargs)) for n in (0, 1, 2)}
    assert views[2]["error"] is None
    for n in (0, 1):
        assert_same_view(views[2], views[n], f"{label}: 2 rows against {n}")


def test_replace_still_refuses_fewer_than_2_rows_where_n_is_public():
    with pytest.raises(dp.DataError, match="at least 2"):
        dp.dp_sis(FORMULA, _rows(1), eps=1.0, k=2, bounds=(-1, 1))
    with pytest.raises(dp.DataError, match="complete rows"):
        dp.dp_two_stage(FORMULA, _rows(1), eps=1.0, k=2, blocks=2)


def test_scores_of_fewer_than_2_rows_are_zero_by_construction():
    from dpstats.stats import cross_products

    for n in (0, 1):
        X, y = np.full((n, 3), 0.7), np.full(n, -0.4)
        stats = cross_products(X, y)
        assert sis_m.scores_centred_on_unit_scale(stats).tolist() == [0.0] * 3
        assert sis_m.scores_maxabs_centered(stats).tolist() == [0.0] * 3


# ------------------------------------------------------------------------------ custom score
def _too_long(X, y):
    return np.ones(X.shape[1] + 1)


def _long_on_the_rows(X, y):
    """d numbers on the probe (2 rows of zeros); d + 1 on data with any x1 above 0.99."""
    s = np.abs(X.T @ y)
    return np.append(s, 1.0) if X[:, 0].max() > 0.99 else s


SIS = dict(eps=2.0, k=2, score_sensitivity=2.0, oc_trials=0, random_state=3)


def test_custom_score_of_the_wrong_shape_is_refused_on_the_public_probe_before_spending():
    acc = dp.Accountant(5.0)
    messages = set()
    for df in (_rows(50), _rows(80, seed=9)):
        with pytest.raises(dp.DataError, match="public probe") as err:
            dp.dp_sis(FORMULA, df, score=_too_long, accountant=acc, **SIS)
        messages.add(str(err.value))
    assert len(messages) == 1 and "got shape (5,)" in messages.pop()  # the same for any rows
    assert acc.spent_eps == 0 and acc.charges == []


def test_custom_score_probe_silences_its_own_warnings():
    def correlations(X, y):
        return np.abs(np.corrcoef(X.T, y)[-1, :-1])  # NaN with a warning on the zeros of the probe

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        sis_m.probe_score(correlations, 4)


@pytest.mark.parametrize("strict", [False, True])
def test_custom_score_of_the_wrong_shape_on_the_rows_becomes_zeros_by_construction(strict):
    base = _rows(200).assign(x1=lambda d: d.x1.clip(-0.9, 0.9))
    other = base.copy()
    other.loc[0, "x1"] = 0.995  # the neighbour makes the score return d + 1 numbers
    one = reader_view(dp.dp_sis, FORMULA, base, strict=strict, score=_long_on_the_rows, **SIS)
    two = reader_view(dp.dp_sis, FORMULA, other, strict=strict, score=_long_on_the_rows, **SIS)
    assert_same_view(one, two, "dp_sis custom score of the wrong shape on the rows")
    statement = one["fit"].privacy
    assert any("replaced by d zeros" in note for note in statement.notes)
    assert any("wrong shape" in a for a in statement.assumptions)
    zeros = dp.dp_sis(FORMULA, other, score=lambda X, y: np.zeros(X.shape[1]), **SIS)
    assert two["fit"].selected == zeros.selected  # the rule: d zeros, the selection noise alone


# ------------------------------------------------------------------------------ the plan's numbers
@pytest.mark.parametrize("score", ["centred", "midpoint", "maxabs", "custom"])
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
@pytest.mark.parametrize("n", [None, 40])
def test_the_ledger_text_is_written_from_the_plans_sensitivity(score, neighbouring, n):
    options = sis_m.SISOptions.partial(
        eps=1.0, neighbouring=neighbouring, topk="canonical_lipschitz", score_sensitivity=0.25, gamma=0.5
    )
    pl = sis_m.plan(options, d=10, k=2, n=n, score=score)
    assert pl.sensitivity == sis_m.sensitivity(score, neighbouring, n, 0.25)
    text = pl.entries[0].sensitivity
    assert f"Δ∞ = {pl.sensitivity:g}" in text or f"= {pl.sensitivity:.6g} (n = {n})" in text


def test_sis_release_is_the_methods_release():
    """The door's release is methods.sis.release on the one-pass statistics: same seed, same set."""
    from dpstats.privacy.randomness import NoiseSource
    from dpstats.stats import cross_products

    df = _rows(300)
    fit = dp.dp_sis(FORMULA, df, eps=3.0, k=2, bounds=(-1, 1), oc_trials=0, random_state=11)
    X, y = df[["x1", "x2", "x3", "x4"]].to_numpy(), df["y"].to_numpy()
    options = sis_m.SISOptions.partial(eps=3.0, neighbouring="replace", topk="canonical_lipschitz", gamma=0.5)
    pl = sis_m.plan(options, d=4, k=2, n=300, score="centred")
    chosen = sis_m.release(cross_products(X, y), pl, NoiseSource(11)).chosen
    assert fit.selected == [f"x{j + 1}" for j in chosen]
    assert fit.sensitivity == pl.sensitivity


def test_two_stage_selection_spends_the_ledgers_eps_after_a_private_bounds_step(monkeypatch):
    """With bounds="auto" the bounds' entry comes first in the ledger; the selection still runs at
    its own entry's eps (the plan's select_eps), not at the first entry's."""
    seen = []
    selector = ts_m.SELECTORS["canonical_lipschitz"]

    def spy(scores, k, eps, rng, **options):
        seen.append(eps)
        return selector.select(scores, k, eps, rng, **options)

    monkeypatch.setitem(ts_m.SELECTORS, "canonical_lipschitz", dataclasses.replace(selector, select=spy))
    df = dp.datasets.fan_lv(n=400, d=20, random_state=0)
    fit = dp.dp_two_stage(
        "y ~ .", df, eps=4.0, k=3, second_stage="private_ols", bounds="auto", random_state=1, oc_trials=0
    )
    bounds_entry, select_entry, _ = fit.privacy.ledger
    assert bounds_entry.step.startswith("private bounds") and "vote counts" in select_entry.step
    assert bounds_entry.eps != select_entry.eps
    assert seen == [select_entry.eps]


def test_assumed_basis_is_the_results_text():
    from dpstats.results.base import BASIS_ASSUMED
    from dpstats.simulate.assume import ASSUMED_BASIS

    assert ASSUMED_BASIS == BASIS_ASSUMED


def test_two_stage_counts_take_the_votes_record():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 20))
    y = 3 * X[:, 7] + rng.standard_normal(120)
    votes = ts_m.Votes(ts_m.Lasso(lam=0.2, solver="cd"), blocks=6, vote="support")
    counts = ts_m.two_stage_counts(X, y, 2, votes, rng=np.random.default_rng(1))
    assert counts.shape == (20,) and counts[7] == 6 and counts.max() <= 6


def _raises_on_the_rows(X, y):
    """d numbers on the probe (2 rows of zeros); raises on data with any x1 above 0.99."""
    if X[:, 0].max() > 0.99:
        raise ValueError("a value only this row has")
    return np.abs(X.T @ y)


@pytest.mark.parametrize("strict", [False, True])
def test_custom_score_that_raises_on_the_rows_becomes_zeros_by_construction(strict):
    """One row makes the user's score raise: the neighbours give the same messages and shapes (no
    row-dependent error), the raising call selects as d zeros would, and the accountant is charged."""
    base = _rows(200).assign(x1=lambda d: d.x1.clip(-0.9, 0.9))
    other = base.copy()
    other.loc[0, "x1"] = 0.995
    one = reader_view(dp.dp_sis, FORMULA, base, strict=strict, score=_raises_on_the_rows, **SIS)
    two = reader_view(dp.dp_sis, FORMULA, other, strict=strict, score=_raises_on_the_rows, **SIS)
    assert_same_view(one, two, "dp_sis custom score raising on one row")
    assert any("an exception raised on the data" in note for note in one["fit"].privacy.notes)
    zeros = dp.dp_sis(FORMULA, other, score=lambda X, y: np.zeros(X.shape[1]), **SIS)
    assert two["fit"].selected == zeros.selected
    acc = dp.Accountant(5.0)
    dp.dp_sis(FORMULA, other, score=_raises_on_the_rows, accountant=acc, **SIS)
    assert acc.spent_eps == pytest.approx(2.0)
