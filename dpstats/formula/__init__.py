"""Model frames: formula + data -> response, design matrix, names (docs/architecture.md, "Layers": data).

R is the reference: for a formula and a data frame, the design's column names,
their order, its values and the rows dropped equal R's
``model.matrix(terms(mf), mf)`` with ``mf <- model.frame(formula, data)``
(tested through rpy2 on R's own data sets, ``tests/data/r_formulas.tsv``).

* Names: R's syntactic names (``Sepal.Length``, ``a.b``) and backticked names
  (`` `a b` ``, `` `1000_at` ``) anywhere; column names as R writes them (R keeps
  the backticks: `` `a b` ``).
* Operators: ``+ - : * / %in% ^`` (``**`` is ``^``, as R's parser reads it), ``.``,
  ``0``/``1``/``-1``, ``offset()``.
* Functions: ``I()``, arithmetic and comparisons, ``log(x, base =)`` and other
  maths, ``factor()``, ``as.numeric()``, ``as.integer()``, ``as.logical()``,
  ``relevel()``, ``factor(labels =)``, ``C(f, contr.sum)`` and the other base
  contrasts (also ``C(f, contr.treatment(3, base = 2))``, ``how.many``),
  ``poly(x, degree, raw =)`` and ``poly(x, z, degree =)``, ``splines::ns()``/``bs()``
  (``df =``, ``knots =``, ``Boundary.knots =``), ``scale()`` (n - 1), ``cut()``,
  ``pmin()``/``pmax()``, ``ifelse()``, ``interaction()``; keyword arguments are
  arguments. Anything else is a :class:`FormulaError` naming the function.
* Factors (categoricals, strings, logicals) are coded by R's rule (the contrasts
  in force: ``contrasts=``, ``data.attrs["contrasts"]`` and ``C()`` per variable,
  else ``default_contrasts`` — R's ``options(contrasts =)``, treatment and
  polynomial by default; indicators where a term's margin is absent).
* Missing values: without a schema, rows with a missing or non-finite value in a
  variable the formula uses are dropped (R's ``na.omit``); with ``schema=`` (what
  every front door passes) the schema's rule applies: declared levels (values
  outside them are missing), then ``na_action="fill"`` (public fills, no row
  dropped) or ``"omit"`` (:mod:`dpstats.schema`).  No message carries a count of
  rows dropped or values filled; ``ModelFrame.n_dropped`` and ``n_filled`` are
  non-private diagnostics.
* Privacy: terms whose values depend on the data as a whole (``scale()``,
  orthogonal ``poly()``, splines with knots at data quantiles, ``cut(x, breaks = 3)``,
  ``mean()``...)
  are listed in ``ModelFrame.data_dependent_terms``; the front doors name them
  in the privacy statement, warn, and refuse them under ``strict=True``.  A private
  frame (a schema with ``private=True``) records each step as it is taken, so that an
  error raised while the step reads the rows comes after it; it names by position
  (``level1``, ...) the levels whose labels are values read from the rows
  (``cut(x, breaks = 3)``, ``factor(x)`` of numbers); and it clips the variables a
  per-variable bounds mapping declares before any function reads them.

Formulas whose right-hand side is only ``.``, numeric column names, removals
and intercept terms are built directly, column by column, which is what makes
``y ~ .`` on 22 283 columns take milliseconds.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, DataWarning, FormulaError, caller_stacklevel, close_names
from ..schema import Schema
from ..temporal import read_columns
from ._design import (
    DEFAULT_CONTRASTS,
    INTERCEPT,
    column_parts,
    design,
    factor_column_ranges,
    product_parts,
    response_part,
    subset,
)

from ._eval import (
    Chr,
    Context,
    Fac,
    Num,
    as_factor,
    column_value,
    contrast_spec,
    drop_unused_levels,
    level_label,
    level_steps_taken,
    positional_levels,
    referenced_columns,
    took,
)
from ._parse import Node, call_name, deparse, names_in, parse, r_names
from ._terms import build_terms

__all__ = [
    "model_frame",
    "ModelFrame",
    "finish_checks",
    "constant_columns",
    "refuse_offset",
    "names_offset",
    "dummy_columns",
    "interaction_parts",
    "chunk_unsafe_terms",
    "INTERCEPT",
    # used by the chunked engines (dpstats.engines) to lay out columns before reading rows
    "split_formula",
    "simple_rhs_tokens",
    "rhs_variables",
    "expression_variables",
    "is_factor_dtype",
    "raise_constant",
    "factor_columns",
    "missing_counts",
    "columns_read",
    "declares_levels",
    "inline_levels",
    "with_formula_declarations",
    "term_parts",
    "term_labels",
    "factor_terms",
    "text_comparisons",
    "removed_variables",
    "level_steps_taken",
]

_SIMPLE_TOKEN = re.compile(r"^(\.|0|1|(?:[^\W\d_]|\.(?![0-9]))[\w.]*|`[^`]+`)$")


@dataclass
class ModelFrame:
    """A built model: response, design matrix and what describes them.

    Attributes
    ----------
    X : ndarray of shape (n, p)
        Design matrix, float64.
    names : list of str
        Column names as R's ``model.matrix`` gives them.
    terms : list of str
        Term labels (``"x"``, ``"a"``, ``"a:b"``), one per column (the term
        each column belongs to).
    y : ndarray of shape (n,) or None
        Response (float, or integer class codes for ``response="factor"``).
    classes : list or None
        Class labels when the response is a factor.
    n_dropped : int
        Rows dropped for missing or non-finite values (not a private count).
    n_filled : int
        Values replaced by their public fill under ``na_action="fill"`` (not private).
    schema_steps : list of (str, str)
        Data-dependent steps of the schema (levels read from the rows, rows dropped),
        named from the arguments and dtypes only (step, how to avoid it).
    schema_rule : str
        The schema's rule for missing values, for the privacy statement.
    n_data_dependent : bool
        The schema's rule may drop rows (``na_action="omit"`` under replace-one-row,
        or variables without declared bounds): the n analysed is then not shown.
    offset : ndarray of shape (n,) or None
        Sum of the formula's ``offset()`` terms (not part of the design, as in R).
    offset_terms : dict of str to ndarray
        Each ``offset()`` term by its label (``"offset(log(n))"``), summing to ``offset``.
    data_dependent_terms : list of (str, str)
        Terms whose values depend on the data as a whole (step, how to avoid it).
    step_calls : dict of str to (str, str)
        The same steps by the call that makes each, as the formula writes it (``"poly(wt, 2)"``).
    predvars : dict of str to tuple
        R's ``predvars``: the parameters each data-dependent basis call took from the rows
        (orthogonal ``poly()``'s recurrence coefficients, a spline's knots and boundary knots,
        ``scale()``'s centre and scale), by the call.  Computed from the rows, never released: a
        non-private fit keeps them so that ``predict()`` evaluates newdata on the fit's basis, as R does.
    factor_column_ranges : dict of str to (float, float)
        The public range of each design column made of factors alone, from its contrasts (not
        from the rows): (0, 1) for a treatment dummy, (-1, 1) for ``contr.sum``, the matrix's
        entries for polynomial, Helmert or declared contrasts. A front door that bounds factor
        columns must take these, not (0, 1), or it clips a contrast's -1 to 0.
    interaction_parts : dict of str to tuple
        The parts of each design column of an interaction with a numeric variable (the column is their
        elementwise product, as in R's ``model.matrix``): a numeric column's name, whose bound is
        declared, or a factor coding's range (public, as above). Its bound, when not declared, is the
        product of the parts' intervals (:func:`dpstats.geometry.resolve_box`).  A column that is a public
        function of one variable (``log(wt)``) has that function as its one part, and so has the
        response when it is one (``log(mpg) ~ wt``: its bound follows from mpg's, as a predictor's).
    levels_read : bool
        A private call read some factor's levels from the rows (a named step): the design's names
        then hold data-derived levels, and a message names the columns' terms instead.
    contrasts : dict
        The declared contrasts (``contrasts=``, ``data.attrs["contrasts"]``) that a variable of the
        formula matched, by the names given (``"factor(cyl)"``); ``predict`` codes newdata with them.
    default_contrasts : pair of str
        R's ``options(contrasts =)`` in force for the fit.
    ordered_factors : list of str
        The labels of the design's ordered factors (coded by the ordered contrasts); ``predict`` codes
        newdata's as the fit's, whatever newdata's type (``model_frame(xordered=)``).
    """

    formula: str
    X: np.ndarray
    names: list[str]
    terms: list[str]
    y: np.ndarray | None
    response: str | None
    intercept: bool
    n_dropped: int
    variables: list[str]
    classes: list | None = None
    factor_levels: dict[str, list] = field(default_factory=dict)
    checked: bool = True
    offset: np.ndarray | None = None
    offset_terms: dict[str, np.ndarray] = field(default_factory=dict)
    data_dependent_terms: list[tuple[str, str]] = field(default_factory=list)
    step_calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    predvars: dict[str, tuple] = field(default_factory=dict)
    n_filled: int = 0
    schema_steps: list[tuple[str, str]] = field(default_factory=list)
    schema_rule: str = ""
    n_data_dependent: bool = False
    factor_column_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    interaction_parts: dict[str, tuple] = field(default_factory=dict)
    levels_read: bool = False  # a private call's factor levels were read from the rows: names hold them
    contrasts: dict = field(default_factory=dict)
    default_contrasts: tuple[str, str] = DEFAULT_CONTRASTS
    ordered_factors: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]


def columns_read(mf) -> bool:
    """Whether a private call read some factor's levels from the rows (a named step): the design's columns,
    and so their number, then depend on the data, and no message may quote that number."""
    return bool(getattr(mf, "levels_read", False) or getattr(mf, "engine_steps", ()))


#: What a text says, after naming the count, when :func:`columns_read` holds: the number of design columns,
#: and any count that follows from it (d, m, k's range), is not quoted; e.g. ``f"d {LEVELS_READ_NOT_SHOWN}"``.
LEVELS_READ_NOT_SHOWN = (
    "depends on levels read from the rows, so it is not shown; declare the levels with levels="
)


def missing_counts(frame) -> dict[str, int]:
    """The first two non-private diagnostics of every front door: the rows a frame dropped for
    missing values and the values it filled (a :class:`ModelFrame`, or any frame with ``n_dropped``
    and ``n_filled``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> missing_counts(SimpleNamespace(n_dropped=1, n_filled=0))
    {'rows_dropped_for_missing_values': 1, 'values_filled_for_missing': 0}
    """
    return {"rows_dropped_for_missing_values": frame.n_dropped, "values_filled_for_missing": frame.n_filled}


def model_frame(
    formula: str,
    data: pd.DataFrame | dict,
    *,
    drop_intercept: bool = False,
    one_sided: bool = False,
    response: str = "numeric",
    min_rows: int = 2,
    check_constant: bool = False,
    defer_checks: bool = False,
    schema: Schema | None = None,
    contrasts: dict | None = None,
    default_contrasts: tuple[str, str] | list[str] | None = None,
    predvars: dict[str, tuple] | None = None,
    xlevels: dict[str, list[str]] | None = None,
    xordered: Collection[str] | None = None,
    drop_unused_levels: bool | None = None,
) -> ModelFrame:
    """Build the response and design matrix of ``formula`` on ``data``, as R does.

    Parameters
    ----------
    formula : str
        R formula, e.g. ``"y ~ ."``, ``"y ~ a * b - 1"``, ``"~ x1 + x2"``,
        ``"Sepal.Length ~ poly(Petal.Length, 2) + Species"``.
    data : pandas.DataFrame or dict of columns
    drop_intercept : bool
        Remove the ``(Intercept)`` column after coding (selection methods).
        Factor coding is the one R uses *with* an intercept.
    one_sided : bool
        The formula must have no response (``"~ ."``).
    response : {"numeric", "factor"}
        How to read the response: as floats, or as class labels.
    min_rows : int
        Fewer complete rows than this is a :class:`DataError`.
    check_constant : bool
        A constant predictor column is a :class:`DataError` (off by default:
        whether a column is constant is read from the rows, so a DP analysis
        must not refuse on it; a DP release of a constant column is fine).
    defer_checks : bool
        For designs of plain numeric columns only: skip the scan for
        non-finite values and return ``checked=False``
        with X a view of the data where possible; the caller finishes the
        checks from one fused statistics pass (:func:`finish_checks`).
    schema : dpstats.Schema, optional
        The declared public schema and its rule for missing values
        (:mod:`dpstats.schema`).  Without it: levels as the data give them and
        incomplete rows dropped (R's defaults).
    contrasts : dict, optional
        R's ``lm(..., contrasts = list(g = "contr.sum"))``: how to code a factor, by its
        name in the formula (``"g"``, ``"factor(cyl)"``): a contrast's name (``"contr.sum"``
        or ``"sum"``, applied to the factor's levels) or a matrix, one row per level (a
        DataFrame indexed by the levels, its columns naming the design's columns; any 2-D
        array: columns numbered). It overrides ``C()`` and the default, as in R.
        ``data.attrs["contrasts"]`` is read the same way (how the R package sends the
        ``contrasts(f) <- ...`` set on a data frame's factors, so that every front door honours
        them); this argument wins over it.
    default_contrasts : pair of str, optional
        R's ``options(contrasts = c(unordered, ordered))``, e.g. ``("contr.sum", "contr.poly")``;
        ``data.attrs["default_contrasts"]`` otherwise; R's default ``("contr.treatment",
        "contr.poly")`` without either. Contrasts are public choices: no data-dependent step.
    predvars : dict, optional
        A fit's :attr:`ModelFrame.predvars`: its data-dependent basis calls are evaluated with the
        fit's parameters (R's ``predict()`` on newdata) instead of parameters from these rows, and are
        then no data-dependent step of this frame.
    xlevels : dict, optional
        R's ``model.frame(xlev =)``, for ``predict()``'s newdata: a fit's factor levels by variable
        label (``"g"``, ``"factor(cyl)"``, ``"C(cyl, contr.sum)"``; ``ModelFrame.factor_levels``). Each
        such variable is coded with those levels whichever of them newdata's rows hold; a level the fit
        does not know is a :class:`DataError` naming the variable and the level.
    xordered : collection of str, optional
        With ``xlevels``: the variables that were ordered factors in the fit
        (``ModelFrame.ordered_factors``), so that newdata's are coded as the fit's whatever their
        type (R's predict uses the fit's contrasts); None: as newdata has them.
    drop_unused_levels : bool, optional
        R's ``model.frame(drop.unused.levels =)`` for the factors the formula makes
        (``factor(x, levels = c(...))``, ``cut()``, ``C()``...; not the response): a level no analysed
        row holds has no column, and a factor that loses one loses the contrasts ``C()`` set, with R's
        warning.  A data column's factor keeps its levels, and so does a variable of a column whose
        levels the schema declares (``levels=``).  None (the default): True for a fit's frame in a
        non-private run (a schema with ``private=False``, eps = inf), as lm and glm build theirs;
        False otherwise: a private run's declared levels are public, so its columns never depend on
        the rows (and a chunk's frame must have the columns of every other chunk).

    Returns
    -------
    ModelFrame

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1., 2, 3, 4], "x.1": [0., 1, 0, 2],
    ...                    "g": ["a", "b", "c", "a"]})
    >>> model_frame("y ~ .", df).names
    ['(Intercept)', 'x.1', 'gb', 'gc']
    >>> model_frame("y ~ x.1 * g", df).names[-2:]
    ['x.1:gb', 'x.1:gc']

    With a declared schema the levels are the declared ones (a value outside them is
    missing, then filled by the first level) and a missing value gets its public fill:

    >>> from dpstats.schema import Schema
    >>> s = Schema.declare(bounds=(0, 4), levels={"g": ["c", "a", "z"]})
    >>> mf = model_frame("y ~ x.1 + g", df.assign(y=[1., None, 3, 4]), schema=s, check_constant=False)
    >>> mf.names, mf.y.tolist(), mf.n_filled
    (['(Intercept)', 'x.1', 'ga', 'gz'], [1.0, 2.0, 3.0, 4.0], 2)
    """
    coding = _coding(data, contrasts, default_contrasts)
    data = _as_frame(data)
    if schema is not None:
        data = schema.read_numeric(data)  # numeric by declaration, whatever the dtype (dpstats.schema)
    lhs, rhs = split_formula(formula, one_sided)
    rhs_tokens = simple_rhs_tokens(rhs)
    if rhs_tokens is not None and (not lhs or lhs in data.columns):
        used = _direct_variables(rhs_tokens, data, lhs, formula)
        factors = set(xlevels or ()) | set(schema.levels if schema is not None else ())
        if not any(_factor_flags(data, used).values()) and not factors.intersection(used):
            _refuse_numeric_contrasts(coding, used)
            if defer_checks and _deferrable(rhs_tokens, response) and not (lhs and _is_factor(data[lhs])):
                mf = _deferred_frame(formula, data, rhs_tokens, lhs, used, drop_intercept, min_rows, schema)
            else:
                mf = _direct_frame(
                    formula,
                    data,
                    rhs_tokens,
                    lhs,
                    used,
                    drop_intercept,
                    response,
                    min_rows,
                    check_constant,
                    schema,
                )
            return _with_schema(mf, schema, data, ([lhs] if lhs else []) + used)
    n_filled, used = 0, []
    if schema is not None:
        used = formula_variables(formula, data, one_sided)
        data, n_filled = schema.apply(data, used)
        data = _clipped_to_bounds(data, used, schema)
    if drop_unused_levels is None:
        drop_unused_levels = schema is not None and not schema.private and not xlevels
    mf = _general_frame(
        formula,
        data,
        one_sided,
        drop_intercept,
        response,
        min_rows,
        check_constant,
        schema,
        coding,
        predvars,
        (xlevels, xordered),
        drop_unused_levels,
    )
    mf.default_contrasts = coding.default
    mf.n_filled += n_filled
    return _with_schema(mf, schema, data, used)


@dataclass
class _Coding:
    """How factors are coded: declared contrasts by variable label, and R's default option."""

    declared: dict[str, tuple] = field(default_factory=dict)
    explicit: set[str] = field(default_factory=set)  # given as contrasts= (R warns if absent)
    default: tuple[str, str] = DEFAULT_CONTRASTS
    given: dict = field(default_factory=dict)  # as the caller gave them (for ModelFrame.contrasts)


