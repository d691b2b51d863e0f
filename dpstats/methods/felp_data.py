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


def mlbench_frame(name: str) -> tuple[pd.DataFrame, dict[str, tuple[float, float]]]:
    """R's ``mlbench`` ``Soybean`` or ``BreastCancer`` as numeric codes, via rpy2.

    Every feature is an R factor; it is replaced by its integer level code
    (1 … number of levels), ``Id`` is dropped, rows with a missing value are
    dropped (R's ``complete.cases``) and the response is ``Class``.  The
    returned bounds, (1, number of levels) per feature, are public metadata.
    Needs R with the ``mlbench`` package and rpy2.

    Examples
    --------
    >>> df, bounds = mlbench_frame("BreastCancer")  # doctest: +SKIP
    >>> df.shape  # doctest: +SKIP
    (683, 10)
    """
    if name not in ("Soybean", "BreastCancer"):
        raise ValueError(f"name must be 'Soybean' or 'BreastCancer', got {name!r}.")
    from ..rbridge import import_robjects

    ro = import_robjects()
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    ro.r(f"library(mlbench); data({name}); d <- {name}; if ('Id' %in% names(d)) d$Id <- NULL; "
         "y <- d$Class; d$Class <- NULL; nl <- sapply(d, nlevels); "
         "d[] <- lapply(d, function(v) as.numeric(as.integer(v))); d$Class <- y; "
         "d <- d[complete.cases(d), ]")
    with localconverter(ro.default_converter + pandas2ri.converter) as conversion:
        df = conversion.rpy2py(ro.r("d"))
    levels = dict(zip(ro.r("names(nl)"), (float(v) for v in ro.r("nl"))))
    df = df.reset_index(drop=True)
    df["Class"] = df["Class"].cat.remove_unused_categories()
    return df, {c: (1.0, max(n, 2.0)) for c, n in levels.items()}
