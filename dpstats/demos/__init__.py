"""The demo: analyse bundled data with every method and write HTML reports.

Each module in this package defines ``run(out_dir: Path, quick: bool) -> list[Path]``;
:func:`run_all` calls them in order.  A method's demo lives beside nothing else,
so adding a method means adding one module here.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from pathlib import Path

ORDER = ["sis", "two_stage", "knockoff", "gmm", "felp", "vertical", "bh"]


def available() -> list[str]:
    found = {m.name for m in pkgutil.iter_modules(__path__)}
    return [name for name in ORDER if name in found] + sorted(found - set(ORDER))


def run_all(out_dir: str | Path, quick: bool = False, only: list[str] | None = None) -> list[Path]:
    """Run every available demo, writing reports into ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name in available():
        if only and name not in only:
            continue
        module = importlib.import_module(f"dpstats.demos.{name}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            paths.extend(module.run(out, quick))
    return paths
