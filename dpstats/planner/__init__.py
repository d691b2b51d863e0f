"""Know before you spend: predict what a private analysis will deliver, from public inputs only.

:func:`plan` takes the public inputs of an analysis (n, p, k, the eps/delta
grid, how bounds will be declared) and a stated model of the data
(``assume=``), and simulates the method's outcomes at the level of its
sufficient statistics (:mod:`dpstats.simulate`): exact-recovery probability,
precision and recall for selection, FDR and power for the knockoff filter, with
Monte Carlo standard errors.  It reads no data and charges no budget, so it
can be run as often as wanted before the one analysis that spends.

It answers "what will I get at this eps?" (the table) and, with ``target=``,
"what eps (or n) do I need?" (a bisection on log eps, or log n, from the grid's
bracket or a bracketing search beyond it, naming the smallest simulated value
that reaches the target with one-sided 95% confidence, :func:`core.solve`); it warns with :class:`~dpstats.errors.ChanceWarning` when a
planned eps cannot beat chance.  The planner lives above the front doors
(``docs/architecture.md``, "The planner") because it uses their methods'
plans and the simulators, never data.

``bounds="auto"`` (private bounds, spending part of eps) is planned through
:data:`AUTO_BOUNDS`: a method's private-bounds predictor registers itself
there and returns the eps left for the analysis and the model as the
private bounds will see it; until one is registered, ``"auto"`` is refused.
"""

from __future__ import annotations

import copy
import importlib
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import catalog
from ..errors import ChanceWarning, DataError, PrivacyParameterError, caller_stacklevel
from ..privacy.session import SessionPlan
from ..results.plan import PlanResult
from ..validation import check_eps, check_fraction
from . import core
from .core import AUTO_BOUNDS
from .core import BOUNDS as BOUNDS
from .sis import auto_bounds_predictor
from .models import (
    FanLv,
    FelpModel,
    GLMModel,
    KnockoffModel,
    MixtureModel,
    glm_model,
    selection_model,
)

#: the front doors the planner predicts: those with a planner module in the catalog (dpstats/catalog.py).
METHODS = catalog.planner_names()

#: method -> predictor(n=, p=, eps=, model=) -> (eps left for the analysis, the model as the analysis sees it
#: under the private bounds (e.g. a wider bound_sds), a note for the plan).  Filled by the private-bounds
#: feature (issue 19, "Private bounds"); a method missing here cannot plan bounds="auto" yet.  The dict is
#: ``core.AUTO_BOUNDS``, where each method's ``setup`` looks its predictor up.
AUTO_BOUNDS["dp_sis"] = auto_bounds_predictor

__all__ = [
    "plan",
    "assume_from_options",
    "METHODS",
    "AUTO_BOUNDS",
    "FanLv",
    "FelpModel",
    "GLMModel",
    "KnockoffModel",
    "MixtureModel",
]


