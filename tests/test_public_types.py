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
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import dpstats as dp
from dpstats import catalog

ROOT = Path(__file__).resolve().parents[1]
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


USER_SCRIPT = """
import pandas as pd
import polars as pl
import dpstats as dp
from dpstats import engines

df = pd.DataFrame({"x": [1.0, 2.0], "y": [0.0, 1.0]})
fit = dp.dp_lm("y ~ x", pl.DataFrame(df), eps=1.0, bounds=(-1, 1))
reveal_type(fit)
reveal_type(dp.dp_sis("y ~ .", engines.stream("d.parquet"), eps=1.0, k=1, bounds="auto"))
dp.dp_felp("class ~ .", df, eps=1.0, bounds=dp.AutoBounds(share=0.2))
dp.dp_knockoff("y ~ .", df, eps=1.0, delta=1e-6, bounds=3.0)
dp.compose([fit, fit.privacy])
dp.dp_glm("y ~ x", df, eps=1.0, delta=1e-6, bounds="auto")
dp.dp_lm("y ~ x", df, eps="1")
dp.dp_lm("y ~ x", df, eps=1.0, bound=(-1, 1))
dp.dp_pca("~ x", df, k=1, eps=1.0, bounds=(-1, 1), random_state=1, strict=True, levels=None, na_action="omit")
dp.dp_lm("y ~ x", df, eps=1.0, bounds=(-1, 1), strict="yes")
"""


def test_a_type_checker_sees_each_doors_signature(tmp_path):
    """mypy, as a user's editor or CI would run it on their script: the doors' signatures and result
    types are seen through the package's lazy names (the generated dpstats/__init__.pyi and the
    typed door_docstring), and the four wrong calls, only those, are reported."""
    script = tmp_path / "analysis.py"
    script.write_text(USER_SCRIPT)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(script),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=os.environ | {"MYPYPATH": str(ROOT)},
        timeout=600,
    )
    out = run.stdout
    assert 'Revealed type is "dpstats.results.lm.LMResult"' in out, out
    assert 'Revealed type is "dpstats.results.sis.SISResult"' in out, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = USER_SCRIPT.splitlines()
    wrong = [i for i, line in enumerate(lines, 1) if line.startswith(("dp.dp_glm", 'dp.dp_lm("y ~ x", df'))]
    assert sorted({int(e.split(":")[1]) for e in errors}) == wrong, out
    assert 'Argument "bounds" to "dp_glm"' in out and 'Argument "eps" to "dp_lm"' in out
    assert 'Unexpected keyword argument "bound" for "dp_lm"' in out
    assert 'Argument "strict" to "dp_lm" has incompatible type' in out  # a shared keyword (api/_parameters)


def test_the_package_stub_is_current():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_stub.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
