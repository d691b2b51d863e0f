"""dp_lm(bounds="auto")'s refusal says what fixes it (audit s13-stat3, finding 6: refused at 7 of 12 common
(n, eps) cells with the default bounds_eps; at n = 500, eps = 4 it asks for 92 % of the budget).

The refusal (nothing spent) now also gives the n from which this bounds_eps reaches the level, from
Dwork & Roth's Theorem 3.11 as the package applies it (level error 2(ln m + ln(1/β))/(eps_each·n),
recomputed here), and the eps that raising bounds_eps would leave for the fit.  Checked at the
boundary: the stated n runs, one row fewer is refused.  Data: sklearn's diabetes (the audit's),
resampled with replacement (seed 1), y ~ bmi + bp + s5.
"""

from __future__ import annotations

import math
import re
import warnings

import pandas as pd
import pytest
from sklearn.datasets import load_diabetes

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.privacy.bounds import FAILURE, candidate_grid


def _rows(n: int) -> pd.DataFrame:
    d = load_diabetes(scaled=False, as_frame=True)
    return d.data.assign(y=d.target).sample(n, replace=True, random_state=1).reset_index(drop=True)


def _fit(n: int, eps: float):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dp.dp_lm("y ~ bmi + bp + s5", _rows(n), eps=eps, bounds="auto", n_boot=100, random_state=1)


@pytest.mark.parametrize(("n", "eps"), [(500, 4.0), (5000, 1.0)])
def test_refusal_states_the_rows_this_bounds_eps_needs_and_they_suffice(n, eps):
    acc = dp.Accountant(eps=10.0)
    with pytest.raises(PrivacyParameterError) as err:
        dp.dp_lm("y ~ bmi + bp + s5", _rows(n), eps=eps, bounds="auto", accountant=acc, random_state=1)
    text = str(err.value)
    assert acc.spent_eps == 0.0 and "Declare public bounds=" in text
    stated = int(re.search(r"reaches from n = (\d+) rows", text).group(1))
    count = int(re.search(r"\((\d+) private quantiles\)", text).group(1))
    eps_each = 0.1 * eps / count  # the default share, split evenly over the quantiles (pure: delta = 0)
    expected = math.ceil(2 * (math.log(candidate_grid().size) + math.log(1 / FAILURE)) / (eps_each * 0.05))
    assert stated == expected
    _fit(stated, eps)  # runs
    with pytest.raises(PrivacyParameterError):
        _fit(stated - 1, eps)


def test_raising_bounds_eps_says_what_is_left_for_the_fit():
    with pytest.raises(PrivacyParameterError) as err:
        _fit(500, 4.0)
    raise_to = float(re.search(r"raise bounds_eps to ([0-9.]+) or more", str(err.value)).group(1))
    left = float(re.search(r"leaving ([0-9.]+) for the fit", str(err.value)).group(1))
    assert left == pytest.approx(4.0 - raise_to, abs=6e-3)  # both shown to 3 significant digits
