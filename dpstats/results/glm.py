"""The result of :func:`dpstats.dp_glm`: a private GLM that behaves like R's ``glm``."""

from __future__ import annotations

import pandas as pd

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._rnumbers import format_one, format_real
from ..errors import ChanceWarning, DataWarning, PrivacyParameterError, caller_stacklevel
from ..methods.glm import (
    Coordinates,
    GLMOptions,
    GLMPlan,
    fit_figures,
    inference_text,
    public_inputs,
    wald_table,
)
from .base import escape_text
from .lm import LMResult, fit_fields

TIDY_COLUMNS = ["term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"]


@dataclass(repr=False)
class GLMResult(LMResult):
    """A released logistic or Poisson regression (:class:`~dpstats.results.lm.LMResult`'s accessors).

    Attributes
    ----------
    family : str
        "binomial" (logit link) or "poisson" (log link).
    coefficients, table, vcov_matrix, conf_level, inference, noise
        As :class:`~dpstats.results.lm.LMResult`; under eps < inf the covariance is
        that of :mod:`dpstats.methods.glm` (G4), NaN when the intervals are withheld.
    withheld : str
        Why std.error, intervals and p-values are withheld ("" when shown).
    deviance, null_deviance, aic, loglik : float
        At eps = inf only (computed from the rows; NaN under DP: not released).
    iterations : int
        Fisher scoring iterations (eps = inf) or noisy Newton steps, one pass each (DP).
    df_null : int or None
        n − 1 (with an intercept); None where n is private.
    response_note : str
        How a factor response was coded (its levels are declared or read, see the statement).
    separation : str
        Under DP, why the release cannot rule out (quasi-)separation ((G8) of :mod:`dpstats.methods.glm`,
        from released values only; a DataWarning too); "" when it can.
    """

    family: str = "binomial"
    withheld: str = ""
    deviance: float = math.nan
    null_deviance: float = math.nan
    aic: float = math.nan
    loglik: float = math.nan
    iterations: int = 0
    df_null: int | None = 0
    response_note: str = ""
    separation: str = ""

    title = "Differentially private generalised linear model"
    p_noun = "coefficients"
    tidy_columns = TIDY_COLUMNS

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: GLMOptions,
        plan: GLMPlan,
        released,
        mf,
        coords: Coordinates,
        engine: str = "memory",
        response_note: str = "",
    ) -> GLMResult:
        """The result of a :func:`dpstats.dp_glm` call: the door's ``opening`` (method, call, n, p, terms,
        statement), the call's options, the privacy plan, the release (the IRLS fit at eps = inf), the model
        frame (its coding), the public coordinates of the bounds, the engine and how a factor response was
        coded."""
        n, names = opening["n"], opening["terms"]
        withheld = bool(getattr(released, "withheld", ""))
        table = wald_table(released.coefficients, released.vcov, options.conf_level, withheld)
        result = cls(
            **opening,
            **fit_fields(mf, names, released.coefficients, table, nonprivate=math.isinf(options.eps)),
            conf_level=options.conf_level,
            inference=inference_text(plan, released),
            noise={**public_inputs(plan, n, options.eps, options.delta), **start_and_refinement(plan)},
            formula=options.formula,
            intercept=coords.intercept,
            engine=engine,
            family=options.family,
            response_note=response_note,
            **fit_figures(released, n, len(names), plan),
        )
        for text in getattr(released, "glm_warnings", ()):  # eps = inf only: glm.fit's, as glm gives them
            result.warnings.append(text)
            warnings.warn(text, DataWarning, stacklevel=caller_stacklevel())
        unconverged = getattr(released, "unconverged", "")
        if unconverged:  # (G7) of methods.glm: from released values only
            result.warnings.append(unconverged)
            warnings.warn(unconverged, ChanceWarning, stacklevel=caller_stacklevel())
        result.separation = separation_text(getattr(released, "separation", ()), names, coords)
        if result.separation:  # (G8) of methods.glm: from released values only
            result.warnings.append(result.separation)
            warnings.warn(result.separation, DataWarning, stacklevel=caller_stacklevel())
        return result

    def headline_notes(self) -> list[dict[str, str]]:
        """Withheld intervals, for the top of the report (:func:`dpstats.report.top_warnings`): a table
        and a figure of bare estimates must not be read as if they carried their uncertainty; and the
        possible separation of (G8), whose intervals cannot cover."""
        notes = [{"lead": "Intervals withheld.", "text": self.withheld}] if self.withheld else []
        return notes + ([{"lead": "Possibly separated.", "text": self.separation}] if self.separation else [])

    @property
    def private(self) -> bool:
        return math.isfinite(self.privacy.eps)

    def predict(self, newdata: pd.DataFrame | dict, type: str = "link") -> np.ndarray:  # noqa: A002 (R's argument name)
        """Linear predictor (``type="link"``) or mean (``"response"``: probability, or expected count).

        Examples
        --------
        >>> import dpstats as dp, pandas as pd, warnings
        >>> df = pd.DataFrame({"x": [0.0, 1, 2, 3, 4, 5], "y": [0, 0, 1, 0, 1, 1]})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     fit = dp.dp_glm("y ~ x", df, eps=float("inf"))
        >>> fit.predict(pd.DataFrame({"x": [2.5]}), type="response").round(4).tolist()
        [0.5]
        """
        if type not in ("link", "response"):
            raise PrivacyParameterError(f'type must be "link" or "response", got {type!r}.')
        eta = LMResult.predict(self, newdata)
        return eta if type == "link" else self.mean(eta)

    def mean(self, eta: np.ndarray) -> np.ndarray:
        """The inverse link: the probability (binomial) or expected count (Poisson) at linear predictor η."""
        return special.expit(eta) if self.family == "binomial" else np.exp(eta)

    def withhold_n(self) -> None:
        super().withhold_n()
        self.df_null = None

    # ------------------------------------------------------------------ text
    def _test_headers(self) -> tuple[str, str]:
        """Wald z tests, headed as R's summary.glm heads them."""
        return "z value", "Pr(>|z|)"

    def _body_lines(self) -> list[str]:
        lines = self._coef_lines()
        lines += ["", f"(Dispersion parameter for {self.family} family taken to be 1)", ""]
        if not self.private:
            lines += [
                *self.deviance_lines(),
                *self.deleted_lines(),
                f"AIC: {format_one(self.aic, 5)}",
                "",
                f"Number of Fisher Scoring iterations: {self.iterations}",
            ]
        else:
            lines += [
                "Deviances and AIC: not released (they are computed from the rows; no budget is spent on them)",
                f"Noisy Newton steps: {self.iterations} (one pass over the rows each); {self.n_text()}",
            ]
        if self.response_note:
            lines.append(self.response_note)
        lines.append(f"Intervals ({self.conf_level:g}): {self.inference}")
        return lines

    def deviance_lines(self) -> list[str]:
        """print.summary.glm's two deviance lines: the deviances formatted together (common decimals, at
        5 significant digits), the degrees of freedom too."""
        dev = format_real([self.null_deviance, self.deviance], 5)
        df = [
            str(v).rjust(max(len(str(self.df_null)), len(str(self.df_residual))))
            for v in (self.df_null, self.df_residual)
        ]
        return [
            f"    Null deviance: {dev[0]}  on {df[0]}  degrees of freedom",
            f"Residual deviance: {dev[1]}  on {df[1]}  degrees of freedom",
        ]

    # ------------------------------------------------------------------ tables
    def _glance_extra(self) -> dict[str, Any]:
        k = len(self.terms)
        nobs = self.released_n()
        bic = -2.0 * self.loglik + math.log(nobs) * k if (nobs and math.isfinite(self.loglik)) else math.nan
        return {
            "family": self.family,
            "null.deviance": self.null_deviance,
            "df.null": self.df_null,
            "logLik": self.loglik,
            "AIC": self.aic,
            "BIC": bic,
            "deviance": self.deviance,
            "df.residual": self.df_residual,
            "nobs": nobs,
            "conf_level": self.conf_level,
            "inference": self.inference,
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "coefficients": dict(zip(self.terms, self.coefficients.tolist())),
            "vcov": self.vcov_matrix.tolist(),
            "withheld": self.withheld,
            "separation": self.separation,
            "deviance": self.deviance,
            "null_deviance": self.null_deviance,
            "aic": self.aic,
            "iterations": self.iterations,
            "df_residual": self.df_residual,
            "df_null": self.df_null,
            "inference": self.inference,
            "noise": dict(self.noise),
        }

    def report_sections(self) -> list[dict[str, Any]]:
        text = "\n".join(self._coef_lines())
        return [{"heading": "Coefficients (summary.glm layout)", "html": f"<pre>{escape_text(text)}</pre>"}]


