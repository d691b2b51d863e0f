"""Benchmark: what the first unseeded call of a front door pays to load the floating-point safe samplers.

Target (issue 26): the first unseeded call of a door pays at most 0.3 s for loading the samplers.
An unseeded release (``random_state=None``) draws its released real numbers from OpenDP; a
seeded one draws from numpy and loads nothing.  Every figure comes from fresh Python processes
(nothing cached), ``--repeat`` of each, interleaved, and the medians are printed:

* the first ``dp_lm`` call (n = 2 000, 3 terms) and the first ``dp_felp`` call (n = 200, d = 10,
  the L2-Laplace) in a process that has already imported dpstats, numpy and pandas and built its
  data: seeded (the baseline: no sampler to load) and unseeded, with the time spent loading
  OpenDP's modules inside the unseeded call (``randomness._opendp_parts``, timed in place);
* loading the samplers alone in a fresh process: the four OpenDP modules dpstats imports now,
  against ``import opendp.prelude`` (what it imported before, with scikit-learn behind it) —
  the ratio is the saving.

Run: python benchmarks/bench_sampler_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
import dpstats as dp
from dpstats.privacy import randomness
door, seed = sys.argv[1], (None if sys.argv[2] == "none" else int(sys.argv[2]))
loading = []
inner = randomness._opendp_parts
def timed():
    t0 = time.perf_counter(); out = inner(); loading.append(time.perf_counter() - t0); return out
randomness._opendp_parts = timed
rng = np.random.default_rng(0)
if door == "dp_lm":
    df = pd.DataFrame(rng.uniform(-1, 1, (2000, 3)), columns=["x1", "x2", "x3"])
    df["y"] = df.x1 - df.x2 + 0.3 * rng.standard_normal(2000)
    call = lambda: dp.dp_lm("y ~ .", df, eps=1.0, delta=1e-6, bounds=(-3, 3), n_boot=100, random_state=seed)
else:
    from dpstats.simulate import planted
    df = planted(n=200, d=10, s=2, shift=2.0, random_state=0)
    call = lambda: dp.dp_felp("class ~ .", df, eps=1.0, n_estimators=4, bounds=(-6, 6), oc_trials=0,
                              random_state=seed)
warnings.simplefilter("ignore")
t0 = time.perf_counter(); fit = call(); first = time.perf_counter() - t0
t0 = time.perf_counter(); call(); second = time.perf_counter() - t0
print(json.dumps({"first": first, "second": second, "loading": sum(loading[:1]),
                  "samplers": sorted(fit.privacy.samplers)}))
"""

LOAD_NOW = r"""
import json, time
import numpy, pandas, dpstats
from dpstats.privacy import randomness
t0 = time.perf_counter()
randomness._opendp_vector_measurement("laplace", 1.0)([0.0])
print(json.dumps({"load": time.perf_counter() - t0}))
"""

LOAD_BEFORE = r"""
import json, time
import numpy, pandas, dpstats
t0 = time.perf_counter()
import opendp.prelude as odp
odp.enable_features("contrib")
domain = odp.vector_domain(odp.atom_domain(T=float, nan=False))
odp.m.make_laplace(domain, odp.l1_distance(T=float), scale=1.0)([0.0])
print(json.dumps({"load": time.perf_counter() - t0}))
"""


def _json(code: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(repeat: int = 5) -> dict[str, list]:
    """Every figure's ``repeat`` runs, interleaved, so a busy moment of the machine hits them alike."""
    runs: dict[str, list] = {}
    for _ in range(repeat):
        for door in ("dp_lm", "dp_felp"):
            for seed in ("1", "none"):
                out = _json(FIRST_CALL, door, seed)
                for key in ("first", "second", "loading"):
                    runs.setdefault(f"{door} {seed} {key}", []).append(out[key])
                runs[f"{door} {seed} samplers"] = out["samplers"]
        runs.setdefault("load now", []).append(_json(LOAD_NOW)["load"])
        runs.setdefault("load before", []).append(_json(LOAD_BEFORE)["load"])
    return runs


def main(repeat: int = 5) -> None:
    runs = measure(repeat)
    med = statistics.median
    print(f"medians of {repeat} fresh processes each")
    for door in ("dp_lm", "dp_felp"):
        seeded, unseeded = med(runs[f"{door} 1 first"]), med(runs[f"{door} none first"])
        loading = med(runs[f"{door} none loading"])
        print(f"  {door}: first seeded call    {seeded:.3f} s  (baseline; {runs[f'{door} 1 samplers']})")
        print(
            f"  {door}: first unseeded call  {unseeded:.3f} s = loading the samplers {loading:.3f} s "
            f"(target <= 0.3 s) + the rest; ratio to the seeded call {unseeded / seeded:.2f}"
        )
        print(
            f"  {door}: second unseeded call {med(runs[f'{door} none second']):.3f} s "
            f"({runs[f'{door} none samplers']})"
        )
    now, before = med(runs["load now"]), med(runs["load before"])
    print(f"  loading the samplers alone: four OpenDP modules {now:.3f} s")
    print(f"  loading the samplers alone: opendp.prelude      {before:.3f} s (as before)")
    print(f"  ratio now / before          {now / before:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    main(parser.parse_args().repeat)
