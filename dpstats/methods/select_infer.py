"""Select-then-infer: a private selector on one part of the rows, dp_lm or dp_glm on the selected terms on the other.

The rows are split at random into two disjoint parts by a permutation drawn
independently of the data (:func:`split_rows`; its sizes follow from the public n and
``split``).  Part A runs a private selector (dp_sis, dp_two_stage or dp_knockoff); part
B runs dp_lm (``infer="lm"``) or dp_glm (``infer="glm"``, binomial or Poisson) on the
selected terms.  Each part spends the whole (eps, delta).

Privacy (parallel composition, :func:`plan`).  Under replace-one-row with n public the
two part sizes are public and fixed, and the permutation does not depend on the data,
so replacing one row of the data set replaces exactly one row of exactly one part and
leaves the other part unchanged.  The selector is (eps, delta)-DP in its part, dp_lm (or
dp_glm) is (eps, delta)-DP in its part and is run with its input (the selected set) fixed, so for
any pair of neighbouring data sets only one of the two mechanisms sees a change: the
pipeline is (eps, delta)-DP (McSherry 2009, parallel composition; the adaptivity of part
B's formula on part A's output does not matter because part B's rows are the same in
both data sets).  The ledger has one entry for the composition; each part's own ledger
is kept in the result and shown in its report.  The release runs the two parts' own
front doors (:mod:`dpstats.api.select_infer`).

dp_glm refuses, before spending, a call whose noise would swamp the information (its public
rule, :mod:`dpstats.methods.glm` (G5)).  Its ratio grows with the number of coefficients, so
:func:`check_glm_part` applies that rule to part B with the largest selection the selector can
make (k, dp_sis's default k, or every candidate for dp_knockoff), before anything is spent: a
pipeline it admits never has part B refused after the charge.
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, DPStatsError, PrivacyParameterError
from ..formula import (
    INTERCEPT,
    LEVELS_READ_NOT_SHOWN,
    ModelFrame,
    missing_counts,
    r_names,
    split_formula,
    term_labels,
    term_parts,
)
from ..privacy.accountant import LedgerEntry
from ..privacy.plan import Plan
from ..privacy.randomness import RandomState, make_generator
from ..privacy.bounds import auto_bounds, is_auto, public_column_bounds
from ..schema import PublicN, Schema
from ..validation import check_candidates, check_fraction, check_k, columns_read
from . import glm as glm_method
from ._aliased import LM_TOL, estimable_columns
from ._options import Options
from .knockoff.planning import MODEL_CONDITION
from .lm import LAMBDA_SHARE, LMOptions

SELECTORS = ("sis", "two_stage", "knockoff")
INFERENCES = ("lm", "glm")


@dataclass(frozen=True)
class SelectInferOptions(Options):
    """dp_select_infer's options, checked once (defaults: the signature of :func:`dpstats.dp_select_infer`).

    ``bounds`` are the bounds each part is given (a checked ``AutoBounds`` when
    ``bounds_eps`` is set: each part releases its own); part B's dp_lm is checked
    as dp_lm checks its arguments (:class:`~dpstats.methods.lm.LMOptions`), its dp_glm
    as dp_glm does (:class:`~dpstats.methods.glm.GLMOptions`).  ``family`` is None
    with ``infer="lm"``.
    """

    PUBLIC_N = PublicN("dp_select_infer", "its parts' sizes follow from n, and dp_lm releases n exactly")

    formula: str
    eps: float
    delta: float
    select: str
    k: int | None
    split: float
    bounds: Any
    select_args: dict
    conf_level: float
    n_boot: int
    schema: Schema | None
    infer: str = "lm"
    family: str | None = None

    @property
    def RESPONSE(self) -> str:  # noqa: N802 (Options.RESPONSE, read on the record)
        """Part B's dp_glm with a binomial family reads its response as numbers ("binary numbers"): under
        strict=True it must be declared by a bounds entry (:meth:`~dpstats.schema.Schema.refuse_undeclared_binary`)."""
        return "binary numbers" if self.family == "binomial" else "numeric"

    @property
    def fit_door(self) -> str:
        """The front door part B runs: ``"dp_lm"`` or ``"dp_glm"``."""
        return "dp_glm" if self.infer == "glm" else "dp_lm"

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> SelectInferOptions:
        """Cheap checks of dp_select_infer's arguments, before the data is read."""
        lm = LMOptions.check({**given, "interval": "pivot", "lambda_share": LAMBDA_SHARE})
        if math.isinf(lm.eps):
            raise PrivacyParameterError(
                "dp_select_infer needs a finite eps (the selectors have no eps = inf mode)."
            )
        select = given["select"]
        if select not in SELECTORS:
            raise PrivacyParameterError(f"select must be one of {list(SELECTORS)}, got {select!r}.")
        split = check_fraction(given["split"], "split", low_open=True)
        if select == "knockoff" and lm.delta <= 0:
            raise PrivacyParameterError(
                "select='knockoff' needs delta > 0 (dp_knockoff is (eps, delta)-DP); e.g. delta=1e-6."
            )
        if select == "two_stage" and given["k"] is None:
            raise PrivacyParameterError("select='two_stage' needs k, the number of terms to select.")
        if given["strict"] and given["bounds"] is None:
            raise PrivacyParameterError(
                "strict=True needs declared bounds (bounds=...): dp_lm on part B would otherwise clip to the data's range."
            )
        checked = {name: getattr(lm, name) for name in ("eps", "delta", "conf_level", "n_boot")}
        checked.update(_check_inference(given))
        if given["bounds_eps"] is not None:  # each part releases its own bounds with bounds_eps of its eps
            checked["bounds"] = auto_bounds(
                given["bounds"], lm.eps, bounds_eps=given["bounds_eps"], streamed=None
            )
        return cls.from_given(given, split=split, select_args=_select_args(given["select_args"]), **checked)


