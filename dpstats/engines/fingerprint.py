"""Files that must not change between the passes of one analysis: their fingerprint, taken at its first pass.

An analysis may read a file source several times: streamed dp_glm once per noisy Newton step,
dp_lm, dp_pca and dp_sis without bounds a pass for the data's range and one for the statistics,
dp_knockoff a second pass when responses must be clipped, any door a first pass for undeclared
factor levels (and a CSV pass again with a column read as text).  If the file is rewritten between
two of them, the passes read different rows: their sums would mix two data sets, and a later pass
may fail (a schema that differs, a file cut short) after the call has charged its budget.

So the first pass of a call over a file records its fingerprint, (size, modification time in
nanoseconds, inode) of each file it reads (:func:`file_states`: the files of a stream, whose folder
was listed when ``stream()`` was called; for ``on_dask(path)`` the files the path names, a folder
listed recursively, a glob expanded, so that a file added or removed shows too).  Every pass
checks it again before it reads a row and once it has read its last one, and a pass that failed is
checked too (a rewritten file often fails to parse); a difference raises
:class:`~dpstats.errors.SourceChangedError`, naming the file and nothing read from it (its size is a
function of its rows: it is not shown).  What the fingerprint cannot see: a rewrite that keeps the
size, the inode and the modification time (a file system whose clock ticks coarser than the two
writes, or a writer that restores the time).

The fingerprints of a call live in a :class:`CallPasses`, opened by :func:`one_call` around the front
door's run (:func:`dpstats.api._common.run`) and carried by :class:`dpstats.engines.RowPasses` for
its later passes; a pass outside any call (``engines.sufficient_statistics`` used directly) checks
its files at its own start and end.  Data in memory, DuckDB relations, polars LazyFrames and Dask
frames the user built are not files dpstats opens: they have no fingerprint (a query whose result
changes between passes is not seen; a failure of a later pass after the charge says what was spent).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..errors import SourceChangedError

#: one file's state: (size in bytes, modification time in ns, inode), or None when it cannot be read
State = tuple[int, int, int] | None


def file_states(paths: Sequence[Path]) -> dict[str, State]:
    """The state of each of ``paths``, by its name (os.stat; None for a file that is gone).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text("x\\n1\\n")
    >>> file_states([path])[str(path)][0]
    4
    """
    out: dict[str, State] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out[str(path)] = None
            continue
        out[str(path)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def listed(path: str) -> list[Path]:
    """The files ``path`` names for a reader that takes a file, a folder (every file below it, as a
    dataset reader walks it) or a glob."""
    if glob.has_magic(path):
        return [Path(p) for p in sorted(glob.glob(path, recursive=True))]
    if os.path.isdir(path):
        return sorted(p for p in Path(path).rglob("*") if p.is_file())
    return [Path(path)]


class CallPasses:
    """The fingerprints the passes of one call took: one per source (keyed by its path as given).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text("x\\n1\\n")
    >>> call = CallPasses()
    >>> call.check(lambda: [path], "csv data d.csv", str(path))  # the first pass records
    >>> _ = path.write_text("x\\n1\\n2\\n")
    >>> call.check(lambda: [path], "csv data d.csv", str(path))
    Traceback (most recent call last):
    ...
    dpstats.errors.SourceChangedError: data file 'd.csv' changed while this analysis was reading it ...
    """

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, State]] = {}

    def check(self, files, what: str, key: str) -> None:
        """Record the state of the files ``files()`` names at the first pass over the source ``key``
        (its path as given), or raise :class:`~dpstats.errors.SourceChangedError` if it differs from
        that record."""
        now = file_states(files())
        was = self.seen.setdefault(key, now)
        if now != was:
            raise changed(was, now, what)


def changed(was: dict[str, State], now: dict[str, State], what: str) -> SourceChangedError:
    """The error for a source whose files differ from its first pass's (the first one named; only names)."""
    names = [p for p in dict.fromkeys([*was, *now]) if was.get(p, "absent") != now.get(p, "absent")]
    name = Path(names[0]).name if names else what
    more = f" (and {len(names) - 1} more of its files)" if len(names) > 1 else ""
    return SourceChangedError(
        f"data file '{name}'{more} changed while this analysis was reading it (its size, modification time "
        "or inode differ from when the analysis first read it; a file added or removed counts too), so its "
        "passes would not all read the same rows. The analysis stopped before using the changed file, and "
        "nothing computed from the rows was released. Nothing was spent. Run it again once nothing writes "
        "to the file (a copy that nothing writes to is safest)."
    )


_CALL: ContextVar[CallPasses | None] = ContextVar("dpstats_call_passes", default=None)


@contextmanager
def one_call(call: CallPasses | None = None) -> Iterator[CallPasses]:
    """The passes inside the block belong to one call: ``call``, or the call already open (a door run
    inside another door's call, dp_select_infer's parts), or a new one."""
    active = _CALL.get()
    if call is None and active is not None:
        yield active
        return
    token = _CALL.set(call if call is not None else CallPasses())
    try:
        yield _CALL.get()
    finally:
        _CALL.reset(token)


@contextmanager
def unchanged(files, what: str, key: str) -> Iterator[None]:
    """One pass over the source ``key`` (its path as given), whose files ``files()`` names: their
    fingerprint checked against the call's first pass before the block reads a row and after it ends,
    or fails (a failure on changed files is the change's error, raised from None: the reader's text may
    quote the new rows).  Outside any call the block's own start is the record."""
    call = _CALL.get() or CallPasses()
    call.check(files, what, key)
    try:
        yield
    except Exception:
        try:
            call.check(files, what, key)
        except SourceChangedError as change:  # the change, not the pass's failure on the changed file
            raise change from None
        raise
    call.check(files, what, key)
