"""Real data for tests, demos and vignettes, and the names of the synthetic generators.

Bundled real data come from packages that ship them (scikit-learn, R's
``mlbench`` through :mod:`dpstats.rbridge`) so nothing is downloaded.  The
data-generating processes of the papers live in :mod:`dpstats.simulate`;
:func:`fan_lv` and :func:`fan_lv_coefficients` stay importable from here as
aliases of :func:`dpstats.simulate.fan_lv` and
:func:`dpstats.simulate.fan_lv_coefficients` (``dp.datasets.fan_lv`` is used
throughout the documentation).
"""

from __future__ import annotations

import pandas as pd

from .simulate.fan_lv import fan_lv, fan_lv_coefficients

__all__ = ["fan_lv", "fan_lv_coefficients", "diabetes", "breast_cancer", "mlbench_frame"]


def diabetes() -> pd.DataFrame:
    """scikit-learn's diabetes data (442 × 10, response ``y``: disease progression).

    The predictors are already centred and scaled by scikit-learn; each lies
    in [−0.2, 0.2] and y in [25, 346], which the demo declares as public bounds.
    """
    from sklearn.datasets import load_diabetes

    bunch = load_diabetes(as_frame=True)
    df = bunch.frame.rename(columns={"target": "y"})
    return df[["y"] + [c for c in df.columns if c != "y"]]


def breast_cancer() -> pd.DataFrame:
    """scikit-learn's Wisconsin diagnostic breast cancer data (569 × 30 + ``diagnosis``)."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    df = bunch.frame.copy()
    df.columns = [c.replace(" ", "_") for c in df.columns]
    df["diagnosis"] = pd.Categorical.from_codes(df.pop("target"), ["malignant", "benign"])
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
    from .rbridge import import_robjects

    ro = import_robjects()
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    ro.r(
        f"library(mlbench); data({name}); d <- {name}; if ('Id' %in% names(d)) d$Id <- NULL; "
        "y <- d$Class; d$Class <- NULL; nl <- sapply(d, nlevels); "
        "d[] <- lapply(d, function(v) as.numeric(as.integer(v))); d$Class <- y; "
        "d <- d[complete.cases(d), ]"
    )
    with localconverter(ro.default_converter + pandas2ri.converter) as conversion:
        df = conversion.rpy2py(ro.r("d"))
    levels = dict(zip(ro.r("names(nl)"), (float(v) for v in ro.r("nl"))))
    df = df.reset_index(drop=True)
    df["Class"] = df["Class"].cat.remove_unused_categories()
    return df, {c: (1.0, max(n, 2.0)) for c, n in levels.items()}
