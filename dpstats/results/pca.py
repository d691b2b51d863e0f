"""The result of :func:`dpstats.dp_pca`: a released private principal subspace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .base import DPResult
from .lm import one_sided_design


@dataclass(repr=False)
class PCAResult(DPResult):
    """A released private principal subspace.

    Attributes
    ----------
    basis : ndarray (d, k)
        Orthonormal basis of the released subspace (columns ordered by noisy eigenvalue).
    eigenvalues : ndarray (k,)
        Noisy eigenvalues of Σ xxᵀ (of the clipped, centred rows).
    centre : ndarray (d,)
        Public centre (midpoint of the box); project new rows as ``(x - centre) @ basis``.
    radius : float
        The clipping radius C.
    noise_sd : float
        Standard deviation of the Gaussian noise on each entry of Σ xxᵀ (0 at eps = inf).
    formula : str
        The one-sided formula of the fit, which :meth:`predict` applies to new rows.
    """

    basis: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    eigenvalues: np.ndarray = field(default_factory=lambda: np.empty(0))
    centre: np.ndarray = field(default_factory=lambda: np.empty(0))
    radius: float = 0.0
    noise_sd: float = 0.0
    engine: str = "memory"
    formula: str = ""
    factor_levels: dict[str, list] = field(default_factory=dict)  # the fit's, for predict()
    coding: dict[str, Any] = field(default_factory=dict)  # the fit's contrasts, for predict()

    title = "Differentially private principal components (Analyze Gauss)"

    @property
    def heading(self) -> str:
        """At eps = inf no Analyze Gauss noise is added: the heading names the exact reference alone."""
        return super().heading.replace(" (Analyze Gauss): ", ": ")

    def project(self, X: np.ndarray) -> np.ndarray:
        """Coordinates of rows ``X`` (n × d, original units) in the released subspace."""
        return (np.asarray(X, dtype=float) - self.centre) @ self.basis

    def predict(self, newdata: pd.DataFrame | dict | np.ndarray) -> np.ndarray:
        """Scores of the rows of ``newdata`` on the released components, ``(x - centre) @ basis``
        (post-processing; R's ``predict(prcomp(x, center = centre), newdata)`` up to each column's sign).

        ``newdata`` is a DataFrame with the formula's variables, or an array with the design's
        columns.  A row with a missing value gets NaN in every column (R's ``na.pass``).
        """
        X, rows = one_sided_design(self.formula, self.terms, newdata, self.factor_levels, self.coding)
        return rows.fill(None if X is None else self.project(X), width=(self.basis.shape[1],))

    def _body_lines(self) -> list[str]:
        lines = [
            f"{self.n_text()} (engine: {self.engine}); clipping radius C = {self.radius:.4g}; "
            f"noise sd per entry of Σxxᵀ = {self.noise_sd:.4g}",
            "",
            "Loadings:",
        ]
        lines += (
            self.tidy()
            .pivot(index="term", columns="component", values="loading")
            .loc[self.terms]
            .to_string(float_format=lambda v: f"{v:.4f}")
            .splitlines()
        )
        label = "Noisy eigenvalues" if self.noise_sd > 0 else "Eigenvalues"
        lines += ["", f"{label}: " + ", ".join(f"{v:.4g}" for v in self.eigenvalues)]
        return lines

    def _tidy(self) -> pd.DataFrame:
        rows = [
            {"term": t, "component": f"PC{j + 1}", "loading": float(self.basis[i, j])}
            for j in range(self.basis.shape[1])
            for i, t in enumerate(self.terms)
        ]
        return pd.DataFrame(rows, columns=["term", "component", "loading"])

    def report_table(self) -> pd.DataFrame:
        return self.tidy()

    def _glance_extra(self) -> dict[str, Any]:
        return {"k": int(self.basis.shape[1]), "radius": self.radius, "noise_sd": self.noise_sd}

    def outputs(self) -> dict[str, Any]:
        return {
            "basis": self.basis.tolist(),
            "eigenvalues": self.eigenvalues.tolist(),
            "centre": self.centre.tolist(),
            "radius": self.radius,
            "noise_sd": self.noise_sd,
        }
