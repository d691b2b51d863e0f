"""vertical_glm DP mode for family='gaussian' with a ridge penalty: ledger, noise scales, audit, accuracy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import audit as A
from dpstats.errors import BudgetExceededError, PrivacyParameterError
from dpstats.methods import privreg as m
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.randomness import NoiseSource

PARTIES = [["x1", "x2"], ["x3", "x4"]]
BOUNDS = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "x4": (-1, 1), "y": (-3, 3)}


def make_data(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1.2, 1.2, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["y"] = 0.3 + df.x1 - df.x3 + 0.5 * df.x2 + 0.5 * rng.standard_normal(n)
    return df


def expected(n: int, lam: float, C: float, K: int = 2) -> list[tuple[float, float]]:
    """Per-party (Δ₂(η), Δ₂(β)) written out from the derivation (party 1 holds the intercept)."""
    out = []
    for R in (math.sqrt(3.0), math.sqrt(2.0)):
        G = R * (3.0 + (K - 1) * C) * (1 + R / math.sqrt(lam))
        d_beta = 2 * G / (n * lam)
        out.append((math.sqrt(4 * C**2 + n * (R * d_beta) ** 2), d_beta))
    return out


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_ledger_sums_to_budget_and_states_the_sensitivity():
    df = make_data()
    acc = dp.Accountant(eps=1.5, delta=1e-5)
    kw = dict(
        parties=PARTIES, penalty="ridge", lam=0.1, bounds=BOUNDS, rounds=5, eta_clip=2.0, random_state=3
    )
    fit = dp.vertical_glm("y ~ .", df, eps=1.0, delta=1e-6, accountant=acc, **kw)
    led = fit.privacy.ledger
    assert math.isclose(sum(e.eps for e in led), 1.0) and math.isclose(sum(e.delta for e in led), 1e-6)
    assert math.isclose(acc.spent_eps, 1.0) and math.isclose(acc.spent_delta, 1e-6)
    assert fit.iterations == 5 and fit.coefficients["std_error"].isna().all()
    for d_eta, d_beta in expected(2000, 0.1, 2.0):
        assert f"Δ₂(η)={d_eta:.4g}, Δ₂(β)={d_beta:.4g}" in led[0].sensitivity
    assert "B_y=3" in led[0].sensitivity
    assert "y clipped" in " ".join(fit.privacy.assumptions)
    with pytest.raises(BudgetExceededError):  # refused second call spends nothing
        dp.vertical_glm("y ~ .", df, eps=1.0, delta=1e-6, accountant=acc, **kw)
    assert math.isclose(acc.spent_eps, 1.0)


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_front_door_noise_scales_are_the_derived_ones(monkeypatch):
    """Every Gaussian release uses σ = Δ₂/√(2ρ_release) with ρ split as planned (exact to 1e-12)."""
    scales: list[float] = []
    orig = NoiseSource.gaussian

    def spy(self, value, scale):
        scales.append(float(scale))
        return orig(self, value, scale)

    monkeypatch.setattr(NoiseSource, "gaussian", spy)
    T, K, share, lam, C = 3, 2, 0.2, 0.5, 1.5
    dp.vertical_glm(
        "y ~ .",
        make_data(),
        parties=PARTIES,
        penalty="ridge",
        lam=lam,
        bounds=BOUNDS,
        rounds=T,
        eta_clip=C,
        coef_share=share,
        eps=2.0,
        delta=1e-6,
        random_state=1,
    )
    rho = gaussian_rho_from_eps_delta(2.0, 1e-6)  # every release Gaussian: the exact conversion
    sens = expected(2000, lam, C)
    want_eta = [sens[k][0] / math.sqrt(2 * (1 - share) * rho / (K * T)) for k in range(K)] * T
    want_beta = [sens[k][1] / math.sqrt(2 * share * rho / K) for k in range(K)]
    np.testing.assert_allclose(scales, want_eta + want_beta, rtol=1e-12)
    # zCDP composition: the releases' ρ = Δ²/(2σ²) add up to the total ρ
    assert math.isclose(
        sum(d[0] ** 2 / (2 * s**2) for d, s in zip(sens * T, want_eta))
        + sum(d[1] ** 2 / (2 * s**2) for d, s in zip(sens, want_beta)),
        rho,
        rel_tol=1e-12,
    )


def test_released_noise_sample_sd_matches_sigma():
    """Released η_k = clip(X_kβ_k) + N(0, σ_η²), β_k + N(0, σ_β²): sample sds within 5% (fixed seed)."""
    df = make_data(n=4000)
    X = np.column_stack([np.ones(4000), df[["x1", "x2"]].clip(-1, 1).to_numpy()])
    y = df.y.clip(-3, 3).to_numpy()
    block = m.LocalBlock(
        X,
        y,
        m.FAMILIES["gaussian"],
        m.Penalty("ridge", 0.1),
        np.ones(3),
        2,
        se="none",
        sigma_eta=1.7,
        eta_clip=0.5,
        noise=NoiseSource(21),
        offset_clip=0.5,
    )
    offset = np.random.default_rng(2).normal(0, 3, 4000)  # noisy offsets are clipped before the fit
    shared, change = block.update(offset)
    assert change is None
    problem = m.BlockProblem(X, y, m.FAMILIES["gaussian"], m.Penalty("ridge", 0.1), np.ones(3))
    ref = m.fit_block(problem, np.clip(offset, -0.5, 0.5), np.zeros(3))
    np.testing.assert_allclose(block.beta, ref, rtol=1e-10)
    resid = shared - np.clip(X @ block.beta, -0.5, 0.5)
    assert abs(resid.std() / 1.7 - 1) < 0.05 and abs(resid.mean()) < 0.1
    draws = np.array([block.finish(np.zeros(4000), 1.0, sigma_beta=0.4).beta for _ in range(500)])
    assert abs((draws - block.beta).std() / 0.4 - 1) < 0.05


def _neighbours(n: int = 50, B: float = 2.0, off_bound: float = 1.0, seed: int = 0):
    """One block (intercept + x ∈ [−1, 1]), y ∈ [−B, B], offset in [−off_bound, off_bound]; replaced row at the bounds."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    off = rng.uniform(-off_bound, off_bound, n)
    y = np.clip(x + off + rng.normal(0, 0.5, n), -B, B)
    X = np.column_stack([np.ones(n), x])
    X1, X2, y1, y2 = X.copy(), X.copy(), y.copy(), y.copy()
    X1[-1, 1], y1[-1], off[-1] = 1.0, B, -off_bound
    X2[-1, 1], y2[-1] = -1.0, -B
    return (X1, y1), (X2, y2), off, math.sqrt(2.0)


