"""The privacy plan of the DP knockoff filter: budget split, calibration, noise scales, ledger.

Read against Section 3 of Pournaderi & Xiang, "Differentially Private Variable
Selection via the Knockoff Filter", in the order a release takes:

1. **Assumption 3**: the row-norm bound B (declared, or the data's largest row
   norm: a data-dependent step), :func:`row_bound`;
2. **Remark 2**: σ and ‖β‖ in the sensitivities are declared bounds or OLS
   estimates (data-dependent), :func:`remark_2`; rows are augmented to 2p when
   p < n < 2p (as R's ``create.fixed``), :func:`name_augmentation`;
3. the design quantities of the sensitivities (C_min, C_max, λ_min(Σ′), λ_max,
   ‖Σ′‖_F) are declared public bounds or read from the data (Remark 2: the
   guarantee is then local to the observed data), and s = λ_min(Σ′) (Lemma 1),
   :func:`calibration`;
4. the budget split, :func:`budget`: **Method I** (Theorem 3) spends
   (ε, δ) on e, ε₁ on θ₁, (ε₂, δ₁) on θ₂ and δ₂ on the failure of ‖Pw‖² ≤ ζ;
   **Method II** (Theorem 5) spends (ε, δ₁) on the coefficients and δ₂ on the
   same failure event;
5. the noise scales, :func:`scales`: Method I θ₁ ~ Lap(η²(1 + λ_min)/ε₁), κ₁
   and κ₂ (eq. (9), our restatement of eq. (10) in
   :mod:`dpstats.methods.knockoff.mechanism`); Method II κ from Δ₂(β̂′) of
   Theorem 5 (with the ridge ω² of Remark 2);
6. the ledger and the statement's assumptions and notes, :func:`plan`.

Nothing here draws noise or reads rows: the plan is computed from the call's
options (:class:`~dpstats.methods.knockoff.options.KnockoffOptions`), n, p, the
declared bounds and the named data-dependent values (the normalised
statistics), before the budget is charged.  :func:`check_rows` (n > p) and
:func:`declared_design` (the declared λ_min enforced on Σ′) run on the frame
before the plan.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..._kernels import one_blas_thread
from ...errors import AssumptionError, DataError, caller_stacklevel
from ...formula import LEVELS_READ_NOT_SHOWN
from ...privacy.accountant import LedgerEntry
from ...privacy.calibration import calibrate_gaussian
from ...privacy.plan import Plan
from ...privacy.statement import DataDependence
from ...stats import RowClippedGram
from . import filter as ko
from . import mechanism as kd
from .options import KnockoffOptions

GRAM_KEY = "Delta Sigma' (Frobenius)"
NOT_SHOWN = "not shown (read from the data)"
D2_KEY, KAPPA_KEY = "Delta2 (coefficients, l2)", "kappa (coefficient noise sd)"
CROSS_KEY, KAPPA2_KEY = "Delta cross-products (l2)", "kappa2 (cross-product noise sd)"
LAMBDA_KEY, THETA1_KEY, KAPPA1_KEY = (
    "Delta lambda_min (Laplace)",
    "theta1 Laplace scale",
    "kappa1 (Gram noise sd)",
)


@dataclass
class KnockoffPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs: scales, s, B, σ."""

    scales: kd.Scales = field(default_factory=lambda: kd.Scales("none"))
    s_value: float = math.nan
    row_bound: float = math.nan
    sigma: float = math.nan
    response_bound: float = math.nan  # Y, the bound the responses were clipped to (nan: eps = inf)
    options: KnockoffOptions | None = None  # the release reads its statistic, fdr, offset and ridge


MODEL_CONDITION = (
    "the rows of the data set follow the linear model y = X beta + w, w ~ N(0, sigma^2 I), with the "
    "declared bounds stated below (the row that is replaced may be any row within the public bounds)"
)


