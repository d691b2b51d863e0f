"""Front door of private logistic and Poisson regression: :func:`dp_glm`.

The rows are read once for the model frame; the noisy Newton release
(:mod:`dpstats.methods.glm`) makes one more pass per step over the clipped fitting rows:
over the frame in memory, or, for streamed Parquet/CSV, Dask, DuckDB and LazyFrame data, one pass per
step through the engines (:class:`dpstats.engines.RowPasses`), each chunk's score and Hessian
sums added in file (or partition) order, so the fit equals the in-memory fit up to
floating-point summation order and memory is bounded by one chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Unpack

import numpy as np

from ..engines import Data
from ..geometry import BoundsSpec
from .. import engines
from ..formula import INTERCEPT
from ..methods import glm as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.glm import GLMResult
from ..validation import check_delta, check_regression_rows
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run


@front_door
def dp_glm(
    formula: str,
    data: Data,
    eps: float,
    delta: float = 0.0,
    *,
    family: str = "binomial",
    bounds: BoundsSpec = None,
    conf_level: float = 0.95,
    pilot_steps: int = m.PILOT_STEPS,
    pilot_share: float = m.PILOT_SHARE,
    hessian_share: float = m.HESSIAN_SHARE,
    **shared: Unpack[Shared],
) -> GLMResult:
    """Differentially private logistic and Poisson regression with intervals that include the privacy noise.

    Noisy Newton (Avella-Medina, Bradshaw & Loh, arXiv 2103.11003): a pilot of ``pilot_steps`` noisy
    Newton steps and one final step, each releasing the score and Hessian sums of the clipped rows
    with Gaussian noise (zCDP; the pilot starts at the released share of successes or mean count, and,
    binomial, a refinement step precedes the final one); Wald intervals adding the final step's noise variance.
    Calls whose noise would swamp the information are refused before anything is
    spent, and intervals are withheld when the released Hessian shows too little
    information.  Derivations: :mod:`dpstats.methods.glm`.

    Parameters
    ----------
    {formula}
        For the binomial family the response is 0/1 (or a two-level factor, the first level
        coded 0) or ``cbind(successes, failures)`` of two count columns, as in R's ``glm``.
    {data, streamed: the release reads the rows once per noisy Newton step (``pilot_steps`` + 1
        passes after the first, chunk by chunk; the response then must be numeric, and eps = inf
        needs the data in memory)}
    {eps or inf: the maximum-likelihood GLM by IRLS, as R's ``glm``}
    delta : float
        > 0 (Gaussian steps, e.g. 1e-6, calibrated exactly: Balle & Wang 2018); 0 only with eps = inf.
    family : {"binomial", "poisson"}
        Canonical links (logit, log).  R's family objects are passed by name.
    bounds : (lo, hi) or dict
        Public bounds of every numeric design column (factor dummies have their coding's range, interactions
        the product of their parts'; factors alone need none); for ``"poisson"`` also of the count, (0, Y), and
        for ``cbind(s, f)`` of each column, (0, U_s), (0, U_f): a private call refuses a numeric variable
        without them.  A missing value's fill is their midpoint (a 0/1 response's: 0.5, of its range (0, 1)).
    {conf_level: the Wald}
    pilot_steps : int
        Noisy Newton steps before the final one (one pass over the rows each).
    pilot_share : float
        Share of ρ (zCDP) spent by the pilot (a tenth of it on the start's count: of successes, or total).
    hessian_share : float
        Share of the final step's ρ spent on its Hessian.
    {neighbouring, replace only: n is public}
    {schema parameters}
    {diagnostics: rows dropped, values filled, the non-private glm estimates}
    {run settings}

    Returns
    -------
    GLMResult
        ``coef()``, ``vcov()``, ``confint()``, ``predict(newdata, type="link" or
        "response")``, ``summary()`` laid out as R's ``summary.glm``, ``tidy()`` and
        ``glance()`` with broom's columns.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats as dp
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(-1, 1, 50000)})
    >>> df["y"] = (rng.random(50000) < 1 / (1 + np.exp(-(0.5 + df.x)))).astype(int)
    >>> fit = dp.dp_glm("y ~ x", df, eps=1.0, delta=1e-6, bounds={"x": (-1, 1)}, random_state=1)
    >>> fit.tidy()["term"].tolist()
    ['(Intercept)', 'x']
    >>> bool(abs(fit.coef()["x"] - 1) < 0.2)
    True
    """
    given, settings, options = check_call(locals(), shared, m.GLMOptions)
    m.refuse_auto_bounds(bounds)
    m.refuse_private_offset(formula, options.eps)
    if math.isinf(options.eps):
        engines.require_rows(
            data,
            "dp_glm at eps = inf (IRLS, as R's glm)",
            "IRLS visits the rows at every iteration",
            "give a finite eps: streamed and Dask data are fitted privately (noisy Newton, one pass per step)",
        )
    # DuckDB and polars LazyFrames stream (a pass per step) unless IRLS or a text response needs the rows
    statistics = math.isfinite(options.eps) and engines.numeric_columns(data, m.response_columns(formula))
    options, data = declare(
        given, options, settings, nonprivate=m.IRLS, fills=m.response_fill(options), statistics=statistics
    )
    return run(GLMDoor(options, data, call_of(dp_glm, given, always=("formula", "family", "eps"))), settings)


@dataclass
class GLMFrame:
    mf: Any
    X: (
        np.ndarray | None
    )  # design without the intercept column (raw; clipped by coords.rows); None when chunked
    y: np.ndarray | None  # successes (binomial) or counts (Poisson), raw; None when chunked
    trials: np.ndarray | None  # binomial trials (1 for a 0/1 response); ones for Poisson; None when chunked
    names: list[str]
    coords: m.Coordinates
    response: m.Response
    cbind: tuple[str, str] | None
    note: str = ""
    passes: Any = None  # engines.RowPasses for streamed / Dask data (the rows are not held)
    keep: list[int] = field(default_factory=list)  # the frame's design columns other than the intercept

    @property
    def engine(self) -> str:
        return "memory" if self.passes is None else self.passes.engine


@dataclass
class GLMDoor(DataDoor):
    """dp_glm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.GLMOptions

    def frame(self, dd: DataDependence) -> GLMFrame:
        if engines.is_engine_input(self.data):
            return self._chunked_frame(dd)
        o = self.options
        mf, note, cb, failures = m.in_memory_frame(o.formula, self.data, o.family, self.schema, dd.add)
        X, y = mf.X, np.asarray(mf.y, float)
        tops = [y, failures]

        def top(i: int) -> float:
            return float(np.max(tops[i])) if tops[i].size else 1.0

        frame = self._framed(mf, cb, dd, lambda keep: m.DataRanges(X[:, keep].min(0), X[:, keep].max(0), top))
        frame.X, frame.y, frame.note = X[:, frame.keep], y, note
        frame.trials = y + failures if cb is not None else np.ones_like(y)
        if self.nonprivate:
            m.check_nonprivate_response(y, frame.trials, o.family, cb or mf.response)
        return frame

    def _chunked_frame(self, dd: DataDependence) -> GLMFrame:
        """Streamed or Dask data: a first pass for the frame (n, the data's range), the rows not held."""
        formula, cb = m.parse_cbind(self.options.formula)
        with m.streamed_frame_errors(formula, self.options.formula):
            mf, stats, passes = engines.row_passes(
                formula, self.data, drop_intercept=False, schema=self.schema
            )
        c = stats.cross

        def top(i: int) -> float:
            if i == 0:
                return max(float(c.y_maxabs), 1.0)
            return max(passes.reduce(lambda ch: float(np.max(ch.offset, initial=0.0)), max), 1.0)

        frame = self._framed(mf, cb, dd, lambda keep: m.DataRanges(c.x_min[keep], c.x_max[keep], top))
        frame.passes = passes
        return frame

    def _framed(self, mf: Any, cb: tuple[str, str] | None, dd: DataDependence, ranges: Any) -> GLMFrame:
        """The frame's terms, size checks and coordinates, on either route; ``ranges(keep)`` gives the
        data's range, read only where a bound is left to the data (a named step)."""
        dd.name_frame_steps(mf)
        keep = [j for j, nm in enumerate(mf.names) if nm != INTERCEPT]
        names = ([INTERCEPT] if INTERCEPT in mf.names else []) + [mf.names[j] for j in keep]
        check_regression_rows(
            "dp_glm", self.options, mf.n, len(names), len(keep), columns_public=not dd.columns_read
        )
        if not self.nonprivate:
            check_delta(self.options.delta, mf.n)
        if self.nonprivate:
            coords = m.Coordinates(np.zeros(len(keep)), np.ones(len(keep)), INTERCEPT in mf.names)
            resp = m.Response(self.options.family, math.nan, math.nan, math.nan)
        else:
            data_ranges = ranges(keep)
            coords = m.coordinates(self.options.bounds, mf, keep, data_ranges, dd)
            resp = m.response_bounds(self.options, mf.response, cb, data_ranges, dd)
        return GLMFrame(mf, None, None, None, names, coords, resp, cb, keep=keep)

    def plan(self, frame: GLMFrame, dd: DataDependence) -> m.GLMPlan:
        engine, quoted = m.ENGINES[frame.engine], not dd.steps  # after a step its numbers depend on the rows
        return m.plan(self.options, frame.coords, frame.response, frame.mf.n, engine=engine, quoted=quoted)

    def release(self, frame: GLMFrame, plan: m.GLMPlan, noise: NoiseSource):
        if plan.nonprivate:
            X = frame.mf.X[:, m.design_order(frame.mf.names)]
            fit = dict(intercept=frame.coords.intercept, offset=frame.mf.offset)
            return m.irls(X, frame.y, frame.trials, self.options.family, **fit)
        if frame.passes is None:
            return m.release(m.fitting_rows(frame.X, frame.y, frame.trials - frame.y, frame), plan, noise)
        return m.release(m.chunked_pass(frame), plan, noise)

    def result(self, frame, plan, released, statement: PrivacyStatement, noise: NoiseSource) -> GLMResult:
        if self.nonprivate:
            statement.samplers = statement.samplers or ["none (eps = inf)"]
        opening = self.opening(frame.mf.n, frame.names, statement)
        return GLMResult.of(
            opening, self.options, plan, released, frame.mf, frame.coords, frame.engine, frame.note
        )

    def diagnostics(self, frame: GLMFrame, released) -> dict:
        return m.diagnostics(frame, self.options)
