"""Docstring examples are runnable (numpydoc ``Examples`` sections, run as doctests)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
import sys
import warnings

import pytest

import dpstats
from dpstats.api._common import door_docstring
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


def _front_doors():
    """The public functions of dpstats/api/*.py (the front doors, as scripts/house_measures.py counts them)."""
    import dpstats.api

    doors = []
    for info in pkgutil.iter_modules(dpstats.api.__path__, "dpstats.api."):
        module = importlib.import_module(info.name)
        doors += [
            f
            for name, f in vars(module).items()
            if name.startswith(("dp_", "vertical_")) and inspect.isfunction(f) and f.__module__ == info.name
        ]
    return doors


FRONT_DOORS = _front_doors()


def _documented(doc: str) -> list[str]:
    """The parameter names of a numpydoc Parameters section (``a, b : T``, ``a : T1, b : T2``, ``a, b``)."""
    section = re.search(r"\n    Parameters\n    -+\n(.*?)(?:\n    \w[\w ]*\n    -{3,}\n|$)", doc, re.S)
    names = []
    for header in re.findall(r"^    (\S.*)$", section.group(1), re.M):
        header = header if " : " in header else header + " : "
        for group in re.findall(r"(?:^|, )(\w+(?:, \w+)*) : ", header):
            names += group.split(", ")
    return names


def test_every_front_door_is_found():
    assert len(FRONT_DOORS) == 11, [d.__name__ for d in FRONT_DOORS]


@pytest.mark.skipif(sys.flags.optimize >= 2, reason="python -OO strips docstrings")
@pytest.mark.parametrize("door", FRONT_DOORS, ids=lambda d: d.__name__)
def test_front_door_documents_every_parameter_once_and_no_placeholder_is_left(door):
    documented = _documented(door.__doc__)
    assert sorted(documented) == sorted(inspect.signature(door).parameters)
    assert not re.search(r"^\s*\{[^}\n]*\}$|\{\}", door.__doc__, re.M), "an unsubstituted placeholder"


@pytest.mark.parametrize(
    "line", ["    {epss}", "    {eps: words the entry has no place for}", "    {diagnostics}"]
)
def test_door_docstring_refuses_a_placeholder_it_cannot_fill(line):
    def dp_demo(eps, diagnostics=False): ...

    dp_demo.__doc__ = f"Demo.\n\n    Parameters\n    ----------\n{line}\n    "
    with pytest.raises(ValueError, match="no shared entry"):
        door_docstring(dp_demo)
