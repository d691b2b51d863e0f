"""Benchmark: the paper's Figure 1 (Pournaderi & Xiang) with the sufficient-statistics shortcut.

p = 50, X iid N(0, 1), k = 15 coefficients of 4.5 (same sign), sigma = 1, CSM/OLS,
q = 0.2, 250 trials per point, each trial (0.2, 2p/n)-DP; n from 10^3 to 10^6.6.
Baseline measured in the same run: the materialised route (n x p data + QR knockoffs)
per trial at moderate n, against the shortcut's per-trial cost.

Run: python benchmarks/bench_knockoff.py [--trials 250]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


import dpstats as dp
from dpstats.simulate.knockoff import FIGURE1_NS

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(trials: int = 250) -> None:
    start = time.perf_counter()
    tab = dp.simulate_knockoff(n=list(FIGURE1_NS), method=("I", "II"), trials=trials, random_state=2021)
    wall = time.perf_counter() - start
    wide = tab.pivot(index="n", columns="method", values=["fdr", "fdr_se", "power", "power_se"])
    print(
        f"Figure 1 grid: {len(FIGURE1_NS)} values of n x 2 methods x {trials} trials in {wall:.1f} s "
        "(target <= 60 s)"
    )
    print(wide.round(3).to_string())
    ok_fdr = bool((tab["fdr"] <= 0.2 + 2 * tab["fdr_se"]).all())
    ii = tab[tab.method == "II"].sort_values("n")
    one = tab[tab.method == "I"].sort_values("n")
    print(f"FDR <= 0.2 + 2 s.e. at every n, both methods: {ok_fdr}")
    print(
        f"power(II) rises from {ii.power.iloc[0]:.3f} to {ii.power.iloc[-1]:.3f}; "
        f"power(I) from {one.power.iloc[0]:.3f} to {one.power.iloc[-1]:.3f}"
    )
    print(
        f"power(II) >= power(I) - 2 s.e. at every n: "
        f"{bool((ii.power.to_numpy() >= one.power.to_numpy() - 2 * one.power_se.to_numpy()).all())}"
    )
    print("\nBaseline (same run): seconds per trial, materialised data + QR knockoffs vs shortcut")
    for n in (10_000, 100_000):
        t = {}
        for route in ("materialise", "shortcut"):
            reps = 5 if route == "materialise" else 200
            t0 = time.perf_counter()
            dp.simulate_knockoff(n=[n], method="II", trials=reps, route=route, random_state=1)
            t[route] = (time.perf_counter() - t0) / reps
        print(
            f"  n = {n:>7}: materialised {t['materialise'] * 1e3:8.1f} ms, shortcut "
            f"{t['shortcut'] * 1e3:6.2f} ms, ratio {t['materialise'] / t['shortcut']:7.0f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=250)
    main(parser.parse_args().trials)
