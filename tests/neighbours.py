"""The neighbouring-pair harness shared by the tests of issue 26 ("private by construction").

Threat model (DESIGN §3): readers of any output may not see the data; warnings, errors, term
names, result attributes and every printed or serialised channel are outputs.  Two data sets
that differ in one row must look the same to such a reader except through released values.
This module holds what the tests of that rule share: masking numbers out of text
(:func:`masked`), the structure of a JSON-like value (:func:`structure`) or of a tidy frame
(:func:`shape`), the capture of one call's channels (:func:`reader_view`) and the comparison
(:func:`assert_same_view`).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

_NUMBER = re.compile(r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\binf\b|\bnan\b|∞")
_SPACES = re.compile(r"[ \t]+")


def masked(text: str) -> str:
    """``text`` with every number replaced by '#' and runs of spaces (table alignment) by one."""
    return _SPACES.sub(" ", _NUMBER.sub("#", text))


def structure(value: Any) -> Any:
    """Keys, types and list lengths of a JSON-like value, numbers and strings masked."""
    if isinstance(value, dict):
        return {str(k): structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [structure(v) for v in value]
    if isinstance(value, str):
        return masked(value)
    return type(value).__name__ if value is not None else None


def shape(value: Any) -> Any:
    """The shape of a result attribute: frame and array shapes, dict keys, list lengths, types."""
    if isinstance(value, pd.DataFrame):
        return ("frame", value.shape, list(value.columns))
    if isinstance(value, np.ndarray):
        return ("array", value.shape)
    if isinstance(value, dict):
        return ("dict", sorted(map(str, value)), [shape(v) for v in value.values()])
    if isinstance(value, (list, tuple)):
        return ("list", len(value))
    return type(value).__name__


def warned(caught, mask: bool = False) -> list[tuple[str, str]]:
    """The distinct warnings of a call (category, text), numbers masked when ``mask``."""
    text = masked if mask else str
    return sorted({(w.category.__name__, text(str(w.message))) for w in caught})


def reader_view(func, formula: str, data: Any, *, mask_errors: bool = False, **kwargs) -> dict:
    """Everything a reader sees of one call apart from the released values.

    The error (type and text) if the call fails, else the warnings, terms, attribute names,
    the type of ``fit.n``, print and summary with numbers masked, the structure of
    ``to_dict()`` and the columns and shapes of ``tidy()`` and ``glance()``.  Warning texts
    are compared unmasked: a warning may quote only released values, which the same seed
    reproduces.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = func(formula, data=data, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is part of what a reader sees
            text = masked(str(exc)) if mask_errors else str(exc)
            return {"error": (type(exc).__name__, text), "warnings": warned(caught)}
    d = fit.to_dict()
    d.pop("created", None)
    return {
        "error": None,
        "warnings": warned(caught),
        "terms": list(fit.terms),
        "attributes": sorted(vars(fit)),
        "type of n": type(fit.n).__name__,
        "print": masked(str(fit)),
        "summary": masked(str(fit.summary())),
        "to_dict": structure(d),
        "tidy": (list(fit.tidy().columns), fit.tidy().shape),
        "glance": (list(fit.glance().columns), fit.glance().shape),
        "fit": fit,
    }


def assert_same_view(one: dict, other: dict, label: str = "", *, released: bool = True) -> None:
    """Every channel of two views is equal (the fits themselves excepted).

    ``released``: the first call must have released (no error); with False an error is
    allowed, provided the neighbour gives the same one.
    """
    if released:
        assert one["error"] is None, (label, one["error"])
    for channel in one:
        if channel == "fit":
            continue
        assert one[channel] == other.get(channel), (
            f"{label}: {channel} differs: {one[channel]!r} != {other.get(channel)!r}"
        )
