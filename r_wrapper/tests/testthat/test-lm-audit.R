# The outside R-user audit of dp_lm / dp_glm's methods: each defect's reproducer, compared with
# R's own lm, glm, model.matrix and broom on R's data sets.

inf_lm <- function(...) suppressWarnings(dp_lm(..., eps = Inf))
inf_glm <- function(...) suppressWarnings(dp_glm(..., eps = Inf))

same_lm_methods <- function(f, l) {
  expect_equal(coef(f), coef(l), tolerance = 1e-8)
  expect_equal(fitted(f), fitted(l), tolerance = 1e-8)
  expect_equal(residuals(f), residuals(l), tolerance = 1e-8)
  expect_equal(deviance(f), deviance(l), tolerance = 1e-8)
  expect_equal(as.numeric(logLik(f)), as.numeric(logLik(l)), tolerance = 1e-8)
  expect_equal(AIC(f), AIC(l), tolerance = 1e-8)
  expect_equal(sigma(f), sigma(l), tolerance = 1e-8)
  expect_equal(unname(model.matrix(f)), unname(model.matrix(l)), ignore_attr = TRUE)
  expect_identical(colnames(model.matrix(f)), colnames(model.matrix(l)))
  gf <- as.data.frame(glance(f))
  gl <- as.data.frame(broom::glance(l))
  for (nm in c("r.squared", "adj.r.squared", "sigma", "statistic", "logLik", "AIC", "deviance", "nobs")) {
    expect_equal(gf[[nm]], gl[[nm]], tolerance = 1e-8, label = nm)
  }
}

test_that("1. contrasts = list(...) at eps = Inf: fitted, residuals, deviance, logLik, model.matrix equal lm's", {
  skip_if_no_dpstats()
  ca <- list(Species = "contr.sum")
  f <- inf_lm(Sepal.Length ~ Species, data = iris, contrasts = ca)
  l <- lm(Sepal.Length ~ Species, data = iris, contrasts = ca)
  same_lm_methods(f, l)
  expect_identical(f$contrasts, l$contrasts)
  f <- inf_lm(breaks ~ wool * tension, data = warpbreaks, contrasts = list(tension = "contr.helmert", wool = "contr.sum"))
  l <- lm(breaks ~ wool * tension, data = warpbreaks, contrasts = list(tension = "contr.helmert", wool = "contr.sum"))
  same_lm_methods(f, l)
  # the options and contrasts(f) <- routes keep working, and the fit keeps the coding it was made with
  old <- options(contrasts = c("contr.helmert", "contr.poly"))
  f <- inf_lm(len ~ supp + factor(dose), data = ToothGrowth)
  l <- lm(len ~ supp + factor(dose), data = ToothGrowth)
  options(old)
  same_lm_methods(f, l)
  wb <- warpbreaks
  contrasts(wb$tension) <- contr.sum(3)
  same_lm_methods(inf_lm(breaks ~ wool + tension, data = wb), lm(breaks ~ wool + tension, data = wb))
})

test_that("1. dp_glm with contrasts = at eps = Inf answers as glm with the same contrasts", {
  skip_if_no_dpstats()
  ca <- list(`factor(cyl)` = "contr.sum")
  g <- inf_glm(am ~ wt + factor(cyl), data = mtcars, family = binomial, contrasts = ca)
  r <- glm(am ~ wt + factor(cyl), data = mtcars, family = binomial, contrasts = ca)
  expect_equal(coef(g), coef(r), tolerance = 1e-6)
  expect_equal(fitted(g), fitted(r), tolerance = 1e-6)
  expect_equal(residuals(g), residuals(r), tolerance = 1e-6)
  expect_equal(residuals(g, type = "pearson"), residuals(r, type = "pearson"), tolerance = 1e-6)
  expect_equal(deviance(g), deviance(r), tolerance = 1e-6)
  expect_equal(as.numeric(logLik(g)), as.numeric(logLik(r)), tolerance = 1e-6)
  expect_identical(colnames(model.matrix(g)), colnames(model.matrix(r)))
  expect_equal(predict(g), predict(r), tolerance = 1e-6)
  ca <- list(Type = "contr.sum", Treatment = "contr.sum")
  co2 <- transform(as.data.frame(CO2), high = as.integer(uptake > 30))
  g <- inf_glm(high ~ Type + Treatment, data = co2, family = binomial, contrasts = ca)
  r <- glm(high ~ Type + Treatment, data = co2, family = binomial, contrasts = ca)
  expect_equal(fitted(g), fitted(r), tolerance = 1e-6)
})

