"""Planner speed and the papers' curves reproduced by the planner alone (issue 19).

Targets: a dp_sis plan at d = 22 283 over 10 eps values in at most 2 s (the
canonical selector draws its class noise once per data set for the whole eps
grid, :func:`dpstats.privacy.topk.canonical_lipschitz_grid`: 3.1-3.4 s before); a
dp_knockoff plan (Methods I and II) at n = 10^6 in at most 5 s; a dp_felp
plan over 5 eps at about one ensemble fit per simulated data set.  Printed as
figures and as ratios to the target, with a baseline measured in the same run
(one draw of the statistics the plan simulates, so the ratio says how many
"data sets" a plan costs).  Then the curves: DP-SIS Figure 5's design (n = 100,
d = 2000, 8 Fan-Lv signals, k = 8, max-abs scaling as in the paper) and the
knockoff paper's Figure 1 (p = 50, 15 signals of amplitude 4.5, eps = 0.2,
delta = 2p/n, q = 0.2) against n.

    python benchmarks/bench_plan.py [--trials 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.planner import FanLv, FelpModel, KnockoffModel
from dpstats.privacy.topk import canonical_lipschitz, canonical_lipschitz_grid
from dpstats.simulate import knockoff as ks
from dpstats.simulate import sis_scores

from _timing import best_time

EPS10 = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
FIGURE1_NS = [10**3, 3 * 10**3, 10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6]


def timed(label: str, func, target: float) -> None:
    seconds = best_time(func, repeat=2, warmup=0)
    print(f"{label:<58} {seconds:7.2f} s   target {target:g} s   ratio {seconds / target:5.2f}")


def speed(trials: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = best_time(lambda: sis_scores(100, 22283, FanLv().as_assume(), rng, score="maxabs"), repeat=5)
    print(f"baseline: one draw of the 22 283 DP-SIS scores {base * 1e3:.2f} ms")
    selector_grid(rng)
    timed(
        f"dp_sis plan, d = 22283, 10 eps, {trials} trials",
        lambda: dp.plan(
            "dp_sis", n=100, p=22283, eps=EPS10, k=8, bounds=None, trials=trials, random_state=seed
        ),
        2.0,
    )
    B = ks.default_row_bound(10**6, 50)
    base = best_time(lambda: ks.trial_statistics(10**6, 50, 15, 4.5, 1.0, B, rng), repeat=5)
    print(f"baseline: one draw of the knockoff statistics at n = 10^6, p = 50 {base * 1e3:.2f} ms")
    timed(
        f"dp_knockoff plan, n = 10^6, p = 50, Methods I+II, 5 eps, {trials} trials",
        lambda: dp.plan(
            "dp_knockoff",
            n=10**6,
            p=50,
            eps=[0.05, 0.1, 0.2, 0.5, 1.0],
            fdr=0.2,
            trials=trials,
            random_state=seed,
        ),
        5.0,
    )


def selector_grid(rng: np.random.Generator) -> None:
    """The canonical Lipschitz selector at 10 eps: 10 reference calls against one grid call (same law per eps)."""
    scores = np.abs(rng.standard_normal(22283)) * 3
    ref = best_time(lambda: [canonical_lipschitz(scores, 8, e, rng) for e in EPS10], repeat=3)
    grid = best_time(lambda: canonical_lipschitz_grid(scores, 8, EPS10, rng), repeat=3)
    print(
        f"canonical top-8 at d = 22283 over 10 eps: 10 calls {ref * 1e3:.1f} ms, one grid call "
        f"{grid * 1e3:.1f} ms (ratio {ref / grid:.1f})"
    )


def felp_cost(seed: int) -> None:
    """A 5-eps dp_felp plan costs about one ensemble fit per simulated data set (the fit is shared by every eps)."""
    from dpstats.geometry import Box
    from dpstats.methods import felp as fm
    from dpstats.simulate.felp import planted

    model, trials = FelpModel(signals=10, shift=1.5), 10
    df = planted(n=200, d=100, s=10, shift=1.5, random_state=seed)
    X, y = df.drop(columns="class").to_numpy(), df["class"].cat.codes.to_numpy()
    U = fm.scale_features(X, Box(np.full(100, model.box()[0]), np.full(100, model.box()[1])))[0]
    rng = np.random.default_rng(seed)
    base = best_time(
        lambda: fm.ensemble(U, y, 1.0, gen=rng, spec=fm.EnsembleSpec(variant="strict")), repeat=3
    )
    seconds = best_time(
        lambda: dp.plan(
            "dp_felp", n=200, p=100, eps=[1, 10, 100, 1000, 10000], trials=trials, random_state=seed
        ),
        repeat=2,
        warmup=0,
    )
    print(
        f"dp_felp plan, n = 200, d = 100, 5 eps, {trials} trials: {seconds:.2f} s = "
        f"{seconds / (trials * base):.2f} ensemble fits ({base * 1e3:.0f} ms each) per simulated data set"
    )


def curves(seed: int) -> None:
    pl = dp.plan(
        "dp_sis",
        n=100,
        p=2000,
        eps=[1, 5, 10, 20, 100, 1000],
        k=8,
        bounds=None,
        trials=200,
        random_state=seed,
    )
    print("\nDP-SIS Figure 5 design, predicted top-k accuracy (precision, k = 8 = signals):")
    print(pl.wide().to_string())
    pl = dp.plan(
        "dp_knockoff",
        n=FIGURE1_NS,
        p=50,
        eps=0.2,
        fdr=0.2,
        assume=KnockoffModel(),
        trials=200,
        random_state=seed,
    )
    print("\nKnockoff Figure 1 (eps = 0.2, delta = 2p/n, q = 0.2), predicted power and FDR against n:")
    for measure in ("power", "fdr"):
        part = pl.table[pl.table.measure == measure].pivot_table(
            index="n", columns="method", values="estimate"
        )
        print(f"{measure}:\n{part.round(3).to_string()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    warnings.simplefilter("ignore", ChanceWarning)
    speed(args.trials, args.seed)
    felp_cost(args.seed)
    curves(args.seed)


if __name__ == "__main__":
    main()
