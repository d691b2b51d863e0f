"""dp_felp: base learner, ensemble, L2-Laplace release, the two variants, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpstats as dp
from dpstats.errors import DataError, NonPrivateWarning, PrivacyParameterError
from dpstats.methods import felp as m
from dpstats.simulate.felp import planted
from dpstats.privacy.accountant import Accountant, total_eps
from dpstats.privacy.randomness import NoiseSource

PAPER_WARNING = "variant='paper' uses FELP's Lemma 1 sensitivity"


def _arrays(df):
    X = df.drop(columns="class").to_numpy()
    y = df["class"].cat.codes.to_numpy()
    U, _ = m.scale_features(X, m.data_box(X))
    return U, y


@pytest.fixture(scope="module")
def small():
    return planted(n=80, d=20, s=2, shift=2.5, random_state=3)


# ---------------------------------------------------------------------- sampler
def test_l2_laplace_norm_is_gamma_and_direction_uniform():
    """KS tests at level 0.001 on 4000 draws: ‖b‖ ~ Gamma(d, scale); u·b/‖b‖ ~ the sphere law."""
    d, scale, draws = 6, 0.7, 4000
    src = NoiseSource(random_state=123)
    b = np.array([src.l2_laplace(np.zeros(d), scale) for _ in range(draws)])
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=scale).cdf).pvalue > 1e-3
    sphere = stats.beta((d - 1) / 2, (d - 1) / 2)
    # for a uniform direction v on S^{d-1} and any unit u, (1 + u·v)/2 ~ Beta((d-1)/2, (d-1)/2)
    for u in (np.eye(d)[0], np.ones(d) / math.sqrt(d)):
        proj = (1 + (b / norms[:, None]) @ u) / 2
        assert stats.kstest(proj, sphere.cdf).pvalue > 1e-3
    # and a direction that is NOT uniform (iid Laplace coordinates) is rejected by the same test
    u = np.eye(d)[0]
    lap = np.random.default_rng(0).laplace(size=(draws, d))
    proj_lap = (1 + (lap / np.linalg.norm(lap, axis=1)[:, None]) @ u) / 2
    assert stats.kstest(proj_lap, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue < 1e-3


def test_released_noise_through_the_front_door_has_gamma_norm():
    """released − non-private weights (same seed, same bootstrap) has norm ~ Gamma(d, 2/(nλε))."""
    df = planted(n=30, d=4, s=1, shift=3.0, random_state=0)
    bounds = (-6, 6)
    norms = []
    for seed in range(150):
        kw = dict(n_estimators=1, bounds=bounds, random_state=seed, oc_trials=0, max_iter=2)
        with pytest.warns(NonPrivateWarning, match="eps = inf|variant='paper'"):
            ref = dp.dp_felp("class ~ .", df, eps=math.inf, variant="paper", **kw)
        with pytest.warns(NonPrivateWarning, match=PAPER_WARNING):
            fit = dp.dp_felp("class ~ .", df, eps=2.0, variant="paper", **kw)
        norms.append(np.linalg.norm(fit.weights - ref.weights))
    scale = 2 / (30 * 1.0 * 2.0)
    assert fit.noise_scale == pytest.approx(scale)
    assert stats.kstest(norms, stats.gamma(a=4, scale=scale).cdf).pvalue > 1e-3


# ---------------------------------------------------------------------- base learner
def test_neighbour_search_excludes_self_and_copies():
    U = np.array([[0.0], [0.0], [0.2], [1.0], [0.9]])
    y = np.array([0, 0, 0, 1, 1])
    ids = np.array([7, 7, 8, 9, 10])  # rows 0 and 1 are copies of one original row
    hit, miss = m.nearest_hit_miss(U, y, np.ones(1), ids=ids, n_neighbors=1)
    assert hit[:, 0].tolist() == [2, 2, 0, 4, 3]
    assert miss[:, 0].tolist() == [4, 4, 4, 2, 2]


def test_candidate_search_agrees_with_exact_search():
    """The BLAS pre-filter + L1 re-ranking finds the exact nearest hit for >= 95% of rows."""
    U, y = _arrays(planted(n=300, d=40, s=5, random_state=1))
    w = np.random.default_rng(2).uniform(0.2, 1.0, size=40)
    exact = m.nearest_hit_miss(U, y, w, n_neighbors=5)
    approx = m.nearest_hit_miss(U, y, w, n_neighbors=5, exact_limit=0)
    assert np.mean(exact[0][:, 0] == approx[0][:, 0]) >= 0.95
    assert np.mean(exact[1][:, 0] == approx[1][:, 0]) >= 0.95


def test_margin_is_linear_in_w():
    """d_w(x, NM) − d_w(x, NH) = wᵀz with K = 1 (the reason for the L1 metric)."""
    U, y = _arrays(planted(n=50, d=6, s=2, random_state=4))
    w = np.random.default_rng(0).uniform(size=6)
    hit, miss = m.nearest_hit_miss(U, y, w, n_neighbors=1)
    Z = m.margins(U, hit, miss)
    direct = np.abs(U - U[miss[:, 0]]) @ w - np.abs(U - U[hit[:, 0]]) @ w
    np.testing.assert_allclose(Z @ w, direct, atol=1e-12)


def test_solve_weights_meets_kkt_conditions():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(200, 8)) / 4
    Z[:, 0] += 0.3
    lam = 0.05
    w = m.solve_weights(Z, lam)
    grad = -(Z.T @ (1 / (1 + np.exp(Z @ w)))) / len(Z) + 2 * lam * w
    assert np.all(w >= 0)
    np.testing.assert_allclose(grad[w > 0], 0, atol=1e-6)  # stationarity on the support
    assert np.all(grad[w == 0] >= -1e-6)  # complementary slackness
    assert lam * w @ w <= math.log(2) + 1e-12  # so ‖w‖ <= default_clip_norm(λ)
    assert np.linalg.norm(w) <= m.logo_norm_bound(lam)


@pytest.mark.parametrize("lam", [1e-3, 0.1, 1.0, 30.0])
def test_logo_norm_bound_is_attained_by_identical_unit_margins(lam):
    """Every z_i = e_1 (‖z_i‖ = 1): the minimiser is r·e_1 with 2λr = σ(−r), the bound itself.

    Oracle: scipy's minimize_scalar on the one-dimensional objective log(1 + e^(−r)) + λr²."""
    from scipy.optimize import minimize_scalar

    Z = np.zeros((50, 3))
    Z[:, 0] = 1.0
    w = m.solve_weights(Z, lam)
    r = minimize_scalar(
        lambda t: np.logaddexp(0, -t) + lam * t * t,
        bounds=(0, 100),
        method="bounded",
        options={"xatol": 1e-12},
    ).x
    assert w[1:].tolist() == [0.0, 0.0]
    assert w[0] == pytest.approx(r, rel=1e-6) and m.logo_norm_bound(lam) == pytest.approx(r, rel=1e-6)
    assert m.logo_norm_bound(lam) < m.default_clip_norm(lam)


