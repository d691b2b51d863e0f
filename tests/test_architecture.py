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


def test_import_contracts_hold():
    """import-linter in a process of its own: in the test process it writes through a console that an
    earlier test's captured stderr may have closed ("lost sys.stderr")."""
    pytest.importorskip("importlinter.cli", reason="import-linter is in the 'test' extra")
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, no_cache=True, no_logo=True))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, "import-linter: a layer contract is broken\n" + proc.stdout + proc.stderr


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


FIRST_CALLS = """
import json, sys, warnings
import numpy as np, pandas as pd
import dpstats as dp
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.standard_normal((20000, 50))
df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(50)])
df["y"] = X[:, :4].sum(axis=1) + rng.standard_normal(20000)
dp.dp_knockoff("y ~ .", data=df, eps=2.0, delta=1e-5, fdr=0.2, bounds=30.0, sigma=1.0, random_state=1)
after_knockoff = sorted({m.split(".")[0] for m in sys.modules} & {"scipy", "numba", "sklearn", "statsmodels"})
dp.dp_sis("y ~ .", data=df, eps=2.0, k=3, bounds=(-5, 5), random_state=1)
after_sis = sorted(m for m in ("scipy.optimize", "scipy.stats", "numba") if m in sys.modules)
print(json.dumps({"knockoff": after_knockoff, "sis": after_sis}))
"""


def test_first_calls_load_no_heavy_scipy_module():
    """A first dp_knockoff call (declared bounds, Method II, analytic Gaussian calibration) loads no
    scipy, numba, sklearn or statsmodels; a default dp_sis after it neither scipy.optimize nor
    scipy.stats (benchmarks/bench_import.py times what they do load)."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALLS], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen == {"knockoff": [], "sis": []}, f"first calls loaded {seen}: make them lazy"
