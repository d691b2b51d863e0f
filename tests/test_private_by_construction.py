"""Checks that used to read the rows are now public or enforced by construction (issue 26, last gaps).

After the schema checks no error, warning, term set or output shape may depend on the data
except through a mechanism.  Each test below takes two data sets that differ in one row at the
edge of a former check (n = 10k against n = 10k - 1, a class with two rows against one, a
custom score finite or not) and asks that a reader sees the same outputs apart from released
values (:mod:`neighbours`); the assumption that replaced a check is stated in the privacy
statement and its violation shows only under ``diagnostics=True``.
"""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace

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


GMM_PRIVATE_N = {  # n is private under add/remove-one-row: a row removed, or dropped for a missing value
    "add_remove": (dict(neighbouring="add_remove"), _removed),
    "omit": (dict(neighbouring="add_remove", na_action="omit"), _missing),
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


# ---------------------------------------------------------------------------------------------- na_action="omit"

N_KEPT = 1789  # complete rows: n after dropping the 23 incomplete ones (private under omit)
N_FORMS = {
    str(N_KEPT),
    f"{1 / N_KEPT:g}",
    f"{1 / N_KEPT:.4g}",
    f"{2 / N_KEPT:.4g}",
    f"{N_KEPT / 10:g}",
    str(int(N_KEPT**0.5)),
    f"{0.98 * N_KEPT:g}",
    str(N_KEPT // 2),
}
_NUM = r"(?<![\w.:\-]){}(?![\w:\-]|\.\d)"


def _omit_data() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = N_KEPT + 23
    X = rng.uniform(-1, 1, (n, 25))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 26)])
    df["y"] = np.clip(0.6 * X[:, 0] + 0.3 * rng.standard_normal(n), -1, 1)
    df["class"] = np.where(X[:, 0] > 0, "b", "a")
    df.loc[rng.choice(n, 23, replace=False), "x2"] = np.nan
    return df


FEW = " + ".join(f"x{j}" for j in range(1, 6))
ALL = " + ".join(f"x{j}" for j in range(1, 26))
OMIT_DOORS = {  # name -> (front door, formula, arguments, refused?)
    "dp_knockoff": (
        dp.dp_knockoff,
        f"y ~ {ALL}",
        dict(
            eps=2.0, delta=1e-4, bounds=6.0, sigma=0.5, beta_norm=1.0, c_min=12.0, lambda_min=0.5, oc_trials=0
        ),
        True,
    ),
    "dp_gmm": (dp.dp_gmm, f"~ {FEW}", dict(k=2, eps=2.0, delta=1e-5, bounds=(-1, 1), oc_trials=0), True),
    "dp_two_stage": (dp.dp_two_stage, f"y ~ {FEW}", dict(eps=2.0, k=2, bounds=(-1, 1), oc_trials=0), True),
    "dp_felp": (
        dp.dp_felp,
        f"class ~ {FEW}",
        dict(eps=1.0, n_estimators=3, bounds=(-1, 1), oc_trials=0, levels={"class": ["a", "b"]}),
        True,
    ),
    "dp_pca": (dp.dp_pca, f"~ {FEW}", dict(k=2, eps=1.0, delta=1e-5, bounds=(-1, 1)), False),
}


def _n_forms_in(text: str) -> set[str]:
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*", " ", text)  # timestamps
    # the font's glyph outlines in a figure's SVG (the same shapes for every data set)
    text = re.sub(r'<path id="[^"]*DejaVu[^"]*"\s+d="[^"]*"', " ", text)
    return {f for f in N_FORMS if re.search(_NUM.format(re.escape(f)), text)}


@pytest.mark.parametrize("name", list(OMIT_DOORS))
def test_omit_under_replace_is_refused_before_any_charge_or_shows_no_n(name):
    func, formula, args, refused = OMIT_DOORS[name]
    acc = dp.Accountant(10.0, 1e-3)
    df = _omit_data()
    if refused:
        with pytest.raises(dp.PrivacyParameterError, match=r'cannot use na_action="omit".*na_action="fill"'):
            func(formula, df, na_action="omit", accountant=acc, random_state=3, **args)
        assert acc.spent_eps == 0 and acc.ledger == []
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = func(formula, df, na_action="omit", accountant=acc, random_state=3, **args)
    channels = {
        "print": str(fit),
        "summary": str(fit.summary()),
        "to_json": fit.to_json(),
        "tidy": fit.tidy().to_string(),
        "glance": fit.glance().to_json(),
        "html": fit._repr_html_(),
        "warnings": "\n".join(str(w.message) for w in caught),
        "attributes": "\n".join(
            f"{k} = {v!r}" for k, v in vars(fit).items() if k not in ("diagnostics", "created")
        ),
    }
    assert {ch: _n_forms_in(text) for ch, text in channels.items() if _n_forms_in(text)} == {}
    with pytest.warns(dp.NonPrivateWarning, match='na_action="omit"'):  # the named step, no count
        asked = func(formula, df, na_action="omit", random_state=3, diagnostics=True, **args)
    assert asked.diagnostics["rows_used_n"] == N_KEPT  # positive control: the scan would find it
    assert str(N_KEPT) in _n_forms_in(str(asked.summary()))


