"""The result of :func:`dpstats.dp_lm`: a private linear model that behaves like R's ``lm``."""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ChanceWarning, DataError, DataWarning, FormulaError, caller_stacklevel
from ..methods._aliased import singularities_note
from ..methods.lm import (
    Coordinates,
    LMOptions,
    LMPlan,
    LMRelease,
    public_inputs,
    released_sigma,
)
from ..plotting import Plot, coefficient_plot
from .._rnumbers import format_one
from ._coefmat import SIGNIF_LEGEND, coefmat_lines, format_pval, signif_codes
from .base import DPResult, Summary, deleted_due_to_missingness, escape_text

DOUBLE_EPS = float(np.finfo(float).eps)  # R's .Machine$double.eps, format.pval's eps in summary.lm
TABLE_COLUMNS = ["term", "estimate", "std.error", "conf.low", "conf.high", "statistic", "p.value"]
GLANCE_COLUMNS = [  # broom's glance(lm), in its order
    "r.squared",
    "adj.r.squared",
    "sigma",
    "statistic",
    "p.value",
    "df",
    "logLik",
    "AIC",
    "BIC",
    "deviance",
    "df.residual",
    "nobs",
]
CALIBRATED_NOTE = (
    "Estimate: the calibrated estimate (coef() and tidy()'s estimate, which predict() uses), Ridge with its "
    "average bias undone by the bootstrap; Std. Error, statistic (Estimate / Std. Error), p-value, interval "
    "and vcov() are Estimate's. Ridge is the AdaSSP ridge estimate (ridge_estimates)."
)


