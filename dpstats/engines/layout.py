"""The formula on chunks: one design layout fixed before the pass, applied to every chunk.

A chunk of rows must give the same terms and column names as
:func:`dpstats.formula.model_frame` gives on the whole frame.  Two things in a
model frame depend on more than one row: the levels of a factor (which
dummies exist) and stateful transforms (``center()``, ``scale()``, splines).
Levels are fixed before the pass — declared (``levels=`` on the front door or
on ``stream()``/``on_dask()``, a Categorical dtype with known categories,
booleans) or read in a first pass over the factor columns, which is a
*data-dependent step* (the set of levels present is a function of the data)
and is named as such; stateful transforms are refused.  Every chunk's factor
columns are then coded as categoricals with exactly those levels (a value
outside them is missing, as in R's ``factor(x, levels = ...)``), and
``model_frame`` runs on the chunk with the schema's rule for missing values
(row-local, so chunk by chunk gives what the whole frame gives) and the
constant-column check postponed to the end of the pass.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError, FormulaError
from ..schema import Schema, as_categorical
from ..temporal import read_columns
from ..formula import (
    INTERCEPT,
    ModelFrame,
    chunk_unsafe_terms,
    expression_variables,
    is_factor_dtype,
    model_frame,
    rhs_variables,
    simple_rhs_tokens,
    split_formula,
)


@dataclass
class Layout:
    """What every chunk must agree on: formula, schema and factor levels.

    Attributes
    ----------
    formula : str
    drop_intercept, one_sided : bool
    columns : list of str
        Columns of the first chunk, in order.
    factor_kinds : dict
        ``column -> "bool" | "factor" | "ordered"`` for the non-numeric columns.
    levels : dict
        ``column -> list of levels`` for every factor the formula uses.
    names, terms : list of str
        Design column names and terms (equal to ``model_frame`` on the whole data).
    steps : list of (str, str)
        Data-dependent steps taken to fix the layout (step, how to avoid it).
    """

    formula: str
    drop_intercept: bool
    one_sided: bool
    columns: list[str]
    factor_kinds: dict[str, str]
    variables: list[str]
    levels: dict[str, list] = field(default_factory=dict)
    steps: list[tuple[str, str]] = field(default_factory=list)
    prototype: ModelFrame | None = None
    schema: Schema | None = None

    @property
    def names(self) -> list[str]:
        return list(self.prototype.names)

    @property
    def terms(self) -> list[str]:
        return list(self.prototype.terms)

    @property
    def p(self) -> int:
        return len(self.prototype.names)

    @property
    def numeric_only(self) -> bool:
        return not any(v in self.factor_kinds for v in self.variables)

    @property
    def plain(self) -> bool:
        """Every design column is a numeric data column as it is (no intercept, no transform)."""
        proto = self.prototype
        response_ok = proto.response is None or proto.response in self.columns
        return (
            self.numeric_only
            and response_ok
            and INTERCEPT not in proto.names
            and set(proto.names) <= set(self.columns)
        )

    # ------------------------------------------------------------------ chunks
    @property
    def declared_numeric(self) -> set[str]:
        """Columns numeric by declaration (a per-variable ``bounds=`` entry, or under ``strict=True`` every
        variable not declared categorical, :mod:`dpstats.schema`): read as numbers in every chunk, whatever
        type the chunk gives them.  A factor of the layout (a declared Categorical) is none of them."""
        if self.schema is None:
            return set()
        return self.schema.declared_numeric(self.columns) - set(self.factor_kinds)

    def check_columns(self, frame: pd.DataFrame, where: str) -> None:
        """A chunk must have the first chunk's columns, with factors still factors (a column numeric
        by declaration is read as numbers whatever its type in the chunk: that type comes from the rows)."""
        cols = [str(c) for c in frame.columns]
        have, known = set(cols), set(self.columns)
        missing = [c for c in self.columns if c not in have]
        extra = [c for c in cols if c not in known]
        if missing or extra:
            raise schema_error(where, missing=missing, extra=extra)
        declared = self.declared_numeric | set(self.schema.levels if self.schema is not None else ())
        for c in self.variables:
            if c in declared:  # its type is the declaration's (bounds= numeric, levels= a factor)
                continue
            now = is_factor_dtype(frame[c].dtype)
            if now != (c in self.factor_kinds):
                was = "non-numeric (a factor)" if c in self.factor_kinds else "numeric"
                raise schema_error(where, changed=[(c, was, str(frame[c].dtype))])

    def code(self, frame: pd.DataFrame, where: str) -> pd.DataFrame:
        """The chunk with every used factor coded by the fixed levels (other values become missing),
        and every column numeric by declaration read as numbers (:meth:`dpstats.Schema.read_numeric`)."""
        if self.schema is not None:
            frame = self.schema.read_numeric(frame)
        frame = frame.copy(deep=False) if self.levels else frame
        for col, lev in self.levels.items():
            values = frame[col]
            if self.factor_kinds[col] == "bool" or isinstance(values.dtype, pd.CategoricalDtype):
                values = values.astype(object)
            frame[col] = as_categorical(values, lev, self.factor_kinds[col] == "ordered")
        return frame

    def frame(self, chunk: pd.DataFrame, where: str, deferred: bool) -> ModelFrame:
        """``model_frame`` on one chunk, with the schema's rule for missing values.

        Under ``na_action="omit"`` (or without a schema) incomplete rows are
        dropped here, on the variables the formula uses (the rule of
        ``model_frame``); under ``"fill"`` ``model_frame`` fills them (row by
        row, so chunks agree with the whole frame).  Nothing is warned.
        ``deferred`` (plain numeric designs only) skips the scan: X is then a
        view of the chunk and the caller checks finiteness from its statistics.
        """
        chunk = self.code(chunk, where)
        deferred = deferred and self.numeric_only and self._response_finite(chunk)
        n_dropped = 0
        fill = self.schema is not None and self.schema.na_action == "fill"
        if not deferred and not fill:
            chunk, n_dropped = self.complete_rows(chunk)
        mf = model_frame(
            self.formula,
            chunk,
            drop_intercept=self.drop_intercept,
            one_sided=self.one_sided,
            min_rows=0,
            check_constant=False,
            defer_checks=deferred,
            schema=self._chunk_schema,
            drop_unused_levels=False,  # every chunk has the prototype's columns
        )
        if mf.names != self.prototype.names:
            raise DataError(
                f"{where} gives design columns {mf.names[:5]}... instead of "
                f"{self.prototype.names[:5]}...; declare levels= for the factors."
            )
        mf.n_dropped += n_dropped  # model_frame counts rows a transformation made non-finite
        return mf

    @property
    def _chunk_schema(self) -> Schema | None:
        """The schema for one chunk: the declared levels of the columns it uses (coded already; kept, so
        that ``factor()`` of such a column keeps them all, as on the whole data)."""
        if self.schema is None:
            return None
        from dataclasses import replace

        levels = {c: lev for c, lev in self.schema.levels.items() if c in self.variables}
        return replace(
            self.schema, levels=levels, check_names=False
        )  # names checked once, on the whole source

    def _response_finite(self, chunk: pd.DataFrame) -> bool:
        lhs = self.prototype.response
        if not lhs:
            return True
        if lhs not in chunk.columns:
            return False  # an expression: take the careful route
        return bool(np.isfinite(chunk[lhs].to_numpy(dtype=float, na_value=np.nan)).all())

    def complete_rows(self, chunk: pd.DataFrame) -> tuple[pd.DataFrame, int]:
        """Rows with every used variable present and finite (R's na.omit), and the count dropped."""
        numeric = [c for c in self.variables if c not in self.factor_kinds]
        bad = np.zeros(len(chunk), dtype=bool)
        if numeric:
            bad |= ~np.isfinite(chunk[numeric].to_numpy(dtype=float, na_value=np.nan)).all(axis=1)
        for c in self.variables:
            if c in self.factor_kinds:
                bad |= chunk[c].isna().to_numpy()
        n_bad = int(bad.sum())
        return (chunk.loc[~bad].reset_index(drop=True), n_bad) if n_bad else (chunk, 0)


def schema_error(where: str, missing=(), extra=(), changed=()) -> DataError:
    """A chunk whose schema differs from the first chunk's."""
    parts = []
    if missing:
        parts.append(f"lacks column(s) {list(missing)[:10]}")
    if extra:
        parts.append(f"has column(s) {list(extra)[:10]} that the first chunk does not have")
    for col, was, now in changed:
        parts.append(f"has column '{col}' of type {now} where the first chunk had {was}")
    return DataError(
        f"{where} {'; '.join(parts)}. Every chunk (file, row group, partition) must have "
        "the same columns with the same types: rewrite the odd file, or cast the column "
        "to one type in all files."
    )


# ---------------------------------------------------------------------------- building
def used_variables(
    formula: str,
    schema: pd.DataFrame,
    one_sided: bool,
    factors: Collection[str] = (),
    declared: Collection[str] = (),
) -> list[str]:
    """Columns of ``schema`` that ``formula`` uses (the rule of ``model_frame``); ``factors`` and
    ``declared`` as :func:`~dpstats.formula.chunk_unsafe_terms` takes them."""
    lhs, rhs = split_formula(formula, one_sided)
    unsafe = chunk_unsafe_terms(formula, list(schema.columns), factors, declared)
    if unsafe:
        raise FormulaError(
            f"formula '{formula}' uses {', '.join(unsafe)}, whose value on one row depends on all rows "
            "(means, quantiles, knots or the levels that occur); chunked engines cannot apply it chunk by "
            "chunk. Use public constants (poly(x, 2, raw = TRUE), ns(x, knots = ..., Boundary.knots = ...), "
            "factor(x, levels = ...)), transform the columns before the analysis, or use in-memory data."
        )
    tokens = simple_rhs_tokens(rhs)
    used = [lhs] if lhs and lhs in schema.columns else []
    if lhs and lhs not in schema.columns:
        used += expression_variables(lhs, schema, formula)
    used += [v for v in rhs_variables(tokens, rhs, schema, lhs, formula) if v != lhs]
    return list(dict.fromkeys(used))


def factor_kind(dtype) -> str | None:
    """ "bool", "ordered" or "factor" for non-numeric dtypes, None for numeric ones."""
    if not is_factor_dtype(dtype):
        return None
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        return "ordered"
    return "factor"


def with_source_levels(rules: Schema | None, declared: dict | None, columns) -> Schema | None:
    """``rules`` with the levels a source declares (``stream(levels=)``, ``on_dask(levels=)``) for its
    ``columns`` as ``levels=`` declares them (the front door's win), under ``strict=True``: such a column is
    declared categorical, not numeric by declaration (:meth:`dpstats.schema.Schema.strict_numeric`)."""
    if rules is None or not declared or not (rules.strict and rules.private):
        return rules
    names = set(map(str, columns))
    source = {str(c): tuple(lev) for c, lev in declared.items() if str(c) in names}
    return replace(rules, levels={**source, **rules.levels})


def _declared_levels(schema: pd.DataFrame, declared, rules: Schema | None, kinds: dict, what: str) -> dict:
    """Levels known before any row is read: the source's ``levels=``, the front door's, known categories."""
    declared = dict(declared or {})
    if rules is not None:
        declared.update({c: list(lev) for c, lev in rules.levels.items()})
    for col, dt in zip(schema.columns, schema.dtypes):
        if col not in declared and _known_categories(dt):
            declared[col] = list(dt.categories)
    unknown = [c for c in declared if c not in schema.columns]
    if unknown:
        raise DataError(f"levels= names column(s) {unknown} that are not in {what}.")
    for col, lev in declared.items():
        if not isinstance(lev, (list, tuple)) or not lev or len(set(lev)) != len(lev):
            raise DataError(f"levels['{col}'] must be a non-empty list of distinct levels, got {lev!r}.")
        if col not in kinds:
            raise DataError(
                f"levels= declares column '{col}', which is numeric in {what}; "
                "levels are for non-numeric (factor) columns."
            )
    return declared


def _known_categories(dtype) -> bool:
    """A Categorical dtype whose categories are known before reading rows (Dask marks unknown ones)."""
    if not isinstance(dtype, pd.CategoricalDtype) or not len(dtype.categories):
        return False
    return list(dtype.categories) != ["__UNKNOWN_CATEGORIES__"]


def sort_levels(values) -> list:
    """Levels as ``model_frame`` orders the values of a string column (by their text)."""
    return sorted(set(values), key=str)


def build_layout(
    formula: str,
    schema: pd.DataFrame,
    *,
    drop_intercept: bool,
    one_sided: bool,
    declared: dict | None,
    first_pass,
    what: str,
    rules: Schema | None = None,
) -> Layout:
    """Fix the design layout from the schema (an empty frame with the data's dtypes).

    ``first_pass(columns) -> {column: values}`` reads the distinct values of
    factor columns without declared levels; ``what`` names the data in messages.
    ``rules`` is the front door's :class:`~dpstats.schema.Schema`: its levels
    join ``declared`` (the front door's win), and its rule for missing values
    applies to every chunk.  Categorical columns with known categories count
    as declared (no first pass reads them).
    """
    # dates as numbers (dpstats.temporal); ``typed`` keeps the source's types for the refusal below
    schema = typed = read_columns(schema.rename(columns=str), refuse=())
    rules = with_source_levels(rules, declared, schema.columns)
    if rules is not None:  # numeric by declaration, whatever type the first chunk gives them
        rules.refuse_both(rules.declared_numeric(schema.columns))
        schema = rules.read_numeric(schema)
    kinds = {c: k for c, dt in zip(schema.columns, schema.dtypes) if (k := factor_kind(dt)) is not None}
    declared_here = [c for c in (rules.levels if rules is not None else ()) if c in schema.columns]
    kinds |= {c: "factor" for c in declared_here if c not in kinds}  # levels= makes numeric codes a factor
    used = used_variables(formula, schema, one_sided, factors=list(kinds), declared=declared_here)
    read_columns(typed, refuse=used)  # a variable of a type with no reading (a list) is refused
    layout = Layout(formula, drop_intercept, one_sided, list(schema.columns), kinds, used, schema=rules)
    declared = _declared_levels(schema, declared, rules, kinds, what)
    factors = [c for c in used if c in kinds]
    for col in factors:
        if col in declared:
            layout.levels[col] = list(declared[col])
        elif kinds[col] == "bool":
            layout.levels[col] = [False, True]
    todo = [c for c in factors if c not in layout.levels]
    if todo:
        found = first_pass(todo)
        for col in todo:
            if not len(found[col]):
                raise DataError(f"factor column '{col}' has no non-missing value in {what}.")
            layout.levels[col] = sort_levels(found[col])
        layout.steps.append(
            (
                f"levels of factor(s) {', '.join(repr(c) for c in todo)} read from the data in a first pass "
                "(which levels occur, hence which dummy columns exist, depends on the data)",
                f"declare the levels, e.g. levels={{'{todo[0]}': [...]}}",
            )
        )
    empty = layout.code(schema.iloc[:0], what)
    layout.prototype = model_frame(
        formula,
        empty,
        drop_intercept=drop_intercept,
        one_sided=one_sided,
        min_rows=0,
        check_constant=False,
        schema=layout._chunk_schema,
        drop_unused_levels=False,  # no rows: the declared levels
    )
    return layout
