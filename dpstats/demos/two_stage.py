"""Two-stage demo: breast-cancer diagnosis (bundled with scikit-learn), two-stage at a size where the
private vote recovers the signal beside one where it cannot, and DP-SIS vs two-stage.

The regimes use the DP-SIS paper's design W1 (:func:`dpstats.simulate.two_stage.instability_data`):
N(0, 1) features, y = x1 + … + x5 + N(0, 0.1), here with d = 200.  Two-stage needs no bounds: every
vote count has sensitivity 1 whatever the data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import datasets
from ..api.sis import dp_sis
from ..api.two_stage import dp_two_stage
from ..evaluate import comparison_report, compare_selectors, summarise
from ..report import report
from ..simulate.two_stage import instability_data
from . import DemoReport, oc_value

COMPARE_N, COMPARE_D = 100, 2000
REGIME_D, SIGNALS, EPS = 200, 5, 1.0
WORKS_N, FAILS_N = 2_500, 400


def design_w1(n: int, seed: int) -> pd.DataFrame:
    """n rows of design W1 with d = 200: the first five features carry the signal."""
    X, y = instability_data("W1", np.random.default_rng(seed), n=n, d=REGIME_D)
    return pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(REGIME_D)]).assign(y=y)


def truth() -> set[str]:
    return {f"x{j + 1}" for j in range(SIGNALS)}


def fit_regime(data: pd.DataFrame, random_state=None, oc_trials: int = 50):
    return dp_two_stage("y ~ .", data, eps=EPS, k=SIGNALS, oc_trials=oc_trials, random_state=random_state)


def _unanimous_share(result) -> float:
    prefix = f"share of {result.k} recovered when each gets {result.blocks} of {result.blocks} votes"
    return oc_value(result, prefix)


def why(results: list, true: set[str]) -> str:
    """The recovery share of a unanimous vote (operating characteristics) against what each fit selected."""
    clauses = "; ".join(
        f"at n = {r.n:,} ({r.blocks} blocks of about {r.n // r.blocks} rows) features voted for by every block "
        f"are recovered at a share of {_unanimous_share(r):.2f}, and {len(true.intersection(r.selected))} of the "
        f"simulation's {len(true)} true features were selected"
        for r in results
    )
    return (
        f"One block gives one vote per feature, so a count is at most the number of blocks (about √n), while "
        f"the private top-k's noise at eps = {results[0].privacy.eps:g} over {results[0].p} columns does not "
        f"shrink with n: {clauses}."
    )


def _regimes(out: Path, quick: bool) -> DemoReport:
    trials = 10 if quick else 50
    fits = [fit_regime(design_w1(n, seed), oc_trials=trials) for n, seed in ((WORKS_N, 1), (FAILS_N, 2))]
    title = f"Two-stage selection at n = {WORKS_N:,} beside n = {FAILS_N:,} (d = {REGIME_D}, eps = {EPS:g})"
    path = Path(report(fits, str(out / "two_stage_regimes.html"), title=title))
    shows = (
        f"Two-stage selection recovers the {SIGNALS} signals of the paper's design W1 at n = {WORKS_N:,} "
        f"and cannot at n = {FAILS_N:,} (simulated data)."
    )
    return DemoReport(path, shows, fits, why(fits, truth()))


def run(out: Path, quick: bool) -> list[DemoReport]:
    cancer = datasets.breast_cancer()
    cancer["malignant"] = (cancer.pop("diagnosis") == "malignant").astype(float)
    fits = [
        dp_two_stage(
            "malignant ~ .", data=cancer, eps=2.0, k=5, random_state=None, oc_trials=10 if quick else 50
        ),
        dp_two_stage("malignant ~ .", data=cancer, eps=2.0, k=5, topk="joint", oc_trials=10 if quick else 50),
    ]
    paths = [
        DemoReport(
            Path(
                report(
                    fits,
                    str(out / "two_stage_breast_cancer.html"),
                    title="Two-stage selection of 5 of 30 tumour features (canonical Lipschitz and joint top-k)",
                )
            ),
            "Two-stage selection of tumour features with two top-k selectors, canonical Lipschitz and joint (real data).",
            fits,
        ),
        _regimes(out, quick),
    ]
    synthetic = datasets.fan_lv(n=100, d=2000, random_state=2024)
    both = [
        dp_sis("y ~ .", data=synthetic, eps=20.0, k=8, bounds=(-4.5, 4.5), oc_trials=5 if quick else 50),
        dp_two_stage("y ~ .", data=synthetic, eps=20.0, k=8, oc_trials=5 if quick else 50),
    ]
    paths.append(
        DemoReport(
            Path(
                report(
                    both,
                    str(out / "sis_vs_two_stage_one_run.html"),
                    title="DP-SIS and two-stage on one draw of the synthetic model",
                )
            ),
            "DP-SIS and two-stage side by side, same budget, on one draw of the paper's synthetic model.",
            both,
        )
    )
    results = compare_selectors(
        lambda rng: datasets.fan_lv(n=COMPARE_N, d=COMPARE_D, random_state=rng),
        ["dp_sis", "dp_two_stage"],
        [1.0, 10.0, 20.0, 100.0],
        k=[5, 8],
        trials=5 if quick else 50,
        random_state=0,
    )
    paths.append(
        DemoReport(
            Path(
                comparison_report(
                    results,
                    str(out / "compare_selectors_synthetic.html"),
                    title="DP-SIS vs two-stage on the synthetic model",
                )
            ),
            "Accuracy of DP-SIS and two-stage over repeated draws of the synthetic model across a grid of eps and k.",
            summary=summarise(results),
            n=COMPARE_N,
            p=COMPARE_D,
        )
    )
    return paths