@dataclass(repr=False)
class LMResult(DPResult):
    """A released linear model.

    Attributes
    ----------
    coefficients : ndarray (k,)
        Released estimates, one per term (intercept first when present): ``coef()``, the estimates
        that ``vcov()``, ``confint()``, ``tidy()`` and print describe and that ``predict()`` uses, as R's
        ``coef()`` and ``vcov()`` of an ``lm`` describe one estimator.  Under eps < inf with the
        bootstrap these are the calibrated estimates (:attr:`calibrated_estimates`), else (eps = inf)
        the OLS estimates.
    ridge_estimates : ndarray (k,)
        The AdaSSP ridge estimates θ̂ that the bootstrap calibrates (at eps = inf, λ = 0: the OLS
        estimates, equal to ``coefficients``); print's "Ridge" column and ``tidy()``'s ``ridge`` under
        eps < inf.
    table : pandas.DataFrame
        The coefficient table: term, estimate, std.error, conf.low, conf.high,
        statistic, p.value.  Under eps < inf std.error, intervals and p-values come
        from the parametric bootstrap (post-processing) and are those of the
        calibrated estimates, the table's ``estimate`` (broom's contract:
        the interval, statistic and p-value belong to ``estimate``); ``tidy()`` shows the ridge
        estimates beside them as ``ridge``.
    vcov_matrix : ndarray (k, k)
        Covariance of the estimates: at eps = inf the classical one; under eps < inf D R D, D the
        std.errors (the interval's half-width over z) and R the bootstrap draws' rank correlation
        (:mod:`dpstats.methods.lm`, "Std. Error and vcov"), so its diagonal is std.error².
    calibrated_estimates : ndarray (k,) or None
        The bootstrap's calibrated coefficients θ̃ (the ridge estimates with their
        average bias undone, :mod:`dpstats.methods.lm`): the estimates that
        std.error, statistic (θ̃ / std.error), p.value and the interval are about,
        printed as "Estimate" with the ridge estimates (:attr:`ridge_estimates`) beside them as "Ridge"
        (``tidy()``: ``estimate`` and ``ridge``); ``coefficients`` holds them too.  None at eps = inf.  Bootstrap p-values
        are bounded below by 2/(B + 1) (:attr:`p_value_floor`): ``tidy()``'s p.value there is that number.
    sigma : float
        Residual standard error σ̂ (original units).  Under eps < inf it is post-processing of the
        released statistics (their yᵀy, Xᵀy, XᵀX and the estimates) and the public n, so it is shown as
        summary.lm shows it; NaN where the residual sum of squares from them fell below 0 (floored:
        the noise on yᵀy swamps the residual variance at this eps).
    df_residual : int or None
        n − k; None where n is private (rows dropped, or add/remove one row).
    conf_level : float
    ridge : float
        The AdaSSP ridge λ in fitting coordinates (0 at eps = inf).
    inference : str
        How std.error, intervals and p-values were obtained.
    noise : dict
        Public inputs a downstream procedure (``dp_bh``) may need: the noise kind,
        the per-entry scale of the stacked statistic and of the λ_min release,
        their sensitivities, the bounds' centres and half-widths, n, eps, delta.
    """

    coefficients: np.ndarray = field(default_factory=lambda: np.empty(0))
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TABLE_COLUMNS))
    vcov_matrix: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    sigma: float = math.nan
    df_residual: int | None = 0
    conf_level: float = 0.95
    ridge: float = 0.0
    inference: str = ""
    noise: dict[str, Any] = field(default_factory=dict)
    formula: str = ""
    intercept: bool = True
    engine: str = "memory"
    calibrated_estimates: np.ndarray | None = None
    ridge_estimates: np.ndarray | None = None
    factor_levels: dict[str, list] = field(default_factory=dict)
    # the data-dependent steps (step, fix) predict() refuses: newdata would recompute their terms
    data_dependent_terms: list[tuple[str, str]] = field(default_factory=list)
    coding: dict[str, Any] = field(default_factory=dict)  # the fit's contrasts and predvars, for predict()
    # broom's glance(lm) statistics of the exact fit (eps = inf only: methods.lm.ols_fit_statistics)
    fit_statistics: dict[str, float] = field(default_factory=dict)
    # rows left out for missing values, shown as R's summary shows them: eps = inf only (else private, None)
    n_deleted: int | None = None
    # the public rules on the release (methods.lm.release_warnings): print's notes, summary's warnings
    release_notes: list[str] = field(default_factory=list)

    title = "Differentially private linear regression"
    p_noun = "coefficients"
    tidy_columns = TABLE_COLUMNS  # tidy()'s columns, in order (GLMResult: z statistics)

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: LMOptions,
        plan: LMPlan,
        released: LMRelease,
        mf,
        coords: Coordinates,
    ) -> LMResult:
        """The result of a :func:`dpstats.dp_lm` call: the door's ``opening`` (method, call, n, p, terms,
        statement), the call's options, the privacy plan, the release, the model frame (its coding, its
        engine) and the public coordinates of the bounds."""
        nonprivate, n, names, fit = math.isinf(options.eps), opening["n"], opening["terms"], released.fit
        # coef() is the estimate vcov() and the table describe: the calibrated one where the bootstrap gave it
        estimates = fit.coefficients if released.calibrated is None else released.calibrated
        return cls(
            **opening,
            **fit_fields(mf, names, estimates, released.table, nonprivate=nonprivate),
            sigma=released_sigma(fit, coords, nonprivate),
            df_residual=fit.df_residual,
            conf_level=options.conf_level,
            ridge=fit.ridge,
            inference=released.inference,
            noise=public_inputs(plan, n, options.eps, options.delta),
            calibrated_estimates=released.calibrated,
            ridge_estimates=np.asarray(fit.coefficients, float),
            formula=options.formula,
            intercept=coords.intercept,
            engine=getattr(mf, "engine", "memory"),
        ).with_release_warnings(released.warnings)

    def with_release_warnings(self, found: list[tuple[str, str]]) -> LMResult:
        """Add the public rules of :func:`dpstats.methods.lm.release_warnings` as print's notes and
        summary's warnings; where the noise dominates also warn (a :class:`~dpstats.errors.ChanceWarning`,
        as dp_gmm and vertical_glm warn).  The unresolved-design rule only notes: it also fires on small
        correlated designs whose intervals cover, so a warning would cry wolf."""
        for kind, text in found:
            self.release_notes.append(text)
            self.warnings.append(text)
            if kind == "chance":
                warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())
        return self

    def withhold_n(self) -> None:
        """n is private: so are the residual degrees of freedom (n − p) and the noise record's n."""
        super().withhold_n()
        self.df_residual = None
        if "n" in self.noise:
            self.noise = {**self.noise, "n": None}

    # ------------------------------------------------------------------ lm-like accessors
    def coef(self) -> pd.Series:
        """Estimates by term, as R's ``coef()``."""
        return pd.Series(self.coefficients, index=self.terms)

    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the estimates, as R's ``vcov()``."""
        return pd.DataFrame(self.vcov_matrix, index=self.terms, columns=self.terms)

    def confint(self) -> pd.DataFrame:
        """Intervals at ``conf_level``, as R's ``confint()``.  Which intervals they are, :attr:`inference`
        says (the printed ``Intervals`` line): for dp_glm (and dp_select_infer with ``infer="glm"``) Wald
        intervals, of the private fit under eps < inf (the released standard errors, privacy noise
        included), as R's ``confint.default``, not the profile-likelihood intervals of ``confint(glm)``."""
        lo, hi = f"{50 * (1 - self.conf_level):g} %", f"{100 - 50 * (1 - self.conf_level):g} %"
        t = self.table.set_index("term")
        return pd.DataFrame({lo: t["conf.low"], hi: t["conf.high"]})

    def predict(self, newdata: pd.DataFrame | dict) -> np.ndarray:
        """Predictions Xβ̂ for the rows of ``newdata`` (post-processing of released estimates).

        Examples
        --------
        >>> import dpstats as dp, pandas as pd
        >>> df = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [1.0, 3, 5, 7]})
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     fit = dp.dp_lm("y ~ x", df, eps=float("inf"))
        >>> fit.predict(pd.DataFrame({"x": [4.0]})).round(6).tolist()
        [9.0]
        """
        mf, rows = na_pass(self._new_design, newdata, self.formula)
        names = list(mf.names) if mf is not None else list(self.terms)
        if names != list(self.terms):
            missing = [t for t in self.terms if t not in names]
            raise DataError(
                f"newdata gives design columns {names}, the model has {self.terms}; missing {missing}: give "
                "newdata the variables the fit was given, with the factor levels of the fit."
            )
        aliased = np.isnan(self.coefficients)
        if aliased.any():  # eps = inf only: as R's predict.lm, the estimable coefficients, with its warning
            warnings.warn(
                f"prediction from a rank-deficient fit may be misleading: {', '.join(self.aliased_terms())} "
                "not defined because of singularities (taken as 0)",
                DataWarning,
                stacklevel=caller_stacklevel(),
            )
        if mf is None:
            return rows.fill(None)
        # offset() of newdata, as predict.glm (eps = inf only)
        offset = 0.0 if mf.offset is None else mf.offset
        return rows.fill(mf.X @ np.where(aliased, 0.0, self.coefficients) + offset)

    def aliased_terms(self) -> list[str]:
        """Terms not defined because of singularities (NaN, R's NA): non-private fits (eps = inf) only,
        where a design column is a linear combination of those before it (:mod:`dpstats.methods._aliased`)."""
        return [t for t, b in zip(self.terms, self.coefficients) if np.isnan(b)]

    def _new_design(self, newdata):
        """The design of ``newdata`` with the training factor levels (R's xlev) and, at eps = inf, the fit's
        bases (R's predvars: orthogonal ``poly()``, spline knots, ``scale()``); other whole-data terms refused."""
        refuse_recomputed(self.data_dependent_terms, private=math.isfinite(self.privacy.eps))
        return design_with_levels(self.formula, self.factor_levels, newdata, **self.coding)

    # ------------------------------------------------------------------ text
    def _test_headers(self) -> tuple[str, str]:
        """The coefficient table's statistic and p-value headers."""
        if self.inference.startswith("classical"):
            return "t value", "Pr(>|t|)"  # as summary.lm heads them
        return "statistic", "p (bootstrap)"

    @property
    def p_value_floor(self) -> float | None:
        """The smallest p-value the calibrated bootstrap can give, 2/(B + 1) for B replicates (None for
        classical inference): a p-value there means no replicate crossed 0, and prints as ``<`` it, as
        R's ``format.pval`` prints one below its ``eps``."""
        found = re.search(r"2 x (\d+) replicates", self.inference or "")
        return 2.0 / (int(found[1]) + 1) if found else None

    def _p_text(self, p: float) -> str:
        """A p-value as R's ``format.pval`` writes it with ``eps = .Machine$double.eps`` (``<2e-16``), or
        the bootstrap's floor as ``<`` it (:meth:`_p_texts` of one)."""
        return self._p_texts(np.array([p]))[0]

    def report_table(self) -> pd.DataFrame:
        """``tidy()`` with the p-values written as print writes them (:meth:`_p_text`)."""
        table = super().report_table()
        if "p.value" in table:
            table["p.value"] = [self._p_text(float(v)) for v in table["p.value"]]
        return table

    def _coef_lines(self) -> list[str]:
        """The coefficient table as R's printCoefmat lays it out (:mod:`dpstats.results._coefmat`):
        estimate columns with common decimals, the statistic to 3 decimals, p-values by format.pval."""
        t = self.table.set_index("term")
        statistic, p_value = self._test_headers()
        estimates = {"Estimate": t["estimate"]}  # coef(): the one the rest of the row is about
        if self.calibrated_estimates is not None and self.ridge_estimates is not None:
            estimates["Ridge"] = self.ridge_estimates  # the ridge estimate the bootstrap calibrated
        estimates["Std. Error"] = t["std.error"]
        p = t["p.value"].to_numpy(float)
        signif = self._signif(p)
        aliased = self.aliased_terms()
        header = "Coefficients:" + (f" {singularities_note(len(aliased))}" if aliased else "")
        table = coefmat_lines(
            list(t.index), estimates, (statistic, t["statistic"]), (p_value, self._p_texts(p)), signif
        )
        legend = ["---", SIGNIF_LEGEND] if signif is not None else []
        return [header, *table, *legend, *self._floor_lines()]

    def _p_texts(self, p: np.ndarray) -> list[str]:
        """The p-value column: format.pval of them together; one at the bootstrap's floor as ``<`` it."""
        texts = format_pval([math.nan if self._at_floor(v) else v for v in p])
        return [f"<{self.p_value_floor:.2g}" if self._at_floor(v) else text for v, text in zip(p, texts)]

    def _at_floor(self, p: float) -> bool:
        floor = self.p_value_floor
        return floor is not None and p <= floor * (1 + 1e-9)

    def _signif(self, p: np.ndarray) -> list[str] | None:
        """printCoefmat's stars; a p-value at the bootstrap's floor is only known to be below it, so it
        gets the stars of the floor's category (those of a p-value just below the floor)."""
        return signif_codes([self.p_value_floor * (1 - 1e-9) if self._at_floor(v) else v for v in p])

    def _floor_lines(self) -> list[str]:
        """Under the legend: bootstrap p-values are bounded below by 2/(B + 1)."""
        floor = self.p_value_floor
        if floor is None:
            return []
        return [
            f"Bootstrap p-values are bounded below by 2/(B + 1) = {floor:.2g} (B = {round(2 / floor - 1)}): "
            f"<{floor:.2g} is only known to be below it, and has the stars of that category."
        ]

    def _body_lines(self) -> list[str]:
        lines = self._coef_lines()
        lines += [
            "",
            self._sigma_line(),
            *self.deleted_lines(),
            f"{self.n_text()}; engine: {self.engine}; ridge λ = {self.ridge:.4g}",
            f"Intervals ({self.conf_level:g}): {self.inference}",
        ]
        if self.calibrated_estimates is not None:
            lines.append(CALIBRATED_NOTE)
        return lines + self._release_notes()

    def _release_notes(self) -> list[str]:
        """The release's public warnings (:meth:`with_release_warnings`) as print's notes; summary lists
        them under Warnings instead."""
        return [f"Note: {w}." for w in self.release_notes]

    def _summary_body_lines(self) -> list[str]:
        """print's body, with summary.lm's R² and F lines after the residual standard error (eps = inf)."""
        notes = self._release_notes()
        lines = [line for line in self._body_lines() if line not in notes]
        extra = self.fit_lines()
        if extra:
            at = lines.index(self._sigma_line()) + 1 + len(self.deleted_lines())
            lines[at:at] = extra
        return lines

    def fit_lines(self) -> list[str]:
        """summary.lm's "Multiple R-squared" and "F-statistic" lines, as it prints them (digits = 4), for a
        non-private fit (eps = inf) with a term besides the intercept; none at finite eps (not released)."""
        s = self.fit_statistics
        if not s or not math.isfinite(s.get("df", math.nan)):
            return []
        p = s["p.value"]
        p_text = "< 2.2e-16" if p < DOUBLE_EPS else format_one(p, 4)
        return [
            f"Multiple R-squared:  {format_c(s['r.squared'], 4)},\tAdjusted R-squared:  "
            f"{format_c(s['adj.r.squared'], 4)} ",
            f"F-statistic: {format_c(s['statistic'], 4)} on {s['df']:g} and {self.df_residual} DF,  "
            f"p-value: {p_text}",
        ]

    def deleted_lines(self) -> list[str]:
        """R's ``(k observations deleted due to missingness)`` of a non-private fit (eps = inf) that left
        rows out; never at finite eps, where the count is private (:attr:`n_deleted` is None there)."""
        return deleted_due_to_missingness(self.n_deleted, self.privacy.eps)

    def _sigma_line(self) -> str:
        """σ̂ as summary.lm prints it; a private σ̂ of NaN says why: the residual sum of squares from the
        released yᵀy fell below 0 and was floored (the noise on yᵀy swamps the residual variance at this
        eps)."""
        df = f"on {self.df_residual} degrees of freedom"
        if self.df_residual is None:
            df = "(degrees of freedom not shown: n is private)"
        if self.inference.startswith("classical"):
            return f"Residual standard error: {self.sigma:.4g} {df}"
        if math.isnan(self.sigma):
            return (
                f"Residual standard error: not resolved at this eps {df} (the residual sum of squares "
                "from the released yᵀy is below 0, floored)"
            )
        return f"Residual standard error: {self.sigma:.4g} {df} (from the released yᵀy)"

    def summary(self) -> Summary:
        """Like ``summary.lm``: call, coefficient table with stars, residual standard error, privacy statement."""
        return Summary(self)

    # ------------------------------------------------------------------ tables
    def _tidy(self) -> pd.DataFrame:
        out = self.table[self.tidy_columns].reset_index(drop=True).copy()  # estimate: coef(), as broom's
        if self.calibrated_estimates is not None and self.ridge_estimates is not None:
            out.insert(2, "ridge", np.asarray(self.ridge_estimates, float))
        return out

    def _glance_extra(self) -> dict[str, Any]:
        """broom's ``glance(lm)`` columns, then the fit's own.  At eps = inf all of them, as R computes
        them (:func:`dpstats.methods.lm.ols_fit_statistics`).  A private fit gives those that are
        functions of released values and public inputs only: sigma (from the released statistics), df
        (the coefficients other than the intercept: the formula and the declared levels), df.residual
        and nobs (where n is public), and from sigma and n the deviance (:func:`released_deviance`:
        post-processing, as noisy as sigma).  R² and the F test would need the exact total sum of squares;
        logLik, AIC and BIC, computed from the noisy RSS, are no likelihood of the data (they can exceed
        the least-squares maximum) and separately noised fits' are not comparable, so model choice by them
        would rank noise: all NaN, as dp_glm's (audit s16-rusers3, F06)."""
        exact = self.fit_statistics
        slopes = len(self.terms) - int(self.intercept)
        broom = {name: exact.get(name, math.nan) for name in GLANCE_COLUMNS}
        if not exact:  # a private fit: the deviance from the released sigma and the public n
            broom["deviance"] = released_deviance(self.sigma, self.df_residual)
        broom.update(
            {
                "sigma": self.sigma,
                "df": exact.get("df", float(slopes) if slopes > 0 else math.nan),
                "df.residual": self.df_residual,
                "nobs": self.released_n(),
            }
        )
        return {**broom, "conf_level": self.conf_level, "ridge": self.ridge, "inference": self.inference}

    def outputs(self) -> dict[str, Any]:
        return {
            "coefficients": dict(zip(self.terms, self.coefficients.tolist())),
            "vcov": self.vcov_matrix.tolist(),
            "sigma": self.sigma,
            "df_residual": self.df_residual,
            "ridge": self.ridge,
            "inference": self.inference,
            "noise": dict(self.noise),
            "calibrated_estimates": None
            if self.calibrated_estimates is None
            else dict(zip(self.terms, self.calibrated_estimates.tolist())),
            "ridge_estimates": None
            if self.ridge_estimates is None
            else dict(zip(self.terms, np.asarray(self.ridge_estimates, float).tolist())),
            "p_value_floor": self.p_value_floor,
        }

    def plots(self) -> list[Plot]:
        table = self.tidy()
        level = f"{self.conf_level:.0%}"
        point, what = "estimate", "Coefficients"
        if "ridge" in table:  # tidy()'s estimate is then the calibrated one, which the interval is about
            what = "Calibrated coefficients"
        if table["conf.low"].isna().all() and len(table):  # withheld (dp_glm): say so, never "[nan, nan]"
            return [self._estimates_only_plot(table, point)]
        alt = f"{what} with {level} intervals: " + ", ".join(
            f"{t} {e:.3g} [{lo:.3g}, {hi:.3g}]"
            for t, e, lo, hi in zip(table["term"], table[point], table["conf.low"], table["conf.high"])
        )
        return [
            coefficient_plot(
                table["term"].tolist(),
                table[point].to_numpy(),
                table["conf.low"].to_numpy(),
                table["conf.high"].to_numpy(),
                title=f"{what} with {level} intervals",
                xlabel="calibrated estimate (coef())" if "ridge" in table else point,
                alt=alt,
            )
        ]

    def _estimates_only_plot(self, table: pd.DataFrame, point: str) -> Plot:
        """The estimates without intervals (withheld), captioned and described as such."""
        title = "Estimates only: intervals withheld"
        alt = (
            f"{title} (without its interval an estimate says nothing of its uncertainty, and may be noise "
            "alone): " + ", ".join(f"{t} {e:.3g}" for t, e in zip(table["term"], table[point]))
        )
        return coefficient_plot(
            table["term"].tolist(), table[point].to_numpy(), title=title, xlabel=point, alt=alt
        )

    def report_sections(self) -> list[dict[str, Any]]:
        """print's coefficient table, then its residual standard error and (finite eps) the ridge λ."""
        lines = [*self._coef_lines(), "", self._sigma_line(), *self.deleted_lines()]
        if self.calibrated_estimates is not None:
            lines.append(f"ridge λ = {self.ridge:.4g} (AdaSSP, in the fitting coordinates)")
        text = "\n".join(lines)
        return [{"heading": "Coefficients (summary.lm layout)", "html": f"<pre>{escape_text(text)}</pre>"}]


