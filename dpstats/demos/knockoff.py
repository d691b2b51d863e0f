"""DP knockoff demo: the paper's design (Pournaderi & Xiang, §5, Figure 1) where Method II selects
with FDR control, beside a budget where it cannot, and Methods I and II against the non-private filter.

The data are drawn by :func:`dpstats.simulate.knockoff.sample_data` from the paper's model: p = 50
N(0, 1) features, 15 signals of amplitude 4.5 (:func:`~dpstats.simulate.knockoff.paper_beta`), noise
sd 1, rows clipped to the public bound B (the (1 − 0.001/n) quantile of ‖x_i‖).  Everything the
sensitivities need is declared from that design, so no step depends on the data: B, σ, ‖β‖, a lower
bound 0.9·√n on the column norms (‖x_j‖² ~ χ²_n) and 0.8 on λ_min of the normalised Gram matrix
(about (1 − √(p/n))² for Gaussian columns).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..api.knockoff import dp_knockoff
from ..report import report
from ..simulate import Assume
from ..simulate.knockoff import default_row_bound, paper_beta, sample_data
from . import DemoReport, oc_value

N = 100_000
P, SIGNALS, AMPLITUDE, SIGMA = 50, 15, 4.5, 1.0  # the paper's Figure 1 design
WORKS_EPS, FAILS_EPS, DELTA, FDR = 1.0, 0.1, 1e-6, 0.2
# the noise sd on the unit-norm column scale, where a signal's effect is b·√n: Method II noises the
# coefficients (Theorem 5), Method I the cross-products [X′ X̃′]ᵀy (Theorem 3)
NOISE_SD = {
    "II": ("kappa (coefficient noise sd)", "coefficients"),
    "I": ("kappa2 (cross-product noise sd)", "cross-products"),
}


def paper_design(n: int, seed: int = 2021) -> tuple[pd.DataFrame, np.ndarray, float]:
    """The paper's data at size n, its coefficients and the public row bound B."""
    gen = np.random.default_rng(seed)
    beta = paper_beta(P, SIGNALS, AMPLITUDE, gen)
    bound = default_row_bound(n, P)
    X, y = sample_data(n, P, beta, SIGMA, gen, B=bound)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(P)])
    df["y"] = y
    return df, beta, bound


def _ratio(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:,.0f}"


def _clause(result, effect: float, truth: set[str]) -> str:
    """What one release did and the noise it carried, relative to the assumed effect size."""
    if math.isinf(result.privacy.eps):
        head = "without privacy (eps = ∞) nothing is noised"
    else:
        key, what = NOISE_SD[result.variant]
        kappa = result.noise[key]
        head = (
            f"at eps = {result.privacy.eps:g} Method {result.variant}'s released {what} carry noise of sd "
            f"{kappa:,.0f} ({_ratio(kappa / effect)} × an effect)"
        )
    fdr, power = oc_value(result, "FDR"), oc_value(result, "power")
    model = f"; under the assumed model FDR {fdr:.2f} and power {power:.2f}" if power is not None else ""
    if result.selected:
        fdp = oc_value(result, "knockoff+ estimate of the FDP")
        true = len(truth.intersection(result.selected))
        return (
            f"{head}: {len(result.selected)} terms selected at threshold T = {result.threshold:.3g} "
            f"({true} of them among the simulation's {len(truth)} true signals), knockoff+ FDP estimate "
            f"{fdp:.2f} (target q = {result.fdr:g}){model}"
        )
    smallest = oc_value(result, "smallest knockoff+ FDP estimate")
    return (
        f"{head}: the noise swamps the W statistics, no threshold brings the knockoff+ FDP estimate "
        f"to q = {result.fdr:g} (smallest {smallest:.2f}) and nothing is selected{model}"
    )


def why(results: list, strength: float, truth: set[str]) -> str:
    """A sentence comparing releases, computed from their noise scales and operating characteristics.

    ``truth`` is the simulation's true support: the demo drew the data, so it can say how many
    selected terms are true signals (a comparison only a simulation can make).
    """
    effect = strength * math.sqrt(results[0].n)  # Assume's effect b·√n on the unit-norm column scale
    clauses = "; ".join(_clause(r, effect, truth) for r in results)
    return f"Each assumed signal has effect {effect:.0f} on the unit-norm column scale; {clauses}."


def run(out: Path, quick: bool) -> list[DemoReport]:
    df, beta, bound = paper_design(N)
    model = Assume(signals=SIGNALS, strength=AMPLITUDE, noise=SIGMA)
    declared = dict(
        fdr=FDR,
        bounds=bound,
        sigma=SIGMA,
        beta_norm=float(np.linalg.norm(beta)),
        c_min=0.9 * math.sqrt(N),
        lambda_min=0.8,
        assume=model,
        oc_trials=50 if quick else 200,
    )
    works = dp_knockoff("y ~ .", df, eps=WORKS_EPS, delta=DELTA, method="II", **declared)
    fails = dp_knockoff("y ~ .", df, eps=FAILS_EPS, delta=DELTA, method="II", **declared)
    method_one = dp_knockoff("y ~ .", df, eps=WORKS_EPS, delta=DELTA, method="I", **declared)
    reference = dp_knockoff("y ~ .", df, eps=math.inf, delta=DELTA, **declared)
    truth = {f"x{j + 1}" for j in np.flatnonzero(beta)}
    design = f"the paper's design (n = {N:,}, p = {P}, {SIGNALS} signals of amplitude {AMPLITUDE:g})"
    pair_title = f"DP knockoffs (Method II) on {design}: eps = {WORKS_EPS:g} beside eps = {FAILS_EPS:g}"
    return [
        DemoReport(
            Path(works.report(str(out / "knockoff_method_II.html"))),
            f"Method II on {design} at eps = {WORKS_EPS:g}: the W statistics, the knockoff+ threshold and the selection.",
            [works],
            why([works], AMPLITUDE, truth),
        ),
        DemoReport(
            Path(report([works, fails], str(out / "knockoff_works_and_fails.html"), title=pair_title)),
            f"The same data at eps = {WORKS_EPS:g}, where Method II selects with FDR control, and at eps = {FAILS_EPS:g}, where it cannot.",
            [works, fails],
            why([works, fails], AMPLITUDE, truth),
        ),
        DemoReport(
            Path(
                report(
                    [works, method_one, reference],
                    str(out / "knockoff_methods_compared.html"),
                    title="DP knockoffs: Method II, Method I and the non-private filter",
                )
            ),
            f"Methods II and I at eps = {WORKS_EPS:g} and the non-private knockoff filter on {design}.",
            [works, method_one, reference],
            why([works, method_one, reference], AMPLITUDE, truth),
        ),
    ]
