"""dpstats: differentially private statistics for statisticians.

>>> import dpstats as dp
>>> df = dp.datasets.fan_lv(n=100, d=50, random_state=0)
>>> fit = dp.dp_sis("y ~ .", data=df, eps=2.0, k=5, bounds=(-4, 4), random_state=0)
>>> fit.k
5
"""

from __future__ import annotations

import importlib

from ._version import __version__ as __version__
from . import catalog as _catalog
from .errors import (
    AssumptionError,
    BudgetExceededError,
    DataError,
    DPStatsError,
    FormulaError,
    NonPrivateWarning,
    PrivacyParameterError,
)

# Bound here, eagerly, so that ``dpstats.report`` is the function: the module
# ``dpstats.report`` is then already loaded and later imports of it (by results)
# do not rebind the package attribute to the module.  report.py is cheap to import.
from .report import report

# Public names whose modules are imported on first use (keeps `import dpstats` fast:
# numpy, pandas, scipy, numba and the methods load with the first call, and lets each
# method live in its own module).  See benchmarks/bench_import.py.
_LAZY = {
    **_catalog.front_doors(),  # every analysis function, from the catalog of methods (dpstats/catalog.py)
    "simulate_knockoff": "dpstats.simulate.knockoff",
    "Accountant": "dpstats.privacy.accountant",
    "plan": "dpstats.planner",
    "AutoBounds": "dpstats.privacy.bounds",
    "compose": "dpstats.privacy.composition",
    "SessionPlan": "dpstats.privacy.session",
    "Schema": "dpstats.schema",
    # dp_bh's η for z-tests on bounded data (the sensitivity a Python user declares as eta=)
    "eta_two_sided_z": "dpstats.methods.bh",
    "z_mean_delta": "dpstats.methods.bh",
}
_LAZY_MODULES = (
    "datasets",
    "evaluate",
    "vertical",
    "audit",
    "rbridge",
    "engines",
    "simulate",
    "api",
    "privacy",
    "results",
    "methods",
    "formula",
    "stats",
    "geometry",
    "validation",
    "schema",
    "plotting",
    "demos",
    "cli",
    "_kernels",
    "planner",
)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        return importlib.import_module(f"dpstats.{name}")
    raise AttributeError(f"module 'dpstats' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))


__all__ = [
    "compose",
    "SessionPlan",
    "report",
    "datasets",
    "Accountant",
    "DPStatsError",
    "FormulaError",
    "DataError",
    "PrivacyParameterError",
    "BudgetExceededError",
    "AssumptionError",
    "NonPrivateWarning",
    "simulate_knockoff",
    "plan",
    "AutoBounds",
    "Schema",
    "eta_two_sided_z",
    "z_mean_delta",
    *_catalog.names(),  # the analysis functions (dpstats/catalog.py)
]
