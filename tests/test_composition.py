"""Tight composition of recorded privacy events (issue 29).

* Every ledger entry of every front door records its mechanism as a JSON-able event.
* Composed figures equal dp_accounting's own and closed forms: k Gaussians with multiplier σ are
  one Gaussian with multiplier σ/√k (its exact eps from the analytic Gaussian, to 1e-3); zCDP sums
  convert by Canonne, Kamath & Steinke's Cor. 13 (dp_accounting's RDP conversion on a dense grid of
  orders, and below Bun & Steinke's ρ + 2√(ρ log 1/δ)); mixed sequences of every mechanism the package
  uses.
* The issue's table, reproduced within 2 %.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from golden.cases import CASES, _fan_lv

import dpstats as dp
from dpstats.privacy import events as ev
from dpstats.privacy.accountant import LedgerEntry
from dpstats.privacy.calibration import analytic_gaussian_sigma
from dpstats.privacy.composition import compose, gaussian_eps

SIGMA_1 = analytic_gaussian_sigma(1.0, 1e-6)


@pytest.fixture(scope="module")
def fits() -> dict:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: make() for name, make in CASES.items()}


# ----------------------------------------------------------------------------- slice 1: events
def test_events_round_trip_as_plain_json():
    every = [
        ev.gaussian(3.0, 2.0, count=2),
        ev.laplace(2.0),
        ev.pure(0.5, rho=0.01),
        ev.bounded_range(0.25, count=4),
        ev.eps_delta(1.0, 1e-6),
        ev.zcdp(0.1),
        ev.delta_only(1e-7),
        ev.none(),
        ev.post_processing(),
        ev.composed(ev.gaussian(1.0), ev.delta_only(1e-9)),
    ]
    for e in every:
        text = json.dumps(e.to_dict())
        assert ev.PrivacyEvent.from_dict(json.loads(text)) == e
    assert ev.eps_delta(math.inf, 0.0).kind == "none"
    assert ev.PrivacyEvent.from_dict({"kind": "gaussian", "rho": 0.125}).noise_multiplier == 2.0


def test_selections_record_bounded_range_where_it_holds():
    assert ev.selection_event("peeling", 1.0, 4) == ev.bounded_range(0.25, count=4)
    assert ev.selection_event("oneshot_gumbel", 1.0, 4) == ev.bounded_range(0.25, count=4)
    assert ev.selection_event("joint", 1.0, 4) == ev.bounded_range(1.0)
    assert ev.selection_event("canonical_lipschitz", 1.0, 4) == ev.pure(1.0)  # no BR derivation
    assert ev.bounded_range(0.5, count=2).zcdp_cost() == (2 * 0.5**2 / 8, 0.0)


def test_every_front_door_records_its_mechanisms(fits):
    for name, fit in fits.items():
        for entry in fit.privacy.ledger:
            assert entry.event is not None, f"{name}: '{entry.step}' has no event"
        d = fit.to_dict()
        json.dumps(d["privacy"]["ledger"], allow_nan=False)
        for row in d["privacy"]["ledger"]:
            assert row["event"]["kind"] in ev.KINDS
        if math.isinf(fit.privacy.eps):
            assert compose(fit).eps == math.inf
            continue
        # tight composition of one analysis never states more than its own (eps, delta)
        c = compose(fit)
        tight = min(v for k, v in c.candidates.items() if k != "basic")
        assert tight <= fit.privacy.eps * (1 + 1e-3) + 1e-3, (name, c.candidates, fit.privacy.eps)


def test_gaussian_fits_record_their_noise_multiplier(fits):
    """dp_lm (an all-Gaussian zCDP plan): the two Gaussian steps' multipliers give back the plan's exact
    ρ = μ²/2, so composing the fit gives back its stated eps."""
    from dpstats.privacy.calibration import gaussian_rho_from_eps_delta

    fit = fits["dp_lm"]
    rho = sum(e.event.zcdp_cost()[0] for e in fit.privacy.ledger)
    assert rho == pytest.approx(gaussian_rho_from_eps_delta(fit.privacy.eps, fit.privacy.delta), rel=1e-12)
    composed = compose(fit).eps
    assert composed == pytest.approx(fit.privacy.eps, rel=1e-9) and composed <= fit.privacy.eps
    knock = fits["dp_knockoff_II"].privacy.ledger
    assert [e.event.kind for e in knock] == ["gaussian", "delta"]


# ----------------------------------------------------------------------------- slice 2: composition
@pytest.mark.parametrize("k", [2, 10, 50])
def test_k_gaussians_are_one_gaussian_with_multiplier_over_root_k(k):
    sigma, delta = 3.0, 1e-5
    exact = gaussian_eps(sigma / math.sqrt(k), delta)
    pld = compose([ev.gaussian(sigma)] * k, delta=delta, method="pld").eps
    assert pld == pytest.approx(exact, abs=1e-3)
    assert compose([ev.gaussian(sigma)] * k, delta=delta).eps == pytest.approx(exact, rel=1e-9)


def test_pld_equals_dp_accountings_own():
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant as P

    events = [ev.gaussian(SIGMA_1)] * 3 + [ev.laplace(1.0)] * 2 + [ev.gaussian(2.0), ev.laplace(3.0)]
    acc = P.PLDAccountant()
    acc.compose(
        dpa.ComposedDpEvent(
            [dpa.GaussianDpEvent(SIGMA_1)] * 3
            + [dpa.LaplaceDpEvent(1.0)] * 2
            + [dpa.GaussianDpEvent(2.0), dpa.LaplaceDpEvent(3.0)]
        )
    )
    ours = compose(events, delta=1e-5, method="pld").eps
    assert ours == pytest.approx(acc.get_epsilon(1e-5), rel=1e-3)


def test_rdp_and_zcdp_equal_dp_accountings_own_and_below_the_closed_form():
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as R

    events = [ev.bounded_range(0.5)] * 6 + [ev.zcdp(0.02), ev.gaussian(4.0)]
    acc = R.RdpAccountant()
    acc.compose(dpa.GaussianDpEvent(4.0))
    acc.compose(dpa.ZCDpEvent(6 * 0.5**2 / 8 + 0.02))
    assert compose(events, delta=1e-6, method="rdp").eps == pytest.approx(acc.get_epsilon(1e-6), rel=1e-9)
    # zCDP: the summed ρ converted by Canonne, Kamath & Steinke (Cor. 13), which dp_accounting's RDP
    # accountant applies on its grid of orders (a dense grid here: its eps is above the infimum, within
    # 1e-6); tighter than Bun & Steinke's closed form ρ + 2√(ρ log 1/δ), which dpstats used before
    rho = 6 * 0.5**2 / 8 + 0.02 + 1 / (2 * 4.0**2)
    dense = R.RdpAccountant(orders=1 + np.logspace(-3, 6, 30001))
    dense.compose(dpa.ZCDpEvent(rho))
    ours = compose(events, delta=1e-6, method="zcdp").eps
    assert dense.get_epsilon(1e-6) * (1 - 1e-6) <= ours <= dense.get_epsilon(1e-6)
    assert ours < rho + 2 * math.sqrt(rho * math.log(1e6))


def test_mixed_sequence_of_every_mechanism_takes_the_smallest_valid_bound():
    entries = [
        LedgerEntry("g", "Gaussian", 1.0, 1e-6, event=ev.gaussian(SIGMA_1)),
        LedgerEntry("l", "Laplace", 0.5, event=ev.laplace(2.0)),
        LedgerEntry("v", "vector Laplace", 0.5, event=ev.pure(0.5)),
        LedgerEntry("s", "peeling top-k", 1.0, event=ev.bounded_range(0.25, count=4)),
        LedgerEntry("z", "zCDP pipeline", 1.0, 1e-6, event=ev.zcdp(0.017)),
        LedgerEntry("f", "failure of a bound", 0.0, 1e-7, event=ev.delta_only(1e-7)),
        LedgerEntry("e", "generic", 0.3, 1e-7, event=ev.eps_delta(0.3, 1e-7)),
        LedgerEntry("b", "post-processing", 0.0, event=ev.post_processing()),
    ]
    c = compose(entries)
    assert c.basic_eps == pytest.approx(4.3) and c.basic_delta == pytest.approx(2.2e-6)
    assert c.delta == pytest.approx(2.2e-6)
    assert set(c.candidates) >= {"basic", "zcdp", "pld+rdp"}  # no PLD of zCDP, no RDP of (eps, delta)
    assert c.eps == min(c.candidates.values()) < c.basic_eps
    # the composed pair of a Gaussian and a delta-only step: the delta step is taken out first
    two = compose(entries[:1] + entries[5:6], delta=1e-6 + 1e-7)
    assert two.eps == pytest.approx(1.0, abs=1e-9)


def test_nonprivate_steps_compose_to_infinity_and_bad_delta_is_refused():
    assert compose([ev.gaussian(1.0), ev.none()], delta=1e-5).eps == math.inf
    with pytest.raises(dp.PrivacyParameterError):
        compose([ev.delta_only(1e-5), ev.gaussian(1.0)], delta=1e-6)


# ----------------------------------------------------------------------------- the issue's table
TABLE = [  # (events, delta, PLD eps measured with dp_accounting 0.6.0 in the issue)
    ("10 Gaussian (1, 1e-6)", [ev.gaussian(SIGMA_1)] * 10, 1e-5, 3.14),
    ("50 Gaussian (0.2, 1e-7)", [ev.gaussian(analytic_gaussian_sigma(0.2, 1e-7))] * 50, 5e-6, 1.31),
    ("2 Gaussian (1, 1e-6)", [ev.gaussian(SIGMA_1)] * 2, 2e-6, 1.40),
    ("5 Gaussian + 5 Laplace", [ev.gaussian(SIGMA_1)] * 5 + [ev.laplace(1.0)] * 5, 5e-6, 6.79),
    ("20 Laplace 0.5", [ev.laplace(2.0)] * 20, 1e-6, 9.67),
]


@pytest.mark.parametrize("label,events,delta,expected", TABLE, ids=[t[0] for t in TABLE])
def test_the_issues_table_from_events(label, events, delta, expected):
    assert compose(events, delta=delta).eps == pytest.approx(expected, rel=0.02)


def _knockoff_fit(seed: int):
    import warnings

    with warnings.catch_warnings():  # data-dependent column norms: beside the point here
        warnings.simplefilter("ignore", dp.NonPrivateWarning)
        return _knockoff(seed)


def _knockoff(seed: int):
    return dp.dp_knockoff(
        "y ~ .",
        _fan_lv(2000, 40, 3),
        eps=1.0,
        delta=2e-6,  # Method II: δ₁ = 1e-6 for the Gaussian, δ₂ = 1e-6 for the failure of ‖Pw‖² ≤ ζ
        fdr=0.2,
        bounds=8.0,
        sigma=1.0,
        beta_norm=5.0,
        lambda_min=0.5,
        random_state=seed,
        oc_trials=0,
    )


def test_the_issues_table_from_result_objects():
    """Ten (and two) dp_knockoff fits: each releases one Gaussian calibrated to (1, 1e-6) (analytic)."""
    fits = [_knockoff_fit(s) for s in range(10)]
    ten = compose(fits, delta=10 * 2e-6)  # the ten failure deltas are taken out first
    assert ten.basic_eps == pytest.approx(10.0) and ten.eps == pytest.approx(3.14, rel=0.02)
    two = compose(fits[:2], delta=2 * 2e-6)
    assert two.eps == pytest.approx(1.40, rel=0.02)
    assert dp.compose(fits[:2]).eps == two.eps


# ----------------------------------------------------------------------------- slice 3: adaptive filters
def _gauss_entry(label: str = "a Gaussian release") -> LedgerEntry:
    return LedgerEntry(label, "Gaussian", 1.0, 1e-6, event=ev.gaussian(SIGMA_1))


def test_zcdp_filter_admits_what_the_mechanisms_cost_and_refuses_atomically():
    basic = dp.Accountant(eps=3.2, delta=1e-5)
    zcdp = dp.Accountant(eps=3.2, delta=1e-5, composition="zcdp")
    for acc in (basic, zcdp):
        admitted = 0
        while True:
            before = list(acc.charges)
            try:
                acc.spend([_gauss_entry()], label=f"fit {admitted + 1}")
            except dp.BudgetExceededError:
                assert acc.charges == before  # nothing was spent
                break
            admitted += 1
        if acc is basic:
            assert admitted == 3
        else:  # ρ = 1/(2σ²) each, within ρ(3.2, 9e-6) (Canonne, Kamath & Steinke; 6 by Bun & Steinke's)
            rho_each = 1 / (2 * SIGMA_1**2)
            assert admitted == math.floor(acc.budget_rho / rho_each) == 8
            assert acc.spent_rho == pytest.approx(8 * rho_each)
            assert acc.spent_eps <= acc.eps
    # bounded range at eps²/8, pure at eps²/2; delta-only steps against the reserve
    acc = dp.Accountant(eps=1.0, delta=1e-6, composition="zcdp", delta_reserve=2e-7)
    acc.spend([LedgerEntry("pick", "exponential mechanism", 0.3, event=ev.bounded_range(0.3))])
    assert acc.spent_rho == pytest.approx(0.3**2 / 8)
    acc.spend([LedgerEntry("bound", "high-probability bound", 0.0, 2e-7, event=ev.delta_only(2e-7))])
    with pytest.raises(dp.BudgetExceededError):
        acc.spend([LedgerEntry("bound", "high-probability bound", 0.0, 1e-8, event=ev.delta_only(1e-8))])
    with pytest.raises(dp.BudgetExceededError):
        acc.spend([LedgerEntry("count", "Laplace", 0.5, event=ev.laplace(2.0))])  # 0.125 > what is left


def test_every_accountant_output_names_its_composition():
    basic, zcdp = dp.Accountant(eps=1.0, delta=1e-6), dp.Accountant(eps=1.0, delta=1e-6, composition="zcdp")
    assert "basic composition" in repr(basic) + basic.summary() + basic.to_dict()["composition_text"]
    for text in (repr(zcdp), zcdp.summary(), zcdp.to_dict()["composition_text"]):
        assert "zcdp" in text.lower()
    assert "Feldman & Zrnic 2021" in zcdp.summary()
    json.dumps(zcdp.to_dict(), allow_nan=False)
    with pytest.raises(dp.PrivacyParameterError):
        dp.Accountant(eps=1.0, composition="zcdp")  # a pure budget has no zCDP conversion
    with pytest.raises(dp.PrivacyParameterError):
        dp.Accountant(eps=1.0, delta=1e-6, composition="pld")  # PLD needs a declared session


def test_a_front_door_charges_a_zcdp_accountant_by_its_events():
    df = _fan_lv(200, 20, 4)
    acc = dp.Accountant(eps=3.0, delta=1e-6, composition="zcdp")  # ρ_B = 0.1836
    fits = []
    with pytest.raises(dp.BudgetExceededError):
        for i in range(10):  # peeling top-2 at eps = 1: ρ = 2·0.5²/8 = 0.0625 each
            fits.append(
                dp.dp_sis(
                    "y ~ .", df, eps=1.0, k=2, topk="peeling", bounds=(-5, 5), random_state=i, accountant=acc
                )
            )
    assert len(fits) == 2 and acc.spent_rho == pytest.approx(0.125)


# ----------------------------------------------------------------------------- slice 4: both directions
def test_a_declared_session_calibrates_ten_fits_to_the_noise_of_one_today():
    from golden.cases import _regression

    session = dp.SessionPlan(eps=3.2, delta=1e-5)
    slots = session.gaussian_fits(10, calibration="gaussian")  # dp_lm's steps are all Gaussian
    m = slots[0].event.noise_multiplier
    # ten fits within (3.2, 1e-5) get about the noise of one (1, 1e-6) Gaussian today (σ/Δ = 4.22)
    assert m == pytest.approx(SIGMA_1, rel=0.02) and m < SIGMA_1
    assert session.composition().eps == pytest.approx(3.2, rel=1e-5)
    acc = session.accountant()
    df = _regression()
    fits = [
        dp.dp_lm(
            "y ~ .", df, eps=s.eps, delta=s.delta, bounds=(-3, 3), n_boot=100, random_state=i, accountant=acc
        )
        for i, s in enumerate(slots)
    ]
    with pytest.raises(dp.BudgetExceededError):
        dp.dp_lm("y ~ .", df, eps=0.1, delta=1e-7, bounds=(-3, 3), n_boot=100, random_state=0, accountant=acc)
    c = dp.compose(fits, delta=1e-5)
    assert c.eps == pytest.approx(3.2, rel=1e-4) and c.basic_eps > 10
    assert "pld" in repr(acc).lower() and "PLD" in acc.summary()
    json.dumps(acc.to_dict(), allow_nan=False)
    # "gaussian": the per-fit (eps, delta) that calibrate_gaussian (dp_knockoff) turns into noise m too;
    # "zcdp" (dp_gmm's mixed plan): the larger eps whose ρ by Canonne, Kamath & Steinke gives noise m
    from dpstats.privacy.calibration import calibrate_gaussian, rho_from_eps_delta

    assert calibrate_gaussian(slots[0].eps, slots[0].delta, 1.0)[0] == pytest.approx(m, rel=1e-9)
    other = dp.SessionPlan(eps=3.2, delta=1e-5).gaussian_fits(10, calibration="zcdp")
    assert 1 / math.sqrt(2 * rho_from_eps_delta(other[0].eps, other[0].delta)) == pytest.approx(m, rel=1e-9)
    assert other[0].eps > slots[0].eps


def test_a_session_refuses_declarations_beyond_its_budget():
    session = dp.SessionPlan(eps=1.0, delta=1e-6)
    session.add("a count", 0.6)
    with pytest.raises(dp.BudgetExceededError):
        session.add("another", 0.6)
    assert len(session.slots) == 1


def test_the_comparison_report_states_the_composed_budget(tmp_path):
    fits = [_knockoff_fit(s) for s in range(2)]
    path = dp.report(fits, tmp_path / "two.html")
    html = open(path, encoding="utf-8").read()
    composed = dp.compose(fits)
    assert composed.eps == pytest.approx(1.40, rel=0.02)
    line = html[html.index("Together these 2 analyses") :][:700]
    assert f"eps = {composed.eps:.6g}"[:10] in line and "exact Gaussian composition" in line
    assert "Basic composition, valid however they were chosen: eps = 2" in line
    assert "Gaussian, σ/Δ = " in html  # every ledger row shows its event


def test_every_ledger_entry_the_package_constructs_records_an_event():
    """Static guard: every ``LedgerEntry(...)`` call in dpstats passes ``event=`` (docstrings aside)."""
    import ast
    from pathlib import Path

    missing = []
    root = Path(dp.__file__).parent
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LedgerEntry":
                if not any(k.arg == "event" for k in node.keywords):
                    missing.append(f"{path.relative_to(root)}:{node.lineno}")
    assert missing == []


def test_a_mixed_session_is_calibrated_by_bisection_on_its_pld_composition():
    session = dp.SessionPlan(eps=3.0, delta=1e-5)
    session.add("a pure count", 1.0)  # accounted as the worst (1, 0)-DP pair
    slots = session.gaussian_fits(4, calibration="gaussian")
    c = session.composition()
    assert c.method.startswith("PLD") and c.eps == pytest.approx(3.0, rel=1e-4)
    # the Gaussians alone would be cheaper than what is left by basic composition: PLD shares the budget
    alone = compose([s.event for s in slots], delta=1e-5).eps
    assert alone > 3.0 - 1.0
    assert len(session.slots) == 5 and session.accountant().spent_eps == 0.0


def test_the_planner_plans_each_fit_of_a_declared_session_at_its_share():
    """dp.plan(..., session=, analyses=) plans at the slot the session would give each fit: the same
    (eps, delta) as SessionPlan.gaussian_fits, the user's session untouched, stated in print and to_dict;
    and ten dp_lm fits at that (eps, delta) are exactly what the session's accountant admits."""
    from golden.cases import _regression

    session = dp.SessionPlan(eps=3.2, delta=1e-5)
    pl = dp.plan("dp_lm", n=2000, p=3, session=session, analyses=10, trials=5, random_state=1)
    assert session.slots == []  # planned on a copy
    slot = dp.SessionPlan(eps=3.2, delta=1e-5).gaussian_fits(10, calibration="gaussian")[0]
    assert pl.eps == [pytest.approx(slot.eps)] and pl.call["delta"] == pytest.approx(slot.delta)
    assert pl.eps[0] > 3 * 3.2 / 10  # PLD: three times the share basic composition allows
    assert "one of 10 dp_lm fits" in str(pl) and pl.to_dict()["session"] == pl.session
    assert pl.call["session"] == [3.2, 1e-5] and pl.call["analyses"] == 10
    same = dp.plan("dp_lm", n=2000, p=3, session=(3.2, 1e-5), analyses=10, trials=5, random_state=1)
    assert same.eps == pl.eps
    acc = session.accountant()
    session.gaussian_fits(10, calibration="gaussian")
    df = _regression()
    for i in range(10):
        dp.dp_lm("y ~ .", df, eps=pl.eps[0], delta=pl.call["delta"], bounds=(-3, 3), n_boot=100,
                 random_state=i, accountant=acc)  # fmt: skip
    with pytest.raises(dp.BudgetExceededError):
        dp.dp_lm(
            "y ~ .", df, eps=pl.eps[0], delta=pl.call["delta"], bounds=(-3, 3), n_boot=100, accountant=acc
        )
    # dp_knockoff is not planned at a Gaussian slot's share: the slot does not take its delta-only step
    # (tests/test_session_slots.py)
    with pytest.raises(dp.PrivacyParameterError, match="dp_knockoff is not all Gaussian"):
        dp.plan("dp_knockoff", n=2000, p=30, session=(3.2, 1e-5), analyses=10, trials=3, random_state=1)
    with pytest.raises(dp.PrivacyParameterError, match="not both"):
        dp.plan("dp_lm", n=2000, p=3, eps=1.0, session=(3.2, 1e-5))
    with pytest.raises(dp.PrivacyParameterError, match="dp_sis releases by pure-DP selection"):
        dp.plan("dp_sis", n=2000, p=30, session=(3.2, 1e-5), analyses=2)
    with pytest.raises(dp.PrivacyParameterError, match="give eps"):
        dp.plan("dp_lm", n=2000, p=3)
