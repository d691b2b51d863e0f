"""Planner simulators for dp_sis: precision, recall and exact recovery of the private top-k.

Per simulated data set the d scores are drawn from their sampling law at the
public n (:func:`dpstats.simulate.sis_scores`, O(s² + d), independent of n),
then the front door's private top-k (:func:`dpstats.methods.sis.private_top_k`)
runs at every eps of the grid on the same scores; the canonical Lipschitz
selector draws its O(dk) class noise once for the whole grid
(:func:`dpstats.privacy.topk.canonical_lipschitz_grid`: the same law at every
eps, shared noise across eps), so a 10-eps plan costs about one selection per
data set.  The score and its
sensitivity are the front door's (:func:`dpstats.methods.sis.sensitivity`,
replace-one-row with public n): with declared bounds the centred score,
Δ∞ = 4(1 − 1/n); ``bounds="midpoint"`` the paper's |x_jᵀy| on the bounds'
scale, Δ∞ = 2; ``bounds=None`` the paper's max-abs scaling, Δ∞ = 2 (a
data-dependent step of the front door, named in the plan's notes).

Measures: ``precision`` = true selected / k (the DP-SIS paper's top-k accuracy
when k = the number of signals), ``recall`` = true selected / s and
``exact_recovery`` = 1 when min(k, s) selected are true.  Chance: a uniformly
random k-subset has expected precision s/d and recall k/d.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.stats import norm

from ..methods import sis as m
from ..privacy.topk import canonical_lipschitz_grid
from ..simulate import Assume, sis_scores
from .core import Simulator, selection_chance, whole_eps_step
from .models import FanLv

#: planner ``bounds=`` -> the front door's score
SCORE_FOR_BOUNDS = {"declared": "centred", "midpoint": "midpoint", None: "maxabs"}


def sis_simulator(
    *, p: int, k: int, model: Assume | FanLv, bounds: str | None, topk: str, gamma: float
) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_sis on d = ``p`` candidate columns."""
    score = SCORE_FOR_BOUNDS[bounds]
    s = min(model.signals, p)

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        hits = np.empty((eps.size, trials))
        sensitivity = m.sensitivity(score, "replace", n)
        # each data set draws from its own stream, so a data set and its selection noise do not depend
        # on how many eps values were run before it: simulating one eps gives the same data sets at
        # every eps (common random numbers for the target search, core.solve)
        for t, draw in enumerate(rng.spawn(trials)):
            scores = _draw_scores(n, p, model, draw, score)
            for i, chosen in enumerate(_select_at_every_eps(scores, k, eps, sensitivity, draw, topk, gamma)):
                hits[i, t] = np.count_nonzero(chosen < s)
        return {
            "precision": hits / k,
            "recall": hits / s,
            "exact_recovery": (hits == min(k, s)).astype(float),
        }

    notes = [
        f"score: {score}, as the front door computes it with bounds={bounds!r}; replace-one-row, n public"
    ]
    if bounds is None:
        notes.append(
            "bounds=None plans the paper's max-abs scaling: the front door then names a data-dependent step "
            "(NonPrivateWarning); declare bounds to avoid it"
        )
    return Simulator(
        method="dp_sis",
        measures=("precision", "recall", "exact_recovery"),
        primary="precision",
        run=run,
        chance=selection_chance(s, k, p),
        ledger=lambda n: _ledger(p, k, topk, score, n),
        notes=notes,
    )


def _select_at_every_eps(scores, k, eps, sensitivity, rng, topk, gamma) -> list[np.ndarray]:
    """The front door's private top-k at every eps; the canonical selector draws its class noise once.

    :func:`dpstats.privacy.topk.canonical_lipschitz_grid` has, at each eps, the
    law of the front door's selector (its docstring says why); the other
    selectors are called once per eps.
    """
    if topk == "canonical_lipschitz":
        return canonical_lipschitz_grid(np.asarray(scores) / sensitivity, k, eps, rng, gamma=gamma)
    return [m.private_top_k(scores, k, float(e), sensitivity, rng, topk=topk, gamma=gamma) for e in eps]


