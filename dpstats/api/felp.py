"""Front door of DP ensemble feature weighting by local learning (FELP; docs/architecture.md, "Layers")."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import Box, resolve_box
from ..methods import felp as m
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import BASIS_ASSUMED, BASIS_RELEASED, OperatingCharacteristics
from ..results.felp import FELPResult
from ..simulate import Assume, describe
from ..validation import (
    check_accountant,
    check_eps,
    check_fraction,
    check_neighbouring,
    check_oc_trials,
    check_strict,
    check_truth,
)
from ..schema import Schema
from ._common import (
    Settings,
    call_record,
    declared_bounds,
    frame_schema,
    missing_rows_step,
    private_bounds_setup,
    progress_bar,
    refuse_omit,
    run,
    schema_parameters,
)

LAM_GRID = (0.01, 0.1, 1.0, 10.0)


@schema_parameters
def dp_felp(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    lam: float | str | None = None,
    n_estimators: int = 20,
    sample_ratio: float = 0.9,
    select: int | None = None,
    variant: str = "strict",
    *,
    bounds=None,
    bounds_eps: float | None = None,
    clip_norm: float | None = None,
    n_neighbors: int = m.N_NEIGHBORS,
    tol: float = m.TOL,
    max_iter: int = m.MAX_ITER,
    lam_grid: Sequence[float] = LAM_GRID,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    truth: Sequence[str] | None = None,
    diagnostics: bool = False,
    assume: str | None = None,
    oc_trials: int = 200,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
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
      disjoint subsets, each learner's weights clipped to ℓ2 norm C (default
      √(log 2/λ), which the exact minimiser never exceeds).  Replacing one
      row changes one subset, so the average moves by at most Δ = 2C/k,
      whatever the learner does: a valid eps-DP guarantee, paid for with more
      noise than the paper states.
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
        ``"class ~ ."``; the response is read as a factor (two or more
        classes).  Features must be numeric.  With the response's levels declared
        (``levels=``, a categorical dtype) no class count is checked: a class that is rare
        or absent in a subset gives its rows no nearest hit (or the subset's rows no nearest
        miss); such rows have no margin vector and are left out, and a learner left with
        none returns w = 0.  Levels read from the rows are checked (a named step).
    data : pandas.DataFrame
    eps : float
        Privacy budget; ``math.inf`` gives the non-private ensemble (a
        reference, with a :class:`~dpstats.errors.NonPrivateWarning`).
    lam : float or "cv", optional
        Ridge parameter λ > 0.  Default: the fixed public value 1.0.  ``"cv"``
        tunes λ over ``lam_grid`` by 5-fold cross-validation (3-NN accuracy
        on the top ``select`` features) on the private data: a data-dependent
        step, listed as not covered and refused under ``strict=True``.
    lam_grid : sequence of float
        The candidate λ values of ``lam="cv"`` (public; default ``LAM_GRID``).
    n_estimators : int
        Number k of learners (paper: 20).
    sample_ratio : float in (0, 1]
        β: each bootstrap sample has ⌈βn⌉ rows (paper: 0.9; ``"paper"`` only).
    select : int, optional
        Number of features to select (default: 10% of d, at least 1).
    variant : {"strict", "paper"}
        ``"strict"`` (default) for a release; ``"paper"`` reproduces the
        paper and its stated eps is refuted (see above).
    bounds : (lo, hi) or dict, optional
        Public bounds of the features, mapped onto [0, 1] (clipped) and
        divided by √d so that ‖z_i‖₂ <= 1.  Without bounds, the data minima
        and maxima are used: a data-dependent step.  ``"auto"`` (or a
        :class:`dpstats.AutoBounds`): the feature box is released privately
        first (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the box (default 10% of eps).
    clip_norm : float, optional
        C of the strict variant.
    n_neighbors, tol, max_iter
        Logo's neighbourhood size K, tolerance and iteration cap.
    {schema parameters}
    neighbouring : {"replace"}
        Only replace-one-row is supported: both sensitivities use a public n.
    truth : list of str, optional
        Relevant features (simulations): adds non-private diagnostics.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, values clipped, class counts, learner convergence, the
        non-private selection).  Off by default: they are
        not private and no output shows them unless asked (``truth=`` implies it).
    assume : "released", optional
        Only with ``assume="released"`` (the plug-in model: the released weights
        are the true weights) is the selection stability reported: the share of
        the top set kept under fresh noise of the same scale, labelled "under
        the assumed model: ..." in every output.  Without it the operating
        characteristics hold the exact noise s.d. per weight and the spread of
        the released weights.
    oc_trials : int
        Trials of the ``assume="released"`` simulation; 0 leaves out the
        operating characteristics altogether.
    random_state, accountant, strict, progress
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    FELPResult

    Examples
    --------
    >>> import dpstats as dp
    >>> from dpstats.simulate import planted
    >>> df = planted(n=100, d=30, s=3, shift=2.0, random_state=0)
    >>> fit = dp.dp_felp("class ~ .", df, eps=1.0, n_estimators=5, bounds=(-6, 6), variant="strict",
    ...                  random_state=1)
    >>> len(fit.selected)
    3
    >>> fit.operating_characteristics.assumption is None
    True
    """
    eps = check_eps(eps, allow_inf=True)
    strict = check_strict(strict)
    neighbouring = check_neighbouring(neighbouring, supported=("replace",))
    accountant = check_accountant(accountant)
    if not isinstance(variant, str) or variant not in m.VARIANTS:
        raise PrivacyParameterError(
            f"variant must be one of {list(m.VARIANTS)} (default 'strict'), got {variant!r}."
        )
    lam_value, lam_source = _check_lam(lam, lam_grid)
    n_estimators = _check_int(n_estimators, "n_estimators", 1)
    n_neighbors = _check_int(n_neighbors, "n_neighbors", 1)
    max_iter = _check_int(max_iter, "max_iter", 1)
    assume = Assume.coerce(assume, released=True)
    if isinstance(assume, Assume):
        raise PrivacyParameterError("dp_felp simulates only the plug-in model: use assume='released'.")
    oc_trials = check_oc_trials(oc_trials, assume)
    sample_ratio = check_fraction(sample_ratio, "sample_ratio", 0.0, 1.0, low_open=True, high_open=False)
    tol = check_eps(tol, name="tol")
    if clip_norm is not None:
        if variant != "strict":
            raise PrivacyParameterError("clip_norm is used only by variant='strict'.")
        clip_norm = check_eps(clip_norm, name="clip_norm")
    if math.isinf(eps) and strict:
        raise PrivacyParameterError("strict=True refuses eps = inf (not private); give a finite eps.")
    m.check_paper_variant(variant, strict)  # refused under strict=True before anything is read or spent
    if accountant is not None:
        accountant.check(eps, 0.0)
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, keep=[levels])
    bounds, eps, _ = private_bounds_setup(
        bounds, eps, bounds_eps=bounds_eps, neighbouring="replace", data=data
    )
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps)
    if schema.private:
        refuse_omit(
            schema,
            "dp_felp",
            "its subsets split the n rows read into equal parts (and the paper variant's sensitivity "
            "2/(nλ) is a function of n), which is private only for a public n",
        )
    door = _FELP(
        schema=schema,
        formula=formula,
        data=data,
        eps=eps,
        lam=lam,
        lam_value=lam_value,
        lam_source=lam_source,
        n_estimators=n_estimators,
        sample_ratio=sample_ratio,
        select=select,
        variant=variant,
        bounds=bounds,
        clip_norm=clip_norm,
        n_neighbors=n_neighbors,
        tol=tol,
        max_iter=max_iter,
        lam_grid=lam_grid,
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
    counts: np.ndarray
    select: int
    box: Box | None
    C: float | None  # the strict variant's clip norm: public (a function of λ or of its grid)
    truth: list[str] | None


@dataclass
class _FELP:
    """dp_felp's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    eps: float
    lam: Any
    lam_value: float
    lam_source: str
    n_estimators: int
    sample_ratio: float
    select: int | None
    variant: str
    bounds: Any
    clip_norm: float | None
    n_neighbors: int
    tol: float
    max_iter: int
    lam_grid: Sequence[float]
    truth: Sequence[str] | None
    assume: str | None
    oc_trials: int
    strict: bool
    progress: bool
    schema: Schema | None = None
    label: str = "dp_felp"

    def frame(self, dd: DataDependence) -> _Frame:
        mf = model_frame(self.formula, self.data, drop_intercept=True, response="factor", schema=self.schema)
        _check_features(mf, self.formula)
        counts = _check_classes(mf, _declared_classes(self.schema, self.data, mf.response))
        select = m.default_select(mf.p) if self.select is None else _check_select(self.select, mf.p)
        # the number of rows is public unless rows may be dropped: only a public n is checked; a
        # subset with fewer than 2 rows then gets w = 0 by construction (methods.felp.ensemble)
        if self.variant == "strict" and not mf.n_data_dependent and mf.n // self.n_estimators < 2:
            raise DataError(
                f"variant='strict' splits the rows into n_estimators = {self.n_estimators} disjoint "
                "subsets and needs at least 2 rows in each; lower n_estimators (to at most half the "
                "number of rows)."
            )
        refuse_offset(mf, "dp_felp")
        missing_rows_step(dd, mf)
        box = (
            None
            if self.bounds is None
            else resolve_box(declared_bounds(self.bounds, mf, response=False), mf.names)
        )
        m.name_data_dependent_steps(
            dd, bounded=box is not None, lam_source=self.lam_source, lam_grid=self.lam_grid
        )
        if math.isinf(self.eps):
            warnings.warn(
                "eps = inf: the weights are released without noise (a non-private reference).",
                NonPrivateWarning,
                stacklevel=caller_stacklevel(),
            )
        C = m.clip_norm(self.variant, self.clip_norm, self.lam_value, self.lam_source, self.lam_grid)
        return _Frame(
            mf=mf, counts=counts, select=select, box=box, C=C, truth=check_truth(self.truth, mf.names)
        )

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(
            variant=self.variant,
            eps=self.eps,
            n=frame.mf.n,
            d=frame.mf.p,
            n_estimators=self.n_estimators,
            lam=self.lam_value,
            lam_source=self.lam_source,
            clip_norm=frame.C,
            sample_ratio=self.sample_ratio,
            bounded=frame.box is not None,
        )

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> m.Release:
        with progress_bar(self.progress, self.n_estimators, "FELP learners") as progress:
            return m.release(
                frame.mf.X,
                np.asarray(frame.mf.y),
                plan,
                noise,
                box=frame.box,
                lam=self.lam_value,
                lam_source=self.lam_source,
                lam_grid=self.lam_grid,
                select=frame.select,
                n_estimators=self.n_estimators,
                sample_ratio=self.sample_ratio,
                variant=self.variant,
                clip_norm=frame.C,
                tol=self.tol,
                max_iter=self.max_iter,
                n_neighbors=self.n_neighbors,
                progress=progress,
            )

    def result(
        self, frame: _Frame, plan: Plan, released: m.Release, statement: PrivacyStatement, noise: NoiseSource
    ) -> FELPResult:
        mf = frame.mf
        statement.samplers = statement.samplers or ["none (eps = inf)"]
        oc = _operating_characteristics(
            released.weights, frame.select, released.scale, self.oc_trials, self.assume, noise.generator
        )
        return FELPResult(
            method="dp_felp",
            call=_call(
                self.formula,
                self.eps,
                self.lam,
                self.n_estimators,
                self.sample_ratio,
                self.select,
                self.variant,
                self.bounds,
                self.clip_norm,
                self.strict,
            ),
            n=mf.n,
            p=mf.p,
            terms=list(mf.names),
            privacy=statement,
            operating_characteristics=oc,
            weights=released.weights,
            selected=_selected(frame, released),
            select=frame.select,
            variant=self.variant,
            lam=released.lam,
            lam_source=self.lam_source,
            n_estimators=self.n_estimators,
            sample_ratio=self.sample_ratio,
            sensitivity=released.sensitivity,
            noise_scale=released.scale,
            clip_norm=frame.C,
            classes=[str(c) for c in mf.classes],
            scaling=(
                "declared bounds mapped onto [0, 1], clipped, divided by √d"
                if frame.box is not None
                else "data min/max mapped onto [0, 1], divided by √d (data-dependent)"
            ),
            warnings=[f"{m.PAPER_VARIANT_REFUTED}: the stated eps is not a valid DP guarantee"]
            if self.variant == "paper"
            else [],
        )

    def diagnostics(self, frame: _Frame, released: m.Release) -> dict:
        return _diagnostics(
            released.fit, released.n_clipped, frame.mf, frame.truth, _selected(frame, released), frame.counts
        )


def _selected(frame: _Frame, released: m.Release) -> list[str]:
    return [frame.mf.names[j] for j in released.order[: frame.select]]


# ---------------------------------------------------------------------- validation
def _check_lam(lam, grid) -> tuple[float, str]:
    if lam is None:
        return m.DEFAULT_LAM, "fixed default"
    if isinstance(lam, str):
        if lam != "cv":
            raise PrivacyParameterError(f"lam must be a positive number or 'cv', got {lam!r}.")
        values = [check_eps(v, name="lam_grid values") for v in grid]
        if not values:
            raise PrivacyParameterError("lam_grid must hold at least one positive λ.")
        return values[0], "cv"
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (lam > 0) or not math.isfinite(lam):
        raise PrivacyParameterError(
            f"lam must be a positive finite number (the ridge parameter λ; default 1.0), got {lam!r}."
        )
    return float(lam), "user"


def _check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise PrivacyParameterError(f"{name} must be a whole number >= {low}, got {value!r}.")
    return int(value)


def _check_select(select, d: int) -> int:
    if isinstance(select, bool) or not isinstance(select, numbers.Integral) or not 1 <= select <= d:
        raise DataError(f"select must be a whole number with 1 <= select <= d = {d}, got {select!r}.")
    return int(select)


def _check_features(mf, formula: str) -> None:
    if mf.factor_levels:
        names = sorted(mf.factor_levels)
        raise DataError(
            f"dp_felp weights numeric features, but {names[:5]} in '{formula}' are not numeric. "
            "Convert them (ordered codes, e.g. df[c].cat.codes, or 0/1 indicators with "
            "pandas.get_dummies) or drop them from the formula."
        )
    if mf.p < 2:
        raise DataError(f"dp_felp needs at least 2 features; '{formula}' gives {mf.p}.")


def _check_classes(mf, declared: bool) -> np.ndarray:
    """Class counts (diagnostics only); refuses a response FELP cannot use.

    With the response's levels declared (``levels=``, a categorical dtype, a boolean type)
    the classes are public: only their number is checked (at least two).  A class that is
    rare or absent in the rows is handled by construction: a row with no nearest hit (the
    only row of its class in a subset) or no nearest miss (a subset holding one class) has
    no margin vector and is left out of its learner's objective, and a learner with no
    margin vector returns w = 0 (:func:`dpstats.methods.felp.learner.margins`,
    :func:`~dpstats.methods.felp.learner.solve_weights`); the strict variant's clipping to C
    bounds the sensitivity whatever the learners compute.  No error depends on a class count.

    With levels read from the rows (a named data-dependent step, refused under strict) the
    counts are checked as well.  The messages name the response column and the fix, never a
    class label or a count: both are read from the rows (docs/architecture.md, "Privacy
    conventions").
    """
    counts = np.bincount(np.asarray(mf.y), minlength=len(mf.classes))
    if declared:
        if len(mf.classes) < 2:
            raise DataError(
                f"the response '{mf.response}' has fewer than two declared classes; dp_felp needs at "
                "least two (nearest misses do not exist otherwise). Declare its levels, e.g. "
                f"levels={{'{mf.response}': [...]}}."
            )
        return counts
    present = counts > 0
    if present.sum() < 2:
        raise DataError(
            f"the response '{mf.response}' has fewer than two classes; dp_felp needs at least two "
            "classes (nearest misses do not exist otherwise). Check that the response column is the "
            "class label."
        )
    if (counts == 1).any():
        raise DataError(
            f"the response '{mf.response}' has a class with a single row, which has no nearest hit "
            "(is it a class label, not a numeric response?); drop such rows or merge rare classes "
            "before the analysis, or declare the response's levels (a rare class is then handled "
            "by construction)."
        )
    return counts


def _declared_classes(schema: Schema | None, data: Any, response: str) -> bool:
    """Whether the response's classes are declared (public), from the schema and the dtypes only."""
    if schema is None or not isinstance(data, pd.DataFrame) or response not in data.columns:
        return False
    (var,) = schema.variables(data, [response])
    return var.kind in ("factor", "ordered", "logical") and var.levels is not None


# ---------------------------------------------------------------------- result
def _operating_characteristics(released, select, scale, trials, assume, gen):
    """Exact noise s.d. and spread of the released weights; plug-in stability only under ``assume``."""
    if not trials:
        return None
    d = released.size
    rows = [
        {
            "quantity": "noise s.d. per weight (scale·√(d+1), exact)",
            "estimate": m.noise_coordinate_sd(scale, d),
            "std_error": 0.0,
            "basis": BASIS_RELEASED,
        },
        {
            "quantity": "spread (s.d.) of the released weights",
            "estimate": float(np.std(released, ddof=1)),
            "std_error": 0.0,
            "basis": BASIS_RELEASED,
        },
    ]
    model = "exact, from the released weights and the public noise scale; no data model"
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    share, se = m.selection_stability(released, select, scale, gen, trials)
    rows.append(
        {
            "quantity": f"stability: share of the top {select} kept under fresh noise",
            "estimate": share,
            "std_error": se,
            "basis": BASIS_ASSUMED,
        }
    )
    model += (
        "; stability simulated by adding fresh L2-Laplace noise of the same scale to the released "
        "weights and recomputing the top set"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=describe(assume))


def _diagnostics(fit, n_clipped, mf, truth, selected, counts) -> dict:
    diag = {
        "rows_dropped_for_missing_values": mf.n_dropped,
        "values_filled_for_missing": mf.n_filled,
        "values_clipped": n_clipped,
        "learners_converged": int(sum(fit.converged)),
        "learner_rounds": list(fit.n_iter),
        "learners_clipped_to_C": fit.n_clipped,
        "class_counts": dict(zip([str(c) for c in mf.classes], counts.tolist())),
    }
    if truth is not None:
        nonprivate = [mf.names[j] for j in m.rank_features(fit.w_mean)[: len(selected)]]
        diag.update(
            {
                "selected_true_share": len(set(selected) & set(truth)) / len(selected),
                "nonprivate_selected": nonprivate,
                "nonprivate_true_share": len(set(nonprivate) & set(truth)) / len(selected),
            }
        )
    return diag


def _call(formula, eps, lam, k, beta, select, variant, bounds, clip_norm, strict) -> dict:
    # variant is always shown (a default of None shows every given value)
    return call_record(
        {"formula": formula, "eps": eps},
        {
            "lam": (lam, None),
            "n_estimators": (k, 20),
            "sample_ratio": (beta, 0.9),
            "select": (select, None),
            "variant": (variant, None),
            "bounds": (bounds, None),
            "clip_norm": (clip_norm, None),
            "strict": (strict, False),
        },
    )
