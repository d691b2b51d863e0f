"""Data where it lives (issue 32): polars, Arrow and DuckDB as inputs to every front door.

How it is shown:

* Bit for bit: every front door (one working call each, ``tests/front_door_calls.py``, on its
  data with missing values added) gives the same ``to_dict()`` -- every released number, name
  and sentence; only the creation time is left out -- for a polars DataFrame, a pyarrow Table
  and Dataset holding the same rows as for the pandas frame, seeded alike; so do a polars
  LazyFrame, a DuckDB relation or (connection, table) on the doors that need the rows (read into
  pandas).
* DuckDB and polars engines (dp_sis, dp_knockoff, dp_pca, dp_lm, dp_glm: doors that work from
  sufficient statistics; a LazyFrame read in record batches, ``tests/test_lazy_sources_batches.py``):
  equal to pandas within floating-point tolerance.  They sum the same terms
  in another order, so each statistic differs by at most about n·2⁻⁵³ times its largest term
  (here n <= 2000 terms of size <= 1: < 3e-13 absolute); the tests allow a relative 1e-9 and an
  absolute 1e-12 on every released number (the seeded noise is the same), and demand equality
  of everything else (selections, names, counts, sentences).  The same tolerance holds for the
  statistics themselves on designs with intercepts, factors, removed terms, one-sided formulas,
  with and without declared boxes and XᵀX, under both rules for missing values.
* The SQL route is taken for plain numeric designs (rows never reach Python) and the record
  batch route for others; unused columns are never read (a column that raises when read is
  left alone by polars, DuckDB and the adapter).
* A refused input names its type and what to do, and charges nothing.
"""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from data_kinds import DUCKDB, IN_MEMORY, as_kind
from dpstats import engines
from dpstats.errors import DataError, DPStatsError, NonPrivateWarning, PrivacyParameterError
from dpstats.geometry import Box
from dpstats.privacy.accountant import Accountant
from dpstats.schema import Schema
from front_door_calls import DOORS

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

FORMULA_DOORS = [d for d in DOORS if d != "dp_bh (p-values)"]
# doors that work from sufficient statistics: a DuckDB relation stays in DuckDB, a LazyFrame is read in
# record batches (dp_glm: at a finite eps, with a numeric response)
ENGINE_DOORS = {"dp_sis", "dp_knockoff", "dp_pca", "dp_lm", "dp_glm"}
ENGINE_KINDS = DUCKDB + ("polars lazy",)
RTOL, ATOL = 1e-9, 1e-12


def _args(name: str):
    """The door's working call, its data with missing values in two numeric columns."""
    fn, args, kw = DOORS[name]
    data = (args[1] if len(args) > 1 else kw["data"]).copy()
    numeric = [c for c in data.columns if c != "txt" and pd.api.types.is_float_dtype(data[c])]
    for col, rows in zip(numeric[:2], ([3, 40], [7])):
        data.loc[rows, col] = np.nan
    return fn, args, kw, data


def _call(name: str, data, **extra) -> dict:
    fn, args, kw, _ = _args(name)
    kw = {**kw, **extra}
    if len(args) > 1:
        args = (args[0], data)
    else:
        kw["data"] = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same warnings for every input: compared elsewhere
        out = fn(*args, random_state=5, **kw).to_dict()
    out.pop("created")
    return out


def _text(d: dict) -> str:
    return json.dumps(d, sort_keys=True, default=str)


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    """pandas' results, one call per door."""
    return {name: _call(name, _args(name)[3]) for name in FORMULA_DOORS}


ROW_CASES = [(name, kind) for name in FORMULA_DOORS for kind in IN_MEMORY + DUCKDB]
ROW_CASES = [(n, k) for n, k in ROW_CASES if not (k in ENGINE_KINDS and n in ENGINE_DOORS)]


@pytest.mark.parametrize(("name", "kind"), ROW_CASES)
def test_every_door_gives_pandas_results_bit_for_bit(name, kind, reference):
    data = as_kind(_args(name)[3], kind)
    assert _text(_call(name, data)) == _text(reference[name])


def _flat(value, prefix=""):
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{prefix}[{i}]").items()}
    return {prefix: value}


_ENGINE_NAME = re.compile(r"(duckdb|DuckDB|polars) engine")
_CHUNKED = ", chunk by chunk, added in the order read)"  # dp_glm's passes over a chunked engine


