"""Front door of DP sure independence screening (docs/architecture.md, "One call, step by step").

The scores, their sensitivity, the release and the privacy plan are :mod:`dpstats.methods.sis`; the
recovery bound and its root search :mod:`dpstats.privacy.topk`; the operating characteristics
:mod:`dpstats.simulate.sis`.  This door checks the arguments, reads the frame and builds the result.
"""

from __future__ import annotations

from typing import Unpack
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..engines import Data
from ..privacy.bounds import Bounds, declared_bounds, design_box, response_box
from .. import engines
from ..formula import ModelFrame, model_frame, refuse_offset
from ..methods import sis as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.sis import SISResult
from ..simulate import Assume
from ..stats import CrossStats
from ..validation import check_candidates, check_k, check_truth, columns_read
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run


@front_door
def dp_sis(
    formula: str,
    data: Data,
    eps: float,
    k: int | None = None,
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    gamma: float = 0.5,
    center: str | None = None,
    score: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    score_sensitivity: float | None = None,
    topk: str = "canonical_lipschitz",
    truth: Sequence[str] | None = None,
    assume: Assume | dict | None = None,
    oc_trials: int = 200,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> SISResult:
    """DP sure independence screening: a private top-k of absolute covariances.

    Algorithm 1 of Swope et al., "Feature Selection from Differentially Private
    Correlations", with a centred score: every column and y are mapped from
    their declared bounds onto [−1, 1] (clipped), score_j = |Σ_i (x_ij − x̄_j)
    (y_i − ȳ)|, then a private top-k of the scores (canonical Lipschitz
    mechanism by default).  ``center="midpoint"`` gives the paper's score
    |x_jᵀ y|, which ranks offsets from the bounds' midpoints rather than
    correlations.  The intercept is dropped; factors enter as treatment dummies.

    Parameters
    ----------
    {formula}
        The response must be numeric.
    {data, streamed: the statistics then come from one chunked pass (not with a custom ``score``)}
    {eps}
    {k terms}
    bounds : (lo, hi) or dict, optional
        Public bounds for every variable including the response, or per variable (interactions: the product of
        their parts' bounds).  Values are mapped from [lo, hi] onto [−1, 1] and clipped: pure eps-DP with
        either ``center``.  Without bounds, columns and y are scaled by their max-abs and centered by their
        means, as in the paper's experiments: data-dependent steps that raise
        :class:`~dpstats.errors.NonPrivateWarning` (refused under ``strict``).  ``"auto"`` (or a
        :class:`dpstats.AutoBounds`): bounds for the columns and y released privately first, from
        ``bounds_eps`` (docs/architecture.md, "Private bounds").
    {bounds_eps: the selection}
    gamma : float in [0, 1)
        Canonical Lipschitz split: eps1 = (1 − gamma)·eps, eps2 = gamma·eps.
    center : {"mean", "midpoint"}, optional
        With bounds: ``"mean"`` (default) scores the centred cross-product Σ_i (x_ij − x̄_j)(y_i − ȳ) of
        the mapped values, l∞ sensitivity 4(1 − 1/n) under replace-one-row and 4 under
        add/remove-one-row; ``"midpoint"`` scores the paper's |x_jᵀ y| (centred at the bounds'
        midpoints), sensitivity 2 and 1.  Both are pure eps-DP (derivations in
        :mod:`dpstats.methods.sis`).  The former names ``"data"`` (= "mean") and ``"bounds"`` (=
        "midpoint") are accepted.  Ignored without bounds.
    score : callable, optional
        ``score(X, y) -> ndarray`` of d scores on the model frame's design, to replace the built-in
        score; requires ``score_sensitivity`` (its l∞ sensitivity under the neighbouring relation in
        force, declared by you).  Non-finite values it returns are replaced by 0 by construction (stated
        in every such call's statement; nothing is checked on them).  Its contract (d numbers) is
        checked on a public probe, 2 rows of zeros with the design's columns, before the rows are
        scored: a result of the wrong shape there, or an exception, is refused (the error naming only
        the exception's type); on the data, a result of the wrong shape or an exception gives d zeros,
        by construction (stated; no error depends on the rows).
    score_sensitivity : float, optional
        The l∞ sensitivity of ``score`` under the neighbouring relation in force,
        declared by you; required with ``score`` and ignored without it.
    topk : str
        Top-k selector: one of ``dpstats.privacy.SELECTORS``.
    {neighbouring}
        It sets the score's sensitivity (see ``center``).
    {schema parameters}
    {truth: the true support or true ranking}
    {diagnostics: rows dropped, values clipped, the non-private selection}
    assume : dpstats.simulate.Assume or dict, optional
        A model you state (number of true signals, their standardized strength, noise sd, feature
        correlation).  Only then are precision and recall reported, simulated from the scores' sampling
        law at this n (cost independent of n; :func:`dpstats.simulate.sis_trials`) and labelled "under
        the assumed model: ..." in every output.  Without it, the operating characteristics hold only
        what follows from n, d, k, eps and the sensitivity: the noise scale and the score gaps needed
        for exact recovery.
    {oc_trials}
    {run settings}

    {examples}
    >>> df = dp.datasets.fan_lv(n=100, d=200, random_state=0)
    >>> fit = dp.dp_sis("y ~ .", data=df, eps=5.0, k=8, bounds=(-5, 5), random_state=1)
    >>> len(fit.selected)
    8
    >>> fit.privacy.ledger[0].sensitivity.startswith("Δ∞ = 4(1 − 1/n)")
    True
    >>> fit.operating_characteristics.assumption is None   # no error rates without assume=
    True
    >>> fit = dp.dp_sis("y ~ .", data=df, eps=5.0, k=8, bounds=(-5, 5), random_state=1,
    ...                 assume=dp.simulate.Assume(signals=8, strength=0.5), oc_trials=20)
    >>> fit.operating_characteristics.assumption_label.startswith("under the assumed model: 8 true")
    True
    """
    given, settings, options = check_call(locals(), shared, m.SISOptions, assume=Assume.coerce(assume))
    fill = 0.0 if score is not None else None  # a custom score needs no bounds: unbounded variables get 0
    if score is not None:
        engines.require_rows(data, "dp_sis with a custom score", "score(X, y) is called on the rows")
    options, data = declare(given, options, settings, statistics=score is None, unbounded_fill=fill)
    options.check_schema(options.schema)
    call = call_of(dp_sis, given, always=("formula", "eps", "k"))
    return run(SISDoor(options, data, call), settings)


@dataclass
class _Frame:
    mf: ModelFrame
    stats: CrossStats | None
    k: int
    scaling: str
    truth: list[str] | None
    values: np.ndarray | CrossStats  # the statistics, or a custom score's values (computed before the charge)
    n: int | None  # the n the sensitivity may use: None when it is not public

    @property
    def n_clipped(self) -> int:
        return 0 if self.stats is None else self.stats.n_clipped


@dataclass
class SISDoor(DataDoor):
    """dp_sis's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.SISOptions

    def frame(self, dd: DataDependence) -> _Frame:
        o, stats, scale = self.options, None, None  # scale: without bounds, every value x/M, M its max-abs
        if o.score is None and self.bounds is None:
            scale = engines.maxabs_boxes(o.formula, self.data, o.schema, o.min_rows)
        if o.score is None:
            mf, _, _, stats = engines.frame_and_cross_products(
                o.formula, self.data, lambda mf: self._boxes(mf, scale), schema=o.schema, min_rows=o.min_rows
            )
        else:  # a custom score needs no bounds: the checks on the frame's names only
            mf = model_frame(o.formula, self.data, drop_intercept=True, schema=o.schema, min_rows=o.min_rows)
            self._boxes(mf)
        k = m.default_k(mf.p) if o.k is None else check_k(o.k, mf.p)
        refuse_offset(mf, "dp_sis")
        dd.name_frame_steps(mf)
        scaling = m.scaling(o, dd)
        truth = check_truth(o.truth, mf.names)
        values = stats if o.score is None else m.score_rows(o.score, mf.X, mf.y, shown=not dd.columns_read)
        n = None if dd.n_private else (stats.n if stats is not None else mf.n)
        return _Frame(mf=mf, stats=stats, k=k, scaling=scaling, truth=truth, values=values, n=n)

    def _boxes(self, mf: ModelFrame, scale: engines.BoxFn | None = None):
        """Checks that need only the frame's names, then the declared bounds (or the max-abs ``scale``)."""
        check_candidates("dp_sis", self.options.formula, mf)
        k = self.options.k if self.options.k is not None else m.default_k(mf.p)
        check_k(k, mf.p, shown=not columns_read(mf))  # d depends on the rows when levels were read
        if self.options.score is not None or self.bounds is None:
            return (None, None) if scale is None else scale(mf)
        bounds = declared_bounds(self.bounds, mf)
        return design_box(bounds, mf), response_box(bounds, mf)

    def plan(self, frame: _Frame, dd: DataDependence) -> m.SISPlan:
        return m.plan(self.options, d=frame.mf.p, k=frame.k, n=frame.n)

    def release(self, frame: _Frame, plan: m.SISPlan, noise: NoiseSource) -> m.SISRelease:
        return m.release(frame.values, plan, noise)

    def result(
        self, frame: _Frame, plan: m.SISPlan, released: m.SISRelease, statement: PrivacyStatement, noise
    ) -> SISResult:
        opening = self.opening(frame.mf.n, frame.mf.names, statement)
        return SISResult.of(
            opening, self.options, plan, released, scaling=frame.scaling, n=frame.n, generator=noise.generator
        )

    def diagnostics(self, frame: _Frame, released: m.SISRelease) -> dict:
        return m.diagnostics(frame.mf, released, frame.truth, frame.k, frame.n_clipped)
