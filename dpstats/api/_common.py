"""The one front-door skeleton, :func:`run`, and the steps every front door shares.

Every public function of :mod:`dpstats.api` checks its arguments, :func:`declare`s its schema and
hands a :class:`FrontDoor` to :func:`run`, which takes the same steps in the same order: frame, plan,
charge, release, result, diagnostics (docs/architecture.md, "One call, step by step"; private bounds:
"Private bounds").  Under ``strict=True`` a data-dependent step raises in the frame or the plan,
before any budget is spent.
"""

from __future__ import annotations

import inspect
import math
import re
import textwrap
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from .. import catalog, engines
from ..formula import ModelFrame, level_steps_taken, with_formula_declarations
from ..schema import Schema, default_na_action

from ..errors import DPStatsError, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ..privacy.accountant import Accountant
from ..privacy.bounds import PrivateBounds, bounds_step, charged_if_drawn
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.reservation import Reservation
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import DPResult, attach_diagnostics
from ..validation import check_accountant, check_strict
from ._parameters import PARAMETERS, shared_parameters


class FrontDoor(Protocol):
    """What a method supplies to :func:`run`: its frame, plan, release and result."""

    @property
    def label(self) -> str: ...

    def frame(self, dd: DataDependence) -> Any: ...

    def plan(self, frame: Any, dd: DataDependence) -> Plan: ...

    def release(self, frame: Any, plan: Plan, noise: NoiseSource) -> Any: ...

    def result(
        self, frame: Any, plan: Plan, released: Any, statement: PrivacyStatement, noise: NoiseSource
    ) -> DPResult: ...

    def diagnostics(self, frame: Any, released: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Settings:
    """How one call runs, shared by every front door: none of it changes what is released."""

    strict: bool
    random_state: RandomState
    accountant: Accountant | None
    diagnostics: bool

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> Settings:
        """The checked settings from a door's arguments (a simulation ``truth`` implies diagnostics)."""
        return cls(
            strict=check_strict(given["strict"]),
            random_state=given["random_state"],
            accountant=check_accountant(given["accountant"]),
            diagnostics=bool(given["diagnostics"] or given.get("truth") is not None),
        )


def check_call(
    arguments: Mapping[str, Any], shared: Mapping[str, Any], record: Any, **read_as: Any
) -> tuple[dict[str, Any], Settings, Any]:
    """A door's first step: its arguments as given (its own, ``locals()``, and the ``shared`` keywords),
    the run settings and the method's options ``record``, each checked once; ``read_as`` gives an argument
    as the record reads it (``assume`` coerced by the door), the arguments keep it as given."""
    given = dict(arguments) | dict(shared)
    return given, Settings.check(given), record.check(given | read_as)


def run(door: FrontDoor, settings: Settings) -> DPResult:
    """Run one analysis through the shared steps (see the module docstring)."""
    accountant = settings.accountant
    deferred = _DEFERRED.get()  # this door's, from declare(); a door run inside the frame sets its own
    _DEFERRED.set(None)
    dd = DataDependence(settings.strict, getattr(door, "bounds", None))
    dd.hold_warnings()  # errors of the frame and the plan come before any warning
    step = dd.bounds if isinstance(dd.bounds, PrivateBounds) else None
    noise = NoiseSource(settings.random_state)  # validates random_state before any budget is spent
    if step is not None:
        step.check_affordable(accountant, door.options.public_rho())
        step.start(noise.generator, dd.name_frame_steps, door)  # strict refuses the frame's steps first
    with engines.one_call(), charged_if_drawn(step, accountant, door.label):  # files: one fingerprint
        with level_steps_taken() as taken:
            try:
                frame = door.frame(dd)
                plan = door.plan(frame, dd)
            except DPStatsError as err:  # once a step is named, its error says it ("Privacy conventions")
                for step_taken, fix in taken:  # levels read before the error: strict refuses the step first
                    dd.add(step_taken, fix=fix)
                raise dd.refusal(err)  # noqa: B904 (the original's cause is kept, its text is in the new one)
        if deferred is not None and deferred[0] is getattr(door, "data", None):
            for message, category in deferred[1]:
                warnings.warn(message, category, stacklevel=caller_stacklevel())
        dd.release_warnings()
        if step is not None:
            step.add_to(plan)
        charge = Reservation.take(accountant, plan.entries, door.label)  # refused beyond the budget
    with charge.held():  # withdrawn if a file changed before the release is made, else errors say it is spent
        released = charge.made(door.release(frame, plan, noise))  # from now on the charge stands
        result = door.result(frame, plan, released, plan.statement(dd, noise), noise)
        if step is not None:
            _show_bounds(result, step)
        _show_schema(result, getattr(door, "schema", None))
        return attach_diagnostics(result, settings.diagnostics, lambda: door.diagnostics(frame, released))


def check_budget(accountant: Accountant | None, eps: float, delta: float = 0.0) -> None:
    """Refuse, before anything is read, a call the accountant's balance cannot pay (eps = inf, or None for
    a non-private fit, costs nothing)."""
    if accountant is not None and eps is not None:
        accountant.check(eps, 0.0 if math.isinf(eps) else delta)


def _show_bounds(result: DPResult, step: PrivateBounds) -> None:
    """The released bounds on the result, and the call as the user made it."""
    result.private_bounds = step.to_dict()
    eps, delta = step.requested
    ledger = result.privacy.ledger
    result.privacy.eps = eps if math.isclose(eps, math.fsum(e.eps for e in ledger)) else result.privacy.eps
    result.privacy.delta = math.fsum(e.delta for e in ledger)
    for name, value in (("eps", eps), ("delta", delta), ("bounds", "auto")):
        if name in result.call:
            result.call[name] = value
    result.call["bounds_eps"] = step.eps


def _show_schema(result: DPResult, schema: Schema | None) -> None:
    """Declared levels and a non-default ``na_action`` in the result's call."""
    if schema is None:
        return
    if levels := schema.given_levels():
        result.call["levels"] = levels
    if schema.na_action != default_na_action(schema.neighbouring, schema.private):
        result.call["na_action"] = schema.na_action


def n_is_public(neighbouring: str, mf: ModelFrame) -> bool:
    """n is public under replace-one-row unless the schema may drop rows (``na_action="omit"``,
    or a variable without declared bounds): then no message may quote it."""
    return neighbouring == "replace" and not mf.n_data_dependent


NOT_IN_CALL = frozenset(  # random_state is shown when given, as R's call shows every argument given
    {"data", "accountant", "diagnostics", "progress", "levels", "na_action", "bounds_eps"}
)


def call_of(
    public: Callable, given: Mapping[str, Any], *, always: Sequence[str] = ("formula", "eps"), **shown: Any
) -> dict[str, Any]:
    """A result's R-style ``call``: the door's arguments, from its signature's defaults.

    Arguments without a default and those in ``always`` are always shown; the others
    when they differ from the signature's default (R's ``match.call()`` shows what the
    user wrote; the defaults are written once, in the signature).  ``shown`` replaces an
    argument's value by how the call shows it (e.g. a summary of a long vector); a function shows its name.
    ``levels`` and ``na_action`` are added from the schema, the private bounds' share by
    :func:`run`; the data and the run settings but ``random_state`` are not part of a call.

    Examples
    --------
    >>> def dp_demo(formula, data, eps, k=None, *, gamma=0.5, strict=False): ...
    >>> call_of(dp_demo, {"formula": "y ~ .", "data": None, "eps": 1.0, "k": None, "gamma": 0.5,
    ...                   "strict": True})
    {'formula': 'y ~ .', 'eps': 1.0, 'strict': True}
    """
    call = {}
    for name, par in inspect.signature(public).parameters.items():
        if name in NOT_IN_CALL:
            continue
        value = shown.get(name, given[name])
        if callable(value):  # a function as the call shows it: its name (its repr holds a memory address)
            value = getattr(value, "__name__", type(value).__name__)
        if name in always or par.default is par.empty or _differs(value, par.default):
            call[name] = _plain_bounds(value) if name == "bounds" else value
    return call


def _differs(value: Any, default: Any) -> bool:
    if value is default:
        return False
    try:
        return not bool(value == default)
    except (TypeError, ValueError):  # arrays, frames: given, so shown
        return True


def _plain_bounds(bounds):
    if isinstance(bounds, Mapping):
        return dict(bounds)
    if isinstance(bounds, (list, tuple)):
        return list(bounds)
    return bounds


class OptionsDoor:
    """Base of a door that holds its method's options record as ``self.options`` and its result's
    ``call``: what :func:`run` and the door read from them (whether the call runs without noise, the
    bounds, the declared schema, the fields every result opens with)."""

    call: dict

    @property
    def label(self) -> str:
        """The method's public name, from the catalog entry of the door's module: the ledger's label
        and the result's ``method``."""
        return catalog.by_front_door(type(self).__module__).name

    @property
    def nonprivate(self) -> bool:
        """eps = inf: the non-private reference run."""
        return math.isinf(self.options.eps)

    @property
    def bounds(self) -> Any:
        """The declared bounds, or the private-bounds step :func:`run` starts and shows."""
        return self.options.bounds

    @property
    def schema(self) -> Schema | None:
        """The declared public schema (:func:`run` shows its levels and rule for missing values)."""
        return self.options.schema

    def opening(self, n: int, terms: Sequence[str], statement: PrivacyStatement) -> dict[str, Any]:
        """The fields every result opens with: the method (the door's label), its call, n, p and the
        terms, and the privacy statement."""
        return {
            "method": self.label,
            "call": self.call,
            "n": n,
            "p": len(terms),
            "terms": list(terms),
            "privacy": statement,
        }


def declare(
    given: Mapping[str, Any],
    options: Any,
    settings: Settings,
    *,
    statistics: bool = False,
    unbounded_fill: float | None = None,
    fills: Mapping[str, float] | None = None,
    nonprivate: str = "",
    **reading: Any,
) -> tuple[Any, Any]:
    """A door's steps between its checks and :func:`run`, in this order: under ``strict``, refuse
    eps = inf where the door names its ``nonprivate`` fit, refuse a call the accountant cannot pay
    before touching the data, read the data (only the formula's columns),
    turn ``bounds="auto"`` into its private-bounds step, declare the public schema, and leave to
    :func:`run` the warning that eps = inf runs the ``nonprivate`` fit (given once the frame and the
    plan have passed their checks, so that an error comes alone).

    Returns the options record with the eps, delta (where the method has one), bounds and schema
    the release uses, and the data as the door reads it.  ``statistics``: the door can run from
    sufficient statistics (streams, Dask, DuckDB); ``unbounded_fill`` and ``fills``: see :meth:`~dpstats.schema.Schema.declare`;
    ``reading``: how :func:`dpstats.engines.as_data` reads (default: the formula's columns and the declared levels' ones).
    """
    nonprivate_run = bool(nonprivate) and math.isinf(options.eps)
    if nonprivate_run and settings.strict:  # refused before anything else
        raise PrivacyParameterError(
            "strict=True refuses eps = inf (a non-private analysis); give a finite eps."
        )
    has_delta = hasattr(options, "delta")
    delta = options.delta if has_delta else 0.0
    check_budget(settings.accountant, options.eps, delta)
    reading = {"keep": [given["levels"]]} | reading
    data = engines.as_data(given["data"], given["formula"], statistics=statistics, **reading)
    neighbouring = given["neighbouring"]
    bounds, eps, delta = bounds_step(
        options.bounds,
        options.eps,
        delta,
        bounds_eps=given.get("bounds_eps"),
        neighbouring=neighbouring,
        streamed=engines.type_name(data) if engines.is_engine_input(data) else None,
    )
    schema = _declared_schema(
        given, bounds, eps, unbounded_fill=unbounded_fill, fills=fills, response=options.RESPONSE
    )
    engines.refuse_private_n(options.PUBLIC_N, schema, data, given["formula"])  # strict's dropped rows too
    changes = {"eps": eps, "bounds": bounds, "schema": schema} | ({"delta": delta} if has_delta else {})
    # warned by run() once the frame and the plan have passed their checks (a missing column is an error alone)
    notes = [(f"eps = inf: {nonprivate}, NOT private.", NonPrivateWarning)] if nonprivate_run else []
    if not schema.private and given["na_action"] == "fill":  # asked for, but eps = inf names no step: say it
        notes += schema.filled_notes() + schema.unfilled_notes(
            engines.unfilled_variables(data, given["formula"], schema)
        )
    _DEFERRED.set((data, notes) if notes else None)
    return replace(options, **changes), data


# the warnings declare() leaves for run() (eps = inf's), with the data it returned: only the door reading
# that data warns them, so a call refused between the two leaves nothing for another call
_DEFERRED: ContextVar[tuple[Any, list] | None] = ContextVar("dpstats_deferred", default=None)


def _declared_schema(
    given: Mapping[str, Any], bounds: Any, eps: float | None, response: str = "numeric", **fills: Any
) -> Schema:
    """The public schema of a door's call (``fills``: :meth:`~dpstats.schema.Schema.declare`'s
    ``unbounded_fill`` and ``fills``; ``response``: the method's ``RESPONSE``).  eps None or inf: a
    non-private reference run, which names no step of the schema."""
    named = {key: given[key] for key in ("levels", "na_action", "neighbouring", "strict")}
    schema = Schema.declare(bounds=bounds, private=eps is not None and math.isfinite(eps), **named, **fills)
    schema = replace(schema, data_columns=tuple(engines.column_names(given["data"])))  # bounds= may name any
    return with_formula_declarations(
        schema, given.get("formula") or "", response
    )  # factor(x, levels = c(..))


# a front door: front_door hands it back with its signature kept for type checkers
Door = TypeVar("Door", bound=Callable[..., Any])
RUN_SETTINGS = ("random_state", "accountant", "strict", "progress")
PLACEHOLDER = re.compile(r"^    \{([a-z][\w ,-]*?)(?:: ([^{}]*?))?\}\n", re.M)  # {name} or {name: words}


def front_door(door: Door) -> Door:
    """A public front door: its public signature, the shared keyword arguments included
    (:func:`~dpstats.api._parameters.shared_parameters`), and its finished docstring (:func:`door_docstring`)."""
    return door_docstring(shared_parameters(door))


def door_docstring(door: Door) -> Door:
    """Finish a door's docstring (help(), the doctests and the R help pages all read the finished
    ``__doc__``): each line ``{name}`` or ``{name: words}`` (words may go on over indented lines) becomes

    - ``{run settings}``: the entry of the run settings the door takes (``random_state``, ``accountant``,
      ``strict``, ``progress``) and, unless the door writes its own, the Returns section, named from
      the return annotation;
    - any other name: the shared entry :data:`dpstats.api._parameters.PARAMETERS` holds under it, its
      ``{}`` replaced by the words; lines the door indents under it continue the entry.

    A name with no shared entry, or words given to an entry without ``{}`` (or none to one with it),
    raises at import: a typo cannot ship.
    """
    if not door.__doc__:  # None under python -OO
        return door
    signature = inspect.signature(door)
    settings = ", ".join(name for name in RUN_SETTINGS if name in signature.parameters)
    returns = signature.return_annotation
    returns = returns if isinstance(returns, str) else returns.__name__
    run_settings = f'    {settings}\n        See docs/architecture.md, "Privacy conventions".\n'
    if "\n    Returns\n" not in door.__doc__:
        run_settings += f"\n    Returns\n    -------\n    {returns}\n"
    door.__doc__ = PLACEHOLDER.sub(
        lambda m: run_settings if m[1] == "run settings" else _shared(*m.groups()), door.__doc__
    )
    return door


def _shared(name: str, words: str | None) -> str:
    text = PARAMETERS.get(name, "")
    if not text or ("{}" in text) != (words is not None):
        raise ValueError(f"door_docstring: no shared entry {{{name}}} taking {'words' if words else 'none'}")
    if words is None:
        return text
    head, body = text.split("\n", 1)
    body = textwrap.fill(" ".join(body.replace("{}", words).split()), 92, break_on_hyphens=False)
    return f"{head}\n{textwrap.indent(body, 8 * ' ')}\n"


@dataclass
class DataDoor(OptionsDoor):
    """A door over one data set: its method's options record, the data as the door reads it, the
    result's call, and whether progress bars are shown (None: on long runs)."""

    options: Any
    data: Any
    call: dict
    progress: bool | None = False

    def one_pass(self, **how: Any) -> tuple[Any, Any]:
        """The model frame and sufficient statistics of the door's formula on its data, in one pass of the
        engine (:func:`dpstats.engines.sufficient_statistics`, ``how`` its options), with the door's
        progress setting and declared schema."""
        how = {"progress": self.progress, "schema": self.schema} | how
        return engines.sufficient_statistics(self.options.formula, self.data, **how)
