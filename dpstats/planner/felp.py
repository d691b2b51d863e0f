"""Planner simulator for dp_felp: recovery of the planted features and the noise share of the weights.

FELP's ensemble (Liu 2018; :mod:`dpstats.methods.felp`) works on rows, so per
simulated data set n rows are drawn from the stated
:class:`~dpstats.planner.models.FelpModel` (:func:`dpstats.simulate.felp.planted`),
mapped onto [0, 1]/√d by the model's declared box (or, with ``bounds=None``, by
the simulated data's minima and maxima, as the front door does without bounds)
and the non-private ensemble (steps 1–3, :func:`dpstats.methods.felp.ensemble`)
is fitted once.  Its average w_D does not depend on eps, so every eps of the
grid only adds its own step-4 noise: L2-Laplace of scale Δ/ε, with Δ the
method's (:func:`~dpstats.methods.felp.paper_sensitivity` 2/(nλ) for the paper
variant, :func:`~dpstats.methods.felp.strict_sensitivity` 2C/k for the strict
one, replace-one-row, n public) and the law of
:meth:`dpstats.privacy.randomness.FastNoise.l2_laplace` (numpy draws: a
simulation releases nothing).  A plan over any number of eps values costs
about one ensemble fit per data set.

Measures, on the ``select`` features with the largest released weights:
``precision`` = planted selected / select (precision at k), ``recall`` =
planted selected / planted, and ``noise_share`` = σ²/s², the per-weight noise
variance σ² = (scale·√(d+1))² (:func:`~dpstats.methods.felp.noise_coordinate_sd`)
over the spread s² of the released weights across features (sample variance),
capped at 1: the share of the released weights' variance that is privacy noise
(lower is better).  Both are what the front door's result shows (its operating
characteristics hold σ and s).  Chance: a random choice of ``select`` of d
features has expected precision planted/d.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import ChanceWarning, DataError
from ..geometry import Box
from ..methods import felp as m
from ..privacy.randomness import FastNoise
from ..simulate.felp import planted
from .core import Chance, Simulator, whole_eps_step
from .models import FelpModel


def felp_simulator(
    *,
    p: int,
    model: FelpModel,
    variant: str,
    select: int,
    lam: float,
    n_estimators: int | None,
    sample_ratio: float,
    bounds: str | None,
) -> Simulator:
    """The :class:`~dpstats.planner.core.Simulator` of dp_felp (``variant``) on d = ``p`` features.

    ``n_estimators`` None: the front door's default k at each n (:func:`dpstats.methods.felp.n_estimators_for`);
    the strict variant's learners are normalised to ‖w‖ = C = 1, as the front door's default."""
    s = min(model.signals, p)
    C = m.clip_norm(variant, None, lam, "user", ())

    def run(n: int, eps: np.ndarray, rng: np.random.Generator, trials: int) -> dict[str, np.ndarray]:
        k = m.n_estimators_for(variant, n_estimators, n)
        spec = m.EnsembleSpec(
            n_estimators=k,
            sample_ratio=sample_ratio,
            variant=variant,
            clip_norm=C,
            normalise=variant == "strict",
        )
        if variant == "strict" and n // k < 2:
            raise DataError(
                f"variant='strict' splits n = {n} rows into n_estimators = {k} disjoint subsets, "
                "fewer than 2 rows each; plan a larger n or fewer n_estimators."
            )
        hits, share = np.empty((eps.size, trials)), np.empty((eps.size, trials))
        sensitivity = _sensitivity(variant, n, lam, C, k)
        for t, draw in enumerate(rng.spawn(trials)):  # one stream per data set, as in planner/sis.py
            U, y = _scaled_rows(n, p, model, bounds, draw)
            fit = m.ensemble(U, y, lam, gen=draw, spec=spec)
            noise = FastNoise(draw)
            for i, e in enumerate(eps):
                scale = sensitivity / float(e)
                released = noise.l2_laplace(fit.w_mean, scale)
                hits[i, t] = np.count_nonzero(m.rank_features(released)[:select] < s)
                share[i, t] = noise_share(released, scale)
        return {"precision": hits / select, "recall": hits / s, "noise_share": share}

    return Simulator(
        method=f"dp_felp ({variant})",
        measures=("precision", "recall", "noise_share"),
        primary="precision",
        run=run,
        lower_is_better=("noise_share",),
        chance={
            "precision": Chance(
                s / p, f"random choice of {select} of {p} features: precision planted/d = {s / p:.3g}"
            ),
        },
        ledger=lambda n: _ledger(variant, n, p, n_estimators, lam, C, sample_ratio, bounds),
        notes=_notes(variant, model, bounds, lam, n_estimators, C),
    )


def noise_share(released: np.ndarray, scale: float) -> float:
    """min(1, σ²/s²): per-weight noise variance over the spread of the released weights.

    Examples
    --------
    >>> noise_share(np.array([0.0, 2.0]), 0.0)
    0.0
    """
    spread = float(np.var(released, ddof=1))
    sigma = m.noise_coordinate_sd(scale, released.size)
    return 1.0 if spread <= 0 else min(1.0, sigma**2 / spread)


def _sensitivity(variant: str, n: int, lam: float, C: float | None, k: int) -> float:
    """Δ of step 4, as :func:`dpstats.methods.felp.release` computes it."""
    return m.paper_sensitivity(n, lam) if variant == "paper" else m.strict_sensitivity(C, k)


def _scaled_rows(
    n: int, d: int, model: FelpModel, bounds: str | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """n rows of the model, mapped onto [0, 1]/√d as the front door maps them."""
    df = planted(
        n=n, d=d, s=min(model.signals, d), shift=model.shift, n_classes=model.n_classes, random_state=rng
    )
    X, y = df.drop(columns="class").to_numpy(), df["class"].cat.codes.to_numpy()
    if bounds is None:
        box = m.data_box(X)
    else:
        lo, hi = model.box()
        box = Box(np.full(d, lo), np.full(d, hi))
    return m.scale_features(X, box)[0], y


def _ledger(variant, n, d, k, lam, C, beta, bounds) -> list[dict]:
    """The front door's ledger at public n (:func:`dpstats.methods.felp.plan`), all of eps on one step."""
    options = m.FELPOptions.partial(
        variant=variant,
        eps=1.0,
        n_estimators=k,
        lam=lam,
        lam_source="user",
        clip_norm=None,
        sample_ratio=beta,
    )
    box = None if bounds is None else Box(np.zeros(d), np.ones(d))  # declared (its values do not enter)
    with warnings.catch_warnings():  # the plan's own chance flags speak for the grid
        warnings.simplefilter("ignore", ChanceWarning)
        entry = m.plan(options, n=n, d=d, box=box).entries[0]
    return whole_eps_step(entry)


