"""dp_felp's classes of a numeric response are read from the rows: a named step, never shown (audit F2).

With a numeric response and no declared classes dp_felp read its classes from the rows without
naming a step, printed them ("3 classes: 0.0, 0.371, 1.0") and erred on neighbours only, even under
strict=True.  The step is now named (refused under strict before a row is read) and classes not
declared are never shown.  Attacker's view: two neighbouring data sets (one row's response replaced
by 0.371); every channel read for the value and for the classes.
"""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from test_private_n_unfilled import BOUNDS_01 as BOUNDS, binary_pair as _pair, channels, run_caught as _run

FELP = dict(eps=1.0, n_estimators=2, variant="strict", bounds=BOUNDS, oc_trials=0, random_state=5)


def test_felp_numeric_response_classes_are_a_named_step_and_never_shown(tmp_path):
    views = []
    for data in _pair():
        error, caught, fit = _run(dp.dp_felp, "cls ~ x1 + x2 + x3 + x4", data, **FELP)
        if error is not None:  # a named step: the rows may still decide (refused under strict)
            views.append(("error", error))  # an error comes alone, without the call's warnings
            continue
        assert [w for w in caught if "classes of the response 'cls'" in w], caught
        assert fit.classes is None
        texts = channels(fit, tmp_path)
        for channel, text in texts.items():
            assert "0.371" not in text and "classes: " not in text, channel
        assert json.loads(texts["to_dict"])["outputs"]["classes"] is None
    for data in _pair():
        acct = dp.Accountant(eps=10.0)
        with pytest.raises(PrivacyParameterError, match="strict=True refuses .*classes of the response"):
            dp.dp_felp("cls ~ x1 + x2 + x3 + x4", data, strict=True, accountant=acct, **FELP)
        assert acct.spent_eps == 0 and acct.charges == []


def test_felp_declared_classes_are_shown():
    one, _ = _pair()
    data = one.assign(cls=pd.Categorical(one.cls.map({0.0: "no", 1.0: "yes"}), categories=["no", "yes"]))
    bounds = {k: v for k, v in BOUNDS.items() if k != "cls"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_felp("cls ~ x1 + x2 + x3 + x4", data, **{**FELP, "bounds": bounds})
    assert fit.classes == ["no", "yes"] and "2 classes: no, yes" in str(fit)


@pytest.mark.parametrize("strict", [False, True])
def test_felp_classes_declared_in_the_formula_are_declared(strict):
    """``factor(carb, levels = c(...)) ~ ...`` declares the classes as ``levels=`` does: no class count is
    checked on the rows, so two neighbours give the same view.  On mtcars, carb 6 and carb 8 have one car
    each (dp_felp refused such a response, "a class with a single row"); the neighbour replaces the
    Ferrari Dino's carb = 6 by 8 (two cars at 8, none at 6), which it accepted."""
    from dpstats.rbridge import load_r_dataset
    from neighbours import assert_same_view, reader_view

    cars = load_r_dataset("mtcars", "datasets")
    other = cars.copy()
    other.loc[other.carb == 6, "carb"] = 8.0
    formula = "factor(carb, levels = c(1, 2, 3, 4, 6, 8)) ~ wt + hp + qsec"
    bounds = {"wt": (1, 6), "hp": (50, 350), "qsec": (14, 23)}
    kwargs = dict(eps=1.0, n_estimators=2, bounds=bounds, oc_trials=0, random_state=5, strict=strict)
    one = reader_view(dp.dp_felp, formula, cars, **kwargs)
    assert_same_view(one, reader_view(dp.dp_felp, formula, other, **kwargs))
    # no step named: the classes are public (32 rows in 2 learners cannot beat chance: said from public inputs)
    assert [w for w in one["warnings"] if w[0] != "ChanceWarning"] == []
    assert one["fit"].classes == ["1", "2", "3", "4", "6", "8"]
    assert "6 classes: 1, 2, 3, 4, 6, 8" in str(one["fit"])
