"""The first ``dp_sis`` call from R imports only what it needs (issue 18, R start-up).

A fresh Python process makes the call the R package makes (``rbridge.call_from_r`` with a
transport, declared bounds, default simulation) and lists the modules it loaded: the pure-ε path
needs neither ``scipy.optimize`` (Gaussian calibration) nor ``scipy.stats`` (one helper of the
simulation), which together cost about 0.6 s of the first call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = r"""
import json, sys
import numpy as np
from dpstats import rbridge
rng = np.random.default_rng(0)
n, d = 150, 4
transport = {"names": ["y"] + [f"x{j}" for j in range(1, d)], "n": n, "kinds": ["double"] * d,
             "numeric": rng.uniform(0, 10, n * d).tolist(), "codes": [], "levels": []}
kwargs = {"formula": "y ~ .", "eps": 1.0, "k": 2.0, "bounds": [0.0, 10.0], "random_state": 1}
out = rbridge.call_from_r("dp_sis", [], kwargs, {"data": transport})
print(json.dumps({"ok": out.ok, "error": out.error_message, "modules": sorted(sys.modules)}))
"""


def test_first_dp_sis_call_loads_neither_scipy_optimize_nor_scipy_stats():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run(
        [sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["ok"], out["error"]
    loaded = set(out["modules"])
    assert "dpstats.api.sis" in loaded  # the call did run through the front door
    heavy = {"scipy.optimize", "scipy.stats", "scipy.special"}  # scipy.special: 0.2-0.3 s (the class sizes)
    assert not heavy & loaded, sorted(heavy & loaded)


def test_gaussian_calibration_still_imports_what_it_needs():
    """The deferred imports are made where they are used: an (ε, δ) calibration works on its own."""
    code = (
        "from dpstats.privacy.calibration import analytic_gaussian_sigma, gaussian_delta\n"
        "s = analytic_gaussian_sigma(1.0, 1e-5)\n"
        "assert gaussian_delta(1.0, s) <= 1e-5 < gaussian_delta(1.0, 0.99 * s)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