def _notes(variant: str, model: FelpModel, bounds, lam: float, k: int | None, C: float | None) -> list[str]:
    lo, hi = model.box()
    scaling = (
        f"declared bounds [{lo:g}, {hi:g}] on every feature"
        if bounds is not None
        else (
            "the simulated data's minima and maxima (bounds=None: a data-dependent step of the front door, "
            "NonPrivateWarning; declare bounds to avoid it)"
        )
    )
    notes = [
        f"variant='{variant}', λ = {lam:g}, "
        + (f"k = {k} learners" if k is not None else _default_k(variant))
        + (f", each normalised to ‖w‖₂ = C = {C:g}" if C is not None else "")
        + f"; features scaled by {scaling}",
        "the non-private ensemble is fitted once per simulated data set; each eps adds its own L2-Laplace noise",
    ]
    if variant == "paper":
        notes.append(m.PAPER_VARIANT_REFUTED + "; plan variant='strict' for a release")
    return notes


def _default_k(variant: str) -> str:
    if variant == "paper":
        return f"k = {m.PAPER_N_ESTIMATORS} learners"
    return f"k = ⌊n/{m.ROWS_PER_LEARNER}⌋ learners (one per {m.ROWS_PER_LEARNER} rows)"


def setup(p: int, options: dict):
    """dp_felp's simulators, model and settings for :func:`dpstats.plan` (checks its options first)."""
    from ..errors import PrivacyParameterError
    from ..validation import check_eps, check_k
    from .core import check_bounds, whole
    from .models import felp_model

    k, bounds, assume, variant, lam, n_estimators = (
        options[key] for key in ("k", "bounds", "assume", "variant", "lam", "n_estimators")
    )
    lam = m.DEFAULT_LAM if lam is None else lam
    variants = ["strict"] if variant is None else [variant] if isinstance(variant, str) else list(variant)
    if not variants or any(v not in m.VARIANTS for v in variants):
        raise PrivacyParameterError(
            f"variant for dp_felp must be 'strict', 'paper' or both, got {variant!r}."
        )
    lam = check_eps(lam, name="lam")
    n_estimators = None if n_estimators is None else whole(n_estimators, "n_estimators", 1)
    select = m.default_select(p) if k is None else check_k(k, p)
    if bounds not in ("declared", None):
        if bounds == "auto":
            check_bounds(bounds, "dp_felp", {})
        raise PrivacyParameterError(
            f"bounds for dp_felp must be 'declared' (the model's box) or None (data minima and maxima), "
            f"got {bounds!r}."
        )
    model = felp_model(assume)
    if model.signals >= p:
        raise DataError(f"assume: signals must be < p = {p}, got {model.signals}.")
    settings = {
        "select": select,
        "lam": lam,
        "n_estimators": n_estimators,
        "bounds": bounds,
        "sample_ratio": 0.9,
    }
    sims = [felp_simulator(p=p, model=model, variant=v, **settings) for v in variants]
    shown = {"k": select, "variant": variants, "lam": lam, "n_estimators": n_estimators, "bounds": bounds}
    return sims, model, shown
