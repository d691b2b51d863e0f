"""Non-private limits of the selection methods against R (issue 9), through rpy2.

* ``dp_two_stage``: the per-block lasso fits (its non-private first stage) against
  ``glmnet`` (Debian r-cran-glmnet) on the same blocks, on synthetic data and on the
  Golub leukaemia data (r-bioc-multtest); and the public front door at a huge eps
  against the top-k of glmnet's vote counts.
* ``dp_gmm``: the released mixture at a huge eps (dp_gmm has no eps = inf) against
  ``mclust`` (r-cran-mclust, model "VVV") on well-separated synthetic mixtures.

R is reached only through ``dpstats.rbridge.import_robjects`` (the ``rpy2_robjects``
fixture), which keeps LD_LIBRARY_PATH clean.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score

import dpstats as dp
from dpstats.methods import two_stage as ts
from dpstats.simulate.gmm import simulate_gmm

pytestmark = pytest.mark.r

LAM = 0.1  # dp_two_stage's default penalty
ZERO = 1e-12  # |coef| at or below this is round-off (see test_block_supports_match_glmnet)

GLMNET = """function(x, n, y, lam) {
  suppressPackageStartupMessages(library(glmnet))
  X <- matrix(x, nrow = n)
  f <- glmnet(X, y, family = "gaussian", alpha = 1, lambda = lam, standardize = TRUE,
              intercept = TRUE, thresh = 1e-14, maxit = 1e7)
  as.numeric(as.matrix(f$beta))
}"""

MCLUST = """function(x, n, k) {
  suppressPackageStartupMessages(library(mclust))
  f <- Mclust(matrix(x, nrow = n), G = k, modelNames = "VVV", verbose = FALSE)
  list(mean = t(f$parameters$mean), pro = f$parameters$pro, cl = f$classification,
       sigma = as.numeric(f$parameters$variance$sigma))
}"""


# ----------------------------------------------------------------------------- helpers
def _r_function(ro, code: str):
    return ro.r(code)


def _glmnet_std(ro, X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """glmnet's lasso at ``lam``, its coefficients moved to the unit-sd scale (× sd_j, 1/n sd)."""
    beta = np.asarray(
        _r_function(ro, GLMNET)(ro.FloatVector(X.ravel(order="F")), X.shape[0], ro.FloatVector(y), lam)
    )
    return beta * X.std(axis=0)


def _objective(X: np.ndarray, y: np.ndarray, beta: np.ndarray, lam: float) -> float:
    """(1/2n)‖(y − ȳ) − Zβ‖² + lam‖β‖₁ with Z the columns standardised by their 1/n sd."""
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    r = y - y.mean() - Z @ beta
    return float(r @ r / (2 * len(y)) + lam * np.abs(beta).sum())


def _synthetic(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of different scales and non-zero means (so the standardisation matters)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d) + rng.uniform(-2, 2, d)
    y = X[:, :5] @ np.array([1.0, -1.0, 0.5, 0.5, 1.0]) + rng.standard_normal(n)
    return X, y


def _compare_blocks(ro, X, y, labels, m_blocks, solver):
    """Per block: (dpstats coef, glmnet coef on the same scale, objectives), skipping constant-y blocks."""
    out = []
    for b in range(m_blocks):
        rows = labels == b
        ours = ts.block_lasso(X[rows], y[rows], LAM, solver=solver, tol=1e-12)
        if np.ptp(y[rows]) == 0:  # glmnet refuses a constant response; the lasso solution is 0
            assert not ours.any()
            continue
        theirs = _glmnet_std(ro, X[rows], y[rows], LAM)
        out.append(
            (ours, theirs, _objective(X[rows], y[rows], ours, LAM), _objective(X[rows], y[rows], theirs, LAM))
        )
    return out


def _golub_xy():
    df = dp.evaluate.golub()
    return df.drop(columns="y").to_numpy(float), df["y"].to_numpy(float)


