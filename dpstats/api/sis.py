"""Front door of DP sure independence screening (DESIGN §1, §2.1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import model_frame, refuse_offset
from ..geometry import resolve_box
from ..methods import sis as m
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..privacy.topk import SELECTORS, exact_recovery_bound, largest_class_noise
from ..results.base import OperatingCharacteristics, attach_diagnostics
from ..results.sis import SISResult, recovery_table
from ..validation import (check_truth, check_accountant, check_eps, check_fraction, check_k,
                          check_neighbouring, check_strict)
from ._common import call_record, charge, dummy_columns, frame_and_cross_products, missing_rows_step


def dp_sis(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    k: int | None = None,
    *,
    bounds=None,
    gamma: float = 0.5,
    center: str | None = None,
    score: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    score_sensitivity: float | None = None,
    topk: str = "canonical_lipschitz",
    neighbouring: str = "replace",
    truth: Sequence[str] | None = None,
    oc_trials: int = 50,
    diagnostics: bool = False,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
) -> SISResult:
    """DP sure independence screening: a private top-k of absolute correlations.

    Algorithm 1 of Swope et al., "Feature Selection from Differentially Private
    Correlations": score_j = |x_jᵀ y| after every column and y are mapped into
    [−1, 1], then a private top-k of the scores (canonical Lipschitz mechanism
    by default).  The intercept is dropped; factors enter as treatment dummies.

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
        variable.  Values are mapped from [lo, hi] onto [−1, 1] (centering at
        the midpoint, a public constant) and clipped: pure eps-DP.  Without
        bounds, columns and y are scaled by their max-abs and centered by their
        means, as in the paper's experiments: data-dependent steps that raise
        :class:`~dpstats.errors.NonPrivateWarning` (refused under ``strict``).
    gamma : float in [0, 1)
        Canonical Lipschitz split: eps1 = (1 − gamma)·eps, eps2 = gamma·eps.
    center : {"bounds", "data"}, optional
        With bounds: center at the midpoint of the bounds (default, private) or
        at the data means (a data-dependent step).
    score : callable, optional
        ``score(X, y) -> ndarray`` of d scores on the model frame's design, to
        replace |x_jᵀ y|; requires ``score_sensitivity`` (its l∞ sensitivity
        under the neighbouring relation in force, declared by you).
    topk : str
        Top-k selector: one of ``dpstats.privacy.SELECTORS``.
    neighbouring : {"replace", "add_remove"}
        Sensitivity 2 under replace-one-row, 1 under add/remove-one-row.
    truth : list of str, optional
        True support or true ranking (simulations): adds non-private diagnostics.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, values clipped, the
        non-private selection).  Off by default: they are not private.
    oc_trials : int
        Trials for the operating characteristics simulation (0 to skip).
    random_state, accountant, strict, progress
        See DESIGN §1.

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
    """
    eps = check_eps(eps)
    neighbouring = check_neighbouring(neighbouring)
    gamma = check_fraction(gamma, "gamma", 0.0, 1.0)
    strict = check_strict(strict)
    accountant = check_accountant(accountant)
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    if center not in (None, "bounds", "data"):
        raise PrivacyParameterError(f"center must be 'bounds' or 'data', got {center!r}.")
    sensitivity = _sensitivity(score, score_sensitivity, neighbouring)
    if accountant is not None:
        accountant.check(eps, 0.0)

    def plan(mf):
        """Checks that need only the frame's names, then the declared bounds."""
        if mf.p < 2:
            raise DataError(f"dp_sis needs at least 2 candidate columns, the formula '{formula}' gives {mf.p}.")
        check_k(k if k is not None else m.default_k(mf.p), mf.p)
        if score is not None or bounds is None:
            return None, None
        return (resolve_box(bounds, mf.names, dummies=dummy_columns(mf)),
                resolve_box(bounds, [mf.response]))

    if score is None:
        mf, x_box, y_box, stats = frame_and_cross_products(formula, data, plan)
    else:
        mf = model_frame(formula, data, drop_intercept=True)
        (x_box, _), stats = plan(mf), None
    d = mf.p
    k = m.default_k(d) if k is None else check_k(k, d)

    dd = DataDependence(strict)
    refuse_offset(mf, "dp_sis")
    missing_rows_step(dd, mf)
    if score is not None:
        scaling = "user-supplied score with declared sensitivity"
    elif bounds is None:
        dd.add("each column and y scaled by its max-abs value (the paper's experiments)",
               fix="declare public bounds, e.g. bounds=(-1, 1) or bounds={'y': (0, 10), ...}")
        dd.add("columns centered by their data means",
               fix="declare public bounds; the midpoint of the bounds is then used")
        scaling = "max-abs scaled and mean-centered (data-dependent)"
    elif center == "data":
        dd.add("columns centered by their data means after mapping onto [-1, 1]",
               fix="use center='bounds' (the default with bounds)")
        scaling = "bounds mapped onto [-1, 1], clipped, centered by data means (data-dependent)"
    else:
        scaling = "declared bounds mapped onto [-1, 1] (midpoint-centered), values clipped"

    selector = SELECTORS[topk]
    entries = [LedgerEntry(
        step=f"private top-{k} of |x_j'y| over {d} columns", mechanism=f"{topk} top-k",
        eps=eps, sensitivity=(f"user-declared Δ∞ = {sensitivity:g}" if score is not None
                              else m.SENSITIVITY_TEXT[neighbouring]),
        note=selector.accounting)]
    truth = check_truth(truth, mf.names)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(accountant, entries, "dp_sis")

    scores, n_clipped = _scores(mf, score, stats, x_box is not None, center)
    chosen = m.private_top_k(scores, k, eps, sensitivity, noise.generator, topk=topk, gamma=gamma)
    selected = [mf.names[j] for j in chosen]

    logm, harmonic = largest_class_noise(d, k)
    gaps = np.linspace(0.0, 2 * 2 * sensitivity * (logm + 10) / max(gamma * eps, 1e-12), 200)
    curve = recovery_table(gaps, exact_recovery_bound(gaps / sensitivity, d, k, eps, gamma))

    statement = PrivacyStatement(
        method="DP-SIS", eps=eps, delta=0.0, neighbouring=neighbouring, ledger=entries,
        sensitivities={"score |x_j'y| (l-infinity over j)": entries[0].sensitivity},
        data_dependent_steps=dd.steps, seeded=noise.seeded, samplers=sorted(noise.samplers),
        notes=["The selected set is released without an order.",
               "The number of clipped values is not released."])
    oc = _operating_characteristics(mf.n, d, k, eps, sensitivity, gamma, topk, oc_trials, noise, progress)
    result = SISResult(
        method="dp_sis", call=_call(formula, eps, k, bounds, gamma, topk, neighbouring, strict),
        n=mf.n, p=d, terms=list(mf.names), privacy=statement, operating_characteristics=oc,
        selected=selected, k=k, gamma=gamma, topk=topk, sensitivity=sensitivity, scaling=scaling,
        noise_log_m=logm, noise_expected_max=harmonic, recovery_curve=curve)
    return attach_diagnostics(result, diagnostics or truth is not None,
                              lambda: _diagnostics(truth, selected, scores, mf, k, n_clipped))


