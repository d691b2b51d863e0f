"""Bridges between R and dpstats (``docs/architecture.md``, "Layers").

Two directions share one *transport* format for data frames, chosen so that
nothing depends on how a particular bridge converts numpy arrays or pandas
frames (reticulate 1.28, the R package's transport once, handles neither numpy 2
nor pandas 3):

``names``   column names, in order;
``n``       number of rows;
``kinds``   one of ``double``, ``integer``, ``logical``, ``factor``,
            ``ordered``, ``character`` per column;
``numeric`` the ``double`` and ``integer`` columns as one column-major block
            of float64 (raw bytes or an array; ``NA`` is NaN);
``codes``   the other columns as one column-major float64 block: 0/1 for
            logicals, 1-based level codes for factors and characters, NaN
            for ``NA``;
``levels``  one list of level labels per coded column (empty for logicals).

Two optional entries carry how R would code the factors (``model.matrix``'s contrasts):
``contrasts`` maps a column to its ``contrasts(f) <-`` attribute (a name such as
``"contr.sum"``, or a matrix as ``values`` column-major, ``dim``, ``colnames``, ``rownames``)
and ``default_contrasts`` is the session's ``getOption("contrasts")``; both go to the frame's
``attrs``, which :func:`dpstats.formula.model_frame` reads.

*For R users* (the R package in ``r_wrapper/`` calls these in a child process,
over the channel of :mod:`dpstats.rpipe`): :func:`call_from_r` builds the pandas frame from a transport,
calls a public dpstats function, and returns an :class:`RCall` holding the
result as JSON (``to_dict()`` plus the printed text), the Python object (for
``predict`` and ``report``), the warnings raised and, instead of raising, the
error class chain and message of a :class:`~dpstats.errors.DPStatsError`.

*For Python users* (rpy2 3.5): :func:`to_pandas` and :func:`to_r` convert
data frames (factors <-> categoricals, ``NA`` <-> NaN), :func:`result_to_r`
turns a result into an R list with S3 class ``c("dp_<method>", "dp_result")``
(``dp_`` is not doubled: ``dp_sis`` gives ``dp_sis``),
and :func:`load_r_dataset` loads a data set shipped by an R package (e.g.
``ALL``, ``mlbench``'s ``BreastCancer``) as a pandas DataFrame.
"""

from __future__ import annotations

import os

import inspect
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._io import jsonable
from ._version import __version__
from .errors import DataError, DPStatsError

NUMERIC_KINDS = ("double", "integer")
CODED_KINDS = ("logical", "factor", "ordered", "character")
_PUBLIC_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


