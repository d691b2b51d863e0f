"""A missing-bounds error never quotes a level read from the rows (audit finding F6).

dp_bh's formula route and vertical_glm resolved their boxes without naming the columns by their terms,
so ``bounds are missing for ... 'I(2 * w):gZed_Secret'`` quoted a level of ``g`` read from the rows.
Attacker's view: two neighbouring data sets, one row's ``g`` replaced by a secret level; the errors
must be equal and quote no level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp

BOUNDS = {"x1": (-1, 1), "y": (-1, 1), "cls": (0, 1), "w": (-1, 1)}


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "y": rng.uniform(-1, 1, n), "w": rng.uniform(-1, 1, n)})
    df["g"] = rng.choice(["a", "b"], n)
    df["cls"] = (df.y > 0).astype(float)
    other = df.copy()
    other.loc[5, "g"] = "Zed_Secret"  # one row replaced: a level no other row has
    return df, other


DOORS = {
    "dp_bh": lambda d: dp.dp_bh(
        "y ~ x1 + I(2 * w):g", data=d, q=0.2, eps=1.0, bounds=BOUNDS, sigma=1.0, max_rejections=2
    ),
    "vertical_glm": lambda d: dp.vertical_glm(
        "cls ~ x1 + I(2 * w):g",
        d,
        parties=[["x1"], ["w", "g"]],
        family="binomial",
        penalty="ridge",
        lam=0.1,
        eps=1.0,
        delta=1e-5,
        bounds=BOUNDS,
        rounds=2,
    ),
}


@pytest.mark.parametrize("name", sorted(DOORS))
def test_missing_bounds_error_names_terms_not_levels(name):
    errors = []
    for data in _pair():
        with pytest.raises(dp.PrivacyParameterError) as err:
            DOORS[name](data)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    assert "'I(2 * w):g'" in errors[0] and "not shown" in errors[0]
    for level in ("Zed_Secret", "ga", "gb", ":a", ":b"):
        assert level not in errors[0]