def _select_args(value) -> dict:
    """``select_args``: a mapping of the selector's argument names (a list or a number is refused by name,
    not with Python's ``dict()`` TypeError)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise PrivacyParameterError(
            "select_args must be a dict of the selector's arguments by name, e.g. "
            f"select_args={{'bounds': 3.0}}, got {type(value).__name__}."
        )
    return dict(value)


def _check_inference(given: Mapping[str, Any]) -> dict[str, Any]:
    """``infer`` and ``family``; with ``infer="glm"`` dp_glm's own checks (delta > 0, the family)."""
    infer, family = given["infer"], given["family"]
    if infer not in INFERENCES:
        raise PrivacyParameterError(f"infer must be one of {list(INFERENCES)}, got {infer!r}.")
    if infer == "lm":
        if family is not None:
            raise PrivacyParameterError("family applies only with infer='glm' (part B's dp_glm); drop it.")
        return {"infer": "lm", "family": None}
    if given.get("bounds_eps") is not None or (
        isinstance(given["bounds"], str) and given["bounds"] == "auto"
    ):
        raise PrivacyParameterError(
            'infer="glm" does not offer bounds="auto" yet (dp_glm does not); declare public bounds. '
            "Nothing was spent."
        )
    glm = glm_method.GLMOptions.check(
        {
            **given,
            "family": "binomial" if family is None else family,
            "pilot_steps": glm_method.PILOT_STEPS,
            "pilot_share": glm_method.PILOT_SHARE,
            "hessian_share": glm_method.HESSIAN_SHARE,
        }
    )
    return {"infer": "glm", "family": glm.family}


def sizes_public(mf: ModelFrame) -> bool:
    """Whether the design's column count and n are public: no levels read from the rows
    (:func:`~dpstats.validation.columns_read`) and no rows dropped for missing values."""
    return not (columns_read(mf) or mf.n_data_dependent)


