"""dp_felp's options: one frozen record, checked once from the public call, and the checks of the frame.

:meth:`FELPOptions.check` runs the cheap checks of the arguments before anything is read
(λ and where it comes from, the ensemble's sizes, the variant, which ``strict=True``
refuses when it is the refuted paper variant).  The checks that need the model frame
(numeric features, the classes, ``select`` against d, the strict variant's subset sizes
against a public n) are the functions below, which the front door's frame calls.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DataError, PrivacyParameterError
from ...formula import ModelFrame, declares_levels
from ...schema import PublicN, Schema
from ...validation import check_eps, check_fraction, check_neighbouring, check_oc_trials, check_whole_in
from .._options import Options
from .sensitivity import DEFAULT_LAM, VARIANTS, check_paper_variant, default_select, n_estimators_for


@dataclass(frozen=True)
class FELPOptions(Options):
    """dp_felp's options, checked once (defaults: the signature of :func:`dpstats.dp_felp`).

    ``lam`` is the λ in force before any tuning (the fixed default, the user's value, or the
    first of ``lam_grid`` with ``lam_source="cv"``); ``select`` and ``clip_norm`` are as given
    (None: the defaults, :func:`.sensitivity.default_select` and
    :func:`.sensitivity.clip_norm`), and so is ``n_estimators`` (None: one learner per 20 rows
    read in the strict variant, 20 in the paper's; :func:`.sensitivity.n_estimators_for`).
    ``truth``, ``assume`` and ``oc_trials`` shape the result only.
    """

    PUBLIC_N = PublicN(
        "dp_felp",
        "its subsets split the n rows read into equal parts (and the paper variant's sensitivity "
        "2/(nλ) is a function of n), which is private only for a public n",
        dropped="the strict variant's sensitivity 2C/k reads no n and no check quotes it (the paper "
        "variant is refuted: warned, and refused under strict=True)",
    )
    RESPONSE = "factor"  # class labels: declared levels, a Categorical or booleans (dpstats.schema)

    formula: str
    eps: float
    lam: float
    lam_source: str
    lam_grid: Sequence[float]
    n_estimators: int | None
    sample_ratio: float
    select: int | None
    variant: str
    bounds: Any
    clip_norm: float | None
    n_neighbors: int
    tol: float
    max_iter: int
    truth: Sequence[str] | None
    assume: str | None
    oc_trials: int
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> FELPOptions:
        """Cheap checks of dp_felp's arguments, before the data is read (``assume`` already coerced).

        Refuses under ``strict=True`` eps = inf and the paper variant; warns of the latter otherwise.
        """
        eps = check_eps(given["eps"], allow_inf=True)
        check_neighbouring(given["neighbouring"], supported=("replace",))
        variant = given["variant"]
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise PrivacyParameterError(
                f"variant must be one of {list(VARIANTS)} (default 'strict'), got {variant!r}."
            )
        lam, lam_source = check_lam(given["lam"], given["lam_grid"])
        sizes = {name: check_int(given[name], name, 1) for name in ("n_neighbors", "max_iter")}
        k = given["n_estimators"]
        sizes["n_estimators"] = None if k is None else check_int(k, "n_estimators", 1)
        oc_trials = check_oc_trials(given["oc_trials"], given["assume"])
        sample_ratio = check_fraction(
            given["sample_ratio"], "sample_ratio", 0.0, 1.0, low_open=True, high_open=False
        )
        tol = check_eps(given["tol"], name="tol")
        clip_norm = given["clip_norm"]
        if clip_norm is not None:
            if variant != "strict":
                raise PrivacyParameterError("clip_norm is used only by variant='strict'.")
            clip_norm = check_eps(clip_norm, name="clip_norm")
        if math.isinf(eps) and given["strict"]:
            raise PrivacyParameterError("strict=True refuses eps = inf (not private); give a finite eps.")
        check_paper_variant(variant, given["strict"])  # refused under strict=True before anything is read
        return cls.from_given(
            given,
            eps=eps,
            lam=lam,
            lam_source=lam_source,
            oc_trials=oc_trials,
            sample_ratio=sample_ratio,
            tol=tol,
            clip_norm=clip_norm,
            **sizes,
        )


def check_lam(lam: Any, grid: Sequence[float]) -> tuple[float, str]:
    """(λ in force, its source): the fixed default, the user's λ, or the grid's first under ``"cv"``."""
    if lam is None:
        return DEFAULT_LAM, "fixed default"
    if isinstance(lam, str):
        if lam != "cv":
            raise PrivacyParameterError(f"lam must be a positive number or 'cv', got {lam!r}.")
        values = [check_eps(v, name="lam_grid values") for v in grid]
        if not values:
            raise PrivacyParameterError("lam_grid must hold at least one positive λ.")
        return values[0], "cv"
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (lam > 0) or not math.isfinite(lam):
        raise PrivacyParameterError(
            f"lam must be a positive finite number (the ridge parameter λ; default 1.0), got {lam!r}."
        )
    return float(lam), "user"


def check_int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise PrivacyParameterError(f"{name} must be a whole number >= {low}, got {value!r}.")
    return int(value)


# ---------------------------------------------------------------------- checks of the frame
def check_select(select: Any, d: int) -> int:
    """``select`` against the number of features d (public), or its default: 10% of d."""
    if select is None:
        return default_select(d)
    return check_whole_in(
        select, 1, d, f"select must be a whole number with 1 <= select <= d = {d}, got {select!r}."
    )


def check_features(mf: ModelFrame, formula: str) -> None:
    """Numeric features only, at least two of them (public: the formula and the dtypes)."""
    if mf.factor_levels:
        names = sorted(mf.factor_levels)
        raise DataError(
            f"dp_felp weights numeric features, but {names[:5]} in '{formula}' are not numeric. "
            "Convert them (ordered codes, e.g. df[c].cat.codes, or 0/1 indicators with "
            "pandas.get_dummies) or drop them from the formula."
        )
    if mf.p < 2:
        raise DataError(f"dp_felp needs at least 2 features; '{formula}' gives {mf.p}.")


def check_subsets(options: FELPOptions, mf: ModelFrame) -> None:
    """The strict variant's disjoint subsets need 2 rows each, checked only on a public n.

    The number of rows is public unless rows may be dropped: then no check is made, and a
    subset with fewer than 2 rows gets w = 0 by construction (:func:`.ensemble.ensemble`).
    """
    k = n_estimators_for(options.variant, options.n_estimators, mf.n + mf.n_dropped)
    if options.variant == "strict" and not mf.n_data_dependent and mf.n // k < 2:
        raise DataError(
            f"variant='strict' splits the rows into n_estimators = {k} disjoint "
            "subsets and needs at least 2 rows in each; lower n_estimators (to at most half the "
            "number of rows)."
        )


def check_classes(mf: ModelFrame, declared: bool) -> np.ndarray:
    """Class counts (diagnostics only); refuses a response FELP cannot use.

    With the response's levels declared (``levels=``, a categorical dtype, a boolean type,
    ``factor(y, levels = c(...))`` in the formula)
    the classes are public: only their number is checked (at least two).  A class that is
    rare or absent in the rows is handled by construction: a row with no nearest hit (the
    only row of its class in a subset) or no nearest miss (a subset holding one class) has
    no margin vector and is left out of its learner's objective, and a learner with no
    margin vector returns w = 0 (:func:`dpstats.methods.felp.learner.margins`,
    :func:`~dpstats.methods.felp.learner.solve_weights`); the strict variant's clipping to C
    bounds the sensitivity whatever the learners compute.  No error depends on a class count.

    With levels read from the rows (a named data-dependent step, refused under strict) the
    counts are checked as well.  The messages name the response column and the fix, never a
    class label or a count: both are read from the rows (docs/architecture.md, "Privacy
    conventions").
    """
    counts = np.bincount(np.asarray(mf.y), minlength=len(mf.classes))
    if declared:
        if len(mf.classes) < 2:
            raise DataError(
                f"the response '{mf.response}' has fewer than two declared classes; dp_felp needs at "
                "least two (nearest misses do not exist otherwise). Declare its levels, e.g. "
                f"levels={{'{mf.response}': [...]}}."
            )
        return counts
    present = counts > 0
    if present.sum() < 2:
        raise DataError(
            f"the response '{mf.response}' has fewer than two classes; dp_felp needs at least two "
            "classes (nearest misses do not exist otherwise). Check that the response column is the "
            "class label."
        )
    if (counts == 1).any():
        raise DataError(
            f"the response '{mf.response}' has a class with a single row, which has no nearest hit "
            "(is it a class label, not a numeric response?); drop such rows or merge rare classes "
            "before the analysis, or declare the response's levels (a rare class is then handled "
            "by construction)."
        )
    return counts


def name_read_classes(dd: Any, schema: Schema | None, data: Any, formula: str) -> None:
    """Name the step of reading a response's classes from the rows, before any row is read.

    A numeric response (one declared in ``bounds=``, or of a numeric dtype) has no declared classes:
    which values occur, hence the classes, their number and the errors about them, depend on the
    rows.  It is named (warned, refused under ``strict=True``); a text response without levels is
    named by the schema (its levels read from the rows).  Declared classes: ``levels=`` on a text
    column, a categorical or boolean dtype, or ``factor(y, levels = c(0, 1))`` in the formula; under
    ``strict=True`` the boolean type must be one a missing entry leaves as it is (:func:`declared_classes`).
    Under ``strict=True`` every undeclared response is refused by this one step, so that the refusal is
    the same whether one row's text (or a missing entry of a numpy boolean) made the column an object
    column or not (the response's type is dp_felp's own: it is not numeric by declaration,
    :mod:`dpstats.schema`).
    """
    response = formula.split("~", 1)[0].strip() if isinstance(formula, str) and "~" in formula else ""
    if not response or declared_classes(schema, data, response) or schema is None or not schema.private:
        return
    if not isinstance(data, pd.DataFrame) or response not in data.columns:
        return
    (var,) = schema.variables(data, [response])
    if var.kind == "numeric" or dd.strict:
        dd.add(
            f"the classes of the response '{response}' were read from the rows (no classes are declared: "
            "which values occur, hence the classes, depends on the data; they are not shown)",
            fix=f"declare them: write factor({response}, levels = c(...)) in the formula, or give the "
            "column a pandas.CategoricalDtype with fixed categories (or text with levels=; a logical "
            f"response: levels={{'{response}': [False, True]}} or the pandas nullable 'boolean' dtype)",
        )


def declared_classes(schema: Schema | None, data: Any, response: str) -> bool:
    """Whether the response's classes are declared (public), from the formula, the schema and the dtypes
    only: ``factor(y, levels = c(...))`` (or ``ordered``) as the response, ``levels=``, a categorical or
    boolean dtype.  Under ``strict=True`` (a private call) a numpy ``bool`` column declares nothing:
    one missing entry makes it an object column, so its neighbour's classes would be undeclared; the
    declared boolean is pandas' nullable ``"boolean"`` (an R logical), which a missing entry leaves a
    boolean, with the classes False and True."""
    if declares_levels(response):
        return True
    if schema is None or not isinstance(data, pd.DataFrame) or response not in data.columns:
        return False
    (var,) = schema.variables(data, [response])
    if var.kind == "logical" and schema.strict and schema.private:
        return isinstance(data[response].dtype, pd.BooleanDtype)
    return var.kind in ("factor", "ordered", "logical") and var.levels is not None