def plan(
    method: str,
    *,
    n: int | Sequence[int],
    p: int,
    eps: float | Sequence[float] | None = None,
    delta: float | None = None,
    k: int | None = None,
    bounds: str | None = "declared",
    assume: Any = None,
    target: float | dict | None = None,
    trials: int = 200,
    random_state: int | None = None,
    variant: str | Sequence[str] | None = None,
    fdr: float = 0.1,
    topk: str = "canonical_lipschitz",
    gamma: float = 0.5,
    search: tuple[float, float] | None = None,
    lam: float | None = None,
    parties: int = 2,
    n_estimators: int | None = None,
    session: Any = None,
    analyses: int = 1,
    family: str | None = None,
) -> PlanResult:
    """Predict a private analysis's accuracy over an eps (and n) grid, before any data is read.

    Parameters
    ----------
    method : {"dp_sis", "dp_two_stage", "dp_knockoff", "dp_gmm", "dp_felp", "vertical_glm", "dp_lm", "dp_glm"}
        The front door to plan.
    n : int or sequence of int
        Public number of rows (a grid to plan over several).
    p : int
        Number of candidate columns (d for dp_sis).
    eps : float or sequence of float
        The eps grid (positive, finite); or leave it out and give ``session``.
    delta : float, optional
        dp_knockoff's delta, default 2p/n (the knockoff paper's experiment), stated in the output;
        dp_gmm's, vertical_glm's and dp_glm's delta (required); dp_lm's (default 0, the Laplace mechanism).
    k : int, optional
        dp_sis, dp_two_stage: number selected, 1 <= k < p; default the front door's ⌊log p⌋.
        dp_gmm: number of components (default the model's).  dp_felp: the number of features
        selected (the front door's ``select``, default 10% of p).
    bounds : {"declared", "midpoint", None, "auto"}
        How the front door will be given bounds.  ``"declared"`` (default): declared bounds at
        mean ± ``bound_sds`` sd of each variable as the model states (dp_sis's centred score);
        ``"midpoint"``: declared, the paper's uncentred score; ``None``: no bounds (the paper's
        max-abs scaling, a data-dependent step of the front door); ``"auto"``: private bounds, planned
        through :data:`AUTO_BOUNDS`.  dp_knockoff: ``"declared"`` uses the row bound B =
        the (1 − 0.001/n) quantile of √χ²_p; a number is a declared B.
    assume : model, optional
        The stated model of the data, printed with every number.  dp_sis, dp_two_stage:
        :class:`dpstats.simulate.Assume` or :class:`FanLv` (default: the DP-SIS paper's design).
        dp_knockoff: :class:`KnockoffModel` or an uncorrelated Assume (default: the paper's Figure 1).
        dp_gmm: :class:`MixtureModel` or a dict of its fields (default: k components 8 sd apart).
        dp_felp: :class:`FelpModel` or a dict of its fields (default: 10 planted features, class
        means 1.5 apart, 2 classes).  vertical_glm, dp_lm: an Assume (default: 2 signals of 0.5).
        dp_glm: :class:`GLMModel` or a dict of its fields (default: 2 signals, the family's strength
        and intercept, independent features, bounds at ± 3 sd, Poisson counts bounded by 20), or an
        Assume (its signals, strength, correlation and bound_sds).
    target : float or dict, optional
        ``{"power": 0.8}`` (a measure and the level it must reach; ``fdr`` must fall to it) or a
        number for the method's main measure (dp_sis precision, dp_knockoff power, dp_glm
        width_ratio, e.g. 1.5: intervals at most 1.5 times as wide as glm's).  Solved along eps
        when the eps grid has several values, else along n, by bisection on the log scale to 2%:
        the value named was simulated (with ``trials`` data sets) and reaches the target there with
        one-sided 95% confidence; the plan prints the estimate and its s.e. at that value.
    trials : int
        Monte Carlo trials per grid point (at least 2).
    random_state : int, optional
        Seed of the simulation (the plan is a simulation: no privacy is at stake).  Default: fresh
        entropy, recorded in the result for reproduction.
    variant : str or sequence of str, optional
        dp_knockoff's Methods to plan, "I", "II" or both (default both); dp_felp's variants,
        "strict", "paper" or both (default "strict", the one whose guarantee holds).
    fdr : float in (0, 1)
        dp_knockoff's target FDR q (the front door's default 0.1).
    topk, gamma
        dp_sis's selector and canonical Lipschitz split, as at the front door.
    lam : float, optional
        dp_two_stage's block lasso penalty and vertical_glm's ridge penalty (default 0.1, the front
        doors'); dp_felp's λ (default 1.0, the front door's).
    n_estimators : int, optional
        dp_felp's number of learners (default, as the front door's: one per 20 rows in the strict
        variant, 20 in the paper variant).
    parties : int
        vertical_glm: number of parties, holding the columns in order (default 2).
    search : (low, high), optional
        The range the target search may explore; default eps in [min/256, max·256], n in [3, max·256].

    session : dpstats.SessionPlan or (eps, delta), optional
        A total budget shared by ``analyses`` fits of this method declared in advance
        (:class:`dpstats.SessionPlan`, composed by PLD): each fit is planned at the (eps, delta) the
        session gives it (:meth:`~dpstats.SessionPlan.gaussian_fits`), stated in the notes.  For the
        methods whose every step is Gaussian, which a session's Gaussian slots take: dp_lm (Gaussian
        route), vertical_glm, dp_glm.  The session passed is not changed (the planner declares on a copy).
    analyses : int
        With ``session``: how many fits of this method share it (default 1).
    family : {"binomial", "poisson"}, optional
        dp_glm's family (default "binomial"), as at the front door.  The plan predicts dp_glm's
        interval width relative to glm's, coverage, the share of fits whose intervals are withheld,
        and which (n, eps) the front door refuses before spending (``refused``).

    Returns
    -------
    PlanResult
        ``print`` it; ``tidy()`` has one row per method × n × eps × measure.

    Examples
    --------
    >>> import dpstats as dp
    >>> pl = dp.plan("dp_sis", n=200, p=200, eps=[20, 200], k=4, trials=20, random_state=0,
    ...              assume=dp.simulate.Assume(signals=4, strength=1.0))
    >>> sorted(pl.tidy().measure.unique())
    ['exact_recovery', 'precision', 'recall']
    >>> "no data was read; no budget was charged" in str(pl)
    True
    """
    method = _check_method(method)
    eps, delta, session_note = session_budget(method, session, analyses, eps, delta)
    ns, eps_grid = _check_n(n, method, p), _check_eps_grid(eps)
    trials = _check_trials(trials)
    if bounds == "auto":  # every method: refused unless its private-bounds predictor is registered
        _check_bounds(bounds, method, {})
    seed = _seed(random_state)
    options = {"k": k, "bounds": bounds, "assume": assume, "delta": delta, "variant": variant, "fdr": fdr}
    options.update(
        {"topk": topk, "gamma": gamma, "lam": lam, "parties": parties, "n_estimators": n_estimators}
    )
    options["family"] = family
    sims, model, settings = _simulators(method, p, options)
    measure, level = _check_target(target, sims[0])
    grid = core.Grid(ns=ns, eps=eps_grid, trials=trials, seed=seed)
    table = core.simulate_grid(sims, grid)
    flags = core.chance_flags(sims, table)
    solutions = []
    if measure is not None:
        n_low = (_smallest_n(method, p) or (2 * (settings.get("n_estimators") or 1) + 1,))[0]
        solutions = _solve_all(sims, (measure, level), grid, table, search, n_low)
    result = PlanResult(
        method=method,
        call=_call(method, ns, p, eps_grid, settings, target, trials, seed),
        p=p,
        ns=ns,
        eps=eps_grid,
        assumption=model.describe(),
        model=model.to_dict(),
        table=table,
        measures=list(sims[0].measures),
        primary=sims[0].primary,
        chance={s.method: {m: vars(c) for m, c in s.chance.items()} for s in sims},
        flags=flags,
        solutions=solutions,
        ledger={s.method: s.ledger(ns[0]) for s in sims},
        notes=list(dict.fromkeys(note for s in sims for note in s.notes)),
        session=session_note[0] if session_note else None,
        settings=settings,
        seed=seed,
        trials=trials,
    )
    if session_note:
        result.call.update(session=list(_session_of(session).totals()), analyses=analyses)
    if len(flags):
        warnings.warn(result.chance_text(), ChanceWarning, stacklevel=caller_stacklevel())
    return result


