"""Property-based leak test: data with random distinctive counts, every channel scanned (issue 26).

``tests/test_no_leaks.py`` checks one data set with fixed counts.  Here hypothesis draws the
private counts -- the rows of each class, the values missing, the values outside the declared
bounds -- builds the data, runs a front door (drawn too), and scans every channel a reader sees:
the warnings, ``vars(fit)``, print, summary, tidy, glance, to_dict/JSON, the HTML report, the
errors of bad calls on the same data, and the command line's stdout, stderr, ``--json`` and
``--report``.  None of the counts may appear; with ``diagnostics=True`` (the positive control)
the ones the door's diagnostics hold must.  The ranges keep the secrets apart from the public
numbers derived from n (n = rows read, its half, degrees of freedom n - p - 1); the numbers every
door prints whatever the data (95 of "95% intervals", eps, n_boot, defaults...) are derived, not
listed: every channel of every door on a neighbouring data set without missing or outside values
(:func:`public_numbers`), and no drawn secret is one of them, so a scan never fails on public text.
That the scan still fails on a real leak is shown by a door made to warn its count of missing values.
``derandomize=True``: the examples are the same on every run.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpstats import cli
from dpstats.errors import DPStatsError

import test_no_leaks as base
from data_kinds import KINDS as INPUT_KINDS, as_kind

occurring = base.occurring  # whole numbers only: not digits of a longer number or a name
rlib = base.rlib  # the R package installed into a temporary library (shared fixture)

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


RANGES = {  # the drawn counts
    "class_a": (301, 479),  # complete rows of class a
    "class_b": (801, 989),
    "missing": (51, 97),  # rows of class a with x2 missing
    "outside": (101, 199),  # values x1 = 7.5, outside (-3, 3)
}
# the neighbouring data set of public_numbers: no value missing or outside (its class sizes and n are
# in the drawn ranges, so the scan of its outputs would see them if they were shown)
PUBLIC_TWIN = {"class_a": 520, "class_b": 900, "missing": 0, "outside": 0}


@st.composite
def _drawn(draw) -> dict[str, int]:
    return {key: draw(st.integers(lo, hi)) for key, (lo, hi) in RANGES.items()}


def counts() -> st.SearchStrategy[dict[str, int]]:
    """Drawn counts none of whose secrets is a number the doors print whatever the data."""
    return _drawn().filter(lambda c: public_numbers().isdisjoint(secrets(c)))


def _possible_secrets() -> set[int]:
    """Every value a secret can take: each is a sum of drawn counts, so it lies between its values
    at the ranges' lower and upper ends."""
    low = secrets({key: lo for key, (lo, _) in RANGES.items()})
    high = secrets({key: hi for key, (_, hi) in RANGES.items()})
    return {v for a, b in zip(low, high) for v in range(a, b + 1)}


@functools.cache
def public_numbers() -> frozenset[int]:
    """The whole numbers a secret could be that some channel of some door shows on PUBLIC_TWIN, the
    data set with nothing missing or outside: public by construction (95 of "95% intervals", the row
    index 199 of dp_sis's 200 operating-characteristic trials in vars(fit)), that data set's n and
    what follows from it, or released noisy values; a drawn count equal to one would be a false
    positive."""
    data = make_data(PUBLIC_TWIN)
    possible = _possible_secrets()
    found: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="dpstats-public-") as tmp:
        for name in sorted(base.FRONT_DOORS):
            where = Path(tmp) / name
            where.mkdir()
            for text in _channels_of(name, data, where, cli=True).values():
                digits = {int(m) for m in re.findall(r"\d+", text)} & possible
                found |= occurring(digits, text)  # the scans' own rule for a whole number
    return frozenset(found)