def test_logo_converges_within_the_cap_on_wdbc():
    df = dp.datasets.breast_cancer()
    X = df.drop(columns="diagnosis").to_numpy()
    U, _ = m.scale_features(X, m.data_box(X))
    fit = m.logo(U, df["diagnosis"].cat.codes.to_numpy(), lam=1.0)
    assert fit.converged and fit.n_iter <= m.MAX_ITER


# ---------------------------------------------------------------------- ensemble & variants
def test_nonprivate_recovers_planted_features_binary_and_multiclass():
    for n_classes in (2, 3):
        df = planted(n=150, d=40, s=4, shift=2.0, n_classes=n_classes, random_state=10 + n_classes)
        with pytest.warns(NonPrivateWarning, match="eps = inf|variant='paper'|data minima"):
            fit = dp.dp_felp(
                "class ~ .",
                df,
                eps=math.inf,
                select=4,
                variant="paper",
                n_estimators=5,
                random_state=1,
                oc_trials=0,
            )
        assert set(fit.selected) == {"x1", "x2", "x3", "x4"}, (n_classes, fit.selected)


def test_strict_variant_average_moves_at_most_2c_over_k():
    """Replacing one row (same partition) moves the clipped average by <= 2C/k, with C binding."""
    U, y = _arrays(planted(n=60, d=8, s=2, shift=2.0, random_state=6))
    k, C = 4, 0.05
    spec = m.EnsembleSpec(n_estimators=k, variant="strict", clip_norm=C)
    base = m.ensemble(U, y, 0.1, gen=np.random.default_rng(9), spec=spec)
    assert base.n_clipped > 0 and np.all(np.linalg.norm(base.weights, axis=1) <= C * (1 + 1e-12))
    worst = 0.0
    for i in range(0, 60, 7):
        U2 = U.copy()
        U2[i] = np.sqrt(1 / 8) * (1 - U[i] * np.sqrt(8))  # reflect the row inside the box
        other = m.ensemble(U2, y, 0.1, gen=np.random.default_rng(9), spec=spec)
        worst = max(worst, np.linalg.norm(other.w_mean - base.w_mean))
    assert 0 < worst <= m.strict_sensitivity(C, k) + 1e-12


