"""The layer table of docs/architecture.md ("Layers") is the import-linter contract, read row by row.

``scripts/make_layer_table.py`` writes the table from the contract in ``pyproject.toml``; here
the committed table must equal what it writes, and, read back from the page, every row's
modules and "may import" must be the contract's (the modules of every layer below).
"""

from __future__ import annotations

import runpy
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = runpy.run_path(str(ROOT / "scripts" / "make_layer_table.py"), run_name="layer_table")


def _contract() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def test_committed_table_is_the_generated_one():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert SCRIPT["rendered"](doc) == doc, "run: python scripts/make_layer_table.py"


def test_each_row_may_import_what_the_contract_allows():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = SCRIPT["read_table"](doc)
    layers = _contract()
    assert [modules for modules, _ in rows] == layers
    for i, (modules, may) in enumerate(rows):
        below = [name for lower in layers[i + 1 :] for name in lower]
        assert may == below, f"row {modules}: may import {may}, the contract says {below}"


def test_the_rows_once_wrong_are_right():
    """validation imports privacy.accountant; datasets imports simulate (issue 27)."""
    rows = {
        m: may
        for modules, may in SCRIPT["read_table"]((ROOT / "docs" / "architecture.md").read_text())
        for m in modules
    }
    assert "privacy" in rows["validation"]
    assert "simulate" in rows["datasets"]


def test_every_layer_has_a_comment():
    assert len(SCRIPT["layer_comments"]()) == len(_contract())
    assert all(SCRIPT["layer_comments"]())