def _as_in_memory(text: str) -> str:
    """A text of a result from the DuckDB or polars engine as the in-memory engine words it."""
    return _ENGINE_NAME.sub("in-memory engine", text).replace(_CHUNKED, ")")


def assert_close_results(ours: dict, theirs: dict) -> None:
    """Numbers within RTOL/ATOL, everything else equal (the engine's name aside)."""
    a, b = _flat(ours), _flat(theirs)
    assert a.keys() == b.keys()
    for key, x in a.items():
        y = b[key]
        if isinstance(x, float) and isinstance(y, float):
            assert (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL), (
                key,
                x,
                y,
            )
        elif isinstance(x, str):
            assert _as_in_memory(x) == y, key
        else:
            assert x == y, (key, x, y)


# dp_knockoff's working call removes a text column (``y ~ . - txt``); a removed factor's levels
# are a named step worded differently by the chunked engines, so the engine test drops the column
ENGINE_CALLS = {"dp_knockoff": ("y ~ .", lambda df: df.drop(columns="txt"))}


@pytest.mark.parametrize("kind", ENGINE_KINDS)
@pytest.mark.parametrize("name", sorted(ENGINE_DOORS))
def test_engines_of_lazy_sources_equal_pandas_within_tolerance(name, kind):
    fn, args, kw, data = _args(name)
    formula, prepare = ENGINE_CALLS.get(name, (args[0], lambda df: df))
    data = prepare(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = fn(formula, as_kind(data, kind), random_state=5, **kw)
        theirs = fn(formula, data, random_state=5, **kw)
    engine = "polars" if kind == "polars lazy" else "duckdb"
    assert getattr(ours, "engine", engine) == engine
    one, other = ours.to_dict(), theirs.to_dict()
    one.pop("created"), other.pop("created")
    assert_close_results(one, other)


def _boxes(mf):
    lo = np.array([0.0 if nm == "(Intercept)" else -2.5 for nm in mf.names])
    hi = np.array([2.0 if nm == "(Intercept)" else 2.5 for nm in mf.names])
    return Box(lo, hi), Box(np.array([-3.0]), np.array([3.0]))


@pytest.fixture(scope="module")
def gappy() -> pd.DataFrame:
    """Numeric columns with NaN, NULL-to-be and inf values, a text column and a boolean one."""
    rng = np.random.default_rng(32)
    df = pd.DataFrame(rng.standard_normal((2000, 5)), columns=[f"x{j}" for j in range(1, 6)])
    df["y"] = df.x1 - df.x2 + rng.standard_normal(2000)
    df.loc[[4, 50, 51], "x2"] = np.nan
    df.loc[[9], "y"] = np.inf
    df.loc[[77], "x4"] = -np.inf
    df["g"] = rng.choice(["a", "b", "c"], 2000)
    df["t"] = rng.random(2000) < 0.5
    return df


SCHEMAS = {
    "no schema": None,
    "fill, all bounded": Schema.declare(bounds=(-2.5, 2.5)),
    "fill, some unbounded": Schema.declare(bounds={"y": (-3, 3), "x1": (-2.5, 2.5), "x4": (-2.5, 2.5)}),
    "omit": Schema.declare(bounds=(-2.5, 2.5), na_action="omit"),
}
DESIGNS = {  # formula, drop_intercept, the route the DuckDB engine takes
    "y ~ x1 + x2 + x4": (False, "sql"),
    "y ~ .": (True, "sql"),  # on the numeric columns only
    "y ~ x1 + x2 - x4": (True, "sql"),
    "~ x1 + x2 + x4": (True, "sql"),
    "y ~ x1 + g + t": (False, "batches"),
    "y ~ . - g": (True, "batches"),  # a removed factor still drops rows under "omit"
    "y ~ x1 * x2 + I(x4^2)": (False, "batches"),
}


@pytest.mark.parametrize("gram", [False, True])
@pytest.mark.parametrize("rule", list(SCHEMAS))
@pytest.mark.parametrize("formula", list(DESIGNS))
def test_duckdb_statistics_equal_in_memory(formula, rule, gram, gappy):
    drop, route = DESIGNS[formula]
    schema = SCHEMAS[rule]
    kw = dict(gram=gram, drop_intercept=drop, schema=schema, one_sided=formula.startswith("~"))
    kw["boxes"] = _boxes if schema is not None and rule != "fill, some unbounded" else None
    data = gappy.drop(columns=["g", "t"]) if formula == "y ~ ." else gappy
    mf_a, a = engines.sufficient_statistics(formula, data, **kw)
    levels = {"g": ["a", "b", "c"]} if "g" in data else None
    source = engines.on_duckdb(as_kind(data, "duckdb"), levels=levels)
    mf_b, b = engines.sufficient_statistics(formula, source, **kw)
    assert source.last_route == route
    assert mf_a.names == mf_b.names
    x, z = a.cross, b.cross
    assert (x.n, a.n_dropped, a.n_filled, x.n_clipped) == (z.n, b.n_dropped, b.n_filled, z.n_clipped)
    for field in ("xty", "x_sum", "y_sum", "yty", "x_maxabs", "y_maxabs", "x_min", "x_max") + (
        ("xtx",) * gram
    ):
        np.testing.assert_allclose(getattr(z, field), getattr(x, field), rtol=RTOL, atol=ATOL, err_msg=field)
    assert z.finite == x.finite


EDGES = [  # x1 on the box's edges and just beyond, NULL, NaN and infinities as DuckDB holds them
    ("-2.5", "0.5"),
    ("2.5", "-3.0"),
    ("2.5000000000000004", "3.0000000000000004"),
    ("-1e150", "1e150"),
    ("NULL", "1.0"),
    ("'nan'", "2.0"),
    ("'inf'", "-1.0"),
    ("0.25", "'-inf'"),
    ("1.0", "NULL"),
    ("-0.0", "0.0"),
]


@pytest.mark.parametrize("rule", list(SCHEMAS))
def test_sql_clipping_and_missing_values_at_the_edges_equal_in_memory(rule):
    """Values exactly on the declared box (not clipped), one ulp beyond it (clipped), huge ones, SQL
    NULL beside NaN and infinities: the SQL route's clipping, fills, drops and counts are the in-memory
    ones (the rule for missing values reads NULL and NaN alike)."""
    rows = ", ".join(
        f"(CAST({x} AS DOUBLE), CAST({y} AS DOUBLE), CAST({k} AS DOUBLE))" for k, (x, y) in enumerate(EDGES)
    )
    con = duckdb.connect()
    relation = con.sql(f"select * from (values {rows}) as t(x1, y, x2)")
    frame = relation.df()  # NULL and NaN both NaN in pandas
    schema = SCHEMAS[rule]
    if rule == "fill, some unbounded":  # this relation has no x4: a bounds= entry must name a column
        schema = Schema.declare(bounds={"y": (-3, 3), "x1": (-2.5, 2.5)})
    kw = dict(gram=True, drop_intercept=False, schema=schema)
    kw["boxes"] = _boxes if schema is not None and rule != "fill, some unbounded" else None
    _, a = engines.sufficient_statistics("y ~ x1 + x2", frame, **kw)
    source = engines.on_duckdb(relation)
    _, b = engines.sufficient_statistics("y ~ x1 + x2", source, **kw)
    assert source.last_route == "sql"
    x, z = a.cross, b.cross
    assert (x.n, a.n_dropped, a.n_filled, x.n_clipped) == (z.n, b.n_dropped, b.n_filled, z.n_clipped)
    for field in ("xty", "x_sum", "y_sum", "yty", "x_maxabs", "y_maxabs", "x_min", "x_max", "xtx"):
        np.testing.assert_allclose(getattr(z, field), getattr(x, field), rtol=RTOL, atol=ATOL, err_msg=field)
    assert z.finite == x.finite


def test_sql_route_reads_no_row_into_python(gappy, monkeypatch):
    """The SQL route never asks DuckDB for rows: no Arrow table, reader or DataFrame is made."""
    source = engines.on_duckdb(as_kind(gappy, "duckdb"))
    engines.sufficient_statistics("y ~ x1 + x2", source, gram=True, boxes=_boxes, drop_intercept=False)
    relation_type = type(source.relation)
    for method in ("to_arrow_reader", "fetch_record_batch", "df", "pl", "fetchnumpy"):
        if hasattr(relation_type, method):
            monkeypatch.setattr(relation_type, method, _refuse_rows, raising=False)
    mf, st = engines.sufficient_statistics(
        "y ~ x1 + x2", source, gram=True, boxes=_boxes, drop_intercept=False
    )
    assert source.last_route == "sql" and st.n == len(gappy) - 4  # no schema: the non-finite rows dropped


def _refuse_rows(*_args, **_kwargs):
    raise AssertionError("rows were fetched from DuckDB")


def test_dp_lm_on_duckdb_uses_the_sql_route_and_says_so():
    df = dp.datasets.fan_lv(n=1500, d=10, random_state=2)
    source = engines.on_duckdb(as_kind(df, "duckdb"))
    fit = dp.dp_lm("y ~ x1 + x2 + x3", source, eps=1.0, delta=1e-6, bounds=(-6, 6), random_state=1)
    assert source.last_route == "sql"
    assert fit.engine == "duckdb" and "engine: duckdb" in str(fit.summary())


def test_only_the_formula_columns_are_read():
    """A column that fails when computed: polars and DuckDB never compute it, the adapter never asks."""
    df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 5.0], "x": [0.0, 1.0, 2.0, 2.5], "z": [1.0, 0.0, 1.0, 1.0]})

    def poison(_value):
        raise RuntimeError("the poison column was read")

    lazy = (
        pl.from_pandas(df)
        .lazy()
        .with_columns(poison=pl.col("x").map_elements(poison, return_dtype=pl.Float64))
    )
    con = duckdb.connect()
    con.register("d", df)
    relation = con.sql("select *, error('the poison column was read') as poison from d")
    for data in (lazy, relation):
        assert engines.as_data(data, "y ~ x + z").columns.tolist() == ["y", "x", "z"]
        assert engines.sufficient_statistics("y ~ x", data)[1].n == 4
    table = pa.Table.from_pandas(df, preserve_index=False)
    assert engines.as_data(table, "y ~ x", keep=[{"z": ["levels"]}]).columns.tolist() == ["y", "x", "z"]
    assert engines.as_data(table, "log(y) ~ I(x^2)").columns.tolist() == ["y", "x"]
    assert engines.as_data(table, "y ~ nope").columns.tolist() == ["y", "x", "z"]  # the door names 'nope'