# ----------------------------------------------------------------------- dp_two_stage
@pytest.mark.parametrize("data", ["synthetic", "golub"])
@pytest.mark.parametrize("solver", ["lars", "cd"])
def test_block_supports_match_glmnet(rpy2_robjects, data, solver):
    """Each block's lasso support equals glmnet's; coefficients agree to 5e-4.

    The mapping.  dpstats' ``block_lasso`` centres y and the columns, divides each
    column by its 1/n standard deviation s_j within the block, and minimises
    scikit-learn's (1/2n_b)‖y − ȳ − Zβ‖² + α‖β‖₁ with α = lam; the coefficients are
    kept on the standardised scale.  glmnet (family "gaussian", alpha = 1) minimises
    (1/2n_b)‖y − β₀ − Xb‖² + λ‖b‖₁ with, under ``standardize = TRUE``, the penalty on
    the standardised coefficients s_j b_j (its s_j is the 1/n sd too) and b reported on
    the original scale; the intercept is unpenalised, i.e. centring.  So with
    λ = α = lam the two solve the same problem and β_j = s_j b_j.  glmnet also scales
    y internally by its sd but rescales λ with it, so λ stays on the scale of y.

    Tolerances.  The objectives agree to 1e-9 (relative): that is the precise statement.
    The blocks have fewer rows than columns, where the objective is flat in some
    directions, so glmnet's coordinate descent (thresh = 1e-14) still leaves coefficient
    differences up to about 1e-4 on the unit-sd scale; 5e-4 is the stated tolerance.
    LARS (the default solver) can leave a coefficient at round-off size (~1e-17) for a
    variable at the point of entering or leaving the active set; supports are compared
    after treating |β| <= 1e-12 as zero, and such entries are asserted to be round-off.
    """
    ro = rpy2_robjects
    if data == "synthetic":
        X, y = _synthetic(200, 80, seed=1)
    else:
        X, y = _golub_xy()
    n_blocks = ts.default_blocks(len(y))
    labels = ts.block_labels(len(y), n_blocks, "replace", np.random.default_rng(3))
    fits = _compare_blocks(ro, X, y, labels, n_blocks, solver)
    assert len(fits) >= n_blocks - 1
    for ours, theirs, obj_ours, obj_theirs in fits:
        support_ours = np.flatnonzero(np.abs(ours) > ZERO)
        support_r = np.flatnonzero(theirs)
        assert support_ours.tolist() == support_r.tolist()
        assert np.all(np.abs(ours[theirs == 0]) <= ZERO)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=5e-4)
        assert abs(obj_ours - obj_theirs) <= 1e-9 * obj_theirs


def test_vote_counts_match_glmnet_votes(rpy2_robjects):
    """The vote counts (top-k |coef| per block, and whole supports) from dpstats' default
    LARS fits equal those from glmnet's fits on the same blocks (synthetic data and Golub).
    Round-off coefficients (|β| <= 1e-12, see above) are zeroed first for the support vote."""
    ro = rpy2_robjects
    for X, y in (_synthetic(200, 80, seed=2), _golub_xy()):
        n_blocks = ts.default_blocks(len(y))
        labels = ts.block_labels(len(y), n_blocks, "replace", np.random.default_rng(5))
        ours = ts.block_coefficients(X, y, labels, n_blocks, ts.Lasso(LAM))
        theirs = np.zeros_like(ours)
        for b in range(n_blocks):
            rows = labels == b
            if np.ptp(y[rows]) > 0:
                theirs[b] = _glmnet_std(ro, X[rows], y[rows], LAM)
        for k in (1, 3, 5):
            np.testing.assert_array_equal(ts.vote_counts(ours, k), ts.vote_counts(theirs, k))
        cleaned = np.where(np.abs(ours) > ZERO, ours, 0.0)
        np.testing.assert_array_equal(
            ts.vote_counts(cleaned, 0, "support"), ts.vote_counts(theirs, 0, "support")
        )


