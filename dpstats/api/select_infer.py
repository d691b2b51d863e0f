"""Front door of select-then-infer: :func:`dp_select_infer`.

The rows are split at random into two disjoint parts; part A runs a private selector
(:func:`dpstats.dp_sis`, :func:`dpstats.dp_two_stage` or :func:`dpstats.dp_knockoff`), part B
runs :func:`dpstats.dp_lm` (or :func:`dpstats.dp_glm`) on the selected terms, each spending the whole (eps, delta): the
split, the options and the plan (parallel composition) are :mod:`dpstats.methods.select_infer`;
the release runs the two parts' front doors.
"""

from __future__ import annotations

from typing import Unpack

import math
import warnings
from dataclasses import dataclass, field, replace

import pandas as pd

from ..engines import InMemoryData
from ..privacy.bounds import Bounds, design_box, is_auto
from .. import engines
from ..errors import NonPrivateWarning
from ..formula import ModelFrame, model_frame

from ..methods import select_infer as m
from ..methods.lm import check_auto_bounds_level
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..results.select_infer import SelectInferResult
from ._parameters import Shared
from ._common import (
    OptionsDoor,
    Settings,
    _declared_schema,
    call_of,
    check_budget,
    check_call,
    front_door,
    run,
)
from .glm import dp_glm
from .lm import dp_lm


@front_door
def dp_select_infer(
    formula: str,
    data: InMemoryData,
    eps: float,
    delta: float = 0.0,
    *,
    select: str = "sis",
    infer: str = "lm",
    family: str | None = None,
    k: int | None = None,
    split: float = 0.5,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    select_args: dict | None = None,
    conf_level: float = 0.95,
    n_boot: int = 1000,
    **shared: Unpack[Shared],
) -> SelectInferResult:
    """Private selection on one part of the rows, then dp_lm (or dp_glm) on the selected terms on the other.

    The rows are split at random (``split``): the selector runs on part A, the fit on part B, so that the
    intervals hold after selection, for the coefficients of the selected model (what lm or glm of it
    estimates, a term left out absorbed by the terms kept), not those of the candidates' formula; the
    parts' rows are disjoint, so the call spends (eps, delta) once.

    Parameters
    ----------
    {formula}
        The predictors must be numeric.
    {data}
        The split needs them.  Rows with missing values are dropped first (a named
        data-dependent step: n then depends on the data).
    eps, delta : float
        Budget of each part, and of the whole call (parallel composition).  ``select="knockoff"`` needs delta > 0.
    select : {"sis", "two_stage", "knockoff"}
        The selector run on part A.
    infer : {"lm", "glm"}
        What part B fits on the selected terms: :func:`dpstats.dp_lm` (default) or
        :func:`dpstats.dp_glm` (declared bounds; delta > 0; its refusal rule is applied
        before anything is spent, at the largest selection the selector can make).
    family : {"binomial", "poisson"}, optional
        dp_glm's family with ``infer="glm"`` (default "binomial": a 0/1 response;
        "poisson": a count with declared bounds (0, Y)).
    k : int, optional
        Number of design columns selected (sis: default as dp_sis; two_stage: required).  Part B fits
        each one's term whole, as lm does (a factor with all its columns): it may fit more than k.
    split : float
        Share of the rows in part A (selection), 0 < split < 1; default 0.5.
    bounds : (lo, hi) or dict
        Public bounds for the selector (knockoff: its row-norm bound is the box's largest corner) and for
        dp_lm (an interaction's columns default to the product of its parts' bounds), or ``"auto"``: each
        part releases its own private bounds from its share of that part's eps (docs/architecture.md).
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps each part spends on its bounds (default 10%
        of eps), out of that part's eps.
    select_args : dict, optional
        Further arguments of the selector (e.g. ``{"bounds": 3.0}``: a row-norm bound
        for dp_knockoff tighter than the box's corner, which it replaces).
    {conf_level: part B's}
        As for :func:`dpstats.dp_lm` and :func:`dpstats.dp_glm`.
    n_boot : int
        dp_lm's bootstrap replicates (``infer="lm"`` only).
    {schema parameters}
    {neighbouring, replace only: the parts' sizes are then public (parallel composition needs
        them fixed)}
    {diagnostics: values filled and rows dropped for missing values, the non-private OLS or glm
        fit of the selected terms on part B's raw rows}
    {run settings}
        The split's permutation is drawn from ``random_state`` too.

    Returns
    -------
    SelectInferResult
        ``selected``; ``tidy()`` (part B's table; ``model``: the final model, ``selected_formula``); one
        ledger; ``selection``, ``fit``: the parts' results.  ``glance()``: ``model``; ``n`` all rows, ``nobs``
        part B's rows; ``p`` the candidate columns, ``df`` the final model's (slopes; dp_lm).

    {examples}
    >>> df = dp.datasets.fan_lv(n=4000, d=20, random_state=0)
    >>> res = dp.dp_select_infer("y ~ .", df, eps=2.0, delta=1e-6, k=3, bounds=(-5, 5),
    ...                          n_boot=200, random_state=1)
    >>> len(res.selected), res.tidy().columns[0]
    (3, 'term')
    """
    given, settings, options = check_call(locals(), shared, m.SelectInferOptions)
    check_budget(settings.accountant, options.eps, options.delta)
    engines.require_rows(data, "dp_select_infer", "its rows are split into two parts at random")
    data = engines.as_data(data, formula, keep=[shared["levels"]])  # polars, Arrow, DuckDB as pandas
    schema = _declared_schema(given, bounds, options.eps, options.RESPONSE)  # as declare() makes it
    engines.refuse_private_n(m.SelectInferOptions.PUBLIC_N, schema, data, formula)
    call = call_of(dp_select_infer, given)
    if bounds_eps is not None:
        call["bounds_eps"] = bounds_eps
    return run(SelectInferDoor(replace(options, schema=schema), data, call, settings), settings)