def make_data(c: dict[str, int], seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = c["class_a"] + c["missing"] + c["class_b"]
    X = rng.uniform(-1, 1, size=(n, base.D))
    cls = np.array(["a"] * (c["class_a"] + c["missing"]) + ["b"] * c["class_b"])
    X[cls == "b", 2] += 0.6
    df = pd.DataFrame(X, columns=base.NAMES)
    df["y"] = 0.8 * X[:, 0] + 0.6 * X[:, 2] + rng.uniform(-0.5, 0.5, n)
    df["class"] = cls
    df.loc[rng.choice(np.flatnonzero(cls == "a"), c["missing"], replace=False), "x2"] = np.nan
    complete = np.flatnonzero(df["x2"].notna())
    df.loc[rng.choice(complete, c["outside"], replace=False), "x1"] = 7.5
    return df.sample(frac=1.0, random_state=1).reset_index(drop=True)


def secrets(c: dict[str, int]) -> dict[int, str]:
    """Each private count (and the n that dropping the incomplete rows would give) by value."""
    return {
        c["class_a"] + c["missing"]: "class a rows",
        c["class_b"]: "class b rows",
        c["missing"]: "missing values",
        c["outside"]: "values outside the bounds",
        c["class_a"] + c["class_b"]: "complete rows",
    }


def expected_in_diagnostics(name: str, c: dict[str, int]) -> set[int]:
    """The door's diagnostics in test_no_leaks, with its fixed counts mapped to the drawn ones."""
    fixed = {
        base.MISSING: c["missing"],
        base.OUTSIDE: c["outside"],
        base.CLASS_A + base.MISSING: c["class_a"] + c["missing"],
        base.CLASS_A: c["class_a"],
        base.CLASS_B: c["class_b"],
    }
    return {fixed[v] for v in base.FRONT_DOORS[name][3]}


def _run(name: str, data: pd.DataFrame, **extra):
    func, formula, args, _ = base.FRONT_DOORS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = func(formula, data, random_state=3, **args, **extra)
    return fit, " | ".join(str(w.message) for w in caught)


def _errors(name: str, data: pd.DataFrame) -> str:
    """The messages of bad calls on the same data (a bad eps, an unknown column)."""
    func, formula, args, _ = base.FRONT_DOORS[name]
    out = []
    for change in ({"eps": -1.0}, {"formula": formula + " + nosuchcolumn"}):
        kwargs = dict(args, random_state=3) | {k: v for k, v in change.items() if k != "formula"}
        with pytest.raises(DPStatsError) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(change.get("formula", formula), data, **kwargs)
        out.append(str(info.value))
    return " | ".join(out)


def _channels_of(name: str, data, tmp: Path, *, cli: bool) -> dict[str, str]:
    """Every channel a reader sees of the door's call on ``data``: warnings, vars(fit), print to
    report (test_no_leaks._channels), the errors of bad calls and, with ``cli``, the command line's."""
    fit, warned = _run(name, data)
    channels = base._channels(fit, tmp)
    channels["warnings"] = warned
    channels["vars(fit)"] = repr({k: v for k, v in vars(fit).items() if k != "diagnostics"})
    channels["errors"] = _errors(name, data)
    if cli:
        channels.update(_cli(name, data, tmp))
    return channels


def _leaks(values: dict[int, str], channels: dict[str, str]) -> dict[str, list[str]]:
    """The drawn counts each channel shows, by what they count."""
    found = {ch: occurring(values, text) for ch, text in channels.items()}
    return {ch: [values[v] for v in sorted(s)] for ch, s in found.items() if s}


def _assert_diagnostics_show(name: str, data, c: dict[str, int], *context) -> None:
    """The positive control: asked for, the door's diagnostics show the drawn counts."""
    asked, _ = _run(name, data, diagnostics=True)
    summary = str(asked.summary())
    shown = occurring(secrets(c), summary)
    assert expected_in_diagnostics(name, c) <= shown, (name, *context, shown)


@SETTINGS
@given(c=counts(), name=st.sampled_from(sorted(base.FRONT_DOORS)))
def test_no_channel_shows_a_drawn_count_unless_asked(c, name, tmp_path_factory):
    data = make_data(c)
    channels = _channels_of(name, data, tmp_path_factory.mktemp("leak"), cli=True)
    assert not _leaks(secrets(c), channels)
    _assert_diagnostics_show(name, data, c)


# issue 32: the same scan with the data as polars, Arrow or DuckDB data (tests/data_kinds.py); dp_lm and
# dp_sis's numeric formulas run inside DuckDB by SQL there, whose counts of filled and clipped values are
# the diagnostics of the positive control.  The command line reads files, so it is not run here.
@pytest.mark.parametrize("kind", INPUT_KINDS)
@settings(SETTINGS, max_examples=4)
@given(c=counts(), name=st.sampled_from(["dp_lm", "dp_sis"]))
def test_no_channel_shows_a_drawn_count_for_any_input_type(kind, c, name, tmp_path_factory):
    data = as_kind(make_data(c), kind)
    channels = _channels_of(name, data, tmp_path_factory.mktemp("leak"), cli=False)
    assert not _leaks(secrets(c), channels)
    _assert_diagnostics_show(name, data, c, kind)


@settings(SETTINGS, max_examples=200)
@given(c=counts())
def test_drawn_counts_are_never_public_numbers(c):
    """No secret a scan looks for is a number the doors show on data without one (dp_lm's "95%
    intervals" in its report made missing = 95 a false positive of the old strategy)."""
    assert public_numbers().isdisjoint(secrets(c)), sorted(public_numbers() & set(secrets(c)))


def test_public_numbers_are_derived_from_the_outputs():
    """The derived set holds the constants the doors print (95, the level of the intervals in dp_lm's
    report; 199, the last row of dp_sis's 200 operating-characteristic trials) and the twin's public
    n, and none of the twin's private counts (that would be a leak of its own)."""
    public = public_numbers()
    twin = PUBLIC_TWIN
    assert {95, 199, twin["class_a"] + twin["class_b"]} <= public, sorted(public)
    assert not public & {twin["class_a"], twin["class_b"]}, sorted(public)


@settings(SETTINGS, max_examples=3)
@given(c=counts())
def test_the_scan_finds_a_count_planted_in_a_warning(c, tmp_path_factory):
    """The scan can fail: a door that warns how many x2 values were missing is caught, by value."""
    func, formula, args, diag = base.FRONT_DOORS["dp_lm"]

    def leaky(formula, data, **kwargs):
        warnings.warn(f"{int(data['x2'].isna().sum())} values of x2 were filled", UserWarning, stacklevel=2)
        return func(formula, data, **kwargs)

    with mock.patch.dict(base.FRONT_DOORS, dp_lm=(leaky, formula, args, diag)):
        channels = _channels_of("dp_lm", make_data(c), tmp_path_factory.mktemp("planted"), cli=False)
    assert _leaks(secrets(c), channels) == {"warnings": ["missing values"]}


def _cli(name: str, data: pd.DataFrame, tmp: Path) -> dict[str, str]:
    """The command line's stdout, stderr, --json and --report for the same call."""
    csv = tmp / "data.csv"
    data.to_csv(csv, index=False)
    argv = base._cli_args(name, csv, tmp / "bounds.json", tmp)
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(record=True) as caught,  # the program shows these on stderr
    ):
        warnings.simplefilter("always")
        code = cli.main(argv)
    assert code == 0, err.getvalue()[-2000:]
    return {
        "cli stdout": out.getvalue(),
        "cli stderr": err.getvalue() + " | ".join(str(w.message) for w in caught),
        "cli --json": (tmp / "fit.json").read_text(encoding="utf-8"),
        "cli --report": (tmp / "fit.html").read_text(encoding="utf-8"),
    }


