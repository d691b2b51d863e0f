"""Planner simulators for dp_knockoff Methods I and II: FDR and power under the paper's model.

Per simulated data set the sufficient statistics are drawn from their
sampling law at the public n (:func:`dpstats.simulate.knockoff.trial_statistics`:
Wishart XᵀX by its Bartlett factor, Xᵀw | X Gaussian, RSS ~ σ²χ²_{n−p}; O(p³)
per data set, independent of n), calibrated once (the sensitivities use the
model's σ and ‖β‖ and the data set's λ_min, C_min, C_max, as in the paper's
experiment and as the front door does when ``sigma=`` and ``beta_norm=`` are
declared and ``c_min``/``lambda_min`` are left to the data), then the Method's
mechanism, the W statistics and the knockoff+ threshold run at every eps of
the grid (:func:`dpstats.simulate.knockoff.analyse`).  Budget split as the
front door's defaults: Method I eps·(0.5, 0.25, 0.25) and delta/3 each,
Method II eps and delta/2 twice (:func:`dpstats.simulate.knockoff.budget_parts`).

A data set on which an assumption of the sensitivity bounds fails is refused
by the front door (nothing selected): it counts as FDP = TPP = 0.

Measures: ``power`` (mean TPP) and ``fdr`` (mean FDP, lower is better).  The
chance level of power is 0.05: below it the filter practically never selects.
"""

from __future__ import annotations


import numpy as np
from threadpoolctl import threadpool_limits

from ..errors import AssumptionError
from ..simulate import knockoff as ks
from .core import Chance, Simulator
from .models import KnockoffModel

#: why dpstats.plan(session=) does not plan it (no SESSION_CALIBRATION): a session's Gaussian slot does not take it
NOT_IN_A_GAUSSIAN_SLOT = "its sensitivity bound fails with probability delta2, a delta-only step"

POWER_FLOOR = 0.05


def knockoff_simulator(
    *,
    p: int,
    model: KnockoffModel,
    variant: str,
    delta: float | None,
    fdr: float,
    bound: float | None,
    statistic: str = "csm",
) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_knockoff Method ``variant`` ("I" or "II")."""

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        B = ks.default_row_bound(n, p) if bound is None else bound
        fdp, tpp = np.zeros((eps.size, trials)), np.zeros((eps.size, trials))
        with threadpool_limits(limits=1):  # p x p algebra: threads only add overhead
            for t, draw in enumerate(rng.spawn(trials)):  # one stream per data set, as in planner/sis.py
                drawn = ks.trial_statistics(n, p, model.signals, model.amplitude, model.noise, B, draw)
                if drawn is None:
                    continue
                for i, e in enumerate(eps):
                    cfg = ks.TrialConfig(
                        method=variant, eps=float(e), delta=_delta(delta, n, p), fdr=fdr, statistic=statistic
                    )
                    try:
                        fdp[i, t], tpp[i, t] = ks.analyse(drawn, cfg, draw)
                    except AssumptionError:
                        pass
        return {"power": tpp, "fdr": fdp}

    return Simulator(
        method=f"dp_knockoff (Method {variant})",
        measures=("power", "fdr"),
        primary="power",
        run=run,
        lower_is_better=("fdr",),
        chance={
            "power": Chance(POWER_FLOOR, f"power below {POWER_FLOOR:g}: the filter practically never selects")
        },
        ledger=lambda n: _ledger(variant, delta, n, p),
        notes=[
            f"target FDR q = {fdr:g}, knockoff+ threshold, {statistic.upper()} statistic; "
            f"delta = {default_delta_text(delta)}",
            "row-norm bound B = "
            + (
                "the (1 − 0.001/n) quantile of √χ²_p (rows are clipped in < 0.1% of data sets)"
                if bound is None
                else f"{bound:g} (declared)"
            ),
            "sensitivities from the model's σ and ‖β‖ (declare sigma= and beta_norm= at the front door) and "
            "the data's λ_min and column norms (the front door names this data-dependent step)",
        ],
    )


def _delta(delta: float | None, n: int, p: int) -> float:
    """The declared delta, or the paper's experiment's 2p/n."""
    return 2 * p / n if delta is None else delta


def _ledger(variant: str, delta: float | None, n: int, p: int) -> list[dict]:
    d = _delta(delta, n, p)
    if variant == "I":
        return [
            {"step": "cross-products [X' X~']'y", "mechanism": "Gaussian", "eps_share": 0.5, "delta": d / 3},
            {"step": "lambda_min(Sigma')", "mechanism": "Laplace", "eps_share": 0.25, "delta": 0.0},
            {"step": "Gram matrix Sigma'", "mechanism": "Gaussian", "eps_share": 0.25, "delta": d / 3},
            {
                "step": "bound on ||Pw||^2 fails",
                "mechanism": "chi-square tail",
                "eps_share": 0.0,
                "delta": d / 3,
            },
        ]
    return [
        {"step": "OLS coefficients on [X' X~']", "mechanism": "Gaussian", "eps_share": 1.0, "delta": d / 2},
        {"step": "bound on ||Pw||^2 fails", "mechanism": "chi-square tail", "eps_share": 0.0, "delta": d / 2},
    ]


def default_delta_text(delta: float | None) -> str:
    return "2p/n (the knockoff paper's experiment)" if delta is None else f"{delta:g}"


def _settings(variants: list[str], delta: float | None, fdr: float, bounds: object) -> dict:
    """The plan's settings, as its call shows them: delta as the number given (R prints it so), left out
    when none was given (the call shows what the user gave; the notes say the default 2p/n)."""
    given = {} if delta is None else {"delta": delta}
    return {"variant": variants, **given, "fdr": fdr, "bounds": bounds}


def smallest_n(p: int) -> tuple[int, str]:
    """The fewest rows the knockoff filter runs on with p columns (n >= 2p), and why."""
    return 2 * p, " (the knockoff filter needs n >= 2p)"


def setup(p: int, options: dict):
    """dp_knockoff's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import DataError, PrivacyParameterError
    from ..validation import check_delta, check_fraction
    from .models import knockoff_model

    bounds, assume, delta, variant, fdr = (
        options[key] for key in ("bounds", "assume", "delta", "variant", "fdr")
    )
    variant = ("I", "II") if variant is None else variant
    variants = [variant] if isinstance(variant, str) else list(variant)
    if not variants or any(v not in ("I", "II") for v in variants):
        raise PrivacyParameterError(f"variant must be 'I', 'II' or both, got {variant!r}.")
    if delta is not None:
        delta = check_delta(delta, allow_zero=False)
    fdr = check_fraction(fdr, "fdr", 0.0, 1.0, low_open=True)
    bound = _row_bound(bounds)
    model = knockoff_model(assume)
    if model.signals >= p:
        raise DataError(f"assume: signals must be < p = {p}, got {model.signals}.")
    sims = [
        knockoff_simulator(p=p, model=model, variant=v, delta=delta, fdr=fdr, bound=bound) for v in variants
    ]
    return sims, model, _settings(variants, delta, fdr, bounds)


def _row_bound(bounds: object) -> float | None:
    import math
    import numbers

    from ..errors import PrivacyParameterError
    from .core import check_bounds

    if bounds == "declared":
        return None
    if bounds == "auto":
        check_bounds(bounds, "dp_knockoff", {})
    if (
        isinstance(bounds, numbers.Real)
        and not isinstance(bounds, bool)
        and math.isfinite(bounds)
        and bounds > 0
    ):
        return float(bounds)
    raise PrivacyParameterError(
        f"bounds for dp_knockoff must be 'declared' (B from the model) or a positive row-norm bound B, got {bounds!r}."
    )
