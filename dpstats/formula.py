"""Model frames: formula + data -> response, design matrix, names (DESIGN §2.2).

R semantics: ``.`` (all other columns), ``-`` (remove), ``0``/``-1`` (no
intercept), ``a:b``, ``a*b``, ``I()``, ``C()``, functions such as ``log()``;
factors (categorical, string and logical columns) become treatment dummies
named as R's ``model.matrix`` names them (``ab`` for level ``b`` of ``a``,
``tTRUE`` for a logical ``t``).  Rows with a missing or non-finite value in a
variable the formula uses are dropped and counted (R's ``na.omit``).

Formulas whose right-hand side is only ``.``, column names, removals and
intercept terms are built directly — main effects column by column — which is
what makes ``y ~ .`` on 22 283 columns take milliseconds.  Anything else goes
through patsy, whose column names are translated to R's.
"""

from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import DataError, DataWarning, FormulaError

INTERCEPT = "(Intercept)"
_IDENT = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*$")
_SIMPLE_TOKEN = re.compile(r"^(\.|0|1|[A-Za-z_.][A-Za-z0-9_.]*|`[^`]+`)$")
_FUNCTIONS = {
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs, "sin": np.sin, "cos": np.cos,
    "np": np,
}


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

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]


def model_frame(
    formula: str,
    data: pd.DataFrame | dict,
    *,
    drop_intercept: bool = False,
    one_sided: bool = False,
    response: str = "numeric",
    min_rows: int = 2,
    check_constant: bool = True,
    defer_checks: bool = False,
) -> ModelFrame:
    """Build the response and design matrix of ``formula`` on ``data``.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"y ~ ."``, ``"y ~ a * b - 1"``, ``"~ x1 + x2"``.
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
        A constant predictor column is a :class:`DataError`.
    defer_checks : bool
        For designs of plain numeric columns only: skip the scan for
        non-finite values and constant columns and return ``checked=False``
        with X a view of the data where possible; the caller finishes the
        checks from one fused statistics pass (:func:`finish_checks`).

    Returns
    -------
    ModelFrame

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1., 2, 3, 4], "x": [0., 1, 0, 2],
    ...                    "g": ["a", "b", "c", "a"]})
    >>> model_frame("y ~ .", df).names
    ['(Intercept)', 'x', 'gb', 'gc']
    """
    data = _as_frame(data)
    lhs, rhs = _split(formula, one_sided)
    rhs_tokens = _rhs_tokens(rhs)
    variables_rhs = _rhs_variables(rhs_tokens, rhs, data, lhs)
    used = ([lhs] if lhs and lhs in data.columns else []) + [v for v in variables_rhs if v != lhs]
    if lhs and lhs not in data.columns:
        used = _expression_variables(lhs, data) + used
    used = list(dict.fromkeys(used))
    if defer_checks and _deferrable(rhs_tokens, data, used, lhs, response):
        return _deferred_frame(formula, data, rhs_tokens, lhs, used, drop_intercept, min_rows)
    frame, n_dropped = _complete_rows(data, used, formula)
    if len(frame) < min_rows:
        raise DataError(
            f"only {len(frame)} complete row(s) remain for formula '{formula}' "
            f"({n_dropped} dropped for missing values); at least {min_rows} are needed."
        )
    y, classes = _response(lhs, frame, response) if lhs else (None, None)
    if rhs_tokens is not None:
        X, names, terms, intercept, levels = _direct_design(rhs_tokens, frame, lhs, add_intercept=not drop_intercept)
    else:
        X, names, terms, intercept, levels = _patsy_design(rhs, frame, lhs)
    X, y, n_dropped = _drop_nonfinite_design_rows(X, y, n_dropped, formula)
    if len(y if y is not None else X) < min_rows:
        raise DataError(f"only {X.shape[0]} complete row(s) remain for formula '{formula}'; "
                        f"at least {min_rows} are needed.")
    if drop_intercept and intercept:
        keep = [i for i, nm in enumerate(names) if nm != INTERCEPT]
        X, names, terms = X[:, keep], [names[i] for i in keep], [terms[i] for i in keep]
        intercept = False
    if check_constant:
        _check_constant(X, names)
    return ModelFrame(
        formula=formula, X=X, names=names, terms=terms, y=y, response=lhs or None,
        intercept=intercept, n_dropped=n_dropped, variables=used,
        classes=classes, factor_levels=levels,
    )