def test_a_clip_at_the_old_default_never_binds(small):
    fit = dp.dp_felp(
        "class ~ .",
        small,
        eps=1.0,
        variant="strict",
        n_estimators=4,
        clip_norm=math.sqrt(math.log(2)),
        bounds=(-6, 6),
        random_state=2,
        oc_trials=0,
        diagnostics=True,
    )
    assert fit.diagnostics["learners_clipped_to_C"] == 0 and not fit.normalised
    assert fit.sensitivity == pytest.approx(2 * math.sqrt(math.log(2)) / 4)
    assert "clipped to ‖w‖ <= C = 0.8326" in str(fit)


def test_default_normalises_every_learner_and_takes_one_per_20_rows(small):
    """n = 80 rows read: k = 4 learners, each of norm 1 (C = 1), Δ = 2/4."""
    options = m.FELPOptions.partial(variant="strict", eps=1.0, lam=1.0, lam_source="user", sample_ratio=0.9)
    plan = m.plan(options, n=len(small), d=10, box=None)
    assert plan.spec.n_estimators == 4 and plan.normalise and plan.sensitivity(1.0) == 0.5
    U, y = _arrays(small)
    fit = m.ensemble(U, y, 1.0, gen=np.random.default_rng(0), spec=plan.spec)
    np.testing.assert_allclose(np.linalg.norm(fit.weights, axis=1), 1.0, rtol=1e-12)
    door = dp.dp_felp("class ~ .", small, eps=8.0, bounds=(-6, 6), random_state=2, oc_trials=0)
    assert door.n_estimators == 4 and door.clip_norm == 1.0 and door.sensitivity == 0.5
    assert "4 learners on disjoint subsets, weights normalised to ‖w‖ = C = 1" in str(door)
    assert m.n_estimators_for("strict", None, 39) == 1 and m.n_estimators_for("paper", None, 10**5) == 20


def test_statement_ledger_and_sensitivities(small):
    acc = Accountant(eps=3.0)
    with pytest.warns(NonPrivateWarning, match=PAPER_WARNING):
        fit = dp.dp_felp(
            "class ~ .",
            small,
            eps=1.0,
            lam=0.5,
            variant="paper",
            n_estimators=4,
            bounds=(-6, 6),
            random_state=0,
            accountant=acc,
            oc_trials=20,
        )
    assert total_eps(fit.privacy.ledger) == 1.0 and acc.spent_eps == 1.0
    assert fit.sensitivity == pytest.approx(2 / (80 * 0.5))
    assert fit.noise_scale == pytest.approx(fit.sensitivity / 1.0)
    assert any("function of row i alone" in a for a in fit.privacy.assumptions)
    assert any("bootstrap" in a for a in fit.privacy.assumptions)
    assert fit.privacy.covered and fit.privacy.seeded
    strict_fit = dp.dp_felp(
        "class ~ .",
        small,
        eps=1.0,
        variant="strict",
        n_estimators=4,
        bounds=(-6, 6),
        random_state=0,
        oc_trials=0,
        strict=True,
    )
    assert strict_fit.privacy.assumptions == []
    assert "2C/k" in strict_fit.privacy.sensitivities["average weight vector (ℓ2)"]
    assert fit.tidy().shape == (20, 4) and fit.tidy()["selected"].sum() == fit.select == 2
    assert fit.glance().loc[0, "variant"] == "paper"