def format_c(value: float, digits: int) -> str:
    """R's ``formatC(value, digits = digits)`` of one number: C's ``%.<digits>g``, right-justified to
    digits + 1 characters.

    Examples
    --------
    >>> [format_c(v, 4) for v in (0.8268, 5.0, 1234.5, 12345.6)]
    ['0.8268', '    5', ' 1234', '1.235e+04']
    """
    if math.isnan(value):
        return "  NaN"
    return f"{value:>{digits + 1}.{digits}g}"


def released_deviance(sigma: float, df_residual: int | None) -> float:
    """A private linear fit's deviance, R's ``deviance.lm`` (the residual sum of squares), from its released
    sigma and the public n: RSS = σ̂² (n − k), the one σ̂ is computed from (the ridge estimate's, from the
    released yᵀy, Xᵀy and XᵀX).  Post-processing, as noisy as σ̂; NaN where σ̂ is (not resolved at this
    eps) or n is private.

    Examples
    --------
    >>> released_deviance(2.0, 10), released_deviance(2.0, None)
    (40.0, nan)
    """
    if df_residual is None or not math.isfinite(sigma):
        return math.nan
    return sigma**2 * df_residual


def fit_fields(
    mf, names: list[str], coefficients, table: dict[str, Any], *, nonprivate: bool
) -> dict[str, Any]:
    """The fields an LMResult (or GLMResult) takes from its fit: the coefficient table from the Wald
    or bootstrap ``table`` (columns std.error .. p.value, and vcov; classical OLS's fit statistics), and the model frame's coding
    (factor levels, contrasts, a non-private fit's predvars, the data-dependent terms predict() refuses)."""
    frame = pd.DataFrame({"term": names, "estimate": coefficients})
    for col in TABLE_COLUMNS[2:]:
        frame[col] = table[col]
    levels = fit_levels(mf, nonprivate=nonprivate)
    return {
        "coefficients": np.asarray(coefficients, float),
        "table": frame,
        "vcov_matrix": table["vcov"],
        "fit_statistics": dict(table.get("fit_statistics", {})),  # eps = inf only (classical OLS)
        "n_deleted": int(getattr(mf, "n_dropped", 0) or 0) if nonprivate else None,  # private at finite eps
        **levels,
        "data_dependent_terms": recomputed_terms(mf, levels["coding"]["predvars"]),
    }


