"""Every vignette runs (at small scale, DPSTATS_QUICK=1) and ends in a report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VIGNETTES = sorted(
    p for p in (Path(__file__).parent.parent / "vignettes").glob("*.py") if not p.name.startswith("_")
)


# As in the test suite, a NonPrivateWarning is an error: a vignette that shows a data-dependent
# step catches the warning and prints it (PYTHONWARNINGS cannot name a class outside the stdlib).
RUN_STRICT = (
    "import runpy, sys, warnings; from dpstats.errors import NonPrivateWarning; "
    "warnings.simplefilter('error', NonPrivateWarning); sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs_and_writes_a_report(path, tmp_path):
    env = dict(
        os.environ,
        DPSTATS_QUICK="1",
        DPSTATS_OUT=str(tmp_path),
        MPLBACKEND="Agg",
        PYTHONPATH=str(path.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    proc = subprocess.run(
        [sys.executable, "-c", RUN_STRICT, str(path)],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    reports = list(tmp_path.glob("*.html"))
    assert reports, f"{path.name} wrote no report"
    for report in reports:
        assert "privacy-statement" in report.read_text(encoding="utf-8")
