"""dp_glm on streamed Parquet/CSV and on Dask: the same fit as in memory, one chunked pass per noisy Newton step.

Each step's score and Hessian sums are a pass through the engines (``engines.RowPasses``): every
chunk's (or partition's) sums, added in file (or partition) order.  With the same seed the noise
is the same, so the streamed and Dask fits equal the in-memory fit up to floating-point summation
order: stated tolerance 1e-12 (absolute) on the coefficients and 1e-14 on the covariance; measured
when written, at most 2.3e-16 and 3.1e-18.  Memory: the peak of the arrays Python allocates
(tracemalloc) during a streamed fit does not grow with the number of rows (4.35 MiB at 10^5 and at
8·10^5 rows, chunks of 2·10^4 rows; the data are 4.6 and 37 MiB).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import dpstats as dp
from dpstats import engines
from dpstats.errors import DataError, NonPrivateWarning
from dpstats.methods.glm import PILOT_STEPS

N = 30_000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A frame with a factor, a 0/1 response, a count and cbind columns; Parquet (row groups of 4000) and CSV."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "x1": rng.uniform(-1, 1, N),
            "x2": rng.binomial(1, 0.4, N).astype(float),
            "g": pd.Categorical(rng.choice(["a", "b", "c"], N), categories=["a", "b", "c"]),
        }
    )
    df["y"] = (rng.random(N) < expit(-0.3 + df.x1 - 0.5 * df.x2)).astype(float)
    df["k"] = rng.poisson(np.exp(0.5 + 0.4 * df.x1)).astype(float)
    df["s"] = rng.binomial(5, expit(df.x1)).astype(float)
    df["f"] = 5.0 - df["s"]
    folder = tmp_path_factory.mktemp("glm_engines")
    df.to_parquet(folder / "d.parquet", row_group_size=4000)
    df.drop(columns="g").to_csv(folder / "d.csv", index=False)
    return df, folder


CASES = {
    "binomial with a factor": ("y ~ x1 + x2 + g", "binomial", {"x1": (-1, 1), "x2": (0, 1)}),
    "poisson": ("k ~ x1 + x2", "poisson", {"x1": (-1, 1), "x2": (0, 1), "k": (0, 20)}),
    "cbind": ("cbind(s, f) ~ x1", "binomial", {"x1": (-1, 1), "s": (0, 5), "f": (0, 5)}),
}


def _fit(formula, data, family, bounds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)  # data-range bounds are named, not hidden
        return dp.dp_glm(
            formula, data, eps=1.0, delta=1e-6, family=family, bounds=bounds, random_state=3, **kw
        )


def _same_fit(a, b) -> None:
    np.testing.assert_allclose(b.coefficients, a.coefficients, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.vcov_matrix, a.vcov_matrix, rtol=0, atol=1e-14)
    assert b.terms == a.terms and b.n == a.n and b.withheld == a.withheld
    assert b.noise == a.noise  # the same public noise scales
    assert [e.to_dict() for e in b.privacy.ledger] == [e.to_dict() for e in a.privacy.ledger]
    assert b.privacy.data_dependent_steps == a.privacy.data_dependent_steps


@pytest.mark.parametrize("case", list(CASES))
def test_stream_and_dask_give_the_in_memory_fit(data, case):
    import dask.dataframe as dd

    df, folder = data
    formula, family, bounds = CASES[case]
    memory = _fit(formula, df, family, bounds)
    streamed = _fit(formula, engines.stream(folder / "d.parquet", chunk_rows=2500), family, bounds)
    on_dask = _fit(formula, dd.from_pandas(df, npartitions=7), family, bounds)
    for fit, engine in ((streamed, "stream"), (on_dask, "dask")):
        _same_fit(memory, fit)
        assert fit.engine == engine
        # a pass per step, one for the start's count (G3') and, binomial, one for the refinement step (G5'')
        # and one for the final score, taken at another point than the final Hessian (G5''')
        passes = PILOT_STEPS + 2 if family == "poisson" else PILOT_STEPS + 4
        assert (
            f"by the {'Dask' if engine == 'dask' else engine} engine: one for the model frame, then {passes} for the "
            "release" in (" ".join(fit.privacy.notes))
        )
    if "g" not in formula:
        _same_fit(memory, _fit(formula, engines.stream(folder / "d.csv", chunk_rows=3000), family, bounds))


def test_one_pass_per_noisy_newton_step(data, monkeypatch):
    """pilot_steps + 1 chunked passes for the release, with an intercept one more for the start's count
    (G3', G7') and, binomial, two more (the refinement step; the final Hessian and score at two points,
    (G5''')), after the first pass that builds the frame."""
    df, folder = data
    counted = []
    original = engines.RowPasses.reduce

    def counting(self, fn, combine=None):
        counted.append(1)
        return original(self, fn) if combine is None else original(self, fn, combine)

    monkeypatch.setattr(engines.RowPasses, "reduce", counting)
    formula, family, bounds = CASES["poisson"]
    _fit(formula, engines.stream(folder / "d.parquet"), family, bounds, pilot_steps=2)
    assert len(counted) == 4  # with an intercept, one more for the total count of the start (G7')
    counted.clear()
    _fit(formula, engines.stream(folder / "d.parquet"), family, bounds, pilot_steps=6)
    assert len(counted) == 8
    counted.clear()  # binomial: the count of successes, the refinement step (G5'') and the final score (G5''')
    formula, family, bounds = CASES["binomial with a factor"]
    _fit(formula, engines.stream(folder / "d.parquet"), family, bounds, pilot_steps=2)
    assert len(counted) == 6


def test_memory_does_not_grow_with_the_rows(tmp_path):
    def peak(n: int) -> int:
        rng = np.random.default_rng(1)
        df = pd.DataFrame({f"x{j}": rng.uniform(-1, 1, n) for j in range(5)})
        df["y"] = (rng.random(n) < expit(df.x0 - df.x1)).astype(float)
        path = tmp_path / f"d{n}.parquet"
        df.to_parquet(path, row_group_size=20_000)
        del df
        source, bounds = engines.stream(path, chunk_rows=20_000), {f"x{j}": (-1, 1) for j in range(5)}
        dp.dp_glm("y ~ .", source, eps=1.0, delta=1e-6, bounds=bounds, random_state=1)  # warm caches
        tracemalloc.start()
        try:
            dp.dp_glm("y ~ .", source, eps=1.0, delta=1e-6, bounds=bounds, random_state=1)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(100_000), peak(800_000)
    assert large < 1.25 * small, (small, large)
    assert large < 800_000 * 6 * 8 / 4  # far below the 37 MiB the rows take


def test_what_streams_do_not_offer_is_refused_before_anything_is_read(data):
    df, folder = data
    acc = dp.Accountant(eps=5.0, delta=1e-5)
    with pytest.raises(DataError, match="eps = inf .* needs the rows in memory"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            dp.dp_glm("y ~ x1", engines.stream(folder / "d.parquet"), eps=float("inf"))
    factor = df.assign(y=pd.Categorical(np.where(df.y == 1, "yes", "no")))
    path = folder / "factor.parquet"
    factor.to_parquet(path)
    with pytest.raises(DataError, match="needs a numeric response .* Nothing was spent"):
        dp.dp_glm("y ~ x1", engines.stream(path), eps=1.0, delta=1e-6, bounds={"x1": (-1, 1)}, accountant=acc)
    with pytest.raises(DataError, match="dpstats.engines.stream"):  # a bare path is not data
        dp.dp_glm("y ~ x1", str(folder / "d.parquet"), eps=1.0, delta=1e-6, accountant=acc)
    assert acc.spent_eps == 0


def test_diagnostics_on_streamed_data_count_clipped_values(data):
    df, folder = data
    bounds = {"x1": (-0.5, 0.5), "x2": (0, 1)}
    memory = dp.dp_glm(
        "y ~ x1 + x2", df, eps=1.0, delta=1e-6, bounds=bounds, random_state=2, diagnostics=True
    )
    streamed = dp.dp_glm(
        "y ~ x1 + x2", engines.stream(folder / "d.parquet"), eps=1.0, delta=1e-6, bounds=bounds, random_state=2,
        diagnostics=True,
    )  # fmt: skip
    assert streamed.diagnostics["values_clipped"] == memory.diagnostics["values_clipped"] > 0
    assert "needs the rows in memory" in streamed.diagnostics["glm_estimates_nonprivate"]