def fit_levels(mf, *, nonprivate: bool) -> dict[str, Any]:
    """What ``predict`` re-applies to newdata: the fit's factor levels (R's xlevels) and coding
    (:func:`fit_coding`)."""
    levels = {k: list(v) for k, v in mf.factor_levels.items()}
    return {"factor_levels": levels, "coding": fit_coding(mf, nonprivate=nonprivate)}


def fit_coding(mf, *, nonprivate: bool) -> dict[str, Any]:
    """How the fit codes newdata, as ``design_with_levels`` takes it: the frame's contrasts (empty for a
    chunked frame), its ordered factors (coded so in newdata whatever newdata's type) and, for a
    non-private fit only, R's predvars (:attr:`dpstats.formula.ModelFrame.predvars`: parameters read
    from the rows, which a DP fit neither keeps nor releases)."""
    return {
        "contrasts": dict(getattr(mf, "contrasts", None) or {}),
        "default_contrasts": getattr(mf, "default_contrasts", None),
        "predvars": dict(getattr(mf, "predvars", None) or {}) if nonprivate else {},
        "ordered": list(getattr(mf, "ordered_factors", None) or []),
    }


def recomputed_terms(mf, predvars: dict, within: list[str] | None = None) -> list[tuple[str, str]]:
    """The data-dependent steps (step, fix) of ``mf``'s terms that newdata would recompute from its own
    rows: all but those whose parameters ``predvars`` keeps; only those inside the term labels ``within``
    when given (a selection's terms)."""
    steps = getattr(mf, "step_calls", None)
    if steps is None:  # a chunked frame: its steps by text only
        return list(getattr(mf, "data_dependent_terms", []))
    return [
        step
        for call, step in steps.items()
        if call not in predvars and (within is None or any(call in term for term in within))
    ]