class _Probed(Exception):
    """Raised by :class:`_ProbeAccountant` at the charge: everything before it has passed."""


class _ProbeAccountant(Accountant):
    """An unlimited accountant whose charge stops the call (a dry run up to the spend)."""

    def spend(self, entries, label: str = ""):
        raise _Probed(label)


@dataclass
class SelectInferDoor(OptionsDoor):
    """dp_select_infer's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.SelectInferOptions
    data: pd.DataFrame
    call: dict
    settings: Settings  # the parts run with the call's strict and random_state
    _dd: DataDependence | None = field(default=None, init=False, repr=False)

    def frame(self, dd: DataDependence) -> m.SplitFrame:
        self._dd = dd
        mf = model_frame(self.options.formula, self.data, drop_intercept=True, schema=self.schema)
        frame = m.split_frame(mf, self.options.split, self.settings.random_state)
        self._check_part_b(frame, mf)
        self._part_bounds = m.parts_bounds(self.options.bounds, mf)
        dd.name_frame_steps(mf)  # after the bounds checks: a bound left out is an error, not a step
        self._dry_run(frame)
        return frame

    def _check_part_b(self, frame: m.SplitFrame, mf: ModelFrame) -> None:
        """Bounds declared for every candidate and the response (a factor's dummies bounded by their coding),
        and room in part B for the selected columns' terms, whole: before any spend, from public inputs only
        (part B's size n − ⌊split·n⌋ is public under replace-one-row, where missing values get their public
        fills; without declared bounds incomplete rows are dropped, a named step)."""
        o = self.options
        if o.bounds is not None and not is_auto(o.bounds):  # private bounds: each part releases its own
            design_box(o.bounds, mf, frame.names + [frame.response])
        most = m.most_columns(mf, o, len(frame.part_b))  # None: a k the selector refuses, in the dry run
        check_auto_bounds_level(o, len(frame.part_b), most or o.k or len(frame.names), m.sizes_public(mf))
        if most is not None and o.infer == "glm":  # dp_glm's refusal rule at the largest selection
            m.check_glm_part(o, len(frame.part_b), most, frame.response, quoted=m.sizes_public(mf))

    def _dry_run(self, frame: m.SplitFrame) -> None:
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
        raise AssertionError(f"dp_{self.options.select} did not charge its accountant")  # pragma: no cover

    def plan(self, frame: m.SplitFrame, dd: DataDependence) -> Plan:
        return m.plan(self.options, len(frame.part_a), len(frame.part_b))

    def release(self, frame: m.SplitFrame, plan: Plan, noise: NoiseSource) -> m.Pipeline:
        gen = noise.generator
        seed_a, seed_b = (
            (None, None) if not noise.seeded else (int(gen.integers(2**31)), int(gen.integers(2**31)))
        )
        formula = f"`{frame.response}` ~ ."
        charged = (self.options, self.settings.accountant is not None)
        with m.spent_if_refused(f"part A's selector (dp_{self.options.select})", *charged):
            selection = self._run_selection(formula, frame.part_a, seed_a)
        m.take_part(selection, noise.samplers, self._dd.steps)  # its samplers and steps, before any return
        selected = m.as_named(frame, selection.selected)
        if not selected:
            return m.Pipeline(selection, [], None)
        terms = m.selected_terms(frame.mf, selected)
        columns = m.term_columns(frame.mf, terms)
        with m.spent_if_refused(f"part B's fit (dp_{self.options.infer})", *charged):
            fit = self._run_inference(formula, frame.part_b[columns + [frame.response]], seed_b)
        m.take_part(fit, noise.samplers, self._dd.steps)
        return m.Pipeline(selection, selected, fit, terms, columns)

    def _run_inference(self, formula: str, part: pd.DataFrame, seed):
        """Part B's front door (dp_lm or dp_glm) on the selected columns, with their bounds."""
        o, bounds = self.options, m.bounds_in_part(self._part_bounds, part)
        common = dict(eps=o.eps, delta=o.delta, bounds=bounds, conf_level=o.conf_level, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # named once, by the selector's own call
            if o.infer == "glm":
                return dp_glm(formula, part, family=o.family, strict=self.settings.strict, **common)
            return dp_lm(formula, part, n_boot=o.n_boot, strict=self.settings.strict, **common)

    def _run_selection(self, formula: str, part: pd.DataFrame, seed, accountant=None):
        from . import knockoff, sis, two_stage

        o = self.options
        common = dict(random_state=seed, strict=self.settings.strict, accountant=accountant, **o.select_args)
        bounds = m.selector_bounds(o.select, self._part_bounds, part)  # dp_knockoff's: a row-norm bound
        if o.select == "sis":
            return sis.dp_sis(formula, part, o.eps, o.k, bounds=bounds, **common)
        if o.select == "two_stage":
            return two_stage.dp_two_stage(formula, part, o.eps, o.k, bounds=bounds, **common)
        return knockoff.dp_knockoff(formula, part, o.eps, o.delta, **({"bounds": bounds} | common))

    def result(self, frame: m.SplitFrame, plan, released: m.Pipeline, statement, noise) -> SelectInferResult:
        opening = self.opening(len(frame.part_a) + len(frame.part_b), frame.names, statement)
        return SelectInferResult.of(opening, self.options, released, frame)

    def diagnostics(self, frame: m.SplitFrame, released: m.Pipeline) -> dict:
        return m.diagnostics(frame, self.options, released.columns)
