"""Checks that used to read the rows are now public or enforced by construction (issue 26, last gaps).

After the schema checks no error, warning, term set or output shape may depend on the data
except through a mechanism.  Each test below takes two data sets that differ in one row at the
edge of a former check (n = 10k against n = 10k - 1, a class with two rows against one, a
custom score finite or not) and asks that a reader sees the same outputs apart from released
values (:mod:`neighbours`); the assumption that replaced a check is stated in the privacy
statement and its violation shows only under ``diagnostics=True``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from neighbours import assert_same_view, reader_view

# min_weight tiny: a collapse warning would follow the released (noisy) weights, a legitimate difference
GMM = dict(eps=2.0, delta=1e-5, bounds=(-1, 1), oc_trials=0, random_state=3, min_weight=1e-9)


def _mixture_rows(n: int, d: int = 2, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    centre = np.where(rng.random(n) < 0.5, -0.5, 0.5)[:, None]
    X = np.clip(centre + 0.1 * rng.standard_normal((n, d)), -1, 1)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(1, d + 1)])


def _removed(df: pd.DataFrame) -> pd.DataFrame:
    return df.iloc[1:].reset_index(drop=True)


def _missing(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.loc[0, "x1"] = np.nan
    return out


# ---------------------------------------------------------------------------------------------- dp_gmm


GMM_PRIVATE_N = {  # n is private: add/remove-one-row, or rows dropped under na_action="omit"
    "add_remove": (dict(neighbouring="add_remove"), _removed),
    "omit": (dict(na_action="omit"), _missing),
}


@pytest.mark.parametrize("relation", list(GMM_PRIVATE_N))
def test_gmm_k_against_a_private_n_is_an_assumption_not_a_check(relation):
    """20 rows and k = 2 (n = 10k exactly) against 19 rows: the same outputs, no error."""
    extra, neighbour = GMM_PRIVATE_N[relation]
    base = _mixture_rows(20)
    one = reader_view(dp.dp_gmm, "~ x1 + x2", base, k=2, **GMM, **extra)
    other = reader_view(dp.dp_gmm, "~ x1 + x2", neighbour(base), k=2, **GMM, **extra)
    assert_same_view(one, other, f"dp_gmm {relation}")
    statement = " ".join(one["fit"].privacy.assumptions)
    assert "at least 10 rows per component" in statement and "assumed, not checked" in statement


@pytest.mark.parametrize("relation", list(GMM_PRIVATE_N))
def test_gmm_sample_aggregate_groups_against_a_private_n(relation):
    """groups=10 needs 5·k·(d+1) = 15 rows per group: 150 rows against 149 give the same outputs."""
    extra, neighbour = GMM_PRIVATE_N[relation]
    base = _mixture_rows(150)
    kwargs = dict(GMM, **extra, k=1, method="sample_aggregate", groups=10)
    one = reader_view(dp.dp_gmm, "~ x1 + x2", base, **kwargs)
    other = reader_view(dp.dp_gmm, "~ x1 + x2", neighbour(base), **kwargs)
    assert_same_view(one, other, f"dp_gmm sample_aggregate {relation}")
    # a group too small to fit gets the released coarse fit: even 12 rows in 10 groups release
    tiny = reader_view(dp.dp_gmm, "~ x1 + x2", _mixture_rows(12), **kwargs)
    assert tiny["error"] is None and tiny["warnings"] == one["warnings"]


def test_gmm_sample_aggregate_default_groups_need_a_public_n():
    """The default groups are derived from n: with n private, groups= must be declared (refused, nothing spent)."""
    acc = dp.Accountant(10.0, 1e-3)
    for df in (_mixture_rows(150), _mixture_rows(3000)):
        with pytest.raises(dp.PrivacyParameterError, match="needs groups= declared"):
            dp.dp_gmm(
                "~ .", df, k=1, method="sample_aggregate", neighbouring="add_remove", accountant=acc, **GMM
            )
    assert acc.spent_eps == 0


def test_gmm_assumption_violation_only_in_requested_diagnostics():
    base = _mixture_rows(20)
    kwargs = dict(GMM, k=2, neighbouring="add_remove")
    assert dp.dp_gmm("~ .", base, **kwargs).diagnostics == {}
    held = dp.dp_gmm("~ .", base, diagnostics=True, **kwargs)
    broken = dp.dp_gmm("~ .", _removed(base), diagnostics=True, **kwargs)
    assert held.diagnostics["rows_per_component_assumption_holds"] is True
    assert broken.diagnostics["rows_per_component_assumption_holds"] is False


def test_gmm_public_n_still_checks_k():
    """Under replace-one-row with declared bounds n is public: k > n/10 stays an error that may say n/10."""
    with pytest.raises(dp.DataError, match=r"n/10 = 1\.9"):
        dp.dp_gmm("~ .", _mixture_rows(19), k=2, **GMM)
    fit = dp.dp_gmm("~ .", _mixture_rows(20), k=2, **GMM)
    assert not any("rows per component" in a for a in fit.privacy.assumptions)


# ---------------------------------------------------------------------------------------------- dp_felp

FELP = dict(eps=1.0, n_estimators=3, variant="strict", bounds=(-1, 1), oc_trials=0, random_state=3)
FELP_LEVELS = {"class": ["a", "b", "c"]}


def _classes(n: int = 90) -> pd.DataFrame:
    """Three features in [-1, 1]; classes a and b only (class c is declared, absent from the rows)."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (n, 3))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["class"] = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, "b", "a")
    return df


def _relabelled(df: pd.DataFrame, rows: list[int], label: str) -> pd.DataFrame:
    out = df.copy()
    out.loc[rows, "class"] = label
    return out


FELP_PAIRS = {  # (first, neighbour): the neighbour changes one row's class
    "a class absent, then with one row": lambda df: (df, _relabelled(df, [0], "c")),
    "a class with one row, then two": lambda df: (_relabelled(df, [0], "c"), _relabelled(df, [0, 1], "c")),
    "two classes, then one": lambda df: (
        _relabelled(df, list(range(1, len(df))), "a"),
        _relabelled(df, list(range(len(df))), "a"),
    ),
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("pair", list(FELP_PAIRS))
def test_felp_declared_classes_are_not_checked_on_the_rows(pair, strict):
    first, second = FELP_PAIRS[pair](_classes())
    kwargs = dict(FELP, levels=FELP_LEVELS, strict=strict)
    one = reader_view(dp.dp_felp, "class ~ .", first, **kwargs)
    other = reader_view(dp.dp_felp, "class ~ .", second, **kwargs)
    assert_same_view(one, other, f"dp_felp {pair}")
    assert one["fit"].classes == ["a", "b", "c"]


def test_felp_public_checks_stay_errors_and_spend_nothing():
    acc = dp.Accountant(5.0)
    df = _classes()
    with pytest.raises(dp.DataError, match="fewer than two declared classes"):
        dp.dp_felp("class ~ .", df.assign(**{"class": "a"}), levels={"class": ["a"]}, accountant=acc, **FELP)
    with pytest.raises(dp.DataError, match="n_estimators"):  # n = 90 is public: 2 rows per subset needed
        dp.dp_felp("class ~ .", df, levels=FELP_LEVELS, accountant=acc, **dict(FELP, n_estimators=46))
    assert acc.spent_eps == 0


def test_felp_levels_read_from_the_rows_are_still_checked():
    """Undeclared (text) classes are a named data-dependent step; their counts are still checked."""
    with pytest.raises(dp.DataError, match="single row"):
        dp.dp_felp("class ~ .", _relabelled(_classes(), [0], "c"), **FELP)
