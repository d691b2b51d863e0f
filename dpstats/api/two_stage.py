"""Front door of the two-stage selection baseline (docs/architecture.md, "Layers").

The method, its plan and its release are in :mod:`dpstats.methods.two_stage`;
this door validates, reads the frame, and builds the result.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import ModelFrame, model_frame, refuse_offset
from ..geometry import Box, check_bounds_form, resolve_box
from ..methods import sis as sis_m
from ..methods import two_stage as m
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..privacy.topk import SELECTORS
from ..results.base import OperatingCharacteristics
from ..results.two_stage import TwoStageResult
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
from ..schema import Schema
from ._common import (
    Settings,
    refuse_omit,
    frame_schema,
    is_auto,
    call_record,
    declared_bounds,
    dummy_columns,
    missing_rows_step,
    private_bounds_setup,
    progress_bar,
    run,
)

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
    bounds_eps: float | None = None,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
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
        Public bounds, used only by ``second_stage="private_ols"``; ``"auto"``
        (or a :class:`dpstats.AutoBounds`) releases them privately first
        (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on them (default 10% of eps).
    levels : dict, optional
        Declared levels of text or categorical columns, e.g. ``{"city": ["Leeds", "York"]}``;
        a value outside them is missing (:mod:`dpstats.schema`, which also says which types
        are declared by themselves and why reading levels from the rows is a named step).
    na_action : {"fill", "omit"}, optional
        Missing values: ``"fill"`` (default under ``neighbouring="replace"``) replaces each by
        its public fill (midpoint of the declared bounds, a factor's first level), no row
        dropped; ``"omit"`` (default under ``"add_remove"``) drops incomplete rows
        (:mod:`dpstats.schema`).  The votes need no bounds: a numeric variable without
        declared bounds gets the public fill 0.
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
        See docs/architecture.md, "Privacy conventions".

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
    opts = _check_options(
        eps,
        lam,
        blocks,
        vote,
        topk,
        gamma,
        shuffle,
        standardize,
        tol,
        second_stage,
        stage_fraction,
        neighbouring,
        oc_trials,
        strict,
        accountant,
    )
    eps, neighbouring, strict = opts["eps"], opts["neighbouring"], opts["strict"]
    if accountant is not None:
        accountant.check(eps, 0.0)
    if second_stage == "private_ols" and bounds is None:
        raise PrivacyParameterError(
            "second_stage='private_ols' needs public bounds= for the selected columns and the "
            "response, e.g. bounds=(-5, 5); or use second_stage=None."
        )
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, keep=[levels])
    bounds, eps, _ = private_bounds_setup(
        bounds, eps, bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    if not is_auto(bounds):
        check_bounds_form(bounds)  # unused without private_ols, but malformed bounds are still refused
    # the votes need no bounds: a variable without declared bounds gets the public fill 0
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps, unbounded_fill=0.0)
    if neighbouring == "replace" and schema.private:
        refuse_omit(
            schema,
            "dp_two_stage under neighbouring='replace'",
            "its blocks split the n rows read into equal parts (default ⌊√n⌋ of them), which is private "
            "only for a public n",
            add_remove="rows get independent block labels; give blocks=",
        )
    door = _TwoStage(
        schema=schema,
        formula=formula,
        data=data,
        eps=eps,
        k=k,
        lam=lam,
        blocks=blocks,
        vote=vote,
        topk=topk,
        gamma=gamma,
        shuffle=shuffle,
        standardize=standardize,
        solver=solver,
        tol=tol,
        second_stage=second_stage,
        stage_fraction=stage_fraction,
        bounds=bounds,
        neighbouring=neighbouring,
        truth=truth,
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
    n_blocks: int
    x_box: Box | None
    y_box: Box | None
    truth: list[str] | None


@dataclass
class _TwoStage:
    """dp_two_stage's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    eps: float
    k: int | None
    lam: float
    blocks: int | None
    vote: str
    topk: str
    gamma: float
    shuffle: bool
    standardize: bool
    solver: str
    tol: float
    second_stage: str | None
    stage_fraction: float
    bounds: Any
    neighbouring: str
    truth: Sequence[str] | None
    oc_trials: int
    strict: bool
    progress: bool
    schema: Schema | None = None
    label: str = "dp_two_stage"
    # the release's generator: the diagnostics' non-private top-k breaks its ties with it
    _generator: np.random.Generator | None = field(default=None, init=False, repr=False)
    _block_sizes: tuple[int, int] | None = field(default=None, init=False, repr=False)

    def frame(self, dd: DataDependence) -> _Frame:
        mf = model_frame(self.formula, self.data, drop_intercept=True, schema=self.schema)
        d, n = mf.p, mf.n
        if d < 2:
            raise DataError(f"dp_two_stage needs at least 2 candidate columns, '{self.formula}' gives {d}.")
        k = sis_m.default_k(d) if self.k is None else check_k(self.k, d)
        n_blocks = m.default_blocks(n) if self.blocks is None else self.blocks
        if self.neighbouring == "replace" and n_blocks > n // 2:  # n public; under add/remove: a stated note
            raise DataError(
                f"blocks = {n_blocks} leaves fewer than 2 rows per block at n = {n}; use blocks <= {n // 2}."
            )
        refuse_offset(mf, "dp_two_stage")
        missing_rows_step(dd, mf)
        m.name_data_dependent_steps(
            dd,
            neighbouring=self.neighbouring,
            n_blocks=n_blocks,
            blocks_given=self.blocks is not None,
            second_stage=self.second_stage,
        )
        x_box = y_box = None
        if self.second_stage == "private_ols":
            bounds = declared_bounds(self.bounds, mf)
            x_box = resolve_box(bounds, mf.names, dummies=dummy_columns(mf))
            y_box = resolve_box(bounds, [mf.response])
        return _Frame(
            mf=mf, k=k, n_blocks=n_blocks, x_box=x_box, y_box=y_box, truth=check_truth(self.truth, mf.names)
        )

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(
            d=frame.mf.p,
            k=frame.k,
            eps=self.eps,
            n_blocks=frame.n_blocks,
            topk=self.topk,
            neighbouring=self.neighbouring,
            second_stage=self.second_stage,
            stage_fraction=self.stage_fraction,
        )

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> m.Release:
        self._generator = noise.generator
        with progress_bar(self.progress, frame.n_blocks, "block lasso fits") as progress:
            return m.release(
                frame.mf.X,
                frame.mf.y,
                plan,
                noise,
                k=frame.k,
                n_blocks=frame.n_blocks,
                lam=self.lam,
                vote=self.vote,
                topk=self.topk,
                gamma=self.gamma,
                neighbouring=self.neighbouring,
                shuffle=self.shuffle,
                standardize=self.standardize,
                solver=self.solver,
                tol=self.tol,
                second_stage=self.second_stage,
                x_box=frame.x_box,
                y_box=frame.y_box,
                progress=progress,
            )

    def result(
        self, frame: _Frame, plan: Plan, released: m.Release, statement: PrivacyStatement, noise: NoiseSource
    ) -> TwoStageResult:
        mf, k, n_blocks = frame.mf, frame.k, frame.n_blocks
        # the statement states the eps asked for: the ledger's exactly rounded sum
        # (1 − f)·eps + (eps − (1 − f)·eps) can be one ulp off when stage_fraction > 1/2
        statement.eps = self.eps
        sizes = np.bincount(released.labels, minlength=n_blocks)
        block_sizes = (int(sizes.min()), int(sizes.max()))
        self._block_sizes = block_sizes
        oc = _operating_characteristics(
            mf.p, k, plan.entries[0].eps, n_blocks, self.topk, self.gamma, self.oc_trials, noise.generator
        )
        return TwoStageResult(
            method="dp_two_stage",
            call=_call(
                self.formula,
                self.eps,
                self.k,
                self.lam,
                self.blocks,
                self.vote,
                self.topk,
                self.second_stage,
                self.neighbouring,
                self.strict,
            ),
            n=mf.n,
            p=mf.p,
            terms=list(mf.names),
            privacy=statement,
            operating_characteristics=oc,
            selected=_selected(mf, released),
            k=k,
            lam=self.lam,
            blocks=n_blocks,
            # sizes follow from n: not an attribute under add/remove (a requested diagnostic then)
            block_sizes=block_sizes if self.neighbouring == "replace" else None,
            vote=self.vote,
            topk=self.topk,
            gamma=self.gamma,
            lasso=m.solver_text(self.solver, self.tol),
            second_stage=_second_stage_table(self.second_stage, mf, released),
            second_stage_kind=self.second_stage,
        )

    def diagnostics(self, frame: _Frame, released: m.Release) -> dict:
        sizes = {} if self.neighbouring == "replace" else {"block_sizes": list(self._block_sizes or ())}
        return sizes | _diagnostics(
            frame.truth,
            _selected(frame.mf, released),
            released.counts,
            frame.mf,
            frame.k,
            released.n_clipped,
            self._generator,
        )


