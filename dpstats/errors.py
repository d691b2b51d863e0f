"""Error and warning classes (docs/architecture.md, "Privacy conventions").

Every error says what is wrong, names the offending argument or value, and says
how to fix it.  Bad input never spends budget: front doors validate before they
charge an accountant.
"""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the user's line: the first frame outside dpstats.

    Calls reach a warning through the front-door skeleton, the formula layer or
    an engine at different depths; counting frames from the caller of
    :func:`warnings.warn` keeps every warning at the user's call.  Use it as
    ``warnings.warn(message, Category, stacklevel=caller_stacklevel())``.
    """
    frame, level = sys._getframe(1), 1  # the function that calls warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


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


class ChanceWarning(UserWarning):
    """A planned analysis cannot beat chance: at this eps (or n) the predicted accuracy is within noise of a random choice."""
