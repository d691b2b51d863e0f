"""Front door of DP learning of a mixture of separated Gaussians (docs/architecture.md, "Layers").

After Kamath, Sheffet, Singhal & Ullman (2019).  What is implemented:

* ``method="pca_cluster"`` — Phase I ("easy case"): private clipping radius,
  private PCA (Analyze Gauss), private clustering in the projected space
  (k rounds of grid-based locate-one-cluster with AboveThreshold and the
  exponential mechanism), private per-component estimation (two passes:
  spherical on the Voronoi partition, full covariance on the most-probable
  partition of the first pass).
* ``method="sample_aggregate"`` — §6: EM on m disjoint groups (non-private,
  scikit-learn), aligned to a coarse Phase I fit, averaged with noise after
  clipping to a private radius.

Not implemented: Phase II, the recursive "terrific ball" split for components
of very different scales.  In its place, components of different scales are
handled by partitioning with each located cluster's scale and by ``refine``
private hard-EM passes (shown for scales 0.25/1/4 with axis ratio 8 in
``benchmarks/bench_gmm.py``); mixtures whose components overlap in the
private PCA plane, or differ in scale by much more, are outside what is shown
to work here.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import AssumptionError, DataError, DataWarning, PrivacyParameterError, caller_stacklevel
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import Box, resolve_box
from ..methods import gmm as m
from ..methods.gmm.model import map_assign
from ..simulate.gmm import MixtureTruth
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.gmm import GMMResult, mixture_oc
from ..simulate import Assume
from ..validation import (
    check_accountant,
    check_delta,
    check_eps,
    check_fraction,
    check_neighbouring,
    check_oc_trials,
    check_strict,
)
from ..schema import Schema
from ._common import (
    Settings,
    call_record,
    declared_bounds,
    dummy_columns,
    frame_schema,
    missing_rows_step,
    n_is_public,
    private_bounds_setup,
    progress_bar,
    refuse_omit,
    run,
    schema_parameters,
)

METHODS = ("pca_cluster", "sample_aggregate")


@schema_parameters
def dp_gmm(
    formula: str,
    data: pd.DataFrame,
    k: int,
    eps: float,
    delta: float,
    *,
    bounds=None,
    bounds_eps: float | None = None,
    method: str = "pca_cluster",
    groups: int | None = None,
    alpha: float = 0.5,
    refine: int = 3,
    min_weight: float | None = None,
    var_floor: float = 1e-6,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    truth: MixtureTruth | np.ndarray | None = None,
    diagnostics: bool = False,
    assume: str | None = None,
    oc_trials: int = 2000,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
) -> GMMResult:
    """Differentially private learning of a mixture of k separated Gaussians.

    Parameters
    ----------
    formula : str
        One-sided formula: ``"~ ."`` (all columns) or ``"~ x1 + x2"``.
    data : pandas.DataFrame
    k : int
        Number of components, 1 <= k <= n/10.  When n is private (``neighbouring="add_remove"``,
        or rows that may be dropped) k <= n/10 is not checked (the check would release whether
        n < 10k): it is a stated assumption, reported only in requested diagnostics.
    eps, delta : float
        Privacy budget; delta must be > 0 (Gaussian noise, accounted in zCDP
        and converted once: ρ-zCDP ⇒ (ρ + 2√(ρ log 1/δ), δ)-DP).
    bounds : (lo, hi) or dict
        Public box containing the data (and the means); rows are clipped to it
        and centred at its midpoint.  Without bounds the data's min/max are
        used: a data-dependent step (NonPrivateWarning; refused under strict).
        ``"auto"`` (or a :class:`dpstats.AutoBounds`): the box is released
        privately first (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the box (default 10% of eps,
        and 10% of delta); the mixture gets the rest.
    method : {"pca_cluster", "sample_aggregate"}
    groups : int, optional
        Number of groups m for sample-and-aggregate; default n / max(200, 25k(d+1)), which needs
        a public n: when n is private, declare it.  A group with fewer than k(d+1) rows contributes
        the released coarse fit in place of its EM fit.
    alpha : float in (0, 1)
        Clustering threshold: a located cell must hold alpha × (active rows) /
        (components left).
    refine : int
        Number of full-covariance estimation passes (private hard-EM steps),
        each on the most probable partition under the previous pass; they
        share one budget fraction.  More passes help components of different
        scales, fewer keep more budget per pass.
    min_weight : float, optional
        A released component with noisy weight below this has collapsed: the
        fit is flagged as failed (``result.collapsed`` lists such components,
        a :class:`~dpstats.errors.DataWarning` is raised and the summary says
        so; the budget was spent, so the noisy release is still returned);
        default 1/(20k).
    var_floor : float
        Smallest eigenvalue of a released covariance (public).
    {schema parameters}
    neighbouring : {"replace", "add_remove"}
    truth : MixtureTruth or array of labels, optional
        Simulation truth: adds non-private diagnostics (ARI, mean error).
    diagnostics : bool
        Attach non-private diagnostics (rows dropped; with truth, ARI and mean error).  Off by default: they are
        not private and no output shows them unless asked (``truth=`` implies it).
    assume : "released", optional
        Only with ``assume="released"`` (the plug-in model: the released mixture
        is the truth) is a misclassification rate reported, from ``oc_trials``
        draws of the released mixture, labelled "under the assumed model: ..."
        in every output.  Without it the operating characteristics hold the
        released weights, the mean-noise scale and the accuracy rate of the
        paper's Theorem 1.1 at this n, eps, delta
        (:func:`dpstats.results.gmm.theorem_accuracy`).
    oc_trials : int
        Draws for the ``assume="released"`` simulation; 0 leaves out the
        operating characteristics altogether.
    random_state, accountant, strict, progress
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    GMMResult

    Examples
    --------
    >>> import dpstats as dp
    >>> from dpstats.simulate import simulate_gmm
    >>> df, truth = simulate_gmm(6000, d=4, k=2, random_state=0)
    >>> fit = dp.dp_gmm("~ .", df, k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
    >>> fit.weights.round(1).tolist()
    [0.5, 0.5]
    >>> fit.operating_characteristics.assumption is None
    True
    """
    eps = check_eps(eps)
    if isinstance(delta, numbers.Real) and not isinstance(delta, bool) and delta == 0:
        raise PrivacyParameterError(
            "dp_gmm needs delta > 0: its steps add Gaussian noise and are accounted in zCDP. "
            "Use a small delta such as 1e-6 (much smaller than 1/n)."
        )
    neighbouring = check_neighbouring(neighbouring)
    strict = check_strict(strict)
    accountant = check_accountant(accountant)
    if method not in METHODS:
        raise PrivacyParameterError(f"method must be one of {list(METHODS)}, got {method!r}.")
    alpha = check_fraction(alpha, "alpha", 0.0, 1.0, low_open=True)
    if isinstance(refine, bool) or not isinstance(refine, numbers.Integral) or not 1 <= refine <= 10:
        raise PrivacyParameterError(f"refine must be a whole number of passes from 1 to 10, got {refine!r}.")
    if not (isinstance(var_floor, numbers.Real) and var_floor > 0 and math.isfinite(var_floor)):
        raise PrivacyParameterError(f"var_floor must be a positive number, got {var_floor!r}.")
    delta = check_delta(delta, allow_zero=False)
    assume = Assume.coerce(assume, released=True)
    if isinstance(assume, Assume):
        raise PrivacyParameterError("dp_gmm simulates only the plug-in model: use assume='released'.")
    oc_trials = check_oc_trials(oc_trials, assume)
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, keep=[levels])
    _refuse_engine_input(data)
    if accountant is not None:
        accountant.check(eps, delta)  # refuse before touching the data
    bounds, eps, delta = private_bounds_setup(
        bounds, eps, delta, bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps)
    if neighbouring == "replace" and schema.private:
        refuse_omit(
            schema,
            "dp_gmm under neighbouring='replace'",
            "the thresholds of its clipping radius (98% of n) and first clustering round take n as public",
            add_remove="n is then estimated privately; give groups= for sample_aggregate",
        )
    door = _GMM(
        schema=schema,
        formula=formula,
        data=data,
        k=k,
        eps=eps,
        delta=delta,
        bounds=bounds,
        method=method,
        groups=groups,
        alpha=alpha,
        refine=refine,
        min_weight=min_weight,
        var_floor=var_floor,
        neighbouring=neighbouring,
        truth=truth,
        assume=assume,
        oc_trials=oc_trials,
        strict=strict,
        progress=progress,
    )
    return run(
        door,
        Settings(
            strict=strict,
            random_state=random_state,
            accountant=accountant,
            diagnostics=diagnostics or truth is not None,
        ),
    )


@dataclass
class _Frame:
    mf: ModelFrame
    k: int
    min_weight: float
    groups: int | None
    box: Box
    n_public: bool = True


@dataclass
class _GMM:
    """dp_gmm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    k: Any
    eps: float
    delta: float
    bounds: Any
    method: str
    groups: Any
    alpha: float
    refine: int
    min_weight: Any
    var_floor: float
    neighbouring: str
    truth: Any
    assume: Any
    oc_trials: int
    strict: bool
    progress: bool
    schema: Schema | None = None
    label: str = "dp_gmm"

    def frame(self, dd: DataDependence) -> _Frame:
        mf = model_frame(self.formula, self.data, one_sided=True, drop_intercept=True, schema=self.schema)
        n, d = mf.n, mf.p
        if d == 0:  # the formula's columns (public), before any charge: a mixture needs a variable
            raise DataError(
                f"the formula '{self.formula}' gives no columns to model; dp_gmm needs at least one "
                "numeric column, e.g. '~ .' or '~ x1 + x2'."
            )
        # n is private under add/remove and when the schema may drop rows: a warning or an error
        # that quoted it would release it
        public_n = n if n_is_public(self.neighbouring, mf) else None
        check_delta(self.delta, public_n, allow_zero=False)  # warns when delta >= 1/n (n public)
        k = _check_k(self.k, n, public_n)
        min_weight = check_fraction(
            1.0 / (20 * k) if self.min_weight is None else self.min_weight, "min_weight", 0.0, 1.0
        )
        groups = _check_groups(self.groups, self.method, n, k, d, public_n)
        refuse_offset(mf, "dp_gmm")
        missing_rows_step(dd, mf)
        box = _box(self.bounds, mf, dd)
        return _Frame(
            mf=mf, k=k, min_weight=min_weight, groups=groups, box=box, n_public=public_n is not None
        )

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        plan = m.plan(
            eps=self.eps,
            delta=self.delta,
            method=self.method,
            k=frame.k,
            d=frame.mf.p,
            neighbouring=self.neighbouring,
            refine=self.refine,
        )
        if not frame.n_public:  # decided by the relation and the schema, never by the rows
            plan.assumptions = [*plan.assumptions, ROWS_PER_COMPONENT]
        return plan

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> m.Released:
        with progress_bar(
            self.progress and self.method == "sample_aggregate", frame.groups, "group EM fits"
        ) as progress:
            return m.release(
                frame.mf.X,
                frame.box,
                plan,
                k=frame.k,
                method=self.method,
                groups=frame.groups,
                alpha=self.alpha,
                var_floor=self.var_floor,
                noise=noise,
                progress=progress,
            )

    def result(
        self, frame: _Frame, plan: Plan, released: m.Released, statement: PrivacyStatement, noise: NoiseSource
    ) -> GMMResult:
        mf, p1, comps, centre = frame.mf, released.phase_one, released.components, frame.box.center
        result = GMMResult(
            method="dp_gmm",
            call=_call(
                self.formula,
                frame.k,
                self.eps,
                self.delta,
                self.bounds,
                self.method,
                self.neighbouring,
                self.strict,
                self.groups,
                self.refine,
            ),
            n=mf.n,
            p=mf.p,
            terms=list(mf.names),
            privacy=statement,
            formula=self.formula,
            k=frame.k,
            fit_method=self.method,
            weights=comps.weights,
            means=comps.means + centre,
            covariances=comps.covariances,
            centre=centre,
            basis=p1.pca.basis if p1.pca is not None else None,
            clip_radius=p1.clip_radius,
            located_sides=[loc.side for loc in p1.located],
            mean_noise_sd=comps.mean_noise_sd,
            groups=frame.groups,
        )
        collapsed = _collapsed(comps, frame.min_weight)
        if collapsed:
            result.collapsed = [j + 1 for j in collapsed]
            message = _collapse_message(comps, collapsed, frame.min_weight)
            result.warnings.append(message)
            warnings.warn(message, DataWarning, stacklevel=caller_stacklevel())
        result.operating_characteristics = mixture_oc(result, self.oc_trials, noise.generator, self.assume)
        return result

    def diagnostics(self, frame: _Frame, released: m.Released) -> dict:
        comps = released.components
        labels = map_assign(frame.mf.X, comps.weights, comps.means + frame.box.center, comps.covariances) + 1
        diag = _diagnostics(self.truth, labels, comps.means + frame.box.center, frame.mf)
        if not frame.n_public:  # the assumption stated instead of a check (not private)
            n, k, d = frame.mf.n, frame.k, frame.mf.p
            holds = n >= 10 * k
            if frame.groups is not None:
                holds = holds and n // frame.groups >= 5 * k * (d + 1)
            diag["rows_per_component_assumption_holds"] = bool(holds)
        return diag


def _refuse_engine_input(data) -> None:
    """Streamed and Dask data: clustering needs the rows; the private PCA step alone does not."""
    from .. import engines

    if engines.is_engine_input(data):
        raise DataError(
            f"dp_gmm needs the rows in memory (clustering and per-component estimation visit each row), but data "
            f"is a {type(data).__name__} read by the streaming/Dask engine, which keeps only sufficient "
            "statistics. Load the data into a pandas DataFrame (a random subsample if it does not fit), or run "
            "only the private PCA step from one pass: dpstats.api.pca.dp_pca(formula, data, k, eps, delta, "
            "bounds=...)."
        )


def _check_k(k, n: int, public_n: int | None) -> int:
    """1 <= k (public); k <= n/10 is checked only when n is public (``public_n``).

    When n is private (add/remove-one-row, or rows that may be dropped) a check of k
    against n would release whether n < 10k: "at least 10 rows per component" is then a
    declared assumption (stated in every such call's privacy statement, see
    :data:`ROWS_PER_COMPONENT`), a violation is reported only in requested diagnostics, and
    the method runs on whatever rows there are (a component with few rows gets a small
    noisy weight and may be flagged as collapsed from its released weight).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise DataError(f"k must be a whole number of components with 1 <= k <= n/10, got {k!r}.")
    k = int(k)
    if k < 1 or (public_n is not None and k > public_n / 10):
        limit = f" = {public_n / 10:g}" if public_n is not None else ""
        raise DataError(
            f"k = {k} is out of range: dp_gmm needs 1 <= k <= n/10{limit} (at least "
            "10 rows per component). Choose a smaller k or use more rows."
        )
    return k


#: the assumption stated when n is private (it is checked on the public n otherwise)
ROWS_PER_COMPONENT = (
    "at least 10 rows per component (k <= n/10) and, for sample_aggregate, at least 5·k·(d+1) rows "
    "per group: assumed, not checked, because the number of rows is private here (a check would "
    "release it); a violation is reported only in requested diagnostics (not private)"
)


def _check_groups(groups, method: str, n: int, k: int, d: int, public_n: int | None) -> int | None:
    """The number of groups of sample-and-aggregate, checked against n only when n is public.

    When n is private the default (derived from n) is not available: ``groups=`` must be
    declared; only ``groups >= 10`` is checked, and the group size is an assumption
    (:data:`ROWS_PER_COMPONENT`); the method handles a small group by construction
    (:func:`dpstats.methods.gmm.pipeline.sample_aggregate`).
    """
    if method != "sample_aggregate":
        if groups is not None:
            raise PrivacyParameterError("groups= is only used with method='sample_aggregate'.")
        return None
    if groups is None and public_n is None:
        raise PrivacyParameterError(
            "sample_aggregate with a private number of rows (neighbouring='add_remove', or rows that "
            "may be dropped) needs groups= declared: its default is derived from n. Give groups= "
            "(at least 10, each group holding about 5·k·(d+1) rows or more), or use method='pca_cluster'."
        )
    m_groups = m.default_groups(n, k, d) if groups is None else groups
    if isinstance(m_groups, bool) or not isinstance(m_groups, numbers.Integral):
        raise PrivacyParameterError(f"groups must be a whole number, got {groups!r}.")
    m_groups = int(m_groups)
    if m_groups < 10 or (public_n is not None and public_n // m_groups < 5 * k * (d + 1)):
        shown = f"n = {public_n} with groups = {m_groups}" if public_n is not None else f"groups = {m_groups}"
        raise AssumptionError(
            f"sample_aggregate needs at least 10 groups of at least 5·k·(d+1) = {5 * k * (d + 1)} rows; "
            f"{shown} does not allow that. Use method='pca_cluster' or more rows."
        )
    return m_groups


def _box(bounds, mf, dd: DataDependence) -> Box:
    if bounds is None:
        dd.add(
            "the box that clips and centres the rows is the data's per-column min and max",
            fix="declare public bounds, e.g. bounds=(-12, 12) or bounds={'x1': (0, 10), ...}",
        )
        lo, hi = mf.X.min(axis=0), mf.X.max(axis=0)
        return Box(lo, np.where(hi > lo, hi, lo + 1.0))
    return resolve_box(declared_bounds(bounds, mf), mf.names, dummies=dummy_columns(mf))


def _collapsed(comps, min_weight: float) -> list[int]:
    return [int(j) for j in np.flatnonzero(comps.weights < min_weight)]


def _collapse_message(comps, collapsed: list[int], min_weight: float) -> str:
    return (
        f"FIT FAILED: component(s) {', '.join(str(j + 1) for j in collapsed)} collapsed (noisy weight "
        f"{', '.join(f'{comps.weights[j]:.3g}' for j in collapsed)} < min_weight = {min_weight:.3g}); "
        "the released mixture should not be used as a k-component fit. The budget of this call was "
        "spent. Likely causes: k larger than the number of separated components, components that "
        "overlap, or a budget too small for n. Try a smaller k, a larger eps, or lower min_weight if "
        "small components are expected."
    )


def _diagnostics(truth, predicted: np.ndarray, means: np.ndarray, mf: ModelFrame) -> dict:
    """Rows dropped; with ``truth``, the ARI of the released mixture's assignments and the mean error."""
    diag = {"rows_dropped_for_missing_values": mf.n_dropped, "values_filled_for_missing": mf.n_filled}
    if truth is None:
        return diag
    from scipy.optimize import linear_sum_assignment
    from sklearn.metrics import adjusted_rand_score

    labels = truth.labels if isinstance(truth, MixtureTruth) else np.asarray(truth)
    if labels.shape != (mf.n,):
        raise DataError(  # the number of rows used is not shown: it is private when rows may be dropped
            "truth must give one label per row the fit used (a 1-d array); its length does not match."
        )
    diag["ari_vs_truth"] = float(adjusted_rand_score(labels, predicted))
    if isinstance(truth, MixtureTruth) and truth.means.shape == means.shape:
        cost = ((means[:, None] - truth.means[None]) ** 2).sum(-1)
        rows, cols = linear_sum_assignment(cost)
        sd = np.sqrt([np.linalg.eigvalsh(truth.covariances[c]).max() for c in cols])
        diag["mean_error_sigma_units"] = float(np.mean(np.sqrt(cost[rows, cols]) / sd))
    return diag


def _call(formula, k, eps, delta, bounds, method, neighbouring, strict, groups=None, refine=3) -> dict:
    return call_record(
        {"formula": formula, "k": k, "eps": eps, "delta": delta},
        {
            "bounds": (bounds, None),
            "method": (method, "pca_cluster"),
            "groups": (groups, None),
            "refine": (refine, 3),
            "neighbouring": (neighbouring, "replace"),
            "strict": (strict, False),
        },
    )
