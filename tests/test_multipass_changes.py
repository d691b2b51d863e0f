"""A source that changes between the passes of one call: refused, and the accounting says what was spent.

Streamed dp_glm reads its data once for the frame and once per noisy Newton step after the charge
(``engines.RowPasses``); dp_sis without bounds reads it twice before the charge.  A file rewritten
between two passes is refused before the next pass reads it (``engines.fingerprint``: size,
modification time and inode recorded at the call's first pass) with a text that names the file,
says "Nothing was spent", and is true: the charge taken before the release passes is withdrawn
(``privacy.reservation``, where the argument is).  A later pass that fails for another reason (a
DuckDB table dropped, a LazyFrame's file rewritten: sources without a fingerprint), or that gives
another number of rows than the first (rows added to a table), keeps its charge, and the text says
exactly what was spent instead of "Nothing was spent".  Neighbouring data sets give
the same texts.  An unchanged file releases exactly what it released before this change: the
coefficients below were recorded with the code before it (commit e1bedbc), seed 7, and must agree to
1e-12 (the same arithmetic in the same order; measured: equal bit for bit).

The rewrite is made by a hook between two passes (``RowPasses.reduce`` or a source's ``statistics``
wrapped), as another process writing the file would make it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import dpstats as dp
from dpstats import engines
from dpstats.errors import DataError, NonPrivateWarning
from dpstats.methods.glm import PILOT_STEPS
from dpstats.privacy.accountant import Accountant

N = 4000
BOUNDS = {"x1": (-1, 1), "x2": (-1, 1)}
FIT = dict(eps=2.0, delta=1e-6, bounds=BOUNDS, random_state=7)
# the binomial release's passes: the start's count of successes, the pilot's steps, then the refinement's
# score, the final Hessian and the final score
LAST = 1 + PILOT_STEPS + 3
# recorded with the code before this change (commit e1bedbc), y ~ x1 + x2 on frame(0), stream of chunks of 1000
BEFORE = {
    "parquet": [0.16628198968911978, 1.052390266188674, -1.0117344245551665],
    "csv": [0.16628198968911978, 1.052390266188674, -1.0117344245551663],
}


def frame(neighbour: bool = False) -> pd.DataFrame:
    """The data set; ``neighbour``: its first row replaced (a neighbouring data set)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, N), "x2": rng.uniform(-1, 1, N)})
    df["y"] = (rng.random(N) < expit(0.2 + df.x1 - df.x2)).astype(float)
    if neighbour:
        df.loc[0, ["x1", "x2", "y"]] = [0.99, -0.99, 1.0 - df.loc[0, "y"]]
    return df


def write(df: pd.DataFrame, path) -> None:
    if str(path).endswith(".csv"):
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, row_group_size=1000)


def rewritten(df: pd.DataFrame) -> pd.DataFrame:
    """What the other process writes: the same columns, other values (x1's sign flipped)."""
    return df.assign(x1=-df.x1)


def hook(monkeypatch, k: int, action) -> dict:
    """``action()`` just before the k-th pass of ``RowPasses.reduce`` (1: the first after the frame's);
    returns the count of passes made."""
    original = engines.RowPasses.reduce
    calls = {"n": 0}

    def reduce(self, fn, *args):
        calls["n"] += 1
        if calls["n"] == k:
            action()
        return original(self, fn, *args)

    monkeypatch.setattr(engines.RowPasses, "reduce", reduce)
    return calls


def rewrite_before_pass(monkeypatch, k: int, path, df: pd.DataFrame) -> dict:
    """Rewrite the file (:func:`rewritten`) just before the k-th pass of ``RowPasses.reduce``."""
    return hook(monkeypatch, k, lambda: write(rewritten(df), path))


