"""Shared fixtures.

Markers: ``slow``, ``r`` (needs R + rpy2), ``browser`` (needs headless Chromium).
Outside CI a missing R or Chromium skips those tests; under ``CI=true`` it fails them.
"""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is required under CI=true but is missing")
    pytest.skip(f"{what} is not available")


@pytest.fixture(scope="session")
def rpy2_robjects():
    """rpy2's robjects module with R loaded (fails under CI if missing)."""
    if shutil.which("R") is None:
        _missing("R")
    try:
        from dpstats.rbridge import import_robjects

        ro = import_robjects()
    except Exception as exc:  # pragma: no cover - environment
        _missing(f"rpy2 ({exc})")
    return ro


@pytest.fixture(scope="session")
def rscript():
    path = shutil.which("Rscript")
    if path is None:
        _missing("Rscript")
    return path


@pytest.fixture(scope="session")
def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    _missing("Chromium")
