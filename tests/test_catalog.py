"""The catalog of methods (``dpstats/catalog.py``) is the one list, and every entry resolves.

Each entry names its front door, result class, methods module, command-line name, demo,
planner module and R function; here each of them is imported or run.  A scan of the package's
source (an AST walk) checks that no other module keeps its own list of method names: no
tuple, list or set literal holding three or more of them, and no dict literal mapping three or
more of them (as keys) to names or module paths.  The R package's exports and required-argument table
are compared with the catalog's R functions.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import dpstats
from dpstats import catalog
from dpstats.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = catalog.METHODS
IDS = [m.name for m in ENTRIES]


def _object(path: str):
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def test_names_are_unique_and_public():
    for field in ("name", "cli", "demo", "planner", "r"):
        values = [getattr(m, field) for m in ENTRIES if getattr(m, field) is not None]
        assert len(values) == len(set(values)), field
    assert set(catalog.names()) <= set(dpstats.__all__)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_front_door_and_result_resolve(entry):
    from dpstats.results.base import DPResult

    door = getattr(importlib.import_module(entry.front_door), entry.name)
    assert getattr(dpstats, entry.name) is door
    assert "eps" in inspect.signature(door).parameters
    assert issubclass(_object(entry.result), DPResult)
    importlib.import_module(entry.method)


@pytest.mark.parametrize("entry", [m for m in ENTRIES if m.cli], ids=[m.name for m in ENTRIES if m.cli])
def test_command_line_runs_help_for_it(entry, capsys):
    from dpstats import cli

    assert cli.METHODS[entry.cli] == entry.name
    with pytest.raises(SystemExit) as stop:
        main(["run", entry.cli, "--help"])
    assert stop.value.code == 0
    assert entry.cli in capsys.readouterr().out  # the help lists the catalog's names


def test_command_line_refuses_a_name_outside_the_catalog(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("y,x\n1,2\n")
    assert main(["run", "no_such_method", "--data", str(data), "--eps", "1", "--formula", "y ~ x"]) == 2
    assert "unknown method" in capsys.readouterr().err


@pytest.mark.parametrize("entry", [m for m in ENTRIES if m.demo], ids=[m.name for m in ENTRIES if m.demo])
def test_demo_exists(entry):
    from dpstats import demos

    module = importlib.import_module(f"dpstats.demos.{entry.demo}")
    assert callable(module.run)
    assert entry.demo in demos.available()


def test_demo_order_is_the_catalog_order():
    from dpstats import demos

    assert demos.ORDER == [m.demo for m in ENTRIES if m.demo]
    assert demos.available()[: len(demos.ORDER)] == demos.ORDER


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_planner_accepts_exactly_the_listed_methods(entry):
    from dpstats import planner
    from dpstats.errors import PrivacyParameterError

    if entry.planner is None:
        assert entry.name not in planner.METHODS
        with pytest.raises(PrivacyParameterError, match="method must be one of"):
            planner.plan(entry.name, n=100, p=10, eps=1.0)
        return
    assert entry.name in planner.METHODS
    assert planner._check_method(entry.name) == entry.name
    assert planner._check_method(entry.cli) == entry.name  # the command line's name
    assert callable(importlib.import_module(entry.planner).setup)


def test_r_package_exports_the_catalog_functions():
    namespace = (ROOT / "r_wrapper" / "NAMESPACE").read_text()
    exported = set(re.findall(r"^export\((\w+)\)", namespace, flags=re.M))
    assert set(catalog.r_functions()) <= exported
    # every exported R function named as a front door (dpstats.api) is in the catalog
    doors = {
        n
        for n in dpstats.__all__
        if getattr(getattr(dpstats, n), "__module__", "").startswith("dpstats.api.")
    }
    wrapped = exported & doors
    assert wrapped <= set(catalog.r_functions())
    sources = "\n".join(p.read_text() for p in (ROOT / "r_wrapper" / "R").glob("*.R"))
    for name in catalog.r_functions():
        assert re.search(rf"^{name} <- function\(", sources, flags=re.M), name
    required = re.search(r"\.required <- list\((.*?)\n\)\n", sources, flags=re.S).group(1)
    assert set(re.findall(r"(\w+) = c\(", required)) <= set(catalog.r_functions())


def test_r_docs_cover_the_catalog_functions():
    import runpy

    functions = runpy.run_path(str(ROOT / "scripts" / "make_r_docs.py"), run_name="not_main")["FUNCTIONS"]
    assert {k: v for k, v in functions.items() if v in catalog.names()} == catalog.r_functions()


# ----------------------------------------------------------------------------- no second list


def _method_strings() -> set[str]:
    names = set()
    for m in ENTRIES:
        names.update(v for v in (m.name, m.cli, m.demo) if v)
    return names


def _lists_of_methods(tree: ast.AST, known: set[str]):
    """Collection literals that hold 3+ method names (dicts: as keys, mapping to plain constants)."""

    def strings(nodes):
        return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}

    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            hits = strings(node.elts) & known
        elif isinstance(node, ast.Dict):
            plain = all(isinstance(v, ast.Constant) for v in node.values)  # a table of names, not of content
            hits = strings(k for k in node.keys if k is not None) & known if plain else set()
        else:
            continue
        if len(hits) >= 3:
            yield node.lineno, sorted(hits)


# A list of names that coincide with methods' short names but means something else.
NOT_A_METHOD_LIST = {
    ("dpstats/methods/select_infer.py", ("knockoff", "sis", "two_stage")),  # dp_select_infer's selectors
}


def test_no_module_keeps_its_own_list_of_methods():
    known = _method_strings()
    found = []
    for path in sorted((ROOT / "dpstats").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "dpstats/catalog.py":
            continue
        for line, hits in _lists_of_methods(ast.parse(path.read_text()), known):
            if (rel, tuple(hits)) not in NOT_A_METHOD_LIST:
                found.append(f"{rel}:{line}: {hits}")
    assert not found, "lists of methods outside dpstats/catalog.py (read the catalog instead):\n" + "\n".join(
        found
    )


def test_the_old_registries_read_the_catalog():
    from dpstats import cli, demos, planner

    assert {k: v for k, v in dpstats._LAZY.items() if k in catalog.names()} == catalog.front_doors()
    assert planner.METHODS == catalog.planner_names()
    assert cli.METHODS == catalog.cli_names()
    assert demos.ORDER == catalog.demo_order()


def test_the_scan_finds_a_list_of_methods():
    known = _method_strings()
    tree = ast.parse(
        'ORDER = ["sis", "two_stage", "knockoff"]\nMAP = {"sis": "dp_sis", "lm": "dp_lm", "gmm": "dp_gmm"}'
    )
    assert [line for line, _ in _lists_of_methods(tree, known)] == [1, 2]
