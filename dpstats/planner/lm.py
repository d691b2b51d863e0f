"""Planner simulator for dp_lm: interval width, coverage and coefficient error under a stated linear model.

It draws n rows from the stated :class:`~dpstats.simulate.Assume` (standardized
features with pairwise correlation ρ, the first s slopes equal to ``strength``,
the others 0, residual sd ``noise``), clips them to the bounds the model implies
(each feature in ± ``bound_sds`` sd, y in ± ``bound_sds`` sd of y), and runs the
front door (:func:`dpstats.dp_lm`, declared bounds, 200 bootstrap replicates) at
every eps, with ordinary least squares on the same rows as the reference.  The
rows are simulated, not user data: nothing is charged.

Measures, over the p slopes (the intercept excluded):

* ``width_ratio``: the median ratio of dp_lm's 95% interval width to OLS's on
  the same rows (lower is better; 1 is the price of no privacy);
* ``coverage``: the share of the slopes' 95% intervals that cover the model's
  coefficient (clipping at ± ``bound_sds`` sd attenuates slightly);
* ``rel_error``: ‖β̂ − β‖₂ / ‖β‖₂ (lower is better).  Chance level 1, the
  error of reporting every slope as 0 without spending anything.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..simulate import Assume
from .core import Chance, Simulator, one_step_ledger

#: how the front door turns (eps, delta) into Gaussian noise, for dpstats.plan(session=): every step is Gaussian, so ρ = μ²/2 exactly (privacy/calibration.gaussian_rho_from_eps_delta; privacy/session.per_fit_budget)
SESSION_CALIBRATION = "gaussian"

N_BOOT = 200


def lm_simulator(*, p: int, model: Assume, delta: float) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_lm with p slopes under ``model``."""
    s = min(model.signals, p)
    beta = np.r_[np.full(s, model.strength), np.zeros(p - s)]
    names = [f"x{j + 1}" for j in range(p)]
    c, sd_y = model.bound_sds, model.response_sd()
    bounds = {"y": (-c * sd_y, c * sd_y), **{name: (-c, c) for name in names}}

    def rows(n: int, rng: np.random.Generator) -> pd.DataFrame:
        X = model.features(n, p, rng)
        y = X @ beta + model.noise * rng.standard_normal(n)
        frame = pd.DataFrame(np.clip(X, -c, c), columns=names)
        return frame.assign(y=np.clip(y, -c * sd_y, c * sd_y))

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        from ..api.lm import dp_lm

        out = {m: np.zeros((eps.size, trials)) for m in ("width_ratio", "coverage", "rel_error")}
        for t in range(trials):
            df = rows(n, rng)
            ols_width = _ols_widths(df[names].to_numpy(), df["y"].to_numpy())
            for i, e in enumerate(eps):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # e.g. delta >= 1/n, stated in the call
                    table = dp_lm(
                        "y ~ .",
                        df,
                        eps=float(e),
                        delta=delta,
                        bounds=bounds,
                        n_boot=N_BOOT,
                        random_state=int(rng.integers(2**62)),
                    ).table.iloc[1:]
                low, high = table["conf.low"].to_numpy(), table["conf.high"].to_numpy()
                out["width_ratio"][i, t] = float(np.median((high - low) / ols_width))
                out["coverage"][i, t] = float(np.mean((low <= beta) & (beta <= high)))
                error = np.linalg.norm(table["estimate"].to_numpy() - beta)
                out["rel_error"][i, t] = float(error / np.linalg.norm(beta))
        return out

    mechanism = "Gaussian, accounted in zCDP" if delta > 0 else "Laplace"
    return Simulator(
        method="dp_lm",
        measures=("rel_error", "width_ratio", "coverage"),
        primary="rel_error",
        run=run,
        lower_is_better=("rel_error", "width_ratio"),
        chance={"rel_error": Chance(1.0, "reporting all slopes as 0: relative error 1")},
        ledger=lambda n: one_step_ledger(
            "stacked [XᵀX, Xᵀy, yᵀy] and a lower bound on λ_min(XᵀX) (AdaSSP ridge)",
            mechanism,
            "sensitivity from the declared bounds (replace-one-row)",
            delta,
        ),
        notes=[
            f"bounds at mean ± {c:g} sd of each variable (values beyond clipped); {N_BOOT} bootstrap "
            "replicates per pass; width_ratio is against ordinary least squares on the same simulated rows; "
            "rows are simulated and the front door runs on them"
        ],
    )


def _ols_widths(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Widths of OLS's 95% intervals for the slopes (classical t intervals, intercept fitted)."""
    n, p = X.shape
    design = np.c_[np.ones(n), X]
    gram_inv = np.linalg.inv(design.T @ design)
    coef = gram_inv @ design.T @ y
    resid = y - design @ coef
    s2 = float(resid @ resid) / (n - p - 1)
    return 2.0 * sps.t.ppf(0.975, n - p - 1) * np.sqrt(s2 * np.diag(gram_inv)[1:])


def smallest_n(p: int) -> tuple[int, str]:
    """The fewest rows dp_lm runs on with p slopes (n > p + 1), and why."""
    return p + 2, " (dp_lm needs n > p + 1)"


def setup(p: int, options: dict):
    """dp_lm's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..validation import check_delta
    from .core import check_bounds

    assume, delta, bounds = options["assume"], options["delta"], options["bounds"]
    if bounds != "declared":
        check_bounds(bounds, "dp_lm", {"declared": None})
    delta = 0.0 if delta is None else check_delta(delta)
    model = Assume.coerce(assume) if assume is not None else Assume(signals=min(2, p), strength=0.5)
    return [lm_simulator(p=p, model=model, delta=delta)], model, {"delta": delta, "bounds": bounds}
