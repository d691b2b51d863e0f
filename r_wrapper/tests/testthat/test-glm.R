# vertical_glm results behave like glm/lm objects. The non-private fit is the pooled GLM, so on R's
# own data it must equal R's glm()/lm() to 1e-6; a DP fit gives what follows from the released
# coefficients and refuses the rest with the reason.

parties <- list(a = "wt", b = "hp")

test_that("binomial fit equals glm(am ~ wt + hp) on mtcars", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial)
  ref <- glm(am ~ wt + hp, family = binomial, data = mtcars)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-6)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-6)
  expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-6)
  expect_identical(attr(logLik(fit), "df"), attr(logLik(ref), "df"))
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6)
  expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6)
  expect_identical(nobs(fit), nobs(ref))
  nd <- mtcars[c(1, 5, 20, 31), ]
  expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6)
  expect_equal(predict(fit, newdata = nd, type = "response"), predict(ref, nd, type = "response"),
               tolerance = 1e-6)
  # Wald intervals with normal quantiles: confint.default (R's confint.glm profiles instead)
  ci <- confint(fit)
  expect_equal(ci, confint.default(ref), tolerance = 1e-6, ignore_attr = TRUE)
  expect_true(isTRUE(all.equal(ci, confint.default(ref), tolerance = 1e-6)))  # no extra attribute
  expect_equal(confint(fit, "wt", level = 0.9), confint.default(ref, "wt", level = 0.9), tolerance = 1e-6,
               ignore_attr = TRUE)
})

test_that("gaussian fit equals lm(mpg ~ wt + hp) on mtcars", {
  skip_if_no_dpstats()
  fit <- vertical_glm(mpg ~ wt + hp, data = mtcars, parties = parties, family = gaussian())
  ref <- lm(mpg ~ wt + hp, data = mtcars)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-6)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-6)
  expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6)
  expect_equal(logLik(fit), logLik(ref), tolerance = 1e-6, ignore_attr = "nall")
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6)
  expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6)
  nd <- data.frame(wt = c(2.5, 3.5), hp = c(100, 200), row.names = c("a", "b"))
  expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6)
  expect_equal(predict(fit, nd, type = "response"), predict(ref, nd), tolerance = 1e-6)
  # t quantiles with the residual df, as confint.lm
  expect_equal(confint(fit), confint(ref), tolerance = 1e-6, ignore_attr = TRUE)
  expect_true(isTRUE(all.equal(confint(fit), confint(ref), tolerance = 1e-6)))  # exactly confint.lm's layout
})

test_that("fitted() and residuals() need diagnostics = TRUE, then equal glm's", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial")
  expect_error(fitted(fit), "diagnostics", class = "dpstats_error")
  expect_error(residuals(fit), "per-row", class = "dpstats_error")
  expect_error(predict(fit), "diagnostics", class = "dpstats_error")
  dg <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial", diagnostics = TRUE)
  ref <- glm(am ~ wt + hp, family = binomial, data = mtcars)
  expect_equal(fitted(dg), unname(fitted(ref)), tolerance = 1e-6)
  expect_equal(predict(dg), unname(predict(ref)), tolerance = 1e-6)
  for (type in c("deviance", "pearson", "response", "working")) {
    expect_equal(residuals(dg, type = type), unname(residuals(ref, type = type)), tolerance = 1e-6, info = type)
  }
})

test_that("a DP fit predicts from its released coefficients and refuses the rest, saying why", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial", eps = 1,
                      delta = 1e-6, penalty = "ridge", lam = 0.1, bounds = list(wt = c(0, 6), hp = c(0, 400)),
                      seed = 1)
  p <- predict(fit, mtcars[1:3, ], type = "link")
  cf <- coef(fit)
  expect_equal(unname(p), unname(cf[1] + cf["wt"] * mtcars$wt[1:3] + cf["hp"] * mtcars$hp[1:3]), tolerance = 1e-10)
  expect_equal(predict(fit, mtcars[1:3, ], type = "response"), plogis(p))
  expect_identical(nobs(fit), 32L)  # n is public under replace-one-row privacy
  expect_error(vcov(fit), "not released", class = "dpstats_error")
  expect_error(confint(fit), "not released", class = "dpstats_error")
  expect_error(deviance(fit), "raw data", class = "dpstats_error")
  expect_error(logLik(fit), "raw data", class = "dpstats_error")
  expect_error(AIC(fit), "raw data", class = "dpstats_error")
  expect_error(fitted(fit), "diagnostics", class = "dpstats_error")
})

