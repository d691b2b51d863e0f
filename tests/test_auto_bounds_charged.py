"""bounds="auto": once the private bounds have drawn from the rows, the call is charged for them whatever
follows (outside audit round 2, N1 and N5).

A quantile drawn from the rows is a release.  Before the fix, dp_knockoff drew its row bound B and then
refused (Assumption 3) before the accountant was charged, quoting B: a free release an attacker could
repeat at will (the audit measured eps_lb 2.70 against a budget of 1).  The rule is checked on every door
that offers bounds="auto", with errors a user can provoke (a zCDP accountant that can pay the bounds but
not the call) and with an error injected after the frame and the plan (any later check).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import AssumptionError, BudgetExceededError, DataError, DPStatsError
from dpstats.privacy import bounds as pb
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.statement import DataDependence


@pytest.fixture
def draws(monkeypatch):
    """The number of private quantiles drawn from the rows since the fixture was made."""
    count = [0]
    draw = pb.PrivateBounds._draw

    def counting(self, *args, **kwargs):
        count[0] += 1
        return draw(self, *args, **kwargs)

    monkeypatch.setattr(pb.PrivateBounds, "_draw", counting)
    return count


def frame(seed: int = 1, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(rng.uniform(1, 9, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    d["y"] = d.x1 + rng.normal(0, 1, n)
    d["yb"] = (d.x2 > 5).astype(float)
    return d


def knockoff_refused(d, acc, seed):
    """The audit's call: a declared c_min below any B the mechanism draws, so Assumption 3 refuses."""
    return dp.dp_knockoff(
        "y ~ x1 + x2 + x3", d, eps=1, delta=1e-3, bounds=dp.AutoBounds(eps=0.1), c_min=0.01,
        lambda_min=0.1, sigma=1.0, beta_norm=1.0, random_state=seed, accountant=acc,
    )  # fmt: skip


def test_knockoff_refusal_after_the_drawn_b_is_charged_and_cannot_be_repeated_for_free(draws):
    d = frame()
    acc = dp.Accountant(eps=1.25, delta=1e-2)  # each call must fit whole (eps = 1) before it reads the rows
    texts = []
    for seed in range(3):
        with pytest.raises(AssumptionError) as caught:
            knockoff_refused(d, acc, seed)
        texts.append(str(caught.value))
    assert draws[0] == 3
    assert acc.spent_eps == pytest.approx(0.3) and len(acc.charges) == 3
    assert all("private bounds" in c.label and c.entries[0].eps == pytest.approx(0.1) for c in acc.charges)
    assert all("their share was charged to the accountant: it is spent" in t for t in texts)
    # the fourth cannot be paid (0.3 + 1 > 1.25): refused before anything is drawn
    with pytest.raises(BudgetExceededError, match="Nothing was spent"):
        knockoff_refused(d, acc, 3)
    assert draws[0] == 3 and acc.spent_eps == pytest.approx(0.3)


def test_knockoff_refusal_without_accountant_says_the_bounds_were_spent():
    with pytest.raises(AssumptionError, match=r"so their share was charged: it is spent\.$"):
        knockoff_refused(frame(), None, 0)


def test_knockoff_refusal_on_rows_read_c_min_is_charged_too(draws):
    """c_min not declared: the refusal shows no value, but whether it comes depends on the drawn B."""
    d = frame()
    acc = dp.Accountant(eps=10, delta=1e-2)
    with pytest.raises(AssumptionError, match="cannot be calibrated") as caught:
        dp.dp_knockoff(
            "y ~ x1 + x2 + x3 + I(x1 * 0.001)", d, eps=1, delta=1e-3, bounds="auto", sigma=1.0,
            beta_norm=1.0, random_state=1, accountant=acc,
        )  # fmt: skip
    assert draws[0] == 1 and acc.spent_eps == pytest.approx(0.1)
    assert "data-dependent step" in str(caught.value) and "charged to the accountant" in str(caught.value)


