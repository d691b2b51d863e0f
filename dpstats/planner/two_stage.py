"""Planner simulator for dp_two_stage: precision, recall and exact recovery of the private vote top-k.

The first stage fits a lasso on each of m blocks of about √n rows, with n_b < d:
a block's lasso needs the block's rows themselves (its d × d Gram matrix is larger
than the n_b × d block), so this simulator draws rows, one block at a time, from
the stated model (features x_j = √ρ·f + √(1 − ρ)·z_j, y = Σ_j b_j x_j + σ·e), and
runs the front door's own steps: :func:`dpstats.methods.two_stage.two_stage_counts`
(block assignment, block lassos, top-k votes), then the private top-k of the
vote counts (Δ∞ = 1 under replace-one-row, all of eps) at every eps on the same
counts.  Cost per data set: O(n·d) draws and m lasso fits, independent of eps.

Measures and chance levels as for dp_sis (:mod:`dpstats.planner.sis`).
"""

from __future__ import annotations

import math

import numpy as np

from ..methods import two_stage as m
from ..privacy.topk import SELECTORS
from ..simulate import Assume
from .core import Simulator, selection_chance, whole_eps_step
from .models import FanLv


def two_stage_simulator(
    *, p: int, k: int, model: Assume | FanLv, lam: float, topk: str, gamma: float
) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_two_stage on d = ``p`` candidate columns."""
    s = min(model.signals, p)
    options = {"gamma": gamma} if topk == "canonical_lipschitz" else {}
    votes = m.Votes(m.Lasso(lam))

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        hits = np.empty((eps.size, trials))
        for t, draw in enumerate(rng.spawn(trials)):  # one stream per data set, as in planner/sis.py
            X, y = _rows(n, p, model, draw)
            counts = m.two_stage_counts(X, y, k, votes, rng=draw)
            for i, e in enumerate(eps):
                chosen = SELECTORS[topk].select(counts, k, float(e), draw, **options)
                hits[i, t] = np.count_nonzero(np.asarray(chosen) < s)
        return {
            "precision": hits / k,
            "recall": hits / s,
            "exact_recovery": (hits == min(k, s)).astype(float),
        }

    return Simulator(
        method="dp_two_stage",
        measures=("precision", "recall", "exact_recovery"),
        primary="precision",
        run=run,
        chance=selection_chance(s, k, p),
        ledger=lambda n: _ledger(p, k, n, topk),
        notes=[
            f"lasso lambda = {lam:g} on blocks of about √n rows (the front door's defaults); rows are "
            "simulated because each block's lasso needs its rows (n_b < d)"
        ],
    )


def _rows(n: int, d: int, model: Assume | FanLv, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the stated model; the signals are the first s columns."""
    if isinstance(model, FanLv):
        coef, rho, noise = model.coefficients(n, rng), 0.0, math.sqrt(model.noise_var)
    else:
        coef, rho, noise = np.full(model.signals, model.strength), model.correlation, model.noise
    s = min(coef.size, d)
    X = math.sqrt(1 - rho) * rng.standard_normal((n, d))
    if rho:
        X += math.sqrt(rho) * rng.standard_normal((n, 1))
    y = X[:, :s] @ coef[:s] + noise * rng.standard_normal(n)
    return X, y


def _ledger(d: int, k: int, n: int, topk: str) -> list[dict]:
    options = m.TwoStageOptions.partial(eps=1.0, topk=topk, neighbouring="replace")
    entry = m.plan(options, d=d, k=k, n_blocks=m.default_blocks(n)).entries[0]
    return whole_eps_step(entry)


def setup(p: int, options: dict):
    """dp_two_stage's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import PrivacyParameterError
    from ..methods import sis as sis_method
    from ..validation import check_eps, check_fraction, check_k
    from .models import selection_model

    k, lam, assume, topk, gamma = (options[key] for key in ("k", "lam", "assume", "topk", "gamma"))
    lam = 0.1 if lam is None else lam
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    gamma = check_fraction(gamma, "gamma", 0.0, 1.0)
    lam = check_eps(lam, name="lam")
    k = sis_method.default_k(p) if k is None else check_k(k, p)
    model = selection_model(assume)
    sim = two_stage_simulator(p=p, k=k, model=model, lam=lam, topk=topk, gamma=gamma)
    return [sim], model, {"k": k, "lam": lam, "topk": topk, "gamma": gamma}