def start_and_refinement(plan: GLMPlan) -> dict[str, float]:
    """The public noise scales of the releases besides the Newton steps' (the ledger's "start: count of
    successes" and "refinement: score sum"), for the report's account of the fit; none that the plan
    does not make."""
    out: dict[str, float] = {}
    if getattr(plan, "count_sd", 0.0):
        out.update(count_sd=plan.count_sd, count_sensitivity=plan.count_sensitivity)
    if getattr(plan, "refine_sd", 0.0):
        out["refine_sd"] = plan.refine_sd
    return out


def separation_text(flags: tuple, names: list[str], coords: Coordinates) -> str:
    """The warning of (G8) (:func:`dpstats.methods.glm.separation`) for the flagged (coefficient, bound,
    response) triples, in the formula's terms and the declared bounds; "" when none.  Its shape depends on
    released values and public declarations only, so neighbouring data sets give the same kinds of message.

    Examples
    --------
    >>> c = Coordinates(np.array([0.5, 0.0]), np.array([0.5, 3.0]), True)
    >>> separation_text(((1, 1, 1),), ["(Intercept)", "x1", "x2"], c)[:76]
    'the data may be (quasi-)separated: every row with x1 = 1 may have response 1'
    """
    if not flags:
        return ""
    where = [
        f"every row with {names[j]} = {format_one(coords.x_center[j - 1] + s * coords.x_half[j - 1], 7)} may "
        f"have response {outcome}"
        for j, s, outcome in flags
    ]
    terms = sorted({names[j] for j, _, _ in flags}, key=names.index)
    return (
        "the data may be (quasi-)separated: "
        + "; ".join(where)
        + f". The released fit's 95% Wald interval for {', '.join(terms)} reaches coefficients under which those "
        "rows would show no other response with probability 5% or more (fitted probabilities near 0 or 1), so the "
        "release cannot rule it out. If they are separated, the maximum-likelihood coefficient is infinite (glm "
        "gives a huge estimate and standard error, or warns 'fitted probabilities numerically 0 or 1 occurred'): "
        "no finite interval covers it, its p-value means nothing, and raising eps does not help. Check the table "
        "of the response against "
        + ", ".join(terms)
        + " (for a factor level, merge or drop it). From released values only; the intervals are as released."
    )
