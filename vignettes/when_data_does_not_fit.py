# %% [markdown]
# # When your data does not fit in memory
#
# dpstats' methods consume sufficient statistics — n, Xᵀy, XᵀX, column sums, yᵀy — so a
# data set too large for memory needs a different way of *computing* them, never a
# different method. This vignette runs the same DP-SIS analysis three ways:
#
# 1. in memory, from a pandas DataFrame (the default);
# 2. streamed from a Parquet file in bounded-memory chunks with
#    `dpstats.engines.stream(path, chunk_rows=...)`;
# 3. on a Dask cluster with `dpstats.engines.on_dask(...)` (or any `dask.dataframe`).
#
# The three give the same statistics up to the order of floating-point summation, so the
# same seed gives the same selection.

# %%
import atexit
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from _common import OUT, scale, shown_warnings

import dpstats as dp
from dpstats import engines

ROWS = scale(2_000_000, 20_000)
COLS = 50
folder = Path(tempfile.mkdtemp(prefix="dpstats_vignette_"))
atexit.register(shutil.rmtree, folder, ignore_errors=True)  # removed however the script ends
path = folder / "registry.parquet"

# %% [markdown]
# ## A file written in pieces
# A registry extract: 50 lab values (declared to lie in [-6, 6]), a region label and an
# outcome that depends on lab1–lab8 and on the region. It is written one row group at a time, as a real extract would be, so it never
# sits in memory whole. A few values of `lab50` are missing.

# %%
rng = np.random.default_rng(2026)
REGIONS = ["north", "south", "east", "west"]
BETA = np.array([1.0, -1.0, 0.8, 0.7, -0.7, 0.6, 0.5, -0.5])  # lab1..lab8 matter
names = [f"lab{j}" for j in range(1, COLS + 1)]
schema = pa.schema([(n, pa.float64()) for n in names] + [("region", pa.string()), ("y", pa.float64())])
with pq.ParquetWriter(path, schema) as writer:
    for start in range(0, ROWS, 100_000):
        m = min(100_000, ROWS - start)
        X = rng.standard_normal((m, COLS))
        X[rng.random(m) < 0.01, COLS - 1] = np.nan
        region = rng.choice(REGIONS, size=m)
        y = X[:, :8] @ BETA + 0.5 * (region == "east") + rng.standard_normal(m)
        frame = pd.DataFrame(X, columns=names).assign(region=region, y=np.clip(y, -6, 6))
        writer.write_table(
            pa.Table.from_pandas(frame, schema=schema, preserve_index=False), row_group_size=100_000
        )
print(f"{ROWS:,} rows, {path.stat().st_size / 2**20:.0f} MB on disk")

# %% [markdown]
# ## Streaming: declare the chunk size and the factor levels
# `stream()` is where the engine is chosen. The formula is applied chunk by chunk; for the
# dummy columns of `region` to be the same in every chunk, its levels are fixed before the
# pass. Declared levels are public (as in R's `factor(levels=)`, the first is the baseline);
# without them dpstats reads them in a first pass, sorts them as `model_frame` would, and
# names that as a data-dependent step (`strict=True` refuses it).

# %%
source = engines.stream(path, chunk_rows=100_000, levels={"region": REGIONS}, progress=False)
kw = dict(eps=2.0, k=4, bounds=(-6, 6), random_state=11, oc_trials=0)
start = time.perf_counter()
with shown_warnings():  # a missing lab50 gets its public fill (midpoint of the bounds): no row dropped
    streamed = dp.dp_sis("y ~ .", data=source, **kw)
print(f"streamed in {time.perf_counter() - start:.1f} s")
print(streamed)

# %% [markdown]
# Undeclared levels: the analysis still runs, and the statement lists the first pass as a
# data-dependent step. Under `strict=True` nothing is read from the rows to decide a type: an
# undeclared `region` is numeric by declaration (its text entries are missing values, filled),
# and the statement says so. Declare its levels to get its dummies.

