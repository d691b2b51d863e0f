"""Data-generating processes of the papers and operating-characteristics simulations.

Data-generating processes (each returns data and, where it has one, the truth):

* :func:`fan_lv`, :func:`fan_lv_coefficients`: the DP-SIS paper's synthetic
  model (Fan & Lv 2008, §3.3.1); also ``dpstats.datasets.fan_lv``.
* :func:`instability_data`: the DP-SIS paper's §3 designs W1 and W1/W2.
* :func:`paper_beta`, :func:`sample_stats`, :func:`sample_data`: the DP
  knockoff paper's Figure-1 model, as sufficient statistics or as rows.
* :func:`simulate_gmm`, :class:`MixtureTruth`: mixtures of separated Gaussians.
* :func:`planted`: classes separated along planted features (FELP).

Simulations: :func:`simulate_grid` (the knockoff paper's FDR and power
against n, behind ``dpstats.simulate_knockoff``), :func:`accuracy_vs_eps` (the
FELP paper's cross-validated accuracy against eps), and the operating
characteristics under an explicit, user-stated model (``assume=``).

dpstats reports error rates (precision, recall, FDR, power, misclassification)
only under a model the user states with :class:`Assume` (or ``"released"``,
the plug-in model where it makes sense).  The simulators draw the sufficient
statistics from their sampling law at the public n: their cost per trial is
O(d) (:func:`sis_trials`) or O(p²) (:func:`dpstats.simulate.knockoff.operating_characteristics`),
independent of n.  Each takes public inputs, the assumption and a generator,
and returns per-trial outcomes.

This package may use ``methods`` and ``privacy`` (it runs the mechanisms);
nothing in ``methods`` or ``privacy`` imports it.  The modules other than
``assume``, ``sis`` and ``fan_lv`` are imported when one of their names is
first used, which keeps ``import dpstats`` fast.

Examples
--------
>>> from dpstats.simulate import fan_lv, simulate_gmm
>>> fan_lv(n=30, d=10, random_state=0).shape
(30, 11)
>>> simulate_gmm(100, d=2, k=2, random_state=0)[1].means.shape
(2, 2)
"""

from __future__ import annotations

import importlib

from .assume import RELEASED, Assume, describe
from .fan_lv import fan_lv, fan_lv_coefficients
from .sis import SCORES, mean_and_se, sis_scores, sis_trials

# name -> submodule, imported on first use
_LAZY = {
    "instability_data": "two_stage",
    "paper_beta": "knockoff",
    "sample_stats": "knockoff",
    "sample_data": "knockoff",
    "simulate_grid": "knockoff",
    "simulate_gmm": "gmm",
    "MixtureTruth": "gmm",
    "planted": "felp",
    "accuracy_vs_eps": "felp",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Assume",
    "RELEASED",
    "describe",
    "sis_scores",
    "sis_trials",
    "mean_and_se",
    "SCORES",
    "fan_lv",
    "fan_lv_coefficients",
    *_LAZY,
]
