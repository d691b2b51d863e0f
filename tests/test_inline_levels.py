"""A numeric column used only as ``factor(x, levels = c(...))`` has public levels: a missing value takes
the first declared level (the schema's fill of a factor) instead of dropping its row, a data-dependent
step that made n private (the mtcars idiom ``factor(cyl, levels = c(4, 6, 8))``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning
from dpstats.formula import level_fills

BOUNDS = {"wt": (1, 6), "mpg": (0, 40)}
INLINE = "mpg ~ wt + factor(cyl, levels = c(4, 6, 8))"


def _cars(missing: bool) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"cyl": rng.choice([4.0, 6.0, 8.0], 400), "wt": rng.uniform(1, 6, 400)})
    df["mpg"] = 30 - 2 * df.wt + rng.normal(size=400)
    if missing:
        df.loc[11, "cyl"] = np.nan
    return df


@pytest.mark.parametrize(
    "formula, fills",
    [
        (INLINE, {"cyl": 4.0}),
        ("y ~ factor(g, c(2, 1)) * x", {"g": 2.0}),  # levels as the second positional argument
        ('y ~ factor(g, levels = c("3", "1"))', {"g": 3.0}),
        ("y ~ ordered(g, levels = c(-1, 1))", {"g": -1.0}),
        ("y ~ factor(g)", {}),  # levels read from the rows: no public level
        ('y ~ factor(g, levels = c("a", "b"))', {}),  # not numbers: a numeric g never matches them
        ("y ~ factor(g, levels = c(1, 2)) + g", {}),  # g is also a numeric term
        ("y ~ factor(g, levels = c(1, 2)) + factor(g, levels = c(2, 1))", {}),  # two first levels
        ("y ~ . + factor(g, levels = c(1, 2))", {}),  # the dot uses g as it is
    ],
)
def test_level_fills_come_from_the_formula_text(formula, fills):
    assert level_fills(formula) == fills


def _fit(df: pd.DataFrame, formula: str = INLINE, **extra):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NonPrivateWarning)
        kwargs = {"bounds": BOUNDS, **extra}
        fit = dp.dp_lm(formula, df, eps=1.0, delta=1e-6, random_state=1, n_boot=100, **kwargs)
    return fit, [str(w.message) for w in caught if issubclass(w.category, NonPrivateWarning)]


def test_a_missing_value_takes_the_first_declared_level_and_n_stays_public():
    fit, warned = _fit(_cars(missing=True), diagnostics=True)
    assert warned == [] and fit.privacy.data_dependent_steps == []
    assert fit.released_n() == 400 and fit.diagnostics["values_filled_for_missing"] == 1
    filled = _cars(missing=True).fillna({"cyl": 4.0})
    with pytest.warns(NonPrivateWarning, match="NOT private"):
        exact = dp.dp_lm(INLINE, filled, eps=np.inf, bounds=BOUNDS)
    assert fit.diagnostics["ols_estimates_nonprivate"] == pytest.approx(exact.coef().to_dict())


def test_neighbours_differing_in_a_missing_level_give_the_same_messages_and_shapes():
    (a, warned_a), (b, warned_b) = _fit(_cars(missing=False)), _fit(_cars(missing=True))
    assert warned_a == warned_b == []
    assert a.privacy.to_dict() == b.privacy.to_dict()
    assert a.tidy()["term"].tolist() == b.tidy()["term"].tolist() and a.released_n() == b.released_n()


def test_a_declared_bound_keeps_its_midpoint_fill():
    """bounds= for the column wins: its fill stays the midpoint (6), as before."""
    df = _cars(missing=True)
    fit, warned = _fit(df, bounds={**BOUNDS, "cyl": (4, 8)}, diagnostics=True)
    with pytest.warns(NonPrivateWarning, match="NOT private"):
        exact = dp.dp_lm(INLINE, df.fillna({"cyl": 6.0}), eps=np.inf, bounds=BOUNDS)
    assert warned == [] and fit.diagnostics["ols_estimates_nonprivate"] == pytest.approx(
        exact.coef().to_dict()
    )


def test_levels_read_from_the_rows_leave_no_public_fill_and_dp_lm_refuses():
    """factor(cyl) without levels: cyl has no public fill, a missing row would be dropped and n made
    private, which dp_lm's release cannot have; the refusal names the term, cyl and both fixes."""
    with pytest.raises(dp.PrivacyParameterError) as info:
        _fit(_cars(missing=True), "mpg ~ wt + factor(cyl)")
    text = str(info.value)
    assert text.startswith("dp_lm: factor(cyl) needs declared levels: levels={'cyl': [...]}.")
    assert "factor(cyl, levels = c(...))" in text and "numeric column 'cyl'" in text


def test_a_text_cell_in_the_column_is_missing_not_a_reason_to_read_levels(tmp_path):
    """The outside privacy audit (F7): one '?' made cyl a text column, whose levels were then read from
    the rows: a step named, and refused under strict, on that neighbour only.  A column the formula
    uses only as factor(x, levels = c(<numbers>)) is numeric by declaration, on every route."""
    a = _cars(missing=False)
    b = a.astype({"cyl": object})
    b.loc[5, "cyl"] = "?"
    csv = tmp_path / "b.csv"
    b.to_csv(csv, index=False)
    views = []
    for data in (a, b, dp.engines.stream(str(csv), chunk_rows=100)):
        fit, warned = _fit(data, strict=True, diagnostics=True)
        views.append(
            (warned, fit.privacy.data_dependent_steps, fit.released_n(), fit.tidy()["term"].tolist())
        )
    assert views[0] == views[1] == views[2]
    assert views[0][:3] == ([], [], 400)


def test_the_r_package_asks_the_bridge_for_the_fill_the_door_uses():
    """R rebuilds a non-private fit's rows with dpstats.rbridge.level_fills_for_r (R's .public_fills): the
    eps = inf fit equals least squares (numpy's lstsq) on the rows filled with what the bridge answers."""
    import json

    from dpstats import rbridge

    df = _cars(missing=True)
    # the R package's route: the bridge's function by name, with the bridge module as target
    answer = rbridge.call_from_r("level_fills_for_r", kwargs={"formula": INLINE}, target=rbridge)
    assert answer.ok, answer.error_message
    fills = json.loads(answer.json)["value"]
    assert fills == {"cyl": 4.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(INLINE, df, eps=float("inf"), na_action="fill")  # eps = inf's default is na.omit
    filled = df.fillna(fills)
    X = np.column_stack([np.ones(len(filled)), filled.wt, filled.cyl == 6, filled.cyl == 8]).astype(float)
    np.testing.assert_allclose(fit.coefficients, np.linalg.lstsq(X, filled.mpg, rcond=None)[0], rtol=1e-10)
