"""Declared public bounds, clipping and scaling (docs/architecture.md, "Privacy conventions").

Bounds are declared, never guessed silently: ``bounds=(lo, hi)`` for every
variable, or ``bounds={"x1": (lo, hi), ...}`` per variable (data column or
design column name).  Dummy columns of factors are bounded by their coding's range
((0, 1) for treatment dummies) without a declaration.  A column of an interaction, the
elementwise product of its parts' columns (R's ``model.matrix``), is bounded without a
declaration by the product of its parts' intervals (interval arithmetic,
[a, b]·[c, d] = [min(ac, ad, bc, bd), max(...)]) when every part has a public bound: a
numeric part its declared (lo, hi), a factor part its coding's range.  The derivation reads
public inputs only (the bounds, the formula, the coding), never the rows.  A bound declared
for the interaction's column itself wins.  Values outside are clipped; how many were clipped
is not released.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import PrivacyParameterError

BoundsSpec = tuple[float, float] | Mapping[str, tuple[float, float]] | None


@dataclass
class Box:
    """Per-column public bounds ``lo <= x <= hi`` as arrays."""

    lo: np.ndarray
    hi: np.ndarray

    @property
    def center(self) -> np.ndarray:
        return (self.lo + self.hi) / 2

    @property
    def halfwidth(self) -> np.ndarray:
        return (self.hi - self.lo) / 2


class ScaleBox(Box):
    """The box [−M, M] of each column's max-abs M: centre 0 and half-width M exactly, so a pass maps x to
    x/M (the generic (hi − lo)/2 overflows for M above half the largest double)."""

    @property
    def center(self) -> np.ndarray:
        return np.zeros_like(self.hi)

    @property
    def halfwidth(self) -> np.ndarray:
        return self.hi


def maxabs_box(maxabs) -> ScaleBox:
    """:class:`ScaleBox` of the max-abs values ``maxabs``; a column whose M is 0 (all zeros: x/1 = 0) or
    not finite (a frame about to be rebuilt without its non-finite values) gets [−1, 1].

    Examples
    --------
    >>> b = maxabs_box([1e308, 0.0, 2.0])
    >>> b.center.tolist(), b.halfwidth.tolist()
    ([0.0, 0.0, 0.0], [1e+308, 1.0, 2.0])
    """
    m = np.atleast_1d(np.asarray(maxabs, dtype=float))
    m = np.where(np.isfinite(m) & (m > 0), m, 1.0)
    return ScaleBox(-m, m)


def _pair(name: str, value) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise PrivacyParameterError(
            f"bounds for '{name}' must be a pair (lo, hi) of numbers, got {value!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise PrivacyParameterError(f"bounds for '{name}' must be finite with lo < hi, got ({lo}, {hi}).")
    return lo, hi


def check_bounds_form(bounds: BoundsSpec) -> None:
    """Refuse a ``bounds`` argument that is not a pair or a mapping of pairs with finite lo < hi.

    For doors that accept bounds they may not use (so they never reach
    :func:`resolve_box`): a malformed value is still bad input, refused before
    anything is spent.  Completeness of a mapping is checked where it is used.

    Examples
    --------
    >>> check_bounds_form({"x": (0, 1)})
    """
    if bounds is None:
        return
    if isinstance(bounds, Mapping):
        for name, pair in bounds.items():
            _pair(str(name), pair)
        return
    _pair("all columns", bounds)


def _refuse_missing(
    missing: list[str],
    shown: Mapping[str, str],
    interaction: bool = False,
    steps: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    hint = (
        " An interaction's column is bounded by the product of its parts' bounds when each part has "
        "one: declare its numeric variables' bounds, or the column's own."
        if interaction
        else ""
    )
    for step, fix in dict.fromkeys((steps or {})[m] for m in missing if m in (steps or {})):
        hint += f" {step[0].upper()}{step[1:]} (a data-dependent step, outside the guarantee): {fix}."
    if not shown and any("(" in m for m in missing):
        hint += (
            f" A transformed column is named as the formula writes it, e.g. bounds={{{missing[0]!r}: (lo, hi)}}; "
            "log(), log2(), log10(), log1p(), sqrt(), exp() of a variable and its powers (I(x^2), "
            "poly(x, k, raw = TRUE)) are bounded from the variable's own bounds, the columns of "
            "poly(x, z, degree = k, raw = TRUE) from x's and z's, those of ns(x, knots = c(...), "
            "Boundary.knots = c(lo, hi)) and bs() with public knots from x's (their range over x's bounds)."
        )
    if shown:  # the columns' names hold levels read from the rows: their terms are named instead
        terms = list(dict.fromkeys(shown.get(m, m) for m in missing))
        raise PrivacyParameterError(
            f"bounds are missing for columns of the term(s) {', '.join(repr(t) for t in terms[:5])}"
            + (" ..." if len(terms) > 5 else "")
            + " (their names hold levels read from the rows, so they are not shown). Declare the factors' "
            "levels (levels=) and a public (lo, hi) for each column, or one pair for all columns." + hint
        )
    names = ", ".join(repr(m) for m in missing[:5])
    raise PrivacyParameterError(
        f"bounds are missing for {len(missing)} column(s): {names}"
        + (" ..." if len(missing) > 5 else "")
        + ". Declare a public (lo, hi) for each, or one pair for all columns."
        + hint
    )


def _refuse_outside_domain(
    bounds: Mapping, parts: Mapping, aliases: Mapping[str, str] | None, missing: Sequence[str]
) -> None:
    """Refuse a column without a bound of its own that is a public function of a variable whose declared
    bounds leave the function's domain (``log(y)`` with y's bounds (0, 35)): named by the variable and
    its bounds (public inputs), where the function's image would not be finite."""
    for name in missing:
        for part in parts.get(name, ()):
            if not isinstance(part, Transformed) or part.function not in MONOTONE:
                continue
            pair = _declared(bounds, part.variable, aliases)
            if pair is None or part.interval(pair) is not None:
                continue
            _, low, open_low = MONOTONE[part.function]
            edge = f"> {low:g}" if open_low else f">= {low:g}"
            raise PrivacyParameterError(
                f"bounds for {part.variable!r} are {pair}, which reach outside the domain of "
                f"{part.function}() (it needs values {edge}), so they give {name!r} no finite bound. "
                f"Declare bounds for {part.variable!r} with lo {edge}, or a bound for the column itself, "
                f"e.g. bounds={{{name!r}: (lo, hi)}}. Nothing was read or spent."
            )


