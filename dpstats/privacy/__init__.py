"""The privacy core: every mechanism and accounting primitive of dpstats, once.

Modules (each docstring names its mechanism, guarantee and source):

* :mod:`.randomness` — randomness policy and every noise sampler
  (:class:`NoiseSource` for releases, :class:`~.randomness.FastNoise` for
  simulations).
* :mod:`.calibration` — every Gaussian-mechanism and zCDP conversion.
* :mod:`.accountant` — the (eps, delta) :class:`Accountant`, its ledger, and
  zCDP budget plans.
* :mod:`.reservation` — a call's charge held while its release reads the data: withdrawn only
  when a file changed between its passes, otherwise said in every error after it.
* :mod:`.events` — each ledger step's mechanism as a privacy event.
* :mod:`.composition` — tight composition of events by dp_accounting (``dp.compose``).
* :mod:`.filters` — the accountant's composition rules (basic, zCDP filter) and their validity.
* :mod:`.session` — sessions declared in advance, PLD-accounted and calibrated (``dp.SessionPlan``).
* :mod:`.statement` — the :class:`PrivacyStatement` attached to every result.
* :mod:`.topk` — private top-k selectors, listed in :data:`SELECTORS`, and
  their exact output laws.
* :mod:`.sparse_vector` — AboveThreshold and the private radius.
* :mod:`.pca` — private PCA ("Analyze Gauss").

Methods (:mod:`dpstats.methods`) call these; nothing here imports a method.
See docs/architecture.md, "Layers" and "Privacy conventions".
"""

from .accountant import Accountant, LedgerEntry
from .randomness import NoiseSource, make_generator
from .statement import DataDependence, PrivacyStatement
from .topk import SELECTORS, exact_recovery_bound, select_topk

__all__ = [
    "Accountant",
    "LedgerEntry",
    "NoiseSource",
    "make_generator",
    "DataDependence",
    "PrivacyStatement",
    "SELECTORS",
    "select_topk",
    "exact_recovery_bound",
]
