"""DP-SIS: centred score (center="mean", the default) vs the paper's midpoint score (issue 15 part 3).

Fan & Lv design of the DP-SIS paper: n = 100, d = 2000, 8 nonzero coefficients,
k = 8, declared bounds x in (−4.5, 4.5) and y in (−25, 25), replace-one-row
(sensitivity 4(1 − 1/n) = 3.96 for the centred score, 2 for the midpoint score).
"shifted": the same design with column j shifted by o_j ~ U(−2.25, 2.25), up to
half the bounds' half-width (values then clipped as dp_sis clips them).  Each run
draws a new data set shared by both scores and every eps.  Accuracy = |selected ∩
true support| / 8 (the paper's top-k accuracy); s.e. = sd / sqrt(runs).
"non-private" is the exact top-k of each score (no noise).

The scores and selection run through dp_sis's own plain functions
(stats.cross_products, methods.sis score functions and sensitivities,
private_top_k); the first run of each design is checked against the dp_sis front
door, draw for draw.

    python benchmarks/bench_sis_centred.py [--runs 120] [--seed 0]

Measured (seed 0, 120 runs, 362 s on a shared core; mean accuracy (s.e.)):

             Fan-Lv design                  shifted column means
    eps      centred        midpoint        centred        midpoint
      1      0.002 (0.001)  0.005 (0.003)   0.001 (0.001)  0.004 (0.002)
      5      0.005 (0.002)  0.003 (0.002)   0.003 (0.002)  0.005 (0.003)
     10      0.006 (0.003)  0.002 (0.001)   0.003 (0.002)  0.008 (0.003)
     20      0.001 (0.001)  0.007 (0.003)   0.004 (0.002)  0.009 (0.003)
    100      0.032 (0.006)  0.150 (0.016)   0.040 (0.006)  0.130 (0.011)
   1000      0.583 (0.012)  0.585 (0.012)   0.571 (0.011)  0.389 (0.016)
    non-private 0.582 (0.012) 0.588 (0.012) 0.570 (0.011)  0.389 (0.016)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpstats as dp
from dpstats.geometry import resolve_box
from dpstats.methods import sis as m
from dpstats.privacy.randomness import NoiseSource

N, D, K = 100, 2000, 8
X_BOUND, Y_BOUND = 4.5, 25.0
EPS = [1.0, 5.0, 10.0, 20.0, 100.0, 1000.0]
SCORES = {"mean": m.scores_centred_on_unit_scale, "midpoint": m.scores_on_unit_scale}


def design(rng: np.random.Generator, shifted: bool):
    df = dp.datasets.fan_lv(n=N, d=D, random_state=rng)
    names = [c for c in df.columns if c != "y"]
    if shifted:
        df[names] = df[names] + rng.uniform(-X_BOUND / 2, X_BOUND / 2, D)
    truth = {names.index(c) for c in df.attrs["support"]}
    return df, names, truth


def bounds_for(names: list[str]) -> dict:
    return {"y": (-Y_BOUND, Y_BOUND), **{c: (-X_BOUND, X_BOUND) for c in names}}


def one_run(rng: np.random.Generator, shifted: bool, check: bool) -> dict:
    df, names, truth = design(rng, shifted)
    stats = dp.stats.cross_products(
        df[names].to_numpy(),
        df["y"].to_numpy(),
        x_box=resolve_box((-X_BOUND, X_BOUND), names),
        y_box=resolve_box((-Y_BOUND, Y_BOUND), ["y"]),
    )
    sens = {"mean": m.centred_sensitivity("replace", N), "midpoint": m.SENSITIVITY["replace"]}
    out = {}
    for center, score_fn in SCORES.items():
        scores = score_fn(stats)
        out[(center, "non-private")] = len(truth & set(np.argsort(-scores)[:K].tolist())) / K
        for eps in EPS:
            seed = int(rng.integers(2**63))
            chosen = m.private_top_k(scores, K, eps, sens[center], NoiseSource(seed).generator)
            out[(center, eps)] = len(truth & set(chosen.tolist())) / K
            if check and eps == EPS[0]:
                fit = dp.dp_sis(
                    "y ~ .",
                    data=df,
                    eps=eps,
                    k=K,
                    bounds=bounds_for(names),
                    center=center,
                    random_state=seed,
                    oc_trials=0,
                )
                assert sorted(fit.selected) == sorted(names[j] for j in chosen), (center, eps)
    return out


def table(shifted: bool, runs: int, seed: int) -> None:
    rng = np.random.default_rng([seed, int(shifted)])
    rows = [one_run(rng, shifted, check=(r == 0)) for r in range(runs)]
    label = "shifted column means (o_j ~ U(-2.25, 2.25))" if shifted else "Fan-Lv design"
    print(f"\n{label}: n = {N}, d = {D}, k = {K}, {runs} runs, replace-one-row; accuracy (s.e.)")
    print(f"{'eps':>12} {'centred (mean)':>18} {'midpoint (paper)':>18}")
    for eps in EPS + ["non-private"]:
        cells = []
        for center in SCORES:
            v = np.array([r[(center, eps)] for r in rows])
            cells.append(f"{v.mean():.3f} ({v.std(ddof=1) / np.sqrt(runs):.3f})")
        print(f"{eps!s:>12} {cells[0]:>18} {cells[1]:>18}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    for shifted in (False, True):
        table(shifted, args.runs, args.seed)
    print(f"\ntotal time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
