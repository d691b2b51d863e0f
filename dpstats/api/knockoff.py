"""Front door of the DP fixed-X knockoff filter (Pournaderi & Xiang) and its simulation.

The method, its plan and its release are in :mod:`dpstats.methods.knockoff`;
this door validates, reads the frame (rows clipped to the bound B, the
normalised sufficient statistics), and builds the result.  ``simulate_knockoff``
is a thin checked door over :func:`dpstats.simulate.knockoff.simulate_grid`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import AssumptionError, DataError, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from .. import engines
from ..formula import ModelFrame, finish_checks, model_frame, refuse_offset
from ..methods.knockoff import filter as ko
from ..methods.knockoff import mechanism as kd
from ..methods.knockoff import planning as kp
from ..simulate import knockoff as ks
from ..privacy.accountant import Accountant
from ..privacy.randomness import FastNoise, NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import BASIS_ASSUMED, BASIS_RELEASED, OperatingCharacteristics
from ..simulate import RELEASED, Assume, describe
from ..results.knockoff import KnockoffResult
from ..stats import RowClippedGram, row_clipped_gram
from ..validation import (
    check_truth,
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
    frame_schema,
    is_auto,
    missing_rows_step,
    private_bounds_setup,
    refuse_omit,
    row_norm_bound,
    run,
    schema_parameters,
)

ROUTES = ("shortcut", "materialise", "materialize")


@schema_parameters
def dp_knockoff(
    formula: str,
    data: pd.DataFrame,
    eps: float,
    delta: float,
    fdr: float = 0.1,
    method: str = "II",
    statistic: str = "csm",
    *,
    bounds: float | str | None = None,
    bounds_eps: float | None = None,
    sigma: float | None = None,
    beta_norm: float | None = None,
    c_min: float | None = None,
    lambda_min: float | None = None,
    ridge: float = 0.0,
    s: str = "lambda_min",
    offset: int = 1,
    knockoffs: str = "shortcut",
    eps_split: tuple[float, float, float] = (0.5, 0.25, 0.25),
    delta_split: Sequence[float] | None = None,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
    truth: Sequence[str] | None = None,
    diagnostics: bool = False,
    assume: Assume | dict | str | None = None,
    oc_trials: int = 100,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
) -> KnockoffResult:
    """Differentially private fixed-X knockoff filter (Methods I and II of Pournaderi & Xiang).

    Model y = Xβ + w, w ~ N(0, σ²I), no intercept.  Columns are normalised to unit
    norm, fixed-X knockoffs X̃′ are built with S = sI, and the OLS coefficients b of
    y on [X′ X̃′] are released with noise: **Method II** (default, Theorem 5) adds
    N(0, κ²I) to b; **Method I** (Theorem 3) adds noise to the Gram matrix G and to
    [X′ X̃′]ᵀy and solves.  The W statistics (CSM, eq. 7, or LCD, eq. 6) and the
    knockoff+ threshold are post-processing.  Everything is computed from n, XᵀX,
    Xᵀy and yᵀy: Ũᵀy is sampled in O(p) (Haar trick), so no n × n matrix is formed.

    Parameters
    ----------
    formula : str
        ``"y ~ ."`` or any R-style formula; the intercept is dropped.
    data : pandas.DataFrame, or a source of :mod:`dpstats.engines`
        In memory, or streamed (``dpstats.engines.stream("file.parquet")``) or on
        Dask: the statistics then come from one chunked pass.
    eps : float
        Total eps.  Method I splits it by ``eps_split`` into (cross-products,
        λ_min, Σ′); Method II spends it on the coefficients.  ``math.inf`` runs the
        ordinary (non-private) fixed-X knockoff filter.
    delta : float in (0, 1)
        Total delta: Method I δ + δ₁ + δ₂ (cross-products, Σ′, sensitivity-bound
        failure), Method II δ₁ + δ₂; equal shares unless ``delta_split``.
    fdr : float in (0, 1)
        Target FDR q.
    method : {"II", "I"}
    statistic : {"csm", "lcd"}
    bounds : float, optional
        Public bound B on the l2 norm of each row of the design (Assumption 3);
        rows are clipped to it.  Without it, B = the largest row norm of the data
        (a data-dependent step).  ``"auto"`` (or a :class:`dpstats.AutoBounds`):
        B is released privately first, a high quantile of the row norms
        (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on B (default 10% of eps, and
        10% of delta); the filter gets the rest.
    sigma, beta_norm : float, optional
        Declared upper bounds on the noise sd σ and on ‖β‖ (Remark 2), β on the
        scale of the original columns (as written in the formula).  If not given
        they are estimated from the data (OLS), a data-dependent step.
    c_min, lambda_min : float, optional
        Declared public lower bounds on the smallest column norm and on
        λ_min(Σ′).  Given, the sensitivities use them with the public bounds
        ‖Σ′‖_F, λ_max ≤ p and C_max ≤ √n·B (and s = ``lambda_min``); not given,
        the data's values are used, as in the paper (data-dependent).  Declared
        values are assumptions stated in the privacy statement, never checked on
        the rows (a check that can refuse is itself a release): ``lambda_min`` is
        enforced by regularising Σ′ to it; ``c_min`` cannot be, so the guarantee
        rests on it.  ``diagnostics=True`` reports whether each held (not private).
    ridge : float
        Ridge stabiliser ω² >= 0 (Remark 2): b = (G + ω²I)⁻¹[X′ X̃′]ᵀy; it relaxes
        Theorem 5's condition to (1 − η²)λ_min − η² + ω² > 0.
    s : {"lambda_min", "equi"}
        s = λ_min(Σ′) (the paper, Lemma 1) or min(2λ_min, 1) (equicorrelated;
        Method II with ridge > 0 only, since G is then singular).
    offset : {1, 0}
        1: knockoff+ (FDR control); 0: knockoff (modified FDR).
    knockoffs : {"shortcut", "materialise"}
        Sample Ũᵀy in O(p) (default), or build X̃′ by QR (memory O(np)); the
        matrix is kept in ``result.knockoffs_nonprivate`` (not private).
    eps_split : 3 fractions summing to 1
        Method I's split; default (0.5, 0.25, 0.25) is the paper's (0.1, 0.05, 0.05).
    delta_split : fractions summing to 1, optional
    {schema parameters}
    neighbouring : {"replace"}
        The paper's analysis is for replacing one row.
    truth : list of str, optional
        True support (simulations): adds non-private diagnostics.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped, rows clipped to B; with truth, FDP/TPP and the
        non-private selection).  Off by default: they are
        not private and no output shows them unless asked (``truth=`` implies it).
    assume : dpstats.simulate.Assume, dict or "released", optional
        A model you state; only then are FDR and power reported, simulated at
        the level of the statistics (orthonormal design, O(p²) per trial,
        independent of n; :func:`dpstats.simulate.knockoff.operating_characteristics`)
        with this release's noise scales, and labelled "under the assumed
        model: ..." in every output.  ``Assume(signals=s, strength=b, noise=σ)``:
        s effects b·√n on the unit-norm column scale (standardized features),
        noise sd σ; correlation must be 0.  ``"released"``: the released
        coefficients of the selected terms are the truth (optimistic).
        Without it, the operating characteristics hold only what the released
        W imply: the threshold, the number selected, the knockoff(+) estimate
        of the FDP at the threshold, and the noise scales.
    oc_trials : int
        Trials of the ``assume=`` simulation; 0 leaves out the operating
        characteristics altogether.
    random_state, accountant, strict, progress
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    KnockoffResult

    Notes
    -----
    n ≤ p is refused (screen first with :func:`dpstats.dp_sis` on a data split);
    for p < n < 2p the rows are augmented to 2p as R's ``knockoff`` package does
    (zero rows of X, responses drawn from N(0, σ̂²)), a data-dependent step.

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # eps = inf: not private, and warned
    ...     warnings.simplefilter("always")
    ...     fit = dp.dp_knockoff("y ~ .", data=df, eps=math.inf, delta=1e-6, fdr=0.2,
    ...                          random_state=1, oc_trials=0)
    >>> [str(w.message) for w in caught]
    ['eps = inf: the ordinary fixed-X knockoff filter, NOT private.']
    >>> fit.variant
    'non-private'
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", dp.NonPrivateWarning)  # the same non-private call, warned above
    ...     fit = dp.dp_knockoff("y ~ .", data=df, eps=math.inf, delta=1e-6, fdr=0.2, random_state=1,
    ...                          assume=dp.simulate.Assume(signals=3, strength=0.5), oc_trials=20)
    >>> fit.operating_characteristics.assumption_label[:24]
    'under the assumed model:'
    """
    args = _validate(
        eps,
        delta,
        fdr,
        method,
        statistic,
        bounds,
        sigma,
        beta_norm,
        c_min,
        lambda_min,
        ridge,
        s,
        offset,
        knockoffs,
        eps_split,
        delta_split,
        neighbouring,
        oc_trials,
        strict,
        accountant,
    )
    assume = Assume.coerce(assume, released=True)
    check_oc_trials(oc_trials, assume)
    if assume is not None and assume != RELEASED and assume.correlation != 0:
        raise PrivacyParameterError("the knockoff simulation assumes an orthonormal design: correlation = 0.")
    if math.isinf(eps):
        if strict:
            raise PrivacyParameterError("strict=True refuses eps = inf (a non-private analysis).")
        warnings.warn(
            "eps = inf: the ordinary fixed-X knockoff filter, NOT private.",
            NonPrivateWarning,
            stacklevel=caller_stacklevel(),
        )
    if accountant is not None:
        accountant.check(eps, 0.0 if math.isinf(eps) else delta)
    data = engines.as_data(data, formula, statistics=knockoffs == "shortcut", keep=[levels])
    if engines.is_engine_input(data) and knockoffs != "shortcut":
        raise PrivacyParameterError(
            "knockoffs='materialise' builds X~ from the rows, which streamed and Dask data do not keep "
            "in memory; use the default knockoffs='shortcut' (same distribution, from statistics)."
        )
    bounds, eps, delta = private_bounds_setup(
        bounds, eps, delta, bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps)
    if schema.private:
        refuse_omit(
            schema,
            "dp_knockoff",
            "its statistics are normalised by n, and its checks (n > p, delta < 1/n) and operating "
            "characteristics read n",
        )
    door = _Knockoff(
        schema=schema,
        formula=formula,
        data=data,
        eps=eps,
        delta=delta,
        fdr=fdr,
        method=method,
        statistic=statistic,
        bounds=bounds,
        sigma=sigma,
        beta_norm=beta_norm,
        c_min=c_min,
        lambda_min=lambda_min,
        ridge=ridge,
        s=s,
        offset=offset,
        knockoffs=knockoffs,
        eps_split=args["eps_split"],
        delta_split=args["delta_split"],
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
    B: float
    st: ko.Normalised  # normalised statistics of the design clipped to row norm B
    n_clipped: int
    truth: list[str] | None = None
    # whether the declared c_min and lambda_min held on the rows: a non-private fact, for diagnostics only
    declared_held: dict[str, bool] = field(default_factory=dict)


@dataclass
class _Knockoff:
    """dp_knockoff's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    eps: float
    delta: float
    fdr: float
    method: str
    statistic: str
    bounds: float | None
    sigma: float | None
    beta_norm: float | None
    c_min: float | None
    lambda_min: float | None
    ridge: float
    s: str
    offset: int
    knockoffs: str
    eps_split: tuple[float, ...]
    delta_split: tuple[float, ...]
    truth: Sequence[str] | None
    assume: Assume | None
    oc_trials: int
    strict: bool
    progress: bool
    schema: Schema | None = None
    label: str = "dp_knockoff"
    # the release's generator: the operating characteristics and diagnostics draw from it afterwards
    _generator: np.random.Generator | None = field(default=None, init=False, repr=False)

    @property
    def nonprivate(self) -> bool:
        return math.isinf(self.eps)

    def frame(self, dd: DataDependence) -> _Frame:
        streamed = engines.is_engine_input(self.data)
        if streamed:  # one chunked pass gives the frame's names and n and the statistics (dpstats.engines)
            mf, pass_stats = engines.sufficient_statistics(
                self.formula,
                self.data,
                gram=True,
                row_bound=self.bounds,
                row_norms=self.bounds is None,
                progress=self.progress,
                schema=self.schema,
            )
            cross = pass_stats.cross
            g = RowClippedGram(
                cross.xtx, cross.xty, cross.yty, pass_stats.row_norm_max, pass_stats.n_rows_clipped
            )
            declared = self.bounds
        elif is_auto(self.bounds):  # the private B needs the rows' norms first, then one clipped pass
            mf = model_frame(self.formula, self.data, drop_intercept=True, schema=self.schema)
            declared = row_norm_bound(self.bounds, mf)
            g = row_clipped_gram(mf.X, mf.y, declared)
        else:
            declared = self.bounds
            mf, g = _frame_and_gram(self.formula, self.data, declared, self.schema)
        self._check_shape(mf)
        refuse_offset(mf, "dp_knockoff")
        missing_rows_step(dd, mf)
        B = kp.row_bound(g.row_norm_max, declared, None if self.nonprivate else dd)
        st = ko.normalise(mf.n, g.xtx, g.xty, g.yty, names=list(mf.names))
        return _Frame(mf=mf, B=B, n_clipped=g.n_rows_clipped, **self._declared_design(st))

    def _declared_design(self, st: ko.Normalised) -> dict[str, Any]:
        """The statistics with the declared lambda_min enforced, and whether the declarations held.

        Declared c_min and lambda_min are assumptions stated in the statement, not
        checked on the rows (a check that can refuse is itself a release): lambda_min
        is enforced by regularising Σ′ (:func:`~dpstats.methods.knockoff.filter.floor_lambda_min`);
        whether each held is kept for requested diagnostics only.
        """
        held = {}
        if self.c_min is not None:
            held["c_min"] = bool(st.col_norms.min() >= self.c_min)
        if self.lambda_min is not None and not self.nonprivate:
            st, held["lambda_min"] = ko.floor_lambda_min(st, self.lambda_min)
        return {"st": st, "declared_held": held}

    def _check_shape(self, mf: ModelFrame) -> None:
        n, p = mf.n, mf.p
        if p < 2:
            raise DataError(f"dp_knockoff needs at least 2 candidate columns; '{self.formula}' gives {p}.")
        if n <= p:
            raise AssumptionError(
                f"fixed-X knockoffs need more rows than columns, but n = {n} <= p = {p}. Screen first: "
                "split the rows, run dp_sis on one part to keep fewer than n/2 terms, then dp_knockoff "
                "with those terms on the other part (the budgets of disjoint parts do not add)."
            )
        if not self.nonprivate and self.delta >= 1 / n:
            warnings.warn(
                f"delta = {self.delta:g} is at least 1/n = {1 / n:g}; the paper's experiments use "
                "delta = 2p/n, but a delta this large allows releasing a whole row.",
                UserWarning,
                stacklevel=caller_stacklevel(),
            )  # dp_knockoff <- run <- frame <- here

    def plan(self, frame: _Frame, dd: DataDependence) -> kp.KnockoffPlan:
        plan = kp.plan(
            frame.st,
            B=frame.B,
            eps=self.eps,
            delta=self.delta,
            method=self.method,
            s=self.s,
            ridge=self.ridge,
            eps_split=self.eps_split,
            delta_split=self.delta_split,
            sigma=self.sigma,
            beta_norm=self.beta_norm,
            c_min=self.c_min,
            lambda_min=self.lambda_min,
            knockoffs=self.knockoffs,
            dd=dd,
        )
        frame.truth = check_truth(self.truth, frame.mf.names)  # after the plan's checks, as before the move
        return plan

    def release(self, frame: _Frame, plan: kp.KnockoffPlan, noise: NoiseSource) -> kd.Released:
        self._generator = noise.generator
        design = (frame.mf.X, frame.mf.y) if self.knockoffs != "shortcut" else None
        return kd.release(
            frame.st,
            plan,
            noise,
            statistic=self.statistic,
            fdr=self.fdr,
            offset=self.offset,
            ridge=self.ridge,
            design=design,
        )

    def result(
        self,
        frame: _Frame,
        plan: kp.KnockoffPlan,
        released: kd.Released,
        statement: PrivacyStatement,
        noise: NoiseSource,
    ) -> KnockoffResult:
        mf, rel, chosen = frame.mf, released.mechanism, released.chosen
        selected = [mf.names[j] for j in chosen]
        oc = _operating_characteristics(
            rel,
            chosen,
            released.threshold,
            _noise_table(plan.scales),
            self.assume,
            mf.n,
            plan.sigma,
            plan.scales,
            self._filter_args(),
            self.oc_trials,
            noise.generator,
        )
        result = KnockoffResult(
            method="dp_knockoff",
            call=_call(
                self.formula,
                self.eps,
                self.delta,
                self.fdr,
                self.method,
                self.statistic,
                self.bounds,
                self.ridge,
                self.s,
                self.offset,
                self.knockoffs,
                self.strict,
            ),
            n=mf.n,
            p=mf.p,
            terms=list(mf.names),
            privacy=statement,
            operating_characteristics=oc,
            selected=selected,
            signs=[int(np.sign(rel.coefficients[j])) for j in chosen],
            W=rel.W,
            threshold=released.threshold,
            fdr=self.fdr,
            offset=self.offset,
            coefficients=rel.coefficients,
            variant="non-private" if self.nonprivate else self.method,
            statistic=self.statistic,
            s=plan.s_value,
            ridge=self.ridge,
            row_bound=frame.B,
            knockoff_route=(
                "materialised X~ (QR)" if released.knockoffs is not None else "sufficient-statistics (Haar)"
            ),
            noise=_noise_table(plan.scales),
            released_gram=rel.gram,
            knockoffs_nonprivate=released.knockoffs,
            empty_reason="" if selected else ko.empty_selection_reason(mf.p, self.fdr, self.offset),
        )
        if not selected:
            result.warnings.append(result.empty_reason)
        return result

    def _filter_args(self) -> dict:
        return dict(statistic=self.statistic, fdr=self.fdr, offset=self.offset, ridge=self.ridge)

    def diagnostics(self, frame: _Frame, released: kd.Released) -> dict:
        held = frame.declared_held
        declared = (
            {
                "declared_assumptions_hold": all(held.values()),
                **{f"declared_{name}_holds": value for name, value in held.items()},
            }
            if held
            else {}
        )
        return declared | _diagnostics(
            frame.truth,
            frame.mf,
            [frame.mf.names[j] for j in released.chosen],
            frame.n_clipped,
            released.augmented,
            released.s_value,
            self._generator,
            **self._filter_args(),
        )


