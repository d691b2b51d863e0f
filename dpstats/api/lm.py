"""Front door of private linear regression: :func:`dp_lm`.

The sufficient statistics (the stacked [XᵀX, Xᵀy, yᵀy] of the bounded design
with its intercept column) come from one pass of any engine (in memory,
:func:`dpstats.engines.stream`, Dask); the release, its sensitivities and the
parametric-bootstrap intervals are :mod:`dpstats.methods.lm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np

from ..engines import Data
from ..privacy.bounds import Bounds, PrivateBounds, declared_bounds, design_box, response_box
from ..formula import INTERCEPT
from ..geometry import Box
from ..methods import lm as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..results.lm import LMResult
from ..validation import check_delta, check_regression_rows
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run


@front_door
def dp_lm(
    formula: str,
    data: Data,
    eps: float,
    delta: float = 0.0,
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    conf_level: float = 0.95,
    n_boot: int = 1000,
    interval: str = "pivot",
    lambda_share: float = m.LAMBDA_SHARE,
    progress: bool | None = None,
    **shared: Unpack[Shared],
) -> LMResult:
    """Differentially private linear regression with intervals for sampling and privacy noise.

    The stacked [XᵀX, Xᵀy, yᵀy] of the design clipped to ``bounds`` is released
    with Gaussian noise (delta > 0, zCDP) or Laplace noise (delta = 0), after a
    private lower bound on λ_min(XᵀX) chooses a ridge as AdaSSP does (Wang
    2018); standard errors, intervals and p-values come from a parametric
    bootstrap of the released statistics (Ferrando, Wang & Sheldon 2022).
    Derivations: :mod:`dpstats.methods.lm`.

    Parameters
    ----------
    {formula}
        The response must be numeric.
    {data, streamed: the statistics then come from one chunked pass}
    {eps or inf: ordinary least squares, with the classical formulas}
    delta : float
        0 (default): Laplace mechanism, pure eps-DP.  > 0: Gaussian, calibrated exactly (Balle & Wang 2018).
    bounds : (lo, hi) or dict
        Public bounds of every design column and of the response (dummies default to their coding's
        range, an interaction's columns to the product of its parts' bounds).  A private call refuses a
        numeric variable without them (its missing rows would be dropped, making n private; eps = inf
        fits without bounds).  ``"auto"`` (or a :class:`dpstats.AutoBounds`): bounds for the columns and
        the response released privately first, from ``bounds_eps`` (docs/architecture.md, "Private
        bounds"); in-memory data only.
    {bounds_eps and delta: the regression}
    {conf_level: the bootstrap}
    n_boot : int
        Bootstrap replicates (>= 100).
    interval : {"pivot", "percentile"}
        Bootstrap interval; "pivot" (default) corrects the ridge's bias.
    lambda_share : float
        Share of the budget (ρ, or eps for Laplace) spent on the λ_min bound.
    {neighbouring, replace only: n is public and exact in the released statistic
        (add/remove-one-row would make it private)}
    {schema parameters}
    {diagnostics: rows dropped, values clipped, the non-private OLS estimates}
    {run settings}

    Returns
    -------
    LMResult
        ``tidy()``: term, estimate, std.error, conf.low, conf.high, statistic, p.value (``noise``: public
        inputs).  Under eps < inf ``estimate`` (print's Estimate) is the calibrated estimate, which std.error,
        intervals, statistic, p-value (at least 2/(B + 1), the bootstrap's floor) and ``vcov()`` are about:
        ``coef()``, which ``predict()`` uses (as R's ``predict.lm`` uses ``coef()``); ``ridge`` (print's
        Ridge) is the ridge estimate it calibrates (``ridge_estimates``).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats as dp
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(-1, 1, 20000)})
    >>> df["y"] = 1 + 2 * df.x + rng.normal(0, 0.5, 20000)
    >>> fit = dp.dp_lm("y ~ x", df, eps=1.0, delta=1e-6, bounds={"x": (-1, 1), "y": (-3, 5)},
    ...                n_boot=200, random_state=1)
    >>> fit.tidy()["term"].tolist()
    ['(Intercept)', 'x']
    >>> bool(abs(fit.coef()["x"] - 2) < 0.2)
    True
    """
    given, settings, options = check_call(locals(), shared, m.LMOptions)
    options, data = declare(given, options, settings, nonprivate="ordinary least squares", statistics=True)
    if isinstance(options.bounds, PrivateBounds):
        m.require_covering_bounds(options.bounds)
    return run(LMDoor(options, data, call_of(dp_lm, given), progress), settings)


@dataclass
class LMFrame:
    mf: Any
    gram: np.ndarray  # A = Σ v vᵀ, v = (1, z, u), unit coordinates
    coords: m.Coordinates
    n: int
    names: list[str]
    n_clipped: int
    estimable: np.ndarray | None = None  # eps = inf: the columns R's pivoted QR keeps (methods._aliased)


@dataclass
class LMDoor(DataDoor):
    """dp_lm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.LMOptions

    def frame(self, dd: DataDependence) -> LMFrame:
        from .. import engines

        data_boxes = self._data_boxes(dd) if self.bounds is None else None

        def boxes(mf):
            if data_boxes is not None:
                return data_boxes
            names = [nm for nm in mf.names if nm != INTERCEPT]
            bounds = declared_bounds(self.bounds, mf)
            x_box = design_box(bounds, mf, names)
            return m.box_with_intercept(x_box, mf.names, INTERCEPT), response_box(bounds, mf)

        mf, stats = self.one_pass(boxes=boxes, gram=True, drop_intercept=False)
        stats = engines.offset_response(mf, stats, "dp_lm")  # eps = inf: lm's y − offset
        dd.name_frame_steps(mf)
        return self._assemble(mf, stats.cross, *stats.boxes, columns_public=not dd.columns_read)

    def _data_boxes(self, dd: DataDependence) -> tuple[Box, Box]:
        """The data's range as the box (a first pass): a named data-dependent step unless eps = inf."""
        if not self.nonprivate:
            dd.add(
                "the bounds that clip the columns and the response are the data's min and max (a first pass)",
                fix=m.data_range_fix(self.options.formula),
            )
        _, st0 = self.one_pass(ranges_only=True, drop_intercept=False)
        lo, hi = st0.cross.x_min, st0.cross.x_max
        top = max(float(st0.cross.y_maxabs), 1e-12)
        return Box(lo, np.where(hi > lo, hi, lo + 1.0)), Box(np.array([-top]), np.array([top]))

    def _assemble(self, mf, cross, x_box: Box, y_box: Box, *, columns_public: bool = True) -> LMFrame:
        n, k = int(cross.n), len(mf.names)
        predictors = k - int(INTERCEPT in mf.names)
        check_regression_rows("dp_lm", self.options, n, k, predictors, columns_public=columns_public)
        if not self.nonprivate and self.options.delta > 0:
            check_delta(self.options.delta, n)
        gram, coords, terms = m.stacked_gram(cross, list(mf.names), x_box, y_box, INTERCEPT)
        estimable = estimable_rows(mf, terms, coords) if self.nonprivate else None  # never on a private fit
        return LMFrame(mf, gram, coords, n, terms, int(cross.n_clipped), estimable)

    def plan(self, frame: LMFrame, dd: DataDependence) -> m.LMPlan:
        level = self.bounds.level if isinstance(self.bounds, PrivateBounds) else None
        engine = getattr(frame.mf, "engine", "in-memory")
        return m.plan(self.options, frame.coords, engine=engine, clipped_at=level, n=frame.n)

    def release(self, frame: LMFrame, plan: m.LMPlan, noise: NoiseSource) -> m.LMRelease:
        return m.release(frame.gram, plan, noise, frame.estimable)

    def result(self, frame: LMFrame, plan: m.LMPlan, released: m.LMRelease, statement, noise) -> LMResult:
        if self.nonprivate:
            statement.samplers = statement.samplers or ["none (eps = inf)"]
        opening = self.opening(frame.n, frame.names, statement)
        return LMResult.of(opening, self.options, plan, released, frame.mf, frame.coords)

    def diagnostics(self, frame: LMFrame, released: m.LMRelease) -> dict:
        return m.diagnostics(frame, self.options, estimable_rows(frame.mf, frame.names, frame.coords))


def estimable_rows(mf, terms: list[str], coords: m.Coordinates) -> np.ndarray | None:
    """The design columns (in ``terms``' order) that R's pivoted QR keeps, from the rows clipped to
    their box (:func:`dpstats.methods.lm.estimable_clipped`) where the frame holds them (in memory),
    else None (:func:`dpstats.methods.lm.ols_fit` then tests the cross products, of clipped rows).
    Non-private: for eps = inf and the requested diagnostics only."""
    from ..engines import ChunkedModelFrame

    if isinstance(mf, ChunkedModelFrame):  # streamed, Dask, DuckDB: no rows held
        return None
    names = list(mf.names)
    return m.estimable_clipped(mf.X[:, [names.index(t) for t in terms]], coords)
