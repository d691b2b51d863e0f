# %% [markdown]
# # Know before you spend: plan, then run with private bounds
#
# A budget spent on data that cannot support the analysis is lost. `dp.plan` predicts what
# an analysis will deliver from public inputs only — n, the number of columns, the budget
# and a model you state — and reads no data and charges nothing. Then `bounds="auto"` buys
# the bounds privately, so the run needs no data-derived scaling and passes `strict=True`.

# %%
from _common import OUT, scale

import numpy as np
import pandas as pd

import dpstats as dp

n, d, k = 2000, 100, 3
model = dp.simulate.Assume(signals=3, strength=0.1)
trials = scale(200, 40)

# %% [markdown]
# ## What will I get at each eps, and what eps do I need?
# `target=0.8` asks for the eps at which the predicted precision of the top 3 reaches 0.8.
# A warning says when a budget on the grid cannot beat random selection.

# %%
plan = dp.plan(
    "dp_sis", n=n, p=d, k=k, eps=[2, 5, 10, 20, 40], assume=model, target=0.8, trials=trials, random_state=1
)
print(plan)
(OUT / "plans").mkdir(exist_ok=True)
plan.report(str(OUT / "plans" / "know_before_you_spend.html"))  # the curves, and the stated model

# %% [markdown]
# ## Private bounds cost part of the budget: plan that too
# With `bounds="auto"` the plan spends the default 10% of each eps on the bounds first and
# uses the bounds the stated model puts at the level that share can resolve.

# %%
auto = dp.plan(
    "dp_sis", n=n, p=d, k=k, eps=[10, 20, 40], assume=model, bounds="auto", trials=trials, random_state=1
)
print(auto.tidy().query("measure == 'precision'")[["eps", "estimate", "std.error"]])

# %% [markdown]
# ## Run it
# The data are drawn from the stated model here, so the result can be checked against it.
# `strict=True` refuses any data-dependent step; with `bounds="auto"` there is none, and the
# ledger's first step is the private bounds.

# %%
rng = np.random.default_rng(7)
X = rng.standard_normal((n, d))
df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
df.insert(0, "y", 0.1 * X[:, :3].sum(axis=1) + rng.standard_normal(n))
fit = dp.dp_sis("y ~ .", data=df, eps=20.0, k=k, bounds="auto", strict=True)
print(fit.summary())
print("true signals selected:", sorted(set(fit.selected) & {"x1", "x2", "x3"}))
dp.report([fit], str(OUT / "know_before_you_spend.html"), title="DP-SIS with private bounds, planned first")
