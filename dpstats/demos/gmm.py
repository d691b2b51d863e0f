"""dp_gmm demo: the issue's separated mixture, Phase I vs sample-and-aggregate, and predict()."""

from __future__ import annotations

from pathlib import Path

from ..api.gmm import dp_gmm
from ..simulate.gmm import simulate_gmm
from ..report import report
from . import DemoReport, oc_value

NOISE = "l2 noise in each released mean, in component-sd units"
ALPHA = "accuracy alpha (total variation) of Theorem 1.1"


def why(results: list) -> str:
    """Noise in the released means (component-sd units) per fit, and the theorem's accuracy at this n."""
    clauses = [
        f"{r.glance().iloc[0]['fit_method']}: noise of {oc_value(r, NOISE):.3g} component sds in each mean"
        for r in results
    ]
    alpha = oc_value(results[0], ALPHA)
    return (
        "; ".join(clauses)
        + f"; Theorem 1.1's accuracy α at this n, eps, delta is {alpha:.2g} (order of magnitude)."
    )


def run(out: Path, quick: bool) -> list[DemoReport]:
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
    shows = "dp_gmm learns a separated Gaussian mixture: private PCA, private clustering, private estimation."
    paths = [DemoReport(Path(fit.report(str(out / "gmm_separated.html"))), shows, [fit], why([fit]))]
    ns, _ = simulate_gmm(n, d=5, k=3, scales=[0.5, 1.0, 2.0], anisotropy=4.0, random_state=7)
    fits = [
        dp_gmm("~ .", ns, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), method=method)
        for method in ("pca_cluster", "sample_aggregate")
    ]
    path = report(
        fits,
        str(out / "gmm_nonspherical_methods.html"),
        title="dp_gmm on a non-spherical mixture: Phase I vs sample-and-aggregate",
    )
    shows = "A non-spherical mixture: the paper's Phase I (private PCA and clustering) beside sample-and-aggregate."
    paths.append(DemoReport(Path(path), shows, fits, why(fits)))
    return paths
