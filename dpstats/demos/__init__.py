"""The demo: analyse bundled and simulated data with every method, write HTML reports and an index.

Each module in this package defines ``run(out_dir: Path, quick: bool) -> list[DemoReport]``:
the reports it wrote, each with a line on what it shows, the result objects in it and, where
the demo sets a working regime beside a failing one, a sentence computed from those results
saying why.  :func:`run_all` calls the modules in order and writes ``index.html``
(:mod:`dpstats.demos._index`) from the results' public ``glance()`` and ``tidy()``.  A method's
demo lives beside nothing else, so adding a method means adding one module here.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import demo_order

ORDER = demo_order()  # the methods' demos, in catalog order (dpstats/catalog.py)
INDEX_NAME = "index.html"


@dataclass
class DemoReport:
    """One report written by the demo, and what the index says about it.

    ``results`` are the result objects rendered in the report (their ``glance()`` and ``tidy()``
    give the index its numbers); ``why`` is a sentence computed from them (never typed-in
    figures); ``summary`` holds the headline table of a report built from a simulation rather
    than from result objects (``dpstats.evaluate.summarise``), and ``n``, ``p`` the sizes of
    the data sets that simulation drew.
    """

    path: Path
    shows: str
    results: list[Any] = field(default_factory=list)
    why: str = ""
    summary: Any = None
    n: int | None = None
    p: int | None = None


def oc_value(result: Any, prefix: str) -> float | None:
    """The estimate of the first operating-characteristics row whose quantity starts with ``prefix``.

    Operating characteristics are post-processing of released quantities and public inputs (or
    simulated under the model the demo states), so a sentence built from them reveals nothing more.
    """
    if result.operating_characteristics is None:
        return None
    table = result.operating_characteristics.table()
    hits = table.loc[table["quantity"].str.startswith(prefix), "estimate"]
    return float(hits.iloc[0]) if len(hits) else None


def available() -> list[str]:
    found = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return [name for name in ORDER if name in found] + sorted(found - set(ORDER))


def run_all(out_dir: str | Path, quick: bool = False, only: list[str] | None = None) -> list[DemoReport]:
    """Run every available demo, writing reports and ``index.html`` into ``out_dir``; return the reports."""
    from ._index import write_index

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    reports: list[DemoReport] = []
    for name in available():
        if only and name not in only:
            continue
        module = importlib.import_module(f"dpstats.demos.{name}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reports.extend(module.run(out, quick))
    write_index(reports, out / INDEX_NAME)
    return reports