def refuse_recomputed(steps: list[tuple[str, str]], *, private: bool) -> None:
    """Refuse predict() on newdata where a term of the fit would be recomputed from newdata's own rows
    (``steps``: :func:`recomputed_terms`), naming each term and how to refit without it."""
    if not steps:
        return
    why = (
        "a DP fit keeps none of the values such a term reads from the rows, so newdata would get a basis of its own"
        if private
        else "such a term would be recomputed from newdata's own rows, giving another design"
    )
    raise DataError(
        f"predict() on new data is refused: {'; '.join(step for step, _ in steps)} ({why}). Refit with public "
        f"choices: {'; '.join(fix for _, fix in steps)}."
    )


def design_with_levels(
    formula: str,
    factor_levels: dict[str, list],
    newdata,
    contrasts: dict | None = None,
    default_contrasts: tuple[str, str] | None = None,
    predvars: dict | None = None,
    drop_intercept: bool = False,
    ordered: list[str] | None = None,
):
    """The right-hand side's design of ``newdata``, factors coded with the fit's levels (R's ``xlev``).

    ``factor_levels`` maps each factor variable of the fit, by its label (``cyl``, ``factor(cyl)``,
    ``C(cyl, contr.sum)``: ``ModelFrame.factor_levels``), to its levels, declared or read: a factor
    whose rows in ``newdata`` show only some levels keeps all of them, as in R, and a level the fit does
    not know is an error naming the variable and the level (:func:`dpstats.formula._eval.with_fit_levels`).
    ``contrasts`` and ``default_contrasts`` are the fit's (``ModelFrame.contrasts``,
    ``ModelFrame.default_contrasts``), so a fit under ``contr.sum`` predicts under it too; ``predvars``
    the fit's bases (``ModelFrame.predvars``), so that ``poly(x, 2)`` or ``ns(x, df = 3)`` is evaluated
    on newdata with the fit's coefficients and knots, as R's ``predict()`` does.  ``drop_intercept``:
    the fit's design had none (dp_gmm, dp_pca).  ``ordered``: the fit's ordered factors
    (``ModelFrame.ordered_factors``), coded so in newdata whatever its type (None: as newdata has them).
    """
    one_sided = formula.lstrip().startswith("~")
    frame, rhs = _predictors(newdata_frame(newdata), formula, one_sided=one_sided)
    if default_contrasts is not None:  # the fit's coding, not newdata's, as R's predict
        frame.attrs = {k: v for k, v in frame.attrs.items() if k != "contrasts"}
    return newdata_model_frame(
        f"~ {rhs}",
        frame,
        one_sided=True,
        drop_intercept=drop_intercept,
        min_rows=1,
        check_constant=False,
        contrasts=contrasts or None,
        default_contrasts=default_contrasts,
        predvars=predvars,
        xlevels={str(k): [str(v) for v in levels] for k, levels in factor_levels.items()},
        xordered=ordered,
    )


