"""Front door of DP sure independence screening (docs/architecture.md, "One call, step by step")."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import resolve_box
from ..methods import sis as m
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..privacy.topk import SELECTORS, exact_recovery_bound, largest_class_noise
from ..results.base import BASIS_ASSUMED, BASIS_RELEASED, OperatingCharacteristics
from ..results.sis import SISResult, recovery_table
from ..simulate import Assume, mean_and_se, sis_trials
from ..validation import (
    check_truth,
    check_accountant,
    check_eps,
    check_fraction,
    check_k,
    check_neighbouring,
    check_oc_trials,
    check_strict,
)
from ..stats import CrossStats
from ..schema import Schema
from ._common import (
    Settings,
    call_record,
    declared_bounds,
    dummy_columns,
    frame_and_cross_products,
    frame_schema,
    is_auto,
    missing_rows_step,
    private_bounds_setup,
    run,
    schema_parameters,
)


@schema_parameters
def dp_sis(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    k: int | None = None,
    *,
    bounds=None,
    bounds_eps: float | None = None,
    gamma: float = 0.5,
    center: str | None = None,
    score: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    score_sensitivity: float | None = None,
    topk: str = "canonical_lipschitz",
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    truth: Sequence[str] | None = None,
    assume: Assume | dict | None = None,
    oc_trials: int = 200,
    diagnostics: bool = False,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
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
    formula : str
        ``"y ~ ."`` or any R-style formula; the response must be numeric.
    data : pandas.DataFrame
    eps : float
        Privacy budget, a positive finite number.
    k : int, optional
        Number of terms to select; default ⌊log d⌋ (at least 1); 1 <= k < d.
    bounds : (lo, hi) or dict, optional
        Public bounds for every variable including the response, or per
        variable.  Values are mapped from [lo, hi] onto [−1, 1] and clipped:
        pure eps-DP with either ``center``.  Without
        bounds, columns and y are scaled by their max-abs and centered by their
        means, as in the paper's experiments: data-dependent steps that raise
        :class:`~dpstats.errors.NonPrivateWarning` (refused under ``strict``).
        ``"auto"`` (or a :class:`dpstats.AutoBounds`): bounds for the columns
        and y released privately first, from ``bounds_eps`` (docs/architecture.md,
        "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on the bounds (default 10% of
        ``eps``); the selection gets the rest.
    gamma : float in [0, 1)
        Canonical Lipschitz split: eps1 = (1 − gamma)·eps, eps2 = gamma·eps.
    center : {"mean", "midpoint"}, optional
        With bounds: ``"mean"`` (default) scores the centred cross-product
        Σ_i (x_ij − x̄_j)(y_i − ȳ) of the mapped values, l∞ sensitivity
        4(1 − 1/n) under replace-one-row and 4 under add/remove-one-row;
        ``"midpoint"`` scores the paper's |x_jᵀ y| (centred at the bounds'
        midpoints), sensitivity 2 and 1.  Both are pure eps-DP (derivations in
        :mod:`dpstats.methods.sis`).  The former names ``"data"`` (= "mean")
        and ``"bounds"`` (= "midpoint") are accepted.  Ignored without bounds.
    score : callable, optional
        ``score(X, y) -> ndarray`` of d scores on the model frame's design, to
        replace the built-in score; requires ``score_sensitivity`` (its l∞ sensitivity
        under the neighbouring relation in force, declared by you).  Non-finite values it
        returns are replaced by 0 by construction (stated in every such call's statement;
        nothing is checked on them); a score that raises is refused before the charge, the
        error naming only the exception's type; a result of the wrong shape is refused.
    score_sensitivity : float, optional
        The l∞ sensitivity of ``score`` under the neighbouring relation in force,
        declared by you; required with ``score`` and ignored without it.
    topk : str
        Top-k selector: one of ``dpstats.privacy.SELECTORS``.
    neighbouring : {"replace", "add_remove"}
        The neighbouring relation; it sets the score's sensitivity (see ``center``).
    {schema parameters}
    truth : list of str, optional
        True support or true ranking (simulations): adds non-private diagnostics.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, values clipped, the
        non-private selection).  Off by default: they are not private.
    assume : dpstats.simulate.Assume or dict, optional
        A model you state (number of true signals, their standardized strength,
        noise sd, feature correlation).  Only then are precision and recall
        reported, simulated from the scores' sampling law at this n (cost
        independent of n; :func:`dpstats.simulate.sis_trials`) and labelled
        "under the assumed model: ..." in every output.  Without it, the
        operating characteristics hold only what follows from n, d, k, eps and
        the sensitivity: the noise scale and the score gaps needed for exact
        recovery.
    oc_trials : int
        Trials of the ``assume=`` simulation; 0 leaves out the operating
        characteristics altogether.
    random_state, accountant, strict, progress
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    SISResult

    Examples
    --------
    >>> import dpstats as dp
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
    eps = check_eps(eps)
    neighbouring = check_neighbouring(neighbouring)
    gamma = check_fraction(gamma, "gamma", 0.0, 1.0)
    strict = check_strict(strict)
    accountant = check_accountant(accountant)
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    if center is not None and center not in m.CENTERS:
        raise PrivacyParameterError(f"center must be 'mean' or 'midpoint', got {center!r}.")
    center = m.CENTERS.get(center, "mean")
    score_sensitivity = _check_custom_score(score, score_sensitivity, neighbouring)
    assume = Assume.coerce(assume)
    oc_trials = _check_oc_trials(oc_trials, assume, score)
    if assume is not None and neighbouring == "add_remove":
        raise PrivacyParameterError(
            "assume= simulates at the number of rows, which is private under neighbouring='add_remove'; "
            "simulate at a public n instead with dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)."
        )
    if accountant is not None:
        accountant.check(eps, 0.0)
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, statistics=score is None, keep=[levels])
    bounds, eps, _ = private_bounds_setup(
        bounds, eps, bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    # a custom score has a declared sensitivity and needs no bounds: unbounded variables get the fill 0
    fill = 0.0 if score is not None else None
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps, unbounded_fill=fill)
    if assume is not None and schema.na_action == "omit":
        raise PrivacyParameterError(
            'assume= simulates at the number of rows analysed, which na_action="omit" makes private; '
            'keep the default na_action="fill" (n = rows read), or simulate at a public n with '
            "dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)."
        )
    door = _SIS(
        schema=schema,
        formula=formula,
        data=data,
        eps=eps,
        k=k,
        bounds=bounds,
        gamma=gamma,
        center=center,
        score=score,
        score_sensitivity=score_sensitivity,
        topk=topk,
        neighbouring=neighbouring,
        truth=truth,
        oc_trials=oc_trials,
        assume=assume,
        strict=strict,
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
    stats: CrossStats | None
    bounded: bool
    k: int
    score_kind: str
    scaling: str
    truth: list[str] | None
    scores: np.ndarray  # computed before the charge (not released): a failing score() spends nothing
    n_clipped: int
    n_public: bool = True


@dataclass
class _Released:
    scores: np.ndarray
    n_clipped: int
    selected: list[str]
    sensitivity: float


@dataclass
class _SIS:
    """dp_sis's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    eps: float
    k: int | None
    bounds: Any
    gamma: float
    center: str
    score: Callable | None
    score_sensitivity: float | None
    topk: str
    neighbouring: str
    truth: Sequence[str] | None
    oc_trials: int
    assume: Assume | None
    strict: bool
    schema: Schema | None = None
    label: str = "dp_sis"

    def frame(self, dd: DataDependence) -> _Frame:
        def boxes(mf):
            """Checks that need only the frame's names, then the declared bounds."""
            if mf.p < 2:
                raise DataError(
                    f"dp_sis needs at least 2 candidate columns, the formula '{self.formula}' gives {mf.p}."
                )
            check_k(self.k if self.k is not None else m.default_k(mf.p), mf.p)
            if self.score is not None or self.bounds is None:
                return None, None
            bounds = declared_bounds(self.bounds, mf)
            return (
                resolve_box(bounds, mf.names, dummies=dummy_columns(mf)),
                resolve_box(bounds, [mf.response]),
            )

        if self.score is None:
            mf, x_box, _, stats = frame_and_cross_products(self.formula, self.data, boxes, schema=self.schema)
        else:
            mf = model_frame(self.formula, self.data, drop_intercept=True, schema=self.schema)
            (x_box, _), stats = boxes(mf), None
        k = m.default_k(mf.p) if self.k is None else check_k(self.k, mf.p)
        refuse_offset(mf, "dp_sis")
        missing_rows_step(dd, mf)
        score_kind, scaling = self._score(dd)
        truth = check_truth(self.truth, mf.names)
        scores, n_clipped = _scores(mf, self.score, stats, x_box is not None, score_kind == "centred")
        return _Frame(
            mf=mf,
            stats=stats,
            bounded=x_box is not None,
            k=k,
            score_kind=score_kind,
            scaling=scaling,
            truth=truth,
            scores=scores,
            n_clipped=n_clipped,
            n_public=not dd.n_private,
        )

    def _score(self, dd: DataDependence) -> tuple[str, str]:
        """Which score is computed, and its data-dependent steps (none with bounds)."""
        if self.score is not None:
            return "custom", "user-supplied score with declared sensitivity"
        if self.bounds is None:
            dd.add(
                "each column and y scaled by its max-abs value (the paper's experiments)",
                fix="declare public bounds, e.g. bounds=(-1, 1) or bounds={'y': (0, 10), ...}",
            )
            dd.add(
                "columns centered by their data means",
                fix="declare public bounds; the midpoint of the bounds is then used",
            )
            return "maxabs", "max-abs scaled and mean-centered (data-dependent)"
        which = "private bounds (released first)" if is_auto(self.bounds) else "declared bounds"
        if self.center == "mean":
            return "centred", f"{which} mapped onto [-1, 1], values clipped, centred cross-product"
        return "midpoint", f"{which} mapped onto [-1, 1] (midpoint-centered), values clipped"

    def _n(self, frame: _Frame) -> int | None:
        """The n the sensitivity may use: None when it is not public (rows dropped)."""
        if not frame.n_public:
            return None
        return frame.stats.n if frame.score_kind == "centred" else frame.mf.n

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(
            d=frame.mf.p,
            k=frame.k,
            eps=self.eps,
            neighbouring=self.neighbouring,
            topk=self.topk,
            score=frame.score_kind,
            n=self._n(frame),
            declared_sensitivity=self.score_sensitivity,
        )

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> _Released:
        sensitivity = m.sensitivity(
            frame.score_kind, self.neighbouring, self._n(frame), self.score_sensitivity
        )
        scores, n_clipped = frame.scores, frame.n_clipped
        chosen = m.private_top_k(
            scores, frame.k, self.eps, sensitivity, noise.generator, topk=self.topk, gamma=self.gamma
        )
        return _Released(
            scores=scores,
            n_clipped=n_clipped,
            selected=[frame.mf.names[j] for j in chosen],
            sensitivity=sensitivity,
        )

    def result(
        self, frame: _Frame, plan: Plan, released: _Released, statement: PrivacyStatement, noise: NoiseSource
    ) -> SISResult:
        mf, k, d, sensitivity = frame.mf, frame.k, frame.mf.p, released.sensitivity
        logm, harmonic = largest_class_noise(d, k)
        gaps = np.linspace(0.0, 2 * 2 * sensitivity * (logm + 10) / max(self.gamma * self.eps, 1e-12), 200)
        # the exact crossings too, so that the printed gap (gap_for_recovery) is the operating
        # characteristics' figure, not the next point of the plotting grid
        crossings = sensitivity * np.array(recovery_gaps((0.5, 0.9, 0.95), d, k, self.eps, self.gamma))
        gaps = np.union1d(gaps, crossings[np.isfinite(crossings)])
        curve = recovery_table(gaps, exact_recovery_bound(gaps / sensitivity, d, k, self.eps, self.gamma))
        oc = _operating_characteristics(
            mf.n if self.neighbouring == "replace" and frame.n_public else None,
            d,
            k,
            self.eps,
            sensitivity,
            self.gamma,
            self.topk,
            self.oc_trials,
            self.assume,
            _score_kind(frame.bounded, self.center),
            noise.generator,
        )
        return SISResult(
            method="dp_sis",
            call=_call(
                self.formula,
                self.eps,
                self.k,
                self.bounds,
                self.gamma,
                self.topk,
                self.neighbouring,
                self.strict,
                self.center if self.bounds is not None and self.score is None else "mean",
            ),
            n=mf.n,
            p=d,
            terms=list(mf.names),
            privacy=statement,
            operating_characteristics=oc,
            selected=released.selected,
            k=k,
            gamma=self.gamma,
            topk=self.topk,
            sensitivity=sensitivity,
            scaling=frame.scaling,
            noise_log_m=logm,
            noise_expected_max=harmonic,
            recovery_curve=curve,
        )

    def diagnostics(self, frame: _Frame, released: _Released) -> dict:
        return _diagnostics(
            frame.truth, released.selected, released.scores, frame.mf, frame.k, released.n_clipped
        )


