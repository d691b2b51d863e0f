"""dp_lm's parametric bootstrap against the version before s16-lmboot, in one process (audit s16-perf, finding 1).

The baseline is ``dpstats/methods/lm.py`` as at commit BASELINE, loaded from git as a module beside
the current one (so that no copy of it lives here).  For d = 20, 50, 100 predictors (n = 10^4 rows,
eps = 1, declared bounds) both run ``bootstrap`` on the same release with the same seed, interleaved,
best of ``--repeat``; printed: their times, new/old, and the largest relative difference of the
table's numbers (batches of 500 at these d, so the draws are the same ones).  Then the peak memory
(VmHWM rise of a fresh child, ``/proc/self/clear_refs`` reset after the set-up) of each at d = 100 and
n_boot = 1000, against the 500 × (d+2)² × 8 B of one batch array; the children run on one BLAS
thread (memory only).  Results in benchmarks/bench_lm_bootstrap_d_results.txt.

    PYTHONPATH=$PWD python benchmarks/bench_lm_bootstrap_d.py [--n-boot 200] [--repeat 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpstats.methods import lm  # noqa: E402
from dpstats.privacy.randomness import NoiseSource  # noqa: E402

BASELINE = "e1bedbc7b11716ca083dca60a2cd4b862e80a499"  # main before s16-lmboot


def baseline_module():
    """``dpstats.methods.lm`` as at BASELINE, imported as ``dpstats.methods._lm_baseline``."""
    source = subprocess.run(
        ["git", "show", f"{BASELINE}:dpstats/methods/lm.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    spec = importlib.util.spec_from_loader("dpstats.methods._lm_baseline", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "dpstats.methods"
    sys.modules[spec.name] = module
    exec(compile(source, f"{BASELINE[:7]}:lm.py", "exec"), module.__dict__)
    return module


def release(d: int, n: int = 10_000):
    """A dp_lm release (eps = 1, bounds [-1, 1]) of n rows with d predictors, and its plan."""
    rng = np.random.default_rng(0)
    z = rng.uniform(-1, 1, (n, d))
    u = np.clip(z @ rng.uniform(-0.1, 0.1, d) + 0.2 * rng.normal(size=n), -1, 1)
    v = np.c_[np.ones(n), z, u]
    coords = lm.Coordinates(np.zeros(d), np.ones(d), True, y_center=0.0, y_half=1.0)
    pl = lm.plan(lm.LMOptions.partial(eps=1.0, delta=1e-6, lambda_share=lm.LAMBDA_SHARE), coords)
    return lm.release_statistics(v.T @ v, n, pl, NoiseSource(1)), n, pl


def run(module, fit, n, pl, n_boot):
    return module.bootstrap(fit, n, pl, n_boot=n_boot, conf_level=0.95, rng=np.random.default_rng(3))


def largest_difference(a, b) -> float:
    keys = ("std.error", "conf.low", "conf.high", "vcov")
    return max(float(np.max(np.abs(a.table[k] - b.table[k]) / (1e-300 + np.abs(b.table[k])))) for k in keys)


def timing(old, n_boot: int, repeat: int) -> None:
    print(f"bootstrap, n = 10^4, n_boot = {n_boot}, best of {repeat}, interleaved")
    print(f"{'d':>4} {'old s':>8} {'new s':>8} {'new/old':>8} {'max rel diff':>13}")
    for d in (20, 50, 100):
        fit, n, pl = release(d)
        best = {"old": float("inf"), "new": float("inf")}
        results = {}
        for _ in range(repeat):
            for name, module in (("old", old), ("new", lm)):
                start = time.perf_counter()
                results[name] = run(module, fit, n, pl, n_boot)
                best[name] = min(best[name], time.perf_counter() - start)
        diff = largest_difference(results["new"], results["old"])
        print(
            f"{d:>4} {best['old']:>8.2f} {best['new']:>8.2f} {best['new'] / best['old']:>8.3f} {diff:>13.1e}",
            flush=True,
        )


CHILD = """
import sys
sys.path.insert(0, {bench!r})
import numpy as np
from threadpoolctl import threadpool_limits
import bench_lm_bootstrap_d as b
module = b.baseline_module() if {which!r} == "old" else b.lm
fit, n, pl = b.release({d})
with threadpool_limits(limits=1, user_api="blas"):
    b.run(module, fit, n, pl, 100)  # warm-up
    def hwm():
        return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
    open("/proc/self/clear_refs", "w").write("5")
    before = hwm()
    b.run(module, fit, n, pl, 1000)
print((hwm() - before) / 1024)
"""


def peak_memory(d: int = 100) -> None:
    batch_mb = 500 * (d + 2) ** 2 * 8 / 2**20
    print(
        f"peak memory rise (VmHWM) of bootstrap at d = {d}, n_boot = 1000; one batch array {batch_mb:.0f} MB"
    )
    for which in ("old", "new"):
        code = CHILD.format(bench=str(Path(__file__).resolve().parent), which=which, d=d)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        print(f"  {which}: {float(out.stdout.split()[-1]):.0f} MB", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    timing(baseline_module(), args.n_boot, args.repeat)
    peak_memory()
