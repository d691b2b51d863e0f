"""The parameter entries the front doors share, written once (scipy's ``doccer`` pattern): a door's
line ``{name}`` becomes the entry under ``{name}`` below, ``{name: words}`` the entry with the door's
words in place of its ``{}`` (:func:`dpstats.api._common.door_docstring`; ``{examples}``: the Examples
heading and the import most examples open with); and the keyword arguments
every front door takes, declared once (:class:`Shared`, :func:`shared_parameters`)."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from ..schema import SCHEMA_PARAMETERS, bounds_read

if TYPE_CHECKING:
    from ..privacy.accountant import Accountant
    from ..privacy.randomness import RandomState

SHARED = """\
{formula}
    formula : str
        R-style formula with a response, e.g. ``"y ~ ."`` or ``"y ~ x1 + x2"``.
{one-sided formula}
    formula : str
        One-sided formula (no response): ``"~ ."`` (all columns) or ``"~ x1 + x2"``.
{data}
    data : pandas.DataFrame
        The rows, in memory.
{data, streamed}
    data : pandas.DataFrame, dpstats.engines.stream(...), Dask DataFrame or on_dask(...)
        In memory, or streamed (``dpstats.engines.stream("file.parquet")``) or on Dask: {}.
{eps}
    eps : float
        Privacy budget of the whole call, a positive finite number.
{eps or inf}
    eps : float
        Privacy budget of the whole call, a positive number; ``math.inf`` runs {} (NOT private:
        warned with :class:`~dpstats.errors.NonPrivateWarning`, refused under ``strict``).
{eps, delta}
    eps, delta : float
        Privacy budget of the whole call; delta must be > 0, e.g. 1e-6 (Gaussian noise, accounted in
        zCDP and converted to (eps, delta) once: {}).
{k terms}
    k : int, optional
        Number of terms to select; default ⌊log d⌋ (at least 1); 1 <= k < d.
{bounds_eps}
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the private bounds (default 10% of ``eps``);
        the rest goes to {}.
{bounds_eps and delta}
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the private bounds (default 10% of ``eps``), and
        the same share of ``delta`` when they use delta (zCDP); the rest goes to {}.
{conf_level}
    conf_level : float
        Level of {} intervals.
{neighbouring}
    neighbouring : {"replace", "add_remove"}
        The neighbouring relation of the guarantee: replacing one row (default) or adding or
        removing one (docs/architecture.md, "Privacy conventions").
{neighbouring, replace only}
    neighbouring : {"replace"}
        Replacing one row only: {}.
{truth}
    truth : list of str, optional
        Simulation truth ({}): adds non-private diagnostics; ``truth=`` implies
        ``diagnostics=True``.
{diagnostics}
    diagnostics : bool
        Attach non-private diagnostics ({}).  Off by default: they are not private and no
        output shows them unless asked.
{oc_trials}
    oc_trials : int
        Trials of the ``assume=`` simulation; 0 leaves out the operating characteristics
        altogether.
{examples}
    Examples
    --------
    >>> import dpstats as dp
"""

#: name -> numpydoc entry (``{}``: the door's argument goes there)
PARAMETERS = dict(re.findall(r"^\{(.+)\}\n((?:    .*\n)+)", SHARED, re.M))
PARAMETERS["schema parameters"] = SCHEMA_PARAMETERS  # levels and na_action, kept with the schema


class Shared(TypedDict, total=False):
    """The keyword arguments every front door takes, with :data:`SHARED_DEFAULTS`: the public
    schema's (``neighbouring``, ``levels``, ``na_action``), the diagnostics switch and the run settings.
    A door writes ``**shared: Unpack[Shared]`` (type checkers read the names from here)."""

    neighbouring: str
    levels: dict | None
    na_action: str | None
    diagnostics: bool
    random_state: RandomState
    accountant: Accountant | None
    strict: bool


SHARED_DEFAULTS = dict(neighbouring="replace", levels=None, na_action=None, diagnostics=False)
SHARED_DEFAULTS |= dict(random_state=None, accountant=None, strict=False)
# the order of the keyword arguments every signature ends with (a door's own among them keep their place)
TAIL = ("neighbouring", "levels", "na_action", "truth", "assume", "oc_trials", "diagnostics", "random_state")
TAIL += ("accountant", "strict", "progress")
Door = TypeVar("Door", bound=Callable[..., Any])


def shared_parameters(door: Door) -> Door:
    """A front door whose public signature (help(), ``inspect.signature``, the R help pages) is its
    own arguments followed by :class:`Shared`'s, in :data:`TAIL`'s order; a call is bound to it (an
    unknown or missing argument raises Python's TypeError) and reaches the door by keyword."""
    own = [p for p in inspect.signature(door).parameters.values() if p.kind is not p.VAR_KEYWORD]
    keyword = inspect.Parameter.KEYWORD_ONLY
    shared = [
        inspect.Parameter(name, keyword, default=SHARED_DEFAULTS[name], annotation=hint.__forward_arg__)
        for name, hint in Shared.__annotations__.items()
    ]
    tail = sorted([p for p in own if p.name in TAIL] + shared, key=lambda p: TAIL.index(p.name))
    public = inspect.signature(door).replace(parameters=[p for p in own if p.name not in TAIL] + tail)

    @functools.wraps(door)
    def front_door(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = public.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{door.__name__}() {exc}") from None
        bound.apply_defaults()
        return door(**bounds_read(bound.arguments))  # dates in bounds= as numbers (dpstats.temporal)

    front_door.__signature__ = public  # type: ignore[attr-defined]
    return front_door  # type: ignore[return-value]