def _coding(data, contrasts, default_contrasts) -> _Coding:
    """The contrasts in force, from the arguments and the data's attrs (read before attrs are dropped)."""
    attrs = getattr(data, "attrs", None) or {}
    default = default_contrasts if default_contrasts is not None else attrs.get("default_contrasts")
    if default is None:
        default = DEFAULT_CONTRASTS
    else:
        if isinstance(default, str) or len(list(default)) != 2:
            raise FormulaError(
                "default_contrasts (R's options(contrasts =)) must be two names, for unordered and ordered "
                'factors, e.g. c("contr.treatment", "contr.poly").'
            )
        default = tuple(contrast_spec(str(d), "options(contrasts =)")[1] for d in list(default))
    declared, given = {}, {}
    for source in (attrs.get("contrasts") or {}, contrasts or {}):
        if not isinstance(source, dict):
            raise FormulaError(
                'contrasts must be a named list (a dict) such as list(g = "contr.sum"), by variable name.'
            )
        for name, spec in source.items():
            declared[_label_key(str(name))] = contrast_spec(spec, f"contrasts for '{name}'")
            given[str(name)] = spec
    return _Coding(declared, {_label_key(str(k)) for k in (contrasts or {})}, default, given)


def _label_key(name: str) -> str:
    """A variable's label as R deparses it (a column ``a b`` is `` `a b` ``)."""
    try:
        return deparse(parse(name))
    except FormulaError:
        return r_names([name])[0]


def _refuse_numeric_contrasts(coding: _Coding, used: list[str]) -> None:
    for name in r_names(used):
        if name in coding.explicit:
            raise FormulaError(
                f"contrasts are given for '{name}', which is numeric: contrasts apply only to factors (as in R). "
                f"Use factor({name}) in the formula and name the contrasts for 'factor({name})'."
            )


