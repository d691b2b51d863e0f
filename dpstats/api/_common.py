"""Steps every front door shares: data-dependence of the model frame, charging."""

from __future__ import annotations

from ..formula import ModelFrame
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.statement import DataDependence


def missing_rows_step(dd: DataDependence, mf: ModelFrame) -> None:
    """Dropping incomplete rows makes n data-dependent: name it (strict refuses)."""
    if mf.n_dropped:
        dd.add(f"{mf.n_dropped} rows with missing or non-finite values were dropped, so the number "
               "of rows used depends on the data",
               fix="remove or impute missing values before the analysis")


def dummy_columns(mf: ModelFrame) -> set[str]:
    """Design columns that are 0/1 indicators of a factor main effect."""
    return {nm for nm, term in zip(mf.names, mf.terms) if term in mf.factor_levels}


def charge(accountant: Accountant | None, entries: list[LedgerEntry], label: str) -> None:
    """Charge the planned ledger to the accountant (if any), or refuse without spending."""
    if accountant is not None:
        accountant.spend(entries, label=label)