test_that("predict refuses data-dependent terms and unseen levels; factors use the training levels", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(vertical_glm(mpg ~ poly(wt, 2) + hp, data = mtcars, parties = parties))
  expect_error(predict(fit, mtcars[1:2, ]), "poly", class = "dpstats_error")
  raw <- vertical_glm(mpg ~ poly(wt, 2, raw = TRUE) + hp, data = mtcars, parties = parties)
  expect_equal(predict(raw, mtcars[1:2, ]), predict(lm(mpg ~ poly(wt, 2, raw = TRUE) + hp, mtcars), mtcars[1:2, ]),
               tolerance = 1e-6)
  ir <- vertical_glm(Sepal.Length ~ Petal.Length * Species + Sepal.Width, data = iris,
                     parties = list(a = c("Petal.Length", "Species"), b = "Sepal.Width"))
  ref <- lm(Sepal.Length ~ Petal.Length * Species + Sepal.Width, data = iris)
  expect_equal(coef(ir), coef(ref), tolerance = 1e-6)
  # character, two of the three levels only
  nd <- data.frame(Petal.Length = c(1.5, 5), Species = c("setosa", "virginica"), Sepal.Width = 3)
  expect_equal(unname(predict(ir, nd)), unname(predict(ref, nd)), tolerance = 1e-6)
  expect_error(predict(ir, data.frame(Petal.Length = 1, Species = "rosea", Sepal.Width = 3)), "rosea",
               class = "dpstats_error")
})

test_that("family = binomial, binomial() and \"binomial\" give the same fit; other links are refused", {
  skip_if_no_dpstats()
  fits <- list(vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial),
               vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial()),
               vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial"))
  for (f in fits[-1]) expect_equal(coef(f), coef(fits[[1]]))
  counts <- data.frame(y = c(2, 3, 6, 7, 8, 9, 10, 12, 15), x1 = 1:9, x2 = c(3, 1, 4, 1, 5, 9, 2, 6, 5))
  pois <- vertical_glm(y ~ x1 + x2, data = counts, parties = list(a = "x1", b = "x2"), family = poisson)
  ref <- glm(y ~ x1 + x2, family = poisson, data = counts)
  expect_equal(coef(pois), coef(ref), tolerance = 1e-6)
  expect_equal(logLik(pois), logLik(ref), tolerance = 1e-6, ignore_attr = "nobs")
  expect_equal(coef(vertical_glm(mpg ~ wt + hp, data = mtcars, parties = parties, family = gaussian)),
               coef(lm(mpg ~ wt + hp, mtcars)), tolerance = 1e-6)
  expect_error(vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial("probit")),
               "canonical", class = "dpstats_error")
})

test_that("fit$call is an R call like lm's: formula unquoted, data named as passed", {
  skip_if_no_dpstats()
  cars <- mtcars
  fit <- vertical_glm(mpg ~ wt + hp, cars, parties = parties)
  expect_true(is.call(fit$call))
  expect_identical(deparse(fit$call$formula), "mpg ~ wt + hp")
  expect_identical(fit$call$data, as.name("cars"))
  expect_match(paste(deparse(fit$call), collapse = " "), "^vertical_glm\\(formula = mpg ~ wt \\+ hp, data = cars, ")
  s <- suppressWarnings(dp_sis(mpg ~ ., data = cars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1, oc_trials = 0L))
  expect_identical(deparse(s$call, width.cutoff = 500L),
                   "dp_sis(formula = mpg ~ ., data = cars, eps = 1, k = 2, bounds = c(-500, 500), oc_trials = 0L, seed = 1)")
  expect_identical(s$py_call$formula, "mpg ~ .")  # Python's record of the call is kept
})
