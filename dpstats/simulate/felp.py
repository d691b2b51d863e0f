"""FELP simulations: planted-feature data and the paper's evaluation protocol (accuracy against eps).

:func:`planted` draws classes separated along a few planted features, the
synthetic data of the FELP tests, vignette and benchmark.  :func:`accuracy_vs_eps`
is the evaluation protocol of the paper (a simulation, not a release):

Liu (2018) evaluates selected features by 10-fold cross-validation: on each
training fold the ensemble weights are computed and perturbed, the top 10% of
features are kept, and an SVM (C = 1) and a 3-nearest-neighbour classifier are
trained on them and scored on the held-out fold.  :func:`accuracy_vs_eps`
does this for both variants, the non-private ensemble (eps = inf) and all
features.  The ensemble is fitted once per fold and variant; each eps adds its
own noise (numpy draws: this is a simulation).  Features are min-max scaled on
the training fold (as the paper's experiments do), so this evaluates utility,
not a privacy guarantee.  :func:`selection_stability` is the plug-in stability of a
released selection (the operating characteristic of ``dp_felp(..., assume="released")``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..methods import felp as m
from ..privacy.randomness import FastNoise

EPS_GRID = (0.01, 0.1, 1.0, 10.0)


def planted(
    n: int = 200,
    d: int = 100,
    s: int = 10,
    shift: float = 1.5,
    n_classes: int = 2,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
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


def accuracy_vs_eps(
    X: np.ndarray,
    y: np.ndarray,
    eps_grid=EPS_GRID,
    *,
    folds: int = 10,
    variants=("paper", "strict"),
    lam: float = m.DEFAULT_LAM,
    n_estimators: int = 20,
    sample_ratio: float = 0.9,
    select: int | None = None,
    noise_reps: int = 5,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Cross-validated accuracy of SVM (C = 1) and 3-NN on the selected features.

    Returns a long table with columns ``selection`` (``"paper"``, ``"strict"``,
    ``"non-private"``, ``"all features"``), ``eps``, ``classifier``,
    ``accuracy`` (mean over folds and noise draws) and ``std_error`` (over folds).

    Examples
    --------
    >>> from dpstats.simulate.felp import planted
    >>> df = planted(n=60, d=10, s=2, shift=3.0, random_state=0)
    >>> X = df.drop(columns="class").to_numpy(); y = df["class"].cat.codes.to_numpy()
    >>> tab = accuracy_vs_eps(X, y, [1.0], folds=3, n_estimators=3, noise_reps=1, select=2)
    >>> sorted(tab["selection"].unique())
    ['all features', 'non-private', 'paper', 'strict']
    """
    from sklearn.model_selection import StratifiedKFold
    from tqdm.auto import tqdm

    X, y = np.asarray(X, float), np.asarray(y)
    d = X.shape[1]
    select = m.default_select(d) if select is None else select
    gen = np.random.default_rng(random_state)
    cv = StratifiedKFold(folds, shuffle=True, random_state=random_state)
    records = []
    splits = list(cv.split(X, y))
    for fold, (train, test) in enumerate(tqdm(splits, disable=not progress, desc="folds")):
        box = m.data_box(X[train])
        U_tr, _ = m.scale_features(X[train], box)
        U_te, _ = m.scale_features(X[test], box)
        records += _score_all(U_tr, y[train], U_te, y[test], fold, "all features", math.inf, np.arange(d))
        for variant in variants:
            spec = m.EnsembleSpec(n_estimators=n_estimators, sample_ratio=sample_ratio, variant=variant)
            fit = m.ensemble(U_tr, y[train], lam, gen=gen, spec=spec)
            if variant == variants[0]:
                cols = m.rank_features(fit.w_mean)[:select]
                records += _score_all(U_tr, y[train], U_te, y[test], fold, "non-private", math.inf, cols)
            sens = (
                m.paper_sensitivity(len(train), lam)
                if variant == "paper"
                else m.strict_sensitivity(m.default_clip_norm(lam), n_estimators)
            )
            for eps in eps_grid:
                for _ in range(noise_reps):
                    noisy = FastNoise(gen).l2_laplace(fit.w_mean, sens / eps)
                    cols = m.rank_features(noisy)[:select]
                    records += _score_all(U_tr, y[train], U_te, y[test], fold, variant, eps, cols)
    return _summarise(pd.DataFrame.from_records(records), eps_grid)


def _score_all(U_tr, y_tr, U_te, y_te, fold, selection, eps, cols) -> list[dict]:
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    out = []
    for name, clf in (("SVM (C = 1)", SVC(C=1.0)), ("3-NN", KNeighborsClassifier(3))):
        clf.fit(U_tr[:, cols], y_tr)
        out.append(
            {
                "fold": fold,
                "selection": selection,
                "eps": eps,
                "classifier": name,
                "accuracy": float((clf.predict(U_te[:, cols]) == y_te).mean()),
            }
        )
    return out


def _summarise(raw: pd.DataFrame, eps_grid) -> pd.DataFrame:
    per_fold = raw.groupby(["selection", "eps", "classifier", "fold"], as_index=False)["accuracy"].mean()
    tab = per_fold.groupby(["selection", "eps", "classifier"], as_index=False).agg(
        accuracy=("accuracy", "mean"), std_error=("accuracy", lambda a: a.std(ddof=1) / math.sqrt(len(a)))
    )
    return tab


def wide_table(tab: pd.DataFrame) -> pd.DataFrame:
    """One row per (classifier, selection), one column per eps (inf = non-private / all features)."""
    wide = tab.pivot_table(index=["classifier", "selection"], columns="eps", values="accuracy")
    wide.columns = [("inf" if math.isinf(c) else f"eps={c:g}") for c in wide.columns]
    return wide.reset_index()


def selection_stability(
    w: np.ndarray, select: int, scale: float, gen: np.random.Generator, trials: int = 200
) -> tuple[float, float]:
    """Plug-in stability of the top-``select`` set: mean overlap when fresh noise is added.

    Treats the released weights as the truth (post-processing only) and
    returns the mean share of the top-``select`` set that a re-noised vector
    keeps, with its Monte Carlo standard error.
    """
    top = set(m.rank_features(w)[:select].tolist())
    noise = FastNoise(gen)
    shares = np.empty(trials)
    for t in range(trials):
        noisy = noise.l2_laplace(w, scale) if scale > 0 else w
        shares[t] = len(top & set(m.rank_features(noisy)[:select].tolist())) / select
    return float(shares.mean()), float(shares.std(ddof=1) / math.sqrt(trials))
