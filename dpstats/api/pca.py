"""Front door of private PCA from one pass of sufficient statistics, on any engine: :func:`dp_pca`.

The statistics, their release and the sensitivities: :mod:`dpstats.methods.pca`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Unpack

from ..engines import Data
from ..privacy.bounds import Bounds, declared_bounds, design_box
from ..formula import refuse_offset
from ..geometry import Box, range_box
from ..methods import pca as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..results.pca import PCAResult
from ..validation import check_delta, columns_read
from ._parameters import Shared
from ._common import DataDoor, call_of, check_call, declare, front_door, n_is_public, run


@front_door
def dp_pca(
    formula: str,
    data: Data,
    k: int,
    eps: float,
    delta: float | None = None,
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    radius: float | None = None,
    center: str = "mean",
    mean_share: float = m.MEAN_SHARE,
    progress: bool | None = None,
    **shared: Unpack[Shared],
) -> PCAResult:
    """Private principal components: the top-k eigenvectors of a privately released covariance matrix.

    Rows are clipped to the public box ``bounds`` and shrunk onto the l2 ball of radius C about its
    midpoint.  With ``center="mean"`` (default) their sums and second moments are released with Gaussian
    noise (zCDP; Analyze Gauss for the second moments), and the loadings are the top-k eigenvectors of
    the covariance about the released mean, its eigenvalues variances (R's ``prcomp(x)$sdev^2``); where
    n is private, a noisy count is released with the sums.  ``center="midpoint"``: the second moments
    about the box's midpoint alone, the private PCA step of :func:`dpstats.dp_gmm` (same noise for the
    same seed).  One pass computes every statistic, so streams, Dask and DuckDB work where ``dp_gmm``
    needs the rows.  Derivations: :mod:`dpstats.methods.pca`.

    Parameters
    ----------
    {one-sided formula}
    {data, streamed: the statistics then come from one chunked pass}
    k : int
        Dimension of the subspace, 1 <= k <= number of design columns.
    {eps, delta: all Gaussian, so exactly, Balle & Wang 2018}
        ``eps = math.inf``: the exact components (R's ``prcomp(x)``, the box holding every row), NOT private; delta may be omitted.
    bounds : (lo, hi) or dict
        Public box of the columns (an interaction's columns default to the product of its parts' bounds).
        Without it the data's min/max are used (a first pass; a data-dependent step: NonPrivateWarning,
        refused under strict).  ``"auto"`` (or a :class:`dpstats.AutoBounds`): the box released privately
        first, from ``bounds_eps`` (docs/architecture.md, "Private bounds"); in-memory data only.
    {bounds_eps and delta: the PCA}
    radius : float, optional
        Public clipping radius C; default the box's half-diagonal ‖h‖ (no row is
        shrunk).  A smaller C needs equal half-widths for every column (the
        engine shrinks rows in the box's unit coordinates).
    center : {"mean", "midpoint"}
        ``"mean"`` (default): components of the covariance about the privately released mean.
        ``"midpoint"``: of the second moments about the box's midpoint c (``prcomp(x, center = c)``).
    mean_share : float
        With ``center="mean"``: the share of the budget's ρ (zCDP) spent on the column sums, in (0, 1).
    {schema parameters}
    {neighbouring}
    {diagnostics: rows dropped, rows shrunk onto the ball}
    {run settings}

    {examples}
    >>> from dpstats.simulate import simulate_gmm
    >>> df, _ = simulate_gmm(4000, d=4, k=2, random_state=0)
    >>> fit = dp.dp_pca("~ .", df, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
    >>> fit.basis.shape, fit.center
    ((4, 2), 'mean')
    """
    given, settings, options = check_call(locals(), shared, m.PCAOptions)
    options, data = declare(given, options, settings, statistics=True, nonprivate="exact PCA, no noise")
    return run(PCADoor(options, data, call_of(dp_pca, given), progress), settings)


@dataclass
class PCAFrame:
    mf: Any
    stats: Any
    box: Box


@dataclass
class PCADoor(DataDoor):
    """dp_pca's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    options: m.PCAOptions

    def frame(self, dd: DataDependence) -> PCAFrame:
        """One pass for Σ xxᵀ of the clipped rows (two without bounds: the box is then the data's range)."""
        o = self.options
        data_box = self._data_box(dd) if o.bounds is None else None

        def boxes(mf):
            """Checks that need only the frame's names (run before the pass), then the box."""
            m.check_k(o.k, mf.p, shown=not columns_read(mf))
            declared = None if o.bounds is None else declared_bounds(o.bounds, mf, response=False)
            box = data_box or design_box(declared, mf)
            m.check_equal_widths(box, mf.names, o.radius)
            return box, None

        mf, stats = self._pass(boxes=boxes, gram=True, row_bound=m.row_bound(o.bounds, o.radius))
        refuse_offset(mf, "dp_pca")
        dd.name_frame_steps(mf)
        if not self.nonprivate:  # warns when delta >= 1/n, n public (replace one row, no rows dropped)
            check_delta(o.delta, mf.n if n_is_public(o.neighbouring, mf) else None, allow_zero=False)
        return PCAFrame(mf=mf, stats=stats, box=stats.boxes[0])

    def _data_box(self, dd: DataDependence) -> Box:
        if not self.nonprivate:  # a step that calibrates noise; at eps = inf there is none
            dd.add(
                "the box that clips and centres the rows is the data's per-column min and max (a first pass)",
                fix="declare public bounds, e.g. bounds=(-12, 12) or bounds={'x1': (0, 10), ...}",
            )
        _, st0 = self._pass(gram=False)
        return range_box(st0.cross.x_min, st0.cross.x_max)

    def _pass(self, **how: Any) -> tuple[Any, Any]:
        """One pass of the engine.  Under add/remove-one-row n is private: no number of rows is
        required (0, 1 or 2 rows give a Gram matrix like any other, released as noise alone)."""
        min_rows = 0 if self.options.neighbouring == "add_remove" else 2
        return self.one_pass(one_sided=True, min_rows=min_rows, **how)

    def plan(self, frame: PCAFrame, dd: DataDependence) -> m.PCAPlan:
        C = m.clip_radius(frame.box, self.options.radius)
        public = n_is_public(self.options.neighbouring, frame.mf)
        return m.plan(self.options, C, engine=getattr(frame.mf, "engine", "in-memory"), n_public=public)

    def release(self, frame: PCAFrame, plan: m.PCAPlan, noise: NoiseSource) -> m.PCARelease:
        st, box = frame.stats, frame.box
        return m.release(m.Moments(st.box_gram(box), st.box_sums(box), st.n, box), plan, noise)

    def result(self, frame: PCAFrame, plan: m.PCAPlan, released: m.PCARelease, statement, noise) -> PCAResult:
        opening = self.opening(frame.mf.n, frame.mf.names, statement)
        return PCAResult.of(opening, self.options, plan, released, frame.mf)

    def diagnostics(self, frame: PCAFrame, released: m.PCARelease) -> dict:
        return m.diagnostics(frame.mf, frame.stats)
