"""dp_select_infer(select="knockoff") hands the call's bounds to the selector and keeps its steps: the
outside audit's round 3, F2 (select_infer_knockoff_bounds.py).  Before the fix the selector never saw
bounds=, so B was part A's largest row norm (a data-dependent step the user had declared away), and an
empty selection dropped the selector's steps from the statement.

The attacker's pair: D1 is D0 with one row of part A moved to a corner of the declared box.  With the
declared box passed on as the row bound B = the norm of its largest corner (sqrt(6 * 16)), both
neighbours calibrate alike; before the fix D0 ran and D1 was refused (B read from part A's rows).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods.select_infer import split_rows

N, P, SEED = 2000, 6, 3
RNG = np.random.default_rng(0)
X = RNG.normal(size=(N, P))
D0 = pd.DataFrame(X, columns=[f"w{j}" for j in range(P)]).assign(y=X[:, 0] + RNG.normal(size=N))
D1 = D0.copy()
D1.iloc[int(split_rows(N, 0.5, SEED)[0][0]), :P] = 4.0  # a row of part A, at the box's corner
BOX = {f"w{j}": (-4, 4) for j in range(P)} | {"y": (-8, 8)}
CORNER = math.sqrt(P * 16)  # 9.798
B_READ_STEP = "row-norm bound B set to the largest row norm of the data"


def _outcome(data, bounds=BOX, **select_args):
    acc = dp.Accountant(eps=100, delta=1e-2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = dp.dp_select_infer(
                "y ~ .",
                data,
                eps=30.0,
                delta=1e-4,
                select="knockoff",
                bounds=bounds,
                select_args=dict(sigma=1.0, beta_norm=1.0) | select_args,
                accountant=acc,
                random_state=SEED,
            )
            error = None
        except dp.DPStatsError as exc:
            fit, error = None, f"{type(exc).__name__}: {exc}"
    return error, fit, acc, sorted({str(w.message) for w in caught})


def test_neighbours_calibrate_on_the_declared_box_not_on_part_as_rows():
    # c_min = 12, lambda_min = 0.2 holds its margin for B up to 12/sqrt(3.5) = 6.4: part A's own rows
    # (largest norm about 5) pass, the corner (9.8) does not.  The declared box's B = 9.8 refuses both,
    # before any spend, quoting the public B
    (e0, _, acc0, w0), (e1, _, acc1, w1) = (_outcome(d, c_min=12.0, lambda_min=0.2) for d in (D0, D1))
    assert e0 is not None and e0 == e1 and w0 == w1
    assert f"B = {CORNER:.4g}" in e0 and B_READ_STEP not in e0
    assert acc0.spent_eps == 0 and acc1.spent_eps == 0


def test_declared_box_and_auto_bounds_name_no_row_bound_step():
    for bounds in (BOX, "auto"):
        e0, f0, _, w0 = _outcome(D0, bounds=bounds, c_min=40.0, lambda_min=0.2)
        assert e0 is None
        steps = f0.privacy.data_dependent_steps
        assert B_READ_STEP not in steps and not any(B_READ_STEP in w for w in w0)
        assert not any("rows with a missing value" in s or "rows augmented" in s for s in steps)
    e1, f1, _, _ = _outcome(D1, c_min=40.0, lambda_min=0.2)
    assert e1 is None and f1.privacy.data_dependent_steps == f0.privacy.data_dependent_steps == []


@pytest.mark.parametrize("bounds", [BOX, "auto"], ids=["declared", "auto"])
def test_an_empty_selection_keeps_the_selectors_steps_in_the_statement(bounds):
    error, fit, _, _ = _outcome(D0, bounds=bounds)
    assert error is None and list(fit.selected) == []  # no signal survives knockoff+ on 6 candidates
    steps = fit.privacy.data_dependent_steps
    assert any("C_min, C_max taken from the data" in s for s in steps) and B_READ_STEP not in steps
    assert int(fit.glance()["data_dependent_steps"][0]) == len(steps)
    assert f"{len(steps)} data-dependent step(s) not covered" in str(fit)
    assert "C_min, C_max taken from the data" in str(fit.to_dict())


def test_one_pair_for_every_column_is_a_row_bound_for_the_selector():
    """bounds=(lo, hi), which dp_select_infer takes for every column, reaches dp_knockoff as the row bound
    of that box, sqrt(6) * 8 (it was handed on as the pair, which dp_knockoff refuses as a row bound)."""
    corner = math.sqrt(P * 64)
    for data in (D0, D1):
        error, fit, acc, warned = _outcome(data, bounds=(-8, 8), c_min=40.0, lambda_min=0.2)
        if error is not None:
            assert "is one number B" not in error and f"B = {corner:.4g}" in error and acc.spent_eps == 0
        else:
            assert B_READ_STEP not in fit.privacy.data_dependent_steps
        assert not any(B_READ_STEP in w for w in warned)


def test_a_selector_refusal_after_its_private_bounds_says_the_whole_call_is_spent():
    """bounds="auto" with a declared c_min that the released row bound B breaks (c_min = 6, B about 4.2,
    so eta^2 = B^2/(c_min^2 - B^2) is near 1): the selector can refuse only after its draw, which comes
    after dp_select_infer's charge.  The dry run cannot see it (its probe stops at the draw's charge) and
    no public input decides it, so the message must say what was spent: the whole call, not the bounds'
    share, and not "Nothing was spent"."""
    error, fit, acc, _ = _outcome(D0, bounds="auto", c_min=6.0, lambda_min=0.2)
    assert fit is None and error.startswith("AssumptionError: the declared lambda_min = 0.2 cannot hold")
    assert (
        "dp_select_infer had charged the whole call (eps = 30, delta = 0.0001) to the accountant before "
        "part A's selector (dp_knockoff) refused: it is spent, and nothing was released." in error
    )
    assert "Nothing was spent" not in error and "Nothing but" not in error
    assert (acc.spent_eps, acc.spent_delta) == (30.0, 1e-4)
