"""dp_felp benchmark: speed, and the FELP paper's accuracy-vs-eps protocol.

    python benchmarks/bench_felp.py [--quick] [--no-speed] [--no-accuracy] [--r]

Speed: the full 20-learner ensemble on Wdbc (569 × 30) and on a 2000 × 500
synthetic set, with ratios against baselines measured in the same run (one
Logo learner; one exact neighbour search).  Accuracy: 10-fold CV, SVM (C = 1)
and 3-NN on the top 10% of features, for both variants across eps, next to the
non-private ensemble and to all features, on Wdbc (and, with ``--r``, on R's
mlbench Soybean and BreastCancer through rpy2).  Arcene (the paper's fourth
data set) is not available offline here and is not run.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from dpstats import datasets
from dpstats.methods import felp as m
from dpstats.simulate import felp as protocol
from dpstats.simulate.felp import planted

EPS_GRID = [0.01, 0.1, 1.0, 10.0, 100.0]


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def _xy(df: pd.DataFrame, response: str):
    return df.drop(columns=response).to_numpy(float), df[response].cat.codes.to_numpy()


def speed(quick: bool) -> pd.DataFrame:
    rows = []
    sets = [("Wdbc 569 x 30", *_xy(datasets.breast_cancer(), "diagnosis"))]
    if not quick:
        sets.append(
            ("synthetic 2000 x 500", *_xy(planted(2000, 500, 10, shift=1.0, random_state=0), "class"))
        )
    for name, X, y in sets:
        U, _ = m.scale_features(X, m.data_box(X))
        t_search, _ = _timed(m.nearest_hit_miss, U, y, np.ones(U.shape[1]), exact_limit=np.inf)
        t_fast, _ = _timed(m.nearest_hit_miss, U, y, np.ones(U.shape[1]))
        t_one, one = _timed(m.logo, U, y, 1.0)
        for variant in ("paper", "strict"):
            spec = m.EnsembleSpec(variant=variant)
            t_ens, fit = _timed(m.ensemble, U, y, 1.0, gen=np.random.default_rng(0), spec=spec)
            rows.append(
                {
                    "data": name,
                    "variant": variant,
                    "ensemble_s": t_ens,
                    "one_learner_s": t_one,
                    "ratio_ens_to_one": t_ens / t_one,
                    "rounds_mean": float(np.mean(fit.n_iter)),
                    "converged": f"{sum(fit.converged)}/{len(fit.converged)}",
                    "search_exact_s": t_search,
                    "search_used_s": t_fast,
                    "ratio_search": t_fast / t_search,
                }
            )
    return pd.DataFrame(rows)


def accuracy(name: str, X, y, quick: bool) -> pd.DataFrame:
    tab = protocol.accuracy_vs_eps(
        X,
        y,
        EPS_GRID if not quick else [0.1, 10.0],
        folds=10 if not quick else 3,
        n_estimators=20 if not quick else 5,
        noise_reps=5 if not quick else 1,
        random_state=0,
    )
    wide = protocol.wide_table(tab)
    wide.insert(0, "data", name)
    return wide


def _ratios(wide: pd.DataFrame) -> pd.DataFrame:
    eps_cols = [c for c in wide.columns if c.startswith("eps=")]
    ref = wide[wide["selection"] == "non-private"].set_index("classifier")["inf"]
    private = wide[wide["selection"].isin(["paper", "strict"])].copy()
    private[eps_cols] = private[eps_cols].div(private["classifier"].map(ref), axis=0)
    return private[["data", "classifier", "selection", *eps_cols]]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--r", action="store_true", help="add mlbench Soybean and BreastCancer (rpy2)")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.no_speed:
        print("\n== speed (seconds; baselines measured in this run) ==")
        print(speed(args.quick).round(3).to_string(index=False))
    if args.no_accuracy:
        return
    tables = [accuracy("Wdbc", *_xy(datasets.breast_cancer(), "diagnosis"), args.quick)]
    if args.r:
        from dpstats.datasets import mlbench_frame

        for name in ("BreastCancer", "Soybean"):
            df, _ = mlbench_frame(name)
            tables.append(accuracy(name, *_xy(df, "Class"), args.quick))
    folds = 3 if args.quick else 10
    print(f"\n== accuracy vs eps: {folds}-fold CV, top 10% of features (inf = no noise) ==")
    for wide in tables:
        print(wide.round(3).to_string(index=False))
        print(" ratio of each private cell to the non-private ensemble (same classifier):")
        print(_ratios(wide).round(3).to_string(index=False))
        print()
    print("Arcene: not available offline here; not run.")


if __name__ == "__main__":
    main()