def _predictors(newdata: pd.DataFrame, formula: str, one_sided: bool) -> tuple[pd.DataFrame, str]:
    """newdata without the columns the response uses (so that a ``.`` means the predictors), and the
    formula's right-hand side."""
    from ..formula import split_formula

    lhs, rhs = split_formula(formula, one_sided=one_sided)
    used_by_lhs = set(re.findall(r"[A-Za-z_.][A-Za-z0-9_.]*", lhs or ""))
    return newdata.drop(columns=[c for c in newdata.columns if c in used_by_lhs]), rhs


def newdata_frame(newdata) -> pd.DataFrame:
    """``newdata`` as a data frame (a dict of columns too); anything else is refused naming the argument."""
    if isinstance(newdata, pd.DataFrame):
        return newdata
    if isinstance(newdata, dict):
        return pd.DataFrame(newdata)
    raise DataError(
        f"newdata must be a data frame with the variables the fit was given, got {type(newdata).__name__}."
    )


def newdata_model_frame(formula: str, newdata: pd.DataFrame, **kwargs):
    """:func:`~dpstats.formula.model_frame` on the rows a user gives ``predict()``: a variable of the fit's
    formula that ``newdata`` lacks is named as newdata's missing column, with the fix.  Only the formula
    (public) and newdata's own column names appear in the message."""
    from ..formula import model_frame

    try:
        return model_frame(formula, newdata, **kwargs)
    except FormulaError as exc:
        column = getattr(exc, "column", None)
        if column is None:
            raise
        raise FormulaError(
            f"newdata has no column '{column}', which the formula of the fit, '{formula}', uses; add the column "
            f"'{column}' to newdata (the rows to predict for need every variable the fit was given)."
        ) from None


