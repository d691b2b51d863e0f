"""The declared schema holds whatever the rows hold (audit of the public schema).

Written as an attacker would: two data sets that differ in one row must give the same
warnings, errors, term names, tidy() rows and privacy steps; only released values may differ.

* A column named in a per-variable ``bounds=`` mapping is numeric by declaration: one cell
  that is not a number ("n/a", as ``pandas.read_csv`` gives) is a missing value with the
  public fill, on every route (in memory, streamed CSV and Parquet, Dask, DuckDB, polars,
  Arrow) -- never a factor whose levels are the raw values.
* A logical column with one missing entry (object dtype) is declared by ``levels=`` (Python's
  ``[False, True]`` or R's ``["FALSE", "TRUE"]``) and then equals the bool column filled.
* The data-dependent steps of a call are listed once each, the same for a missing response,
  a missing covariate or none.
* A ``bounds=`` entry naming neither a data column nor a design column is refused before
  anything is spent, with a suggestion.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import DataError, NonPrivateWarning, PrivacyParameterError
from dpstats.schema import Schema, as_numbers
from front_door_calls import DOORS
from neighbours import assert_same_view, reader_view

N = 400
_rng = np.random.default_rng(11)
BASE = pd.DataFrame(_rng.uniform(-1, 1, (N, 3)), columns=["x1", "x2", "x3"])
BASE["y"] = np.clip(BASE.x1 + 0.2 * _rng.standard_normal(N), -1, 1)
BOUNDS = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-1, 1)}
FORMULA = "y ~ x1 + x2 + x3"


def _pair(text: str = "n/a") -> tuple[pd.DataFrame, pd.DataFrame]:
    """x2 missing in one row (float) vs the same row holding text (object column)."""
    a = BASE.copy()
    a.loc[7, "x2"] = np.nan
    b = BASE.copy().astype({"x2": object})
    b.loc[7, "x2"] = text
    return a, b


DECLARED_DOORS = {
    "dp_sis": (dp.dp_sis, dict(eps=2.0, k=2, oc_trials=0)),
    "dp_lm": (dp.dp_lm, dict(eps=2.0, delta=1e-5, n_boot=100)),
    "dp_select_infer": (dp.dp_select_infer, dict(eps=2.0, delta=1e-5, k=2, n_boot=100)),
    "dp_two_stage": (dp.dp_two_stage, dict(eps=2.0, k=2, blocks=20, oc_trials=0)),
    "dp_glm": (dp.dp_glm, dict(eps=20.0, delta=1e-5)),
    "dp_bh": (dp.dp_bh, dict(q=0.2, eps=2.0, sigma=0.5, max_rejections=2)),
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("text", ["n/a", "oops", "1,5", 5 + 1j, np.complex128(0.5)], ids=str)
@pytest.mark.parametrize("door", sorted(DECLARED_DOORS))
def test_text_in_a_declared_numeric_column_is_a_missing_value(door, text, strict):
    """A complex entry is no real number either (outside audit F8: 5+1j gave a ComplexWarning on
    that neighbour only and its real part was used): missing, silently, whatever its imaginary part."""
    fn, kw = DECLARED_DOORS[door]
    a, b = _pair(text)
    views = [reader_view(fn, FORMULA, d, bounds=BOUNDS, random_state=7, strict=strict, **kw) for d in (a, b)]
    assert views[0]["error"] is None, views[0]["error"]
    assert_same_view(*views)
    assert "x2" in views[1]["terms"] and str(text) not in json.dumps(views[1], default=str)
    # the released values are those of the filled numeric column: the text is a missing value
    fits = []
    for d in (a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(fn(FORMULA, data=d, bounds=BOUNDS, random_state=7, **kw).to_dict())
    for f in fits:
        f.pop("created", None)
    assert json.dumps(fits[0], sort_keys=True, default=str) == json.dumps(
        fits[1], sort_keys=True, default=str
    )


def test_a_complex_column_is_never_read_by_its_real_part():
    """Declared numeric, every entry of a complex column is missing; otherwise the column is text, as
    the plain-numeric route always read it, on the general route too (it took the real part, with a
    ComplexWarning)."""
    df = BASE.assign(x2=BASE.x2 + 0j)
    filled = BASE.assign(x2=np.nan)
    for formula in ("y ~ x1 + x2", "y ~ x1 + x2 + I(x3^2)"):  # plain-numeric and general routes
        views = [
            reader_view(dp.dp_sis, formula, d, eps=1.0, k=1, bounds=BOUNDS, random_state=1)
            for d in (df, filled)
        ]
        assert_same_view(*views, label=formula)
        assert views[0]["fit"].tidy().to_dict() == views[1]["fit"].tidy().to_dict()
        text = reader_view(dp.dp_sis, formula, df, eps=1.0, k=1, bounds=(-1, 1), random_state=1)
        assert [w for w in text["warnings"] if "levels of 'x2' were read" in w[1]], (
            formula,
            text["warnings"],
        )
        assert not [w for w in text["warnings"] if w[0] == "ComplexWarning"]


def _sources(df: pd.DataFrame, tmp_path, tag: str) -> dict:
    import dask.dataframe as dd
    import duckdb

    text = df.astype({"x2": str}) if df["x2"].dtype == object else df  # one type per column for files
    text.to_csv(tmp_path / f"{tag}.csv", index=False)
    text.to_parquet(tmp_path / f"{tag}.parquet", row_group_size=100)
    con = duckdb.connect()
    con.register("t", text)
    return {
        "csv": engines.stream(tmp_path / f"{tag}.csv", chunk_rows=50),
        "parquet": engines.stream(tmp_path / f"{tag}.parquet", chunk_rows=50),
        "dask": dd.from_pandas(df, npartitions=3),
        "duckdb": con.sql("select * from t"),
        "polars": pytest.importorskip("polars").from_pandas(text),
        "arrow": pytest.importorskip("pyarrow").Table.from_pandas(text),
    }


@pytest.mark.parametrize("odd", ["n/a?", 5 + 1j], ids=str)
@pytest.mark.parametrize("door", ["dp_sis", "dp_lm"])
def test_every_route_reads_a_declared_numeric_column_as_numbers(door, odd, tmp_path):
    """Streamed CSV (text far beyond the first block, whose types are inferred), Parquet with a
    string column, Dask, DuckDB (TRY_CAST in the SQL pushdown), polars and Arrow.  A complex entry
    reaches Dask as it is and the others as its text '(5+1j)': missing on every route."""
    n = 3000
    rng = np.random.default_rng(3)
    a = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=["x1", "x2", "x3"])
    a["y"] = np.clip(a.x1 + 0.2 * rng.standard_normal(n), -1, 1)
    a.loc[2900, "x2"] = np.nan
    b = a.astype({"x2": object})
    b.loc[2900, "x2"] = odd
    fn, kw = DECLARED_DOORS[door]
    sa, sb = _sources(a, tmp_path, "a"), _sources(b, tmp_path, "b")
    for route in sa:
        views = [reader_view(fn, FORMULA, s[route], bounds=BOUNDS, random_state=7, **kw) for s in (sa, sb)]
        assert views[0]["error"] is None, (route, views[0]["error"])
        assert_same_view(*views)
        assert "x2" in views[1]["terms"], route


def _csv_pair(tmp_path) -> tuple:
    """A CSV file and its neighbour whose x1 holds the text 'abc' in row 2500, far past pyarrow's first
    block (audit/stream_csv_type.py, with x1 on a grid of 10 values, so that as text it has few levels)."""
    rng = np.random.default_rng(3)
    x1 = rng.integers(0, 10, 3000).astype(float)
    df = pd.DataFrame({"y": rng.uniform(0, 9, 3000), "x1": x1, "x2": rng.uniform(0, 9, 3000)})
    d1 = df.astype({"x1": object})
    d1.loc[2500, "x1"] = "abc"
    paths = tmp_path / "d0.csv", tmp_path / "d1.csv"
    df.to_csv(paths[0], index=False)
    d1.to_csv(paths[1], index=False)
    return paths


def _what_both_routes_show(view: dict) -> tuple:
    """The channels two engines share: the error's type, the terms and the warnings' categories, with
    whether a warning names the levels of x1 read from the rows (each engine words that step its way)."""
    levels_read = any("levels" in text and "'x1'" in text for _, text in view["warnings"])
    error = view["error"][0] if view["error"] else None
    return error, view.get("terms"), sorted({category for category, _ in view["warnings"]}), levels_read


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("door", ["dp_sis", "dp_lm", "dp_pca"])
def test_a_text_cell_far_into_a_csv_is_read_as_pandas_reads_the_file(door, strict, tmp_path):
    """Outside audit F7: streamed under a global pair of bounds (no column declared numeric), the text
    in a later block raised "does not have the type of its column in the first chunk" on that neighbour
    only, with no step named, where pandas.read_csv reads the column as text (its levels a named step).
    Now the stream reads a column that is not one type in the file as text, as read_csv does: on each
    neighbour both routes show the same; declared numeric by a bounds mapping, the neighbours agree."""
    calls = {
        "dp_sis": (dp.dp_sis, "y ~ x1 + x2", dict(eps=1.0, k=1, oc_trials=0)),
        "dp_lm": (dp.dp_lm, "y ~ x1 + x2", dict(eps=1.0, n_boot=100)),
        "dp_pca": (dp.dp_pca, "~ x1 + x2", dict(k=1, eps=1.0, delta=1e-6)),
    }
    fn, formula, kw = calls[door]
    paths = _csv_pair(tmp_path)
    for bounds in [(0.0, 10.0), {"y": (0, 10), "x1": (0, 10), "x2": (0, 10)}]:
        views = {}
        for path in paths:
            for route, data in [
                ("stream", engines.stream(path, chunk_rows=500)),
                ("memory", pd.read_csv(path)),
            ]:
                views[path.stem, route] = reader_view(
                    fn, formula, data, bounds=bounds, random_state=1, strict=strict, **kw
                )
        for stem in ("d0", "d1"):
            assert _what_both_routes_show(views[stem, "stream"]) == _what_both_routes_show(
                views[stem, "memory"]
            )
        assert "first chunk" not in str(views["d1", "stream"]["error"])
        if isinstance(bounds, dict) or strict:  # declared numeric: by the mapping, or by strict=True
            assert_same_view(views["d0", "stream"], views["d1", "stream"], label=door)
        elif views["d1", "stream"]["error"] is None:
            assert _what_both_routes_show(views["d1", "stream"])[3]  # the step is named
        else:  # refused on both routes, by strict=True or by dp_lm's count of columns
            assert strict or door == "dp_lm", views["d1", "stream"]["error"]


def test_a_csv_column_numeric_in_one_file_and_text_in_the_next_is_text(tmp_path):
    """The rule holds across the files of one stream: a column is numbers only if it is in every file
    (the files read as one table, as pandas reads one file holding all their rows)."""
    a, b = _csv_pair(tmp_path)
    text = pd.read_csv(b).iloc[2400:].reset_index(drop=True)  # 'abc' in its first block
    text.to_csv(tmp_path / "d2.csv", index=False)
    kw = dict(eps=1.0, k=1, bounds=(0.0, 10.0), random_state=1, oc_trials=0)
    both = engines.stream([a, tmp_path / "d2.csv"], chunk_rows=500)
    pd.concat([pd.read_csv(a), text], ignore_index=True).to_csv(tmp_path / "all.csv", index=False)
    memory = pd.read_csv(tmp_path / "all.csv")
    views = [reader_view(dp.dp_sis, "y ~ x1 + x2", data, **kw) for data in (both, memory)]
    assert _what_both_routes_show(views[0]) == _what_both_routes_show(views[1])
    assert views[0]["error"] is None and _what_both_routes_show(views[0])[3]


def test_a_global_pair_declares_no_text_column_numeric():
    df = BASE.assign(city=np.where(BASE.x3 > 0, "York", "Leeds"))
    fit = dp.dp_lm(
        "y ~ x1 + city",
        df,
        eps=2.0,
        delta=1e-5,
        bounds=(-1, 1),
        n_boot=100,
        random_state=1,
        levels={"city": ["Leeds", "York"]},
    )
    assert fit.terms == ["(Intercept)", "x1", "cityYork"]


def test_bool_and_categorical_columns_declared_numeric_are_read_as_numbers():
    """Decision (README, Privacy conventions): a bool is 0/1, a Categorical is read by its labels."""
    assert as_numbers(pd.Series([True, False])).tolist() == [1.0, 0.0]
    got = as_numbers(pd.Series(pd.Categorical(["2.5", "x", None]))).tolist()
    assert got[0] == 2.5 and np.isnan(got[1]) and np.isnan(got[2])
    flag = BASE.assign(flag=BASE.x3 > 0)
    bounds = BOUNDS | {"flag": (0, 1)}
    obj = flag.astype({"flag": object})
    obj.loc[5, "flag"] = None
    filled = flag.assign(flag=flag.flag.astype(float))
    filled.loc[5, "flag"] = 0.5  # the midpoint of (0, 1): the public fill
    cat = flag.assign(flag=pd.Categorical(flag.flag.map({True: "1", False: "0"})))
    outs = []
    for d in (flag, obj, filled, cat):
        fit = dp.dp_lm("y ~ x1 + flag", d, eps=2.0, delta=1e-5, bounds=bounds, n_boot=100, random_state=1)
        assert fit.terms == ["(Intercept)", "x1", "flag"]
        outs.append(np.asarray(fit.coef()))
    np.testing.assert_allclose(outs[1], outs[2])
    np.testing.assert_allclose(outs[0], outs[3])


def test_declared_both_numeric_and_categorical_is_refused_from_the_arguments():
    df = BASE.assign(city="York")
    with pytest.raises(DataError, match="'city' is declared numeric by bounds= and categorical by levels="):
        dp.dp_lm(
            "y ~ x1 + city",
            df,
            eps=1.0,
            delta=1e-5,
            bounds=BOUNDS | {"city": (0, 1)},
            levels={"city": ["Leeds", "York"]},
            n_boot=100,
        )


def test_dp_select_infer_bounds_factor_dummies_by_their_coding_as_dp_lm_does():
    df = BASE.assign(city=np.where(BASE.x3 > 0, "York", "Leeds"))
    kw = dict(eps=20.0, delta=1e-5, k=2, n_boot=100, bounds=BOUNDS, levels={"city": ["Leeds", "York"]})
    fit = dp.dp_select_infer("y ~ x1 + x2 + city", df, random_state=3, strict=True, **kw)
    assert set(fit.terms) <= {"(Intercept)", "x1", "x2", "cityYork"}
    # undeclared levels: the step is named (strict refuses it), never a bounds error listing levels
    b = df.copy()
    b.loc[3, "city"] = "Zzyzx"
    views = [
        reader_view(
            dp.dp_select_infer, "y ~ x1 + x2 + city", d, random_state=3, strict=True, **{**kw, "levels": None}
        )
        for d in (df, b)
    ]
    assert_same_view(*views, released=False)
    # under strict=True city, without declared levels, is numeric by declaration: bounds are missing for it
    assert (
        "Zzyzx" not in str(views[1]["error"]) and "needs declared bounds for 'city'" in views[1]["error"][1]
    )


# ---------------------------------------------------------------------------- logical columns
def _flag_pair():
    a = BASE.assign(flag=BASE.x3 > 0)
    a.loc[7, "flag"] = False  # the public fill of a logical
    b = a.astype({"flag": object})
    b.loc[7, "flag"] = None  # as read_csv gives for an empty cell
    return a, b


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("levels", [[False, True], ["FALSE", "TRUE"]])
def test_a_logical_with_a_missing_entry_declared_by_levels_equals_the_bool_column(levels, strict):
    a, b = _flag_pair()
    kw = dict(
        eps=2.0,
        delta=1e-5,
        bounds=(-1, 1),
        n_boot=100,
        random_state=7,
        strict=strict,
        levels={"flag": levels},
    )
    views = [reader_view(dp.dp_lm, "y ~ x1 + flag", d, **kw) for d in (a, b)]
    assert views[0]["error"] is None and views[0]["warnings"] == []
    assert_same_view(*views)
    assert views[1]["terms"] == ["(Intercept)", "x1", "flagTRUE"]
    coefs = [np.asarray(dp.dp_lm("y ~ x1 + flag", d, **{**kw, "eps": 1e9}).coef()) for d in (a, b)]
    np.testing.assert_allclose(coefs[0], coefs[1])


def test_r_text_levels_match_booleans_and_undeclared_object_booleans_stay_a_named_step():
    a, b = _flag_pair()
    s = Schema.declare(bounds=(-1, 1), levels={"flag": ["FALSE", "TRUE"]})
    coded = s.code_levels(b, ["flag"])["flag"]
    assert coded.isna().sum() == 1 and set(coded.dropna()) <= {"FALSE", "TRUE"}
    assert (coded.drop(index=7) == a.flag.drop(index=7).map({True: "TRUE", False: "FALSE"})).all()
    # an object column of booleans without levels=: its type is read from the rows, a named step; under
    # strict=True it is numeric by declaration (0/1, the missing entry filled), as the bool column a is
    kw = dict(eps=2.0, delta=1e-5, bounds=(-1, 1), n_boot=100, random_state=7)
    with pytest.warns(NonPrivateWarning, match="levels of 'flag' were read from the rows"):
        dp.dp_lm("y ~ x1 + flag", b, **kw)
    views = [reader_view(dp.dp_lm, "y ~ x1 + flag", d, strict=True, **kw) for d in (a, b)]
    assert views[0]["terms"] == views[1]["terms"] == ["(Intercept)", "x1", "flag"]
    assert views[0]["error"] is views[1]["error"] is None and views[0]["warnings"] == views[1]["warnings"]


# ---------------------------------------------------------------------------- steps listed once
NA_DOORS = [d for d in DOORS if d != "dp_bh (p-values)"]


def _with_missing(name: str, where: str) -> tuple:
    fn, args, kw = DOORS[name]
    data = (args[1] if len(args) > 1 else kw["data"]).copy()
    formula = args[0]
    lhs = formula.split("~")[0].strip()
    numeric = [c for c in data.columns if c != lhs and pd.api.types.is_float_dtype(data[c])]
    col = {"response": lhs or numeric[0], "covariate": numeric[-1] if lhs else numeric[1], "none": None}[
        where
    ]
    if col is not None:
        data[col] = data[col].astype(object) if data[col].dtype == object else data[col]
        data.loc[4, col] = None if data[col].dtype == object else np.nan
    if len(args) > 1:
        return fn, (formula, data), kw
    return fn, args, {**kw, "data": data}


def _steps(name: str, where: str, **extra) -> object:
    fn, args, kw = _with_missing(name, where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = fn(*args, random_state=3, **{**kw, **extra})
        except Exception as exc:  # noqa: BLE001 - the refusal is what a reader sees
            return ("error", type(exc).__name__, str(exc))
    return list(fit.privacy.data_dependent_steps)


@pytest.mark.parametrize("na_action", ["omit", "fill"])
@pytest.mark.parametrize("name", NA_DOORS)
def test_data_dependent_steps_are_listed_once_whatever_is_missing(name, na_action):
    got = {where: _steps(name, where, na_action=na_action) for where in ("none", "response", "covariate")}
    assert got["none"] == got["response"] == got["covariate"], got
    if isinstance(got["none"], list):
        assert len(set(got["none"])) == len(got["none"])


# ---------------------------------------------------------------------------- bound names
def test_a_bounds_entry_naming_no_column_is_refused_with_a_suggestion_before_spending():
    df = BASE.assign(wt=BASE.x2, unused=0.0)
    acc = dp.Accountant(eps=100.0, delta=1e-3)
    for fn, kw in DECLARED_DOORS.values():
        with pytest.raises(PrivacyParameterError, match=r"bounds= names 'Wt'.*Did you mean 'wt'"):
            fn("y ~ x1 + wt", data=df, bounds=BOUNDS | {"wt": (-1, 1), "Wt": (0, 9)}, accountant=acc, **kw)
    assert acc.spent_eps == 0
    # a column of the data outside the formula, a design column, a dummy of an undeclared level: allowed
    city = df.assign(city=np.where(df.x3 > 0, "York", "Leeds"))
    ok = BOUNDS | {
        "wt": (-1, 1),
        "unused": (0, 1),
        "I(x1^2)": (0, 1),
        "cityZurich": (0, 1),
        "x1:cityYork": (-1, 1),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp.dp_lm("y ~ x1 + I(x1^2) + city", city, eps=1.0, delta=1e-5, bounds=ok, n_boot=100)
    with pytest.raises(PrivacyParameterError, match="bounds= names 'Wt'"):
        import dask.dataframe as dd

        data = dd.from_pandas(df, npartitions=2)
        engines.sufficient_statistics("y ~ x1", data, schema=Schema.declare(bounds={"Wt": (0, 1)}))


def _secret_level_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A text factor g of levels a/b, and its neighbour in which one row holds the level 'secret'."""
    rng = np.random.default_rng(0)
    d0 = pd.DataFrame(
        {"y": rng.uniform(0, 1, 300), "x": rng.uniform(0, 1, 300), "g": rng.choice(["a", "b"], 300)}
    )
    d1 = d0.copy()
    d1.loc[0, "g"] = "secret"
    return d0, d1


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("key", ["secret", "Gsecret", "x:secret"])
def test_the_hint_of_a_misspelt_bounds_key_quotes_no_level_read_from_the_rows(key, strict):
    """Outside audit F1 (audit/bound_name_hint_leaks_level.py): the interaction column 'x:gsecret' of a
    level one row holds was suggested for a key close to it, on that neighbour only."""
    d0, d1 = _secret_level_pair()
    kw = dict(eps=1.0, k=1, bounds={"y": (0, 1), "x": (0, 1), key: (0, 1)}, random_state=1, strict=strict)
    views = [reader_view(dp.dp_sis, "y ~ x + g + x:g", d, **kw) for d in (d0, d1)]
    assert_same_view(*views, label=key, released=False)
    assert views[1]["error"][0] == "PrivacyParameterError"
    assert "secret'?" not in views[1]["error"][1]


