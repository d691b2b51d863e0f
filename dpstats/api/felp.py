"""Front door of DP ensemble feature weighting by local learning (FELP; docs/architecture.md, "Layers")."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, NonPrivateWarning, PrivacyParameterError
from ..formula import model_frame, refuse_offset
from ..geometry import resolve_box
from ..methods import felp as m
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import BASIS_ASSUMED, BASIS_RELEASED, OperatingCharacteristics, attach_diagnostics
from ..simulate import Assume, describe
from ..results.felp import FELPResult
from ..validation import (check_truth, check_accountant, check_eps, check_fraction, check_neighbouring,
                          check_strict)
from ._common import call_record, charge, missing_rows_step

LAM_GRID = (0.01, 0.1, 1.0, 10.0)


def dp_felp(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    lam: float | str | None = None,
    n_estimators: int = 20,
    sample_ratio: float = 0.9,
    select: int | None = None,
    variant: str = "paper",
    *,
    bounds=None,
    clip_norm: float | None = None,
    n_neighbors: int = m.N_NEIGHBORS,
    tol: float = m.TOL,
    max_iter: int = m.MAX_ITER,
    lam_grid: Sequence[float] = LAM_GRID,
    neighbouring: str = "replace",
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

    Two variants, which differ in what the guarantee rests on:

    * ``"paper"`` — bootstrap samples of ⌈βn⌉ rows and the paper's Lemma 1
      sensitivity Δ = 2/(nλ).  That bound treats each z_i as a function of
      row i alone; in fact z_i depends on other rows (its neighbours), and one
      row can enter every bootstrap sample.  These assumptions are written
      into the privacy statement: the guarantee rests on them.
    * ``"strict"`` — a random partition into ``n_estimators`` disjoint
      subsets, each learner's weights clipped to ℓ2 norm C (default
      √(log 2/λ), which the exact minimiser never exceeds).  Replacing one
      row changes one subset, so the average moves by at most Δ = 2C/k,
      whatever the learner does: a guarantee without the paper's assumption,
      paid for with more noise.

    Parameters
    ----------
    formula : str
        ``"class ~ ."``; the response is read as a factor (two or more
        classes).  Features must be numeric.
    data : pandas.DataFrame
    eps : float
        Privacy budget; ``math.inf`` gives the non-private ensemble (a
        reference, with a :class:`~dpstats.errors.NonPrivateWarning`).
    lam : float or "cv", optional
        Ridge parameter λ > 0.  Default: the fixed public value 1.0.  ``"cv"``
        tunes λ over ``lam_grid`` by 5-fold cross-validation (3-NN accuracy
        on the top ``select`` features) on the private data: a data-dependent
        step, listed as not covered and refused under ``strict=True``.
    n_estimators : int
        Number k of learners (paper: 20).
    sample_ratio : float in (0, 1]
        β: each bootstrap sample has ⌈βn⌉ rows (paper: 0.9; ``"paper"`` only).
    select : int, optional
        Number of features to select (default: 10% of d, at least 1).
    variant : {"paper", "strict"}
    bounds : (lo, hi) or dict, optional
        Public bounds of the features, mapped onto [0, 1] (clipped) and
        divided by √d so that ‖z_i‖₂ <= 1.  Without bounds, the data minima
        and maxima are used: a data-dependent step.
    clip_norm : float, optional
        C of the strict variant.
    n_neighbors, tol, max_iter
        Logo's neighbourhood size K, tolerance and iteration cap.
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
    if variant not in m.VARIANTS:
        raise PrivacyParameterError(f"variant must be one of {list(m.VARIANTS)}, got {variant!r}.")
    lam_value, lam_source = _check_lam(lam, lam_grid)
    n_estimators = _check_int(n_estimators, "n_estimators", 1)
    n_neighbors = _check_int(n_neighbors, "n_neighbors", 1)
    max_iter = _check_int(max_iter, "max_iter", 1)
    oc_trials = _check_int(oc_trials, "oc_trials", 0)
    assume = Assume.coerce(assume, released=True)
    if isinstance(assume, Assume):
        raise PrivacyParameterError("dp_felp simulates only the plug-in model: use assume='released'.")
    if assume is not None and oc_trials < 2:
        raise PrivacyParameterError("assume= needs oc_trials >= 2 simulated trials.")
    sample_ratio = check_fraction(sample_ratio, "sample_ratio", 0.0, 1.0, low_open=True, high_open=False)
    tol = check_eps(tol, name="tol")
    if clip_norm is not None:
        if variant != "strict":
            raise PrivacyParameterError("clip_norm is used only by variant='strict'.")
        clip_norm = check_eps(clip_norm, name="clip_norm")
    if math.isinf(eps) and strict:
        raise PrivacyParameterError("strict=True refuses eps = inf (not private); give a finite eps.")
    if accountant is not None:
        accountant.check(eps, 0.0)

    mf = model_frame(formula, data, drop_intercept=True, response="factor")
    _check_features(mf, formula)
    counts = _check_classes(mf)
    d = mf.p
    select_arg = select
    select = m.default_select(d) if select is None else _check_select(select, d)
    if variant == "strict" and mf.n // n_estimators < 2:
        raise DataError(f"variant='strict' splits the n = {mf.n} rows into n_estimators = "
                        f"{n_estimators} disjoint subsets, fewer than 2 rows each; lower n_estimators.")

    dd = DataDependence(strict)
    refuse_offset(mf, "dp_felp")
    missing_rows_step(dd, mf)
    _paper_variant_check(variant, strict)
    if bounds is None:
        dd.add("features mapped onto [0, 1] by their data minima and maxima (needed for ‖z_i‖ <= 1)",
               fix="declare public bounds, e.g. bounds=(0, 1) or bounds={'x1': (0, 10), ...}")
        box = None
    else:
        box = resolve_box(bounds, mf.names)
    if lam_source == "cv":
        dd.add(f"λ tuned by 5-fold cross-validation on the private data over {list(lam_grid)}; the "
               "noise scale depends on λ", fix="pass a fixed lam= chosen on public data (default 1.0)")
    if math.isinf(eps):
        warnings.warn("eps = inf: the weights are released without noise (a non-private reference).",
                      NonPrivateWarning, stacklevel=2)

    # with lam="cv" the default C covers every λ of the grid, so it is fixed before the charge
    lam_for_c = min(lam_grid) if lam_source == "cv" else lam_value
    C = (clip_norm or m.default_clip_norm(lam_for_c)) if variant == "strict" else None
    sens_text = _sensitivity_text(variant, mf.n, lam_value, C, n_estimators, lam_source)
    entries = [LedgerEntry(step=f"release of the average of {n_estimators} Logo weight vectors ({d} weights)",
                           mechanism="L2-Laplace output perturbation", eps=eps, sensitivity=sens_text,
                           note="selection of the top weights is post-processing")]
    truth = check_truth(truth, mf.names)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(accountant, entries, "dp_felp")

    X = mf.X
    U, n_clipped = m.scale_features(X, box if box is not None else m.data_box(X))
    if box is None:
        n_clipped = 0       # the data's own min/max: any count is floating-point rounding
    y = np.asarray(mf.y)
    if lam_source == "cv":
        lam_value = _tune_lam(U, y, lam_grid, select, noise.generator)
    fit = m.ensemble(U, y, lam_value, n_estimators=n_estimators, sample_ratio=sample_ratio,
                     variant=variant, clip_norm=C, gen=noise.generator, tol=tol, max_iter=max_iter,
                     n_neighbors=n_neighbors, progress=progress)
    sensitivity = (m.paper_sensitivity(mf.n, lam_value) if variant == "paper"
                   else m.strict_sensitivity(C, n_estimators))
    scale = 0.0 if math.isinf(eps) else sensitivity / eps
    released = fit.w_mean.copy() if scale == 0 else noise.l2_laplace(fit.w_mean, scale)
    order = m.rank_features(released)
    selected = [mf.names[j] for j in order[:select]]

    statement = _statement(variant, eps, entries, sens_text, dd, noise, box is not None, mf.n,
                           n_estimators, sample_ratio, C)
    oc = _operating_characteristics(released, select, scale, oc_trials, assume, noise.generator)
    result = FELPResult(
        method="dp_felp", call=_call(formula, eps, lam, n_estimators, sample_ratio, select_arg, variant,
                                     bounds, clip_norm, strict),
        n=mf.n, p=d, terms=list(mf.names), privacy=statement, operating_characteristics=oc,
        weights=released, selected=selected, select=select, variant=variant, lam=lam_value,
        lam_source=lam_source, n_estimators=n_estimators, sample_ratio=sample_ratio,
        sensitivity=sensitivity, noise_scale=scale, clip_norm=C, classes=[str(c) for c in mf.classes],
        scaling=("declared bounds mapped onto [0, 1], clipped, divided by √d" if box is not None
                 else "data min/max mapped onto [0, 1], divided by √d (data-dependent)"))
    return attach_diagnostics(result, diagnostics or truth is not None,
                              lambda: _diagnostics(fit, n_clipped, mf, truth, selected, counts))


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
            f"lam must be a positive finite number (the ridge parameter λ; default 1.0), got {lam!r}.")
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
            "pandas.get_dummies) or drop them from the formula.")
    if mf.p < 2:
        raise DataError(f"dp_felp needs at least 2 features; '{formula}' gives {mf.p}.")


def _check_classes(mf) -> np.ndarray:
    counts = np.bincount(np.asarray(mf.y), minlength=len(mf.classes))
    present = counts > 0
    if present.sum() < 2:
        raise DataError(f"the response '{mf.response}' has a single class; dp_felp needs at least two "
                        "classes (nearest misses do not exist otherwise).")
    lonely = [str(c) for c, k in zip(mf.classes, counts) if k == 1]
    if lonely:
        raise DataError(f"class(es) {lonely} of '{mf.response}' have a single row, which has no nearest "
                        "hit; drop those rows or merge the class with another.")
    return counts


PAPER_VARIANT_REFUTED = (
    "variant='paper' uses FELP's Lemma 1 sensitivity 2/(nλ), which is not a valid bound: on a constructed "
    "pair of neighbouring data sets the ensemble average moves by up to 2.2 times it and the empirical "
    "auditor refutes the stated eps (tests/test_audit_felp.py)")


def _paper_variant_check(variant: str, strict: bool) -> None:
    """The paper variant reproduces the paper; strict=True refuses it, otherwise it is warned."""
    if variant != "paper":
        return
    if strict:
        raise PrivacyParameterError(f"strict=True refuses: {PAPER_VARIANT_REFUTED}. Use variant='strict'.")
    warnings.warn(f"{PAPER_VARIANT_REFUTED}; use variant='strict' for a release.", NonPrivateWarning,
                  stacklevel=3)


# ---------------------------------------------------------------------- privacy text
def _sensitivity_text(variant, n, lam, C, k, lam_source) -> str:
    lam_txt = "λ tuned by CV (value known after fitting)" if lam_source == "cv" else f"λ = {lam:g}"
    if variant == "paper":
        base = "‖Δw‖₂ <= 2/(nλ)"
        if lam_source != "cv":
            base += f" = {m.paper_sensitivity(n, lam):.4g}"
        return f"{base}, replace one row, n = {n}, {lam_txt} (FELP Lemma 1; rests on the stated assumptions)"
    return (f"‖Δw̄‖₂ <= 2C/k = {m.strict_sensitivity(C, k):.4g}, replace one row changes one of k = {k} "
            f"disjoint subsets, each weight vector clipped to ‖w‖₂ <= C = {C:.4g}")


def _statement(variant, eps, entries, sens_text, dd, noise, bounded, n, k, beta, C) -> PrivacyStatement:
    common = ("every margin vector satisfies ‖z_i‖₂ <= 1, because features are mapped onto [0, 1] "
              + ("by the declared bounds" if bounded else "by data minima and maxima") + " and divided by √d")
    if variant == "paper":
        assumptions = [
            "each margin vector z_i is treated as a function of row i alone (FELP Lemma 1); in fact z_i "
            "depends on other rows through their roles as nearest hits and misses, so replacing one row "
            "can change the margins of many rows, and the 2/(nλ) bound is not proven for the algorithm as run",
            common,
            f"the average of k = {k} learners on bootstrap samples of ⌈{beta:g}n⌉ rows is given the "
            "sensitivity of one learner on all n rows, although one row can enter every sample, several times",
            "each learner's weights are the exact minimiser of its strongly convex objective (the "
            "neighbour re-computation loop and the numerical solver only approximate it)",
        ]
        notes = [PAPER_VARIANT_REFUTED + ".",
                 "For a guarantee that does not rest on these assumptions use variant='strict'."]
    else:
        assumptions = []
        notes = [f"Rows are split into k = {k} disjoint subsets by a random permutation drawn independently "
                 f"of the data; each subset's weight vector is clipped to ℓ2 norm C = {C:.4g}, so the "
                 "guarantee holds whatever the local-learning step computes.",
                 "How many weight vectors were clipped is not released."]
    notes.append("The released weights determine the selection and its order; both are post-processing.")
    return PrivacyStatement(
        method=f"DP-FELP ({variant} variant)", eps=eps, delta=0.0, neighbouring="replace", ledger=entries,
        sensitivities={"average weight vector (ℓ2)": sens_text}, assumptions=assumptions,
        data_dependent_steps=dd.steps, seeded=noise.seeded,
        samplers=sorted(noise.samplers) or ["none (eps = inf)"], notes=notes)


# ---------------------------------------------------------------------- steps after the charge
def _tune_lam(U, y, grid, select, gen) -> float:
    """5-fold CV of 3-NN accuracy on the top features of a 5-learner ensemble (data-dependent)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    best, best_acc = grid[0], -1.0
    min_count = int(np.bincount(y).min())
    folds = max(2, min(5, min_count))
    for lam in grid:
        w = m.ensemble(U, y, lam, n_estimators=5, gen=gen).w_mean
        cols = m.rank_features(w)[:select]
        acc = cross_val_score(KNeighborsClassifier(3), U[:, cols], y,
                              cv=StratifiedKFold(folds, shuffle=True, random_state=0)).mean()
        if acc > best_acc + 1e-12:
            best, best_acc = lam, acc
    return float(best)