@one_blas_thread
def plan(
    options: KnockoffOptions, st: ko.Normalised, B: float, dd: DataDependence, response: float | None = None
) -> KnockoffPlan:
    """The plan of Method I or II (``eps = inf``: the ordinary filter, no noise) on statistics ``st``.

    ``options``: the call's checked options (eps, delta, method, s, ridge, the
    splits and the declared sigma, beta_norm, c_min, lambda_min); ``st`` are the
    normalised statistics of the clipped design (rows of norm ≤ ``B``) and of the
    responses clipped to ``response`` (Y; None: Y = B·beta_norm + sigma·t, computed
    here); data-dependent steps (Remark 2, augmentation, calibration from the data)
    are named in ``dd``, which refuses them under ``strict``.  The guarantee is
    conditional on the linear model (:data:`MODEL_CONDITION`; the module docstring
    of :mod:`~dpstats.methods.knockoff.mechanism` derives it).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 30)); y = X[:, 0] + rng.normal(size=4000)
    >>> st = ko.normalise(4000, X.T @ X, X.T @ y, float(y @ y))
    >>> options = KnockoffOptions.partial(
    ...     eps=1.0, delta=1e-2, method="II", s="lambda_min", ridge=0.0, eps_split=(0.5, 0.25, 0.25),
    ...     delta_split=(0.5, 0.5), sigma=1.0, beta_norm=1.0, c_min=50.0, lambda_min=0.5, knockoffs="shortcut")
    >>> pl = plan(options, st, 8.0, DataDependence(strict=True))
    >>> [e.mechanism for e in pl.entries], pl.eps, pl.delta
    (['Gaussian mechanism', 'high-probability bound (chi-square tail)'], 1.0, 0.01)
    >>> round(pl.scales.kappa, 2) > 0, pl.s_value, pl.conditional[:28]
    (True, 0.5, 'the rows of the data set fol')
    """
    o = options
    nonprivate = math.isinf(o.eps)
    if nonprivate:  # no noise to calibrate: the ordinary filter on the (clipped) data
        sigma_used, beta_used = remark_2(st, o.sigma or None, o.beta_norm or 0.0)
    else:
        sigma_used, beta_used = remark_2(st, o.sigma, o.beta_norm, dd)
    name_augmentation(st, dd)
    if nonprivate:
        ko.check_full_rank(st)
        cal = kd.calibration_from_data(st, B, sigma_used, beta_used)
        s_value = ko.knockoff_s(st.lambda_min, o.s)
    else:
        if response is None:
            response = kd.response_bound(B, beta_used, sigma_used, st.n, st.p, failure_delta(o))
        cal, s_value = calibration(st, B, sigma_used, beta_used, o, dd, response)
    parts = budget(o.eps, o.delta, o.eps_split, o.delta_split, o.method)
    noise_scales = scales(cal, parts, o, nonprivate)
    declared = o.sigma is not None and o.beta_norm is not None
    shown = declared and o.bounds is not None  # Y = B·beta_norm + sigma·t reads no row: it may be shown
    if not shown:
        noise_scales.sensitivities.pop(kd.RESPONSE_KEY, None)
    hidden = [] if nonprivate else read_from_data(o, noise_scales)
    return KnockoffPlan(
        method="ordinary fixed-X knockoff filter"
        if nonprivate
        else f"DP knockoff filter (Method {o.method})",
        neighbouring="replace",
        entries=ledger(o.method, parts, noise_scales, st.p, nonprivate, hidden),
        sensitivities={
            k: NOT_SHOWN if k in hidden else f"{v:.6g}" for k, v in noise_scales.sensitivities.items()
        },
        assumptions=_assumptions(
            B, cal, declared, o.c_min, o.lambda_min, shown=shown, b_shown="B" not in hidden
        ),
        notes=_notes(noise_scales, o.knockoffs),
        conditional="" if nonprivate else MODEL_CONDITION,
        scales=noise_scales,
        s_value=s_value,
        row_bound=B,
        sigma=sigma_used,
        response_bound=math.nan if response is None else response,
        options=options,
        withheld=hidden,
    )


