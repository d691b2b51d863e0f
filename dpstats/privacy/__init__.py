"""The privacy core (DESIGN §2.5): noise, top-k selectors, accountant, statement."""

from .accountant import Accountant, LedgerEntry
from .randomness import NoiseSource, make_generator
from .statement import DataDependence, PrivacyStatement
from .topk import SELECTORS, select_topk

__all__ = ["Accountant", "LedgerEntry", "NoiseSource", "make_generator", "DataDependence",
           "PrivacyStatement", "SELECTORS", "select_topk"]
