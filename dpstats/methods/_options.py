"""The options record every method shares the shape of: frozen, checked once, built from the public call.

A front door's signature is the one place its defaults are written (users read it in
``help()`` and the R help).  The door passes its arguments, as given, to its method's
record (:meth:`Options.from_given`); the record keeps the fields the method needs, each
checked once by the record's ``check`` (a classmethod each method writes), and is then
handed down unchanged: the door's frame, the method's ``plan(options, ...)`` and its
``release``.  The R-style ``call`` of a result is derived from the same arguments and
the signature's defaults (:func:`dpstats.api._common.call_of`), never written by hand.

The shared part of every record is the declared public schema (:class:`~dpstats.schema.Schema`):
bounds, levels and the rule for missing values, declared before anything is read.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo(Options):
...     eps: float
...     k: int | None
>>> Demo.from_given({"eps": 1.0, "k": 3, "data": None}, k=4)
Demo(eps=1.0, k=4)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
import math
from typing import Any, ClassVar, TypeVar

from ..privacy.calibration import gaussian_rho_from_eps_delta
from ..schema import PublicN

T = TypeVar("T", bound="Options")


@dataclass(frozen=True)
class Options:
    """Base of the methods' options records (frozen dataclasses; fields without defaults)."""

    #: why the method's release needs the public number of rows read, if it does: the front door's
    #: ``declare`` step then refuses ``na_action="omit"`` on a private call (:class:`~dpstats.schema.PublicN`)
    PUBLIC_N: ClassVar[PublicN | None] = None
    #: the method's plan, at a finite eps and delta > 0, is one exact Gaussian conversion of the (eps, delta)
    #: it is given (:func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`), so its ρ is known
    #: before a draw (at delta = 0 a plan may be Laplace, dp_lm's: no price is set then)
    GAUSSIAN_PLAN: ClassVar[bool] = False
    #: how the method reads its response (:func:`~dpstats.formula.with_formula_declarations`): "factor" keeps
    #: its type its own under strict=True, where every other variable not declared categorical is numeric
    RESPONSE: ClassVar[str] = "numeric"

    def public_rho(self) -> float:
        """A lower bound, from public inputs, on the ρ the method's plan charges (zCDP accounting), for
        refusing a call before the private bounds draw from the rows; 0 unless ``GAUSSIAN_PLAN`` (and a
        finite eps with delta > 0: eps None or inf is the non-private route)."""
        eps = getattr(self, "eps", None)
        if not self.GAUSSIAN_PLAN or eps is None or not math.isfinite(eps) or not self.delta > 0:
            return 0.0
        return gaussian_rho_from_eps_delta(eps, self.delta) * (1.0 - 1e-9)

    @classmethod
    def from_given(cls: type[T], given: Mapping[str, Any], **checked: Any) -> T:
        """The record from the door's arguments: a field takes its ``checked`` value when
        there is one, else the argument of the same name as given."""
        values = {**given, **checked}
        return cls(
            **{f.name: values[f.name] if f.name in values else _absent(cls, f.name) for f in fields(cls)}
        )

    @classmethod
    def partial(cls: type[T], **values: Any) -> T:
        """A record with only some fields set (the rest None): for a plan made outside a call,
        from public inputs alone (the planner, audits, tests)."""
        return cls(**{f.name: values.get(f.name) for f in fields(cls)})


def _absent(cls: type, name: str) -> None:
    """Only the schema may be absent from the arguments: the door declares it after the checks."""
    if name != "schema":
        raise TypeError(f"{cls.__name__}.from_given: no argument {name!r}")
    return None