def test_omit_stays_the_add_remove_default_where_supported():
    """Under add/remove n is private by design: gmm and two-stage omit incomplete rows there."""
    df = _omit_data()
    gmm = dp.dp_gmm(
        f"~ {FEW}", df, k=2, eps=2.0, delta=1e-5, bounds=(-1, 1), oc_trials=0, neighbouring="add_remove"
    )
    two = dp.dp_two_stage(
        f"y ~ {FEW}", df, eps=2.0, k=2, bounds=(-1, 1), oc_trials=0, blocks=20, neighbouring="add_remove"
    )
    assert gmm.n is None and two.n is None


# ---------------------------------------------------------------------------------------------- dp_sis, custom score


def _sis_data() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (200, 4))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
    df["y"] = np.clip(X[:, 0] + 0.3 * rng.standard_normal(200), -1, 1)
    return df


def _fragile_score(X, y):
    """|xᵀy| per column, but NaN for x2 and +inf for x4 when any x1 exceeds 0.99 (one row decides)."""
    s = np.abs(X.T @ y)
    if X[:, 0].max() > 0.99:
        s[1], s[3] = np.nan, np.inf
    return s


SIS = dict(
    eps=2.0, k=2, score=_fragile_score, score_sensitivity=2.0, bounds=(-1, 1), oc_trials=0, random_state=3
)


@pytest.mark.parametrize("strict", [False, True])
def test_sis_custom_score_non_finite_values_are_mapped_not_refused(strict):
    base = _sis_data().assign(x1=lambda d: d.x1.clip(-0.9, 0.9))
    other = base.copy()
    other.loc[0, "x1"] = 0.995  # the neighbour makes the score non-finite
    one = reader_view(dp.dp_sis, "y ~ .", base, strict=strict, **SIS)
    two = reader_view(dp.dp_sis, "y ~ .", other, strict=strict, **SIS)
    assert_same_view(one, two, "dp_sis custom score")
    assert any("replaced by 0" in note for note in one["fit"].privacy.notes)
    assert any("after non-finite values" in a for a in one["fit"].privacy.assumptions)


def test_sis_custom_score_mapping_follows_the_stated_rule():
    from dpstats.methods.sis import custom_scores

    df = _sis_data()
    df.loc[0, "x1"] = 0.995
    fit = dp.dp_sis("y ~ .", df, **dict(SIS, eps=1e4, k=1))
    assert fit.selected == ["x1"]  # x1's finite score beats the zeros of x2 and x4
    assert custom_scores(np.array([np.nan, -np.inf, 2.0])).tolist() == [0.0, 0.0, 2.0]


def test_sis_custom_score_that_raises_is_refused_before_the_charge_naming_only_the_type():
    def secret_score(X, y):
        raise ValueError(f"largest x1 is {X[:, 0].max()!r}")

    acc = dp.Accountant(5.0)
    with pytest.raises(dp.DataError, match="raised ValueError") as err:
        dp.dp_sis("y ~ .", _sis_data(), **dict(SIS, score=secret_score, accountant=acc))
    assert "largest" not in str(err.value) and err.value.__cause__ is None and err.value.__suppress_context__
    assert acc.spent_eps == 0


# ---------------------------------------------------------------------------------------------- dp_select_infer


def test_select_infer_part_b_level_check_reads_public_inputs_only():
    """Part B's private-bounds level check takes the public n of the rows read: 769 rows give part B
    385 rows, just enough for bounds="auto" at this eps (384 would be refused).  A neighbour with a
    missing value (filled, not dropped) or a value far outside gives the same outcome."""
    from dpstats.methods.lm import check_auto_bounds_level

    call = SimpleNamespace(bounds=dp.AutoBounds(share=0.9), eps=8.0, delta=1e-5)
    check_auto_bounds_level(call, 385, 2, shown=True)
    with pytest.raises(dp.PrivacyParameterError):  # one row fewer in part B: refused
        check_auto_bounds_level(call, 384, 2, shown=True)
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, (769, 4))
    base = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"]).assign(
        y=0.5 * X[:, 0] + 0.2 * rng.standard_normal(769)
    )
    kwargs = dict(eps=call.eps, delta=call.delta, k=2, bounds=call.bounds, n_boot=100, random_state=4)
    one = reader_view(dp.dp_select_infer, "y ~ .", base, **kwargs)
    for change in ({"x2": np.nan}, {"x1": 1e6}):
        other = base.copy()
        for col, value in change.items():
            other.loc[3, col] = value
        assert_same_view(
            one, reader_view(dp.dp_select_infer, "y ~ .", other, **kwargs), f"select_infer {change}"
        )


