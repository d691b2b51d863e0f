"""Private top-k selectors, listed explicitly in :data:`SELECTORS`.

Each selector takes scores already divided by their sensitivity (one
neighbouring change moves every score by at most 1), k, eps and a numpy
generator, and returns the selected indices as a sorted array: the output is a
*set*; its internal order is not released (only a choice is released, so
numpy's generator is used; docs/architecture.md, "Privacy conventions").

* ``"canonical_lipschitz"`` (:mod:`.canonical`): canonical Lipschitz mechanism,
  eps-DP in one shot (Shekelyan & Loukides 2022; Algorithm 2 of the DP-SIS
  paper's appendix).
* ``"peeling"``, ``"oneshot_gumbel"``, ``"joint"`` (:mod:`.family`): peeling
  exponential mechanism (McSherry & Talwar 2007), one-shot Gumbel (Durfee &
  Rogers 2019) and joint exponential mechanism (Gillenwater et al. 2022), each
  eps-DP.

:mod:`.selector` holds the :class:`Selector` record and :mod:`.laws` the exact
output laws used by the audits.  A new selector is a new module whose
:class:`Selector` is added to :data:`SELECTORS` below; nothing registers itself
by being imported.
"""

from __future__ import annotations

import numpy as np

from .canonical import (
    CANONICAL_LIPSCHITZ,
    EXACT_TOP_UTILITIES,
    canonical_lipschitz,
    canonical_lipschitz_grid,
    class_log_sizes,
    class_members,
    class_utilities,
    exact_recovery_bound,
    largest_class_noise,
    log_other_subsets,
    max_exponential_noise,
    recovery_curve,
    recovery_gaps,
)
from .family import JOINT, ONESHOT_GUMBEL, PEELING, joint, oneshot_gumbel, peeling
from .laws import canonical_lipschitz_distribution, exact_set_distribution
from .selector import Selector

#: Every private top-k selector, by public name (the ``topk=`` argument of the front doors).
SELECTORS: dict[str, Selector] = {s.name: s for s in (CANONICAL_LIPSCHITZ, PEELING, ONESHOT_GUMBEL, JOINT)}


def select_topk(
    scores: np.ndarray,
    k: int,
    eps: float,
    rng: np.random.Generator,
    method: str = "canonical_lipschitz",
    **options,
) -> np.ndarray:
    """Select k indices privately with the selector ``method``; ``scores`` must have sensitivity 1.

    Parameters
    ----------
    scores : ndarray of shape (d,)
        Scores divided by their sensitivity.
    k : int
        Number of items to select.
    eps : float
        Privacy parameter of the whole selection.
    rng : numpy Generator
    method : str
        A key of :data:`SELECTORS`.
    **options
        Passed to the selector (e.g. ``gamma``, ``monotone``).

    Returns
    -------
    ndarray
        The selected indices, sorted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> select_topk(np.array([100., 0, 0, 90]), 2, 10.0, rng)
    array([0, 3])
    """
    try:
        selector = SELECTORS[method]
    except KeyError:
        raise ValueError(f"unknown top-k selector '{method}'; choose one of {sorted(SELECTORS)}") from None
    return selector.select(np.asarray(scores, dtype=float), int(k), float(eps), rng, **options)


__all__ = [
    "EXACT_TOP_UTILITIES",
    "SELECTORS",
    "Selector",
    "canonical_lipschitz",
    "canonical_lipschitz_distribution",
    "canonical_lipschitz_grid",
    "class_log_sizes",
    "class_members",
    "class_utilities",
    "exact_recovery_bound",
    "exact_set_distribution",
    "joint",
    "largest_class_noise",
    "log_other_subsets",
    "max_exponential_noise",
    "oneshot_gumbel",
    "peeling",
    "recovery_curve",
    "recovery_gaps",
    "select_topk",
]
