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

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from test_private_n_unfilled import channels

BOUNDS = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "x4": (-1, 1), "cls": (0, 1)}


def _pair(n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["cls"] = (df.x1 + 0.3 * rng.standard_normal(n) > 0).astype(float)
    other = df.copy()
    other.loc[9, "cls"] = 0.371  # one row replaced: a value outside {0, 1}
    return df, other


def _run(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is what the reader sees
            return f"{type(exc).__name__}: {exc}", sorted({str(w.message) for w in caught}), None
    return None, sorted({str(w.message) for w in caught}), fit


FELP = dict(eps=1.0, n_estimators=2, variant="strict", bounds=BOUNDS, oc_trials=0, random_state=5)


def test_felp_numeric_response_classes_are_a_named_step_and_never_shown(tmp_path):
    views = []
    for data in _pair():
        error, caught, fit = _run(dp.dp_felp, "cls ~ x1 + x2 + x3 + x4", data, **FELP)
        step = [w for w in caught if "classes of the numeric response 'cls'" in w]
        assert step, caught
        if error is not None:  # a named step: the rows may still decide (refused under strict)
            views.append(("error", error))
            continue
        assert fit.classes is None
        texts = channels(fit, tmp_path)
        for channel, text in texts.items():
            assert "0.371" not in text and "classes: " not in text, channel
        assert json.loads(texts["to_dict"])["outputs"]["classes"] is None
    for data in _pair():
        acct = dp.Accountant(eps=10.0)
        with pytest.raises(
            PrivacyParameterError, match="strict=True refuses .*classes of the numeric response"
        ):
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