# ----------------------------------------------------------------------------- validation
def _check_options(
    eps,
    lam,
    blocks,
    vote,
    topk,
    gamma,
    shuffle,
    standardize,
    tol,
    second_stage,
    stage_fraction,
    neighbouring,
    oc_trials,
    strict,
    accountant,
) -> dict:
    out = {
        "eps": check_eps(eps),
        "neighbouring": check_neighbouring(neighbouring),
        "strict": check_strict(strict),
    }
    check_eps(lam, name="lam")
    check_eps(tol, name="tol")
    check_fraction(gamma, "gamma", 0.0, 1.0)
    check_accountant(accountant)
    if blocks is not None and (
        isinstance(blocks, bool) or not isinstance(blocks, numbers.Integral) or blocks < 2
    ):
        raise DataError(f"blocks must be a whole number >= 2 (or None for ⌊√n⌋), got {blocks!r}.")
    if vote not in ("topk", "support"):
        raise PrivacyParameterError(f"vote must be 'topk' or 'support', got {vote!r}.")
    if topk not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {topk!r}.")
    if second_stage not in SECOND_STAGES:
        raise PrivacyParameterError(
            f"second_stage must be None, 'private_ols' or 'ols', got {second_stage!r}."
        )
    check_fraction(stage_fraction, "stage_fraction", 0.0, 1.0, low_open=True)
    for name, flag in (("shuffle", shuffle), ("standardize", standardize)):
        if not isinstance(flag, bool):
            raise PrivacyParameterError(f"{name} must be True or False, got {flag!r}.")
    check_oc_trials(oc_trials)
    return out