def test_declared_types_stay_declared_and_read_levels_are_named():
    """polars Enum and DuckDB ENUM declare their levels; a polars Categorical's are read from the rows."""
    rng = np.random.default_rng(4)
    cities = ["York", "Leeds", "Hull"]  # declared order, one level unused
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 400), "c": rng.choice(cities[:2], 400)})
    df["y"] = df.x + (df.c == "York") + 0.1 * rng.standard_normal(400)
    kw = dict(eps=2.0, delta=1e-6, bounds=(-3, 3), random_state=2, strict=True)
    declared = dp.dp_lm("y ~ x + c", df.assign(c=df.c.astype(pd.CategoricalDtype(cities))), **kw).to_dict()
    declared.pop("created")
    enum = pl.from_pandas(df).with_columns(pl.col("c").cast(pl.Enum(cities)))
    con = duckdb.connect()
    con.register("d", df)
    con.execute(f"create type city as enum {tuple(cities)}")
    rel = con.sql("select x, y, c::city as c from d")
    for data in (enum, enum.lazy(), rel):
        out = dp.dp_lm("y ~ x + c", data, **kw).to_dict()  # strict: no level read from the rows
        out.pop("created")
        if data is not enum:  # the DuckDB and polars engines
            assert_close_results(out, declared)
        else:
            assert _text(out) == _text(declared)
    categorical = pl.from_pandas(df).with_columns(pl.col("c").cast(pl.Categorical))
    with pytest.warns(NonPrivateWarning, match="levels of 'c'"):  # read from the rows: a named step
        dp.dp_lm("y ~ x + c", categorical, **{**kw, "strict": False})
    # under strict=True a type is declared, never read: text (as the Categorical arrives) is numeric
    assert dp.dp_lm("y ~ x + c", categorical, **kw).terms == ["(Intercept)", "x", "c"]
    text_kw = {**kw, "strict": False, "levels": {"c": cities}}
    as_text, from_pandas = (dp.dp_lm("y ~ x + c", d, **text_kw).to_dict() for d in (categorical, df))
    as_text.pop("created"), from_pandas.pop("created")
    assert _text(as_text) == _text(from_pandas)
    # an Arrow dictionary without pandas' Categorical metadata holds the values present: text
    plain = pa.table({"x": df.x, "y": df.y, "c": pa.array(df.c).dictionary_encode()})
    assert engines.as_data(plain, "y ~ c")["c"].dtype == df.c.dtype


