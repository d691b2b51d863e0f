"""DP-SIS demo: the diabetes data (bundled with scikit-learn) and the paper's synthetic model."""

from __future__ import annotations

from pathlib import Path

from .. import datasets
from ..api.sis import dp_sis
from ..report import report
from ..simulate import Assume


def run(out: Path, quick: bool) -> list[Path]:
    diabetes = datasets.diabetes()
    bounds = {name: (-0.2, 0.2) for name in diabetes.columns if name != "y"}
    bounds["y"] = (25.0, 346.0)
    # no assume=: the report holds only what follows from n, d, k, eps and the bounds
    fit = dp_sis("y ~ .", data=diabetes, eps=1.0, k=3, bounds=bounds)
    paths = [Path(fit.report(str(out / "sis_diabetes.html")))]
    synthetic = datasets.fan_lv(n=100, d=2000, random_state=2024)
    # precision/recall only under a stated model: 8 signals of about the Fan-Lv size at n = 100
    model = Assume(signals=8, strength=2.0, noise=1.5**0.5, bound_sds=4.5)
    fits = [
        dp_sis(
            "y ~ .",
            data=synthetic,
            eps=eps,
            k=8,
            bounds=(-4.5, 4.5),
            random_state=i,
            assume=model,
            oc_trials=50 if quick else 200,
        )
        for i, eps in enumerate([1.0, 10.0, 100.0])
    ]
    paths.append(
        Path(
            report(
                fits,
                str(out / "sis_synthetic_eps_sweep.html"),
                title="DP-SIS on the Fan-Lv synthetic model across eps",
            )
        )
    )
    return paths