# ---------------------------------------------------------------------------------------------- Parquet categoricals


def _city_frame(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["city"] = pd.Categorical(rng.choice(["Leeds", "York"], n), categories=["Leeds", "York", "Zzyzx"])
    df["y"] = np.clip(df.x1 + 0.3 * (df.city == "York") + 0.2 * rng.standard_normal(n), -1, 1)
    return df


PARQUET_SIS = dict(eps=2.0, k=1, bounds=(-1, 1), oc_trials=0, random_state=2, strict=True)


def test_parquet_categories_written_by_pandas_are_declared(tmp_path):
    """A CategoricalDtype written by pandas keeps its categories (an unused one too) with no first
    pass, as in memory; a neighbour whose one row takes the unused level looks the same."""
    from dpstats import engines

    df = _city_frame()
    other = df.copy()
    other.loc[5, "city"] = "Zzyzx"
    df.to_parquet(tmp_path / "a.parquet", row_group_size=100)
    other.to_parquet(tmp_path / "b.parquet", row_group_size=100)
    memory = dp.dp_sis("y ~ x1 + x2 + city", df, **PARQUET_SIS)
    one = reader_view(
        dp.dp_sis, "y ~ x1 + x2 + city", engines.stream(tmp_path / "a.parquet", chunk_rows=70), **PARQUET_SIS
    )
    two = reader_view(
        dp.dp_sis, "y ~ x1 + x2 + city", engines.stream(tmp_path / "b.parquet", chunk_rows=70), **PARQUET_SIS
    )
    assert_same_view(one, two, "parquet categorical")  # strict=True ran: no first pass was named
    assert one["terms"] == memory.terms == ["x1", "x2", "cityYork", "cityZzyzx"]
    assert one["fit"].selected == memory.selected


def test_parquet_dictionary_without_pandas_categories_keeps_the_first_pass(tmp_path):
    """An Arrow dictionary column not written from a CategoricalDtype: its values may be per row group
    and data-derived, so its levels are read in a named first pass (refused under strict)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpstats import engines

    df = _city_frame().assign(city=lambda d: d.city.astype(str))
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.set_column(2, "city", table.column("city").dictionary_encode())
    pq.write_table(table, tmp_path / "d.parquet", row_group_size=100)
    with pytest.raises(dp.PrivacyParameterError, match=r"levels of factor\(s\) 'city' read from the data"):
        dp.dp_sis("y ~ x1 + x2 + city", engines.stream(tmp_path / "d.parquet"), **PARQUET_SIS)


def test_felp_lam_cv_gives_no_warning_that_follows_a_class_size():
    """lam="cv" is a named step; scikit-learn's small-class warning would say a class is rare."""
    first, second = FELP_PAIRS["a class with one row, then two"](_classes(120))
    kwargs = dict(FELP, levels=FELP_LEVELS, lam="cv")
    one = reader_view(dp.dp_felp, "class ~ .", first, **kwargs)
    other = reader_view(dp.dp_felp, "class ~ .", second, **kwargs)
    assert_same_view(one, other, "dp_felp lam='cv'")
    assert [w for w in one["warnings"] if w[0] == "UserWarning"] == []


def test_felp_subsets_with_too_few_rows_give_zero_weights_when_n_is_private():
    """Without declared bounds rows may be dropped (n private, a named step): the subset-size check
    is not made on that n; a subset with fewer than 2 rows gets w = 0 by construction."""
    from dpstats.methods.felp import EnsembleSpec, ensemble

    rng = np.random.default_rng(2)
    spec = EnsembleSpec(n_estimators=4, variant="strict")
    fit = ensemble(rng.uniform(size=(5, 3)), np.array([0, 1, 0, 1, 0]), 1.0, gen=rng, spec=spec)
    assert (fit.weights == 0).all(axis=1).sum() >= 3  # 5 rows in 4 subsets: at most one subset has 2 rows
    df = _classes(12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        released = dp.dp_felp(
            "class ~ .", df, eps=1.0, n_estimators=10, oc_trials=0, levels=FELP_LEVELS, random_state=1
        )
    assert released.weights.shape == (3,)
    assert any("without declared bounds" in str(w.message) for w in caught)  # the named step
