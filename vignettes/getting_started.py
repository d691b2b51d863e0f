# %% [markdown]
# # Getting started with dpstats
#
# A differentially private (DP) analysis needs three things besides the data: a formula,
# a privacy budget `eps`, and *public* bounds on the variables. This vignette screens the
# paper's synthetic model (Fan & Lv 2008: n = 100 rows, d = 2000 predictors, 8 of them
# truly related to y) with DP sure independence screening (DP-SIS).
#
# Run it with `python vignettes/getting_started.py`; it ends by writing an HTML report.

# %%
import warnings

from _common import OUT

import dpstats as dp

df = dp.datasets.fan_lv(n=100, d=2000, random_state=11)
print(df.shape, "true support:", df.attrs["support"])

# %% [markdown]
# ## Declare bounds, choose eps, fit
# The predictors are standard normal, so (-4.5, 4.5) holds all but about 7 in a million
# values; values outside are clipped. The same pair bounds the response.

# %%
fit = dp.dp_sis("y ~ .", data=df, eps=10.0, k=8, bounds=(-4.5, 4.5))
print(fit)

# %% [markdown]
# `summary()` adds the plain-language privacy statement, the ledger and the operating
# characteristics: the precision and recall that DP-SIS reaches at this n, d, k and eps
# under the paper's model, estimated by simulation from public quantities only.

# %%
print(fit.summary())
print(fit.tidy().query("selected"))
print(fit.glance().T)

# %% [markdown]
# ## What if I have no bounds?
# Then dpstats scales by the data's max-abs values, as the paper's experiments did. That is
# a *data-dependent step*: you get a `NonPrivateWarning`, and the privacy statement says the
# guarantee does not cover it. With `strict=True` the call is refused instead.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    loose = dp.dp_sis("y ~ .", data=df, eps=10.0, k=8)
print([str(w.message)[:80] for w in caught])
print(loose.privacy.data_dependent_steps)
try:
    dp.dp_sis("y ~ .", data=df, eps=10.0, k=8, strict=True)
except dp.PrivacyParameterError as err:
    print("strict:", err)

# %% [markdown]
# ## The report
# One self-contained HTML file: privacy first, then results, plots and operating
# characteristics. Attach it to the analysis plan.

# %%
path = fit.report(str(OUT / "getting_started.html"))
print("wrote", path)
