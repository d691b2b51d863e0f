# The other front doors are wrapped generically; each is exercised when this dpstats has it.

test_that("every public Python function has an R wrapper", {
  for (f in c("dp_sis", "dp_two_stage", "dp_knockoff", "dp_gmm", "dp_felp", "vertical_glm", "dp_pca", "dp_bh", "dp_call")) {
    expect_true(is.function(getExportedValue("dpstats", f)), info = f)
  }
})

test_that("vertical_glm: coef, tidy and predict through the Python object", {
  skip_if_no_dpstats()
  df <- sim_data()
  fit <- vertical_glm(y ~ x1 + x2 + x3, data = df, parties = list(a = c("x1", "x2"), b = "x3"),
                      family = "gaussian")
  expect_s3_class(fit, c("dp_vertical_glm", "dp_result"), exact = TRUE)
  ref <- coef(lm(y ~ x1 + x2 + x3, data = df))
  cf <- coef(fit)
  expect_equal(unname(cf[names(ref)]), unname(ref), tolerance = 1e-5)
  if (dpstats:::.dp_env$bridge$has_method(attr(fit, "py"), "predict")) {
    p <- predict(fit, newdata = df[1:5, ])
    expect_equal(as.numeric(unlist(p)), unname(predict(lm(y ~ x1 + x2 + x3, data = df), df[1:5, ])),
                 tolerance = 1e-4)
  }
})

test_that("dp_gmm: fit and predict(gm, newdata)", {
  skip_if_no_dpstats()
  set.seed(4)
  centers <- rbind(c(-6, -6), c(6, 6), c(6, -6))
  truth <- rep(1:3, each = 600)
  X <- do.call(rbind, lapply(1:3, function(j) sweep(matrix(rnorm(2 * 600), ncol = 2), 2, -centers[j, ])))
  X <- as.data.frame(X)
  gm <- dp_gmm(~ ., data = X, k = 3, eps = 4, delta = 1e-6, bounds = c(-12, 12), seed = 1)
  expect_s3_class(gm, c("dp_gmm", "dp_result"), exact = TRUE)
  cl <- predict(gm, X)  # positional newdata, as in predict(gm, newdata)
  expect_length(cl, nrow(X))
  expect_true(all(cl %in% 1:3))
  # components 6 sd apart: each true cluster goes to one released component (label switching aside)
  tab <- table(truth, cl)
  expect_gte(sum(apply(tab, 1, max)) / nrow(X), 0.99)
  expect_identical(length(unique(apply(tab, 1, which.max))), 3L)
  expect_identical(as.vector(predict(gm, newdata = X[c(1, 601, 1201), ])), as.vector(cl[c(1, 601, 1201)]))
  # sample-and-aggregate arguments by their Python names
  gs <- dp_gmm(~ V1 + V2, data = X, k = 3, eps = 4, delta = 1e-6, bounds = c(-12, 12),
               method = "sample_aggregate", groups = 10, refine = 2, seed = 2)
  expect_gte(sum(apply(table(truth, predict(gs, X)), 1, max)) / nrow(X), 0.99)
  expect_error(predict(gm, data.frame(a = 1)), class = "dpstats_error")
  # coef(): weights with unique names and a means matrix (components x variables)
  cf <- coef(gm)
  expect_identical(names(cf$weights), c("comp1", "comp2", "comp3"))
  expect_equal(sum(cf$weights), 1, tolerance = 1e-8)
  expect_identical(dimnames(cf$means), list(c("comp1", "comp2", "comp3"), c("V1", "V2")))
  expect_equal(unname(sort(round(cf$means[, "V1"]))), c(-6, 6, 6))
  # predict() without newdata: the fit keeps no rows
  expect_error(predict(gm), "keeps no rows", class = "dpstats_error")
})

test_that("glance() follows broom's types: statistic is not a name, infinities are numbers", {
  skip_if_no_dpstats()
  set.seed(1)
  X <- matrix(rnorm(600 * 8), 600)
  d <- data.frame(X)
  d$y <- 2 * X[, 1] + rnorm(600)
  f <- suppressWarnings(dp_knockoff(y ~ ., d, eps = Inf, delta = 1e-6, fdr = 0.2, seed = 1))
  g <- glance(f)
  expect_false("statistic" %in% names(g))  # broom's statistic is a numeric test statistic
  expect_identical(g$w_statistic, "csm")
  expect_true(is.numeric(g$eps) && is.infinite(g$eps))
  expect_true(is.numeric(g$threshold))
})
