"""The knockoff filter's requested diagnostics: non-private facts about one release, shown only when
asked (``diagnostics=True`` or ``truth=``; docs/architecture.md, "One call, step by step", step 7)."""

from __future__ import annotations

import numpy as np

from ...formula import ModelFrame, missing_counts
from ...privacy.randomness import FastNoise
from . import filter as ko, mechanism as kd
from .options import KnockoffOptions


def diagnostics(
    mf: ModelFrame,
    held: dict[str, bool],
    n_clipped: int,
    truth: list[str] | None,
    released: kd.Released,
    options: KnockoffOptions,
    gen: np.random.Generator,
) -> dict:
    """Whether the declared ``c_min`` and ``lambda_min`` ``held`` on the rows, the rows dropped and the
    ``n_clipped`` rows clipped to B and, with a ``truth``, :func:`truth_diagnostics` (``gen``: the release's
    generator)."""
    diag = {"declared_assumptions_hold": all(held.values())} if held else {}
    diag.update({f"declared_{name}_holds": value for name, value in held.items()})
    diag.update(missing_counts(mf), rows_clipped_to_B=n_clipped)
    if truth is None:
        return diag
    return diag | truth_diagnostics(truth, list(mf.names), released, options, gen)


def truth_diagnostics(
    truth: list[str],
    names: list[str],
    released: kd.Released,
    options: KnockoffOptions,
    gen: np.random.Generator,
) -> dict:
    """FDP and TPP of the selection against a known ``truth``, and of the non-private filter run on the
    same statistics and knockoffs (requested diagnostics of a simulation: not private)."""
    nonnull = np.array([names.index(t) for t in truth], dtype=int)
    fdp, tpp = fdp_tpp(np.asarray(released.chosen, dtype=int), nonnull)
    plain = kd.run_mechanism(
        released.augmented,
        released.s_value,
        kd.Scales("none"),
        FastNoise(gen),
        statistic=options.statistic,
        ridge=options.ridge,
    )
    np_sel = ko.select(plain.W, ko.knockoff_threshold(plain.W, options.fdr, options.offset))
    return {
        "fdp_vs_truth": fdp,
        "tpp_vs_truth": tpp,
        "nonprivate_knockoff_selected": [names[j] for j in np_sel],
        "nonprivate_fdp_tpp_vs_truth": list(fdp_tpp(np_sel, nonnull)),
    }


def fdp_tpp(selected: np.ndarray, nonnull: np.ndarray) -> tuple[float, float]:
    """False discovery proportion and true positive proportion of one selection.

    Examples
    --------
    >>> fdp_tpp(np.array([0, 1, 5]), np.array([0, 1, 2, 3]))
    (0.3333333333333333, 0.5)
    """
    sel = set(int(j) for j in selected)
    true = set(int(j) for j in nonnull)
    fdp = len(sel - true) / max(1, len(sel))
    tpp = len(sel & true) / max(1, len(true))
    return fdp, tpp
