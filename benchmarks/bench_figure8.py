"""Figure 8 of the DP-SIS paper, reproduced in kind on the Chiaretti ALL microarrays.

Swope et al. §5, Figure 8: TOP / GREAT / GOOD rates of DP-SIS (canonical Lipschitz
top-k) against eps on the Chin data (118 x 22 215, not shipped with R); the text says
that "while its top-10 accuracy is around 20% at eps = 20, ... it performs very well
on the TOP, GREAT, and GOOD metrics".  Here: Chiaretti ALL (Bioconductor ``ALL``,
128 patients x 12 625 probes, y = T-cell lineage), k = 10, the paper's max-abs scaled,
mean-centred scores, classes against the order statistics of the non-private scores
(the paper's definition, ``classes_against="scores"``), accuracy against the top 10 of
a non-private lasso (λ = 0.1) as in the paper.  Both neighbouring relations: replace
one row (score sensitivity 2, dpstats' default) and add/remove one row (sensitivity 1,
the paper's).  The data set is fixed; each trial is a fresh draw of the mechanism.

    python benchmarks/bench_figure8.py [--trials 300] [--seed 0]    (needs R, rpy2, r-bioc-all)

Standard errors of the rates are sqrt(p(1-p)/trials) <= 0.029 at 300 trials.

Measured (seed 0, 300 draws; rate (s.e.)), replace one row (sensitivity 2):

   eps           TOP         GREAT          GOOD   accuracy vs lasso
  5-50   0.000 (0.000) 0.000 (0.000) 0.000 (0.000)  0.001 ... 0.069
    60   0.933 (0.014) 0.933 (0.014) 0.953 (0.012)  0.197 (0.002)
    80   0.993 (0.005) 0.997 (0.003) 1.000 (0.000)  0.200 (0.000)
   100   1.000 (0.000) 1.000 (0.000) 1.000 (0.000)  0.200 (0.000)
   200   1.000 (0.000) 1.000 (0.000) 1.000 (0.000)  0.200 (0.000)

add/remove one row (sensitivity 1): 0 up to eps = 20; at 30: 0.950 (0.013) / 0.953 (0.012) /
0.967 (0.010), accuracy 0.197; 1 from eps = 40 on.  The paper's Chin figure is high by
eps = 20; on ALL the step comes later (README, "TOP / GREAT / GOOD").
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpstats.evaluate import chiaretti_all, compare_selectors, summarise

EPS = (5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 80.0, 100.0, 200.0)


def table(data, neighbouring: str, trials: int, seed: int) -> None:
    res = compare_selectors(
        data, ["dp_sis"], EPS, k=10, trials=trials, neighbouring=neighbouring, random_state=seed
    )
    s = summarise(res)
    sens = 2 if neighbouring == "replace" else 1
    print(f"\nneighbouring = {neighbouring} (score sensitivity {sens}), {trials} draws, k = 10")
    print(f"{'eps':>6} {'TOP':>13} {'GREAT':>13} {'GOOD':>13} {'accuracy vs lasso':>19}")
    for r in s.itertuples():
        cells = [f"{p:.3f} ({np.sqrt(p * (1 - p) / r.trials):.3f})" for p in (r.TOP, r.GREAT, r.GOOD)]
        print(
            f"{r.eps:>6g} {cells[0]:>13} {cells[1]:>13} {cells[2]:>13} "
            f"{r.accuracy:>10.3f} ({r.accuracy_se:.3f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    start = time.perf_counter()
    data = chiaretti_all()
    for neighbouring in ("replace", "add_remove"):
        table(data, neighbouring, args.trials, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
