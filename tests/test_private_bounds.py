"""Private bounds (``bounds="auto"``): the DP quantile, its composition, and the shared front-door step.

Oracles: the exponential mechanism's output law is re-derived here by direct
counting (not through :func:`dpstats.privacy.bounds.quantile_utility`); the
accuracy claim is checked against the empirical CDF of the data; the zCDP
split is recomputed from the zCDP conversion (Canonne, Kamath & Steinke 2020; Cesar & Rogers' ε²/8).
"""

from __future__ import annotations

import json
import math
import warnings
from itertools import product

import numpy as np
import pytest
from scipy import stats

import dpstats as dp
from dpstats import audit as A
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from dpstats.privacy import bounds as pb
from dpstats.simulate.felp import planted


def _law_by_counting(values, candidates, level, eps, sensitivity, side=None):
    """P(c) ∝ μ(c)·exp(eps·u(c)/(2Δ)), u(c) = −|(1−α)#{x<c} − α#{x>c}|, counted with loops;
    ln μ(c) = −|log2|c|| (c ≠ 0), less log2(c) for an upper bound when c > 1 (log2(−c) for a lower
    one when c < −1); uniform without a side."""
    util, prior = [], []
    for c in candidates:
        below = sum(1 for x in values if x < c)
        above = sum(1 for x in values if x > c)
        util.append(-abs((1 - level) * below - level * above))
        outward = c if side == "upper" else -c
        magnitude = abs(math.log2(abs(c))) if c != 0 else 0.0
        prior.append(0.0 if side is None else -magnitude - (math.log2(outward) if outward > 1 else 0.0))
    w = np.exp(eps * (np.array(util) - max(util)) / (2 * sensitivity) + np.array(prior))
    return w / w.sum()


@pytest.mark.parametrize("side", [None, "upper", "lower"])
@pytest.mark.parametrize("level", [0.5, 0.75, 0.9])
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_exact_privacy_loss_of_the_quantile_on_every_small_neighbouring_pair(level, neighbouring, side):
    """Exact: for every data set of 3 values from {−2..2} and every neighbour, max |ln P/P′| <= eps."""
    eps, cands = 1.0, A.cases.QUANTILE_CANDIDATES
    sens = 1.0 if neighbouring == "replace" else max(level, 1 - level)
    worst = 0.0
    for data in product(A.cases.QUANTILE_VALUES, repeat=3):
        p = _law_by_counting(data, cands, level, eps, sens, side)
        law = pb.quantile_law(np.array(data), cands, level, eps, neighbouring, side)
        np.testing.assert_allclose(p, law, rtol=1e-12)
        for other in A.cases._neighbours(data, neighbouring):
            q = _law_by_counting(other, cands, level, eps, sens, side)
            worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert worst <= eps + 1e-12
    assert worst > 0.4  # the search finds pairs that move the law (the check is not vacuous)


def test_sensitivity_halved_breaks_the_exact_bound():
    """The exact check refutes a mechanism run with twice its eps (sensitivity halved)."""
    d1, d2, exact = A.worst_quantile_pair(0.5, 2.0)
    assert exact > 1.0  # claimed 1.0 would be violated


def test_sampler_draws_the_exact_law():
    """Chi-square goodness of fit of 20 000 seeded draws to the exact law (seed 3; p > 0.01)."""
    data, cands = np.array([-2.0, -1.0, -1.0, 0.0, 2.0]), A.cases.QUANTILE_CANDIDATES
    rng = np.random.default_rng(3)
    draws = [pb.private_quantile(data, 0.5, cands, 1.0, rng, side="upper") for _ in range(20_000)]
    counts = np.array([draws.count(c) for c in cands])
    expected = _law_by_counting(data, cands, 0.5, 1.0, 1.0, "upper") * len(draws)
    assert stats.chisquare(counts, expected).pvalue > 0.01


def test_audit_case_is_consistent_and_catches_the_broken_one():
    """20 000 seeded runs per neighbour (seed 0): the 95% lower bound stays under the exact eps
    of the pair (+0.02 for estimation), and the run at 2·eps is refuted."""
    case = A.quantile_case(1.0)
    good = A.audit(case, n_runs=20_000, random_state=0)
    bad = A.audit(A.quantile_case(1.0, broken=True), n_runs=20_000, random_state=0)
    assert good.passed and good.eps_lb <= case.exact_eps + 0.02
    assert not bad.passed


@pytest.mark.parametrize("level", [0.5, 0.9, 0.99])
def test_released_quantile_is_in_the_level_band(level):
    """n = 10^4, eps = 0.1: the released bound's empirical level is within ±0.05 of α in >= 90%
    of 200 seeded draws (seed 11).  Predicted error 2(ln 10 243 + ln 10)/(0.1·10^4) = 0.023."""
    x = np.random.default_rng(5).standard_normal(10_000)
    grid, rng = pb.candidate_grid(), np.random.default_rng(11)
    levels = [np.mean(x <= pb.private_quantile(x, level, grid, 0.1, rng)) for _ in range(200)]
    inside = np.mean(np.abs(np.array(levels) - level) <= 0.05)
    assert inside >= 0.9
    assert pb.quantile_error(10_000, 0.1, grid.size) < 0.05


