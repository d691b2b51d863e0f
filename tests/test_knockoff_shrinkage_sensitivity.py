"""dp_knockoff's Method II sensitivity is derived for the construction used: ridge ω² and s = 'equi'.

The derivation is in the module docstring of ``dpstats.methods.knockoff.mechanism`` ("Ridge", and
λ_G for s = 'equi').  These tests check it against neighbouring pairs (replace one row), with the
Haar draw g coupled across the pair (Ũᵀy = ρg, as the derivation couples it):

* s = 'equi' with λ_min(Σ′) read from the rows: a neighbour whose λ_min(Σ′) falls to 1/2 has a
  nearly singular G; its coefficients moved by 36 times the Δ₂ taken at the data set's own
  λ_min (before λ_G was bounded over the neighbours), and stay within the Δ₂ used now;
* the ridge's shrunk signal M⁻¹Gβ̄ (noise-free responses) moves by more than eq. (31)'s shift of β̄,
  the only signal term of the unshrunk derivation, and within the shift plus the ridge term; with
  ω² = 0 the same search stays within eq. (31) (the search has power and the bound is not vacuous);
* with declared bounds, a search over adversarial replaced rows (ridge > 0, s = 'lambda_min' and
  'equi') stays within the Δ₂ the front door calibrates with;
* the declared c_min and lambda_min are assumptions, not checks: a neighbour that breaks either gives
  the same messages, shapes, ledger, noise scales and charge as the data set that keeps them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods.knockoff import filter as ko
from dpstats.methods.knockoff import mechanism as kd

from knockoff_spy import mechanism_inputs
from neighbours import assert_same_view, reader_view

D2_KEY = "Delta2 (coefficients, l2)"


def _frame(X: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    out = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    out.insert(0, "y", y)
    return out


def _captured(frame: pd.DataFrame, **kwargs) -> tuple:
    """(statistics, s, scales) the front door hands to run_mechanism for ``frame`` (Method II)."""
    return mechanism_inputs(
        lambda: dp.dp_knockoff("y ~ .", frame, method="II", random_state=0, oc_trials=0, **kwargs)
    )


def _coefficients(st: ko.Normalised, s: float, g: np.ndarray, ridge: float) -> np.ndarray:
    """b = (G + ω²I)⁻¹[X′ X̃′]ᵀy without noise, the Haar draw g shared by neighbours (Ũᵀy = ρg)."""
    v = ko.knockoff_cross_products(st, s, uty=math.sqrt(st.rss) * g)
    return ko.solve(ko.augmented_gram(st.sigma, s) + ridge * np.eye(2 * st.p), v)


def _haar_draws(rng: np.random.Generator, n: int, p: int, count: int) -> list[np.ndarray]:
    """``count`` draws of g = z/√(‖z‖² + χ²_{n−2p}) (filter.haar_uty without ρ)."""
    out = []
    for _ in range(count):
        z = rng.standard_normal(p)
        out.append(z / math.sqrt(z @ z + rng.chisquare(n - 2 * p)))
    return out


def _largest_move(pairs, draws, ridge: float) -> float:
    """The largest ‖b(D) − b(D′)‖ over captured pairs and coupled Haar draws."""
    return max(
        float(np.linalg.norm(_coefficients(st1, s1, g, ridge) - _coefficients(st2, s2, g, ridge)))
        for (st1, s1), (st2, s2) in pairs
        for g in draws
    )


def _design(n: int, p: int, rho: float, seed: int) -> np.ndarray:
    """n rows whose normalised Gram matrix is exactly the equicorrelation matrix with ρ (unit columns
    scaled to √n): eigenvalues 1 − ρ (p − 1 times) and 1 + (p − 1)ρ."""
    rng = np.random.default_rng(seed)
    corr = (1 - rho) * np.eye(p) + rho * np.ones((p, p))
    q, _ = np.linalg.qr(rng.standard_normal((n, p)))
    return math.sqrt(n) * q @ np.linalg.cholesky(corr).T


def _lambda_min(X: np.ndarray) -> float:
    return ko.normalise(X.shape[0], X.T @ X, np.zeros(X.shape[1]), 0.0).lambda_min


# ------------------------------------------------------------------ s = 'equi', λ_min read from the rows


def _equi_pair() -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """D (λ_min(Σ′) = 0.51, so s = 1 and λ_min(G) = 2·0.51 − 1 = 0.02) and a neighbour D′ whose one
    replaced row (norm <= B, response from the model) brings λ_min(Σ′) to 1/2 + 5e-9, so that its G has
    the eigenvalue 2λ_min − 1 = 1e-8."""
    n, p = 400, 4
    X = _design(n, p, 0.49, seed=5)
    rng = np.random.default_rng(6)
    beta = np.array([0.5, 0.0, 0.0, 0.0])
    w = rng.standard_normal(n)
    B = float(np.linalg.norm(X, axis=1).max())
    top = np.linalg.eigh(X.T @ X)[1][:, -1]

    def replaced(i: int, x: np.ndarray) -> np.ndarray:
        out = X.copy()
        out[i] = x
        return out

    i = min(range(n), key=lambda r: _lambda_min(replaced(r, B * top)))  # the row whose loss hurts most
    assert _lambda_min(replaced(i, B * top)) < 0.5 < _lambda_min(X)
    lo, hi = 0.0, 1.0  # x(t) = (1 − t)·B·top + t·x_i: norm <= B, λ_min(Σ′) from below 1/2 to 0.51
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (
            (mid, hi)
            if _lambda_min(replaced(i, (1 - mid) * B * top + mid * X[i])) < 0.5 + 5e-9
            else (lo, mid)
        )
    X2 = replaced(i, (1 - hi) * B * top + hi * X[i])
    return _frame(X, X @ beta + w), _frame(X2, X2 @ beta + w), B


def test_equi_with_lambda_min_read_from_the_rows_covers_a_neighbour_with_a_nearly_singular_gram():
    # Before λ_G was bounded over the neighbours (mechanism.gram_lambda_bound) the front door took
    # λ_min(G) = 2·λ_min(Σ′) − 1 = 0.02 of D itself: Δ₂ = 275.6 while the neighbour moved b by 1.0e4.
    d1, d2, B = _equi_pair()
    kw = dict(eps=1.0, delta=1e-3, bounds=B, sigma=1.0, beta_norm=0.5, s="equi", ridge=1e-8)
    st1, s1, scales = _captured(d1, **kw)
    st2, s2, _ = _captured(d2, **kw)
    assert s1 == s2 == 1.0  # s = min(2 λ_min, 1) on both
    assert abs(st2.lambda_min - 0.5) < 1e-6 and abs(st1.lambda_min - 0.51) < 1e-9
    draws = _haar_draws(np.random.default_rng(7), st1.n, st1.p, 20)
    moved = _largest_move([((st1, s1), (st2, s2))], draws, ridge=1e-8)
    assert moved > 1e3  # the pair is far apart: the old Δ₂ (275.6) did not cover it
    assert moved <= scales.sensitivities[D2_KEY], (moved, scales.sensitivities[D2_KEY])


# ------------------------------------------------------------------ the ridge's shrunk signal


def _signal(X: np.ndarray, beta: np.ndarray, lambda_min: float, ridge: float) -> np.ndarray:
    """M⁻¹Gβ̄ = (G + ω²I)⁻¹[X′ X̃′]ᵀXβ: b for noise-free responses (ρ = 0), s = the declared lambda_min."""
    n, p = X.shape
    y = X @ beta
    st, held = ko.floor_lambda_min(ko.normalise(n, X.T @ X, X.T @ y, rss=0.0), lambda_min)
    assert held  # the declared lambda_min holds on D and on every neighbour searched (no floor)
    v = ko.knockoff_cross_products(st, lambda_min, uty=np.zeros(p))
    return ko.solve(ko.augmented_gram(st.sigma, lambda_min) + ridge * np.eye(2 * p), v)


@pytest.mark.parametrize("ridge", [0.1, 0.2, 0.5, 1.0])
def test_the_ridge_moves_the_shrunk_signal_beyond_eq_31_and_within_the_ridge_term(ridge):
    # n = 1000, p = 6, equicorrelation 0.8 (λ_min(Σ′) = 0.2), declared lambda_min = 0.1 (its margin
    # (0.1 + η²)/(1 − η²) = 0.16 <= 0.2), B = 7 >= every row norm, β the unit eigenvector of λ_min (‖β‖ = 1).  Replaced rows:
    # ±B times each eigenvector of Σ and each coordinate axis, in the 10 rows of largest norm.
    n, p, B, lam = 1000, 6, 7.0, 0.1
    X = _design(n, p, 0.8, seed=2)
    assert np.linalg.norm(X, axis=1).max() <= B
    eigvecs = np.linalg.eigh(X.T @ X)[1]
    beta = eigvecs[:, 0]  # the direction the ridge shrinks most
    c_min = float(np.linalg.norm(X, axis=0).min())
    rows = [sign * B * u for u in (*eigvecs.T, *np.eye(p)) for sign in (1, -1)]
    where = np.argsort(-np.linalg.norm(X, axis=1))[:10]

    def moved(omega2: float) -> float:
        base = _signal(X, beta, lam, omega2)
        largest = 0.0
        for i in where:
            for x in rows:
                X2 = X.copy()
                X2[i] = x
                largest = max(largest, float(np.linalg.norm(_signal(X2, beta, lam, omega2) - base)))
        return largest

    shift = c_min - math.sqrt(c_min**2 - B**2)  # eq. (31) with ‖β‖ = 1: the unshrunk signal's move
    cal = kd.Calibration(
        p=p, B=B, c_min=c_min, c_max=math.sqrt(n) * B, lambda_min=lam, lambda_min_upper=1.0, lambda_max=p,
        fro=p, sigma=1.0, beta_norm=1.0, n=n, c_min_declared=True, lambda_declared=True, b_declared=True,
    )  # fmt: skip
    ridge_term = kd.ridge_shrinkage_shift(cal, ridge, lam + ridge)
    assert moved(0.0) <= shift * (1 + 1e-9)  # ω² = 0: β̄ itself, eq. (31) covers it
    shrunk = moved(ridge)
    assert shrunk > 1.4 * shift, (shrunk, shift)  # ω² > 0: eq. (31) alone does not (1.44 to 1.93 times)
    assert shrunk <= shift + ridge_term, (shrunk, shift, ridge_term)


# ------------------------------------------------------------------ declared bounds: adversarial search

SEARCH_N, SEARCH_P, SEARCH_B = 1000, 6, 7.0


def _search_data() -> tuple[pd.DataFrame, np.ndarray]:
    X = _design(SEARCH_N, SEARCH_P, 0.8, seed=2)
    beta = 3.0 * np.ones(SEARCH_P) / math.sqrt(SEARCH_P)
    y = X @ beta + 0.05 * np.random.default_rng(11).standard_normal(SEARCH_N)
    return _frame(X, y), beta


@pytest.mark.parametrize(
    ("s", "ridge"),
    [("lambda_min", 0.3), ("lambda_min", 3.0), ("equi", 0.5)],
    ids=["ridge 0.3", "ridge 3", "equi"],
)
def test_adversarial_neighbours_stay_within_the_delta2_used(s, ridge):
    # D follows the model (σ = 0.05 declared, ‖β‖ = 3 along the top eigenvector: the signal terms
    # dominate); c_min, lambda_min (0.1, margin 0.16 <= 0.2), B declared.  Replaced rows: ±B times each
    # eigenvector and axis, 8 random directions, in the 4 rows of largest |x'β|, with responses ±Y and
    # the model's; 10 coupled Haar draws.  The largest ‖Δb‖ must not exceed the Δ₂ of the release.
    d1, beta = _search_data()
    X = d1.iloc[:, 1:].to_numpy()
    kw = dict(
        eps=1.0, delta=1e-3, bounds=SEARCH_B, sigma=0.05, beta_norm=3.0,
        c_min=math.floor(float(np.linalg.norm(X, axis=0).min())), lambda_min=0.1, s=s, ridge=ridge,
    )  # fmt: skip
    st1, s1, scales = _captured(d1, **kw)
    delta2, Y = scales.sensitivities[D2_KEY], scales.sensitivities["response bound Y"]
    rng = np.random.default_rng(12)
    eigvecs = np.linalg.eigh(X.T @ X)[1]
    directions = [
        *eigvecs.T,
        *np.eye(SEARCH_P),
        *(r / np.linalg.norm(r) for r in rng.standard_normal((8, SEARCH_P))),
    ]
    pairs = []
    for i in np.argsort(-np.abs(X @ beta))[:4]:
        for u in directions:
            for x in (SEARCH_B * u, -SEARCH_B * u):
                for response in (Y, -Y, float(x @ beta)):
                    d2 = d1.copy()
                    d2.iloc[i, 1:] = x
                    d2.iloc[i, 0] = response
                    st2, s2, _ = _captured(d2, **kw)
                    pairs.append(((st1, s1), (st2, s2)))
    moved = _largest_move(pairs, _haar_draws(rng, SEARCH_N, SEARCH_P, 10), ridge)
    assert 0 < moved <= delta2, (moved, delta2)


# ------------------------------------------------------------------ declared c_min and lambda_min


def _declared_pair(which: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """D keeps the declared c_min and lambda_min; its neighbour (one row replaced) breaks ``which``."""
    d1, _ = _search_data()
    X = d1.iloc[:, 1:].to_numpy()
    norms = np.linalg.norm(X, axis=0)
    kw = dict(
        eps=1.0, delta=1e-3, bounds=SEARCH_B, sigma=0.05, beta_norm=3.0,
        c_min=float(norms.min()) - 1e-9, lambda_min=0.1, random_state=3, oc_trials=0,
    )  # fmt: skip
    d2 = d1.copy()
    if which == "c_min":  # the weakest column loses its largest entry: its norm falls below c_min
        j = int(np.argmin(norms))
        i = int(np.argmax(np.abs(X[:, j])))
        d2.iloc[i, 1 + j] = 0.0
        X2 = d2.iloc[:, 1:].to_numpy()
        assert np.linalg.norm(X2, axis=0).min() < kw["c_min"]
    else:  # lambda_min declared just under D's λ_min(Σ′); the neighbour's λ_min falls below it
        kw["lambda_min"] = _lambda_min(X) - 1e-9
        top = np.linalg.eigh(X.T @ X)[1][:, -1]
        i = min(range(50), key=lambda r: _lambda_min(np.vstack([X[:r], SEARCH_B * top, X[r + 1 :]])))
        d2.iloc[i, 1:] = SEARCH_B * top
        assert _lambda_min(d2.iloc[:, 1:].to_numpy()) < kw["lambda_min"]
    return d1, d2, kw


@pytest.mark.parametrize("which", ["c_min", "lambda_min"])
def test_a_neighbour_that_breaks_a_declared_assumption_looks_the_same(which):
    # No check on the rows refuses, warns or changes the plan: messages, shapes, the ledger, the noise
    # scales and the charge are equal; only released values differ.  Whether the assumption held is
    # reported only with diagnostics=True (fenced off, not private).
    d1, d2, kw = _declared_pair(which)
    views, charges = [], []
    for frame in (d1, d2):
        acc = dp.Accountant(eps=10.0, delta=1e-2)
        views.append(reader_view(dp.dp_knockoff, "y ~ .", frame, accountant=acc, **kw))
        charges.append((acc.spent_eps, acc.spent_delta, [e.to_dict() for e in acc.ledger]))
    assert_same_view(views[0], views[1], f"declared {which} broken by one row")
    assert charges[0] == charges[1]
    one, other = (v["fit"] for v in views)
    assert one.privacy.sensitivities == other.privacy.sensitivities  # unmasked: public values
    assert [e.to_dict() for e in one.privacy.ledger] == [e.to_dict() for e in other.privacy.ledger]
    assert not np.array_equal(one.coefficients, other.coefficients)  # the released values do differ
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        held = [dp.dp_knockoff("y ~ .", f, diagnostics=True, **kw).diagnostics for f in (d1, d2)]
    assert held[0][f"declared_{which}_holds"] and not held[1][f"declared_{which}_holds"]