def _drop_nonfinite_design_rows(X, y, n_dropped: int, formula: str):
    """Rows where a transformation (log, sqrt, I(1/x)) gave NaN or inf are dropped and counted."""
    finite_y = y is None or np.isfinite(y).all()
    if (X.size == 0 or np.isfinite(X).all()) and finite_y:
        return X, y, n_dropped
    good = np.isfinite(X).all(axis=1) if X.size else np.ones(X.shape[0], dtype=bool)
    if not finite_y:
        good &= np.isfinite(y)
    bad = int((~good).sum())
    warnings.warn(
        f"{bad} row(s) dropped because a transformation in '{formula}' gave NaN or inf "
        "(e.g. log of a non-positive value). The count is not private.",
        DataWarning, stacklevel=4)
    return X[good], (y[good] if y is not None else None), n_dropped + bad


def _deferrable(rhs_tokens, data: pd.DataFrame, used: list[str], lhs: str, response: str) -> bool:
    if rhs_tokens is None or response != "numeric" or (lhs and lhs not in data.columns):
        return False
    return not any(_factor_flags(data, used).values())


def _deferred_frame(formula, data, tokens, lhs, used, drop_intercept, min_rows) -> ModelFrame:
    """Plain numeric columns, no scan: X is a view of the data where pandas allows."""
    if len(data) < min_rows:
        raise DataError(f"data has {len(data)} row(s); at least {min_rows} are needed for '{formula}'.")
    y = data[lhs].to_numpy(dtype=float) if lhs else None
    if y is not None and not np.isfinite(y).all():
        return model_frame(formula, data, drop_intercept=drop_intercept, min_rows=min_rows)
    X, names, terms, intercept, _ = _direct_design(tokens, data, lhs, add_intercept=not drop_intercept)
    return ModelFrame(formula=formula, X=X, names=names, terms=terms, y=y, response=lhs or None,
                      intercept=intercept, n_dropped=0, variables=used, checked=False)


def finish_checks(mf: ModelFrame, constant_mask: np.ndarray, finite: bool) -> bool:
    """Complete the deferred checks from one statistics pass.

    Returns False when non-finite values were seen (rebuild the frame with
    ``defer_checks=False`` to drop and count those rows); raises
    :class:`DataError` for constant columns.
    """
    if not finite:
        return False
    constant = np.flatnonzero(constant_mask)
    _raise_constant([mf.names[j] for j in constant if mf.names[j] != INTERCEPT])
    mf.checked = True
    return True


# --------------------------------------------------------------------------- parsing
def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, dict):
        data = pd.DataFrame(data)
    if not isinstance(data, pd.DataFrame):
        raise DataError(
            f"data must be a pandas DataFrame (or a dict of columns), got {type(data).__name__}."
        )
    dup = data.columns[data.columns.duplicated()].unique().tolist()
    if dup:
        raise DataError(f"data has duplicate column names {dup[:5]}; rename them to be unique.")
    if data.attrs:
        # pandas deep-copies attrs on every column access; the model frame needs none of them
        data = data.copy(deep=False)
        data.attrs = {}
    if not all(isinstance(c, str) for c in data.columns):
        data = data.rename(columns=str)
    return data


