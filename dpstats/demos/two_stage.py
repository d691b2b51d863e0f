"""Two-stage demo: breast-cancer diagnosis (bundled with scikit-learn) and DP-SIS vs two-stage."""

from __future__ import annotations

from pathlib import Path

from .. import datasets
from ..api.sis import dp_sis
from ..api.two_stage import dp_two_stage
from ..evaluate import comparison_report, compare_selectors, summarise
from ..report import report
from . import DemoReport

COMPARE_N, COMPARE_D = 100, 2000


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
        )
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
