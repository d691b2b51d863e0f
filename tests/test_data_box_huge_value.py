"""A box read from the data (no bounds declared) with one huge finite value: the neighbours give the same
warnings and a finite release; neither fails after its charge (the s13 attacker audit's finding 1).

D is 400 rows of N(0, 1) (seed 0); D' replaces row 0's x1 and x2 by 1e160, whose square overflows.
Before the fix dp_gmm raised ValueError after its charge on D' and dp_pca released all-NaN loadings,
each with numpy's RuntimeWarnings that D did not give.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.geometry import RANGE_CAP, range_box


def _neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.normal(size=(400, 2)), columns=["x1", "x2"])
    d2 = d.copy()
    d2.loc[0, ["x1", "x2"]] = 1e160
    return d, d2


CALLS = {
    "dp_gmm": (lambda d: dp.dp_gmm("~ x1 + x2", d, k=2, eps=1.0, delta=1e-6, random_state=3), "means"),
    "dp_pca": (lambda d: dp.dp_pca("~ x1 + x2", d, k=1, eps=1.0, delta=1e-6, random_state=3), "basis"),
}


def _outcome(call, attr: str, data: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(data)
    # a DataWarning (e.g. "FIT FAILED") is read from released values, which may differ
    kinds = sorted({w.category.__name__ for w in caught if w.category.__name__ != "DataWarning"})
    return kinds, np.asarray(getattr(result, attr), dtype=float)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_one_huge_value_in_an_unbounded_column_changes_only_released_values(name):
    call, attr = CALLS[name]
    d, d2 = _neighbours()
    kinds, released = _outcome(call, attr, d)
    kinds2, released2 = _outcome(call, attr, d2)
    assert kinds == kinds2 == ["NonPrivateWarning"]
    assert released.shape == released2.shape
    assert np.isfinite(released2).all()


def test_a_box_read_from_the_data_is_capped_and_never_empty():
    box = range_box(np.array([-1e160, 1e60, 3.0]), np.array([1e160, 1e60, 3.0]))
    assert box.lo.tolist()[0] == -RANGE_CAP and box.hi.tolist()[0] == RANGE_CAP
    assert (box.hi > box.lo).all()  # a constant column at the cap keeps a positive width
    assert box.hi.tolist()[2] == 4.0
