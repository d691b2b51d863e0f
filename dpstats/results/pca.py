"""The result of :func:`dpstats.dp_pca`: released private principal components."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._rnumbers import matrix_lines
from ..methods.pca import PCAOptions, PCAPlan, PCARelease
from ..plotting import Plot, new_figure, to_plot
from .base import DPResult, escape_text
from .lm import fit_levels, one_sided_design

DECOMPOSED = {
    "mean": "the covariance about the privately released mean",
    "midpoint": "Σ(x − c)(x − c)ᵀ about the box's midpoint c, not the covariance about the mean",
}
DECOMPOSED_NONPRIVATE = {  # eps = inf: nothing is released privately; the mean is the rows', as prcomp's
    "mean": "the covariance about the mean of the rows (non-private, as prcomp)",
    "midpoint": DECOMPOSED["midpoint"],
}


@dataclass(repr=False)
class PCAResult(DPResult):
    """Released private principal components.

    Attributes
    ----------
    basis : ndarray (d, k)
        Orthonormal loadings (columns ordered by eigenvalue, each column's largest entry positive).
    eigenvalues : ndarray (k,)
        ``center="mean"``: the variances along the components, eigenvalues of the released
        covariance Ĉ (comparable to R's ``prcomp(x)$sdev^2``; noisy, and may be negative for
        small components).  ``center="midpoint"``: eigenvalues of the noisy Σ(x − c)(x − c)ᵀ,
        sums of squares about the box's midpoint c, not variances.
    total : float
        Σ max(λ_i, 0) over all d eigenvalues of the decomposed matrix (the denominator of
        :attr:`proportion`; post-processing).
    centre : ndarray (d,)
        The point scores are taken about: the released mean (``center="mean"``) or the box's
        midpoint; project new rows as ``(x - centre) @ basis``.
    center : {"mean", "midpoint"}
        What was decomposed (see :func:`dpstats.dp_pca`).
    radius : float
        The clipping radius C.
    noise_sd : float
        Standard deviation of the Gaussian noise on each entry of Σ(x − c)(x − c)ᵀ (0 at eps = inf).
    sum_noise_sd : float
        Standard deviation of the Gaussian noise on each column sum (``center="mean"``; else 0).
    count : float or None
        The released noisy number of rows where n is private (``center="mean"`` under
        add/remove-one-row, or with rows dropped); None where n is public or unused.
    next_eigenvalue : float or None
        The (k + 1)-th eigenvalue of the released matrix (post-processing; None when k = d): the
        neighbour of the last component, for :meth:`resolved`.
    noise_bound, gap_bound : float
        τ and τ_E of :mod:`dpstats.methods.pca` in units of Σ(x − c)(x − c)ᵀ (public inputs and
        released values; 0 at eps = inf): :meth:`noise_level` and :meth:`separation_level` in the
        table's units.
    variance_sds : ndarray (k,)
        The s.d. of the noise on each eigenvalue in units of Σ(x − c)(x − c)ᵀ, the released mean's
        included ((e) of :mod:`dpstats.methods.pca`; 0 at eps = inf): :meth:`variance_noise_sd` in the
        table's units.
    formula : str
        The one-sided formula of the fit, which :meth:`predict` applies to new rows.
    """

    basis: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    eigenvalues: np.ndarray = field(default_factory=lambda: np.empty(0))
    total: float = math.nan
    centre: np.ndarray = field(default_factory=lambda: np.empty(0))
    center: str = "mean"
    radius: float = 0.0
    noise_sd: float = 0.0
    sum_noise_sd: float = 0.0
    count: float | None = None
    next_eigenvalue: float | None = None
    noise_bound: float = 0.0
    gap_bound: float = 0.0
    variance_sds: np.ndarray = field(default_factory=lambda: np.empty(0))
    engine: str = "memory"
    formula: str = ""
    factor_levels: dict[str, list] = field(default_factory=dict)  # the fit's, for predict()
    coding: dict[str, Any] = field(default_factory=dict)  # the fit's contrasts, for predict()

    title = "Differentially private principal components"
    p_noun = "variables"

    @classmethod
    def of(
        cls, opening: dict[str, Any], options: PCAOptions, plan: PCAPlan, released: PCARelease, mf
    ) -> PCAResult:
        """The result of a :func:`dpstats.dp_pca` call: the door's ``opening`` (method, call, n, p, terms,
        statement), the call's options, the privacy plan, the release and the model frame (its levels and
        coding, which ``predict()`` re-applies, and its engine)."""
        return cls(
            **opening,
            basis=released.pca.basis,
            eigenvalues=released.pca.eigenvalues,
            total=released.total,
            centre=released.centre,
            center=plan.center,
            radius=plan.radius,
            noise_sd=released.pca.noise_sd,
            sum_noise_sd=released.sum_noise_sd,
            count=released.count,
            next_eigenvalue=released.next_eigenvalue,
            noise_bound=released.noise_bound,
            gap_bound=released.gap_bound,
            variance_sds=np.zeros(plan.k) if released.variance_sds is None else released.variance_sds,
            engine=getattr(mf, "engine", "memory"),
            formula=options.formula,
            **fit_levels(mf, nonprivate=False),
        )

    @property
    def proportion(self) -> np.ndarray:
        """max(λ_j, 0)/Σ_i max(λ_i, 0): each component's share of the (positive part of the) decomposed
        matrix's trace; with ``center="mean"`` the proportion of variance, as ``summary(prcomp(x))``."""
        if not self.total > 0:
            return np.full(self.eigenvalues.shape, math.nan)
        return np.clip(self.eigenvalues, 0.0, None) / self.total

    def project(self, X: np.ndarray) -> np.ndarray:
        """Coordinates of rows ``X`` (n × d, original units) in the released subspace."""
        return (np.asarray(X, dtype=float) - self.centre) @ self.basis

    def predict(self, newdata: pd.DataFrame | dict | np.ndarray) -> np.ndarray:
        """Scores of the rows of ``newdata`` on the released components, ``(x - centre) @ basis``
        (post-processing; with ``center="mean"`` at eps = inf R's ``predict(prcomp(x), newdata)`` up to
        each column's sign).

        ``newdata`` is a DataFrame with the formula's variables, or an array with the design's
        columns.  A row with a missing value gets NaN in every column (R's ``na.pass``).
        """
        X, rows = one_sided_design(self.formula, self.terms, newdata, self.factor_levels, self.coding)
        return rows.fill(None if X is None else self.project(X), width=(self.basis.shape[1],))

    def decomposed(self) -> str:
        """What the components decompose, in words (the mean is privately released only under DP)."""
        return (DECOMPOSED_NONPRIVATE if math.isinf(self.privacy.eps) else DECOMPOSED)[self.center]

    def _noisy(self) -> bool:
        return self.noise_sd > 0

    def _per_unit(self) -> float:
        """The factor from Σ(x − c)(x − c)ᵀ to the table's units: 1, or 1/(ñ − 1) on the covariance
        (ñ = n, or the released count floored at 2).  Public."""
        if self.center == "midpoint":
            return 1.0
        count = self.n if self.n is not None else max(self.count or math.nan, 2.0)
        return 1.0 / (count - 1.0)

    def noise_level(self) -> float:
        """The noise level in the importance table's own units (0 at eps = inf): τ of
        :mod:`dpstats.methods.pca`, a bound that the largest eigenvalue of the noise alone reaches in at
        most 5% of releases (the Analyze Gauss noise on Σ(x − c)(x − c)ᵀ and, with ``center="mean"``,
        the noise of the released mean), on the covariance divided by ñ − 1.  Public inputs and
        released values only.

        A released variance below it is not told apart from noise (:meth:`below_noise`).  The one
        definition used by print, ``tidy()``'s ``below_noise_level``, ``glance()``'s ``noise_level``
        and the report."""
        return self.noise_bound * self._per_unit() if self._noisy() else 0.0

    def separation_level(self) -> float:
        """The gap to each neighbouring variance a resolved component needs, in the table's units: τ_E =
        2σ(√d + √ln 40), a bound on the Analyze Gauss noise's norm except in at most 5% of releases, on
        the covariance divided by ñ − 1 (0 at eps = inf)."""
        return self.gap_bound * self._per_unit() if self._noisy() else 0.0

    def variance_noise_sd(self) -> np.ndarray:
        """The s.d. of the noise on each eigenvalue in the table's units, to first order (0 at eps = inf).

        The noise E on Σ(x − c)(x − c)ᵀ (iid N(0, σ²) on and above the diagonal) moves eigenvalue λ_j
        by v_jᵀEv_j, of s.d. σ√(2 − Σ_i v_ij⁴); with ``center="mean"`` the released mean m̂ (about c) and
        count add 4(v_jᵀm̂)²σ_S² + 2σ_S⁴/ñ² (+ (σ_S/C)²((v_jᵀm̂)² − λ_j)² where n is private) to the
        variance, all on the covariance divided by ñ − 1 ((e) of :mod:`dpstats.methods.pca`).  It says
        how much a variance well above :meth:`noise_level` moves, not whether it is noise."""
        return self.variance_sds * self._per_unit() if self._noisy() else np.zeros(len(self.eigenvalues))

    def below_noise(self) -> np.ndarray:
        """Components whose released variance (eigenvalue) is below :meth:`noise_level`: not told apart
        from noise by the release (all False at eps = inf)."""
        return (
            self.eigenvalues < self.noise_level() if self._noisy() else np.zeros(len(self.eigenvalues), bool)
        )

    def resolved(self) -> np.ndarray:
        """Components whose loadings the release resolves: the variance at or above :meth:`noise_level`
        and the released gap to each neighbouring eigenvalue (the (k + 1)-th included) at least
        :meth:`separation_level`, so the loading is within about 30° of the noiseless one
        (:mod:`dpstats.methods.pca`, (d)).  All True at eps = inf."""
        if not self._noisy():
            return np.ones(len(self.eigenvalues), bool)
        values = np.append(
            self.eigenvalues, -np.inf if self.next_eigenvalue is None else self.next_eigenvalue
        )
        gaps = np.diff(-values)  # gaps[j] = λ_j − λ_{j+1}
        nearest = np.minimum(np.append(np.inf, gaps[:-1]), gaps)
        return ~self.below_noise() & (nearest >= self.separation_level())

    def _noise_level_line(self) -> list[str]:
        """The noise level and separation in the table's units, the components below it and those
        resolved (finite eps only)."""
        if not self._noisy():
            return []
        scale, units = ("", "eigenvalue") if self.center == "midpoint" else ("/(n − 1)", "variance")
        below = [f"PC{j + 1}" for j in np.flatnonzero(self.below_noise())]
        resolved = [f"PC{j + 1}" for j in np.flatnonzero(self.resolved())]
        parts = f"2σ(√d + √ln 40){scale} = {self.separation_level():.4g}"
        if self.center == "mean":
            mean_part = self.noise_level() - self.separation_level()
            parts += f" for Σ(x − c)(x − c)ᵀ plus {mean_part:.4g} for the released mean"
        return [
            f"Noise level: {self.noise_level():.4g}, a {units} noise alone reaches in at most 5% of releases "
            f"(public: {parts}); below the noise level (not told apart from noise): "
            f"{', '.join(below) if below else 'none'}.",
            f"Resolved (at or above the noise level and at least {self.separation_level():.4g} from each "
            f"neighbouring {units}, so the loadings are within about 30° of the noiseless ones): "
            f"{', '.join(resolved) if resolved else 'none'}.",
            self._variance_noise_line(units),
        ]

    def _variance_noise_line(self, units: str) -> str:
        """How much each variance (eigenvalue) moves: :meth:`variance_noise_sd` and its formula."""
        sds = ", ".join(f"{sd:.4g} (PC{j + 1})" for j, sd in enumerate(self.variance_noise_sd()))
        if self.center == "midpoint":
            return f"Each {units} also moves by noise of s.d. about σ√(2 − Σᵢvᵢ⁴) = {sds}."
        n = "n" if self.count is None else "ñ"
        private_n = "" if self.count is None else " + (σ_S/C)²((vᵀm̂)² − λ)²"
        return (
            f"Each {units} also moves by noise of s.d. about {sds}: √(σ²(2 − Σᵢvᵢ⁴) + 4(vᵀm̂)²σ_S² + "
            f"2σ_S⁴/{n}²{private_n})/({n} − 1), from the noise on Σ(x − c)(x − c)ᵀ and on the released "
            "mean (m̂: the mean minus c)."
        )

    def _body_lines(self) -> list[str]:
        lines = [f"{self.n_text()} (engine: {self.engine}); clipping radius C = {self.radius:.4g}"]
        lines.append(f"Decomposed: {self.decomposed()}")
        if self._noisy():
            noise = f"Noise sd: {self.noise_sd:.4g} per entry of Σ(x − c)(x − c)ᵀ"
            lines.append(
                noise + (f", {self.sum_noise_sd:.4g} per column sum" if self.center == "mean" else "")
            )
        if self.count is not None:
            lines.append(f"Released number of rows (noisy; n is private): {self.count:.1f}")
        lines += ["", "Loadings:"]
        lines += (
            self.tidy()
            .pivot(index="term", columns="component", values="loading")
            .loc[self.terms]
            .to_string(float_format=lambda v: f"{v:.4f}")
            .splitlines()
        )
        return lines + [""] + self._importance_lines()

    def _importance_lines(self) -> list[str]:
        noisy = " (noisy)" if self._noisy() else ""
        if self.center == "midpoint":
            return [
                f"Eigenvalues{noisy} of Σ(x − c)(x − c)ᵀ (sums of squares, not variances): "
                + ", ".join(f"{v:.4g}" for v in self.eigenvalues),
                "Share of its trace: " + ", ".join(f"{v:.4f}" for v in self.proportion),
                *self._noise_level_line(),
            ]
        return [
            f"Importance of components{noisy}:",
            *self._importance_matrix_lines(),
            *self._share_lines(),
            *self._noise_level_line(),
        ]

    def _importance_matrix_lines(self) -> list[str]:
        """The variances above R's ``summary(prcomp(...))$importance``, printed as R prints that matrix
        (``print(importance, digits = 4)``: each column to common decimals; the proportions rounded to 5
        decimals, as ``summary.prcomp`` rounds them)."""
        rows = ["Variance", "Standard deviation", "Proportion of Variance", "Cumulative Proportion"]
        table = np.vstack(
            [
                self.eigenvalues,
                np.sqrt(np.clip(self.eigenvalues, 0.0, None)),
                np.round(self.proportion, 5),
                np.round(np.cumsum(self.proportion), 5),
            ]
        )
        columns = [(f"PC{j + 1}", table[:, j].tolist()) for j in range(table.shape[1])]
        return matrix_lines(rows, columns, digits=4)

    def _share_lines(self) -> list[str]:
        """What the shares are of (print and the report): the positive eigenvalues' sum, so a negative
        (noisy) eigenvalue gives the others a share of up to 1."""
        if self.center == "midpoint":
            return ["Shares are of the sum of its positive eigenvalues (post-processing)."]
        return [
            "Variances are eigenvalues of the released covariance (as prcomp()'s sdev^2); proportions are "
            "of the sum of its positive eigenvalues (post-processing)."
        ]

    def _tidy(self) -> pd.DataFrame:
        proportion, below, resolved = self.proportion, self.below_noise(), self.resolved()
        rows = [
            {
                "term": t,
                "component": f"PC{j + 1}",
                "loading": float(self.basis[i, j]),
                "eigenvalue": float(self.eigenvalues[j]),
                "proportion": float(proportion[j]),
                "below_noise_level": bool(below[j]),
                "resolved": bool(resolved[j]),
            }
            for j in range(self.basis.shape[1])
            for i, t in enumerate(self.terms)
        ]
        columns = [
            "term",
            "component",
            "loading",
            "eigenvalue",
            "proportion",
            "below_noise_level",
            "resolved",
        ]
        return pd.DataFrame(rows, columns=columns)

    def report_table(self) -> pd.DataFrame:
        return self.tidy()

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "k": int(self.basis.shape[1]),
            "center": self.center,
            "radius": self.radius,
            "noise_sd": self.noise_sd,
            "sum_noise_sd": self.sum_noise_sd,
            "noise_level": self.noise_level(),
            "separation_level": self.separation_level(),
            "count": self.count,
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "basis": self.basis.tolist(),
            "eigenvalues": self.eigenvalues.tolist(),
            "proportion": self.proportion.tolist(),
            "total": self.total,
            "centre": self.centre.tolist(),
            "center": self.center,
            "radius": self.radius,
            "noise_sd": self.noise_sd,
            "sum_noise_sd": self.sum_noise_sd,
            "count": self.count,
            "next_eigenvalue": self.next_eigenvalue,
            "noise_bound": self.noise_bound,
            "gap_bound": self.gap_bound,
            "variance_noise_sd": self.variance_noise_sd().tolist(),
        }

    # ------------------------------------------------------------------ report
    def noise_spectrum(self) -> float:
        """How far the Analyze Gauss noise moves an eigenvalue of Σ(x − c)(x − c)ᵀ, except in at most 5% of
        releases: τ_E = 2σ(√d + √ln 40), a bound on the spectral norm of the symmetric d × d matrix of
        Gaussian noise of sd σ per entry (:mod:`dpstats.methods.pca`, (a); public)."""
        return self.gap_bound

    def plots(self) -> list[Plot]:
        """A scree figure of what is released: the k components' shares of the (noisy) total."""
        k = self.basis.shape[1]
        if not np.isfinite(self.proportion).all():
            return []
        fig, ax = new_figure(height=3.0)
        names = [f"PC{j + 1}" for j in range(k)]
        below = self.below_noise()
        from matplotlib.patches import Patch

        bars = ax.bar(names, self.proportion, color=["#d5d9e0" if b else "#3b6fd8" for b in below])
        for bar, b in zip(bars, below):  # below the noise level: hatched grey
            if b:
                bar.set(hatch="//", edgecolor="#5a6373")
        handles = [Patch(color="#3b6fd8", label="share of the total")] if not below.all() else []
        if below.any():
            handles.append(
                Patch(facecolor="#d5d9e0", hatch="//", edgecolor="#5a6373", label="below the noise level")
            )
        (cumulative,) = ax.plot(names, np.cumsum(self.proportion), "o-", color="#1d2430", label="cumulative")
        chance = ax.axhline(
            1.0 / len(self.terms), color="#767f8c", ls=":", label=f"1/d = {1 / len(self.terms):.3g}"
        )
        handles += [cumulative, chance]
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("proportion" + (" (noisy)" if self._noisy() else ""))
        ax.legend(handles=handles, frameon=False)
        shares = ", ".join(f"{n} {v:.3g}" for n, v in zip(names, self.proportion))
        alt = (
            f"Released share of each of the {k} components: {shares}; the dotted line is 1/d, the share of "
            "each component when no direction dominates; shares are of the sum of the positive eigenvalues."
        )
        title = "Released components' shares (scree)"
        if self._noisy():
            marked = ", ".join(n for n, b in zip(names, below) if b) or "none"
            title += f"; noise level {self.noise_level():.4g}"
            alt += (
                f" Noise level {self.noise_level():.4g} (noise alone reaches it in at most 5% of releases); "
                f"below it, hatched grey and not told apart from noise: {marked}."
            )
        return [to_plot(fig, title, alt)]

    def report_sections(self) -> list[dict[str, Any]]:
        rows = [f"<tr><th scope='row'>Clipping radius C</th><td class='num'>{self.radius:.4g}</td></tr>"]
        rows.append(f"<tr><th scope='row'>Decomposed</th><td>{escape_text(self.decomposed())}</td></tr>")
        if self._noisy():
            rows.append(
                "<tr><th scope='row'>Noise sd per entry of Σ(x − c)(x − c)ᵀ</th>"
                f"<td class='num'>{self.noise_sd:.4g}</td></tr>"
            )
            if self.center == "mean":
                rows.append(
                    f"<tr><th scope='row'>Noise sd per column sum</th><td class='num'>{self.sum_noise_sd:.4g}</td></tr>"
                )
        html = "<table class='kv'>" + "".join(rows) + "</table>"
        if self._noisy():
            html += (
                f"<p>Gaussian noise of this sd on every entry moves each eigenvalue of Σ(x − c)(x − c)ᵀ by "
                f"more than 2σ(√d + √ln 40) = {self.noise_spectrum():.4g} in at most 5% of releases (a public "
                "bound, in the same units): components whose eigenvalues differ by less than that are not "
                "resolved, and on independent columns the leading shares are noise.</p>"
            )
        html += self._importance_html()
        return [{"heading": "What was released and how noisy it is", "html": html}]

    def _importance_html(self) -> str:
        """prcomp's importance table (variance, sd, proportion, cumulative) as an HTML table."""
        names = [f"PC{j + 1}" for j in range(self.basis.shape[1])]
        noisy = " (noisy)" if self._noisy() else ""
        if self.center == "midpoint":
            rows = {"Eigenvalue of Σ(x − c)(x − c)ᵀ": self.eigenvalues, "Share of its trace": self.proportion}
        else:
            rows = {
                "Variance": self.eigenvalues,
                "Standard deviation": np.sqrt(np.clip(self.eigenvalues, 0.0, None)),
                "Proportion of Variance": self.proportion,
                "Cumulative Proportion": np.cumsum(self.proportion),
            }
        if self._noisy():
            rows["Below the noise level"] = ["yes" if b else "" for b in self.below_noise()]
            rows["Resolved"] = ["yes" if r else "" for r in self.resolved()]
        head = "".join(f"<th>{n}</th>" for n in names)
        body = "".join(
            f"<tr><th scope='row'>{escape_text(k)}</th>"
            + "".join(f"<td class='num'>{v if isinstance(v, str) else f'{v:.4g}'}</td>" for v in vals)
            + "</tr>"
            for k, vals in rows.items()
        )
        level = "".join(
            f"<p>{escape_text(line)}</p>" for line in self._share_lines() + self._noise_level_line()
        )
        return (
            f"<p>Importance of components{noisy}:</p><table><thead><tr><th></th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{level}"
        )
