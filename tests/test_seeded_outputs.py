"""Seeded outputs of every front door equal those recorded before a refactoring.

Text (print, summary, report) must match exactly; numbers in ``to_dict()`` to
1e-9 relative.  ``DPSTATS_RECORD_GOLDEN=1`` re-records (only for intended
changes of behaviour).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from golden.cases import CASES, close, outputs

RECORD = Path(__file__).parent / "golden" / "seeded_outputs.json"


@pytest.fixture(scope="module")
def recorded() -> dict:
    if os.environ.get("DPSTATS_RECORD_GOLDEN"):
        data = {name: outputs(name) for name in CASES}
        RECORD.write_text(json.dumps(data, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False))
    return json.loads(RECORD.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_outputs_unchanged(name, recorded):
    now = json.loads(json.dumps(outputs(name), allow_nan=False))
    before = recorded[name]
    assert close(now["to_dict"], before["to_dict"], name) == []
    for channel in ("print", "summary", "report"):
        assert now[channel] == before[channel], f"{name}: {channel} changed"


OTHER_MACHINE = "Linux-1.2.3-another-kernel-aarch64-with-glibc9.99"


def test_reports_name_the_machine_but_the_golden_comparison_does_not(monkeypatch, recorded):
    """Another platform string reaches the report's footer and leaves the comparison unchanged."""
    import platform

    monkeypatch.setattr(platform, "platform", lambda *a, **k: OTHER_MACHINE)
    from dpstats.report import render_report

    from golden.cases import CASES

    fit = CASES["dp_sis_bounds"]()
    assert OTHER_MACHINE in render_report([fit])  # the footer does show the machine
    assert outputs("dp_sis_bounds")["report"] == recorded["dp_sis_bounds"]["report"]


def test_the_readme_test_command_passes_on_another_platform(tmp_path):
    """``bash scripts/dpstats.sh test`` on the seeded outputs, with Python reporting another platform."""
    (tmp_path / "sitecustomize.py").write_text(
        f"import platform\nplatform.platform = lambda *a, **k: {OTHER_MACHINE!r}\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DPSTATS_RECORD_GOLDEN"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    root = Path(__file__).resolve().parents[1]
    check = "import platform; print(platform.platform())"
    seen = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True)
    assert seen.stdout.strip() == OTHER_MACHINE  # the other platform string is in force
    proc = subprocess.run(
        [
            "bash",
            "scripts/dpstats.sh",
            "test",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_seeded_outputs.py",
            "-k",
            "unchanged and (dp_sis_bounds or dp_lm or dp_gmm)",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "3 passed" in proc.stdout
