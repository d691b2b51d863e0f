"""Data-generating processes for FELP simulations (planted relevant features)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def planted(n: int = 200, d: int = 100, s: int = 10, shift: float = 1.5, n_classes: int = 2,
            random_state: int | np.random.Generator | None = None) -> pd.DataFrame:
    """Classes separated along ``s`` planted features; the other ``d − s`` are noise.

    Rows get class labels ``c0, c1, …`` in equal shares; feature ``x_j`` is
    N(0, 1) plus, for the planted j <= s, the class mean ``shift · (c − (K−1)/2)``
    (K classes).  The planted features are ``x1 … xs``.

    Examples
    --------
    >>> df = planted(n=40, d=12, s=3, random_state=0)
    >>> df.shape, sorted(df["class"].unique())
    ((40, 13), ['c0', 'c1'])
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    X[:, :s] += (shift * (y - (n_classes - 1) / 2))[:, None]
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
    df.insert(0, "class", pd.Categorical.from_codes(y, [f"c{k}" for k in range(n_classes)]))
    return df
