"""Neighbouring data sets give the same messages, names and shapes (issue 26, items 3 and 4).

Threat model (DESIGN §3): readers of any output may not see the data, and warnings, errors,
term names, result attributes and the printed text are outputs.  For every front door, two
data sets that differ in one row must give the same set of warning texts, the same error (type
and message) if any, the same ``terms``, the same attribute names (``sorted(vars(fit))``), the
same type of ``fit.n`` and the same printed text once every number is masked; only released
values may differ.  The pairs:

(a) a column constant except in one row (a constant column is no error in a DP fit);
(b) one value far outside the declared bounds (clipping enforces the bounds);
(c) for dp_knockoff, one row that moves the data's smallest column norm or λ_min(Σ′) below the
    declared ``c_min`` or ``lambda_min`` (declared assumptions are stated, not checked);
(d) under add/remove-one-row, one row added (n is private there, so it may not show either).

Each door runs with its declared public inputs, under replace-one-row and (where supported)
add/remove-one-row, with and without ``strict=True``.  The same seed draws the same noise, so
released selections agree as well; the comparison masks numbers only.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods.knockoff import filter as ko
from neighbours import assert_same_view, door_table, reader_view
from dpstats.stats import cross_products

N, D = 1000, 25
NAMES = [f"x{j}" for j in range(1, D + 1)]
FEW = " + ".join(NAMES[:5])
ALL = " + ".join(NAMES)
B_KO = 4.0  # public row-norm bound of the knockoff filter (rows of 25 uniforms have norm < 4.2)


def _base() -> pd.DataFrame:
    rng = np.random.default_rng(26)
    X = rng.uniform(-1, 1, size=(N, D))
    df = pd.DataFrame(X, columns=NAMES)
    df["y"] = np.clip(0.5 * X[:, 0] + 0.4 * X[:, 1] + 0.3 * rng.standard_normal(N), -1, 1)
    df["cls"] = (df["y"] > 0).astype(float)
    return df


def _constant_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """x3 = 0.5 in every row, and its neighbour with one row's x3 = -0.5."""
    a = _base().assign(x3=0.5)
    b = a.copy()
    b.loc[7, "x3"] = -0.5
    return a, b


def _outlier_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The base data, and its neighbour with one x1 = 50 (declared bounds are (-1, 1))."""
    a = _base()
    b = a.copy()
    b.loc[7, "x1"] = 50.0
    return a, b


def _knockoff_stats(df: pd.DataFrame) -> ko.Normalised:
    X = df[NAMES].to_numpy()
    norms = np.sqrt((X**2).sum(1))
    X = X * np.minimum(1.0, B_KO / np.maximum(norms, B_KO))[:, None]
    st = cross_products(X, df["y"].to_numpy(), gram=True)
    return ko.normalise(N, st.xtx, st.xty, st.yty)


def _knockoff_declared(df: pd.DataFrame) -> dict[str, float]:
    """c_min and lambda_min declared just below the data's own values (true of ``df``)."""
    st = _knockoff_stats(df)
    return {"c_min": float(st.col_norms.min()) * (1 - 1e-6), "lambda_min": st.lambda_min * (1 - 1e-6)}


def _assumption_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A neighbour whose smallest column norm and λ_min(Σ′) fall below what holds on the base."""
    a = _base()
    st = _knockoff_stats(a)
    j = int(np.argmin(st.col_norms))
    for i in range(N):
        b = a.copy()
        b.loc[i, NAMES] = 0.0
        b.loc[i, NAMES[j]] = 0.0
        stb = _knockoff_stats(b)
        if stb.lambda_min < st.lambda_min * (1 - 1e-6):
            assert stb.col_norms.min() < st.col_norms.min() * (1 - 1e-6)
            return a, b
    raise AssertionError("no row found")  # pragma: no cover


def _outside_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """x3 = 5 (outside the declared (-1, 1)) in every row, and its neighbour with one x3 = 0."""
    a = _base().assign(x3=5.0)
    b = a.copy()
    b.loc[7, "x3"] = 0.0
    return a, b


def _added_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Add/remove neighbours: x3 = 0.5 in every row, and the same with one more row (x3 = -50)."""
    a = _base().assign(x3=0.5)
    extra = a.iloc[[7]].assign(x1=50.0, x3=-50.0)
    return a, pd.concat([a, extra], ignore_index=True)