def test_data_dependent_steps_are_named_and_strict_refuses(small):
    with (
        pytest.warns(NonPrivateWarning, match=PAPER_WARNING),
        pytest.warns(NonPrivateWarning, match="data minima"),
        pytest.warns(NonPrivateWarning, match="without declared bounds"),  # no public fill (issue 26)
    ):
        fit = dp.dp_felp(
            "class ~ .", small, eps=1.0, variant="paper", n_estimators=2, random_state=0, oc_trials=0
        )
    assert not fit.privacy.covered
    with pytest.raises(PrivacyParameterError, match="strict=True refuses"):
        dp.dp_felp("class ~ .", small, eps=1.0, strict=True)
    with pytest.raises(PrivacyParameterError, match="strict=True refuses"):
        dp.dp_felp("class ~ .", small, eps=1.0, lam="cv", bounds=(-6, 6), strict=True)
    with pytest.raises(PrivacyParameterError, match="inf"):
        dp.dp_felp("class ~ .", small, eps=math.inf, bounds=(-6, 6), strict=True)
    with (
        pytest.warns(NonPrivateWarning, match=PAPER_WARNING),
        pytest.warns(NonPrivateWarning, match="cross-validation"),
    ):
        cv = dp.dp_felp(
            "class ~ .",
            small,
            eps=1.0,
            lam="cv",
            lam_grid=(0.1, 1.0),
            variant="paper",
            n_estimators=2,
            bounds=(-6, 6),
            random_state=0,
            oc_trials=0,
        )
    assert cv.lam_source == "cv" and cv.lam in (0.1, 1.0)
    assert any("cross-validation" in s for s in cv.privacy.data_dependent_steps)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"lam": 0.0}, PrivacyParameterError, "lam must be a positive"),
        ({"lam": -1.0}, PrivacyParameterError, "lam must be a positive"),
        ({"lam": "gcv"}, PrivacyParameterError, "lam must be"),
        ({"variant": "loose"}, PrivacyParameterError, "variant"),
        ({"eps": 0}, PrivacyParameterError, "eps"),
        ({"neighbouring": "add_remove"}, PrivacyParameterError, "neighbouring"),
        ({"variant": "paper", "clip_norm": 1.0}, PrivacyParameterError, "clip_norm|variant='paper'"),
        ({"sample_ratio": 0.0}, PrivacyParameterError, "sample_ratio"),
        ({"n_estimators": 0}, PrivacyParameterError, "n_estimators"),
        ({"select": 21}, DataError, "select"),
        ({"select": "3"}, PrivacyParameterError, "select must be a whole number"),  # the argument's type
        ({"variant": "strict", "n_estimators": 50}, DataError, "n_estimators"),
    ],
)
def test_bad_arguments_spend_nothing(small, kwargs, error, match):
    acc = Accountant(eps=5.0)
    args = {"eps": 1.0, "bounds": (-6, 6), "accountant": acc} | kwargs
    with pytest.raises(error, match=match):
        dp.dp_felp("class ~ .", small, **args)
    assert acc.spent_eps == 0


def test_bad_data_spends_nothing(small):
    acc = Accountant(eps=5.0)
    one_class = small.assign(**{"class": pd.Categorical(["c0"] * len(small))})
    with pytest.raises(DataError, match="fewer than two declared classes"):
        dp.dp_felp("class ~ .", one_class, eps=1.0, bounds=(-6, 6), accountant=acc)
    lonely = small.copy()  # levels read from the rows (text): a class with one row is refused
    lonely["class"] = lonely["class"].astype(str)
    lonely.loc[0, "class"] = "c9"
    with pytest.raises(DataError, match="single row, which has no nearest hit"):
        dp.dp_felp("class ~ .", lonely, eps=1.0, bounds=(-6, 6), accountant=acc)
    text = small.assign(colour=np.where(np.arange(len(small)) % 2, "red", "blue"))
    with pytest.raises(DataError, match="colour.*not numeric"):
        dp.dp_felp("class ~ .", text, eps=1.0, bounds=(-6, 6), accountant=acc)
    assert acc.spent_eps == 0


