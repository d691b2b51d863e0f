"""Front door of private FDR control: :func:`dp_bh` (private Benjamini-Hochberg).

Raw p-values go through the private BH of :mod:`dpstats.methods.bh` (Laplace
peeling of truncated log p-values, Dwork, Su & Zhang 2021); a fit whose p-values
were already released privately (a result with a ``privacy`` statement and a
``tidy()`` with columns ``term`` and ``p.value``) gets plain BH as
post-processing, at no extra budget.  A formula with ``data=``, declared
``bounds=`` and a declared ``sigma=`` runs two-sided z-tests of each design
column's marginal slope on the raw rows (η derived, :func:`dpstats.methods.bh.z_slope_delta`)
and releases them only through private BH.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import INTERCEPT, model_frame, refuse_offset
from ..geometry import resolve_box
from ..methods import bh as m
from ..privacy.accountant import Accountant
from ..privacy.fdr import PeelingCalibration, fdr_bound, harmonic
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.bh import BHResult
from ..validation import (
    check_accountant,
    check_delta,
    check_eps,
    check_fraction,
    check_neighbouring,
    check_strict,
)
from ..schema import Schema
from ._common import (
    Settings,
    call_record,
    dummy_columns,
    frame_schema,
    is_auto,
    missing_rows_step,
    refuse_omit,
    run,
)

MAX_REJECTIONS_DEFAULT = 20


def dp_bh(
    p_values,
    q: float = 0.1,
    eps: float | None = None,
    delta: float = 0.0,
    *,
    eta: float | None = None,
    truncate: float = m.TRUNCATE_DEFAULT,
    max_rejections: int | None = None,
    data=None,
    bounds=None,
    sigma: float | None = None,
    levels: dict | None = None,
    na_action: str | None = None,
    neighbouring: str = "replace",
    diagnostics: bool = False,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
) -> BHResult:
    """Benjamini-Hochberg FDR control with differential privacy.

    Given raw p-values (computed from private data), runs the private BH of
    Dwork, Su & Zhang (2021): each p-value is truncated below at ``truncate``
    (ν), the k = ``max_rejections`` smallest log p-values are selected by Report
    Noisy Min peeling with Laplace noise (each with a fresh noisy value), and BH's
    step-up runs on the noisy values with its threshold lowered by
    t = λ log(5k/q).  It is (eps, delta)-DP *if* every log max(p_i, ν) moves by
    at most ``eta`` between neighbouring data sets: the statement says the
    guarantee rests on that declaration (derive it with
    :func:`dpstats.methods.bh.eta_two_sided_z` for z-tests on bounded data).
    FDR <= (m0/m)·q·H_k + q/10 under any dependence between valid p-values
    (derivations: :mod:`dpstats.privacy.fdr`).

    Given a private fit (e.g. a ``dp_lm`` result: ``tidy()`` with ``term`` and
    ``p.value``, and a ``privacy`` statement), BH on its released p-values is
    post-processing: no budget is spent (``eps`` must be left out), the
    statement carries the fit's guarantee, and FDR control is that of BH on
    those approximately valid p-values.  The ``(Intercept)`` row is left out.

    Given a formula (``dp_bh("y ~ .", data=df, eps=1, bounds=..., sigma=...)``),
    hypothesis j is "the marginal slope of the response on design column j is
    zero", tested by z_j = Σ(x_ij − x̄_j)(y_i − ȳ)/(σ·(W_j/2)·√n) on the rows
    clipped to the declared bounds (W_j the width of column j's bounds, σ the
    declared noise sd of y under a null).  One replaced row moves every z_j by
    at most Δz = 2(1 − 1/n)·W_y/(σ√n), so η = eta_two_sided_z(Δz, ν) is
    derived, not declared; the z's and p-values are released only through
    private BH.  The p-values are conservative if σ bounds the sd of y given
    x_j under each null.  (Multiple-regression tests have no bounded Δz
    without a data-dependent bound on λ_min(XᵀX): use ``dp_bh(dp_lm(...))``.)

    Parameters
    ----------
    p_values : array-like, pandas Series, dict, a private fit, or a formula
        Raw p-values in [0, 1] (names from a Series' index or a dict's keys,
        else H1, H2, ...), a fit as above, or a two-sided formula such as
        ``"y ~ ."`` (with ``data``, ``bounds`` and ``sigma``).
    q : float
        Target FDR, in (0, 1).
    eps, delta : float
        Budget of the private route (required there; delta = 0 gives pure DP with
        basic composition, delta > 0 uses zCDP where it needs less noise).
    eta : float, optional
        Declared ℓ∞ sensitivity of log max(p_i, ν) under the neighbouring relation
        of the analysis that produced the p-values.  Default 0.01, e.g. two-sided
        z-tests of means of data in [0, 1] with σ = 0.5 and n = 1 750 000
        (``eta_two_sided_z(z_mean_delta(0, 1, 1.75e6, 0.5))``); a default is not a
        derivation, so ``strict=True`` refuses it.
    truncate : float
        ν in (0, 1), default 1e-10: p-values below ν count as ν.
    neighbouring : {"replace", "add_remove"}
        The relation under which ``eta`` holds (the one the p-values' analysis used);
        it names the guarantee, the mechanism is the same.
    max_rejections : int, optional
        k, the number of hypotheses peeled (at most k rejections), 1 <= k <= m;
        default min(m, 20).  The noise grows with k.
    data : pandas.DataFrame or dict of columns
        Formula route only: the rows (in memory).
    bounds : (lo, hi) or dict
        Formula route only, required: public bounds of every design column
        (factor dummies default to (0, 1)) and of the response; values outside
        are clipped.
    sigma : float
        Formula route only, required: a public upper bound on the sd of the
        response given a null column.  Half the response's bound width is always
        such a bound (and costs power); a σ below the true sd makes the p-values
        anti-conservative (FDR, not privacy, is then lost: privacy holds for any
        public σ).
    levels : dict, optional
        Formula route only.
        Declared levels of text or categorical columns, e.g. ``{"city": ["Leeds", "York"]}``;
        a value outside them is missing (:mod:`dpstats.schema`, which also says which types
        are declared by themselves and why reading levels from the rows is a named step).
    na_action : {"fill", "omit"}, optional
        Missing values: ``"fill"`` (default under ``neighbouring="replace"``) replaces each by
        its public fill (midpoint of the declared bounds, a factor's first level), no row
        dropped; ``"omit"`` (default under ``"add_remove"``) drops incomplete rows
        (:mod:`dpstats.schema`).
    diagnostics : bool
        Attach the raw p-values (and, on the formula route, the raw z's and the
        count of clipped values) and non-private BH's rejections (NOT private).
    random_state, accountant, strict
        See docs/architecture.md, "Privacy conventions".

    Returns
    -------
    BHResult

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dp
    >>> p = np.r_[1e-9, 3e-9, np.linspace(0.01, 1, 48)]
    >>> fit = dp.dp_bh(p, q=0.1, eps=1.0, eta=0.01, max_rejections=5, random_state=0)
    >>> fit.rejected
    ['H1', 'H2']

    The formula route, on bounded data (y in (-4, 4), σ = 1):

    >>> import pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.uniform(-1, 1, (200_000, 8)), columns=[f"x{j}" for j in range(8)])
    >>> df["y"] = 0.3 * df.x0 + rng.normal(0, 1, 200_000)
    >>> fit = dp.dp_bh("y ~ .", data=df, q=0.1, eps=2.0, bounds=(-4, 4), sigma=1.05,
    ...                max_rejections=3, random_state=0)
    >>> fit.rejected
    ['x0']
    """
    if isinstance(q, (pd.DataFrame, Mapping)):
        raise DataError("pass the data by name: dp_bh('y ~ .', data=df, q=0.1, ...); q is the target FDR.")
    q = check_fraction(q, "q", low_open=True)
    strict = check_strict(strict)
    neighbouring = check_neighbouring(neighbouring)
    accountant = check_accountant(accountant)
    if isinstance(p_values, str):
        return _dp_bh_formula(
            p_values,
            data,
            q=q,
            eps=eps,
            delta=delta,
            eta=eta,
            truncate=truncate,
            max_rejections=max_rejections,
            bounds=bounds,
            sigma=sigma,
            levels=levels,
            na_action=na_action,
            neighbouring=neighbouring,
            diagnostics=diagnostics,
            random_state=random_state,
            accountant=accountant,
            strict=strict,
        )
    _refuse_formula_arguments(data=data, bounds=bounds, sigma=sigma, levels=levels, na_action=na_action)
    if hasattr(p_values, "tidy") and _is_private_fit(p_values):
        names, p = _fit_p_values(p_values)
        _refuse_budget_for_post_processing(eps, eta, max_rejections)
        _refuse_uncovered_fit_under_strict(p_values.privacy, strict)
        door = _PostProcessing(names=names, p=p, q=q, fit=p_values)
        return run(
            door, Settings(strict=strict, random_state=random_state, accountant=accountant, diagnostics=False)
        )
    names, p = _fit_p_values(p_values) if hasattr(p_values, "tidy") else _p_values(p_values)
    if eps is None:
        raise PrivacyParameterError(
            "eps is needed for raw p-values (private BH spends budget); give e.g. eps=1.0. "
            "Only a private fit's released p-values can be post-processed without eps."
        )
    eps = check_eps(eps)
    delta = check_delta(delta)
    eta_value = _check_eta(eta, strict)
    truncate = check_fraction(truncate, "truncate", low_open=True)
    k = _check_max_rejections(max_rejections, p.size)
    if accountant is not None:
        accountant.check(eps, delta)
    door = _Private(
        names=names,
        p=p,
        q=q,
        eps=eps,
        delta=delta,
        eta=eta_value,
        eta_declared=eta is not None,
        truncate=truncate,
        k=k,
        max_rejections=max_rejections,
        neighbouring=neighbouring,
    )
    return run(
        door,
        Settings(strict=strict, random_state=random_state, accountant=accountant, diagnostics=diagnostics),
    )


def _dp_bh_formula(
    formula: str, data, *, eps, delta, eta, sigma, bounds, levels, na_action, neighbouring, accountant, **rest
):
    """The formula route: every argument checked, then the door run (nothing read before the checks)."""
    if eps is None:
        raise PrivacyParameterError(
            "eps is needed for the formula route (private BH spends budget); e.g. eps=1.0."
        )
    eps = check_eps(eps)
    delta = check_delta(delta)
    if eta is not None:
        raise PrivacyParameterError(
            "eta is derived on the formula route (from the bounds, n and sigma); leave eta out."
        )
    if neighbouring != "replace":
        raise PrivacyParameterError(
            'the formula route holds under neighbouring="replace" only: n is in every z-statistic\'s scale.'
        )
    from ..engines import as_data as _as_data  # which data a door reads: engines/adapter.py

    data = _as_data(data, formula, keep=[levels])
    if not isinstance(data, (pd.DataFrame, Mapping)):
        raise DataError(
            f"a formula needs data= as a pandas DataFrame (or dict of columns); got {type(data).__name__}."
        )
    if bounds is None or is_auto(bounds):
        raise PrivacyParameterError(
            "bounds= is needed on the formula route: declare public bounds of every column and of the "
            "response, e.g. bounds=(-4, 4) or bounds={'x1': (0, 1), 'y': (-5, 5)} (bounds from the data "
            "or bounds='auto' are not offered here)."
        )
    if (
        isinstance(sigma, bool)
        or not isinstance(sigma, numbers.Real)
        or not (math.isfinite(sigma) and sigma > 0)
    ):
        raise PrivacyParameterError(
            f"sigma must be a positive finite number (the public sd of the response under a null), got "
            f"{sigma!r}; e.g. sigma=1.0."
        )
    truncate = check_fraction(rest.pop("truncate"), "truncate", low_open=True)
    schema = frame_schema(bounds, levels, na_action, neighbouring, eps=eps)
    refuse_omit(schema, "dp_bh's formula route", "n is in every z-statistic's scale")
    if accountant is not None:
        accountant.check(eps, delta)
    door = _Regression(
        schema=schema,
        formula=formula,
        data=data,
        eps=eps,
        delta=delta,
        bounds=bounds,
        sigma=float(sigma),
        truncate=truncate,
        q=rest.pop("q"),
        max_rejections=rest.pop("max_rejections"),
    )
    return run(door, Settings(accountant=accountant, **rest))


def _refuse_formula_arguments(**given) -> None:
    named = [name for name, value in given.items() if value is not None]
    if named:
        raise DataError(
            f"{', '.join(named)} apply only when the first argument is a formula (e.g. dp_bh('y ~ .', "
            f"data=df, ...)); leave {' and '.join(named)} out for p-values or a fit."
        )


# --------------------------------------------------------------------------- argument checks
def _p_values(p_values) -> tuple[list[str], np.ndarray]:
    """Names and p-values from an array, Series or dict; refuse NaN or values outside [0, 1]."""
    if isinstance(p_values, Mapping):
        names, values = [str(k) for k in p_values], list(p_values.values())
    elif isinstance(p_values, pd.Series):
        names, values = [str(k) for k in p_values.index], p_values.to_numpy()
    else:
        values = p_values
        names = None
    try:
        p = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(  # the conversion error would quote a value: not shown
            "p_values must be numbers in [0, 1]; some could not be read as numbers (text or objects?)."
        ) from None
    if p.ndim != 1 or p.size == 0:
        raise DataError(f"p_values must be a non-empty 1-d collection of numbers, got shape {p.shape}.")
    if not ((p >= 0) & (p <= 1)).all():
        # p-values computed from private data are private: the message names no value, index or count
        raise DataError(
            "p_values must lie in [0, 1] (and not be NaN); some do not. Fix or drop them before dp_bh "
            "(the offending values are not shown: p-values computed from private data are private)."
        )
    if names is None:
        names = [f"H{i + 1}" for i in range(p.size)]
    if len(set(names)) < len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})[:3]
        raise DataError(f"p_values' names must be unique (one per hypothesis); repeated: {repeated}.")
    return names, p


def _fit_p_values(fit) -> tuple[list[str], np.ndarray]:
    """Terms and p-values of a fit's ``tidy()`` (columns ``term`` and ``p.value``), intercept left out."""
    table = fit.tidy()
    missing = {"term", "p.value"} - set(getattr(table, "columns", []))
    if missing:
        raise DataError(
            f"a fit given to dp_bh needs tidy() with columns 'term' and 'p.value'; missing {sorted(missing)}."
        )
    table = table[table["term"] != "(Intercept)"]
    return _p_values(pd.Series(table["p.value"].to_numpy(dtype=float), index=table["term"].astype(str)))


def _is_private_fit(fit) -> bool:
    """A fit whose p-values were released by a DP mechanism: it carries a finite-eps privacy statement."""
    statement = getattr(fit, "privacy", None)
    return isinstance(statement, PrivacyStatement) and math.isfinite(statement.eps)


def _refuse_budget_for_post_processing(eps, eta, max_rejections) -> None:
    given = [n for n, v in (("eps", eps), ("eta", eta), ("max_rejections", max_rejections)) if v is not None]
    if given:
        raise PrivacyParameterError(
            f"this fit's p-values are already private, so BH on them is post-processing and spends no "
            f"budget; {', '.join(given)} would have no effect. Leave {' and '.join(given)} out."
        )


def _refuse_uncovered_fit_under_strict(statement: PrivacyStatement, strict: bool) -> None:
    if strict and statement.data_dependent_steps:
        raise PrivacyParameterError(
            "strict=True refuses a fit whose guarantee does not cover its data-dependent steps ("
            + "; ".join(statement.data_dependent_steps)
            + "); refit it with strict=True (declared bounds) first."
        )


def _check_eta(eta, strict: bool) -> float:
    if eta is None:
        if strict:
            raise PrivacyParameterError(
                "strict=True refuses the default eta: the guarantee rests on eta, the largest change of "
                "log max(p, truncate) between neighbouring data sets; declare it, e.g. "
                "eta=dpstats.methods.bh.eta_two_sided_z(delta_z, truncate) for z-tests on bounded data."
            )
        return m.ETA_DEFAULT
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real) or not (math.isfinite(eta) and eta > 0):
        raise PrivacyParameterError(
            f"eta must be a positive finite number (the sensitivity of log p-values), got {eta!r}; "
            "e.g. eta=0.01."
        )
    return float(eta)