def session_budget(
    method: str, session: Any, analyses: int, eps: Any, delta: float | None
) -> tuple[Any, float | None, list[str]]:
    """``(eps, delta, notes)`` to plan at: as given, or one fit's share of a declared session.

    Examples
    --------
    >>> eps, delta, notes = session_budget("dp_lm", (3.2, 1e-5), 10, None, None)
    >>> round(eps, 3), round(delta, 12)
    (1.018, 1e-06)
    """
    if session is None:
        if eps is None:
            raise PrivacyParameterError("give eps (a number or a grid), or a session budget with session=.")
        return eps, delta, []
    if eps is not None:
        raise PrivacyParameterError(
            "give eps or session=, not both: with a session each fit's eps is the session's share."
        )
    calibration = session_calibration(method)
    if calibration is None:
        gaussian = [m for m in METHODS if session_calibration(m)]
        why = getattr(importlib.import_module(catalog.get(method).planner), "NOT_IN_A_GAUSSIAN_SLOT", None)
        raise PrivacyParameterError(
            f"session= plans fits whose every step is Gaussian ({', '.join(gaussian)}), as a session's "
            f"Gaussian slots take them; {method} "
            + (
                f"is not all Gaussian ({why}): a Gaussian slot does not take it. Plan it at an eps and delta "
                "of its own, which a session declares as one (eps, delta) step."
                if why
                else "releases by pure-DP selection, whose composition PLD tightens little: plan it at eps = "
                "the session's eps / analyses."
            )
        )
    if isinstance(analyses, bool) or not isinstance(analyses, numbers.Integral) or analyses < 1:
        raise PrivacyParameterError(f"analyses must be a whole number >= 1, got {analyses!r}.")
    plan = copy.deepcopy(session) if isinstance(session, SessionPlan) else _session_of(session)
    total_eps, total_delta = plan.eps, plan.delta
    slot = plan.gaussian_fits(int(analyses), calibration=calibration)[0]
    note = (
        f"Planned as one of {analyses} {method} fits declared in a session of (eps = {total_eps:g}, "
        f"delta = {total_delta:g}), composed by PLD (dpstats.SessionPlan): each fit runs at "
        f"eps = {slot.eps:.4g}, delta = {slot.delta:.3g} (basic composition would allow eps = "
        f"{total_eps / analyses:.4g} each)."
    )
    return slot.eps, slot.delta, [note]