# every door offering bounds="auto", each as a call that runs on frame() with the given accountant
F3 = "y ~ x1 + x2 + x3"
DOORS = {
    "dp_lm": lambda d, a, **kw: dp.dp_lm(F3, d, eps=1, delta=1e-6, bounds=dp.AutoBounds(eps=0.7), accountant=a, **kw),
    "dp_pca": lambda d, a, **kw: dp.dp_pca("~ x1 + x2 + x3", d, k=2, eps=1, delta=1e-6, bounds="auto", accountant=a, **kw),
    "dp_sis": lambda d, a, **kw: dp.dp_sis(F3, d, eps=1, k=1, bounds="auto", accountant=a, **kw),
    "dp_gmm": lambda d, a, **kw: dp.dp_gmm("~ x1 + x2", d, k=2, eps=1, delta=1e-6, bounds="auto", accountant=a, oc_trials=0, **kw),
    "dp_two_stage": lambda d, a, **kw: dp.dp_two_stage(
        F3, d, eps=1, k=1, second_stage="private_ols", bounds="auto", accountant=a, oc_trials=0, **kw
    ),
    "dp_felp": lambda d, a, **kw: dp.dp_felp(
        "yb ~ x1 + x2 + x3", d, eps=1, lam=0.1, n_estimators=3, bounds="auto", accountant=a, oc_trials=0, **kw
    ),
    "dp_knockoff": lambda d, a, **kw: dp.dp_knockoff(
        F3, d, eps=1, delta=1e-3, bounds="auto", c_min=60.0, lambda_min=0.1, sigma=1.0, beta_norm=1.0,
        accountant=a, oc_trials=0, **kw,
    ),
    "vertical_glm": lambda d, a, **kw: dp.vertical_glm(
        F3, d, parties=[["x1"], ["x2", "x3"]], eps=1, delta=1e-6, bounds="auto", penalty="ridge", lam=1.0,
        accountant=a, **kw,
    ),
}  # fmt: skip


def charged_for_bounds(acc: dp.Accountant) -> bool:
    return any(e.step.startswith("private bounds") for e in acc.ledger)


@pytest.mark.parametrize("door", sorted(DOORS))
def test_an_error_after_the_draw_is_charged(door, draws, monkeypatch):
    """Any error raised once the bounds have drawn (here injected after the frame and the plan) charges
    them and says so; before the fix it left the accountant untouched."""

    def injected(self):
        raise DataError("injected refusal after the frame and the plan.")

    monkeypatch.setattr(DataDependence, "release_warnings", injected)
    acc = dp.Accountant(eps=10, delta=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError) as caught:
            DOORS[door](frame(), acc)
    assert draws[0] > 0, "every door here draws its bounds in the frame"
    assert charged_for_bounds(acc) and len(acc.charges) == 1
    assert "had been drawn from the rows before this error" in str(caught.value)


@pytest.mark.parametrize("door", sorted(DOORS))
def test_a_zcdp_refusal_is_before_the_draw_or_charged(door, draws):
    """A zCDP accountant that can pay a bounds step but not the call: refused before any draw, or, where
    the door's plan cannot be priced from public inputs, the drawn bounds are charged (never free)."""
    acc = dp.Accountant(eps=0.3, delta=1e-6, composition="zcdp")  # ρ pays a bounds step at eps 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            DOORS[door](frame(), acc)
        except DPStatsError as err:
            text = str(err)
        else:
            pytest.skip(f"{door} fits this budget")
    if draws[0]:
        assert charged_for_bounds(acc) and "charged to the accountant" in text
    else:
        assert acc.charges == [] and "Nothing was spent" in text


def test_zcdp_accountant_refuses_dp_pca_before_drawing(draws):
    """N5: the audit's calls; the second (eps = 5) is refused before any quantile is drawn."""
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.uniform(0, 10, (3000, 3)), columns=["x1", "x2", "x3"])
    acc = dp.Accountant(eps=1.0, delta=1e-6, composition="zcdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp.dp_pca("~ x1 + x2 + x3", d, k=2, eps=0.5, delta=1e-7, bounds="auto", accountant=acc)
        assert draws[0] == 2
        spent = acc.spent_rho
        with pytest.raises(BudgetExceededError, match=r"needs rho >= .*Nothing was spent"):
            dp.dp_pca("~ x1 + x2 + x3", d, k=2, eps=5.0, delta=1e-7, bounds="auto", accountant=acc)
    assert draws[0] == 2 and acc.spent_rho == spent


def test_dp_pca_public_rho_is_a_lower_bound_of_its_charge():
    """The price used before the draw is a lower bound of the charge: it is priced at the delta left when
    the bounds take their delta share (zCDP), and the pooled bounds here are pure DP, so their share of
    delta goes back to the PCA, which is charged its exact Gaussian conversion at (0.9, 1e-6)."""
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.uniform(0, 10, (2000, 3)), columns=["x1", "x2", "x3"])
    for center in ("midpoint", "mean"):
        acc = dp.Accountant(eps=10, delta=1e-3, composition="zcdp")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dp.dp_pca(
                "~ x1 + x2 + x3", d, k=1, eps=1, delta=1e-6, bounds="auto", center=center, accountant=acc
            )
        bounds = acc.charges[0].entries[0]
        assert bounds.privacy_event.kind == "pure" and bounds.delta == 0
        priced = dp.methods.pca.PCAOptions.partial(eps=0.9, delta=0.9e-6).public_rho()
        charged = acc.spent_rho - bounds.privacy_event.zcdp_cost()[0]
        assert priced <= charged and priced == pytest.approx(
            gaussian_rho_from_eps_delta(0.9, 0.9e-6), rel=1e-8
        )
        assert charged == pytest.approx(gaussian_rho_from_eps_delta(0.9, 1e-6), rel=1e-9)