def _with_schema(mf: ModelFrame, schema: Schema | None, data: pd.DataFrame, used: list[str]) -> ModelFrame:
    """The schema's named steps and statement notes on the frame (from arguments and dtypes only)."""
    if schema is not None:
        # bounds={"log(y)": ...} names the response
        design = mf.names + ([mf.response] if mf.response else [])
        schema.check_bound_names(data.columns, design, list(mf.factor_levels), declares_levels)
        dropping = schema.missing_steps(data, used)
        levels_read = took(_levels_read_steps(schema, data, used, mf.schema_steps))
        mf.schema_steps = levels_read + dropping
        mf.levels_read = bool(levels_read)
        mf.n_data_dependent = bool(dropping)
        mf.schema_rule = schema.rule_for(data, used)
    return mf


def _levels_read_steps(
    schema: Schema | None, data: pd.DataFrame, used: list[str], formula_steps: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """A private call's steps of reading factor levels from the rows: the schema's (undeclared columns,
    from the dtypes) and the formula's (``factor()`` without ``levels=``); none without a private schema."""
    if schema is None or not schema.private:
        return []
    return schema.level_steps(data, used) + list(formula_steps)


def level_fills(formula: str) -> dict[str, float]:
    """Public fills of the variables a formula uses only as ``factor(x, levels = c(...))`` (or
    ``ordered``) with numbers as levels: the first declared level, the schema's fill of a factor.

    From the formula's text alone, so a missing value of such a variable is filled (under
    ``na_action="fill"``) rather than its row dropped, a data-dependent step.

    Examples
    --------
    >>> level_fills("mpg ~ wt + factor(cyl, levels = c(4, 6, 8)) + factor(gear)")
    {'cyl': 4.0}
    >>> level_fills("mpg ~ factor(cyl, levels = c(4, 6, 8)) + cyl")  # cyl is also numeric here
    {}
    """

    def claim(node: Node) -> tuple[str, Any] | None:
        levels = _levels_arg(node)
        x = [a for name, a in node.args if name in (None, "x")][:1] if levels is not None else []
        return (x[0].value, _first_number(levels)) if x and x[0].kind == "name" else None

    return {
        name: values[0]
        for name, values in _only_within(formula, claim).items()
        if values[0] is not None and len(set(values)) == 1
    }


def inline_levels(formula: str) -> dict[str, tuple[str, ...]]:
    """The levels a formula declares for the variables it uses only as ``factor(x, levels = c(...))`` (or
    ``ordered``) with text levels, each variable with one list of distinct levels: declared as
    ``levels={"x": [...]}`` declares them.  Numeric levels are :func:`level_fills`' (the variable stays
    numeric).  From the formula's text alone.

    Examples
    --------
    >>> inline_levels("y ~ x + factor(g, levels = c('a', 'b')) + factor(cyl, levels = c(4, 6))")
    {'g': ('a', 'b')}
    >>> inline_levels("y ~ factor(g, levels = c('a', 'b')) + g")  # g is also used as it is
    {}
    """

    def claim(node: Node) -> tuple[str, Any] | None:
        levels = _levels_arg(node)
        x = [a for name, a in node.args if name in (None, "x")][:1] if levels is not None else []
        labels = _literal_labels(levels) if x and x[0].kind == "name" else None
        return (x[0].value, tuple(labels)) if labels and len(set(labels)) == len(labels) else None

    numeric = level_fills(formula)
    return {
        name: values[0]
        for name, values in _only_within(formula, claim).items()
        if name not in numeric and len(set(values)) == 1
    }


def with_formula_declarations(schema: Schema, formula: str, response: str = "numeric") -> Schema:
    """``schema`` with what the formula's text declares: the first level of ``factor(x, levels = c(4, 6))``
    as the fill of a numeric ``x`` (:func:`level_fills`), the text levels of ``factor(g, levels = c("a",
    "b"))`` as ``levels=`` declares them (:func:`inline_levels`; ``levels=`` itself wins), and under
    ``na_action="fill"`` a fill of 0 for a variable the formula removes (``y ~ . - yb``: never used).
    Variables with declared bounds keep them.  It records the names the formula reads (for the types
    ``strict=True`` declares, :meth:`Schema.strict_numeric`) and, where the method reads its response as
    a factor (``response="factor"``, dp_felp's class labels), the response's, whose type stays its own;
    a binomial family's (``"binary"``, or ``"binary numbers"`` where only numbers serve) must be declared
    under ``strict`` (:meth:`Schema.refuse_undeclared_binary`).

    Examples
    --------
    >>> s = with_formula_declarations(Schema.declare(), "y ~ factor(g, levels = c('b', 'a'))")
    >>> dict(s.levels), sorted(s.formula_levels)
    ({'g': ('b', 'a')}, ['g'])
    """
    inline = level_fills(formula)
    fills = {name: fill for name, fill in inline.items() if schema.numeric_bounds(name) is None}
    if schema.private and schema.na_action == "fill":  # y ~ . - yb: yb is in no term, its value never used
        fills |= {name: 0.0 for name in removed_variables(formula) if schema.numeric_bounds(name) is None}
    text = {
        name: levels
        for name, levels in inline_levels(formula).items()
        if name not in schema.levels and schema.numeric_bounds(name) is None
    }
    lhs, names = _read_names(formula)
    return replace(
        schema,
        fills={**fills, **schema.fills},
        formula_numeric=frozenset(inline),
        levels={**schema.levels, **text},
        formula_levels=frozenset(text),
        formula_names=names,
        factor_response=lhs if response == "factor" else frozenset(),
        binary_response=_plain_response(formula) if response.startswith("binary") else frozenset(),
        binary_numbers=response == "binary numbers",
    )


def _plain_response(formula: str) -> frozenset[str]:
    """The response when it is a column's name as written (``yb``, `` `y b` ``), not an expression."""
    try:
        node = (
            parse(_raw_lhs(formula))
            if isinstance(formula, str) and "~" in formula and _raw_lhs(formula)
            else None
        )
    except FormulaError:
        return frozenset()
    return frozenset({node.value}) if node is not None and node.kind == "name" else frozenset()


def _read_names(formula: str) -> tuple[frozenset[str], frozenset[str] | None]:
    """The names the response and the whole formula read ("." for every column), from its text alone
    (:attr:`Schema.formula_names`); a formula that does not parse gives None: every column (its door
    refuses it in its own words)."""
    try:
        lhs_text = _raw_lhs(formula)
        lhs = parse(lhs_text) if lhs_text else None
        rhs = parse(formula.split("~", 1)[1])
    except (FormulaError, AttributeError, IndexError, TypeError, ValueError):
        return frozenset(), None
    response = frozenset(referenced_columns(lhs, None)) if lhs is not None else frozenset()
    return response, response | frozenset(referenced_columns(rhs, None))


def outside_declared_levels(formula: str, data: pd.DataFrame) -> np.ndarray:
    """Rows of ``data`` whose value of a column ``x`` in ``factor(x, levels = c(...))`` (or ``ordered``)
    is not among the declared levels: R's factor() makes it NA there, so ``predict()`` gives NA for the
    row (R's na.pass).  A missing value is not counted here (it is incomplete already); a formula that
    does not parse marks no row.

    Examples
    --------
    >>> d = pd.DataFrame({"g": ["a", "zz", None], "c": [4, 6, 5]})
    >>> outside_declared_levels("~ factor(g, levels = c('a', 'b'))", d).tolist()
    [False, True, False]
    >>> outside_declared_levels("~ g + factor(c, levels = c(4, 6))", d).tolist()
    [False, False, True]
    """
    try:
        tree = parse(formula)
    except FormulaError:
        return np.zeros(len(data), bool)
    out = np.zeros(len(data), bool)

    def walk(node: Node) -> None:
        nonlocal out
        levels = _levels_arg(node)
        x = [a for name, a in node.args if name in (None, "x")][:1] if levels is not None else []
        labels = _literal_labels(levels) if x and x[0].kind == "name" and x[0].value in data.columns else None
        if labels is not None:
            f = as_factor(column_value(data[x[0].value]), x[0].value)
            known = np.isin(np.asarray(f.levels + [""], dtype=object), labels)[f.codes]
            out |= (f.codes >= 0) & ~known
        for a in node.args:
            walk(a[1] if isinstance(a, tuple) else a)

    walk(tree)
    return out


def _literal_labels(node: Node | None) -> list[str] | None:
    """A literal ``c(...)`` of numbers or strings (or one of them) as R's level labels, else None."""
    if node is None:
        return None
    parts = [a for _, a in node.args] if call_name(node) == "c" else [node]
    labels = []
    for part in parts:
        sign = ""
        if part.kind == "unary" and part.value == "-":
            sign, part = "-", part.args[0]
        if part.kind not in ("num", "str") or (sign and part.kind == "str"):
            return None
        value = float(part.value) if part.kind == "num" else part.value
        labels.append(level_label(-value if sign else value))
    return labels


def declares_levels(expression: str) -> bool:
    """Whether ``expression`` is ``factor(x, levels = ...)`` or ``ordered(x, levels = ...)``: a factor whose
    levels the formula declares, public as ``levels=`` is (values outside them are missing, as in R).

    From the text alone, never the rows.

    Examples
    --------
    >>> declares_levels("factor(cls, levels = c(0, 1))"), declares_levels("ordered(g, c(3, 4, 5))")
    (True, True)
    >>> declares_levels("factor(cls)"), declares_levels("cls")
    (False, False)
    """
    try:
        return _levels_arg(parse(expression)) is not None
    except FormulaError:
        return False


def term_labels(formula: str) -> list[str]:
    """R's ``attr(terms(formula), "term.labels")`` of a formula without ``.``, from its text alone: an
    interaction's label lists its variables in their order of first appearance in the formula.

    Examples
    --------
    >>> term_labels("y ~ b:a + a"), term_labels("y ~ a + b:a")
    (['a', 'b:a'], ['a', 'a:b'])
    """
    lhs_text = _raw_lhs(formula)
    t = build_terms(formula, parse(lhs_text) if lhs_text else None, parse(formula.split("~", 1)[1]), [])
    return [t.label(term) for term in t.terms]


def term_parts(label: str) -> list[str]:
    """The variables of a term label, as R's ``terms`` labels them (``"wt:factor(cyl)"`` -> ``["wt",
    "factor(cyl)"]``); a ``:`` inside a call is not a split.

    Examples
    --------
    >>> term_parts("wt:factor(g, levels = c(1:3))"), term_parts("x")
    (['wt', 'factor(g, levels = c(1:3))'], ['x'])
    """
    parts: list[Node] = []
    todo = [parse(label)]
    while todo:
        node = todo.pop()
        if node.kind == "binary" and node.value == ":":
            todo += [node.args[1], node.args[0]]
        else:
            parts.append(node)
    return [deparse(node) for node in parts]


def _levels_arg(node: Node) -> Node | None:
    """The levels argument of a ``factor()`` or ``ordered()`` call (by name, or R's second positional
    argument), else None."""
    if call_name(node) not in ("factor", "ordered"):
        return None
    named = [a for name, a in node.args if name == "levels"]
    positional = [a for name, a in node.args if name is None][1:2]
    return (named or positional or [None])[0]


def removed_variables(formula: str) -> list[str]:
    """The variables a formula names only in removed terms (``y ~ . - yb``): in no term of the model,
    not the response and in no offset.  From the formula's text alone (``.`` can only add, as a term of
    its own, a variable the text names; a name the text does not hold is never removed).

    R's model frame keeps them (``na.omit`` drops a row missing one); they take no part in the design.

    Examples
    --------
    >>> removed_variables("y ~ . - yb - log(z) + z:w")
    ['yb']
    >>> removed_variables("y ~ x + yb - yb")
    ['yb']
    """
    try:
        lhs_text = _raw_lhs(formula) if isinstance(formula, str) else None
        lhs = parse(lhs_text) if lhs_text else None
        rhs = parse(formula.split("~", 1)[1])
    except (FormulaError, AttributeError, IndexError):
        return []  # the door refuses the formula itself
    removed = _removed_names(rhs)
    if not removed:
        return []
    lhs_names = set(names_in(lhs)) if lhs is not None else set()
    named = list(dict.fromkeys(n for n in names_in(rhs) if n != "." and n not in lhs_names))
    try:
        t = build_terms(formula, lhs, rhs, named)
    except FormulaError:
        return []
    kept_at = {i for term in t.terms for i in term} | set(t.offsets)
    kept_at |= {t.response} if t.response is not None else set()
    kept = {c for i in kept_at for c in referenced_columns(t.variables[i], named)} | lhs_names
    return [n for n in named if n in removed and n not in kept]


def _removed_names(node: Node, removing: bool = False) -> set[str]:
    """Names under a '-' of a formula's right-hand side (what it removes)."""
    if node.kind == "name":
        return {node.value} if removing else set()
    if node.kind == "binary" and node.value == "-":
        return _removed_names(node.args[0], removing) | _removed_names(node.args[1], not removing)
    if node.kind == "unary" and node.value == "-":
        return _removed_names(node.args[0], not removing)
    if node.kind == "call":
        return {n for _, a in node.args for n in _removed_names(a, removing)}
    return {n for a in node.args for n in _removed_names(a, removing)}


_FACTOR_CALLS = ("factor", "as.factor", "ordered", "as.ordered", "C")


def factor_terms(formula: str) -> dict[str, str]:
    """The variables a formula uses only as what a call makes a factor of (``factor(x)``,
    ``as.factor(x)``, ``ordered(x)``, ``C(x, ...)``; not with ``levels =`` given inline, which
    :func:`level_fills` declares), each with the first such term: from the formula's text alone.

    Their declared levels (``levels=``) are what such a variable needs, not bounds.

    Examples
    --------
    >>> factor_terms("mpg ~ wt + C(cyl, contr.sum) + factor(gear) + gear + factor(am, levels = c(0, 1))")
    {'cyl': 'C(cyl, contr.sum)'}
    """

    def claim(node: Node) -> tuple[str, str] | None:
        if call_name(node) not in _FACTOR_CALLS:
            return None
        x = [a for name, a in node.args if name in (None, "x", "object")][:1]
        inline = any(name == "levels" for name, _ in node.args) or (
            call_name(node) != "C" and len([a for name, a in node.args if name is None]) > 1
        )
        return (x[0].value, deparse(node)) if x and x[0].kind == "name" and not inline else None

    return {name: terms[0] for name, terms in _only_within(formula, claim).items()}


_FORMULA_OPERATORS = {"~", "+", "-", "*", "/", ":", "^", "%in%"}
_COMPARISONS = {"==", "!=", "<", ">", "<=", ">=", "%in%"}


def text_comparisons(formula: Any) -> list[tuple[str, str]]:
    """The variables a formula compares with text (``I(city == "York")``, ``city %in% c("a", "b")``
    inside a term), each with the term that compares it: from the formula's text alone.  Under
    ``strict=True`` such a variable without declared levels is numeric by declaration, and the
    comparison the same in every row (:meth:`dpstats.schema.Schema.refuse_undeclared`).

    Examples
    --------
    >>> text_comparisons("y ~ x + I(city == 'York') + ifelse(g %in% c('a', 'b'), 1, 0) + I(x > 2)")
    [('city', 'I(city == "York")'), ('g', 'ifelse(g %in% c("a", "b"), 1, 0)')]
    """
    try:
        tree = parse(formula) if isinstance(formula, str) else None
    except FormulaError:
        tree = None
    found: list[tuple[str, str]] = []

    def walk(node: Node) -> None:
        if node.kind in ("binary", "unary", "paren") and node.value in _FORMULA_OPERATORS | {None}:
            for a in node.args:
                walk(a)
        elif node.kind in ("call", "binary", "unary"):
            found.extend((name, deparse(node)) for name in _compared_with_text(node))

    if tree is not None:
        walk(tree)
    return list(dict.fromkeys(found))


def _compared_with_text(node: Node) -> list[str]:
    """The names an expression compares with a text literal (``==``, ``!=``, ``<``..., ``%in%``)."""
    names = []
    if node.kind == "binary" and node.value in _COMPARISONS:
        for one, other in (node.args, node.args[::-1]):
            if _is_text(one):
                names += referenced_columns(other, None)
    for a in node.args:
        names += _compared_with_text(a[1] if isinstance(a, tuple) else a)
    return names


def _is_text(node: Node) -> bool:
    """A text literal, or ``c()`` holding one."""
    if node.kind == "paren":
        return _is_text(node.args[0])
    if call_name(node) == "c":
        return any(_is_text(a) for _, a in node.args)  # R makes the whole vector text
    return node.kind == "str"


def _only_within(formula: Any, claim: Callable[[Node], tuple[str, Any] | None]) -> dict[str, list]:
    """The variables a formula uses only inside calls that ``claim`` (a node -> (variable, value) or
    None; the call's other arguments are constants), each with the values of its claims in order; {}
    when the formula does not parse or uses ``.`` (every column as it is)."""
    try:
        tree = parse(formula) if isinstance(formula, str) else None
    except FormulaError:
        tree = None
    if tree is None:
        return {}
    claimed: dict[str, list] = {}
    elsewhere: set[str] = set()

    def walk(node: Node) -> None:
        hit = claim(node)
        if hit is not None:
            claimed.setdefault(hit[0], []).append(hit[1])
            return
        if node.kind == "name":
            elsewhere.add(node.value)
        for a in node.args:
            walk(a[1] if isinstance(a, tuple) else a)

    walk(tree)
    if "." in elsewhere:
        return {}
    return {name: values for name, values in claimed.items() if name not in elsewhere}


def _first_number(node: Node) -> float | None:
    """The first entry of a literal ``c(...)`` (or a single literal) as a number, else None."""
    if call_name(node) == "c":
        return _first_number(node.args[0][1]) if node.args else None
    if node.kind == "unary" and node.value == "-":
        inner = _first_number(node.args[0])
        return None if inner is None else -inner
    try:
        return float(node.value) if node.kind in ("num", "str") else None
    except ValueError:
        return None


def formula_variables(formula: str, data: pd.DataFrame, one_sided: bool = False) -> list[str]:
    """Data columns a formula uses, response first (removed terms included, as R keeps them).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0], "a": [2.0], "b": [3.0]})
    >>> formula_variables("log(y) ~ a + I(b^2)", df)
    ['y', 'a', 'b']
    """
    lhs, rhs = split_formula(formula, one_sided)
    tokens = simple_rhs_tokens(rhs)
    if tokens is not None and (not lhs or lhs in data.columns):
        return list(dict.fromkeys(([lhs] if lhs else []) + _direct_variables(tokens, data, lhs, formula)))
    # the names each variable refers to, without evaluating it (poly(), ns() need rows)
    lhs_text = _raw_lhs(formula)
    t = build_terms(
        formula, parse(lhs_text) if lhs_text else None, parse(rhs), [str(c) for c in data.columns]
    )
    return list(dict.fromkeys(c for node in t.variables for c in referenced_columns(node, data.columns)))


def dummy_columns(mf: ModelFrame) -> dict[str, tuple[float, float]]:
    """Design columns made of factors alone, with the public range of their coding.

    A treatment dummy ranges over (0, 1), a ``contr.sum`` column over (-1, 1), a polynomial
    or declared-matrix column over its matrix's entries (``ModelFrame.factor_column_ranges``,
    computed from the coding, never from the rows); the declared bounds need not cover them.
    """
    ranges = dict(getattr(mf, "factor_column_ranges", None) or {})
    for nm, term in zip(mf.names, mf.terms):
        if term in mf.factor_levels and nm not in ranges:
            ranges[nm] = (0.0, 1.0)
    return ranges


def interaction_parts(mf: ModelFrame) -> dict[str, tuple]:
    """The parts of each interaction column with a numeric part (``ModelFrame.interaction_parts``):
    numeric columns' names and factor codings' ranges, from the formula and the coding alone."""
    return dict(getattr(mf, "interaction_parts", None) or {})


def refuse_multivariate_response(formula: Any, method: str) -> None:
    """Refuse ``cbind(a, b) ~ ...`` in a method with one numeric response, before the data is read.

    Examples
    --------
    >>> refuse_multivariate_response("y ~ x", "dp_lm")   # one response: nothing happens
    >>> refuse_multivariate_response("cbind(mpg, hp) ~ wt", "dp_lm")
    Traceback (most recent call last):
    ...
    dpstats.errors.FormulaError: multivariate responses are not supported by dp_lm; fit each response ...
    """
    if not isinstance(formula, str) or "~" not in formula:
        return
    lhs, rhs = (side.strip() for side in formula.split("~", 1))
    try:
        node = parse(lhs) if lhs else None
    except FormulaError:
        return  # the formula's own check names it
    if node is None or call_name(node) != "cbind":
        return
    first = deparse(node.args[0][1]) if node.args else "y"
    raise FormulaError(
        f"multivariate responses are not supported by {method}; fit each response separately (the formula "
        f"'{formula}' has '{lhs}' on the left of '~'), e.g. {first} ~ {rhs}."
    )


OFFSET_CALL = re.compile(r"(?<![\w.])offset\s*\(")


def names_offset(formula: Any) -> bool:
    """Whether a formula's text calls ``offset()`` (before any row is read).

    Examples
    --------
    >>> names_offset("y ~ x + offset(log(e))"), names_offset("y ~ x + my_offset(e)")
    (True, False)
    """
    return isinstance(formula, str) and OFFSET_CALL.search(formula) is not None


def refuse_offset(mf: ModelFrame, method: str) -> None:
    """Refuse a formula with ``offset()`` in a method that cannot honour it.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1., 2, 3, 4], "x": [0., 1, 0, 2], "e": [1., 1, 2, 2]})
    >>> refuse_offset(model_frame("y ~ x", df), "dp_sis")   # no offset: nothing happens
    >>> refuse_offset(model_frame("y ~ x + offset(e)", df), "dp_sis")
    Traceback (most recent call last):
    ...
    dpstats.errors.FormulaError: dp_sis does not support offset() in a formula ...
    """
    if mf.offset is not None:
        raise FormulaError(
            f"{method} does not support offset() in a formula ('{mf.formula}'): it would be ignored. "
            "Fit the model without it only if the offset is not part of the estimand; to keep it, use "
            "vertical_glm without eps (any family), dp_glm at eps = inf (binomial, Poisson) or dp_lm at eps = inf: "
            "they honour offsets, none is private; or "
            "put its variable in the design with declared bounds (its coefficient is then estimated)."
        )


def chunk_unsafe_terms(
    formula: str, columns: list[str], factors: Collection[str] = (), declared: Collection[str] = ()
) -> list[str]:
    """Terms a chunked engine cannot apply chunk by chunk (their value needs all rows).

    ``factors``: the columns that are factors before any row is read (their dtype, or declared levels),
    whose levels ``C()`` keeps; ``C()`` of anything else reads its levels from the rows.  ``declared``:
    the columns whose levels ``levels=`` declares, which ``factor()`` keeps (:mod:`dpstats.schema`).

    Examples
    --------
    >>> chunk_unsafe_terms("y ~ scale(x) + poly(x, 2, raw = TRUE) + factor(g)", ["y", "x", "g"])
    ['scale(x)', 'factor(g)']
    >>> chunk_unsafe_terms("y ~ cut(x, 3) + cut(x, c(0, 1, 2)) + ifelse(x > 1, 'a', 'b')", ["y", "x"])
    ['cut(x, 3)', 'ifelse(x > 1, "a", "b")']
    >>> chunk_unsafe_terms("y ~ C(x) + C(g) + factor(g)", ["y", "x", "g"], factors=["g"], declared=["g"])
    ['C(x)']
    """
    lhs, rhs = split_formula(formula, one_sided=formula.lstrip().startswith("~"))
    nodes = [parse(rhs)] + ([parse(_raw_lhs(formula))] if lhs else [])
    out: list[str] = []
    for node in nodes:
        out += [deparse(c) for c in _calls(node) if _chunk_unsafe(c, set(factors), set(declared))]
    return list(dict.fromkeys(out))


def _calls(node: Node):
    if node.kind == "call":
        yield node
        for _, a in node.args:
            yield from _calls(a)
    elif node.kind in ("binary", "unary", "paren"):
        for a in node.args:
            yield from _calls(a)


def _chunk_unsafe(node: Node, factors: set[str] = frozenset(), declared: set[str] = frozenset()) -> bool:
    name = call_name(node)
    named = {n for n, _ in node.args if n}
    x = [a for n, a in node.args if n in (None, "x", "object")][:1]
    column = x[0].value if x and x[0].kind == "name" else None
    if name == "C":  # a factor's own levels, or those read from the rows (numbers, text made in the formula)
        return column not in factors if column is not None else call_name(x[0]) not in _LEVELS_KEPT
    if name in ("factor", "as.factor", "ordered", "as.ordered") and column in declared:
        return False  # levels= declares them: every chunk has them all
    if name in ("scale", "mean", "median", "sd", "var", "min", "max"):
        return True
    if name == "poly":
        return not any(n == "raw" and deparse(a) in ("TRUE", "T") for n, a in node.args)
    if name in ("ns", "bs"):
        return not ({"knots", "Boundary.knots"} <= named or ("Boundary.knots" in named and "df" not in named))
    if name == "cut":  # a number of breaks reads the range of all rows
        breaks = dict(_bound_args(node)).get("breaks")
        return breaks is not None and breaks.kind == "num"
    if name == "ifelse":  # text values: levels are the values that occur in all rows
        return any(a.kind == "str" for _, a in node.args[1:])
    if name == "interaction":  # as.factor() of its arguments reads levels from the rows it sees
        return True
    return name in ("factor", "as.factor", "ordered", "as.ordered") and "levels" not in named


_LEVELS_KEPT = (
    "factor",
    "ordered",
    "cut",
    "interaction",
    "relevel",
)  # C() of these: their levels, chunk-safe


def _bound_args(node: Node) -> list[tuple[str, Node]]:
    """cut()'s arguments by name (R's matching of x, breaks by position)."""
    named = [(n, a) for n, a in node.args if n]
    free = [f for f in ("x", "breaks") if f not in {n for n, _ in named}]
    return named + list(zip(free, [a for n, a in node.args if n is None]))


# --------------------------------------------------------------------------- general formulas
def _raw_lhs(formula: str) -> str:
    return formula.split("~", 1)[0].strip()


def _general_frame(
    formula,
    data,
    one_sided,
    drop_intercept,
    response,
    min_rows,
    check_constant,
    schema=None,
    coding=None,
    predvars=None,
    fit_levels=(None, None),
    drop_unused=False,
) -> ModelFrame:
    lhs_text = _raw_lhs(formula)
    lhs_node = parse(lhs_text) if lhs_text else None
    rhs_node = parse(formula.split("~", 1)[1])
    t = build_terms(formula, lhs_node, rhs_node, [str(c) for c in data.columns])
    coding = coding or _Coding()
    ctx = Context(
        data,
        formula,
        predvars=dict(predvars or {}),
        unknown=lambda name: _unknown(name, data, formula),
        default_contrasts=coding.default,
        declared_levels=frozenset(schema.levels) if schema is not None else frozenset(),
        xlevels=dict(fit_levels[0] or {}),
        xordered=None if fit_levels[1] is None else frozenset(fit_levels[1]),
        private=schema is not None and schema.private,
    )
    values = [ctx.eval(node) for node in t.variables]
    values = [
        v if i == t.response else ctx.fit_levels(node, v)
        for i, (node, v) in enumerate(zip(t.variables, values))
    ]
    used = list(dict.fromkeys(c for node in t.variables for c in referenced_columns(node, data.columns)))
    n_filled = 0
    if schema is not None and schema.na_action == "fill":
        keep, n_dropped = _unfillable_rows(data, used, schema)
        values, n_filled = _fill_values(values, t.variables, schema)
    else:
        keep, n_dropped = _complete_cases(values, data, used, formula)
    n = int(keep.sum())
    if n < min_rows:
        raise _too_few_rows(formula, min_rows)
    values = [subset(v, keep) for v in values]
    if drop_unused:
        declared = set(schema.levels) - schema.formula_levels if schema is not None else set()
        values = _unused_levels_dropped(t, values, data.columns, declared)
    y, classes = None, None
    if t.response is not None:
        y, classes = _general_response(lhs_text, values[t.response], data, keep, response)
    for i, (node, v) in enumerate(zip(t.variables, values)):
        if i != t.response and isinstance(v, Chr) and node.kind != "name":
            ctx.step(  # text made inside the formula (ifelse(x > 1, "hi", "lo")): a factor of the values that occur
                node,
                "makes text whose levels are the values that occur in the rows",
                "declare them: factor(..., levels = c(...))",
                levels=True,
            )
    factors = [_design_value(v) if i != t.response else v for i, v in enumerate(values)]
    factors = _declared_contrasts(t, factors, coding)
    if ctx.private:
        factors = _levels_by_position(t, factors, ctx)
    matched = {t.labels[i] for i, v in enumerate(factors) if i != t.response and isinstance(v, Fac)}
    if not t.terms and not t.intercept:
        raise FormulaError("the formula leaves no columns in the design; add a term or an intercept.")
    read_steps = took(_levels_read_steps(schema, data, used, ctx.level_steps))
    X, names, terms, levels = design(t, factors, n, coding.default, levels_read=bool(read_steps))
    parts = column_parts(t, factors, coding.default)
    parts = {nm: parts[nm] for nm in names if nm in parts}  # the design's columns only
    intercept = t.intercept
    if drop_intercept and intercept:
        X, names, terms, intercept = X[:, 1:], names[1:], terms[1:], False
    if check_constant:
        _check_constant(X, names, factor_columns(names, terms, levels))
    offset = sum(values[i].values for i in t.offsets) if t.offsets else None
    return ModelFrame(
        formula=formula,
        X=X,
        names=names,
        terms=terms,
        y=y,
        response=_unquote(lhs_text) or None,
        intercept=intercept,
        n_dropped=n_dropped,
        n_filled=n_filled,
        variables=used,
        classes=classes,
        factor_levels=levels,
        offset=None if offset is None else np.asarray(offset, float),
        offset_terms={t.labels[i]: np.asarray(values[i].values, float) for i in t.offsets},
        data_dependent_terms=ctx.steps,
        step_calls=ctx.step_calls,
        predvars=ctx.predvars,
        schema_steps=list(ctx.level_steps),
        factor_column_ranges=factor_column_ranges(parts),
        interaction_parts=product_parts(parts) | response_part(_unquote(lhs_text)),
        # the declared contrasts the formula's factors took, by the names given (predict re-applies them)
        contrasts={k: v for k, v in coding.given.items() if _label_key(k) in matched},
        ordered_factors=[label for label in levels if factors[t.labels.index(label)].ordered],
    )


def _clipped_to_bounds(data: pd.DataFrame, used: list[str], schema: Schema) -> pd.DataFrame:
    """A private call's variables clipped to the bounds a per-variable mapping declares for them, before
    the formula's transformations read them (README: "Values outside are clipped"): a value beyond x's
    bound then enters ``exp(x)``, ``ns(x, ...)`` or ``cut(x, ...)`` as the bound itself, never as a
    value that overflows (``exp(710)`` is inf, which would get a fill) or that a basis extrapolates.
    A non-finite value stays as it is (the schema's rule for missing values has it).  Values within
    the bounds are unchanged, and so is a global pair, which bounds the design's columns, not the variables.
    """
    if not schema.private or not isinstance(schema.bounds, Mapping):
        return data
    clipped = {}
    for name in used:
        pair = schema.numeric_bounds(name)
        dtype = data[name].dtype
        if pair is None or not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            continue
        x = data[name].to_numpy(dtype=float, na_value=np.nan)
        clipped[name] = np.where(np.isfinite(x), np.clip(x, *pair), x)
    return data.assign(**clipped) if clipped else data


def _levels_by_position(t, factors: list, ctx: Context) -> list:
    """A private frame's factors whose level labels are values read from the rows (``factor(x)`` of numbers,
    ``cut(x, breaks = 3)``: :attr:`Fac.read <dpstats.formula._eval.Fac>`), their levels named by position,
    ``level1``, ``level2``, ... (R's ``factor(x, labels = "level")``), so that no term name, level or
    attribute prints a value read from the rows.  Such a fit keeps no level it read, so ``predict()``
    refuses the term (``step_calls``)."""
    out = list(factors)
    for i, v in enumerate(factors):
        if i == t.response or not isinstance(v, Fac) or not v.read:
            continue
        out[i] = positional_levels(v)
        ctx.step_calls.setdefault(
            t.labels[i],
            (
                f"the formula term {t.labels[i]} reads its levels from the rows as values, which a DP fit names "
                "by position (level1, level2, ...) and does not keep",
                "declare the levels: levels={'x': [...]}, factor(x, levels = c(...)) or cut(x, breaks = c(...))",
            ),
        )
    return out


def _unused_levels_dropped(t, values: list, columns: pd.Index, declared: set[str]) -> list:
    """R's ``drop.unused.levels = TRUE`` on the analysed rows' ``values``, for the factors the formula
    makes (:func:`model_frame`'s ``drop_unused_levels``); ``declared``: columns whose levels ``levels=``
    declares."""
    out = list(values)
    for i, (node, v) in enumerate(zip(t.variables, values)):
        if i == t.response or node.kind == "name" or not isinstance(v, Fac):
            continue
        if declared.intersection(referenced_columns(node, columns)):
            continue
        out[i] = drop_unused_levels(v)
        if v.contrasts is not None and out[i] is not v:
            warnings.warn(  # R's words (model.frame.default); a non-private run only
                f"contrasts dropped from factor {t.labels[i]} due to missing levels",
                DataWarning,
                stacklevel=caller_stacklevel(),
            )
    return out


def _declared_contrasts(t, factors: list, coding: _Coding) -> list:
    """Declared contrasts (``contrasts=``, R's ``contrasts(f) <-``) on the variables they name."""
    if not coding.declared:
        return factors
    out = list(factors)
    in_terms = {i for term in t.terms for i in term}
    for i, label in enumerate(t.labels):
        spec = coding.declared.get(label)
        if spec is None or i == t.response:
            continue
        v = out[i]
        if not isinstance(v, Fac):
            if label in coding.explicit and i in in_terms:
                raise FormulaError(
                    f"contrasts are given for '{label}', which is numeric: contrasts apply only to factors "
                    f"(as in R). Use factor({label}) in the formula and name the contrasts for 'factor({label})'."
                )
            continue
        out[i] = replace(v, contrasts=spec)
    labels = set(t.labels)
    absent = [k for k in coding.explicit if k not in labels]
    if absent:
        warnings.warn(
            f"variable '{absent[0]}' is absent from the formula; its contrasts are ignored (as R warns).",
            DataWarning,
            stacklevel=caller_stacklevel(),
        )
    return out


def _design_value(v):
    """Character and logical variables enter the design as factors (R's model.matrix)."""
    if isinstance(v, Chr) or (isinstance(v, Num) and v.logical):
        return as_factor(v, "a factor")
    return v


def _bad_rows(v, n: int) -> np.ndarray:
    if isinstance(v, Fac):
        return v.codes < 0
    if isinstance(v, Chr):
        return pd.isna(v.values) if v.values.shape[0] == n else np.zeros(n, bool)
    x = v.values
    if x.ndim == 0:
        return np.zeros(n, bool) if np.isfinite(x) else np.ones(n, bool)
    bad = ~np.isfinite(x)
    return bad.any(axis=1) if bad.ndim == 2 else bad


def _complete_cases(values, data: pd.DataFrame, used: list[str], formula: str) -> tuple[np.ndarray, int]:
    """Rows with every variable present and finite (R's na.omit), and how many were dropped.

    Nothing is warned: the count is not private (a diagnostic only).
    """
    n = len(data)
    bad = np.zeros(n, bool)
    for v in values:
        bad |= _bad_rows(v, n)
    return ~bad, int(bad.sum())


def _unfillable_rows(data: pd.DataFrame, used: list[str], schema: Schema) -> tuple[np.ndarray, int]:
    """Under ``na_action="fill"``: rows missing a numeric variable that has no declared bounds (no public fill)."""
    n = len(data)
    bad = np.zeros(n, bool)
    for v in schema.variables(data, used):
        if v.kind == "numeric" and v.fill is None:
            bad |= _bad_rows(_column(data, v.name), n)
    return ~bad, int(bad.sum())


def _fill_values(values, nodes, schema: Schema) -> tuple[list, int]:
    """Non-finite values a transformation made (and unknown factor codes) replaced by public fills.

    A numeric term gets the midpoint of its declared bounds (looked up by its
    formula text, e.g. ``log(x)``), or 0; a factor its first level.
    """
    out, n_filled = [], 0
    for v, node in zip(values, nodes):
        if isinstance(v, Num) and v.values.ndim >= 1:
            bad = ~np.isfinite(v.values)
            if bad.any():
                fill = schema.fill_value(deparse(node))
                x = np.where(bad, 0.0 if fill is None else fill, v.values)
                v = Num(x, v.colnames, v.logical)
                n_filled += int(bad.sum())
        elif isinstance(v, Fac) and (v.codes < 0).any() and v.levels:
            n_filled += int((v.codes < 0).sum())
            v = replace(v, codes=np.where(v.codes < 0, 0, v.codes))
        out.append(v)
    return out, n_filled


def _too_few_rows(formula: str, min_rows: int) -> DataError:
    """Too few rows, said without counting them (the count after dropping rows is not public)."""
    return DataError(
        f"formula '{formula}' leaves fewer than {min_rows} complete rows, the least this analysis "
        'needs; supply more rows, or declare bounds (na_action="fill") so that no row is dropped.'
    )


def _column(data: pd.DataFrame, name: str):
    from ._eval import column_value

    return column_value(data[name])


def _general_response(lhs_text: str, value, data: pd.DataFrame, keep: np.ndarray, kind: str):
    name = _unquote(lhs_text)
    if name in data.columns:
        return _response(name, data.loc[keep].reset_index(drop=True), kind)
    if kind == "factor":
        f = as_factor(value, lhs_text)
        return f.codes, list(f.levels)
    if isinstance(value, Fac):  # a factor expression (factor(am)): a door that takes one retries with it
        raise DataError(
            f"response '{lhs_text}' is a factor but a numeric response is needed; use a numeric or "
            "logical expression (e.g. am == 1) or code it as 0/1."
        )
    if not isinstance(value, Num) or value.values.ndim != 1:
        raise DataError(f"response '{lhs_text}' must be one numeric column; convert it before the analysis.")
    return value.values.astype(float), None  # a logical response counts TRUE as 1, as R's lm and glm do


def _deferrable(rhs_tokens, response: str) -> bool:
    """Deferred checks see only the design: a removed column's missing values would go unseen."""
    removed = any(sign == "-" and tok not in (".", "0", "1") for sign, tok in rhs_tokens)
    return response == "numeric" and not removed


def _deferred_frame(formula, data, tokens, lhs, used, drop_intercept, min_rows, schema=None) -> ModelFrame:
    """Plain numeric columns, no scan: X is a view of the data where pandas allows."""
    if len(data) < min_rows:
        raise DataError(f"data has {len(data)} row(s); at least {min_rows} are needed for '{formula}'.")
    y = data[lhs].to_numpy(dtype=float) if lhs else None
    if y is not None and not np.isfinite(y).all():  # the careful route (the caller adds the schema's steps)
        return _direct_frame(
            formula, data, tokens, lhs, used, drop_intercept, "numeric", min_rows, False, schema
        )
    X, names, terms, intercept = _direct_design(tokens, data, lhs, add_intercept=not drop_intercept)
    return ModelFrame(
        formula=formula,
        X=X,
        names=names,
        terms=terms,
        y=y,
        response=lhs or None,
        intercept=intercept,
        n_dropped=0,
        variables=used,
        checked=False,
    )


def _direct_frame(
    formula, data, tokens, lhs, used, drop_intercept, response, min_rows, check_constant, schema=None
):
    """Numeric columns only: missing values filled or their rows dropped, columns read as they are.

    At memory speed: one copy of the design columns into a float64 block, then the missing-value scan
    and the constant-column check on that block (no second copy, no loop over columns in Python).
    """
    X, names, terms, intercept, order = _direct_design(
        tokens, data, lhs, add_intercept=not drop_intercept, with_order=True
    )
    bad = _nonfinite_rows(X)
    n_filled = 0
    if schema is not None and schema.na_action == "fill" and bad.any():
        X, data, n_filled = _fill_direct(X, names, order, data, lhs, bad, schema)
        bad = _nonfinite_rows(X)
    elif schema is not None and schema.na_action == "fill" and lhs:
        data, n_filled = schema.apply(data, [lhs])
    in_design = set(order)
    removed = [c for c in used if c not in in_design]  # '- x': R still drops the rows x is missing in
    if removed:
        if schema is not None:
            data, filled = schema.apply(data, removed)
            n_filled += filled
        bad |= ~np.isfinite(data[removed].to_numpy(dtype=float, na_value=np.nan)).all(axis=1)
    if lhs:
        col = data[lhs]
        bad |= (
            col.isna().to_numpy()
            if _is_factor(col)
            else ~np.isfinite(col.to_numpy(dtype=float, na_value=np.nan))
        )
    n_dropped = int(bad.sum())
    frame = data[[lhs]] if lhs else None
    if n_dropped:
        X = np.asfortranarray(X[~bad])
        frame = frame.loc[~bad] if lhs else None
    if len(X) < min_rows:
        raise _too_few_rows(formula, min_rows)
    y, classes = _response(lhs, frame, response) if lhs else (None, None)
    if check_constant:
        _check_constant(X, names)
    return ModelFrame(
        formula=formula,
        X=X,
        names=names,
        terms=terms,
        y=y,
        response=lhs or None,
        intercept=intercept,
        n_dropped=n_dropped,
        n_filled=n_filled,
        variables=list(dict.fromkeys(([lhs] if lhs else []) + used)),
        classes=classes,
    )


def _fill_direct(X, names, order, data, lhs, bad, schema: Schema):
    """Public fills for the non-finite values of plain numeric design columns (only the rows that have them).

    Columns without declared bounds keep theirs (their rows are then dropped).
    """
    X = np.array(X, order="F")  # X may be a view of the user's data
    rows = np.flatnonzero(bad)
    n_filled = 0
    offset = len(names) - len(order)  # the intercept column, if any
    for j, col in enumerate(order):
        fill = schema.fill_value(col)
        if fill is None:
            continue
        block = X[rows, offset + j]
        nonfinite = ~np.isfinite(block)
        if nonfinite.any():
            block[nonfinite] = fill
            X[rows, offset + j] = block
            n_filled += int(nonfinite.sum())
    if lhs:
        data, filled = schema.apply(data, [lhs])
        n_filled += filled
    return X, data, n_filled


def finish_checks(mf: ModelFrame, finite: bool) -> bool:
    """Complete the deferred check from one statistics pass.

    Returns False when non-finite values were seen (rebuild the frame with
    ``defer_checks=False`` to drop and count those rows).  Constant columns
    are not refused: whether a column is constant depends on single rows
    (``docs/architecture.md``, "Privacy conventions"), and a DP release of a
    constant column is fine.
    """
    if not finite:
        return False
    mf.checked = True
    return True


# --------------------------------------------------------------------------- parsing
def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, dict):
        data = pd.DataFrame(data)
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame (or a dict of columns), got {type(data).__name__}.")
    dup = data.columns[data.columns.duplicated()].unique().tolist()
    if dup:
        raise DataError(f"data has duplicate column names {dup[:5]}; rename them to be unique.")
    if data.attrs:
        # pandas deep-copies attrs on every column access; the model frame needs none of them
        data = data.copy(deep=False)
        data.attrs = {}
    if not _str_labels(data.columns):
        data = data.rename(columns=str)
    return read_columns(data, refuse=())  # dates, date-times, durations as numbers, as R (dpstats.temporal)