def _unquoted(name: str) -> str:
    """A data column's own name for a design name R writes in backticks (`` `1000_at` `` -> ``1000_at``)."""
    return name[1:-1] if len(name) > 2 and name[0] == name[-1] == "`" else name


def resolve_box(
    bounds: BoundsSpec,
    names: list[str],
    *,
    dummies: set[str] | Mapping[str, tuple[float, float]] = frozenset(),
    aliases: Mapping[str, str] | None = None,
    shown: Mapping[str, str] | None = None,
    parts: Mapping[str, Sequence[str | tuple[float, float]]] | None = None,
    steps: Mapping[str, tuple[str, str]] | None = None,
    open_missing: bool = False,
) -> Box | None:
    """Turn a ``bounds`` argument into a :class:`Box` over ``names``.

    Parameters
    ----------
    bounds : pair, mapping or None
        ``None`` means no declared bounds (the caller decides whether a
        data-dependent step is allowed).
    names : list of str
        Columns to bound, in order.
    dummies : set of str, or mapping of str to (lo, hi)
        Columns made of factors alone, bounded automatically by their coding's public
        range: a set means 0/1 indicators (0, 1); a mapping gives each column's range
        (e.g. (-1, 1) under ``contr.sum``: ``ModelFrame.factor_column_ranges``).
    aliases : mapping, optional
        Design column name -> data column name, so that ``bounds={"x": ...}``
        also covers a column named differently in the design.  A design name
        in backticks (R's name for a non-syntactic column) is also looked up
        by the column's own name.
    shown : mapping, optional
        How a message names a column without bounds (default: by its name); e.g. by its term's
        label where the design's names hold levels read from the rows.
    parts : mapping, optional
        Interaction column -> its parts (``ModelFrame.interaction_parts``): numeric columns' names
        and factor codings' ranges. With a bounds mapping, such a column without a bound of its own
        gets the product of its parts' intervals (:func:`derived_bounds`).
    steps : mapping, optional
        Column -> the data-dependent step (step, fix) of the formula term that makes it (orthogonal
        ``poly()``, knots from the rows): a refusal for its missing bound names the step and its fix.
    open_missing : bool
        A column without a public bound gets (-inf, inf), where by default it is refused: for a step
        that clips what the bounds declare and leaves the rest as it is (dp_two_stage's block lassos).

    Examples
    --------
    >>> resolve_box((-1, 1), ["a", "b"]).hi
    array([1., 1.])
    >>> box = resolve_box({"a": (-1, 1), "b": (0, 2)}, ["a", "a:b"], parts={"a:b": ("a", "b")})
    >>> box.lo.tolist(), box.hi.tolist()
    ([-1.0, -2.0], [1.0, 2.0])
    >>> resolve_box({"a": (-1, 1)}, ["a", "c"], open_missing=True).hi.tolist()
    [1.0, inf]
    """
    if bounds is None:
        return None
    if isinstance(bounds, Mapping):
        lo, hi, missing = [], [], []
        derived = derived_bounds(bounds, parts or {}, aliases)
        for nm in names:
            pair = _declared(bounds, nm, aliases)
            if pair is None and nm in dummies:
                pair = _coding_range(dummies, nm)
            pair = derived.get(nm) if pair is None else pair
            if pair is None and open_missing:
                pair = (-math.inf, math.inf)
            if pair is None:
                missing.append(nm)
                continue
            lo.append(pair[0])
            hi.append(pair[1])
        if missing:
            _refuse_outside_domain(bounds, parts or {}, aliases, missing)
            _refuse_missing(missing, shown or {}, any(nm in (parts or {}) for nm in missing), steps)
        return Box(np.array(lo), np.array(hi))
    lo, hi = _pair("all columns", bounds)
    lo_arr = np.full(len(names), lo)
    hi_arr = np.full(len(names), hi)
    for j, nm in enumerate(names):
        if nm in dummies:
            r_lo, r_hi = _coding_range(dummies, nm)
            lo_arr[j], hi_arr[j] = min(lo, r_lo), max(hi, r_hi)
    return Box(lo_arr, hi_arr)