PAIRS = {
    "constant column": _constant_pair,
    "value outside the bounds": _outlier_pair,
    "column outside the bounds but one row": _outside_pair,
    "one row added": _added_pair,  # add/remove only: under replace n is public and differs
}

KNOCKOFF = dict(
    eps=2.0, delta=1e-4, bounds=B_KO, sigma=0.5, beta_norm=1.0, c_min=12.0, lambda_min=0.5, oc_trials=0
)
# the shared table (neighbours.door_table) on these data: one gmm component (k = 2 on these unclustered
# rows collapses one, and the warning shows its noisy weight), no felp, the knockoff filter's row bound
DOORS = door_table(
    FEW,
    cls="cls",
    wide=ALL,
    parties=[NAMES[:2], NAMES[2:5]],
    overrides={
        "dp_two_stage": {"set": {"blocks": 10}},
        "dp_knockoff": {"kwargs": KNOCKOFF},
        "dp_gmm": {"set": {"k": 1}},
        "dp_felp": None,
        # the 0/1 class declared, as strict=True asks of a binomial response (session 16)
        "vertical_glm": {"set": {"delta": 1e-6, "levels": {"cls": [0.0, 1.0]}}},
        "dp_glm": {"set": {"levels": {"cls": [0.0, 1.0]}}},
    },
)
RELATIONS = ["replace", "add_remove"]


def outcome(func, formula: str, data: pd.DataFrame, **kwargs) -> dict:
    """Everything a reader sees of one call apart from the released values."""
    return reader_view(func, formula, data, random_state=5, **kwargs)


def _cases():
    for name, (_, _, _, relations) in DOORS.items():
        for relation in RELATIONS[:relations]:
            for strict in (False, True):
                for pair in PAIRS:
                    if pair == "one row added" and relation == "replace":
                        continue
                    yield pytest.param(name, relation, strict, pair, id=f"{name}-{relation}-{strict}-{pair}")


@pytest.mark.parametrize("name, relation, strict, pair", list(_cases()))
def test_neighbours_give_the_same_messages_names_and_shapes(name, relation, strict, pair):
    func, formula, kwargs, _ = DOORS[name]
    kwargs = dict(kwargs, strict=strict)
    if relation != "replace":
        kwargs["neighbouring"] = relation
    first, second = PAIRS[pair]()
    assert_same_view(outcome(func, formula, first, **kwargs), outcome(func, formula, second, **kwargs))


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("method", ["I", "II"])
def test_knockoff_declared_assumptions_are_not_checked_on_the_rows(method, strict):
    """(c): a neighbour breaks the declared c_min and lambda_min; the call releases the same way."""
    first, second = _assumption_pair()
    kwargs = dict(KNOCKOFF, **_knockoff_declared(first), method=method, strict=strict)
    a, b = (
        outcome(dp.dp_knockoff, f"y ~ {ALL}", first, **kwargs),
        outcome(dp.dp_knockoff, f"y ~ {ALL}", second, **kwargs),
    )
    assert_same_view(a, b)


def test_knockoff_assumption_violation_is_a_requested_diagnostic():
    """The declared c_min and lambda_min are in the statement; a violation shows only when asked."""
    first, second = _assumption_pair()
    kwargs = dict(KNOCKOFF, **_knockoff_declared(first), random_state=5)
    fit = dp.dp_knockoff(f"y ~ {ALL}", second, **kwargs)
    assumptions = " ".join(fit.privacy.assumptions)
    assert "c_min" in assumptions and "lambda_min" in assumptions
    assert fit.diagnostics == {}
    asked = dp.dp_knockoff(f"y ~ {ALL}", second, diagnostics=True, **kwargs)
    held = dp.dp_knockoff(f"y ~ {ALL}", first, diagnostics=True, **kwargs)
    assert asked.diagnostics["declared_assumptions_hold"] is False
    assert held.diagnostics["declared_assumptions_hold"] is True
    assert "Diagnostics (NOT private" in str(asked.summary())


