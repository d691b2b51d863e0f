"""Result of :func:`dpstats.vertical_glm` and of a networked :class:`dpstats.vertical.Party` fit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .base import DPResult, Plot, _jsonable, escape_text


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class VerticalGLMResult(DPResult):
    """A GLM fitted by block coordinate descent across parties.

    Attributes
    ----------
    coefficients : DataFrame
        One row per term: ``term``, ``party``, ``estimate``, ``std_error``,
        ``statistic`` (t for the Gaussian family, z otherwise), ``p_value``,
        ``conf_low``, ``conf_high`` (Wald intervals, as R's ``confint.default``).
    trace : DataFrame
        Convergence trace: ``iteration``, ``sum_abs_change`` (Σ|Δβ| of the
        sweep), ``deviance``.
    se_blocks : list of dict
        Per party: rank of the offset history used for the standard errors,
        p_{-k}, and whether the standard errors are exact.
    disclosure : list of str
        What the protocol reveals to the parties (stated honestly).
    """

    family: str = "gaussian"
    coefficients: pd.DataFrame | None = None
    trace: pd.DataFrame | None = None
    iterations: int = 0
    converged: bool = False
    tol: float = 1e-8
    dispersion: float = 1.0
    df_residual: int = 0
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

    title = "Generalized linear model on vertically partitioned data (block coordinate descent)"

    @property
    def statistic_name(self) -> str:
        return "t" if self.family == "gaussian" else "z"

    def coef(self) -> dict[str, float]:
        """Estimates by term (R's ``coef()``)."""
        return dict(zip(self.coefficients["term"], self.coefficients["estimate"]))

    def vcov_diag(self) -> np.ndarray:
        return self.coefficients["std_error"].to_numpy() ** 2

    # ------------------------------------------------------------------ text
    def _coef_lines(self) -> list[str]:
        s = self.statistic_name
        tab = pd.DataFrame({
            "Estimate": self.coefficients["estimate"].to_numpy(),
            "Std. Error": self.coefficients["std_error"].to_numpy(),
            f"{s} value": self.coefficients["statistic"].to_numpy(),
            f"Pr(>|{s}|)": self.coefficients["p_value"].to_numpy(),
        }, index=list(self.coefficients["term"]))
        stars = [_stars(p) for p in tab[f"Pr(>|{s}|)"]]
        text = tab.to_string(float_format=lambda v: f"{v:.6g}", na_rep="NA")
        lines = text.splitlines()
        out = [lines[0]] + [f"{ln} {st}".rstrip() for ln, st in zip(lines[1:], stars)]
        held = [f"  {p}: {', '.join(t)}" for p, t in self.party_terms.items()]
        return out + ["---", "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1", "",
                      "Terms held by each party:"] + held

    def _body_lines(self) -> list[str]:
        lines = ([self.response_note, ""] if self.response_note else []) + ["Coefficients:"]
        lines += self._coef_lines() + [""]
        lines.append(f"(Dispersion parameter for {self.family} family taken to be {self.dispersion:.6g})")
        if self.penalty:
            lines.append(f"Penalty: {self.penalty}, lam = {self.lam:g} (standard errors not available "
                         "for penalized fits)")
        lines.append(f"Residual deviance: {self.deviance:.6g} on {self.df_residual} degrees of freedom")
        state = "converged" if self.converged else "did NOT converge"
        last = self.trace["sum_abs_change"].iloc[-1] if self.trace is not None and len(self.trace) else math.nan
        lines.append(f"Block coordinate descent over {len(self.parties)} parties {state} in "
                     f"{self.iterations} sweeps (last sum|Δβ| = {last:.3g}, tol = {self.tol:g})")
        lines.append(f"Standard errors: {self._se_text()}")
        lines += ["", "What the protocol reveals:"] + [f"  - {d}" for d in self.disclosure]
        return lines

    def _se_text(self) -> str:
        if self.se_method == "history":
            bits = [f"{b['party']}: rank {b['rank']}/{b['p_other']}{' exact' if b['exact'] else ''}"
                    for b in self.se_blocks]
            return "Schur complement on the span of received offsets (" + "; ".join(bits) + ")"
        if self.se_method == "exact":
            return ("exact: Schur complement on the other parties' shared column-space bases "
                    "(equals the pooled Fisher information)")
        return {"conditional": "conditional on the other blocks (too small when blocks correlate)",
                "pooled": "pooled Fisher information (all columns in one process; simulation only)",
                "none": "not computed"}.get(self.se_method, self.se_method)

    # ------------------------------------------------------------------ tables
    def tidy(self) -> pd.DataFrame:
        return self.coefficients.copy()

    def _glance_extra(self) -> dict[str, Any]:
        return {"family": self.family, "parties": len(self.parties), "iterations": self.iterations,
                "converged": self.converged, "deviance": self.deviance, "df_residual": self.df_residual,
                "dispersion": self.dispersion, "se_method": self.se_method}

    def outputs(self) -> dict[str, Any]:
        return {"family": self.family, "coefficients": self.coefficients.to_dict(orient="list"),
                "trace": self.trace.to_dict(orient="list"), "iterations": self.iterations,
                "converged": self.converged, "tol": self.tol, "dispersion": self.dispersion,
                "df_residual": self.df_residual, "deviance": self.deviance, "penalty": self.penalty,
                "lam": self.lam, "se_method": self.se_method, "se_blocks": self.se_blocks,
                "parties": self.parties, "party_terms": self.party_terms,
                "conf_level": self.conf_level, "disclosure": self.disclosure,
                "response_note": self.response_note}

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["privacy"] = _jsonable(out["privacy"])  # eps = inf (not private) becomes "Inf"
        return out

    # ------------------------------------------------------------------ report
    def plots(self) -> list[Plot]:
        from ..plotting import new_figure, to_plot

        tr = self.trace
        change = np.maximum(tr["sum_abs_change"].to_numpy(), 1e-300)
        if not np.isfinite(change).any():  # DP mode: the changes are not released, nothing to draw
            return []
        fig, ax = new_figure()
        ax.semilogy(tr["iteration"], change, color="#3b6fd8", lw=2, label="Σ|Δβ| per sweep")
        ax.axhline(self.tol, color="#d48a00", ls="--", label=f"tol = {self.tol:g}")
        ax.set_xlabel("sweep")
        ax.set_ylabel("Σ|Δβ| (log scale)")
        ax.legend(frameon=False)
        ax.set_title("Convergence of block coordinate descent")
        alt = (f"Sum of absolute coefficient changes falls from {change[0]:.3g} to {change[-1]:.3g} "
               f"over {len(change)} sweeps.")
        return [to_plot(fig, "Convergence trace", alt)]

    def report_sections(self) -> list[dict[str, Any]]:
        items = "".join(f"<li>{escape_text(s)}</li>" for s in self.disclosure)
        owners = "".join(f"<li><strong>{escape_text(p)}</strong>: {escape_text(', '.join(t))}</li>"
                         for p, t in self.party_terms.items())
        return [{"heading": "What the protocol reveals", "html": f"<ul>{items}</ul>"},
                {"heading": "Parties and their terms", "html": f"<ul>{owners}</ul>"
                 f"<p>Standard errors: {escape_text(self._se_text())}.</p>"}]


def coefficient_table(terms: list[str], party: list[str], beta: np.ndarray, se: np.ndarray,
                      family: str, df_residual: int, conf_level: float) -> pd.DataFrame:
    """R's summary.glm table: t with df_residual for the Gaussian family, z otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = beta / se
    if family == "gaussian" and df_residual > 0:
        p = 2 * sps.t.sf(np.abs(stat), df_residual)
        q = sps.t.ppf(0.5 + conf_level / 2, df_residual)
    else:
        p = 2 * sps.norm.sf(np.abs(stat))
        q = sps.norm.ppf(0.5 + conf_level / 2)
    return pd.DataFrame({"term": terms, "party": party, "estimate": beta, "std_error": se,
                         "statistic": stat, "p_value": p, "conf_low": beta - q * se,
                         "conf_high": beta + q * se})


def assemble_result(call: dict, terms: list[str], n: int, names: list[str], released, spec: dict,
                    statement, se: str) -> VerticalGLMResult:
    """The result of a fit from what it released (:class:`dpstats.methods.vertical.Released`).

    ``released`` carries the sweeps' outcome, every party's final block
    (coefficients, covariance), the design columns of each party, the
    dispersion and deviance, and the pooled covariance where asked for;
    ``spec`` the fit's settings (:func:`dpstats.methods.vertical.settings`).
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
        blocks.append({"party": names[k], "rank": int(fin.rank), "p_other": int(fin.p_other),
                       "exact": bool(fin.exact)})
    if released.pooled is not None:
        sd = np.sqrt(np.diag(released.pooled))
    df_resid = n - p
    out = released.out
    table = coefficient_table(list(terms), party, beta, sd, spec["family"], df_resid, spec["conf_level"])
    trace = pd.DataFrame(out.trace, columns=["iteration", "sum_abs_change", "deviance"])
    dp = spec["eps"] is not None
    se_method = "none" if dp or call.get("penalty") else ("pooled" if released.pooled is not None else se)
    return VerticalGLMResult(
        method="vertical_glm", call=call, n=n, p=p, terms=list(terms), privacy=statement,
        family=spec["family"], coefficients=table, trace=trace, iterations=out.iterations,
        converged=out.converged, tol=call.get("tol", 1e-8), dispersion=released.dispersion,
        df_residual=df_resid, deviance=released.deviance, penalty=call.get("penalty"),
        lam=float(call.get("lam", 0.0)), se_method=se_method, se_blocks=blocks, parties=list(names),
        party_terms={names[k]: [terms[j] for j in ix] for k, ix in enumerate(released.index)},
        conf_level=spec["conf_level"], disclosure=statement.notes,
        warnings=[] if out.converged else [f"block coordinate descent did not converge in "
                                           f"{out.iterations} sweeps; raise max_iter"])


def vertical_call(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds) -> dict:
    """The arguments a vertical fit's ``call`` shows (defaults left out, eps only when finite)."""
    call = {"formula": formula, "parties": list(names), "family": family}
    if penalty is not None:
        call.update(penalty=penalty, lam=lam)
    if tol != 1e-8:
        call["tol"] = tol
    if max_iter != 10_000:
        call["max_iter"] = max_iter
    if se != "exact":
        call["se"] = se
    if eps is not None and math.isfinite(eps):
        call.update(eps=eps, delta=delta, rounds=rounds)
    return call


def _stars(p: float) -> str:
    if p is None or not np.isfinite(p):
        return ""
    for cut, s in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p < cut:
            return s
    return ""