def check_glm_part(
    options: SelectInferOptions, n_b: int, terms: int, response: str, *, quoted: bool = True
) -> None:
    """dp_glm's refusal rule (G5) for part B with ``terms`` selected terms (and the intercept), from public
    inputs, before any spend.

    Poisson needs the response's declared count bound here (dp_glm would otherwise read it from
    the rows, after the charge).  ``quoted`` False (levels read from the rows, so ``terms``, or rows
    dropped, so ``n_b``, depend on the data): the refusal quotes no number.
    """
    family = options.family
    top = _declared_top(options.bounds, response) if family == "poisson" else None
    if family == "poisson" and top is None:
        raise PrivacyParameterError(
            f"infer='glm' with family='poisson' needs declared bounds for the count {response!r}, e.g. "
            f"bounds={{'{response}': (0, 50), ...}}: part B's refusal rule uses the bound before anything is spent."
        )
    coords = glm_method.Coordinates(np.zeros(terms), np.ones(terms), True)
    resp = glm_method.response_range(family, counts=(0.0, top) if top else None)
    glm_options = glm_method.GLMOptions.partial(
        family=family,
        eps=options.eps,
        delta=options.delta,
        pilot_steps=glm_method.PILOT_STEPS,
        pilot_share=glm_method.PILOT_SHARE,
        hessian_share=glm_method.HESSIAN_SHARE,
    )
    # raises AssumptionError ("Nothing was spent")
    glm_method.plan(glm_options, coords, resp, n_b, quoted=quoted)


def _declared_top(bounds: Any, name: str) -> float | None:
    if isinstance(bounds, Mapping):
        pair = bounds.get(name)
    elif isinstance(bounds, (list, tuple)) and len(bounds) == 2 and not isinstance(bounds[0], (list, tuple)):
        pair = bounds
    else:
        pair = None
    return None if pair is None else float(pair[1])


def split_rows(n: int, split: float, random_state: RandomState) -> tuple[np.ndarray, np.ndarray]:
    """The public split of dp_select_infer: row positions of part A (floor(split·n) rows) and part B.

    A permutation drawn independently of the data, from ``random_state`` (an
    integer seed gives the same split every time; None draws from the OS).

    Examples
    --------
    >>> a, b = split_rows(10, 0.5, 3)
    >>> len(a), len(b), sorted(np.r_[a, b].tolist()) == list(range(10))
    (5, 5, True)
    """
    seed = (
        np.random.default_rng([int(random_state), 7919])
        if isinstance(random_state, (int, np.integer))
        else random_state
    )
    gen, _ = make_generator(seed)
    order = gen.permutation(n)
    n_a = int(math.floor(split * n))
    return order[:n_a], order[n_a:]


@dataclass
class SplitFrame:
    """The two parts of the rows, as frames of the design columns and the response."""

    part_a: pd.DataFrame
    part_b: pd.DataFrame
    response: str
    names: list[str]
    n_dropped: int = 0
    n_filled: int = 0
    mf: ModelFrame | None = None  # the whole frame: its coding and variables, which predict() re-applies


def split_frame(mf: ModelFrame, split: float, random_state: RandomState) -> SplitFrame:
    """Part A (⌊split·n⌋ rows) and part B of a model frame's rows, split by :func:`split_rows`."""
    n = mf.n
    n_a = int(math.floor(split * n))
    if n_a < 2 or n - n_a < 3:
        raise DataError(f"split = {split:g} leaves too few rows in one part; use more rows or another split.")
    idx_a, idx_b = split_rows(n, split, random_state)
    design = pd.DataFrame(mf.X, columns=mf.names)
    design[mf.response] = mf.y
    part_a, part_b = design.iloc[idx_a].reset_index(drop=True), design.iloc[idx_b].reset_index(drop=True)
    return SplitFrame(part_a, part_b, mf.response, list(mf.names), mf.n_dropped, mf.n_filled, mf)


@dataclass
class Pipeline:
    """What a call released: part A's selection and the columns it selected, part B's fit (None when
    nothing was selected), the final model's terms and their design columns."""

    selection: Any
    selected: list[str]  # the design columns part A selected
    fit: Any
    terms: list[str] = field(default_factory=list)  # the final model's (selected_terms)
    columns: list[str] = field(default_factory=list)  # their design columns: what part B fitted


def as_named(frame: SplitFrame, names) -> list[str]:
    """Design columns as the user's formula names them: the parts' ``y ~ .`` quotes one such as
    ``wt:hp`` (```wt:hp```), as R's lm does for a column with that name."""
    named = dict(zip(r_names(frame.names), frame.names))
    return [named.get(name, name) for name in names]