def read_from_data(options: KnockoffOptions, noise_scales: kd.Scales) -> list[str]:
    """The plan's values that are read from the rows (named data-dependent steps), which no output shows.

    "B" (no declared bounds), "s" (no declared lambda_min: s is λ_min(Σ′) or from it) and the keys of
    the noise table (``noise_scales.table()``): ζ needs a declared sigma, η² = (B/C_min)² declared bounds
    and c_min, every other sensitivity and scale all of bounds, sigma, beta_norm, c_min and lambda_min.
    With all declared (public) the values are public and shown.  Each value is kept for
    ``diagnostics=True`` only (:meth:`dpstats.results.knockoff.KnockoffResult.withhold_read_values`).
    """
    o = options
    b_read = o.bounds is None
    out = ["B"] if b_read else []
    if o.lambda_min is None:
        out.append("s")
    public = {
        "zeta": o.sigma is not None,
        "eta^2": not b_read and o.c_min is not None,
        kd.RESPONSE_KEY: True,  # kept only when shown (plan)
    }
    every = not b_read and None not in (o.sigma, o.beta_norm, o.c_min, o.lambda_min)
    return out + [key for key in noise_scales.table() if not public.get(key, every)]


def failure_delta(options: KnockoffOptions) -> float:
    """δ₂, the part of delta spent on the failure of the sensitivity's bounds (Theorems 3 and 5).

    Examples
    --------
    >>> failure_delta(KnockoffOptions.partial(delta=1e-3, method="II", delta_split=(0.5, 0.5)))
    0.0005
    """
    o = options
    spent = o.delta * (o.delta_split[0] + (o.delta_split[1] if o.method == "I" else 0.0))
    return o.delta - spent


# --------------------------------------------------------------------- the rows and the declared design


def response_bound(options: KnockoffOptions, B: float, st: ko.Normalised) -> float:
    """Y = B·beta_norm + sigma·t (:func:`~dpstats.methods.knockoff.mechanism.response_bound`), from the
    declared sigma and beta_norm or, where not declared, their estimates (Remark 2: the plan names
    those steps)."""
    sigma, beta = remark_2(st, options.sigma, options.beta_norm)
    return kd.response_bound(B, beta, sigma, st.n, st.p, failure_delta(options))


def check_rows(
    options: KnockoffOptions, n: int, p: int, *, n_public: bool = True, columns_public: bool = True
) -> None:
    """Fixed-X knockoffs need p >= 2 candidates and n > p rows; a delta of at least 1/n is warned about.

    When n is private (rows with missing values are dropped: no declared bounds)
    no message quotes it, and delta is not compared with 1/n: a warning that
    appears for some n and not for others would release it.  When the design's
    columns depend on levels read from the rows (``columns_public`` False), both
    failures give one text, which shows no count of columns.
    """
    if not columns_public and (p < 2 or n <= p):
        rows = f"these n = {n} rows" if n_public else "these rows"
        raise AssumptionError(
            f"fixed-X knockoffs need at least 2 candidate columns and more rows than columns, and the "
            f"design of '{options.formula}' on {rows} has not (the number of its columns {LEVELS_READ_NOT_SHOWN}); "
            "or screen first: split the rows, run dp_sis on one part, then dp_knockoff with those terms on the "
            "other part."
        )
    if p < 2:
        raise DataError(f"dp_knockoff needs at least 2 candidate columns; '{options.formula}' gives {p}.")
    if n <= p:
        shown = (
            f"n = {n} <= p = {p}"
            if n_public
            else f"n <= p = {p} (n, the number of rows analysed, is not shown: rows with missing values "
            "are dropped)"
        )
        raise AssumptionError(
            f"fixed-X knockoffs need more rows than columns, but {shown}. Screen first: "
            "split the rows, run dp_sis on one part to keep fewer than n/2 terms, then dp_knockoff "
            "with those terms on the other part (the budgets of disjoint parts do not add)."
        )
    if n_public and not math.isinf(options.eps) and options.delta >= 1 / n:
        warnings.warn(
            f"delta = {options.delta:g} is at least 1/n = {1 / n:g}; the paper's experiments use "
            "delta = 2p/n, but a delta this large allows releasing a whole row.",
            UserWarning,
            stacklevel=caller_stacklevel(),
        )


