"""dp_lm demo: private regression where the intervals are informative beside where they are not,
and select-then-infer (dp_sis on one half of the rows, dp_lm on the other) in one ledger.

The data are simulated: five N(0, 1) predictors clipped to the declared ±4 (the response to ±6), two
of them with effects 0.5 and −0.3, residual sd 1.  Everything the mechanism needs is declared.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..api.lm import dp_lm
from ..api.select_infer import dp_select_infer
from ..report import report
from . import DemoReport

EFFECTS = {"x1": 0.5, "x2": -0.3}
WORKS_N, FAILS_N, EPS, DELTA = 100_000, 1_000, 1.0, 1e-6
BOUNDS = {**{f"x{j}": (-4.0, 4.0) for j in range(1, 6)}, "y": (-6.0, 6.0)}


def simulated(n: int, p: int, seed: int) -> pd.DataFrame:
    """n rows of p N(0, 1) predictors (clipped to ±4) and y = 0.5 x1 − 0.3 x2 + N(0, 1) (clipped to ±6)."""
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, p)), -4, 4)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, p + 1)])
    y = sum(b * frame[name] for name, b in EFFECTS.items()) + rng.standard_normal(n)
    return frame.assign(y=np.clip(y, -6, 6))


def _width(result, term: str) -> float:
    row = result.tidy().set_index("term").loc[term]
    return float(row["conf.high"] - row["conf.low"])


def why(works, fails) -> str:
    """The interval widths of the two fits, read from their tidy tables."""
    return (
        f"The privacy noise added to XᵀX and Xᵀy has a fixed size while XᵀX grows with n: at n = {works.n:,} the "
        f"95% interval for x1 is {_width(works, 'x1'):.3g} wide, at n = {fails.n:,} it is "
        f"{_width(fails, 'x1'):.3g} wide (both at eps = {works.privacy.eps:g})."
    )


def _regimes(out: Path, quick: bool) -> DemoReport:
    boot = 200 if quick else 1000
    fits = [
        dp_lm(
            "y ~ .",
            simulated(n, 5, seed),
            eps=EPS,
            delta=DELTA,
            bounds=BOUNDS,
            n_boot=boot,
            random_state=seed,
        )
        for n, seed in ((WORKS_N, 1), (FAILS_N, 2))
    ]
    title = f"dp_lm at n = {WORKS_N:,} beside n = {FAILS_N:,} (eps = {EPS:g})"
    path = Path(report(fits, str(out / "lm_regimes.html"), title=title))
    shows = (
        "Private linear regression with intervals for sampling and privacy noise: informative, and too wide."
    )
    return DemoReport(path, shows, fits, why(*fits))


def _select_infer(out: Path, quick: bool) -> DemoReport:
    data = simulated(40_000 if quick else 100_000, 5, 3)
    fit = dp_select_infer(
        "y ~ .", data, eps=2.0, delta=DELTA, select="sis", k=2, bounds=BOUNDS, random_state=3
    )
    path = Path(fit.report(str(out / "select_then_infer.html")))
    shows = (
        "dp_sis selects two predictors on half the rows; dp_lm estimates them on the other half (one ledger)."
    )
    return DemoReport(path, shows, [fit])


def run(out: Path, quick: bool) -> list[DemoReport]:
    return [_regimes(out, quick), _select_infer(out, quick)]
