"""dp_knockoff with c_min and lambda_min declared but the row bound B read from the rows (no bounds=):
the outside audit's pair (round 3, F1: knockoff_read_B_in_error.py).  B is the data's largest row norm, a
named data-dependent step; whether a refusal occurs may depend on it, but no refusal's text, nor the
statement, may quote B, eta^2 or a value derived from them (DESIGN §3, §4).  Before the fix D0 said
"(declared c_min = 0.01, B = 3.671)" and D1 "B = 5.196" (the norm of its row 0), uncharged.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp

FORMULA = "y ~ w0 + w1 + w2"
RNG = np.random.default_rng(0)
D0 = pd.DataFrame(RNG.normal(size=(101, 3)), columns=["w0", "w1", "w2"]).assign(y=RNG.normal(size=101))
D1 = D0.copy()
D1.loc[0, ["w0", "w1", "w2"]] = [3.0, 3.0, 3.0]  # one row replaced: the largest row norm becomes sqrt(27)
ROW_NORMS = [float(np.linalg.norm(d[["w0", "w1", "w2"]].to_numpy(), axis=1).max()) for d in (D0, D1)]
B_READ_STEP = "row-norm bound B set to the largest row norm of the data"


def _outcome(data, **kw):
    acc = dp.Accountant(eps=100, delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = dp.dp_knockoff(
                FORMULA, data, eps=1, delta=1e-3, sigma=1, beta_norm=1, accountant=acc, random_state=1, **kw
            )
            return None, fit, acc
        except dp.DPStatsError as exc:
            return f"{type(exc).__name__}: {exc}", None, acc


def _quotes_a_row_norm(text: str) -> bool:
    return any(f"{b:.4g}" in text for b in ROW_NORMS) or re.search(r"\bB = \d", text) is not None


@pytest.mark.parametrize(
    "declared",
    [dict(c_min=0.01, lambda_min=0.2), dict(c_min=8.0, lambda_min=0.9), dict(c_min=8.0, lambda_min=0.2)],
    ids=["Assumption 3 fails", "the margin fails on both", "the margin fails on D1 only"],
)
def test_refusals_after_b_is_read_quote_no_value_read_from_the_rows(declared):
    (e0, _, acc0), (e1, _, acc1) = _outcome(D0, **declared), _outcome(D1, **declared)
    assert e1 is not None  # every case refuses D1 (its row norm sqrt(27) breaks c_min = 8's margin)
    if e0 is not None:
        assert e0 == e1  # one text whichever condition failed: which one depends on B
    for err in (e0, e1):
        if err is not None:
            assert not _quotes_a_row_norm(err), err
            assert "Raised after a data-dependent step" in err and B_READ_STEP in err
            assert "cannot be calibrated on these data" in err and "row bound B read from the rows" in err
    assert acc0.spent_eps == 0 or e0 is None
    assert acc1.spent_eps == 0


def test_the_statements_margin_is_withheld_when_b_is_read():
    # c_min = 20 keeps both neighbours' margins below 1: both run.  Before the fix the assumption showed
    # (lambda_min + eta^2)/(1 - eta^2) = 0.2127 and 0.2302, from which B follows
    (e0, f0, _), (e1, f1, _) = (
        _outcome(D0, c_min=20.0, lambda_min=0.2),
        _outcome(D1, c_min=20.0, lambda_min=0.2),
    )
    assert e0 is None and e1 is None
    assert f0.privacy.assumptions == f1.privacy.assumptions
    assert B_READ_STEP in f0.privacy.data_dependent_steps
    for fit in (f0, f1):
        assert not any(_quotes_a_row_norm(text) for text in fit.privacy.assumptions)
        assert "(lambda_min + eta^2)/(1 - eta^2) on the data" in " ".join(fit.privacy.assumptions)


def test_a_declared_row_bound_is_public_and_still_quoted():
    err, _, acc = _outcome(D0, bounds=6.0, c_min=0.01, lambda_min=0.2)
    assert "Assumption 3 fails" in err and "(declared c_min = 0.01, B = 6)" in err and acc.spent_eps == 0
    err, _, _ = _outcome(D0, bounds=6.0, c_min=8.0, lambda_min=0.9)
    assert "eta^2 = B^2/(c_min^2 - B^2) = 1.286, B = 6" in err
    _, fit, _ = _outcome(D0, bounds=1.0, c_min=20.0, lambda_min=0.2)
    margin = (0.2 + 1 / 399) / (1 - 1 / 399)  # eta^2 = B^2/(c_min^2 - B^2) = 1/399
    assert f"(lambda_min + eta^2)/(1 - eta^2) = {margin:.4g} on the data" in " ".join(fit.privacy.assumptions)
