"""Result of :func:`dpstats.vertical_glm` and of a networked :class:`dpstats.vertical.Party` fit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..formula import INTERCEPT, ModelFrame
from ..methods.privreg import slope_inflation
from .._io import jsonable
from ..errors import DataError, PrivacyParameterError
from ..plotting import Plot, coefficient_plot, new_figure, to_plot
from ._coefmat import SIGNIF_LEGEND, signif_codes
from .base import DPResult, deleted_due_to_missingness, escape_text

_LINKS = {"gaussian": "identity", "binomial": "logit", "poisson": "log"}


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class VerticalGLMResult(DPResult):
    """A GLM fitted by block coordinate descent across parties.

    Attributes
    ----------
    coefficients : DataFrame
        One row per term: ``term``, ``party``, ``estimate``, ``std_error``,
        ``statistic`` (t for the Gaussian family, z otherwise), ``p_value``,
        ``conf_low``, ``conf_high`` (Wald intervals, as R's ``confint.default``); in DP mode also
        ``noise_sd``: the sd σ_β of the Gaussian noise added to the coefficient (its party's, from
        the plan's public inputs; R's ``noise.sd``); the intercept's with the noise of the shifts
        Σ_k c_kᵀβ_k that map it back from the columns centred at their declared midpoints.
    trace : DataFrame
        Convergence trace: ``iteration``, ``relative_change`` (the sweep's change of the fit over its
        size, compared with ``tol``: :func:`dpstats.methods.privreg.relative_change`), ``deviance``; in
        DP mode both are NaN (not computed: the change would choose when to stop, and both are
        functions of the raw response).
    se_blocks : list of dict
        Per party: rank of the offset history used for the standard errors,
        p_{-k}, and whether the standard errors are exact.
    disclosure : list of str
        What the protocol reveals to the parties (stated honestly).
    noise : dict or None
        DP mode: ``eta_clip`` and, per party, ``sigma_eta`` (sd of the noise on each entry of its
        shared linear predictor) and ``sigma_beta`` (on its final coefficients); binomial family
        also ``slope_inflation``, the factor by which that noise pushes the party's slopes away
        from zero (:func:`dpstats.methods.privreg.slope_inflation`; meaningful while every
        sigma_eta ≤ eta_clip).
    """

    family: str = "gaussian"
    coefficients: pd.DataFrame | None = None
    trace: pd.DataFrame | None = None
    iterations: int = 0
    converged: bool = False
    tol: float = 1e-8
    dispersion: float = 1.0
    df_residual: int | None = 0
    deviance: float = math.nan
    penalty: str | None = None
    lam: float = 0.0
    se_method: str = "exact"
    se_blocks: list[dict] = field(default_factory=list)
    parties: list[str] = field(default_factory=list)
    party_terms: dict[str, list[str]] = field(default_factory=dict)
    conf_level: float = 0.95
    disclosure: list[str] = field(default_factory=list)
    response_note: str = ""
    noise: dict[str, Any] | None = None
    # what predict(), vcov(), logLik() and, with diagnostics=True, fitted()/residuals() need;
    # set by set_model_summaries(), kept out of to_dict() (the R package asks the object)
    formula: str = ""
    data_dependent_terms: list[tuple[str, str]] = field(default_factory=list)  # (step, fix) predict refuses
    factor_levels: dict[str, list] = field(default_factory=dict)
    coding: dict = field(default_factory=dict)  # the fit's contrasts, for predict()
    covariance: np.ndarray | None = field(default=None, repr=False)
    covariance_note: str = ""
    loglik_value: float = math.nan
    loglik_note: str = ""
    rows: dict[str, np.ndarray] | None = field(default=None, repr=False)
    n_deleted: int | None = None  # incomplete rows left out at eps = inf (R's na.omit); None when private

    title = "Generalized linear model on vertically partitioned data (block coordinate descent)"
    p_noun = "coefficients"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options,
        plan,
        released,
        mf: ModelFrame,
        parties: list[str],
        response_note: str = "",
        rows: bool | None = None,
    ) -> VerticalGLMResult:
        """The result of a :func:`dpstats.vertical_glm` call: the door's ``opening`` (call, n, terms,
        statement), the fit's options (:class:`dpstats.methods.privreg.PrivregOptions`), its privacy plan,
        the release, the model frame, the parties' names and how a factor response was coded.  ``rows``:
        None where the fit held no rows (streamed or Dask: no vcov, logLik or predict summaries), else
        whether per-row fitted values and residuals may be shown (``diagnostics=True``)."""
        call, terms, n, statement = opening["call"], opening["terms"], opening["n"], opening["privacy"]
        result = assemble_result(call, terms, n, parties, released, options, statement, plan)
        result.response_note = response_note
        if not options.dp:  # at finite eps the number of rows dropped is private
            result.n_deleted = int(getattr(mf, "n_dropped", 0) or 0)
        if rows is not None:
            summaries = dict(dp=options.dp, se=options.se, pooled=released.pooled, rows=rows)
            result.set_model_summaries(mf, mf.y, released.out.eta, **summaries)
        return result

    @property
    def statistic_name(self) -> str:
        return "t" if self.family == "gaussian" else "z"

    def coef(self) -> dict[str, float]:
        """Estimates by term (R's ``coef()``)."""
        return dict(zip(self.coefficients["term"], self.coefficients["estimate"]))

    def vcov_diag(self) -> np.ndarray:
        return self.coefficients["std_error"].to_numpy() ** 2

    # ------------------------------------------------------------------ R's model methods
    def vcov(self) -> pd.DataFrame:
        """Covariance of the estimates (R's ``vcov()``): φ (XᵀWX)⁻¹ at the fit.

        Defined for unpenalized non-private fits with ``se="exact"`` (or
        ``"pooled"``), whose standard errors are its diagonal.  Each party's own
        block is what that party computes in the protocol; the blocks between
        parties come from the pooled Fisher information of this one-process
        simulation (the networked protocol does not release them).  Otherwise a
        :class:`DataError` says why there is none.
        """
        if self.covariance is None:
            raise DataError(self.covariance_note or "no covariance matrix was computed for this fit.")
        return pd.DataFrame(self.covariance, index=self.terms, columns=self.terms)

    def loglik(self) -> dict[str, Any]:
        """Log-likelihood at the fit with its degrees of freedom and n (R's ``logLik()``).

        As R's ``logLik.glm``: Gaussian −n/2·(log(2π·RSS/n) + 1) with df = p + 1
        (σ² counts); binomial (0/1 response) −deviance/2; Poisson Σ log dpois(y, μ);
        df = p.  Refused (``DataError``) for DP and penalized fits.
        """
        if not math.isfinite(self.loglik_value):
            raise DataError(self.loglik_note or "the log-likelihood is not available for this fit.")
        df = self.p + (1 if self.family == "gaussian" else 0)
        return {"loglik": self.loglik_value, "df": df, "nobs": self.n}

    def predict(self, newdata: pd.DataFrame | dict, type: str = "link") -> np.ndarray:
        """Linear predictor (``type="link"``) or mean (``"response"``) for the rows of ``newdata``.

        Post-processing of the released coefficients on data the user supplies.
        Factors are coded with the training levels; a non-private fit evaluates orthogonal ``poly()``,
        splines with knots from the rows and ``scale()`` with the fit's own coefficients, knots and
        centring (R's predvars); other terms whose values depend on the training data as a whole
        (``mean()``, ``cut(x, 3)``), and every such term of a DP fit, are refused: recomputed on
        ``newdata`` they would give a different design.  A row with a missing or non-finite value in a
        variable the formula uses is predicted as NaN, as R's ``predict(fit, newdata, na.action = na.pass)``.
        """
        from .lm import refuse_recomputed

        if type not in ("link", "response"):
            raise PrivacyParameterError(f"type must be 'link' or 'response', got {type!r}.")
        refuse_recomputed(self.data_dependent_terms, private=self.noise is not None)
        eta = self._eta(newdata)
        return eta if type == "link" else m_family(self.family).linkinv(eta)

    def _eta(self, newdata) -> np.ndarray:
        """η for every row of ``newdata``: NaN for a row with a missing or non-finite value in a variable the
        formula's right-hand side uses (R's ``predict(fit, newdata, na.action = na.pass)``), as dp_lm."""
        from .lm import design_with_levels, na_pass

        mf, rows = na_pass(
            lambda nd: design_with_levels(self.formula, self.factor_levels, nd, **self.coding),  # as dp_lm
            newdata,
            self.formula,
        )
        if mf is None:  # no complete row: every prediction is NaN
            return rows.fill(None)
        if mf.names != self.terms:
            raise DataError(
                f"newdata gives the columns {mf.names[:6]}, the fit used {self.terms[:6]}; supply the "
                "formula's variables with the training factor levels."
            )
        eta = mf.X @ self.coefficients["estimate"].to_numpy()
        return rows.fill(eta if mf.offset is None else eta + mf.offset)

    def fitted(self, type: str = "response") -> np.ndarray:
        """Fitted values of the rows used (non-private): needs ``diagnostics=True``."""
        rows = self._rows("fitted values")
        if type not in ("link", "response"):
            raise PrivacyParameterError(f"type must be 'link' or 'response', got {type!r}.")
        return rows["eta"] if type == "link" else m_family(self.family).linkinv(rows["eta"])

    def residuals(self, type: str = "deviance") -> np.ndarray:
        """Residuals of the rows used, as R's ``residuals.glm`` (non-private): needs ``diagnostics=True``.

        ``type``: "deviance" (R's default), "pearson", "response" or "working".
        """
        rows = self._rows("residuals")
        fam = m_family(self.family)
        y, mu = rows["y"], fam.linkinv(rows["eta"])
        if type == "response":
            return y - mu
        if type == "deviance":
            return np.sign(y - mu) * np.sqrt(np.maximum(fam.unit_deviance(y, mu), 0.0))
        var = fam.variance(mu)
        if type == "pearson":
            return (y - mu) / np.sqrt(var)
        if type == "working":  # canonical links: dμ/dη = V(μ)
            return (y - mu) / var
        raise DataError(f"type must be 'deviance', 'pearson', 'response' or 'working', got {type!r}.")

    def _rows(self, what: str) -> dict[str, np.ndarray]:
        if not self.diagnostics_requested or self.rows is None:
            raise DataError(
                f"{what} are per-row values computed from the raw data, which no output shows unless asked: "
                "refit with diagnostics=True (they are then labelled not private), or call "
                "predict(fit, newdata = <your data>) on data you hold."
            )
        return self.rows

    def set_model_summaries(
        self,
        mf: ModelFrame,
        y: np.ndarray,
        eta: np.ndarray,
        *,
        dp: bool,
        se: str,
        pooled: np.ndarray | None = None,
        rows: bool = False,
    ) -> None:
        """Record what predict/vcov/logLik (and fitted/residuals on request) need.

        ``mf`` is the model frame (unclipped), ``y`` and ``eta`` the response and linear
        predictor the fit used.  Nothing here is released by to_dict() or print.
        """
        fam = m_family(self.family)
        self.formula = mf.formula
        self.factor_levels = {k: list(v) for k, v in mf.factor_levels.items()}
        from .lm import fit_coding, recomputed_terms

        self.coding = fit_coding(mf, nonprivate=not dp)
        self.data_dependent_terms = recomputed_terms(mf, self.coding["predvars"])
        if dp:
            self.covariance_note = (
                "this is a DP fit: only the noised coefficients are released; their covariance "
                "(and standard errors) would need the raw data and are not released."
            )
            self.loglik_note = (
                "this is a DP fit: the log-likelihood, deviance, AIC and BIC are functions of the raw "
                "data and are not released."
            )
        elif self.penalty:
            self.covariance_note = (
                f"penalized fit ({self.penalty}): no covariance matrix, as no standard errors "
                "(the penalized estimator's sampling covariance is not the inverse Fisher "
                "information)."
            )
            self.loglik_note = (
                f"penalized fit ({self.penalty}): logLik/AIC/BIC are not defined (the effective "
                "degrees of freedom of a penalized fit are not p)."
            )
        else:
            if se in ("exact", "pooled"):
                disp = self.dispersion
                w = np.maximum(fam.variance(fam.linkinv(eta)), 1e-10)
                self.covariance = pooled if pooled is not None else disp * np.linalg.inv((mf.X.T * w) @ mf.X)
            else:
                self.covariance_note = (
                    f"se={se!r} gives standard errors only, no covariances between parties' "
                    "coefficients; refit with se='exact' (the default) for vcov()."
                )
            self.loglik_value = _loglik(self.family, y, fam.linkinv(eta), self.deviance)
        if rows:
            beta = self.coefficients["estimate"].to_numpy()
            fit_eta = mf.X @ beta + (0.0 if mf.offset is None else mf.offset)
            self.rows = {"y": np.asarray(y, dtype=float), "eta": fit_eta}

    # ------------------------------------------------------------------ text
    def _coef_lines(self) -> list[str]:
        s = self.statistic_name
        tab = pd.DataFrame(
            {
                "Estimate": self.coefficients["estimate"].to_numpy(),
                "Std. Error": self.coefficients["std_error"].to_numpy(),
                f"{s} value": self.coefficients["statistic"].to_numpy(),
                f"Pr(>|{s}|)": self.coefficients["p_value"].to_numpy(),
            },
            index=list(self.coefficients["term"]),
        )
        if "noise_sd" in self.coefficients:  # DP mode: the sd of the noise each estimate carries
            tab.insert(1, "Noise SD", self.coefficients["noise_sd"].to_numpy())
        signif = signif_codes(tab[f"Pr(>|{s}|)"].tolist())
        lines = tab.to_string(float_format=lambda v: f"{v:.6g}", na_rep="NA").splitlines()
        legend = []
        if signif is not None:  # as printCoefmat: stars and their legend only when some p < 0.1
            lines = [lines[0]] + [f"{ln} {st}".rstrip() for ln, st in zip(lines[1:], signif)]
            legend = ["---", SIGNIF_LEGEND]
        held = [f"  {p}: {', '.join(t)}" for p, t in self.party_terms.items()]
        return [*lines, *legend, "", "Terms held by each party:", *held]

    def _body_lines(self) -> list[str]:
        lines = ([self.response_note, ""] if self.response_note else []) + ["Coefficients:"]
        lines += self._coef_lines() + [""]
        if not math.isnan(self.dispersion):
            lines.append(f"(Dispersion parameter for {self.family} family taken to be {self.dispersion:.6g})")
        if self.penalty:
            lines.append(
                f"Penalty: {self.penalty}, lam = {self.lam:g} (standard errors not available "
                "for penalized fits)"
            )
        lines.append(
            f"Residual deviance: {self.deviance:.6g} on {self._df_text()} degrees of freedom"
            if not math.isnan(self.deviance)
            else "Residual deviance: not released (a function of the raw response)"
        )
        lines += deleted_due_to_missingness(self.n_deleted, self.privacy.eps)
        lines.append(self._sweeps_line())
        lines += self._noise_lines()
        lines.append(f"Standard errors: {self._se_text()}")
        lines += ["", "What the protocol reveals:"] + [f"  - {d}" for d in self.disclosure]
        return lines

    def _noise_lines(self) -> list[str]:
        """DP mode: the noise scales a reader needs to judge the release (public inputs only)."""
        if not self.noise:
            return []
        each = ", ".join(f"{v:.3g} ({p})" for p, v in self.noise["sigma_eta"].items())
        lines = [
            f"Noise: each shared linear predictor is clipped to +/-eta_clip = {self.noise['eta_clip']:g} "
            f"and gets Gaussian noise of sd sigma_eta = {each} per entry; each final coefficient gets "
            "noise of sd sigma_beta (column Noise SD)"
        ]
        if "slope_inflation" in self.noise:  # binomial: a bias of the mechanism (privreg.slope_inflation)
            lines.append(self._bias_line())
        return lines

    def _bias_line(self) -> str:
        """Binomial DP mode: how the noise on the received linear predictors biases the slopes."""
        head = (
            "Bias: each party's logistic fit takes the noise in the linear predictors it receives for signal"
        )
        if max(self.noise["sigma_eta"].values()) > self.noise["eta_clip"]:
            return head + (
                "; with sigma_eta above eta_clip those predictors are swamped and the slopes are biased "
                "(away from zero, or toward the fit without the other parties' columns) by an amount no "
                "formula here gives"
            )
        factors = ", ".join(f"{v:.3g} ({p})" for p, v in self.noise["slope_inflation"].items())
        return head + (
            f", which pushes its slopes away from zero by a factor of about {factors} (less under a "
            "strong penalty); the estimates approach the non-private fit of the same objective only as "
            "this factor nears 1"
        )

    def withhold_n(self) -> None:
        """n is private: so are the residual degrees of freedom (n − p)."""
        super().withhold_n()
        self.df_residual = None

    def _df_text(self) -> str:
        return "n − p (not shown: n is private)" if self.df_residual is None else str(self.df_residual)

    @property
    def fixed_sweeps(self) -> bool:
        """DP mode: the sweeps ran a fixed number of times and no sweep's change was computed or released
        (the trace holds NaN there, as :meth:`plots` reads it)."""
        changes = (
            self.trace["relative_change"].to_numpy(dtype=float) if self.trace is not None else np.empty(0)
        )
        return changes.size > 0 and bool(np.isnan(changes).all())

    def converged_shown(self) -> bool | None:
        """Whether the sweeps met ``tol``; None in DP mode, where a fixed number runs and no change is
        computed (glance's ``converged`` is then NA, not TRUE)."""
        return None if self.fixed_sweeps else self.converged

    def _sweeps_line(self) -> str:
        """How the sweeps stopped.  In DP mode there is no stopping rule to report: a fixed number of
        sweeps runs (a data-dependent stop would leak), so the change and tol do not apply and are not
        shown."""
        over = f"Block coordinate descent over {len(self.parties)} parties"
        if self.fixed_sweeps:
            return (
                f"{over} ran a fixed {self.iterations} sweeps (DP mode: no data-dependent stopping rule, "
                "so no relative change is computed or released and tol does not apply)"
            )
        state = "converged" if self.converged else "did NOT converge"
        last = (
            self.trace["relative_change"].iloc[-1] if self.trace is not None and len(self.trace) else math.nan
        )
        return (
            f"{over} {state} in {self.iterations} sweeps (last relative change = {last:.3g}, "
            f"tol = {self.tol:g})"
        )

    def _se_text(self) -> str:
        if self.se_method == "history":
            bits = [
                f"{b['party']}: rank {b['rank']}/{b['p_other']}{' exact' if b['exact'] else ''}"
                for b in self.se_blocks
            ]
            return "Schur complement on the span of received offsets (" + "; ".join(bits) + ")"
        if self.se_method == "exact":
            return (
                "exact: Schur complement on the other parties' shared column-space bases "
                "(equals the pooled Fisher information)"
            )
        return {
            "conditional": "conditional on the other blocks (too small when blocks correlate)",
            "pooled": "pooled Fisher information (all columns in one process; simulation only)",
            "none": "not computed",
        }.get(self.se_method, self.se_method)

    # ------------------------------------------------------------------ tables
    def _tidy(self) -> pd.DataFrame:
        return self.coefficients.copy()

    def report_table(self) -> pd.DataFrame:
        """tidy() with broom's column names (std.error, p.value, conf.low, …), as the other doors'
        reports show them; without the inference columns when no standard errors were computed
        (DP mode, penalized fits), which would be NA in every row."""
        table = self.tidy()
        if self.se_method == "none":
            table = table.drop(columns=["std_error", "statistic", "p_value", "conf_low", "conf_high"])
        return table.rename(columns=lambda c: BROOM_NAMES.get(c, c))

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "parties": len(self.parties),
            "iterations": self.iterations,
            "converged": self.converged_shown(),
            "deviance": self.deviance,
            "df_residual": self.df_residual,
            "dispersion": self.dispersion,
            "se_method": self.se_method,
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "coefficients": self.coefficients.to_dict(orient="list"),
            "trace": self.trace.to_dict(orient="list"),
            "iterations": self.iterations,
            "converged": self.converged_shown(),
            "tol": self.tol,
            "dispersion": self.dispersion,
            "df_residual": self.df_residual,
            "deviance": self.deviance,
            "penalty": self.penalty,
            "lam": self.lam,
            "se_method": self.se_method,
            "se_blocks": self.se_blocks,
            "parties": self.parties,
            "party_terms": self.party_terms,
            "conf_level": self.conf_level,
            "disclosure": self.disclosure,
            "response_note": self.response_note,
            **({"noise": self.noise} if self.noise else {}),  # DP mode only
        }

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["privacy"] = jsonable(out["privacy"])  # eps = inf (not private) becomes "Inf"
        return out

    # ------------------------------------------------------------------ report
    def plots(self) -> list[Plot]:
        tr = self.trace
        change = np.maximum(tr["relative_change"].to_numpy(), 1e-300)
        if not np.isfinite(change).any():  # DP mode: the changes are not released; draw the coefficients
            return [self._released_coefficients_plot()]
        fig, ax = new_figure()
        ax.semilogy(tr["iteration"], change, color="#3b6fd8", lw=2, label="relative change per sweep")
        ax.axhline(self.tol, color="#b86e00", ls="--", label=f"tol = {self.tol:g}")
        ax.set_xlabel("sweep")
        ax.set_ylabel("relative change (log scale)")
        ax.legend(frameon=False)
        ax.set_title("Convergence of block coordinate descent")
        alt = (
            f"The relative change of the fit falls from {change[0]:.3g} to {change[-1]:.3g} "
            f"over {len(change)} sweeps."
        )
        return [to_plot(fig, "Convergence trace", alt)]

    def _released_coefficients_plot(self) -> Plot:
        """The released coefficients, each ± 2 sd of the noise it carries (public: ``noise_sd``)."""
        table = self.tidy()
        estimate = table["estimate"].to_numpy(dtype=float)
        spread = 2 * table["noise_sd"].to_numpy(dtype=float) if "noise_sd" in table else None
        alt = "Released noisy coefficients: " + ", ".join(
            f"{t} ({party}) {e:.3g}" + ("" if spread is None else f" ± {s:.3g}")
            for t, party, e, s in zip(
                table["term"], table["party"], estimate, spread if spread is not None else estimate
            )
        )
        labels = [f"{t} ({party})" for t, party in zip(table["term"], table["party"])]
        return coefficient_plot(
            labels,
            estimate,
            None if spread is None else estimate - spread,
            None if spread is None else estimate + spread,
            title="Released coefficients ± 2 noise sd (term and the party that holds it)",
            xlabel="released estimate ± 2 sd of its privacy noise (no sampling error: no standard errors are released)",
            alt=alt,
        )

    def report_sections(self) -> list[dict[str, Any]]:
        items = "".join(f"<li>{escape_text(s)}</li>" for s in self.disclosure)
        owners = "".join(
            f"<li><strong>{escape_text(p)}</strong>: {escape_text(', '.join(t))}</li>"
            for p, t in self.party_terms.items()
        )
        return [
            {"heading": "What the protocol reveals", "html": f"<ul>{items}</ul>"},
            {
                "heading": "Parties and their terms",
                "html": f"<ul>{owners}</ul><p>Standard errors: {escape_text(self._se_text())}.</p>",
            },
        ]


