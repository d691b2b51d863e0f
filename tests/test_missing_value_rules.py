"""Two corners of the rule for missing values (the outside statistician's audit, s11, L10 and L11).

L10. ``na_action="fill"`` given explicitly to a non-private run (eps = inf) whose variables have no
     declared bounds cannot fill them (a fill is the midpoint of declared bounds): their rows are dropped,
     as R's na.omit, and the run now says so with a DataWarning naming them, where it was silent (a
     private run names the same thing as a data-dependent step, or refuses).  The fit equals R's ``lm`` on
     airquality (rpy2; 1e-8 relative).  Declared bounds make the fill happen and the warning go.
L11. A variable the formula names only in a removed term (``y ~ . - yb``) takes no part in the model: in a
     private run under ``na_action="fill"`` it needs no bounds on any door (dp_select_infer refused it,
     dp_sis named a step for it), and neighbours differing in its value (missing or not) look the same.
     Under ``na_action="omit"`` (and at eps = inf, which names no step) a row missing it is dropped, as
     R's model frame keeps it: equal to R's ``lm(y ~ . - yb)`` (rpy2).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning
from neighbours import assert_same_view, reader_view

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
    # declared bounds: the fill happens (no row dropped), and is warned: it is not R's complete-case lm
    fit, caught = _caught(dp.dp_lm, AQ, aq, eps=np.inf, na_action="fill", bounds=AQ_BOUNDS)
    notes = [text for category, text in caught if category is DataWarning]
    assert fit.n == len(aq) and len(notes) == 1 and notes[0].startswith('na_action="fill" at eps = inf')


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


# ---------------------------------------------------------------------------------------------- L11
def _wide(n: int = 1200, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=[f"x{j}" for j in range(4)])
    df["y"] = df.x0 - df.x1 + rng.normal(0, 1, n)
    df["yb"] = (rng.random(n) < 0.5).astype(float)
    return df


BOUNDS = {**{f"x{j}": (-1, 1) for j in range(4)}, "y": (-5, 5)}  # none for yb
DOORS = [
    (dp.dp_sis, dict(eps=2.0, k=2, oc_trials=0)),
    (dp.dp_select_infer, dict(eps=4.0, delta=1e-6, k=2, n_boot=100)),
    (dp.dp_lm, dict(eps=4.0, delta=1e-6, n_boot=100)),
]


@pytest.mark.parametrize("door,kwargs", DOORS, ids=[d.__name__ for d, _ in DOORS])
def test_a_removed_variable_needs_no_bounds_on_any_door(door, kwargs):
    a = _wide()
    b = a.copy()
    b.loc[5, "yb"] = np.nan  # the neighbour: the removed variable missing in one row
    views = [reader_view(door, "y ~ . - yb", d, bounds=BOUNDS, random_state=3, **kwargs) for d in (a, b)]
    assert_same_view(*views, door.__name__)
    assert views[0]["fit"].privacy.data_dependent_steps == []
    assert "yb" not in " ".join(views[0]["fit"].terms)
    assert views[1]["fit"].n == len(b)  # no row dropped


@pytest.mark.r
@pytest.mark.parametrize(
    "kwargs", [dict(eps=np.inf), dict(eps=np.inf, na_action="omit")], ids=["fill", "omit"]
)
def test_at_eps_inf_a_row_missing_a_removed_variable_is_dropped_as_r_does(rpy2_robjects, kwargs):
    from dpstats.rbridge import to_r

    df = _wide(200)
    df.loc[[2, 9], "yb"] = np.nan
    rpy2_robjects.globalenv["wide_df"] = to_r(df)
    expected = np.asarray(rpy2_robjects.r("coef(lm(y ~ . - yb, wide_df))"))
    fit, _ = _caught(dp.dp_lm, "y ~ . - yb", df, **kwargs)
    assert fit.n == 198
    np.testing.assert_allclose(fit.coefficients, expected, rtol=1e-8)
