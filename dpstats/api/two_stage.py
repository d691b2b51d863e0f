"""Front door of the two-stage selection baseline (docs/architecture.md, "Layers").

The method, its options, its plan and its release are in :mod:`dpstats.methods.two_stage`; the
operating characteristics in :mod:`dpstats.simulate.two_stage`.  This door checks the arguments,
reads the frame, and builds the result.
"""

from __future__ import annotations

from typing import Unpack

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..engines import InMemoryData
from ..privacy.bounds import Bounds, is_auto
from .. import engines
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import check_bounds_form
from ..methods import sis as sis_m, two_stage as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.two_stage import TwoStageResult
from ..validation import check_candidates, check_k, check_truth, columns_read
from .._progress import progress_bar
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run


@front_door
def dp_two_stage(
    formula: str,
    data: InMemoryData,
    eps: float,
    k: int | None = None,
    lam: float = 0.1,
    blocks: int | None = None,
    *,
    vote: str = "topk",
    topk: str = "canonical_lipschitz",
    gamma: float = 0.5,
    shuffle: bool = True,
    standardize: bool = True,
    solver: str = "lars",
    tol: float = 1e-4,
    second_stage: str | None = None,
    stage_fraction: float = 0.5,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    truth: Sequence[str] | None = None,
    oc_trials: int = 50,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> TwoStageResult:
    """Two-stage private selection: lasso votes on disjoint blocks, then a private top-k.

    The baseline of Swope et al. ("Feature Selection from Differentially
    Private Correlations"), after Kifer, Smith & Thakurta (2012): the rows are
    split into ``blocks`` disjoint blocks (default ⌊√n⌋, blocks of about √n
    rows), a non-private lasso with penalty ``lam`` is fitted on each, each
    block votes for its top-k |coefficients| (``vote="topk"``) or its whole
    support (``vote="support"``), and k terms are chosen by a private top-k of
    the vote counts.

    Privacy.  The assignment of rows to blocks ignores the data, so one row
    changes one block and every vote count moves by at most 1 under both
    neighbouring relations (l∞ sensitivity 1; not monotone, since a block can
    move its votes between features).  Under add/remove-one-row the rows are
    assigned to blocks independently and uniformly, and the number of blocks
    must be public: ``blocks=`` is required (⌊√n⌋ would use the private n).
    The lasso fits need no bounds (declared ones clip each block's rows).

    Parameters
    ----------
    {formula}
        Numeric response (a 0/1 class indicator is fine: the lasso then fits a linear
        probability model).
    {data}
    {eps}
    {k terms}
    lam : float
        Lasso penalty in (1/2n_b)‖y − Xβ‖² + lam‖β‖₁ on standardized columns (the paper: 0.1).
    blocks : int, optional
        Number of disjoint blocks, 2 <= blocks <= n/2; default ⌊√n⌋; required under add/remove.
    vote : {"topk", "support"}
        What each block votes for.
    topk : str
        Private top-k selector, one of ``dpstats.privacy.SELECTORS``
        (default ``"canonical_lipschitz"``, as in ``dp_sis``).
    gamma : float
        Split of the canonical Lipschitz mechanism (ignored by other selectors).
    shuffle : bool
        Under replace-one-row, cut a random permutation of the rows into blocks (default) or keep the
        row order (``False``; the paper's §3 experiment).  Both ignore the data's values.
    standardize : bool
        Scale columns to unit standard deviation within each block before the
        lasso (glmnet's default); harmless to privacy, as it is inside a block.
    solver : {"lars", "cd"}
        Lasso solver: exact LARS-lasso homotopy (scikit-learn ``LassoLars``, default; fast when blocks
        have far fewer rows than columns) or coordinate descent (``Lasso``) with tolerance ``tol``.
    tol : float
        Coordinate-descent tolerance (scikit-learn's ``tol``; ``solver="cd"``).
    second_stage : {None, "private_ols", "ols"}
        Optional fit on the selected terms.  ``"private_ols"``: least squares from Laplace-noised
        sufficient statistics, needs ``bounds`` and gets ``stage_fraction`` of eps.  ``"ols"``: ordinary
        least squares on the raw data, NOT private (NonPrivateWarning; refused under ``strict``).
    stage_fraction : float in (0, 1)
        Share of eps for the private second stage.
    bounds : (lo, hi) or dict, optional
        Public bounds: each block's rows are clipped to them, and ``second_stage="private_ols"`` needs
        them (an interaction's columns default to the product of its parts' bounds); ``"auto"`` (or a
        :class:`dpstats.AutoBounds`) releases them privately first (docs/architecture.md, "Private bounds").
    {bounds_eps: the selection and the second stage}
    {schema parameters}
        The votes need no bounds: a numeric variable without declared bounds gets the public fill 0.
    {neighbouring}
    {truth: the true support or ranking}
    {diagnostics: rows dropped, values clipped, the non-private selection; with ``truth``,
        accuracies against it}
    oc_trials : int
        Trials per vote margin for the operating characteristics (0 skips).
    {run settings}

    {examples}
    >>> df = dp.datasets.fan_lv(n=100, d=200, random_state=0)
    >>> fit = dp.dp_two_stage("y ~ .", data=df, eps=5.0, k=8, random_state=1, oc_trials=0)
    >>> len(fit.selected)
    8
    """
    given, settings, options = check_call(locals(), shared, m.TwoStageOptions)
    if not is_auto(bounds):  # the votes need no bounds, but malformed bounds are still refused
        check_bounds_form(bounds)
    engines.require_rows(data, "dp_two_stage", "each block of rows fits its own lasso")
    options, data = declare(given, options, settings, unbounded_fill=0.0)
    call = call_of(dp_two_stage, given, always=("formula", "eps", "k", "lam"))
    return run(TwoStageDoor(options, data, call, progress), settings)


@dataclass
class _Frame:
    mf: ModelFrame
    k: int
    n_blocks: int
    boxes: tuple  # the public bounds of the columns and the response (private second stage only)
    truth: list[str] | None


@dataclass
class TwoStageDoor(DataDoor):
    """dp_two_stage's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.TwoStageOptions
    # the release's generator: the diagnostics' non-private top-k breaks its ties with it
    _generator: np.random.Generator | None = field(default=None, init=False, repr=False)

    def frame(self, dd: DataDependence) -> _Frame:
        o = self.options
        mf = model_frame(o.formula, self.data, drop_intercept=True, schema=o.schema, min_rows=o.min_rows)
        check_candidates("dp_two_stage", o.formula, mf)
        k = sis_m.default_k(mf.p) if o.k is None else check_k(o.k, mf.p, shown=not columns_read(mf))
        n_blocks = o.number_of_blocks(mf.n)
        refuse_offset(mf, "dp_two_stage")
        dd.name_frame_steps(mf)
        m.name_data_dependent_steps(dd, o)
        boxes = m.clip_boxes(self.bounds, mf, every=o.second_stage == "private_ols")
        return _Frame(mf=mf, k=k, n_blocks=n_blocks, boxes=boxes, truth=check_truth(o.truth, mf.names))

    def plan(self, frame: _Frame, dd: DataDependence) -> m.TwoStagePlan:
        return m.plan(self.options, d=frame.mf.p, k=frame.k, n_blocks=frame.n_blocks, boxes=frame.boxes)

    def release(self, frame: _Frame, plan: m.TwoStagePlan, noise: NoiseSource) -> m.Release:
        self._generator = noise.generator
        with progress_bar(self.progress, frame.n_blocks, "block lasso fits") as bar:
            return m.release(frame.mf.X, frame.mf.y, plan, noise, progress=bar.update)

    def result(
        self, frame: _Frame, plan: m.TwoStagePlan, released: m.Release, statement: PrivacyStatement, noise
    ) -> TwoStageResult:
        # the statement states the eps asked for: the ledger's exactly rounded sum
        # (1 − f)·eps + (eps − (1 − f)·eps) can be one ulp off when stage_fraction > 1/2
        statement.eps = self.options.eps
        opening = self.opening(frame.mf.n, frame.mf.names, statement)
        return TwoStageResult.of(
            opening, self.options, plan, released, k=frame.k, blocks=frame.n_blocks, generator=noise.generator
        )

    def diagnostics(self, frame: _Frame, released: m.Release) -> dict:
        return m.diagnostics(
            frame.mf, released, frame.truth, frame.k, frame.n_blocks, self.options, self._generator
        )
