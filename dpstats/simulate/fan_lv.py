"""The DP-SIS paper's synthetic model: Fan & Lv (2008), §3.3.1.

X ~ N(0, I_d), s nonzero coefficients at random positions, y = Xβ + ε.  The
generator returns a pandas DataFrame with the response ``y`` and predictors
``x1 .. xd``; the true support is in ``df.attrs["support"]`` (names) and the
coefficients in ``df.attrs["beta"]`` (the knockpy ``dgp`` idea).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..privacy.randomness import RandomState, make_generator


def fan_lv_coefficients(d: int, s: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Fan & Lv (2008) §3.3.1 coefficients: s nonzero at random positions.

    w_i = (−1)^u (a + |z|), u ~ Bernoulli(0.4), z ~ N(0, 1), a = 4 log n / √n.

    Examples
    --------
    >>> beta = fan_lv_coefficients(50, 8, 100, np.random.default_rng(0))
    >>> nonzero = beta[beta != 0]
    >>> nonzero.size, bool(np.all(np.abs(nonzero) >= 4 * np.log(100) / 10))
    (8, True)
    """
    beta = np.zeros(d)
    support = rng.choice(d, size=s, replace=False)
    a = 4 * np.log(n) / np.sqrt(n)
    u = rng.random(s) < 0.4
    z = rng.standard_normal(s)
    beta[support] = np.where(u, -1.0, 1.0) * (a + np.abs(z))
    return beta


def fan_lv(
    n: int = 100, d: int = 2000, s: int = 8, noise_var: float = 1.5, random_state: RandomState = None
) -> pd.DataFrame:
    """The DP-SIS paper's synthetic model (Fan & Lv 2008, §3.3.1).

    X ~ N(0, I_d), s = 8 nonzero coefficients at random positions (see
    :func:`fan_lv_coefficients`), y = Xβ + N(0, ``noise_var``).

    Examples
    --------
    >>> df = fan_lv(n=20, d=50, random_state=0)
    >>> df.shape, len(df.attrs["support"])
    ((20, 51), 8)
    """
    rng, _ = make_generator(random_state)
    X = rng.standard_normal((n, d))
    beta = fan_lv_coefficients(d, s, n, rng)
    y = X @ beta + rng.normal(0.0, np.sqrt(noise_var), n)
    cols = [f"x{j + 1}" for j in range(d)]
    df = pd.DataFrame(X, columns=cols)
    df.insert(0, "y", y)
    df.attrs["support"] = [cols[j] for j in np.flatnonzero(beta)]
    df.attrs["beta"] = dict(zip(cols, beta.tolist()))
    return df
