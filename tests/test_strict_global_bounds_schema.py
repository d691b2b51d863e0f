"""Under strict=True a variable's type is declared, never read from its dtype (outside audit s15-attack8, F01).

With a global pair ``bounds=(-2, 2)`` (the README's first example; ``--bounds [lo, hi]`` on the command
line) no column was declared numeric, so each column's type came from its pandas dtype, which is itself
read from the rows: one ``"?"`` cell made the numeric column ``x1`` an object column whose levels were
read from the rows, and one missing entry made the boolean ``flag`` an object column.  Under
``strict=True`` the data set D was released while its neighbour D' was refused: whether one row holds
text was released as one bit, before any mechanism.  Now, under ``strict=True``, every variable the
formula reads that is not declared categorical (``levels=``, a Categorical, an R factor) is numeric by
declaration, whatever the form of ``bounds=`` (DESIGN §3, "a public schema is declared, never guessed";
:mod:`dpstats.schema`, "Types under strict=True").

Each pair below is analysed with the same seed: the reader's view (messages, term names, shapes,
print and summary with numbers masked; ``tests/neighbours.py``) must be the same, on every route
(pandas, a streamed CSV, DuckDB, polars, Dask).  On the old code D' was refused (or, without a
strict refusal, had other terms): every test of a pair here fails there.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from dpstats.formula import model_frame, with_formula_declarations
from dpstats.schema import Schema
from neighbours import assert_same_view, door_table, reader_view, released_masked

N = 400
ROW = 5  # the row in which the neighbours differ
FORMULA = "y ~ x1 + x2 + flag"
TERMS = ["(Intercept)", "x1", "x2", "flag"]
LM = dict(eps=2.0, delta=1e-5, bounds=(-2, 2), n_boot=100, strict=True, random_state=7)
SIS = dict(eps=2.0, k=1, bounds=(-2, 2), strict=True, random_state=7, oc_trials=0)


def base() -> pd.DataFrame:
    """D: x1, x2 in [-1, 1] (4 decimals, as a CSV export writes them), a boolean flag, y in [-2, 2]."""
    rng = np.random.default_rng(2026)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, N).round(4), "x2": rng.uniform(-1, 1, N).round(4)})
    df["flag"] = rng.uniform(size=N) < 0.5
    df["y"] = (0.5 * df.x1 - df.x2 + 0.3 * df.flag + rng.normal(0, 0.3, N)).clip(-2, 2).round(4)
    return df


def text_cell(df: pd.DataFrame, *, all_text: bool = False) -> pd.DataFrame:
    """D': row ROW's x1 is the text "?" (pandas: an object column; ``all_text``: every entry text, as a
    CSV reader that meets the "?" gives the column, for polars and DuckDB)."""
    out = df.copy()
    out["x1"] = out["x1"].astype(str) if all_text else out["x1"].astype(object)
    out.loc[ROW, "x1"] = "?"
    return out


def missing_flag(df: pd.DataFrame) -> pd.DataFrame:
    """D'': row ROW's flag is missing (pandas: the boolean column becomes an object column)."""
    out = df.copy()
    out["flag"] = out["flag"].astype(object)
    out.loc[ROW, "flag"] = None
    return out


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return base()


def view(func, data, **kwargs) -> dict:
    return reader_view(func, FORMULA, data, warning_text=released_masked, **kwargs)


# ------------------------------------------------------------------------------- every front door, pandas
DOORS = door_table(
    "x1 + x2 + flag",
    cls="yb",
    bounds=(-2, 2),
    wide=" + ".join(["x1", "x2", "flag"] + [f"z{j}" for j in range(1, 24)]),
    parties=[["x1", "x2"], ["flag"]],
    overrides={
        "dp_two_stage": {"set": {"blocks": 20}},
        "dp_bh": {"set": {"sigma": 0.5}},
        # a binomial response is declared under strict (numbers 0/1 by its bounds entry; session 16)
        "dp_glm": {
            "set": {"eps": 10.0, "bounds": {"x1": (-2, 2), "x2": (-2, 2), "flag": (-2, 2), "yb": (0, 1)}}
        },
        "vertical_glm": {"set": {"bounds": {"x1": (-2, 2), "x2": (-2, 2), "flag": (-2, 2), "yb": (0, 1)}}},
        "dp_felp": None,  # its response is a class label: tested below
    },
)


