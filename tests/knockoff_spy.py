"""What dp_knockoff's front door hands to its mechanism: a spy on ``run_mechanism`` for tests that
compare a statistic's move between neighbours with the sensitivity the door used."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from dpstats.methods.knockoff import mechanism as kd


def mechanism_inputs(call: Callable[[], object], ignore: type[Warning] = Warning) -> tuple:
    """(statistics, s, scales) of the first ``run_mechanism`` call that ``call()`` makes, warnings of
    class ``ignore`` silenced (data-dependent steps and delta >= 1/n, said elsewhere)."""
    captured = []
    original = kd.run_mechanism

    def spy(st, s, scales, noise, **kw):
        captured.append((st, s, scales))
        return original(st, s, scales, noise, **kw)

    kd.run_mechanism = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ignore)
            call()
    finally:
        kd.run_mechanism = original
    return captured[0]
