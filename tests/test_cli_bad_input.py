"""CLI bad input found by the newcomer audit (s14, findings 2 and 6), through a subprocess: an unknown
--arg key and an output path whose folder is missing exit 2 with one line, before any data is read
(nothing printed, nothing written); --help lists party and describes --data, --eps, --delta, --seed."""

import subprocess
import sys
from pathlib import Path

import pytest

import dpstats as dp

ROOT = Path(__file__).resolve().parents[1]


def _dpstats(*args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "dpstats", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    dp.datasets.fan_lv(n=200, d=30, random_state=1).to_csv(d / "data.csv", index=False)
    (d / "bounds.json").write_text("[-4.5, 4.5]")
    return d


def _run_sis(files, *extra: str) -> subprocess.CompletedProcess:
    data, bounds = str(files / "data.csv"), str(files / "bounds.json")
    return _dpstats(
        "run", "sis", "--data", data, "--formula", "y ~ .", "--eps", "1", "--bounds", bounds, *extra
    )


def test_unknown_arg_is_exit_2_with_did_you_mean(files):
    out = _run_sis(files, "--arg", "kk=5")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "dpstats: error: --arg kk=...: dp_sis() has no argument 'kk'; did you mean 'k'?"
    ]


@pytest.mark.parametrize("flag", ["--json", "--report"])
def test_missing_output_folder_is_refused_before_the_fit(files, flag):
    """Before the fix the analysis ran and printed its release, then failed with a traceback."""
    target = files / "missing_dir" / "out.x"
    out = _run_sis(files, "--arg", "k=5", flag, str(target))
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "does not exist" in out.stderr
    assert not (files / "missing_dir").exists()


def test_output_path_that_is_a_folder_is_refused(files):
    out = _run_sis(files, "--arg", "k=5", "--json", str(files))
    assert out.returncode == 2 and out.stdout == "" and "is a folder" in out.stderr


def test_a_good_call_still_writes_its_json(files):
    target = files / "ok.json"
    out = _run_sis(files, "--arg", "k=5", "--json", str(target), "--seed", "1")
    assert out.returncode == 0 and target.exists()


def test_plan_and_simulate_check_their_arg_names_too():
    plan = _dpstats("plan", "sis", "--n", "100", "--p", "50", "--eps", "1", "--arg", "kk=3")
    assert plan.returncode == 2 and "did you mean 'k'?" in plan.stderr and plan.stdout == ""


def test_help_lists_party_and_describes_the_core_options():
    top = _dpstats("--help")
    assert "party" in top.stdout.splitlines()[0]
    run = _dpstats("run", "--help").stdout
    for flag in ("--data", "--eps", "--delta", "--seed"):
        line = next(ln for ln in run.splitlines() if ln.strip().startswith(flag + " "))
        assert len(line.split()) > 2, line  # a description follows the metavar
    assert (
        "delta = 0" in run and "Laplace" in run and "glm refuses" in run.replace("\n", " ").replace("  ", " ")
    )
    assert _dpstats("--quiet", "party", "--help").stdout.startswith("usage: dpstats party")
