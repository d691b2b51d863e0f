"""The parameter entries the front doors share, written once (scipy's ``doccer`` pattern): a door's
line ``{name}`` becomes the entry under ``{name}`` below, ``{name: words}`` the entry with the door's
words in place of its ``{}`` (:func:`dpstats.api._common.door_docstring`)."""

from __future__ import annotations

import re

from ..schema import SCHEMA_PARAMETERS

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
        With ``bounds="auto"``: the eps spent on the private bounds (default 10% of ``eps``),
        and the same share of ``delta``; the rest goes to {}.
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
"""

#: name -> numpydoc entry (``{}``: the door's argument goes there)
PARAMETERS = dict(re.findall(r"^\{(.+)\}\n((?:    .*\n)+)", SHARED, re.M))
PARAMETERS["schema parameters"] = SCHEMA_PARAMETERS  # levels and na_action, kept with the schema
