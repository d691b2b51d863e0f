"""Settings shared by the vignettes: where reports go and how big the runs are.

``DPSTATS_QUICK=1`` (set by the test suite) shrinks simulations so that every
vignette runs in seconds; ``DPSTATS_OUT`` is the folder reports are written to.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

QUICK = os.environ.get("DPSTATS_QUICK", "") not in ("", "0")
OUT = Path(os.environ.get("DPSTATS_OUT", "reports/vignettes"))
OUT.mkdir(parents=True, exist_ok=True)


def scale(full: int, quick: int) -> int:
    """``quick`` under the test suite, ``full`` otherwise."""
    return quick if QUICK else full


@contextmanager
def shown_warnings() -> Iterator[list]:
    """Record the warnings of a block and print them: a vignette shows a data-dependent step, never hides it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    for w in caught:
        print(f"{w.category.__name__}: {str(w.message)[:110]}")
