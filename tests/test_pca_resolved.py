"""dp_pca's noise level has a stated level, and "resolved" means the loading is meaningful (audit s15-stat3,
F01: at the old level 2σ√d/(n − 1), about the mean of the largest noise eigenvalue, pure noise was shown as
not below the noise level in 6% (d = 4) and 10.5% (d = 20) of releases, and the iris twin's PC2, whose
variance is a quarter of that level, in 22% of releases at eps = 1 with its loading 61° (median) from the
truth).

The level (:mod:`dpstats.methods.pca`): a public bound that noise alone (the Analyze Gauss noise and the
released mean's) reaches in at most 5% of releases.  Resolved: at or above it, and the released gap to each
neighbouring variance at least 2σ(√d + √ln 40)/(n − 1), a bound on the Analyze Gauss noise's norm; the
loading is then within about 30° of the noiseless one.

Designs (box (0, 8), delta = 1e-6, random_state = release index, 100 releases per cell):

* pure noise: every column 4 (the box's midpoint) or 7.5 (far from it, where the noise of the released mean
  counts), plus N(0, 1e-6) jitter, data seed 0; d = 4 and 20; eps = 1.
* the iris twin: R's iris measurements resampled to n = 2000 (seed 0); truth eigen(cov(X)) (numpy; the box
  clips nothing), PC1 variance 4.08, PC2 0.223.
* a nearly tied pair: d = 4, covariance Q diag(1, 0.9, 0.05, 0.02) Qᵀ on a random rotation (seed 7), mean at
  the box's midpoint, n = 2000, rows clipped to the box before the fit, truth eigen(cov(clipped rows)).

The angle bound stated and checked is 30°.  Measured (new code): pure noise above the level and resolved
0/100 in every cell; iris PC1 resolved 100/100 at eps 1 and 4 (angle median 4.9° and largest 13.2° at
eps = 1), PC2 0/100; the pair above the noise level in 100/100 at eps = 4 with angles below 30° in only 76%
(90th percentile 45°), resolved 0/100, and resolved 100/100 at eps = 64 (90th percentile 5°).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.rbridge import load_r_dataset

RELEASES = 100
ANGLE = 30.0  # degrees: the bound print states for a resolved loading


def _fits(data: pd.DataFrame, k: int, eps: float, **kw) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            dp.dp_pca("~ .", data, k=k, eps=eps, delta=1e-6, bounds=(0, 8), random_state=r, **kw)
            for r in range(RELEASES)
        ]


def _angles(fit, truth: np.ndarray) -> np.ndarray:
    """Degrees between each released loading and the noiseless one (sign-free)."""
    k = fit.basis.shape[1]
    cos = np.abs(np.sum(np.asarray(fit.basis) * truth[:, :k], axis=0))
    return np.degrees(np.arccos(np.clip(cos, 0.0, 1.0)))


def _truth(X: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(np.cov(X.T))
    return vectors[:, np.argsort(values)[::-1]]


@pytest.fixture(scope="module")
def iris_twin() -> pd.DataFrame:
    iris = load_r_dataset("iris", "datasets").iloc[:, :4]
    return iris.iloc[np.random.default_rng(0).integers(0, 150, 2000)].reset_index(drop=True)


@pytest.mark.parametrize(
    "d, value, kw",
    [
        (4, 4.0, {}),
        (20, 4.0, {}),
        (4, 7.5, {}),
        (4, 7.5, {"neighbouring": "add_remove"}),
        (4, 4.0, {"center": "midpoint"}),
    ],
)
def test_pure_noise_reaches_the_noise_level_in_at_most_5_percent_of_releases(d, value, kw):
    """The level is a bound at 95%: noise alone reaches it (PC1 not below it) in at most 5 of 100 releases,
    and is resolved as rarely.  The old level: 6% and 10.5% at the midpoint, about half at 7.5."""
    jitter = np.random.default_rng(0).normal(size=(2000, d))
    data = pd.DataFrame(value + 1e-3 * jitter, columns=[f"v{j}" for j in range(d)])
    fits = _fits(data, 1, 1.0, **kw)
    above = np.mean([not f.below_noise()[0] for f in fits])
    resolved = np.mean([f.resolved()[0] for f in fits])
    assert above <= 0.05 and resolved <= 0.05, (above, resolved)


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_iris_twin_resolves_pc1_and_a_resolved_loading_is_within_30_degrees(iris_twin, eps):
    """PC1 (variance 4.08) is resolved in at least 95 of 100 releases; every (release, component) marked
    resolved has its loading within 30° of eigen(cov(X))'s in at least 90% of cases.  The old mark showed
    PC2 (variance 0.223) in 22% (eps = 1) and 70% (eps = 4) of releases, 61° and 30° off (median)."""
    truth = _truth(iris_twin.to_numpy(float))
    fits = _fits(iris_twin, 2, eps)
    resolved = np.array([f.resolved() for f in fits])
    angles = np.array([_angles(f, truth) for f in fits])
    assert resolved[:, 0].mean() >= 0.95
    assert np.mean(angles[resolved] < ANGLE) >= 0.9
    assert resolved[:, 1].mean() <= 0.05  # PC2's loading is noise at n = 2000 (the audit: 61° off)


def test_a_nearly_tied_pair_is_above_the_noise_level_but_not_resolved():
    """Variances 1 and 0.9: both well above the noise level at eps = 4, yet their loadings are more than 30°
    off in about a quarter of releases, so the level alone would not mean "meaningful loading"; the gap rule
    resolves neither there, and both at eps = 64, within 30°."""
    g = np.random.default_rng(7)
    rotation, _ = np.linalg.qr(g.normal(size=(4, 4)))
    cov = rotation @ np.diag([1.0, 0.9, 0.05, 0.02]) @ rotation.T
    X = np.clip(g.multivariate_normal(np.full(4, 4.0), cov, size=2000), 0, 8)
    data, truth = pd.DataFrame(X, columns=list("abcd")), _truth(X)
    fits = _fits(data, 2, 4.0)
    above = np.array([~f.below_noise() for f in fits])
    angles = np.array([_angles(f, truth) for f in fits])
    assert above.mean() >= 0.95 and np.mean(angles[above] < ANGLE) < 0.9
    assert np.array([f.resolved() for f in fits]).mean() <= 0.05
    sharp = _fits(data, 2, 64.0)
    resolved = np.array([f.resolved() for f in sharp])
    assert resolved.mean() >= 0.95
    assert np.mean(np.array([_angles(f, truth) for f in sharp])[resolved] < ANGLE) >= 0.9


def test_print_tidy_glance_and_report_name_the_same_resolved_components(iris_twin):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_pca("~ .", iris_twin, k=3, eps=8.0, delta=1e-6, bounds=(0, 8), random_state=3)
    resolved = fit.resolved()
    names = ", ".join(f"PC{j + 1}" for j in np.flatnonzero(resolved)) or "none"
    level = fit.separation_level()
    line = (
        f"Resolved (at or above the noise level and at least {level:.4g} from each neighbouring variance, "
        f"so the loadings are within about 30° of the noiseless ones): {names}."
    )
    assert line in str(fit) and line in str(fit.summary())
    tidy = fit.tidy().drop_duplicates("component")
    np.testing.assert_array_equal(tidy["resolved"].to_numpy(), resolved)
    assert fit.glance()["separation_level"].iloc[0] == pytest.approx(level, rel=1e-12)
    assert "<th scope='row'>Resolved</th>" in fit._importance_html()
    # the third component's gap is to the fourth eigenvalue of the released matrix (post-processing)
    assert fit.next_eigenvalue is not None and fit.next_eigenvalue <= fit.eigenvalues[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = dp.dp_pca("~ .", iris_twin, k=2, eps=np.inf)
    assert ref.resolved().all() and "Resolved" not in str(ref)