def _sensitivity(score, score_sensitivity, neighbouring: str) -> float:
    if score is None:
        if score_sensitivity is not None:
            raise PrivacyParameterError("score_sensitivity is only used with a custom score=.")
        return m.SENSITIVITY[neighbouring]
    if not callable(score):
        raise PrivacyParameterError("score must be a callable score(X, y) -> array of d scores.")
    if score_sensitivity is None:
        raise PrivacyParameterError(
            "a custom score= needs score_sensitivity=: the largest change of any score when one "
            f"row is {'replaced' if neighbouring == 'replace' else 'added or removed'}.")
    return check_eps(score_sensitivity, name="score_sensitivity")


def _scores(mf, score, stats, bounded: bool, center) -> tuple[np.ndarray, int]:
    if score is not None:
        values = np.asarray(score(mf.X, mf.y), dtype=float)
        if values.shape != (mf.p,) or not np.all(np.isfinite(values)):
            raise DataError(f"score() must return {mf.p} finite numbers, got shape {values.shape}.")
        return values, 0
    if not bounded:
        return m.scores_maxabs_centered(stats), 0
    if center == "data":
        return m.scores_midpoint_then_data_centered(stats), stats.n_clipped
    return m.scores_on_unit_scale(stats), stats.n_clipped


def _operating_characteristics(n, d, k, eps, sensitivity, gamma, topk, trials, noise, progress):
    if not trials:
        return None
    sim = m.simulate_precision_recall(n, d, k, eps, sensitivity, noise.generator, trials=trials,
                                      gamma=gamma, topk=topk, progress=progress)
    rows = [{"quantity": f"precision (share of the {k} selected that are true)",
             "estimate": sim["precision"][0], "std_error": sim["precision"][1]},
            {"quantity": f"recall (share of the {sim['s']} true features selected)",
             "estimate": sim["recall"][0], "std_error": sim["recall"][1]}]
    model = (f"the paper's synthetic model at the same n = {n}, d = {d}: X ~ N(0, I), "
             f"{sim['s']} nonzero coefficients (Fan & Lv 2008 §3.3.1), noise N(0, 1.5), max-abs "
             "scaling; null scores drawn from their normal approximation given y")
    return OperatingCharacteristics(rows=rows, model=model, trials=trials)


def _diagnostics(truth, selected, scores, mf, k, n_clipped) -> dict:
    order = np.argsort(-scores, kind="stable")
    nonprivate = [mf.names[j] for j in order[:k]]
    diag = {"rows_dropped_for_missing_values": mf.n_dropped, "values_clipped": n_clipped,
            "nonprivate_sis_selected": sorted(nonprivate)}
    if truth is None:
        return diag
    diag.update({
        "topk_accuracy_vs_truth": m.topk_accuracy(selected, truth[:k] if len(truth) >= k else truth),
        "utility_class_vs_truth": m.utility_class(selected, truth, k) if len(truth) >= k else "n/a",
        "nonprivate_sis_accuracy_vs_truth": m.topk_accuracy(nonprivate, truth[:k] if len(truth) >= k else truth),
    })
    return diag


def _call(formula, eps, k, bounds, gamma, topk, neighbouring, strict) -> dict:
    return call_record({"formula": formula, "eps": eps, "k": k},
                       {"bounds": (bounds, None), "gamma": (gamma, 0.5),
                        "topk": (topk, "canonical_lipschitz"), "neighbouring": (neighbouring, "replace"),
                        "strict": (strict, False)})

