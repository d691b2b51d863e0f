"""Wrapped text never breaks a hyphenated word; a warning's fix starts its own sentence and shows
what to fill in (no advice ending on an empty "sigma=")."""

from __future__ import annotations

import re
import warnings

from dpstats.errors import NonPrivateWarning
from dpstats.privacy.statement import DataDependence
from dpstats.results.base import _wrap


def test_wrap_keeps_hyphenated_words_whole():
    text = " ".join(["a data-dependent step, a non-finite value and a replace-one bound"] * 6)
    for width in range(30, 90, 3):
        lines = _wrap(text, width).splitlines()
        assert not any(re.search(r"[A-Za-z]-$", line) for line in lines), width


def test_a_warning_names_the_step_then_its_fix_as_a_sentence():
    dd = DataDependence(strict=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dd.add(
            "noise level sigma estimated from the OLS residuals",
            fix="declare a public upper bound, sigma=<x>",
        )
    msg = str(next(w.message for w in caught if issubclass(w.category, NonPrivateWarning)))
    assert msg.endswith("residuals. Declare a public upper bound, sigma=<x>")


def test_knockoff_fixes_show_a_placeholder():
    import inspect

    from dpstats.methods.knockoff import planning

    src = inspect.getsource(planning)
    assert not re.search(r'fix="[^"]*[a-z_]="', src)  # no fix ends on an empty name=
    assert "sigma=<a public upper bound>" in src
