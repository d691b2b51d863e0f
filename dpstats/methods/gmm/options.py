"""dp_gmm's options: one frozen record, checked once from the public call, resolved once n is read.

:meth:`GMMOptions.check` runs the cheap checks of the arguments before anything is read;
:func:`resolve` fills in what depends on the frame (k against a public n, the default
``min_weight`` and the number of groups of sample-and-aggregate).  Under add/remove-one-row,
or when the schema may drop rows, n is private: no check is made on it (a check would
release whether it passes); "at least 10 rows per component" is then a stated assumption
(:data:`ROWS_PER_COMPONENT`), and the release runs on whatever rows there are, none
included (:mod:`.pipeline`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...errors import AssumptionError, DataError, PrivacyParameterError
from ...schema import PublicN, Schema
from ...validation import (
    check_eps,
    check_fraction,
    check_gaussian_delta,
    check_neighbouring,
    check_oc_trials,
    columns_read,
)
from .._options import Options

METHODS = ("pca_cluster", "sample_aggregate")

#: the assumption stated when n is private (it is checked on the public n otherwise)
ROWS_PER_COMPONENT = (
    "at least 10 rows per component (k <= n/10) and, for sample_aggregate, at least 5·k·(d+1) rows "
    "per group: assumed, not checked, because the number of rows is private here (a check would "
    "release it); a violation is reported only in requested diagnostics (not private)"
)


@dataclass(frozen=True)
class GMMOptions(Options):
    """dp_gmm's options, checked once (defaults: the signature of :func:`dpstats.dp_gmm`).

    ``k``, ``min_weight`` and ``groups`` are as given until :func:`resolve` checks them
    against the frame.  ``truth``, ``assume`` and ``oc_trials`` shape the result only.
    """

    PUBLIC_N = PublicN(
        "dp_gmm",
        "the thresholds of its clipping radius (98% of n) and first clustering round take n as public",
        add_remove="n is then estimated privately; give groups= for sample_aggregate",
        dropped="n is then estimated privately, as under add/remove",
    )

    formula: str
    k: Any
    eps: float
    delta: float
    bounds: Any
    method: str
    groups: Any
    alpha: float
    refine: int
    min_weight: Any
    var_floor: float
    neighbouring: str
    truth: Any
    assume: str | None
    oc_trials: int
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> GMMOptions:
        """Cheap checks of dp_gmm's arguments, before the data is read (``assume`` already coerced)."""
        eps = check_eps(given["eps"])
        delta = check_gaussian_delta(
            given["delta"],
            "dp_gmm needs delta > 0: its steps add Gaussian noise and are accounted in zCDP. "
            "Give a small delta such as delta=1e-6 (much smaller than 1/n).",
        )
        neighbouring = check_neighbouring(given["neighbouring"])
        if given["method"] not in METHODS:
            raise PrivacyParameterError(f"method must be one of {list(METHODS)}, got {given['method']!r}.")
        alpha = check_fraction(given["alpha"], "alpha", 0.0, 1.0, low_open=True)
        refine, var_floor = given["refine"], given["var_floor"]
        if isinstance(refine, bool) or not isinstance(refine, numbers.Integral) or not 1 <= refine <= 10:
            raise PrivacyParameterError(
                f"refine must be a whole number of passes from 1 to 10, got {refine!r}."
            )
        if not (isinstance(var_floor, numbers.Real) and var_floor > 0 and math.isfinite(var_floor)):
            raise PrivacyParameterError(f"var_floor must be a positive number, got {var_floor!r}.")
        return cls.from_given(
            given,
            eps=eps,
            delta=delta,
            neighbouring=neighbouring,
            alpha=alpha,
            oc_trials=check_oc_trials(given["oc_trials"], given["assume"]),
        )


def check_columns(d: int, formula: str) -> None:
    """The formula's columns (public), before any charge: a mixture needs a variable."""
    if d == 0:
        raise DataError(
            f"the formula '{formula}' gives no columns to model; dp_gmm needs at least one "
            "numeric column, e.g. '~ .' or '~ x1 + x2'."
        )


def resolve(options: GMMOptions, mf: Any, public_n: int | None) -> GMMOptions:
    """``options`` with k, min_weight and groups checked for the frame ``mf`` (n rows, d columns).

    ``public_n`` is n when it is public, None when it is private: then nothing is checked
    against it.  When levels were read from the rows d is not public either: no text quotes it.
    """
    k = check_k(options.k, public_n)
    given = options.min_weight
    min_weight = check_fraction(1.0 / (20 * k) if given is None else given, "min_weight", 0.0, 1.0)
    d_public = not columns_read(mf)
    groups = check_groups(options.groups, options.method, mf.n, k, mf.p, public_n, d_public=d_public)
    return replace(options, k=k, min_weight=min_weight, groups=groups)


