"""The one search the advice texts share: the smallest value at which a public rule is met."""

from __future__ import annotations

import math
from collections.abc import Callable


def smallest_reaching(reaches: Callable[[float], bool], start: float, stop: float) -> float:
    """The smallest x in [start, stop] with ``reaches(x)`` (monotone in x), to 0.1 %, by bisection on
    log x; inf when even ``stop`` does not reach.

    Examples
    --------
    >>> round(smallest_reaching(lambda x: x * x >= 2.0, 1.0, 100.0), 2)
    1.41
    """
    lo, hi = math.log(start), math.log(stop)
    if not reaches(stop):
        return math.inf
    while hi - lo > 1e-3:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if reaches(math.exp(mid)) else (mid, hi)
    return math.exp(hi)
