# lm's methods on dp_lm: at eps = Inf the fit is lm() itself and every accessor must answer as R's lm
# does on the same data; a DP fit refuses what it does not release, with a classed error saying why.

lm_cases <- list(
  list(f = mpg ~ wt + factor(cyl), data = mtcars),
  list(f = mpg ~ wt * hp + log(disp), data = mtcars),
  list(f = Sepal.Length ~ Petal.Length + Species, data = iris)
)

test_that("a non-private dp_lm answers lm's methods like lm on R's data sets", {
  skip_if_no_dpstats()
  for (case in lm_cases) {
    info <- deparse(case$f)
    fit <- suppressWarnings(dp_lm(case$f, data = case$data, eps = Inf))
    ref <- lm(case$f, data = case$data)
    expect_equal(fitted(fit), fitted(ref), tolerance = 1e-6, info = info)
    expect_equal(residuals(fit), residuals(ref), tolerance = 1e-6, info = info)
    expect_equal(predict(fit), predict(ref), tolerance = 1e-6, info = info)
    nd <- case$data[c(3, 7, 20), ]
    expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6, info = info)  # names kept
    expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6, info = info)
    expect_identical(df.residual(fit), df.residual(ref), info = info)
    expect_equal(sigma(fit), sigma(ref), tolerance = 1e-6, info = info)
    expect_equal(logLik(fit), logLik(ref), tolerance = 1e-6, info = info)
    expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6, info = info)
    expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6, info = info)
    expect_true(isTRUE(all.equal(confint(fit), confint(ref))), info = info)
    expect_true(isTRUE(all.equal(confint(fit, level = 0.9), confint(ref, level = 0.9))), info = info)
    expect_true(isTRUE(all.equal(confint(fit, 2, level = 0.8), confint(ref, 2, level = 0.8))), info = info)
    expect_identical(formula(fit), formula(ref), info = info)
    expect_true(isTRUE(all.equal(model.matrix(fit), model.matrix(ref))), info = info)
    expect_identical(nobs(fit), nobs(ref), info = info)
  }
})

test_that("update() refits through the call, as for lm", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_lm(mpg ~ wt + hp + factor(cyl), data = mtcars, eps = Inf))
  small <- suppressWarnings(update(fit, . ~ . - hp))
  expect_s3_class(small, "dp_lm")
  expect_equal(coef(small), coef(lm(mpg ~ wt + factor(cyl), data = mtcars)), tolerance = 1e-6)
  expect_identical(formula(small), mpg ~ wt + factor(cyl))
  sis <- dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)
  expect_identical(formula(sis), formula(lm(mpg ~ ., data = mtcars)))  # `.` expanded, as lm does
  sis2 <- update(sis, . ~ . - wt)
  expect_false("wt" %in% sis2$terms)
})

test_that("update() of a fit given its data as a value asks for data = again, naming the call (audit item 5)", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(do.call(dp_lm, list(mpg ~ wt, data = mtcars, eps = Inf)))
  expect_identical(fit$call$data, as.name("<data frame>"))  # printed output never carries the data
  e <- tryCatch(update(fit, . ~ . + hp), error = identity)
  expect_s3_class(e, "dpstats_argument_error")
  expect_match(conditionMessage(e), "update() needs data = again", fixed = TRUE)
  expect_match(conditionMessage(e), "Give it again: update(fit, . ~ . + hp, data = df), with df your data frame.",
               fixed = TRUE)
  expect_identical(deparse(conditionCall(e)), "update(fit, . ~ . + hp)")
  # with the data given again it refits, as lm's update; evaluate = FALSE gives the call
  big <- suppressWarnings(update(fit, . ~ . + hp, data = mtcars))
  expect_equal(coef(big), coef(lm(mpg ~ wt + hp, data = mtcars)), tolerance = 1e-8)
  expect_identical(deparse(update(fit, . ~ . + hp, data = mtcars, evaluate = FALSE)),
                   "dp_lm(formula = mpg ~ wt + hp, data = mtcars, eps = Inf)")
  # a name the call keeps that is not found where update() is called (Map's d) is asked for the same way
  fits <- Map(function(d) suppressWarnings(dp_lm(mpg ~ wt, data = d, eps = Inf)), split(mtcars, mtcars$am))
  expect_error(update(fits[[1]], . ~ . + hp), "the fit's call holds data = d, which is not data found here",
               class = "dpstats_argument_error")
  # dp_bh's p-values passed as a value: p_values = again
  bh <- do.call(dp_bh, list(c(1e-9, 0.2, 0.5, 0.9), q = 0.1, eps = 1, seed = 1))
  expect_error(update(bh, q = 0.2), "update(bh, q = 0.2, p_values = p), with p your p-values", fixed = TRUE,
               class = "dpstats_argument_error")
  expect_s3_class(update(bh, q = 0.2, p_values = c(1e-9, 0.2, 0.5, 0.9)), "dp_bh")
})

