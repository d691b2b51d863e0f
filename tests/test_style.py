"""The code base stays formatted and lint-clean (ruff, configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_is_clean():
    done = _ruff("check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_unchanged():
    done = _ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr
