# Fit each method this dpstats provides from plain R: print, summarise, write a report.
# Usage: Rscript fit_all.R OUTDIR
suppressPackageStartupMessages(library(dpstats))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else tempdir()
dir.create(out, showWarnings = FALSE, recursive = TRUE)
set.seed(2024)
n <- 300
df <- as.data.frame(matrix(rnorm(n * 10), n, dimnames = list(NULL, paste0("x", 1:10))))
df$g <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
df$y <- 2 * df$x1 - 2 * df$x2 + rnorm(n)
dfk <- as.data.frame(matrix(rnorm(2000 * 40), 2000))  # knockoffs: p > 2 log(2/delta) and n > 2p
dfk$y <- 2 * dfk$V1 - 2 * dfk$V2 + rnorm(2000)
X <- as.data.frame(rbind(matrix(rnorm(400, -5), ncol = 2), matrix(rnorm(400, 5), ncol = 2)))
fits <- list(
  dp_sis = function() dp_sis(y ~ ., data = df, eps = 2, k = 3, bounds = c(-6, 6), seed = 1),
  dp_two_stage = function() dp_two_stage(y ~ . - g, data = df, eps = 2, k = 3, bounds = c(-6, 6), seed = 1),
  dp_knockoff = function() dp_knockoff(y ~ ., data = dfk, eps = 2, delta = 1e-5, fdr = 0.2, bounds = 10, seed = 1),
  dp_gmm = function() dp_gmm(~ ., data = X, k = 2, eps = 2, delta = 1e-6, bounds = c(-10, 10), seed = 1),
  dp_pca = function() dp_pca(~ x1 + x2 + x3, data = df, k = 2, eps = 2, delta = 1e-6, bounds = c(-6, 6), seed = 1),
  dp_felp = function() dp_felp(y ~ . - g, data = transform(df, y = factor(y > 0)), eps = 2,
                               bounds = c(-6, 6), seed = 1),
  vertical_glm = function() vertical_glm(y ~ x1 + x2 + x3, data = df,
                                         parties = list(a = c("x1", "x2"), b = "x3")),
  dp_lm = function() dp_lm(y ~ x1 + x2 + g, data = df, eps = 2, delta = 1e-6, bounds = c(-10, 10),
                           n_boot = 200, seed = 1),
  dp_select_infer = function() dp_select_infer(y ~ . - g, data = df, eps = 2, delta = 1e-6, k = 2,
                                               bounds = c(-10, 10), n_boot = 200, seed = 1)
)
done <- character()
for (m in names(fits)) {
  fit <- suppressWarnings(fits[[m]]())
  print(fit)
  print(summary(fit))
  print(head(tidy(fit)))
  print(glance(fit))
  if (m == "dp_gmm") {  # predict(gm, newdata): the most probable released component of each row
    cl <- predict(fit, X)
    stopifnot(length(cl) == nrow(X), all(cl %in% 1:2))
    print(table(component = cl))
  }
  if (m == "dp_pca") {  # predict(fit, newdata): scores on the released components, as predict.prcomp
    stopifnot(identical(dim(predict(fit, df)), c(nrow(df), 2L)))
  }
  path <- file.path(out, paste0(m, ".html"))
  report(fit, path)
  stopifnot(file.exists(path), inherits(fit, "dp_result"))
  cat(sprintf("FITTED %s -> %s\n", m, path))
  done <- c(done, m)
}
cat(sprintf("DONE %d methods: %s\n", length(done), paste(done, collapse = ", ")))
