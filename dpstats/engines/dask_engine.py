"""Dask engine: the statistics pass as one task per partition, merged in partition order.

Each partition is reduced where it lives (a worker of a ``distributed``
cluster, or a thread of the local scheduler) by the same function the
streaming engine uses per chunk; only p×p statistics travel.  The partial
results are merged in partition order, so a run is reproducible.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pandas as pd

from .._progress import progress_bar
from ..errors import DataError, DPStatsError, EngineError
from ..temporal import read_columns
from .accumulate import EngineStats, Transform, frame_statistics, merge_all
from .adapter import reading_failed
from .files import reader_failure, reading, unreadable
from .fingerprint import listed, unchanged
from .layout import Layout


PARTITION = "a partition of the Dask DataFrame"  # in messages; no index: the partitions before it grow with n


class DaskSource:
    """A Dask DataFrame (and optionally a ``distributed.Client``) as data.

    Create it with :func:`on_dask`, or pass a ``dask.dataframe.DataFrame``
    directly as ``data=`` (the current client, if any, runs it).
    """

    engine = "dask"
    file: tuple[str, str] | None = None  # (name, "csv" or "parquet") when on_dask read a path
    counted = True  # the bars may count partitions: False where n is private (engines._prepare sets it)

    def __init__(self, frame, client=None, levels: dict | None = None, progress: bool = False) -> None:
        self.frame, self.client, self.levels, self.progress = frame, client, levels, progress

    def __repr__(self) -> str:
        return (
            f"<dpstats dask source: {self.frame.npartitions} partitions, {len(self.frame.columns)} columns>"
        )

    @property
    def what(self) -> str:
        """The data as messages name it: not its number of partitions, which grows with n when the
        frame was partitioned by size (``chunksize=``, a file's blocks)."""
        return "the Dask DataFrame"

    def schema_frame(self) -> pd.DataFrame:
        meta = self.frame._meta
        return meta.iloc[:0]

    def _compute(self, tasks: list, desc: str) -> list:
        """Compute delayed tasks on the client (or the default scheduler), in order.

        A failure of the user's graph (a partition that cannot be read, a cast that fails on a
        value) is a :class:`~dpstats.errors.DataError` without the library's message
        (:func:`~dpstats.engines.adapter.reading_failed`); one of dpstats' own code in a task
        (:func:`_own`) passes through unchanged.

        All or nothing: a worker that dies is retried by Dask (its task runs
        again elsewhere, to the same partial result); past Dask's
        ``distributed.scheduler.allowed-failures`` retries, or when the cluster
        goes away, the pass fails with an :class:`~dpstats.errors.EngineError`
        and no statistic is merged, let alone released.
        """
        try:
            with self._unchanged():
                out = self._run(tasks, desc)
        except DPStatsError:
            raise
        except Exception as exc:
            if getattr(exc, "raised_by_dpstats", False):
                raise
            if reader_failure(exc):  # a partition's rows its reader cannot parse: its text quotes them
                raise self._unreadable(exc) from None
            if not _cluster_failure(exc):  # the user's graph failed on its rows (a cast, a query)
                raise reading_failed(self.what, "dask", exc) from None
            raise EngineError(
                f"the {desc} on {self.what} did not finish: {type(exc).__name__}: {exc}. A Dask worker died "
                "or the cluster could not be reached; nothing was computed from the data or released. "
                "Nothing was spent. Check the workers' memory and logs, then run the analysis again "
                "(Dask retries a task whose worker dies up to distributed.scheduler.allowed-failures "
                "times)."
            ) from exc
        if len(out) != len(tasks):  # never merge a partial set of partitions
            raise EngineError(
                f"the {desc} on {self.what} returned some of its partitions only; nothing was released."
            )
        return out

    def _unchanged(self):
        """Around one pass: the files ``on_dask(path)`` read are those of the call's first pass
        (:mod:`.fingerprint`); a Dask frame the user built names no file dpstats can check."""
        path = self.file[0] if self.file is not None else ""
        return unchanged(lambda: listed(path) if path else [], self.what, path)

    def _unreadable(self, exc: BaseException) -> DataError:
        """A partition its reader could not parse: the file's error (:func:`~dpstats.engines.files.unreadable`)
        when on_dask read a path, else one naming the data and the reader's error type only."""
        if self.file is not None:
            return unreadable(*self.file)
        return DataError(
            f"a partition of {self.what} could not be read ({type(exc).__name__}); its reader's message is not "
            "repeated, as it quotes the rows. Read the Dask DataFrame on its own to see why."
        )

    def _run(self, tasks: list, desc: str) -> list:
        import dask

        counted = self.progress and self.counted
        if self.client is not None:
            futures = self.client.compute(tasks)
            try:
                if counted:
                    from distributed import as_completed

                    with progress_bar(True, len(futures), desc, unit="partitions") as bar:
                        for _ in as_completed(futures):
                            bar.update(1)
                with self._status(desc):
                    return self.client.gather(futures)
            except BaseException:
                # a failed pass stops here: its other tasks are cancelled, not left running (or retried)
                # on the cluster, where they would hold their keys and compete with the next call
                self.client.cancel(futures)
                raise
        with _TqdmCallback(desc) if counted else self._status(desc):
            return list(dask.compute(*tasks))

    def _status(self, desc: str):
        """No bar, or where n is private one that shows no number (a file's partitions grow with n)."""
        return progress_bar(self.progress and not self.counted, None, desc, counted=False)

    def distinct_values(self, columns: list[str]) -> dict[str, list]:
        from dask import delayed

        tasks = [delayed(_distinct)(part, columns) for part in self.frame.to_delayed()]
        found: dict[str, set] = {c: set() for c in columns}
        for part in self._compute(tasks, "first pass (levels)"):
            for c in columns:
                found[c].update(part[c])
        return {c: list(v) for c, v in found.items()}

    def statistics(self, layout: Layout, transform: Transform) -> EngineStats:
        from dask import delayed

        parts = self.frame.to_delayed()
        tasks = [delayed(_partition_statistics)(part, layout, transform, PARTITION) for part in parts]
        return merge_all(self._compute(tasks, "pass over partitions"), layout.p, transform.gram)

    def frame_map(self, layout: Layout, fn) -> list:
        """``fn`` of each partition's model frame, computed where the partition lives, in partition order
        (one pass; :class:`dpstats.engines.RowPasses`)."""
        from dask import delayed

        tasks = [delayed(_partition_map)(part, layout, fn, PARTITION) for part in self.frame.to_delayed()]
        return self._compute(tasks, "pass over partitions")


def _own(task):
    """``task``, dpstats' code run on a computed partition, with its exceptions marked as dpstats'
    own (not the user's graph's: :meth:`DaskSource._compute`); the mark travels with a pickled
    exception from a worker."""

    @functools.wraps(task)
    def run(*args):
        try:
            return task(*args)
        except Exception as exc:
            exc.raised_by_dpstats = True
            raise

    return run


@_own
def _partition_map(part: pd.DataFrame, layout: Layout, fn, where: str):
    import warnings

    from ..errors import DataWarning

    part = read_columns(part, refuse=())  # dates as numbers (dpstats.temporal)
    layout.check_columns(part, where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # counted by the first pass, never shown
        return fn(layout.frame(part, where, deferred=False))


def _cluster_failure(exc: BaseException) -> bool:
    """A failure of the cluster (worker killed, connection lost, task cancelled), not of the data."""
    import asyncio

    module = type(exc).__module__ or ""
    return (
        module.split(".")[0] == "distributed"
        or isinstance(exc, (asyncio.CancelledError, ConnectionError))
        or type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError")
    )


@_own
def _distinct(part: pd.DataFrame, columns: list[str]) -> dict[str, list]:
    return {c: part[c].dropna().unique().tolist() for c in columns}


@_own
def _partition_statistics(
    part: pd.DataFrame, layout: Layout, transform: Transform, where: str
) -> EngineStats:
    return frame_statistics(layout, part, transform, where)


class _TqdmCallback:
    """A bar over the tasks of the local scheduler (:func:`~dpstats._progress.progress_bar`)."""

    def __init__(self, desc: str) -> None:
        self.desc = desc

    def __enter__(self):
        from dask.callbacks import Callback

        bar = progress_bar(True, None, self.desc, unit="tasks")

        def start_state(_dsk, state):
            bar.total = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
            bar.refresh()

        self._bar = bar
        self._cb = Callback(start_state=start_state, posttask=lambda *a: bar.update(1))
        self._cb.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._cb.__exit__(*exc)
        self._bar.close()


def is_dask_collection(data) -> bool:
    """A Dask DataFrame or Array, recognised without importing Dask."""
    return type(data).__module__.split(".")[0] == "dask" and hasattr(data, "to_delayed")


def on_dask(
    data,
    *,
    client=None,
    npartitions: int | None = None,
    columns=None,
    levels: dict | None = None,
    progress: bool = False,
) -> DaskSource:
    """Run the statistics pass on Dask (the Dask engine).

    Parameters
    ----------
    data : dask DataFrame, dask Array, pandas DataFrame, or path
        A Dask collection is used as it is; a pandas frame is split into
        ``npartitions``; a ``.parquet``/``.csv`` path (or glob, or folder) is
        read by ``dask.dataframe`` on the workers.  A Dask Array needs
        ``columns=`` (its column names).
    client : distributed.Client, optional
        The cluster to run on; default the current client if one exists,
        otherwise Dask's local threaded scheduler.
    npartitions : int, optional
        Partitions for a pandas frame (default: 2 per worker, at least 2).
    columns : list of str, optional
        Column names of a Dask Array.
    levels : dict, optional
        Declared factor levels, as for :func:`dpstats.engines.stream`.
    progress : bool
        A tqdm bar over partitions; where n is private (a private call under
        ``neighbouring="add_remove"``) a line naming the pass, with no number.

    Returns
    -------
    DaskSource

    Examples
    --------
    >>> import dpstats as dp
    >>> df = dp.datasets.fan_lv(n=300, d=20, random_state=0)
    >>> src = dp.engines.on_dask(df, npartitions=3)
    >>> fit = dp.dp_sis("y ~ .", data=src, eps=2.0, k=3, bounds=(-6, 6), random_state=1, oc_trials=0)
    >>> fit.n
    300
    """
    import dask.dataframe as dd

    if client is None:
        client = _current_client()
    file = None
    if isinstance(data, (str, os.PathLike)):
        path = str(data)
        if Path(path).is_dir() or path.endswith((".parquet", ".pq")):
            file = (path, "parquet")
        elif path.endswith(".csv"):
            file = (path, "csv")
        else:
            raise DataError(f"cannot tell the format of {path!r}; give a .parquet or .csv path.")
        with reading(*file):  # Dask reads the first rows here, to infer the columns' types
            data = dd.read_parquet(path) if file[1] == "parquet" else dd.read_csv(path)
    elif isinstance(data, pd.DataFrame):
        if npartitions is None:
            workers = len(client.scheduler_info()["workers"]) if client is not None else 1
            npartitions = max(2, 2 * workers)
        data = dd.from_pandas(data, npartitions=npartitions)
    elif is_dask_collection(data) and not hasattr(data, "columns"):
        if columns is None or len(columns) != data.shape[1]:
            raise DataError(f"a Dask Array needs columns= with {data.shape[1]} names.")
        data = dd.from_dask_array(data, columns=list(columns))
    elif not is_dask_collection(data):
        raise DataError(
            f"on_dask needs a Dask DataFrame or Array, a pandas DataFrame or a path; "
            f"got {type(data).__name__}."
        )
    source = DaskSource(data, client=client, levels=levels, progress=bool(progress))
    source.file = file
    return source


def _current_client():
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None
