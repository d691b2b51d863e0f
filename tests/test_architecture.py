"""The layer contract (docs/architecture.md, "Layers") and a fast ``import dpstats``.

The contract lives in ``pyproject.toml`` (``[tool.importlinter]``) and is checked here with
import-linter, whose import graph (grimp) includes imports inside functions: no cycles between
layers, no upward imports.  The import-time *figures* are measured by
``benchmarks/bench_import.py``; here only what ``import dpstats`` loads is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold(capsys):
    lint = pytest.importorskip("importlinter.cli", reason="import-linter is in the 'test' extra")
    code = lint.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert code == 0, "import-linter: a layer contract is broken\n" + report


HEAVY = (
    "numpy",
    "pandas",
    "scipy",
    "numba",
    "jinja2",
    "matplotlib",
    "sklearn",
    "dask",
    "statsmodels",
    "opendp",
    "pyarrow",
    "patsy",
)


def test_import_dpstats_loads_no_heavy_module():
    code = (
        "import sys, json, dpstats\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps({'heavy': heavy, 'report': callable(dpstats.report),\n"
        "                  'version': dpstats.__version__}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["heavy"] == [], f"import dpstats loaded {seen['heavy']}: make them lazy"
    assert seen["report"] and seen["version"]


def test_lazy_public_names_resolve():
    import dpstats

    for name in dpstats.__all__:
        assert getattr(dpstats, name) is not None, name
    assert callable(dpstats.report)  # the function, not the module dpstats.report
    assert dpstats.datasets.fan_lv is not None and dpstats.Accountant(eps=1.0).remaining_eps == 1.0