def diagnostics(frame: SplitFrame, options: SelectInferOptions, columns: list[str]) -> dict[str, Any]:
    """What ``diagnostics=True`` attaches, computed from the rows and not private: the frame's counts of
    missing values and ordinary least squares (or glm's fit) of the selected ``columns`` on part B's rows."""
    out = missing_counts(frame)
    if options.infer == "glm":
        out["glm_part_b_nonprivate"] = part_b_glm(frame, columns, options.family)
    else:
        out["ols_part_b_nonprivate"] = part_b_ols(frame, columns)
    return out


def part_b_ols(frame: SplitFrame, selected: list[str]) -> dict[str, float]:
    """Not private (a diagnostic): ordinary least squares of the selected terms on part B's raw rows, as
    R's lm (a column aliased with those before it is NaN, R's NA: :mod:`dpstats.methods._aliased`)."""
    if not selected:
        return {}
    X = np.c_[np.ones(len(frame.part_b)), frame.part_b[selected].to_numpy(dtype=float)]
    y = frame.part_b[frame.response].to_numpy(dtype=float)
    keep, beta = estimable_columns(X, LM_TOL), np.full(X.shape[1], np.nan)
    beta[keep] = np.linalg.lstsq(X[:, keep], y, rcond=None)[0]
    return dict(zip([INTERCEPT, *selected], beta.tolist()))


def part_b_glm(frame: SplitFrame, selected: list[str], family: str) -> dict[str, float]:
    """Not private (a diagnostic): glm's maximum-likelihood fit of the selected terms on part B's raw rows."""
    if not selected:
        return {}
    X = np.c_[np.ones(len(frame.part_b)), frame.part_b[selected].to_numpy(dtype=float)]
    y = frame.part_b[frame.response].to_numpy(dtype=float)
    beta = glm_method.irls(X, y, np.ones_like(y), family).coefficients
    return dict(zip([INTERCEPT, *selected], beta.tolist()))


def plan(options: SelectInferOptions, n_a: int, n_b: int) -> Plan:
    """The plan of the pipeline from public inputs (the parts' sizes): one entry, parallel composition.

    Examples
    --------
    >>> pl = plan(SelectInferOptions.partial(eps=1.0, delta=1e-6, select="sis", split=0.5), 500, 500)
    >>> pl.eps, pl.delta, pl.entries[0].mechanism
    (1.0, 1e-06, 'dp_sis and dp_lm on disjoint rows (parallel composition)')
    """
    eps, delta, select, fit = options.eps, options.delta, options.select, options.fit_door
    entry = LedgerEntry(
        step=f"parallel composition: dp_{select} on part A ({n_a} rows), {fit} on part B ({n_b} rows)",
        mechanism=f"dp_{select} and {fit} on disjoint rows (parallel composition)",
        eps=eps,
        delta=delta,
        sensitivity="each part's own (see its ledger); one replaced row changes one part only",
        note="parallel composition: the parts' budgets do not add (McSherry 2009)",
        event={"kind": "eps_delta", "eps": eps, "delta": delta},
    )
    notes = [
        f"The rows were split by a random permutation independent of the data into part A ({n_a} rows, "
        f"selection) and part B ({n_b} rows, inference); the sizes follow from the public n and split = "
        f"{options.split:g}.",
        "Each part spends the whole budget: under replace-one-row a changed row lies in one part only "
        "(parallel composition); the selected set is fixed before part B is read.",
    ]
    conditional = ""  # dp_knockoff's guarantee holds under its linear model only (part A's selection)
    if select == "knockoff" and math.isfinite(eps):
        conditional = f"{MODEL_CONDITION} (dp_knockoff's condition, for the rows of part A)"
    return Plan(
        method=f"select-then-infer (dp_{select} -> {fit})",
        neighbouring="replace",
        entries=[entry],
        notes=notes,
        conditional=conditional,
    )