test_that("formula(fit) expands `.` over the data the fit was given, as lm's, for dp_lm and dp_glm", {
  skip_if_no_dpstats()
  fit_in <- function(fitter, f, ...) {  # data local to a function; the formula also as a string
    d <- mtcars[c("am", "mpg", "wt", "hp")]
    suppressWarnings(fitter(f, d, eps = Inf, ...))
  }
  expect_equal(formula(fit_in(dp_lm, mpg ~ .)), formula(lm(mpg ~ ., mtcars[c("am", "mpg", "wt", "hp")])),
               ignore_attr = TRUE)
  expect_identical(deparse(formula(fit_in(dp_lm, "mpg ~ . - hp"))),
                   deparse(formula(lm(mpg ~ . - hp, mtcars[c("am", "mpg", "wt", "hp")]))))
  expect_identical(deparse(formula(fit_in(dp_glm, am ~ ., family = binomial))), "am ~ mpg + wt + hp")
  d <- mtcars[1:3]
  fit <- suppressWarnings(dp_lm(mpg ~ ., d, eps = Inf))
  ref <- lm(mpg ~ ., d)
  d <- mtcars  # the data named in the call changes after the fit: formula(fit) is still the fit's, as lm's
  expect_identical(formula(fit), formula(ref))
  expect_identical(deparse(formula(fit)), "mpg ~ cyl + disp")
})

test_that("a DP dp_lm's sigma() is Python's residual standard error from the released statistics", {
  # The outside R audit, item 9: R said "not released" where Python printed sigma. It is post-processing
  # of the released statistics and the public n, so R shows Python's value with Python's words. Oracle:
  # Python itself, run apart on the same rows (quakes written out as CSV) with the same seed.
  skip_if_no_dpstats()
  b <- list(mag = c(4, 6.5), stations = c(10, 135), depth = c(40, 680))
  fit <- dp_lm(mag ~ stations + depth, data = quakes, eps = 2, delta = 1e-6, bounds = b, n_boot = 200, seed = 2)
  csv <- tempfile(fileext = ".csv")
  on.exit(unlink(csv))
  utils::write.csv(quakes[c("mag", "stations", "depth")], csv, row.names = FALSE)
  script <- paste(
    "import sys, json, pandas as pd, dpstats as dp",
    "df = pd.read_csv(sys.argv[1])",
    "b = {'mag': (4, 6.5), 'stations': (10, 135), 'depth': (40, 680)}",
    "fit = dp.dp_lm('mag ~ stations + depth', df, eps=2, delta=1e-6, bounds=b, n_boot=200, random_state=2)",
    "line = [ln for ln in str(fit).splitlines() if ln.startswith('Residual standard error')][0]",
    "print(json.dumps({'sigma': fit.sigma, 'line': line}))", sep = "\n")
  py <- jsonlite::fromJSON(system2(dpstats_python(), c("-c", shQuote(script), shQuote(csv)), stdout = TRUE))
  expect_true(is.finite(py$sigma) && py$sigma > 0)
  expect_equal(sigma(fit), py$sigma, tolerance = 1e-12)
  expect_identical(summary(fit)$sigma, sigma(fit))
  expect_identical(glance(fit)$sigma, sigma(fit))
  one_line <- function(out) gsub("\\s+", " ", paste(out, collapse = " "))  # lines wrapped to the console
  expect_true(grepl(py$line, one_line(capture.output(print(fit))), fixed = TRUE))  # the same words
  expect_true(grepl(py$line, one_line(capture.output(print(summary(fit)))), fixed = TRUE))
  expect_match(py$line, "^Residual standard error: [0-9.]+ on 997 degrees of freedom \\(from the released")
})