def _check_custom_score(score, score_sensitivity, neighbouring: str) -> float | None:
    """The declared sensitivity of a custom score, validated (None for the built-in scores)."""
    if score is None:
        if score_sensitivity is not None:
            raise PrivacyParameterError("score_sensitivity is only used with a custom score=.")
        return None
    if not callable(score):
        raise PrivacyParameterError("score must be a callable score(X, y) -> array of d scores.")
    if score_sensitivity is None:
        raise PrivacyParameterError(
            "a custom score= needs score_sensitivity=: the largest change of any score when one "
            f"row is {'replaced' if neighbouring == 'replace' else 'added or removed'}."
        )
    return check_eps(score_sensitivity, name="score_sensitivity")


def _scores(mf, score, stats, bounded: bool, centred: bool) -> tuple[np.ndarray, int]:
    if score is not None:
        try:
            values = np.asarray(score(mf.X, mf.y), dtype=float)
        except Exception as exc:  # the user's function: refused before the charge, its values not shown
            raise DataError(
                f"score(X, y) raised {type(exc).__name__}; fix the score function (it must return "
                f"{mf.p} numbers). Nothing was spent."
            ) from None
        if values.shape != (mf.p,):  # the function's contract, not a property of the rows' values
            raise DataError(
                f"score() must return {mf.p} numbers, got shape {values.shape}. Nothing was spent."
            )
        return m.custom_scores(values), 0  # non-finite values mapped to 0 by construction (stated)
    if not bounded:
        return m.scores_maxabs_centered(stats), 0
    if centred:
        return m.scores_centred_on_unit_scale(stats), stats.n_clipped
    return m.scores_on_unit_scale(stats), stats.n_clipped