def _str_labels(columns: pd.Index) -> bool:
    """Every column label is a str (a string-dtype index is, without looking at 10^4 labels one by one)."""
    if columns.dtype != object and pd.api.types.is_string_dtype(columns.dtype) and not columns.hasnans:
        return True
    return all(isinstance(c, str) for c in columns.tolist())


def split_formula(formula: str, one_sided: bool) -> tuple[str, str]:
    """Split a formula at ``~`` into response and right-hand side, with R's checks.

    Parameters
    ----------
    formula : str
        ``"y ~ ..."``, or ``"~ ..."`` when ``one_sided``.
    one_sided : bool
        Whether the formula must have no response.

    Returns
    -------
    tuple of str
        The response (backquotes removed; ``""`` when one-sided) and the right-hand side.

    Raises
    ------
    FormulaError
        Not a string, not exactly one ``~``, a response where none is allowed (or
        none where one is needed), or an empty right-hand side.

    Examples
    --------
    >>> split_formula("`log y` ~ x1 + x2", one_sided=False)
    ('log y', 'x1 + x2')
    """
    if not isinstance(formula, str):
        raise FormulaError(f"formula must be a string such as 'y ~ .', got {type(formula).__name__}.")
    if formula.count("~") != 1:
        raise FormulaError(f"formula '{formula}' must contain exactly one '~', e.g. 'y ~ x1 + x2'.")
    lhs, rhs = (s.strip() for s in formula.split("~"))
    if one_sided and lhs:
        raise FormulaError(f"formula '{formula}' must be one-sided (no response), e.g. '~ .' or '~ x1 + x2'.")
    if not one_sided and not lhs:
        raise FormulaError(f"formula '{formula}' needs a response on the left of '~', e.g. 'y ~ .'.")
    if not rhs:
        raise FormulaError(f"formula '{formula}' has nothing on the right of '~'; use '.' for all columns.")
    return _unquote(lhs) if lhs else "", rhs