# ------------------------------------------------------------------ the final model
def selected_terms(mf, selected: list[str] | None) -> list[str]:
    """The final model's terms, in the formula's order: each term that holds a ``selected`` design column,
    whole (R's convention: a factor enters with all its columns, so ``factor(cyl)8`` keeps its meaning,
    8 against the baseline), and the margins R's coding of an interaction with a factor reads.

    R codes a factor F of a term T by contrasts when T without F is a term of the formula, else by
    indicators (``model.matrix``); so ``wt:factor(cyl)`` has the candidates' columns in the final model
    only if ``wt`` is in both.  Adding, for every factor of every final term, that margin when the
    candidates have it makes ``lm(formula, rows)`` code the final model's columns exactly as the
    candidates' design codes them: part B fits those columns.  From the formula, the released selection
    and the public levels only (post-processing).
    """
    chosen = {t for name, t in zip(mf.names, mf.terms) if name in set(selected or [])}
    return [t for t in dict.fromkeys(mf.terms) if t in with_margins(chosen, mf)]


def with_margins(terms: set[str], mf) -> set[str]:
    """``terms`` and, for every factor of every term in the result, the term without it when ``mf`` has it."""
    candidates, out = set(mf.terms), set(terms)
    todo = [t for t in out if ":" in t]  # a term of one variable has no margin to add
    while todo:
        parts = term_parts(todo.pop())
        for i, part in enumerate(parts):
            margin = ":".join(parts[:i] + parts[i + 1 :])
            if len(parts) > 1 and part in mf.factor_levels and margin in candidates and margin not in out:
                out.add(margin)
                todo.append(margin)
    return out


def final_formula(formula: str, mf, terms: list[str]) -> str:
    """The final model as an R formula: the response on ``terms``, in the formula's order.

    Where R would number their variables in another order (an interaction whose variables first appear
    in a term left out, as ``Species:Petal.Width`` of ``Species * Petal.Width`` without ``Species``:
    ``Petal.Width + Species:Petal.Width`` has the label ``Petal.Width:Species`` and columns named so),
    it is the candidates' formula less the terms left out, which keeps R's numbering (R reads
    ``y ~ Species * Petal.Width - Species`` so).  :func:`~dpstats.formula.term_labels` decides, from
    the text alone.
    """
    lhs, rhs = split_formula(formula, one_sided=False)
    plain = f"{lhs} ~ {' + '.join(terms) or '1'}"
    if not terms or term_labels(plain) == terms:
        return plain
    left_out = [t for t in dict.fromkeys(mf.terms) if t not in set(terms)]
    return f"{lhs} ~ {rhs} - {' - '.join(left_out)}"


def term_columns(mf, terms: list[str]) -> list[str]:
    """The design columns of ``terms``, in the design's order."""
    return [name for name, t in zip(mf.names, mf.terms) if t in set(terms)]


def most_columns(mf: ModelFrame, options: SelectInferOptions, n_b: int) -> int | None:
    """The most design columns part B can fit, from the formula and public levels, and a refusal where its
    ``n_b`` rows cannot fit them: the selector selects at most k columns (dp_sis's default k, or every
    candidate), each bringing its term whole and its margins (:func:`selected_terms`).  None for a k that
    is no whole number (the selector's own check refuses it).  dp_sis's and dp_two_stage's checks of the candidates
    and of k against them are made here, on the whole frame, since part A's frame holds the design as
    numeric columns.  With levels read from the rows (:func:`~dpstats.validation.columns_read`) the
    refusals quote no column count."""
    from .sis import default_k

    k, p = options.k, len(mf.names)
    if k is not None and (not isinstance(k, numbers.Integral) or isinstance(k, bool)):
        return None
    if options.select in ("sis", "two_stage"):  # the selector's checks, d not shown when it depends on
        check_candidates(f"dp_{options.select}", options.formula, mf)  # levels read from the rows
        if k is not None:
            check_k(k, p, shown=not columns_read(mf))
    most = int(k) if k is not None else default_k(p) if options.select == "sis" else p
    width = Counter(mf.terms)  # columns per term
    whole = {t: sum(width[u] for u in with_margins({t}, mf)) for t in width}
    columns = min(p, sum(sorted(whole.values(), reverse=True)[: max(most, 0)]))  # k columns: at most k terms
    if k is not None and columns + 1 >= n_b:
        need = (
            f"(up to {columns} design columns, each term whole) need more than {columns + 1} rows in part B"
            if not columns_read(mf)
            else "(each term whole) need more rows in part B than these rows give (the number of their design "
            f"columns {LEVELS_READ_NOT_SHOWN})"
        )
        raise DataError(f"k = {k} terms {need}; lower k or split.")
    return columns