def declared_design(options: KnockoffOptions, st: ko.Normalised) -> tuple[ko.Normalised, dict[str, bool]]:
    """The statistics with the declared lambda_min enforced, and whether the declarations held.

    Declared c_min and lambda_min are assumptions stated in the statement, not
    checked on the rows (a check that can refuse is itself a release): lambda_min
    is enforced by regularising Σ′ (:func:`~dpstats.methods.knockoff.filter.floor_lambda_min`);
    whether each held is kept for requested diagnostics only.
    """
    held = {}
    if options.c_min is not None:
        held["c_min"] = bool(st.col_norms.min() >= options.c_min)
    if options.lambda_min is not None and not math.isinf(options.eps):
        st, held["lambda_min"] = ko.floor_lambda_min(st, options.lambda_min)
    return st, held


# --------------------------------------------------------------------- Assumption 3 and Remark 2


def row_bound(g: RowClippedGram, bounds: float | None, dd: DataDependence | None) -> float:
    """B of Assumption 3: declared, or the largest row norm of the rows (``g``, their pass's statistics).

    ``dd`` is None for eps = inf: no noise is calibrated, so B from the data is no extra step.  B from
    the data clips nothing, so ``g`` holds raw XᵀX: where it or B overflows double precision (one huge
    value) the call is refused before anything is spent, with no numpy warning on the way.
    """
    if bounds is not None:
        return float(bounds)
    if dd is not None:
        dd.add(
            "row-norm bound B set to the largest row norm of the data",
            fix="declare a public bound on the row norms, e.g. bounds=10.0",
        )
    finite = np.isfinite(g.xtx).all() and np.isfinite(g.xty).all() and math.isfinite(g.yty)
    if not (finite and math.isfinite(g.row_norm_max)):
        raise DataError(
            "the row-norm bound B read from the data, or XᵀX of the unclipped rows, is too large for double "
            "precision; declare a public bound on the row norms, e.g. bounds=10.0."
        )
    return float(g.row_norm_max)


def remark_2(
    st: ko.Normalised, sigma: float | None, beta_norm: float | None, dd: DataDependence | None = None
) -> tuple[float, float]:
    """σ and ‖β‖ of the sensitivities: declared upper bounds, or OLS estimates (Remark 2), each estimate
    named as a data-dependent step in ``dd`` when given (the plan names them; the frame's response
    bound, computed before the plan, uses the same values)."""
    if sigma is None:
        if dd is not None:
            dd.add(
                "noise level sigma estimated from the OLS residuals to set the sensitivity (Remark 2)",
                fix="declare a public upper bound, sigma=<a public upper bound>",
            )
        sigma = math.sqrt(st.rss / (st.n - st.p))
    if beta_norm is None:
        if dd is not None:
            dd.add(
                "||beta|| estimated by OLS to set the sensitivity (Remark 2)",
                fix="declare a public upper bound, beta_norm=<a public upper bound>",
            )
        beta_norm = float(np.linalg.norm(st.ols / st.col_norms))
    return sigma, beta_norm


def name_augmentation(st: ko.Normalised, dd: DataDependence) -> None:
    """p < n < 2p: rows are augmented to 2p (:func:`~dpstats.methods.knockoff.filter.augment_rows`).

    When n is private (``dd.n_private``: rows with missing values are dropped) the
    step is named whatever n is and without it, so that neither its text nor
    whether it appears depends on how many rows were dropped.
    """
    if dd.n_private:
        dd.add(
            f"rows augmented to 2p = {2 * st.p} with responses drawn from N(0, sigma_hat^2) when fewer than 2p "
            "rows remain once rows with missing values are dropped, sigma_hat from the residuals (as R's "
            "create.fixed does)",
            fix="declare bounds=<public bounds> (no row is then dropped) and use at least 2p rows",
        )
    elif st.n < 2 * st.p:
        dd.add(
            f"rows augmented from n = {st.n} to 2p = {2 * st.p} with responses drawn from N(0, sigma_hat^2), "
            "sigma_hat from the residuals (as R's create.fixed does)",
            fix="use at least 2p rows",
        )