def _unquote(name: str) -> str:
    return name[1:-1] if name.startswith("`") and name.endswith("`") else name


def simple_rhs_tokens(rhs: str) -> list[tuple[str, str]] | None:
    """Signed tokens of a simple right-hand side (names, ``.``, ``0``, ``1`` joined by ``+``/``-``).

    Such a right-hand side is looked up column by column, never through the general
    formula machinery (the wide ``y ~ .`` case).

    Parameters
    ----------
    rhs : str
        The right-hand side of a formula.

    Returns
    -------
    list of (str, str) or None
        ``(sign, name)`` pairs, or ``None`` when the right-hand side has any other term.

    Examples
    --------
    >>> simple_rhs_tokens(". - x2")
    [('+', '.'), ('-', 'x2')]
    >>> simple_rhs_tokens("log(x1)") is None
    True
    """
    tokens: list[tuple[str, str]] = []
    for sign, body in re.findall(r"([+-]?)\s*(`[^`]+`|[^+\-`]+)", rhs.strip()):
        body = body.strip()
        if not _SIMPLE_TOKEN.match(body):
            return None
        tokens.append((sign or "+", _unquote(body)))
    rebuilt = "".join(s + t for s, t in tokens).replace(" ", "")
    compact = re.sub(r"`([^`]+)`", r"\1", rhs).replace(" ", "")
    return tokens if rebuilt.lstrip("+") == compact.lstrip("+") else None


