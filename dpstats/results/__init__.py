"""Result classes: one base class and one subclass per method (``docs/architecture.md``, "Layers")."""

from ..plotting import Plot
from .base import DPResult, OperatingCharacteristics, Summary

__all__ = ["DPResult", "OperatingCharacteristics", "Plot", "Summary"]
