"""Front door of private PCA (Analyze Gauss) from sufficient statistics, on any engine.

The private PCA step of :func:`dpstats.dp_gmm` (Dwork, Talwar, Thakurta &
Zhang 2014; Kamath et al. 2019, Phase I) needs only Σ xxᵀ of the rows clipped
to a public box, centred at its midpoint and shrunk onto a ball of radius C.
That matrix is a sufficient statistic, so :func:`dp_pca` computes it in one
pass over in-memory, streamed (:func:`dpstats.engines.stream`) or Dask data
(:func:`dpstats.engines.on_dask`) and releases the top-k subspace of
Σ xxᵀ + E, E symmetric Gaussian, exactly as ``dp_gmm`` does
(:func:`dpstats.privacy.pca.private_pca_gram`); its plan and release are
:mod:`dpstats.methods.pca`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataError, PrivacyParameterError
from ..formula import refuse_offset
from ..geometry import Box, resolve_box
from ..methods import pca as m
from ..privacy.accountant import Accountant
from ..privacy.pca import PrivatePCA
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.pca import PCAResult
from ..validation import check_accountant, check_delta, check_eps, check_neighbouring, check_strict
from ..schema import Schema
from ._common import (
    Settings,
    declared_bounds,
    dummy_columns,
    frame_schema,
    is_auto,
    missing_rows_step,
    n_is_public,
    private_bounds_setup,
    run,
    schema_parameters,
)


@schema_parameters
def dp_pca(
    formula: str,
    data,
    k: int,
    eps: float,
    delta: float,
    *,
    bounds=None,
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
    (add/remove-one), ρ the zCDP budget with ρ + 2√(ρ log 1/δ) = eps (Bun &
    Steinke 2016, Prop. 1.3).  This is the private PCA step of
    :func:`dpstats.dp_gmm` (same noise for the same seed), computable from a
    stream or a Dask frame, where ``dp_gmm`` itself needs the rows.

    Parameters
    ----------
    formula : str
        One-sided formula, e.g. ``"~ ."`` or ``"~ x1 + x2"``.
    data : pandas.DataFrame, dpstats.engines.stream(...), Dask DataFrame or on_dask(...)
    k : int
        Dimension of the subspace, 1 <= k <= number of design columns.
    eps, delta : float
        Budget; delta > 0 (Gaussian noise).
    bounds : (lo, hi) or dict
        Public box of the columns.  Without it the data's min/max are used
        (a first pass; a data-dependent step: NonPrivateWarning, refused under strict).
        ``"auto"`` (or a :class:`dpstats.AutoBounds`): the box released privately first,
        from ``bounds_eps`` (docs/architecture.md, "Private bounds"); in-memory data only.
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the box (default 10% of ``eps``, and the
        same share of ``delta``); the PCA gets the rest.
    radius : float, optional
        Public clipping radius C; default the box's half-diagonal ‖h‖ (no row is
        shrunk).  A smaller C needs equal half-widths for every column (the
        engine shrinks rows in the box's unit coordinates).
    {schema parameters}
    neighbouring : {"replace", "add_remove"}
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, rows shrunk onto the
        ball).  Off by default: no output shows them unless asked.
    random_state, accountant, strict, progress
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    PCAResult

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
    from .. import engines

    eps = check_eps(eps)
    if isinstance(delta, numbers.Real) and not isinstance(delta, bool) and delta == 0:
        raise PrivacyParameterError(
            "dp_pca needs delta > 0: it adds Gaussian noise (zCDP). Use e.g. delta=1e-6."
        )
    delta = check_delta(delta, allow_zero=False)
    neighbouring = check_neighbouring(neighbouring)
    strict = check_strict(strict)
    accountant = check_accountant(accountant)
    if radius is not None and not (
        isinstance(radius, numbers.Real)
        and not isinstance(radius, bool)
        and math.isfinite(radius)
        and radius > 0
    ):
        raise PrivacyParameterError(
            f"radius must be a positive number (public clipping radius), got {radius!r}."
        )
    if accountant is not None:
        accountant.check(eps, delta)
    data = engines.as_data(data, formula, statistics=True, keep=[levels])
    if radius is not None and is_auto(bounds):
        raise PrivacyParameterError(
            'radius= needs declared bounds (the box sets the units of the ball); with bounds="auto" '
            "omit radius (C is then the released box's half-diagonal)."
        )
    bounds, eps, delta = private_bounds_setup(
        bounds, eps, delta, bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps)
    door = _PCA(
        schema=schema,
        formula=formula,
        data=data,
        k=k,
        eps=eps,
        delta=delta,
        bounds=bounds,
        radius=radius,
        neighbouring=neighbouring,
        progress=progress,
    )
    return run(
        door,
        Settings(strict=strict, random_state=random_state, accountant=accountant, diagnostics=diagnostics),
    )


@dataclass
class _Frame:
    mf: Any
    stats: Any
    box: Box
    radius: float
    engine: str


@dataclass
class _PCA:
    """dp_pca's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    k: Any
    eps: float
    delta: float
    bounds: Any
    radius: float | None
    neighbouring: str
    progress: bool | None
    schema: Schema | None = None
    label: str = "dp_pca"

    def frame(self, dd: DataDependence) -> _Frame:
        """One pass for Σ xxᵀ of the clipped rows (two without bounds: the box is then the data's range)."""
        from .. import engines

        data_box = self._data_box(dd) if self.bounds is None else None
        row_bound = _row_bound(self.bounds, self.radius)
        resolved: dict = {}

        def boxes(mf):
            """Checks that need only the frame's names (run before the pass), then the box."""
            _check_k(self.k, mf.p)
            box = (
                data_box
                if self.bounds is None
                else resolve_box(
                    declared_bounds(self.bounds, mf, response=False), mf.names, dummies=dummy_columns(mf)
                )
            )
            _check_equal_widths(box, mf, self.radius, row_bound)
            resolved["box"] = box
            return box, None

        mf, stats = engines.sufficient_statistics(
            self.formula,
            self.data,
            boxes=boxes,
            gram=True,
            one_sided=True,
            row_bound=row_bound,
            progress=self.progress,
            schema=self.schema,
        )
        refuse_offset(mf, "dp_pca")
        missing_rows_step(dd, mf)
        # warns when delta >= 1/n, where n is public (replace one row, no rows dropped by the schema)
        check_delta(self.delta, mf.n if n_is_public(self.neighbouring, mf) else None, allow_zero=False)
        box = resolved["box"]
        C = float(np.linalg.norm(box.halfwidth)) if self.radius is None else float(self.radius)
        return _Frame(mf=mf, stats=stats, box=box, radius=C, engine=getattr(mf, "engine", "memory"))

    def _data_box(self, dd: DataDependence) -> Box:
        from .. import engines

        dd.add(
            "the box that clips and centres the rows is the data's per-column min and max (a first pass)",
            fix="declare public bounds, e.g. bounds=(-12, 12) or bounds={'x1': (0, 10), ...}",
        )
        _, st0 = engines.sufficient_statistics(
            self.formula, self.data, gram=False, one_sided=True, progress=self.progress, schema=self.schema
        )
        lo, hi = st0.cross.x_min, st0.cross.x_max
        return Box(lo, np.where(hi > lo, hi, lo + 1.0))

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(
            k=self.k,
            eps=self.eps,
            delta=self.delta,
            neighbouring=self.neighbouring,
            radius=frame.radius,
            engine=getattr(frame.mf, "engine", "in-memory"),
        )

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> PrivatePCA:
        return m.release(
            frame.stats.box_gram(frame.box),
            self.k,
            frame.radius,
            self.eps,
            self.delta,
            self.neighbouring,
            noise,
        )

    def result(
        self, frame: _Frame, plan: Plan, released: PrivatePCA, statement: PrivacyStatement, noise: NoiseSource
    ) -> PCAResult:
        call = {
            "formula": self.formula,
            "k": int(self.k),
            "eps": self.eps,
            "delta": self.delta,
            "bounds": _bounds_call(self.bounds),
            "radius": self.radius,
            "neighbouring": None if self.neighbouring == "replace" else self.neighbouring,
        }
        return PCAResult(
            method="dp_pca",
            call=call,
            n=frame.mf.n,
            p=frame.mf.p,
            terms=list(frame.mf.names),
            privacy=statement,
            basis=released.basis,
            eigenvalues=released.eigenvalues,
            centre=frame.box.center,
            radius=frame.radius,
            noise_sd=released.noise_sd,
            engine=frame.engine,
        )

    def diagnostics(self, frame: _Frame, released: PrivatePCA) -> dict:
        return {
            "rows_dropped_for_missing_values": frame.mf.n_dropped,
            "values_filled_for_missing": frame.mf.n_filled,
            "rows_shrunk_onto_ball": frame.stats.n_rows_clipped,
        }


