"""Result classes: one base class and one subclass per method (DESIGN §2.7)."""

from .base import DPResult, OperatingCharacteristics, Plot, Summary

__all__ = ["DPResult", "OperatingCharacteristics", "Plot", "Summary"]
