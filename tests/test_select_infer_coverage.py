"""dp_select_infer's part-B intervals cover the selected model's projection coefficients (slow).

The estimand.  Part B fits the selected terms S on rows the selection never read, so, given S, its
intervals are for the coefficients of the model S itself: the population projection of the response
on the intercept and S (what ``lm`` or ``glm`` of the selected formula estimates), not the full model's
coefficients.  Where S omits a true term correlated with a selected one the two differ
(omitted-variable bias is part of the estimand, not an error of the interval).  The tests below
choose a design where nearly every run omits a true term, and check coverage of the projection.

Design: d = 10 equicorrelated columns x_j = √(1 − r) u_j + √r w, u_j and w independent
Uniform(−1, 1), r = 0.5, so Σ = ((1 − r) I + r 11ᵀ)/3 and |x_j| ≤ √(1 − r) + √r (the declared bounds:
nothing is clipped).  Coefficients β = (1, −1, 0.8, 0, ..., 0): x2's covariance with the response,
((1 − r)β₂ + r Σβ)/3 = −0.033, is below every null column's (0.133), so dp_sis with k = 3 keeps x1, x3
and a null in nearly every run, and dp_two_stage with k = 2 keeps two of the three true terms: at
least 90% of the runs omit a true term (asserted), and the full model's coefficients are covered far
below the nominal rate (asserted below 0.9; 0.28 to 0.78 measured).

* ``infer="lm"``: y = 0.5 + xᵀβ + N(0, 1), n = 4000, eps = 5 (at eps = 1 the intervals are so wide that
  the omitted-variable bias hardly moves coverage: the check would not tell the two estimands apart); the
  target of S is Σ_SS⁻¹ Σ_S· β (exact).
* ``infer="glm"`` (binomial): rows drawn uniformly from K = 2000 support points of the design (a fixed
  population, drawn once with seed 7), logit P(y = 1) = −0.3 + xᵀβ, n = 8000, eps = 1; the target of S
  is the logistic fit of S to the population's probabilities on the support points (exact for that
  population), by statsmodels' GLM, not dpstats' IRLS.

delta = 1e-6, n_boot = 200 (dp_lm), declared bounds; random_state = run index, data seed 101 + cell
index; 300 // k runs, so 300 intervals per cell.  Coverage must lie in [0.92, 0.98]: at 0.95 the
binomial standard error of 300 independent intervals is 0.0126, so the band is ±2.4 of them (the
intervals of one run are correlated, which widens the spread a little).  About 30 s of CPU in all.
Measured when written (``-s`` prints the rows): coverage of the projection sis/lm 0.953, two_stage/lm
0.940, sis/glm 0.957, two_stage/glm 0.960; of the full model's coefficients 0.507, 0.283, 0.777, 0.427.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpstats as dp

pytestmark = pytest.mark.slow

D, R = 10, 0.5
BETA = np.r_[1.0, -1.0, 0.8, np.zeros(D - 3)]
NAMES = [f"x{j + 1}" for j in range(D)]
SIGMA = ((1 - R) * np.eye(D) + R * np.ones((D, D))) / 3
EDGE = np.sqrt(1 - R) + np.sqrt(R)  # |x_j| <= EDGE
INTERVALS = 300  # per cell: 300 // k runs
# (select, infer, k, n, eps, y bounds)
CELLS = [
    ("sis", "lm", 3, 4000, 5.0, (-6.0, 7.0)),
    ("two_stage", "lm", 2, 4000, 5.0, (-6.0, 7.0)),
    ("sis", "glm", 3, 8000, 1.0, (0.0, 1.0)),
    ("two_stage", "glm", 2, 8000, 1.0, (0.0, 1.0)),
]


def _design(n: int, rng: np.random.Generator) -> np.ndarray:
    u, w = rng.uniform(-1, 1, (n, D)), rng.uniform(-1, 1, (n, 1))
    return np.sqrt(1 - R) * u + np.sqrt(R) * w


SUPPORT = _design(2000, np.random.default_rng(7))  # the glm cells' population
SUPPORT_P = 1 / (1 + np.exp(-(-0.3 + SUPPORT @ BETA)))


def _lm_rows(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _design(n, rng)
    return X, 0.5 + X @ BETA + rng.normal(0, 1, n)


def _glm_rows(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    at = rng.integers(len(SUPPORT), size=n)
    return SUPPORT[at], (rng.uniform(size=n) < SUPPORT_P[at]).astype(float)


def lm_projection(columns: list[str]) -> np.ndarray:
    """Slopes of the population least-squares projection of y on the intercept and ``columns``."""
    s = [NAMES.index(c) for c in columns]
    return np.linalg.solve(SIGMA[np.ix_(s, s)], SIGMA[s] @ BETA)


def glm_projection(columns: list[str]) -> np.ndarray:
    """Slopes of the population logistic projection: the binomial fit to the support points' probabilities."""
    s = [NAMES.index(c) for c in columns]
    fit = sm.GLM(SUPPORT_P, sm.add_constant(SUPPORT[:, s]), family=sm.families.Binomial()).fit(tol=1e-12)
    return np.asarray(fit.params)[1:]


@pytest.mark.parametrize(("select", "infer", "k", "n", "eps", "y_bounds"), CELLS)
def test_part_b_intervals_cover_the_selected_models_projection(select, infer, k, n, eps, y_bounds):
    rng = np.random.default_rng(101 + CELLS.index((select, infer, k, n, eps, y_bounds)))
    projection = lm_projection if infer == "lm" else glm_projection
    bounds = {**{c: (-EDGE, EDGE) for c in NAMES}, "y": y_bounds}
    extra = {"n_boot": 200} if infer == "lm" else {"infer": "glm", "family": "binomial"}
    covered, full, omitting = [], [], 0
    runs = INTERVALS // k
    for run in range(runs):
        X, y = (_lm_rows if infer == "lm" else _glm_rows)(n, rng)
        df = pd.DataFrame(X, columns=NAMES).assign(y=y)
        res = dp.dp_select_infer(
            "y ~ .", df, eps=eps, delta=1e-6, select=select, k=k, bounds=bounds, random_state=run, **extra
        )
        tab = res.tidy().set_index("term").drop("(Intercept)")
        low, high = tab["conf.low"].to_numpy(), tab["conf.high"].to_numpy()
        target = projection(list(tab.index))
        covered.extend((low <= target) & (target <= high))
        truth = BETA[[NAMES.index(c) for c in tab.index]]
        full.extend((low <= truth) & (truth <= high))
        omitting += not set(NAMES[:3]) <= set(tab.index)
    coverage = float(np.mean(covered))
    print(
        f"\n| {select} | {infer} | k = {k} | eps = {eps:g} | {coverage:.3f} | {len(covered)} | full model {np.mean(full):.3f} |"
    )
    assert omitting >= 0.9 * runs and len(covered) == INTERVALS  # the target is not the full model's
    assert 0.92 <= coverage <= 0.98, coverage
    assert np.mean(full) < 0.9  # the full model's coefficients are not what the intervals cover