filled_airquality <- function(df = airquality) {
  df$Ozone[is.na(df$Ozone)] <- 85  # the midpoint of bounds c(0, 170): the public fill
  df
}

test_that("2. eps = Inf with declared bounds and NA: lm's complete rows by default; na_action = 'fill' fills, as lm on the filled rows", {
  skip_if_no_dpstats()
  b <- list(Ozone = c(0, 170), Wind = c(0, 25), Temp = c(50, 100))
  # the default at eps = Inf is the reference fit, lm on the complete rows (na.omit)
  f <- inf_lm(Ozone ~ Wind + Temp, data = airquality, bounds = b)
  same_lm_methods(f, lm(Ozone ~ Wind + Temp, data = airquality))
  expect_identical(nobs(f), 116L)
  # asked for: the public fills, every method on the fit's rows (filled), warned
  expect_warning(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = Inf, bounds = b, na_action = "fill"))
  f <- inf_lm(Ozone ~ Wind + Temp, data = airquality, bounds = b, na_action = "fill")
  l <- lm(Ozone ~ Wind + Temp, data = filled_airquality())
  expect_identical(nobs(f), 153L)
  expect_length(fitted(f), nobs(f))
  same_lm_methods(f, l)
  g <- as.data.frame(glance(f))
  expect_lte(g$adj.r.squared, g$r.squared)
  expect_identical(g$nobs, 153L)
  expect_identical(g$df.residual, 150L)
  # na.action = na.omit: lm's complete rows
  f <- suppressWarnings(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = Inf, bounds = b, na.action = na.omit))
  same_lm_methods(f, lm(Ozone ~ Wind + Temp, data = airquality))
  # without bounds there is no public fill: the incomplete rows are dropped, as lm drops them
  f <- inf_lm(Ozone ~ Wind + Temp, data = airquality)
  same_lm_methods(f, lm(Ozone ~ Wind + Temp, data = airquality))
})

test_that("2. dp_glm at eps = Inf with NA filled: fitted and residuals have the fit's n rows, as glm on them", {
  skip_if_no_dpstats()
  aq <- transform(airquality, high = as.integer(Ozone > 60))
  g <- inf_glm(high ~ Wind + Solar.R, data = aq, family = binomial, na_action = "fill",
               bounds = list(high = c(0, 1), Wind = c(0, 25), Solar.R = c(0, 340)))
  filled <- aq
  filled$high[is.na(filled$high)] <- 0.5      # dp_glm's fill of a 0/1 response: its range's midpoint (s16 F03)
  filled$Solar.R[is.na(filled$Solar.R)] <- 170
  r <- suppressWarnings(glm(high ~ Wind + Solar.R, data = filled, family = binomial))  # non-integer successes
  expect_identical(nobs(g), 153L)
  expect_length(fitted(g), 153L)
  expect_equal(fitted(g), fitted(r), tolerance = 1e-6)
  expect_equal(residuals(g), residuals(r), tolerance = 1e-6)
  expect_equal(deviance(g), deviance(r), tolerance = 1e-6)
})

