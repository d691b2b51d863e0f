# %% [markdown]
# # Privacy budgets and what the statement means
#
# Every dpstats result carries a `PrivacyStatement`. This vignette reads one line by line,
# shares one budget across several analyses with an `Accountant`, and shows what changes
# between the two neighbouring relations.

# %%
from _common import OUT

import dpstats as dp

df = dp.datasets.fan_lv(n=100, d=500, random_state=5)

# %% [markdown]
# ## One budget for a whole project
# An `Accountant` holds the total (eps, delta). Each call charges its ledger *before* it
# touches the data; a call that would overspend is refused and spends nothing.

# %%
budget = dp.Accountant(eps=2.0)
first = dp.dp_sis("y ~ .", data=df, eps=1.5, k=5, bounds=(-4.5, 4.5), accountant=budget)
print("spent", budget.spent_eps, "left", budget.remaining_eps)
try:
    dp.dp_sis("y ~ .", data=df, eps=1.0, k=5, bounds=(-4.5, 4.5), accountant=budget)
except dp.BudgetExceededError as err:
    print(err)
second = dp.dp_sis("y ~ .", data=df, eps=0.5, k=5, bounds=(-4.5, 4.5), accountant=budget)
print([(e.step, e.eps) for e in budget.ledger])

# %% [markdown]
# ## Reading the statement
# - **(eps, delta)** and the **neighbouring relation**: replacing one row (n public, the
#   default) or adding/removing one. The sensitivity of DP-SIS's default (centred) scores is
#   4(1 − 1/n) under the first and 4 under the second (n is not public there); the paper's
#   midpoint score (`center="midpoint"`) has 2 and 1.
# - **Data-dependent steps**: anything computed from the data to calibrate noise. None here,
#   because the bounds were declared.
# - **Seeded**: an integer `random_state` makes a run reproducible and *not* releasable.

# %%
print(first.privacy.plain_language())
addrm = dp.dp_sis(
    "y ~ .", data=df, eps=1.5, k=5, bounds=(-4.5, 4.5), neighbouring="add_remove", random_state=1
)
print(addrm.privacy.ledger[0].sensitivity)
print(addrm.privacy.plain_language())

# %%
path = dp.report([first, second], str(OUT / "privacy_budgets.html"), title="One budget, two analyses")
print("wrote", path)
