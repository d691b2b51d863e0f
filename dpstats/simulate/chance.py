"""Chance levels and the one rule that a predicted measure does not beat its chance level.

:func:`dpstats.plan` flags a planned eps whose predicted measure is within 2 Monte Carlo standard errors of
its chance level, and raises :class:`~dpstats.errors.ChanceWarning` with :func:`chance_warning`'s text.  The
front doors whose operating characteristics are simulated under a stated model (``assume=``: dp_sis's
precision and recall, dp_knockoff's power) apply the same rule and text to those rows
(:meth:`dpstats.results.base.OperatingCharacteristics.chance_text`), so a release the planner would have
called hopeless says so too.  Everything here is public: levels follow from k, d and the assumed model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: dp_knockoff's chance level of power: below it the filter practically never selects.
KNOCKOFF_POWER_FLOOR = 0.05


@dataclass
class Chance:
    """The level a measure must beat for the plan to be worth its budget, and why."""

    level: float
    text: str


def selection_chance(signals: int, k: int, p: int) -> dict[str, Chance]:
    """Precision s/d and recall k/d of choosing k of p columns at random (dp_sis, dp_two_stage)."""
    why = f"random selection of {k} of {p} columns"
    return {
        "precision": Chance(signals / p, f"{why}: precision s/d = {signals / p:.3g}"),
        "recall": Chance(k / p, f"{why}: recall k/d = {k / p:.3g}"),
    }


def knockoff_chance() -> dict[str, Chance]:
    """dp_knockoff's power: below :data:`KNOCKOFF_POWER_FLOOR` the filter practically never selects."""
    return {
        "power": Chance(
            KNOCKOFF_POWER_FLOOR,
            f"power below {KNOCKOFF_POWER_FLOOR:g}: the filter practically never selects",
        )
    }


def at_chance(estimate: Any, std_error: Any, chance: Chance, lower_is_better: bool = False) -> Any:
    """Whether a predicted measure does not beat ``chance`` by 2 Monte Carlo standard errors (an undefined
    standard error counts as 0; an undefined estimate never does).  Scalars or arrays.

    Examples
    --------
    >>> at_chance(0.033, 0.004, Chance(0.025, "")), at_chance(0.2, 0.01, Chance(0.025, ""))
    (True, False)
    """
    se = np.nan_to_num(np.asarray(std_error, dtype=float), nan=0.0)
    if lower_is_better:
        flagged = np.asarray(estimate, dtype=float) >= chance.level - 2 * se
    else:
        flagged = np.asarray(estimate, dtype=float) <= chance.level + 2 * se
    return bool(flagged) if flagged.ndim == 0 else flagged


def worse_than_chance(estimate: Any, std_error: Any, chance: Chance, lower_is_better: bool = False) -> Any:
    """Whether a predicted measure is more than 2 Monte Carlo standard errors on the wrong side of
    ``chance`` (worse than chance, not merely within 2 s.e. of it).  Scalars or arrays.

    Examples
    --------
    >>> worse_than_chance(2.76, 0.19, Chance(1.0, ""), lower_is_better=True)
    True
    """
    se = np.nan_to_num(np.asarray(std_error, dtype=float), nan=0.0)
    behind = np.asarray(estimate, dtype=float) - chance.level
    worse = (behind if lower_is_better else -behind) > 2 * se
    return bool(worse) if worse.ndim == 0 else worse


def chance_where(eps: float, estimate: float, std_error: float, n: int | None = None) -> str:
    """Where a measure was flagged, with its prediction there: ``eps = 2 (0.028, s.e. 0.0051)``.

    Examples
    --------
    >>> chance_where(2.0, 0.0283, 0.00512, n=300)
    'eps = 2 and n = 300 (0.0283, s.e. 0.0051)'
    """
    at = f"eps = {eps:g}" + (f" and n = {n}" if n is not None else "")
    return f"{at} ({estimate:.3g}, s.e. {std_error:.2g})"


def chance_part(method: str, measure: str, why: str, where: str, worse: bool = False) -> str:
    """One flagged measure, as the warning names it: ``where`` is e.g. ``"eps = 2"``; ``worse``: the
    prediction is more than 2 SE worse than chance (:func:`worse_than_chance`), else within 2 SE of it."""
    verdict = "more than 2 SE worse than chance" if worse else "within 2 SE of chance"
    return f"{method}: predicted {measure} is {verdict} ({why}) at {where}"


def chance_warning(parts: Sequence[str]) -> str:
    """The ChanceWarning's text for the flagged measures (:func:`chance_part`); empty when none is."""
    if not parts:
        return ""
    return "cannot beat chance: " + "; ".join(parts) + ". Spending this budget would buy noise."
