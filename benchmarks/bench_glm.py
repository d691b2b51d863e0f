"""dp_glm benchmark: n = 10⁶ rows, p = 20 logistic regression, against statsmodels' GLM in the same run.

    python benchmarks/bench_glm.py [--n N] [--p P] [--repeat R]

Times (best of ``--repeat`` after a warm-up, benchmarks/_timing.py):

* dp_glm (eps = 1, delta = 1e-7 < 1/n, declared bounds) from the data frame: model frame, clipping,
  the pilot and final noisy Newton steps (PILOT_STEPS + 1 passes over the rows), intervals;
* statsmodels' ``GLM(y, X, Binomial()).fit()`` (IRLS, not private) on the design matrix
  already built (its model frame is not timed: a favour to the baseline);
* dp_glm at eps = inf (IRLS as R's glm, not private), for reference.

The issue's target: dp_glm at most 5 times the statsmodels fit.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from _timing import best_time

import dpstats as dp


def data(n: int, p: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0.0, 0.5, (n, p)), -2, 2)
    beta = np.where(np.arange(p) % 2 == 0, 0.3, -0.3)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(0.2 + X @ beta)))).astype(float)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, p + 1)])
    df["y"] = y
    return df


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    df = data(a.n, a.p)
    formula = "y ~ " + " + ".join(f"x{j}" for j in range(1, a.p + 1))
    X = sm.add_constant(df.drop(columns="y").to_numpy())
    y = df["y"].to_numpy()

    def private():
        return dp.dp_glm(formula, df, eps=1.0, delta=1e-7, bounds=(-2, 2), random_state=1)

    def exact():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dp.dp_glm(formula, df, eps=math.inf)

    def baseline():
        return sm.GLM(y, X, family=sm.families.Binomial()).fit()

    t_sm = best_time(baseline, repeat=a.repeat)
    t_dp = best_time(private, repeat=a.repeat)
    t_inf = best_time(exact, repeat=a.repeat)
    fit, ref = private(), baseline()
    err = float(np.max(np.abs(fit.coefficients - ref.params)))
    width = float(np.median(fit.tidy()["std.error"] / ref.bse))
    print(f"n = {a.n}, p = {a.p} (logistic), best of {a.repeat}")
    print(f"statsmodels GLM fit (IRLS, not private): {t_sm:8.3f} s")
    print(f"dp_glm eps = 1 (noisy Newton):           {t_dp:8.3f} s   ratio {t_dp / t_sm:5.2f} (target <= 5)")
    print(f"dp_glm eps = inf (IRLS, not private):    {t_inf:8.3f} s   ratio {t_inf / t_sm:5.2f}")
    print(f"eps = 1: max |coef - glm| = {err:.4f}, median std.error / glm's = {width:.2f}")


if __name__ == "__main__":
    main()
