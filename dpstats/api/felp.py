"""Front door of DP ensemble feature weighting by local learning (FELP; docs/architecture.md, "Layers")."""

from __future__ import annotations

from typing import Unpack

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engines import InMemoryData
from ..privacy.bounds import Bounds, declared_bounds, design_box
from .. import engines
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import Box
from ..methods import felp as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.felp import FELPResult
from ..simulate.assume import plug_in_only
from ..validation import check_truth
from .._progress import progress_bar
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, run

LAM_GRID = (0.01, 0.1, 1.0, 10.0)


@front_door
def dp_felp(
    formula: str,
    data: InMemoryData,
    eps: float,
    lam: float | str | None = None,
    n_estimators: int | None = None,
    sample_ratio: float = 0.9,
    select: int | None = None,
    variant: str = "strict",
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    clip_norm: float | None = None,
    n_neighbors: int = m.N_NEIGHBORS,
    tol: float = m.TOL,
    max_iter: int = m.MAX_ITER,
    lam_grid: Sequence[float] = LAM_GRID,
    truth: Sequence[str] | None = None,
    assume: str | None = None,
    oc_trials: int = 200,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> FELPResult:
    """DP ensemble feature weighting by local learning (FELP) for classification.

    After Liu (2018), "Differentially private ensemble feature selection based
    on local learning": ``n_estimators`` Logo learners (Sun, Todorovic &
    Goodison 2010) each minimise (1/m) Σ log(1 + exp(−wᵀz_i)) + λ‖w‖² over
    w >= 0, with margin vectors z_i = E|x_i − NM(x_i)| − E|x_i − NH(x_i)| over
    the ``n_neighbors`` nearest misses and hits in the weighted L1 metric,
    re-computed until the relative change of w is below ``tol`` (at most
    ``max_iter`` rounds).  Their average is released with L2-Laplace noise
    (density ∝ exp(−ε‖b‖₂/Δ): norm ~ Gamma(d, Δ/ε), uniform direction) and
    the ``select`` features with the largest released weights are selected.
    Unseeded, the noise is floating-point safe: built from OpenDP's Laplace
    and Gaussian draws at a scale larger by 2⁻¹⁰ and snapped to a fine public
    grid (``dpstats.privacy.randomness.snapped_l2_laplace``); seeded, numpy
    draws it and the statement says so.

    Two variants, which differ in whether the guarantee holds:

    * ``"strict"`` (default) — a random partition into ``n_estimators``
      disjoint subsets (default one per 20 rows), each learner's weights
      normalised to ℓ2 norm C = 1 (or clipped to a given ``clip_norm``).
      Replacing one row changes one subset, so the average moves by at most
      Δ = 2C/k, whatever the learner does: a valid eps-DP guarantee.  A
      :class:`~dpstats.errors.ChanceWarning` (and a line in print) says when the
      noise leaves the selection no better than chance, or the weights mostly noise
      (from public inputs, or the released weights' spread against their noise).
    * ``"paper"`` — bootstrap samples of ⌈βn⌉ rows and the paper's Lemma 1
      sensitivity Δ = 2/(nλ).  That bound treats each z_i as a function of
      row i alone; in fact z_i depends on other rows (its neighbours), and one
      row can enter every bootstrap sample.  Our audit refutes it
      (``tests/test_audit_felp.py``): the stated eps is NOT a valid DP
      guarantee.  Every output channel says so (print, summary, glance,
      to_dict, the report, the privacy statement) and a
      :class:`~dpstats.errors.NonPrivateWarning` is raised; ``strict=True``
      refuses it before anything is read or spent.  Use it only to
      reproduce the paper.

    Parameters
    ----------
    formula : str
        ``"class ~ ."``; the response is read as a factor (two or more classes).  Features must be
        numeric.  With the response's levels declared (``levels=``, a categorical dtype,
        ``factor(class, levels = c(...))`` in the formula) no class count is checked: a class that is rare or absent in a subset gives its rows no nearest hit (or the
        subset's rows no nearest miss); such rows have no margin vector and are left out, and a learner
        left with none returns w = 0.  Levels read from the rows are checked (a named step).
    {data}
    {eps or inf: the non-private ensemble, a reference}
    lam : float or "cv", optional
        Ridge parameter λ > 0.  Default: the fixed public value 1.0.  ``"cv"`` tunes λ over ``lam_grid``
        by 5-fold cross-validation (3-NN accuracy on the top ``select`` features) on the private data: a
        data-dependent step, listed as not covered and refused under ``strict=True``.
    lam_grid : sequence of float
        The candidate λ values of ``lam="cv"`` (public; default ``LAM_GRID``).
    n_estimators : int, optional
        Number k of learners.  Default: ⌊rows read / 20⌋ (at least 1) in the strict variant, whose
        Δ = 2C/k falls as k grows; 20 (the paper's) in the paper variant.
    sample_ratio : float in (0, 1]
        β: each bootstrap sample has ⌈βn⌉ rows (paper: 0.9; ``"paper"`` only).
    select : int, optional
        Number of features to select (default: 10% of d, at least 1).
    variant : {"strict", "paper"}
        ``"strict"`` (default) for a release; ``"paper"`` reproduces the
        paper and its stated eps is refuted (see above).
    bounds : (lo, hi) or dict, optional
        Public bounds of the features (an interaction's columns default to the product of its parts' bounds),
        mapped onto [0, 1] (clipped) and divided by √d so that ‖z_i‖₂ <= 1.  Without bounds, the data minima
        and maxima are used: a data-dependent step.  ``"auto"`` (or a :class:`dpstats.AutoBounds`): the
        feature box is released privately first (docs/architecture.md, "Private bounds").
    {bounds_eps: the ensemble}
    clip_norm : float, optional
        C of the strict variant: each learner's weights are clipped to ‖w‖ <= C.  Default: normalised to
        ‖w‖ = 1 (the learners' weights are far below any public bound on them; only their direction
        selects).
    n_neighbors, tol, max_iter
        Logo's neighbourhood size K, tolerance and iteration cap.
    {schema parameters}
    {neighbouring, replace only: both sensitivities use a public n}
    {truth: the relevant features}
    {diagnostics: rows dropped, values clipped, class counts, learner convergence, the
        non-private selection}
    assume : "released", optional
        Only with ``assume="released"`` (the plug-in model: the released weights are the true weights)
        is the selection stability reported: the share of the top set kept under fresh noise of the same
        scale, labelled "under the assumed model: ..." in every output.  Without it the operating
        characteristics hold the exact noise s.d. per weight and the spread of the released weights.
    {oc_trials}
    {run settings}

    {examples}
    >>> from dpstats.simulate import planted
    >>> df = planted(n=100, d=30, s=3, shift=2.0, random_state=0)
    >>> fit = dp.dp_felp("class ~ .", df, eps=1.0, n_estimators=5, bounds=(-6, 6), variant="strict",
    ...                  random_state=1)
    >>> len(fit.selected)
    3
    >>> fit.operating_characteristics.assumption is None
    True
    """
    given, settings, options = check_call(
        locals(), shared, m.FELPOptions, assume=plug_in_only(assume, "dp_felp")
    )
    engines.require_rows(data, "dp_felp", "each learner is fitted on a random subset of the rows")
    options, data = declare(given, options, settings, nonprivate="the weights released without noise")
    return run(
        FELPDoor(options, data, call_of(dp_felp, given, always=("formula", "eps", "variant")), progress),
        settings,
    )


@dataclass
class FELPFrame:
    mf: ModelFrame
    counts: np.ndarray  # class counts: diagnostics only
    select: int
    box: Box | None
    truth: list[str] | None
    declared: bool = True  # the response's classes are public (else read from the rows: not shown)


@dataclass
class FELPDoor(DataDoor):
    """dp_felp's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.FELPOptions

    def frame(self, dd: DataDependence) -> FELPFrame:
        o = self.options
        m.name_read_classes(dd, self.schema, self.data, o.formula)  # refused under strict before reading
        mf = model_frame(o.formula, self.data, drop_intercept=True, response="factor", schema=self.schema)
        m.check_features(mf, o.formula)
        declared = m.declared_classes(self.schema, self.data, mf.response)
        counts = m.check_classes(mf, declared)
        select = m.check_select(o.select, mf.p)
        m.check_subsets(o, mf)
        refuse_offset(mf, "dp_felp")
        dd.name_frame_steps(mf)
        box = None if o.bounds is None else design_box(declared_bounds(o.bounds, mf, response=False), mf)
        m.name_data_dependent_steps(dd, bounded=box is not None, lam_source=o.lam_source, lam_grid=o.lam_grid)
        truth = check_truth(o.truth, mf.names)
        return FELPFrame(mf=mf, counts=counts, select=select, box=box, truth=truth, declared=declared)

    def plan(self, frame: FELPFrame, dd: DataDependence) -> m.FELPPlan:
        mf = frame.mf
        return m.plan(self.options, **m.frame_sizes(mf), select=frame.select, box=frame.box)

    def release(self, frame: FELPFrame, plan: m.FELPPlan, noise: NoiseSource) -> m.Release:
        with progress_bar(self.progress, plan.spec.n_estimators, "FELP learners") as bar:
            return m.release(frame.mf.X, np.asarray(frame.mf.y), plan, noise, progress=bar.update)

    def result(
        self, frame: FELPFrame, plan: m.FELPPlan, released: m.Release, statement: PrivacyStatement, noise
    ) -> FELPResult:
        statement.samplers = statement.samplers or ["none (eps = inf)"]
        mf, classes = frame.mf, frame.mf.classes if frame.declared else None
        opening = self.opening(mf.n, mf.names, statement)
        return FELPResult.of(
            opening, self.options, plan, released, classes=classes, generator=noise.generator
        )

    def diagnostics(self, frame: FELPFrame, released: m.Release) -> dict:
        return m.diagnostics(frame.mf, released, frame.counts, frame.truth)
