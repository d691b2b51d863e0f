"""Front door of DP learning of a mixture of separated Gaussians: :func:`dp_gmm`.

After Kamath, Sheffet, Singhal & Ullman (2019): Phase I ("pca_cluster") and their
sample-and-aggregate reduction; what is implemented, and what is not (Phase II), is
:mod:`dpstats.methods.gmm.pipeline`.  The door reads the rows in memory, checks k and the
groups against n where n is public, and runs the method's plan and release.
"""

from __future__ import annotations

from typing import Unpack

from dataclasses import dataclass, replace

import numpy as np

from ..engines import InMemoryData
from ..privacy.bounds import Bounds
from .. import engines
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import Box
from ..methods import gmm as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.gmm import GMMResult
from ..simulate.assume import plug_in_only
from ..simulate.gmm import MixtureTruth, truth_diagnostics
from ..validation import check_delta
from .._progress import progress_bar
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, n_is_public, run


@front_door
def dp_gmm(
    formula: str,
    data: InMemoryData,
    k: int,
    eps: float,
    delta: float | None = None,
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    method: str = "pca_cluster",
    groups: int | None = None,
    alpha: float = 0.5,
    refine: int = 3,
    min_weight: float | None = None,
    var_floor: float = 1e-6,
    truth: MixtureTruth | np.ndarray | None = None,
    assume: str | None = None,
    oc_trials: int = 2000,
    progress: bool = False,
    **shared: Unpack[Shared],
) -> GMMResult:
    """Differentially private learning of a mixture of k separated Gaussians.

    Rows clipped to a public box are projected on a private PCA subspace; the components are located and
    estimated one at a time (Kamath, Sheffet, Singhal & Ullman 2019, Algorithm 1, with §6's sample and
    aggregate), giving released weights, means and covariances.

    Parameters
    ----------
    {one-sided formula}
    {data}
    k : int
        Number of components, 1 <= k <= n/10.  When n is private (``neighbouring="add_remove"``,
        or rows that may be dropped) k <= n/10 is not checked (the check would release whether
        n < 10k): it is a stated assumption, reported only in requested diagnostics.
    {eps, delta: Gaussian and pure-DP steps, so by Canonne, Kamath & Steinke 2020, Cor. 13}
        eps must be finite: unlike dp_lm, dp_glm and dp_pca, dp_gmm has no non-private reference at an
        infinite eps.  For one, fit a Gaussian mixture by EM on data you hold (R's ``mclust::Mclust``,
        scikit-learn's ``GaussianMixture``).
    bounds : (lo, hi) or dict
        Public box containing the data and the means (interactions: the product of their parts' bounds); rows
        are clipped to it and centred at its midpoint, and the released means clipped to it (post-processing;
        a near-empty component's noisy mean can fall outside).  Without bounds the data's min/max are used: a
        data-dependent step (NonPrivateWarning; refused under strict).  ``"auto"`` (or a
        :class:`dpstats.AutoBounds`): the box is released privately first (docs/architecture.md, "Private
        bounds").
    {bounds_eps and delta: the mixture}
    method : {"pca_cluster", "sample_aggregate"}
    groups : int, optional
        Number of groups m for sample-and-aggregate; default n / max(200, 25k(d+1)), which needs
        a public n: when n is private, declare it.  A group with fewer than k(d+1) rows contributes
        the released coarse fit in place of its EM fit.
    alpha : float in (0, 1)
        Clustering threshold: a located cell must hold alpha × (active rows) / (components left).
    refine : int
        Number of full-covariance estimation passes (private hard-EM steps), each on the most probable
        partition under the previous pass; they share one budget fraction.  More passes help components
        of different scales, fewer keep more budget per pass.
    min_weight : float, optional
        A released component with noisy weight below this has collapsed: the fit is flagged as failed
        (``result.collapsed`` lists such components, a :class:`~dpstats.errors.DataWarning` is raised
        and the summary says so; the budget was spent, so the noisy release is still returned); default
        1/(20k).
    var_floor : float
        Smallest eigenvalue of a released covariance (public).
    {schema parameters}
    {neighbouring}
    truth : MixtureTruth or array of labels, optional
        Simulation truth: adds non-private diagnostics (ARI, mean error); ``truth=`` implies
        ``diagnostics=True``.
    {diagnostics: rows dropped; with ``truth``, ARI and mean error}
    assume : "released", optional
        Only with ``assume="released"`` (the plug-in model: the released mixture is the truth) is a
        misclassification rate reported, from ``oc_trials`` draws of the released mixture, labelled
        "under the assumed model: ..." in every output.  Without it the operating characteristics hold
        the released weights, the mean-noise scale and the accuracy rate of the paper's Theorem 1.1 at
        this n, eps, delta (:func:`dpstats.methods.gmm.theorem_accuracy`); a :class:`~dpstats.errors.ChanceWarning`
        when it is infinite or the clustering cannot locate components (:func:`dpstats.methods.gmm.pre_spend_warnings`).
    {oc_trials}
    {run settings}

    {examples}
    >>> from dpstats.simulate import simulate_gmm
    >>> df, truth = simulate_gmm(6000, d=4, k=2, random_state=0)
    >>> fit = dp.dp_gmm("~ .", df, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
    >>> fit.weights.round(1).tolist()
    [0.5, 0.5]
    >>> fit.operating_characteristics.assumption is None
    True
    """
    m.refuse_infinite_eps(eps)
    given, settings, options = check_call(
        locals(), shared, m.GMMOptions, assume=plug_in_only(assume, "dp_gmm")
    )
    engines.require_rows(
        data,
        "dp_gmm",
        "clustering and per-component estimation visit each row",
        "run only the private PCA step from one pass: dpstats.dp_pca(formula, data, k, eps, delta, bounds=...)",
    )
    options, data = declare(given, options, settings)
    # the simulation truth is an input of the diagnostics, not of the call (like the data)
    return run(GMMDoor(options, data, call_of(dp_gmm, given, truth=None), progress), settings)