def test_dp_two_stage_huge_eps_selects_glmnet_topk(rpy2_robjects):
    """The public front door at eps = 1e6 (no eps = inf is offered), with the row order kept
    (``shuffle=False``: contiguous blocks, independent of the seed) selects the k features
    with the most glmnet votes.  Precondition (asserted): the k-th and (k+1)-th counts differ,
    so the exact top-k is unique; the canonical-Lipschitz selector's error probability at
    eps = 1e6 with a gap of one vote is below 1e-100."""
    import pandas as pd

    ro = rpy2_robjects
    X, y = _synthetic(400, 30, seed=4)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])]).assign(y=y)
    k, n_blocks = 4, 20
    labels = ts.block_labels(len(y), n_blocks, "replace", None, shuffle=False)
    coefs = np.array([_glmnet_std(ro, X[labels == b], y[labels == b], LAM) for b in range(n_blocks)])
    counts = ts.vote_counts(coefs, k)
    top = np.argsort(-counts, kind="stable")
    assert counts[top[k - 1]] > counts[top[k]], counts
    expected = sorted(f"x{j + 1}" for j in top[:k])
    for seed in (1, 2):
        fit = dp.dp_two_stage(
            "y ~ .", df, eps=1e6, k=k, blocks=n_blocks, shuffle=False, random_state=seed, oc_trials=0
        )
        assert sorted(fit.selected) == expected


# ------------------------------------------------------------------------------ dp_gmm
def _mclust(ro, X: np.ndarray, k: int):
    res = _r_function(ro, MCLUST)(ro.FloatVector(X.ravel(order="F")), X.shape[0], k)
    d = X.shape[1]
    means = np.asarray(res[0])
    weights = np.asarray(res[1])
    labels = np.asarray(res[2]).astype(int)
    covs = np.asarray(res[3]).reshape((d, d, k), order="F").transpose(2, 0, 1)
    return weights, means, covs, labels


GMM_CASES = [  # (n, d, k, seed, simulate_gmm options)
    (6000, 2, 3, 0, {}),
    (8000, 4, 3, 1, {}),
    (10000, 5, 4, 2, {}),
    (8000, 3, 3, 5, {"scales": (0.5, 1.0, 2.0), "anisotropy": 3.0, "radius": 12.0}),
]


@pytest.mark.parametrize("method", ["pca_cluster", "sample_aggregate"])
@pytest.mark.parametrize("case", GMM_CASES, ids=lambda c: f"n{c[0]}-d{c[1]}-k{c[2]}-s{c[3]}")
def test_dp_gmm_huge_eps_matches_mclust(rpy2_robjects, method, case):
    """dp_gmm at eps = 1e6 (delta = 1e-6; it offers no eps = inf and no non-private path)
    against mclust's EM (model "VVV": full covariances) on well-separated mixtures.

    Components are matched by the Hungarian method on squared mean distances.  Stated
    tolerances: ARI between dp_gmm's predict() labels and mclust's classification >= 0.99;
    each matched mean within 0.03 of the component's largest sd; weights within 0.005;
    covariance entries within 0.05 × (largest variance).  What remains at this eps is not
    noise but the algorithm: pca_cluster's final means/covariances are those of the hard
    most-probable partition (a hard-EM step), not mclust's soft-EM maximum likelihood, and
    sample_aggregate averages per-group EM fits."""
    ro = rpy2_robjects
    n, d, k, seed, opts = case
    df, _ = simulate_gmm(n, d=d, k=k, random_state=seed, **opts)
    X = df.to_numpy(float)
    w_r, mu_r, cov_r, cl_r = _mclust(ro, X, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_gmm(
            "~ .",
            df,
            k=k,
            eps=1e6,
            delta=1e-6,
            bounds=(-20, 20),
            method=method,
            random_state=seed,
            oc_trials=0,
        )
    cost = ((fit.means[:, None] - mu_r[None]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(cost)
    sd = np.sqrt([np.linalg.eigvalsh(c).max() for c in cov_r[cols]])
    assert adjusted_rand_score(cl_r, np.asarray(fit.predict(X))) >= 0.99
    assert np.all(np.sqrt(cost[rows, cols]) <= 0.03 * sd)
    assert np.all(np.abs(fit.weights[rows] - w_r[cols]) <= 0.005)
    for i, j, s in zip(rows, cols, sd):
        assert np.abs(fit.covariances[i] - cov_r[j]).max() <= 0.05 * s**2
