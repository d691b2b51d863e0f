"""Planner simulator for vertical_glm in DP mode: coefficient error under a stated linear model.

DP mode (ridge block coordinate descent whose shared linear predictors are
noised) works on rows held by the parties, so this simulator draws n rows from
the stated :class:`~dpstats.simulate.Assume` (standardized features with pairwise
correlation ρ, the first s coefficients equal to ``strength``, residual sd
``noise``), splits the p columns between ``parties`` parties in order, and runs
the front door itself (:func:`dpstats.vertical_glm`, gaussian family, ridge
penalty ``lam``) at every eps, with the bounds the model implies: each feature in
mean ± ``bound_sds`` sd and y in ± ``bound_sds`` sd of y.  The rows are
simulated, not user data: nothing is charged.

Measures: ``coef_error`` = ‖β̂ − β‖₂ over the slopes (intercept excluded) and
``rel_error`` = coef_error / ‖β‖₂ (both lower is better).  Chance level of
``rel_error``: 1, the error of reporting β̂ = 0 without spending anything.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..simulate import Assume
from .core import Chance, Simulator, one_step_ledger

#: how the front door turns (eps, delta) into Gaussian noise, for dpstats.plan(session=): every step is Gaussian, so ρ = μ²/2 exactly (privacy/calibration.gaussian_rho_from_eps_delta; privacy/session.per_fit_budget)
SESSION_CALIBRATION = "gaussian"


def vertical_simulator(*, p: int, model: Assume, parties: int, lam: float, delta: float) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of vertical_glm (DP mode) with p columns."""
    s = min(model.signals, p)
    beta = np.zeros(p)
    beta[:s] = model.strength
    names = [f"x{j + 1}" for j in range(p)]
    groups = [list(g) for g in np.array_split(names, parties)]
    c, sd_y = model.bound_sds, model.response_sd()
    bounds = {"y": (-c * sd_y, c * sd_y), **{name: (-c, c) for name in names}}

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        from ..api.vertical_glm import vertical_glm

        err = np.zeros((eps.size, trials))
        for t in range(trials):
            X = model.features(n, p, rng)
            df = pd.DataFrame(X, columns=names)
            df.insert(0, "y", X @ beta + model.noise * rng.standard_normal(n))
            for i, e in enumerate(eps):
                with warnings.catch_warnings():
                    warnings.simplefilter(
                        "ignore", UserWarning
                    )  # e.g. delta >= 1/n, stated in the plan's call
                    fit = vertical_glm(
                        "y ~ .",
                        data=df,
                        parties=groups,
                        eps=float(e),
                        delta=delta,
                        bounds=bounds,
                        penalty="ridge",
                        lam=lam,
                        random_state=int(rng.integers(2**62)),
                    )
                coef = fit.coef()
                err[i, t] = float(np.linalg.norm(np.array([coef[name] for name in names]) - beta))
        return {"coef_error": err, "rel_error": err / float(np.linalg.norm(beta))}

    return Simulator(
        method="vertical_glm",
        measures=("rel_error", "coef_error"),
        primary="rel_error",
        run=run,
        lower_is_better=("rel_error", "coef_error"),
        chance={"rel_error": Chance(1.0, "reporting all slopes as 0: relative error 1")},
        ledger=lambda n: one_step_ledger(
            "noisy linear predictors and coefficients of ridge block coordinate descent",
            "Gaussian, accounted in zCDP",
            "from the declared bounds and the ridge lam under replace-one-row (as at the front door)",
            delta,
        ),
        notes=[
            f"{parties} parties holding the columns in order; gaussian family, ridge lam = {lam:g}; "
            f"bounds at mean ± {c:g} sd of each variable; rows are simulated and the front door runs on them"
        ],
    )


def setup(p: int, options: dict):
    """vertical_glm's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    import numbers

    from ..errors import DataError, PrivacyParameterError
    from ..validation import check_delta, check_eps

    assume, delta, lam, parties = (options[key] for key in ("assume", "delta", "lam", "parties"))
    lam = 0.1 if lam is None else lam
    if delta is None:
        raise PrivacyParameterError("vertical_glm's DP mode needs delta (> 0), e.g. delta=1e-6.")
    delta = check_delta(delta, allow_zero=False)
    lam = check_eps(lam, name="lam")
    if isinstance(parties, bool) or not isinstance(parties, numbers.Integral) or not 2 <= parties <= p:
        raise DataError(f"parties must be a whole number with 2 <= parties <= p = {p}, got {parties!r}.")
    model = Assume.coerce(assume) if assume is not None else Assume(signals=min(2, p), strength=0.5)
    sim = vertical_simulator(p=p, model=model, parties=int(parties), lam=lam, delta=delta)
    return [sim], model, {"delta": delta, "lam": lam, "parties": int(parties)}