def calibration(
    st: ko.Normalised,
    B: float,
    sigma: float,
    beta_norm: float,
    options: KnockoffOptions,
    dd: DataDependence,
    response: float | None = None,
) -> tuple[kd.Calibration, float]:
    """The design quantities of the sensitivities, declared (``options.c_min``, ``options.lambda_min``)
    or from the data, and s (Lemma 1, ``options.s``).

    ``response`` is the bound Y the responses were clipped to.  Whether the assumptions hold for the
    values used is checked with the sensitivity (:func:`~dpstats.methods.knockoff.mechanism.check_calibration`).
    """
    c_min, lambda_min, s_kind = options.c_min, options.lambda_min, options.s
    cal = kd.calibration_from_data(st, B, sigma, beta_norm, response)
    cal.b_declared = options.bounds is not None  # declared, or drawn privately and charged (row_bound)
    if c_min is not None:  # an assumption stated in the statement, never checked on the rows
        cal.c_min, cal.c_max, cal.c_min_declared = c_min, math.sqrt(st.n) * B, True
    else:
        dd.add(
            "smallest and largest column norms C_min, C_max taken from the data for the sensitivity",
            fix="declare a public lower bound, c_min=<a public lower bound>",
        )
    if lambda_min is not None:  # enforced on Σ′ by declared_design (filter.floor_lambda_min), not checked
        cal.lambda_min, cal.lambda_min_upper, cal.lambda_max, cal.fro = lambda_min, 1.0, st.p, st.p
        cal.lambda_declared = True
        s_value = float(lambda_min) if s_kind == "lambda_min" else ko.knockoff_s(lambda_min, s_kind)
    else:
        dd.add(
            "lambda_min, lambda_max and ||Sigma'||_F of the normalised Gram matrix taken from the data "
            "for the sensitivity (and s)",
            fix="declare a public lower bound, lambda_min=<a public lower bound>",
        )
        s_value = ko.knockoff_s(st.lambda_min, s_kind)
    return cal, s_value


# --------------------------------------------------------------------- budget, scales, ledger


def budget(eps: float, delta: float, eps_split, delta_split, method: str) -> dict[str, float]:
    """Method I (Theorem 3): ε, ε₁, ε₂ and δ, δ₁, δ₂ by the splits; Method II (Theorem 5): ε, δ₁, δ₂."""
    if math.isinf(eps):
        return {}
    if method == "I":
        e = [eps * eps_split[0], eps * eps_split[1]]
        d = [delta * delta_split[0], delta * delta_split[1]]
        return {
            "eps": e[0],
            "eps1": e[1],
            "eps2": eps - e[0] - e[1],
            "delta": d[0],
            "delta1": d[1],
            "delta2": delta - d[0] - d[1],
        }
    d1 = delta * delta_split[0]
    return {"eps": eps, "delta1": d1, "delta2": delta - d1}


def scales(
    cal: kd.Calibration, parts: dict[str, float], options: KnockoffOptions, nonprivate: bool
) -> kd.Scales:
    """θ₁, κ₁, κ₂ of Method I (eq. (9)) or κ of Method II (Theorem 5, with the ridge of Remark 2 and the
    knockoffs' s, ``options.s``: the sensitivity is derived for the construction used)."""
    if nonprivate:
        return kd.Scales("none")
    if options.method == "I":
        return kd.scales_method_one(
            cal, parts["eps"], parts["eps1"], parts["eps2"], parts["delta"], parts["delta1"], parts["delta2"]
        )
    return kd.scales_method_two(cal, parts["eps"], parts["delta1"], parts["delta2"], options.ridge, options.s)


