# %% [markdown]
# # Private Gaussian mixtures with `dp_gmm`
#
# `dp_gmm` learns a mixture of k separated Gaussians under (eps, delta)-differential
# privacy, after Kamath, Sheffet, Singhal & Ullman (2019). Phase I of their algorithm:
# a private clipping radius, private PCA (Analyze Gauss), private clustering in the
# projected space (k rounds of "locate one cluster" with AboveThreshold and the
# exponential mechanism), and private estimation of each component. The paper's
# sample-and-aggregate variant (§6) is `method="sample_aggregate"`. Phase II (the
# recursive "terrific ball" split) is not implemented.
#
# Run it with `python vignettes/gmm_mixtures.py`; it writes HTML reports.

# %%
import numpy as np
from _common import OUT, scale
from sklearn.metrics import adjusted_rand_score

import dpstats as dp
from dpstats.simulate import simulate_gmm

# %% [markdown]
# ## The model
# Three unit spherical components in 10 dimensions, means at distance 8 from the
# origin in random directions. The public inputs are a box holding the data
# (`bounds=(-12, 12)` for every coordinate), k, and the budget.

# %%
n = scale(100_000, 10_000)
df, truth = simulate_gmm(n, d=10, k=3, random_state=42)
fit = dp.dp_gmm("~ .", df, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=1)
print(fit.summary())
fit.report(str(OUT / "gmm_issue_model.html"))

# %% [markdown]
# `predict()` assigns new rows by the released mixture: post-processing, no budget.

# %%
new, new_truth = simulate_gmm(5000, d=10, k=3, random_state=42)
print("ARI on fresh rows:", round(adjusted_rand_score(new_truth.labels, fit.predict(new)), 4))

# %% [markdown]
# ## The budget across steps
# Each step is accounted in zero-concentrated DP; the ledger shows each step's share of
# (eps, delta), and the shares sum to the total.

# %%
print(fit.ledger()[["step", "eps", "delta"]])
print("sum:", fit.ledger()["eps"].sum(), fit.ledger()["delta"].sum())

# %% [markdown]
# ## Components of different scales
# Scales 0.5, 1 and 2 with an axis ratio of 4 inside each component. Phase I and
# sample-and-aggregate side by side.

# %%
ns, ns_truth = simulate_gmm(n, d=5, k=3, scales=[0.5, 1.0, 2.0], anisotropy=4.0, random_state=3)
fits = []
for method in ("pca_cluster", "sample_aggregate"):
    f = dp.dp_gmm(
        "~ .", ns, k=3, eps=1.0, delta=1e-6, bounds=(-12, 12), method=method, random_state=2, truth=ns_truth
    )
    print(
        method,
        "ARI:",
        round(f.diagnostics["ari_vs_truth"], 4),
        "mean error (sd units):",
        round(f.diagnostics["mean_error_sigma_units"], 3),
    )
    fits.append(f)
dp.report(fits, str(OUT / "gmm_nonspherical.html"), title="dp_gmm: Phase I and sample-and-aggregate")
print("mean weights:", np.round(fits[0].weights, 3))