@pytest.mark.parametrize("route", ["shortcut", "materialise"])
def test_knockoff_zero_or_duplicated_column_is_no_error_with_declared_assumptions(route):
    """A column of zeros but for one row, or one row away from duplicating another: no refusal."""
    zero = _base().assign(x3=0.0)
    one = zero.copy()
    one.loc[7, "x3"] = 1.0
    dup = _base().assign(x4=lambda d: d["x3"])
    near = dup.copy()
    near.loc[7, "x4"] = 0.0
    kwargs = dict(KNOCKOFF, knockoffs=route, strict=True)
    for first, second in ((zero, one), (dup, near)):
        a, b = (
            outcome(dp.dp_knockoff, f"y ~ {ALL}", first, **kwargs),
            outcome(dp.dp_knockoff, f"y ~ {ALL}", second, **kwargs),
        )
        assert_same_view(a, b)


def test_non_private_fits_answer_a_constant_column_as_r_or_refuse_it():
    """eps = inf (dp_lm) and vertical_glm without eps are NOT private, so they may look at the rows:
    dp_lm answers as R's lm (the constant column is aliased with the intercept: NA), and vertical_glm,
    whose coordinate descent cannot give NA, refuses it clearly instead of a singular fit."""
    df = _constant_pair()[0]
    with pytest.warns(dp.NonPrivateWarning):
        fit = dp.dp_lm(f"y ~ {FEW}", df, eps=float("inf"))
    assert np.isnan(fit.coef()["x3"]) and np.isfinite(fit.coef().drop("x3")).all()
    with pytest.raises(dp.DataError, match="constant column"):
        dp.vertical_glm(f"y ~ {FEW}", df, family="gaussian", parties=[NAMES[:2], NAMES[2:5]])


# dp_knockoff without bounds: no public fill, so a row with a missing value is dropped (issue 26).  The drop is
# a named data-dependent step (refused under strict=True) and makes n private: no message may quote n, nor
# 1/n, nor depend on it (the delta >= 1/n warning, the augmentation to 2p rows, the n > p refusal).
UNBOUNDED_KO = dict(eps=2.0, delta=2e-3, sigma=0.5, beta_norm=1.0, c_min=20.0, lambda_min=0.2, oc_trials=0)
DROPPED = "rows with a missing value in a variable without declared bounds"


def _missing_pair(rows: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ``rows`` rows of the base data, and its neighbour with one missing x3."""
    a = _base().iloc[:rows].reset_index(drop=True)
    b = a.copy()
    b.loc[7, "x3"] = np.nan
    return a, b


def _quoted_counts(view: dict, counts) -> list[str]:
    """The warning and error texts of a view that quote one of ``counts`` as a whole number."""
    texts = [text for _, text in view["warnings"]] + ([view["error"][1]] if view["error"] else [])
    return [t for t in texts for c in counts if re.search(rf"(?<![\w.]){c}(?![\w]|\.\d)", t)]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("rows", [N, 2 * D])  # 2p rows: the neighbour's n falls below 2p (augmented to 2p)
def test_knockoff_without_bounds_names_the_dropped_rows_and_quotes_no_count(rows, strict):
    first, second = _missing_pair(rows)
    kwargs = dict(UNBOUNDED_KO, strict=strict)
    one, other = (outcome(dp.dp_knockoff, f"y ~ {ALL}", df, **kwargs) for df in (first, second))
    assert_same_view(one, other, released=not strict)
    private = (rows - 1, 1 / rows, 1 / (rows - 1)) + ((rows,) if rows != 2 * D else ())  # 2p is public
    for view in (one, other):
        assert not _quoted_counts(view, private)
        assert not [text for _, text in view["warnings"] if "1/n" in text]
    if strict:
        assert one["error"][0] == "PrivacyParameterError" and DROPPED in one["error"][1]
        return
    for view in (one, other):
        fit = view["fit"]
        assert fit.n is None and any(step.startswith(DROPPED) for step in fit.privacy.data_dependent_steps)
        assert any("rows augmented to 2p" in step for step in fit.privacy.data_dependent_steps)


def test_knockoff_without_bounds_refuses_n_at_most_p_without_quoting_n():
    first, second = _missing_pair(D + 1)  # n = p + 1 rows read; the neighbour keeps p of them
    with pytest.warns(dp.NonPrivateWarning):
        fit = dp.dp_knockoff(f"y ~ {ALL}", first, **UNBOUNDED_KO)
    assert fit.n is None
    with pytest.raises(dp.AssumptionError) as refused:  # before any step is named
        dp.dp_knockoff(f"y ~ {ALL}", second, **UNBOUNDED_KO)
    assert f"n <= p = {D} (n, the number of rows analysed, is not shown" in str(refused.value)
    assert "n = " not in str(refused.value)