def _check_oc_trials(oc_trials, assume, score) -> int:
    oc_trials = check_oc_trials(oc_trials, assume)
    if assume is not None and score is not None:
        raise PrivacyParameterError(
            "assume= simulates the built-in score; it cannot simulate a custom score=."
        )
    return oc_trials


def _score_kind(bounded: bool, center) -> str:
    """The score the front door computed, in :data:`dpstats.simulate.SCORES` terms."""
    if not bounded:
        return "maxabs"
    return "centred" if center in ("data", "mean") else "midpoint"


def _operating_characteristics(n, d, k, eps, sensitivity, gamma, topk, trials, assume, score_kind, gen):
    """Noise scale and recovery gaps from public inputs; precision/recall only under ``assume``."""
    if not trials:
        return None
    logm, harmonic = largest_class_noise(d, k)
    rows = [
        _exact_row(
            "expected largest noise term (score units): 2·Δ·H_m/(gamma·eps)",
            2 * sensitivity * harmonic / max(gamma * eps, 1e-300),
        )
    ]
    for prob, gap in zip((0.5, 0.9), recovery_gaps((0.5, 0.9), d, k, eps, gamma)):
        rows.append(
            _exact_row(
                f"score gap x(k) - x(k+1) giving exact top-{k} recovery with prob >= {prob:g} (score units)",
                sensitivity * gap,
            )
        )
    sizes = f"n = {n}, " if n is not None else ""  # n is private under add/remove
    model = (
        f"exact, from {sizes}d = {d}, k = {k}, eps = {eps:g}, sensitivity {sensitivity:g} and the "
        "canonical Lipschitz recovery bound (dpstats.privacy.topk.exact_recovery_bound); no data model"
    )
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    sim = sis_trials(
        n,
        d,
        k,
        eps,
        assume,
        gen,
        trials=trials,
        sensitivity=sensitivity,
        score=score_kind,
        topk=topk,
        gamma=gamma,
    )
    s = min(assume.signals, d)
    for name, text in (
        ("precision", f"precision (share of the {k} selected that are true)"),
        ("recall", f"recall (share of the {s} true signals selected)"),
    ):
        est, se = mean_and_se(sim[name])
        rows.append({"quantity": text, "estimate": est, "std_error": se, "basis": BASIS_ASSUMED})
    model += (
        f"; precision and recall simulated from the sampling law of the {score_kind} scores at n = {n} "
        "(dpstats.simulate.sis_trials; clipping ignored)"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=assume.describe())


