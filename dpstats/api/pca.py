"""Front door of private PCA (Analyze Gauss) from sufficient statistics, on any engine: :func:`dp_pca`.

Σ xxᵀ of the rows clipped to a public box, centred at its midpoint and shrunk onto a ball
of radius C, is a sufficient statistic: one pass of any engine (in memory,
:func:`dpstats.engines.stream`, Dask) computes it, and the private PCA step of
:func:`dpstats.dp_gmm` releases its top-k subspace; plan and release: :mod:`dpstats.methods.pca`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engines import Data
from ..privacy.bounds import Bounds
from ..formula import missing_counts, refuse_offset
from ..geometry import Box, range_box
from ..methods import pca as m
from ..privacy.accountant import Accountant
from ..privacy.bounds import declared_bounds, design_box
from ..privacy.pca import PrivatePCA
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.pca import PCAResult
from ..validation import check_delta
from ._common import DataDoor, Settings, call_of, declare, door_docstring, n_is_public, run


@door_docstring
def dp_pca(  # noqa: PLR0913 (the public signature: the R function's argument list)
    formula: str,
    data: Data,
    k: int,
    eps: float,
    delta: float,
    *,
    bounds: Bounds = None,
    bounds_eps: float | None = None,
    radius: float | None = None,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    diagnostics: bool = False,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool | None = None,
) -> PCAResult:
    """Private top-k principal subspace (Analyze Gauss), from one pass over any data source.

    Rows are clipped to the public box ``bounds``, centred at its midpoint and
    shrunk onto the l2 ball of radius C; the top-k eigenvectors of
    Σ xxᵀ + E are released, E symmetric with iid N(0, σ²) entries on and above
    the diagonal, σ = Δ_F/√(2ρ), Δ_F = √2·C² (replace-one) or C²
    (add/remove-one), ρ = μ²/2 for the largest μ whose Gaussian is (eps, delta)-DP
    exactly (Balle & Wang 2018).  This is the private PCA step of
    :func:`dpstats.dp_gmm` (the same mechanism; dp_gmm gives it a share of its ρ),
    computable from a stream or a Dask frame, where ``dp_gmm`` itself needs the rows.

    Parameters
    ----------
    {one-sided formula}
    {data, streamed: the statistics then come from one chunked pass}
    k : int
        Dimension of the subspace, 1 <= k <= number of design columns.
    {eps, delta: one Gaussian mechanism, so exactly: the largest ρ = μ²/2 whose Gaussian is
        (eps, delta)-DP, Balle & Wang 2018}
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
    {schema parameters}
    {neighbouring}
    {diagnostics: rows dropped, rows shrunk onto the ball}
    {run settings}

    Examples
    --------
    >>> import dpstats as dp
    >>> from dpstats.api.pca import dp_pca
    >>> from dpstats.simulate import simulate_gmm
    >>> df, _ = simulate_gmm(4000, d=4, k=2, random_state=0)
    >>> fit = dp_pca("~ .", df, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
    >>> fit.basis.shape
    (4, 2)
    """
    given = locals()
    settings = Settings.check(given)
    options = m.PCAOptions.check(given)
    options, data = declare(given, options, settings, statistics=True)
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
    progress: bool | None = None
    label: str = "dp_pca"

    def frame(self, dd: DataDependence) -> PCAFrame:
        """One pass for Σ xxᵀ of the clipped rows (two without bounds: the box is then the data's range)."""
        o = self.options
        data_box = self._data_box(dd) if o.bounds is None else None

        def boxes(mf):
            """Checks that need only the frame's names (run before the pass), then the box."""
            m.check_k(o.k, mf.p)
            declared = None if o.bounds is None else declared_bounds(o.bounds, mf, response=False)
            box = data_box or design_box(declared, mf)
            m.check_equal_widths(box, mf.names, o.radius)
            return box, None

        mf, stats = self._pass(boxes=boxes, gram=True, row_bound=m.row_bound(o.bounds, o.radius))
        refuse_offset(mf, "dp_pca")
        dd.name_frame_steps(mf)
        # warns when delta >= 1/n, where n is public (replace one row, no rows dropped by the schema)
        check_delta(o.delta, mf.n if n_is_public(o.neighbouring, mf) else None, allow_zero=False)
        return PCAFrame(mf=mf, stats=stats, box=stats.boxes[0])

    def _data_box(self, dd: DataDependence) -> Box:
        dd.add(
            "the box that clips and centres the rows is the data's per-column min and max (a first pass)",
            fix="declare public bounds, e.g. bounds=(-12, 12) or bounds={'x1': (0, 10), ...}",
        )
        _, st0 = self._pass(gram=False)
        return range_box(st0.cross.x_min, st0.cross.x_max)

    def _pass(self, **how: Any) -> tuple[Any, Any]:
        """One pass of the engine.  Under add/remove-one-row n is private: no number of rows is
        required (0, 1 or 2 rows give a Gram matrix like any other, released as noise alone)."""
        from .. import engines

        o = self.options
        min_rows = 0 if o.neighbouring == "add_remove" else 2
        return engines.sufficient_statistics(
            o.formula,
            self.data,
            one_sided=True,
            min_rows=min_rows,
            progress=self.progress,
            schema=self.schema,
            **how,
        )

    def plan(self, frame: PCAFrame, dd: DataDependence) -> m.PCAPlan:
        C = m.clip_radius(frame.box, self.options.radius)
        return m.plan(self.options, C, engine=getattr(frame.mf, "engine", "in-memory"))

    def release(self, frame: PCAFrame, plan: m.PCAPlan, noise: NoiseSource) -> PrivatePCA:
        return m.release(frame.stats.box_gram(frame.box), plan, noise)

    def result(
        self,
        frame: PCAFrame,
        plan: m.PCAPlan,
        released: PrivatePCA,
        statement: PrivacyStatement,
        noise: NoiseSource,
    ) -> PCAResult:
        return PCAResult(
            **self.opening(frame.mf.n, frame.mf.names, statement),
            basis=released.basis,
            eigenvalues=released.eigenvalues,
            centre=frame.box.center,
            radius=plan.radius,
            noise_sd=released.noise_sd,
            engine=getattr(frame.mf, "engine", "memory"),
        )

    def diagnostics(self, frame: PCAFrame, released: PrivatePCA) -> dict:
        return {
            **missing_counts(frame.mf),
            "rows_shrunk_onto_ball": frame.stats.n_rows_clipped,
        }