def _declared(bounds: Mapping, name: str, aliases: Mapping[str, str] | None) -> tuple[float, float] | None:
    """The pair ``bounds`` declares for a column (by its name, its alias or its unquoted name), or None."""
    key = name if name in bounds else (aliases or {}).get(name, _unquoted(name))
    return _pair(name, bounds[key]) if key in bounds else None


def derived_bounds(
    bounds: BoundsSpec,
    parts: Mapping[str, Sequence[str | tuple[float, float]]],
    aliases: Mapping[str, str] | None = None,
) -> dict[str, tuple[float, float]]:
    """The bounds of interaction columns that follow from public inputs alone.

    For each column of ``parts`` (``ModelFrame.interaction_parts``) that ``bounds`` (a mapping)
    does not declare itself: when every part has a public bound -- a numeric column its declared
    (lo, hi), a factor coding its range -- the product of their intervals (interval arithmetic,
    :func:`product_interval`); a column with a part left undeclared, or whose product overflows or
    is a single point, is left out (it stays missing). No row is read. A pair ``bounds=(lo, hi)`` declares every column
    itself, so nothing is derived from it.

    Examples
    --------
    >>> derived_bounds({"x": (-1, 1), "z": (0, 2)}, {"x:z": ("x", "z"), "x:gb": ("x", (0.0, 1.0)),
    ...                                             "w:z": ("w", "z")})
    {'x:z': (-2.0, 2.0), 'x:gb': (-1.0, 1.0)}
    """
    if not isinstance(bounds, Mapping):
        return {}
    out = {}
    for name, pairs in _part_bounds(bounds, parts, aliases).items():
        lo, hi = product_interval(pairs)
        if _declared(bounds, name, aliases) is None and math.isfinite(lo) and math.isfinite(hi) and lo < hi:
            out[name] = (lo, hi)  # an overflowing or empty product is left to declare
    return out


