"""vertical_glm demo: GLMs whose columns are held by different institutions (bundled data)."""

from __future__ import annotations

from pathlib import Path

from .. import datasets
from ..api.vertical import vertical_glm
from . import DemoReport


def run(out: Path, quick: bool) -> list[DemoReport]:
    """Diabetes (Gaussian, 3 parties) and breast cancer (binomial, 3 parties), in-process parties."""
    diabetes = datasets.diabetes()
    fit = vertical_glm(
        "y ~ .",
        diabetes,
        family="gaussian",
        parties={
            "registry": ["age", "sex", "bmi", "bp"],
            "lab": ["s1", "s2", "s3"],
            "clinic": ["s4", "s5", "s6"],
        },
    )
    paths = [
        DemoReport(
            Path(fit.report(str(out / "vertical_diabetes.html"))),
            "A Gaussian GLM fitted by parties that each hold some of the diabetes columns (not DP).",
            [fit],
        )
    ]
    cancer = datasets.breast_cancer()
    fit = vertical_glm(
        "diagnosis ~ mean_radius + mean_texture + mean_smoothness + mean_concave_points + worst_symmetry",
        cancer,
        family="binomial",
        parties={
            "imaging": ["mean_radius", "mean_texture"],
            "pathology": ["mean_smoothness", "mean_concave_points"],
            "lab": ["worst_symmetry"],
        },
    )
    paths.append(
        DemoReport(
            Path(fit.report(str(out / "vertical_breast_cancer.html"))),
            "A logistic GLM of the breast-cancer diagnosis across the parties' columns (not DP).",
            [fit],
        )
    )
    return paths
