"""Benchmark: vertical_glm by block coordinate descent, n = 100 000, p = 50 over 3 parties.

Prints, per family, the sweeps to convergence (tol 1e-8 on the relative change), wall time,
the ratio to the pooled statsmodels GLM fit measured in the same run (the
baseline), and the largest relative coefficient difference.  One more row runs
the Gaussian fit with three real parties over loopback TCP (threads,
AES-256-GCM frames).  Also prints the convergence trace of the binomial fit.

    python benchmarks/bench_vertical.py [--n 100000] [--p 50] [--rho 0.3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import statsmodels.api as sm

import dpstats as dp
from dpstats.vertical import Party, run_on_loopback

SM = {
    "gaussian": sm.families.Gaussian(),
    "binomial": sm.families.Binomial(),
    "poisson": sm.families.Poisson(),
}


def make(n: int, p: int, rho: float, family: str, seed: int = 0) -> pd.DataFrame:
    """AR(1)-correlated columns (corr rho^|i-j|), so the parties' blocks interact."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * Z[:, j]
    beta = rng.uniform(-0.3, 0.3, p) / np.sqrt(p / 10)
    eta = 0.1 + X @ beta
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    if family == "gaussian":
        df["y"] = eta + rng.standard_normal(n)
    elif family == "binomial":
        df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(eta)).astype(float)
    return df


def split(p: int, k: int = 3) -> list[list[str]]:
    cols = [f"x{j + 1}" for j in range(p)]
    return [list(c) for c in np.array_split(cols, k)]


def network_fit(df: pd.DataFrame, parties: list[list[str]], family: str):
    key = "7e" * 32
    df = df.assign(id=np.arange(len(df)))
    lead = Party(
        df[["id", "y", *parties[0]]],
        key,
        name="A",
        formula="y ~ " + " + ".join(parties[0]),
        row_id="id",
        timeout=120,
    )
    members = [
        Party(df[["id", *cols]], key, name=nm, row_id="id", timeout=120)
        for nm, cols in zip("BC", parties[1:])
    ]
    results, errors = run_on_loopback([lead, *members], timeout=600, family=family)
    if errors:
        raise next(iter(errors.values()))
    return results["A"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--rho", type=float, default=0.3)
    args = ap.parse_args()
    parties = split(args.p)
    rows, traces = [], {}
    for family in ("gaussian", "binomial", "poisson"):
        df = make(args.n, args.p, args.rho, family)
        X = sm.add_constant(df.drop(columns="y").to_numpy())
        t0 = time.perf_counter()
        ref = sm.GLM(df.y.to_numpy(), X, family=SM[family]).fit(tol=1e-12)
        t_pooled = time.perf_counter() - t0
        t0 = time.perf_counter()
        fit = dp.vertical_glm("y ~ .", df, parties=parties, family=family)
        t_bcd = time.perf_counter() - t0
        traces[family] = fit.trace
        est = fit.coefficients["estimate"].to_numpy()
        rows.append(
            {
                "family": family,
                "mode": "in-process",
                "sweeps": fit.iterations,
                "converged": fit.converged,
                "time_s": t_bcd,
                "pooled_time_s": t_pooled,
                "ratio": t_bcd / t_pooled,
                "max_rel_coef_diff": float(np.max(np.abs(est - ref.params) / np.abs(ref.params))),
                "max_rel_se_diff": float(np.max(np.abs(fit.coefficients["std_error"] - ref.bse) / ref.bse)),
            }
        )
        if family == "gaussian":
            t0 = time.perf_counter()
            net = network_fit(df, parties, family)
            t_net = time.perf_counter() - t0
            est = net.coefficients["estimate"].to_numpy()
            rows.append(
                {
                    "family": family,
                    "mode": "3 parties, loopback TCP (threads)",
                    "sweeps": net.iterations,
                    "converged": net.converged,
                    "time_s": t_net,
                    "pooled_time_s": t_pooled,
                    "ratio": t_net / t_pooled,
                    "max_rel_coef_diff": float(np.max(np.abs(est - ref.params) / np.abs(ref.params))),
                    "max_rel_se_diff": float(
                        np.max(np.abs(net.coefficients["std_error"] - ref.bse) / ref.bse)
                    ),
                }
            )
    print(
        f"vertical_glm benchmark: n = {args.n}, p = {args.p} (+ intercept) over 3 parties, "
        f"AR(1) rho = {args.rho}; baseline = pooled statsmodels GLM in the same run"
    )
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    tr = traces["binomial"]
    show = tr if len(tr) <= 12 else pd.concat([tr.head(6), tr.tail(6)])
    print("\nConvergence trace (binomial):")
    print(show.to_string(index=False, float_format=lambda v: f"{v:.6g}"))


if __name__ == "__main__":
    main()
