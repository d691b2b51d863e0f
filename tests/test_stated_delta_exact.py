"""The stated delta is the delta asked for, not its shares' rounded sum (newcomer audit s14, finding 7):
dp_lm(eps=1, delta=0.01) stated 0.010000000000000002 and SessionPlan(3.2, 1e-5) slots 1.0000000000000002e-06.
The shares still sum (fsum) to no less than the total: the stated value never falls below what is spent."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.privacy.accountant import BudgetPlan, exact_shares


@pytest.mark.parametrize("total", [0.01, 1e-3, 3e-7, 1e-6, 0.07, 1.0, 2.5])
@pytest.mark.parametrize("shares", [[0.1, 0.9], [0.3, 0.3, 0.4], [1 / 3, 1 / 3, 1 / 3], [0.05, 0.95]])
def test_exact_shares_sum_to_the_total(total, shares):
    parts = exact_shares(total, shares)
    assert math.fsum(parts) == total
    assert all(abs(p - total * f) <= 1e-12 * total for p, f in zip(parts, shares))


def test_dp_lm_states_the_requested_delta_everywhere():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 500)})
    df["y"] = 1 + 2 * df.x + rng.normal(0, 0.5, 500)
    acc = dp.Accountant(eps=1, delta=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm(
            "y ~ x", df, eps=1, delta=0.01, bounds={"x": (-1, 1), "y": (-3, 5)}, n_boot=100, accountant=acc
        )
    assert fit.privacy.delta == 0.01 and fit.glance()["delta"].iloc[0] == 0.01
    assert fit.to_dict()["privacy"]["delta"] == 0.01 and acc.spent_delta == 0.01
    assert math.fsum(e.delta for e in fit.privacy.ledger) == 0.01


def test_budget_plan_entries_sum_exactly():
    plan = BudgetPlan(eps=1.0, delta=0.01, gaussian_only=True)
    plan.add("a", "Gaussian mechanism", 0.1, "Δ₂ = 1")
    plan.add("b", "Gaussian mechanism", 0.9, "Δ₂ = 1")
    entries = plan.entries()
    assert math.fsum(e.delta for e in entries) == 0.01 and math.fsum(e.eps for e in entries) == 1.0


def test_session_slots_state_the_even_share_within_the_total():
    slots = dp.SessionPlan(3.2, 1e-5).gaussian_fits(10)
    assert [s.delta for s in slots] == [1e-6] * 10
    assert math.fsum(s.delta for s in slots) <= 1e-5
