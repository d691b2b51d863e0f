"""A corner of the rule for missing values (the outside statistician's audit, s11, L10).

L10. ``na_action="fill"`` given explicitly to a non-private run (eps = inf) whose variables have no
     declared bounds cannot fill them (a fill is the midpoint of declared bounds): their rows are dropped,
     as R's na.omit, and the run now says so with a DataWarning naming them, where it was silent (a
     private run names the same thing as a data-dependent step, or refuses).  The fit equals R's ``lm`` on
     airquality (rpy2; 1e-8 relative).  Declared bounds make the fill happen and the warning go.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning

AQ = "Ozone ~ Solar.R + Wind + Temp"
AQ_BOUNDS = {"Ozone": (0, 170), "Solar.R": (0, 340), "Wind": (0, 21), "Temp": (50, 100)}


def _caught(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = call(*args, **kwargs)
    return fit, [(w.category, str(w.message)) for w in caught]


@pytest.mark.r
def test_explicit_fill_without_bounds_at_eps_inf_is_warned_and_fits_as_r(rpy2_robjects):
    from dpstats.rbridge import load_r_dataset

    aq = load_r_dataset("airquality", "datasets")
    expected = np.asarray(rpy2_robjects.r(f"coef(lm({AQ}, airquality))"))
    fit, caught = _caught(dp.dp_lm, AQ, aq, eps=np.inf, na_action="fill")
    np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8)
    notes = [text for category, text in caught if category is DataWarning]
    assert notes == [
        "na_action=\"fill\" has no public fill for 'Ozone', 'Solar.R', 'Wind', 'Temp' (no declared bounds): "
        "rows missing them are dropped, as R's na.omit does. Declare their bounds, e.g. bounds={'Ozone': "
        "(lo, hi)}, to fill them with the bounds' midpoint instead."
    ]
    # the default (no na_action given) is R's lm as it is: nothing to warn
    fit, caught = _caught(dp.dp_lm, AQ, aq, eps=np.inf)
    assert not [c for c, _ in caught if c is DataWarning]
    # declared bounds: the fill happens (no row dropped), nothing to warn
    fit, caught = _caught(dp.dp_lm, AQ, aq, eps=np.inf, na_action="fill", bounds=AQ_BOUNDS)
    assert fit.n == len(aq) and not [c for c, _ in caught if c is DataWarning]


def test_the_fill_warning_depends_on_the_arguments_not_the_rows():
    """The same warning when no value is missing at all (from the arguments and the column types)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50)})
    _, full = _caught(dp.dp_glm, "y ~ x", df.assign(y=(df.y > 0).astype(int)), eps=np.inf, na_action="fill")
    gap = df.assign(y=(df.y > 0).astype(float))
    gap.loc[3, "x"] = np.nan
    _, holed = _caught(dp.dp_glm, "y ~ x", gap, eps=np.inf, na_action="fill")
    assert [t for c, t in full if c is DataWarning] == [t for c, t in holed if c is DataWarning]
    assert any("no public fill for 'x'" in t for c, t in full if c is DataWarning)