test_that("2. a numeric column used as factor(x, levels = c(...)) is filled by its first level in R as in Python", {
  skip_if_no_dpstats()
  # asked for at eps = Inf (na_action = "fill"; the default there is lm's na.omit): the fill Python gives (dpstats.formula.level_fills, asked through the bridge); R rebuilds the same rows
  mt <- mtcars
  mt$cyl[c(3, 10, 20)] <- NA
  f <- inf_lm(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)), data = mt, na_action = "fill")
  expect_null(f$rows_not_kept)
  filled <- mt
  filled$cyl[is.na(filled$cyl)] <- 4
  same_lm_methods(f, lm(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)), data = filled))
  expect_identical(nobs(f), 32L)
  # ToothGrowth's dose as a factor of declared numeric levels, missing in two rows; a character column too
  tg <- ToothGrowth
  tg$dose[c(5, 40)] <- NA
  g <- inf_lm(len ~ supp + factor(dose, levels = c(0.5, 1, 2)), data = tg, na_action = "fill")
  tg_filled <- tg
  tg_filled$dose[is.na(tg_filled$dose)] <- 0.5
  same_lm_methods(g, lm(len ~ supp + factor(dose, levels = c(0.5, 1, 2)), data = tg_filled))
  tg_chr <- transform(tg, dose = as.character(dose))
  h <- inf_lm(len ~ supp + factor(dose, levels = c(0.5, 1, 2)), data = tg_chr, na_action = "fill")
  expect_equal(fitted(h), fitted(g), tolerance = 1e-8)
  # declared bounds win (the midpoint, as in Python): the fill is then 6, a level too
  k <- inf_lm(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)), data = mt, na_action = "fill",
              bounds = list(cyl = c(4, 8), wt = c(1, 6), mpg = c(10, 35)))
  mid <- mt
  mid$cyl[is.na(mid$cyl)] <- 6
  same_lm_methods(k, lm(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)), data = mid))
})

test_that("2. when the fit's rows cannot be rebuilt in R, the per-row methods refuse and say why", {
  skip_if_no_dpstats()
  f <- inf_lm(Ozone ~ Wind + Temp, data = airquality, bounds = list(Ozone = c(0, 170), Wind = c(0, 25), Temp = c(50, 100)))
  f$model <- NULL
  f$rows_not_kept <- "test"
  expect_error(fitted(f), class = "dpstats_not_released_error", regexp = "fitted\\(\\) is not available")
  expect_error(model.matrix(f), class = "dpstats_not_released_error")
})

test_that("2. ?dp_lm and ?dp_glm describe the default na_action, not na.omit", {
  db <- tools::Rd_db("dpstats")
  for (page in c("dp_lm.Rd", "dp_glm.Rd")) {
    txt <- paste(capture.output(tools::Rd2txt(db[[page]])), collapse = " ")
    expect_false(grepl("are dropped (as na.omit)", txt, fixed = TRUE))
    expect_match(txt, "public fill")
  }
})

test_that("3. predict() with NA in newdata gives NA for that row, as predict.lm / predict.glm", {
  skip_if_no_dpstats()
  f <- inf_lm(breaks ~ wool + tension, data = warpbreaks)
  l <- lm(breaks ~ wool + tension, data = warpbreaks)
  nd <- data.frame(wool = c("A", NA, "B"), tension = c("M", "H", "L"))
  expect_equal(predict(f, newdata = nd), predict(l, newdata = nd), tolerance = 1e-8)
  nd2 <- data.frame(Wind = c(10, NA, 5), Temp = c(70, 80, NA))
  f2 <- inf_lm(Ozone ~ Wind + Temp, data = airquality)
  expect_equal(predict(f2, newdata = nd2), predict(lm(Ozone ~ Wind + Temp, data = airquality), newdata = nd2),
               tolerance = 1e-8)
  g <- inf_glm(am ~ wt + factor(cyl), data = mtcars, family = binomial)
  r <- glm(am ~ wt + factor(cyl), data = mtcars, family = binomial)
  nd3 <- data.frame(wt = c(3, NA, 2.5), cyl = c(4, 6, NA))
  expect_equal(predict(g, newdata = nd3), predict(r, newdata = nd3), tolerance = 1e-6)
  expect_equal(predict(g, newdata = nd3, type = "response"), predict(r, newdata = nd3, type = "response"),
               tolerance = 1e-6)
  # a DP fit too (post-processing of its coefficients)
  fp <- dp_lm(breaks ~ wool + tension, data = warpbreaks, eps = 1, delta = 1e-6, seed = 1,
              bounds = list(breaks = c(0, 80)))
  p <- predict(fp, newdata = nd)
  expect_true(is.na(p[2]) && all(is.finite(p[-2])))
})