# %%
with shown_warnings():  # NonPrivateWarning for the first pass over the levels, shown
    undeclared = dp.dp_sis("y ~ .", data=engines.stream(path, chunk_rows=100_000), **kw)
print(undeclared.privacy.data_dependent_steps)
with shown_warnings():
    strict = dp.dp_sis(
        "y ~ lab1 + lab2 + lab3 + region", data=engines.stream(path), strict=True, **kw | {"k": 2}
    )
types = " ".join(str(strict.summary()).split())
print("strict:", types[types.index("Types under strict") :][:110], "...")

# %% [markdown]
# ## The same analysis in memory and on Dask
# In memory (only sensible while the data fit) and on a Dask cluster of two local workers,
# the same seed gives the same selection. In memory, `region` is given the same levels as a
# categorical (a plain string column would be coded with levels in sorted order, so with
# "east" as the baseline).

# %%
frame = pd.read_parquet(path)
frame["region"] = pd.Categorical(frame["region"], categories=REGIONS)
with shown_warnings():
    in_memory = dp.dp_sis("y ~ .", data=frame, **kw)

from distributed import Client  # noqa: E402

with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
    with shown_warnings():
        on_dask = dp.dp_sis(
            "y ~ .", data=engines.on_dask(str(path), client=client, levels={"region": REGIONS}), **kw
        )
for label, fit in [("in memory", in_memory), ("streamed", streamed), ("dask", on_dask)]:
    print(f"{label:10s} n = {fit.n:,}  selected: {sorted(fit.selected)}")
assert sorted(in_memory.selected) == sorted(streamed.selected) == sorted(on_dask.selected)

# %% [markdown]
# ## The knockoff filter, streamed
# `dp_knockoff` needs only n, XᵀX, Xᵀy and yᵀy of the rows clipped to the row-norm bound B,
# so it streams too: one pass, with rows clipped chunk by chunk. Without declared bounds on
# the noise level and the coefficients, its calibration uses the data (named in the statement).
# Its power needs many rows: at the quick size it typically selects nothing, and the result
# says why.

# %%
with shown_warnings():  # NonPrivateWarning for each data-dependent calibration step, shown
    knock = dp.dp_knockoff(
        "y ~ .", data=source, eps=2.0, delta=1e-6, fdr=0.2, bounds=12.0, random_state=3, oc_trials=0
    )
print("knockoff selected:", knock.selected or knock.empty_reason)

# %% [markdown]
# ## What the engines give a method
# `engines.sufficient_statistics(formula, data, ...)` is the one call behind every front
# door: any source in, a model frame (names, terms, n, rows dropped; no rows) and the
# statistics out. A chunk whose schema differs from the first is refused with the file and
# the column named.

# %%
mf, stats = engines.sufficient_statistics("y ~ lab1 + lab2 + region", source, gram=True)
print(mf)
print(pd.DataFrame(stats.cross.xtx, index=mf.names, columns=mf.names).round(0))

bad = folder / "parts"
bad.mkdir()
frame.iloc[:100].to_parquet(bad / "a.parquet")
frame.iloc[100:200].drop(columns="lab7").to_parquet(bad / "b.parquet")
try:
    engines.sufficient_statistics("y ~ .", engines.stream(bad, levels={"region": REGIONS}))
except dp.DataError as err:
    print(str(err)[:160], "...")

# %% [markdown]
# Memory: `benchmarks/bench_engines.py --full` streams a 10⁷ × 50 file (about 4 GB as
# float64) through dp_knockoff and reads the peak resident memory from the operating
# system: 0.76 GB when measured (the ten true columns selected).

# %%
out = dp.report(
    [streamed, in_memory, on_dask],
    str(OUT / "when_data_does_not_fit.html"),
    title="The same DP-SIS analysis streamed, in memory and on Dask",
)
print("wrote", knock.report(str(OUT / "when_data_does_not_fit_knockoff.html")))
print("wrote", out)
