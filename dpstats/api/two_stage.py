"""Front door of the two-stage selection baseline (DESIGN §1, §2.1)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import model_frame, refuse_offset
from ..geometry import resolve_box, to_unit_interval
from ..methods import sis as sis_m
from ..methods import two_stage as m
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..privacy.topk import SELECTORS
from ..results.base import OperatingCharacteristics, attach_diagnostics
from ..results.two_stage import TwoStageResult
from ..validation import (check_truth, check_accountant, check_eps, check_fraction, check_k,
                          check_neighbouring, check_strict)
from ._common import call_record, charge, dummy_columns, missing_rows_step

SECOND_STAGES = (None, "private_ols", "ols")


def dp_two_stage(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    k: int | None = None,
    lam: float = 0.1,
    blocks: int | None = None,
    *,
    vote: str = "topk",
    topk: str = "canonical_lipschitz",
    gamma: float = 0.5,
    shuffle: bool = True,
    standardize: bool = True,
    solver: str = "lars",
    tol: float = 1e-4,
    second_stage: str | None = None,
    stage_fraction: float = 0.5,
    bounds=None,
    neighbouring: str = "replace",
    truth: Sequence[str] | None = None,
    diagnostics: bool = False,
    oc_trials: int = 50,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
) -> TwoStageResult:
    """Two-stage private selection: lasso votes on disjoint blocks, then a private top-k.

    The baseline of Swope et al. ("Feature Selection from Differentially
    Private Correlations"), after Kifer, Smith & Thakurta (2012): the rows are
    split into ``blocks`` disjoint blocks (default ⌊√n⌋, blocks of about √n
    rows), a non-private lasso with penalty ``lam`` is fitted on each, each
    block votes for its top-k |coefficients| (``vote="topk"``) or its whole
    support (``vote="support"``), and k terms are chosen by a private top-k of
    the vote counts.

    Privacy.  The assignment of rows to blocks ignores the data, so one row
    changes one block and every vote count moves by at most 1 under both
    neighbouring relations (l∞ sensitivity 1; not monotone, since a block can
    move its votes between features).  Under add/remove-one-row the rows are
    assigned to blocks independently and uniformly, and the number of blocks
    must be public: give ``blocks=``, otherwise ⌊√n⌋ uses the private n (a
    data-dependent step).  The lasso fits need no bounds.

    Parameters
    ----------
    formula : str
        ``"y ~ ."`` or any R-style formula; numeric response (a 0/1 class
        indicator is fine: the lasso then fits a linear probability model).
    data : pandas.DataFrame
    eps : float
        Total privacy budget.
    k : int, optional
        Number of terms to select; default ⌊log d⌋ (at least 1); 1 <= k < d.
    lam : float
        Lasso penalty in (1/2n_b)‖y − Xβ‖² + lam‖β‖₁ on standardized columns
        (the paper: 0.1).
    blocks : int, optional
        Number of disjoint blocks, 2 <= blocks <= n/2; default ⌊√n⌋.
    vote : {"topk", "support"}
        What each block votes for.
    topk : str
        Private top-k selector, one of ``dpstats.privacy.SELECTORS``
        (default ``"canonical_lipschitz"``, as in ``dp_sis``).
    gamma : float
        Split of the canonical Lipschitz mechanism (ignored by other selectors).
    shuffle : bool
        Under replace-one-row, cut a random permutation of the rows into
        blocks (default) or keep the row order (``False``; the paper's §3
        experiment).  Both ignore the data's values.
    standardize : bool
        Scale columns to unit standard deviation within each block before the
        lasso (glmnet's default); harmless to privacy, as it is inside a block.
    solver : {"lars", "cd"}
        Lasso solver: exact LARS-lasso homotopy (scikit-learn ``LassoLars``,
        default; fast when blocks have far fewer rows than columns) or
        coordinate descent (``Lasso``) with tolerance ``tol``.
    tol : float
        Coordinate-descent tolerance (scikit-learn's ``tol``; ``solver="cd"``).
    second_stage : {None, "private_ols", "ols"}
        Optional fit on the selected terms.  ``"private_ols"``: least squares
        from Laplace-noised sufficient statistics, needs ``bounds`` and gets
        ``stage_fraction`` of eps.  ``"ols"``: ordinary least squares on the
        raw data, NOT private (NonPrivateWarning; refused under ``strict``).
    stage_fraction : float in (0, 1)
        Share of eps for the private second stage.
    bounds : (lo, hi) or dict, optional
        Public bounds, used only by ``second_stage="private_ols"``.
    neighbouring : {"replace", "add_remove"}
    truth : list of str, optional
        True support or ranking (simulations): non-private diagnostics.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, values clipped, the non-private selection; with truth,
        accuracies against it).  Off by default: they are
        not private and no output shows them unless asked (``truth=`` implies it).
    oc_trials : int
        Trials per vote margin for the operating characteristics (0 skips).
    random_state, accountant, strict, progress
        See DESIGN §1.

    Returns
    -------
    TwoStageResult

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=100, d=200, random_state=0)
    >>> fit = dp.dp_two_stage("y ~ .", data=df, eps=5.0, k=8, random_state=1, oc_trials=0)
    >>> len(fit.selected)
    8
    """
    if solver not in m.LASSO_SOLVERS:
        raise PrivacyParameterError(f"solver must be 'lars' or 'cd', got {solver!r}.")
    opts = _check_options(eps, lam, blocks, vote, topk, gamma, shuffle, standardize, tol,
                          second_stage, stage_fraction, neighbouring, oc_trials, strict, accountant)
    eps, neighbouring, strict = opts["eps"], opts["neighbouring"], opts["strict"]
    if accountant is not None:
        accountant.check(eps, 0.0)
    if second_stage == "private_ols" and bounds is None:
        raise PrivacyParameterError(
            "second_stage='private_ols' needs public bounds= for the selected columns and the "
            "response, e.g. bounds=(-5, 5); or use second_stage=None.")

    mf = model_frame(formula, data, drop_intercept=True)
    d, n = mf.p, mf.n
    if d < 2:
        raise DataError(f"dp_two_stage needs at least 2 candidate columns, '{formula}' gives {d}.")
    k = sis_m.default_k(d) if k is None else check_k(k, d)
    n_blocks = m.default_blocks(n) if blocks is None else blocks
    if n_blocks > n // 2:
        raise DataError(f"blocks = {n_blocks} leaves fewer than 2 rows per block at n = {n}; "
                        f"use blocks <= {n // 2}.")

    dd = DataDependence(strict)
    refuse_offset(mf, "dp_two_stage")
    missing_rows_step(dd, mf)
    if neighbouring == "add_remove" and blocks is None:
        dd.add(f"the number of blocks ⌊√n⌋ = {n_blocks} uses n, which is private under "
               "add/remove-one-row", fix="pass a public blocks= (e.g. blocks=10)")
    x_box = y_box = None
    if second_stage == "ols":
        dd.add("second stage: ordinary least squares on the selected columns of the raw data "
               "(NOT private)", fix="use second_stage='private_ols' with bounds=, or None")
    elif second_stage == "private_ols":
        x_box = resolve_box(bounds, mf.names, dummies=dummy_columns(mf))
        y_box = resolve_box(bounds, [mf.response])

    entries = _ledger(eps, k, d, n_blocks, topk, second_stage, stage_fraction, neighbouring)
    truth = check_truth(truth, mf.names)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(accountant, entries, "dp_two_stage")

    rng = noise.generator
    labels = m.block_labels(n, n_blocks, neighbouring, rng, shuffle=shuffle)
    coefs = m.block_coefficients(mf.X, mf.y, labels, n_blocks, lam, standardize=standardize,
                                 solver=solver, tol=tol, progress=progress)
    counts = m.vote_counts(coefs, k, vote)
    options = {"gamma": gamma} if topk == "canonical_lipschitz" else {}
    chosen = SELECTORS[topk].select(counts, k, entries[0].eps, rng, **options)
    selected = [mf.names[j] for j in chosen]

    table, n_clipped = None, 0
    if second_stage is not None:
        table, n_clipped = _second_stage(second_stage, mf, chosen, x_box, y_box,
                                         entries[-1].eps, neighbouring, noise)
    sizes = np.bincount(labels, minlength=n_blocks)
    statement = _statement(entries, eps, neighbouring, dd, noise, second_stage, k)
    result = TwoStageResult(
        method="dp_two_stage",
        call=_call(formula, eps, k, lam, blocks, vote, topk, second_stage, neighbouring, strict),
        n=n, p=d, terms=list(mf.names), privacy=statement,
        operating_characteristics=_operating_characteristics(
            d, k, entries[0].eps, n_blocks, topk, gamma, oc_trials, rng),
        selected=selected, k=k, lam=lam, blocks=n_blocks,
        block_sizes=(int(sizes.min()), int(sizes.max())), vote=vote, topk=topk, gamma=gamma,
        lasso=m.solver_text(solver, tol),
        second_stage=table, second_stage_kind=second_stage)
    return attach_diagnostics(result, diagnostics or truth is not None,
                              lambda: _diagnostics(truth, selected, counts, mf, k, n_clipped, rng))


# ----------------------------------------------------------------------------- validation
def _check_options(eps, lam, blocks, vote, topk, gamma, shuffle, standardize, tol, second_stage,
                   stage_fraction, neighbouring, oc_trials, strict, accountant) -> dict:
    out = {"eps": check_eps(eps), "neighbouring": check_neighbouring(neighbouring),
           "strict": check_strict(strict)}
    check_eps(lam, name="lam")
    check_eps(tol, name="tol")
    check_fraction(gamma, "gamma", 0.0, 1.0)
    check_accountant(accountant)
    if blocks is not None and (isinstance(blocks, bool) or not isinstance(blocks, numbers.Integral)
                               or blocks < 2):
        raise DataError(f"blocks must be a whole number >= 2 (or None for ⌊√n⌋), got {blocks!r}.")
    if vote not in ("topk", "support"):
        raise PrivacyParameterError(f"vote must be 'topk' or 'support', got {vote!r}.")
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    if second_stage not in SECOND_STAGES:
        raise PrivacyParameterError(
            f"second_stage must be None, 'private_ols' or 'ols', got {second_stage!r}.")
    check_fraction(stage_fraction, "stage_fraction", 0.0, 1.0, low_open=True)
    for name, flag in (("shuffle", shuffle), ("standardize", standardize)):
        if not isinstance(flag, bool):
            raise PrivacyParameterError(f"{name} must be True or False, got {flag!r}.")
    if isinstance(oc_trials, bool) or not isinstance(oc_trials, numbers.Integral) or oc_trials < 0:
        raise PrivacyParameterError(f"oc_trials must be a whole number >= 0, got {oc_trials!r}.")
    return out


# ----------------------------------------------------------------------------- privacy
def _ledger(eps, k, d, n_blocks, topk, second_stage, stage_fraction, neighbouring) -> list[LedgerEntry]:
    eps_select = eps if second_stage != "private_ols" else eps * (1 - stage_fraction)
    entries = [LedgerEntry(
        step=f"private top-{k} of lasso vote counts over {d} columns ({n_blocks} blocks)",
        mechanism=f"{topk} top-k", eps=eps_select, sensitivity=m.SENSITIVITY_TEXT[neighbouring],
        note=SELECTORS[topk].accounting)]
    if second_stage == "private_ols":
        q = k + 1
        entries.append(LedgerEntry(
            step=f"second stage: noisy sufficient statistics (ZᵀZ upper triangle, Zᵀy) for "
                 f"{k} selected terms + intercept",
            mechanism="Laplace (sufficient-statistics perturbation)", eps=eps - eps_select,
            sensitivity=(f"Δ₁ = {m.ssp_sensitivity(q, neighbouring):g}: {m.ssp_dimension(q)} "
                         f"entries, each a sum of products in [−1, 1], moved by at most "
                         f"{2 if neighbouring == 'replace' else 1} per row"),
            note="basic composition with the selection step"))
    return entries


def _statement(entries, eps, neighbouring, dd, noise, second_stage, k) -> PrivacyStatement:
    notes = ["The selected set is released without an order; vote counts are not released.",
             "Rows are assigned to blocks without looking at the data; the lasso fits inside a "
             "block are not private by themselves and need no bounds."]
    if second_stage == "private_ols":
        notes.append("Second-stage estimates come from noisy sufficient statistics of the "
                     "bounded, clipped data; the number of clipped values is not released.")
    if second_stage == "ols":
        notes.append("Second-stage estimates are NOT private (ordinary least squares).")
    return PrivacyStatement(
        method="two-stage selection", eps=eps, delta=0.0, neighbouring=neighbouring,
        ledger=entries, sensitivities={"vote counts (l-infinity over features)": entries[0].sensitivity},
        data_dependent_steps=dd.steps, seeded=noise.seeded, samplers=sorted(noise.samplers),
        notes=notes)


# ----------------------------------------------------------------------------- second stage
def _second_stage(kind, mf, chosen, x_box, y_box, eps2, neighbouring, noise):
    names = [mf.names[j] for j in chosen]
    Xs = mf.X[:, chosen]
    if kind == "ols":
        Z = np.column_stack([np.ones(mf.n), Xs])
        beta = np.linalg.lstsq(Z, mf.y, rcond=None)[0]
        label = "NOT private (ordinary least squares)"
        return _coef_table(names, beta, label), 0
    xb = type(x_box)(x_box.lo[chosen], x_box.hi[chosen])
    Xu, c1 = to_unit_interval(Xs.astype(float, copy=True), xb)
    yu, c2 = to_unit_interval(mf.y.astype(float, copy=True)[:, None], y_box)
    Z = np.column_stack([np.ones(mf.n), Xu])
    b, _ = m.private_ols(Z, yu[:, 0], eps2, neighbouring, noise.laplace)
    # back to the original units: y = cy + hy·(b0 + Σ b_j (x_j − c_j)/h_j)
    cy, hy = float(y_box.center[0]), float(y_box.halfwidth[0])
    slopes = hy * b[1:] / xb.halfwidth
    intercept = cy + hy * b[0] - float(np.sum(slopes * xb.center))
    label = "private (Laplace sufficient statistics)"
    return _coef_table(names, np.concatenate([[intercept], slopes]), label), c1 + c2


def _coef_table(names, beta, label) -> pd.DataFrame:
    return pd.DataFrame({"term": ["(Intercept)"] + list(names), "estimate": beta, "label": label})


# ----------------------------------------------------------------------------- characteristics
def _operating_characteristics(d, k, eps_select, n_blocks, topk, gamma, trials, rng):
    """Expected share of k features recovered when each gets g votes and the rest none.

    Uses public inputs only (d, k, eps, the number of blocks).
    """
    if not trials:
        return None
    gaps = sorted({max(1, round(n_blocks * f)) for f in (0.25, 0.5, 0.75, 1.0)})
    options = {"gamma": gamma} if topk == "canonical_lipschitz" else {}
    rows = []
    for g in gaps:
        scores = np.zeros(d)
        scores[:k] = g
        hits = np.array([np.count_nonzero(SELECTORS[topk].select(scores, k, eps_select, rng, **options) < k)
                         for _ in range(trials)], dtype=float) / k
        se = float(hits.std(ddof=1) / math.sqrt(trials)) if trials > 1 else float("nan")
        rows.append({"quantity": f"share of {k} recovered when each gets {g} of {n_blocks} votes",
                     "estimate": float(hits.mean()), "std_error": se, "gap": g})
    model = (f"public inputs only, no data model: hypothetical vote counts (k = {k} features with g votes "
             f"each, the other {d - k} with none) run through {topk} at eps = {eps_select:g}")
    return OperatingCharacteristics(rows=rows, model=model, trials=trials)


def _diagnostics(truth, selected, counts, mf, k, n_clipped, rng) -> dict:
    nonprivate = [mf.names[j] for j in m.nonprivate_topk(counts, k, rng)]
    diag = {"rows_dropped_for_missing_values": mf.n_dropped, "values_clipped": n_clipped,
            "nonprivate_two_stage_selected": sorted(nonprivate)}
    if truth is None:
        return diag
    head = truth[:k] if len(truth) >= k else truth
    diag.update({"topk_accuracy_vs_truth": sis_m.topk_accuracy(selected, head),
                 "utility_class_vs_truth": sis_m.utility_class(selected, truth, k) if len(truth) >= k else "n/a",
                 "nonprivate_two_stage_accuracy_vs_truth": sis_m.topk_accuracy(nonprivate, head)})
    return diag


def _call(formula, eps, k, lam, blocks, vote, topk, second_stage, neighbouring, strict) -> dict:
    return call_record({"formula": formula, "eps": eps, "k": k, "lam": lam},
                       {"blocks": (blocks, None), "vote": (vote, "topk"), "topk": (topk, "canonical_lipschitz"),
                        "second_stage": (second_stage, None), "neighbouring": (neighbouring, "replace"),
                        "strict": (strict, False)})