test_that("4. predict(se.fit =, interval =, level =) at eps = Inf equal predict.lm's; a DP fit refuses them", {
  skip_if_no_dpstats()
  f <- inf_lm(mpg ~ wt + hp, data = mtcars)
  l <- lm(mpg ~ wt + hp, data = mtcars)
  nd <- mtcars[1:4, ]
  nd$wt[3] <- NA
  for (iv in c("confidence", "prediction")) {
    expect_equal(predict(f, newdata = nd, interval = iv), predict(l, newdata = nd, interval = iv), tolerance = 1e-8)
    expect_equal(predict(f, newdata = nd, interval = iv, level = 0.8),
                 predict(l, newdata = nd, interval = iv, level = 0.8), tolerance = 1e-8)
  }
  expect_equal(predict(f, interval = "confidence"), predict(l, interval = "confidence"), tolerance = 1e-8)
  sf <- predict(f, newdata = nd, se.fit = TRUE)
  sl <- predict(l, newdata = nd, se.fit = TRUE)
  expect_equal(sf, sl, tolerance = 1e-8)
  # factors: the fit's coding of newdata
  fw <- inf_lm(len ~ supp * factor(dose), data = ToothGrowth)
  lw <- lm(len ~ supp * factor(dose), data = ToothGrowth)
  expect_equal(predict(fw, newdata = ToothGrowth[c(1, 31, 59), ], interval = "prediction"),
               predict(lw, newdata = ToothGrowth[c(1, 31, 59), ], interval = "prediction"), tolerance = 1e-8)
  # unknown arguments are named, not ignored
  expect_error(predict(f, newdata = nd, typo_arg = 1), class = "dpstats_argument_error", regexp = "typo_arg")
  expect_error(predict(f, newdata = nd, level = 0.9), class = "dpstats_argument_error", regexp = "interval")
  fp <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 1, delta = 1e-6, seed = 1,
              bounds = list(mpg = c(10, 35), hp = c(50, 350), wt = c(1, 6)))
  expect_error(predict(fp, newdata = nd, interval = "confidence"), class = "dpstats_not_released_error")
  expect_error(predict(fp, newdata = nd, se.fit = TRUE), class = "dpstats_not_released_error")
  expect_length(predict(fp, newdata = nd), 4L)
})

test_that("4. dp_glm's predict(se.fit = TRUE) equals predict.glm's at eps = Inf (link and response)", {
  skip_if_no_dpstats()
  g <- inf_glm(am ~ wt + factor(cyl), data = mtcars, family = binomial)
  r <- glm(am ~ wt + factor(cyl), data = mtcars, family = binomial)
  nd <- mtcars[c(1, 3, 5), ]
  for (type in c("link", "response")) {
    a <- predict(g, newdata = nd, type = type, se.fit = TRUE)
    b <- predict(r, newdata = nd, type = type, se.fit = TRUE)
    expect_equal(a$fit, b$fit, tolerance = 1e-5)
    expect_equal(a$se.fit, b$se.fit, tolerance = 1e-5)
    expect_equal(a$residual.scale, b$residual.scale)
  }
  p <- inf_glm(breaks ~ wool + tension, data = warpbreaks, family = poisson)
  q <- glm(breaks ~ wool + tension, data = warpbreaks, family = poisson)
  expect_equal(predict(p, newdata = warpbreaks[1:3, ], type = "response", se.fit = TRUE)$se.fit,
               predict(q, newdata = warpbreaks[1:3, ], type = "response", se.fit = TRUE)$se.fit, tolerance = 1e-5)
  expect_error(predict(g, newdata = nd, interval = "confidence"), class = "dpstats_argument_error",
               regexp = "interval")
})