def _check_max_rejections(max_rejections, m_hyp: int) -> int:
    if max_rejections is None:
        return min(m_hyp, MAX_REJECTIONS_DEFAULT)
    if (
        isinstance(max_rejections, bool)
        or not isinstance(max_rejections, numbers.Integral)
        or not 1 <= max_rejections <= m_hyp
    ):
        raise DataError(
            f"max_rejections must be a whole number with 1 <= max_rejections <= {m_hyp} (the number of "
            f"p-values), got {max_rejections!r}."
        )
    return int(max_rejections)


# --------------------------------------------------------------------------- doors
@dataclass
class _Private:
    """dp_bh's private route for :func:`dpstats.api._common.run`."""

    names: list[str]
    p: np.ndarray
    q: float
    eps: float
    delta: float
    eta: float
    eta_declared: bool
    truncate: float
    k: int
    max_rejections: int | None
    neighbouring: str = "replace"
    label: str = "dp_bh"

    def frame(self, dd: DataDependence) -> np.ndarray:
        return self.p  # no data-dependent step: the p-values are used as given

    def plan(self, frame: np.ndarray, dd: DataDependence) -> Plan:
        plan, self._calibration = m.plan_private(
            q=self.q,
            m=frame.size,
            k=self.k,
            eps=self.eps,
            delta=self.delta,
            eta=self.eta if self.eta_declared else None,
            truncate=self.truncate,
            neighbouring=self.neighbouring,
        )
        return plan

    @property
    def calibration(self) -> PeelingCalibration:
        return self._calibration

    def release(self, frame: np.ndarray, plan: Plan, noise: NoiseSource):
        return m.release_private(
            frame, q=self.q, k=self.k, truncate=self.truncate, calibration=self.calibration, noise=noise
        )

    def result(
        self, frame, plan: Plan, released, statement: PrivacyStatement, noise: NoiseSource
    ) -> BHResult:
        names = np.asarray(self.names, dtype=object)
        call = call_record(
            {"p_values": f"<{frame.size} p-values>", "q": self.q, "eps": self.eps},
            {
                "delta": (self.delta, 0.0),
                "eta": (self.eta if self.eta_declared else None, None),
                "truncate": (self.truncate, m.TRUNCATE_DEFAULT),
                "max_rejections": (self.max_rejections, None),
                "neighbouring": (self.neighbouring, "replace"),
            },
        )
        return BHResult(
            method="dp_bh",
            call=call,
            n=0,
            p=int(frame.size),
            terms=list(self.names),
            privacy=statement,
            route="private",
            eta=self.eta,
            **peeling_fields(
                released, names, q=self.q, k=self.k, truncate=self.truncate, scale=self.calibration.scale
            ),
        )

    def diagnostics(self, frame: np.ndarray, released) -> dict[str, Any]:
        exact = m.benjamini_hochberg(frame, self.q)
        return {
            "raw_p_values": dict(zip(self.names, frame.tolist())),
            "non_private_bh_rejected": [self.names[i] for i in exact.rejected],
        }