@pytest.mark.parametrize("lam", [0.05, 1.0])
def test_audit_coefficient_and_predictor_release_on_row_at_bounds(lam):
    """Worst-case-style pair (row at the x and y bounds, offset at its bound): the measured change stays
    within the derived Δ₂, and the auditor does not refute (1, 1e-6) for β or η at 2·10⁴ runs."""
    eps, delta, B, off_bound, C = 1.0, 1e-6, 2.0, 1.0, 1.0
    (X1, y1), (X2, y2), off, R = _neighbours(B=B, off_bound=off_bound)
    n = len(y1)
    args = (m.FAMILIES["gaussian"], m.Penalty("ridge", lam), np.ones(2))
    b1 = m.fit_block(m.BlockProblem(X1, y1, *args), off, np.zeros(2))
    b2 = m.fit_block(m.BlockProblem(X2, y2, *args), off, np.zeros(2))
    d_eta, d_beta = m.gaussian_ridge_sensitivities(n, R, lam, C, B, off_bound)
    assert np.linalg.norm(b1 - b2) <= d_beta
    e1, e2 = np.clip(X1 @ b1, -C, C), np.clip(X2 @ b2, -C, C)
    assert np.linalg.norm(e1 - e2) <= d_eta
    rho = gaussian_rho_from_eps_delta(eps, delta)  # the door's conversion (every release Gaussian)
    for name, v1, v2, d in (("β", b1, b2, d_beta), ("η", e1, e2, d_eta)):
        sigma = d / math.sqrt(2 * rho)
        direction = (v2 - v1) / np.linalg.norm(v2 - v1)

        def run(v, n_runs, rng, sigma=sigma, direction=direction):
            return (
                NoiseSource(random_state=rng, secure=False).gaussian(np.tile(v, (n_runs, 1)), sigma)
                @ direction
            )

        case = A.AuditCase(
            name=f"vertical gaussian ridge {name} release (λ={lam:g})",
            run=run,
            d1=v1,
            d2=v2,
            eps=eps,
            delta=delta,
            neighbours="replaced row (1, 1, y=B) vs (1, −1, y=−B)",
        )
        res = A.audit(case, n_runs=20_000, random_state=9)
        assert res.passed, res


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_large_eps_approaches_nonprivate_ridge_fit():
    """At eps = 1e9 the noisy fit equals the ridge fit on the clipped data (intercept penalized, as in DP
    mode) to 0.01 absolute; at eps = 1 it is farther away."""
    df = make_data()
    lam = 0.05
    Xc = np.column_stack([np.ones(len(df)), df[["x1", "x2", "x3", "x4"]].clip(-1, 1).to_numpy()])
    yc = df.y.clip(-3, 3).to_numpy()
    ridge = np.linalg.solve(Xc.T @ Xc + len(df) * lam * np.eye(5), Xc.T @ yc)
    kw = dict(
        parties=PARTIES,
        penalty="ridge",
        lam=lam,
        bounds=BOUNDS,
        rounds=60,
        eta_clip=3.0,
        delta=1e-6,
        random_state=4,
    )
    hi = dp.vertical_glm("y ~ .", df, eps=1e9, **kw).coefficients["estimate"].to_numpy()
    lo = dp.vertical_glm("y ~ .", df, eps=1.0, **kw).coefficients["estimate"].to_numpy()
    assert np.max(np.abs(hi - ridge)) < 0.01
    assert np.max(np.abs(lo - ridge)) > np.max(np.abs(hi - ridge))