def check_k(k: Any, public_n: int | None) -> int:
    """1 <= k (public); k <= n/10 is checked only when n is public (``public_n``).

    When n is private (add/remove-one-row, or rows that may be dropped) a check of k
    against n would release whether n < 10k: "at least 10 rows per component" is then a
    declared assumption (stated in every such call's privacy statement, see
    :data:`ROWS_PER_COMPONENT`), a violation is reported only in requested diagnostics, and
    the method runs on whatever rows there are (a component with few rows gets a small
    noisy weight and may be flagged as collapsed from its released weight).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):  # the argument's type: a parameter error
        raise PrivacyParameterError(f"k must be a whole number of components with 1 <= k <= n/10, got {k!r}.")
    k = int(k)
    if k < 1 or (public_n is not None and k > public_n / 10):
        limit = f" = {public_n / 10:g}" if public_n is not None else ""
        raise DataError(
            f"k = {k} is out of range: dp_gmm needs 1 <= k <= n/10{limit} (at least "
            "10 rows per component). Choose a smaller k or use more rows."
        )
    return k


GROUPS_AFTER_LEVELS = (
    "sample_aggregate needs at least 10 groups of at least 5·k·(d+1) rows, and these rows and groups do not "
    "allow that (d, the number of design columns, depends on levels read from the rows, so it and the groups "
    "derived from it are not shown). Declare the levels (levels=), use method='pca_cluster' or more rows."
)


def default_groups(n: int, k: int, d: int) -> int:
    """m = n / (group size), group size max(200, 25·k·(d+1)) rows."""
    return n // max(200, 25 * k * (d + 1))


def check_groups(
    groups: Any, method: str, n: int, k: int, d: int, public_n: int | None, *, d_public: bool = True
) -> int | None:
    """The number of groups of sample-and-aggregate, checked against n only when n is public.

    When n is private the default (derived from n) is not available: ``groups=`` must be
    declared; only ``groups >= 10`` is checked, and the group size is an assumption
    (:data:`ROWS_PER_COMPONENT`); the method handles a small group by construction
    (:func:`dpstats.methods.gmm.pipeline.sample_aggregate`).  ``d_public`` False (levels read from
    the rows): neither d nor the default groups (derived from d) are quoted.
    """
    if method != "sample_aggregate":
        if groups is not None:
            raise PrivacyParameterError("groups= is only used with method='sample_aggregate'.")
        return None
    if groups is None and public_n is None:
        raise PrivacyParameterError(
            "sample_aggregate with a private number of rows (neighbouring='add_remove', or rows that "
            "may be dropped) needs groups= declared: its default is derived from n. Give groups= "
            "(at least 10, each group holding about 5·k·(d+1) rows or more), or use method='pca_cluster'."
        )
    m_groups = default_groups(n, k, d) if groups is None else groups
    if isinstance(m_groups, bool) or not isinstance(m_groups, numbers.Integral):
        raise PrivacyParameterError(f"groups must be a whole number, got {groups!r}.")
    m_groups = int(m_groups)
    if m_groups < 10 or (public_n is not None and public_n // m_groups < 5 * k * (d + 1)):
        if not d_public:
            raise AssumptionError(GROUPS_AFTER_LEVELS)
        shown = f"n = {public_n} with groups = {m_groups}" if public_n is not None else f"groups = {m_groups}"
        raise AssumptionError(
            f"sample_aggregate needs at least 10 groups of at least 5·k·(d+1) = {5 * k * (d + 1)} rows; "
            f"{shown} does not allow that. Use method='pca_cluster' or more rows."
        )
    return m_groups


def assumption_holds(options: GMMOptions, n: int, d: int) -> bool:
    """Whether the rows-per-component assumption holds on n rows (not private: diagnostics only)."""
    holds = n >= 10 * options.k
    if options.groups is not None:
        holds = holds and n // options.groups >= 5 * options.k * (d + 1)
    return bool(holds)


def refuse_infinite_eps(eps: Any) -> None:
    """dp_gmm has no eps = inf reference: the refusal names the non-private mixtures to use instead."""
    if isinstance(eps, numbers.Real) and math.isinf(eps) and eps > 0:
        raise PrivacyParameterError(
            "dp_gmm offers no non-private reference at eps = inf (dp_lm, dp_glm and dp_pca do): its private "
            "steps (the PCA projection, the clustering rounds, the per-component estimates) have no exact "
            "non-private counterpart here. For a non-private Gaussian mixture fit EM on data you hold: "
            "mclust::Mclust(data, G = k) in R, sklearn.mixture.GaussianMixture(k) in Python; for the "
            "private fit give a finite eps, e.g. 1. Nothing was read or spent."
        )
