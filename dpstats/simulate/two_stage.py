"""The DP-SIS paper's §3 instability designs (two-stage selection against SIS).

Design W1 draws every row from one linear model; design W1/W2 puts one row
of a second model in every block of 10 rows, the blocks two-stage selection
fits its lassos on (n = 100, ⌊√n⌋ = 10 blocks, row order kept).  The paper
compares how often SIS and two-stage selection put the features of w1 in
their top 5 (``tests/test_two_stage.py`` repeats that comparison).
"""

from __future__ import annotations

import math

import numpy as np


def instability_data(
    design: str, rng: np.random.Generator, n: int = 100, d: int = 100, noise_sd: float = math.sqrt(0.1)
) -> tuple[np.ndarray, np.ndarray]:
    """The DP-SIS paper's §3 designs W1 and W1/W2.

    X ~ N(0, I_d); w1 = (1,1,1,1,1,0,…,0), w2 = (0,…,0,1,1,1,1,1); noise
    N(0, 0.1) (variance 0.1).  ``"W1"``: every row from w1.  ``"W1W2"``: 90
    rows from w1 and 10 from w2, one w2 row after every 9 w1 rows (rows 10,
    20, …, 100 in 1-based numbering), so with the row order kept every block
    of 10 rows holds exactly one w2 row.

    Examples
    --------
    >>> X, y = instability_data("W1W2", np.random.default_rng(0))
    >>> X.shape
    (100, 100)
    """
    if design not in ("W1", "W1W2"):
        raise ValueError(f"design must be 'W1' or 'W1W2', got {design!r}")
    X = rng.standard_normal((n, d))
    w1 = np.zeros(d)
    w1[:5] = 1.0
    w2 = np.zeros(d)
    w2[-5:] = 1.0
    W = np.tile(w1, (n, 1))
    if design == "W1W2":
        W[9::10] = w2
    y = np.einsum("ij,ij->i", X, W) + rng.normal(0.0, noise_sd, n)
    return X, y
