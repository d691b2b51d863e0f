"""Fitting coordinates of a bounded design, shared by dp_lm (:mod:`dpstats.methods.lm`, which adds
the response's map) and dp_glm (:mod:`dpstats.methods.glm`).

The public affine map between the rows w a method fits on and the formula's coefficients β: with an
intercept, w = (1, z) with z_j = (x_j − c_j)/h_j, c and h the declared box's centre and half-width;
without one, w_j = x_j/h_j (the model y = xᵀβ is kept: no centring).  Every quantity here is a
function of the declared bounds alone.

Examples
--------
>>> c = DesignCoordinates(np.array([1.0]), np.array([2.0]), True)
>>> c.k, c.row_norm_sq(), c.to_original(np.array([0.5, 4.0])).tolist()
(2, 2.0, [-1.5, 2.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DesignCoordinates:
    """The declared box of the design's columns (centre, half-width) and whether the model has an
    intercept (module docstring)."""

    x_center: np.ndarray
    x_half: np.ndarray
    intercept: bool

    @property
    def p(self) -> int:
        """Number of design columns (the intercept not counted)."""
        return int(self.x_center.size)

    @property
    def k(self) -> int:
        """Number of coefficients."""
        return self.p + int(self.intercept)

    def max_abs(self) -> np.ndarray:
        """max |w_j| over the box, per fitting column."""
        if self.intercept:
            return np.ones(self.k)
        return (np.abs(self.x_center) + self.x_half) / self.x_half

    def row_norm_sq(self) -> float:
        """The largest squared norm of a fitting row (R² of dp_lm, D of dp_glm)."""
        return float(np.sum(self.max_abs() ** 2))

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, L) with β = a + L θ, θ in fitting coordinates (intercept first)."""
        k = self.k
        if not self.intercept:
            return np.zeros(k), np.diag(1.0 / self.x_half)
        L = np.zeros((k, k))
        L[0, 0] = 1.0
        L[0, 1:] = -self.x_center / self.x_half
        L[1:, 1:] = np.diag(1.0 / self.x_half)
        return np.zeros(k), L

    def to_original(self, theta: np.ndarray) -> np.ndarray:
        """β = a + L θ for θ of shape (..., k)."""
        a, L = self.linear()
        return a + theta @ L.T
