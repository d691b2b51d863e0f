"""The neighbouring-pair harness shared by the tests of issue 26 ("private by construction").

Threat model (DESIGN §3): readers of any output may not see the data; warnings, errors, term
names, result attributes and every printed or serialised channel are outputs.  Two data sets
that differ in one row must look the same to such a reader except through released values.
This module holds what the tests of that rule share: masking numbers out of text
(:func:`masked`), the structure of a JSON-like value (:func:`structure`) or of a tidy frame
(:func:`shape`), the capture of one call's channels (:func:`reader_view`) and the comparison
(:func:`assert_same_view`), and the table of front doors with the arguments that declare
everything they need (:func:`door_table`), which each test adapts to its data.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.api.pca import dp_pca
from dpstats.methods.lm import RELEASE_RULES

_NUMBER = re.compile(r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\binf\b|\bnan\b|∞")
_SPACES = re.compile(r"[ \t]+")
_SIGNIFICANCE = re.compile(r"(?<=#) (?:\*{1,3}|\.)?[ \t]*$", re.M)  # a table row's code, or none
_DECIMAL = re.compile(r"\d+\.\d+(?:e-?\d+)?")
_COMPONENTS = re.compile(r"component\(s\) [\d, ]+")
_LEGEND = re.compile(r"^---\nSignif\. codes:.*(?:\n|$)", re.M)
_TRAILING = re.compile(r"[ \t]+$", re.M)


def masked(text: str) -> str:
    """``text`` with every number replaced by '#' and runs of spaces (table alignment) by one; a
    coefficient row's significance code (``*``, ``.``) and a p-value's floor mark (``<0.02``,
    ``< 2e-16``), functions of its released p-value, go too, and so do the notes of a rule on released
    values (:func:`without_release_rules`) and printCoefmat's legend with the empty header of its stars
    column (shown only when some released p-value is below 0.1)."""
    numbers = _NUMBER.sub("#", _LEGEND.sub("", without_release_rules(text)))
    numbers = numbers.replace("< #", "#").replace("<#", "#")  # format.pval's "<0.02", "< 2e-16"
    return _TRAILING.sub("", _SIGNIFICANCE.sub("", _SPACES.sub(" ", numbers)))


def without_release_rules(text: str) -> str:
    """``text`` without the lines of a public rule on released values (dp_lm's ``RELEASE_RULES``):
    whether such a rule fires is itself a released value, as a significance code is."""
    lines = [line for line in text.split("\n") if not any(rule in line for rule in RELEASE_RULES)]
    heads = [i for i, line in enumerate(lines) if line == "Warnings:" and lines[i + 1 : i + 2] in ([], [""])]
    emptied = set(heads) | {i - 1 for i in heads if i > 0 and lines[i - 1] == ""}  # with its blank line
    return "\n".join(line for i, line in enumerate(lines) if i not in emptied)


def released_masked(text: str) -> str:
    """A warning's released (noisy) values masked: its decimals, and which mixture components collapsed
    (read off the released weights).  Whole numbers stay: a count read from the rows would show."""
    return _COMPONENTS.sub("component(s) <released> ", _DECIMAL.sub("<released>", text))


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


def warned(caught, text=str) -> list[tuple[str, str]]:
    """The distinct warnings of a call: (category, ``text`` of the message), sorted; those of a rule on
    released values left out (:func:`without_release_rules`)."""
    return sorted(
        {(w.category.__name__, text(str(w.message))) for w in caught if str(w.message) not in RELEASE_RULES}
    )


def door_table(
    x: str,
    *,
    factor: str = "",
    cls: str = "class",
    bounds: Any = (-1, 1),
    wide: str | None = None,
    parties: list | None = None,
    overrides: dict | None = None,
) -> dict[str, tuple]:
    """name -> (front door, formula, keyword arguments, number of neighbouring relations supported).

    ``x``: the numeric features (``"x1 + x2"``); ``factor``: a categorical term added to the
    regression formulas; ``cls``: the class column of dp_felp and vertical_glm; ``bounds``:
    the declared bounds; ``wide``: the knockoff filter's candidates (default ``x``);
    ``parties``: vertical_glm's column split (default: the first two features, the rest).
    ``overrides`` maps a door to None (left out) or to a dict with any of ``formula``,
    ``kwargs`` (replaces the arguments), ``set`` (arguments added or changed) and ``unset``
    (argument names removed).  The relations: 2 = replace and add/remove, 1 = replace only.
    """
    rhs = f"{x} + {factor}" if factor else x
    names = [t.strip() for t in x.split("+")]
    parties = parties or [names[:2], names[2:]]
    table = {
        "dp_sis": (dp.dp_sis, f"y ~ {rhs}", dict(eps=2.0, k=2, bounds=bounds, oc_trials=0), 2),
        "dp_two_stage": (
            dp.dp_two_stage,
            f"y ~ {rhs}",
            dict(eps=2.0, k=2, second_stage="private_ols", bounds=bounds, oc_trials=0),
            2,
        ),
        "dp_knockoff": (
            dp.dp_knockoff,
            f"y ~ {wide or x}",
            dict(
                eps=2.0,
                delta=1e-4,
                bounds=6.0,
                sigma=0.5,
                beta_norm=1.0,
                c_min=12.0,
                lambda_min=0.25,  # with B = 6, c_min = 12 every neighbour keeps it when 0.875 holds (eq. (25))
                oc_trials=0,
            ),
            1,
        ),
        "dp_gmm": (dp.dp_gmm, f"~ {x}", dict(k=2, eps=2.0, delta=1e-5, bounds=bounds, oc_trials=0), 2),
        "dp_felp": (
            dp.dp_felp,
            f"{cls} ~ {x}",
            dict(eps=1.0, n_estimators=2, variant="strict", bounds=bounds, oc_trials=0),
            1,
        ),
        "vertical_glm": (
            dp.vertical_glm,
            f"{cls} ~ {x}",
            dict(
                parties=parties,
                family="binomial",
                penalty="ridge",
                lam=0.1,
                eps=1.0,
                delta=1e-5,
                bounds=bounds,
                rounds=3,
            ),
            1,
        ),
        "dp_pca": (dp_pca, f"~ {x}", dict(k=2, eps=1.0, delta=1e-5, bounds=bounds), 2),
        "dp_lm": (dp.dp_lm, f"y ~ {rhs}", dict(eps=2.0, delta=1e-5, bounds=bounds, n_boot=100), 1),
        "dp_glm": (dp.dp_glm, f"{cls} ~ {rhs}", dict(eps=4.0, delta=1e-5, bounds=bounds), 1),
        "dp_select_infer": (
            dp.dp_select_infer,
            f"y ~ {rhs}",
            dict(eps=2.0, delta=1e-5, k=2, bounds=bounds, n_boot=100),
            1,
        ),
        # the formula route holds under replace-one-row only (n is in every z-statistic's scale)
        "dp_bh": (
            dp.dp_bh,
            f"y ~ {rhs}",
            dict(q=0.2, eps=2.0, bounds=bounds, sigma=1.0, max_rejections=2),
            1,
        ),
    }
    for name, change in (overrides or {}).items():
        if change is None:
            table.pop(name)
            continue
        func, formula, kwargs, relations = table[name]
        kwargs = dict(change.get("kwargs", kwargs), **change.get("set", {}))
        for key in change.get("unset", ()):
            kwargs.pop(key)
        table[name] = (func, change.get("formula", formula), kwargs, relations)
    return table


def reader_view(
    func, formula: str, data: Any, *, mask_errors: bool = False, warning_text=str, **kwargs
) -> dict:
    """Everything a reader sees of one call apart from the released values.

    The error (type and text) if the call fails, else the warnings, terms, attribute names,
    the type of ``fit.n``, print and summary with numbers masked, the structure of
    ``to_dict()`` and the columns and shapes of ``tidy()`` and ``glance()``.  Warning texts
    are compared unmasked (``warning_text`` may mask them): a warning may quote only released
    values, which the same seed reproduces.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = func(formula, data=data, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is part of what a reader sees
            text = masked(str(exc)) if mask_errors else str(exc)
            return {"error": (type(exc).__name__, text), "warnings": warned(caught, warning_text)}
    d = fit.to_dict()
    d.pop("created", None)
    d["warnings"] = [w for w in d.get("warnings") or [] if w not in RELEASE_RULES]
    return {
        "error": None,
        "warnings": warned(caught, warning_text),
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
