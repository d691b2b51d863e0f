"""The command line: success, bad input (exit 2, message on stderr), no partial files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dpstats as dp


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "dpstats.cli", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture
def data_csv(tmp_path):
    df = dp.datasets.fan_lv(n=80, d=30, random_state=4)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_run_sis_writes_report_and_json(tmp_path, data_csv):
    bounds = tmp_path / "bounds.json"
    bounds.write_text("[-4, 4]")
    proc = run(
        "run",
        "sis",
        "--data",
        str(data_csv),
        "--formula",
        "y ~ .",
        "--eps",
        "1",
        "--bounds",
        str(bounds),
        "--seed",
        "3",
        "--arg",
        "k=4",
        "--arg",
        "oc_trials=5",
        "--report",
        str(tmp_path / "out.html"),
        "--json",
        str(tmp_path / "out.json"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Selected 4 of 30" in proc.stdout
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["method"] == "dp_sis" and len(out["outputs"]["selected"]) == 4
    assert out["privacy"]["seeded"] is True
    assert "privacy-statement" in (tmp_path / "out.html").read_text()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--eps", "-1"], "eps must be a positive"),
        (["--eps", "1", "--formula", "y ~ nope"], "'nope'"),
        (["--eps", "1", "--arg", "k=1000"], "k = 1000"),
    ],
)
def test_bad_input_exits_2_without_files(tmp_path, data_csv, args, message):
    full = [
        "run",
        "sis",
        "--data",
        str(data_csv),
        "--report",
        str(tmp_path / "r.html"),
        "--json",
        str(tmp_path / "r.json"),
    ]
    if "--formula" not in args:
        full += ["--formula", "y ~ ."]
    proc = run(*full, *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and proc.stderr.startswith("dpstats: error:")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


def test_missing_data_file_exits_2(tmp_path):
    proc = run("run", "sis", "--data", str(tmp_path / "nope.csv"), "--formula", "y ~ .", "--eps", "1")
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_parquet_input(tmp_path):
    df = dp.datasets.fan_lv(n=80, d=30, random_state=4)
    path = tmp_path / "data.parquet"
    df.to_parquet(path)
    proc = run(
        "--quiet",
        "run",
        "sis",
        "--data",
        str(path),
        "--formula",
        "y ~ .",
        "--eps",
        "1",
        "--arg",
        "k=3",
        "--arg",
        "oc_trials=0",
        "--json",
        str(tmp_path / "o.json"),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o.json").read_text())["privacy"]["data_dependent_steps"]


def test_streamed_parquet_equals_in_memory(tmp_path):
    df = dp.datasets.fan_lv(n=300, d=30, random_state=5)
    path = tmp_path / "data.parquet"
    df.to_parquet(path)
    outs = []
    for extra in ([], ["--stream"]):
        out = tmp_path / f"o{len(outs)}.json"
        proc = run(
            "--quiet",
            "run",
            "sis",
            "--data",
            str(path),
            "--formula",
            "y ~ .",
            "--eps",
            "5",
            "--arg",
            "k=4",
            "--arg",
            "oc_trials=0",
            "--arg",
            "bounds=(-4.5, 4.5)",
            "--seed",
            "2",
            *extra,
            "--json",
            str(out),
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(out.read_text()))
    assert outs[0]["outputs"]["selected"] == outs[1]["outputs"]["selected"]