def _exact_row(quantity: str, value: float) -> dict:
    return {"quantity": quantity, "estimate": float(value), "std_error": 0.0, "basis": BASIS_RELEASED}


def recovery_gaps(probs: Sequence[float], d: int, k: int, eps: float, gamma: float = 0.5) -> list[float]:
    """Smallest gaps (sensitivity units) at which the exact-recovery bound reaches each of ``probs``.

    The bound is evaluated on a geometric grid, then on a fine grid between
    the bracketing points (relative accuracy about 1e-5); three vectorised calls.
    """
    coarse = np.geomspace(1e-8, 1e8, 2001) / eps
    bound = exact_recovery_bound(coarse, d, k, eps, gamma)
    fine = []
    for prob in probs:
        i = int(np.argmax(bound >= prob))
        if bound[i] < prob:
            fine.append(math.inf)
            continue
        grid = np.linspace(coarse[max(i - 1, 0)] if i else 0.0, coarse[i], 4001)
        fine.append(float(grid[np.argmax(exact_recovery_bound(grid, d, k, eps, gamma) >= prob)]))
    return fine


def _diagnostics(truth, selected, scores, mf, k, n_clipped) -> dict:
    order = np.argsort(-scores, kind="stable")
    nonprivate = [mf.names[j] for j in order[:k]]
    diag = {
        "rows_dropped_for_missing_values": mf.n_dropped,
        "values_filled_for_missing": mf.n_filled,
        "values_clipped": n_clipped,
        "nonprivate_sis_selected": sorted(nonprivate),
    }
    if truth is None:
        return diag
    diag.update(
        {
            "topk_accuracy_vs_truth": m.topk_accuracy(selected, truth[:k] if len(truth) >= k else truth),
            "utility_class_vs_truth": m.utility_class(selected, truth, k) if len(truth) >= k else "n/a",
            "nonprivate_sis_accuracy_vs_truth": m.topk_accuracy(
                nonprivate, truth[:k] if len(truth) >= k else truth
            ),
        }
    )
    return diag


def _call(formula, eps, k, bounds, gamma, topk, neighbouring, strict, center) -> dict:
    return call_record(
        {"formula": formula, "eps": eps, "k": k},
        {
            "bounds": (bounds, None),
            "center": (center, "mean"),
            "gamma": (gamma, 0.5),
            "topk": (topk, "canonical_lipschitz"),
            "neighbouring": (neighbouring, "replace"),
            "strict": (strict, False),
        },
    )
