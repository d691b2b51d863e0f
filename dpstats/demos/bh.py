"""dp_bh demo: z-tests of 30 means on bounded data, eta derived from the bounds, private BH."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.stats import norm

from ..api.bh import dp_bh
from ..methods.bh import eta_two_sided_z, z_mean_delta
from . import DemoReport


def run(out: Path, quick: bool) -> list[DemoReport]:
    n, m, sigma, truncate = (50_000 if quick else 200_000), 30, 0.5, 1e-10
    rng = np.random.default_rng(2021)
    shifts = np.r_[np.full(5, 0.02), np.zeros(m - 5)]
    data = np.clip(rng.uniform(0.0, 1.0, (n, m)) + shifts, 0.0, 1.0)  # columns in [0, 1], 5 true effects
    z = np.sqrt(n) * (data.mean(axis=0) - 0.5) / sigma  # two-sided z-tests of mean 0.5, public σ = 0.5
    p = 2 * norm.sf(np.abs(z))
    eta = eta_two_sided_z(z_mean_delta(0.0, 1.0, n, sigma), truncate)
    names = [f"marker{j + 1}" for j in range(m)]
    fit = dp_bh(dict(zip(names, p)), q=0.1, eps=2.0, eta=eta, truncate=truncate, max_rejections=10)
    return [
        DemoReport(
            Path(fit.report(str(out / "bh_mean_tests.html"))),
            "Private Benjamini-Hochberg over 30 z-tests of means of bounded data, eta derived from the bounds.",
            [fit],
            n=n,
            p=m,
        )
    ]
