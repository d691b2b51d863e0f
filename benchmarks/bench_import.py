"""Benchmark: the cost of ``import dpstats`` and the imports of a first ``dp_knockoff`` call.

Targets (issues 16 and 18): ``import dpstats`` at most 0.6 s on this machine, measured against
``import pandas`` in the same run; the imports of a first ``dp_knockoff`` call at most 0.3 s.

Every figure comes from fresh Python processes (nothing cached in memory), ``--repeat`` of each,
interleaved, and the medians are printed:

* ``python -c "import pandas"`` — the baseline every pandas user pays anyway;
* ``python -c "import dpstats"``;
* a first ``dp_knockoff`` call in a process that has already imported dpstats, numpy and pandas and
  built its data frame (what a user has done before calling): its wall time, split into
  *importing* (the modules the call loads, timed by importing exactly those in another fresh
  process) and *computing* (the rest: the call itself, numba compilation included);
* a second identical call in the same process (computing only).

Run: python benchmarks/bench_import.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
import dpstats as dp
rng = np.random.default_rng(0)
X = rng.standard_normal((20000, 50))
df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(50)])
df["y"] = X[:, :4] @ np.full(4, 1.0) + rng.standard_normal(20000)
warnings.simplefilter("ignore")
call = lambda: dp.dp_knockoff("y ~ .", data=df, eps=2.0, delta=1e-5, fdr=0.2, bounds=30.0,
                              sigma=1.0, random_state=1)
before = set(sys.modules)
t0 = time.perf_counter(); call(); first = time.perf_counter() - t0
new = [m for m in sys.modules if m not in before]
t0 = time.perf_counter(); call(); second = time.perf_counter() - t0
print(json.dumps({"first": first, "second": second, "modules": new}))
"""

IMPORT_ONLY = r"""
import importlib, json, sys, time
import numpy, pandas, dpstats
mods = json.loads(sys.stdin.read())
t0 = time.perf_counter()
for m in mods:
    try:
        importlib.import_module(m)
    except Exception:
        pass
print(json.dumps({"imports": time.perf_counter() - t0}))
"""


def _wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    return time.perf_counter() - start


def _json(code: str, stdin: str | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True, input=stdin
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(repeat: int = 7) -> dict:
    """Every figure's ``repeat`` runs, interleaved, so a busy moment of the machine hits them alike."""
    runs: dict[str, list] = {"pandas": [], "dpstats": [], "first": [], "second": [], "imports": []}
    for _ in range(repeat):
        runs["pandas"].append(_wall("import pandas"))
        runs["dpstats"].append(_wall("import dpstats"))
        run = _json(FIRST_CALL)
        runs["first"].append(run["first"])
        runs["second"].append(run["second"])
        runs["imports"].append(_json(IMPORT_ONLY, json.dumps(run["modules"]))["imports"])
    runs["modules"] = run["modules"]
    return runs


def main(repeat: int = 7) -> None:
    runs = measure(repeat)
    pandas, dpstats_, first, second, imports = (
        runs[k] for k in ("pandas", "dpstats", "first", "second", "imports")
    )
    med = statistics.median
    base = _wall("pass")
    print(f"medians of {repeat} fresh processes each (python startup alone: {base:.3f} s)")
    print(f"  python -c 'import pandas'   {med(pandas):.3f} s")
    print(
        f"  python -c 'import dpstats'  {med(dpstats_):.3f} s   (target <= 0.6 s; "
        f"ratio to pandas {med(dpstats_) / med(pandas):.2f})"
    )
    computing = [f - i for f, i in zip(first, imports)]
    print(
        f"  first dp_knockoff call      {med(first):.3f} s = importing {med(imports):.3f} s "
        f"(target <= 0.3 s; {len(runs['modules'])} modules) + computing {med(computing):.3f} s"
    )
    print(f"  second dp_knockoff call     {med(second):.3f} s")
    print(f"  importing / first call      {med(imports) / med(first):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    main(parser.parse_args().repeat)
