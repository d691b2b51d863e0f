"""Planner simulator for dp_gmm: clustering accuracy and mean error under a stated mixture.

dp_gmm's steps (private clipping radius, private PCA, grid clustering, private
per-component estimation) work on rows, not on sufficient statistics, so this
simulator draws n rows from the stated :class:`~dpstats.planner.models.MixtureModel`
(k spherical unit-variance Gaussians, means ``separation`` apart, its weights)
and runs the front door itself (:func:`dpstats.dp_gmm`, ``method="pca_cluster"``)
on them at every eps, with the declared box the model implies: every
coordinate in [min mean − 6, max mean + 6] (6 sd beyond the extreme means).
The simulated rows are not user data: no budget is charged anywhere.  Cost per
data set and eps: one dp_gmm call, O(n·p) (about 0.1 s at n = 5000, p = 2).

Measures: ``accuracy`` = share of the rows whose most probable released
component (:func:`dpstats.methods.gmm.model.map_assign`) is their true component,
after the best matching of released to true components; ``mean_error`` = the
mean over components of ‖μ̂ − μ‖ under that matching (lower is better).  Chance
level of accuracy: the largest weight (everything put in one component).  ``failed`` = the share
of fits the front door flags as failed (a collapsed component: ``fit.collapsed``, the release's
"FIT FAILED"), counted from the same fits at no extra cost.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from ..errors import DataWarning
from ..methods.gmm.model import map_assign
from .core import Chance, Simulator
from .models import MixtureModel

#: why dpstats.plan(session=) does not plan it (no SESSION_CALIBRATION): a session's Gaussian slot does not take it
NOT_IN_A_GAUSSIAN_SLOT = "its Gaussian and pure-DP steps are accounted in zCDP"

BOX_SDS = 6.0


def gmm_simulator(*, p: int, model: MixtureModel, delta: float) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_gmm in p dimensions."""
    means, weights = model.means(p), model.weight_vector()
    box = (float(means.min()) - BOX_SDS, float(means.max()) + BOX_SDS)

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        from ..api.gmm import dp_gmm

        acc, err, failed = (np.zeros((eps.size, trials)) for _ in range(3))
        for t in range(trials):
            labels = rng.choice(model.k, size=n, p=weights)
            X = means[labels] + rng.standard_normal((n, p))
            df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
            for i, e in enumerate(eps):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DataWarning)  # a collapsed component is scored as it is
                    fit = dp_gmm(
                        "~ .",
                        data=df,
                        k=model.k,
                        eps=float(e),
                        delta=delta,
                        bounds=box,
                        random_state=int(rng.integers(2**62)),
                        oc_trials=0,
                    )
                acc[i, t], err[i, t] = _score(fit, X, labels, means)
                failed[i, t] = float(bool(fit.collapsed))
        return {"accuracy": acc, "mean_error": err, "failed": failed}

    return Simulator(
        method="dp_gmm",
        measures=("accuracy", "mean_error", "failed"),
        primary="accuracy",
        run=run,
        lower_is_better=("mean_error", "failed"),
        chance={"accuracy": Chance(float(weights.max()), "every row put in the largest component")},
        ledger=lambda n: [
            {
                "step": "private clipping radius, PCA, clustering and per-component estimation (pca_cluster)",
                "mechanism": "Gaussian / exponential / AboveThreshold, accounted in zCDP",
                "eps_share": 1.0,
                "delta": delta,
                "sensitivity": "each step's, from the declared box under replace-one-row (as at the front door)",
            }
        ],
        notes=[
            f"declared box [{box[0]:g}, {box[1]:g}] on every coordinate ({BOX_SDS:g} sd beyond the extreme means); "
            f"delta = {delta:g}; rows are simulated (the method works on rows) and the front door runs on them"
        ],
    )


def _score(fit, X: np.ndarray, labels: np.ndarray, means: np.ndarray) -> tuple[float, float]:
    """Accuracy and mean error of one fit, after the best matching of released to true components."""
    k = means.shape[0]
    assigned = map_assign(X, fit.weights, fit.means, fit.covariances)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (labels, assigned), 1.0)
    true_idx, fit_idx = _best_matching(confusion)
    acc = confusion[true_idx, fit_idx].sum() / labels.size
    err = float(np.mean(np.linalg.norm(fit.means[fit_idx] - means[true_idx], axis=1)))
    return float(acc), err


def _best_matching(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = confusion.shape[0]
    if k <= 6:
        best = max(itertools.permutations(range(k)), key=lambda perm: confusion[np.arange(k), perm].sum())
        return np.arange(k), np.asarray(best)
    return linear_sum_assignment(-confusion)


def setup(p: int, options: dict):
    """dp_gmm's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import PrivacyParameterError
    from ..validation import check_delta
    from .models import mixture_model

    k, assume, delta = options["k"], options["assume"], options["delta"]
    if delta is None:
        raise PrivacyParameterError("dp_gmm needs delta (> 0), e.g. delta=1e-6.")
    delta = check_delta(delta, allow_zero=False)
    model = mixture_model(assume, k)
    if k is not None and model.k != k:
        raise PrivacyParameterError(f"k = {k} differs from the assumed model's k = {model.k}.")
    sim = gmm_simulator(p=p, model=model, delta=delta)
    return [sim], model, {"k": model.k, "delta": delta}
