"""FELP's ensemble, steps 1–3 of Liu (2018), §1.3: k samples, k learners, their average.

* Step 1: k samples of the rows (:func:`subsets`).  The paper draws
  bootstrap samples of ⌈βn⌉ rows with replacement (``variant="paper"``); the
  strict variant draws a random partition into k disjoint subsets instead,
  so that one row enters exactly one learner (:mod:`.sensitivity`).
* Step 2: one base learner on each sample (:func:`.learner.logo`); in the
  strict variant each weight vector is normalised to ℓ2 norm C (default) or
  scaled back onto the ℓ2 ball of radius C (a given ``clip_norm``): the bound
  ‖w‖ <= C the strict sensitivity 2C/k rests on.
* Step 3: the learners' weights are averaged, w_D = (1/k) Σ_t w_D(r_t).

Step 4 (the noise) is :func:`.perturbation.release`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..._kernels import single_blas_thread
from .learner import EXACT_LIMIT, MAX_ITER, N_NEIGHBORS, TOL, logo_unlimited
from .sensitivity import default_clip_norm


@dataclass
class EnsembleFit:
    """The k base learners and their average (before any noise)."""

    weights: np.ndarray  # (k, d), after clipping in the strict variant
    w_mean: np.ndarray
    n_iter: list[int] = field(default_factory=list)
    converged: list[bool] = field(default_factory=list)
    n_clipped: int = (
        0  # learners rescaled: norm above C, or (normalised) any nonzero norm but C (not private)
    )


def subsets(n: int, k: int, sample_ratio: float, variant: str, gen: np.random.Generator) -> list[np.ndarray]:
    """Step 1: row indices of the k subsets, bootstrap samples of ⌈βn⌉ rows or a random partition.

    Examples
    --------
    >>> parts = subsets(10, 3, 0.9, "strict", np.random.default_rng(0))
    >>> sorted(np.concatenate(parts).tolist()) == list(range(10))
    True
    """
    if variant == "paper":
        m = math.ceil(sample_ratio * n)
        return [gen.integers(0, n, size=m) for _ in range(k)]
    return [np.sort(part) for part in np.array_split(gen.permutation(n), k)]


@dataclass(frozen=True)
class EnsembleSpec:
    """The ensemble's public settings (FELP, Liu 2018, §1.3; Logo's K, tolerance and cap).

    ``variant="paper"``: bootstrap samples (with replacement) of ⌈βn⌉ rows, β =
    ``sample_ratio``.  ``variant="strict"``: a random partition into ``n_estimators``
    disjoint subsets, each learner's weight vector scaled back onto the ℓ2 ball of radius
    ``clip_norm`` (default :func:`.sensitivity.default_clip_norm` of λ), or with
    ``normalise=True`` scaled to norm ``clip_norm`` exactly (a zero vector stays 0).
    """

    n_estimators: int = 20
    sample_ratio: float = 0.9
    variant: str = "paper"
    clip_norm: float | None = None
    tol: float = TOL
    max_iter: int = MAX_ITER
    n_neighbors: int = N_NEIGHBORS
    normalise: bool = False


def ensemble(
    U: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    gen: np.random.Generator,
    spec: EnsembleSpec | None = None,
    progress: Callable[[int], None] | None = None,
) -> EnsembleFit:
    """Steps 1–3: the average of ``spec.n_estimators`` Logo learners (FELP, Liu 2018, §1.3).

    The samples and the clipping are those of ``spec.variant`` (:class:`EnsembleSpec`; None:
    its defaults).
    A learner whose sample has no margin vector (fewer than 2 rows, a single class, or a
    class with a single row: such rows have no nearest hit or miss and are left out) has
    weights 0, by construction; no class count is checked.
    ``progress``, if given, is called with 1 after each learner (e.g. a tqdm
    bar's ``update``).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = np.repeat([0, 1], 40); U = rng.uniform(size=(80, 4)) / 2
    >>> U[:, 2] = (y + rng.uniform(size=80)) / 4
    >>> fit = ensemble(U, y, 0.01, gen=rng, spec=EnsembleSpec(n_estimators=5))
    >>> int(np.argmax(fit.w_mean))
    2
    """
    spec = EnsembleSpec() if spec is None else spec
    n_estimators, variant = spec.n_estimators, spec.variant
    parts = subsets(len(y), n_estimators, spec.sample_ratio, variant, gen)  # step 1
    C = default_clip_norm(lam) if spec.clip_norm is None else spec.clip_norm
    out = EnsembleFit(weights=np.zeros((n_estimators, U.shape[1])), w_mean=np.zeros(U.shape[1]))
    with single_blas_thread():  # as logo(), but the BLAS threads are limited once for all learners
        for b, idx in enumerate(parts):  # step 2
            if len(idx) < 2:  # no row has a neighbour: no margin vector, the learner's w is 0 by construction
                out.n_iter.append(0)
                out.converged.append(True)
                if progress is not None:
                    progress(1)
                continue
            fit = logo_unlimited(
                U[idx], y[idx], lam, idx, spec.n_neighbors, spec.tol, spec.max_iter, EXACT_LIMIT
            )
            w = _bounded(fit.w, C, spec.normalise) if variant == "strict" else fit.w
            out.n_clipped += not np.array_equal(w, fit.w)
            out.weights[b] = w
            out.n_iter.append(fit.n_iter)
            out.converged.append(fit.converged)
            if progress is not None:
                progress(1)
    out.w_mean = out.weights.mean(axis=0)  # step 3
    return out


def _bounded(w: np.ndarray, C: float, normalise: bool) -> np.ndarray:
    """w scaled to norm C (``normalise``; 0 stays 0) or clipped to norm at most C: ‖result‖ <= C."""
    norm = float(np.linalg.norm(w))
    if norm == 0.0 or (norm <= C and not normalise):
        return w
    return w * (C / norm)
