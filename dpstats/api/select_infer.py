"""Front door of select-then-infer: :func:`dp_select_infer`.

The rows are split at random into two disjoint parts by a permutation drawn
independently of the data (its sizes follow from the public n and ``split``).
Part A runs a private selector (:func:`dpstats.dp_sis`, :func:`dpstats.dp_two_stage`
or :func:`dpstats.dp_knockoff`); part B runs :func:`dpstats.dp_lm` on the
selected terms.  Each part spends the whole (eps, delta).

Privacy (parallel composition).  Under replace-one-row with n public the two
part sizes are public and fixed, and the permutation does not depend on the
data, so replacing one row of the data set replaces exactly one row of exactly
one part and leaves the other part unchanged.  The selector is (eps, delta)-DP
in its part, dp_lm is (eps, delta)-DP in its part and is run with its input
(the selected set) fixed, so for any pair of neighbouring data sets only one
of the two mechanisms sees a change: the pipeline is (eps, delta)-DP
(McSherry 2009, parallel composition; the adaptivity of part B's formula on
part A's output does not matter because part B's rows are the same in both
data sets).  The ledger has one entry for the composition; each part's own
ledger is kept in the result and shown in its report.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, NonPrivateWarning, PrivacyParameterError
from ..formula import INTERCEPT, model_frame
from ..geometry import resolve_box
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState, make_generator
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.select_infer import SelectInferResult
from ..validation import check_fraction
from ..schema import Schema
from ._common import (
    check_budget,
    Settings,
    auto_bounds_options,
    call_record,
    frame_schema,
    is_auto,
    missing_rows_step,
    refuse_omit,
    run,
    schema_parameters,
)
from ..methods.lm import LAMBDA_SHARE, LMOptions
from .lm import check_auto_bounds_level, dp_lm

SELECTORS = ("sis", "two_stage", "knockoff")


@schema_parameters
def dp_select_infer(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    delta: float = 0.0,
    *,
    select: str = "sis",
    k: int | None = None,
    split: float = 0.5,
    bounds=None,
    bounds_eps: float | None = None,
    select_args: dict | None = None,
    conf_level: float = 0.95,
    n_boot: int = 1000,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    random_state: RandomState = None,
    strict: bool = False,
    accountant=None,
    diagnostics: bool = False,
) -> SelectInferResult:
    """Private selection on one part of the rows, then dp_lm on the selected terms on the other.

    Parameters
    ----------
    formula : str
        ``"y ~ ."`` or any two-sided formula of numeric predictors.
    data : pandas.DataFrame
        In memory (the split needs the rows).  Rows with missing values are dropped
        first (a named data-dependent step: n then depends on the data).
    eps, delta : float
        Budget of each part, and of the whole pipeline (parallel composition on
        disjoint rows, module docstring).  ``select="knockoff"`` needs delta > 0.
    select : {"sis", "two_stage", "knockoff"}
        The selector run on part A.
    k : int, optional
        Number of terms selected (sis: default as dp_sis; two_stage: required).
    split : float
        Share of the rows in part A (selection), 0 < split < 1; default 0.5.
    bounds : (lo, hi) or dict
        Public bounds for the selector (sis, two_stage) and for dp_lm, or ``"auto"``:
        each part releases its own private bounds from its share of that part's eps
        (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps each part spends on its bounds (default 10%
        of eps), out of that part's eps.
    select_args : dict, optional
        Further arguments of the selector (e.g. ``{"bounds": 3.0}`` — the row-norm
        bound of dp_knockoff).
    conf_level, n_boot : as for :func:`dpstats.dp_lm`.
    {schema parameters}
    neighbouring : {"replace"}
        Replace-one-row only: the parts' sizes are then public (parallel composition needs them fixed).
    random_state, strict, accountant, diagnostics
        See docs/architecture.md, "Privacy conventions".  The split's permutation
        is drawn from ``random_state`` too.

    Returns
    -------
    SelectInferResult
        ``selected``, the coefficient table (``tidy()``), one ledger; ``selection``
        and ``fit`` are the two parts' own results.

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=4000, d=20, random_state=0)
    >>> res = dp.dp_select_infer("y ~ .", df, eps=2.0, delta=1e-6, k=3, bounds=(-5, 5),
    ...                          n_boot=200, random_state=1)
    >>> len(res.selected), res.tidy().columns[0]
    (3, 'term')
    """
    given = locals()
    settings = Settings.check(given)
    lm_options = LMOptions.check({**given, "interval": "pivot", "lambda_share": LAMBDA_SHARE})
    check_budget(settings.accountant, lm_options.eps, lm_options.delta)
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, keep=[levels])
    args = {
        "strict": settings.strict,
        **{key: getattr(lm_options, key) for key in ("eps", "delta", "conf_level", "n_boot")},
    }
    if math.isinf(args["eps"]):
        raise PrivacyParameterError(
            "dp_select_infer needs a finite eps (the selectors have no eps = inf mode)."
        )
    part_bounds = (  # each part releases its own bounds with bounds_eps of its eps
        bounds
        if bounds_eps is None
        else auto_bounds_options(bounds, args["eps"], bounds_eps=bounds_eps, data=data)
    )
    if select not in SELECTORS:
        raise PrivacyParameterError(f"select must be one of {list(SELECTORS)}, got {select!r}.")
    split = check_fraction(split, "split", low_open=True)
    if select == "knockoff" and args["delta"] <= 0:
        raise PrivacyParameterError(
            "select='knockoff' needs delta > 0 (dp_knockoff is (eps, delta)-DP); e.g. delta=1e-6."
        )
    if select == "two_stage" and k is None:
        raise PrivacyParameterError("select='two_stage' needs k, the number of terms to select.")
    if not isinstance(data, pd.DataFrame):
        raise DataError(
            f"dp_select_infer needs an in-memory pandas DataFrame (the rows are split), got {type(data).__name__}."
        )
    extra = dict(select_args or {})
    if strict and bounds is None:
        raise PrivacyParameterError(
            "strict=True needs declared bounds (bounds=...): dp_lm on part B would otherwise clip to the data's range."
        )
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=args["eps"])
    refuse_omit(schema, "dp_select_infer", "its parts' sizes follow from n, and dp_lm releases n exactly")
    door = SelectInferDoor(
        schema=schema,
        formula=formula,
        data=data,
        select=select,
        k=k,
        split=split,
        bounds=part_bounds,
        select_args=extra,
        call_bounds=(bounds, bounds_eps),
        random_state=random_state,
        **{key: args[key] for key in ("eps", "delta", "conf_level", "n_boot", "strict")},
    )
    return run(door, settings)


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


class _Probed(Exception):
    """Raised by :class:`_ProbeAccountant` at the charge: everything before it has passed."""


class _ProbeAccountant(Accountant):
    """An unlimited accountant whose charge stops the call (a dry run up to the spend)."""

    def spend(self, entries, label: str = ""):
        raise _Probed(label)


@dataclass
class SplitFrame:
    part_a: pd.DataFrame
    part_b: pd.DataFrame
    response: str
    names: list[str]
    n_dropped: int = 0
    n_filled: int = 0


@dataclass
class Pipeline:
    selection: Any
    selected: list[str]
    fit: Any


@dataclass
class SelectInferDoor:
    """dp_select_infer's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: pd.DataFrame
    eps: float
    delta: float
    select: str
    k: int | None
    split: float
    bounds: Any
    select_args: dict
    conf_level: float
    n_boot: int
    strict: bool
    random_state: RandomState
    call_bounds: tuple = (None, None)  # (bounds, bounds_eps) as the user gave them
    schema: Schema | None = None
    label: str = "dp_select_infer"
    _dd: DataDependence | None = field(default=None, init=False, repr=False)

    def frame(self, dd: DataDependence) -> SplitFrame:
        self._dd = dd
        mf = model_frame(self.formula, self.data, drop_intercept=True, schema=self.schema)
        n = mf.n
        n_a = int(math.floor(self.split * n))
        if n_a < 2 or n - n_a < 3:
            raise DataError(
                f"split = {self.split:g} leaves too few rows in one part; use more rows or another split."
            )
        idx_a, idx_b = split_rows(n, self.split, self.random_state)
        design = pd.DataFrame(mf.X, columns=mf.names)
        design[mf.response] = mf.y
        part_a, part_b = design.iloc[idx_a], design.iloc[idx_b]
        frame = SplitFrame(
            part_a.reset_index(drop=True), part_b.reset_index(drop=True), mf.response, list(mf.names)
        )
        frame.n_dropped, frame.n_filled = mf.n_dropped, mf.n_filled
        self._check_part_b(frame)
        missing_rows_step(dd, mf)  # after the bounds checks: a bound left out is an error, not a step
        self._dry_run(frame)
        return frame

    def _check_part_b(self, frame: SplitFrame) -> None:
        """Bounds declared for every candidate and the response, and room for k terms in part B.

        Both before any spend, from public inputs only: the bounds are checked against the names
        (they are enforced by clipping, never checked against the rows); part B's size is
        n − ⌊split·n⌋ with n the number of rows read, public under replace-one-row because
        missing values get their public fills (``na_action="omit"`` is refused, and
        ``bounds="auto"`` fills with its centre), and the private-bounds level follows from that
        size, k (or the number of candidate terms), eps and delta.  Only without declared bounds,
        where incomplete rows are dropped (a named data-dependent step, refused under strict),
        does n depend on the rows.
        """
        if self.bounds is not None and not is_auto(self.bounds):  # private bounds: each part releases its own
            resolve_box(self.bounds, frame.names + [frame.response])
        check_auto_bounds_level(
            self.bounds, len(frame.part_b), self.k or len(frame.names), self.eps, self.delta
        )
        if self.k is not None and self.k + 1 >= len(frame.part_b):
            raise DataError(
                f"k = {self.k} terms need more than {self.k + 1} rows in part B; lower k or split."
            )

    def _dry_run(self, frame: SplitFrame) -> None:
        """Run the selector up to its charge, on an accountant that stops it there (no noise is drawn).

        Its argument checks, model frame, plan and data-dependent steps (refused under
        strict) all run before this door charges the budget; warnings are given once,
        by the real call.
        """
        probe = _ProbeAccountant(eps=math.inf, delta=1.0 - 1e-12)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonPrivateWarning)
                self._run_selection(f"`{frame.response}` ~ .", frame.part_a, 0, accountant=probe)
        except _Probed:
            return
        raise AssertionError(f"dp_{self.select} did not charge its accountant")  # pragma: no cover

    def plan(self, frame: SplitFrame, dd: DataDependence) -> Plan:
        n_a, n_b = len(frame.part_a), len(frame.part_b)
        entry = LedgerEntry(
            step=f"parallel composition: dp_{self.select} on part A ({n_a} rows), dp_lm on part B ({n_b} rows)",
            mechanism=f"dp_{self.select} | dp_lm (disjoint rows)",
            eps=self.eps,
            delta=self.delta,
            sensitivity="each part's own (see its ledger); one replaced row changes one part only",
            note="parallel composition: the parts' budgets do not add (McSherry 2009)",
            event={"kind": "eps_delta", "eps": self.eps, "delta": self.delta},
        )
        notes = [
            f"The rows were split by a random permutation independent of the data into part A ({n_a} rows, "
            f"selection) and part B ({n_b} rows, inference); the sizes follow from the public n and split = "
            f"{self.split:g}.",
            "Each part spends the whole budget: under replace-one-row a changed row lies in one part only "
            "(parallel composition); the selected set is fixed before part B is read.",
        ]
        return Plan(
            method=f"select-then-infer (dp_{self.select} -> dp_lm)",
            neighbouring="replace",
            entries=[entry],
            notes=notes,
        )

    def release(self, frame: SplitFrame, plan: Plan, noise: NoiseSource) -> Pipeline:
        gen = noise.generator
        seed_a, seed_b = (
            (None, None) if not noise.seeded else (int(gen.integers(2**31)), int(gen.integers(2**31)))
        )
        formula = f"`{frame.response}` ~ ."
        selection = self._run_selection(formula, frame.part_a, seed_a)
        noise.samplers.update(selection.privacy.samplers)  # the statement lists the parts' samplers
        selected = list(selection.selected)
        if not selected:
            return Pipeline(selection, [], None)
        cols = selected + [frame.response]
        bounds = self.bounds
        if isinstance(bounds, dict):
            bounds = {key: val for key, val in bounds.items() if key in cols}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # named once, by the selector's own call
            fit = dp_lm(
                formula,
                frame.part_b[cols],
                eps=self.eps,
                delta=self.delta,
                bounds=bounds,
                conf_level=self.conf_level,
                n_boot=self.n_boot,
                random_state=seed_b,
                strict=self.strict,
            )
        noise.samplers.update(fit.privacy.samplers)
        for step in selection.privacy.data_dependent_steps + fit.privacy.data_dependent_steps:
            if step not in self._dd.steps:
                self._dd.steps.append(step)
        return Pipeline(selection, selected, fit)

    def _run_selection(self, formula: str, part: pd.DataFrame, seed, accountant=None):
        from . import knockoff, sis, two_stage

        common = dict(random_state=seed, strict=self.strict, accountant=accountant)
        if self.select == "sis":
            return sis.dp_sis(
                formula, part, self.eps, self.k, bounds=self.bounds, **common, **self.select_args
            )
        if self.select == "two_stage":
            return two_stage.dp_two_stage(
                formula, part, self.eps, self.k, bounds=self.bounds, **common, **self.select_args
            )
        return knockoff.dp_knockoff(formula, part, self.eps, self.delta, **common, **self.select_args)

    def result(
        self,
        frame: SplitFrame,
        plan: Plan,
        released: Pipeline,
        statement: PrivacyStatement,
        noise: NoiseSource,
    ) -> SelectInferResult:
        call = call_record(
            {"formula": self.formula, "eps": self.eps},
            {
                "delta": (self.delta, 0.0),
                "select": (self.select, "sis"),
                "k": (self.k, None),
                "split": (self.split, 0.5),
                "bounds": (self.call_bounds[0], None),
                "bounds_eps": (self.call_bounds[1], None),
                "conf_level": (self.conf_level, 0.95),
                "n_boot": (self.n_boot, 1000),
            },
        )
        fit = released.fit
        base = dict(
            method="dp_select_infer",
            call=call,
            n=len(frame.part_a) + len(frame.part_b),
            p=len(frame.names),
            privacy=statement,
            selector=f"dp_{self.select}",
            selected=released.selected,
            candidates=len(frame.names),
            n_select=len(frame.part_a),
            n_infer=len(frame.part_b),
            selection=released.selection,
            fit=fit,
            formula=self.formula,
        )
        if fit is None:
            res = SelectInferResult(terms=[], **base)
            res.warnings.append("the selector selected no term; nothing was fitted on part B.")
            return res
        return SelectInferResult(
            terms=list(fit.terms),
            coefficients=fit.coefficients,
            table=fit.table,
            vcov_matrix=fit.vcov_matrix,
            sigma=fit.sigma,
            df_residual=fit.df_residual,
            conf_level=fit.conf_level,
            ridge=fit.ridge,
            inference=fit.inference,
            noise=fit.noise,
            intercept=fit.intercept,
            **base,
        )

    def diagnostics(self, frame: SplitFrame, released: Pipeline) -> dict:
        """Not private: ordinary least squares of the selected terms on part B's raw rows."""
        if not released.selected:
            return {
                "rows_dropped_for_missing_values": frame.n_dropped,
                "values_filled_for_missing": frame.n_filled,
                "ols_part_b_nonprivate": {},
            }
        X = np.c_[np.ones(len(frame.part_b)), frame.part_b[released.selected].to_numpy(dtype=float)]
        beta = np.linalg.lstsq(X, frame.part_b[frame.response].to_numpy(dtype=float), rcond=None)[0]
        return {
            "rows_dropped_for_missing_values": frame.n_dropped,
            "values_filled_for_missing": frame.n_filled,
            "ols_part_b_nonprivate": dict(zip([INTERCEPT, *released.selected], beta.tolist())),
        }