@dataclass
class _RegressionFrame:
    names: list[str]
    n: int
    y_width: float
    tests: m.MarginalZ
    k: int
    rows_dropped: int
    values_filled: int = 0


@dataclass
class _Regression:
    """dp_bh's formula route: marginal slope z-tests on bounded rows, released through private BH."""

    formula: str
    data: Any
    q: float
    eps: float
    delta: float
    bounds: Any
    sigma: float
    truncate: float
    max_rejections: int | None
    schema: Schema | None = None
    label: str = "dp_bh"

    def frame(self, dd: DataDependence) -> _RegressionFrame:
        mf = model_frame(self.formula, self.data, drop_intercept=True, min_rows=3, schema=self.schema)
        refuse_offset(mf, "dp_bh")
        names = [nm for nm in mf.names if nm != INTERCEPT]
        if not names:
            raise DataError(
                f"the formula '{self.formula}' has no predictor columns; dp_bh needs at least one."
            )
        x_box = resolve_box(self.bounds, names, dummies=dummy_columns(mf))
        y_box = resolve_box(self.bounds, [mf.response])
        missing_rows_step(dd, mf)  # after the bounds: a bound left out is an error, not a step
        lo_y, hi_y = float(y_box.lo[0]), float(y_box.hi[0])
        tests = m.marginal_slope_z(mf.X, mf.y, x_box.lo, x_box.hi, lo_y, hi_y, self.sigma)
        k = _check_max_rejections(self.max_rejections, len(names))
        n = int(mf.y.size)
        if self.delta > 0:
            check_delta(self.delta, n)
        return _RegressionFrame(names, n, hi_y - lo_y, tests, k, int(mf.n_dropped), int(mf.n_filled))

    def plan(self, frame: _RegressionFrame, dd: DataDependence) -> Plan:
        plan, self._calibration = m.plan_marginal_z(
            q=self.q,
            m=len(frame.names),
            k=frame.k,
            eps=self.eps,
            delta=self.delta,
            setting=m.SlopeTests(frame.n, frame.y_width, self.sigma),
            truncate=self.truncate,
        )
        return plan

    def release(self, frame: _RegressionFrame, plan: Plan, noise: NoiseSource):
        return m.release_private(
            frame.tests.p_values,
            q=self.q,
            k=frame.k,
            truncate=self.truncate,
            calibration=self._calibration,
            noise=noise,
        )

    def result(
        self, frame: _RegressionFrame, plan: Plan, released, statement: PrivacyStatement, noise: NoiseSource
    ) -> BHResult:
        names = np.asarray(frame.names, dtype=object)
        call = call_record(
            {
                "formula": self.formula,
                "q": self.q,
                "eps": self.eps,
                "bounds": self.bounds,
                "sigma": self.sigma,
            },
            {
                "delta": (self.delta, 0.0),
                "truncate": (self.truncate, m.TRUNCATE_DEFAULT),
                "max_rejections": (self.max_rejections, None),
            },
        )
        delta_z = m.z_slope_delta(0.0, frame.y_width, frame.n, self.sigma)
        return BHResult(
            method="dp_bh",
            call=call,
            n=frame.n,
            p=len(frame.names),
            terms=list(frame.names),
            privacy=statement,
            route="marginal z-tests",
            eta=m.eta_two_sided_z(delta_z, self.truncate),
            **peeling_fields(
                released, names, q=self.q, k=frame.k, truncate=self.truncate, scale=self._calibration.scale
            ),
            sigma=self.sigma,
            delta_z=delta_z,
        )

    def diagnostics(self, frame: _RegressionFrame, released) -> dict[str, Any]:
        exact = m.benjamini_hochberg(frame.tests.p_values, self.q)
        return {
            "raw_z": dict(zip(frame.names, frame.tests.z.tolist())),
            "raw_p_values": dict(zip(frame.names, frame.tests.p_values.tolist())),
            "non_private_bh_rejected": [frame.names[i] for i in exact.rejected],
            "values_clipped": frame.tests.n_clipped,
            "rows_dropped": frame.rows_dropped,
            "values_filled": frame.values_filled,
        }