test_that("a DP dp_lm's deviance() is computed from its released sigma (s13-ruser f02); logLik() is refused (s16 F06)", {
  skip_if_no_dpstats()
  set.seed(4)
  d <- data.frame(x1 = runif(2000, -1, 1), x2 = runif(2000, -1, 1))
  d$y <- pmin(pmax(0.5 * d$x1 - 0.3 * d$x2 + rnorm(2000, sd = 0.3), -2), 2)
  fit <- dp_lm(y ~ x1 + x2, d, eps = 3, delta = 1e-6, bounds = list(y = c(-2, 2), x1 = c(-1, 1), x2 = c(-1, 1)),
               seed = 4)
  expect_true(is.finite(sigma(fit)))
  rss <- sigma(fit)^2 * df.residual(fit)
  expect_equal(deviance(fit), rss, tolerance = 1e-12)
  expect_equal(glance(fit)$deviance, rss, tolerance = 1e-12)
  # a log-likelihood from the noisy RSS is no likelihood of the data: refused as dp_glm's, NA in glance()
  for (g in list(logLik, AIC, BIC)) expect_error(g(fit), class = "dpstats_not_released_error")
  expect_true(all(is.na(unlist(glance(fit)[c("logLik", "AIC", "BIC")]))))
  # eps = Inf: lm's own, exactly
  ols <- suppressWarnings(dp_lm(y ~ x1 + x2, d, eps = Inf))
  ref <- lm(y ~ x1 + x2, d)
  expect_equal(logLik(ols), logLik(ref), tolerance = 1e-10)
  expect_equal(c(deviance(ols), AIC(ols), BIC(ols)), c(deviance(ref), AIC(ref), BIC(ref)), tolerance = 1e-10)
})

test_that("a DP dp_lm refuses per-row values and functions of the raw data, saying why", {
  skip_if_no_dpstats()
  b <- list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35))
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5, bounds = b, n_boot = 200, seed = 1)
  expect_error(fitted(fit), "per-row", class = "dpstats_not_released_error")
  expect_error(residuals(fit), "per-row", class = "dpstats_not_released_error")
  expect_error(predict(fit), "newdata", class = "dpstats_not_released_error")
  expect_identical(sigma(fit), summary(fit)$sigma)  # from the released statistics (the test above)
  expect_identical(deviance(fit), sigma(fit)^2 * df.residual(fit))  # so is the RSS (NA where sigma is)
  expect_error(model.matrix(fit), "row-level", class = "dpstats_not_released_error")
  expect_error(anova(fit), "raw data", class = "dpstats_not_released_error")
  expect_error(confint(fit, level = 0.9), "conf_level", class = "dpstats_argument_error")
  expect_identical(df.residual(fit), 29L)  # n is public under replace-one-row
  expect_identical(formula(fit), mpg ~ wt + hp)
  ci <- confint(fit)
  expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
  expect_identical(names(attributes(ci)), c("dim", "dimnames"))  # confint.lm's plain matrix
  nd <- mtcars[1:3, ]
  expect_identical(names(predict(fit, nd)), rownames(nd))
  e <- tryCatch(fitted(fit), error = identity)
  expect_false(is.null(conditionCall(e)))
})