def test_report_has_ranked_weights_plot(small, tmp_path):
    with pytest.warns(NonPrivateWarning, match=PAPER_WARNING):
        fit = dp.dp_felp(
            "class ~ .",
            small,
            eps=5.0,
            variant="paper",
            n_estimators=3,
            bounds=(-6, 6),
            random_state=0,
            oc_trials=10,
        )
    html = open(fit.report(str(tmp_path / "felp.html")), encoding="utf-8").read()
    assert "Released weights ranked, with the selection cut" in html
    assert "privacy-statement" in html and "paper variant" in html
    assert "strict" in html  # the method template points to the strict variant
    assert "Selected the top 2 of 20" in str(fit)
    d = fit.to_dict()
    assert len(d["outputs"]["weights"]) == 20 and d["outputs"]["variant"] == "paper"


def test_paper_variant_is_warned_and_refused_under_strict(small):
    """The audit (tests/test_audit_felp.py) refutes Lemma 1's 2/(nλ); a release must use 'strict'."""
    with pytest.warns(NonPrivateWarning, match="not a valid bound"):
        fit = dp.dp_felp(
            "class ~ .",
            small,
            eps=1.0,
            variant="paper",
            bounds=(-6, 6),
            n_estimators=2,
            random_state=0,
            oc_trials=0,
        )
    assert any("refutes" in note for note in fit.privacy.notes)
    acc = dp.Accountant(eps=5)
    with pytest.raises(PrivacyParameterError, match="variant='strict'"):
        dp.dp_felp("class ~ .", small, eps=1.0, bounds=(-6, 6), variant="paper", strict=True, accountant=acc)
    assert acc.charges == []


def test_default_variant_is_strict(small):
    fit = dp.dp_felp("class ~ .", small, eps=1.0, n_estimators=4, bounds=(-6, 6), random_state=0, oc_trials=0)
    assert fit.variant == "strict" and not fit.privacy.refuted
    assert "REFUTED" not in str(fit) and "guarantee" not in fit.glance().columns


def test_paper_variant_says_refuted_in_every_channel(small, tmp_path):
    with pytest.warns(NonPrivateWarning, match="not a valid differential privacy guarantee"):
        fit = dp.dp_felp(
            "class ~ .",
            small,
            eps=1.0,
            variant="paper",
            n_estimators=2,
            bounds=(-6, 6),
            random_state=0,
            oc_trials=0,
        )
    assert "REFUTED" in str(fit)
    assert "REFUTED" in str(fit.summary()) and "NOT differentially private" in str(fit.summary())
    assert "REFUTED" in fit.glance().loc[0, "guarantee"]
    d = fit.to_dict()
    assert d["privacy"]["valid_guarantee"] is False and "refutes" in d["privacy"]["refuted"]
    assert "NOT differentially private" in d["privacy"]["statement"]
    assert any("not a valid DP guarantee" in w for w in d["warnings"])
    html = open(fit.report(str(tmp_path / "paper.html")), encoding="utf-8").read()
    assert "Not a valid privacy guarantee" in html


def test_response_errors_name_the_column_not_its_values(small):
    """A numeric or rare-class response is refused without listing any value read from the rows."""
    acc = Accountant(eps=5.0)
    for y in (np.linspace(0.123456, 0.987654, len(small)), np.r_[np.zeros(len(small) - 1), 7.25]):
        with pytest.raises(DataError, match="'class'") as info:  # alone: a call's warnings come with a fit
            dp.dp_felp("class ~ .", small.assign(**{"class": y}), eps=1.0, bounds=(-6, 6), accountant=acc)
        message = str(info.value)
        assert "0.123456" not in message and "7.25" not in message and "[" not in message
    assert acc.charges == []


def test_private_bounds_leave_the_release_its_own_eps():
    """With bounds="auto" the ledger holds the bounds step first; the weights' noise scale is Δ over
    the eps of the release step (the rest of eps), not over the bounds step's share."""
    df = planted(n=200, d=10, s=3, shift=2.0, random_state=0)
    fit = dp.dp_felp("class ~ .", df, eps=1.0, n_estimators=5, bounds="auto", random_state=1, oc_trials=0)
    bounds_step, release_step = fit.privacy.ledger
    assert bounds_step.step.startswith("private bounds") and math.isclose(release_step.eps, 0.9)
    assert math.isclose(fit.noise_scale, fit.sensitivity / release_step.eps)
