"""Front door of private FDR control: :func:`dp_bh` (private Benjamini-Hochberg).

Raw p-values go through the private BH of :mod:`dpstats.methods.bh` (Laplace
peeling of truncated log p-values, Dwork, Su & Zhang 2021); a fit whose p-values
were already released privately (a result with a ``privacy`` statement and a
``tidy()`` with columns ``term`` and ``p.value``) gets plain BH as
post-processing, at no extra budget.
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
from ._common import call_record, run

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

    Parameters
    ----------
    p_values : array-like, pandas Series, dict or a private fit
        Raw p-values in [0, 1] (names from a Series' index or a dict's keys,
        else H1, H2, ...), or a fit as above.
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
    diagnostics : bool
        Attach the raw p-values and non-private BH's rejections (NOT private).
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
    """
    q = check_fraction(q, "q", low_open=True)
    strict = check_strict(strict)
    neighbouring = check_neighbouring(neighbouring)
    accountant = check_accountant(accountant)
    if hasattr(p_values, "tidy") and _is_private_fit(p_values):
        names, p = _fit_p_values(p_values)
        _refuse_budget_for_post_processing(eps, eta, max_rejections)
        _refuse_uncovered_fit_under_strict(p_values.privacy, strict)
        door = _PostProcessing(names=names, p=p, q=q, fit=p_values)
        return run(door, strict=strict, random_state=random_state, accountant=accountant, diagnostics=False)
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
    return run(door, strict=strict, random_state=random_state, accountant=accountant, diagnostics=diagnostics)


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
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"p_values must be numbers in [0, 1]; could not read them as numbers ({exc})."
        ) from None
    if p.ndim != 1 or p.size == 0:
        raise DataError(f"p_values must be a non-empty 1-d collection of numbers, got shape {p.shape}.")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if bad.size:
        i = int(bad[0])
        label = names[i] if names else f"H{i + 1}"
        raise DataError(
            f"p_values must lie in [0, 1] (and not be NaN): the first offending value is {float(p[i])!r} at "
            f"index {i} ({label}); {bad.size} value(s) in all. Fix or drop them before dp_bh."
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
            q=self.q,
            rejected=names[released.rejected].tolist(),
            threshold=math.exp(released.threshold_log),
            peeled=names[released.peeled].tolist(),
            noisy_p_values=np.exp(released.noisy_log_p),
            max_rejections=self.k,
            eta=self.eta,
            truncate=self.truncate,
            noise_scale=self.calibration.scale,
            shift=released.shift,
            fdr_bound=fdr_bound(self.q, self.k),
        )

    def diagnostics(self, frame: np.ndarray, released) -> dict[str, Any]:
        exact = m.benjamini_hochberg(frame, self.q)
        return {
            "raw_p_values": dict(zip(self.names, frame.tolist())),
            "non_private_bh_rejected": [self.names[i] for i in exact.rejected],
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
