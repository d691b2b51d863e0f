"""Progress bars show no count where n is private (audit s15-attack8 F03).

Under ``neighbouring="add_remove"`` n is private, but the streamed pass's tqdm bar showed the rows read
out of the file's row count on stderr ("0.00/999" against "0.00/1.00k").  Neighbours here are a data
set and the same without its first row, run with the same seed: under add/remove stderr must be the
same bytes and show no number; under replace (n public) the bar may count the rows, and does.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.cli import main

N = 1000
BOUNDS = {"x1": (-1, 1), "x2": (-1, 1), "y": (-2, 2)}
# A time or a rate as tqdm draws them: "[00:01<00:10", "1.18s/it", "4.94it/s", "3.2krows/s"
TIME_OR_RATE = re.compile(r"\d\d:\d\d|s/\w|\w/s\b")


def _neighbours() -> list[pd.DataFrame]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, N), "x2": rng.uniform(-1, 1, N)})
    df["y"] = (0.5 * df.x1 - df.x2 + rng.normal(0, 0.3, N)).clip(-2, 2)
    df["g"] = rng.choice(["a", "b"], N)
    return [df, df.iloc[1:].reset_index(drop=True)]


def _cli_stderr(tmp_path, capsys, data: pd.DataFrame, suffix: str, neighbouring: str) -> str:
    path = tmp_path / f"d.{suffix}"
    data.to_parquet(path) if suffix == "parquet" else data.to_csv(path, index=False)
    (tmp_path / "b.json").write_text(json.dumps(BOUNDS))
    args = ["run", "sis", "--data", str(path), "--formula", "y ~ x1 + x2", "--eps", "2", "--stream"]
    args += ["--bounds", str(tmp_path / "b.json"), "--arg", "k=1", "--arg", "strict=True", "--seed", "1"]
    assert main(args + ["--arg", f"neighbouring={neighbouring!r}"]) == 0
    return capsys.readouterr().err


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_cli_stream_under_add_remove_shows_no_count(tmp_path, capsys, suffix):
    err = [_cli_stderr(tmp_path, capsys, d, suffix, "add_remove") for d in _neighbours()]
    assert err[0] == err[1]
    assert "pass over" in err[0] and "n is private: no count shown" in err[0]
    assert not re.search(r"\d", err[0]), err[0]


def test_cli_stream_under_replace_counts_the_rows(tmp_path, capsys):
    err = [_cli_stderr(tmp_path, capsys, d, "parquet", "replace") for d in _neighbours()]
    assert "0.00/1.00k" in err[0] and "0.00/999" in err[1]  # n is public: the bar may show it
    assert not TIME_OR_RATE.search(err[0])  # but not the time the rows took (dpstats._progress)


def _quiet_fit(data, neighbouring: str):
    kw = dict(eps=2.0, k=1, bounds=BOUNDS, levels={"g": ["a", "b"]}, random_state=1, strict=True)
    return dp.dp_sis("y ~ x1 + x2 + g", data=data, neighbouring=neighbouring, **kw)


def test_duckdb_batches_under_add_remove_show_no_count(capsys):
    """A design with a factor goes through DuckDB's record batches, whose bar counted the rows read."""
    duckdb = pytest.importorskip("duckdb")
    errs = {}
    for neighbouring in ("add_remove", "replace"):
        errs[neighbouring] = []
        for df in _neighbours():
            con = duckdb.connect()
            con.register("d", df)
            _quiet_fit(dp.engines.on_duckdb((con, "d"), progress=True), neighbouring)
            errs[neighbouring].append(capsys.readouterr().err)
    assert errs["add_remove"][0] == errs["add_remove"][1] and "no count shown" in errs["add_remove"][0]
    assert not re.search(r"\d", errs["add_remove"][0])
    assert "1.00k/? rows" in errs["replace"][0]  # n public: the bar counts the rows read
    assert not TIME_OR_RATE.search(errs["replace"][0])  # ... and shows no time (dpstats._progress)


