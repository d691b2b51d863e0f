# %% [markdown]
# # dpstats for R users (the Python side)
#
# This mirrors the R package's vignette (`r_wrapper/vignettes/dpstats.Rmd`). In R you write
#
# ```r
# library(dpstats)
# fit <- dp_sis(y ~ ., data = df, eps = 4, k = 2, bounds = c(-6, 6), seed = 1)
# fit; summary(fit); coef(fit); tidy(fit); report(fit, "sis.html")
# ```
#
# and the same Python function runs underneath: the R formula is deparsed, the data.frame
# crosses as plain columns (factors as codes and levels), and the result comes back as a
# list with S3 class `c("dp_sis", "dp_result")`. From Python, `dpstats.rbridge` moves data
# the other way: R data sets into pandas, results into R lists.

# %%
from _common import OUT

import dpstats as dp
from dpstats import rbridge

cancer = rbridge.load_r_dataset("BreastCancer", package="mlbench")
print(cancer.dtypes.head(4))
print(cancer["Class"].value_counts())

# %% [markdown]
# mlbench stores the cytology scores as (ordered) factors with levels 1..10; as numbers they
# are bounded by (1, 10), a public fact about the measurement scale. `Id` is not a feature.
# A missing `Bare.nuclei` gets its public fill, the midpoint 5.5 of the declared bounds
# (`na_action="fill"`, the default under replace-one-row): no row is dropped, so n stays the
# public number of rows read, and how many values were filled is not shown.

# %%
features = [c for c in cancer.columns if c not in ("Id", "Class")]
numeric = cancer[features].apply(lambda s: s.astype(str).astype(float))
numeric["malignant"] = (cancer["Class"] == "malignant").astype(float)
bounds = {c: (1.0, 10.0) for c in features}
bounds["malignant"] = (0.0, 1.0)
fit = dp.dp_sis("malignant ~ .", data=numeric, eps=2.0, k=3, bounds=bounds, random_state=1)
print(fit)

# %% [markdown]
# What R receives is `fit.to_dict()` turned into an R list: the same outputs, the privacy
# statement and the ledger.

# %%
as_r = rbridge.result_to_r(fit)
ro = rbridge.import_robjects()
print(ro.r["class"](as_r))
print(list(ro.r["names"](as_r))[:8])
path = fit.report(str(OUT / "for_r_users.html"))
print("wrote", path)
