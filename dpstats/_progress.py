"""Progress bars, and the one rule for what a bar may show.

Every tqdm bar drawn during a pass over the user's data (a front door's loop over groups, learners,
blocks or sweeps, an engine's pass over rows, batches, partitions or tasks) is made by
:func:`progress_bar`, and follows this rule:

1. **A bar shows a number only if it is public.**  Its total and its count of items done are shown
   when the total is a public number: declared by the user or planned from public inputs (FELP's
   ``n_estimators``, sample-and-aggregate's ``groups``, the two-stage ``blocks``, the vertical fit's
   sweeps), or n itself where n is public (replace-one-row).  Where the count is private (rows,
   chunks, partitions or tasks of a pass under add/remove-one-row, where n is private), the bar is a
   single line naming the pass, drawn once, never redrawn, cleared at the end (``counted`` False).
2. **No bar shows time: no elapsed time, no time remaining, no rate.**  The time an item takes
   depends on the data: a group's EM fit, a block's lasso, a learner's fit on its rows, a chunk's
   parse grow with n and vary with the rows, so a rate or an elapsed time on stderr is a side
   channel on n where n is private, and on the rows where it is not.
3. **A bar redraws once per update, never on a clock** (``mininterval=0, miniters=1``; tqdm's
   monitor thread only acts on bars with ``miniters > 1``): a bar throttled by time redraws more
   often the longer the items take.  The bytes a bar writes are then a function of its public
   numbers alone, the same for two data sets that differ in one row.

Tools whose results are not private (``simulate/``, ``evaluate``, ``audit``) draw their own bars.
Methods never draw: a front door opens the bar and hands its ``update`` to the method as a
``progress`` callback.
"""

from __future__ import annotations

from typing import Any


class _NoBar:
    """No bar: ``update`` does nothing."""

    def update(self, _n: int = 1) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Status(_NoBar):
    """A bar that shows no number: the pass's name, drawn once when the pass starts, never redrawn,
    cleared when it ends.  Where n is private (add/remove) every number a bar could show grows with n:
    rows read, rows out of a total, chunks or partitions, rate, elapsed time, even how many times a
    bar that shows only the time redraws itself on stderr.  This line's bytes are the same for any n."""

    def __init__(self, desc: str) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(desc=f"{desc} (n is private: no count shown)", bar_format="{desc}", leave=False)

    def __exit__(self, *exc) -> None:
        self.bar.close()


def progress_bar(show: bool, total: int | None, desc: str, *, counted: bool = True, unit: str = "") -> Any:
    """A progress bar's context, whose ``update(k)`` counts k items done (the module's rule).

    Parameters
    ----------
    show : bool
        False: no bar (``update`` does nothing).
    total : int or None
        The public number of items (None: unknown, the count alone is shown).
    desc : str
        What the bar counts, e.g. ``"FELP learners"``.
    counted : bool
        False where the count is private (n under add/remove-one-row): one line with no number.
    unit : str
        Shown after the count (``"rows"`` is shown as ``1.00k``).

    Examples
    --------
    >>> with progress_bar(False, 3, "learners") as bar:
    ...     bar.update(1)
    """
    if not show:
        return _NoBar()
    if not counted:
        return _Status(desc)
    from tqdm.auto import tqdm

    shown = "{l_bar}{bar}| {n_fmt}/{total_fmt}" + (" {unit}" if unit else "")
    return tqdm(
        total=total,
        desc=desc,
        unit=unit or "it",
        unit_scale=unit == "rows",
        bar_format=shown,
        mininterval=0,
        miniters=1,
        leave=False,
    )
