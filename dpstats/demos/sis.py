"""DP-SIS demo: the diabetes data (bundled with scikit-learn), the paper's synthetic model at a size
and budget where the private top-k recovers the signal beside eps = 1, and the paper's own size across eps.

The synthetic data are the Fan–Lv model (:func:`dpstats.datasets.fan_lv`): N(0, 1) features, 8
signals, noise variance 1.5.  Bounds are declared: every feature at ±4.5 sd, the response at ±4.5
times its sd under the stated model (:class:`~dpstats.simulate.Assume`), so nothing is taken from
the data.
"""

from __future__ import annotations

from pathlib import Path

from .. import datasets
from ..api.sis import dp_sis
from ..report import report
from ..simulate import Assume
from . import DemoReport, oc_value

BOUND_SDS = 4.5
RECOVERY_N, RECOVERY_D, SIGNALS = 3000, 2000, 8
WORKS_EPS, FAILS_EPS = 20.0, 1.0
# Fan–Lv signals are a + |z| with a = 4 log n / √n (0.58 at n = 3000): about 1.3 on average
MODEL = Assume(signals=SIGNALS, strength=1.3, noise=1.5**0.5, bound_sds=BOUND_SDS)


def _clause(result, truth: set[str]) -> str:
    """The noise one release carried against the score gap exact recovery needs, and what it found."""
    noise = oc_value(result, "expected largest noise term")
    gap = oc_value(result, f"score gap x(k) - x(k+1) giving exact top-{result.k} recovery with prob >= 0.9")
    recall = oc_value(result, "recall")
    found = len(truth.intersection(result.selected))
    model = f", recall {recall:.2f} under the assumed model" if recall is not None else ""
    return (
        f"at eps = {result.privacy.eps:g} the largest of the {result.p} noise terms is expected near "
        f"{noise:,.1f} score units and exact top-{result.k} recovery with probability 0.9 needs a score gap "
        f"of {gap:,.1f}: {found} of the simulation's {len(truth)} true signals selected{model}"
    )


def why(results: list, truth: set[str]) -> str:
    """A sentence comparing releases, computed from their operating characteristics and selections.

    A score is n times the centred covariance of the data scaled to [−1, 1] by the bounds, so it
    grows with n while the noise does not; ``truth`` is the simulation's support (only a simulation
    knows it).
    """
    n = results[0].n
    clauses = "; ".join(_clause(r, truth) for r in results)
    return f"Scores are n = {n:,} times a covariance of the bounds-scaled data, the noise does not grow with n; {clauses}."


def _diabetes(out: Path) -> DemoReport:
    diabetes = datasets.diabetes()
    bounds = {name: (-0.2, 0.2) for name in diabetes.columns if name != "y"}
    bounds["y"] = (25.0, 346.0)
    # no assume=: the report holds only what follows from n, d, k, eps and the bounds
    fit = dp_sis("y ~ .", data=diabetes, eps=1.0, k=3, bounds=bounds)
    path = Path(fit.report(str(out / "sis_diabetes.html")))
    return DemoReport(
        path,
        f"DP-SIS screens the diabetes predictors for the {fit.k} most associated with progression (real data, no model assumed).",
        [fit],
    )


def _recovery(out: Path, quick: bool) -> DemoReport:
    data = datasets.fan_lv(n=RECOVERY_N, d=RECOVERY_D, s=SIGNALS, random_state=2024)
    bounds = {name: (-BOUND_SDS, BOUND_SDS) for name in data.columns if name != "y"}
    bounds["y"] = (-BOUND_SDS * MODEL.response_sd(), BOUND_SDS * MODEL.response_sd())
    fits = [
        dp_sis(
            "y ~ .",
            data=data,
            eps=eps,
            k=SIGNALS,
            bounds=bounds,
            assume=MODEL,
            oc_trials=50 if quick else 200,
        )
        for eps in (WORKS_EPS, FAILS_EPS)
    ]
    title = f"DP-SIS on the Fan-Lv model at n = {RECOVERY_N:,}, d = {RECOVERY_D:,}: eps = {WORKS_EPS:g} beside eps = {FAILS_EPS:g}"
    path = Path(report(fits, str(out / "sis_recovery_vs_eps1.html"), title=title))
    shows = (
        f"DP-SIS where it recovers the {SIGNALS} signals (eps = {WORKS_EPS:g}) and where it cannot "
        f"(eps = {FAILS_EPS:g}), same data."
    )
    return DemoReport(path, shows, fits, why(fits, set(data.attrs["support"])))


def _paper_size(out: Path, quick: bool) -> DemoReport:
    synthetic = datasets.fan_lv(n=100, d=2000, random_state=2024)
    # precision/recall only under a stated model: 8 signals of about the Fan-Lv size at n = 100
    model = Assume(signals=8, strength=2.0, noise=1.5**0.5, bound_sds=4.5)
    grid = [1.0, 10.0, 100.0]
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
        for i, eps in enumerate(grid)
    ]
    path = Path(
        report(
            fits,
            str(out / "sis_synthetic_eps_sweep.html"),
            title="DP-SIS on the Fan-Lv synthetic model across eps",
        )
    )
    eps_text = ", ".join(f"{e:g}" for e in grid)
    shows = f"The paper's size (n = {len(synthetic)}, d = {synthetic.shape[1] - 1}) across eps = {eps_text}."
    return DemoReport(path, shows, fits, why(fits, set(synthetic.attrs["support"])))


def run(out: Path, quick: bool) -> list[DemoReport]:
    return [_diabetes(out), _recovery(out, quick), _paper_size(out, quick)]