def wide(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with 23 more features (the knockoff filter's Method II needs p > 8 ln(1/delta)) and a 0/1
    response ``yb`` for the binomial doors."""
    rng = np.random.default_rng(7)
    extra = pd.DataFrame(rng.uniform(-1, 1, (len(df), 23)).round(4), columns=[f"z{j}" for j in range(1, 24)])
    return pd.concat([df, extra], axis=1).assign(yb=(df["y"] > 0).astype(float))


@pytest.mark.parametrize("neighbour", ["text cell", "missing flag"])
@pytest.mark.parametrize("name", list(DOORS))
def test_every_door_gives_neighbours_the_same_view_under_strict_with_a_pair(name, neighbour, data):
    fn, formula, kwargs, _ = DOORS[name]
    kwargs = dict(kwargs, random_state=7, strict=True)
    changed = text_cell(data) if neighbour == "text cell" else missing_flag(data)
    one = reader_view(fn, formula, wide(data), warning_text=released_masked, **kwargs)
    other = reader_view(fn, formula, wide(changed), warning_text=released_masked, **kwargs)
    assert_same_view(one, other, f"{name}, {neighbour}")  # D released (not refused), and D' as D
    assert "flagTRUE" not in one["terms"]  # the boolean is numeric (0/1), its column named after it


# ------------------------------------------------------------------------------- every route
def as_route(df: pd.DataFrame, route: str, tmp_path, tag: str):
    """``df`` as the route reads it: pandas, a CSV or Parquet file streamed, DuckDB, polars, Dask."""
    if route == "pandas":
        return df
    if route in ("csv stream", "parquet stream"):
        path = tmp_path / f"{tag}.{route.split()[0]}"
        if route == "csv stream":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path)
        return dp.engines.stream(path, chunk_rows=128)
    if route == "dask":
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(df, npartitions=3)
    if route == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(df)
    if route == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        con = duckdb.connect()
        con.register("source_frame", df)
        con.execute("create table data as select * from source_frame")
        con.unregister("source_frame")
        return con.sql("select * from data")
    raise ValueError(route)


ROUTES = ["pandas", "csv stream", "parquet stream", "duckdb", "polars", "dask"]
TYPED = ("duckdb", "polars", "parquet stream")  # a column of one type: the "?" makes all of x1 text


@pytest.mark.parametrize("neighbour", ["text cell", "missing flag"])
@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("door", ["dp_lm", "dp_sis"])
def test_every_route_gives_neighbours_the_same_view(door, route, neighbour, data, tmp_path):
    fn, kwargs = (dp.dp_lm, LM) if door == "dp_lm" else (dp.dp_sis, SIS)
    if neighbour == "text cell":
        changed = text_cell(data, all_text=route in TYPED)
    else:
        changed = missing_flag(data)
    one = view(fn, as_route(data, route, tmp_path, "d"), **kwargs)
    other = view(fn, as_route(changed, route, tmp_path, "d2"), **kwargs)
    assert_same_view(one, other, f"{door} on {route}, {neighbour}")
    assert one["terms"] == (TERMS if door == "dp_lm" else TERMS[1:])  # flag is numeric: no flagTRUE
    # the same terms and shapes as pandas' (the engine's name aside)
    pandas_view = view(fn, data, **kwargs)
    assert one["terms"] == pandas_view["terms"] and one["tidy"] == pandas_view["tidy"]


def test_the_text_is_read_as_a_number_and_the_flag_as_0_1(data):
    """The neighbours' inputs, read by the declared rule: x1's "?" is a missing value (filled by the pair's
    midpoint, 0), a text number is that number, the missing flag is missing (filled by 0) and True is 1."""
    changed = missing_flag(text_cell(data))
    changed.loc[ROW + 1, "x1"] = "0.25"
    mf = model_frame(FORMULA, changed, schema=_schema())
    X = pd.DataFrame(mf.X, columns=mf.names)
    assert mf.names == TERMS
    assert X.loc[ROW, "x1"] == 0.0 and X.loc[ROW + 1, "x1"] == 0.25 and X.loc[ROW, "flag"] == 0.0
    assert X.loc[~data.flag, "flag"].eq(0).all() and X.loc[data.flag & (X.index != ROW), "flag"].eq(1).all()


def _schema(**kwargs):
    return with_formula_declarations(Schema.declare(bounds=(-2, 2), strict=True, **kwargs), FORMULA)


def test_the_command_line_exits_alike_on_neighbours(data, tmp_path):
    """``dpstats run sis --bounds [-2, 2] --arg strict=True``: D exited 0 and D' 2 (the reproducer's CLI case)."""
    from dpstats.cli import main

    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps([-2, 2]))
    said = []
    for tag, df in (("d", data), ("d2", text_cell(data)), ("d3", missing_flag(data))):
        path = tmp_path / f"{tag}.csv"
        df.to_csv(path, index=False)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(
                [
                    "run",
                    "sis",
                    "--data",
                    str(path),
                    "--formula",
                    FORMULA,
                    "--eps",
                    "2",
                    "--bounds",
                    str(bounds),
                ]
                + ["--arg", "k=1", "--arg", "strict=True", "--seed", "1", "--quiet"]
            )
        said.append((code, err.getvalue(), re.sub(r"-?\d+\.\d+(e-?\d+)?", "#", out.getvalue())))
    assert said[0][0] == 0
    assert said[0] == said[1] == said[2]


# ------------------------------------------------------------------------------- the statement says so
def test_the_statement_lists_the_variables_numeric_by_declaration(data):
    fit = dp.dp_lm(FORMULA, data, **LM)
    listed = "Types under strict: 'y', 'x1', 'x2', 'flag' are numeric by declaration"
    assert listed in fit.privacy.plain_language()
    assert listed in " ".join(str(fit.summary()).split())  # the summary wraps the statement
    assert listed in fit.to_dict()["privacy"]["statement"]
    # without strict nothing is declared by it, and the sentence is not there
    plain = dp.dp_lm(FORMULA, data, **{**LM, "strict": False})
    assert "Types under strict" not in plain.privacy.plain_language()


def test_a_text_column_is_read_as_numbers_unless_its_levels_are_declared(data):
    """A genuinely text column under strict=True and a pair is numeric by declaration (documented in the
    README and dpstats.schema): every entry missing, filled; the statement names it among the numeric
    variables, the data-independent hint.  Declared levels, or a Categorical, make it a factor."""
    cities = np.where(np.arange(N) % 3 == 0, "York", "Leeds")
    df = data.assign(city=cities)
    formula = "y ~ x1 + city"
    fit = dp.dp_lm(formula, df, **LM)
    assert fit.terms == ["(Intercept)", "x1", "city"]
    assert "'y', 'x1', 'city' are numeric by declaration" in fit.privacy.plain_language()
    declared = dp.dp_lm(formula, df, levels={"city": ["Leeds", "York"]}, **LM)
    assert declared.terms == ["(Intercept)", "x1", "cityYork"]
    assert "'y', 'x1' are numeric by declaration" in declared.privacy.plain_language()
    typed = df.assign(city=pd.Categorical(cities, categories=["Leeds", "York"]))
    assert dp.dp_lm(formula, typed, **LM).terms == ["(Intercept)", "x1", "cityYork"]


def test_without_strict_the_text_column_stays_a_named_step(data):
    """Non-strict behaviour is unchanged: D' has x1 as a factor whose levels are read from the rows, a
    named and warned step (the reader sees the warning; strict refuses nothing now, it declares)."""
    kwargs = {**SIS, "strict": False}
    with pytest.warns(NonPrivateWarning, match="the levels of 'x1' were read from the rows"):
        fit = dp.dp_sis(FORMULA, text_cell(data), **kwargs)
    assert "x1" not in fit.terms
    assert dp.dp_sis(FORMULA, data, **kwargs).terms == ["x1", "x2", "flagTRUE"]


# ------------------------------------------------------------------------------- a mapping without an entry
@pytest.mark.parametrize("door", ["dp_lm", "dp_sis", "dp_gmm"])
def test_a_mapping_without_an_entry_gives_neighbours_one_refusal_naming_the_fix(door, data):
    """bounds={...} without x1 and flag: D was refused for x1's missing bounds, D' for x1's (or flag's)
    levels read from the rows.  Now one refusal, from the arguments alone, naming the variables."""
    bounds = {"y": (-2, 2), "x2": (-1, 1)}
    said = []
    for df in (data, text_cell(data), missing_flag(data)):
        acct = dp.Accountant(eps=100.0, delta=1e-3)
        with pytest.raises(dp.DPStatsError) as err:
            if door == "dp_gmm":
                gmm = dict(k=2, eps=2.0, delta=1e-5, strict=True, oc_trials=0)
                dp.dp_gmm("~ x1 + x2 + flag", df, bounds=bounds, accountant=acct, **gmm)
            else:
                fn, kwargs = (dp.dp_lm, LM) if door == "dp_lm" else (dp.dp_sis, SIS)
                fn(FORMULA, df, **{**kwargs, "bounds": bounds, "accountant": acct})
        said.append((type(err.value).__name__, str(err.value)))
        assert acct.spent_eps == 0
    assert said[0] == said[1] == said[2]
    assert "'x1'" in said[0][1] and "'flag'" in said[0][1]
    if door == "dp_lm":
        assert "levels={'x1': [...]}" in said[0][1]  # the fix for a categorical variable, named under strict


# ------------------------------------------------------------------------------- a categorical response
def test_felp_keeps_its_response_rule_and_refuses_neighbours_alike(data):
    """dp_felp reads its response as class labels: it is not numeric by declaration (a declared response,
    levels= or a Categorical, keeps working).  An undeclared response is refused under strict with one
    message, whether one row's "?" made it an object column or not (it was "the classes of the numeric
    response" for one and "the levels of 'cls' were read" for the other)."""
    df = data.assign(cls=(data.y > 0).astype(float))
    changed = df.assign(cls=df.cls.astype(object))
    changed.loc[ROW, "cls"] = "?"
    kwargs = dict(eps=1.0, n_estimators=2, bounds=(-2, 2), strict=True, random_state=7, oc_trials=0)
    said = []
    for d in (df, changed):
        with pytest.raises(PrivacyParameterError) as err:
            dp.dp_felp("cls ~ x1 + x2", d, **kwargs)
        said.append(str(err.value))
    assert said[0] == said[1] and "the classes of the response 'cls'" in said[0]
    fit = dp.dp_felp("cls ~ x1 + x2", df, levels={"cls": [0.0, 1.0]}, **kwargs)
    assert fit.classes == ["0.0", "1.0"]  # declared: shown