def glm(path, accountant=None, **kw):
    data = engines.stream(path, chunk_rows=1000)
    return dp.dp_glm("y ~ x1 + x2", data, accountant=accountant, **(FIT | kw))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_unchanged_file_releases_exactly_as_before(tmp_path, monkeypatch, fmt):
    path = tmp_path / f"d.{fmt}"
    write(frame(), path)
    passes = hook(monkeypatch, 0, lambda: None)  # counts them
    acc = Accountant(eps=5.0, delta=1e-5)
    fit = glm(path, acc)
    assert passes["n"] == LAST
    np.testing.assert_allclose(fit.coefficients, BEFORE[fmt], rtol=0, atol=1e-12)
    assert (
        len(acc.charges) == 1
        and acc.spent_eps == pytest.approx(2.0)
        and acc.spent_delta == pytest.approx(1e-6)
    )


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("k", [1, 4, LAST])  # the first pass after the charge, one in the pilot, the last
def test_a_file_rewritten_between_newton_passes_is_refused_and_nothing_is_spent(
    tmp_path, monkeypatch, fmt, k
):
    """The old code read the rewritten rows in the passes that followed and released a fit of two data
    sets mixed (x1's coefficient near -1 instead of 1), with its charge: no error at all."""
    path = tmp_path / f"d.{fmt}"
    df = frame()
    write(df, path)
    calls = rewrite_before_pass(monkeypatch, k, path, df)
    acc = Accountant(eps=5.0, delta=1e-5)
    with pytest.raises(
        DataError, match=f"data file 'd.{fmt}' changed while this analysis was reading it"
    ) as info:
        glm(path, acc)
    text = str(info.value)
    assert type(info.value).__name__ == "SourceChangedError" and calls["n"] == k
    assert "Nothing was spent." in text and "charge" not in text
    assert acc.charges == [] and acc.spent_eps == 0 and acc.spent_delta == 0  # what the text says
    assert not any(ch.isdigit() for ch in text), text  # no size, time, count or row


def test_the_withdrawn_charge_frees_its_session_slot_for_the_rerun(tmp_path, monkeypatch):
    path = tmp_path / "d.parquet"
    df = frame()
    write(df, path)
    session = dp.SessionPlan(eps=4.0, delta=2e-6)
    slots = session.gaussian_fits(2, calibration="gaussian")
    acc = session.accountant()
    rewrite_before_pass(monkeypatch, 3, path, df)
    with pytest.raises(DataError, match="changed while this analysis.*Nothing was spent"):
        glm(path, acc, eps=slots[0].eps, delta=slots[0].delta)
    assert [s.used_by for s in slots] == [None, None] and acc.charges == [] and acc.spent_eps == 0
    monkeypatch.undo()
    # the rerun reads the file as rewritten, unchanged from now on, and fills the freed slot
    fit = glm(path, acc, eps=slots[0].eps, delta=slots[0].delta)
    assert [s.used_by for s in slots] == ["dp_glm", None] and len(acc.charges) == 1
    assert fit.privacy.ledger == acc.ledger


def test_a_change_during_the_last_pass_is_seen_when_it_ends(tmp_path, monkeypatch):
    """The rewrite comes after the last pass has started (inside its first chunk): the check at the pass's
    end (or the pass's own failure on the changed file) refuses it; nothing is released or spent."""
    path = tmp_path / "d.parquet"
    df = frame()
    write(df, path)
    calls = {"n": 0}
    original = engines.RowPasses.reduce

    def reduce(self, fn, *args):
        calls["n"] += 1
        if calls["n"] != LAST:
            return original(self, fn, *args)
        done = {"written": False}

        def first_chunk_rewrites(chunk):
            if not done["written"]:
                write(rewritten(df), path)
                done["written"] = True
            return fn(chunk)

        return original(self, first_chunk_rewrites, *args)

    monkeypatch.setattr(engines.RowPasses, "reduce", reduce)
    acc = Accountant(eps=5.0, delta=1e-5)
    with pytest.raises(DataError, match="'d.parquet' changed while.*Nothing was spent"):
        glm(path, acc)
    assert calls["n"] == LAST and acc.charges == []