def _operating_characteristics(released, select, scale, trials, assume, gen):
    """Exact noise s.d. and spread of the released weights; plug-in stability only under ``assume``."""
    if not trials:
        return None
    d = released.size
    rows = [{"quantity": "noise s.d. per weight (scale·√(d+1), exact)",
             "estimate": m.noise_coordinate_sd(scale, d), "std_error": 0.0, "basis": BASIS_RELEASED},
            {"quantity": "spread (s.d.) of the released weights",
             "estimate": float(np.std(released, ddof=1)), "std_error": 0.0, "basis": BASIS_RELEASED}]
    model = "exact, from the released weights and the public noise scale; no data model"
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    share, se = m.selection_stability(released, select, scale, gen, trials)
    rows.append({"quantity": f"stability: share of the top {select} kept under fresh noise",
                 "estimate": share, "std_error": se, "basis": BASIS_ASSUMED})
    model += ("; stability simulated by adding fresh L2-Laplace noise of the same scale to the released "
              "weights and recomputing the top set")
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=describe(assume))


def _diagnostics(fit, n_clipped, mf, truth, selected, counts) -> dict:
    diag = {"rows_dropped_for_missing_values": mf.n_dropped, "values_clipped": n_clipped,
            "learners_converged": int(sum(fit.converged)), "learner_rounds": list(fit.n_iter),
            "learners_clipped_to_C": fit.n_clipped,
            "class_counts": dict(zip([str(c) for c in mf.classes], counts.tolist()))}
    if truth is not None:
        nonprivate = [mf.names[j] for j in m.rank_features(fit.w_mean)[:len(selected)]]
        diag.update({"selected_true_share": len(set(selected) & set(truth)) / len(selected),
                     "nonprivate_selected": nonprivate,
                     "nonprivate_true_share": len(set(nonprivate) & set(truth)) / len(selected)})
    return diag


def _call(formula, eps, lam, k, beta, select, variant, bounds, clip_norm, strict) -> dict:
    # variant is always shown (a default of None shows every given value)
    return call_record({"formula": formula, "eps": eps},
                       {"lam": (lam, None), "n_estimators": (k, 20), "sample_ratio": (beta, 0.9),
                        "select": (select, None), "variant": (variant, None), "bounds": (bounds, None),
                        "clip_norm": (clip_norm, None), "strict": (strict, False)})