def _close(name: str, data: pd.DataFrame) -> str:
    near = close_names(name, data.columns[:50000])
    return f" Did you mean {', '.join(repr(m) for m in near)}?" if near else ""


def _unknown(name: str, data: pd.DataFrame, formula_side: str) -> FormulaError:
    exc = FormulaError(
        f"column '{name}' in formula '{formula_side}' is not in the data.{_close(name, data)} "
        "Check the spelling or add the column to the data frame."
    )
    exc.column = name  # predict() names it as newdata's missing column
    return exc


def _direct_variables(tokens, data: pd.DataFrame, lhs: str, formula: str) -> list[str]:
    """Columns a simple right-hand side uses, removed ones included (R keeps them in the model frame)."""
    out: list[str] = []
    for _, tok in tokens:
        if tok in ("0", "1"):
            continue
        if tok == ".":
            out.extend(data.columns.tolist())
        elif tok not in data.columns:
            raise _unknown(tok, data, formula)
        else:
            out.append(tok)
    return [c for c in dict.fromkeys(out) if c != lhs]


def rhs_variables(
    tokens: list[tuple[str, str]] | None, rhs: str, data: pd.DataFrame, lhs: str, formula: str | None = None
) -> list[str]:
    """Data columns the right-hand side uses (for the chunked engines' layout).

    Parameters
    ----------
    tokens : list of (str, str) or None
        :func:`simple_rhs_tokens` of ``rhs``.
    rhs : str
        The right-hand side.
    data : pandas.DataFrame
        The data (only its columns and dtypes are read; a zero-row frame will do).
    lhs : str
        The response (excluded from the result), or ``""``.
    formula : str, optional
        The whole formula, which an error quotes as the in-memory route does (default:
        ``lhs ~ rhs``).

    Returns
    -------
    list of str
        Column names in first-use order, removed terms included (R keeps them in the model frame).

    Raises
    ------
    FormulaError
        A name that is not a column of ``data`` or an unknown function.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0], "a": [2.0], "b": [3.0]})
    >>> rhs_variables(simple_rhs_tokens(". - b"), ". - b", df, "y")
    ['a', 'b']
    >>> rhs_variables(None, "log(a) + a:b", df, "y")
    ['a', 'b']
    """
    formula = formula or (f"{lhs} ~ {rhs}" if lhs else "~ " + rhs)
    if tokens is not None and (not lhs or lhs in data.columns):
        return _direct_variables(tokens, data, lhs, formula)
    lhs_node = parse(lhs) if lhs and lhs not in data.columns else (Node("name", lhs) if lhs else None)
    t = build_terms("~ " + rhs, lhs_node, parse(rhs), [str(c) for c in data.columns])
    rhs_nodes = [v for i, v in enumerate(t.variables) if i != t.response]
    return _checked_columns(rhs_nodes, data, formula)


