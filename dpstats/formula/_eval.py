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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import FormulaError
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
class Fac:
    """A factor: integer codes (-1 missing), level labels, contrasts set by ``C()``."""

    codes: np.ndarray
    levels: list[str]
    ordered: bool = False
    contrasts: tuple[str, str] | None = None  # ("levels" | "count", "contr.xxx")


@dataclass
class Chr:
    """A character vector (a string column or literal); a factor once it enters the design."""

    values: np.ndarray


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
        return Fac(cat.codes.astype(np.int64), [str(c) for c in cat.categories])
    x = _vector(v, what)
    if v.logical:
        return Fac(np.where(np.isnan(x), -1, x).astype(np.int64), ["FALSE", "TRUE"])
    ok = ~np.isnan(x)
    uniq = np.unique(x[ok])
    codes = np.full(len(x), -1, np.int64)
    codes[ok] = np.searchsorted(uniq, x[ok])
    return Fac(codes, [format_number(float(u)) for u in uniq])


def _vector(v, what: str) -> np.ndarray:
    if isinstance(v, Num) and v.values.ndim <= 1:
        return v.values
    kind = "a factor" if isinstance(v, Fac) else "text" if isinstance(v, Chr) else "a matrix"
    raise FormulaError(f"{what} needs a numeric vector, but its argument is {kind}.")


@dataclass
class Context:
    """Data, formula text (for messages) and the data-dependent steps found so far."""

    data: pd.DataFrame
    formula: str
    steps: list[tuple[str, str]] = field(default_factory=list)
    unknown: object = None  # callable(name) -> FormulaError
    # terms whose levels (hence design columns) are read from the rows: a schema step, not a value
    # that depends on all rows (predict() can recode them by the fit's levels)
    level_steps: list[tuple[str, str]] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.data)

    def step(self, node: Node, what: str, fix: str, levels: bool = False) -> None:
        entry = (f"the formula term {deparse(node)} {what}", fix)
        steps = self.level_steps if levels else self.steps
        if entry not in steps:
            steps.append(entry)

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
        """A constant argument (a number, string, TRUE/FALSE or c(...) of them)."""
        if node is None:
            return default
        if node.kind == "call" and call_name(node) == "c":
            return [self.literal(a, what) for _, a in node.args]
        if node.kind in ("num",):
            return node.value
        if node.kind == "str":
            return node.value
        if node.kind == "const" and node.value in ("TRUE", "FALSE", "NULL"):
            return {"TRUE": True, "FALSE": False, "NULL": None}[node.value]
        if node.kind == "name" and node.value in ("T", "F"):
            return node.value == "T"
        if node.kind == "unary" and node.value == "-":
            inner = self.literal(node.args[0], what)
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return -inner
        raise FormulaError(
            f"{what} must be a constant (a number, TRUE/FALSE, a string or c(...) of them), "
            f"got '{deparse(node)}'."
        )


def column_value(s: pd.Series):
    """A data column as R sees it: numeric, logical, factor (categoricals) or character."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return Fac(
            np.asarray(s.cat.codes, np.int64),
            [level_label(c) for c in dtype.categories],
            ordered=bool(dtype.ordered),
        )
    if pd.api.types.is_bool_dtype(dtype):
        return Num(s.to_numpy(dtype=float, na_value=np.nan), logical=True)
    if pd.api.types.is_numeric_dtype(dtype):
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
    "factor": ["x", "levels", "ordered"],
    "ordered": ["x", "levels"],
    "C": ["object", "contr"],
    "relevel": ["x", "ref"],
    "round": ["x", "digits"],
    "mean": ["x", "na.rm"],
    "median": ["x", "na.rm"],
    "sd": ["x", "na.rm"],
    "var": ["x", "na.rm"],
    "min": ["x", "na.rm"],
    "max": ["x", "na.rm"],
}


def bind(name: str, node: Node) -> dict[str, Node]:
    """R's argument matching: exact names first, then positions."""
    formals = _FORMALS.get(name, ["x"])
    args = list(node.args)
    unnamed = [a for n, a in args if n is None]
    if name == "poly" and (len(unnamed) > 2 or (len(unnamed) == 2 and unnamed[1].kind != "num")):
        raise FormulaError(
            f"'{deparse(node)}': poly() of several variables is not supported; "
            "use poly(x, degree) of one variable."
        )
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
        if levels is None and (call_name(node) == "factor" or not (isinstance(value, Fac) or logical)):
            ctx.step(  # factor() keeps the levels that occur; as.factor() of numbers or text reads them
                node,
                "reads its levels from the rows (which levels occur sets the design's columns)",
                "declare them: factor(x, levels = c(...)), or levels= for a text column",
                levels=True,
            )
        if levels is not None:
            f = _with_levels(f, [level_label(v) for v in np.atleast_1d(levels).tolist()])
        elif call_name(node) == "factor":  # R's factor() keeps only the levels that occur
            present = np.unique(f.codes[f.codes >= 0])
            f = _with_levels(f, [f.levels[i] for i in present]) if len(present) < len(f.levels) else f
        as_ordered = ctx.literal(args.get("ordered"), "ordered=", None)
        return Fac(
            f.codes, f.levels, ordered=ordered or (f.ordered if as_ordered is None else bool(as_ordered))
        )

    return impl