def test_zcdp_split_matches_the_zcdp_conversion():
    """count exponential mechanisms of ε_j²/8 each within ρ(eps, delta): ε_j = √(8ρ/count), ρ costing eps
    by Canonne, Kamath & Steinke (to 1e-9, never more), more than Bun & Steinke's ρ (used before)."""
    from dpstats.privacy.calibration import zcdp_eps

    eps, delta, count = 1.0, 1e-6, 5000
    eps_each, used, how = pb.split_budget(eps, delta, count)
    rho = count * eps_each**2 / 8
    assert 1 - 1e-9 <= zcdp_eps(rho, delta) <= 1.0
    assert rho > (math.sqrt(math.log(1 / delta) + eps) - math.sqrt(math.log(1 / delta))) ** 2
    assert used == delta and how.startswith("zCDP")
    assert pb.split_budget(eps, 0.0, count) == (
        eps / count,
        0.0,
        "basic composition of 5000 exponential mechanisms",
    )


def test_mode_rule_pools_wide_data_and_keeps_per_column_for_narrow():
    assert pb.choose_mode(100, 12_625, 1.0) == "pooled"
    assert pb.choose_mode(100_000, 2, 1.0) == "per_column"
    assert pb.choose_mode(None, 2, 1.0) == "pooled"  # add/remove: n private
    errors = [pb.predict_bound_error(10_000, d, 1.0) for d in (1, 10, 100)]
    assert errors == sorted(errors)
    assert pb.predict_bound_error(10_000, 100, 1.0, mode="pooled") < errors[-1]


def test_level_is_lowered_when_n_eps_cannot_resolve_it():
    assert pb.usable_level(0.99, 10**6, 1.0, 10_243) == 0.99
    low = pb.usable_level(0.99, 500, 0.25, 10_243)
    assert 0.5 <= low < 0.99
    assert pb.usable_level(0.99, None, 0.01, 10_243) == 0.99


def test_constant_column_gets_a_valid_box_containing_its_value():
    step = pb.PrivateBounds(pb.AutoBounds(mode="per_column"), eps=1.0, delta=0.0, neighbouring="replace")
    step.start(np.random.default_rng(0))
    X = np.column_stack([np.full(2000, 3.0), np.random.default_rng(1).normal(size=2000)])
    box = step.box(X, ["const", "z"])
    lo, hi = box["const"]
    assert lo < hi and lo <= 3.0 <= hi


def test_norm_bound_is_a_high_quantile_of_row_norms():
    step = pb.PrivateBounds(pb.AutoBounds(), eps=1.0, delta=0.0, neighbouring="replace")
    step.start(np.random.default_rng(2))
    X = np.random.default_rng(3).normal(size=(20_000, 10))
    B = step.norm(X)
    level = np.mean(np.linalg.norm(X, axis=1) <= B)
    assert abs(level - 0.99) <= 0.01 and step.entry().eps == 1.0


# ----------------------------------------------------------------------------- front doors
def _fan_lv():
    return dp.datasets.fan_lv(n=400, d=40, random_state=0)


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(bounds="auto", bounds_eps=5.0), "less than eps"),
        (dict(bounds="auto", bounds_eps=-1.0), "bounds_eps"),
        (dict(bounds=(-5, 5), bounds_eps=0.1), 'only with bounds="auto"'),
    ],
)
def test_bad_auto_arguments_are_refused_before_spending(bad, match):
    acc = dp.Accountant(eps=10.0)
    with pytest.raises(PrivacyParameterError, match=match):
        dp.dp_sis("y ~ .", _fan_lv(), eps=2.0, k=3, accountant=acc, random_state=0, **bad)
    assert acc.charges == []


@pytest.mark.parametrize(
    "options, match",
    [
        (dict(share=1.0), r"share of eps .* must be in \(0, 1\)"),
        (dict(share=0.0), r"must be in \(0, 1\)"),
        (dict(hint=-1.0), "hint is a public scale"),
        (dict(hint=0.0), "hint is a public scale"),
        (dict(mode="cols"), "mode must be one of"),
        (dict(level=0.3), "level must be in"),
    ],
)
def test_bad_auto_options_are_clear_errors(options, match):
    with pytest.raises(PrivacyParameterError, match=match):
        pb.AutoBounds(**options)


