"""Under add/remove-one-row n is private: dp_gmm and dp_pca run to completion on 0, 1 and 2 rows.

Issue 26 (residual, "private by construction"): no error, warning or shape may depend on a
private n.  Data sets of 0, 1 and 2 rows must give the same messages, warnings and shapes
(the released values come from the noise alone, by construction), and the accountant is
charged exactly once per completed call, with the plan's (eps, delta).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.api.pca import dp_pca
from dpstats.privacy.accountant import Accountant
from neighbours import assert_same_view, reader_view, shape

SIZES = (0, 1, 2)
FORMULA = "~ x1 + x2 + x3"
# min_weight tiny: a collapse warning quotes released weights (allowed), which the noise alone decides
GMM = dict(k=2, eps=2.0, delta=1e-5, bounds=(-1, 1), oc_trials=0, min_weight=1e-12)
DOORS = {
    "dp_gmm": (dp.dp_gmm, GMM),
    "dp_gmm k=1": (dp.dp_gmm, dict(GMM, k=1)),
    "dp_gmm plug-in": (dp.dp_gmm, dict(GMM, assume="released", oc_trials=20)),
    "dp_gmm sample_aggregate": (dp.dp_gmm, dict(GMM, method="sample_aggregate", groups=10)),
    "dp_gmm auto bounds": (dp.dp_gmm, dict(GMM, bounds="auto")),
    "dp_gmm data range": (dp.dp_gmm, dict(GMM, bounds=None)),
    "dp_pca": (dp_pca, dict(k=2, eps=1.0, delta=1e-5, bounds=(-1, 1))),
    "dp_pca radius": (dp_pca, dict(k=2, eps=1.0, delta=1e-5, bounds=(-1, 1), radius=0.5)),
    "dp_pca auto bounds": (dp_pca, dict(k=2, eps=1.0, delta=1e-5, bounds="auto")),
    "dp_pca data range": (dp_pca, dict(k=2, eps=1.0, delta=1e-5, bounds=None)),
}


def _rows(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"x1": np.linspace(-0.5, 0.5, n), "x2": np.linspace(0.3, -0.3, n), "x3": np.linspace(0.1, 0.2, n)}
    )


@pytest.mark.parametrize("name", sorted(DOORS))
def test_zero_one_and_two_rows_look_the_same(name):
    func, kwargs = DOORS[name]
    views = [
        reader_view(func, FORMULA, _rows(n), neighbouring="add_remove", random_state=3, **kwargs)
        for n in SIZES
    ]
    for n, view in zip(SIZES[1:], views[1:]):
        assert_same_view(views[0], view, f"{name}: 0 rows against {n}")
    fits = [v["fit"] for v in views]
    for fit in fits:
        assert fit.n is None  # n is not released under add/remove
    shapes = [
        {k: shape(v) for k, v in vars(fit).items() if isinstance(v, (np.ndarray, list))} for fit in fits
    ]
    assert shapes[0] == shapes[1] == shapes[2]


@pytest.mark.filterwarnings("ignore::dpstats.errors.NonPrivateWarning")  # the data-range box (named)
@pytest.mark.parametrize("name", sorted(DOORS))
def test_each_completed_call_is_charged_once(name):
    func, kwargs = DOORS[name]
    acc = Accountant(eps=100.0, delta=1e-2)
    for i, n in enumerate(SIZES, start=1):
        fit = func(FORMULA, _rows(n), neighbouring="add_remove", random_state=n, accountant=acc, **kwargs)
        assert len(acc.charges) == i
        charge = acc.charges[-1]
        assert [e.step for e in charge.entries] == [e.step for e in fit.privacy.ledger]
        assert math.isclose(sum(e.eps for e in charge.entries), kwargs["eps"])
        assert math.isclose(sum(e.delta for e in charge.entries), fit.privacy.delta)
    assert math.isclose(acc.spent_eps, len(SIZES) * kwargs["eps"])


def test_gmm_diagnostics_on_no_rows_state_the_assumption():
    fit = dp.dp_gmm(FORMULA, _rows(0), neighbouring="add_remove", random_state=1, diagnostics=True, **GMM)
    assert fit.diagnostics["rows_per_component_assumption_holds"] is False
    assert any("rows per component" in a for a in fit.privacy.assumptions)


def test_replace_one_row_still_refuses_too_few_rows_before_any_charge():
    """Under replace-one-row n is public: the checks on it stay, and nothing is spent."""
    acc = Accountant(eps=10.0, delta=1e-3)
    for func, kwargs in (DOORS["dp_gmm"], DOORS["dp_pca"]):
        with pytest.raises(dp.DataError, match="fewer than 2 complete rows"):
            func(FORMULA, _rows(1), accountant=acc, **kwargs)
    assert acc.charges == []