test_that("4. tidy(conf.int =, conf.level =) as broom's; a DP dp_lm refuses another level, as confint does", {
  skip_if_no_dpstats()
  f <- inf_lm(mpg ~ wt + hp, data = mtcars)
  l <- lm(mpg ~ wt + hp, data = mtcars)
  a <- as.data.frame(broom::tidy(f, conf.int = TRUE, conf.level = 0.9))
  b <- as.data.frame(broom::tidy(l, conf.int = TRUE, conf.level = 0.9))
  expect_equal(a[c("conf.low", "conf.high")], b[c("conf.low", "conf.high")], tolerance = 1e-8)
  expect_false(any(c("conf.low", "conf.high") %in% names(broom::tidy(f, conf.int = FALSE))))
  expect_error(broom::tidy(f, conf.levle = 0.9), class = "dpstats_argument_error", regexp = "conf.levle")
  g <- inf_glm(am ~ wt, data = mtcars, family = binomial)
  r <- glm(am ~ wt, data = mtcars, family = binomial)
  a <- as.data.frame(broom::tidy(g, conf.level = 0.8))
  # Wald intervals (Python's IRLS covariance agrees with glm's to about 1e-4)
  expect_equal(a$conf.low, unname(confint.default(r, level = 0.8)[, 1]), tolerance = 1e-3)
  expect_equal(a$conf.low, unname(confint(g, level = 0.8)[, 1]))
  fp <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 1, delta = 1e-6, seed = 1,
              bounds = list(mpg = c(10, 35), hp = c(50, 350), wt = c(1, 6)))
  expect_error(broom::tidy(fp, conf.int = TRUE, conf.level = 0.9), class = "dpstats_argument_error",
               regexp = "conf_level = 0.9")
  expect_equal(as.data.frame(broom::tidy(fp, conf.level = 0.95)), as.data.frame(broom::tidy(fp)))
})

test_that("4. summary() carries summary.lm's components: coefficients, sigma, r.squared, df", {
  skip_if_no_dpstats()
  f <- inf_lm(mpg ~ wt + hp, data = mtcars)
  sl <- summary(lm(mpg ~ wt + hp, data = mtcars))
  s <- summary(f)
  expect_equal(coef(s), coef(sl), tolerance = 1e-8)
  for (nm in c("sigma", "r.squared", "adj.r.squared")) expect_equal(s[[nm]], sl[[nm]], tolerance = 1e-8, label = nm)
  expect_equal(s$df, sl$df)
  expect_equal(unname(s$fstatistic), unname(sl$fstatistic), tolerance = 1e-8)
  g <- inf_glm(am ~ wt, data = mtcars, family = binomial)
  sg <- summary(glm(am ~ wt, data = mtcars, family = binomial))
  expect_equal(coef(summary(g)), coef(sg), tolerance = 1e-3)
  expect_identical(dimnames(coef(summary(g))), dimnames(coef(sg)))
  expect_equal(summary(g)$deviance, sg$deviance, tolerance = 1e-6)
  fp <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 1, delta = 1e-6, seed = 1,
              bounds = list(mpg = c(10, 35), hp = c(50, 350), wt = c(1, 6)))
  sp <- summary(fp)
  expect_identical(rownames(coef(sp)), names(coef(fp)))
  # the table's Estimate is the calibrated estimate (tidy's and coef(), which predict() uses), Ridge the ridge
  expect_equal(unname(coef(sp)[, "Estimate"]), unname(coef(fp)))
  expect_equal(unname(coef(sp)[, "Ridge"]), unname(unlist(fp$outputs$ridge_estimates)))
  expect_equal(unname(coef(sp)[, "Estimate"]), tidy(fp)$estimate)
  expect_identical(sp$sigma, sigma(fp))  # from the released statistics (NA: not resolved at eps = 1, n = 32)
  expect_true(is.na(sp$r.squared))  # not released by a DP fit
  expect_error(summary(f, correlaton = TRUE), class = "dpstats_argument_error", regexp = "correlaton")
})

test_that("5. extra arguments are checked by name before they are evaluated", {
  skip_if_no_dpstats()
  expect_error(dp_lm(mpg ~ wt, data = mtcars, eps = Inf, offset = log(hp)), class = "dpstats_argument_error",
               regexp = "does not take offset")
  expect_error(dp_lm(mpg ~ wt, data = mtcars, eps = Inf, subst = cyl == 4), class = "dpstats_argument_error",
               regexp = "no argument 'subst' \\(did you mean 'subset'\\?\\)")
  expect_error(dp_glm(am ~ wt, data = mtcars, eps = Inf, bound = list(wt = c(1, 6))),
               class = "dpstats_argument_error", regexp = "did you mean 'bounds'")
  # subset = is still evaluated in data
  f <- suppressWarnings(dp_lm(mpg ~ wt, data = mtcars, eps = Inf, subset = cyl == 4))
  expect_equal(coef(f), coef(lm(mpg ~ wt, data = mtcars, subset = cyl == 4)), tolerance = 1e-8)
})

