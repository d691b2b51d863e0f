"""The record that describes one private top-k selector.

A :class:`Selector` bundles a sampling function with the text that states its
guarantee; :data:`dpstats.privacy.topk.SELECTORS` lists every selector dpstats
offers, and the front doors copy ``accounting`` and ``statement_note`` into the
privacy statement.  Conventions (scores in sensitivity units, output a sorted
index set) are in docs/architecture.md, "Privacy conventions".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Selector:
    """A private top-k selector and the accounting that makes it eps-DP.

    Parameters
    ----------
    name : str
        Public name, the value of ``topk=`` at the front doors.
    select : callable
        ``select(scores, k, eps, rng, **options)`` -> sorted selected indices.
    accounting : str
        Why the output is eps-DP (mechanism, composition, source).
    monotone_note : str
        What changes when the scores are monotone (empty if nothing).
    statement_note : str
        A note the privacy statement shows when this selector is used.

    Examples
    --------
    >>> s = Selector("first_k", lambda scores, k, eps, rng: np.arange(k), "not private")
    >>> s.select(np.zeros(3), 2, 1.0, None)
    array([0, 1])
    """

    name: str
    select: Callable[..., np.ndarray]
    accounting: str
    monotone_note: str = ""
    statement_note: str = ""

    def event(self, eps: float, k: int):
        """The privacy event of one selection at eps (:func:`~dpstats.privacy.events.selection_event`)."""
        from ..events import selection_event

        return selection_event(self.name, eps, k)
