"""Front door of GLMs on vertically partitioned data (privreg).

``vertical_glm`` simulates the parties in one process (for analysts and
tests); :class:`dpstats.vertical.Party` runs the same protocol with one party
per process over authenticated, encrypted TCP.  Both use the plan and the
release of :mod:`dpstats.methods.privreg`; this door validates, builds the
frame and hands them to the shared skeleton (``docs/architecture.md``, "One
call, step by step").

Design (stated, as privreg): the outcome y is held by the first party (the
leader, which also holds the intercept) and shared with every party; the
covariate columns never leave their party; only linear predictors X_kβ_k
(exact, or clipped and noised in DP mode) travel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Unpack

import numpy as np

from ..engines import Data, InMemoryData
from ..privacy.bounds import Bounds, declared_bounds
from ..errors import DataError
from ..formula import ModelFrame, missing_counts
from ..methods import privreg as m
from ..methods._aliased import GLM_TOL, estimable_columns, refuse_aliased
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..results.vertical_glm import VerticalGLMResult
from .._progress import progress_bar
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run


@front_door
def vertical_glm(
    formula: str,
    data: Data | Sequence[InMemoryData],
    parties: Sequence[Sequence[str]] | Mapping[str, Sequence[str]],
    family: str = "gaussian",
    *,
    row_id: str | None = None,
    penalty: str | None = None,
    lam: float = 0.0,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    se: str = "exact",
    conf_level: float = 0.95,
    eps: float | None = None,
    delta: float | None = None,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    rounds: int = 10,
    eta_clip: float = 4.0,
    coef_share: float = 0.1,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> VerticalGLMResult:
    """Fit a GLM whose columns are held by different parties, by block coordinate descent.

    Each party k fits its own coefficients β_k with the other parties' linear predictors as an offset
    and shares only its linear predictor (van Kesteren, "Private Regression using Block Coordinate
    Descent"; R package privreg), on its columns centred (at their means; in DP mode at their declared
    bounds' midpoints), sweeping until a sweep's relative change < ``tol``.  Without ``eps`` the fit
    equals the pooled GLM fit and gives no formal privacy (the linear predictors are revealed every
    sweep; the result says so).  With ``eps``/``delta`` every shared linear predictor and the final
    coefficients get Gaussian noise, accounted by zCDP composition over a fixed number of ``rounds``.

    Parameters
    ----------
    {formula}
        Every term's variables must belong to a single party.
    data : DataFrame or list of DataFrame
        One frame with all columns, or one frame per party (aligned with ``parties``), whose rows are
        matched by ``row_id`` (checked by a hash of the row ids, never the data).  Streamed or Dask data
        (:mod:`dpstats.engines`) are accepted for ``family="gaussian"`` without penalty or eps: the
        parties are then simulated from the pooled sufficient statistics XᵀX, Xᵀy, yᵀy (one pass; not
        the networked protocol, as the result states).
    parties : list of lists of column names, or dict name -> list
        Which data columns each party holds.  The first party is the leader:
        it holds y (shared with all parties, as in privreg) and the intercept.
    family : {"gaussian", "binomial", "poisson"}
        Canonical links (identity, logit, log).
    row_id : str, optional
        With a list of frames: the id column (default: each frame's index).
    penalty : {None, "ridge", "lasso"}, lam : float
        Objective (1/2n)·deviance + lam·(½‖β‖² or ‖β‖₁), intercept unpenalized; in DP mode the
        intercept is penalized too (the sensitivities need lam-strong convexity in every coefficient).
    tol, max_iter : float, int
        Stop when a sweep moved the linear predictor η by less than tol of its size in the Fisher
        metric, ‖Δη‖_W/(‖η‖_W + 0.1·√φ) < tol (W the IRLS weights, φ the dispersion), or at max_iter.
    se : {"exact", "history", "conditional", "pooled", "none"}
        Standard errors (see :mod:`dpstats.methods.privreg`): "exact" shares each party's column-space
        basis after convergence (equal to the pooled Fisher-information SEs; discloses the column
        spaces); "history" uses only the offsets received during the sweeps (privreg; exact when their
        span reaches p_{-k}); "conditional" treats the other blocks as fixed; "pooled" uses all columns
        at once (simulation reference only).
    {conf_level: the Wald}
    eps, delta : float, optional
        ``None`` or ``inf``: the exact (non-private) protocol.  Otherwise DP mode (binomial or gaussian
        family with ``penalty="ridge"``, ``lam > 0``; poisson is refused: its log-link gradient is
        unbounded): the budget for all (Gaussian, calibrated exactly) releases, protecting covariates given y.  Sensitivities:
        :func:`dpstats.methods.privreg.binomial_ridge_sensitivities` and
        :func:`dpstats.methods.privreg.gaussian_ridge_sensitivities`.  As eps grows the release tends
        to the non-private fit of the same objective; the noise on the shared predictors stays large, and
        for the binomial family it biases the slopes away from zero (print shows the factor, a
        ChanceWarning is raised above 10 %).
    bounds : (lo, hi) or dict
        Public covariate bounds (DP mode; interactions: the product of their parts' bounds): values are
        clipped to them.  Gaussian DP mode also needs bounds on the response (a pair applies to y too; a dict
        needs the response's name), and y is clipped to them.  ``"auto"`` (or a :class:`dpstats.AutoBounds`):
        these bounds are released privately first (docs/architecture.md, "Private bounds").
    {bounds_eps and delta: the fit}
    rounds : int
        DP mode: fixed number of sweeps (no data-dependent stopping).
    eta_clip : float
        DP mode: released linear predictors are clipped to [−eta_clip, eta_clip].
    coef_share : float in (0, 1)
        DP mode: share of the zCDP budget ρ spent on the final coefficients.
    {diagnostics: values filled, rows dropped for missing values}
    {schema parameters}
    {neighbouring}
        DP mode supports ``"replace"`` only.
    {run settings}

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats as dp
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.standard_normal((200, 4)), columns=["x1", "x2", "x3", "x4"])
    >>> df["y"] = df.x1 - df.x3 + rng.standard_normal(200)
    >>> fit = dp.vertical_glm("y ~ .", df, parties=[["x1", "x2"], ["x3", "x4"]])
    >>> fit.converged, abs(fit.coef()["x1"] - 1) < 0.2
    (True, True)
    """
    given, settings, options = check_call(locals(), shared, m.PrivregOptions)
    names, columns = m.party_columns(parties)
    fills = m.response_fill(formula, options.family)
    options, data = declare(
        given, options, settings, fills=fills, keep=[shared["levels"], columns, row_id], parts=True
    )
    return run(_door(given, options, data, (names, columns)), settings)


def _door(given: dict[str, Any], options: m.PrivregOptions, data: Any, parties: tuple) -> VerticalDoor:
    """The door of a declared call: the parties, the rule for missing values and the call (nothing read)."""
    names, columns = parties
    always = ("formula", "parties", "family") + (("eps", "delta", "rounds") if options.dp else ())
    call = call_of(vertical_glm, given, always=always, parties=names)
    rows = bool(given["diagnostics"])  # per-row fitted values and residuals may then be shown
    door = VerticalDoor(
        options, data, call, given["progress"], parties=parties, row_id=given["row_id"], rows_requested=rows
    )
    from .. import engines

    if not engines.is_engine_input(data):
        return door
    _check_statistics_mode(door)  # streamed / Dask: the Gaussian fit from sufficient statistics
    return FromStatistics(**vars(door))


@dataclass
class VerticalFrame:
    mf: ModelFrame
    owner: np.ndarray
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    radius: list[float] | None = None
    y_bound: float | None = None
    public: m.DeclaredScales | None = None  # DP mode: the largest coefficients, the columns' midpoints
    response_note: str = ""
    stats: Any = None


@dataclass
class VerticalDoor(DataDoor):
    """vertical_glm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.PrivregOptions
    _: KW_ONLY
    parties: tuple[list[str], list[list[str]]]  # the parties' names and the columns each holds
    row_id: str | None
    rows_requested: bool = False  # diagnostics=True: per-row fitted values and residuals may be shown

    def frame(self, dd: DataDependence) -> VerticalFrame:
        o, (names, columns) = self.options, self.parties
        frame = m.combine(self.data, columns, names, self.row_id)
        mf, response_note = m.response_frame(
            o.formula, frame, o.family, self.schema, check_constant=not o.dp, name_step=dd.add
        )
        owner = m.assign_terms(mf, columns, names)
        m.check_response(mf.y, o.family, mf.response, dp=o.dp)
        if not o.dp:  # the exact (non-private) fit: R's glm gives NA for aliased columns, BCD cannot
            refuse_aliased("vertical_glm", list(mf.names), estimable_columns(mf.X, GLM_TOL))
        m.check_offset(mf.offset, dp=o.dp)
        out = VerticalFrame(mf=mf, owner=owner, X=mf.X, y=mf.y, response_note=response_note)
        if o.dp:  # public bounds: each party's row-norm bound R_k and largest coefficient, B_y (Gaussian)
            bounds = declared_bounds(self.bounds, mf, response=o.family == "gaussian")
            out.X, out.y, out.radius, out.y_bound, out.public = m.clip_to_bounds(mf, owner, bounds, o)
        dd.name_frame_steps(mf)  # after the bounds: without them DP mode is refused, not warned
        return out

    def plan(self, frame: VerticalFrame, dd: DataDependence) -> Plan:
        names, public = self.parties[0], frame.public  # m.plan warns from the largest coefficients
        rule = None if public is None else m.NoiseRule(dict(zip(names, public.largest)), not dd.steps)
        public = dict(simulated=True, statistics=frame.stats is not None, rule=rule)
        return m.plan(self.options, frame.mf.n, len(names), frame.radius, frame.y_bound, **public)

    def release(self, frame: VerticalFrame, plan: m.PrivregPlan, noise: NoiseSource) -> m.Released:
        mf, o = frame.mf, self.options
        cross = frame.stats
        stats = (
            m.Design(frame.X, frame.y, frame.owner, mf.names, mf.offset, frame.public and frame.public.centre)
            if cross is None
            else m.Pooled(cross.xtx, cross.xty, cross.yty, frame.owner, mf.n, mf.names)
        )
        with progress_bar(self.progress, o.sweeps().max_iter, "block coordinate descent sweeps") as bar:
            return m.release(stats, plan, noise, lambda row: bar.update(1))

    def result(self, frame: VerticalFrame, plan, released: m.Released, statement, noise) -> VerticalGLMResult:
        rows = None if frame.y is None else self.rows_requested  # streamed/Dask fits keep no rows
        opening, names = self.opening(frame.mf.n, frame.mf.names, statement), self.parties[0]
        return VerticalGLMResult.of(
            opening, self.options, plan, released, frame.mf, names, frame.response_note, rows
        )

    def diagnostics(self, frame: VerticalFrame, released: m.Released) -> dict:
        return missing_counts(frame.mf)


@dataclass
class FromStatistics(VerticalDoor):
    """Streamed or Dask data: the Gaussian exact fit from the pooled sufficient statistics."""

    def frame(self, dd: DataDependence) -> VerticalFrame:
        owner_box: dict = {}
        names, columns = self.parties

        def check_parties(mf):  # before the pass: terms, owners and response from the names alone
            if mf.response is None:
                raise DataError("the formula needs a response, e.g. 'y ~ .'.")
            owner_box["owner"] = m.assign_terms(mf, columns, names)
            return None, None

        mf, stats = self.one_pass(  # progress=False: the pass still shows a bar on long runs (None)
            boxes=check_parties, gram=True, drop_intercept=False, progress=self.progress or None
        )
        dd.name_frame_steps(mf)
        return VerticalFrame(mf=mf, owner=owner_box["owner"], stats=stats.cross)


def _check_statistics_mode(door: VerticalDoor) -> None:
    """vertical_glm for engine inputs: Gaussian, unpenalized, exact (non-DP) mode only."""
    from .. import engines

    def columns() -> set[str]:
        return set(engines.as_source(door.data).schema_frame().columns)

    m.check_statistics_mode(door.options, door.parties, door.row_id, columns)
