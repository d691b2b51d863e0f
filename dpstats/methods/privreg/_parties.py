"""The parties and their columns: who holds which column and term, and their rows matched by row ids.

:func:`party_columns` reads the ``parties`` argument, :func:`combine` puts the parties' frames
side by side (rows matched by a hash of the row ids, never the data), :func:`assign_terms` gives
every design column its party, and :func:`response_fill` a binomial response's public fill
(:mod:`dpstats.methods.privreg`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DataError, PrivacyParameterError
from ...formula import INTERCEPT, ModelFrame
from ._settings import check_rows, row_id_hash

_IDENT = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")


def party_columns(parties) -> tuple[list[str], list[list[str]]]:
    """The parties' names and the columns each holds (at least 2 parties, no column held twice).

    Examples
    --------
    >>> party_columns([["x1", "x2"], ["x3"]])
    (['party1', 'party2'], [['x1', 'x2'], ['x3']])
    """
    if isinstance(parties, Mapping):
        names, cols = [str(k) for k in parties], [list(v) for v in parties.values()]
    elif isinstance(parties, Sequence) and not isinstance(parties, str):
        cols = [list(v) if not isinstance(v, str) else None for v in parties]
        if any(c is None for c in cols):
            raise PrivacyParameterError(
                "parties must be a list of column-name lists, e.g. [['x1', 'x2'], ['x3']]."
            )
        names = [f"party{k + 1}" for k in range(len(cols))]
    else:
        raise PrivacyParameterError("parties must be a list of column-name lists or a dict name -> columns.")
    if len(cols) < 2:
        raise DataError(f"parties must list at least 2 parties, got {len(cols)}.")
    seen: dict[str, str] = {}
    for name, cs in zip(names, cols):
        if not cs:
            raise DataError(f"party {name!r} holds no columns; give each party at least one column.")
        for c in cs:
            if not isinstance(c, str):
                raise PrivacyParameterError(f"party {name!r}: column names must be strings, got {c!r}.")
            if c in seen:
                raise DataError(
                    f"column {c!r} is held by both {seen[c]!r} and {name!r}: column sets "
                    "must not overlap. Give each column to exactly one party."
                )
            seen[c] = name
    return names, cols


def combine(data, columns: list[list[str]], names: list[str], row_id: str | None) -> pd.DataFrame:
    """One frame of every party's columns: ``data`` itself, or the parties' frames side by side,
    their rows matched by row id (checked by a hash of the ids, never the data)."""
    if isinstance(data, pd.DataFrame):
        missing = [(n, c) for n, cs in zip(names, columns) for c in cs if c not in data.columns]
        if missing:
            n, c = missing[0]
            raise DataError(f"party {n!r} lists column {c!r}, which is not in data.")
        return data
    if not isinstance(data, (list, tuple)):  # e.g. a dpstats.engines stream or a Dask frame
        raise DataError(
            f"data must be one DataFrame, a list of {len(columns)} DataFrames (one per party), "
            f"dpstats.engines.stream(...) or a Dask DataFrame; got {type(data).__name__}."
        )
    frames = list(data)
    if len(frames) != len(columns) or not all(isinstance(f, pd.DataFrame) for f in frames):
        raise DataError(f"data must be one DataFrame or a list of {len(columns)} DataFrames, one per party.")
    ids = [f[row_id].tolist() if row_id is not None else f.index.tolist() for f in frames]
    if row_id is not None and not all(row_id in f.columns for f in frames):
        raise DataError(f"row_id {row_id!r} must be a column of every party's data frame.")
    check_rows([row_id_hash(i) for i in ids], [len(i) for i in ids], names)
    parts = []
    for name, f, cs in zip(names, frames, columns):
        absent = [c for c in cs if c not in f.columns]
        if absent:
            raise DataError(f"party {name!r} lists column {absent[0]!r}, which is not in its data frame.")
        parts.append(f.reset_index(drop=True))
    return pd.concat(
        [parts[0]] + [p[[c for c in p.columns if c not in parts[0].columns]] for p in parts[1:]], axis=1
    )


def assign_terms(mf: ModelFrame, columns: list[list[str]], names: list[str]) -> np.ndarray:
    """Party index of each design column; errors for unowned or mixed terms."""
    holder = {c: k for k, cs in enumerate(columns) for c in cs}
    if mf.response in holder:
        raise DataError(
            f"the response {mf.response!r} is listed as a party's column; remove it: "
            "y is held by the first party and shared with all."
        )
    used = [v for v in mf.variables if v != mf.response]
    orphans = [v for v in used if v not in holder]
    if orphans:
        raise DataError(
            f"column {orphans[0]!r} is used by the formula but held by no party; add it "
            "to one party's column list or drop it from the formula."
        )
    owner = np.empty(mf.p, dtype=int)
    for j, (nm, term) in enumerate(zip(mf.names, mf.terms)):
        if nm == INTERCEPT:
            owner[j] = 0
            continue
        ks = {holder[v] for v in _IDENT.findall(term) if v in holder}
        ks |= {holder[term]} if term in holder else set()
        if len(ks) != 1:
            why = (
                "uses no party's column"
                if not ks
                else f"mixes columns of {', '.join(repr(names[k]) for k in sorted(ks))}"
            )
            raise DataError(f"term {term!r} {why}; a term must be computable by one party.")
        owner[j] = ks.pop()
    for k, name in enumerate(names):
        if not np.any(owner == k):
            raise DataError(f"party {name!r} holds no column of the model '{mf.formula}'.")
    return owner


def check_statistics_mode(options, parties, row_id: str | None, columns: Callable[[], set[str]]) -> None:
    """A fit from pooled sufficient statistics (streamed or Dask data): Gaussian, unpenalized, exact
    (non-DP) mode only, every party's columns among the data's ``columns()``."""
    if options.family != "gaussian" or options.penalty is not None or options.eps is not None:
        raise DataError(
            "streamed and Dask data are supported by vertical_glm only for family='gaussian' without penalty "
            f"and without eps (got family={options.family!r}, penalty={options.penalty!r}, eps={options.eps!r}): "
            "only that fit is a function of the sufficient statistics XᵀX, Xᵀy, yᵀy; the others exchange linear "
            "predictors row by row, so load each party's rows into a pandas DataFrame."
        )
    if row_id is not None:
        raise DataError(
            "row_id is for a list of per-party DataFrames; a stream or Dask frame already holds "
            "all parties' columns in one table. Drop row_id."
        )
    if options.se == "history":
        raise DataError(
            "se='history' needs the linear predictors exchanged during the sweeps, which the "
            "statistics mode does not simulate; use se='exact' (the default, equal to the pooled "
            "SEs), 'conditional', 'pooled' or 'none'."
        )
    available = columns()
    missing = [(n, c) for n, cs in zip(*parties) for c in cs if c not in available]
    if missing:
        raise DataError(f"party {missing[0][0]!r} lists column {missing[0][1]!r}, which is not in data.")


def response_fill(formula: Any, family: str) -> dict[str, float]:
    """A binomial response's public fill: 0, in the domain {0, 1} the family declares (no bounds needed).

    Examples
    --------
    >>> response_fill("y ~ .", "binomial"), response_fill("y ~ .", "gaussian")
    ({'y': 0.0}, {})
    """
    if family != "binomial" or not isinstance(formula, str) or formula.count("~") != 1:
        return {}
    lhs = formula.split("~")[0].strip().strip("`")
    return {lhs: 0.0} if lhs else {}
