"""Error and warning classes (docs/architecture.md, "Privacy conventions").

Every error says what is wrong, names the offending argument or value, and says
how to fix it.  Bad input never spends budget: front doors validate before they
charge an accountant.
"""

from __future__ import annotations


class DPStatsError(Exception):
    """Base class of every error raised by dpstats."""


class FormulaError(DPStatsError, ValueError):
    """The formula cannot be parsed or refers to something that does not exist."""


class DataError(DPStatsError, ValueError):
    """The data cannot be used as given (missing, non-numeric, constant, too small)."""


class PrivacyParameterError(DPStatsError, ValueError):
    """A privacy parameter (eps, delta, bounds, neighbouring, strict) is invalid."""


class BudgetExceededError(DPStatsError):
    """The accountant refused a spend that would exceed its budget."""


class AssumptionError(DPStatsError, ValueError):
    """A mathematical assumption of the method does not hold for these inputs."""


class EngineError(DPStatsError, RuntimeError):
    """A pass over the data could not finish (a Dask worker died, a cluster went away); nothing was released."""


class NonPrivateWarning(UserWarning):
    """A data-dependent calibration step was used: it is not covered by the guarantee."""


class DataWarning(UserWarning):
    """Rows were dropped or values clipped; the analyst should know."""
