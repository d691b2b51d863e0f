"""``python -m dpstats`` runs the command line (dpstats.cli.main), as the ``dpstats`` console script does;
before, it failed with "No module named dpstats.__main__" (outside audit round 2, suspicions)."""

from __future__ import annotations

import subprocess
import sys

import dpstats as dp


def run(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=300)


def test_python_m_dpstats_is_the_cli(tmp_path):
    helped = run("dpstats", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: dpstats")
    assert helped.stdout == run("dpstats.cli", "--help").stdout
    path = tmp_path / "data.csv"
    dp.datasets.fan_lv(n=80, d=10, random_state=4).to_csv(path, index=False)
    bounds = tmp_path / "bounds.json"
    bounds.write_text("[-4, 4]")
    args = ("run", "sis", "--data", str(path), "--formula", "y ~ .", "--eps", "1", "--arg", "k=2",
            "--bounds", str(bounds), "--seed", "3", "--json", str(tmp_path / "out.json"))  # fmt: skip
    via_main = run("dpstats", *args)
    assert via_main.returncode == 0, via_main.stderr
    assert '"selected"' in (tmp_path / "out.json").read_text()
    via_cli = run("dpstats.cli", *args)
    assert (via_main.returncode, via_main.stdout, via_main.stderr) == (
        via_cli.returncode,
        via_cli.stdout,
        via_cli.stderr,
    )
    bad = run(
        "dpstats", "run", "sis", "--data", str(tmp_path / "missing.csv"), "--formula", "y ~ .", "--eps", "1"
    )
    assert bad.returncode == 2 and "missing.csv" in bad.stderr