# =========================================================================== transport
def _as_list(value) -> list:
    """A length-one R vector arrives as a scalar (the R package sends it as reticulate did); make it a list."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, int, float, bool)):
        return [value]
    return list(value)


def _doubles(block, n: int, ncol: int) -> np.ndarray:
    if ncol == 0:
        return np.empty((n, 0))
    if isinstance(block, (bytes, bytearray, memoryview)):
        values = np.frombuffer(block, dtype="<f8")
    else:
        values = np.asarray(block, dtype=float)
    if values.size != n * ncol:
        raise DataError(f"transport block has {values.size} values, expected {n} x {ncol}.")
    return values.reshape((n, ncol), order="F")


def frame_from_transport(transport: dict) -> pd.DataFrame:
    """Build a pandas DataFrame from the transport format (see the module docstring).

    Examples
    --------
    >>> t = {"names": ["x", "g"], "n": 3, "kinds": ["double", "factor"],
    ...      "numeric": [1.0, float("nan"), 3.0], "codes": [2.0, 1.0, 2.0],
    ...      "levels": [["a", "b"]]}
    >>> df = frame_from_transport(t)
    >>> list(df["g"].astype(str)), df["g"].cat.categories.tolist()
    (['b', 'a', 'b'], ['a', 'b'])
    """
    names = [str(x) for x in _as_list(transport["names"])]
    kinds = [str(x) for x in _as_list(transport["kinds"])]
    n = int(transport["n"])
    if len(names) != len(kinds):
        raise DataError("transport: names and kinds differ in length.")
    n_num = sum(k in NUMERIC_KINDS for k in kinds)
    numeric = _doubles(transport.get("numeric"), n, n_num)
    codes = _doubles(transport.get("codes"), n, len(kinds) - n_num)
    levels = [_as_list(lv) for lv in _as_list(transport.get("levels"))] if len(kinds) > n_num else []
    columns: dict[str, Any] = {}
    i_num = i_code = 0
    for name, kind in zip(names, kinds):
        if kind in NUMERIC_KINDS:
            columns[name] = _numeric_column(numeric[:, i_num], kind)
            i_num += 1
        elif kind in CODED_KINDS:
            lev = levels[i_code] if i_code < len(levels) else []
            columns[name] = _coded_column(codes[:, i_code], kind, [str(x) for x in lev])
            i_code += 1
        else:
            raise DataError(f"column '{name}' has an unsupported kind {kind!r}.")
    frame = pd.DataFrame(columns, columns=names) if columns else pd.DataFrame(index=range(n))
    declared = transport.get("contrasts")
    if declared:
        frame.attrs["contrasts"] = {str(k): contrasts_from_r(v) for k, v in dict(declared).items()}
    default = transport.get("default_contrasts")
    if default is not None:
        frame.attrs["default_contrasts"] = [str(x) for x in _as_list(default)]
    return frame


def contrasts_from_r(spec):
    """A factor's contrasts as R sends them: a name, or a matrix (values column-major, dim, dimnames).

    Examples
    --------
    >>> contrasts_from_r("contr.sum")
    'contr.sum'
    >>> m = contrasts_from_r({"values": [1, 0, -1, 0, 1, -1], "dim": [3, 2], "colnames": None,
    ...                       "rownames": ["a", "b", "c"]})
    >>> m.index.tolist(), m.to_numpy().tolist()
    (['a', 'b', 'c'], [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    """
    if isinstance(spec, str):
        return spec
    if isinstance(spec, (list, tuple)) and len(spec) == 1 and isinstance(spec[0], str):
        return spec[0]
    spec = dict(spec)
    k, m = (int(d) for d in _as_list(spec["dim"]))
    values = np.asarray(_as_list(spec["values"]), dtype=float).reshape((k, m), order="F")
    colnames = spec.get("colnames")
    rownames = spec.get("rownames")
    out = pd.DataFrame(values)
    if colnames is not None and len(_as_list(colnames)) == m:
        out.columns = [str(c) for c in _as_list(colnames)]
    if rownames is not None and len(_as_list(rownames)) == k:
        out.index = [str(r) for r in _as_list(rownames)]
    return out


def _numeric_column(values: np.ndarray, kind: str):
    values = np.array(values, dtype=float)
    if kind == "integer" and not np.isnan(values).any():
        return values.astype(np.int64)
    return values


def _coded_column(values: np.ndarray, kind: str, levels: list[str]):
    missing = np.isnan(values)
    if kind == "logical":  # pandas' nullable boolean, NA or not: an R logical keeps its type (dpstats.schema)
        return pd.arrays.BooleanArray(np.where(missing, 0.0, values).astype(bool), missing)
    idx = np.where(missing, 0, values).astype(np.int64) - 1
    idx[missing] = -1
    if kind == "character":
        lev = np.asarray(levels, dtype=object)
        out = np.where(missing, None, lev[np.clip(idx, 0, None)] if len(lev) else None)
        return pd.Series(list(out), dtype="str") if len(out) else pd.Series([], dtype="str")
    return pd.Categorical.from_codes(idx, categories=levels, ordered=(kind == "ordered"))


def transport_from_frame(data: pd.DataFrame) -> dict:
    """The transport format of a pandas DataFrame (inverse of :func:`frame_from_transport`).

    Examples
    --------
    >>> t = transport_from_frame(pd.DataFrame({"x": [1.5, None], "t": [True, False]}))
    >>> t["kinds"], t["numeric"].tolist(), t["codes"].tolist()
    (['double', 'logical'], [1.5, nan], [1.0, 0.0])
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame, got {type(data).__name__}.")
    kinds, numeric, codes, levels = [], [], [], []
    for name in data.columns:
        s = data[name]
        kind, payload, lev = _encode_column(s, str(name))
        kinds.append(kind)
        (numeric if kind in NUMERIC_KINDS else codes).append(payload)
        if kind in CODED_KINDS:
            levels.append(lev)
    n = len(data)
    return {
        "names": [str(c) for c in data.columns],
        "n": n,
        "kinds": kinds,
        "numeric": np.concatenate(numeric) if numeric else np.empty(0),
        "codes": np.concatenate(codes) if codes else np.empty(0),
        "levels": levels,
    }


def _encode_column(s: pd.Series, name: str):
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        c = s.cat.codes.to_numpy().astype(float) + 1
        c[c == 0] = np.nan
        return ("ordered" if dtype.ordered else "factor"), c, [str(x) for x in dtype.categories]
    if pd.api.types.is_bool_dtype(dtype):
        arr = s.astype("boolean")
        vals = arr.to_numpy(dtype=float, na_value=np.nan)
        return "logical", vals, []
    if pd.api.types.is_integer_dtype(dtype):
        return "integer", s.to_numpy(dtype=float, na_value=np.nan), []
    if pd.api.types.is_numeric_dtype(dtype):
        return "double", s.to_numpy(dtype=float, na_value=np.nan), []
    values = s.astype(object).where(s.notna(), None).tolist()
    if any(v is not None and not isinstance(v, str) for v in values):
        raise DataError(f"column '{name}' has values of mixed types; convert it to str or numbers.")
    lev = sorted({v for v in values if v is not None})
    pos = {v: i + 1 for i, v in enumerate(lev)}
    return "character", np.array([np.nan if v is None else pos[v] for v in values], dtype=float), lev


# =========================================================================== results
def result_payload(obj) -> dict:
    """What crosses to R for a returned object: kind, JSON-able content, text.

    A dpstats result gives ``to_dict()``, its printed text, its summary text,
    ``coef()`` where the result defines one, and its S3 class vector.
    """
    if hasattr(obj, "to_dict") and hasattr(obj, "privacy"):  # a DPResult (duck-typed: no import of results)
        method = str(getattr(obj, "method", "") or "result")
        coef = obj.coef() if callable(getattr(obj, "coef", None)) else None
        return {
            "kind": "result",
            "class": [s3_class(method), "dp_result"],
            "result": obj.to_dict(),
            "text": str(obj),
            "summary": str(obj.summary()),
            "coef": jsonable(_coef_plain(coef)),
        }
    if hasattr(obj, "to_dict") and hasattr(
        obj, "solutions"
    ):  # a PlanResult (dpstats.plan): no privacy, no data
        return {"kind": "plan", "result": obj.to_dict(), "text": str(obj), "summary": obj.summary()}
    if isinstance(obj, pd.DataFrame):
        return {"kind": "data.frame", "frame": _frame_payload(obj)}
    if isinstance(obj, pd.Series):
        return {"kind": "vector", "value": jsonable(obj.tolist()), "names": [str(i) for i in obj.index]}
    if isinstance(obj, np.ndarray):
        return {"kind": "array", "value": jsonable(obj.tolist()), "dim": list(obj.shape)}
    return {"kind": "value", "value": jsonable(obj)}


def s3_class(method: str) -> str:
    """The R class of a result: ``dp_sis`` stays, ``vertical_glm`` becomes ``dp_vertical_glm``.

    Examples
    --------
    >>> s3_class("dp_knockoff"), s3_class("vertical_glm")
    ('dp_knockoff', 'dp_vertical_glm')
    """
    name = re.sub(r"[^A-Za-z0-9_.]", "_", method)
    return name if name.startswith("dp_") else "dp_" + name


def _coef_plain(coef):
    if coef is None:
        return None
    if isinstance(coef, pd.Series):
        return {"names": [str(i) for i in coef.index], "values": coef.tolist()}
    if isinstance(coef, dict):
        return {"names": [str(k) for k in coef], "values": list(coef.values())}
    arr = np.asarray(coef)
    return {"names": None, "values": arr.ravel().tolist()}


def _frame_payload(df: pd.DataFrame) -> dict:
    cols, levels = {}, {}
    for c in df.columns:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            levels[str(c)] = [str(x) for x in s.cat.categories]
            s = s.astype(object)
        cols[str(c)] = jsonable(s.tolist())
    return {"names": [str(c) for c in df.columns], "columns": cols, "levels": levels}


# =========================================================================== R package entry
@dataclass
class RCall:
    """What :func:`call_from_r` hands back to R (:mod:`dpstats.rpipe` sends its fields)."""

    ok: bool
    json: str = ""
    object: Any = None
    warnings: list[list[str]] = field(default_factory=list)
    error_classes: list[str] = field(default_factory=list)
    error_message: str = ""

    @classmethod
    def failure(cls, exc: BaseException, warnings: list[list[str]] | None = None) -> RCall:
        """A failed call: the exception as R's condition classes and message."""
        return cls(
            ok=False,
            warnings=warnings or [],
            error_classes=condition_classes(exc),
            error_message=_message(exc),
        )


def condition_classes(exc: BaseException) -> list[str]:
    """R condition classes of a Python exception, most specific first.

    ``DataError`` -> ``["dpstats_data_error", "dpstats_error"]``; an exception
    outside dpstats -> ``["dpstats_python_error"]``.

    Examples
    --------
    >>> from dpstats.errors import PrivacyParameterError
    >>> condition_classes(PrivacyParameterError("x"))
    ['dpstats_privacy_parameter_error', 'dpstats_error']
    """
    if not isinstance(exc, DPStatsError):
        return ["dpstats_python_error"]
    out = []
    for cls in type(exc).__mro__:
        if isinstance(cls, type) and issubclass(cls, DPStatsError):
            out.append(
                "dpstats_error" if cls is DPStatsError else "dpstats_" + _snake(cls.__name__.lstrip("_"))
            )
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def warning_class(category: type) -> str:
    """``NonPrivateWarning`` -> ``dpstats_non_private_warning``; others -> ``dpstats_warning``."""
    if category.__module__.startswith("dpstats"):
        return "dpstats_" + _snake(category.__name__)
    return "dpstats_python_warning"


def _resolve(name: str):
    import dpstats

    if not isinstance(name, str) or not _PUBLIC_NAME.match(name):
        raise DPStatsError(f"'{name}' is not a public dpstats function name.")
    try:
        fn = getattr(dpstats, name)
    except (AttributeError, ImportError, ModuleNotFoundError):
        raise _Unavailable(
            f"dpstats.{name} is not available in this installation of dpstats "
            f"(version {__version__}); update dpstats or choose another method."
        ) from None
    if not callable(fn):
        raise DPStatsError(f"dpstats.{name} is not a function.")
    return fn


class _Unavailable(DPStatsError):
    """The requested function does not exist in this dpstats."""


class ArgumentError(DPStatsError):
    """An argument R passed is unknown to the function, or a required one is missing (R: ``dpstats_argument_error``)."""


def check_arguments(fn, name: str, args: list, kwargs: dict) -> None:
    """Bind the R call's arguments to ``fn``'s signature; a mismatch is an :class:`ArgumentError`.

    Examples
    --------
    >>> def f(formula, data, eps, *, bounds=None): ...
    >>> check_arguments(f, "f", [], {"formula": "y ~ x", "data": None, "eps": 1, "bound": (0, 1)})
    Traceback (most recent call last):
    ...
    dpstats.rbridge.ArgumentError: f() has no argument 'bound' (did you mean 'bounds'?). Its arguments: formula, data, eps, bounds.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        params = [p for p in sig.parameters if p not in ("self", "args", "kwargs")]
        unknown = [k for k in kwargs if k not in sig.parameters]
        listing = f"Its arguments: {', '.join(params)}."
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], params, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ArgumentError(f"{name}() has no argument '{unknown[0]}'{hint}. {listing}") from None
        missing = [
            p.name
            for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.name not in kwargs
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ][len(args) :]
        if missing:
            raise ArgumentError(
                f"argument '{missing[0]}' of {name}() is missing, with no default. {listing}"
            ) from None
        raise ArgumentError(f"{name}(): {exc}. {listing}") from None


def has_function(name: str) -> bool:
    """True when ``dpstats.<name>`` exists and is callable (R: ``dpstats_has()``)."""
    try:
        _resolve(name)
    except DPStatsError:
        return False
    return True


def parameters(name: str) -> list[str]:
    """The parameter names of ``dpstats.<name>``, in order (R's tests hold its wrappers to them).

    Examples
    --------
    >>> parameters("dp_sis")[:3]
    ['formula', 'data', 'eps']
    """
    return list(inspect.signature(_resolve(name)).parameters)


def coerce_arguments(fn, kwargs: dict) -> dict:
    """Turn R's whole doubles into ints where ``fn`` annotates an int (R has no 5 vs 5.0).

    ``k = 5`` arrives from R as ``5.0``; a parameter annotated ``int`` (and
    not ``float``) receives ``5``.  Lists of whole doubles for ``list[int]``
    likewise.  Non-whole values are left for the function to reject.
    """
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    out = dict(kwargs)
    for key, value in kwargs.items():
        p = params.get(key)
        if p is None:
            continue
        ann = (
            p.annotation
            if isinstance(p.annotation, str)
            else getattr(p.annotation, "__name__", str(p.annotation))
        )
        words = set(re.findall(r"[A-Za-z_]+", str(ann)))
        if "int" not in words or "float" in words or "Real" in words:
            continue
        out[key] = _intify(value)
    return out


def _intify(value):
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, float) and math.isfinite(v) and v.is_integer() for v in value)
    ):
        return [int(v) for v in value]
    return value


def call_from_r(
    name: str,
    args: list | None = None,
    kwargs: dict | None = None,
    frames: dict | None = None,
    target: Any = None,
) -> RCall:
    """Call ``dpstats.<name>`` (or the method ``name`` of ``target``) for the R package.

    ``frames`` maps argument names (``data``, ``newdata``, ...) to transports,
    rebuilt as pandas DataFrames.  Never raises a dpstats error: it comes back
    as ``error_classes`` and ``error_message`` for R to signal as a condition.

    Examples
    --------
    >>> t = {"names": ["y", "a", "b", "c"], "n": 6, "kinds": ["double"] * 4,
    ...      "numeric": [1., 2, 3, 4, 5, 6, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1,
    ...                  3, 1, 4, 1, 5, 9], "codes": [], "levels": []}
    >>> out = call_from_r("dp_sis", kwargs={"formula": "y ~ .", "eps": -1}, frames={"data": t})
    >>> out.ok, out.error_classes[0]
    (False, 'dpstats_privacy_parameter_error')
    """
    args = _as_list(args)
    kwargs = dict(kwargs or {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for key, transport in (frames or {}).items():
                kwargs[key] = frame_from_transport(transport)
            fn = _resolve(name) if target is None else _method(target, name)
            check_arguments(fn, name, args, kwargs)
            kwargs = coerce_arguments(fn, kwargs)
            value = fn(*args, **kwargs)
            text = json.dumps(result_payload(value), allow_nan=False)
        except Exception as exc:  # every failure crosses to R as a condition
            return RCall.failure(exc, _warning_list(caught))
    return RCall(ok=True, json=text, object=value, warnings=_warning_list(caught))


def _method(target, name: str):
    fn = getattr(target, name, None)
    if not callable(fn) or name.startswith("_"):
        raise _Unavailable(f"this {type(target).__name__} has no method '{name}'.")
    return fn


def _message(exc: BaseException) -> str:
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, DPStatsError):
        return msg
    return f"{type(exc).__name__}: {msg}"


def _warning_list(caught) -> list[list[str]]:
    seen, out = set(), []
    for w in caught:
        key = (warning_class(w.category), str(w.message))
        if key not in seen:
            seen.add(key)
            out.append([key[0], key[1]])
    return out


def new_accountant(eps: float, delta: float = 0.0, composition: str = "basic"):
    """An :class:`~dpstats.privacy.accountant.Accountant` for R's ``dp_accountant()``."""
    from .privacy.accountant import Accountant

    return Accountant(eps=float(eps), delta=float(delta), composition=str(composition))


def accountant_state(acc) -> dict:
    """Budget, spent, remaining and ledger of an Accountant, as plain values (R's print)."""
    from .privacy.events import describe

    rows = [
        {
            "analysis": c.label,
            "step": e.step,
            "mechanism": e.mechanism,
            "eps": e.eps,
            "delta": e.delta,
            "event": describe(e.privacy_event),
        }
        for c in acc.charges
        for e in c.entries
    ]
    state = acc.to_dict()  # the composition rule used, and rho under the zCDP filter
    extra = {k: v for k, v in state.items() if k not in ("ledger", "session")}
    return {
        **extra,
        "eps": acc.eps,
        "delta": acc.delta,
        "spent_eps": acc.spent_eps,
        "spent_delta": acc.spent_delta,
        "remaining_eps": acc.remaining_eps,
        "remaining_delta": acc.remaining_delta,
        "ledger": rows,
    }


def design_for_r(formula: str, data: pd.DataFrame) -> dict:
    """R's ``dp_model_matrix()``: the design matrix the formula layer builds (row-major values).

    ``assign`` numbers each column's term as R's ``model.matrix`` does (0 for the intercept).
    A one-sided formula (``"~ x1 + x2"``, as ``model.matrix`` and ``dp_gmm`` take) has no response.

    Examples
    --------
    >>> d = design_for_r("~ g", pd.DataFrame({"g": pd.Categorical(["a", "b", "a"])}))
    >>> d["names"], d["dim"]
    (['(Intercept)', 'gb'], [3, 2])
    """
    from .formula import INTERCEPT, model_frame

    one_sided = isinstance(formula, str) and formula.lstrip().startswith("~")
    mf = model_frame(formula, data, one_sided=one_sided, min_rows=1, check_constant=False)
    order: list[str] = []
    for t, nm in zip(mf.terms, mf.names):
        if nm != INTERCEPT and t not in order:
            order.append(t)
    assign = [0 if nm == INTERCEPT else order.index(t) + 1 for t, nm in zip(mf.terms, mf.names)]
    return {
        "values": mf.X.ravel().tolist(),
        "dim": [mf.n, mf.p],
        "names": list(mf.names),
        "assign": assign,
        "n_dropped": int(mf.n_dropped),
        "data_dependent": [str(t) for t, _ in mf.data_dependent_terms],
    }


def level_fills_for_r(formula: str) -> dict[str, float]:
    """The public fill of each variable a formula uses only as ``factor(x, levels = c(...))`` with numbers
    as levels (:func:`dpstats.formula.level_fills`: its first declared level), for the R package's
    rebuilding of a non-private fit's rows (``.public_fills``): R asks rather than reads the formula itself,
    so that both fill alike.

    Examples
    --------
    >>> level_fills_for_r("mpg ~ wt + factor(cyl, levels = c(4, 6, 8))")
    {'cyl': 4.0}
    """
    from .formula import level_fills

    return level_fills(formula)


def newdata_design_for_r(result, newdata: pd.DataFrame) -> dict:
    """The design of ``newdata`` as a fit codes it (its factor levels and contrasts), for R's
    ``predict(se.fit = TRUE)``: row-major values, dimensions and column names.  Only public inputs
    (the released fit's coding) and the rows the caller holds are read.
    """
    mf = result._new_design(newdata)
    return {"values": mf.X.ravel().tolist(), "dim": [mf.n, mf.p], "names": list(mf.names)}


# =========================================================================== rpy2 side
_R_ENCODE = r"""
function(df) {
  df <- as.data.frame(df, stringsAsFactors = FALSE, optional = TRUE)
  kind <- vapply(df, function(x) {
    if (is.ordered(x)) "ordered" else if (is.factor(x)) "factor"
    else if (is.logical(x)) "logical" else if (is.integer(x)) "integer"
    else if (is.numeric(x)) "double" else if (is.character(x)) "character"
    else stop("column of class ", class(x)[1], " is not supported")
  }, character(1), USE.NAMES = FALSE)
  num <- kind %in% c("double", "integer")
  coded <- lapply(df[!num], function(x) {
    if (is.logical(x)) list(codes = as.double(x), levels = character(0))
    else { f <- if (is.factor(x)) x else factor(x)
           list(codes = as.double(as.integer(f)), levels = levels(f)) }
  })
  list(names = names(df), n = nrow(df), kinds = kind,
       numeric = as.double(unlist(df[num], use.names = FALSE)),
       codes = as.double(unlist(lapply(coded, `[[`, "codes"), use.names = FALSE)),
       levels = unname(lapply(coded, `[[`, "levels")))
}
"""

_R_DECODE = r"""
function(names, n, kinds, numeric, codes, levels) {
  out <- vector("list", length(names)); i <- 0L; j <- 0L
  for (c in seq_along(names)) {
    if (kinds[c] %in% c("double", "integer")) {
      v <- numeric[i * n + seq_len(n)]; i <- i + 1L
      out[[c]] <- if (kinds[c] == "integer") as.integer(v) else v
    } else {
      v <- codes[j * n + seq_len(n)]; j <- j + 1L
      lev <- levels[[j]]
      out[[c]] <- switch(kinds[c],
        logical = as.logical(v),
        character = lev[as.integer(v)],
        factor = factor(lev[as.integer(v)], levels = lev),
        ordered = factor(lev[as.integer(v)], levels = lev, ordered = TRUE))
    }
  }
  names(out) <- names
  as.data.frame(out, check.names = FALSE, stringsAsFactors = FALSE,
                row.names = if (n) seq_len(n) else integer(0))
}
"""


def _ro():
    try:
        return import_robjects()
    except Exception as exc:  # pragma: no cover - environment
        raise DPStatsError(
            f"rpy2 with R is needed for this function ({exc}); install R and `pip install 'rpy2>=3.5,<3.6'`."
        ) from None


def import_robjects():
    """Import ``rpy2.robjects`` without leaving R's library folders in LD_LIBRARY_PATH.

    rpy2 prepends R's and the system's library folders to ``LD_LIBRARY_PATH`` when R
    starts; Python subprocesses started afterwards (vertical GLM parties, Dask workers)
    would then load the system's shared libraries instead of their own interpreter's
    and fail.  R itself is loaded by then and does not need the variable.
    """
    saved = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as ro
    finally:
        if saved is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved
    return ro


_R_FUNCS: dict[str, Any] = {}


def _rfunc(key: str, code: str):
    if key not in _R_FUNCS:
        _R_FUNCS[key] = _ro().r(code)
    return _R_FUNCS[key]


def to_pandas(r_data) -> pd.DataFrame:
    """Convert an R data.frame (rpy2 object, or R code evaluating to one) to pandas.

    Factors become categoricals with R's level order (ordered factors ordered
    categoricals), ``NA`` becomes NaN (numeric) or a missing value (character
    columns pandas' ``str``), logical columns become pandas' nullable ``boolean``
    (with or without ``NA``: an R logical's type is declared, and one ``NA`` must
    not change it), integer columns without ``NA`` stay integers.

    Examples
    --------
    >>> df = to_pandas('data.frame(x = c(1, NA), g = factor(c("b", "a")))')  # doctest: +SKIP
    >>> df["g"].cat.categories.tolist()                                       # doctest: +SKIP
    ['a', 'b']
    """
    ro = _ro()
    obj = ro.r(r_data) if isinstance(r_data, str) else r_data
    t = _rfunc("encode", _R_ENCODE)(obj)
    parts = dict(zip(t.names, t))
    levels = [list(lv) for lv in parts["levels"]]
    transport = {
        "names": list(parts["names"]),
        "n": int(parts["n"][0]),
        "kinds": list(parts["kinds"]),
        "numeric": np.asarray(parts["numeric"]),
        "codes": np.asarray(parts["codes"]),
        "levels": levels,
    }
    return frame_from_transport(transport)


def to_r(data: pd.DataFrame):
    """Convert a pandas DataFrame to an R data.frame (rpy2 object).

    Categoricals become factors (ordered when ordered), NaN/None become ``NA``,
    booleans logicals, integer columns integers, strings characters.

    Examples
    --------
    >>> rdf = to_r(pd.DataFrame({"x": [1.0, None]}))  # doctest: +SKIP
    """
    ro = _ro()
    t = transport_from_frame(data)
    levels = ro.ListVector.from_length(len(t["levels"]))
    for i, lev in enumerate(t["levels"]):
        levels[i] = ro.StrVector(lev)
    return _rfunc("decode", _R_DECODE)(
        ro.StrVector(t["names"]),
        t["n"],
        ro.StrVector(t["kinds"]),
        ro.FloatVector(t["numeric"]),
        ro.FloatVector(t["codes"]),
        levels,
    )


def result_to_r(result):
    """A dpstats result as an R list with S3 class ``c("dp_<method>", "dp_result")``.

    The list holds ``to_dict()`` (as ``jsonlite::fromJSON`` reads it) plus
    ``text`` and ``summary_text``; this is the same structure the R package
    returns, minus the live Python reference.
    """
    _ro()
    payload = result_payload(result)
    if payload["kind"] != "result":
        raise DPStatsError(f"result_to_r needs a dpstats result, got {type(result).__name__}.")
    build = _rfunc(
        "result",
        r"""
    function(txt) {
      if (!requireNamespace("jsonlite", quietly = TRUE))
        stop("the R package 'jsonlite' is needed (Debian: r-cran-jsonlite)")
      p <- jsonlite::fromJSON(txt, simplifyVector = TRUE)
      out <- p$result
      out$text <- p$text; out$summary_text <- p$summary
      out$coef <- if (!is.null(p$coef)) stats::setNames(p$coef$values, p$coef$names)
      class(out) <- p$class
      out
    }""",
    )
    return build(json.dumps(payload, allow_nan=False))


def load_r_dataset(name: str, package: str, *, expression: str = "samples") -> pd.DataFrame:
    """Load a data set shipped by an R package as a pandas DataFrame.

    Data frames and matrices are converted as they are.  A Bioconductor
    ``ExpressionSet`` (e.g. ``ALL``) becomes one row per sample: its phenotype
    columns (``pData``) followed by one column per probe (``t(exprs)``).

    Parameters
    ----------
    name : str
        Name of the data set, e.g. ``"ALL"`` or ``"BreastCancer"``.
    package : str
        R package that ships it, e.g. ``"ALL"`` or ``"mlbench"``.
    expression : {"samples", "features"}
        For an ``ExpressionSet``: rows are samples (default) or probes (no
        phenotype columns).

    Examples
    --------
    >>> bc = load_r_dataset("BreastCancer", package="mlbench")   # doctest: +SKIP
    >>> bc["Class"].cat.categories.tolist()                      # doctest: +SKIP
    ['benign', 'malignant']
    """
    _ro()
    for label, value in (("name", name), ("package", package)):
        if not isinstance(value, str) or not re.match(r"^[A-Za-z.][A-Za-z0-9._]*$", value):
            raise DataError(f"{label} must be an R name such as 'ALL' or 'mlbench', got {value!r}.")
    if expression not in ("samples", "features"):
        raise DataError(f"expression must be 'samples' or 'features', got {expression!r}.")
    load = _rfunc(
        "load",
        r"""
    function(name, package, expression) {
      if (!requireNamespace(package, quietly = TRUE))
        stop(sprintf("the R package '%s' is not installed; install it (e.g. Debian r-cran-%s or r-bioc-%s)",
                     package, tolower(package), tolower(package)))
      e <- new.env()
      found <- suppressWarnings(utils::data(list = name, package = package, envir = e))
      if (!exists(name, envir = e, inherits = FALSE))
        stop(sprintf("no data set '%s' in package '%s'", name, package))
      x <- get(name, envir = e)
      if (methods::is(x, "ExpressionSet")) {
        ex <- Biobase::exprs(x)
        if (expression == "features") return(as.data.frame(ex, optional = TRUE))
        ph <- Biobase::pData(x)
        out <- cbind(ph, as.data.frame(t(ex), optional = TRUE))
        rownames(out) <- NULL
        return(out)
      }
      if (is.matrix(x) || is.table(x)) x <- as.data.frame(unclass(x), optional = TRUE)
      if (!is.data.frame(x)) stop(sprintf("'%s' is a %s, not a data frame", name, class(x)[1]))
      x
    }""",
    )
    try:
        obj = load(name, package, expression)
    except Exception as exc:
        raise DataError(f"cannot load '{name}' from R package '{package}': {_r_error_text(exc)}") from None
    return to_pandas(obj)


def _r_error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return re.sub(r"^Error in .*?:\s*", "", text).strip() or type(exc).__name__
