"""dp_glm with large slopes: the estimate converges where glm's does, or the intervals are withheld with a
ChanceWarning (methods.glm (G7); the s14-glmuser audit's finding 1).

Design (binomial): x on K = 500 equally spaced support points in (0, 10) (n/K rows each), bounds (0, 10),
logit P(y = 1) = b (x − 5), so the slope in the fitting coordinates is 5b.  Responses are drawn as the
group sums, which for the canonical link is the release on the n rows (as tests/test_glm_coverage.py);
release, noise scales and intervals are dpstats' own code.  Before (G7) the pilot's steps were capped at 1
and every interval was shown: coverage of b was 0.00 at b = 1.2 and 1.6 (n = 5·10⁴, eps = 2).
Claims (REPS = 300, seeds stated per test; MC s.e. √(0.95 · 0.05/300) = 0.013): at b = 1.2 and 1.6 the
intervals are shown in at least 95% of the runs and cover b within 2 MC s.e. of 0.95; at eps = 1e4 the
front door's estimate is within 1% of statsmodels' Logit on the same rows.  Where the pilot cannot reach
the fit (b = 2.4 with pilot_steps = 4), the intervals are withheld with a ChanceWarning; the default pilot
(6 steps) reaches it, and the twin of R's glm(am ~ wt + hp, binomial, mtcars), whose intervals four steps
withheld at eps = 1e4.  Poisson (G7'): means 0.05–1 under Y = 50, far below the public log(Y/2), are fitted
from the released total count, and covered.  About 10 s.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from scipy.special import expit

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods import glm as m
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.randomness import FastNoise

K, N, REPS = 500, 50_000, 300
X = (np.arange(K) + 0.5) * 10 / K
COORDS = m.Coordinates(np.array([5.0]), np.array([5.0]), True)


def run_cell(
    b: float, eps: float, seed: int, family: str = "binomial", top: float = 50.0, steps: int = m.PILOT_STEPS
) -> dict:
    """Coverage of β over REPS replicates; Poisson: log μ = −1.5 + b (x − 5), counts bounded by ``top``."""
    options = m.GLMOptions.partial(
        family=family, eps=eps, delta=1e-6, pilot_steps=steps, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, COORDS, m.response_range(family, counts=(0.0, top)), N)
    beta = np.array([-5.0 * b, b]) if family == "binomial" else np.array([-1.5 - 5.0 * b, b])
    eta, per = beta[0] + beta[1] * X, N // K
    rng = np.random.default_rng(seed)
    noise, cover, unconverged = FastNoise(rng), [], 0
    for _ in range(REPS):
        if family == "binomial":
            y = rng.binomial(per, expit(eta)).astype(float)
        else:  # every mean is at most e^(5b − 1.5) and top = 50: no count is clipped in practice
            y = rng.poisson(per * np.exp(eta)).astype(float)
        fit = m.release(m.Rows(COORDS.rows(X[:, None]), y, np.full(K, float(per))), pl, noise)
        unconverged += bool(fit.unconverged)
        if not fit.withheld:
            tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
            cover.append((tab["conf.low"] <= beta) & (beta <= tab["conf.high"]))
    return {
        "shown": len(cover) / REPS,
        "coverage": np.mean(cover, axis=0) if cover else None,
        "unconverged": unconverged / REPS,
    }


@pytest.mark.parametrize("b, seed", [(1.2, 71), (1.6, 72)])
def test_large_binomial_slopes_cover(b, seed):
    """Measured: b = 1.2 shown 1.00, coverage 0.963, 0.960; b = 1.6 shown 1.00, 0.957, 0.950 (with
    pilot_steps = 4, the default before: 0.940, 0.947; 0.947, 0.933)."""
    out = run_cell(b, 2.0, seed)
    assert out["shown"] >= 0.95, out
    assert np.all(np.abs(out["coverage"] - 0.95) <= 2 * 0.013), out


def test_a_slope_four_pilot_steps_cannot_reach_withholds_and_the_default_reaches():
    """b = 2.4 (12 in the fitting coordinates) at eps = 1e4.  With pilot_steps = 4 (the default before (G7))
    the pilot and the refinement do not reach the fit and every run's final step says so (measured: all
    300 withheld); the default (6) reaches it: measured shown 1.00, coverage 0.953, 0.953."""
    out = run_cell(2.4, 1e4, 73, steps=4)
    assert out["shown"] == 0.0 and out["unconverged"] == 1.0, out
    out = run_cell(2.4, 1e4, 73)
    assert out["shown"] >= 0.95 and np.all(np.abs(out["coverage"] - 0.95) <= 2 * 0.013), out


@pytest.mark.parametrize("eps, seed", [(8.0, 76), (1e4, 75)])
def test_poisson_far_below_the_public_start_fits_from_the_released_total(eps, seed):
    """(G7'): log μ = −1.5 + 0.3 (x − 5), means 0.05..1 under Y = 50 (the public start log 25).  Before, the
    pilot descended about 1 per step from log 25 and stopped short: every run withheld as unconverged at eps
    = 2, 8, 32 and 1e4 (300 runs each; with pilot_steps = 6 and no released start, eps = 8 showed intervals in
    every run covering 0.88, 0.92, undetected).  Now the pilot starts at the log of the released mean count.
    Measured: eps = 8 (λ_min(H) = 3.6 B) shown 0.997, coverage 0.933, 0.933; eps = 1e4 shown 1.00, 0.953,
    0.947.  Tolerance 3 MC s.e. (0.013 · 3) about 0.95.  (At eps = 2, λ_min(H) = 1.05 B: the floor's region
    of (G5'), shown in 20% of runs, covering 0.83, 0.86; not claimed.)"""
    out = run_cell(0.3, eps, seed, family="poisson")
    assert out["shown"] >= 0.95, out
    assert np.all(np.abs(out["coverage"] - 0.95) <= 3 * 0.013), out


def test_the_poisson_start_takes_its_share_of_the_pilot_and_rho_is_unchanged():
    """(G3'): the total count is released with COUNT_FRACTION of the pilot's share of ρ, sensitivity Y;
    the ledger's ρ still sums to the ρ of (eps, delta), and its eps to eps."""
    options = m.GLMOptions.partial(
        family="poisson", eps=2.0, delta=1e-6, pilot_steps=m.PILOT_STEPS, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, COORDS, m.response_range("poisson", counts=(0.0, 50.0)), N)
    rho = gaussian_rho_from_eps_delta(2.0, 1e-6)
    first = pl.entries[0]
    assert first.step == "start: total count" and "Δ₂ = Y = 50" in first.sensitivity
    assert first.rho == pytest.approx(m.PILOT_SHARE * m.COUNT_FRACTION * rho, rel=1e-12)
    assert pl.count_sd == pytest.approx(50.0 / np.sqrt(2.0 * first.rho), rel=1e-12)
    assert sum(e.rho for e in pl.entries) == pytest.approx(rho, rel=1e-12) and pl.rho == pytest.approx(rho)
    assert sum(e.eps for e in pl.entries) == pytest.approx(2.0, rel=1e-12)
    assert len(pl.entries) == 1 + 2 * (m.PILOT_STEPS + 1)


# The twin of R's glm(am ~ wt + hp, family = binomial, data = mtcars): mtcars' 32 (wt, hp) rows as the
# support, n/32 rows each, truth R's coefficients (R 4.x: 18.86629871720, −8.08347518244, 0.03625559608;
# glm needs 8 iterations), declared bounds wt (1, 6), hp (50, 350): the wt slope is −20.2 in the
# fitting coordinates.
MTCARS_WT = (
    "2.62 2.875 2.32 3.215 3.44 3.46 3.57 3.19 3.15 3.44 3.44 4.07 3.73 3.78 5.25 5.424 5.345 2.2 1.615"
)
MTCARS_WT += " 1.835 2.465 3.52 3.435 3.84 3.845 1.935 2.14 1.513 3.17 2.77 3.57 2.78"
MTCARS_HP = (
    "110 110 93 110 175 105 245 62 95 123 123 180 180 180 205 215 230 66 52 65 97 150 150 245 175 66 91"
)
MTCARS_HP += " 113 264 175 335 109"
MTCARS_BETA = np.array([18.86629871720, -8.08347518244, 0.03625559608])
MTCARS_REPS = 200


def mtcars_twin(
    eps: float, seed: int, steps: int = m.PILOT_STEPS, n: int = N, reps: int = MTCARS_REPS
) -> dict:
    """Share of runs showing intervals and their coverage of R's coefficients (n = 5·10⁴ unless given)."""
    X = np.c_[MTCARS_WT.split(), MTCARS_HP.split()].astype(float)
    coords = m.Coordinates(np.array([3.5, 200.0]), np.array([2.5, 150.0]), True)
    options = m.GLMOptions.partial(
        family="binomial", eps=eps, delta=1e-6, pilot_steps=steps, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, m.response_range("binomial"), n)
    per, W = n // 32, coords.rows(X)
    pi = expit(MTCARS_BETA[0] + X @ MTCARS_BETA[1:])
    rng = np.random.default_rng(seed)
    noise, cover = FastNoise(rng), []
    for _ in range(reps):
        fit = m.release(m.Rows(W, rng.binomial(per, pi).astype(float), np.full(32, float(per))), pl, noise)
        if not fit.withheld:
            tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
            cover.append((tab["conf.low"] <= MTCARS_BETA) & (MTCARS_BETA <= tab["conf.high"]))
    return {"shown": len(cover) / reps, "coverage": np.mean(cover, axis=0) if cover else None}


@pytest.mark.parametrize("eps, seed", [(2.0, 81), (8.0, 82), (1e4, 83)])
def test_the_mtcars_twin_converges_with_the_default_pilot(eps, seed):
    """MTCARS_REPS = 200 runs a cell; MC s.e. of a coverage near 0.95 over s ≥ 190 shown runs ≤ 0.016.
    Measured with pilot_steps = 4 (the default before; 400 runs): shown 0.92, 0.59, 0.00, coverage
    0.95–0.96, 0.87–0.89, none; with 6 (400 runs): shown 0.99, 1.00, 1.00, coverage 0.97–0.975, 0.95–0.96,
    0.95–0.965; since (G5''') (these seeds, 200 runs): shown 0.995, 1.00, 1.00, coverage 0.98–0.99, 0.94–0.965,
    0.945–0.975 (before: shown 0.98 at eps = 2, coverage 0.99–0.995).  Claim: shown ≥ 0.95 and every coverage
    within 3 MC s.e. of 0.95.  At eps = 1 see tests/test_glm_shown_coverage.py."""
    out = mtcars_twin(eps, seed)
    assert out["shown"] >= 0.95, out
    assert np.all(np.abs(out["coverage"] - 0.95) <= 3 * 0.016), out


def test_the_mtcars_twin_with_four_pilot_steps_withholds_at_large_eps():
    """The finding the default's change answers: at eps = 1e4 the four-step pilot stops one step short and
    every run withholds its intervals as unconverged."""
    assert mtcars_twin(1e4, 84, steps=4)["shown"] == 0.0


def test_the_mtcars_twin_where_the_floor_binds_rarely_shows_intervals():
    """(G7''): n = 5 000 (156 rows a support point), eps = 2, λ_min(H) = 0.11 B.  Every Hessian release is
    floored in the weak direction, each step moves about a tenth of the remaining way, and the estimates come
    out 31–33% short; before (G7'') the (G5) check showed intervals in 25 of 400 runs (seed 1), covering 0 of
    the three coefficients, the final step passing (G7) at about 2 standard errors, while the last four steps
    moved the same way, about 2 standard errors each.  400 runs, seed 85.  Measured now: shown 0 of 400 (seed
    1), 2 of 400 (seed 85, still covering 0: not fixed, only rarer).  Claim: shown in at most 1% of runs
    (binomial s.e. of a 6% rate over 400 runs: 0.012, so the old rule fails it by 4 s.e.)."""
    assert mtcars_twin(2.0, 85, n=5_000, reps=400)["shown"] <= 0.01


def large_slope_rows(b: float, seed: int = 777) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, N)
    return pd.DataFrame({"x": x, "y": (rng.random(N) < expit(b * (x - 5))).astype(int)})


def test_noiseless_estimate_equals_statsmodels_logit():
    """The audit's step_cap_noiseless.py: b = 1.6, seed 777, eps = 1e4.  statsmodels' Logit gives 1.6001; the
    release gave 1.3313 (CI 1.3147..1.3479) before (G7).  Tolerance 1% (the noise at eps = 1e4 is far below)."""
    df = large_slope_rows(1.6)
    mle = sm.Logit(df["y"], sm.add_constant(df["x"])).fit(disp=0).params.to_numpy()
    fit = dp.dp_glm("y ~ x", df, eps=1e4, delta=1e-6, bounds={"x": (0, 10)}, random_state=1)
    assert np.allclose(fit.coef().to_numpy(), mle, rtol=0.01), (fit.coef(), mle)
    lo, hi = fit.confint().loc["x"]
    assert lo <= mle[1] <= hi


def test_unconverged_fit_warns_and_withholds_at_the_front_door():
    """b = 2.4 at eps = 1e4 with pilot_steps = 4 (the default reaches it): a ChanceWarning, NaN intervals,
    the reason in the result's warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_glm(
            "y ~ x", large_slope_rows(2.4), eps=1e4, delta=1e-6, bounds={"x": (0, 10)}, pilot_steps=4,
            random_state=1,
        )  # fmt: skip
    chance = [w for w in caught if issubclass(w.category, ChanceWarning)]
    assert len(chance) == 1 and "has not converged" in str(chance[0].message)
    assert fit.confint().isna().all().all()
    assert any("has not converged" in w for w in fit.warnings)


def test_a_warpbreaks_twin_still_covers_from_the_released_start():
    """The twin of R's glm(breaks ~ wool + tension, poisson, warpbreaks): its 6 wool × tension cells, n/6
    rows each, truth R's coefficients (3.6919631450, −0.2059884426, −0.3213204316, −0.5184884965), counts
    bounded by Y = 100 (means 21–40; sums of clipped counts drawn exactly, as tests/test_glm_coverage.py),
    n = 54 000, eps = 2, 200 runs (seed 91).  Measured: shown 1.00, coverage 0.95, 0.935, 0.975, 0.95 (on 400
    other runs before (G7'): 1.00, 0.935–0.95; after: 1.00, 0.94–0.945).  Claim: shown ≥ 0.95, coverage within
    3 MC s.e. (0.016) of 0.95."""
    beta = np.array([3.6919631450, -0.2059884426, -0.3213204316, -0.5184884965])
    X = np.array([[b, m_, h] for b in (0, 1) for m_, h in ((0, 0), (1, 0), (0, 1))], float)
    coords, top, n = m.Coordinates(np.full(3, 0.5), np.full(3, 0.5), True), 100.0, 54_000
    options = m.GLMOptions.partial(
        family="poisson", eps=2.0, delta=1e-6, pilot_steps=m.PILOT_STEPS, pilot_share=m.PILOT_SHARE,
        hessian_share=m.HESSIAN_SHARE,
    )  # fmt: skip
    pl = m.plan(options, coords, m.response_range("poisson", counts=(0.0, top)), n)
    mu = np.exp(beta[0] + X @ beta[1:])
    values = np.r_[np.arange(top), top]
    clipped = np.c_[sps.poisson.pmf(np.arange(top)[None, :], mu[:, None]), sps.poisson.sf(top - 1, mu)]
    rng = np.random.default_rng(91)
    noise, cover = FastNoise(rng), []
    for _ in range(200):
        y = rng.multinomial(n // 6, clipped) @ values
        fit = m.release(m.Rows(coords.rows(X), y, np.full(6, n / 6)), pl, noise)
        if not fit.withheld:
            tab = m.wald_table(fit.coefficients, fit.vcov, 0.95)
            cover.append((tab["conf.low"] <= beta) & (beta <= tab["conf.high"]))
    assert len(cover) >= 190, len(cover)
    assert np.all(np.abs(np.mean(cover, axis=0) - 0.95) <= 3 * 0.016), np.mean(cover, axis=0)
