"""dp_gmm demo: the issue's separated mixture at a size where dp_gmm learns it beside one where it cannot,
and Phase I vs sample-and-aggregate on a non-spherical mixture.

The separated mixture is :func:`dpstats.simulate.gmm.simulate_gmm`'s default: three unit spherical
Gaussians in d = 10 with means 8 from the origin; the declared box ±12 holds them with 4 sd to spare.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

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


FAILS_N, EPS, DELTA = 1_000, 1.0, 1e-6


def mean_error(result, truth) -> float:
    """Average distance (component sds) of the released means to the true ones, best matching."""
    k = len(truth.means)

    def total(order) -> float:
        return sum(float(np.linalg.norm(result.means[j] - truth.means[order[j]])) for j in range(k))

    best = min(itertools.permutations(range(k)), key=total)
    return total(best) / k


def why_sizes(results: list, truth) -> str:
    """Noise per released mean (operating characteristics), collapsed components and the error
    against the simulation's true means, per fit."""
    gap = min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(truth.means, 2))
    clauses = "; ".join(
        f"at n = {r.n:,} the noise in each released mean is {oc_value(r, NOISE):.3g} component sds, "
        f"{int(r.glance().iloc[0]['collapsed_components'])} of {r.k} components collapsed and the released "
        f"means lie {mean_error(r, truth):.2g} sds from the true ones on average"
        for r in results
    )
    return (
        f"The true means are at least {gap:.1f} sds apart and the noise in the private PCA, clustering and "
        f"estimation steps shrinks as n grows (eps = {results[0].privacy.eps:g}): {clauses}."
    )


def fit_separated(df, random_state=None, oc_trials: int = 0):
    # misclassification only under the plug-in model "the released mixture is the truth"
    return dp_gmm(
        "~ .",
        df,
        k=3,
        eps=EPS,
        delta=DELTA,
        bounds=(-12, 12),
        assume="released" if oc_trials else None,
        oc_trials=oc_trials,
        random_state=random_state,
    )


def _sizes(out: Path, quick: bool) -> DemoReport:
    n = 10_000 if quick else 100_000
    df, truth = simulate_gmm(n, d=10, k=3, random_state=2019)
    small = df.sample(FAILS_N, random_state=0)
    trials = 500 if quick else 2000
    fits = [fit_separated(df, oc_trials=trials), fit_separated(small, oc_trials=trials)]
    title = f"dp_gmm on a separated mixture at n = {n:,} beside n = {FAILS_N:,} (eps = {EPS:g})"
    path = Path(report(fits, str(out / "gmm_separated.html"), title=title))
    shows = (
        f"dp_gmm learns a separated Gaussian mixture at n = {n:,} (private PCA, clustering, estimation) "
        f"and cannot from {FAILS_N:,} of its rows."
    )
    return DemoReport(path, shows, fits, why_sizes(fits, truth))


def run(out: Path, quick: bool) -> list[DemoReport]:
    paths = [_sizes(out, quick)]
    n = 10_000 if quick else 100_000
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
