"""dpstats: differentially private statistics for statisticians.

>>> import dpstats as dp
>>> df = dp.datasets.fan_lv(n=100, d=50, random_state=0)
>>> fit = dp.dp_sis("y ~ .", data=df, eps=2.0, k=5, bounds=(-4, 4), random_state=0)
>>> fit.k
5
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

from . import datasets
from .api import dp_sis
from .errors import (AssumptionError, BudgetExceededError, DataError, DPStatsError,
                     FormulaError, NonPrivateWarning, PrivacyParameterError)
from .privacy.accountant import Accountant
from .report import report

# Public names whose modules are imported on first use (keeps `import dpstats` fast,
# and lets each method live in its own module).
_LAZY = {
    "dp_knockoff": "dpstats.api.knockoff",
    "simulate_knockoff": "dpstats.api.knockoff",
    "dp_two_stage": "dpstats.api.two_stage",
    "dp_gmm": "dpstats.api.gmm",
    "dp_felp": "dpstats.api.felp",
    "vertical_glm": "dpstats.api.vertical",
    "dp_pca": "dpstats.api.pca",
}
_LAZY_MODULES = ("evaluate", "vertical", "audit", "rbridge", "engines", "simulate")


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        return importlib.import_module(f"dpstats.{name}")
    raise AttributeError(f"module 'dpstats' has no attribute {name!r}")


__all__ = [
    "dp_sis", "report", "datasets", "Accountant",
    "DPStatsError", "FormulaError", "DataError", "PrivacyParameterError",
    "BudgetExceededError", "AssumptionError", "NonPrivateWarning", *_LAZY,
]
