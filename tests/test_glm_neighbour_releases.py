"""dp_glm's releases move by at most their stated sensitivities between neighbours, seen at the mechanism.

A replay spy on the Gaussian noise (``NoiseSource`` and ``FastNoise``) records what every release
receives, the exact sum, and its σ; on the neighbour's run it hands back the first run's noisy outputs,
so both runs query the same iterates and their mechanism inputs compare release by release (the
method of the s14-attack6 audit, audit/_replay.py on that branch).  The stated sensitivity of a release
is the one the door calibrated with, Δ = σ √(2ρ) from its ledger entry's ρ: (G3') for the counts,
(G3) for the Hessians and (G2) for the scores of :mod:`dpstats.methods.glm`.

The neighbours differ in row 0 only, through the front door, in memory, streamed (Parquet) and on
Dask.  ``cbind(s, f)`` with U_s ≠ U_f: before each column was clipped to its own bound, both were
clipped to max(U_s, U_f), and a row (5, 5) against (0, 0) under s: (0, 5), f: (0, 1) moved the counts
by 7.07 against Δ₂ = 5.10 and the first Hessian by 4.33 against 3.35 (the audit's finding F1).
Tolerance: 1e-9 relative and absolute (sums of 8000 rows in double precision).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.privacy import randomness as rnd

N = 8000
US, UF = 5.0, 1.0
CASES = {  # formula, family, bounds, the neighbours' row 0 (columns s, f, x)
    "cbind U_s > U_f, f above its bound": (
        "cbind(s, f) ~ x",
        "binomial",
        {"x": (-1, 1), "s": (0, US), "f": (0, UF)},
        ((5.0, 5.0, 1.0), (0.0, 0.0, 1.0)),
    ),
    "cbind U_s > U_f, both in bounds": (
        "cbind(s, f) ~ x",
        "binomial",
        {"x": (-1, 1), "s": (0, US), "f": (0, UF)},
        ((5.0, 1.0, 1.0), (0.0, 0.0, -1.0)),
    ),
    "cbind U_s < U_f, s above its bound": (
        "cbind(s, f) ~ x",
        "binomial",
        {"x": (-1, 1), "s": (0, UF), "f": (0, US)},
        ((40.0, 30.0, -1.0), (0.0, 0.0, 1.0)),
    ),
    "cbind U_s + U_f = 1": (  # before: taken for a 0/1 response, S̃ divided by the raw Σ(s + f)
        "cbind(s, f) ~ x",
        "binomial",
        {"x": (-1, 1), "s": (0, 0.5), "f": (0, 0.5)},
        ((0.5, 0.5, 1.0), (0.0, 0.0, 1.0)),
    ),
    "poisson, y above its bound": (
        "s ~ x",
        "poisson",
        {"x": (-1, 1), "s": (0, US)},
        ((1e6, 0.0, 1.0), (0.0, 0.0, -1.0)),
    ),
}


def _neighbours(row0, row1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "s": rng.integers(0, 2, N).astype(float),
            "f": rng.integers(0, 2, N).astype(float),
            "x": rng.uniform(-1, 1, N),
        }
    )
    one, other = df.copy(), df.copy()
    one.loc[0, ["s", "f", "x"]] = row0
    other.loc[0, ["s", "f", "x"]] = row1
    return one, other


def _spied_run(monkeypatch, call, replay=None) -> tuple[list, object]:
    """``call()`` with every Gaussian release recorded as (input, σ, output); with ``replay`` (an earlier
    run's record) each release returns that run's output instead of its own."""
    record = []
    for cls in (rnd.NoiseSource, rnd.FastNoise):
        original = cls.gaussian

        def spy(self, values, sigma, *a, _original=original, **kw):
            out = _original(self, values, sigma, *a, **kw)
            if replay is not None:
                out = np.array(replay[len(record)][2], copy=True)
            record.append((np.array(values, float, copy=True), sigma, np.array(out, copy=True)))
            return out

        monkeypatch.setattr(cls, "gaussian", spy)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    finally:
        monkeypatch.undo()
    return record, result


def _source(df: pd.DataFrame, route: str, path):
    if route == "stream":
        df.to_parquet(path, row_group_size=2000)
        return engines.stream(path, chunk_rows=1500)
    if route == "dask":
        import dask.dataframe as dd

        return dd.from_pandas(df, npartitions=3)
    return df


@pytest.mark.parametrize("route", ["memory", "stream", "dask"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_release_moves_by_at_most_its_stated_sensitivity(monkeypatch, tmp_path, case, route):
    formula, family, bounds, rows = CASES[case]
    one, other = (_source(df, route, tmp_path / f"{i}.parquet") for i, df in enumerate(_neighbours(*rows)))
    kw = dict(eps=4.0, delta=1e-6, family=family, bounds=bounds, random_state=3)
    first, fit = _spied_run(monkeypatch, lambda: dp.dp_glm(formula, one, **kw))
    second, fit_b = _spied_run(monkeypatch, lambda: dp.dp_glm(formula, other, **kw), replay=first)
    assert fit.engine == route and len(first) == len(second) == len(fit.privacy.ledger)
    moves = []
    for (a, sigma, _), (b, sigma_b, _), entry in zip(first, second, fit.privacy.ledger):
        stated = sigma * math.sqrt(2.0 * entry.rho)
        moves.append(float(np.linalg.norm(a - b)))
        assert sigma_b == sigma
        assert moves[-1] <= stated * (1 + 1e-9) + 1e-9, (entry.step, entry.sensitivity, moves[-1])
    # the same released values give the same fit: nothing else read from the rows reaches it
    np.testing.assert_array_equal(fit_b.coefficients, fit.coefficients)
    np.testing.assert_array_equal(fit_b.vcov_matrix, fit.vcov_matrix)
    if family == "binomial":  # the counts (G3'): the stated Δ₂ is each column's own bound's, √(U_s² + U_f²)
        count = math.hypot(bounds["s"][1], bounds["f"][1])
        assert first[0][0].size == 2 and "successes and of failures" in fit.privacy.ledger[0].step
        assert first[0][1] * math.sqrt(2.0 * fit.privacy.ledger[0].rho) == pytest.approx(count)
    if case == "cbind U_s > U_f, both in bounds":  # the row attains (G3'): the check is not vacuous
        assert moves[0] == pytest.approx(math.hypot(US, UF), rel=1e-12)