def _split(formula: str, one_sided: bool) -> tuple[str, str]:
    if not isinstance(formula, str):
        raise FormulaError(f"formula must be a string such as 'y ~ .', got {type(formula).__name__}.")
    if formula.count("~") != 1:
        raise FormulaError(f"formula '{formula}' must contain exactly one '~', e.g. 'y ~ x1 + x2'.")
    lhs, rhs = (s.strip() for s in formula.split("~"))
    if one_sided and lhs:
        raise FormulaError(
            f"formula '{formula}' must be one-sided (no response), e.g. '~ .' or '~ x1 + x2'."
        )
    if not one_sided and not lhs:
        raise FormulaError(f"formula '{formula}' needs a response on the left of '~', e.g. 'y ~ .'.")
    if not rhs:
        raise FormulaError(f"formula '{formula}' has nothing on the right of '~'; use '.' for all columns.")
    return _unquote(lhs) if lhs else "", rhs


def _unquote(name: str) -> str:
    return name[1:-1] if name.startswith("`") and name.endswith("`") else name


def _rhs_tokens(rhs: str) -> list[tuple[str, str]] | None:
    """Signed tokens of a simple right-hand side, or None if patsy is needed."""
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
    near = difflib.get_close_matches(name, [str(c) for c in data.columns[:50000]], n=3, cutoff=0.5)
    return f" Did you mean {', '.join(repr(m) for m in near)}?" if near else ""


def _unknown(name: str, data: pd.DataFrame, formula_side: str) -> FormulaError:
    return FormulaError(
        f"column '{name}' in formula '{formula_side}' is not in the data.{_close(name, data)} "
        "Check the spelling or add the column to the data frame."
    )


def _rhs_variables(tokens, rhs: str, data: pd.DataFrame, lhs: str) -> list[str]:
    if tokens is None:
        return _expression_variables(_expand_dot(rhs, data, lhs), data)
    out: list[str] = []
    for sign, tok in tokens:
        if tok in ("0", "1"):
            continue
        if tok == ".":
            out.extend(c for c in data.columns if c != lhs)
        elif tok not in data.columns:
            raise _unknown(tok, data, "~ " + rhs)
        elif sign == "+":
            out.append(tok)
    return out


def _expression_variables(expr: str, data: pd.DataFrame) -> list[str]:
    """Column names an expression refers to (identifiers and Q("...") quotes)."""
    found = re.findall(r'Q\("([^"]+)"\)', expr)
    stripped = re.sub(r'Q\("[^"]+"\)', " ", expr)
    for ident in re.findall(r"[A-Za-z_.][A-Za-z0-9_.]*", stripped):
        if ident in data.columns:
            found.append(ident)
        elif ident not in _FUNCTIONS and ident not in ("I", "C", "Q", "T", "np") and not _is_call(ident, stripped):
            raise _unknown(ident, data, expr)
    return list(dict.fromkeys(found))


