"""Planner simulator for dp_glm: interval width relative to glm's, coverage, and the cells the door refuses.

Each simulated data set has K = min(n, 1000) design points drawn from the stated
:class:`~dpstats.planner.models.GLMModel` (features clipped to the bounds the model
declares), holding n/K rows each (the remainder spread one row at a time).  With a
canonical link the score and Hessian sums of rows sharing a design point depend on their
responses only through the responses' sum (:mod:`dpstats.methods.glm`, (G1)), so the release
run on the K grouped rows *is* the release on the n rows; and the group sums are drawn from
their exact law: Binomial(m_k, π_k) for a 0/1 response, and for Poisson counts clipped at the
declared bound Y the sum of m_k clipped counts, a multinomial over the clipped values (the
Poisson tail beyond 10⁻¹⁵ merged into the largest value kept).  The release, its noise
calibration, the variance (G4), the withholding rule and the refusal rule (G5) are dp_glm's own
(:func:`dpstats.methods.glm.plan`, :func:`~dpstats.methods.glm.release`,
:func:`~dpstats.methods.glm.wald_table`), with numpy noise of the same law as the samplers the
door uses.  A plan costs O(K·k²) per data set and eps, whatever n.

Measures, over the k coefficients (the intercept included):

* ``width_ratio``: the median ratio of dp_glm's 95% interval width to glm's Wald interval on the
  same design (from the Fisher information at the model's coefficients), over the data sets whose
  intervals are shown (lower is better; 1 is the price of no privacy);
* ``coverage``: the share of the coefficients' 95% intervals that cover the model's
  coefficients, over the data sets whose intervals are shown;
* ``withheld``: the share of data sets whose intervals the release withholds because the
  released Hessian shows too little information (G5; lower is better);
* ``refused``: 1 where the front door refuses the call before spending (the public rule of (G5),
  from n, eps, delta, k, the family and the count bound), else 0.  Refused cells have no width,
  coverage or withheld share (NaN; the printed table says "refused").

The rows are simulated, not user data: nothing is charged.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps
from threadpoolctl import threadpool_limits

from ..errors import AssumptionError
from ..methods import glm as m
from ..privacy.randomness import FastNoise
from .core import Simulator
from .models import GLMModel

#: how the front door turns (eps, delta) into Gaussian noise, for dpstats.plan(session=): every step is Gaussian, so ρ = μ²/2 exactly (privacy/calibration.gaussian_rho_from_eps_delta; privacy/session.per_fit_budget)
SESSION_CALIBRATION = "gaussian"

#: design points per simulated data set
SUPPORT = 1000
#: Poisson tail probability merged into the largest count value kept
TAIL = 1e-15
MEASURES = ("width_ratio", "coverage", "withheld", "refused")


def glm_options(family: str, eps: float, delta: float) -> m.GLMOptions:
    """dp_glm's options at the door's defaults, checked by the door's own checks."""
    given = {
        "formula": "y ~ .",
        "family": family,
        "eps": eps,
        "delta": delta,
        "bounds": None,
        "conf_level": 0.95,
        "pilot_steps": m.PILOT_STEPS,
        "pilot_share": m.PILOT_SHARE,
        "hessian_share": m.HESSIAN_SHARE,
        "neighbouring": "replace",
    }
    return m.GLMOptions.check(given)


def door_plan(model: GLMModel, p: int, n: int | None, eps: float, delta: float) -> m.GLMPlan:
    """The door's privacy plan for the model's declared bounds; AssumptionError where the door refuses."""
    lo, hi = model.bounds(p)
    coords = m.Coordinates((lo + hi) / 2.0, (hi - lo) / 2.0, True)
    resp = m.response_range(model.family, counts=(0.0, model.count_bound))
    return m.plan(glm_options(model.family, eps, delta), coords, resp, n)


