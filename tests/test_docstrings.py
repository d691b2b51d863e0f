"""Docstring examples are runnable (numpydoc ``Examples`` sections, run as doctests)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import dpstats
from dpstats.errors import NonPrivateWarning

SKIP = {"dpstats.cli"}  # argparse entry point; covered by tests/test_cli.py
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(dpstats.__path__, "dpstats.")
    if m.name not in SKIP and not m.name.startswith("dpstats.demos")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)  # every dependency is declared: no skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)  # an example with a data-dependent step shows it
        result = doctest.testmod(
            module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
        )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