@dataclass(frozen=True)
class PredictRows:
    """Which rows of newdata were predicted: the others (a variable missing or not finite) get NaN, as
    R's ``predict(fit, newdata, na.action = na.pass)`` gives NA for them."""

    complete: np.ndarray  # bool per row of newdata

    def fill(self, values: np.ndarray | None, width: tuple[int, ...] = ()) -> np.ndarray:
        """``values`` (one per complete row, in order) spread over every row, NaN elsewhere; ``values``
        as they are when every row is complete.  ``width``: a row's shape when no row is complete."""
        if values is not None and self.complete.all():
            return values
        values = None if values is None else np.asarray(values, dtype=float)
        out = np.full((self.complete.size,) + (width if values is None else values.shape[1:]), np.nan)
        if values is not None:
            out[self.complete] = values
        return out


def na_pass(build, newdata, formula: str) -> tuple[Any, PredictRows]:
    """``build(rows)``'s design on the complete rows of ``newdata``, and which rows those are.

    A row with a missing or non-finite value in a variable the right-hand side of ``formula`` uses, or
    with a value outside the levels a ``factor(x, levels = c(...))`` of the formula declares (R's factor()
    makes it NA), is left out and predicted as NaN (R's na.pass).  None as the design when no row is
    complete.  Reads only the rows the user gives.
    """
    from ..formula import formula_variables, outside_declared_levels

    newdata = newdata_frame(newdata)
    predictors, rhs = _predictors(newdata, formula, one_sided=formula.lstrip().startswith("~"))
    try:
        variables = formula_variables(f"~ {rhs}", predictors, one_sided=True)
    except FormulaError:
        return build(newdata), PredictRows(np.ones(len(newdata), bool))  # build names the missing column
    complete = np.ones(len(newdata), bool)
    for column in variables:
        values = predictors[column]
        complete &= values.notna().to_numpy()
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
            complete &= np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    complete &= ~outside_declared_levels(f"~ {rhs}", predictors)
    if not complete.any():
        return None, PredictRows(complete)
    mf = build(newdata if complete.all() else newdata[complete])
    if mf.n_dropped:
        raise DataError(
            "newdata has rows where a term of the formula is not finite (e.g. log() of a value <= 0); "
            "leave those rows out of newdata or give values inside the terms' domain."
        )
    return mf, PredictRows(complete)


