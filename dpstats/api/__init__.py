"""Front doors (``docs/architecture.md``, "Layers"): validate, then charge the budget, then compute.

Each front door lives in its own module (``dpstats.api.sis``, ``dpstats.api.knockoff``, ...);
``dpstats.api.dp_sis`` is loaded on first use, so that importing one front door does not import
another's dependencies.
"""

from __future__ import annotations

import importlib

__all__ = ["dp_sis"]


def __getattr__(name: str):
    if name == "dp_sis":
        return importlib.import_module("dpstats.api.sis").dp_sis
    raise AttributeError(f"module 'dpstats.api' has no attribute {name!r}")
