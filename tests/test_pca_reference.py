"""dp_pca against oracles nobody here wrote, its sensitivities, its plan and its messages.

Oracles:

* R's ``prcomp`` (one Rscript run, marker ``r``) on R's own ``iris`` (numeric columns) and
  ``USArrests``, read from R: at eps = inf ``center="mean"`` (the default) is ``prcomp(x)``:
  loadings up to each column's sign to 1e-10 absolute, variances (``sdev^2``), the centre
  (``$center``), the proportions of variance and ``predict`` scores to relative 1e-10 (both
  are eigen-decompositions of the same 4 × 4 matrix in double precision).  At eps = 1e6
  (seeds 0–4) the largest principal angle between dp_pca's 2-D subspace and prcomp's is below
  0.5° on iris and 1.5° on USArrests (observed at most 0.10° and 0.58°: the noise per
  covariance entry, σ_M/(n − 1), is 1.4e-4 and 0.8 against eigen-gaps λ₂ − λ₃ of 0.16 and
  160), while ``center="midpoint"`` with the box (0, 8) is 70°+ away on iris (77°: the
  audit's finding H2).
* statsmodels' PCA (``method="eig"``, not standardised, loadings not normalised) on 200 seeded
  rows of three correlated columns inside the declared box: ``demean=True`` is the default
  centre, its eigenvalues over n − 1 the variances; ``demean=False`` on the rows minus the
  box's midpoint is ``center="midpoint"``, eigenvalues as they are (sums of squares).
"""

from __future__ import annotations

import json
import math
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.multivariate.pca import PCA

import dpstats as dp
from dpstats.errors import DataError, FormulaError, NonPrivateWarning, PrivacyParameterError
from dpstats.methods import pca as m
from dpstats.privacy.accountant import Accountant
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.pca import second_moment_sensitivity, sum_sensitivity
from neighbours import assert_same_view, reader_view

BOX = {"a": (-10.0, 10.0), "b": (-6.0, 10.0), "c": (-8.0, 4.0)}
CENTRE = np.array([0.0, 2.0, -2.0])  # the box's midpoints

IRIS_BOX = {"Sepal.Length": (4, 8), "Sepal.Width": (2, 5), "Petal.Length": (1, 7), "Petal.Width": (0, 3)}
USARRESTS_BOX = {"Murder": (0, 20), "Assault": (0, 350), "UrbanPop": (0, 100), "Rape": (0, 50)}
R_BOXES = {"iris": IRIS_BOX, "USArrests": USARRESTS_BOX}
ANGLE_TOL = {"iris": 0.5, "USArrests": 1.5}  # degrees, at eps = 1e6 (module docstring)

R_SCRIPT = r"""
library(jsonlite)
out <- commandArgs(TRUE)[1]
sets <- list(iris = iris[1:4], USArrests = USArrests)
res <- lapply(names(sets), function(nm) {
  x <- sets[[nm]]
  write.csv(x, file.path(out, paste0(nm, ".csv")), row.names = FALSE)
  p <- prcomp(x)
  list(rotation = unname(p$rotation), sdev = p$sdev, center = unname(p$center),
       scores = unname(predict(p, x)), proportion = p$sdev^2 / sum(p$sdev^2))
})
names(res) <- names(sets)
writeLines(toJSON(res, digits = NA), file.path(out, "prcomp.json"))
"""


@pytest.fixture(scope="module")
def prcomp(rscript, tmp_path_factory):
    """R's data sets and prcomp's rotation, sdev, center, scores and proportions of variance."""
    out = tmp_path_factory.mktemp("prcomp")
    (out / "p.R").write_text(R_SCRIPT)
    subprocess.run([rscript, str(out / "p.R"), str(out)], check=True, capture_output=True, timeout=120)
    fits = json.loads((out / "prcomp.json").read_text())
    refs = {}
    for name, fit in fits.items():
        data = pd.read_csv(out / f"{name}.csv")
        refs[name] = {
            "data": data,
            "rotation": np.asarray(fit["rotation"], dtype=float),  # row-major JSON: rows are variables
            "sdev": np.asarray(fit["sdev"]),
            "center": np.asarray(fit["center"]),
            "scores": np.asarray(fit["scores"], dtype=float),
            "proportion": np.asarray(fit["proportion"]),
        }
    return refs


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    z = rng.standard_normal((200, 3))
    X = z @ np.array([[2.0, 0.8, -0.5], [0.0, 1.2, 0.4], [0.0, 0.0, 0.7]]) + np.array([1.0, 3.0, -1.0])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    assert all(df[c].between(lo, hi).all() for c, (lo, hi) in BOX.items())
    return df