def test_a_file_rewritten_between_dp_sis_s_two_passes_before_the_charge(tmp_path, monkeypatch):
    """dp_sis without bounds: a pass for each column's largest |value| (the max-abs scaling), then the
    statistics (Parquet's column route), both before the charge.  The old code scaled the new rows by the
    old rows' maxima and released the selection."""
    path = tmp_path / "d.parquet"
    df = frame()
    write(df, path)
    original = engines.Stream.statistics
    calls = {"n": 0}

    def statistics(self, layout, transform):
        calls["n"] += 1
        if calls["n"] == 2:
            write(rewritten(df) * 3.0, path)
        return original(self, layout, transform)

    monkeypatch.setattr(engines.Stream, "statistics", statistics)
    acc = Accountant(eps=5.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        with pytest.raises(DataError, match="'d.parquet' changed while.*Nothing was spent"):
            dp.dp_sis("y ~ x1 + x2", engines.stream(path), eps=1.0, k=1, accountant=acc, random_state=1)
    assert acc.charges == [] and calls["n"] == 2


def test_the_diagnostics_pass_after_the_release_does_not_count_a_changed_file(tmp_path, monkeypatch):
    """The release has been made and its charge stands; the non-private count of values clipped would be
    another data set's, so it is not computed (the old code counted the new file's rows)."""
    import dpstats.methods.glm as glm_method

    path = tmp_path / "d.parquet"
    df = frame()
    write(df.assign(x1=df.x1 * 1.5), path)  # some values beyond the bounds: a count to make
    original = glm_method.diagnostics

    def diagnostics(fr, options):
        write(rewritten(df), path)
        return original(fr, options)

    monkeypatch.setattr(glm_method, "diagnostics", diagnostics)
    acc = Accountant(eps=5.0, delta=1e-5)
    fit = glm(path, acc, diagnostics=True)
    assert (
        fit.diagnostics["values_clipped"] == "not computed: the data file changed after the release was made"
    )
    assert len(acc.charges) == 1 and fit.privacy.ledger == acc.ledger


def test_row_passes_used_directly_check_the_file_of_their_first_pass(tmp_path):
    path = tmp_path / "d.parquet"
    df = frame()
    write(df, path)
    mf, _, passes = engines.row_passes("y ~ x1", engines.stream(path, chunk_rows=1000), drop_intercept=False)
    assert passes.reduce(lambda ch: ch.X.shape[0]) == N
    write(rewritten(df), path)
    with pytest.raises(DataError, match="'d.parquet' changed while this analysis was reading it"):
        passes.reduce(lambda ch: ch.X.shape[0])


def test_a_folder_read_by_dask_with_a_file_added_between_passes(tmp_path, monkeypatch):
    folder = tmp_path / "parts"
    folder.mkdir()
    df = frame()
    write(df.iloc[:2000], folder / "a.parquet")
    write(df.iloc[2000:], folder / "b.parquet")
    hook(monkeypatch, 2, lambda: write(rewritten(df.iloc[:10]), folder / "c.parquet"))
    acc = Accountant(eps=5.0, delta=1e-5)
    with pytest.raises(DataError, match="data file 'c.parquet' changed while.*Nothing was spent"):
        dp.dp_glm("y ~ x1 + x2", engines.on_dask(str(folder)), accountant=acc, **FIT)
    assert acc.charges == []


# ------------------------------------------------------------------ later passes that fail for other reasons
READER = "could not evaluate the query"  # a reader's failure, named without its message
OTHER_ROWS = "gave other rows on a pass than on the analysis's first pass over it"


def _duckdb_table(df: pd.DataFrame, statement: str, monkeypatch, k: int = 3):
    """A DuckDB relation over a table that ``statement`` changes before the k-th pass (another
    connection's statement, as far as the call can tell)."""
    import duckdb

    con = duckdb.connect()
    con.register("frame_view", df)
    con.execute("create table t as select * from frame_view")
    con.unregister("frame_view")
    hook(monkeypatch, k, lambda: con.execute(statement))
    return con.sql("select * from t")


def _dropped_table(df, path, monkeypatch):
    return _duckdb_table(df, "drop table t", monkeypatch)


def _rows_added(df, path, monkeypatch):
    return _duckdb_table(df, "insert into t select * from t limit 100", monkeypatch)


def _lazy_frame_of_a_rewritten_file(df: pd.DataFrame, path, monkeypatch):
    """A polars LazyFrame scanning a file that is rewritten with fewer rows (a query: no fingerprint).
    polars then either fails or (2.1) ends the pass early, its reader's threads panicking on the
    shorter file: both are refused, the second by the count of rows."""
    import polars as pl

    write(df, path)
    hook(monkeypatch, 3, lambda: write(df.iloc[:1000], path))
    return pl.scan_parquet(path)


FAILING = {
    "DuckDB table dropped": (_dropped_table, (READER,)),
    "DuckDB rows added": (_rows_added, (OTHER_ROWS,)),
    "LazyFrame's file rewritten": (_lazy_frame_of_a_rewritten_file, (READER, OTHER_ROWS)),
}


@pytest.mark.parametrize("source", list(FAILING))
def test_a_later_pass_that_fails_says_exactly_what_was_spent(tmp_path, monkeypatch, source):
    """The query fails or gives other rows on its third run, after the charge: the charge stands (whether it
    fails may depend on the rows), and the text says it.  The old code said "Nothing was spent" with the
    charge on the ledger (a dropped table), or released a fit of two data sets mixed (rows added)."""
    acc = Accountant(eps=5.0, delta=1e-5)
    make, said = FAILING[source]
    data = make(frame(), tmp_path / "d.parquet", monkeypatch)
    with pytest.raises(DataError) as info:
        dp.dp_glm("y ~ x1 + x2", data, accountant=acc, **FIT)
    text = str(info.value)
    assert "Nothing was spent" not in text and any(words in text for words in said), text
    assert text.endswith(
        "dp_glm's charge of (eps = 2, delta = 1e-06) to the accountant stands: it is spent, as its release had "
        "begun drawing noise from the rows before this error, and no result was returned."
    )
    assert len(acc.charges) == 1 and acc.charges[0].label == "dp_glm"
    assert (acc.charges[0].eps, acc.charges[0].delta) == pytest.approx((2.0, 1e-6), rel=1e-12)


def test_a_query_changed_before_the_diagnostics_pass_costs_the_count_not_the_fit(monkeypatch):
    """Rows added to a DuckDB table after the release's last pass: the diagnostics pass sees another number
    of rows and the count is not computed; the fit, whose charge stands, is returned."""
    acc = Accountant(eps=5.0, delta=1e-5)
    data = _duckdb_table(frame(), "insert into t select * from t limit 100", monkeypatch, k=LAST + 1)
    fit = dp.dp_glm("y ~ x1 + x2", data, accountant=acc, diagnostics=True, **FIT)
    assert fit.diagnostics["values_clipped"] == "not computed: the pass failed after the release was made"
    assert len(acc.charges) == 1 and fit.privacy.ledger == acc.ledger


# ------------------------------------------------------------------ neighbouring data sets: the same texts
def _message(tmp_path, monkeypatch, neighbour: bool, case: str) -> str:
    df = frame(neighbour)
    folder = tmp_path / f"{case}-{neighbour}"
    folder.mkdir()
    acc = Accountant(eps=5.0, delta=1e-5)
    if case == "file rewritten":
        path = folder / "d.parquet"
        write(df, path)
        rewrite_before_pass(monkeypatch, 4, path, df)
        data = engines.stream(path, chunk_rows=1000)
    else:
        data = FAILING[case][0](df, folder / "d.parquet", monkeypatch)
    with pytest.raises(DataError) as info:
        dp.dp_glm("y ~ x1 + x2", data, accountant=acc, **FIT)
    monkeypatch.undo()
    return str(info.value)


@pytest.mark.parametrize("case", ["file rewritten", *FAILING])
def test_neighbouring_data_sets_give_the_same_messages(tmp_path, monkeypatch, case):
    texts = {_message(tmp_path, monkeypatch, neighbour, case) for neighbour in (False, True)}
    assert len(texts) == 1, texts


# ------------------------------------------------------------------ the reservation itself
def test_a_change_after_the_release_was_made_no_longer_withdraws_the_charge():
    from dpstats.errors import SourceChangedError
    from dpstats.privacy.accountant import LedgerEntry
    from dpstats.privacy.reservation import Reservation

    acc = Accountant(eps=3.0, delta=1e-5, composition="zcdp")
    entries = [
        LedgerEntry("a sum", "Gaussian", 1.0, 1e-6, event={"kind": "gaussian", "noise_multiplier": 2.0})
    ]
    first = Reservation.take(acc, entries, "first")
    with pytest.raises(SourceChangedError):
        with first.held():
            raise SourceChangedError("data file 'd.csv' changed ... Nothing was spent.")
    assert acc.charges == [] and acc.spent_rho == 0  # the zCDP filter's ρ is given back
    second = Reservation.take(acc, entries, "second")
    with pytest.raises(SourceChangedError) as info:
        with second.held():
            second.made("the release")
            raise SourceChangedError("data file 'd.csv' changed ... Nothing was spent.")
    assert [c.label for c in acc.charges] == ["second"]
    assert str(info.value) == (
        "data file 'd.csv' changed ... second's charge of (eps = 1, delta = 1e-06) to the accountant stands: it "
        "is spent, as its release had begun drawing noise from the rows before this error, and no result was "
        "returned."
    )
