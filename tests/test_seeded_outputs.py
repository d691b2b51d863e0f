"""Seeded outputs of every front door equal those recorded before a refactoring.

Text (print, summary, report) must match exactly; numbers in ``to_dict()`` to
1e-9 relative.  ``DPSTATS_RECORD_GOLDEN=1`` re-records (only for intended
changes of behaviour).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from golden.cases import CASES, close, outputs

RECORD = Path(__file__).parent / "golden" / "seeded_outputs.json"


@pytest.fixture(scope="module")
def recorded() -> dict:
    if os.environ.get("DPSTATS_RECORD_GOLDEN"):
        data = {name: outputs(name) for name in CASES}
        RECORD.write_text(json.dumps(data, indent=1, sort_keys=True, allow_nan=False))
    return json.loads(RECORD.read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_outputs_unchanged(name, recorded):
    now = json.loads(json.dumps(outputs(name), allow_nan=False))
    before = recorded[name]
    assert close(now["to_dict"], before["to_dict"], name) == []
    for channel in ("print", "summary", "report"):
        assert now[channel] == before[channel], f"{name}: {channel} changed"