def ledger(
    method: str,
    parts: dict[str, float],
    noise_scales: kd.Scales,
    p: int,
    nonprivate: bool,
    hidden: list[str] | tuple[str, ...] = (),
) -> list[LedgerEntry]:
    """One entry per noisy release of Theorem 3 or 5, and one for the δ₂ failure of ‖Pw‖² ≤ ζ.

    Values named in ``hidden`` (:func:`read_from_data`) are written as their names only; a Gaussian
    step's noise multiplier (κ/Δ₂) is then the calibration at sensitivity 1, which reads no row.
    """
    if nonprivate:
        return [LedgerEntry.nonprivate("ordinary fixed-X knockoff filter (no noise)")]
    sens = noise_scales.sensitivities
    table = noise_scales.table()

    def text(key: str, shown: str, name: str) -> str:  # the value's text, or its name and why not
        return f"{name}: {NOT_SHOWN}" if key in hidden else shown

    def multiplier(scale_key: str, sens_key: str, eps: float, delta: float) -> float:
        if sens_key in hidden or scale_key in hidden:
            return calibrate_gaussian(eps, delta, 1.0)[0]
        return table[scale_key] / sens[sens_key]

    failure = LedgerEntry(
        "sensitivity bound: the model's noise bounds (||P w||^2 + rho^2 ||g||^2 <= zeta, max |w_i| <= sigma t) "
        "or the Haar draw's ||g||^2 <= beta_g fail with probability delta2",
        "high-probability bound (chi-square tail)",
        0.0,
        parts["delta2"],
        sensitivity=text("zeta", f"zeta = {table['zeta']:.4g}", "zeta"),
        event={"kind": "delta", "delta": parts["delta2"]},
    )
    if method == "II":
        return [
            LedgerEntry(
                f"OLS coefficients on [X' X~'] ({2 * p} values)",
                "Gaussian",
                parts["eps"],
                parts["delta1"],
                sensitivity=text(
                    D2_KEY,
                    f"l2 Delta2 = {table[D2_KEY]:.4g} (Theorem 5, any replaced row)",
                    "l2 Delta2 (Theorem 5, any replaced row)",
                ),
                note=text(KAPPA_KEY, f"kappa = {noise_scales.kappa:.4g}", "kappa"),
                event={
                    "kind": "gaussian",
                    "noise_multiplier": multiplier(KAPPA_KEY, D2_KEY, parts["eps"], parts["delta1"]),
                },
            ),
            failure,
        ]
    return [
        LedgerEntry(
            f"cross-products [X' X~']'y ({2 * p} values)",
            "Gaussian",
            parts["eps"],
            parts["delta"],
            sensitivity=text(
                CROSS_KEY, f"l2 {table[CROSS_KEY]:.4g} (replace one row)", "l2 (replace one row)"
            ),
            note=text(KAPPA2_KEY, f"kappa2 = {noise_scales.kappa2:.4g}", "kappa2"),
            event={
                "kind": "gaussian",
                "noise_multiplier": multiplier(KAPPA2_KEY, CROSS_KEY, parts["eps"], parts["delta"]),
            },
        ),
        LedgerEntry(
            "lambda_min(Sigma') = s in the Gram matrix (theta1)",
            "Laplace",
            parts["eps1"],
            0.0,
            sensitivity=text(
                LAMBDA_KEY, f"{table[LAMBDA_KEY]:.4g} = eta^2 (1 + lambda_min)", "eta^2 (1 + lambda_min)"
            ),
            note=text(THETA1_KEY, f"scale = {noise_scales.laplace_s:.4g}", "scale"),
            event={
                "kind": "laplace",
                "noise_multiplier": (
                    1 / parts["eps1"] if LAMBDA_KEY in hidden else noise_scales.laplace_s / sens[LAMBDA_KEY]
                ),
            },
        ),
        LedgerEntry(
            f"off-diagonal of Sigma' ({p * (p - 1) // 2} values, theta2)",
            "Gaussian",
            parts["eps2"],
            parts["delta1"],
            sensitivity=text(
                GRAM_KEY,
                f"Frobenius {table[GRAM_KEY]:.4g} = eta^2 (sqrt 2 + ||Sigma'||_F)",
                "Frobenius eta^2 (sqrt 2 + ||Sigma'||_F)",
            ),
            note=text(KAPPA1_KEY, f"kappa1 = {noise_scales.kappa1:.4g}", "kappa1"),
            event={
                "kind": "gaussian",
                "noise_multiplier": multiplier(KAPPA1_KEY, GRAM_KEY, parts["eps2"], parts["delta1"]),
            },
        ),
        failure,
    ]


