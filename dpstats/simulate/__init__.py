"""Operating characteristics under an explicit, user-stated model (``assume=``).

dpstats reports error rates (precision, recall, FDR, power, misclassification)
only under a model the user states with :class:`Assume` (or ``"released"``,
the plug-in model where it makes sense).  The simulators here draw the
sufficient statistics from their sampling law at the public n: their cost per
trial is O(d) or O(p²), independent of n.  Each takes public inputs, the
assumption and a generator, and returns per-trial outcomes.
"""

from __future__ import annotations

from .assume import RELEASED, Assume, describe
from .sis import SCORES, mean_and_se, sis_scores, sis_trials

__all__ = ["Assume", "RELEASED", "describe", "sis_scores", "sis_trials", "mean_and_se", "SCORES"]