def _draw_scores(n: int, d: int, model: Assume | FanLv, rng: np.random.Generator, score: str) -> np.ndarray:
    """One draw of the d scores from their sampling law (:func:`dpstats.simulate.sis_scores`).

    With max-abs scaling (no bounds) each column's max-abs is its norm times the
    largest coordinate of its direction, drawn from that law, so the norms in the
    cross-product cancel as they do in the data (simulate/sis.py, ``"maxabs"``).
    """
    if isinstance(model, FanLv):
        return sis_scores(n, d, model.as_assume(), rng, score=score, coefficients=model.coefficients(n, rng))
    return sis_scores(n, d, model, rng, score=score)


def _ledger(d: int, k: int, topk: str, score: str, n: int) -> list[dict]:
    """The front door's ledger at public n (:func:`dpstats.methods.sis.plan`), all of eps on one step."""
    options = m.SISOptions.partial(eps=1.0, neighbouring="replace", topk=topk)
    entry = m.plan(options, d=d, k=k, n=n, score=score).entries[0]
    return whole_eps_step(entry)


def auto_bounds_predictor(*, n: int, p: int, eps: float, model: Assume | FanLv) -> tuple[float, Any, str]:
    """How dp_sis's ``bounds="auto"`` (default options) spends eps, and the bounds it will release.

    The step takes ``DEFAULT_SHARE`` of eps; the mode is the front door's rule
    (:func:`dpstats.privacy.bounds.choose_mode`) and the level L the one it can
    resolve at this n (:func:`~dpstats.privacy.bounds.usable_level`).  Under the
    model the variables are normal: a per-column bound (and the response's) at
    level L sits at c = Φ⁻¹(L) sd; the pooled box bounds each row's largest of
    p entries, whose level-L quantile is Φ⁻¹(L^{1/p}) sd.  The simulated score
    is |xᵀy|/(c_x·c_y·sd_y) (:func:`dpstats.simulate.sis_scores`), so the model
    the analysis sees has ``bound_sds`` = √(c_x·c_y); values clipped beyond the
    bounds are not simulated (the prediction is optimistic when L is low).
    """
    from ..privacy import bounds as pb

    eps_bounds = pb.DEFAULT_SHARE * eps
    mode = "per_column" if p == 1 else pb.choose_mode(n, p, eps_bounds)
    count = pb.mechanism_count(mode, p) + 2  # + the response's pair
    eps_each = pb.split_budget(eps_bounds, 0.0, count)[0]
    level = pb.usable_level(pb.DEFAULT_LEVEL, n, eps_each, pb.candidate_grid().size)
    c_y = float(norm.ppf(level))
    c_x = c_y if mode == "per_column" else float(norm.ppf(level ** (1.0 / p)))
    seen = dataclasses.replace(model, bound_sds=max(math.sqrt(c_x * c_y), 0.1))
    note = (
        f"bounds='auto': {mode} private bounds at level {level:.3g} (x about ±{c_x:.2g} sd, y ±{c_y:.2g} sd), "
        f"{eps_bounds:g} of eps; clipping beyond them is not simulated"
    )
    return eps - eps_bounds, seen, note


def setup(p: int, options: dict):
    """dp_sis's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import PrivacyParameterError
    from ..privacy.topk import SELECTORS
    from ..validation import check_fraction, check_k
    from .core import AUTO_BOUNDS, auto_bounds_simulator, check_bounds
    from .models import selection_model

    k, bounds, assume, topk, gamma = (options[key] for key in ("k", "bounds", "assume", "topk", "gamma"))
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    gamma = check_fraction(gamma, "gamma", 0.0, 1.0)
    k = m.default_k(p) if k is None else check_k(k, p)
    model = selection_model(assume)
    check_bounds(bounds, "dp_sis", SCORE_FOR_BOUNDS)
    if bounds == "auto":

        def make(seen):
            return sis_simulator(p=p, k=k, model=seen, bounds="declared", topk=topk, gamma=gamma)

        sim = auto_bounds_simulator(make, AUTO_BOUNDS["dp_sis"], model, p)
    else:
        sim = sis_simulator(p=p, k=k, model=model, bounds=bounds, topk=topk, gamma=gamma)
    return [sim], model, {"k": k, "bounds": bounds, "topk": topk, "gamma": gamma}
