"""The public functions and the result classes' methods carry type hints that resolve.

Every function in ``dpstats.__all__``, and every public method of the classes there and of each
method's result class (from the catalog), annotates each parameter and its return value, and
``typing.get_type_hints`` resolves them at run time.  The types of ``data=``, ``bounds=`` and
``compose(items)`` that only type checkers see (an ``if TYPE_CHECKING:`` block, so that polars,
pyarrow, DuckDB and Dask are not imported to run) are evaluated here from their module's source, so
that a misspelt class in them fails this file rather than a user's type checker.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import pytest

import dpstats as dp
from dpstats import catalog

PUBLIC_FUNCTIONS = [name for name in dp.__all__ if inspect.isfunction(getattr(dp, name))]


def _result_classes() -> list[type]:
    out = []
    for method in catalog.METHODS:
        module, cls = method.result.split(":")
        out.append(getattr(importlib.import_module(module), cls))
    return out


CLASSES = [getattr(dp, name) for name in dp.__all__ if inspect.isclass(getattr(dp, name))] + _result_classes()
PUBLIC_METHODS = sorted(
    {
        (f"{cls.__name__}.{name}", member)
        for cls in CLASSES
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and member.__module__.startswith("dpstats")
    },
    key=lambda pair: pair[0],
)


def _unannotated(func) -> list[str]:
    signature = inspect.signature(func)
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
    ]
    return missing + (["return"] if signature.return_annotation is inspect.Signature.empty else [])


def test_the_lists_are_not_empty():
    assert {"dp_sis", "dp_lm", "dp_glm", "dp_bh", "compose"} <= set(PUBLIC_FUNCTIONS)
    assert {"LMResult.predict", "GMMResult.predict_proba", "Accountant.spend"} <= {
        n for n, _ in PUBLIC_METHODS
    }


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_function_is_fully_annotated_and_its_hints_resolve(name):
    func = getattr(dp, name)
    assert _unannotated(func) == []
    typing.get_type_hints(func)


@pytest.mark.parametrize("name, method", PUBLIC_METHODS, ids=[n for n, _ in PUBLIC_METHODS])
def test_public_method_is_fully_annotated_and_its_hints_resolve(name, method):
    assert _unannotated(method) == [], name
    typing.get_type_hints(method)


def _type_checking_block(module) -> dict:
    """The names the module's ``if TYPE_CHECKING:`` block defines, by running that block."""
    tree = ast.parse(Path(module.__file__).read_text())
    (block,) = [
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    namespace = dict(vars(module))
    code = compile(ast.Module(body=block.body, type_ignores=[]), module.__file__, "exec")
    exec(code, namespace)  # noqa: S102 (the package's own source)
    return namespace


def test_the_static_type_of_data_names_every_kind_of_data_a_door_reads():
    import duckdb
    import pandas as pd
    import polars
    import pyarrow

    from dpstats.engines import DaskSource, DuckDBSource, Stream, adapter

    names = _type_checking_block(adapter)
    in_memory = set(typing.get_args(names["InMemoryData"]))
    assert {pd.DataFrame, polars.DataFrame, polars.LazyFrame, pyarrow.Table, pyarrow.RecordBatch} <= in_memory
    assert duckdb.DuckDBPyRelation in in_memory
    assert {Stream, DaskSource, DuckDBSource} <= set(typing.get_args(names["Data"]))
    assert adapter.Data is typing.Any  # at run time: nothing optional is imported to annotate


def test_the_static_type_of_compose_items_evaluates():
    from dpstats.privacy import composition

    from dpstats.privacy.accountant import Accountant, LedgerEntry
    from dpstats.privacy.events import PrivacyEvent
    from dpstats.privacy.plan import Plan
    from dpstats.privacy.statement import PrivacyStatement

    names = _type_checking_block(composition)
    union = eval(names["Composable"], names)  # noqa: S307 (a recursive alias is written as a string)
    members = set(typing.get_args(union))
    assert {Accountant, LedgerEntry, PrivacyEvent, Plan, PrivacyStatement, names["HasPrivacy"]} <= members
