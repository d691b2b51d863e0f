"""The declared public schema: variables, types, bounds, levels, and the rule for missing values.

A differential-privacy guarantee holds for a *schema*: the variables an
analysis reads, their types, the bounds of the numeric ones and the levels of
the categorical ones.  Everything before a mechanism (term names, the shape of
the design, n, every sensitivity) must depend on the schema only, never on the
rows (docs/architecture.md, "Privacy conventions").  :class:`Schema` holds it.

Where each part comes from
--------------------------
* **Numeric bounds** -- ``bounds=`` as the front doors take it: one pair
  ``(lo, hi)`` for every variable, a mapping ``{"x": (lo, hi)}``, a norm bound
  (a number: the centre of its ball is 0) or private bounds (``"auto"``:
  centred on 0, the centre of their public grid).
* **Numeric by declaration** -- a data column named in a per-variable bounds
  mapping (``bounds={"x2": (-1, 1)}``) is numeric whatever its dtype, because
  the dtype of a column read from a file is itself read from the rows (one
  bad cell, ``"n/a"``, makes ``pandas.read_csv`` give an object column).  Its
  entries are read as numbers (:func:`as_numbers`): text is parsed
  (``"1.5"`` is 1.5), a boolean is 0 (FALSE) or 1 (TRUE), a Categorical by
  its labels (R's ``as.numeric(as.character(f))``), and an entry that is not
  a number is a *missing value*, which then follows the rule for missing
  values below (under ``"fill"``: the midpoint of its bounds) -- never an
  error, never its text.  The design column is then named after the variable
  (``x2``, ``flag``), whatever the dtype.  Without ``strict=True`` a global
  pair ``bounds=(lo, hi)`` declares no column numeric: text columns stay
  factors, their dummies bounded by their coding, and their levels are read
  from the rows (a named step, below).  Under ``strict=True`` every variable
  is numeric unless declared categorical ("Types under strict=True", below).
  Declaring one column both numeric (``bounds=``) and categorical
  (``levels=``) is refused, from the arguments alone.
* **Levels declared with** ``levels={"city": ["Leeds", "York"]}`` on every front
  door: the design's columns are those levels, in that order (R's
  ``factor(x, levels = ...)``).  A column with declared levels is a factor
  whatever its dtype (numeric codes too: ``levels={"cyl": [4, 6, 8]}``), and
  every term that makes a factor of it -- ``cyl``, ``factor(cyl)``,
  ``as.factor(cyl)``, ``C(cyl)``, ``C(cyl, contr.sum)`` -- has those levels,
  whichever of them the rows hold (no level is read from the rows; R's
  ``factor()`` of a factor would drop the levels that do not occur).
* **A pandas Categorical's categories** (and ``ordered``): they are part of
  the column's dtype, which the analyst declared, so they are public.  A
  category no row takes still gets its column, as in R.  Note that
  ``df["city"].astype("category")`` *reads the categories from the rows*: that
  is a data-dependent choice made by the analyst before the call, and the
  analyst's responsibility; declare ``pd.CategoricalDtype([...])`` or
  ``levels=`` instead.
* **Booleans**: levels FALSE and TRUE, public by type.  A boolean column with a
  missing entry is an object column (pandas): declare it with
  ``levels={"flag": [False, True]}`` or R's ``["FALSE", "TRUE"]`` (which match
  the booleans entry by entry) and it is the logical column, its missing entry
  filled by FALSE.  Without a declaration an object column is text whose
  levels are read from the rows, even when every entry is a boolean: deciding
  that it is logical would read its values (a named step, as for any text).
  Under ``strict=True`` an undeclared boolean column is numeric (0/1, below).
* **R factors** arrive from the R wrapper as Categoricals with R's levels, so
  they count as declared.  As with ``astype("category")``, ``factor(x)`` without
  ``levels =`` and ``read.csv(stringsAsFactors = TRUE)`` *read the levels from
  the rows* before the call: the analyst's choice and responsibility; write
  ``factor(x, levels = c(...))`` or pass ``levels = list(x = c(...))`` instead.
* **Text columns without declared levels**: their levels are read from the
  rows.  That is a *named data-dependent step* (warned with
  :class:`~dpstats.errors.NonPrivateWarning`, listed in the privacy statement,
  refused under ``strict=True`` before any budget is spent); the warning names
  the column, never its levels or how many there are.  Under ``strict=True`` a
  formula variable without declared levels is numeric by declaration instead
  (below), so that step is left only where a formula term makes a factor of it
  (``factor(x)``) or a method reads its response as one.

A value that is not among the declared levels is missing, as with R's
``factor(x, levels = ...)``, and then follows the rule for missing values.

Types under ``strict=True``
---------------------------
Under ``strict=True`` (a private call) no variable's type is read from its
dtype, which is itself read from the rows: one ``"?"`` cell makes a numeric
column an object column, and one missing entry makes a boolean column one, so
that two neighbouring data sets would differ between a release and a refusal
before any mechanism.  Instead every variable the formula reads (the response
too, where the method reads it as a number) that is not declared categorical
is **numeric by declaration**, whatever the form of ``bounds=``: a global pair
``(lo, hi)`` (the README's first example, the command line's ``--bounds
[lo, hi]``), a norm bound, ``"auto"``, a mapping (its entry bounds the
variable; a variable without one is numeric without bounds, and the method's
rule for such a variable applies, the same refusal naming it and its fix
whatever its dtype) or none.  Declared categorical means named in ``levels=``
(or ``factor(g, levels = c("a", "b"))`` in the formula), a pandas
Categorical's categories, or an R factor's levels; a method that reads its
response as a factor (dp_felp's class labels) keeps the response's own rule.
The variable is then read as one named in a bounds mapping is (above): on
every route, text that is not a number is a missing value, a boolean is 0/1
and its design column is named after the variable (``flag``, not
``flagTRUE``).  So a genuinely text column (``city``) under ``strict=True``
without ``levels=`` is read as numbers, every entry missing and filled:
declare its levels.  The privacy statement lists the variables numeric by
declaration under ``strict=True``, so that such a column can be seen there;
the list comes from the formula, the arguments and the declared dtypes, never
from the rows.  What such a variable cannot serve is refused before anything
is read or spent (:meth:`Schema.refuse_undeclared`): a comparison with text in
the formula (``I(city == "York")``, the same in every row), contrasts given for
it (``data.attrs["contrasts"]``), and, for a binomial family, a response without
a declaration: two levels, a declared boolean (pandas' nullable ``"boolean"``,
an R logical) or an entry of a bounds mapping (:meth:`Schema.refuse_undeclared_binary`).
A numpy ``bool`` column declares no classes under ``strict=True``: one missing
entry makes it an object column.

Missing values (``na_action``)
------------------------------
* ``"fill"`` (the default under ``neighbouring="replace"``, where n of the rows
  read is public): no row is dropped.  A missing or non-finite value of a
  formula variable (or a level outside the declared ones) is replaced by its
  *public fill*: the midpoint of the variable's declared bounds for a numeric
  variable (the response included), the first level for a factor, FALSE for a
  logical.  A value a formula transformation makes non-finite (``log`` of a
  non-positive value) is set to the midpoint of that design column's declared
  bounds, or 0 when it has none.  The rule is stated in every privacy
  statement; how many values were filled is shown only as a non-private
  diagnostic.  A numeric column the formula uses only as
  ``factor(x, levels = c(4, 6, 8))`` takes the first declared level
  (:func:`dpstats.formula.level_fills`).  A numeric variable with no public fill at all:
  rows missing it are dropped, and that is named as a data-dependent step for
  every such call (it depends on the arguments, not on the data).
* ``"omit"`` (R's ``na.omit``; the default under ``neighbouring="add_remove"``,
  where dropping rows maps neighbours to neighbours and n is private, and for a
  non-private reference run, eps = inf, so that it is R's complete-case fit):
  rows with a missing value are dropped.  Under ``"replace"`` it makes the analysed
  n private; it is then named as a data-dependent step for every call.

No message ever carries how many rows were dropped or values filled.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import temporal
from .temporal import bounds_read as bounds_read  # for the front doors' binding (api/_parameters)
from .errors import DataError, DataWarning, PrivacyParameterError, close_names
from .geometry import check_bounds_form

__all__ = [
    "Schema",
    "Variable",
    "NA_ACTIONS",
    "default_na_action",
    "check_levels",
    "as_categorical",
    "as_numbers",
]

NA_ACTIONS = ("fill", "omit")


def default_na_action(neighbouring: str, private: bool = True) -> str:
    """The default ``na_action`` under a neighbouring relation, for a private call or (``private=False``)
    a non-private reference run (eps = inf), which drops incomplete rows as R's ``lm`` does: nothing
    is private there, so no public fill is needed, and the reference is the complete-case fit.

    Examples
    --------
    >>> default_na_action("replace"), default_na_action("add_remove"), default_na_action("replace", False)
    ('fill', 'omit', 'omit')
    """
    return "omit" if neighbouring == "add_remove" or not private else "fill"


def check_levels(levels: Any) -> dict[str, tuple]:
    """The ``levels=`` argument, checked: a mapping of column name to a non-empty list of distinct levels.

    Examples
    --------
    >>> check_levels({"city": ["Leeds", "York"]})
    {'city': ('Leeds', 'York')}
    """
    if levels is None:
        return {}
    if not isinstance(levels, Mapping):
        raise PrivacyParameterError(
            f"levels must be a dict such as {{'city': ['Leeds', 'York']}}, got {type(levels).__name__}."
        )
    out: dict[str, tuple] = {}
    for col, lev in levels.items():
        if isinstance(lev, str) or not isinstance(lev, (Sequence, np.ndarray, pd.Index)):
            raise PrivacyParameterError(f"levels['{col}'] must be a list of levels, e.g. ['a', 'b'].")
        lev = tuple(lev.tolist() if hasattr(lev, "tolist") else lev)
        if not lev or len(set(lev)) != len(lev):
            raise DataError(f"levels['{col}'] must be a non-empty list of distinct levels.")
        out[str(col)] = lev
    return out


@dataclass(frozen=True)
class Variable:
    """One variable of a resolved schema.

    Attributes
    ----------
    name : str
    kind : {"numeric", "logical", "factor", "ordered"}
    bounds : (float, float) or None
        Declared bounds of a numeric variable.
    fill : float or None
        Public fill of a numeric variable (None: it has none, and its rows are dropped).
    levels : tuple or None
        Declared levels of a categorical variable (None: read from the rows).
    source : str
        Where the type and levels come from ("bounds=", "levels=", "categorical dtype",
        "boolean type", "read from the rows").
    """

    name: str
    kind: str
    bounds: tuple[float, float] | None = None
    levels: tuple | None = None
    source: str = ""
    fill: float | None = None

    @property
    def declared(self) -> bool:
        return self.kind in ("numeric", "logical") or self.levels is not None


@dataclass(frozen=True)
class Schema:
    """The declared public schema of an analysis and its rule for missing values.

    Parameters
    ----------
    bounds : pair, mapping, number or None
        The front door's ``bounds=`` (see the module docstring for the centre of each form).
    levels : mapping of str to sequence
        Declared levels of categorical columns.
    na_action : {"fill", "omit"}
        What happens to missing values (module docstring).
    neighbouring : {"replace", "add_remove"}
        The neighbouring relation in force (it decides whether dropping rows is covered).
    unbounded_fill : float, optional
        The public fill of numeric variables without declared bounds, for methods
        that need no bounds (dp_two_stage's votes); None (the default): such
        variables have no fill and their incomplete rows are dropped.
    private : bool
        False for a non-private reference run (eps = inf): its steps are not named
        (the whole call is declared not private).
    fills : mapping of str to float
        Public fills a method declares for particular variables, before any bounds
        (a binomial response's 0, whose domain {0, 1} the family declares).
    strict : bool
        The call's ``strict=True``: on a private call every variable the formula reads that is not
        declared categorical is numeric by declaration (module docstring, "Types under strict=True").
    data_columns : tuple of str
        The column names of the data as given, read from its schema (no rows): a ``bounds=`` key may
        name any of them, read or not (:meth:`check_bound_names`).

    Examples
    --------
    >>> import pandas as pd
    >>> s = Schema.declare(bounds={"y": (-5, 5), "x": (0, 2)}, levels={"city": ["Leeds", "York"]})
    >>> df = pd.DataFrame({"y": [1.0, None], "x": [0.5, 1.0], "city": ["York", "Zzyzx"]})
    >>> filled, n_filled = s.apply(df, ["y", "x", "city"])
    >>> filled["y"].tolist(), filled["city"].tolist(), n_filled
    ([1.0, 0.0], ['York', 'Leeds'], 2)
    >>> [v.kind for v in s.variables(df, ["y", "city"])]
    ['numeric', 'factor']
    """

    bounds: Any = None
    levels: Mapping[str, tuple] = field(default_factory=dict)
    na_action: str = "fill"
    neighbouring: str = "replace"
    unbounded_fill: float | None = None
    private: bool = True
    fills: Mapping[str, float] = field(default_factory=dict)
    check_names: bool = True  # False on one chunk's frame (its columns are the formula's only)
    formula_numeric: frozenset[str] = frozenset()  # factor(x, levels = c(4, 6, 8)): x is read as numbers
    formula_levels: frozenset[str] = frozenset()  # factor(g, levels = c("a", "b")): in levels, not given
    strict: bool = False
    # set by dpstats.formula.with_formula_declarations: the names the formula reads, "." for every column
    # (None: no formula known, every column), and its response's where the method reads the response as a
    # factor (dp_felp's class labels), whose type then stays its own under strict
    formula_names: frozenset[str] | None = None
    factor_response: frozenset[str] = frozenset()
    # the plain response of a binomial family (response="binary"): under strict it must be declared
    # (:meth:`refuse_undeclared_binary`); binary_numbers: the method reads it as numbers only (a bounds entry)
    binary_response: frozenset[str] = frozenset()
    binary_numbers: bool = False
    data_columns: tuple[str, ...] = ()  # the data's column names as given (engines.column_names)

    @classmethod
    def declare(
        cls,
        *,
        bounds: Any = None,
        levels: Mapping[str, Sequence] | None = None,
        na_action: str | None = None,
        neighbouring: str = "replace",
        unbounded_fill: float | None = None,
        private: bool = True,
        fills: Mapping[str, float] | None = None,
        strict: bool = False,
    ) -> Schema:
        """A checked schema from front-door arguments (``na_action=None``: the relation's default)."""
        if na_action is None:
            na_action = default_na_action(neighbouring, private)
        if na_action not in NA_ACTIONS:
            raise PrivacyParameterError(f"na_action must be one of {list(NA_ACTIONS)}, got {na_action!r}.")
        return cls(
            bounds,
            check_levels(levels),
            na_action,
            neighbouring,
            unbounded_fill,
            private,
            dict(fills or {}),
            strict=bool(strict),
        )

    # ------------------------------------------------------------------ resolution (dtypes only)
    def numeric_bounds(self, name: str) -> tuple[float, float] | None:
        """Declared (lo, hi) of a numeric variable or design column, or None."""
        b = self.bounds
        if b is None:
            return None
        if isinstance(b, Mapping):
            pair = b.get(name, b.get(_unquoted(name)))
            return _pair(pair)
        pair = _pair(b)
        if pair is not None:
            return pair
        return (0.0, 0.0) if _centred(b) else None

    def declared_numeric(self, columns: Sequence[str], dtypes: Mapping[str, Any] | None = None) -> set[str]:
        """The ``columns`` numeric by declaration, whatever their dtype: those a per-variable bounds mapping
        names, those the formula uses only as ``factor(x, levels = c(<numbers>))`` (``formula_numeric``),
        and under ``strict`` those :meth:`strict_numeric` declares (``dtypes``: the columns' dtypes, so
        that a Categorical keeps its declared categories; without them no column counts as one).

        Examples
        --------
        >>> sorted(Schema.declare(bounds={"x": (0, 1), "`y`": (0, 2), "zz": (0, 1)}).declared_numeric(["x", "y", "g"]))
        ['x', 'y']
        >>> Schema.declare(bounds=(0, 1)).declared_numeric(["x", "g"])  # without strict, a pair declares none
        set()
        >>> sorted(Schema.declare(bounds=(0, 1), strict=True).declared_numeric(["x", "g"]))
        ['g', 'x']
        """
        b = self.bounds
        keys = {str(k) for k in b} | {_unquoted(str(k)) for k in b} if isinstance(b, Mapping) else set()
        keys |= self.formula_numeric
        typed = self.strict_numeric(columns, dtypes)
        if not keys:
            return typed
        named = (
            keys & set(map(str, columns)) if len(keys) < len(columns) else {c for c in columns if c in keys}
        )
        return named | typed

    def strict_numeric(self, columns: Sequence[str], dtypes: Mapping[str, Any] | None = None) -> set[str]:
        """Under ``strict=True`` on a private call: the ``columns`` the formula reads that are not declared
        categorical, each numeric by declaration (module docstring, "Types under strict=True").

        Declared categorical: named in ``levels=`` (or ``factor(g, levels = c("a", "b"))`` in the formula),
        a Categorical dtype (an R factor), or the response of a method that reads it as a factor
        (``factor_response``).  From the arguments, the column names and ``dtypes`` only.

        Examples
        --------
        >>> s = Schema.declare(bounds=(0, 1), levels={"g": ["a", "b"]}, strict=True)
        >>> sorted(s.strict_numeric(["y", "x", "g", "h"], {"h": pd.CategoricalDtype(["u", "v"])}))
        ['x', 'y']
        >>> Schema.declare(bounds=(0, 1)).strict_numeric(["y", "x"])  # without strict
        set()
        """
        if not (self.strict and self.private):
            return set()
        names, dtypes = self.formula_names, dtypes or {}
        categorical = set(self.levels) | self.factor_response
        every = names is None or "." in names
        return {
            str(c)
            for c in columns
            if (every or c in names)
            and c not in categorical
            and not isinstance(dtypes.get(c), pd.CategoricalDtype)
        }

    def refuse_undeclared(
        self,
        frame: pd.DataFrame,
        compared: Sequence[tuple[str, str]] = (),
        contrasts: Sequence[str] = (),
    ) -> None:
        """Under ``strict=True`` on a private call, refuse what a variable numeric by declaration
        (:meth:`strict_numeric`) cannot serve, before anything is read or spent: a comparison of it with
        text (``compared``: (variable, expression) pairs, :func:`dpstats.formula.text_comparisons`),
        which would be the same in every row; contrasts given for it (``contrasts``: the names in
        ``data.attrs["contrasts"]``, how R's ``contrasts =`` arrives), which code only factors; and a
        binomial response without a declaration (:meth:`refuse_undeclared_binary`).  From the
        arguments, the formula and ``frame``'s column names and dtypes only (an empty frame will do).

        Examples
        --------
        >>> s = Schema.declare(bounds=(0, 1), strict=True)
        >>> s.refuse_undeclared(pd.DataFrame({"city": ["York"]}), [("city", 'I(city == "York")')])
        Traceback (most recent call last):
        ...
        dpstats.errors.PrivacyParameterError: under strict=True 'city' is numeric by declaration ...
        """
        if not (self.strict and self.private):
            return
        dtypes = dict(zip(map(str, frame.columns), frame.dtypes.tolist()))
        numeric = self.strict_numeric(list(dtypes), dtypes)
        fix = "declare its levels: levels={{{0!r}: [...]}}, or give the column a pandas.CategoricalDtype with fixed categories"
        for name, expression in compared:
            if name in numeric:
                raise PrivacyParameterError(
                    f"under strict=True {name!r} is numeric by declaration (no declared levels), so "
                    f"{expression} compares numbers with text and is the same in every row: "
                    f"{fix.format(name)}. Nothing was read or spent."
                )
        for name in map(_unquoted, map(str, contrasts)):
            if name in numeric:
                raise PrivacyParameterError(
                    f"contrasts are given for {name!r}, but under strict=True {name!r} is numeric by "
                    f"declaration (no declared levels), and contrasts code only factors: {fix.format(name)}; "
                    "or give it no contrasts. Nothing was read or spent."
                )
        for name in sorted(self.binary_response):
            if name in dtypes:
                self.refuse_undeclared_binary(name, dtypes[name])

    def refuse_undeclared_binary(self, name: str, dtype: Any) -> None:
        """Under ``strict=True`` on a private call, refuse a binomial family's response ``name`` that is
        not declared: declared means levels (``levels=``, a Categorical, an R factor; two of them, the first
        coded 0), a boolean type that keeps its type when an entry is missing (pandas' nullable
        ``"boolean"``, an R logical: levels False and True), or numbers by an entry of a ``bounds=``
        mapping (0/1; the family clips to [0, 1]).  Undeclared, the response would be numeric by
        declaration without bounds, and a text response ("yes"/"no") would be read as missing values
        and filled: a wrong fit with no error.  A numpy ``bool`` column is no declaration: one missing
        entry makes it an object column.  A method that reads the response as numbers only
        (``binary_numbers``: dp_select_infer's part B) takes the bounds entry alone.  From the arguments
        and ``dtype`` only.

        Examples
        --------
        >>> s = Schema.declare(bounds={"x": (0, 1), "ok": (0, 1)}, strict=True)
        >>> s.refuse_undeclared_binary("ok", np.dtype(object))  # numbers by its bounds entry
        >>> s.refuse_undeclared_binary("yb", pd.BooleanDtype())  # a declared boolean
        >>> s.refuse_undeclared_binary("yb", np.dtype(bool))
        Traceback (most recent call last):
        ...
        dpstats.errors.PrivacyParameterError: family='binomial' under strict=True needs its response 'yb' declared: ...
        """
        b = self.bounds
        if not (self.strict and self.private) or (
            isinstance(b, Mapping) and name in {_unquoted(str(k)) for k in b}
        ):
            return
        if self.binary_numbers:
            raise PrivacyParameterError(
                f"family='binomial' under strict=True needs its response {name!r} declared as numbers 0/1, "
                f"bounds={{{name!r}: (0, 1)}}: this method reads it as numbers (levels do not serve). "
                "Undeclared, strict=True makes it numeric by declaration without bounds, and a text response "
                '("yes"/"no") would be read as missing values, each filled: a wrong fit. Nothing was read or spent.'
            )
        if name in self.levels or isinstance(dtype, (pd.CategoricalDtype, pd.BooleanDtype)):
            return
        raise PrivacyParameterError(
            f"family='binomial' under strict=True needs its response {name!r} declared: two levels, "
            f"levels={{{name!r}: [...]}} (the first is coded 0), or numbers 0/1, bounds={{{name!r}: (0, 1)}}; "
            f"a logical response: levels={{{name!r}: [False, True]}} or the pandas nullable 'boolean' dtype. "
            "Undeclared, strict=True makes it numeric by declaration without bounds, and a text response "
            '("yes"/"no") would be read as missing values, each filled: a wrong fit. Nothing was read or spent.'
        )

    def read_numeric(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with its numeric-by-declaration columns read as numbers (:func:`as_numbers`).

        Row-local (chunks give the chunks of the result), and from the schema and the dtypes only:
        a column already numeric is left as it is.

        Examples
        --------
        >>> df = pd.DataFrame({"x": ["0.5", "n/a"], "g": ["a", "b"]})
        >>> Schema.declare(bounds={"x": (0, 1)}).read_numeric(df)["x"].tolist()
        [0.5, nan]
        """
        dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))
        todo = [c for c in self.declared_numeric(frame.columns, dtypes) if not _is_numeric(dtypes[c])]
        if not todo:
            return frame
        frame = frame.copy(deep=False)
        for c in todo:
            frame[c] = as_numbers(frame[c])
        return frame

    def check_bound_names(
        self,
        columns: Sequence[str],
        design: Sequence[str],
        factors: Sequence[str] = (),
        declares_levels: Callable[[str], bool] = lambda label: False,
    ) -> None:
        """Refuse a ``bounds=`` mapping entry that names neither a column of the data nor a column of the design.

        A typo (``"Wt"`` for ``"wt"``) would otherwise be ignored and its variable left without the
        bound the analyst meant.  Columns of the data that the formula does not use stay allowed (one
        bounds mapping may serve several analyses).  ``factors``: the labels of the design's factor
        terms; a name made of one of them and a level (``"cityZurich"``) is allowed whether or not
        that level occurs, so that the check depends on the names only, never on the rows.
        ``declares_levels``: whether a factor's label declares its levels in the formula
        (:func:`dpstats.formula.declares_levels`), for the hint of a misspelt key.

        Examples
        --------
        >>> Schema.declare(bounds={"wt": (1, 6), "Wt": (0, 9)}).check_bound_names(["mpg", "wt"], ["wt"])
        Traceback (most recent call last):
        ...
        dpstats.errors.PrivacyParameterError: bounds= names 'Wt', which is neither a column of the data ...
        """
        b = self.bounds
        if not isinstance(b, Mapping) or not b or not self.check_names:
            return
        columns = list(dict.fromkeys([*map(str, columns), *self.data_columns]))  # read or not
        known = set(columns) | {str(c) for c in design} | {"(Intercept)"}
        known |= {_unquoted(c) for c in list(known)}

        def named(key: str) -> bool:
            if key in known or _unquoted(key) in known:
                return True
            return all(p in known or any(p.startswith(f) for f in factors) for p in key.split(":"))

        unknown = [str(k) for k in b if not named(str(k))]
        if unknown:
            keys = [str(k) for k in b if named(str(k))]
            public = self._public_bound_names(columns, design, factors, keys, declares_levels)
            near = close_names(unknown[0], public)
            hint = f" Did you mean {', '.join(repr(m) for m in near)}?" if near else ""
            raise PrivacyParameterError(
                f"bounds= names {unknown[0]!r}, which is neither a column of the data nor a column of the "
                f"design.{hint} Check the spelling (names are case-sensitive), or remove the entry. "
                "Nothing was spent."
            )

    def refuse_misspelt_bounds(self, unfilled: Sequence[str], columns: Sequence[str]) -> None:
        """Name a ``bounds=`` key that misspells a variable left without bounds (``unfilled``): the same
        name in another case (``"WT"`` for ``wt``) or a close one (``"wieght"``), which is no column of
        the data.  Run before the refusal of unfilled variables, so that the misspelling is named, not
        the variable's missing values; from the arguments and the column names only.

        Examples
        --------
        >>> Schema.declare(bounds={"WT": (1, 6)}).refuse_misspelt_bounds(["wt"], ["mpg", "wt"])
        Traceback (most recent call last):
        ...
        dpstats.errors.PrivacyParameterError: no bounds are declared for 'wt', and bounds= names 'WT', ...
        """
        b = self.bounds
        if not isinstance(b, Mapping) or not unfilled or not self.check_names:
            return
        known = {str(c) for c in columns} | set(self.data_columns)
        loose = [
            k for k in map(str, b) if _unquoted(k) not in known and re.fullmatch(r"[\w.]+", _unquoted(k))
        ]
        for name in unfilled:
            near = close_names(name, loose, n=1, cutoff=0.8)
            if near:
                raise PrivacyParameterError(
                    f"no bounds are declared for {name!r}, and bounds= names {near[0]!r}, which is not a column "
                    f"of the data: did you mean {name!r}? Check the spelling (names are case-sensitive). "
                    "Nothing was read or spent."
                )

    def _public_bound_names(
        self,
        columns: Sequence[str],
        design: Sequence[str],
        factors: Sequence[str],
        keys: Sequence[str],
        declares_levels: Callable[[str], bool] = lambda label: False,
    ) -> list[str]:
        """The names a misspelt ``bounds=`` key may be told it resembles: the data's columns, the bounds'
        own (known) keys, and the design's columns whose every part is public whatever the rows.

        A part of a design column (``x:gb`` has the parts ``x`` and ``gb``) that starts with a factor's
        label carries one of its levels, or a contrast's column made from them; it is public only if
        every factor whose label it starts with has declared levels (``levels=``, or levels written in
        the formula: ``declares_levels``), never when a level may have been read from the rows
        (``x:gsecret``).  A factor declared otherwise (a Categorical) is left out too, as are term
        labels, which no bounds key can name (``x:g``): the list errs on the short side.

        Examples
        --------
        >>> s = Schema.declare(bounds={"y": (0, 1)}, levels={"h": ["u", "v"]})
        >>> s._public_bound_names(["y", "x", "g", "h"], ["x", "gb", "x:gsecret", "hv", "x:hv"], ["g", "h"], ["y"])
        ['g', 'h', 'hv', 'x', 'x:hv', 'y']
        """
        declared = [f for f in factors if f in self.levels or declares_levels(f)]

        def public(part: str) -> bool:
            return all(f in declared for f in factors if part.startswith(f))

        names = [str(c) for c in design if all(public(p) for p in str(c).split(":"))]
        names += [str(c) for c in columns] + list(keys)
        return sorted(set(names) | {_unquoted(c) for c in names})

    def fill_value(self, name: str) -> float | None:
        """The public fill of a numeric variable (midpoint of its declared bounds), or None."""
        if name in self.fills:
            return float(self.fills[name])
        pair = self.numeric_bounds(name)
        return self.unbounded_fill if pair is None else (pair[0] + pair[1]) / 2

    def variables(self, frame: pd.DataFrame, names: Sequence[str]) -> list[Variable]:
        """The schema resolved for ``names`` from ``frame``'s dtypes (its rows are not read).

        Raises
        ------
        DataError
            ``levels=`` names a column that is not in the data or that is numeric.
        """
        unknown = [c for c in self.levels if c not in frame.columns]
        if unknown:
            raise DataError(f"levels= names column(s) {unknown[:5]} that are not in the data.")
        dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))  # one lookup for wide frames
        declared = self.declared_numeric(frame.columns, dtypes)
        self.refuse_both(declared)
        numeric = _numeric_flags(dtypes.values())
        # one pair for every variable (or none): looked up once, not per column of a wide frame
        common = (
            None
            if isinstance(self.bounds, Mapping) or self.fills
            else (self.numeric_bounds(""), self.fill_value(""))
        )
        out = []
        for name in names:
            dtype = dtypes[name]
            if name in declared or (numeric[id(dtype)] and name not in self.levels):
                pair, fill = common or (self.numeric_bounds(name), self.fill_value(name))
                out.append(Variable(name, "numeric", pair, None, "bounds=", fill))
            elif name in self.levels:  # a factor whatever its dtype: numeric codes too (cyl: 4, 6, 8)
                ordered = isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)
                kind = "ordered" if ordered else "factor"
                out.append(Variable(name, kind, levels=tuple(self.levels[name]), source="levels="))
            elif isinstance(dtype, pd.CategoricalDtype):
                kind = "ordered" if dtype.ordered else "factor"
                out.append(Variable(name, kind, levels=tuple(dtype.categories), source="categorical dtype"))
            elif pd.api.types.is_bool_dtype(dtype):
                out.append(Variable(name, "logical", levels=(False, True), source="boolean type"))
            elif _is_numeric(dtype):
                pair = self.numeric_bounds(name)
                out.append(
                    Variable(name, "numeric", bounds=pair, source="bounds=", fill=self.fill_value(name))
                )
            else:
                out.append(Variable(name, "factor", source="read from the rows"))
        return out

    def given_levels(self) -> dict[str, list]:
        """The levels the call's ``levels=`` declares (not those the formula's text declares), for its record."""
        return {c: list(lev) for c, lev in self.levels.items() if c not in self.formula_levels}

    def refuse_both(self, declared: set[str]) -> None:
        """Refuse a column declared numeric (``bounds=``) and categorical (``levels=``): arguments only."""
        both = sorted(c for c in self.levels if c in declared)
        if both:
            raise DataError(
                f"column '{both[0]}' is declared numeric by bounds= and categorical by levels=; "
                "keep one: its bounds entry (a number) or its levels (a factor)."
            )

    def level_steps(self, frame: pd.DataFrame, names: Sequence[str]) -> list[tuple[str, str]]:
        """The data-dependent step of reading levels from the rows (columns named, levels not)."""
        dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))
        numeric = _numeric_flags(dtypes.values())
        declared = self.declared_numeric(names, dtypes)
        others = [c for c in names if c not in declared and (not numeric[id(dtypes[c])] or c in self.levels)]
        read = [v.name for v in self.variables(frame, others) if not v.declared]
        if not read or not self.private:
            return []
        shown = ", ".join(repr(c) for c in read)
        return [
            (
                f"the levels of {shown} were read from the rows (which levels occur, hence the design's "
                "columns, depends on the data)",
                f"declare them, e.g. levels={{'{read[0]}': [...]}}, or give the column a "
                "pandas.CategoricalDtype with fixed categories",
            )
        ]

    def missing_steps(self, frame: pd.DataFrame, names: Sequence[str]) -> list[tuple[str, str]]:
        """Data-dependent steps of the rule for missing values; from the arguments and dtypes only."""
        if not self.private:
            return []
        if self.na_action == "omit":
            if self.neighbouring == "add_remove":
                return []
            return [
                (
                    'rows with a missing value are dropped (na_action="omit"), so the number of rows '
                    "analysed (n) depends on the data",
                    'use na_action="fill" with declared bounds, or neighbouring="add_remove"',
                )
            ]
        return self.dropped_steps(self.unfilled(frame, names))

    def dropped_steps(self, unfilled: Sequence[str]) -> list[tuple[str, str]]:
        """The step of dropping rows that miss a variable without a public fill (``unfilled``:
        :meth:`unfilled`) under ``na_action="fill"``; none without such variables or privacy."""
        if not unfilled or not self.private or self.na_action != "fill":
            return []
        return [
            (
                "rows with a missing value in a variable without declared bounds "
                f"({_listed(unfilled)}) are dropped, so the number of rows analysed (n) depends on the data",
                "declare public bounds for every variable, e.g. bounds={'x': (0, 10)}, or, for a numeric "
                "column used as a factor, its levels: levels={'x': [...]} or factor(x, levels = c(...))",
            )
        ]

    def filled_notes(self) -> list[tuple[str, type]]:
        """The warning (message, category) that a non-private run given ``na_action="fill"`` fills missing
        values, where R's ``lm``/``glm`` (and the default at eps = inf) drop incomplete rows.

        Examples
        --------
        >>> print(Schema.declare(bounds=(0, 1), na_action="fill", private=False).filled_notes()[0][0][:44])
        na_action="fill" at eps = inf: missing value
        """
        if self.private or self.na_action != "fill" or (self.bounds is None and not self.fills):
            return []  # without bounds nothing has a public fill (unfilled_notes says so)
        return [
            (
                'na_action="fill" at eps = inf: missing values are replaced by their public fills (the midpoint '
                "of the declared bounds, the response's too), so the fit is not R's complete-case lm()/glm(); "
                "leave na_action unset to drop incomplete rows as they do.",
                DataWarning,
            )
        ]

    def unfilled_notes(self, unfilled: Sequence[str]) -> list[tuple[str, type]]:
        """The warning (message, category) that ``na_action="fill"`` cannot fill ``unfilled`` variables (no
        declared bounds, no public fill), for a non-private run given it, which names no step: their
        missing values drop rows, as R's na.omit.  Empty without such variables.

        Examples
        --------
        >>> print(Schema.declare(na_action="fill").unfilled_notes(["Ozone"])[0][0][:60])
        na_action="fill" has no public fill for 'Ozone' (no declared
        """
        if not unfilled:
            return []
        return [
            (
                f'na_action="fill" has no public fill for {_listed(unfilled)} (no declared bounds): rows '
                f"missing them are dropped, as R's na.omit does. Declare their bounds, e.g. "
                f"bounds={{{unfilled[0]!r}: (lo, hi)}}, to fill them with the bounds' midpoint instead.",
                DataWarning,
            )
        ]

    def unfilled(self, frame: pd.DataFrame, names: Sequence[str]) -> list[str]:
        """The numeric variables among ``names`` without a public fill (no declared bounds), whose
        missing values drop their rows under ``na_action="fill"``; from the arguments and ``frame``'s
        dtypes only (an empty frame will do).

        Examples
        --------
        >>> df = pd.DataFrame({"y": [1.0], "z": [2.0], "g": ["a"]})
        >>> Schema.declare(bounds={"y": (0, 1), "log(z)": (-1, 1)}).unfilled(df, ["y", "z", "g"])
        ['z']
        """
        if not isinstance(self.bounds, Mapping) and not self.fills and self.fill_value("") is not None:
            return []  # one fill for every numeric variable
        return [v.name for v in self.variables(frame, names) if v.kind == "numeric" and v.fill is None]

    def rule_for(self, frame: pd.DataFrame, names: Sequence[str]) -> str:
        """The statement's rule for ``names`` of ``frame`` (its columns and dtypes; an empty frame will do):
        :meth:`rule` of the variables without a public fill, followed under ``strict=True`` by
        :meth:`types_rule` of the variables numeric by declaration.

        Examples
        --------
        >>> df = pd.DataFrame({"y": [0.5], "x": ["1.5"], "g": pd.Categorical(["a"])})
        >>> rule = Schema.declare(bounds=(0, 2), strict=True).rule_for(df, ["y", "x", "g"])
        >>> rule[rule.index("Types"):].split(" (every")[0]
        "Types under strict: 'y', 'x' are numeric by declaration"
        """
        dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))
        typed = self.strict_numeric(names, dtypes)
        return self.rule(self.unfilled(frame, names)) + self.types_rule([c for c in names if c in typed])

    def types_rule(self, numeric: Sequence[str]) -> str:
        """The sentence of the statement naming the variables numeric by declaration under ``strict=True``
        (:meth:`strict_numeric`; from the formula, the arguments and the declared dtypes, never the rows),
        so that a text column read as numbers is seen there; empty without them."""
        if not numeric:
            return ""
        return (
            f" Types under strict: {_listed(numeric, 8)} {'is' if len(numeric) == 1 else 'are'} numeric by "
            "declaration (every variable of the formula without declared levels, a Categorical's or an R "
            "factor's). Their entries are read as numbers (a boolean as 0/1); an entry that is not a number "
            "is a missing value. A text column among them needs declared levels to be a factor."
        )

    def rule(self, unfilled: Sequence[str] = ()) -> str:
        """The rule for missing values, for the privacy statement: one sentence per case, from the
        arguments and the dtypes only (``unfilled``: :meth:`unfilled`, the numeric variables without a
        public fill, whose missing values drop their rows under ``na_action="fill"``).

        Examples
        --------
        >>> Schema.declare(neighbouring="add_remove").rule().startswith('Missing values (na_action="omit"')
        True
        >>> "no row is dropped" in Schema.declare(na_action="fill").rule(["z"])
        False
        """
        if self.na_action == "omit":
            return (
                'Missing values (na_action="omit", R\'s na.omit): rows with a missing or non-finite value '
                "in a formula variable, or a level outside the declared ones, are dropped; "
                + (
                    "without privacy (eps = inf) n is the number of complete rows, and is shown."
                    if not self.private
                    else "n is private under adding or removing one row and is not shown."
                    if self.neighbouring == "add_remove"
                    else "the number of rows analysed is data-dependent and is not shown."
                )
            )
        fills = (
            "is replaced by its public fill (the midpoint of the variable's declared bounds, the response "
            "included; a factor's first level; FALSE for a logical; for a value a formula transformation "
            "makes non-finite, the midpoint of that column's declared bounds, or 0)"
        )
        if unfilled:
            dropped = (
                "so the number of rows analysed is data-dependent and is not shown (a named data-dependent step)"
                if self.private
                else "as R's na.omit does"
            )
            return (
                f'Missing values (na_action="fill"): rows with a missing value of {_listed(unfilled)} (no '
                f"declared bounds, so no public fill) are dropped, {dropped}; any other missing or "
                "non-finite value of a formula variable, or a level outside the declared ones, "
                f"{fills}; how many values were filled is not shown."
            )
        return (
            'Missing values (na_action="fill"): no row is dropped; a missing or non-finite value of a '
            f"formula variable, or a level outside the declared ones, {fills}, so n is the number of rows "
            "read; how many values were filled is not shown. A numeric variable without declared bounds has "
            "no public fill: rows missing it are dropped (a named data-dependent step)."
        )

    # ------------------------------------------------------------------ rows
    def code_levels(self, frame: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
        """Columns with declared levels coded as Categoricals with exactly those levels.

        A value outside them becomes missing (R's ``factor(x, levels = ...)``).
        """
        todo = [c for c in names if c in self.levels]
        if not todo:
            return frame
        frame = frame.copy(deep=False)
        for c in todo:
            values = frame[c]
            ordered = isinstance(values.dtype, pd.CategoricalDtype) and bool(values.dtype.ordered)
            if isinstance(values.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(values.dtype):
                values = values.astype(object)
            frame[c] = as_categorical(values, list(self.levels[c]), ordered)
        return frame

    def apply(self, frame: pd.DataFrame, names: Sequence[str]) -> tuple[pd.DataFrame, int]:
        """Declared levels coded, then (under ``"fill"``) missing values replaced by their public fill.

        Returns the frame and the number of values filled (not private: a diagnostic).
        Numeric variables without declared bounds keep their missing values
        (their rows are dropped later, a named step).  Row-local: chunks of
        the data give the chunks of the result.
        """
        frame = self.code_levels(self.read_numeric(frame), names)
        if self.na_action != "fill":
            return frame, 0
        n_filled, changed = 0, {}
        for v in self.variables(frame, names):
            col = frame[v.name]
            if v.kind == "numeric":
                if v.fill is None:
                    continue
                x = col.to_numpy(dtype=float, na_value=np.nan)
                bad = ~np.isfinite(x)
                if bad.any():
                    changed[v.name] = np.where(bad, v.fill, x)
                    n_filled += int(bad.sum())
            elif v.kind == "logical":
                bad = col.isna().to_numpy()
                if bad.any():
                    changed[v.name] = col.fillna(False).astype(bool)
                    n_filled += int(bad.sum())
            else:
                bad = col.isna().to_numpy()
                if bad.any():
                    first = v.levels[0] if v.levels is not None else _first_read_level(col)
                    if first is None:
                        continue  # no level at all: nothing to fill with (model_frame refuses)
                    changed[v.name] = col.fillna(first)
                    n_filled += int(bad.sum())
        if changed:
            frame = frame.copy(deep=False)
            for name, values in changed.items():
                frame[name] = values
        return frame, n_filled


def as_categorical(values: pd.Series, levels: list, ordered: bool = False) -> pd.Categorical:
    """``values`` coded by ``levels``; a value outside them is missing (R's ``factor(x, levels = ...)``).

    Examples
    --------
    >>> as_categorical(pd.Series(["York", "Zzyzx", None]), ["Leeds", "York"]).codes.tolist()
    [1, -1, -1]

    Levels declared as R writes a logical's, ``["FALSE", "TRUE"]``, match the booleans False and
    True (R's ``factor(flag, levels = c("FALSE", "TRUE"))``), entry by entry:

    >>> as_categorical(pd.Series([True, None, False], dtype=object), ["FALSE", "TRUE"]).codes.tolist()
    [1, -1, 0]

    Numbers declared by their text, ``["4", "6", "8"]``, match the numbers 4, 6 and 8 (R's
    ``factor(cyl, levels = c("4", "6", "8"))`` of a numeric cyl):

    >>> as_categorical(pd.Series([6.0, 4.0, 5.0]), ["4", "6", "8"]).codes.tolist()
    [1, 0, -1]
    """
    values = _numbers_as_text(_logical_as_text(values, levels), levels)
    values = values.where(values.isin(levels))  # silently: pandas warns on values outside the categories
    return pd.Categorical(values, categories=levels, ordered=ordered)


def as_numbers(values: pd.Series) -> pd.Series:
    """The entries of a column declared numeric, read as numbers (float64); an entry that is not a number is missing.

    Text is parsed (``"1.5"`` is 1.5, ``"n/a"`` missing), a boolean is 0 or 1, a Categorical is
    read by its labels (R's ``as.numeric(as.character(f))``, not its codes).  A complex entry
    (Python's ``complex``, numpy's, or any entry of a complex column) is no real number: missing,
    silently, whatever its imaginary part.  A date is its days since 1970-01-01, a date-time its
    seconds since the epoch (UTC), a duration its seconds, a time of day its seconds since midnight,
    whether the column has such a type or holds such objects (R's ``as.numeric``: :mod:`dpstats.temporal`).
    Row by row: the result for one entry never depends on another.

    Examples
    --------
    >>> as_numbers(pd.Series(["1.5", "n/a", None, True], dtype=object)).tolist()
    [1.5, nan, nan, 1.0]
    >>> as_numbers(pd.Series(pd.Categorical(["10", "x"]))).tolist()
    [10.0, nan]
    >>> as_numbers(pd.Series([0.5, 5 + 1j, 2 + 0j, "3"], dtype=object)).tolist()
    [0.5, nan, nan, 3.0]
    >>> import datetime
    >>> as_numbers(pd.Series([datetime.date(1970, 1, 3), "4"], dtype=object)).tolist()
    [2.0, 4.0]
    """
    if _is_numeric(values.dtype):
        return values
    kind = temporal.kind_of(values.dtype)
    if kind == "unreadable":  # a list, a struct, binary data: no number, refused naming the column
        raise temporal.refusal(str(values.name), temporal.type_text(values.dtype))
    if kind is not None:
        return temporal.numbers(values)
    if pd.api.types.is_bool_dtype(values.dtype) and not values.hasnans:
        return values.astype(float)
    read = pd.to_numeric(values.astype(object), errors="coerce")
    if pd.api.types.is_complex_dtype(read.dtype):  # some entry was complex: only those are missing
        complex_entry = values.astype(object).map(_is_complex).to_numpy(dtype=bool)
        read = pd.Series(np.where(complex_entry, np.nan, read.to_numpy().real), index=values.index)
    read = read.astype(float)
    unread = read.isna().to_numpy() & values.notna().to_numpy()
    if values.dtype == object and unread.any():  # dates, date-times, durations held as objects
        read[unread] = [temporal.entry_number(v) for v in values[unread]]
    return read


def _is_complex(value: Any) -> bool:
    return isinstance(value, (complex, np.complexfloating))


def _numbers_as_text(values: pd.Series, levels: list) -> pd.Series:
    """Numbers written as R's ``as.character`` writes them ("4", "4.5") when every declared level is text."""
    if not _is_numeric(values.dtype) or not all(isinstance(lev, str) for lev in levels):
        return values
    return values.map(lambda v: None if pd.isna(v) else f"{v:.15g}", na_action="ignore").astype(object)


def _logical_as_text(values: pd.Series, levels: list) -> pd.Series:
    """Booleans written "TRUE"/"FALSE" when the declared levels are R's text for them (and no level is a boolean)."""
    text = {"TRUE", "FALSE"} & {lev for lev in levels if isinstance(lev, str)}
    if not text or any(isinstance(lev, (bool, np.bool_)) for lev in levels):
        return values
    if pd.api.types.is_bool_dtype(values.dtype) and not values.hasnans:
        return values.map({True: "TRUE", False: "FALSE"})
    if values.dtype != object:
        return values
    is_bool = values.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    if not is_bool.any():
        return values
    values = values.copy()
    values[is_bool] = ["TRUE" if v else "FALSE" for v in values[is_bool]]
    return values


def _numeric_flags(dtypes) -> dict[int, bool]:
    """Whether each distinct dtype (by identity) is numeric, classified once per dtype."""
    return {id(dt): _is_numeric(dt) for dt in {id(dt): dt for dt in dtypes}.values()}


def _first_read_level(col: pd.Series):
    """The first level R's ``factor()`` would give a text column (sorted values); None if all missing."""
    values = pd.unique(col[col.notna()])
    return sorted(values, key=str)[0] if len(values) else None


def _is_numeric(dtype) -> bool:
    """Real numbers: numeric, not boolean, not complex (a complex column's entries are no real numbers)."""
    types = pd.api.types
    return (
        types.is_numeric_dtype(dtype) and not types.is_bool_dtype(dtype) and not types.is_complex_dtype(dtype)
    )


def _listed(names: Sequence[str], most: int = 5) -> str:
    """Column names for a message: the first ``most`` quoted, then " …" when there are more."""
    return ", ".join(repr(c) for c in names[:most]) + (" …" if len(names) > most else "")


def _unquoted(name: str) -> str:
    return name[1:-1] if len(name) > 2 and name[0] == name[-1] == "`" else name


def _pair(value) -> tuple[float, float] | None:
    if isinstance(value, (str, Mapping)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) != 2:
        return None
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        return None
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo < hi else None


def _centred(bounds) -> bool:
    """A norm bound (a number) or private bounds: the public centre is 0."""
    if isinstance(bounds, numbers.Real) and not isinstance(bounds, bool):
        return True
    return (isinstance(bounds, str) and bounds == "auto") or type(bounds).__name__ in (
        "AutoBounds",
        "PrivateBounds",
    )


# ----------------------------------------------------------------------------- the public n
@dataclass(frozen=True)
class PublicN:
    """Why a method's release needs the public number of rows read (its sensitivities, splits or
    checks use n): ``na_action="omit"`` would make that number private, so a private call that
    declares it is refused, before anything is read or spent (:meth:`refuse_omit`).

    ``add_remove``: how the method runs under ``neighbouring="add_remove"`` instead, where it does
    (n is private there and the method is built for that); the refusal then holds under
    ``"replace"`` only and names that way out.

    Examples
    --------
    >>> need = PublicN("dp_lm", "n is exact in the released XᵀX")
    >>> need.refuse_omit(Schema.declare(bounds=(-1, 1), na_action="fill"))  # fills keep n public
    """

    method: str
    why: str
    add_remove: str = ""
    dropped: str = ""

    def refuse_unfilled(
        self, schema: Schema, unfilled: Sequence[str], factors: Mapping[str, str] | None = None
    ) -> None:
        """Refuse a private call in which a formula variable has no public fill (``unfilled``, from
        :meth:`Schema.unfilled`: decided from the arguments and the dtypes), where the release needs
        the public n: its missing values would drop rows, making n private as ``na_action="omit"``
        does.  ``dropped`` set: the method runs with n private then (a named step), and the call
        stands.  ``factors``: the variables the formula uses only as a factor, by the term that makes
        it (``{"cyl": "C(cyl)"}``, :func:`dpstats.formula.factor_terms`): their fix is ``levels=``, and
        the refusal names the term.

        Examples
        --------
        >>> need = PublicN("dp_lm", "n is exact in the released XᵀX")
        >>> need.refuse_unfilled(Schema.declare(bounds={"y": (0, 1)}), ["z"])
        Traceback (most recent call last):
        ...
        dpstats.errors.PrivacyParameterError: dp_lm needs declared bounds for 'z': ...
        """
        if isinstance(schema.bounds, (Mapping, list, tuple)):  # a malformed bounds= is named as such, first
            check_bounds_form(schema.bounds)
        if not unfilled or self.dropped or schema.na_action != "fill" or not schema.private:
            return
        if self.add_remove and schema.neighbouring == "add_remove":
            return
        method = f"{self.method} under neighbouring='replace'" if self.add_remove else self.method
        other = f', or use neighbouring="add_remove" ({self.add_remove})' if self.add_remove else ""
        as_factor = [v for v in unfilled if v in (factors or {})]
        if as_factor:
            name = as_factor[0]
            raise PrivacyParameterError(
                f"{method}: {factors[name]} needs declared levels: levels={{{name!r}: [...]}}. Without them "
                f"its levels would be read from the rows, and a missing value of the numeric column {name!r} "
                f"would have no public fill and drop its row, but {self.why}, so the number of rows read "
                f"must stay public. Declared levels (levels={{{name!r}: [...]}}, or factor({name}, levels = "
                f"c(...)) in the formula) fill a missing value with the first level and read none{other}. "
                "Nothing was read or spent."
            )
        # the missing bounds and their fix first: the message is the same whether or not a value is missing
        example = ", ".join(f"{name!r}: (lo, hi)" for name in unfilled[:3])
        others = ", and so for each of the others" if len(unfilled) > 3 else ""
        typed = (
            " (Under strict=True a variable not declared categorical is numeric by declaration, whatever its "
            f"dtype; for a categorical one declare its levels: levels={{{unfilled[0]!r}: [...]}}, or give the "
            "column a pandas.CategoricalDtype with fixed categories.)"
            if schema.strict
            else ""
        )
        raise PrivacyParameterError(
            f"{method} needs declared bounds for {_listed(unfilled)}: e.g. bounds={{{example}}}{others}, with the "
            f'default na_action="fill" (each missing value then gets its public fill; no row is dropped)'
            f"{other}. Without bounds a numeric variable has no public fill, and {self.method} cannot drop "
            f"rows with a missing value in {_listed(unfilled)}: {self.why}, so it needs the public number of "
            f"rows read, which dropping rows would make private.{typed} Nothing was read or spent."
        )

    def refuse_omit(self, schema: Schema) -> None:
        """Refuse ``na_action="omit"`` on a private call where the release needs the public n."""
        if schema.na_action != "omit" or not schema.private:
            return
        if self.add_remove and schema.neighbouring == "add_remove":
            return
        method = f"{self.method} under neighbouring='replace'" if self.add_remove else self.method
        other = f', or use neighbouring="add_remove" ({self.add_remove})' if self.add_remove else ""
        raise PrivacyParameterError(
            f'{method} cannot use na_action="omit": {self.why}, so it needs the public number of rows read, '
            "which dropping rows would make private. Declare bounds for every variable and keep the "
            f'default na_action="fill" (each missing value gets its public fill; no row is dropped){other}. '
            "Nothing was read or spent."
        )


# ----------------------------------------------------------------------------- documentation
SCHEMA_PARAMETERS = """\
    levels : dict, optional
        Declared levels of a factor, e.g. ``{"city": ["Leeds", "York"]}`` or, for numeric codes,
        ``{"cyl": [4, 6, 8]}``: the column is a factor with these levels in every term that makes
        one of it (``cyl``, ``factor(cyl)``, ``C(cyl)``), and ``predict()`` codes newdata with
        them; a value outside them is missing (:mod:`dpstats.schema`, which also says which types
        are declared by themselves and why reading levels from the rows is a named step).
    na_action : {"fill", "omit"}, optional
        Missing values: ``"fill"`` (default under ``neighbouring="replace"``) replaces each by
        its public fill (midpoint of the declared bounds, the response's too, a factor's first
        level), no row dropped; ``"omit"`` (default under ``"add_remove"``, and at eps = inf, as
        R's ``lm``) drops incomplete rows (:mod:`dpstats.schema`).
"""


def read_levels_file(path: str | None) -> dict | None:
    """A levels file as the command line takes it (``--levels FILE.json``): ``{"column": ["level", ...]}``.

    Examples
    --------
    >>> read_levels_file(None) is None
    True
    """
    if path is None:
        return None
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read levels file '{path}': {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise DataError('levels file must hold {"column": ["level", ...], ...}')
    return value
