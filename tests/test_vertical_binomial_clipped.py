"""vertical_glm's binomial response in DP mode: its domain enforced by construction (audit finding F3).

vertical_glm(family="binomial") in DP mode refused a response with a value outside {0, 1}
("needs a 0/1 response; 'cls' has other values"): one row's outcome decided between an error and a
fit.  It now clips y to [0, 1], the family's domain, a public rule stated in the statement (as
dp_glm's fitting rows do).  Attacker's view: two neighbouring data sets (one row's response
replaced by 0.371); every channel compared with its integers kept, and the value scanned for.
"""

from __future__ import annotations


import numpy as np
import pytest

import dpstats as dp
from test_private_n_unfilled import (
    BOUNDS_01 as BOUNDS,
    binary_pair as _pair,
    channels,
    integers,
    run_caught as _run,
)

VERTICAL = dict(
    parties=[["x1", "x2"], ["x3", "x4"]],
    family="binomial",
    penalty="ridge",
    lam=0.1,
    eps=1.0,
    delta=1e-5,
    bounds=BOUNDS,
    rounds=3,
    random_state=5,
)


def test_vertical_binomial_dp_clips_the_response_and_says_so(tmp_path):
    views = []
    for data in _pair():
        error, caught, fit = _run(dp.vertical_glm, "cls ~ x1 + x2 + x3 + x4", data, **VERTICAL)
        assert error is None, error
        assert not [
            m for m in caught if "dominated by noise" not in m
        ]  # ChanceWarning: tests/test_noise_dominated.py
        assert any("y clipped to [0, 1]" in a for a in fit.privacy.assumptions)
        texts = channels(fit, tmp_path)
        assert not any("0.371" in t for t in texts.values())
        views.append({k: integers(v) for k, v in texts.items()})
    for channel in views[0]:
        assert views[0][channel] == views[1][channel], channel


def test_vertical_binomial_dp_equals_the_fit_on_the_clipped_response():
    _, other = _pair()
    clipped = other.assign(cls=other.cls.clip(0, 1))
    a = dp.vertical_glm(
        "cls ~ x1 + x2 + x3 + x4", other.assign(cls=other.cls.where(other.cls < 1, 3.0)), **VERTICAL
    )
    b = dp.vertical_glm("cls ~ x1 + x2 + x3 + x4", clipped, **VERTICAL)
    assert np.allclose(a.coefficients["estimate"], b.coefficients["estimate"])


def test_vertical_without_dp_still_checks_the_response():
    _, other = _pair()
    with pytest.raises(dp.DataError, match="0/1 response"):
        dp.vertical_glm("cls ~ x1 + x2", other, parties=[["x1"], ["x2"]], family="binomial")
