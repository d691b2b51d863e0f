"""dp_gmm demo: the issue's separated mixture, Phase I vs sample-and-aggregate, and predict()."""

from __future__ import annotations

from pathlib import Path

from ..api.gmm import dp_gmm
from ..simulate.gmm import simulate_gmm
from ..report import report


def run(out: Path, quick: bool) -> list[Path]:
    n = 10_000 if quick else 100_000
    df, _ = simulate_gmm(n, d=10, k=3, random_state=2019)
    # misclassification only under the plug-in model "the released mixture is the truth"
    fit = dp_gmm(
        "~ .",
        df,
        k=3,
        eps=1.0,
        delta=1e-6,
        bounds=(-12, 12),
        assume="released",
        oc_trials=500 if quick else 2000,
    )
    paths = [Path(fit.report(str(out / "gmm_separated.html")))]
    ns, _ = simulate_gmm(n, d=5, k=3, scales=[0.5, 1.0, 2.0], anisotropy=4.0, random_state=7)
    fits = [
        dp_gmm("~ .", ns, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), method=method)
        for method in ("pca_cluster", "sample_aggregate")
    ]
    paths.append(
        Path(
            report(
                fits,
                str(out / "gmm_nonspherical_methods.html"),
                title="dp_gmm on a non-spherical mixture: Phase I vs sample-and-aggregate",
            )
        )
    )
    return paths