@dataclass
class _PostProcessing:
    """dp_bh on a private fit's released p-values: BH as post-processing, no budget."""

    names: list[str]
    p: np.ndarray
    q: float
    fit: Any
    label: str = "dp_bh"

    def frame(self, dd: DataDependence) -> np.ndarray:
        return self.p

    def plan(self, frame: np.ndarray, dd: DataDependence) -> Plan:
        return m.plan_post_processing(q=self.q, m=frame.size)

    def release(self, frame: np.ndarray, plan: Plan, noise: NoiseSource) -> m.BHRejections:
        return m.benjamini_hochberg(frame, self.q)

    def result(
        self, frame, plan: Plan, released, statement: PrivacyStatement, noise: NoiseSource
    ) -> BHResult:
        fit_statement: PrivacyStatement = self.fit.privacy
        combined = PrivacyStatement(
            method=f"{fit_statement.method}, then Benjamini-Hochberg",
            eps=fit_statement.eps,
            delta=fit_statement.delta,
            neighbouring=fit_statement.neighbouring,
            ledger=list(fit_statement.ledger) + list(plan.entries),
            mechanisms=list(fit_statement.mechanisms) + ["post-processing"],
            sensitivities=dict(fit_statement.sensitivities),
            assumptions=list(fit_statement.assumptions) + list(plan.assumptions),
            data_dependent_steps=list(fit_statement.data_dependent_steps),
            seeded=fit_statement.seeded,
            samplers=list(fit_statement.samplers),
            notes=list(fit_statement.notes) + list(plan.notes),
        )
        names = np.asarray(self.names, dtype=object)
        return BHResult(
            method="dp_bh",
            call={"p_values": f"<{getattr(self.fit, 'method', 'private fit')} fit>", "q": self.q},
            n=0,
            p=int(frame.size),
            terms=list(self.names),
            privacy=combined,
            route="post-processing",
            q=self.q,
            rejected=names[released.rejected].tolist(),
            threshold=released.threshold,
            released_p_values=frame.copy(),
            fdr_bound=self.q * harmonic(frame.size),
        )

    def diagnostics(self, frame: np.ndarray, released) -> dict[str, Any]:
        return {}


def peeling_fields(
    released, names: np.ndarray, *, q: float, k: int, truncate: float, scale: float
) -> dict[str, Any]:
    """A private BH release's fields of :class:`BHResult` (both private routes), by hypothesis name."""
    return {
        "q": q,
        "rejected": names[released.rejected].tolist(),
        "threshold": math.exp(released.threshold_log),
        "peeled": names[released.peeled].tolist(),
        "noisy_p_values": np.exp(released.noisy_log_p),
        "max_rejections": k,
        "truncate": truncate,
        "noise_scale": scale,
        "shift": released.shift,
        "fdr_bound": fdr_bound(q, k),
    }
