"""The charge of one call, held while its release reads the data, and what an error after it says.

A front door charges its plan's entries once its frame and plan have passed their checks and before
any noise is drawn (:func:`dpstats.api._common.run`, step 4).  Most releases then compute from
statistics already in memory; some read the data again: streamed dp_glm makes one pass per noisy
Newton step through the engines (:class:`dpstats.engines.RowPasses`), on a file, a DuckDB query, a
polars LazyFrame or a Dask frame, each of which can change or fail between two passes.  The charge is
therefore taken as a :class:`Reservation`: booked to the accountant like any spend (so that the
ledger never shows less than may have been spent, and no other call can take the budget meanwhile),
*committed* when the release has been made (:meth:`Reservation.made`), and *withdrawn* only when
the release failed for a reason that says nothing about the data.

When the charge may be withdrawn
    A failed call's only output is its error (the noisy sums of the passes already made were drawn
    but never left the call: the release is turned into a result, and any warning is given, only
    after its last pass).  So the question is whether the error can be simulated without the data
    set: whether its occurring, and its text, depend on the rows read or on the draws made from them.

    * :class:`~dpstats.errors.SourceChangedError` (:mod:`dpstats.engines.fingerprint`) is raised by
      comparing the files' size, modification time and inode, before a pass reads a row and after it
      ends, with those the call's first pass recorded; its text names the file and nothing read from
      it (a name the user gave), and is the same whichever pass sees the change; a pass that fails on
      the changed file raises it in place of its own failure.  The change is made by a process outside
      the call, which has seen no output of it (there is none yet).  Write the failed call as M(D, E):
      the release R(D) when the event E (the files changed before the last check) does not happen, the
      error ⊥ when it does, whatever the passes computed; E depends on neither D nor the draws (timing
      side channels aside, which the package does not defend against: when the last check comes
      depends on how long the passes take).  Then P[M(D) = ⊥] = P[E] = P[M(D') = ⊥] for neighbouring
      D, D': the output ⊥ has privacy loss 0, and a transcript of calls that ended in ⊥ and one that
      succeeded has the likelihood ratio of that one success.  Charging nothing for ⊥ is valid under
      every accountant here (basic composition, the zCDP filter, a declared session's slots),
      adaptively too: what follows ⊥ depends on nothing the data produced.  A rerun with a fresh draw
      is no repetition the analyst can select from: the failed call showed no draw.  (Private bounds
      are drawn only from data in memory, which has no file to change: a withdrawn charge never holds
      their draw, which :func:`~dpstats.privacy.bounds.charged_if_drawn` charges whatever follows.)
      A change the fingerprint cannot see (:mod:`dpstats.engines.fingerprint`) is no E: the passes
      then read the new rows.
    * Any other failure of a later pass (a reader's error on a file whose fingerprint did not change,
      a query that fails or returns another schema on its second run, a Dask worker lost, a value a
      cast refuses, an overflow at an iterate) may depend on the rows read or, through the iterate,
      on the draws: it cannot be simulated without the data, and its charge stands.  Its text says so
      (:func:`charged_error`), replacing the "Nothing was spent" that the same error raised before the
      charge would rightly carry.
    * Once the release has been made (:meth:`Reservation.made`), values drawn from the data may
      have been shown (a result's warnings), so even a change of the files no longer withdraws the
      charge.

Every text of an error raised after the charge says what was spent, in the words of
:func:`spent_sentence`: the call's label and its (eps, delta), the sum of the ledger entries charged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import DPStatsError, SourceChangedError
from .accountant import Charge, LedgerEntry, total_delta, total_eps

#: the words in which an error says that it comes before any spend (engines, methods, schema, accountant)
NOTHING_SPENT = re.compile(r"Nothing (but the private bounds )?was (read or )?spent\.?")


def spent_sentence(
    label: str, entries: list[LedgerEntry], to_accountant: bool, when: str = "this error"
) -> str:
    """What an error raised after the charge says was spent: the call's (eps, delta), the sum of its entries.

    Examples
    --------
    >>> spent_sentence("dp_glm", [LedgerEntry("a sum", "Gaussian", 1.0, 1e-6)], True)  # doctest: +ELLIPSIS
    "dp_glm's charge of (eps = 1, delta = 1e-06) to the accountant stands: it is spent, ..."
    """
    eps, delta = total_eps(entries), total_delta(entries)
    amount = f"(eps = {eps:g}" + (f", delta = {delta:g})" if delta > 0 else ")")
    where = " to the accountant" if to_accountant else ""
    return (
        f"{label}'s charge of {amount}{where} stands: it is spent, as its release had begun drawing "
        f"noise from the rows before {when}, and no result was returned."
    )


def charged_error(err: BaseException, sentence: str) -> BaseException:
    """``err`` saying ``sentence`` (what was spent) in place of its "Nothing was spent", or after its text.

    A :class:`~dpstats.errors.DPStatsError` becomes the same class with the new text (its cause kept, its
    traceback too); its text before the sentence is kept as ``before_charge``, so that a call run inside
    another (dp_select_infer's parts) can say the outer call's charge instead.  Any other exception gets the
    sentence as a note.  The result is marked ``charge_said``: an enclosing call does not say it again.
    """
    if getattr(err, "charge_said", False):
        return err
    if not isinstance(err, DPStatsError):
        err.add_note(sentence)
        err.charge_said = True
        return err
    before = getattr(err, "before_charge", None) or NOTHING_SPENT.sub("", str(err)).replace("  ", " ").strip()
    text = str(err)
    text = (
        NOTHING_SPENT.sub(lambda _: sentence, text, count=1)
        if NOTHING_SPENT.search(text)
        else f"{text} {sentence}"
    )
    out = type(err)(text)
    out.__cause__, out.__suppress_context__ = err.__cause__, True
    out.before_charge, out.charge_said = before, True
    return out.with_traceback(err.__traceback__)


@dataclass
class Reservation:
    """The charge of one call (module docstring): booked by :meth:`take`, committed by :meth:`made`,
    withdrawn by :meth:`held` on a :class:`~dpstats.errors.SourceChangedError` before that.

    Examples
    --------
    >>> from dpstats.privacy.accountant import Accountant
    >>> acc = Accountant(eps=1.0)
    >>> r = Reservation.take(acc, [LedgerEntry("a count", "Laplace", 0.4)], "demo")
    >>> try:
    ...     with r.held():
    ...         raise SourceChangedError("data file 'd.csv' changed ... Nothing was spent.")
    ... except SourceChangedError:
    ...     pass
    >>> acc.charges  # withdrawn: nothing was spent
    []
    """

    accountant: Any
    entries: list[LedgerEntry]
    label: str
    charge: Charge | None = None
    open: bool = field(default=True)  # the release has not been made: a change of the files withdraws it

    @classmethod
    def take(cls, accountant: Any, entries: list[LedgerEntry], label: str) -> Reservation:
        """Charge ``entries`` to ``accountant`` (None: no accountant), or refuse without spending."""
        charge = accountant.spend(entries, label=label) if accountant is not None else None
        return cls(accountant, list(entries), label, charge)

    def made(self, release: Any) -> Any:
        """``release`` has been made: the charge stands from now on, whatever follows; returns it."""
        self.open = False
        return release

    def withdraw(self) -> None:
        """Take the charge back from the accountant (module docstring: only for a change of the files)."""
        if self.charge is not None:
            self.accountant.withdraw(self.charge)
            self.charge = None

    @contextmanager
    def held(self) -> Iterator[Reservation]:
        """The release and what follows it: a :class:`~dpstats.errors.SourceChangedError` before
        :meth:`made` withdraws the charge (its text, "Nothing was spent", is then true); any other
        error says what was spent (:func:`charged_error`)."""
        try:
            yield self
        except Exception as err:  # noqa: BLE001 - whatever failed, the charge stands and the error says so
            if isinstance(err, SourceChangedError) and self.open:
                self.withdraw()
                raise
            out = self._charged(err)
            if out is err:
                raise
            raise out  # noqa: B904 (the original's cause is kept, its text is in the new one)

    def _charged(self, err: BaseException) -> BaseException:
        if math.isinf(total_eps(self.entries)):  # eps = inf: a non-private run, which spends nothing
            return err
        return charged_error(err, spent_sentence(self.label, self.entries, self.charge is not None))