def session_calibration(method: str) -> str | None:
    """How the method turns (eps, delta) into Gaussian noise (:func:`dpstats.privacy.session.per_fit_budget`):
    its planner module's ``SESSION_CALIBRATION``, or None for a method that does not release by Gaussian noise."""
    return getattr(importlib.import_module(catalog.get(method).planner), "SESSION_CALIBRATION", None)


def _session_of(session: Any) -> SessionPlan:
    if isinstance(session, SessionPlan):
        return session
    if isinstance(session, Mapping):
        return SessionPlan(eps=float(session["eps"]), delta=float(session["delta"]))
    try:
        eps, delta = session
    except (TypeError, ValueError):
        raise PrivacyParameterError(
            f"session must be a dpstats.SessionPlan or (eps, delta), got {type(session).__name__}."
        ) from None
    return SessionPlan(eps=float(eps), delta=float(delta))


def assume_from_options(method: str, **options: float | None) -> Any:
    """The model from flat options (the command line, R): None leaves the method's paper default.

    dp_sis: ``signals`` alone gives :class:`FanLv` (the paper's design with that many
    signals); with ``strength`` an :class:`~dpstats.simulate.Assume` (``noise``,
    ``correlation`` optional).  dp_knockoff: :class:`KnockoffModel` from ``signals``,
    ``amplitude`` (or ``strength``) and ``noise``.  dp_felp: :class:`FelpModel` from
    ``signals`` and ``strength`` (or ``amplitude``) as the class-mean ``shift``.  dp_glm:
    :class:`GLMModel` from ``signals``, ``strength`` (or ``amplitude``) and ``correlation``.

    Examples
    --------
    >>> assume_from_options("dp_sis", signals=8, strength=None).describe()[:26]
    "the DP-SIS paper's design "
    """
    given = {k: v for k, v in options.items() if v is not None}
    if not given:
        return None
    if method in ("dp_felp", "felp"):
        shift = given.pop("strength", given.pop("amplitude", None))
        return FelpModel(
            **{k: v for k, v in given.items() if k == "signals"}, **({"shift": shift} if shift else {})
        )
    if method in ("dp_glm", "glm"):
        if "amplitude" in given:
            given.setdefault("strength", given.pop("amplitude"))
        return glm_model(given)
    if method in ("dp_knockoff", "knockoff"):
        if "strength" in given:
            given.setdefault("amplitude", given.pop("strength"))
        given.pop("correlation", None)
        return KnockoffModel(**given)
    if "amplitude" in given:
        given.setdefault("strength", given.pop("amplitude"))
    if "strength" not in given:
        return FanLv(**{k: v for k, v in given.items() if k == "signals"})
    return selection_model(given)


# ----------------------------------------------------------------------------- checks


def _check_method(method: Any) -> str:
    """The public name of a planned method, also from its command-line name (``"sis"``)."""
    name = catalog.cli_names().get(method, method) if isinstance(method, str) else method
    if name not in METHODS:
        raise PrivacyParameterError(f"method must be one of {list(METHODS)}, got {method!r}.")
    return name


