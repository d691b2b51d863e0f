"""Run an R script as a test's oracle and read the JSON it writes (tests that compare with R)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def run_r_json(rscript: str, out: Path, script: str) -> dict:
    """Run the R ``script`` with the folder ``out`` as its argument (its inputs written there first)
    and read the ``r.json`` it writes there."""
    (out / "a.R").write_text(script)
    subprocess.run([rscript, str(out / "a.R"), str(out)], check=True, capture_output=True, timeout=120)
    return json.loads((out / "r.json").read_text())