#: broom's names of tidy()'s columns, as the report's table shows them (R's tidy() renames them alike).
BROOM_NAMES = {
    "std_error": "std.error",
    "p_value": "p.value",
    "conf_low": "conf.low",
    "conf_high": "conf.high",
    "noise_sd": "noise.sd",
}


def m_family(name: str):
    from ..methods.privreg import FAMILIES

    return FAMILIES[name]


def _loglik(family: str, y: np.ndarray, mu: np.ndarray, deviance: float) -> float:
    """R's logLik.glm for unit weights."""
    n = y.shape[0]
    if family == "gaussian":
        return -0.5 * n * (math.log(2 * math.pi * deviance / n) + 1)
    if family == "binomial":
        return float(np.sum(sps.binom.logpmf(y, 1, mu)))
    return float(np.sum(sps.poisson.logpmf(y, mu)))


def coefficient_table(
    terms: list[str],
    party: list[str],
    beta: np.ndarray,
    se: np.ndarray,
    family: str,
    df_residual: int,
    conf_level: float,
) -> pd.DataFrame:
    """R's summary.glm table: t with df_residual for the Gaussian family, z otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = beta / se
    if family == "gaussian" and df_residual > 0:
        p = 2 * sps.t.sf(np.abs(stat), df_residual)
        q = sps.t.ppf(0.5 + conf_level / 2, df_residual)
    else:
        p = 2 * sps.norm.sf(np.abs(stat))
        q = sps.norm.ppf(0.5 + conf_level / 2)
    return pd.DataFrame(
        {
            "term": terms,
            "party": party,
            "estimate": beta,
            "std_error": se,
            "statistic": stat,
            "p_value": p,
            "conf_low": beta - q * se,
            "conf_high": beta + q * se,
        }
    )


def assemble_result(  # noqa: PLR0913 (the pieces of one fit, as the door holds them)
    call: dict, terms: list[str], n: int, names: list[str], released, options, statement, plan=None
) -> VerticalGLMResult:
    """The result of a fit from what it released (:class:`dpstats.methods.privreg.Released`).

    ``released`` carries the sweeps' outcome, every party's final block
    (coefficients, covariance), the design columns of each party, the
    dispersion and deviance, and the pooled covariance where asked for;
    ``options`` the fit's options (:class:`dpstats.methods.privreg.PrivregOptions`); ``plan``
    (DP mode) its noise scales, shown as the ``noise_sd`` column and :attr:`VerticalGLMResult.noise`,
    and the public noise warning of :func:`dpstats.methods.privreg.noise_warning`.
    """
    p = len(terms)
    beta = np.empty(p)
    sd = np.full(p, np.nan)
    party = [""] * p
    blocks = []
    for k, (ix, fin) in enumerate(zip(released.index, released.finals)):
        beta[ix] = fin.beta
        if fin.cov is not None:
            sd[ix] = np.sqrt(np.diag(fin.cov))
        for j in ix:
            party[j] = names[k]
        blocks.append(
            {"party": names[k], "rank": int(fin.rank), "p_other": int(fin.p_other), "exact": bool(fin.exact)}
        )
    if released.pooled is not None:
        sd = np.sqrt(np.diag(released.pooled))
    df_resid = n - p
    out = released.out
    table = coefficient_table(list(terms), party, beta, sd, options.family, df_resid, options.conf_level)
    sigmas = getattr(plan, "sigmas", None)
    noise = None
    if sigmas is not None:  # DP mode: σ_β of each coefficient's party, σ_η of each party (public inputs)
        owner = {int(j): k for k, ix in enumerate(released.index) for j in ix}
        table["noise_sd"] = _noise_sd(list(terms), owner, sigmas[1], released.finals)
        noise = {
            "eta_clip": float(options.eta_clip),
            "sigma_eta": dict(zip(names, map(float, sigmas[0]))),
            "sigma_beta": dict(zip(names, map(float, sigmas[1]))),
        }
        if options.family == "binomial":
            noise["slope_inflation"] = dict(zip(names, slope_inflation(sigmas[0])))
    notes = (
        []
        if out.converged
        else [
            f"block coordinate descent did not converge in {out.iterations} sweeps (the last sweep's relative "
            f"change {_last_change(out):.3g} is above tol = {options.tol:g}); raise max_iter: columns of different "
            "parties that are strongly correlated slow the sweeps"
        ]
    )
    if getattr(plan, "warning", None):
        notes.append(plan.warning)
    trace = pd.DataFrame(out.trace, columns=["iteration", "relative_change", "deviance"])
    dp = options.eps is not None
    se = options.se
    se_method = "none" if dp or options.penalty else ("pooled" if released.pooled is not None else se)
    return VerticalGLMResult(
        method="vertical_glm",
        call=call,
        n=n,
        p=p,
        terms=list(terms),
        privacy=statement,
        family=options.family,
        coefficients=table,
        trace=trace,
        iterations=out.iterations,
        converged=out.converged,
        tol=options.tol,
        dispersion=released.dispersion,
        df_residual=df_resid,
        deviance=released.deviance,
        penalty=options.penalty,
        lam=float(options.lam) if options.penalty is not None else 0.0,
        se_method=se_method,
        se_blocks=blocks,
        parties=list(names),
        party_terms={names[k]: [terms[j] for j in ix] for k, ix in enumerate(released.index)},
        conf_level=options.conf_level,
        disclosure=statement.notes,
        noise=noise,
        warnings=notes,
    )


def _noise_sd(terms: list[str], owner: dict[int, int], sigma_beta: list[float], finals) -> list[float]:
    """DP mode: each coefficient's noise sd, its party's σ_β; the intercept's with the shifts' noise,
    √(σ_β,0² + Σ_k σ_β,k²‖c_k‖²) (:class:`dpstats.methods.privreg.BlockFinal`)."""
    sd = [float(sigma_beta[owner[j]]) for j in range(len(terms))]
    extra = sum(f.shift_sd**2 for f in finals)
    if extra > 0 and INTERCEPT in terms:
        j = terms.index(INTERCEPT)
        sd[j] = math.sqrt(sd[j] ** 2 + extra)
    return sd


def _last_change(out) -> float:
    """The last sweep's relative change (NaN without sweeps)."""
    return float(out.trace[-1]["relative_change"]) if out.trace else math.nan