def _assumptions(
    B: float,
    cal: kd.Calibration,
    declared: bool,
    c_min: float | None,
    lambda_min: float | None,
    *,
    shown: bool = False,
    b_shown: bool = True,
) -> list[str]:
    """The statement's assumptions: declared values are shown, values read from the rows are not
    (``shown``: the response bound Y uses declared values only; ``b_shown``: B was declared)."""
    b_text = f"B = {B:.4g}" if b_shown else f"B (the largest row norm, {NOT_SHOWN})"
    out = [f"rows of the design have l2 norm <= {b_text} (rows beyond are clipped to it)"]
    if cal.response_bound is not None:
        value = f" = {cal.response_bound:.4g}" if shown else " (not shown: it uses values read from the data)"
        out.append(
            f"responses are clipped to [-Y, Y], Y = B ||beta|| + sigma t{value}, where max_i |w_i| <= sigma t "
            "except with probability delta2/4, so no row that follows the model is clipped; a replaced "
            "row may be any row within these bounds"
        )
    if c_min is not None:
        out.append(
            f"Assumption 3 (declared): every column of the clipped design has l2 norm >= c_min = {c_min:g} "
            "> B; not checked on the rows (a check would itself be a release): if it fails, the "
            "guarantee does not hold (diagnostics=True reports whether it held)"
        )
    else:
        out.append("Assumption 3: the smallest column norm C_min (read from the data) exceeds B")
    if lambda_min is not None:
        margin = f" = {cal.lambda_margin:.4g}" if c_min is not None and b_shown else ""  # eta^2 reads B
        out.append(
            f"declared: lambda_min(Sigma') >= {lambda_min:g} for the normalised Gram matrix of the data set "
            f"and of every data set with one row replaced, which holds when lambda_min(Sigma') >= "
            f"(lambda_min + eta^2)/(1 - eta^2){margin} on the data (eq. (25)); not checked on the rows. "
            "Sigma' is replaced by (Sigma' + cI)/(1 + c) with the least c >= 0 for which lambda_min(Sigma') "
            ">= lambda_min (c = 0 when it already holds), so the release is defined whatever the rows"
        )
    model = (
        "linear model y = X beta + w with w ~ N(0, sigma^2 I) and no intercept for the rows of the data set "
        "(not for the row that is replaced)"
    )
    if declared:
        return out + [
            f"{model}; the sensitivity uses the declared sigma <= {cal.sigma:.4g} and ||beta|| <= "
            f"{cal.beta_norm:.4g}"
        ]
    return out + [f"{model}; the sensitivity uses sigma and ||beta|| (partly estimated from the data)"]


def _notes(noise_scales: kd.Scales, knockoffs: str) -> list[str]:
    notes = [
        "The W statistics, threshold and selection are post-processing of the released coefficients.",
        "Both noises are invariant under swapping a column with its knockoff, so W stays antisymmetric "
        "and knockoff+ keeps FDR control (Theorems 4 and 6).",
        "The number of clipped rows is not released.",
    ]
    if noise_scales.calibrations:
        notes.append("Gaussian calibration: " + "; ".join(dict.fromkeys(noise_scales.calibrations)) + ".")
    notes.append(
        "Knockoffs: "
        + (
            "materialised by QR"
            if knockoffs != "shortcut"
            else "U~'y sampled from sufficient statistics (Haar shortcut)"
        )
        + "."
    )
    return notes