def test_refusals_poisson_missing_y_bounds_and_no_ridge():
    df = make_data(n=100)
    kw = dict(parties=PARTIES, eps=1.0, delta=1e-6, bounds=BOUNDS)
    with pytest.raises(PrivacyParameterError, match="unbounded"):
        dp.vertical_glm("y ~ .", df.assign(y=1.0), family="poisson", penalty="ridge", lam=0.1, **kw)
    with pytest.raises(PrivacyParameterError, match="penalty='ridge'"):
        dp.vertical_glm("y ~ .", df, **kw)
    no_y = {k: v for k, v in BOUNDS.items() if k != "y"}
    with pytest.raises(
        PrivacyParameterError, match=r"needs declared bounds for 'y'.*bounds={'y': \(lo, hi\)}"
    ):
        dp.vertical_glm(
            "y ~ .", df, parties=PARTIES, penalty="ridge", lam=0.1, eps=1.0, delta=1e-6, bounds=no_y
        )


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # DP mode at eps <= ~70: sigma_eta > eta_clip, warned (test_noise_dominated.py)
def test_dp_fit_releases_no_deviance_or_dispersion_from_the_raw_response():
    # the deviance and the Gaussian dispersion are functions of the raw y: a DP fit shows neither
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (400, 4))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
    df["y"] = X @ [1.0, -0.5, 0.25, 0.0] + 0.3 * rng.standard_normal(400)
    fit = dp.vertical_glm(
        "y ~ .",
        df,
        parties=[["x1", "x2"], ["x3", "x4"]],
        eps=1.0,
        delta=1e-6,
        penalty="ridge",
        lam=0.1,
        bounds=(-2, 2),
        random_state=1,
    )
    assert math.isnan(fit.deviance) and math.isnan(fit.dispersion)
    assert "not released" in str(fit) and "Dispersion parameter" not in str(fit)
    assert fit.glance()["deviance"].isna().all()


@pytest.mark.filterwarnings("ignore::dpstats.errors.ChanceWarning")
def test_dp_trace_holds_no_deviance_and_neighbours_differ_only_in_released_values():
    """Audit s15-attack8 F04: the trace kept deviance(y, η̃) of every sweep, a function of the raw y with
    no noise and no ledger entry, in ``trace`` and ``to_dict()`` (the CLI's --json, the R object).  Two
    data sets differing in row 0's y, the same seed: every noise draw is the same, so the trace and
    every unreleased output must be equal; only the released coefficients may differ."""
    df = make_data(n=400, seed=0)
    other = df.copy()
    other.loc[0, "y"] = -3.0 if df.y[0] > 0 else 3.0
    kw = dict(parties=PARTIES, penalty="ridge", lam=0.1, eps=1.0, delta=1e-5, bounds=BOUNDS, rounds=3)
    fits = [dp.vertical_glm("y ~ .", d, random_state=1, strict=True, **kw) for d in (df, other)]
    outs = [f.to_dict()["outputs"] for f in fits]
    for fit, out in zip(fits, outs):
        assert fit.trace["deviance"].isna().all() and out["trace"]["deviance"] == [None] * 3
        assert math.isnan(fit.deviance) and out["deviance"] is None
    assert outs[0]["trace"] == outs[1]["trace"]
    assert outs[0]["coefficients"]["estimate"] != outs[1]["coefficients"]["estimate"]  # released: may differ
    assert {k: v for k, v in outs[0].items() if k != "coefficients"} == {
        k: v for k, v in outs[1].items() if k != "coefficients"
    }
    # eps = inf (not private) keeps the trace's deviance: the last sweep's is the fit's deviance
    exact = dp.vertical_glm("y ~ .", df, parties=PARTIES, eps=math.inf)
    assert exact.trace["deviance"].notna().all()
    assert exact.trace["deviance"].iloc[-1] == pytest.approx(exact.deviance, rel=1e-12)