def derivable_columns(
    bounds: BoundsSpec,
    parts: Mapping[str, Sequence[str | tuple[float, float]]],
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """The columns of ``parts`` whose every part has a public bound under ``bounds`` (a mapping),
    declared for the column itself or not: a function of the bounds' names and the formula only.

    Examples
    --------
    >>> derivable_columns({"x": (-1, 1), "x:z": (0, 1)}, {"x:z": ("x", "z"), "x:gb": ("x", (0.0, 1.0))})
    ['x:gb']
    """
    return list(_part_bounds(bounds, parts, aliases)) if isinstance(bounds, Mapping) else []


@dataclass(frozen=True)
class Transformed:
    """A numeric column that is a public function of one variable (``log(wt)``, ``I(x^2)``, a column of
    ``poly(x, 3, raw = TRUE)``): bounded, unless declared itself, by the function's image of the
    variable's declared interval.

    Examples
    --------
    >>> Transformed("log(wt)", "wt", "log").interval((1.0, 6.0))
    (0.0, 1.791759469228055)
    >>> Transformed("I(x^2)", "x", "power", 2).interval((-1.0, 3.0)), Transformed("log(x)", "x", "log").interval((0.0, 1.0))
    ((0.0, 9.0), None)
    """

    label: str
    variable: str
    function: str  # a key of MONOTONE, or "power"
    power: int = 1

    def interval(self, pair: tuple[float, float] | None) -> tuple[float, float] | None:
        """The image of ``pair`` (None: the variable has no bound, or the interval leaves the domain)."""
        if pair is None:
            return None
        lo, hi = pair
        if self.function == "power":
            ends = (lo**self.power, hi**self.power)
            low = 0.0 if self.power % 2 == 0 and lo <= 0 <= hi else min(ends)
            return _finite_pair(low, max(ends))
        function, domain_low, open_low = MONOTONE[self.function]
        if lo < domain_low or (open_low and lo == domain_low):
            return None
        return _finite_pair(float(function(lo)), float(function(hi)))


@dataclass(frozen=True)
class Monomial:
    """A numeric column that is a product of powers of distinct variables (column ``1.2`` of
    ``poly(x, z, degree = 3, raw = TRUE)`` is x·z²): bounded, unless declared itself, by the product
    of each power's image of its variable's declared interval, which is the column's exact range over
    the box since each variable occurs once.

    Examples
    --------
    >>> Monomial("p1.2", (("x", 1), ("z", 2))).interval({"x": (-1.0, 2.0), "z": (-3.0, 1.0)}.get)
    (-9.0, 18.0)
    """

    label: str
    powers: tuple[tuple[str, int], ...]  # (variable, power >= 1), each variable once

    def interval(self, declared) -> tuple[float, float] | None:
        """The product of the powers' images; ``declared(variable)`` gives a variable's (lo, hi) or None."""
        images = [Transformed(self.label, v, "power", k).interval(declared(v)) for v, k in self.powers]
        if any(image is None for image in images):
            return None
        return _finite_pair(*product_interval(images))


def _finite_pair(lo: float, hi: float) -> tuple[float, float] | None:
    return (lo + 0.0, hi + 0.0) if math.isfinite(lo) and math.isfinite(hi) else None


# increasing functions R's formulas apply to a variable: (function, the domain's lower end, open there)
MONOTONE = {
    "log": (np.log, 0.0, True),
    "log2": (np.log2, 0.0, True),
    "log10": (np.log10, 0.0, True),
    "log1p": (np.log1p, -1.0, True),
    "sqrt": (np.sqrt, 0.0, False),
    "exp": (np.exp, -math.inf, False),
    "expm1": (np.expm1, -math.inf, False),
}


def _part_bound(bounds: Mapping, part, aliases: Mapping[str, str] | None) -> tuple[float, float] | None:
    """A part's public (lo, hi): a numeric column's declared bound, a transformed column's declared
    bound or else its variable's image, a coding's range as it is."""
    if isinstance(part, str):
        return _declared(bounds, part, aliases)
    if isinstance(part, Transformed):
        own = _declared(bounds, part.label, aliases)
        return own if own is not None else part.interval(_declared(bounds, part.variable, aliases))
    if isinstance(part, Monomial):
        own = _declared(bounds, part.label, aliases)
        return own if own is not None else part.interval(lambda v: _declared(bounds, v, aliases))
    return part


def _part_bounds(bounds: Mapping, parts: Mapping, aliases: Mapping[str, str] | None) -> dict[str, list]:
    """Column -> its parts' public (lo, hi), for the columns whose every part has one."""
    out = {}
    for name, factors in parts.items():
        pairs = [_part_bound(bounds, p, aliases) for p in factors]
        if all(pair is not None for pair in pairs):
            out[name] = pairs
    return out


def product_interval(pairs) -> tuple[float, float]:
    """The interval of a product of factors each in its own interval (interval arithmetic).

    [a, b]·[c, d] = [min(ac, ad, bc, bd), max(ac, ad, bc, bd)], applied from left to right; the
    empty product is (1, 1).

    Examples
    --------
    >>> product_interval([(-1, 1), (0, 2)]), product_interval([(2, 3), (-4, -1), (0, 1)])
    ((-2.0, 2.0), (-12.0, 0.0))
    """
    lo, hi = 1.0, 1.0
    for a, b in pairs:
        ends = (lo * float(a), lo * float(b), hi * float(a), hi * float(b))
        lo, hi = min(ends), max(ends)
    return lo + 0.0, hi + 0.0  # no -0.0


def _coding_range(dummies: set[str] | Mapping[str, tuple[float, float]], name: str) -> tuple[float, float]:
    """The public range of a factor column: from its coding, or (0, 1) for an indicator."""
    if isinstance(dummies, Mapping):
        lo, hi = dummies[name]
        return float(lo), float(hi)
    return 0.0, 1.0


def to_unit_interval(values: np.ndarray, box: Box, out: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Map each column affinely from [lo, hi] onto [-1, 1], clipping outside values.

    Returns the mapped array and the number of clipped values (not private).
    """
    out = np.subtract(values, box.center, out=out)
    out /= box.halfwidth
    n_clipped = int(np.count_nonzero(np.abs(out) > 1))
    if n_clipped:
        np.clip(out, -1.0, 1.0, out=out)
    return out, n_clipped


def clip_response(y: np.ndarray, bound: float) -> np.ndarray:
    """Finite values beyond [−bound, bound] set to the nearer end; non-finite values (missing by the
    schema's rule) are left for that rule.  A copy only when something is clipped.

    Examples
    --------
    >>> clip_response(np.array([1.0, -1e308, np.inf, np.nan, 3.0]), 2.0).tolist()
    [1.0, -2.0, inf, nan, 2.0]
    """
    y = np.asarray(y, dtype=float)
    with np.errstate(invalid="ignore"):
        over = (np.abs(y) > bound) & np.isfinite(y)
    if not over.any():
        return y
    out = y.copy()
    out[over] = np.copysign(bound, y[over])
    return out


def clip_rows_l2(X: np.ndarray, radius: float) -> tuple[np.ndarray, int]:
    """Scale rows with l2 norm above ``radius`` back onto the ball; count them.

    Rows whose squared norm overflows (entries near 1e154 and beyond) are
    scaled by their largest entry first, so they land on the ball too.

    Examples
    --------
    >>> clip_rows_l2(np.array([[3.0, 4.0], [1e200, 1e200]]), 1.0)[0].round(4).tolist()
    [[0.6, 0.8], [0.7071, 0.7071]]
    """
    with np.errstate(over="ignore"):
        norms = np.linalg.norm(X, axis=1)
    over = norms > radius
    if not over.any():
        return X, 0
    X = X.copy()
    huge = np.isinf(norms) & np.isfinite(X).all(axis=1)
    if huge.any():
        X[huge] /= np.abs(X[huge]).max(axis=1)[:, None]
        norms[huge] = np.linalg.norm(X[huge], axis=1)
    X[over] *= (radius / norms[over])[:, None]
    return X, int(over.sum())


RANGE_CAP = 1e50  # the largest |end| of a box read from the data (range_box)


def range_box(lo: np.ndarray, hi: np.ndarray) -> Box:
    """The box of the data's per-column range [lo, hi] (a data-dependent step the caller names).

    A constant column gets [lo, lo + 1] (a width of |lo|·2⁻²⁰ beyond 2²⁰, where lo + 1 = lo); a
    column that saw no row (lo = +inf, hi = −inf, possible when n is private and may be 0) gets
    [0, 1], so that no error depends on n.  Ends beyond ±``RANGE_CAP`` are set to it, so that sums
    over the box of squares and of squared second moments (a covariance's Frobenius norm) stay
    finite, and no error or warning depends on one huge value.

    Examples
    --------
    >>> b = range_box(np.array([0.0, 2.0, np.inf]), np.array([4.0, 2.0, -np.inf]))
    >>> b.lo.tolist(), b.hi.tolist()
    ([0.0, 2.0, 0.0], [4.0, 3.0, 1.0])
    >>> range_box(np.array([-1e160, 1e60]), np.array([1e160, 1e60])).hi.tolist()
    [1e+50, 1.0000009536743165e+50]
    """
    lo = np.clip(np.where(np.isfinite(lo), lo, 0.0).astype(float), -RANGE_CAP, RANGE_CAP)
    hi = np.clip(np.where(np.isfinite(hi), hi, lo), -RANGE_CAP, RANGE_CAP)
    return Box(lo, np.where(hi > lo, hi, lo + np.maximum(1.0, np.abs(lo) * 2.0**-20)))