def glm_simulator(*, p: int, model: GLMModel, delta: float) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_glm with p predictors under ``model``."""
    beta = model.coefficients(p)

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        out = {name: np.full((eps.size, trials), np.nan) for name in MEASURES}
        plans = [_admitted(model, p, n, float(e), delta) for e in eps]
        for i, pl in enumerate(plans):
            out["refused"][i] = float(pl is None)
        if all(pl is None for pl in plans):
            return out
        size = min(n, SUPPORT)
        groups = np.full(size, n // size, float)
        groups[: n % size] += 1.0
        with threadpool_limits(limits=1):  # K x k algebra: threads only add overhead
            for t, draw in enumerate(rng.spawn(trials)):  # one stream per data set, as in planner/sis.py
                X = model.features(size, p, draw)
                W, glm_width, mu = _design(X, model, beta, groups)
                y = _responses(model, mu, groups, draw)
                noise = FastNoise(draw)
                for i, pl in enumerate(plans):
                    if pl is not None:
                        _one_release(out, (i, t), m.Rows(W, y, groups), pl, noise, (beta, glm_width))
        return out

    return Simulator(
        method="dp_glm",
        measures=MEASURES,
        primary="width_ratio",
        run=run,
        lower_is_better=("width_ratio", "withheld", "refused"),
        ratios=("width_ratio",),
        ledger=lambda n: _ledger(model, p, delta),
        notes=[
            f"K = min(n, {SUPPORT}) design points per simulated data set, n/K rows each; the release runs on the "
            "grouped rows, which is exact for canonical links (the fit uses the responses only through their sums); group sums drawn from "
            "their exact law (Poisson counts clipped at the declared bound)",
            "bounds declared as the model states; pilot_steps, pilot_share and hessian_share at the front door's "
            "defaults; width_ratio is against glm's Wald interval from the Fisher information on the same design",
            "refused = 1: the front door refuses the call before spending (its rule on the public noise-to-information "
            "ratio); such cells have no width, coverage or withheld share",
        ],
    )


def _admitted(model: GLMModel, p: int, n: int, eps: float, delta: float) -> m.GLMPlan | None:
    try:
        return door_plan(model, p, n, eps, delta)
    except AssumptionError:
        return None


def _design(X: np.ndarray, model: GLMModel, beta: np.ndarray, groups: np.ndarray):
    """Fitting rows W, glm's Wald widths (information at the truth) and the row means."""
    lo, hi = model.bounds(X.shape[1])
    coords = m.Coordinates((lo + hi) / 2.0, (hi - lo) / 2.0, True)
    W = coords.rows(X)
    eta = beta[0] + X @ beta[1:]
    if model.family == "binomial":
        mu = 1.0 / (1.0 + np.exp(-eta))
        v = mu * (1.0 - mu)
    else:
        mu = v = np.exp(eta)
    info = (W.T * (groups * v)) @ W
    _, L = coords.linear()
    width = 2.0 * sps.norm.ppf(0.975) * np.sqrt(np.diag(L @ np.linalg.pinv(info) @ L.T))
    return W, width, mu


def _responses(model: GLMModel, mu: np.ndarray, groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each design point's response sum over its rows, from its exact law (module docstring)."""
    if model.family == "binomial":
        return rng.binomial(groups.astype(np.int64), mu).astype(float)
    values, probs = clipped_poisson(mu, model.count_bound)
    counts = rng.multinomial(groups.astype(np.int64), probs)
    return counts @ values


def clipped_poisson(mu: np.ndarray, top: float) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of min(Poisson(μ), Y) for each μ (rows), the far tail merged.

    Examples
    --------
    >>> values, probs = clipped_poisson(np.array([2.0]), 3.5)
    >>> values.tolist(), round(float(probs[0, -1]), 4)  # P(y >= 4) sits at the clipped value 3.5
    ([0.0, 1.0, 2.0, 3.0, 3.5], 0.1429)
    """
    below = math.ceil(top)  # values 0 .. below - 1 stay, the rest become Y
    far = int(sps.poisson.isf(TAIL, float(np.max(mu)))) + 1
    keep = min(below, far)
    values = np.arange(keep, dtype=float)
    probs = sps.poisson.pmf(values[None, :], mu[:, None])
    if keep == below:
        values = np.r_[values, top]
        probs = np.c_[probs, sps.poisson.sf(below - 1, mu)]
    probs[:, -1] += 1.0 - probs.sum(axis=1)  # the merged tail (below TAIL) and rounding
    return values, np.clip(probs, 0.0, 1.0)


def _one_release(out: dict, cell: tuple[int, int], rows: m.Rows, pl: m.GLMPlan, noise, truth) -> None:
    """Run dp_glm's release on the grouped rows and record the cell's measures."""
    beta, glm_width = truth
    fit = m.release(rows, pl, noise)
    out["withheld"][cell] = float(bool(fit.withheld))
    if fit.withheld:
        return
    tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
    low, high = tab["conf.low"], tab["conf.high"]
    out["coverage"][cell] = float(np.mean((low <= beta) & (beta <= high)))
    out["width_ratio"][cell] = float(np.median((high - low) / glm_width))


def _ledger(model: GLMModel, p: int, delta: float) -> list[dict]:
    """The door's ledger (each step's share of eps is its share of ρ, the same at every eps)."""
    pl = door_plan(model, p, None, 1.0, delta)
    return [
        {
            "step": e.step,
            "mechanism": e.mechanism,
            "eps_share": e.eps,
            "delta": e.delta,
            "sensitivity": e.sensitivity,
        }
        for e in pl.entries
    ]


def smallest_n(p: int) -> tuple[int, str]:
    """The fewest rows dp_glm runs on with p predictors (more rows than coefficients), and why."""
    return p + 2, " (dp_glm needs n > p + 1, more rows than coefficients)"


def setup(p: int, options: dict):
    """dp_glm's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import PrivacyParameterError
    from .core import check_bounds
    from .models import glm_model

    assume, delta, bounds, family = (options[key] for key in ("assume", "delta", "bounds", "family"))
    if bounds != "declared":
        check_bounds(bounds, "dp_glm", {"declared": None})
    family = m.check_family("binomial" if family is None else family)
    if delta is None:
        raise PrivacyParameterError(
            "dp_glm uses the Gaussian mechanism (noisy Newton, accounted in zCDP): give delta > 0, e.g. delta=1e-6."
        )
    delta = glm_options(family, 1.0, delta).delta  # the door's own checks of delta
    model = glm_model(assume).resolved(family)
    if model.binary > p:
        raise PrivacyParameterError(f"assume: binary must be at most p = {p}, got {model.binary}.")
    sim = glm_simulator(p=p, model=model, delta=delta)
    return [sim], model, {"family": family, "delta": delta, "bounds": bounds}
