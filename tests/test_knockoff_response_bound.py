"""dp_knockoff bounds the response (outside audit F4): one replaced row moves the release by at most Δ₂.

The paper's sensitivity (Theorem 5) holds for two data sets that both follow the linear model.
dp_knockoff clips every response to a public Y = B·beta_norm + sigma·t and uses a Δ₂ re-derived for a
replaced row the model does not describe (``dpstats.methods.knockoff.mechanism``, module docstring);
its statement says the guarantee is conditional on the model for the other rows, not differential
privacy.  These tests check, on the outside audit's neighbours (a response of 1e6, 1e308):

* the coefficient change stays within Δ₂ for adversarial replaced rows (coupled Haar draws);
* a Clopper–Pearson audit of the released b (3 000 runs per neighbour, alpha = 0.05, events chosen
  on 20% held-out runs) finds no eps above the claim, and the same audit refutes the claim when the
  response is not clipped (the audit has power);
* the outside audit's own event (some |knockoff coefficient| > 1e3, 30 unseeded front-door calls per
  neighbour) gives a lower bound on eps within the claim;
* no NaN and no numpy warning whatever the response, and neighbours give the same messages;
* every channel says the guarantee is conditional on the model.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
import dpstats.audit as A
from dpstats.api import knockoff as door
from dpstats.audit import clopper_pearson
from dpstats.methods.knockoff import filter as ko
from dpstats.methods.knockoff import mechanism as kd

from knockoff_spy import mechanism_inputs
from neighbours import assert_same_view, reader_view

KW = dict(bounds=1.0, sigma=0.5, beta_norm=1.0, c_min=8.0, lambda_min=0.5, oc_trials=0)


def _captured(frame: pd.DataFrame, method: str = "II", **kwargs):
    """(statistics, s, scales) the front door hands to run_mechanism for ``frame``."""
    return mechanism_inputs(
        lambda: dp.dp_knockoff("y ~ .", frame, 1.0, 1e-2, method=method, random_state=0, **(KW | kwargs)),
        UserWarning,
    )


def _coefficients(st: ko.Normalised, s: float, g: np.ndarray) -> np.ndarray:
    """b = G⁻¹[X′ X̃′]ᵀy without noise, with the Haar draw g shared by neighbours (Ũᵀy = ρg)."""
    v = ko.knockoff_cross_products(st, s, uty=math.sqrt(st.rss) * g)
    return ko.solve(ko.augmented_gram(st.sigma, s), v)


def _replaced(frame: pd.DataFrame, x: np.ndarray, y: float) -> pd.DataFrame:
    out = frame.copy()
    out.iloc[-1, 1:] = x
    out.iloc[-1, 0] = y
    return out


def test_the_coefficients_move_by_at_most_delta2_for_any_replaced_row():
    # D follows the model; the replaced (last) row is B·e_j or a random direction at norm B, with
    # y = ±Y, ±1e6 or 1e308 (clipped to Y).  20 Haar draws g, coupled across neighbours, and the
    # largest ‖Δb‖ is compared with the front door's Δ₂ (a bound: it must never be exceeded)
    d1, _ = A.knockoff_extreme_frames()
    st1, s1, scales = _captured(d1)
    delta2, Y = scales.sensitivities["Delta2 (coefficients, l2)"], scales.sensitivities["response bound Y"]
    p = st1.p
    rng = np.random.default_rng(3)
    rows = [np.eye(p)[j] for j in (0, p - 1)] + [r / np.linalg.norm(r) for r in rng.standard_normal((4, p))]
    draws = [rng.standard_normal(p) for _ in range(20)]
    draws = [z / math.sqrt(z @ z + rng.chisquare(st1.n - 2 * p)) for z in draws]
    largest = 0.0
    for x in rows:
        for y in (Y, -Y, 1e6, 1e308):
            st2, s2, _ = _captured(_replaced(d1, x, y))
            assert s2 == s1  # s = the declared lambda_min, on both
            for g in draws:
                largest = max(
                    largest, float(np.linalg.norm(_coefficients(st1, s1, g) - _coefficients(st2, s2, g)))
                )
    assert 0 < largest <= delta2, (largest, delta2)


@pytest.mark.parametrize("method", ["II", "I"])
def test_the_extreme_response_is_not_distinguishable_beyond_eps(method):
    # the outside audit's neighbour (y = 1e6 in a row the model does not describe), audited on the
    # released b: 3 000 runs per neighbour, one-sided Clopper–Pearson at alpha = 0.05, events chosen on
    # held-out runs: the lower bound on eps must not exceed the claimed eps = 1 (delta = 0.01)
    res = A.audit(A.knockoff_case(1.0, method=method, extreme=True), n_runs=3_000, random_state=7)
    assert res.passed, res


def test_the_audit_refutes_an_unclipped_response(monkeypatch):
    # the same audit with the clipping switched off (the noise still calibrated for |y| <= Y): the
    # pair is told apart far beyond eps = 1, so the test above can fail
    monkeypatch.setattr(door.engines, "with_response_clipped", lambda formula, data, mf, g, *a, **k: g)
    res = A.audit(A.knockoff_case(1.0, method="II", extreme=True), n_runs=1_000, random_state=7)
    assert not res.passed and res.eps_lb > 2.0, res


AUDIT_ROWS = np.random.default_rng(9)
N, P = 2000, 30
D0 = pd.DataFrame(AUDIT_ROWS.uniform(-1, 1, (N, P)), columns=[f"w{j}" for j in range(P)])
D0["y"] = D0.w0 + AUDIT_ROWS.normal(0, 1, N)
FORMULA = "y ~ " + " + ".join(f"w{j}" for j in range(P))
AUDIT_KW = dict(
    eps=2, delta=1e-4, bounds=6.0, c_min=20.0, lambda_min=0.2, sigma=1.0, beta_norm=1.0, oc_trials=0
)


def _with_response(value: float) -> pd.DataFrame:
    out = D0.copy()
    out.loc[0, "y"] = value
    return out


def test_the_outside_audits_event_stays_within_eps():
    # knockoff_unbounded_response.py: the event "some released knockoff coefficient has |value| > 1e3"
    # on D1 (y[0] = 1e6) and on D0, 30 unseeded front-door calls each; the outside audit saw 60/60
    # against 0/60 (eps_lb = 2.76 > eps = 2).  Clopper–Pearson at alpha = 0.025 per side.
    runs = 30

    def big(frame):
        coef = dp.dp_knockoff(FORMULA, frame, **AUDIT_KW).tidy()["knockoff_coef"].to_numpy(float)
        return float(np.max(np.abs(coef))) > 1e3

    a = sum(big(_with_response(1e6)) for _ in range(runs))
    b = sum(big(D0) for _ in range(runs))
    lo, _ = clopper_pearson(a, runs, 0.025)
    _, hi = clopper_pearson(b, runs, 0.025)
    assert lo == 0 or math.log(lo / hi) <= AUDIT_KW["eps"], (a, b)


@pytest.mark.parametrize("value", [1e6, 1e154, 1e308, -1e308])
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(method="II"),
        dict(method="I"),
        dict(method="II", knockoffs="materialise"),
        dict(method="II", bounds=None, sigma=None, beta_norm=None, c_min=None, lambda_min=None),
        dict(method="II", eps=math.inf),
    ],
    ids=["II", "I", "materialise", "nothing declared", "eps=inf"],
)
def test_no_nan_and_no_numpy_warning_whatever_the_response(value, kwargs):
    kw = AUDIT_KW | {"random_state": 1} | kwargs
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow / invalid-value warnings
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        fit = dp.dp_knockoff(FORMULA, _with_response(value), **kw)
    assert np.isfinite(fit.W).all() and np.isfinite(fit.coefficients).all()
    assert all(v is not None for v in fit.to_dict()["outputs"]["W"])


def test_a_streamed_extreme_response_is_clipped_as_in_memory(tmp_path):
    # the engines clip the response in the chunked pass (a second pass, without a bar, when some |y|
    # exceeds Y): the same statistics, hence the same seeded release, as in memory
    frame = _with_response(1e308)
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path)
    kw = AUDIT_KW | {"random_state": 4}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        streamed = dp.dp_knockoff(FORMULA, dp.engines.stream(str(path), chunk_rows=300), **kw)
        in_memory = dp.dp_knockoff(FORMULA, frame, **kw)
    np.testing.assert_allclose(streamed.coefficients, in_memory.coefficients, rtol=1e-9)


@pytest.mark.parametrize("value", [1e6, 1e308, -50.0])
@pytest.mark.parametrize("declared", [True, False], ids=["declared", "sigma and beta_norm estimated"])
def test_neighbours_with_an_extreme_response_give_the_same_messages(value, declared):
    kw = AUDIT_KW | {"random_state": 2}
    if not declared:
        kw |= dict(sigma=None, beta_norm=None)
    one = reader_view(dp.dp_knockoff, FORMULA, D0, **kw)
    other = reader_view(dp.dp_knockoff, FORMULA, _with_response(value), **kw)
    assert_same_view(one, other, f"dp_knockoff, y[0] = {value:g}")


def test_every_channel_says_the_guarantee_is_conditional_on_the_model(tmp_path):
    fit = dp.dp_knockoff(FORMULA, D0, **AUDIT_KW, random_state=0)
    st = fit.privacy
    assert st.plain_language().startswith(
        "This DP knockoff filter (Method II) analysis is NOT differentially private: its (2, 0.0001) "
        "guarantee is conditional on a model"
    )
    assert "conditional on a model: NOT differential privacy" in str(fit)
    summary = " ".join(str(fit.summary()).split())
    assert (
        "analysis is NOT differentially private: its (2, 0.0001) guarantee is conditional on a model"
        in summary
    )
    d = fit.to_dict()["privacy"]
    assert d["differentially_private"] is False and d["conditional"].startswith("the rows of the data set")
    assert "NOT differential privacy" in fit.glance()["guarantee"].iloc[0]
    fit.report(tmp_path / "r.html")
    assert "Conditional guarantee, not differential privacy." in (tmp_path / "r.html").read_text()
    assert "responses are clipped to [-Y, Y], Y = B ||beta|| + sigma t = 11.81" in "; ".join(st.assumptions)
    # eps = inf is a non-private reference, not a conditional guarantee
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        ref = dp.dp_knockoff(FORMULA, D0, **(AUDIT_KW | {"eps": math.inf}), random_state=0)
    assert not ref.privacy.conditional


def test_select_infer_with_knockoff_selection_is_conditional_too():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.uniform(-1, 1, (3000, 12)), columns=[f"x{j}" for j in range(12)])
    frame["y"] = frame.x0 + rng.normal(0, 0.5, 3000)
    bounds = {f"x{j}": (-1, 1) for j in range(12)} | {"y": (-4, 4)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_select_infer(
            "y ~ .",
            frame,
            eps=2.0,
            delta=1e-5,
            select="knockoff",
            bounds=bounds,
            random_state=0,
            select_args=dict(bounds=4.0, sigma=0.5, beta_norm=1.0),
        )
        sis = dp.dp_select_infer(
            "y ~ .", frame, eps=2.0, delta=1e-5, select="sis", bounds=bounds, random_state=0
        )
    assert "conditional on a model" in fit.privacy.plain_language()
    assert "dp_knockoff's condition" in fit.privacy.conditional
    assert not sis.privacy.conditional


def test_response_bound_and_noise_bounds_match_their_definitions():
    # Y = B·beta_norm + sigma·t with 2n·Φ̄(t) = δ₂/4 exactly; ζ* = σ²(q_p + t² + q_n·β_g) with q_p, q_n and
    # β_g Laurent–Massart bounds (mechanism docstring): at least the exact quantiles of scipy.stats (an
    # oracle nobody here wrote) and within 30% of them, at three sizes
    from scipy import stats

    sigma, d2 = 0.7, 5e-4
    for p, n in ((30, 2000), (50, 10**5), (8, 100)):
        b = kd.noise_bounds(p, n, sigma, d2)
        t = stats.norm.isf(d2 / 4 / (2 * n))
        assert b.t == pytest.approx(t, rel=1e-12)
        assert kd.response_bound(6.0, 2.0, sigma, n, p, d2) == pytest.approx(12.0 + sigma * t, rel=1e-12)
        exact_beta = stats.beta.isf(d2 / 4, p / 2, (n - 2 * p) / 2)
        exact = sigma**2 * (stats.chi2.isf(d2 / 4 / n, p) + t * t + stats.chi2.isf(d2 / 4, n) * exact_beta)
        assert exact_beta <= b.beta_g and exact <= b.zeta  # valid bounds at every size
        if n >= 2000:  # and close where n is large (on 100 rows the lower chi-square bound is loose)
            assert b.beta_g <= 1.6 * exact_beta and b.zeta <= 1.3 * exact, (p, n, b.zeta / exact)