@pytest.mark.parametrize("door", sorted(DOORS))
def test_strict_refuses_the_frames_steps_before_the_draw(door, draws):
    """A named step of the frame (rows dropped under na_action="omit") is refused by strict (or omit by a
    door that needs a public n) before the bounds draw, so the refusal costs nothing; dp_sis and dp_pca drew first before (the refusal
    would now have to be charged)."""
    acc = dp.Accountant(eps=10, delta=1e-2)
    call = DOORS[door]
    with pytest.raises(DPStatsError, match="strict=True refuses|cannot use na_action=.omit."):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(frame(), acc, strict=True, na_action="omit")
    assert draws[0] == 0 and acc.charges == []


# doors whose plan (delta > 0) is one exact Gaussian conversion of the (eps, delta) left after the bounds
GAUSSIAN_DOORS = {
    "dp_lm": (
        lambda d, a, eps: dp.dp_lm(F3, d, eps=eps, delta=1e-6, bounds=dp.AutoBounds(eps=1.5), accountant=a),
        lambda eps, delta: dp.methods.lm.LMOptions.partial(eps=eps, delta=delta),
    ),
    "vertical_glm": (
        lambda d, a, eps: dp.vertical_glm(
            F3, d, parties=[["x1"], ["x2", "x3"]], eps=eps, delta=1e-6, bounds="auto", penalty="ridge", lam=1.0,
            accountant=a,
        ),
        lambda eps, delta: dp.methods.privreg.PrivregOptions.partial(eps=eps, delta=delta),
    ),
}  # fmt: skip


@pytest.mark.parametrize("door", sorted(GAUSSIAN_DOORS))
def test_zcdp_accountant_that_cannot_pay_the_gaussian_plan_is_refused_before_drawing(door, draws):
    """The accountant (rho 0.46) can pay the bounds at their largest cost but not the call's Gaussian plan
    (rho > 1.2): before, the bounds drew and were charged and the call refused after; now nothing is drawn."""
    call, _ = GAUSSIAN_DOORS[door]
    acc = dp.Accountant(eps=5.0, delta=1e-6, composition="zcdp")
    with pytest.raises(BudgetExceededError, match=r"needs rho >= .*Nothing was spent"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(frame(), acc, 10.0)
    assert draws[0] == 0 and acc.charges == [] and acc.spent_rho == 0


@pytest.mark.parametrize("door", sorted(GAUSSIAN_DOORS))
def test_public_rho_of_a_gaussian_plan_is_what_it_charges(door):
    """The price used before the draw equals the charge of the call's own steps (within 1e-9)."""
    call, options = GAUSSIAN_DOORS[door]
    acc = dp.Accountant(eps=100, delta=1e-3, composition="zcdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(frame(), acc, 4.0)
    entries = [e for charge in acc.charges for e in charge.entries]
    bounds = [e for e in entries if e.step.startswith("private bounds")]
    assert len(bounds) == 1 and len(entries) > 1
    steps = [e for e in entries if e not in bounds]  # the (eps, delta) the plan was given, in its shares
    left = options(math.fsum(e.eps for e in steps), math.fsum(e.delta for e in steps))
    bounds_rho = bounds[0].privacy_event.zcdp_cost()[0]
    charged = acc.spent_rho - bounds_rho
    assert left.public_rho() <= charged  # a lower bound, 1e-9 below the exact conversion
    assert charged == pytest.approx(left.public_rho(), rel=2e-9)
    assert left.public_rho() == pytest.approx(gaussian_rho_from_eps_delta(left.eps, left.delta), rel=1e-8)


def test_dp_glm_public_rho_is_what_its_plan_charges():
    """dp_glm offers no bounds="auto" yet; its plan is Gaussian throughout, so its price is its charge."""
    acc = dp.Accountant(eps=100, delta=1e-3, composition="zcdp")
    dp.dp_glm(
        "yb ~ x1 + x2",
        frame(n=20000),
        eps=4.0,
        delta=1e-6,
        bounds={"x1": (1, 9), "x2": (1, 9)},
        accountant=acc,
    )
    priced = dp.methods.glm.GLMOptions.partial(eps=4.0, delta=1e-6).public_rho()
    assert 0 < priced <= acc.spent_rho and acc.spent_rho == pytest.approx(priced, rel=2e-9)


def test_dp_lm_at_delta_0_is_laplace_and_has_no_gaussian_price():
    """delta = 0: dp_lm's plan is Laplace, so no Gaussian price is set (0 is a lower bound of any charge)."""
    assert dp.methods.lm.LMOptions.partial(eps=1.0, delta=0.0).public_rho() == 0.0
    assert dp.methods.lm.LMOptions.partial(eps=1.0, delta=1e-6).public_rho() > 0