def expression_variables(expr: str, data: pd.DataFrame, formula: str | None = None) -> list[str]:
    """Data columns an expression (e.g. a response ``log(y)``) uses; unknown names are errors.

    Parameters
    ----------
    expr : str
        An R expression such as ``"log(y)"``.
    data : pandas.DataFrame
        The data (a zero-row frame will do).
    formula : str, optional
        The formula ``expr`` is part of, which an error quotes (default: ``expr``).

    Returns
    -------
    list of str
        The columns ``expr`` reads.

    Examples
    --------
    >>> expression_variables("log(y + x)", pd.DataFrame({"y": [1.0], "x": [2.0]}))
    ['y', 'x']
    """
    return _checked_columns([parse(expr)], data, formula or expr)


def _checked_columns(nodes, data: pd.DataFrame, where: str) -> list[str]:
    ctx = Context(data.iloc[:0], where, unknown=lambda name: _unknown(name, data, where))
    for node in nodes:
        ctx.eval(node)  # on no rows: raises for unknown names and functions
    return list(dict.fromkeys(c for node in nodes for c in referenced_columns(node, data.columns)))


# --------------------------------------------------------------------------- rows
def _is_factor(s: pd.Series) -> bool:
    return is_factor_dtype(s.dtype)


def is_factor_dtype(dtype: Any) -> bool:
    """Whether a column of this dtype is a factor in R's sense (not numeric, or logical).

    Examples
    --------
    >>> is_factor_dtype(np.dtype("float64")), is_factor_dtype(np.dtype("bool")), is_factor_dtype(np.dtype("O"))
    (False, True, True)
    """
    if isinstance(dtype, np.dtype):
        return dtype.kind not in "iuf"
    return not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def _factor_flags(frame: pd.DataFrame, columns: list[str]) -> dict[str, bool]:
    """Which of ``columns`` are factors, classifying each distinct dtype once.

    A frame without any factor dtype (the wide numeric case) is answered from its distinct dtypes
    alone, without a per-column lookup.
    """
    values = frame.dtypes.tolist()
    if not any(is_factor_dtype(dt) for dt in _distinct_dtypes(values)):
        return dict.fromkeys(columns, False)
    dtypes = dict(zip(frame.columns.tolist(), values))
    by_dtype = {id(dt): is_factor_dtype(dt) for dt in {id(dt): dt for dt in dtypes.values()}.values()}
    return {c: by_dtype[id(dtypes[c])] for c in columns}


