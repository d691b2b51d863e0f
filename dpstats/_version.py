"""The version of dpstats, in one place (the package root, reports and the R bridge read it here)."""

__version__ = "0.1.0"