def one_sided_design(
    formula: str, terms: list[str], newdata, factor_levels: dict | None = None, coding: dict | None = None
) -> tuple[np.ndarray | None, PredictRows]:
    """newdata's design under a one-sided ``formula`` whose fit had the design columns ``terms``, on its
    complete rows, and which rows those are (the others predict NaN, R's na.pass).  ``newdata`` is a data
    frame (or dict) with the formula's variables, coded with the fit's ``factor_levels`` and ``coding``
    (:func:`design_with_levels`), or an array with the design's columns (a row with a value that is not
    finite is incomplete).  None as the design when no row is complete."""
    if not isinstance(newdata, np.ndarray):
        return _one_sided_frame(formula, terms, newdata, factor_levels or {}, coding or {})
    X = np.asarray(newdata, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(terms):
        raise DataError(
            f"newdata must have {len(terms)} columns ({', '.join(terms[:5])}...), got shape {X.shape}."
        )
    rows = PredictRows(np.isfinite(X).all(axis=1))
    return (X[rows.complete] if rows.complete.any() else None), rows


def _one_sided_frame(formula, terms, newdata, factor_levels, coding) -> tuple[np.ndarray | None, PredictRows]:
    def frame(rows):
        mf = design_with_levels(formula, factor_levels, rows, drop_intercept=True, **coding)
        if mf.names != terms:
            raise DataError(
                f"newdata gives columns {mf.names[:5]}, the fit used {terms[:5]}; "
                "supply the same variables (and factor levels)."
            )
        return mf

    mf, rows = na_pass(frame, newdata, formula)
    return (None if mf is None else mf.X), rows