def test_the_hint_suggests_the_columns_of_declared_levels_and_the_data_columns():
    d0, _ = _secret_level_pair()
    bounds = {"y": (0, 1), "x": (0, 1)}
    cases = [  # (formula, misspelt key, levels=, the suggestion), each public whatever the rows
        ("y ~ x + g + x:g", "x:Gb", {"g": ["a", "b"]}, "'x:gb'"),
        ('y ~ x * factor(g, levels = c("a", "b"))', 'X:factor(g, levels = c("a", "b"))b', None, "'x:factor("),
        ("y ~ x + g + x:g", "xx", None, "'x'"),
    ]
    for formula, key, levels, hint in cases:
        match = rf"names {re.escape(repr(key))}.*Did you mean {re.escape(hint)}"
        with pytest.raises(PrivacyParameterError, match=match):
            dp.dp_sis(formula, d0, eps=1.0, k=1, bounds=bounds | {key: (0, 1)}, levels=levels)
    # levels read from the rows: their columns are never suggested
    with pytest.raises(PrivacyParameterError) as refused:
        dp.dp_sis("y ~ x + g + x:g", d0, eps=1.0, k=1, bounds=bounds | {"x:Gb": (0, 1)})
    assert "Did you mean" not in str(refused.value)


def test_arrow_and_pandas_read_the_same_number_from_every_entry_arrow_parses():
    """Streamed CSV chunks whose declared-numeric text parses throughout are cast by Arrow (fast); the
    others are read entry by entry by schema.as_numbers (pandas): both must give the same float for
    every entry Arrow reads, so a chunk's route never changes a number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from dpstats.schema import as_numbers

    rng = np.random.default_rng(0)
    values = rng.standard_normal(2000) * 10.0 ** rng.integers(-300, 300, 2000)
    texts = (
        [repr(float(v)) for v in values]
        + [f"{v:.17g}" for v in values[:200]]
        + [
            "inf",
            "-inf",
            "Infinity",
            "nan",
            "NaN",
            "+3",
            ".5",
            "5.",
            "-0",
            "1e-310",
            "4.9e-324",
            "1.7976931348623157e308",
        ]
    )
    arrow = pc.cast(pa.array(texts), pa.float64()).to_numpy(zero_copy_only=False)
    pandas = as_numbers(pd.Series(texts, dtype=object)).to_numpy()
    assert np.array_equal(arrow, pandas, equal_nan=True)
    assert np.array_equal(np.signbit(arrow), np.signbit(pandas))


@pytest.mark.parametrize("strict", [False, True])
def test_a_missing_bound_of_an_interaction_names_its_term_when_levels_come_from_the_rows(strict):
    """Two data sets that differ in one row, which alone holds the level 'Zurich': the refusal of an
    interaction's missing bound names the term city:I(2 * x1), never its columns (their names, and
    how many there are, come from the rows); with the levels declared it names the columns. (x1:city
    itself is bounded by x1's bounds times the dummies' (0, 1): tests/test_interaction_bounds.py;
    I(2 * x1) has no public bound, so this interaction's columns have none.)"""
    rng = np.random.default_rng(0)
    a = pd.DataFrame({"x1": rng.uniform(0, 1, 300), "city": rng.choice(["Leeds", "York"], 300)})
    a["y"] = a.x1 + rng.normal(0, 0.3, 300)
    b = a.copy()
    b.loc[7, "city"] = "Zurich"
    kw = dict(eps=1.0, delta=1e-6, bounds={"x1": (0, 1), "y": (-2, 3)}, strict=strict, n_boot=100)
    messages = []
    for data in (a, b):
        with pytest.raises(dp.PrivacyParameterError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dp.dp_lm("y ~ x1 + city + I(2 * x1):city", data, **kw)
        messages.append(str(caught.value))
    # under strict city, without declared levels, is numeric by declaration: its missing bounds are refused
    # first, from the arguments alone (audit s15-attack8 F01; before: the step of reading its levels)
    named = "needs declared bounds for 'city'" if strict else "'city:I(2 * x1)'"
    assert messages[0] == messages[1] and named in messages[0] and "York" not in messages[0]
    with pytest.raises(
        dp.PrivacyParameterError, match=r"3 column\(s\): 'cityLeeds:I\(2 \* x1\)', 'cityYork:I\(2 \* x1\)'"
    ):
        dp.dp_lm("y ~ x1 + city + I(2 * x1):city", b, levels={"city": ["Leeds", "York", "Zurich"]}, **kw)


def test_a_misspelt_bound_is_never_answered_with_a_level_read_from_the_rows():
    """Neighbours that differ in one row, which alone holds the level 'Zurich': the suggestion for a
    misspelt bounds= name comes from public names only (data columns, numeric design columns), so
    both refusals read the same and neither quotes a level."""
    rng = np.random.default_rng(0)
    a = pd.DataFrame({"x1": rng.uniform(0, 1, 300), "city": rng.choice(["Leeds", "York"], 300)})
    a["y"] = a.x1 + rng.normal(0, 0.3, 300)
    b = a.copy()
    b.loc[7, "city"] = "Zurich"
    bounds = {"x1": (0, 1), "y": (-2, 3), "ctyZurich": (0, 1)}
    messages = []
    for data in (a, b):
        with pytest.raises(dp.PrivacyParameterError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dp.dp_lm("y ~ x1 + city", data, eps=1.0, delta=1e-6, bounds=bounds, n_boot=100)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "'ctyZurich'" in messages[0]
    assert "cityZurich" not in messages[0] and "cityYork" not in messages[0]