def _aligned(basis: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``basis`` with each column's sign matched to ``ref`` (eigenvectors are defined up to sign)."""
    return basis * np.sign(np.sum(basis * ref, axis=0))


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """The largest principal angle (degrees) between the column spans of a and b."""
    qa, _ = np.linalg.qr(a)
    qb, _ = np.linalg.qr(b)
    cosines = np.linalg.svd(qa.T @ qb, compute_uv=False)
    return float(np.degrees(np.arccos(np.clip(cosines.min(), -1.0, 1.0))))


def _inf_fit(df, bounds=BOX, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return dp.dp_pca("~ .", df, k=kw.pop("k", 2), eps=math.inf, delta=0, bounds=bounds, **kw)


# ----------------------------------------------------------------------------- R's prcomp
@pytest.mark.r
@pytest.mark.parametrize("name", ["iris", "USArrests"])
def test_eps_inf_is_prcomp_loadings_variances_centre_proportions_and_scores(prcomp, name):
    ref = prcomp[name]
    fit = _inf_fit(ref["data"], bounds=R_BOXES[name], k=4)
    np.testing.assert_allclose(_aligned(fit.basis, ref["rotation"]), ref["rotation"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.eigenvalues, ref["sdev"] ** 2, rtol=1e-10)
    np.testing.assert_allclose(fit.centre, ref["center"], rtol=1e-12)
    np.testing.assert_allclose(fit.proportion, ref["proportion"], rtol=1e-10)
    signs = np.sign(np.sum(fit.basis * ref["rotation"], axis=0))
    np.testing.assert_allclose(fit.predict(ref["data"]) * signs, ref["scores"], rtol=1e-10, atol=1e-9)
    assert fit.center == "mean" and fit.noise_sd == fit.sum_noise_sd == 0.0 and fit.count is None


@pytest.mark.r
@pytest.mark.parametrize("name", ["iris", "USArrests"])
def test_at_eps_1e6_the_subspace_is_close_to_prcomps(prcomp, name):
    ref = prcomp[name]
    angles = [
        _angle(
            dp.dp_pca(
                "~ .", ref["data"], k=2, eps=1e6, delta=1e-6, bounds=R_BOXES[name], random_state=s
            ).basis,
            ref["rotation"][:, :2],
        )
        for s in range(5)
    ]
    assert max(angles) < ANGLE_TOL[name], angles


@pytest.mark.r
def test_about_the_midpoint_the_subspace_is_far_from_prcomps_on_iris(prcomp):
    """The audit's finding (H2): the second moments about the box (0, 8)'s midpoint are not the covariance."""
    ref = prcomp["iris"]
    kw = dict(k=2, eps=1e6, delta=1e-6, bounds=(0, 8), random_state=1)
    mid = dp.dp_pca("~ .", ref["data"], center="midpoint", **kw)
    mean = dp.dp_pca("~ .", ref["data"], **kw)
    assert _angle(mid.basis, ref["rotation"][:, :2]) > 70.0
    assert _angle(mean.basis, ref["rotation"][:, :2]) < 1.0


# ----------------------------------------------------------------------------- statsmodels and numpy
def test_eps_inf_about_the_mean_is_statsmodels_covariance_pca(frame):
    ref = PCA(frame.to_numpy(), ncomp=3, demean=True, standardize=False, normalize=False, method="eig")
    fit = _inf_fit(frame, k=3)
    n = len(frame)
    np.testing.assert_allclose(_aligned(fit.basis, ref.loadings), ref.loadings, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.eigenvalues, ref.eigenvals[:3] / (n - 1), rtol=1e-10)
    np.testing.assert_allclose(fit.centre, frame.mean().to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(fit.total, np.trace(np.cov(frame.to_numpy().T)), rtol=1e-12)
    signs = np.sign(np.sum(fit.basis * ref.loadings, axis=0))
    np.testing.assert_allclose(fit.predict(frame) * signs, ref.factors, rtol=1e-10, atol=1e-12)
    out = str(fit)
    assert out.splitlines()[0] == "Principal components: non-private reference (eps = inf)"
    assert "Decomposed: the covariance about the mean of the rows (non-private, as prcomp)" in out
    assert "privately released" not in out
    assert "Importance of components:\n" in out and "Proportion of Variance" in out and "(noisy)" not in out


def test_center_midpoint_is_the_exact_pca_of_the_rows_about_the_box_midpoint(frame):
    ref = PCA(
        frame.to_numpy() - CENTRE, ncomp=3, demean=False, standardize=False, normalize=False, method="eig"
    )
    fit = _inf_fit(frame, k=3, center="midpoint")
    np.testing.assert_allclose(_aligned(fit.basis, ref.loadings), ref.loadings, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.eigenvalues, ref.eigenvals[:3], rtol=1e-10)  # sums of squares
    assert fit.noise_sd == 0.0 and fit.centre.tolist() == CENTRE.tolist() and fit.center == "midpoint"
    assert "\nEigenvalues of Σ(x − c)(x − c)ᵀ (sums of squares, not variances): " in str(fit)
    assert "not the covariance about the mean" in str(fit)


def test_center_midpoint_draws_dp_gmms_noise_and_charges_one_step(frame):
    from dpstats.privacy.pca import private_pca
    from dpstats.privacy.randomness import NoiseSource

    fit = dp.dp_pca("~ .", frame, k=2, eps=1.0, delta=1e-6, bounds=BOX, center="midpoint", random_state=5)
    C = float(np.linalg.norm([10.0, 8.0, 6.0]))
    rho = gaussian_rho_from_eps_delta(1.0, 1e-6)  # one Gaussian: the exact conversion
    ref = private_pca(frame.to_numpy() - CENTRE, 2, C, rho, "replace", NoiseSource(5))
    np.testing.assert_allclose(fit.basis, ref.basis, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.eigenvalues, ref.eigenvalues, rtol=1e-10)
    assert [e.eps for e in fit.privacy.ledger] == [1.0] and fit.sum_noise_sd == 0.0


def test_eps_inf_warns_once_refuses_strict_and_charges_no_finite_budget(frame):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_pca("~ .", frame, k=2, eps=math.inf, delta=0)  # no bounds: the data's range, no step
    assert [str(w.message) for w in caught] == ["eps = inf: exact PCA, no noise, NOT private."]
    assert fit.privacy.data_dependent_steps == [] and math.isinf(fit.privacy.eps)
    assert [e.mechanism for e in fit.privacy.ledger] == ["none (eps = inf)"]
    with pytest.raises(PrivacyParameterError, match="strict=True refuses eps = inf"):
        dp.dp_pca("~ .", frame, k=2, eps=math.inf, delta=0, bounds=BOX, strict=True)
    with pytest.raises(PrivacyParameterError, match="dp_pca needs delta > 0"):  # a private call still does
        dp.dp_pca("~ .", frame, k=2, eps=1.0, delta=0, bounds=BOX)


def test_predict_gives_the_scores_on_the_components_with_na_pass(frame):
    fit = _inf_fit(frame)
    np.testing.assert_allclose(fit.predict(frame.to_numpy()), fit.predict(frame), rtol=0, atol=0)
    holed = frame.head(4).copy()
    holed.loc[1, "b"] = np.nan
    out = fit.predict(holed)
    assert out.shape == (4, 2) and np.isnan(out[1]).all() and np.isfinite(out[[0, 2, 3]]).all()
    with pytest.raises(
        DataError, match=r"newdata gives columns \['a', 'b'\], the fit used \['a', 'b', 'c'\]"
    ):
        fit.predict(frame[["a", "b"]])  # "~ ." over newdata's own columns
    named = dp.dp_pca("~ a + b + c", frame, k=2, eps=2.0, delta=1e-6, bounds=BOX, random_state=3)
    with pytest.raises(FormulaError, match="newdata has no column 'c'"):
        named.predict(frame[["a", "b"]])


def test_a_private_fit_scores_about_its_released_mean(frame):
    fit = dp.dp_pca("~ a + b + c", frame, k=2, eps=2.0, delta=1e-6, bounds=BOX, random_state=3)
    np.testing.assert_allclose(
        fit.predict(frame.head(5)), (frame.head(5).to_numpy() - fit.centre) @ fit.basis
    )
    assert fit.predict(frame.head(5)).shape == (5, 2)
    assert not np.allclose(fit.centre, CENTRE) and np.all(
        (fit.centre >= [-10, -6, -8]) & (fit.centre <= [10, 10, 4])
    )
    out = str(fit)
    assert "Importance of components (noisy):" in out and "per column sum" in out


# ----------------------------------------------------------------------------- sensitivities and plan
@pytest.mark.parametrize("C", [0.5, 3.0])
def test_sensitivities_bound_every_pair_in_the_ball_and_are_attained(C):
    """‖z − z'‖ ≤ 2C, ‖(z, C)‖ ≤ √2·C, ‖zzᵀ − z'z'ᵀ‖_F ≤ √2·C², ‖zzᵀ‖_F ≤ C² (methods.pca's derivation)."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((4000, 4))
    z *= (C * rng.uniform(0, 1, 4000) ** 0.25 / np.linalg.norm(z, axis=1))[:, None]  # uniform in the ball
    z[:1000] *= C / np.linalg.norm(z[:1000], axis=1)[:, None]  # and on its sphere
    w = np.roll(z, 1, axis=0)
    moved_sum = np.linalg.norm(z - w, axis=1)
    moved_gram = np.linalg.norm(np.einsum("ni,nj->nij", z, z) - np.einsum("ni,nj->nij", w, w), axis=(1, 2))
    with_count = np.linalg.norm(np.c_[z, np.full(len(z), C)], axis=1)
    slack = 1 + 1e-12
    assert moved_sum.max() <= sum_sensitivity(C, "replace") * slack
    assert with_count.max() <= sum_sensitivity(C, "add_remove") * slack
    assert moved_gram.max() <= second_moment_sensitivity(C, "replace") * slack
    assert np.linalg.norm(z, axis=1).max() ** 2 <= second_moment_sensitivity(C, "add_remove") * slack
    e1, e2 = np.eye(4)[0] * C, np.eye(4)[1] * C  # the worst pairs: z' = −z for S, orthogonal for M
    assert np.linalg.norm(e1 - (-e1)) == pytest.approx(sum_sensitivity(C, "replace"))
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(
        second_moment_sensitivity(C, "replace")
    )


@pytest.mark.parametrize(
    "neighbouring, n_public", [("replace", True), ("replace", False), ("add_remove", False)]
)
def test_plan_splits_rho_and_calibrates_both_gaussians(neighbouring, n_public):
    eps, delta, share, C = 1.5, 1e-6, 0.3, 4.0
    options = m.PCAOptions.partial(
        k=2, eps=eps, delta=delta, neighbouring=neighbouring, center="mean", mean_share=share
    )
    plan = m.plan(options, C, n_public=n_public)
    rho = gaussian_rho_from_eps_delta(eps, delta)  # every release Gaussian: the exact conversion
    assert math.fsum(e.eps for e in plan.entries) == pytest.approx(eps, abs=1e-15)
    assert math.fsum(e.delta for e in plan.entries) == pytest.approx(delta, rel=1e-12)
    dm, ds = {"replace": (math.sqrt(2) * C**2, 2 * C), "add_remove": (C**2, math.sqrt(2) * C)}[neighbouring]
    assert plan.sigma == pytest.approx(dm / math.sqrt(2 * (1 - share) * rho))
    assert plan.sum_sigma == pytest.approx(ds / math.sqrt(2 * share * rho))
    # each ledger event is the Gaussian of its own ρ share: σ/Δ = 1/√(2ρ_step), and the ρ's add up to ρ
    assert [e.event.noise_multiplier for e in plan.entries] == pytest.approx(
        [plan.sigma / dm, plan.sum_sigma / ds]
    )
    assert sum(e.event.zcdp_cost()[0] for e in plan.entries) == pytest.approx(rho)
    sums = "Σ (x − c) (l2)" if n_public else "Σ (x − c, C) (l2)"
    assert set(plan.sensitivities) == {"Σ (x − c)(x − c)ᵀ (Frobenius)", sums}
    assert plan.sensitivities[sums].startswith("Δ₂ = 2C" if neighbouring == "replace" else "Δ₂ = √2·C")
    assert plan.sensitivities[sums].endswith("C = 4")


def test_the_count_is_released_where_n_is_private(frame):
    kw = dict(k=2, eps=2.0, delta=1e-6, bounds=BOX, random_state=4)
    public = dp.dp_pca("~ .", frame, **kw)
    added = dp.dp_pca("~ .", frame, neighbouring="add_remove", **kw)
    with pytest.warns(NonPrivateWarning, match="rows with a missing value are dropped"):
        omitted = dp.dp_pca("~ .", frame, na_action="omit", **kw)  # replace-one, but rows may be dropped
    assert public.count is None and public.n == len(frame) and "Released number of rows" not in str(public)
    for fit in (added, omitted):
        assert isinstance(fit.count, float) and fit.released_n() is None
        assert "Released number of rows (noisy; n is private): " in str(fit)
        assert "Σ (x − c, C) (l2)" in fit.privacy.sensitivities
    assert added.privacy.sensitivities["Σ (x − c, C) (l2)"].startswith("Δ₂ = √2·C")
    assert omitted.privacy.sensitivities["Σ (x − c, C) (l2)"].startswith("Δ₂ = 2C")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"center": "centre"}, 'center must be "mean"'),
        ({"center": True}, 'center must be "mean"'),
        ({"mean_share": 0}, r"mean_share must be in \(0"),
        ({"mean_share": 1.0}, r"mean_share must be in \(0"),
        ({"mean_share": "0.5"}, "mean_share must be a number"),
    ],
)
def test_bad_center_or_mean_share_is_refused_before_any_charge(frame, change, message):
    acc = Accountant(eps=5.0, delta=1e-3)
    kw = dict(k=2, eps=1.0, delta=1e-6, bounds=BOX, accountant=acc) | change
    with pytest.raises(PrivacyParameterError, match=message):
        dp.dp_pca("~ .", frame, **kw)
    assert acc.charges == []


# ----------------------------------------------------------------------------- neighbouring data sets
@pytest.mark.parametrize(
    "extra", [{}, {"neighbouring": "add_remove"}, {"na_action": "omit"}, {"center": "midpoint"}]
)
def test_neighbouring_data_sets_give_the_same_messages_and_shapes(frame, extra):
    """One row replaced (or, under add/remove, removed) by an extreme one: only released values differ."""
    other = frame.copy()
    if extra.get("neighbouring") == "add_remove":
        other = other.iloc[1:]
    else:
        other.iloc[0] = [50.0, -50.0, 50.0]  # outside the box: clipped, silently
    kw = dict(k=2, eps=1.0, delta=1e-6, bounds=BOX, random_state=2) | extra
    one, two = reader_view(dp.dp_pca, "~ .", frame, **kw), reader_view(dp.dp_pca, "~ .", other, **kw)
    assert_same_view(one, two, str(extra))
    dropped = [w for w in one["warnings"] if "rows with a missing value are dropped" in w[1]]
    assert len(one["warnings"]) == len(dropped) == ("na_action" in extra)  # omit under replace: a named step
