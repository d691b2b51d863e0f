"""Front door of the DP fixed-X knockoff filter (Pournaderi & Xiang): :func:`dp_knockoff`.

The method, its options, plan and release are in :mod:`dpstats.methods.knockoff`;
this door reads the frame (rows clipped to the bound B, the normalised
sufficient statistics) and builds the result.  The operating characteristics
and the paper's experiment (``simulate_knockoff``, importable from here as
before) are in :mod:`dpstats.simulate.knockoff`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Unpack

import numpy as np

from ..engines import Data
from ..privacy.bounds import RowNormBound, is_auto, row_norm_bound
from ..errors import PrivacyParameterError
from .. import engines
from ..formula import ModelFrame, model_frame, refuse_offset
from ..methods.knockoff import diagnostics as kdiag, filter as ko, mechanism as kd, planning as kp
from ..methods.knockoff.options import KnockoffOptions
from ..simulate import RELEASED, Assume
from ..simulate.knockoff import FIGURE1_NS, simulate_knockoff  # noqa: F401 (public names, kept importable here)
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.knockoff import KnockoffResult
from ..geometry import clip_response
from ..stats import row_clipped_gram
from ..validation import check_oc_trials, check_truth
from ._parameters import Shared
from ._common import DataDoor, Settings, call_of, check_call, declare, front_door, n_is_public, run

IN_CALL = ("formula", "eps", "delta", "fdr", "method")  # shown in a result's call even at their defaults
# responses beyond it are clipped to it before any sum, at every eps: n·1e200 never overflows (a private
# release then clips them to its response bound Y, kd.response_bound)
OVERFLOW_GUARD = 1e100


@front_door
def dp_knockoff(
    formula: str,
    data: Data,
    eps: float,
    delta: float | None = None,
    fdr: float = 0.1,
    method: str = "II",
    statistic: str = "csm",
    *,
    bounds: RowNormBound = None,
    bounds_eps: float | None = None,
    sigma: float | None = None,
    beta_norm: float | None = None,
    c_min: float | None = None,
    lambda_min: float | None = None,
    ridge: float = 0.0,
    s: str = "lambda_min",
    offset: int = 1,
    knockoffs: str = "shortcut",
    eps_split: tuple[float, float, float] = (0.5, 0.25, 0.25),
    delta_split: Sequence[float] | None = None,
    truth: Sequence[str] | None = None,
    assume: Assume | dict | str | None = None,
    oc_trials: int = 100,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> KnockoffResult:
    """Differentially private fixed-X knockoff filter (Methods I and II of Pournaderi & Xiang).

    Model y = Xβ + w, w ~ N(0, σ²I), no intercept.  Columns are normalised to unit
    norm, fixed-X knockoffs X̃′ are built with S = sI, and the OLS coefficients b of
    y on [X′ X̃′] are released with noise: **Method II** (default, Theorem 5) adds
    N(0, κ²I) to b; **Method I** (Theorem 3) adds noise to the Gram matrix G and to
    [X′ X̃′]ᵀy and solves.  The W statistics (CSM, eq. 7, or LCD, eq. 6) and the
    knockoff+ threshold are post-processing.  Everything is computed from n, XᵀX,
    Xᵀy and yᵀy: Ũᵀy is sampled in O(p) (Haar trick), so no n × n matrix is formed.

    **The guarantee is conditional on the model, not differential privacy**, and every
    output says so: responses are clipped to [−Y, Y], Y = B·beta_norm + sigma·t, and if
    the data set's rows follow the model the (eps, delta) bound holds whatever one row is
    changed to within B and Y.  Derivations: :mod:`dpstats.methods.knockoff.mechanism`.

    Parameters
    ----------
    {formula}
        The intercept is dropped.
    {data, streamed: the statistics then come from one chunked pass (with
        ``knockoffs="shortcut"``)}
    {eps or inf: the ordinary fixed-X knockoff filter}
        Method I splits it by ``eps_split`` into (cross-products, λ_min, Σ′); Method II
        spends it on the coefficients.
    delta : float in (0, 1)
        Total delta, e.g. 1e-6: Method I δ + δ₁ + δ₂ (cross-products, Σ′, sensitivity-bound failure),
        Method II δ₁ + δ₂; equal shares unless ``delta_split``; analytic Gaussian steps.  Not needed at eps = inf.
    fdr : float in (0, 1)
        Target FDR q.
    method : {"II", "I"}
    statistic : {"csm", "lcd"}
    bounds : float, optional
        Public bound B on the l2 norm of each row of the design (Assumption 3); rows are clipped to it.
        Without it, B = the largest row norm of the data (a data-dependent step).  ``"auto"`` (or a
        :class:`dpstats.AutoBounds`): B is released privately first, a high quantile of the row norms
        (docs/architecture.md, "Private bounds").
    {bounds_eps and delta: the filter}
    sigma, beta_norm : float, optional
        Declared upper bounds on the noise sd σ and on ‖β‖ (Remark 2), β on the
        scale of the original columns (as written in the formula); they also set the
        response bound Y = B·beta_norm + sigma·t the responses are clipped to.  If not
        given they are estimated from the data (OLS), a data-dependent step.
    c_min, lambda_min : float, optional
        Declared public lower bounds on the smallest column norm and on λ_min(Σ′), ``lambda_min`` for the
        data set and for every data set with one row replaced (it suffices that λ_min(Σ′) ≥
        (lambda_min + η²)/(1 − η²) on the data, η² = B²/(c_min² − B²), eq. (25)).  Given, the
        sensitivities use them with the public bounds ‖Σ′‖_F, λ_max ≤ p and C_max ≤ √n·B (and s =
        ``lambda_min``); not given, the data's values are used, as in the paper (data-dependent).
        Declared values are assumptions stated in the privacy statement, never checked on the rows (a
        check that can refuse is itself a release): ``lambda_min`` is enforced by regularising Σ′ to it;
        ``c_min`` cannot be, so the guarantee rests on it.  ``diagnostics=True`` reports whether each
        held (not private).
    ridge : float
        Ridge stabiliser ω² >= 0 (Remark 2): b = (G + ω²I)⁻¹[X′ X̃′]ᵀy; it relaxes
        Theorem 5's condition to (1 − η²)λ_min − η² + ω² > 0.  Method II's Δ₂ then also bounds how far
        one row moves the shrunk signal (G + ω²I)⁻¹Gβ̄, a term ω²Γ·C″·‖β‖/(λ_G + ω²)², usually the
        largest: with a declared ``lambda_min``, ``ridge=0`` needs no stabiliser and adds the least noise.
    s : {"lambda_min", "equi"}
        s = λ_min(Σ′) (the paper, Lemma 1) or min(2λ_min, 1) (equicorrelated;
        Method II with ridge > 0 only, since G is then singular).
    offset : {1, 0}
        1: knockoff+ (FDR control); 0: knockoff (modified FDR).
    knockoffs : {"shortcut", "materialise"}
        Sample Ũᵀy in O(p) (default), or build X̃′ by QR (memory O(np)); the
        matrix is kept in ``result.knockoffs_nonprivate`` (not private).
    eps_split : 3 fractions summing to 1
        Method I's split; default (0.5, 0.25, 0.25) is the paper's (0.1, 0.05, 0.05).
    delta_split : fractions summing to 1, optional
    {schema parameters}
    {neighbouring, replace only: the paper's analysis is for replacing one row}
    {truth: the true support}
    {diagnostics: rows dropped, rows clipped to B; with ``truth``, FDP/TPP and the non-private
        selection}
    assume : dpstats.simulate.Assume, dict or "released", optional
        A model you state; only then are FDR and power reported, simulated at the level of the
        statistics (orthonormal design, O(p²) per trial, independent of n;
        :func:`dpstats.simulate.knockoff.operating_characteristics`) with this release's noise scales,
        and labelled "under the assumed model: ..." in every output.  ``Assume(signals=s, strength=b,
        noise=σ)``: s effects b·√n on the unit-norm column scale (standardized features), noise sd σ;
        correlation must be 0.  ``"released"``: the released coefficients of the selected terms are the
        truth (optimistic).  Without it, the operating characteristics hold only what the released W
        imply: the threshold, the number selected, the knockoff(+) estimate of the FDP at the threshold,
        and the noise scales.
    {oc_trials}
    {run settings}

    Notes
    -----
    n ≤ p is refused (screen first with :func:`dpstats.dp_sis` on a data split);
    for p < n < 2p the rows are augmented to 2p as R's ``knockoff`` package does
    (zero rows of X, responses drawn from N(0, σ̂²)), a data-dependent step.

    {examples}
    >>> df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    >>> import math, warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # eps = inf: not private, and warned
    ...     warnings.simplefilter("always")
    ...     fit = dp.dp_knockoff("y ~ .", data=df, eps=math.inf, delta=1e-6, fdr=0.2,
    ...                          random_state=1, oc_trials=0)
    >>> [str(w.message) for w in caught]
    ['eps = inf: the ordinary fixed-X knockoff filter, NOT private.']
    >>> fit.variant
    'non-private'
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", dp.NonPrivateWarning)  # the same non-private call, warned above
    ...     fit = dp.dp_knockoff("y ~ .", data=df, eps=math.inf, delta=1e-6, fdr=0.2, random_state=1,
    ...                          assume=dp.simulate.Assume(signals=3, strength=0.5), oc_trials=20)
    >>> fit.operating_characteristics.assumption_label[:24]
    'under the assumed model:'
    """
    given, settings, options = check_call(locals(), shared, KnockoffOptions)
    options, data = _before_reading(options, settings, given)
    call = call_of(dp_knockoff, given, always=IN_CALL)
    return run(KnockoffDoor(options, data, call, progress), settings)


def _before_reading(options: KnockoffOptions, settings: Settings, given: dict) -> tuple[KnockoffOptions, Any]:
    """The door's steps before anything is read or spent: the assumed model, eps = inf, the budget,
    the knockoffs' route, the data as the door reads it, the private-bounds step and the declared schema."""
    assume = Assume.coerce(options.assume, released=True)
    check_oc_trials(options.oc_trials, assume)
    if assume is not None and assume != RELEASED and assume.correlation != 0:
        raise PrivacyParameterError("the knockoff simulation assumes an orthonormal design: correlation = 0.")
    if options.knockoffs != "shortcut":
        engines.require_rows(
            given["data"],
            "dp_knockoff with knockoffs='materialise'",
            "X~ is built from the rows",
            "use the default knockoffs='shortcut' (the same distribution, from statistics)",
        )
    options, data = declare(
        given,
        options,
        settings,
        nonprivate="the ordinary fixed-X knockoff filter",
        statistics=options.knockoffs == "shortcut",
    )
    return replace(options, assume=assume), data


@dataclass
class _Frame:
    mf: ModelFrame
    B: float
    st: ko.Normalised  # normalised statistics of the design clipped to row norm B
    n_clipped: int
    design: tuple[np.ndarray, np.ndarray] | None = None  # the rows (X, y) when X~ is materialised
    truth: list[str] | None = None
    # whether the declared c_min and lambda_min held on the rows: a non-private fact, for diagnostics only
    declared_held: dict[str, bool] = field(default_factory=dict)
    response: float | None = None  # Y, the bound the responses were clipped to (None: eps = inf)


@dataclass
class KnockoffDoor(DataDoor):
    """dp_knockoff's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: KnockoffOptions
    # the release's generator: the operating characteristics and diagnostics draw from it afterwards
    _generator: np.random.Generator | None = field(default=None, init=False, repr=False)

    def frame(self, dd: DataDependence) -> _Frame:
        if is_auto(self.bounds):  # the private B needs the rows' norms first, then one clipped pass
            mf = model_frame(self.options.formula, self.data, drop_intercept=True, schema=self.schema)
            declared = row_norm_bound(self.bounds, mf)
            g = row_clipped_gram(mf.X, clip_response(mf.y, OVERFLOW_GUARD), declared)
        else:  # in memory or one chunked pass (streamed, Dask): the frame's names, n and the statistics
            declared = self.bounds
            mf, g = engines.frame_and_row_clipped_gram(
                self.options.formula,
                self.data,
                declared,
                response_clip=OVERFLOW_GUARD,
                progress=self.progress,
                schema=self.schema,
            )
        refuse_offset(mf, "dp_knockoff")
        dd.name_frame_steps(mf)  # before the size checks: an error after a named step says the step
        kp.check_rows(
            self.options, mf.n, mf.p, n_public=n_is_public("replace", mf), columns_public=not dd.columns_read
        )
        B = kp.row_bound(g, declared, None if self.nonprivate else dd)
        st = ko.normalise(mf.n, g.xtx, g.xty, g.yty, names=list(mf.names))
        Y = None if self.nonprivate else kp.response_bound(self.options, B, st)
        if Y is not None:  # every response clipped to [−Y, Y] (XᵀX does not change)
            g = engines.with_response_clipped(
                self.options.formula, self.data, mf, g, B, Y, schema=self.schema
            )
            st = ko.normalise(mf.n, g.xtx, g.xty, g.yty, names=list(mf.names))
        st, held = kp.declared_design(self.options, st)
        design = None  # the rows (X, y) when X~ is materialised (in memory only: engines.require_rows)
        if self.options.knockoffs != "shortcut":
            design = (mf.X, clip_response(mf.y, OVERFLOW_GUARD if Y is None else Y))
        return _Frame(mf, B, st, g.n_rows_clipped, design=design, declared_held=held, response=Y)

    def plan(self, frame: _Frame, dd: DataDependence) -> kp.KnockoffPlan:
        plan = kp.plan(self.options, frame.st, frame.B, dd, response=frame.response)
        frame.truth = check_truth(self.options.truth, frame.mf.names)  # after the plan's checks, as always
        return plan

    def release(self, frame: _Frame, plan: kp.KnockoffPlan, noise: NoiseSource) -> kd.Released:
        self._generator = noise.generator
        return kd.release(frame.st, plan, noise, design=frame.design)

    def result(
        self, frame: _Frame, plan: kp.KnockoffPlan, released: kd.Released, statement: PrivacyStatement, noise
    ) -> KnockoffResult:
        opening = self.opening(frame.mf.n, frame.mf.names, statement)
        return KnockoffResult.of(
            opening, self.options, plan, released, row_bound=frame.B, generator=noise.generator
        )

    def diagnostics(self, frame: _Frame, released: kd.Released) -> dict:
        held, truth, o = frame.declared_held, frame.truth, self.options
        return kdiag.diagnostics(frame.mf, held, frame.n_clipped, truth, released, o, self._generator)