test_that("vertical_glm: formula, model.matrix, anova and predict with fewer factor levels in newdata", {
  skip_if_no_dpstats()
  d <- mtcars
  d$cyl <- factor(d$cyl)
  fit <- vertical_glm(mpg ~ wt + cyl + factor(gear), data = d, parties = list(a = "wt", b = c("cyl", "gear")))
  ref <- lm(mpg ~ wt + cyl + factor(gear), data = d)
  expect_identical(formula(fit), formula(ref))
  expect_true(isTRUE(all.equal(model.matrix(fit), model.matrix(ref))))
  expect_identical(df.residual(fit), df.residual(ref))
  nd <- droplevels(d[d$cyl != 8 & d$gear == 4, ])  # factor levels missing from newdata, as R's xlev allows
  expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6)
  expect_error(anova(fit), class = "dpstats_not_released_error")
  dp <- vertical_glm(mpg ~ wt + hp, data = mtcars, parties = list(a = "wt", b = "hp"), eps = 1, delta = 1e-6,
                     penalty = "ridge", lam = 0.1, bounds = list(wt = c(0, 6), hp = c(0, 400), mpg = c(0, 40)), seed = 1)
  expect_error(model.matrix(dp), "row-level", class = "dpstats_not_released_error")
})

test_that("tidy() and glance() use broom's column names and, at eps = Inf, broom's values", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  fit <- suppressWarnings(dp_lm(mpg ~ wt + factor(cyl), data = mtcars, eps = Inf))
  ref <- lm(mpg ~ wt + factor(cyl), data = mtcars)
  bt <- broom::tidy(ref, conf.int = TRUE)
  td <- tidy(fit)
  if (requireNamespace("tibble", quietly = TRUE)) expect_s3_class(td, "tbl_df")
  expect_identical(names(td)[seq_along(bt)], names(bt))
  expect_equal(as.data.frame(td[names(bt)]), as.data.frame(bt), tolerance = 1e-6)
  bg <- broom::glance(ref)
  gl <- glance(fit)
  expect_identical(names(gl)[seq_along(bg)], names(bg))
  expect_equal(as.data.frame(gl[names(bg)]), as.data.frame(bg), tolerance = 1e-6)

  d <- mtcars
  vg <- vertical_glm(am ~ wt + hp, data = d, parties = list(a = "wt", b = "hp"), family = binomial)
  gref <- glm(am ~ wt + hp, data = d, family = binomial)
  bt <- broom::tidy(gref)
  expect_identical(names(tidy(vg))[seq_along(bt)], names(bt))
  expect_equal(as.data.frame(tidy(vg)[names(bt)]), as.data.frame(bt), tolerance = 1e-6)
  bg <- broom::glance(gref)
  expect_identical(names(glance(vg))[seq_along(bg)], names(bg))
  expect_equal(as.data.frame(glance(vg)[names(bg)]), as.data.frame(bg), tolerance = 1e-6)

  # a DP fit: broom's names, released quantities only
  dp <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5, n_boot = 200, seed = 1,
              bounds = list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35)))
  expect_identical(names(tidy(dp))[1:8], c("term", "estimate", "ridge", "std.error", "statistic", "p.value",
                                           "conf.low", "conf.high"))  # broom's (estimate: calibrated), with the ridge
  expect_identical(glance(dp)$sigma, sigma(dp))  # from the released statistics, as Python's glance
  expect_false(any(grepl("_(error|value|low|high|residual)$", c(names(tidy(vg)), names(glance(vg)), names(glance(dp))))))
})

test_that("model.matrix of another non-private result is rebuilt from its call, as model.frame.lm does", {
  skip_if_no_dpstats()
  f <- mpg ~ wt + hp + qsec + drat
  ko <- suppressWarnings(dp_knockoff(f, data = mtcars, eps = Inf, delta = 1e-6, oc_trials = 0L))
  expect_true(isTRUE(all.equal(model.matrix(ko), model.matrix(lm(f, mtcars)))))
  sub <- suppressWarnings(dp_knockoff(f, data = mtcars, eps = Inf, delta = 1e-6, oc_trials = 0L, subset = cyl > 4))
  expect_true(isTRUE(all.equal(model.matrix(sub), model.matrix(lm(f, mtcars, subset = cyl > 4)))))
})