# --------------------------------------------------------------------- validation


def _positive(value, name: str, allow_none: bool = True) -> float | None:
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise PrivacyParameterError(f"{name} must be a positive finite number, got {value!r}.")
    return float(value)


def _fractions(values, count: int, name: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise PrivacyParameterError(
            f"{name} must be {count} fractions summing to 1, got {values!r}."
        ) from None
    if (
        len(vals) != count
        or any(not (0 < v < 1) for v in vals)
        or not math.isclose(sum(vals), 1.0, rel_tol=1e-9)
    ):
        raise PrivacyParameterError(
            f"{name} must be {count} fractions in (0, 1) summing to 1, got {values!r}."
        )
    return vals


def _validate(
    eps,
    delta,
    fdr,
    method,
    statistic,
    bounds,
    sigma,
    beta_norm,
    c_min,
    lambda_min,
    ridge,
    s,
    offset,
    knockoffs,
    eps_split,
    delta_split,
    neighbouring,
    oc_trials,
    strict,
    accountant,
) -> dict:
    check_eps(eps, allow_inf=True)
    check_delta(delta, allow_zero=False)
    check_fraction(fdr, "fdr", 0.0, 1.0, low_open=True)
    if method not in ("I", "II"):
        raise PrivacyParameterError(f"method must be 'I' or 'II' (the paper's Methods), got {method!r}.")
    if statistic not in ko.STATISTICS:
        raise PrivacyParameterError(f"statistic must be one of {sorted(ko.STATISTICS)}, got {statistic!r}.")
    if is_auto(bounds):
        bounds = None  # checked by private_bounds_setup
    if bounds is not None and not isinstance(bounds, numbers.Real):
        raise PrivacyParameterError(
            "bounds for dp_knockoff is one number B, the public bound on the l2 norm of each row of the "
            f"design (Assumption 3), e.g. bounds=10.0; got {bounds!r}."
        )
    _positive(bounds, "bounds (the row-norm bound B)")
    _positive(sigma, "sigma")
    _positive(beta_norm, "beta_norm")
    _positive(c_min, "c_min")
    if lambda_min is not None and (_positive(lambda_min, "lambda_min") > 1):
        raise PrivacyParameterError(f"lambda_min is a lower bound on λ_min(Σ′) <= 1, got {lambda_min}.")
    if (
        isinstance(ridge, bool)
        or not isinstance(ridge, numbers.Real)
        or not (math.isfinite(ridge) and ridge >= 0)
    ):
        raise PrivacyParameterError(f"ridge (omega^2) must be a finite number >= 0, got {ridge!r}.")
    if s not in ko.S_CHOICES:
        raise PrivacyParameterError(f"s must be one of {list(ko.S_CHOICES)}, got {s!r}.")
    if s == "equi" and (method == "I" or ridge <= 0):
        raise AssumptionError(
            "s='equi' makes the augmented Gram matrix G singular (lambda_min(G) = 0), so OLS on "
            "[X' X~'] and the sensitivity bounds fail. Use s='lambda_min' (the paper), or Method II "
            "with a ridge stabiliser ridge > 0."
        )
    if offset not in (0, 1) or isinstance(offset, bool):
        raise PrivacyParameterError(f"offset must be 1 (knockoff+) or 0 (knockoff), got {offset!r}.")
    if knockoffs not in ROUTES:
        raise PrivacyParameterError(f"knockoffs must be 'shortcut' or 'materialise', got {knockoffs!r}.")
    check_neighbouring(neighbouring, supported=("replace",))
    check_oc_trials(oc_trials)
    check_strict(strict)
    check_accountant(accountant)
    split = _fractions(eps_split, 3, "eps_split")
    dsplit = (
        _fractions(delta_split, 3 if method == "I" else 2, "delta_split")
        if delta_split is not None
        else ((1 / 3,) * 3 if method == "I" else (0.5, 0.5))
    )
    return {"eps_split": split, "delta_split": dsplit}


# --------------------------------------------------------------------- data


def _frame_and_gram(
    formula: str, data, bounds: float | None, schema: Schema | None = None
) -> tuple[ModelFrame, RowClippedGram]:
    """The model frame and its row-clipped Gram matrix with the rows read once.

    Plain numeric designs defer the scan for missing values to the pass
    (a non-finite value makes the Gram matrix non-finite; the frame is then rebuilt with those
    rows dropped and counted, and the pass repeated).  Rows are clipped to the declared B, or
    none are when B is to be their largest norm, which the pass records.
    """
    mf = model_frame(formula, data, drop_intercept=True, defer_checks=True, schema=schema)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite results are discarded below
        g = row_clipped_gram(mf.X, mf.y, bounds)
    finite = bool(np.isfinite(g.xtx).all() and np.isfinite(g.xty).all() and np.isfinite(g.yty))
    if mf.checked or finish_checks(mf, finite):
        return mf, g
    mf = model_frame(formula, data, drop_intercept=True, schema=schema)
    return mf, row_clipped_gram(mf.X, mf.y, bounds)


def _noise_table(scales: kd.Scales) -> dict[str, float]:
    out = dict(scales.sensitivities)
    if scales.method == "II":
        out["kappa (coefficient noise sd)"] = scales.kappa
    elif scales.method == "I":
        out.update(
            {
                "theta1 Laplace scale": scales.laplace_s,
                "kappa1 (Gram noise sd)": scales.kappa1,
                "kappa2 (cross-product noise sd)": scales.kappa2,
            }
        )
    return out


def _operating_characteristics(
    rel, chosen, T, noise_table, assume, n, sigma, scales, filter_args, trials, gen
):
    """What the released W imply; FDR and power only under ``assume``."""
    if not trials:
        return None
    fdr, offset = filter_args["fdr"], filter_args["offset"]
    rows = [_exact("knockoff threshold T (released W)", T), _exact("number selected", chosen.size)]
    W = rel.W
    if math.isfinite(T):
        fdp_hat = (offset + np.count_nonzero(W <= -T)) / max(1, np.count_nonzero(W >= T))
        rows.append(
            _exact(
                f"knockoff{'+' if offset else ''} estimate of the FDP at T "
                "((offset + #{W <= -T}) / #{W >= T})",
                fdp_hat,
            )
        )
    else:
        ts = np.unique(np.abs(W[W != 0]))
        best = min(
            ((offset + np.count_nonzero(W <= -t)) / max(1, np.count_nonzero(W >= t)) for t in ts),
            default=math.nan,
        )
        rows.append(
            _exact(
                f"smallest knockoff{'+' if offset else ''} FDP estimate over thresholds "
                f"(none reaches q = {fdr:g})",
                best,
            )
        )
    rows += [_exact(f"noise: {name}", value) for name, value in noise_table.items()]
    model = "exact, from the released W, the target q and the noise scales of this release; no data model"
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    p = W.size
    mu = np.zeros(p)
    if assume == RELEASED:
        mu[chosen] = rel.coefficients[chosen]
        how = (
            f"released coefficients of the {chosen.size} selected terms as the effects, noise sd {sigma:.4g}"
        )
    else:
        mu[: min(assume.signals, p)] = assume.strength * math.sqrt(n)
        sigma = assume.noise
        how = "effects strength·√n on the unit-norm column scale"
    if mu.any():
        est = ks.operating_characteristics(mu, sigma, scales, trials=trials, gen=gen, **filter_args)
    else:
        est = {"fdr": (0.0, 0.0), "power": (math.nan, math.nan)}
    rows += [
        {
            "quantity": f"FDR (target {fdr:g})",
            "estimate": est["fdr"][0],
            "std_error": est["fdr"][1],
            "basis": BASIS_ASSUMED,
        },
        {
            "quantity": f"power (share of the {np.count_nonzero(mu)} assumed signals selected)",
            "estimate": est["power"][0],
            "std_error": est["power"][1],
            "basis": BASIS_ASSUMED,
        },
    ]
    model += (
        f"; FDR and power simulated at the level of the statistics: orthonormal design (Sigma' = I, s = 1), "
        f"p = {p}, {how}, the same mechanism and noise scales as this release"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=describe(assume))


def _exact(quantity: str, value) -> dict:
    return {"quantity": quantity, "estimate": float(value), "std_error": 0.0, "basis": BASIS_RELEASED}


def _diagnostics(
    truth, mf, selected, n_clipped, st_aug, s_value, gen, *, statistic, fdr, offset, ridge
) -> dict:
    diag = {
        "rows_dropped_for_missing_values": mf.n_dropped,
        "values_filled_for_missing": mf.n_filled,
        "rows_clipped_to_B": n_clipped,
    }
    if truth is None:
        return diag
    nonnull = np.array([mf.names.index(t) for t in truth], dtype=int)
    fdp, tpp = ks.fdp_tpp(np.array([mf.names.index(t) for t in selected], dtype=int), nonnull)
    plain = kd.run_mechanism(
        st_aug, s_value, kd.Scales("none"), FastNoise(gen), statistic=statistic, ridge=ridge
    )
    np_sel = ko.select(plain.W, ko.knockoff_threshold(plain.W, fdr, offset))
    diag.update(
        {
            "fdp_vs_truth": fdp,
            "tpp_vs_truth": tpp,
            "nonprivate_knockoff_selected": [mf.names[j] for j in np_sel],
            "nonprivate_fdp_tpp_vs_truth": list(ks.fdp_tpp(np_sel, nonnull)),
        }
    )
    return diag


def _call(formula, eps, delta, fdr, method, statistic, bounds, ridge, s, offset, knockoffs, strict) -> dict:
    return call_record(
        {"formula": formula, "eps": eps, "delta": delta, "fdr": fdr, "method": method},
        {
            "statistic": (statistic, "csm"),
            "bounds": (bounds, None),
            "ridge": (ridge, 0),
            "s": (s, "lambda_min"),
            "offset": (offset, 1),
            "knockoffs": (knockoffs, "shortcut"),
            "strict": (strict, False),
        },
    )


# --------------------------------------------------------------------- simulation

FIGURE1_NS = tuple(int(round(10**e)) for e in np.linspace(3.0, 6.6, 12))


def simulate_knockoff(
    n: int | Sequence[int] | None = None,
    p: int = 50,
    k: int = 15,
    amplitude: float = 4.5,
    sigma: float = 1.0,
    eps: float = 0.2,
    delta: float | None = None,
    method: str | Sequence[str] = ("I", "II"),
    trials: int = 250,
    *,
    fdr: float = 0.2,
    statistic: str = "csm",
    offset: int = 1,
    ridge: float = 0.0,
    bounds: float | None = None,
    eps_split: tuple[float, float, float] = (0.5, 0.25, 0.25),
    route: str = "shortcut",
    random_state: RandomState = None,
    progress: bool = False,
) -> pd.DataFrame:
    """The paper's experiment (Figure 1): FDR and power of DP knockoffs across n.

    X has iid N(0, 1) entries, β has ``k`` nonzero entries equal to ``amplitude``
    (random positions), y = Xβ + N(0, σ²).  Each trial is (eps, delta)-DP with
    delta = 2p/n by default; Method I splits eps by ``eps_split`` and delta in three
    equal parts, Method II delta in two.  The sensitivities use the true σ and ‖β‖
    and the data's λ_min and column norms, as in the paper.  ``route="shortcut"``
    samples the sufficient statistics directly (Wishart XᵀX, Xᵀw | X, χ² residual;
    O(p³) per trial whatever n); ``"materialise"`` draws the n × p data and builds X̃
    by QR (for validating the shortcut at small n).

    Parameters
    ----------
    n : int or sequence of int, optional
        Sample sizes; default the 12-point grid 10^3 ... 10^6.6 (``FIGURE1_NS``).
    p, k, amplitude, sigma : model.
    eps, delta : per-trial budget (delta default 2p/n).
    method : "I", "II" or a sequence of them.
    trials : int
        Monte Carlo trials per (n, method).
    fdr, statistic, offset, ridge, eps_split : as in :func:`dp_knockoff`.
    bounds : float, optional
        Row-norm bound B; default: the (1 − 0.001/n) quantile of √χ²_p.
    route : {"shortcut", "materialise"}
    random_state, progress : see docs/architecture.md, "Privacy conventions".

    Returns
    -------
    pandas.DataFrame
        One row per (method, n): ``fdr``, ``fdr_se``, ``power``, ``power_se``
        (Monte Carlo standard errors), ``refused`` (trials where an assumption of
        the sensitivity bound failed) and ``seconds``.

    Examples
    --------
    >>> import dpstats as dp
    >>> tab = dp.simulate_knockoff(n=[10**5], method="II", trials=20, random_state=0)
    >>> list(tab.columns[:4])
    ['n', 'method', 'trials', 'eps']
    """
    ns = list(FIGURE1_NS) if n is None else ([n] if isinstance(n, numbers.Integral) else list(n))
    methods = [method] if isinstance(method, str) else list(method)
    for m in methods:
        if m not in ("I", "II", "none"):
            raise PrivacyParameterError(f"method must be 'I', 'II' or 'none', got {m!r}.")
    if not (isinstance(p, numbers.Integral) and isinstance(k, numbers.Integral) and 1 <= k < p):
        raise DataError(f"need whole numbers 1 <= k < p, got k = {k!r}, p = {p!r}.")
    for size in ns:
        if not isinstance(size, numbers.Integral) or size < 2 * p:
            raise AssumptionError(f"each n must be a whole number >= 2p = {2 * p}, got {size!r}.")
    if not isinstance(trials, numbers.Integral) or trials < 2:
        raise DataError(f"trials must be a whole number >= 2, got {trials!r}.")
    check_eps(eps, allow_inf=True)
    check_fraction(fdr, "fdr", 0.0, 1.0, low_open=True)
    if delta is not None:
        check_delta(delta, allow_zero=False)
    if route not in ROUTES:
        raise PrivacyParameterError(f"route must be 'shortcut' or 'materialise', got {route!r}.")
    _positive(bounds, "bounds (the row-norm bound B)")
    gen = NoiseSource(random_state).generator
    return ks.simulate_grid(
        ns,
        methods,
        p=int(p),
        k=int(k),
        amplitude=float(amplitude),
        sigma=float(sigma),
        eps=float(eps),
        delta=(lambda size: 2.0 * p / size) if delta is None else float(delta),
        trials=int(trials),
        fdr=float(fdr),
        statistic=statistic,
        offset=offset,
        ridge=float(ridge),
        B=bounds,
        eps_split=_fractions(eps_split, 3, "eps_split"),
        gen=gen,
        route="shortcut" if route == "shortcut" else "materialise",
        progress=progress,
    )
