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

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Unpack

from numpy.typing import ArrayLike

from ..engines import InMemoryData
from ..geometry import BoundsSpec
from ..results.base import DPResult
from .. import engines
from ..formula import model_frame, refuse_offset
from ..methods import bh as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.bh import BHResult
from ._parameters import Shared
from ._common import OptionsDoor, call_of, check_budget, check_call, declare, front_door, run


@front_door
def dp_bh(
    p_values: ArrayLike | Mapping[str, float] | DPResult | str,
    q: float = 0.1,
    eps: float | None = None,
    delta: float = 0.0,
    *,
    eta: float | None = None,
    truncate: float = m.TRUNCATE_DEFAULT,
    max_rejections: int | None = None,
    data: InMemoryData | None = None,
    bounds: BoundsSpec = None,
    sigma: float | None = None,
    **shared: Unpack[Shared],
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
    :func:`dpstats.eta_two_sided_z` for z-tests on bounded data).
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
        Raw p-values in [0, 1] (names from a Series' index or a dict's keys, else H1, H2, ...), a fit as
        above, or a two-sided formula such as ``"y ~ ."`` (with ``data``, ``bounds`` and ``sigma``).
        Nothing is checked on their values, which come from private data: a NaN counts as 1 and values
        outside [0, 1] are clipped to it (a public rule, stated in the privacy statement).
    q : float
        Target FDR, in (0, 1).
    eps, delta : float
        Budget of the private route (required there; delta = 0 gives pure DP with
        basic composition, delta > 0 uses zCDP where it needs less noise).  eps = inf (raw p-values, or a
        formula's exact z-tests): R's ``p.adjust(method = "BH")``, not private (NonPrivateWarning; strict refuses).
    eta : float, optional
        Declared ℓ∞ sensitivity of log max(p_i, ν) under the neighbouring relation of the analysis that
        produced the p-values.  Default 0.01, e.g. two-sided z-tests of means of data in [0, 1] with σ =
        0.5 and n = 1 750 000 (``eta_two_sided_z(z_mean_delta(0, 1, 1.75e6, 0.5))``); a default is not a
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
        Formula route only, required: public bounds of every design column (dummies: their coding's range;
        interactions: the product of their parts' bounds) and of the response; values outside are clipped.
    sigma : float
        Formula route only, required: a public upper bound on the sd of the response given a null
        column.  Half the response's bound width is always such a bound (and costs power); a σ below the
        true sd makes the p-values anti-conservative (FDR, not privacy, is then lost: privacy holds for
        any public σ).
    {schema parameters}
        ``levels`` and ``na_action`` apply to the formula route only.
    {diagnostics: the raw p-values; on the formula route also the raw z's and the count of
        clipped values; non-private BH's rejections}
    {run settings}

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
    given, settings, options = check_call(locals(), shared, m.BHOptions)
    hypotheses = None if options.route == m.MARGINAL_Z else m.hypotheses(p_values)
    if options.route == m.MARGINAL_Z:  # the formula's data: the pre-steps of every door
        engines.require_rows(data, "dp_bh's formula route", "the z-tests are computed from the model frame")
        options, data = declare({**given, "formula": p_values}, options, settings, nonprivate=m.Z_REFERENCE)
    elif options.route == m.PRIVATE:
        m.rejections(max_rejections, len(hypotheses.names))
        check_budget(settings.accountant, options.eps, options.delta)
        m.nonprivate_warning(options)  # eps = inf: R's p.adjust(method = "BH"), warned as every door's
    else:  # post-processing: nothing spent, and no raw p-values to diagnose
        settings = replace(settings, diagnostics=False)
    fit = getattr(p_values, "privacy", None)  # the post-processing route's fit: its guarantee carries over
    return run(BHDoor(options, hypotheses, data, _call(given, options, hypotheses), fit), settings)


def _call(given: dict[str, Any], options: m.BHOptions, hypotheses: m.Hypotheses | None) -> dict[str, Any]:
    """The result's call: the formula by name on the formula route, the p-values or the fit summarised."""
    if options.route == m.MARGINAL_Z:
        call = call_of(dp_bh, given, always=("p_values", "q", "eps", "bounds", "sigma"))
        return {"formula" if name == "p_values" else name: value for name, value in call.items()}
    if options.route == m.POST_PROCESSING:
        fit = f"<{getattr(given['p_values'], 'method', 'private fit')} fit>"
        return call_of(dp_bh, given, always=("p_values", "q"), p_values=fit)
    shown = f"<{len(hypotheses.names)} p-values>"
    return call_of(dp_bh, given, always=("p_values", "q", "eps"), p_values=shown)


@dataclass
class BHDoor(OptionsDoor):
    """dp_bh's frame, plan, release and result for :func:`dpstats.api._common.run`, on every route."""

    options: m.BHOptions
    hypotheses: m.Hypotheses | None  # the p-values as given (None on the formula route: tested here)
    data: Any
    call: dict
    fit: PrivacyStatement | None = None

    def frame(self, dd: DataDependence) -> m.Hypotheses:
        if self.hypotheses is not None:
            return self.hypotheses  # no data-dependent step: the p-values are used as given
        mf = model_frame(self.options.formula, self.data, drop_intercept=True, min_rows=3, schema=self.schema)
        refuse_offset(mf, "dp_bh")
        boxes = m.slope_boxes(mf, self.options.bounds)
        dd.name_frame_steps(mf)  # after the bounds: a bound left out is an error, not a step
        return m.slope_hypotheses(mf, boxes, self.options)

    def plan(self, frame: m.Hypotheses, dd: DataDependence) -> m.BHPlan:
        return m.plan(self.options, len(frame.names), frame.setting)

    def release(self, frame: m.Hypotheses, plan: m.BHPlan, noise: NoiseSource):
        return m.release(frame, plan, noise)

    def result(
        self, frame: m.Hypotheses, plan: m.BHPlan, released, statement: PrivacyStatement, noise: NoiseSource
    ) -> BHResult:
        if plan.route == m.POST_PROCESSING:
            statement = m.after_fit(self.fit, plan)
        return BHResult.of(self.opening(frame.n, frame.names, statement), plan, released, frame)

    def diagnostics(self, frame: m.Hypotheses, released) -> dict[str, Any]:
        return m.diagnostics(frame, self.options.q)