def _check_equal_widths(box: Box, mf, radius: float | None, row_bound: float | None) -> None:
    """A declared radius needs every design column to have the same half-width (the engine's unit ball)."""
    h = np.asarray(box.halfwidth, dtype=float)
    if row_bound is not None and not np.allclose(h, h[0], rtol=1e-12, atol=0.0):
        raise PrivacyParameterError(
            f"radius = {radius:g} needs every design column to have bounds of the same width, but "
            f"{[mf.names[j] for j in np.flatnonzero(h != h[0])][:3]} differ (0/1 dummies are bounded "
            "by (0, 1)); declare equal-width bounds or omit radius (then C = the box's half-diagonal)."
        )


def _check_k(k, d: int) -> None:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= d:
        raise DataError(
            f"k must be a whole number with 1 <= k <= {d} (the number of design columns), got {k!r}."
        )


def _row_bound(bounds, radius: float | None) -> float | None:
    """The engine's row bound C/h in the box's unit coordinates (all half-widths h equal).

    The pass maps each column by (x − c)/h, so a row of norm C in original
    units has norm C/h there when every column has half-width h.
    """
    if radius is None:
        return None  # C = ‖h‖: rows clipped to the box already lie in the ball
    if bounds is None:
        raise PrivacyParameterError(
            "radius= needs declared bounds (the box sets the units of the ball); "
            "give bounds=(lo, hi) or omit radius."
        )
    pairs = list(bounds.values()) if isinstance(bounds, dict) else [bounds]
    widths = {float(hi) - float(lo) for lo, hi in pairs}
    if len(widths) != 1 or not next(iter(widths)) > 0:
        raise PrivacyParameterError(
            f"radius = {radius:g} needs bounds of the same positive width for every column, got widths "
            f"{sorted(widths)}; declare equal-width bounds, e.g. bounds=(-12, 12), or omit radius."
        )
    return float(radius) / (widths.pop() / 2.0)


def _bounds_call(bounds: Any) -> Any:
    """The ``bounds`` argument as the call record shows it (``"auto"`` for private bounds)."""
    if bounds is None or is_auto(bounds):
        return None if bounds is None else "auto"
    return dict(bounds) if isinstance(bounds, dict) else list(bounds)
