"""dp_bh's formula route by simulation: FDR and power against non-private BH on the same z-tests.

Setting (seeds 7000 + trial, 200 trials): n = 100 000 rows, 20 independent ±1 columns (equally
likely, so their sd equals the public scale τ = 1 and the null z's are N(0, 1), not conservative),
y = 0.025·(x1 + ... + x5) + N(0, 1); bounds (-1, 1) for every column and (-4, 4) for y; the
declared σ = √(1 + 5·0.025²), the sd of y given any one null column.  So Δz = 2(1 − 1/n)·8/(σ√n)
= 0.0504 and the derived η = 0.333 at ν = 1e-10; k = 5 peels, q = 0.1, pure DP, eps in {1, 2, 5}.
Each trial runs the front door once per eps on the same data; non-private BH (statsmodels) runs on
the raw p-values of the same z-tests (diagnostics of the eps = 1 run).

Claims checked, with 2 standard errors (sd of the FDP / √200) of slack:
* the non-private tests are valid: BH on them has FDR <= q;
* the derived bound (dpstats.privacy.fdr, eq. 3): FDR <= q·((m0/m)·H_k + 1/10);
* the stronger empirical claim FDR <= q;
* power (mean fraction of the 5 effects rejected) rises with eps and reaches 0.95 at eps = 5;
  printed beside non-private BH's power (the README's table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import dpstats as dp
from dpstats.privacy.fdr import harmonic

N, M, M1, BETA, Q, K, TRIALS = 100_000, 20, 5, 0.025, 0.1, 5, 200
EPS_GRID = (1.0, 2.0, 5.0)
NAMES = [f"x{j + 1}" for j in range(M)]
BOUNDS = {**{name: (-1, 1) for name in NAMES}, "y": (-4, 4)}
SIGMA = float(np.sqrt(1 + M1 * BETA**2))


def _data(rng: np.random.Generator) -> pd.DataFrame:
    X = 2.0 * rng.integers(0, 2, size=(N, M)) - 1.0
    df = pd.DataFrame(X, columns=NAMES)
    df["y"] = BETA * X[:, :M1].sum(axis=1) + rng.normal(0, 1, N)
    return df


def _fdp_and_power(rejected: np.ndarray) -> tuple[float, float]:
    false = int(np.sum(rejected >= M1))
    return false / max(rejected.size, 1), float(np.sum(rejected < M1)) / M1


def simulate() -> pd.DataFrame:
    rows = {eps: [] for eps in (*EPS_GRID, "BH")}
    for trial in range(TRIALS):
        rng = np.random.default_rng(7000 + trial)
        df = _data(rng)
        for eps in EPS_GRID:
            fit = dp.dp_bh(
                "y ~ .",
                data=df,
                q=Q,
                eps=eps,
                bounds=BOUNDS,
                sigma=SIGMA,
                max_rejections=K,
                random_state=rng,
                diagnostics=eps == EPS_GRID[0],
            )
            rows[eps].append(_fdp_and_power(np.array([NAMES.index(h) for h in fit.rejected], dtype=int)))
            if eps == EPS_GRID[0]:
                raw = np.array([fit.diagnostics["raw_p_values"][name] for name in NAMES])
                rows["BH"].append(
                    _fdp_and_power(np.flatnonzero(multipletests(raw, alpha=Q, method="fdr_bh")[0]))
                )
    table = []
    for eps, values in rows.items():
        fdp, power = np.asarray(values).T
        table.append(
            {
                "eps": eps,
                "FDR": fdp.mean(),
                "FDR_se": fdp.std(ddof=1) / np.sqrt(TRIALS),
                "power": power.mean(),
            }
        )
    return pd.DataFrame(table)


@pytest.mark.slow
def test_formula_route_fdr_within_bound_and_power_against_non_private_bh():
    table = simulate()
    print("\n" + table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    private, exact = table[table["eps"] != "BH"], table[table["eps"] == "BH"].iloc[0]
    assert exact.FDR <= Q + 2 * exact.FDR_se and exact.power >= 0.95
    bound = Q * ((M - M1) / M * harmonic(K) + 0.1)
    for row in private.itertuples():
        assert row.FDR <= bound + 2 * row.FDR_se
        assert row.FDR <= Q + 2 * row.FDR_se
    assert private["power"].is_monotonic_increasing
    assert private["power"].iloc[-1] >= 0.95