def test_dask_under_add_remove_shows_no_count(capsys):
    pytest.importorskip("dask.dataframe")
    import dask.dataframe as dd

    for df in _neighbours():
        _quiet_fit(dp.engines.on_dask(dd.from_pandas(df, npartitions=3), progress=True), "add_remove")
        err = capsys.readouterr().err
        assert "no count shown" in err and not re.search(r"\d", err), err
    _quiet_fit(dp.engines.on_dask(dd.from_pandas(_neighbours()[0], npartitions=3), progress=True), "replace")
    err = capsys.readouterr().err
    assert re.search(r"\d+/\d+ tasks", err) and not TIME_OR_RATE.search(err)  # n public: tasks counted


GMM = dict(k=2, eps=2.0, delta=1e-4, bounds=(-1, 1), method="sample_aggregate", groups=10, oc_trials=0)
TWO_STAGE = dict(eps=2.0, k=1, blocks=5, bounds=BOUNDS, oc_trials=0)
FELP = dict(
    eps=1.0, n_estimators=4, variant="strict", levels={"class": ["a", "b"]}, bounds=BOUNDS, oc_trials=0
)
VERTICAL = dict(parties=[["x1"], ["x2"]], penalty="ridge", lam=0.1, eps=1.0, delta=1e-5, bounds=BOUNDS)
DOOR_BARS = {  # door -> (formula, arguments, neighbouring, the public count its bar shows)
    "dp_gmm": ("~ x1 + x2", GMM, "add_remove", "10/10"),  # groups
    "dp_two_stage": ("y ~ x1 + x2", TWO_STAGE, "add_remove", "5/5"),  # blocks
    "dp_felp": ("class ~ x1 + x2", FELP, "replace", "4/4"),  # learners (dp_felp: replace only)
    "vertical_glm": ("y ~ x1 + x2", VERTICAL, "replace", "10/10"),  # sweeps (DP mode: replace only)
}


def _door_neighbours(neighbouring: str) -> list[pd.DataFrame]:
    """The data and a neighbour: without its first row (add/remove), or that row replaced (replace)."""
    df = _neighbours()[0].assign(**{"class": lambda d: np.where(d.y > 0, "a", "b")})
    other = df.iloc[1:] if neighbouring == "add_remove" else pd.concat([df.iloc[[-1]], df.iloc[1:]])
    return [df, other.reset_index(drop=True)]


@pytest.mark.filterwarnings("ignore")  # released values in warnings are not the bar's business
@pytest.mark.parametrize("name", sorted(DOOR_BARS))
def test_a_doors_bar_shows_its_public_count_and_no_time(name, capsys):
    """A door's bar over groups, blocks, learners or sweeps (a public count) shows that count and
    neither time nor rate (dpstats._progress): the time an item takes grows with n (private under
    add/remove) and varies with the rows.  It redraws per item, not on a clock, so two neighbours
    write the same bytes; the old bars wrote "[00:00<00:01, 4.94it/s]" and redrew when time said."""
    formula, kwargs, neighbouring, count = DOOR_BARS[name]
    kwargs = dict(random_state=1, progress=True) | kwargs
    errs = []
    for data in _door_neighbours(neighbouring):
        getattr(dp, name)(formula, data, neighbouring=neighbouring, **kwargs)
        errs.append(capsys.readouterr().err)
    assert count in errs[0] and not TIME_OR_RATE.search(errs[0]), errs[0]
    assert errs[0] == errs[1]


def test_a_bar_writes_the_same_bytes_however_long_its_items_take(capsys):
    import time

    from dpstats._progress import progress_bar

    drawn = []
    for pause in (0.0, 0.15):
        with progress_bar(True, 3, "items") as bar:
            for _ in range(3):
                time.sleep(pause)
                bar.update(1)
        drawn.append(capsys.readouterr().err)
    assert drawn[0] == drawn[1] and "3/3" in drawn[0] and not TIME_OR_RATE.search(drawn[0])
