"""Data files as the readers see them: a reader's failure as a :class:`~dpstats.errors.DataError`.

A CSV or Parquet reader's own message quotes the file's contents: pyarrow's "CSV parse error:
Expected 4 columns, got 5: <the whole row>", pandas' "Expected 4 fields in line 7", a
``UnicodeDecodeError``'s byte position.  A message is an output channel, and messages carry no value
read from the rows (docs/architecture.md, "Privacy conventions"), so every route that reads a file
(the command line's ``--data``, a party's ``--data``, :func:`dpstats.engines.stream`,
``on_dask(path)``) raises instead the error of :func:`unreadable`: the file's name, the kind of
problem and its fix, the same text whichever row is at fault.  It is raised ``from None``: the
reader's text is not in the traceback either (it stays on ``__context__`` for the analyst, who may
see the data).

A row with fewer fields than the header is no failure: every route reads the fields it lacks as
missing values, as ``pandas.read_csv`` and R's ``read.csv`` (``fill = TRUE``) do (the stream:
:class:`dpstats.engines.stream._ShortRows`).  A row with more fields is one, on every route.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DataError, DPStatsError

_PROBLEM = {
    "csv": (
        "could not be parsed as CSV (a row with more fields than the header, or bytes "
        "that are not UTF-8); check the file's quoting (a field holding a comma, a quote or a line break "
        "must be quoted) and its encoding (save it as UTF-8)"
    ),
    "parquet": (
        "could not be read as Parquet (not a Parquet file, or a damaged one); write it again with a "
        "Parquet writer (pandas.DataFrame.to_parquet, pyarrow.parquet.write_table)"
    ),
}


def unreadable(name: str, fmt: str) -> DataError:
    """The error for the data file ``name`` whose ``fmt`` ("csv" or "parquet") reader failed.

    Examples
    --------
    >>> print(unreadable("d.csv", "csv"))  # doctest: +ELLIPSIS
    data file 'd.csv' could not be parsed as CSV (a row with more fields than the header, ...
    """
    return DataError(
        f"data file '{name}' {_PROBLEM[fmt]}. The reader's own message is not repeated: it quotes the rows."
    )


def reader_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a CSV or Parquet reader's failure on a file's contents (pyarrow's errors,
    pandas' parser errors, text that does not decode)."""
    import pandas as pd
    import pyarrow as pa

    parse = (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError)
    return isinstance(exc, (pa.ArrowException, *parse))


@contextmanager
def reading(name: str, fmt: str) -> Iterator[None]:
    """Reader failures in the block as :func:`unreadable`, a file the system cannot open as a
    :class:`~dpstats.errors.DataError` with the system's reason ("Permission denied"), both ``from
    None``; dpstats' own errors and anything else pass unchanged."""
    try:
        yield
    except DPStatsError:
        raise
    except Exception as exc:
        if reader_failure(exc):
            raise unreadable(name, fmt) from None
        if isinstance(exc, OSError) and exc.strerror:
            raise DataError(f"data file '{name}' could not be opened: {exc.strerror}.") from None
        raise


def read_frame(path: str | Path, fmt: str):
    """A whole ``fmt`` ("csv" or "parquet") file as a pandas DataFrame, with the file's failures as
    :func:`unreadable` (the command line's ``--data``, a networked party's ``--data``)."""
    import pandas as pd

    with reading(str(path), fmt):
        return pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