test_that("6. dp_model_matrix takes a one-sided formula, as model.matrix does", {
  skip_if_no_dpstats()
  X <- dp_model_matrix(~ Species, iris)
  M <- model.matrix(~ Species, iris)
  expect_identical(colnames(X), colnames(M))
  expect_equal(unname(X), unname(M), ignore_attr = TRUE)
  expect_identical(attr(X, "assign"), attr(M, "assign"))
  X <- dp_model_matrix(~ Sepal.Length + Petal.Length, iris)
  expect_equal(unname(X), unname(model.matrix(~ Sepal.Length + Petal.Length, iris)), ignore_attr = TRUE)
  X <- dp_model_matrix(~ Ozone + Wind, airquality)
  M <- model.matrix(~ Ozone + Wind, airquality)
  expect_identical(rownames(X), rownames(M))
})

test_that("8. nobs() after na.omit under replace-one-row says why n is not released (not add/remove)", {
  skip_if_no_dpstats()
  b <- list(Ozone = c(0, 170), Solar.R = c(0, 340), Wind = c(0, 25), Temp = c(50, 100), Month = c(5, 9), Day = c(1, 31))
  s <- suppressWarnings(dp_sis(Ozone ~ ., data = airquality, eps = 1, k = 2, bounds = b, seed = 1, na.action = na.omit))
  expect_error(nobs(s), class = "dpstats_not_released_error",
               regexp = "the call asked for incomplete rows to be dropped (na.action = na.omit)", fixed = TRUE)
  expect_false(grepl("add/remove", tryCatch(nobs(s), error = conditionMessage)))
  s <- suppressWarnings(dp_sis(Ozone ~ ., data = airquality, eps = 1, k = 2, bounds = b, seed = 1,
                               neighbouring = "add_remove"))
  expect_error(nobs(s), class = "dpstats_not_released_error", regexp = "add/remove-one-row")
})

# ---- the second audit (models): errors come before warnings, and name what the user did.
test_that("models 4. a multivariate response or a missing column is an error alone, quoting the whole formula", {
  skip_if_no_dpstats()
  expect_no_warning(expect_error(dp_lm(cbind(mpg, hp) ~ wt, mtcars, eps = Inf),
                                 "multivariate responses are not supported by dp_lm; fit each response separately",
                                 class = "dpstats_formula_error"))
  expect_no_warning(expect_error(dp_lm(mpg ~ nosuch, mtcars, eps = 1), "formula 'mpg ~ nosuch'",
                                 class = "dpstats_formula_error"))
  expect_no_warning(expect_error(dp_glm(am ~ wt + nosuch, mtcars, eps = Inf), "formula 'am ~ wt \\+ nosuch'",
                                 class = "dpstats_formula_error"))
})

test_that("models 5. nobs() says why n is withheld in terms of what the user did; the warning marks a cut list", {
  skip_if_no_dpstats()
  # dp_lm refuses the call (its release needs n public); dp_sis runs with n private, a named step
  expect_error(dp_lm(Ozone ~ Temp + Wind, airquality, eps = 2, delta = 1e-6),
               "cannot drop rows with a missing value in 'Ozone', 'Temp', 'Wind'", fixed = TRUE,
               class = "dpstats_privacy_parameter_error")
  f <- suppressWarnings(dp_sis(Ozone ~ Temp + Wind, airquality, eps = 2, k = 1))
  msg <- tryCatch(nobs(f), error = conditionMessage)
  expect_match(msg, "rows with a missing value in a variable without declared bounds ('Ozone', 'Temp', 'Wind') were dropped",
               fixed = TRUE)
  expect_match(msg, "Declare bounds for every variable", fixed = TRUE)
  expect_false(grepl("na.action|na_action", msg))  # the user set neither
  warned <- character()
  withCallingHandlers(dp_sis(Ozone ~ ., airquality, eps = 2, k = 1),
                      warning = function(w) {
                        warned <<- c(warned, conditionMessage(w))
                        invokeRestart("muffleWarning")
                      })
  expect_true(any(grepl("('Ozone', 'Solar.R', 'Wind', 'Temp', 'Month' \u2026) are dropped", warned, fixed = TRUE)))
})