def test_occurring_finds_whole_numbers_only():
    assert occurring({417, 63}, "417 rows; x417; 0.417; 63.5; 4170; 63") == {417, 63}


R_CONDITIONS = """
suppressPackageStartupMessages(library(dpstats))
df <- read.csv(commandArgs(TRUE)[[1]])
said <- character()
keep <- function(expr) withCallingHandlers(
  tryCatch(expr, error = function(e) said <<- c(said, paste("ERROR", conditionMessage(e)))),
  warning = function(w) { said <<- c(said, paste("WARNING", conditionMessage(w))); invokeRestart("muffleWarning") })
# a text column without declared levels (warned), missing and outside values (filled, clipped)
keep(dp_sis(y ~ x1 + x2 + x3 + class, data = df, eps = 1, k = 1, bounds = c(-3, 3), seed = 1))
keep(dp_lm(y ~ x1 + x2, data = df, eps = -1, bounds = c(-3, 3)))
keep(dp_sis(y ~ x1 + nosuchcolumn, data = df, eps = 1, k = 1, bounds = c(-3, 3)))
keep(dp_felp(class ~ x1 + x2, data = df, eps = 1, n_estimators = 2L, bounds = c(-3, 3), seed = 1))
keep(dp_sis(y ~ x1 + x2, data = df, eps = 1, k = 1, bounds = c(-3, 3), na.action = na.omit, seed = 1))
cat(paste("CONDITION", said), sep = "\\n")
"""


@pytest.mark.r
@settings(max_examples=2, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(c=counts())
def test_r_conditions_show_no_drawn_count(c, rscript, rlib, tmp_path_factory):
    """R's warnings and errors, for calls that warn (undeclared levels, na.omit) and fail."""
    import test_r_package as r_package

    tmp = tmp_path_factory.mktemp("rcond")
    make_data(c).to_csv(tmp / "data.csv", index=False)
    (tmp / "conditions.R").write_text(R_CONDITIONS)
    res = r_package._run(
        [rscript, str(tmp / "conditions.R"), str(tmp / "data.csv")], r_package._env(rlib), tmp
    )
    said = [ln for ln in res.stdout.splitlines() if ln.startswith("CONDITION")]
    assert any("ERROR" in ln for ln in said) and any("WARNING" in ln for ln in said), res.stdout[-2000:]
    values = secrets(c)
    assert not occurring(values, "\n".join(said)), [values[v] for v in occurring(values, "\n".join(said))]