def test_infinities_and_nan_follow_the_missing_value_rule_and_strict_refuses_omit_before_spending():
    """Issue 26: under bounds="auto" the public fill is 0 (the centre of the private bounds' public
    grid), so no row is dropped and strict passes; na_action="omit" is a named step strict refuses."""
    df = _fan_lv()
    df.loc[3, "x1"], df.loc[5, "x2"] = np.inf, np.nan
    acc = dp.Accountant(eps=10.0)
    with pytest.raises(PrivacyParameterError, match="strict=True refuses"):
        dp.dp_sis(
            "y ~ .",
            df,
            eps=2.0,
            k=3,
            bounds="auto",
            na_action="omit",
            strict=True,
            accountant=acc,
            random_state=0,
        )
    assert acc.charges == []
    with pytest.warns(NonPrivateWarning, match="dropped"):
        dp.dp_sis("y ~ .", df, eps=2.0, k=3, bounds="auto", na_action="omit", random_state=0, oc_trials=0)
    fit = dp.dp_sis("y ~ .", df, eps=2.0, k=3, bounds="auto", strict=True, random_state=0, oc_trials=0)
    assert fit.n == len(df) and fit.privacy.covered
    assert all(math.isfinite(v) for pair in fit.private_bounds["bounds"].values() for v in pair)


def test_engine_input_and_infinite_eps_are_refused(tmp_path):
    df = _fan_lv()
    with pytest.raises(PrivacyParameterError, match="finite eps"):
        dp.dp_felp("class ~ .", planted(n=60, d=5, s=2, random_state=0), eps=math.inf, bounds="auto")
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    acc = dp.Accountant(eps=10.0)
    with pytest.raises(PrivacyParameterError, match="in memory"):
        dp.dp_sis("y ~ .", str(path), eps=2.0, k=3, bounds="auto", accountant=acc)
    assert acc.charges == []


def test_auto_bounds_unused_is_refused_before_spending():
    acc = dp.Accountant(eps=10.0)
    with pytest.raises(PrivacyParameterError, match="not used by this analysis"):
        dp.dp_two_stage("y ~ .", _fan_lv(), eps=2.0, k=3, bounds="auto", accountant=acc, random_state=0)
    assert acc.charges == []


def test_sis_auto_ledger_statement_and_outputs():
    acc = dp.Accountant(eps=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_sis(
            "y ~ .", _fan_lv(), eps=2.0, k=3, bounds="auto", strict=True, accountant=acc, random_state=0
        )
    first, main = fit.privacy.ledger
    assert first.step.startswith("private bounds") and first.eps == pytest.approx(0.2)
    assert main.eps == pytest.approx(1.8) and acc.spent_eps == pytest.approx(2.0)
    assert fit.privacy.eps == 2.0 and fit.call["eps"] == 2.0 and fit.call["bounds"] == "auto"
    assert any("values beyond them were clipped" in note for note in fit.privacy.notes)
    assert "quantile level" in first.note
    tidy, glance = fit.tidy(), fit.glance()
    assert {"bound_lo", "bound_hi"} <= set(tidy.columns) and (tidy.bound_lo < tidy.bound_hi).all()
    assert glance.bounds_eps.iloc[0] == pytest.approx(0.2)
    assert "Private bounds (released" in str(fit.summary())
    assert "Scaling: private bounds (released first) mapped" in str(fit) and "declared" not in str(fit)
    y_lo, y_hi = fit.to_dict()["private_bounds"]["bounds"]["y"]
    assert y_lo < y_hi and 0.5 <= fit.private_bounds["level"] <= 0.99


def test_bounds_eps_absolute_and_share_option():
    df = _fan_lv()
    fit = dp.dp_sis("y ~ .", df, eps=2.0, k=3, bounds="auto", bounds_eps=0.5, random_state=0, oc_trials=0)
    assert fit.privacy.ledger[0].eps == 0.5 and fit.privacy.ledger[1].eps == pytest.approx(1.5)
    fit = dp.dp_sis("y ~ .", df, eps=2.0, k=3, bounds=dp.AutoBounds(share=0.25), random_state=0, oc_trials=0)
    assert fit.privacy.ledger[0].eps == pytest.approx(0.5)


def test_add_remove_uses_the_asked_level_and_its_sensitivity_and_hides_n():
    fit = dp.dp_sis(
        "y ~ .",
        _fan_lv(),
        eps=2.0,
        k=3,
        bounds="auto",
        neighbouring="add_remove",
        random_state=0,
        oc_trials=0,
    )
    entry = fit.privacy.ledger[0]
    assert fit.private_bounds["level"] == 0.99 and "Δu = 0.99" in entry.sensitivity
    assert fit.private_bounds["mode"] == "pooled"
    assert fit.glance().n.iloc[0] is None


def test_cli_bounds_auto(tmp_path):
    """``dpstats run sis --bounds auto --arg bounds_eps=0.5``: the JSON carries the bounds step."""
    import subprocess
    import sys

    path = tmp_path / "d.csv"
    _fan_lv().to_csv(path, index=False)
    args = ["run", "sis", "--data", str(path), "--formula", "y ~ .", "--eps", "2", "--bounds", "auto"]
    args += ["--arg", "bounds_eps=0.5", "--arg", "k=3", "--arg", "strict=True", "--seed", "1"]
    args += ["--json", str(tmp_path / "out.json")]
    proc = subprocess.run(
        [sys.executable, "-m", "dpstats.cli", *args], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["privacy"]["ledger"][0]["eps"] == 0.5 and out["private_bounds"]["eps"] == 0.5
