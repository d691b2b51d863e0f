"""Error and warning classes (docs/architecture.md, "Privacy conventions").

Every error says what is wrong, names the offending argument or value, and says
how to fix it.  Bad input never spends budget: front doors validate before they
charge an accountant.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterable

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


def close_names(name: str, names: Iterable[str], n: int = 3, cutoff: float = 0.5) -> list[str]:
    """The names an error suggests for a misspelt ``name`` ("did you mean"): those that differ from
    it only in case first (``Y`` for ``y``, which :func:`difflib.get_close_matches` scores 0), then
    the close ones by difflib's ratio of at least ``cutoff``; at most ``n``.

    Every suggestion of a column or ``bounds=`` name uses it, whatever the data's source.

    Examples
    --------
    >>> close_names("y", ["Y", "x1"]), close_names("x1", ["x2", "X1", "y"]), close_names("z", ["y"])
    (['Y'], ['X1', 'x2'], [])
    """
    names = [str(m) for m in names]
    folded = name.casefold()
    same = [m for m in names if m != name and m.casefold() == folded]
    return list(dict.fromkeys(same + difflib.get_close_matches(name, names, n=n, cutoff=cutoff)))[:n]


class DPStatsError(Exception):
    """Base class of every error raised by dpstats.

    Examples
    --------
    >>> import dpstats as dp
    >>> try:
    ...     dp.dp_lm("y ~ x", {"x": [0.1, 0.9], "y": [1.0, 2.0]}, eps=-1.0)
    ... except dp.DPStatsError as err:  # every error dpstats raises, whatever its kind
    ...     print(type(err).__name__)
    PrivacyParameterError
    """


class FormulaError(DPStatsError, ValueError):
    """The formula cannot be parsed or refers to something that does not exist.

    Examples
    --------
    >>> import dpstats as dp
    >>> dp.dp_lm("y ~ z", {"x": [0.1, 0.9], "y": [1.0, 2.0]}, eps=1.0, bounds=(0, 5))
    Traceback (most recent call last):
    ...
    dpstats.errors.FormulaError: column 'z' in formula ... is not in the data. Check the spelling ...
    """


class DataError(DPStatsError, ValueError):
    """The data cannot be used as given (missing, non-numeric, constant, too small).

    Examples
    --------
    >>> import dpstats as dp
    >>> dp.dp_lm("y ~ x", {"x": [0.1, 0.9], "y": [1.0, 2.0]}, eps=1.0, bounds=(0, 5))
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: dp_lm needs more rows than coefficients, but n = 2 <= 2; use fewer terms, ...
    """


class PrivacyParameterError(DPStatsError, ValueError):
    """A privacy parameter (eps, delta, bounds, neighbouring, strict) is invalid.

    A method's other arguments are classed here too when they are wrong whatever the data: a type
    (``k="3"``, ``levels`` not a dict) or a choice (``topk``, ``family``) that is not accepted.
    :class:`DataError` is for the data, and for an argument out of range for the data's design.

    Examples
    --------
    >>> import dpstats as dp
    >>> dp.dp_lm("y ~ x", {"x": [0.1, 0.9], "y": [1.0, 2.0]}, eps=0.0, bounds=(0, 5))
    Traceback (most recent call last):
    ...
    dpstats.errors.PrivacyParameterError: eps must be a positive number, got 0.0; inf runs the non-private fit.
    """


class BudgetExceededError(DPStatsError):
    """The accountant refused a spend that would exceed its budget.

    Examples
    --------
    >>> import dpstats as dp
    >>> acc = dp.Accountant(eps=1.0)
    >>> dp.dp_lm("y ~ x", {"x": [0.1, 0.9, 0.5], "y": [1.0, 2.0, 1.5]}, eps=2.0, bounds=(0, 5),
    ...          accountant=acc)
    Traceback (most recent call last):
    ...
    dpstats.errors.BudgetExceededError: this analysis needs (eps=2, delta=0) but the accountant has ...
    >>> acc.spent_eps  # refused before anything was read or spent
    0.0
    """


class AssumptionError(DPStatsError, ValueError):
    """A mathematical assumption of the method does not hold for these inputs.

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    >>> dp.dp_knockoff("y ~ .", df, eps=1.0, delta=1e-6, bounds=5.0, sigma=1.0, beta_norm=5.0,
    ...                c_min=1.0, lambda_min=0.5)  # the declared c_min cannot exceed B
    Traceback (most recent call last):
    ...
    dpstats.errors.AssumptionError: Assumption 3 fails: the smallest column norm C_min must exceed ...
    """


class EngineError(DPStatsError, RuntimeError):
    """A pass over the data could not finish (a Dask worker died, a cluster went away); nothing was released."""


class SourceChangedError(DataError):
    """A data file changed between two passes of one analysis over it (its size, modification time or
    inode differ from when the analysis first read it), so that its passes would not read the same rows.

    Raised by the engines before a pass reads the changed file (:mod:`dpstats.engines.fingerprint`); it
    depends on the files' metadata alone, never on their rows or on a draw, which is why the charge of
    the call may be withdrawn when it is raised during the release
    (:class:`dpstats.privacy.accountant.Reservation`).
    """


class NonPrivateWarning(UserWarning):
    """A data-dependent calibration step was used: it is not covered by the guarantee.

    ``strict=True`` turns it into an error raised before anything is spent.

    Examples
    --------
    >>> import warnings, dpstats as dp
    >>> data = {"x1": [0.1, 0.9, 0.5, 0.3, 0.7], "x2": [1.0, 0.0, 0.5, 0.2, 0.9], "y": [1.0, 2.0, 1.5, 1.2, 1.9]}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = dp.dp_sis("y ~ x1 + x2", data, eps=1.0, k=1, oc_trials=0, random_state=0)  # no bounds declared
    >>> caught[0].category.__name__, str(caught[0].message)[:50]
    ('NonPrivateWarning', 'data-dependent step not covered by the privacy gua')
    """


class DataWarning(UserWarning):
    """Rows were dropped or values clipped; the analyst should know."""


class ChanceWarning(UserWarning):
    """A planned analysis cannot beat chance: at this eps (or n) the predicted accuracy is within noise of a random choice."""