test_that("glance(dp_lm) at eps = Inf is Python's, equal to broom::glance(lm) with an aliased column too", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  for (f in list(Fertility ~ Agriculture + Education + I(Agriculture + Education), Volume ~ Girth + Height - 1)) {
    data <- if (identical(all.vars(f)[1], "Volume")) trees else swiss
    fit <- suppressWarnings(dp_lm(f, data = data, eps = Inf))
    bg <- as.data.frame(broom::glance(lm(f, data = data)))
    gl <- as.data.frame(glance(fit))
    expect_identical(names(gl)[seq_along(bg)], names(bg))
    expect_equal(gl[names(bg)], bg, tolerance = 1e-8)
  }
  # a DP fit: what released values and public inputs give (sigma, df, df.residual, nobs, and from sigma and
  # n the deviance), the rest NA (logLik, AIC, BIC: s16-rusers3 F06)
  dp <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5, n_boot = 200, seed = 1,
              bounds = list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35)))
  g <- glance(dp)
  expect_identical(c(g$df, g$df.residual, g$nobs), c(2, 29, 32))
  expect_true(all(is.na(unlist(g[c("r.squared", "adj.r.squared", "statistic", "p.value")]))))
  expect_equal(g$deviance, deviance(dp))
  expect_true(all(is.na(unlist(g[c("logLik", "AIC", "BIC")]))))
  expect_false("n" %in% names(g))
})

test_that("a Wald test from coef() and vcov() is tidy()'s test (audit s13-ruser f01)", {
  # lmtest::coeftest, car::linearHypothesis and a hand Wald test combine coef() with vcov(): both must be
  # about one estimate, the calibrated one under eps < Inf (coef() was the ridge estimate).
  skip_if_no_dpstats()
  fit <- dp_lm(uptake ~ Type * Treatment + conc, CO2, eps = 5, delta = 1e-5,
               bounds = list(uptake = c(0, 50), conc = c(0, 1000)), seed = 1)
  td <- tidy(fit)
  se <- sqrt(diag(vcov(fit)))
  expect_equal(unname(coef(fit) / se), td$statistic, tolerance = 1e-12)
  expect_equal(unname(se), td$std.error, tolerance = 1e-12)
  expect_identical(names(coef(fit)), rownames(vcov(fit)))
  # a one-degree Wald test of conc from coef and vcov, as car::linearHypothesis computes it
  L <- matrix(as.numeric(names(coef(fit)) == "conc"), 1)
  w <- drop(L %*% coef(fit))^2 / drop(L %*% vcov(fit) %*% t(L))
  expect_equal(w, td$statistic[td$term == "conc"]^2, tolerance = 1e-12)
  expect_false(isTRUE(all.equal(unname(coef(fit)), td$ridge)))  # the ridge estimate, kept in tidy()
  nd <- CO2[1:5, ]
  expect_equal(unname(predict(fit, nd)), unname(drop(model.matrix(~ Type * Treatment + conc, nd) %*% coef(fit))),
               tolerance = 1e-10)  # predict() uses coef(), as predict.lm
})

test_that("dp_select_infer (infer = \"lm\") gives part B's deviance() as dp_lm's, glance()'s; logLik() is refused", {
  skip_if_no_dpstats()
  set.seed(4)
  d <- data.frame(x1 = runif(4000, -1, 1), x2 = runif(4000, -1, 1), x3 = runif(4000, -1, 1))
  d$y <- pmin(pmax(0.8 * d$x1 + rnorm(4000, sd = 0.3), -2), 2)
  fit <- suppressWarnings(dp_select_infer(y ~ x1 + x2 + x3, data = d, eps = 3, delta = 1e-6, k = 1,
                                          bounds = c(-2, 2), seed = 1))
  g <- glance(fit)
  expect_true(is.finite(deviance(fit)))
  expect_equal(deviance(fit), g$deviance)
  expect_error(logLik(fit), class = "dpstats_not_released_error")
  expect_true(is.na(g$logLik))
  expect_equal(deviance(fit), sigma(fit)^2 * fit$outputs$df_residual, tolerance = 1e-12)
})
