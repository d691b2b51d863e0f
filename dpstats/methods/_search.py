"""The one search the advice texts share: the smallest value at which a public rule is met."""

from __future__ import annotations

import math
from collections.abc import Callable


def smallest_reaching(
    reaches: Callable[[float], bool], start: float, stop: float, tolerance: float = 1e-3
) -> float:
    """The smallest x in [start, stop] with ``reaches(x)`` (monotone in x), to ``tolerance`` in log x
    (0.1 % by default), by bisection on log x; inf when even ``stop`` does not reach.

    The value returned is always one at which ``reaches`` was called and held (``stop`` itself
    when no smaller one did), so a rule that is only nearly monotone, such as a simulation's, is
    still met there.

    Examples
    --------
    >>> round(smallest_reaching(lambda x: x * x >= 2.0, 1.0, 100.0), 2)
    1.41
    >>> smallest_reaching(lambda x: x >= 3.0, 1.0, 10.0, tolerance=0.5) >= 3.0
    True
    """
    lo, hi = math.log(start), math.log(stop)
    if not reaches(stop):
        return math.inf
    found = stop
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        if reaches(math.exp(mid)):
            hi, found = mid, math.exp(mid)
        else:
            lo = mid
    return found