REFUSED = {
    "a numpy.ndarray": (lambda: np.zeros((5, 3)), "pandas.DataFrame(array"),
    "a polars.Series": (lambda: pl.Series("x", [1.0, 2.0]), "to_frame()"),
    "a duckdb.DuckDBPyConnection": (lambda: duckdb.connect(), "(con, "),
    "a pyarrow.RecordBatchReader": (lambda: pa.table({"x": [1.0]}).to_reader(), "read_all()"),
    "a list": (lambda: [1, 2, 3], "Convert it"),
}


@pytest.mark.parametrize("what", list(REFUSED))
@pytest.mark.parametrize("name", FORMULA_DOORS)
def test_refused_input_names_its_type_and_charges_nothing(name, what):
    make, advice = REFUSED[what]
    if name == "vertical_glm" and what == "a list":  # a list of frames is vertical_glm's per-party data
        what, advice = "an int", "Convert it"
    fn, args, kw, _ = _args(name)
    acc = Accountant(eps=50.0, delta=0.1)
    if len(args) > 1:
        args = (args[0], make())
    else:
        kw = {**kw, "data": make()}
    with pytest.raises(DataError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(*args, accountant=acc, random_state=1, **kw)
    text = str(info.value)
    assert f"got {what}" in text and advice in text, text
    assert acc.spent_eps == 0 and acc.spent_delta == 0 and not acc.charges


def test_failing_query_is_a_data_error_without_its_values_and_charges_nothing():
    con = duckdb.connect()
    con.execute("create table t as select 'secret-417' as s, 1.0 as y, 2.0 as x")
    acc = Accountant(eps=10.0, delta=0.1)
    rel = con.sql("select cast(s as double) as x2, y, x from t")
    for statistics_route in (True, False):
        fn = dp.dp_lm if statistics_route else dp.dp_two_stage
        kw = (
            dict(eps=1.0, delta=1e-6, bounds=(-3, 3))
            if statistics_route
            else dict(eps=1.0, k=1, bounds=(-3, 3))
        )
        with pytest.raises(DataError) as info:
            fn("y ~ x + x2", rel, accountant=acc, random_state=1, **kw)
        assert "duckdb" in str(info.value) and "secret-417" not in str(info.value)
    assert acc.spent_eps == 0 and not acc.charges


def test_private_bounds_need_rows_in_memory_and_charge_nothing():
    df = dp.datasets.fan_lv(n=5000, d=10, random_state=1)
    con, table = as_kind(df, "duckdb table")
    acc = Accountant(eps=10.0, delta=0.1)
    kw = dict(eps=5.0, delta=1e-6, bounds="auto", bounds_eps=1.0, n_boot=100, random_state=1)
    with pytest.raises(PrivacyParameterError, match="in memory.*got a duckdb.DuckDBPyRelation"):
        dp.dp_lm("y ~ x1 + x2", con.table(table), accountant=acc, **kw)
    with pytest.raises(PrivacyParameterError, match="got the DuckDB table 'data'"):
        dp.dp_lm("y ~ x1 + x2", (con, table), accountant=acc, **kw)
    assert not acc.charges
    fit = dp.dp_lm("y ~ x1 + x2", con.table(table).df(), **kw)  # read into pandas, it gets private bounds
    assert fit.private_bounds


def test_no_table_of_that_name():
    con = duckdb.connect()
    with pytest.raises(DataError, match="no table or view 'nope'"):
        dp.dp_lm("y ~ x", (con, "nope"), eps=1.0, delta=1e-6, bounds=(-1, 1))
    with pytest.raises(DataError, match="no table or view 'nope'"):  # a door that reads the rows
        dp.dp_two_stage("y ~ x", (con, "nope"), eps=1.0, k=1, bounds=(-1, 1))


def test_vertical_glm_takes_one_frame_per_party_of_any_type():
    rng = np.random.default_rng(9)
    df = pd.DataFrame(rng.standard_normal((300, 4)), columns=["x1", "x2", "x3", "x4"])
    df["y"] = df.x1 - df.x3 + 0.5 * rng.standard_normal(300)
    parts = [df[["x1", "x2", "y"]], df[["x3", "x4"]]]
    kw = dict(parties=[["x1", "x2"], ["x3", "x4"]])
    want = dp.vertical_glm("y ~ .", parts, **kw).to_dict()
    got = dp.vertical_glm("y ~ .", [as_kind(parts[0], "polars"), as_kind(parts[1], "arrow")], **kw).to_dict()
    want.pop("created"), got.pop("created")
    assert _text(got) == _text(want)


def test_type_names_for_messages():
    assert engines.type_name(pl.DataFrame().lazy()) == "a polars.LazyFrame"
    assert engines.type_name(pa.table({"a": [1]})) == "a pyarrow.Table"
    assert engines.type_name(duckdb.sql("select 1")) == "a duckdb.DuckDBPyRelation"
    assert engines.is_native(duckdb.sql("select 1")) and not engines.is_native(pd.DataFrame())


def test_bad_sources_are_refused_before_reading():
    with pytest.raises(DataError, match="got a pandas.DataFrame"):
        engines.on_duckdb(pd.DataFrame({"x": [1.0]}))
    with pytest.raises(
        PrivacyParameterError, match="chunk_rows"
    ):  # the argument's type or range, not the data
        engines.on_duckdb(duckdb.sql("select 1 as x"), chunk_rows=0)
    with pytest.raises(PrivacyParameterError, match="levels must be a dict"):
        engines.on_duckdb(duckdb.sql("select 1 as x"), levels=["a"])
    with pytest.raises(DataError, match="read in memory"):
        engines.as_source(pl.DataFrame({"x": [1.0]}))
    assert isinstance(engines.as_source(duckdb.sql("select 1.0 as x")), engines.DuckDBSource)
    with pytest.raises(DPStatsError):
        engines.as_source(None)


@pytest.mark.parametrize("gram", [False, True])
@pytest.mark.parametrize("rule", list(SCHEMAS))
@pytest.mark.parametrize("formula", list(DESIGNS))
def test_pushdown_counts_the_aggregates_of_the_query_it_builds(formula, rule, gram, gappy, monkeypatch):
    """pushdown_applies weighs the query by sql_aggregate_count, which must be the number of aggregate
    calls in the SQL sql_statistics hands DuckDB (its per-column sums, minima, maxima, clipped and
    filled counts, the response's, the products); with MAX_SQL_AGGREGATES one below that number the
    design streams instead, at that number it runs as SQL.  Designs with factors or transformations
    never reach the query."""
    from dpstats.engines import duckdb_engine

    drop, route = DESIGNS[formula]
    schema = SCHEMAS[rule]
    kw = dict(gram=gram, drop_intercept=drop, schema=schema, one_sided=formula.startswith("~"))
    kw["boxes"] = _boxes if schema is not None and rule != "fill, some unbounded" else None
    data = gappy.drop(columns=["g", "t"]) if formula == "y ~ ." else gappy
    levels = {"g": ["a", "b", "c"]} if "g" in data else None
    relation = as_kind(data, "duckdb")
    built, counted = [], []
    sql_statistics = duckdb_engine.sql_statistics

    def spied(rel, layout, transform):
        counted.append(duckdb_engine.sql_aggregate_count(layout, transform))
        return sql_statistics(_AggregateSpy(rel, built), layout, transform)

    monkeypatch.setattr(duckdb_engine, "sql_statistics", spied)
    source = engines.on_duckdb(relation, levels=levels)
    engines.sufficient_statistics(formula, source, **kw)
    assert source.last_route == route
    if route == "batches":
        assert not built and not counted
        return
    (aggregate,) = built
    in_sql = [c for c in aggregate.columns if "(" in c]  # the constant 0 slots are not aggregates
    assert counted == [len(in_sql)], (counted, aggregate.columns)
    for limit, expected in ((len(in_sql) - 1, "batches"), (len(in_sql), "sql")):
        monkeypatch.setattr(duckdb_engine, "MAX_SQL_AGGREGATES", limit)
        source = engines.on_duckdb(relation, levels=levels)
        engines.sufficient_statistics(formula, source, **kw)
        assert source.last_route == expected, (limit, len(in_sql))


class _AggregateSpy:
    """A relation that keeps the aggregate relation made from it (and from its projections)."""

    def __init__(self, relation, built: list) -> None:
        self.relation, self.built = relation, built

    def project(self, expr: str) -> _AggregateSpy:
        return _AggregateSpy(self.relation.project(expr), self.built)

    def aggregate(self, expr: str):
        self.built.append(self.relation.aggregate(expr))
        return self.built[-1]