def _distinct_dtypes(dtypes: list) -> list:
    """The distinct dtypes of a frame, by equality (by identity if a dtype cannot be hashed)."""
    try:
        return list(set(dtypes))
    except TypeError:
        return list({id(dt): dt for dt in dtypes}.values())


def _nonfinite_rows(X: np.ndarray) -> np.ndarray:
    """Rows of X holding NaN or ±inf, from one pass: a row's sum is finite iff all its values are
    (unless finite values overflow, which the exact check of the flagged rows sorts out)."""
    bad = np.zeros(X.shape[0], dtype=bool)
    if X.size == 0:
        return bad
    with np.errstate(over="ignore", invalid="ignore"):
        flagged = np.flatnonzero(~np.isfinite(X.sum(axis=1)))
    if flagged.size:
        bad[flagged] = ~np.isfinite(X[flagged]).all(axis=1)
    return bad


def _response(lhs: str, frame: pd.DataFrame, kind: str):
    col = frame[lhs]
    if kind == "factor":
        cat = pd.Categorical(col)
        if cat.categories.size < 1:
            raise DataError(f"response '{lhs}' has no values.")
        return cat.codes.astype(np.int64), list(cat.categories)
    if _is_factor(col):
        raise DataError(
            f"response '{lhs}' is {col.dtype} but a numeric response is needed; convert it "
            f"(e.g. df['{lhs}'].astype(float)) or code it as 0/1."
        )
    return col.to_numpy(dtype=float), None


# --------------------------------------------------------------------------- direct design
def _direct_design(
    tokens, frame: pd.DataFrame, lhs: str, add_intercept: bool = True, with_order: bool = False
):
    """Numeric columns as they are, named as R names them (backticks for non-syntactic names)."""
    intercept, order = True, []
    for sign, tok in tokens:
        if tok in ("0", "1"):
            intercept = (tok == "1") == (sign == "+")
            continue
        cols = [c for c in frame.columns.tolist() if c != lhs] if tok == "." else [tok]
        if lhs and tok == lhs:
            warnings.warn(
                f"the response '{lhs}' appeared on the right-hand side and was dropped (as R does).",
                DataWarning,
                stacklevel=caller_stacklevel(),
            )
            continue
        if sign == "+":
            order.extend(cols)
        else:
            removed = set(cols)
            order = [c for c in order if c not in removed]
    order = list(dict.fromkeys(order))
    if not order and not intercept:
        raise FormulaError("the formula leaves no columns in the design; add a term or an intercept.")
    with_intercept = intercept and add_intercept
    X = _float_block(frame, order, with_intercept)
    names = r_names(order)
    terms = list(names)
    if with_intercept:
        names, terms = [INTERCEPT] + names, [INTERCEPT] + terms
    if with_order:
        return X, names, terms, with_intercept, order
    return X, names, terms, with_intercept


_LONG_COLUMN = 20_000  # rows: copying a column of these takes longer than a Python-level call (~10 µs)


def _float_block(frame: pd.DataFrame, order: list[str], intercept: bool) -> np.ndarray:
    """The columns ``order`` (after a column of ones if ``intercept``) as one Fortran-ordered float64 block.

    One copy: a frame held as one float64 block (what ``read_parquet`` and a 2-D array give) is read
    through a view of that block; other frames are copied once by pandas, and the ones column added in
    place when there is none to add.
    """
    n = len(frame)
    if not order:
        return np.ones((n, 1)) if intercept else np.empty((n, 0))
    whole = None
    # one float64 block iff pandas hands out a read-only view of it (probed on one row: no copy of the data)
    if (
        all(dt == np.float64 for dt in set(frame.dtypes.tolist()))
        and not frame.iloc[:1].to_numpy(dtype=np.float64, copy=False).flags.writeable
    ):
        whole = frame.to_numpy(dtype=np.float64, copy=False)
        if whole.flags.writeable:  # pandas made a copy after all
            whole = None
    if whole is None:
        if intercept and n >= _LONG_COLUMN:
            # columns long enough that copying each costs more than the Python call that copies it:
            # each goes once into its place next to the ones column
            out = np.empty((n, len(order) + 1), order="F")
            out[:, 0] = 1.0
            for j, c in enumerate(order, start=1):
                out[:, j] = frame[c].to_numpy(dtype=np.float64)
            return out
        block = frame[order].to_numpy(dtype=np.float64)
        if not intercept:  # a read-only array is a view of the user's data: copy it (once)
            return block if block.flags.writeable else np.array(block, order="F")
        out = np.empty((n, len(order) + 1), order="F")
        out[:, 0] = 1.0
        out[:, 1:] = block
        return out
    positions = _positions(frame.columns, order)
    out = np.empty((n, len(order) + int(intercept)), order="F")
    if intercept:
        out[:, 0] = 1.0
    # on the transposes: whole rows (the columns of the frame, contiguous in its block) are copied
    np.take(whole.T, positions, axis=0, out=out.T[int(intercept) :], mode="clip")
    return out


def _positions(columns: pd.Index, order: list[str]) -> np.ndarray:
    """Positions of ``order`` among unique ``columns``, from a plain dict (a wide frame's
    ``Index.get_indexer`` first builds an Index of the names, ten times slower)."""
    names = columns.tolist()
    where = {name: j for j, name in enumerate(names)}
    if len(where) != len(names):
        return columns.get_indexer(order)  # duplicated names: pandas raises, naming them
    return np.fromiter((where[c] for c in order), dtype=np.intp, count=len(order))


def _check_constant(X: np.ndarray, names: list[str], exempt: set[str] = frozenset()) -> None:
    skip = set(exempt) | {INTERCEPT}
    raise_constant([names[j] for j in np.flatnonzero(constant_columns(X)) if names[j] not in skip])


def factor_columns(names: list[str], terms: list[str], levels: dict) -> set[str]:
    """Design columns of terms that involve a factor: a declared level no row takes gives an all-zero
    column, as in R, and that is not an error (refusing it would tell readers the level is absent).

    Examples
    --------
    >>> sorted(factor_columns(["x", "gb", "x:gb"], ["x", "g", "x:g"], {"g": ["a", "b"]}))
    ['gb', 'x:gb']
    """
    return {nm for nm, term in zip(names, terms) if any(part in levels for part in term.split(":"))}


def constant_columns(X: np.ndarray) -> np.ndarray:
    """Boolean mask of the columns of X whose values are all equal (for :func:`finish_checks`).

    A constant column has the same value in the first, middle and last rows: only such columns
    are scanned whole.

    Examples
    --------
    >>> constant_columns(np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 2.0]])).tolist()
    [True, False]
    """
    mask = np.zeros(X.shape[1], dtype=bool)
    if X.shape[0] == 0 or X.shape[1] == 0:
        return mask
    candidates = np.flatnonzero((X[0] == X[-1]) & (X[0] == X[X.shape[0] // 2]))
    if candidates.size:
        mask[candidates[np.ptp(X[:, candidates], axis=0) == 0]] = True
    return mask


def raise_constant(bad: list[str]) -> None:
    """Raise a :class:`~dpstats.errors.DataError` naming the constant columns ``bad`` (none: do nothing).

    Examples
    --------
    >>> raise_constant([])
    >>> raise_constant(["x3"])
    Traceback (most recent call last):
    ...
    dpstats.errors.DataError: constant column(s) 'x3' carry no information; ...
    """
    if bad:
        shown = ", ".join(repr(b) for b in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise DataError(
            f"constant column(s) {shown} carry no information; remove them from the formula "
            f"(e.g. 'y ~ . - {bad[0]}') or from the data."
        )
