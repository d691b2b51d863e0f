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

from _common import OUT, scale

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
# characteristics. Without a model of the data these are exact figures computed from
# released and public quantities only: the expected largest noise term in score units,
# and the score gap at which the top k would be recovered exactly with probability 0.5
# and 0.9. They say nothing about precision or recall, which depend on the unknown truth.

# %%
print(fit.summary())
print(fit.tidy().query("selected"))
print(fit.glance().T)

# %% [markdown]
# ## Precision and recall under a model you state
# Precision and recall appear only when you state a model with `assume=`; every output
# then labels them "under the assumed model". `Assume(signals, strength, noise, ...)` is
# a linear Gaussian model on standardized features (here 8 signals of coefficient 2 and
# residual sd 1.2, with the bounds at 4.5 standard deviations). The figures are simulated
# from that model at this n, d, k and eps, from public inputs only: they describe the
# model, not `df`, and cost no budget beyond the fit's.
#
# At n = 100 even eps = 10 leaves an expected largest noise term of about 72 score units,
# far above the score gaps this model produces, so the predicted precision and recall are
# near chance (8 of 2000, 0.004). Compare the selection above with the true support printed
# at the start: the exact rows said the same before any model was stated. The vignette
# `know_before_you_spend.py` shows how to find, before spending, the eps or n that would do.

# %%
from dpstats.simulate import Assume  # noqa: E402 - shown where the vignette first needs it

modelled = dp.dp_sis(
    "y ~ .",
    data=df,
    eps=10.0,
    k=8,
    bounds=(-4.5, 4.5),
    assume=Assume(signals=8, strength=2.0, noise=1.2, bound_sds=4.5),
    oc_trials=scale(200, 50),
)
print(modelled.operating_characteristics.table().to_string(index=False))

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