# ----------------------------------------------------------------------------- result
def _selected(mf: ModelFrame, released: m.Release) -> list[str]:
    return [mf.names[j] for j in released.chosen]


SECOND_STAGE_LABELS = {
    "ols": "NOT private (ordinary least squares)",
    "private_ols": "private (Laplace sufficient statistics)",
}


def _second_stage_table(kind: str | None, mf: ModelFrame, released: m.Release) -> pd.DataFrame | None:
    if kind is None:
        return None
    return pd.DataFrame(
        {
            "term": ["(Intercept)"] + _selected(mf, released),
            "estimate": released.beta,
            "label": SECOND_STAGE_LABELS[kind],
        }
    )


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
        hits = (
            np.array(
                [
                    np.count_nonzero(SELECTORS[topk].select(scores, k, eps_select, rng, **options) < k)
                    for _ in range(trials)
                ],
                dtype=float,
            )
            / k
        )
        se = float(hits.std(ddof=1) / math.sqrt(trials)) if trials > 1 else float("nan")
        rows.append(
            {
                "quantity": f"share of {k} recovered when each gets {g} of {n_blocks} votes",
                "estimate": float(hits.mean()),
                "std_error": se,
                "gap": g,
            }
        )
    model = (
        f"public inputs only, no data model: hypothetical vote counts (k = {k} features with g votes "
        f"each, the other {d - k} with none) run through {topk} at eps = {eps_select:g}"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials)


def _diagnostics(truth, selected, counts, mf, k, n_clipped, rng) -> dict:
    nonprivate = [mf.names[j] for j in m.nonprivate_topk(counts, k, rng)]
    diag = {
        "rows_dropped_for_missing_values": mf.n_dropped,
        "values_filled_for_missing": mf.n_filled,
        "values_clipped": n_clipped,
        "nonprivate_two_stage_selected": sorted(nonprivate),
    }
    if truth is None:
        return diag
    head = truth[:k] if len(truth) >= k else truth
    diag.update(
        {
            "topk_accuracy_vs_truth": sis_m.topk_accuracy(selected, head),
            "utility_class_vs_truth": sis_m.utility_class(selected, truth, k) if len(truth) >= k else "n/a",
            "nonprivate_two_stage_accuracy_vs_truth": sis_m.topk_accuracy(nonprivate, head),
        }
    )
    return diag


def _call(formula, eps, k, lam, blocks, vote, topk, second_stage, neighbouring, strict) -> dict:
    return call_record(
        {"formula": formula, "eps": eps, "k": k, "lam": lam},
        {
            "blocks": (blocks, None),
            "vote": (vote, "topk"),
            "topk": (topk, "canonical_lipschitz"),
            "second_stage": (second_stage, None),
            "neighbouring": (neighbouring, "replace"),
            "strict": (strict, False),
        },
    )
