"""DP-SIS vs the two-stage method: accuracy across eps, on synthetic and real data, and speed.

Parts (all by default):

* ``synthetic`` — the DP-SIS paper's synthetic model (Fan & Lv: n = 100, d = 2000,
  8 nonzero), eps in {0.1, 0.5, 1, 2, 5, 10, 20}, k in {5, 8}, 100 trials (a new
  data set per trial, shared by both methods), with non-private references.
* ``chiaretti`` — Chiaretti ALL (Bioconductor ``ALL`` through rpy2; y = T- vs
  B-cell lineage), k in {5, ⌊log d⌋ = 9}; truth = top-k of a non-private lasso
  (λ = 0.1) on all 128 rows, as in the paper; 100 trials of the mechanisms.
* ``golub`` — Golub leukaemia (``multtest``; y = AML vs ALL), k in {5, ⌊log d⌋ = 8}.
* ``speed`` — seconds for dp_two_stage on 128 × 12 625 (Chiaretti) with the LARS
  and coordinate-descent lasso, against dp_sis on the same data (same run).

Scores use the paper's scaling (max-abs, mean-centered) and the sensitivity of
``--neighbouring`` (default add_remove, the paper's sensitivity 1 for DP-SIS; under
replace DP-SIS's sensitivity doubles while the two-stage counts keep sensitivity 1).
Both methods use the canonical Lipschitz top-k (gamma = 0.5).

    python benchmarks/bench_two_stage.py [--parts synthetic,chiaretti,golub,speed]
        [--trials 100] [--report-dir DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings


import dpstats as dp
from dpstats import evaluate as ev

EPS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
METHODS = ["dp_sis", "dp_two_stage", "sis_nonprivate", "two_stage_nonprivate"]


def print_table(res, title: str) -> None:
    s = ev.summarise(res).set_index(["method", "k", "eps"])
    diff = ev.difference_table(res, "dp_sis", "dp_two_stage").set_index(["k", "eps"])
    print(f"\n{title}")
    print(
        f"{'k':>3} {'eps':>5} {'DP-SIS':>14} {'two-stage':>14} {'diff (z)':>15} "
        f"{'SIS np':>7} {'2st np':>7}  GOOD(SIS/2st)"
    )
    for k in sorted(res["k"].unique()):
        for eps in EPS:
            a, b = s.loc[("dp_sis", k, eps)], s.loc[("dp_two_stage", k, eps)]
            d = diff.loc[(k, eps)]
            npa = s.loc[("sis_nonprivate", k, eps)].accuracy
            npb = s.loc[("two_stage_nonprivate", k, eps)].accuracy
            print(
                f"{k:>3} {eps:>5g} {a.accuracy:>6.3f} ({a.accuracy_se:.3f}) "
                f"{b.accuracy:>6.3f} ({b.accuracy_se:.3f}) {d.difference:>+7.3f} ({d.z:>+5.1f}) "
                f"{npa:>7.3f} {npb:>7.3f}  {a.GOOD:.2f}/{b.GOOD:.2f}"
            )


def run_comparison(data, ks, trials, neighbouring, seed, title, report_dir, slug):
    t0 = time.perf_counter()
    res = ev.compare_selectors(
        data, METHODS, EPS, k=ks, trials=trials, neighbouring=neighbouring, random_state=seed
    )
    print_table(
        res, f"{title} — {trials} trials, neighbouring = {neighbouring} ({time.perf_counter() - t0:.1f} s)"
    )
    if report_dir:
        path = os.path.join(report_dir, f"two_stage_{slug}.html")
        ev.comparison_report(res, path, title=title, pair=("dp_sis", "dp_two_stage"))
        print(f"report: {path}")
    return res


def speed(repeats: int = 3) -> None:
    df = ev.chiaretti_all()
    n, d = df.shape[0], df.shape[1] - 1
    k = int(math.log(d))

    def best_of(fn):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_sis = best_of(lambda: dp.dp_sis("y ~ .", df, eps=1.0, k=k, oc_trials=0, random_state=0))
        t_lars = best_of(lambda: dp.dp_two_stage("y ~ .", df, eps=1.0, k=k, oc_trials=0, random_state=0))
        t_cd = best_of(
            lambda: dp.dp_two_stage(
                "y ~ .", df, eps=1.0, k=k, oc_trials=0, solver="cd", tol=1e-4, random_state=0
            )
        )
    blocks = int(math.isqrt(n))
    print(
        f"\nSpeed on Chiaretti ALL, n = {n}, d = {d}, k = {k}, {blocks} blocks of "
        f"{n // blocks}-{-(-n // blocks)} rows (best of {repeats}, whole front door incl. model frame)"
    )
    print(f"{'method':<52} {'seconds':>8} {'x dp_sis':>9}")
    print(f"{'dp_sis (baseline)':<52} {t_sis:>8.3f} {1:>9.1f}")
    print(f"{'dp_two_stage, LassoLars (exact LARS homotopy)':<52} {t_lars:>8.3f} {t_lars / t_sis:>9.1f}")
    print(f"{'dp_two_stage, Lasso coordinate descent, tol = 1e-4':<52} {t_cd:>8.3f} {t_cd / t_sis:>9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="synthetic,chiaretti,golub,speed")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--neighbouring", default="add_remove", choices=["replace", "add_remove"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report-dir", default="")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if args.report_dir:
        os.makedirs(args.report_dir, exist_ok=True)
    if "synthetic" in parts:
        run_comparison(
            lambda rng: dp.datasets.fan_lv(n=100, d=2000, random_state=rng),
            [5, 8],
            args.trials,
            args.neighbouring,
            args.seed,
            "Synthetic (Fan-Lv, n = 100, d = 2000, 8 nonzero)",
            args.report_dir,
            "synthetic",
        )
    if "chiaretti" in parts:
        df = ev.chiaretti_all()
        k_log = int(math.log(df.shape[1] - 1))
        run_comparison(
            df,
            [5, k_log],
            args.trials,
            args.neighbouring,
            args.seed,
            "Chiaretti ALL (n = 128, d = 12625; y = T vs B lineage)",
            args.report_dir,
            "chiaretti",
        )
    if "golub" in parts:
        df = ev.golub()
        k_log = int(math.log(df.shape[1] - 1))
        run_comparison(
            df,
            [5, k_log],
            args.trials,
            args.neighbouring,
            args.seed,
            "Golub leukaemia (n = 38, d = 3051; y = AML vs ALL)",
            args.report_dir,
            "golub",
        )
    if "speed" in parts:
        speed()


if __name__ == "__main__":
    main()
