"""The one front-door skeleton, and the steps every front door shares.

Every public function of :mod:`dpstats.api` is a thin door over :func:`run`:
it validates its arguments (cheap checks, clear errors, the accountant's
balance), then hands a :class:`FrontDoor` to :func:`run`, which always takes
the same steps in the same order (``docs/architecture.md``, "One call, step
by step"):

1. ``frame(dd)`` reads the data (model frame, sufficient statistics) and names
   its data-dependent steps in ``dd``; nothing is released;
2. ``plan(frame, dd)`` computes the privacy plan (ledger, sensitivities) from
   public inputs and named data-dependent values — the method's ``plan`` in
   :mod:`dpstats.methods`;
3. the noise source is made and the plan's ledger charged to the accountant
   (refused without spending when it would exceed the budget);
4. ``release(frame, plan, noise)`` runs the method's ``release``;
5. ``result(frame, plan, released, statement, noise)`` builds the result;
6. non-private diagnostics are attached only when the user asked.

Under ``strict=True`` a data-dependent step raises in step 1 or 2, before
any budget is spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from ..formula import ModelFrame, finish_checks, model_frame
from ..geometry import Box
from ..stats import CrossStats, cross_products
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import DPResult, attach_diagnostics


class FrontDoor(Protocol):
    """What a method supplies to :func:`run`: its frame, plan, release and result."""

    label: str

    def frame(self, dd: DataDependence) -> Any: ...

    def plan(self, frame: Any, dd: DataDependence) -> Plan: ...

    def release(self, frame: Any, plan: Plan, noise: NoiseSource) -> Any: ...

    def result(
        self, frame: Any, plan: Plan, released: Any, statement: PrivacyStatement, noise: NoiseSource
    ) -> DPResult: ...

    def diagnostics(self, frame: Any, released: Any) -> dict[str, Any]: ...


def run(
    door: FrontDoor,
    *,
    strict: bool,
    random_state: RandomState,
    accountant: Accountant | None,
    diagnostics: bool,
) -> DPResult:
    """Run one analysis through the shared steps (see the module docstring)."""
    dd = DataDependence(strict)
    frame = door.frame(dd)
    plan = door.plan(frame, dd)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(accountant, plan.entries, door.label)
    released = door.release(frame, plan, noise)
    result = door.result(frame, plan, released, plan.statement(dd, noise), noise)
    return attach_diagnostics(result, diagnostics, lambda: door.diagnostics(frame, released))


def missing_rows_step(dd: DataDependence, mf: ModelFrame) -> None:
    """Dropping incomplete rows makes n data-dependent: name it (strict refuses).

    The step is named without its count: how many rows were dropped is not
    released (it appears only in requested diagnostics).
    """
    if mf.n_dropped:
        dd.add(
            "rows with missing or non-finite values were dropped, so the number of rows used (n) "
            "depends on the data",
            fix="remove or impute missing values before the analysis",
        )
    for step, fix in getattr(mf, "engine_steps", ()):  # e.g. factor levels read by a first pass
        dd.add(step, fix=fix)
    for step, fix in mf.data_dependent_terms:  # e.g. scale(), orthogonal poly(), spline knots at quantiles
        dd.add(step, fix=fix)


def dummy_columns(mf: ModelFrame) -> set[str]:
    """Design columns that are 0/1 indicators of a factor main effect."""
    return {nm for nm, term in zip(mf.names, mf.terms) if term in mf.factor_levels}


def charge(accountant: Accountant | None, entries: list[LedgerEntry], label: str) -> None:
    """Charge the planned ledger to the accountant (if any), or refuse without spending."""
    if accountant is not None:
        accountant.spend(entries, label=label)


@contextmanager
def progress_bar(show: bool, total: int | None, desc: str) -> Iterator[Callable[[int], None] | None]:
    """A tqdm bar's ``update`` as a method's ``progress`` callback (None when not shown).

    Methods report progress through a callback and never print; the bar is
    made here, in the front door.
    """
    if not show:
        yield None
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=desc, leave=False) as bar:
        yield bar.update


BoxFn = Callable[[ModelFrame], tuple[Box | None, Box | None]]


def frame_and_cross_products(
    formula: str, data, boxes: BoxFn, *, drop_intercept: bool = True, gram: bool = False
) -> tuple[ModelFrame, Box | None, Box | None, CrossStats]:
    """Model frame and its sufficient statistics, with the data scanned once.

    Plain numeric designs defer the scan for non-finite values and constant
    columns to the statistics pass itself (:func:`dpstats.formula.finish_checks`);
    when a non-finite value turns up, the frame is rebuilt the careful way
    (rows dropped and counted) and the statistics recomputed.  ``boxes(mf)``
    resolves the declared bounds for the frame's columns (it may raise).
    Nothing here is released; the caller charges the budget afterwards.
    Streamed and Dask data (:mod:`dpstats.engines`) get the same statistics
    from a chunked pass, with a frame that holds no rows.
    """
    from .. import engines

    if engines.is_engine_input(data):
        return engines.frame_and_cross_products(
            formula, data, boxes, drop_intercept=drop_intercept, gram=gram
        )
    mf = model_frame(formula, data, drop_intercept=drop_intercept, defer_checks=True)
    x_box, y_box = boxes(mf)
    stats = cross_products(mf.X, mf.y, x_box=x_box, y_box=y_box, gram=gram, ranges=False)
    if not mf.checked and not finish_checks(mf, stats.constant_columns(), stats.finite):
        mf = model_frame(formula, data, drop_intercept=drop_intercept)
        x_box, y_box = boxes(mf)
        stats = cross_products(mf.X, mf.y, x_box=x_box, y_box=y_box, gram=gram)
    return mf, x_box, y_box, stats


def call_record(required: dict[str, Any], optional: dict[str, tuple[Any, Any]]) -> dict[str, Any]:
    """The arguments a result's ``call`` shows, R-style.

    ``required`` are always shown, in order; ``optional`` maps a name to
    ``(value, default)`` and is shown when the value differs from its default
    (for a default of None: when it is given).  ``bounds`` are recorded as plain
    lists or dicts so that the call prints and serialises.
    """
    call = dict(required)
    for name, (value, default) in optional.items():
        shown = value is not None if default is None else value != default
        if shown:
            call[name] = _plain_bounds(value) if name == "bounds" else value
    return call


def _plain_bounds(bounds):
    if isinstance(bounds, Mapping):
        return dict(bounds)
    if isinstance(bounds, (list, tuple)):
        return list(bounds)
    return bounds
