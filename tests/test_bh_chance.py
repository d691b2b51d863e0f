"""dp_bh warns (ChanceWarning) before spending when no rejection can come from evidence (audit s13-stat3, finding 3).

The condition is public: g = log ν + t − log(qk/m) > 0 (dpstats.privacy.fdr.rejection_gap), i.e.
even a p-value at the truncation ν lies g above the loosest cut, so a rejection needs a fresh
Laplace noise below −g.  Oracles: the audit's own setting (m = 200, 20 non-null, y bounds (−5, 5),
σ = 1.1, its power table: 0.000–0.012 where g > 0, 0.84–1.00 where g < 0) and a Monte Carlo of
the released mechanism on the strongest possible data (every p-value below ν).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.methods import bh as m
from dpstats.privacy import fdr
from dpstats.privacy.accountant import Accountant
from dpstats.privacy.randomness import NoiseSource

Q, K, M, NU, Y_WIDTH, SIGMA = 0.1, 20, 200, 1e-10, 10.0, 1.1


def _scale(n: int, eps: float, delta: float = 0.0) -> float:
    """λ of the formula route at the audit's setting (η derived as dp_bh derives it)."""
    eta = m.eta_two_sided_z(m.z_slope_delta(-5.0, 5.0, n, SIGMA), NU)
    return fdr.peeling_scale(eps, delta, K, eta).scale


def _frame(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = 0.15 * X[:, :5].sum(axis=1) + rng.normal(0, 1, n)
    return df


@pytest.mark.parametrize(
    ("n", "eps", "delta", "audit_power"),
    [
        (10_000, 1.0, 0.0, 0.000),
        (100_000, 4.0, 0.0, 0.007),
        (1_000_000, 1.0, 1e-6, 0.006),
        (100_000, 4.0, 1e-6, 0.012),
    ],
)
def test_gap_is_positive_in_every_audit_cell_without_power(n, eps, delta, audit_power):
    assert fdr.rejection_gap(_scale(n, eps, delta), K, Q, M, NU) > 0


@pytest.mark.parametrize(
    ("n", "eps", "delta", "audit_power"),
    [(10_000_000, 1.0, 0.0, 0.837), (1_000_000, 4.0, 0.0, 0.984), (1_000_000, 4.0, 1e-6, 0.999)],
)
def test_gap_is_negative_in_every_audit_cell_with_power(n, eps, delta, audit_power):
    assert fdr.rejection_gap(_scale(n, eps, delta), K, Q, M, NU) < 0


def test_front_door_warns_before_spending_and_says_what_n_or_eps_would_do():
    """The audit's front-door case (n = 20 000, eps = 1) with m = 40 columns: warned, and with the warning
    turned into an error nothing is charged (the warning comes before the spend)."""
    df = _frame(20_000, 40)
    acc = Accountant(eps=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        with pytest.raises(ChanceWarning, match=r"cannot reject on evidence.*eps >= .* at this n, or n >= "):
            dp.dp_bh("y ~ .", data=df, eps=1.0, bounds=(-5, 5), sigma=SIGMA, accountant=acc, random_state=0)
    assert acc.remaining_eps == 5.0
    with pytest.warns(ChanceWarning):
        dp.dp_bh("y ~ .", data=df, eps=1.0, bounds=(-5, 5), sigma=SIGMA, accountant=acc, random_state=0)
    assert acc.remaining_eps == pytest.approx(4.0)


def test_the_n_and_eps_stated_close_the_gap_and_no_less_does():
    """The n (at eps = 4) and the eps (at n = 20 000) the warning states bring g to <= 0; 1 % less does not."""
    options = m.BHOptions.partial(
        route=m.MARGINAL_Z,
        q=Q,
        eps=4.0,
        delta=0.0,
        truncate=NU,
        max_rejections=K,
        neighbouring="replace",
        sigma=SIGMA,
    )
    with pytest.warns(ChanceWarning) as caught:
        m.plan(options, M, m.SlopeTests(n=20_000, y_width=Y_WIDTH, sigma=SIGMA))
    text = str(caught[0].message)
    n_needed = int(text.split("n >= ")[1].split(" at")[0].replace(" ", ""))
    eps_needed = float(text.split("eps >= ")[1].split(" at")[0])
    assert (
        fdr.rejection_gap(_scale(n_needed, 4.0), K, Q, M, NU)
        <= 0
        < fdr.rejection_gap(_scale(int(n_needed * 0.99), 4.0), K, Q, M, NU)
    )
    assert (
        fdr.rejection_gap(_scale(20_000, eps_needed), K, Q, M, NU)
        <= 0
        < fdr.rejection_gap(_scale(20_000, eps_needed * 0.99), K, Q, M, NU)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)  # at the stated n: silent
        m.plan(options, M, m.SlopeTests(n=n_needed, y_width=Y_WIDTH, sigma=SIGMA))


def test_bound_on_any_rejection_holds_on_the_strongest_data():
    """Every p-value at 0 (below ν): the rate of runs with a rejection is at most any_rejection_bound.
    4 000 runs (seed 7) at the audit's n = 10⁵, eps = 4 cell; tolerance 3 Monte Carlo s.e."""
    scale = _scale(100_000, 4.0)
    cal = fdr.PeelingCalibration(scale, "basic")
    noise = NoiseSource(7)
    runs = 4000
    hits = sum(
        fdr.private_bh(np.zeros(M), q=Q, k=K, truncate=NU, calibration=cal, noise=noise).rejected.size > 0
        for _ in range(runs)
    )
    bound = fdr.any_rejection_bound(scale, K, Q, M, NU)
    assert 0 < bound < 0.5
    assert hits / runs <= bound + 3 * math.sqrt(bound * (1 - bound) / runs)


def test_raw_route_warns_with_the_eta_that_would_do_and_is_silent_at_its_docstring_setting():
    p = np.r_[1e-9, 3e-9, np.linspace(0.01, 1, 48)]
    with pytest.warns(ChanceWarning, match=r"or eta <= "):
        dp.dp_bh(p, q=0.1, eps=1.0, eta=1.0, max_rejections=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        fit = dp.dp_bh(p, q=0.1, eps=1.0, eta=0.01, max_rejections=5, random_state=0)
    assert fit.rejected == ["H1", "H2"]
