"""Evaluating a formula's variables on a data frame, with R's functions.

A variable evaluates to :class:`Num` (a numeric vector or matrix; logicals are
numeric with ``logical=True``) or :class:`Fac` (codes, levels, contrasts).
Each supported function is listed in ``FUNCTIONS``; anything else is a
:class:`FormulaError` that names it and lists what is supported.  Terms whose
values depend on the data as a whole (``scale()``, orthogonal ``poly()``,
splines with knots at data quantiles, ``mean()``...) are recorded as
data-dependent steps.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError, DPStatsError, FormulaError
from . import _bases
from ._parse import Node, call_name, deparse, format_number

_NAMESPACES = {"base", "stats", "splines"}
_SHORT_CONTRASTS = {
    "treatment": "contr.treatment",
    "sum": "contr.sum",
    "helmert": "contr.helmert",
    "poly": "contr.poly",
    "SAS": "contr.SAS",
}


@dataclass
class Num:
    """A numeric vector (n,), matrix (n, k) or scalar (shape ())."""

    values: np.ndarray
    colnames: list[str] | None = None
    logical: bool = False


@dataclass
class ContrastMatrix:
    """A contrasts matrix given as numbers (R's ``contrasts(f) <- m``, ``C(f, contr.sum(3))``).

    ``values`` has one row per level; ``names`` are its column names (``None``: R numbers the
    columns); ``rows`` the levels its rows belong to, when known (R names them by the levels).
    """

    values: np.ndarray
    names: list[str] | None = None
    rows: list[str] | None = None
    how_many: int | None = None  # columns to use; None: one fewer than the levels (R's default)


@dataclass
class Fac:
    """A factor: integer codes (-1 missing), level labels, contrasts set by ``C()`` or declared.

    ``contrasts`` is ``("levels", "contr.xxx")`` (the function called on the level labels, as R
    calls a contrast given by name), ``("count", "contr.xxx")`` (called on the number of levels,
    as for a function given by itself, ``C(f, contr.sum)``), ``("matrix", ContrastMatrix)``, or
    ``None`` (the default contrasts in force: R's ``options(contrasts =)``).
    ``read``: its level labels are values read from the rows (``factor()`` of numbers, ``cut()`` with a
    number of breaks), neither declared nor written in the formula; a private frame names such levels
    by position (:func:`positional_levels`).
    """

    codes: np.ndarray
    levels: list[str]
    ordered: bool = False
    contrasts: tuple | None = None
    read: bool = False


@dataclass
class Chr:
    """A character vector (a string column or literal); a factor once it enters the design.  ``read``: it
    holds numbers read from the rows, as text (``ifelse(x > 0, "pos", x)``), as :attr:`Fac.read`."""

    values: np.ndarray
    read: bool = False


def level_label(level) -> str:
    """How R prints a factor level (``TRUE``, ``2.5``, ``a``)."""
    if isinstance(level, (bool, np.bool_)):
        return "TRUE" if level else "FALSE"
    if isinstance(level, (float, np.floating)):
        return format_number(float(level))
    return str(level)


def as_factor(v, what: str) -> Fac:
    """R's ``factor()`` of a value: levels sorted, logicals FALSE/TRUE."""
    if isinstance(v, Fac):
        return v
    if isinstance(v, Chr):
        cat = pd.Categorical(v.values, categories=sorted(pd.unique(v.values[pd.notna(v.values)]), key=str))
        return Fac(cat.codes.astype(np.int64), [str(c) for c in cat.categories], read=v.read)
    x = _vector(v, what)
    if v.logical:
        return Fac(np.where(np.isnan(x), -1, x).astype(np.int64), ["FALSE", "TRUE"])
    ok = ~np.isnan(x)
    uniq = np.unique(x[ok])
    codes = np.full(len(x), -1, np.int64)
    codes[ok] = np.searchsorted(uniq, x[ok])
    return Fac(codes, [format_number(float(u)) for u in uniq], read=True)


#: The name of level j (from 1) of a factor whose levels a private frame read from the rows as values
#: (:attr:`Fac.read`): R's ``factor(x, labels = "level")`` names them so, by position.
POSITIONAL_LEVEL = "level{}"


def positional_levels(f: Fac) -> Fac:
    """``f`` with its levels named by position, ``level1``, ``level2``, ... (:data:`POSITIONAL_LEVEL`): what
    a private frame shows of a factor whose labels are values read from the rows (``factor(x)`` of numbers,
    ``cut(x, breaks = 3)``), so that no output prints a value read (README, "Privacy conventions").  The
    codes, order and contrasts are kept; only the labels change.

    Examples
    --------
    >>> positional_levels(Fac(np.array([1, 0, -1]), ["-3.77", "47"], read=True)).levels
    ['level1', 'level2']
    """
    return replace(f, levels=[POSITIONAL_LEVEL.format(j) for j in range(1, len(f.levels) + 1)], read=False)


def with_fit_levels(value, levels: list[str], label: str, ordered: bool | None = None) -> Fac:
    """A variable of predict()'s newdata as a factor with the fit's ``levels`` (R's ``model.frame(xlev =)``):
    text, numbers and logicals by their labels, a factor by its levels' labels; contrasts set by ``C()``
    kept, and ordered as the fit's factor was (``ordered``; None: as newdata's).  A level that occurs in newdata and not in the fit is an error naming the variable and the
    level (newdata's own value: it is the caller's, not the fit's data), as R's
    ``factor factor(cyl) has new levels 5``.

    Examples
    --------
    >>> f = with_fit_levels(Num(np.array([6.0, 4.0])), ["4", "6", "8"], "factor(cyl)")
    >>> f.levels, f.codes.tolist()
    (['4', '6', '8'], [1, 0])
    """
    f = as_factor(value, label)
    present = np.unique(f.codes[f.codes >= 0])
    new = [f.levels[i] for i in present if f.levels[i] not in levels]
    if new:
        raise DataError(
            f"newdata: factor {label} has new level{'s' if len(new) > 1 else ''} {', '.join(new)}; "
            "predict() codes newdata with the fit's levels: give newdata only those, or leave these rows out."
        )
    coded = _with_levels(f, list(levels))
    return Fac(coded.codes, list(levels), f.ordered if ordered is None else ordered, f.contrasts)


def _vector(v, what: str) -> np.ndarray:
    if isinstance(v, Num) and v.values.ndim <= 1:
        return v.values
    kind = "a factor" if isinstance(v, Fac) else "text" if isinstance(v, Chr) else "a matrix"
    raise FormulaError(f"{what} needs a numeric vector, but its argument is {kind}.")


_STEPS_TAKEN: ContextVar[list[tuple[str, str]] | None] = ContextVar("dpstats_level_steps_taken", default=None)


@contextmanager
def level_steps_taken() -> Iterator[list[tuple[str, str]]]:
    """The data-dependent steps that the model frames built in this block took (factor levels read from
    the rows; in a private frame every step of its formula's terms), as (step, fix), collected as they are
    taken: a front door names them when a check after them (or in the design's coding, or in the
    evaluation of a term after its step) raises, so that ``strict=True`` refuses the step first and an
    error without ``strict`` says that it came after the step."""
    token = _STEPS_TAKEN.set([])
    try:
        yield _STEPS_TAKEN.get()
    finally:
        _STEPS_TAKEN.reset(token)


def took(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``steps``, recorded for :func:`level_steps_taken` (when a block collects them)."""
    taken = _STEPS_TAKEN.get()
    if taken is not None:
        taken.extend(step for step in steps if step not in taken)
    return steps


@dataclass
class Context:
    """Data, formula text (for messages) and the data-dependent steps found so far.

    ``predvars`` is R's ``attr(terms, "predvars")``: each data-dependent basis call (orthogonal
    ``poly()``, ``ns()``/``bs()`` with knots from the rows, ``scale()``), as the formula writes it, with
    the parameters it took from the rows.  Building a fit's frame records them; ``predict()`` hands the
    fit's back, so that newdata is evaluated on the fit's basis (R's ``makepredictcall``), not its own.
    """

    data: pd.DataFrame
    formula: str
    steps: list[tuple[str, str]] = field(default_factory=list)
    # the data-dependent steps of steps, by the call (as the formula writes it) that makes each
    step_calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    predvars: dict[str, tuple] = field(default_factory=dict)
    unknown: object = None  # callable(name) -> FormulaError
    # terms whose levels (hence design columns) are read from the rows: a schema step, not a value
    # that depends on all rows (predict() can recode them by the fit's levels)
    level_steps: list[tuple[str, str]] = field(default_factory=list)
    # R's options(contrasts = c(unordered, ordered)): what C(f) without contrasts uses
    default_contrasts: tuple[str, str] = ("contr.treatment", "contr.poly")
    # columns whose levels the schema declares (levels=): factor(x) of one keeps them all, reads none
    declared_levels: frozenset[str] = frozenset()
    # predict()'s newdata: a fit's factor levels by variable label (R's model.frame(xlev =))
    xlevels: dict[str, list[str]] = field(default_factory=dict)
    xordered: frozenset[str] | None = None  # which of them were ordered in the fit (None: as newdata's)
    # a private call's frame: each step is recorded as it is taken (level_steps_taken), before what it
    # reads, and levels read as values are named by position (positional_levels)
    private: bool = False

    @property
    def n(self) -> int:
        return len(self.data)

    def fit_levels(self, node: Node, value):
        """``value`` coded by the fit's levels of the variable ``node`` (predict's newdata, R's ``xlev``);
        ``value`` as it is when the fit has none for it."""
        label = deparse(node)
        levels = self.xlevels.get(label)
        if levels is None:
            return value
        ordered = None if self.xordered is None else label in self.xordered
        return with_fit_levels(value, levels, label, ordered)

    def step(self, node: Node, what: str, fix: str, levels: bool = False) -> None:
        """Name a data-dependent step of the term ``node`` (``levels``: one that reads factor levels from the
        rows); in a private frame it is recorded at once, so that an error raised while the step reads
        the rows comes after it (strict refuses the step first, or the error names it)."""
        entry = (f"the formula term {deparse(node)} {what}", fix)
        steps = self.level_steps if levels else self.steps
        if entry not in steps:
            steps.append(entry)
        if not levels:
            self.step_calls.setdefault(deparse(node), entry)
        if self.private:
            took([entry])

    def basis(self, node: Node, what: str, fix: str, from_rows):
        """The parameters of a data-dependent basis call: the fit's (``predvars``, given to ``predict()``),
        else ``from_rows()``'s, kept in ``predvars`` and the call named as a step."""
        key = deparse(node)
        if key not in self.predvars:
            self.step(node, what, fix)
            self.predvars[key] = from_rows()
        return self.predvars[key]

    # ------------------------------------------------------------------ evaluation
    def eval(self, node: Node):
        kind = node.kind
        if kind == "name":
            return self.column(node.value)
        if kind == "num":
            return Num(np.asarray(node.value))
        if kind == "str":
            return Chr(np.asarray([node.value], dtype=object))
        if kind == "const":
            return _CONSTANTS_VALUE[node.value]()
        if kind == "paren":
            return self.eval(node.args[0])
        # numpy's overflow and domain warnings (log(-1), 1e308 * 10) are not raised: whether they occur
        # depends on the rows, so a warning would tell one data set from its neighbour
        with np.errstate(all="ignore"):
            if kind == "unary":
                return self.unary(node)
            if kind == "binary":
                return self.binary(node)
            return self.call(node)

    def column(self, name: str):
        if name in self.data.columns:
            return column_value(self.data[name])
        if name in ("T", "F"):
            return Num(np.asarray(1.0 if name == "T" else 0.0), logical=True)
        if name == "pi":
            return Num(np.asarray(math.pi))
        raise self.unknown(name)

    def unary(self, node: Node):
        op, v = node.value, self.eval(node.args[0])
        if op == "~":
            raise FormulaError(
                f"'{deparse(node)}' in '{self.formula}': a formula cannot contain another '~'."
            )
        if op == "!":
            return Num(_not(_numeric(v, deparse(node))), logical=True)
        x = _numeric(v, deparse(node))
        return Num(-x if op == "-" else x)

    def binary(self, node: Node):
        op = node.value
        if op == "::":
            raise FormulaError(f"'{deparse(node)}' is not a call; write e.g. splines::ns(x, df = 3).")
        if op in ("~",):
            raise FormulaError(
                f"'{deparse(node)}' in '{self.formula}': a formula cannot contain another '~'."
            )
        left, right = self.eval(node.args[0]), self.eval(node.args[1])
        what = deparse(node)
        if op in ("==", "!=") and (isinstance(left, (Fac, Chr)) or isinstance(right, (Fac, Chr))):
            return _compare_text(left, right, op)
        a, b = _numeric(left, what), _numeric(right, what)
        if op in _ARITH:
            with np.errstate(all="ignore"):
                return Num(_ARITH[op](a, b))
        if op in _COMPARE:
            return Num(_na_keep(_COMPARE[op](a, b), a, b), logical=True)
        if op in ("&", "&&", "|", "||"):
            return Num(_logic(a, b, op in ("&", "&&")), logical=True)
        raise FormulaError(
            f"operator '{op}' in '{what}' is not supported inside a term; "
            f"supported: + - * / ^ %% %/% == != < > <= >= & | !."
        )

    def call(self, node: Node):
        fn = node.value
        if fn.kind == "binary":
            ns = fn.args[0].value
            if ns not in _NAMESPACES:
                raise FormulaError(
                    f"'{deparse(fn)}()' in '{self.formula}' is not supported: only base, stats "
                    f"and splines functions are. Supported functions: {supported()}."
                )
        name = call_name(node)
        impl = FUNCTIONS.get(name)
        if impl is None:
            raise FormulaError(
                f"function '{name}()' in formula '{self.formula}' is not supported. "
                f"Supported functions: {supported()}. Compute the column in the data frame "
                "first, or write the arithmetic inside I()."
            )
        return impl(self, node, bind(name, node))

    def literal(self, node: Node | None, what: str, default=None):
        """A constant argument (a number, string, TRUE/FALSE or c(...) of them): :func:`constant`."""
        return constant(node, what, default)


def constant(node: Node | None, what: str, default=None):
    """A constant argument (a number, string, TRUE/FALSE or c(...) of them), read from the formula's
    text alone; ``default`` when absent, a FormulaError naming ``what`` when not a constant."""
    if node is None:
        return default
    if node.kind == "call" and call_name(node) == "c":
        return [constant(a, what) for _, a in node.args]
    if node.kind in ("num",):
        return node.value
    if node.kind == "str":
        return node.value
    if node.kind == "const" and node.value in ("TRUE", "FALSE", "NULL"):
        return {"TRUE": True, "FALSE": False, "NULL": None}[node.value]
    if node.kind == "const" and node.value == "Inf":
        return math.inf
    if node.kind == "name" and node.value in ("T", "F"):
        return node.value == "T"
    if node.kind == "unary" and node.value == "-":
        inner = constant(node.args[0], what)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    raise FormulaError(
        f"{what} must be a constant (a number, TRUE/FALSE, a string or c(...) of them), got '{deparse(node)}'."
    )


def column_value(s: pd.Series):
    """A data column as R sees it: numeric, logical, factor (categoricals) or character; a complex
    column is character, as for the schema (its entries are no real numbers) and the plain-numeric
    route (:func:`dpstats.formula.is_factor_dtype`), never its real part."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return Fac(
            np.asarray(s.cat.codes, np.int64),
            [level_label(c) for c in dtype.categories],
            ordered=bool(dtype.ordered),
        )
    if pd.api.types.is_bool_dtype(dtype):
        return Num(s.to_numpy(dtype=float, na_value=np.nan), logical=True)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return Num(s.to_numpy(dtype=float, na_value=np.nan))
    return Chr(s.to_numpy(dtype=object))


# ---------------------------------------------------------------------- arithmetic
def _numeric(v, what: str) -> np.ndarray:
    if isinstance(v, Num):
        return v.values
    if isinstance(v, Fac):
        raise FormulaError(
            f"'{what}' does arithmetic on a factor; use as.numeric() for its codes, or compare "
            'it with a level, e.g. I(f == "a").'
        )
    raise FormulaError(f"'{what}' does arithmetic on text; compare it with a value, e.g. I(s == \"a\").")


def _rmod(a, b):
    return a - np.floor(a / b) * b


_ARITH = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "^": np.power,
    "%%": _rmod,
    "%/%": lambda a, b: np.floor(a / b),
}
_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}
_CONSTANTS_VALUE = {
    "TRUE": lambda: Num(np.asarray(1.0), logical=True),
    "FALSE": lambda: Num(np.asarray(0.0), logical=True),
    "NA": lambda: Num(np.asarray(np.nan), logical=True),
    "Inf": lambda: Num(np.asarray(np.inf)),
    "NaN": lambda: Num(np.asarray(np.nan)),
    "NULL": lambda: (_ for _ in ()).throw(FormulaError("NULL cannot be a term of a formula.")),
}


def _na_keep(result, a, b):
    out = np.asarray(result, float)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, out)


def _not(a):
    return np.where(np.isnan(a), np.nan, (a == 0).astype(float))


def _logic(a, b, both: bool):
    ta, tb = a != 0, b != 0
    na_a, na_b = np.isnan(a), np.isnan(b)
    if both:
        out = (ta & tb).astype(float)
        unknown = (na_a & (tb | na_b)) | (na_b & ta)
    else:
        out = (ta | tb).astype(float)
        unknown = (na_a & ~(tb & ~na_b)) | (na_b & ~(ta & ~na_a))
    return np.where(unknown, np.nan, out)


def _compare_text(left, right, op):
    def labels(v):
        if isinstance(v, Fac):
            lev = np.asarray(v.levels + [None], dtype=object)
            return lev[np.where(v.codes < 0, len(v.levels), v.codes)]
        if isinstance(v, Chr):
            return v.values
        return np.asarray(
            [None if np.isnan(x) else format_number(float(x)) for x in np.atleast_1d(v.values)], dtype=object
        )

    a, b = labels(left), labels(right)
    missing = pd.isna(a) | pd.isna(b)
    eq = (a == b) if op == "==" else (a != b)
    return Num(np.where(missing, np.nan, np.asarray(eq, float)), logical=True)


# ---------------------------------------------------------------------- calls
_FORMALS = {
    "log": ["x", "base"],
    "poly": ["x", "degree", "raw"],
    "scale": ["x", "center", "scale"],
    "ns": ["x", "df", "knots", "intercept", "Boundary.knots"],
    "bs": ["x", "df", "knots", "degree", "intercept", "Boundary.knots"],
    "factor": ["x", "levels", "labels", "ordered"],
    "as.factor": ["x"],
    "ordered": ["x", "levels", "labels"],
    "C": ["object", "contr", "how.many", "base", "scores", "contrasts"],
    "cut": ["x", "breaks", "labels", "include.lowest", "right", "dig.lab", "ordered_result"],
    "ifelse": ["test", "yes", "no"],
    "relevel": ["x", "ref"],
    "round": ["x", "digits"],
    "mean": ["x", "na.rm"],
    "median": ["x", "na.rm"],
    "sd": ["x", "na.rm"],
    "var": ["x", "na.rm"],
    "min": ["x", "na.rm"],
    "max": ["x", "na.rm"],
}


# functions of any number of arguments (R's `...`): their named arguments, the rest in order
_DOTS = {
    "pmin": ["na.rm"],
    "pmax": ["na.rm"],
    "interaction": ["drop", "sep", "lex.order"],
    "poly": ["degree", "raw", "coefs", "simple"],
    "cbind": ["deparse.level"],
}


def _bind_dots(name: str, node: Node) -> dict:
    out: dict = {"...": tuple(a for n, a in node.args if n is None)}
    for argname, value in node.args:
        if argname is not None:
            if argname not in _DOTS[name]:
                raise FormulaError(
                    f"'{deparse(node)}': {name}() has no argument '{argname}' here; "
                    f"supported named arguments: {', '.join(_DOTS[name])}."
                )
            out[argname] = value
    if not out["..."]:
        raise FormulaError(f"'{deparse(node)}': {name}() needs at least one variable.")
    return out


def bind(name: str, node: Node) -> dict[str, Node]:
    """R's argument matching: exact names first, then positions.

    Functions with ``...`` (``pmin()``, ``interaction()``, ``poly()``) get their unnamed
    arguments, in order, under ``"..."`` (a tuple of nodes).
    """
    args = list(node.args)
    if name in _DOTS:
        return _bind_dots(name, node)
    formals = _FORMALS.get(name, ["x"])
    out: dict[str, Node] = {}
    for argname, value in args:
        if argname is not None:
            if argname not in formals:
                raise FormulaError(
                    f"'{deparse(node)}': {name}() has no argument '{argname}' here; "
                    f"supported arguments: {', '.join(formals)}."
                )
            out[argname] = value
    free = [f for f in formals if f not in out]
    positional = [value for argname, value in args if argname is None]
    if len(positional) > len(free):
        raise FormulaError(
            f"'{deparse(node)}': too many arguments for {name}(); it takes {', '.join(formals)}."
        )
    out.update(zip(free, positional))
    if "x" in formals and "x" not in out and "object" not in formals:
        raise FormulaError(f"'{deparse(node)}': {name}() needs an argument.")
    if name == "ifelse" and len(out) < 3:
        raise FormulaError(f"'{deparse(node)}': ifelse() needs test, yes and no, e.g. ifelse(x > 5, 1, 0).")
    if name == "cut" and "breaks" not in out:
        raise FormulaError(f"'{deparse(node)}': cut() needs breaks, e.g. cut(x, breaks = c(0, 10, 20, 30)).")
    return out


def _math(fn):
    def impl(ctx: Context, node: Node, args):
        x = _numeric(ctx.eval(args["x"]), deparse(node))
        with np.errstate(all="ignore"):
            return Num(fn(x))

    return impl


def _log(ctx, node, args):
    x = _numeric(ctx.eval(args["x"]), deparse(node))
    with np.errstate(all="ignore"):
        out = np.log(x)
        if "base" in args:
            out = out / np.log(_numeric(ctx.eval(args["base"]), deparse(node)))
    return Num(out)


def _round(ctx, node, args):
    x = _numeric(ctx.eval(args["x"]), deparse(node))
    return Num(np.round(x, int(ctx.literal(args.get("digits"), "digits", 0))))


def _identity(ctx, node, args):
    return ctx.eval(args["x"])


def _as_numeric(ctx, node, args):
    v = ctx.eval(args["x"])
    if isinstance(v, Fac):
        return Num(np.where(v.codes < 0, np.nan, v.codes + 1.0))
    if isinstance(v, Chr):
        return Num(pd.to_numeric(pd.Series(v.values), errors="coerce").to_numpy(float))
    return Num(v.values, colnames=v.colnames)


def _as_integer(ctx, node, args):
    v = _as_numeric(ctx, node, args)
    return Num(np.trunc(v.values))


def _as_logical(ctx, node, args):
    v = ctx.eval(args["x"])
    if isinstance(v, Fac):
        raise FormulaError(
            f"'{deparse(node)}': as.logical() of a factor is not supported; compare it with a "
            'level instead, e.g. I(f == "a").'
        )
    x = _numeric(v, deparse(node))
    return Num(np.where(np.isnan(x), np.nan, (x != 0).astype(float)), logical=True)


def _factor(ordered: bool):
    def impl(ctx, node, args):
        value = ctx.eval(args["x"])
        f = as_factor(value, deparse(node))
        levels = ctx.literal(args.get("levels"), "levels=")
        logical = isinstance(value, Num) and value.logical
        # a column whose levels levels= declares keeps them all: the schema fixes them, the rows do not
        declared = args["x"].kind == "name" and args["x"].value in ctx.declared_levels
        reads = call_name(node) == "factor" or not (isinstance(value, Fac) or logical)
        if levels is None and reads and not declared:
            ctx.step(  # factor() keeps the levels that occur; as.factor() of numbers or text reads them
                node,
                "reads its levels from the rows (which levels occur sets the design's columns)",
                "declare them: levels={'x': [...]} or factor(x, levels = c(...))",
                levels=True,
            )
        if levels is not None:
            f = _with_levels(f, _labels(levels))
        elif call_name(node) == "factor" and not declared:  # R's factor() keeps only the levels that occur
            f = drop_unused_levels(f)
        labels = ctx.literal(args.get("labels"), "labels=")
        if labels is not None:
            f = _with_labels(f, _labels(labels), node)
        as_ordered = ctx.literal(args.get("ordered"), "ordered=", None)
        return Fac(
            f.codes,
            f.levels,
            ordered=ordered or (f.ordered if as_ordered is None else bool(as_ordered)),
            read=f.read and levels is None and labels is None,  # declared levels or labels are public
        )

    return impl


def _with_levels(f: Fac, levels: list[str]) -> Fac:
    old = np.asarray(f.levels + [None], dtype=object)[np.where(f.codes < 0, len(f.levels), f.codes)]
    lookup = {lev: i for i, lev in enumerate(levels)}
    codes = np.asarray([lookup.get(v, -1) if v is not None else -1 for v in old], np.int64)
    return Fac(codes, levels, f.ordered)


def drop_unused_levels(f: Fac) -> Fac:
    """R's ``droplevels()`` of a factor: the levels no row holds removed, the others in their order.
    Contrasts set on it (``C()``) go with them, as in R's model frame (whose caller warns).

    Examples
    --------
    >>> drop_unused_levels(Fac(np.array([2, 0, -1]), ["a", "b", "c"])).levels
    ['a', 'c']
    """
    present = np.unique(f.codes[f.codes >= 0])
    if len(present) == len(f.levels):
        return f
    remap = np.full(len(f.levels) + 1, -1, np.int64)  # the last entry keeps a missing code (-1) missing
    remap[present] = np.arange(len(present))
    return Fac(remap[f.codes], [f.levels[i] for i in present], f.ordered, read=f.read)


def _labels(value) -> list[str]:
    """A constant c(...) as R's character vector: c(1, 2, "many") is "1", "2", "many"."""
    return [level_label(v) for v in (value if isinstance(value, list) else [value])]


def _with_labels(f: Fac, labels: list[str], node: Node) -> Fac:
    """R's ``factor(x, labels =)``: one label per level (equal labels merge their levels), or one
    prefix numbered over the levels."""
    k = len(f.levels)
    if len(labels) == 1 and k > 1:
        labels = [f"{labels[0]}{j}" for j in range(1, k + 1)]
    if len(labels) != k:
        raise FormulaError(
            f"'{deparse(node)}': labels= must give one label per level, or one prefix for all; "
            'declare the levels too, e.g. factor(x, levels = c(1, 2), labels = c("low", "high")).'
        )
    merged = list(dict.fromkeys(labels))
    remap = np.asarray([merged.index(lab) for lab in labels] + [-1], np.int64)
    return Fac(remap[f.codes], merged, f.ordered)


def _relevel(ctx, node, args):
    f = ctx.eval(args["x"])
    if not isinstance(f, Fac):
        raise FormulaError(f"'{deparse(node)}': relevel() needs a factor; wrap the column in factor() first.")
    ref = ctx.literal(args.get("ref"), "ref=")
    if isinstance(ref, float):
        ref = f.levels[int(ref) - 1]
    if ref not in f.levels:
        raise FormulaError(  # the levels are not listed: they may have been read from the rows
            f"'{deparse(node)}': '{ref}' is not a level of the factor; give one of its declared levels (levels=)."
        )
    order = [f.levels.index(ref)] + [i for i, lev in enumerate(f.levels) if lev != ref]
    remap = np.empty(len(order) + 1, np.int64)
    remap[np.asarray(order)] = np.arange(len(order))
    remap[-1] = -1
    return Fac(remap[f.codes], [f.levels[i] for i in order], read=f.read)


def _contrasts_arg(ctx, node, arg: Node | None):
    if arg is None:
        return None
    if arg.kind == "name" and arg.value in _SHORT_CONTRASTS:
        return ("levels", _SHORT_CONTRASTS[arg.value])
    if arg.kind == "name" and arg.value in _bases.CONTRASTS:
        return ("count", arg.value)
    if arg.kind == "str" and arg.value in _bases.CONTRASTS:
        return ("levels", arg.value)
    if arg.kind == "call" and call_name(arg) in _bases.CONTRASTS:
        return ("matrix", _contrast_call(ctx, arg))
    raise FormulaError(
        f"'{deparse(node)}': the contrasts must be one of {', '.join(_bases.CONTRASTS)} "
        f"(or treatment, sum, helmert, poly, SAS), or a call of one with constant arguments such as "
        f"contr.treatment(3, base = 2); got '{deparse(arg)}'."
    )


_CONTR_FORMALS = {
    "contr.treatment": ["n", "base", "contrasts", "sparse"],
    "contr.SAS": ["n", "contrasts", "sparse"],
    "contr.sum": ["n", "contrasts", "sparse"],
    "contr.helmert": ["n", "contrasts", "sparse"],
    "contr.poly": ["n", "scores", "contrasts", "sparse"],
}


def _contrast_call(ctx, call: Node) -> ContrastMatrix:
    """``contr.treatment(3, base = 2)`` and the like, with constant arguments: R's matrix and column names."""
    name = call_name(call)
    formals = _CONTR_FORMALS[name]
    out: dict[str, Node] = {}
    for argname, value in call.args:
        if argname is not None:
            if argname not in formals:
                raise FormulaError(
                    f"'{deparse(call)}': {name}() has no argument '{argname}'; it takes {', '.join(formals)}."
                )
            out[argname] = value
    free = [f for f in formals if f not in out]
    positional = [a for n, a in call.args if n is None]
    if len(positional) > len(free):
        raise FormulaError(f"'{deparse(call)}': too many arguments for {name}().")
    out.update(zip(free, positional))
    if "n" not in out:
        raise FormulaError(
            f"'{deparse(call)}': {name}() needs the number of levels (or the levels), e.g. {name}(3)."
        )
    n = ctx.literal(out["n"], f"the levels of {name}()")
    if isinstance(n, float):
        if n != int(n) or n < 2:
            raise FormulaError(f"'{deparse(call)}': the number of levels must be a whole number >= 2.")
        levels = [str(j) for j in range(1, int(n) + 1)]
    else:
        levels = _labels(n)
    base = ctx.literal(out.get("base"), "base=", 1.0)
    contrasts = bool(ctx.literal(out.get("contrasts"), "contrasts=", True))
    if bool(ctx.literal(out.get("sparse"), "sparse=", False)):
        raise FormulaError(
            f"'{deparse(call)}': sparse = TRUE is not supported; leave it out (the values are the same)."
        )
    scores = ctx.literal(out.get("scores"), "scores=")
    try:
        values, names = _bases.contrast_function(name, levels, int(base), contrasts, scores)
    except DataError as exc:  # arguments only: a formula error, not a fact about the data
        raise FormulaError(f"'{deparse(call)}': {exc}") from None
    return ContrastMatrix(values, names)  # rows by position, as R's contrasts<- takes them


def contrast_spec(value, where: str) -> tuple:
    """A declared contrasts value (R's ``contrasts(f) <-``, ``lm(contrasts = list(f = ...))``) as a spec.

    A name (``"contr.sum"`` or ``"sum"``) is applied to the factor's levels, as R applies one;
    a matrix (a pandas DataFrame whose index holds the levels and whose columns name the
    design's columns, or any 2-D array: columns numbered) is used as it is, one row per level.

    Examples
    --------
    >>> contrast_spec("sum", "contrasts=")
    ('levels', 'contr.sum')
    >>> contrast_spec([[1, 0], [0, 1], [-1, -1]], "contrasts=")[1].values.shape
    (3, 2)
    """
    if isinstance(value, str):
        name = _SHORT_CONTRASTS.get(value, value)
        if name not in _bases.CONTRASTS:
            raise FormulaError(
                f"{where}: contrasts '{value}' are not one dpstats knows ({', '.join(_bases.CONTRASTS)}). "
                f"Give the matrix itself, one row per level: contrasts(f) <- {value}(levels(f)) on the factor "
                "in R (dpstats sends the matrix), or use one of those names."
            )
        return ("levels", name)
    names = rows = None
    if isinstance(value, pd.DataFrame):
        if not isinstance(value.columns, pd.RangeIndex):
            names = [str(c) for c in value.columns]
        if not isinstance(value.index, pd.RangeIndex):
            rows = [str(i) for i in value.index]
        value = value.to_numpy()
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        m = np.empty(0)
    if m.ndim != 2 or m.shape[1] < 1 or not np.isfinite(m).all():
        raise FormulaError(
            f"{where}: contrasts must be a name such as 'contr.sum' or a finite numeric matrix with one row "
            "per level and at least one column."
        )
    return ("matrix", ContrastMatrix(m, names, rows, how_many=m.shape[1]))


def _C(ctx, node, args):
    value = ctx.eval(args["object"])
    if not isinstance(value, Fac) and not (isinstance(value, Num) and value.logical):
        _levels_read(ctx, node, args["object"], value)
    # newdata: the fit's levels before the contrasts are made (their size is the number of levels)
    f = ctx.fit_levels(node, as_factor(value, deparse(node)))
    spec = _contrasts_arg(ctx, node, args.get("contr"))
    if spec is None:  # R: getOption("contrasts"), by name
        spec = ("levels", ctx.default_contrasts[1 if f.ordered else 0])
    how_many = ctx.literal(args.get("how.many"), "how.many=")
    extra = {k: args[k] for k in ("base", "scores", "contrasts") if k in args}
    if extra and spec[0] != "matrix":  # C(f, contr.treatment, base = 2): R calls contr(nlevels(f), base = 2)
        values, names = _bases.contrast_function(
            spec[1],
            [str(j) for j in range(1, len(f.levels) + 1)],
            int(ctx.literal(extra.get("base"), "base=", 1.0)),
            bool(ctx.literal(extra.get("contrasts"), "contrasts=", True)),
            ctx.literal(extra.get("scores"), "scores="),
        )
        spec = ("matrix", ContrastMatrix(values, names))
    if how_many is not None:
        if not isinstance(how_many, float) or how_many < 1 or how_many != int(how_many):
            raise FormulaError(f"'{deparse(node)}': how.many must be a whole number >= 1.")
        if spec[0] == "matrix":
            spec = ("matrix", ContrastMatrix(spec[1].values, spec[1].names, spec[1].rows, int(how_many)))
        else:  # R calls the function on the number of levels, then keeps how.many columns
            values, names = _bases.contrast_function(spec[1], [str(j) for j in range(1, len(f.levels) + 1)])
            spec = ("matrix", ContrastMatrix(values, names, None, int(how_many)))
    return Fac(f.codes, f.levels, f.ordered, spec, read=f.read)


def _levels_read(ctx, node: Node, inner: Node, value) -> None:
    """C() of numbers or of text made in the formula: its levels are the values that occur in the rows, a
    named step (a text column's own levels are the schema's step, named there)."""
    if isinstance(value, Chr) and inner.kind == "name":
        return
    ctx.step(
        node,
        "reads its levels from the rows (which levels occur sets the design's columns)",
        "declare them: levels={'x': [...]} for a column x, or C(factor(x, levels = c(...)))",
        levels=True,
    )


def _poly(ctx, node, args):
    dots = list(args["..."])
    degree_node = args.get("degree")
    if (
        len(dots) == 2 and dots[1].kind == "num" and degree_node is None
    ):  # poly(x, 2): R reads 2 as the degree
        degree_node = dots.pop()
    degree = ctx.literal(degree_node, "the degree of poly()", 1.0)
    raw = bool(ctx.literal(args.get("raw"), "raw=", False))
    if "coefs" in args:
        raise FormulaError(
            f"'{deparse(node)}': coefs= is not supported; use raw polynomials, poly(x, {degree:g}, raw = TRUE)."
        )
    if not isinstance(degree, float) or degree < 1 or degree != int(degree):
        raise FormulaError(f"'{deparse(node)}': the degree must be a whole number >= 1.")
    degree = int(degree)
    xs = [_vector(ctx.eval(a), deparse(node)) for a in dots]
    bases = _poly_bases(ctx, node, xs, degree, raw, ", ".join(deparse(a) for a in dots))
    if len(xs) == 1:
        return Num(bases[0], colnames=[str(j) for j in range(1, degree + 1)])
    # R's polym(): every product of powers of total degree 1..degree, the first variable varying fastest
    grid = [()]
    for _ in xs:
        grid = [g + (p,) for p in range(degree + 1) for g in grid]
    powers = [g for g in grid if 0 < sum(g) <= degree]
    n = len(xs[0])
    out = np.ones((n, len(powers)))
    for i, b in enumerate(bases):
        full = np.column_stack([np.ones(n), b])
        out *= full[:, [g[i] for g in powers]]
    return Num(out, colnames=[".".join(str(p) for p in g) for g in powers])


def _poly_bases(ctx, node, xs: list[np.ndarray], degree: int, raw: bool, shown: str) -> list[np.ndarray]:
    """Each variable's polynomials: raw powers; orthogonal ones by R's QR on the fit's rows (their
    recurrence coefficients kept in ``ctx.predvars``), by that recurrence on newdata (R's predict)."""
    if raw:
        return [_bases.poly(x, degree, True) for x in xs]
    fitted: list[np.ndarray] = []

    def from_rows() -> tuple:
        pairs = [_bases.poly_fit(x, degree, False) for x in xs]
        fitted.extend(b for b, _ in pairs)
        return tuple(c for _, c in pairs)

    coefs = ctx.basis(
        node,
        "builds orthogonal polynomials from the data's mean and spread",
        f"use raw polynomials, poly({shown}, {'' if len(xs) == 1 else 'degree = '}{degree}, raw = TRUE), "
        "or I(x^2)",
        from_rows,
    )
    return fitted or [_bases.poly_at(x, c) for x, c in zip(xs, coefs)]


def _cut(ctx, node, args):
    """R's ``cut()``: a factor of intervals, levels named as R names them (``(0,10]``)."""
    x = _vector(ctx.eval(args["x"]), deparse(node))
    breaks = ctx.literal(args["breaks"], "breaks= of cut()")
    right = bool(ctx.literal(args.get("right"), "right=", True))
    lowest = bool(ctx.literal(args.get("include.lowest"), "include.lowest=", False))
    dig = ctx.literal(args.get("dig.lab"), "dig.lab=", 3.0)
    ordered = bool(ctx.literal(args.get("ordered_result"), "ordered_result=", False))
    labels = ctx.literal(args.get("labels"), "labels=")
    if isinstance(breaks, str) or (isinstance(breaks, list) and any(isinstance(b, str) for b in breaks)):
        raise FormulaError(f"'{deparse(node)}': breaks must be numbers, e.g. breaks = c(0, 10, 20).")
    b = np.atleast_1d(np.asarray(breaks, float))
    b_read = b.size == 1
    if b_read:
        nb = int(b[0])
        if nb < 2 or nb != b[0]:
            raise FormulaError(f"'{deparse(node)}': a number of breaks must be a whole number >= 2.")
        ctx.step(
            node,
            "places its breaks at the data's range (cut() with a number of intervals reads the range)",
            "declare the breaks, e.g. cut(x, breaks = c(lo, ..., hi)), from public knowledge of x",
        )
        ok = x[np.isfinite(x)]
        lo, hi = (float(ok.min()), float(ok.max())) if ok.size else (0.0, 0.0)
        dx = hi - lo
        if dx == 0:
            dx = abs(lo) if lo != 0 else 1.0
            b = _seq(lo - dx / 1000, hi + dx / 1000, nb + 1)
        else:
            b = _seq(lo, hi, nb + 1)
            b[0], b[-1] = lo - dx / 1000, hi + dx / 1000
    else:
        b = np.sort(b)
        if np.unique(b).size < b.size:
            raise FormulaError(
                f"'{deparse(node)}': the breaks are not unique (as R says); remove repeated breaks."
            )
    nb = b.size
    if right:
        codes = np.searchsorted(b, x, side="left") - 1
        if lowest:
            codes[x == b[0]] = 0
    else:
        codes = np.searchsorted(b, x, side="right") - 1
        if lowest:
            codes[x == b[-1]] = nb - 2
    codes = np.where(np.isnan(x) | (codes < 0) | (codes > nb - 2), -1, codes).astype(np.int64)
    if labels is False:
        return Num(np.where(codes < 0, np.nan, codes + 1.0))
    if labels is None or labels is True:
        levels = _interval_labels(b, right, lowest, int(dig))
    else:
        levels = _labels(labels)
        if len(levels) != nb - 1:
            raise FormulaError(
                f"'{deparse(node)}': labels= gives {len(levels)} label(s) for {nb - 1} interval(s); "
                "give one label per interval (as R requires)."
            )
    f = _with_labels(Fac(codes, [str(j) for j in range(nb - 1)]), levels, node)
    # a number of breaks: the labels print the data's range (a private frame names them by position)
    return Fac(f.codes, f.levels, ordered, read=b_read and (labels is None or labels is True))


def _seq(start: float, stop: float, length: int) -> np.ndarray:
    """R's ``seq.int(from, to, length.out =)`` (R 4.2's C code: ``from + i * by``)."""
    by = (stop - start) / (length - 1)
    out = start + np.arange(length) * by
    out[-1] = stop
    return out


def _format_g(v: float, digits: int) -> str:
    """R's ``formatC(v, digits = d, width = 1)``: C's ``%.<d>g``."""
    if math.isinf(v):  # formatC pads non-finite numbers to 4 characters: " Inf" (R's "(3, Inf]")
        return " Inf" if v > 0 else "-Inf"
    return f"{v + 0.0:.{digits}g}"


def _interval_labels(b: np.ndarray, right: bool, lowest: bool, dig: int) -> list[str]:
    """cut()'s level names: the fewest digits (from dig.lab, up to 12) that tell the breaks apart."""
    nb = b.size
    for d in range(dig, max(12, dig) + 1):
        ch = [_format_g(float(v), d) for v in b]
        ok = all(ch[i] != ch[i + 1] for i in range(nb - 1))
        if ok:
            break
    if not ok:
        return [f"Range_{j}" for j in range(1, nb)]
    left, close = ("(", "]") if right else ("[", ")")
    labels = [f"{left}{ch[i]},{ch[i + 1]}{close}" for i in range(nb - 1)]
    if lowest:
        if right:
            labels[0] = "[" + labels[0][1:]
        else:
            labels[-1] = labels[-1][:-1] + "]"
    return labels


def _parallel(fn, fn_na_rm):
    def impl(ctx, node, args):
        na_rm = bool(ctx.literal(args.get("na.rm"), "na.rm=", False))
        values = [_numeric(ctx.eval(a), deparse(node)) for a in args["..."]]
        if any(v.ndim > 1 for v in values):
            raise FormulaError(f"'{deparse(node)}': {call_name(node)}() needs vectors, not matrices.")
        out = values[0]
        for v in values[1:]:
            out = (fn_na_rm if na_rm else fn)(out, v)
        return Num(np.asarray(out, float))

    return impl


def _ifelse(ctx, node, args):
    """R's ``ifelse(test, yes, no)``, row by row; text values give text (a factor in the design)."""
    test = _numeric(ctx.eval(args["test"]), deparse(node))
    yes, no = ctx.eval(args["yes"]), ctx.eval(args["no"])
    if isinstance(yes, Fac) or isinstance(no, Fac):
        raise FormulaError(
            f"'{deparse(node)}': ifelse() of factor values gives their integer codes in R; "
            'use as.character() on them, or compare levels, e.g. ifelse(f == "a", 1, 0).'
        )
    if isinstance(yes, Num) and yes.values.ndim > 1 or isinstance(no, Num) and no.values.ndim > 1:
        raise FormulaError(f"'{deparse(node)}': ifelse() needs vectors, not matrices.")
    missing = np.isnan(test)
    pick = np.where(missing, False, test != 0)
    if isinstance(yes, Chr) or isinstance(no, Chr):

        def text(v):
            if isinstance(v, Chr):
                return v.values
            return np.asarray(
                [
                    None if np.isnan(z) else (level_label(bool(z)) if v.logical else format_number(float(z)))
                    for z in np.atleast_1d(v.values)
                ],
                dtype=object,
            )

        a, b, p, m = np.broadcast_arrays(text(yes), text(no), pick, missing)
        out = np.where(p, a, b).astype(object)
        out[m] = None
        # numbers of the rows written as text: their labels are values read (Fac.read)
        return Chr(out, read=any(isinstance(v, Num) and np.ndim(v.values) > 0 for v in (yes, no)))
    out = np.where(pick, yes.values, no.values).astype(float)
    out = np.where(missing, np.nan, out)
    return Num(out, logical=yes.logical and no.logical)


def _interaction(ctx, node, args):
    """R's ``interaction(a, b, ...)``: levels of every combination, the first factor varying fastest."""
    drop = bool(ctx.literal(args.get("drop"), "drop=", False))
    sep = ctx.literal(args.get("sep"), "sep=", ".")
    lex = bool(ctx.literal(args.get("lex.order"), "lex.order=", False))
    factors = []
    for a in args["..."]:
        v = ctx.eval(a)
        if isinstance(v, Num) or isinstance(v, Chr) and a.kind != "name":
            ctx.step(
                node,
                "reads the levels of a non-factor argument from the rows (as.factor())",
                "give factors with declared levels, e.g. interaction(factor(x, levels = c(...)), f)",
                levels=True,
            )
        f = as_factor(v, deparse(node))
        if isinstance(v, Num) and v.logical:  # as.factor() of a logical keeps the values that occur
            f = drop_unused_levels(f)
        # a private frame names a part's levels read as values by position (level1.a, level2.a, ...)
        factors.append(positional_levels(f) if ctx.private and f.read else f)
    codes, levels = factors[-1].codes.copy(), list(factors[-1].levels)
    for f in reversed(factors[:-1]):
        k, ll = len(f.levels), len(levels)
        missing = (codes < 0) | (f.codes < 0)
        if lex:
            codes = codes + ll * f.codes
            levels = [f"{a}{sep}{b}" for a in f.levels for b in levels]
        else:
            codes = codes * k + f.codes
            levels = [f"{a}{sep}{b}" for b in levels for a in f.levels]
        codes[missing] = -1
    if len(set(levels)) < len(levels):
        raise FormulaError(
            f"'{deparse(node)}': two combinations get the same level name; choose another separator, e.g. sep = \":\"."
        )
    read = any(f.read for f in factors)  # a combination's label holds each part's
    if drop:
        ctx.step(
            node,
            "keeps only the combinations that occur (drop = TRUE)",
            "leave drop = FALSE (every combination of the declared levels is a column)",
            levels=True,
        )
        return drop_unused_levels(Fac(codes, levels, read=read))
    return Fac(codes, levels, read=read)


def _cbind(ctx, node, args):
    lhs = ctx.formula.split("~", 1)[0]
    if deparse(node) in lhs or "cbind(" in lhs:
        raise FormulaError(
            f"'{deparse(node)}' on the left of '~' (a binomial response of counts) is dp_glm's alone: this "
            'method takes one response column. Fit it with dp_glm(..., family = "binomial"), which clips each '
            "row's counts to their declared bounds, or give one row per trial with a 0/1 response."
        )
    raise FormulaError(
        f"'{deparse(node)}': cbind() is not supported as a term; add the columns as terms, e.g. a + b."
    )


def _spline(kind: str):
    def impl(ctx, node, args):
        x = _vector(ctx.eval(args["x"]), deparse(node))
        df = ctx.literal(args.get("df"), "df=")
        knots = ctx.literal(args.get("knots"), "knots=")
        boundary = ctx.literal(args.get("Boundary.knots"), "Boundary.knots=")
        intercept = bool(ctx.literal(args.get("intercept"), "intercept=", False))
        knots = None if knots is None else np.atleast_1d(np.asarray(knots, float))
        if boundary is not None and np.size(boundary) != 2:
            raise FormulaError(f"'{deparse(node)}': Boundary.knots must be two numbers, c(lo, hi).")
        degree = int(ctx.literal(args.get("degree"), "degree=", 3.0)) if kind == "bs" else 3
        from_rows = boundary is None or (knots is None and df is not None)
        if boundary is not None and float(np.ptp(np.asarray(boundary, float))) == 0:
            raise FormulaError(f"'{deparse(node)}': Boundary.knots must be two different numbers, c(lo, hi).")
        if from_rows:  # knots from the rows (R's predvars keep them)
            knots, boundary = ctx.basis(
                node,
                "places its knots at quantiles of the data and its boundary knots at the data's range",
                f"declare public knots, e.g. {kind}(x, knots = c(...), Boundary.knots = c(lo, hi))",
                lambda: _bases.spline_knots(kind, x, df, knots, degree, intercept, boundary),
            )
            df = None
        try:
            if kind == "ns":
                values = _bases.ns(x, df, knots, intercept, boundary)
            else:
                values = _bases.bs(x, df, knots, degree, intercept, boundary)
        except ValueError:  # scipy's, on knots that span no interval: the rows' range when read from them
            raise _no_spline_basis(node, kind, from_rows) from None
        return Num(values, colnames=[str(j) for j in range(1, values.shape[1] + 1)])

    return impl


def _no_spline_basis(node: Node, kind: str, from_rows: bool) -> DPStatsError:
    """The error for knots that give no spline basis (their boundary knots coincide): a DataError when the
    knots were read from the rows (x takes one value there; whether it occurs depends on the rows, so the
    front door adds the step it follows), a FormulaError when the formula wrote them.  Neither shows a
    knot or a value."""
    fix = f"declare public knots, e.g. {kind}(x, knots = c(...), Boundary.knots = c(lo, hi)) with lo < hi"
    if from_rows:
        return DataError(
            f"'{deparse(node)}' has no spline basis on these rows: the boundary knots it reads from the rows "
            f"(the range of its argument) coincide; {fix}."
        )
    return FormulaError(f"'{deparse(node)}': these knots give no spline basis; {fix}.")


def _scale(ctx, node, args):
    x = _vector(ctx.eval(args["x"]), deparse(node))
    center = ctx.literal(args.get("center"), "center=", True)
    scale_ = ctx.literal(args.get("scale"), "scale=", True)
    if center is True or scale_ is True:  # the mean and sd of the rows (R's predvars keep them)
        return Num(
            _bases.scale_at(
                x,
                ctx.basis(
                    node,
                    "centres or scales by the data's mean and standard deviation",
                    "centre and scale by public constants, e.g. scale(x, center = 5, scale = 2) or I((x - 5)/2)",
                    lambda: _bases.scale_parameters(x, center, scale_),
                ),
            )
        )
    return Num(_bases.scale(x, center, scale_))


def _summary(fn):
    def impl(ctx, node, args):
        x = _vector(ctx.eval(args["x"]), deparse(node))
        if bool(ctx.literal(args.get("na.rm"), "na.rm=", False)):
            x = x[~np.isnan(x)]
        ctx.step(
            node,
            "is computed from the data as a whole (e.g. centring by the data's mean)",
            "use a public constant in its place",
        )
        return Num(np.asarray(fn(x) if len(x) else np.nan))

    return impl


def _offset(ctx, node, args):
    return Num(_vector(ctx.eval(args["x"]), deparse(node)))


def _c(ctx, node, args):
    raise FormulaError(f"'{deparse(node)}': c() is only for constant arguments such as knots = c(2, 4).")


FUNCTIONS = {
    "I": _identity,
    "log": _log,
    "log2": _math(np.log2),
    "log10": _math(np.log10),
    "log1p": _math(np.log1p),
    "exp": _math(np.exp),
    "expm1": _math(np.expm1),
    "sqrt": _math(np.sqrt),
    "abs": _math(np.abs),
    "sin": _math(np.sin),
    "cos": _math(np.cos),
    "tan": _math(np.tan),
    "asin": _math(np.arcsin),
    "acos": _math(np.arccos),
    "atan": _math(np.arctan),
    "sinh": _math(np.sinh),
    "cosh": _math(np.cosh),
    "tanh": _math(np.tanh),
    "floor": _math(np.floor),
    "ceiling": _math(np.ceil),
    "trunc": _math(np.trunc),
    "sign": _math(np.sign),
    "round": _round,
    "as.numeric": _as_numeric,
    "as.double": _as_numeric,
    "as.integer": _as_integer,
    "as.logical": _as_logical,
    "factor": _factor(False),
    "as.factor": _factor(False),
    "ordered": _factor(True),
    "as.ordered": _factor(True),
    "relevel": _relevel,
    "C": _C,
    "cut": _cut,
    "pmin": _parallel(np.minimum, np.fmin),
    "pmax": _parallel(np.maximum, np.fmax),
    "ifelse": _ifelse,
    "interaction": _interaction,
    "cbind": _cbind,
    "poly": _poly,
    "ns": _spline("ns"),
    "bs": _spline("bs"),
    "scale": _scale,
    "mean": _summary(np.mean),
    "median": _summary(np.median),
    "sd": _summary(lambda v: np.std(v, ddof=1)),
    "var": _summary(lambda v: np.var(v, ddof=1)),
    "min": _summary(np.min),
    "max": _summary(np.max),
    "offset": _offset,
    "c": _c,
}


def supported() -> str:
    """The supported functions, for error messages (offset() apart: few fits take it)."""
    listed = ", ".join(f"{n}()" for n in FUNCTIONS if n not in ("c", "cbind", "offset"))
    return f"{listed}; offset() only where the fit honours it (dp_lm and dp_glm at eps = inf, vertical_glm without eps)"


def referenced_columns(node: Node, columns) -> list[str]:
    """Data columns an expression reads (contrast names inside C() are not columns); ``columns`` None:
    every name it reads, as a column of any data would be."""
    if node.kind == "name":
        return [node.value] if columns is None or node.value in columns else []
    if node.kind == "call":
        args = node.args[:1] if call_name(node) == "C" else node.args
        return [c for _, a in args for c in referenced_columns(a, columns)]
    if node.kind == "binary" and node.value == "::":
        return []
    return [c for a in node.args for c in referenced_columns(a, columns)]
