"""Result of :func:`dpstats.dp_knockoff`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..methods.knockoff.filter import empty_selection_reason
from ..methods.knockoff.planning import NOT_SHOWN
from ..plotting import Plot, new_figure, to_plot
from ..simulate.chance import knockoff_chance
from ..simulate.knockoff import characteristics_of_release
from .base import BASIS_ASSUMED, DPResult, OperatingCharacteristics

if TYPE_CHECKING:
    from ..methods.knockoff.mechanism import Released
    from ..methods.knockoff.options import KnockoffOptions
    from ..methods.knockoff.planning import KnockoffPlan


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class KnockoffResult(DPResult):
    """DP fixed-X knockoff filter: released W statistics, threshold and selection.

    Attributes
    ----------
    selected : list of str
        Terms with W_j ≥ T, in design order.
    signs : list of int
        Sign (+1/−1) of each selected term's released coefficient (its effect's sign).
    W : ndarray
        Released feature statistics (post-processing of the released coefficients).
    threshold : float
        Knockoff(+) threshold T (``inf``: nothing can be selected).
    fdr : float
        Target FDR q.
    coefficients : ndarray
        Released coefficients b (length 2p: originals then knockoffs), on the
        scale of unit-norm columns.
    variant : str
        ``"I"``, ``"II"`` or ``"non-private"``.
    s : float or None
        The knockoffs' s; None when it is read from the rows (no declared
        lambda_min: then only ``diagnostics=True`` shows it).
    row_bound : float or None
        The row-norm bound B; None when it is the data's largest row norm.
    noise : dict
        Noise scales and sensitivities of the release; an entry computed from
        values read from the rows (sigma, ||beta||, C_min, lambda_min or B not
        declared) reads "not shown (read from the data)", and its value is kept
        for ``diagnostics=True`` only.
    knockoffs_nonprivate : ndarray or None
        The materialised knockoff matrix X̃′ when ``knockoffs="materialise"``.
        It is a function of the raw data: NOT private, never in reports or
        ``to_dict()``.
    """

    selected: list[str] = field(default_factory=list)
    signs: list[int] = field(default_factory=list)
    W: np.ndarray = field(default_factory=lambda: np.zeros(0))
    threshold: float = math.inf
    fdr: float = 0.1
    offset: int = 1
    coefficients: np.ndarray = field(default_factory=lambda: np.zeros(0))
    variant: str = "II"
    statistic: str = "csm"
    s: float | None = 0.0
    ridge: float = 0.0
    row_bound: float | None = 0.0
    knockoff_route: str = "shortcut"
    noise: dict[str, float] = field(default_factory=dict)
    empty_reason: str = ""
    released_gram: np.ndarray | None = None
    knockoffs_nonprivate: np.ndarray | None = field(default=None, repr=False)

    title = "DP fixed-X knockoff filter"
    p_noun = "candidate terms"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: KnockoffOptions,
        plan: KnockoffPlan,
        released: Released,
        *,
        row_bound: float,
        generator: np.random.Generator,
    ) -> KnockoffResult:
        """The result of one call: the fields every result opens with (``opening``: method, call, n, p,
        terms, privacy), the options record, the privacy plan, the release and the frame's row bound B.
        The operating characteristics are simulated from ``generator`` (the release's, drawn after it);
        an empty selection says why in the result's warnings; power at chance under ``assume=`` warns as
        :func:`dpstats.plan` does (:meth:`warn_at_chance`)."""
        rel, chosen = released.mechanism, released.chosen
        selected = [opening["terms"][j] for j in chosen]
        oc = characteristics_of_release(plan, released, opening["n"], generator)
        result = cls(
            **opening,
            operating_characteristics=OperatingCharacteristics.of(oc),
            selected=selected,
            signs=[int(np.sign(rel.coefficients[j])) for j in chosen],
            W=rel.W,
            threshold=released.threshold,
            fdr=options.fdr,
            offset=options.offset,
            coefficients=rel.coefficients,
            variant="non-private" if math.isinf(options.eps) else options.method,
            statistic=options.statistic,
            s=plan.s_value,
            ridge=options.ridge,
            row_bound=row_bound,
            knockoff_route=(
                "materialised X~ (QR)" if released.knockoffs is not None else "sufficient-statistics (Haar)"
            ),
            noise=plan.scales.table(),
            released_gram=rel.gram,
            knockoffs_nonprivate=released.knockoffs,
            empty_reason=""
            if selected
            else empty_selection_reason(opening["p"], options.fdr, options.offset),
        )
        if not selected:
            result.warnings.append(result.empty_reason)
        if options.assume is not None:  # power under the assumed model, as dpstats.plan judges it
            result.warn_at_chance(f"dp_knockoff (Method {options.method})", knockoff_chance())
        return result

    def __post_init__(self) -> None:
        if self.variant == "non-private" and self.empty_reason:  # eps = inf: no budget to add
            self.empty_reason = empty_selection_reason(self.p, self.fdr, self.offset, private=False)

    def withhold_read_values(self) -> dict[str, Any]:
        """Blank s, B and the noise entries read from the rows (``privacy.withheld``); their values
        go to requested diagnostics only."""
        hidden, out = set(self.privacy.withheld), {}
        if "s" in hidden and self.s is not None:
            out["s (read from the data)"], self.s = self.s, None
        if "B" in hidden and self.row_bound is not None:
            out["row bound B (read from the data)"], self.row_bound = self.row_bound, None
        for key in hidden & set(self.noise):
            if self.noise[key] != NOT_SHOWN:
                out[f"noise: {key} (read from the data)"], self.noise[key] = self.noise[key], NOT_SHOWN
        return out

    # ------------------------------------------------------------------ text
    def _body_lines(self) -> list[str]:
        filt = "knockoff+" if self.offset else "knockoff (offset = 0, modified FDR)"
        lines = [
            f"Method {self.variant} ({'OLS' if not self.ridge else f'ridge omega^2 = {self.ridge:g}'} "
            f"on [X' X~'], statistic {self.statistic.upper()}), {filt} at target FDR "
            f"q = {self.fdr:g}",
            f"Threshold T = {_fmt(self.threshold)}; selected {len(self.selected)} of {self.p} terms:",
        ]
        if self.selected:
            for name, sgn in zip(self.selected[:40], self.signs[:40]):
                lines.append(
                    f"  {name:<24} {'+' if sgn > 0 else '-'}  W = {self.W[self.terms.index(name)]:.4g}"
                )
            if len(self.selected) > 40:
                lines.append(f"  ... and {len(self.selected) - 40} more (see tidy())")
        else:
            lines.append("  (none) " + self.empty_reason)
        lines += [
            "",
            f"Knockoffs: s = {_shown(self.s)}, {self.knockoff_route} route; row bound B = {_shown(self.row_bound)}",
        ]
        return lines

    # ------------------------------------------------------------------ tables
    def _tidy(self) -> pd.DataFrame:
        p = self.p
        chosen = dict(zip(self.selected, self.signs))
        return pd.DataFrame(
            {
                "term": self.terms,
                "W": self.W,
                "coef": self.coefficients[:p],
                "knockoff_coef": self.coefficients[p:],
                "selected": [t in chosen for t in self.terms],
                "sign": [chosen.get(t, 0) for t in self.terms],
            }
        )

    def report_table(self) -> pd.DataFrame:
        table = self.tidy()
        return table.iloc[np.argsort(-table["W"].to_numpy(), kind="stable")].reset_index(drop=True)

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "w_statistic": self.statistic,  # which W; broom's "statistic" is a numeric test statistic
            "fdr": self.fdr,
            "threshold": self.threshold,
            "n_selected": len(self.selected),
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "selected": list(self.selected),
            "signs": list(self.signs),
            "W": self.W,
            "threshold": self.threshold,
            "fdr": self.fdr,
            "offset": self.offset,
            "coefficients": self.coefficients,
            "variant": self.variant,
            "statistic": self.statistic,
            "s": self.s,
            "ridge": self.ridge,
            "row_bound": self.row_bound,
            "knockoff_route": self.knockoff_route,
            "noise": dict(self.noise),
            "empty_reason": self.empty_reason,
        }

    def coef(self) -> dict[str, float]:
        """Released coefficient per term (unit-norm column scale)."""
        return dict(zip(self.terms, self.coefficients[: self.p]))

    # ------------------------------------------------------------------ plots
    def plots(self) -> list[Plot]:
        plots = [self._w_plot()]
        if self.operating_characteristics is not None:
            plots.append(self._oc_plot())
        return [plot for plot in plots if plot is not None]

    def _w_plot(self) -> Plot:
        order = np.argsort(-self.W, kind="stable")
        w = self.W[order]
        chosen = set(self.selected)
        colours = ["#3b6fd8" if self.terms[j] in chosen else "#767f8c" for j in order]
        fig, ax = new_figure(7.0, 3.8)
        ax.bar(np.arange(w.size), w, color=colours, width=0.8)
        ax.axhline(0, color="black", lw=0.6)
        if math.isfinite(self.threshold):
            ax.axhline(self.threshold, color="#b86e00", ls="--", label=f"threshold T = {self.threshold:.3g}")
            ax.axhline(-self.threshold, color="#b86e00", ls=":", label="−T (knockoff side)")
        for pos, j in enumerate(order[: min(len(self.selected), 15)]):
            ax.annotate(
                self.terms[j],
                (pos, w[pos]),
                rotation=90,
                fontsize=7,
                ha="center",
                va="bottom",
                xytext=(0, 2),
                textcoords="offset points",
            )
        ax.set_xlabel("terms, sorted by W (blue: selected)")
        ax.set_ylabel(f"W ({self.statistic.upper()})")
        ax.set_title(f"Released W statistics; {len(self.selected)} selected at q = {self.fdr:g}")
        if math.isfinite(self.threshold):
            ax.legend(frameon=False, loc="upper right")
        named = ", ".join(self.selected[:15]) or "none"
        more = len(self.selected) - 15
        alt = (
            f"{self.p} W statistics sorted from {w[0]:.3g} down to {w[-1]:.3g}; threshold "
            f"{_fmt(self.threshold)}; {len(self.selected)} selected: {named}"
            + (f" … and {more} more (all in the table)." if more > 0 else ".")
        )
        return to_plot(fig, "Knockoff W statistics with the threshold", alt)

    def _oc_plot(self) -> Plot | None:
        """FDR and power under the assumed model, each ± 2 Monte Carlo s.e.; None without such rows."""
        oc = self.operating_characteristics.table()
        rates = oc[(oc["basis"] == BASIS_ASSUMED) & oc["quantity"].str.startswith(("FDR", "power"))]
        rates = rates[np.isfinite(rates["estimate"].to_numpy(dtype=float))]
        if rates.empty:
            return None
        fig, ax = new_figure(5.0, 2.4)
        y = np.arange(len(rates))
        ax.errorbar(
            rates["estimate"],
            y,
            xerr=2 * rates["std_error"].fillna(0),
            fmt="o",
            color="#3b6fd8",
            capsize=4,
            label="estimate ± 2 Monte Carlo s.e.",
        )
        ax.axvline(self.fdr, color="#b86e00", ls="--", label=f"target FDR q = {self.fdr:g}")
        ax.set_yticks(y, [q.split(" (")[0] for q in rates["quantity"]])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("rate (share of selections or of assumed signals)")
        ax.legend(frameon=False, loc="lower right", fontsize=8)
        ax.set_title("FDR and power simulated under the assumed model")
        alt = "; ".join(
            f"{q}: {e:.3f} ± {2 * s:.3f} (2 Monte Carlo s.e.)"
            for q, e, s in zip(rates["quantity"], rates["estimate"], rates["std_error"].fillna(0))
        )
        caption = (
            "FDR and power under the assumed model (simulated), each ± 2 Monte Carlo standard errors; "
            "the table gives one standard error"
        )
        return to_plot(fig, caption, alt)

    def report_sections(self) -> list[dict[str, Any]]:
        return []


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


def _shown(x: float | None) -> str:
    """A value, or why it is not shown (None: read from the rows)."""
    return NOT_SHOWN if x is None else f"{x:.4g}"