def _smallest_n(method: str, p: int) -> tuple[int, str] | None:
    """The fewest rows a method can run on with p columns and why, where it has such a limit: its
    planner module's ``smallest_n(p)``."""
    limit = getattr(importlib.import_module(catalog.get(method).planner), "smallest_n", None)
    return None if limit is None else limit(p)


def _check_n(n: Any, method: str, p: Any) -> list[int]:
    p = core.whole(p, "p", 2)
    low, why = _smallest_n(method, p) or (3, "")
    try:
        values = [n] if isinstance(n, numbers.Number) else None if isinstance(n, (str, bytes)) else list(n)
    except TypeError:  # None, or another object that is not a sequence
        values = None
    if not values:  # the argument's type, wrong whatever the design
        raise PrivacyParameterError("n must be a whole number or a non-empty sequence of them.")
    try:
        return sorted({core.whole(v, "n", low) for v in values})
    except (DataError, PrivacyParameterError) as err:  # below the design's smallest n, or not a whole number
        raise type(err)(f"{err}{why}") from None


def _check_eps_grid(eps: Any) -> list[float]:
    values = [eps] if isinstance(eps, numbers.Number) else list(eps)
    if not values:
        raise PrivacyParameterError("eps must be a positive number or a non-empty sequence of them.")
    return sorted({check_eps(v, name="each eps of the grid") for v in values})


def _check_trials(trials: Any) -> int:
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 2:
        raise PrivacyParameterError(f"trials must be a whole number >= 2, got {trials!r}.")
    return int(trials)


def _seed(random_state: Any) -> int:
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise PrivacyParameterError(
            f"random_state must be None or a whole number >= 0, got {random_state!r}."
        )
    return int(random_state)


def _check_target(target: Any, sim: core.Simulator) -> tuple[str | None, float | None]:
    if target is None:
        return None, None
    if isinstance(target, dict) and len(target) == 1:
        ((measure, level),) = target.items()
    elif isinstance(target, numbers.Real) and not isinstance(target, bool):
        measure, level = sim.primary, target
    else:
        raise PrivacyParameterError(
            f"target must be a number or a dict such as {{'{sim.primary}': 0.8}}, got {target!r}."
        )
    if measure not in sim.measures:
        raise PrivacyParameterError(
            f"target: unknown measure {measure!r}; this method predicts {list(sim.measures)}."
        )
    if measure in sim.ratios:
        if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < math.inf:
            raise PrivacyParameterError(f"target {measure} must be a positive finite ratio, got {level!r}.")
        return measure, float(level)
    return measure, check_fraction(level, f"target {measure}", 0.0, 1.0, low_open=True, high_open=False)


# ----------------------------------------------------------------------------- simulators


# ----------------------------------------------------------------------------- simulators


def _simulators(method: str, p: int, options: dict):
    """The method's planner module (named in the catalog) checks its options and builds its simulators."""
    return importlib.import_module(catalog.get(method).planner).setup(p, options)


def _check_bounds(bounds: Any, method: str, allowed: dict) -> None:
    core.check_bounds(bounds, method, allowed)


# ----------------------------------------------------------------------------- targets


def _solve_all(sims, target: tuple[str, float], grid: core.Grid, table, search, n_low: int):
    """Solve along eps when the eps grid has several values (or n has one), else along n."""
    axis = "eps" if len(grid.eps) > 1 or len(grid.ns) == 1 else "n"
    values, others = (grid.eps, grid.ns) if axis == "eps" else (grid.ns, grid.eps)
    if search is None:
        search = (min(values) / 256, max(values) * 256) if axis == "eps" else (n_low, max(values) * 256)
    measure, level = target
    return [
        core.solve(sim, measure, level, axis=axis, fixed=fixed, table=table, grid=grid, search=tuple(search))
        for sim in sims
        for fixed in others
    ]


def _call(method, ns, p, eps_grid, settings, target, trials, seed) -> dict:
    call = {"method": method, "n": ns if len(ns) > 1 else ns[0], "p": p, "eps": eps_grid}
    call.update({k: v for k, v in settings.items() if not k.startswith("_")})
    if target is not None:
        call["target"] = target
    call.update({"trials": trials, "random_state": seed})
    return call
