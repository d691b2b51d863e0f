"""The result of :func:`dpstats.dp_bh`: which hypotheses private BH rejected, and at what cut.

Three routes (see :mod:`dpstats.methods.bh`): ``"private"`` (raw p-values, Laplace
peeling) releases the peeled hypotheses, their noisy p-values, the rejections and
the noisy cut — never the raw p-values, which are diagnostics shown only on
request; ``"marginal z-tests"`` (a formula on bounded rows) releases the same,
its z-statistics and p-values staying diagnostics too; ``"post-processing"`` (a private fit's released p-values) shows those
p-values, since they were already released; ``"non-private"`` (eps = inf on raw p-values) shows them and R's
BH-adjusted p-values (``p.adjust(method = "BH")``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..methods.bh import MARGINAL_Z, NONPRIVATE, POST_PROCESSING, BHAdjusted, BHPlan, BHRejections, Hypotheses
from ..plotting import Plot, new_figure, to_plot
from ..privacy.fdr import PrivateBH, fdr_bound, harmonic
from .base import DPResult


def exp_quietly(log_values: np.ndarray) -> np.ndarray:
    """exp of released log values, inf beyond the float range without numpy's overflow warning: whether
    a noisy log p-value exceeds log(max float) depends on the noise and the rows, and a warning may not.

    Examples
    --------
    >>> exp_quietly(np.array([0.0, 1000.0]))
    array([ 1., inf])
    """
    with np.errstate(over="ignore"):
        return np.exp(log_values)


@dataclass(repr=False)
class BHResult(DPResult):
    """Rejections of private (or post-processed) Benjamini-Hochberg.

    Attributes
    ----------
    route : {"private", "marginal z-tests", "post-processing", "non-private"}
    q : float
        Target FDR level.
    rejected : list of str
        Rejected hypotheses (private route: by increasing noisy p-value).
    threshold : float
        The p-value cut: exp(log(qJ/m) − t) on the private route (noisy values at or
        below it are rejected), BH's q·R/m on the post-processing route; 0 when
        nothing is rejected.
    peeled : list of str
        Private route: hypotheses selected by Report Noisy Min, in peeling order.
    noisy_p_values : ndarray
        Private route: the released noisy p-value of each peeled hypothesis
        (may exceed 1: it is exp of a noisy log p-value; inf where that exceeds the float range, without a
        warning, since whether it does depends on the noise and the rows).
    released_p_values : ndarray
        Post-processing route: the fit's released p-values, one per hypothesis; eps = inf: the
        p-values as given (NaN where missing).
    adjusted_p_values : ndarray
        eps = inf: R's ``p.adjust(p, method = "BH")`` (NaN where p is missing); rejected where <= q.
    sigma, delta_z : float
        Marginal z-tests route: the declared σ and the derived Δz of every z_j.
    """

    route: str = "private"
    q: float = 0.1
    rejected: list[str] = field(default_factory=list)
    threshold: float = 0.0
    peeled: list[str] = field(default_factory=list)
    noisy_p_values: np.ndarray = field(default_factory=lambda: np.empty(0))
    released_p_values: np.ndarray = field(default_factory=lambda: np.empty(0))
    adjusted_p_values: np.ndarray = field(default_factory=lambda: np.empty(0))
    max_rejections: int = 0
    eta: float | None = None
    truncate: float | None = None
    noise_scale: float = 0.0
    shift: float = 0.0
    fdr_bound: float = 0.0
    sigma: float | None = None
    delta_z: float | None = None

    title = "Differentially private Benjamini-Hochberg (FDR control)"
    p_noun = "hypotheses"

    @classmethod
    def of(
        cls, opening: dict[str, Any], plan: BHPlan, released: PrivateBH | BHRejections, hypotheses: Hypotheses
    ) -> BHResult:
        """The result of a :func:`dpstats.dp_bh` call: the door's ``opening`` (method, call, n, p, terms,
        statement), the privacy plan, the release and the hypotheses tested; what the route shows, by
        hypothesis name."""
        names = np.asarray(hypotheses.names, dtype=object)
        if isinstance(released, BHAdjusted):  # eps = inf: R's BH on the p-values as given
            return cls(
                **opening,
                route=plan.route,
                q=plan.q,
                rejected=names[released.rejected].tolist(),
                threshold=released.threshold,
                released_p_values=(
                    hypotheses.p_values if hypotheses.given is None else hypotheses.given
                ).copy(),
                adjusted_p_values=released.adjusted,
                fdr_bound=plan.q * harmonic(int(np.count_nonzero(~np.isnan(released.adjusted)))),
            )
        if plan.route == POST_PROCESSING:
            return cls(
                **opening,
                route=plan.route,
                q=plan.q,
                rejected=names[released.rejected].tolist(),
                threshold=released.threshold,
                released_p_values=hypotheses.p_values.copy(),
                fdr_bound=plan.q * harmonic(hypotheses.p_values.size),
            )
        marginal = {"sigma": plan.sigma, "delta_z": plan.delta_z} if plan.route == MARGINAL_Z else {}
        return cls(
            **opening,
            route=plan.route,
            eta=plan.eta,
            q=plan.q,
            rejected=names[released.rejected].tolist(),
            threshold=math.exp(released.threshold_log),
            peeled=names[released.peeled].tolist(),
            noisy_p_values=exp_quietly(released.noisy_log_p),
            max_rejections=plan.k,
            truncate=plan.truncate,
            noise_scale=plan.calibration.scale,
            shift=released.shift,
            fdr_bound=fdr_bound(plan.q, plan.k),
            **marginal,
        )

    @property
    def shows_p_values(self) -> bool:
        """True where the p-values themselves are shown: a private fit's (released) or eps = inf's."""
        return self.route in (POST_PROCESSING, NONPRIVATE)

    @property
    def from_rows(self) -> bool:
        """True on the formula route: the hypotheses were tested here, on n public rows."""
        return self.route == "marginal z-tests"

    def released_n(self) -> int | None:
        if self.from_rows:
            return super().released_n()  # public under replace one row, unless rows were dropped
        return None  # the input is p-values: the number of rows behind them is not an output

    def shown_diagnostics(self) -> dict[str, Any]:
        shown = super().shown_diagnostics()
        return {k: v for k, v in shown.items() if k != "rows_used_n"}  # no rows behind p-values here

    def n_text(self) -> str:
        if self.from_rows:
            shown = super().n_text()
            return f"{shown}; {self.p} hypotheses (zero marginal slope of each design column)"
        return f"{self.p} hypotheses (input: p-values; n is not an output)"

    def sizes_line(self) -> str:
        """n (from rows) and the hypotheses, once: :meth:`n_text` counts them already."""
        if self.from_rows and self.released_n() is not None:
            return f"{super().n_text()} rows; {self.p} hypotheses (zero marginal slope of each design column)"
        return self.n_text()

    def _body_lines(self) -> list[str]:
        lines = [self._setting_line(), ""]
        if self.rejected:
            lines.append(f"Rejected {len(self.rejected)} of {self.p} hypotheses at q = {self.q:g}:")
            lines.append("  " + ", ".join(self.rejected))
        else:
            lines.append(f"No hypothesis rejected at q = {self.q:g}.")
        lines.append(f"p-value cut: {self.cut_text}")
        if not self.rejected:
            lines.append(self.first_cut_sentence)
        lines += ["", self._table_title()]
        lines += self._shown_table().to_string(index=False, float_format=lambda v: f"{v:.4g}").splitlines()
        if self.capped_for_display:
            lines += ["", self.cap_footnote]
        return lines

    @property
    def cut_text(self) -> str:
        """The p-value cut as a reader reads it: none when nothing was rejected (``threshold`` is then 0)."""
        return f"{self.threshold:.4g}" if self.rejected else "none (no hypothesis rejected)"

    @property
    def first_cut_sentence(self) -> str:
        """What the smallest p-value had to reach for one rejection: BH's first cut q/m, lowered on the
        private routes by the shift t that pays for the noise (the cut of rank 1 in :meth:`plots`)."""
        shift = 0.0 if self.shows_p_values else self.shift
        first = math.exp(math.log(self.q / self.p) - shift)
        if not shift:
            return f"A rejection needs a p-value at or below BH's first cut q/m = {first:.3g}."
        return (
            f"A rejection needs a noisy p-value at or below the first cut {first:.3g}: BH's q/m = "
            f"{self.q / self.p:.3g}, lowered by the shift t = {shift:.3g} on the log scale that pays for "
            "the noise (exp(log(q/m) − t))."
        )

    @property
    def capped_for_display(self) -> int:
        """How many released noisy p-values exceed 1 (exp of a noisy log p) and are shown as 1."""
        return int(np.sum(np.asarray(self.noisy_p_values, dtype=float) > 1.0))

    @property
    def cap_footnote(self) -> str:
        return (
            f"{self.capped_for_display} noisy p-value(s) above 1 (exp of a noisy log p-value) shown as 1; "
            "the released values are in tidy()."
        )

    def _setting_line(self) -> str:
        if self.route == "post-processing":
            return f"BH on {self.p} p-values released by a private fit (post-processing: no extra budget)"
        if self.route == NONPRIVATE:
            return (
                f'BH on {self.p} p-values at eps = inf, NOT private: R\'s p.adjust(method = "BH"), rejected where '
                "the adjusted p-value is at most q (a missing p-value stays NA and is not counted)"
            )
        if self.from_rows:
            return (
                f"Two-sided z-tests of the marginal slope of the response on each of {self.p} columns "
                f"(σ = {self.sigma:g}, Δz = {self.delta_z:.4g}, derived η = {self.eta:.4g}); "
                + self._peeling_text()
            )
        return (
            f"{self.max_rejections} of {self.p} hypotheses peeled (Report Noisy Min); η = {self.eta:g}, "
            f"ν = {self.truncate:g}, Laplace scale λ = {self.noise_scale:.4g}, threshold shift "
            f"t = {self.shift:.4g} (log scale); FDR bound {self.fdr_bound:.4g}"
        )

    def _peeling_text(self) -> str:
        return (
            f"{self.max_rejections} peeled (Report Noisy Min), ν = {self.truncate:g}, Laplace scale "
            f"λ = {self.noise_scale:.4g}, threshold shift t = {self.shift:.4g} (log scale); "
            f"FDR bound {self.fdr_bound:.4g}"
        )

    def _table_title(self) -> str:
        if self.route == "post-processing":
            return "Released p-values:"
        if self.route == NONPRIVATE:
            return "p-values and BH-adjusted p-values (eps = inf, not private):"
        if self.from_rows:
            return "Peeled hypotheses (noisy p-values are released; raw z-statistics and p-values are not):"
        return "Peeled hypotheses (noisy p-values are released; raw p-values are not):"

    def _shown_table(self) -> pd.DataFrame:
        table = self.report_table()
        if self.shows_p_values:
            return table
        return table[table["peeled"]].sort_values("peel_rank")

    def report_table(self) -> pd.DataFrame:
        """``tidy()`` with noisy p-values capped at 1 for display (the released values are unchanged)."""
        table = self.tidy()
        if not self.shows_p_values:
            table["noisy_p_value"] = table["noisy_p_value"].clip(upper=1.0)
        return table

    def _tidy(self) -> pd.DataFrame:
        """One row per hypothesis: rejected or not, and what was released about it."""
        rejected = set(self.rejected)
        if self.route == NONPRIVATE:
            return pd.DataFrame(
                {
                    "hypothesis": self.terms,
                    "p.value": np.asarray(self.released_p_values, dtype=float),
                    "p.adjusted": np.asarray(self.adjusted_p_values, dtype=float),
                    "rejected": [t in rejected for t in self.terms],
                }
            )
        if self.route == "post-processing":
            return pd.DataFrame(
                {
                    "hypothesis": self.terms,
                    "p.value": np.asarray(self.released_p_values, dtype=float),
                    "rejected": [t in rejected for t in self.terms],
                }
            )
        rank = {name: j + 1 for j, name in enumerate(self.peeled)}
        noisy = dict(zip(self.peeled, np.asarray(self.noisy_p_values, dtype=float)))
        return pd.DataFrame(
            {
                "hypothesis": self.terms,
                "peeled": [t in rank for t in self.terms],
                "peel_rank": pd.array([rank.get(t) for t in self.terms], dtype="Int64"),
                "noisy_p_value": [noisy.get(t, math.nan) for t in self.terms],
                "rejected": [t in rejected for t in self.terms],
            }
        )

    def plots(self) -> list[Plot]:
        """The sorted log p-values released against BH's step-up cut log(qj/m) − t (t = 0 after a fit)."""
        private = not self.shows_p_values
        released = np.asarray(self.noisy_p_values if private else self.released_p_values, dtype=float)
        released = released[
            ~np.isnan(released)
        ]  # eps = inf: a missing p-value is not plotted, as R counts it
        if released.size == 0:
            return []
        log_p = np.sort(np.log(np.maximum(released, np.finfo(float).tiny)))
        rank = np.arange(1, log_p.size + 1)
        m = self.p if private else log_p.size  # eps = inf: m counts the non-missing p-values, as R
        cut = np.log(self.q * rank / m) - (self.shift if private else 0.0)
        fig, ax = new_figure()
        ax.plot(rank, log_p, "o", color="#3b6fd8", label="released log p-values, sorted")
        ax.step(rank, cut, where="mid", color="#c94343", label="step-up cut log(qj/m) − t")
        if private:
            ax.axhline(
                math.log(self.truncate), color="#5a6373", ls="--", label="truncation log ν (before noise)"
            )
        ax.set_xlabel("rank j among the " + ("peeled hypotheses" if private else "hypotheses"))
        ax.set_ylabel("natural log")
        ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize="small")
        ax.set_title(
            f"{len(self.rejected)} rejected at q = {self.q:g}: the smallest, up to the last under the cut"
        )
        alt = (
            f"Sorted released log p-values against the Benjamini-Hochberg cut log(qj/m) − t with t = "
            f"{self.shift if private else 0.0:.3g}; {len(self.rejected)} of {self.p} hypotheses rejected."
        )
        return [to_plot(fig, "Released log p-values against the step-up cut", alt)]

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "q": self.q,
            "hypotheses": self.p,
            "rejections": len(self.rejected),
            "threshold": self.threshold,
            "max_rejections": None if self.shows_p_values else self.max_rejections,
            "eta": self.eta,
            "fdr_bound": self.fdr_bound,
        }

    def outputs(self) -> dict[str, Any]:
        shown = self._outputs()
        if self.from_rows:
            shown.update(sigma=self.sigma, delta_z=self.delta_z)
        if self.route == NONPRIVATE:
            shown.update(adjusted_p_values=np.asarray(self.adjusted_p_values, dtype=float).tolist())
        return shown

    def _outputs(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "q": self.q,
            "rejected": list(self.rejected),
            "threshold": self.threshold,
            "peeled": list(self.peeled),
            "noisy_p_values": np.asarray(self.noisy_p_values, dtype=float).tolist(),
            "released_p_values": np.asarray(self.released_p_values, dtype=float).tolist(),
            "max_rejections": self.max_rejections,
            "eta": self.eta,
            "truncate": self.truncate,
            "noise_scale": self.noise_scale,
            "shift": self.shift,
            "fdr_bound": self.fdr_bound,
        }