def _is_call(ident: str, expr: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_.]){re.escape(ident)}\s*\(", expr) is not None or "." in ident


def _expand_dot(rhs: str, data: pd.DataFrame, lhs: str) -> str:
    if not re.search(r"(?<![A-Za-z0-9_])\.(?![A-Za-z0-9_])", rhs):
        return rhs
    cols = " + ".join(_patsy_name(c) for c in data.columns if c != lhs)
    return re.sub(r"(?<![A-Za-z0-9_])\.(?![A-Za-z0-9_])", f"({cols})", rhs)


def _patsy_name(col: str) -> str:
    return col if _IDENT.match(col) and "." not in col else f'Q("{col}")'


# --------------------------------------------------------------------------- rows
def _is_factor(s: pd.Series) -> bool:
    return _is_factor_dtype(s.dtype)


def _is_factor_dtype(dtype) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind not in "iuf"
    return not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def _factor_flags(frame: pd.DataFrame, columns: list[str]) -> dict[str, bool]:
    """Which of ``columns`` are factors, classifying each distinct dtype once."""
    by_dtype: dict = {}
    dtypes = dict(zip(frame.columns, frame.dtypes))
    out = {}
    for c in columns:
        dt = dtypes[c]
        key = id(dt)
        if key not in by_dtype:
            by_dtype[key] = _is_factor_dtype(dt)
        out[c] = by_dtype[key]
    return out


def _complete_rows(data: pd.DataFrame, used: list[str], formula: str) -> tuple[pd.DataFrame, int]:
    flags = _factor_flags(data, used)
    bad = np.zeros(len(data), dtype=bool)
    numeric = [c for c in used if not flags[c]]
    if numeric:
        values = data[numeric].to_numpy(dtype=float, na_value=np.nan)
        bad |= ~np.isfinite(values).all(axis=1)
    for c in used:
        if flags[c]:
            bad |= data[c].isna().to_numpy()
    n_dropped = int(bad.sum())
    if n_dropped:
        warnings.warn(
            f"{n_dropped} of {len(data)} rows dropped for missing or non-finite values in the "
            f"variables of '{formula}' (R's na.omit). The count is not private.",
            DataWarning,
            stacklevel=4,
        )
        return data.loc[~bad].reset_index(drop=True), n_dropped
    return data, 0


def _response(lhs: str, frame: pd.DataFrame, kind: str):
    if lhs in frame.columns:
        col = frame[lhs]
    else:
        col = pd.Series(_evaluate(lhs, frame), name=lhs)
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


def _evaluate(expr: str, frame: pd.DataFrame) -> np.ndarray:
    import patsy

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            mat = patsy.dmatrix("0 + " + expr, frame, eval_env=_env(), NA_action="raise")
    except Exception as exc:  # patsy raises many types
        raise FormulaError(f"cannot evaluate '{expr}': {exc}") from None
    if mat.shape[1] != 1:
        raise FormulaError(f"response '{expr}' must be a single numeric column.")
    return np.asarray(mat)[:, 0]


def _env():
    import patsy

    return patsy.EvalEnvironment([_FUNCTIONS])


# --------------------------------------------------------------------------- direct design
def _direct_design(tokens, frame: pd.DataFrame, lhs: str, add_intercept: bool = True):
    intercept, order = True, []
    for sign, tok in tokens:
        if tok in ("0", "1"):
            intercept = (tok == "1") == (sign == "+")
            continue
        cols = [c for c in frame.columns if c != lhs] if tok == "." else [tok]
        if sign == "+":
            order.extend(cols)
        else:
            removed = set(cols)
            order = [c for c in order if c not in removed]
    order = list(dict.fromkeys(order))
    if not order and not intercept:
        raise FormulaError("the formula leaves no columns in the design; add a term or an intercept.")
    flags = _factor_flags(frame, order)
    factors = [c for c in order if flags[c]]
    if not factors:
        X = frame[order].to_numpy(dtype=float) if order else np.empty((len(frame), 0))
        names, terms = list(order), list(order)
        if intercept and add_intercept:
            X = np.column_stack([np.ones(len(frame)), X])
            names, terms = [INTERCEPT] + names, [INTERCEPT] + terms
        return X, names, terms, intercept and add_intercept, {}
    if any(isinstance(frame[c].dtype, pd.CategoricalDtype) and frame[c].dtype.ordered for c in factors):
        # R codes ordered factors by polynomial contrasts: the general builder does that
        return _patsy_design(" + ".join(["1" if intercept else "0"] + [_patsy_name(c) for c in order]),
                             frame, lhs)
    return _mixed_design(order, frame, intercept)


def _levels(s: pd.Series) -> list:
    if isinstance(s.dtype, pd.CategoricalDtype):
        return list(s.cat.categories)
    if pd.api.types.is_bool_dtype(s):
        return [False, True]
    return sorted(s.dropna().unique().tolist(), key=str)


def _level_name(level) -> str:
    if isinstance(level, (bool, np.bool_)):
        return "TRUE" if level else "FALSE"
    return str(level)


def _mixed_design(order: list[str], frame: pd.DataFrame, intercept: bool):
    blocks, names, terms, levels = [], [], [], {}
    if intercept:
        blocks.append(np.ones((len(frame), 1)))
        names.append(INTERCEPT)
        terms.append(INTERCEPT)
    full_rank_next = not intercept  # R: without an intercept the first factor keeps all levels
    for col in order:
        s = frame[col]
        if not _is_factor(s):
            blocks.append(s.to_numpy(dtype=float)[:, None])
            names.append(col)
            terms.append(col)
            continue
        lev = _levels(s)
        levels[col] = lev
        keep = lev if full_rank_next else lev[1:]
        full_rank_next = False
        values = s.to_numpy()
        for level in keep:
            blocks.append((values == level).astype(float)[:, None])
            names.append(f"{col}{_level_name(level)}")
            terms.append(col)
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return np.ascontiguousarray(X), names, terms, intercept, levels


# --------------------------------------------------------------------------- general design
def _patsy_design(rhs: str, frame: pd.DataFrame, lhs: str):
    """R's model.matrix for a general formula: patsy parses the terms and evaluates each
    factor; the columns are coded by R's rule (below), in R's term order (by degree, then
    as written), so names, order and values equal ``model.matrix``."""
    import patsy

    expanded = _r_to_patsy(_expand_dot(rhs, frame, lhs))
    pframe = _patsy_frame(frame)
    try:
        desc = patsy.ModelDesc.from_formula(expanded)
        intercept = any(not t.factors for t in desc.rhs_termlist)
        ordered = sorted((t for t in desc.rhs_termlist if t.factors), key=lambda t: len(t.factors))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # log() of a non-positive value gives NaN/inf, as R does; those rows are
            # dropped and counted by model_frame instead of leaking numpy warnings
            warnings.simplefilter("ignore", RuntimeWarning)
            coded = {f: _eval_factor(f, pframe, frame) for t in ordered for f in t.factors}
    except RecursionError:
        raise FormulaError(
            "the formula is too long for patsy; use 'y ~ .' with main effects only, or select "
            "columns in the data frame first."
        ) from None
    except FormulaError:
        raise
    except Exception as exc:
        raise FormulaError(f"cannot build the design for '~ {rhs}': {exc}") from None
    if not ordered and not intercept:
        raise FormulaError("the formula leaves no columns in the design; add a term or an intercept.")
    codings = _r_codings(ordered, coded, intercept)
    blocks, names, terms = [], [], []
    if intercept:
        blocks, names, terms = [np.ones((len(frame), 1))], [INTERCEPT], [INTERCEPT]
    for term, coding in zip(ordered, codings):
        cols, labels = np.ones((len(frame), 1)), [""]
        for f, how in zip(term.factors, coding):
            fcols, flabels = _factor_columns(coded[f], how)
            # R: the first factor of a term varies fastest
            cols = np.hstack([cols * fcols[:, [j]] for j in range(fcols.shape[1])])
            labels = [f"{a}:{b}" if a else b for b in flabels for a in labels]
        blocks.append(cols)
        names += labels
        terms += [":".join(coded[f]["name"] for f in term.factors)] * len(labels)
    levels = {v["name"]: v["levels"] for v in coded.values() if v["kind"] == "factor"}
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return np.ascontiguousarray(X, dtype=float), names, terms, intercept, levels


def _patsy_frame(frame: pd.DataFrame) -> pd.DataFrame:
    pframe = frame.copy()
    for c in pframe.columns:
        if pd.api.types.is_bool_dtype(pframe[c]):
            pframe[c] = pd.Categorical(pframe[c], categories=[False, True])
        elif _is_factor(pframe[c]) and not isinstance(pframe[c].dtype, pd.CategoricalDtype):
            pframe[c] = pd.Categorical(pframe[c].astype(object), categories=_levels(pframe[c]))
    return pframe


def _eval_factor(factor, pframe: pd.DataFrame, frame: pd.DataFrame) -> dict:
    """One variable of a term: numeric columns, or a factor's codes and levels."""
    import patsy

    code = factor.code
    name = _unpatsy(code)
    mat = patsy.dmatrix("0 + " + code, pframe, eval_env=_env(), NA_action="raise")
    infos = list(mat.design_info.factor_infos.values())
    if infos and infos[0].type == "categorical":
        lev = list(infos[0].categories)
        col = name if name in frame.columns else None
        is_ordered = col is not None and isinstance(frame[col].dtype, pd.CategoricalDtype) \
            and frame[col].dtype.ordered
        return {"kind": "factor", "name": name, "onehot": np.asarray(mat, dtype=float),
                "levels": lev, "ordered": is_ordered}
    values = np.asarray(mat, dtype=float)
    labels = [name] if values.shape[1] == 1 else [f"{name}{j + 1}" for j in range(values.shape[1])]
    return {"kind": "numeric", "name": name, "values": values, "labels": labels}


def _r_codings(ordered_terms, coded: dict, intercept: bool) -> list[list[str]]:
    """R's rule (``TermCode`` in R's model.c): a factor of term T is coded by contrasts
    when T without it is an earlier term (the empty term counts as present), otherwise
    by indicators of all its levels; without an intercept the first factor of the first
    term holding one is coded by indicators."""
    seen: set[frozenset] = {frozenset()}
    out = []
    for term in ordered_terms:
        row = []
        for f in term.factors:
            if coded[f]["kind"] != "factor":
                row.append("numeric")
            else:
                margin = frozenset(term.factors) - {f}
                row.append("contrasts" if margin in seen else "indicators")
        seen.add(frozenset(term.factors))
        out.append(row)
    if not intercept:
        done = False
        for term, row in zip(ordered_terms, out):
            for i, f in enumerate(term.factors):
                if coded[f]["kind"] == "factor":
                    row[i], done = "indicators", True
                    break
            if done:
                break
    return out


def _factor_columns(v: dict, how: str) -> tuple[np.ndarray, list[str]]:
    if how == "numeric":
        return v["values"], v["labels"]
    name, lev, onehot = v["name"], v["levels"], v["onehot"]
    if how == "indicators":
        return onehot, [f"{name}{_level_name(x)}" for x in lev]
    if v["ordered"]:
        poly = _contr_poly(len(lev))
        suffix = [".L", ".Q", ".C"] + [f"^{j}" for j in range(4, len(lev))]
        return onehot @ poly, [f"{name}{s}" for s in suffix[: len(lev) - 1]]
    return onehot[:, 1:], [f"{name}{_level_name(x)}" for x in lev[1:]]


def _contr_poly(k: int) -> np.ndarray:
    """R's ``contr.poly(k)``: orthonormal polynomial contrasts on 1..k (ordered factors)."""
    x = np.arange(1, k + 1, dtype=float)
    q, r = np.linalg.qr(np.vander(x - x.mean(), k, increasing=True))
    return (q * np.sign(np.diag(r)))[:, 1:]


def _r_to_patsy(expr: str) -> str:
    """R spellings patsy does not know: ``^`` (patsy's ``**``) and backticks."""
    expr = re.sub(r"`([^`]+)`", lambda m: _patsy_name(m.group(1)), expr)
    out, depth_i, i = [], [], 0
    while i < len(expr):
        if expr.startswith("I(", i) and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_")):
            depth_i.append(0)
            out.append("I(")
            i += 2
            continue
        ch = expr[i]
        if depth_i:
            if ch == "(":
                depth_i[-1] += 1
            elif ch == ")":
                if depth_i[-1] == 0:
                    depth_i.pop()
                else:
                    depth_i[-1] -= 1
        if ch == "^":
            ch = "**"  # R's power: arithmetic inside I(), crossing of terms outside
        out.append(ch)
        i += 1
    return "".join(out)


def _unpatsy(code: str) -> str:
    code = re.sub(r'Q\("([^"]+)"\)', r"\1", code)
    return code.replace(" ** ", "^").replace("**", "^")


def _check_constant(X: np.ndarray, names: list[str]) -> None:
    if X.shape[0] == 0 or X.shape[1] == 0:
        return
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    _raise_constant([names[j] for j in constant if names[j] != INTERCEPT])


def _raise_constant(bad: list[str]) -> None:
    if bad:
        shown = ", ".join(repr(b) for b in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise DataError(
            f"constant column(s) {shown} carry no information; remove them from the formula "
            f"(e.g. 'y ~ . - {bad[0]}') or from the data."
        )
