"""``python -m dpstats``: the command-line interface, as the ``dpstats`` console script
(:func:`dpstats.cli.main`; exit status its return value)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