@dataclass
class GMMFrame:
    mf: ModelFrame
    options: m.GMMOptions  # resolved for the frame: k, min_weight, groups (m.resolve)
    box: Box
    n_public: bool = True
    warning: str | None = None  # the public rules before any spend (m.pre_spend_warnings)


@dataclass
class GMMDoor(DataDoor):
    """dp_gmm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.GMMOptions

    def frame(self, dd: DataDependence) -> GMMFrame:
        """The rows in memory, k and the groups checked against n where it is public, and the box.

        Under add/remove-one-row n is private: no number of rows is required (0, 1 or 2
        rows are released from the noise alone, :func:`dpstats.methods.gmm.release`), and
        no message or warning depends on it.
        """
        o = self.options
        min_rows = 0 if o.neighbouring == "add_remove" else 2  # n is private under add/remove
        mf = model_frame(
            o.formula, self.data, one_sided=True, drop_intercept=True, min_rows=min_rows, schema=self.schema
        )
        m.check_columns(mf.p, o.formula)
        # n is private under add/remove and when the schema may drop rows: a text quoting it would release it
        public_n = mf.n if n_is_public(o.neighbouring, mf) else None
        check_delta(o.delta, public_n, allow_zero=False)  # warns when delta >= 1/n (n public)
        resolved = m.resolve(o, mf, public_n)
        refuse_offset(mf, "dp_gmm")
        dd.name_frame_steps(mf)
        vacuous = m.pre_spend_warnings(public_n, mf.p, resolved, d_shown=not dd.columns_read)  # before spend
        box = m.clip_box(self.bounds, mf, dd)  # auto bounds: unspent delta back to self.options
        return GMMFrame(mf, replace(resolved, delta=self.options.delta), box, public_n is not None, vacuous)

    def plan(self, frame: GMMFrame, dd: DataDependence) -> m.GMMPlan:
        return m.plan(frame.options, frame.mf.p, box=frame.box, n_public=frame.n_public)

    def release(self, frame: GMMFrame, plan: m.GMMPlan, noise: NoiseSource) -> m.Released:
        shown = self.progress and plan.fit_method == "sample_aggregate"
        with progress_bar(shown, plan.groups, "group EM fits") as bar:
            return m.release(frame.mf.X, plan, noise, progress=bar.update)

    def result(
        self, frame: GMMFrame, plan: m.GMMPlan, released: m.Released, statement: PrivacyStatement, noise
    ) -> GMMResult:
        mf, o, gen = frame.mf, frame.options, noise.generator  # o: resolved for the frame (k, groups, ...)
        opening, public_n = self.opening(mf.n, mf.names, statement), mf.n if frame.n_public else None
        return GMMResult.of(
            opening, o, plan, released, mf=mf, public_n=public_n, warning=frame.warning, generator=gen
        )

    def diagnostics(self, frame: GMMFrame, released: m.Released) -> dict:
        return m.diagnostics(
            frame.mf, released, frame.options, frame.box.center, frame.n_public, truth_diagnostics
        )