def _with_levels(f: Fac, levels: list[str]) -> Fac:
    old = np.asarray(f.levels + [None], dtype=object)[np.where(f.codes < 0, len(f.levels), f.codes)]
    lookup = {lev: i for i, lev in enumerate(levels)}
    codes = np.asarray([lookup.get(v, -1) if v is not None else -1 for v in old], np.int64)
    return Fac(codes, levels, f.ordered)


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
    return Fac(remap[f.codes], [f.levels[i] for i in order])


def _contrasts_arg(ctx, node, arg: Node | None):
    if arg is None:
        return None
    if arg.kind == "name" and arg.value in _SHORT_CONTRASTS:
        return ("levels", _SHORT_CONTRASTS[arg.value])
    if arg.kind == "name" and arg.value in _bases.CONTRASTS:
        return ("count", arg.value)
    if arg.kind == "str" and arg.value in _bases.CONTRASTS:
        return ("levels", arg.value)
    raise FormulaError(
        f"'{deparse(node)}': the contrasts must be one of {', '.join(_bases.CONTRASTS)} "
        f"(or treatment, sum, helmert, poly, SAS), got '{deparse(arg)}'."
    )


def _C(ctx, node, args):
    f = as_factor(ctx.eval(args["object"]), deparse(node))
    spec = _contrasts_arg(ctx, node, args.get("contr"))
    if spec is None:
        spec = ("levels", "contr.poly" if f.ordered else "contr.treatment")
    return Fac(f.codes, f.levels, f.ordered, spec)


def _poly(ctx, node, args):
    x = _vector(ctx.eval(args["x"]), deparse(node))
    degree = ctx.literal(args.get("degree"), "the degree of poly()", 1)
    raw = bool(ctx.literal(args.get("raw"), "raw=", False))
    if not isinstance(degree, float) or degree < 1 or degree != int(degree):
        raise FormulaError(f"'{deparse(node)}': the degree must be a whole number >= 1.")
    if not raw:
        ctx.step(
            node,
            "builds orthogonal polynomials from the data's mean and spread",
            f"use raw polynomials, poly({deparse(args['x'])}, {int(degree)}, raw = TRUE), or I(x^2)",
        )
    values = _bases.poly(x, int(degree), raw)
    return Num(values, colnames=[str(j) for j in range(1, int(degree) + 1)])


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
        if boundary is None or (knots is None and df is not None):
            ctx.step(
                node,
                "places its knots at quantiles of the data and its boundary knots at the data's range",
                f"declare public knots, e.g. {kind}(x, knots = c(...), Boundary.knots = c(lo, hi))",
            )
        if kind == "ns":
            values = _bases.ns(x, df, knots, intercept, boundary)
        else:
            degree = ctx.literal(args.get("degree"), "degree=", 3.0)
            values = _bases.bs(x, df, knots, degree, intercept, boundary)
        return Num(values, colnames=[str(j) for j in range(1, values.shape[1] + 1)])

    return impl


def _scale(ctx, node, args):
    x = _vector(ctx.eval(args["x"]), deparse(node))
    center = ctx.literal(args.get("center"), "center=", True)
    scale_ = ctx.literal(args.get("scale"), "scale=", True)
    if center is True or scale_ is True:
        ctx.step(
            node,
            "centres or scales by the data's mean and standard deviation",
            "centre and scale by public constants, e.g. scale(x, center = 5, scale = 2) or I((x - 5)/2)",
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
    """The supported functions, for error messages."""
    return ", ".join(f"{n}()" for n in FUNCTIONS if n != "c")


def referenced_columns(node: Node, columns) -> list[str]:
    """Data columns an expression reads (contrast names inside C() are not columns)."""
    if node.kind == "name":
        return [node.value] if node.value in columns else []
    if node.kind == "call":
        args = node.args[:1] if call_name(node) == "C" else node.args
        return [c for _, a in args for c in referenced_columns(a, columns)]
    if node.kind == "binary" and node.value == "::":
        return []
    return [c for a in node.args for c in referenced_columns(a, columns)]