def parts_bounds(bounds: Any, mf: ModelFrame) -> Any:
    """The bounds the parts' doors get: a mapping gains the bounds that follow from public inputs
    (a factor dummy's coding range, an interaction's product of its parts' bounds), since the parts
    hold the design, where such a column is a numeric column, unless it declares that column itself."""
    public = public_column_bounds(bounds, mf)
    return {**public, **bounds} if isinstance(bounds, dict) else bounds


def bounds_in_part(bounds: Any, part: pd.DataFrame) -> Any:
    """A bounds mapping restricted to a part's columns (the design's, and the response)."""
    if not isinstance(bounds, dict):
        return bounds
    return {key: val for key, val in bounds.items() if key in part.columns}


def selector_bounds(select: str, bounds: Any, part: pd.DataFrame) -> Any:
    """The bounds part A's selector takes: dp_sis and dp_two_stage the mapping of the part's columns,
    dp_knockoff one public row-norm bound B, the l2 norm of the declared box's largest corner over the
    design columns (from a mapping, or from one (lo, hi) pair for every column; the part's last column
    is the response, :func:`split_frame`), or ``"auto"`` as given.

    A mapping that leaves a design column without bounds gives None: B is then read from the rows, a
    step dp_knockoff names.

    Examples
    --------
    >>> part = pd.DataFrame({"a": [0.0], "b": [1.0], "y": [2.0]})
    >>> selector_bounds("knockoff", {"a": (-3, 1), "b": (0, 4), "y": (-100, 100)}, part)
    5.0
    >>> selector_bounds("knockoff", "auto", part), selector_bounds("knockoff", {"a": (0, 1)}, part)
    ('auto', None)
    >>> selector_bounds("knockoff", (-3, 4), part)  # one pair for every column: sqrt(2) * 4
    5.656854249492381
    """
    bounds = bounds_in_part(bounds, part)
    if select != "knockoff" or bounds is None or is_auto(bounds):
        return bounds
    design = list(part.columns[:-1])
    if not isinstance(bounds, Mapping):  # one (lo, hi) pair for every column
        bounds = dict.fromkeys(design, bounds)
    if any(name not in bounds for name in design):
        return None
    corner = [max(abs(float(bounds[name][0])), abs(float(bounds[name][1]))) for name in design]
    return float(np.linalg.norm(corner))


def take_part(part_result: Any, samplers: set, steps: list[str]) -> None:
    """A part's samplers and data-dependent steps into the call's statement (``samplers``, ``steps``):
    before anything else is decided on the part's result, so that no step is lost (an empty selection
    still names the selector's steps)."""
    samplers.update(part_result.privacy.samplers)
    steps.extend(step for step in part_result.privacy.data_dependent_steps if step not in steps)


@contextmanager
def spent_if_refused(part: str, options: SelectInferOptions, to_accountant: bool) -> Iterator[None]:
    """A part's refusal after the call's charge says that the whole (eps, delta) is spent.

    The dry run refuses before the charge whatever public inputs decide; a part's own private bounds
    are drawn only in the release, and a refusal that follows from their value (e.g. dp_knockoff's
    declared ``c_min`` against the released row bound B) cannot be decided sooner.  The part's
    "Nothing was spent" (it charged no accountant of its own) is then not the call's.
    """
    try:
        yield
    except DPStatsError as err:
        where = " to the accountant" if to_accountant else ""
        delta = f", delta = {options.delta:g}" if options.delta > 0 else ""
        text = getattr(err, "before_charge", None) or str(err)  # a part's own charge is not the call's
        text = re.sub(r"Nothing (but the private bounds )?was spent\.? ?", "", text).strip()
        out = type(err)(
            f"{text} dp_select_infer had charged the whole call (eps = {options.eps:g}{delta}){where} before "
            f"{part} refused: it is spent, and nothing was released."
        )
        out.__cause__, out.__suppress_context__ = err.__cause__, True
        out.charge_said = True  # the call's run says it no more (dpstats.privacy.reservation)
        raise out.with_traceback(err.__traceback__) from None
