"""DP-SIS demo: the diabetes data (bundled with scikit-learn) and the paper's synthetic model."""

from __future__ import annotations

from pathlib import Path

from .. import datasets
from ..api.sis import dp_sis
from ..report import report


def run(out: Path, quick: bool) -> list[Path]:
    diabetes = datasets.diabetes()
    bounds = {name: (-0.2, 0.2) for name in diabetes.columns if name != "y"}
    bounds["y"] = (25.0, 346.0)
    fit = dp_sis("y ~ .", data=diabetes, eps=1.0, k=3, bounds=bounds,
                 oc_trials=20 if quick else 100)
    paths = [Path(fit.report(str(out / "sis_diabetes.html")))]
    synthetic = datasets.fan_lv(n=100, d=2000, random_state=2024)
    fits = [dp_sis("y ~ .", data=synthetic, eps=eps, k=8, bounds=(-4.5, 4.5), random_state=i,
                   oc_trials=10 if quick else 50)
            for i, eps in enumerate([1.0, 10.0, 100.0])]
    paths.append(Path(report(fits, str(out / "sis_synthetic_eps_sweep.html"),
                             title="DP-SIS on the Fan-Lv synthetic model across eps")))
    return paths
