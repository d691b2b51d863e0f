"""Result of :func:`dpstats.dp_gmm`."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import DataWarning, caller_stacklevel
from ..methods.gmm.accuracy import VACUOUS_OPENING, location_holds, theorem_accuracy, vacuous_warning
from ..methods.gmm.model import ellipse_points, log_joint, map_assign, posterior
from ..simulate.assume import assumed_row, describe, exact_row
from ..validation import columns_read
from ..plotting import Plot, new_figure, to_plot
from .base import DPResult, OperatingCharacteristics
from .lm import PredictRows, fit_levels, one_sided_design

if TYPE_CHECKING:
    from ..formula import ModelFrame
    from ..methods.gmm import GMMOptions, GMMPlan, Released


@dataclass(repr=False)  # repr() is the printed result (DPResult.__repr__), never the raw fields
class GMMResult(DPResult):
    """A privately learned Gaussian mixture.

    Attributes
    ----------
    weights : ndarray (k,)
    means : ndarray (k, d)
        In the original coordinates of the design columns (``terms``).
    covariances : ndarray (k, d, d)
        Positive definite (projected and shrunk: post-processing).
    basis : ndarray (d, q) or None
        The private PCA basis (None when k >= d: no projection).
    clip_radius : float
        The private clipping radius C around the centre of the bounds.
    """

    formula: str = ""
    k: int = 1
    fit_method: str = "pca_cluster"
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    means: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariances: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)))
    centre: np.ndarray = field(default_factory=lambda: np.zeros(0))
    basis: np.ndarray | None = None
    clip_radius: float = 0.0
    located_sides: list[float] = field(default_factory=list)
    mean_noise_sd: np.ndarray = field(default_factory=lambda: np.zeros(0))
    groups: int | None = None
    factor_levels: dict[str, list] = field(default_factory=dict)  # the fit's, for predict()
    coding: dict[str, Any] = field(default_factory=dict)  # the fit's contrasts, for predict()
    collapsed: list[int] = field(default_factory=list)

    title = "DP Gaussian mixture (Kamath, Sheffet, Singhal & Ullman 2019)"
    p_noun = "variables"

    @classmethod
    def of(
        cls,
        opening: dict[str, Any],
        options: GMMOptions,
        plan: GMMPlan,
        released: Released,
        *,
        mf: ModelFrame,
        public_n: int | None,
        warning: str | None,
        generator: np.random.Generator,
    ) -> GMMResult:
        """The result of one call: the fields every result opens with (``opening``: method, call, n, p,
        terms, privacy), the options record, the privacy plan (its box centres the released means), the
        release, the frame ``mf`` (its factor levels and coding, for :meth:`predict`), n where it is public
        and the frame's ``warning`` (the public rules before any spend: m.pre_spend_warnings).  Warns (and
        records) a vacuous accuracy at the smallest released weight of a component that did not collapse, and
        collapsed components with their likely cause; the operating characteristics are simulated from
        ``generator`` (the release's, drawn after it)."""
        p1, comps, centre = released.phase_one, released.components, plan.box.center
        result = cls(
            **opening,
            formula=options.formula,
            k=plan.k,
            fit_method=plan.fit_method,
            weights=comps.weights,
            means=comps.means + centre,
            covariances=comps.covariances,
            centre=centre,
            basis=p1.pca.basis if p1.pca is not None else None,
            clip_radius=p1.clip_radius,
            located_sides=[loc.side for loc in p1.located],
            mean_noise_sd=comps.mean_noise_sd,
            groups=plan.groups,
            **fit_levels(mf, nonprivate=False),  # for predict()
        )
        result.collapsed = [j + 1 for j in released.collapsed]
        w_min = result.smallest_weight()
        said = warning is not None and VACUOUS_OPENING in warning  # the theorem's rule already fired
        d_shown = not columns_read(mf)  # else d depends on levels read from the rows
        vacuous = (
            None
            if said
            else vacuous_warning(
                public_n, result.p, plan.k, options.eps, options.delta, w_min, d_shown=d_shown
            )
        )
        result.warnings += [text for text in (warning, vacuous) if text]
        if released.collapsed:
            message = released.collapse_message(plan.min_weight, location_holds(public_n, result.p, options))
            result.warnings.append(message)
            warnings.warn(message, DataWarning, stacklevel=caller_stacklevel())
        result.operating_characteristics = mixture_oc(result, options.oc_trials, generator, options.assume)
        return result

    # ------------------------------------------------------------- prediction
    def _complete(self, newdata) -> tuple[np.ndarray | None, PredictRows]:
        """newdata's design on its complete rows, and which rows those are (:func:`one_sided_design`)."""
        return one_sided_design(self.formula, self.terms, newdata, self.factor_levels, self.coding)

    def predict(self, newdata: pd.DataFrame | dict | np.ndarray) -> np.ndarray:
        """Most probable component (1..k) of each row of ``newdata`` (post-processing).

        ``newdata`` is a DataFrame with the formula's variables, or an array
        with the design's columns.  A row with a missing value gets NaN (R's ``na.pass``).
        """
        X, rows = self._complete(newdata)
        return rows.fill(None if X is None else map_assign(X, self.weights, self.means, self.covariances) + 1)

    def predict_proba(self, newdata: pd.DataFrame | dict | np.ndarray) -> np.ndarray:
        """Posterior probability of each component, shape (n, k); NaN for a row with a missing value."""
        X, rows = self._complete(newdata)
        probs = None if X is None else posterior(X, self.weights, self.means, self.covariances)
        return rows.fill(probs, width=(self.k,))

    def log_density(self, newdata: pd.DataFrame | dict | np.ndarray) -> np.ndarray:
        """Log-density of each row under the released mixture; NaN for a row with a missing value."""
        from scipy.special import logsumexp

        X, rows = self._complete(newdata)
        joint = None if X is None else log_joint(X, self.weights, self.means, self.covariances)
        return rows.fill(None if joint is None else logsumexp(joint, axis=1))

    # ------------------------------------------------------------- text/tables
    def _body_lines(self) -> list[str]:
        lines = (
            [f"FIT FAILED: component(s) {self.collapsed} collapsed (see warnings)", ""]
            if self.collapsed
            else []
        )
        lines += [
            f"Mixture of k = {self.k} Gaussians in d = {self.p} dimensions "
            f"(method: {self.fit_method}" + (f", m = {self.groups} groups" if self.groups else "") + ")",
            "",
            "Component weights and means (noisy):",
        ]
        table = self.report_table()
        lines += [
            "  " + ln for ln in table.to_string(index=False, float_format=lambda v: f"{v:.3f}").splitlines()
        ]
        lines += [
            "",
            f"Private clipping radius C = {self.clip_radius:.3g}; located grid sides "
            + ", ".join(f"{s:.3g}" for s in self.located_sides),
        ]
        alpha = self.accuracy()
        if alpha is not None and not alpha < 1:
            lines.append(
                "Accuracy: alpha of Theorem 1.1 at this n, eps, delta and the smallest released weight (not "
                f"collapsed) is {'Inf' if math.isinf(alpha) else f'{alpha:.3g}'} (>= 1: vacuous): no "
                "accuracy guarantee"
            )
        return lines

    def smallest_weight(self) -> float:
        """The smallest released weight of a component that did not collapse (of all, if all did): a
        collapse is a failed fit, warned with its cause, not a small component."""
        kept = np.delete(self.weights, [j - 1 for j in self.collapsed])
        return float(np.min(kept if kept.size else self.weights))

    def accuracy(self) -> float | None:
        """Theorem 1.1's accuracy alpha at the public n, d, k, eps, delta and :meth:`smallest_weight`
        (:func:`~dpstats.methods.gmm.accuracy.theorem_accuracy`); None when n is private."""
        if self.released_n() is None or not len(self.weights):
            return None
        eps, delta = self.privacy.eps, self.privacy.delta
        return theorem_accuracy(self.n, self.p, self.k, eps, delta, self.smallest_weight())

    def _tidy(self) -> pd.DataFrame:
        """One row per (component, term): weight, mean, standard deviation."""
        rows = []
        for j in range(self.k):
            sd = np.sqrt(np.diag(self.covariances[j]))
            for t, term in enumerate(self.terms):
                rows.append(
                    {
                        "component": j + 1,
                        "term": term,
                        "weight": self.weights[j],
                        "mean": self.means[j, t],
                        "sd": sd[t],
                    }
                )
        return pd.DataFrame(rows, columns=["component", "term", "weight", "mean", "sd"])

    def report_table(self) -> pd.DataFrame:
        shown = self.terms[:6]
        data: dict[str, Any] = {"component": np.arange(1, self.k + 1), "weight": self.weights}
        for t, term in enumerate(shown):
            data[f"mean[{term}]"] = self.means[:, t]
        data["sd (avg)"] = np.sqrt(np.trace(self.covariances, axis1=1, axis2=2) / self.p)
        return pd.DataFrame(data)

    def report_table_note(self) -> str:
        if len(self.terms) <= 6:
            return ""
        return f"The means of the first 6 of {len(self.terms)} variables; all are in tidy()."

    def _glance_extra(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "fit_method": self.fit_method,
            "clip_radius": self.clip_radius,
            "collapsed_components": len(self.collapsed),
        }

    def outputs(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "fit_method": self.fit_method,
            "weights": self.weights,
            "means": self.means,
            "covariances": self.covariances,
            "centre": self.centre,
            "basis": None if self.basis is None else self.basis,
            "clip_radius": self.clip_radius,
            "located_sides": self.located_sides,
            "mean_noise_sd": self.mean_noise_sd,
            "groups": self.groups,
            "collapsed": list(self.collapsed),
        }

    # ------------------------------------------------------------- report
    def plane(self) -> np.ndarray:
        """A d × 2 basis of the plane the report draws in (private PCA, or PCA of the released means)."""
        if self.basis is not None and self.basis.shape[1] >= 2:
            return self.basis[:, :2]
        if self.p == 1:
            return np.ones((1, 1))
        spread = np.cov(self.means.T) if self.k > 1 else np.zeros((self.p, self.p))
        spread = spread + np.mean(self.covariances, axis=0)
        vecs = np.linalg.eigh(spread)[1]
        return vecs[:, ::-1][:, :2]

    def plots(self) -> list[Plot]:
        B = self.plane()
        fig, ax = new_figure(6.4, 4.8)
        colours = ["#3b6fd8", "#b86e00", "#2a9d5b", "#b23a48", "#7b52ab", "#6b6b6b"]
        for j in range(self.k):
            c = colours[j % len(colours)]
            mu2 = (self.means[j] - self.centre) @ B
            if B.shape[1] == 2:
                cov2 = B.T @ self.covariances[j] @ B
                pts = ellipse_points(mu2, cov2, 2.0)
                ax.plot(pts[:, 0], pts[:, 1], color=c, lw=2)
                ax.plot(*mu2, marker="+", color=c, ms=10)
                ax.annotate(
                    f"{j + 1}: w = {self.weights[j]:.2f}",
                    mu2,
                    textcoords="offset points",
                    xytext=(6, 6),
                    color=c,
                )
        ax.set_xlabel("private PC 1" if self.basis is not None else "plane axis 1")
        ax.set_ylabel("private PC 2" if self.basis is not None else "plane axis 2")
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title("Released components: 2-sd ellipses (no data points shown)")
        alt = (
            f"{self.k} ellipses, one per released component, in the private PCA plane; weights "
            + ", ".join(f"{w:.2f}" for w in self.weights)
            + ". Raw data are not drawn."
        )
        plots = [to_plot(fig, "Mixture components in the private PCA plane", alt)]
        fig, ax = new_figure(6.4, 2.8)
        ax.bar(np.arange(1, self.k + 1), self.weights, color=[colours[j % 6] for j in range(self.k)])
        ax.set_xlabel("component")
        ax.set_ylabel("weight (noisy)")
        ax.set_xticks(np.arange(1, self.k + 1))
        plots.append(to_plot(fig, "Component weights", "Bar chart of the released weights."))
        return plots

    def report_sections(self) -> list[dict[str, Any]]:
        sides = ", ".join(f"{s:.3g}" for s in self.located_sides)
        html = (
            f"<p>Rows were clipped to the declared box and to a ball of private radius "
            f"C = {self.clip_radius:.3g} around its centre before private PCA; the clustering "
            f"located one grid cell per component (sides {sides}). Means carry Gaussian noise of "
            f"about {float(np.mean(self.mean_noise_sd)) * np.sqrt(self.p):.3g} in l2 norm.</p>"
        )
        return [{"heading": "How the components were found", "html": html}]


def mixture_oc(
    result: GMMResult, trials: int, gen: np.random.Generator, assume: str | None = None
) -> OperatingCharacteristics | None:
    """Released weights, mean noise and the paper's accuracy rate; misclassification only under ``assume``.

    Without ``assume`` every row is a function of released quantities and public
    inputs.  With ``assume="released"`` (the plug-in model: the released mixture
    is the truth), ``trials`` points are drawn from the released mixture and
    classified by it (the Bayes rate if it were true).
    """
    if not trials:
        return None
    rows = [exact_row(f"released weight of component {j + 1}", w) for j, w in enumerate(result.weights)]
    sd = np.sqrt(np.trace(result.covariances, axis1=1, axis2=2) / result.p)
    noise = result.mean_noise_sd * np.sqrt(result.p) / sd
    rows.append(
        exact_row("l2 noise in each released mean, in component-sd units (average)", float(np.mean(noise)))
    )
    alpha = result.accuracy()
    if alpha is not None:  # a function of n, which is private under add/remove
        rows.append(
            exact_row("accuracy alpha (total variation) of Theorem 1.1's rate at this n, eps, delta", alpha)
        )
    model = (
        "exact, from the released weights, covariances and mean-noise scales and the public n, d, k, eps, "
        "delta; no data model. alpha: Kamath et al. (2019) Theorem 1.1 solved for alpha with w_min = the "
        "smallest released weight of a component that did not collapse, constants 1, poly(k) = k, "
        "polylog = log(1/delta): an order of magnitude, not a guarantee (>= 1 is vacuous)"
    )
    if assume is None:
        return OperatingCharacteristics(rows=rows, model=model)
    k = result.k
    comp = gen.choice(k, size=trials, p=result.weights)
    X = np.empty((trials, result.p))
    for j in range(k):
        idx = np.flatnonzero(comp == j)
        X[idx] = gen.multivariate_normal(result.means[j], result.covariances[j], size=len(idx))
    err = float(np.mean(result.predict(X) - 1 != comp))
    se = float(np.sqrt(max(err * (1 - err), 1.0 / trials) / trials))
    rows.append(assumed_row("misclassification rate", err, se))
    model += (
        "; misclassification simulated by drawing points from the released mixture and classifying them by it"
    )
    return OperatingCharacteristics(rows=rows, model=model, trials=trials, assumption=describe(assume))
