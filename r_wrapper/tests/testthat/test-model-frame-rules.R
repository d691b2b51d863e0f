# Two rules of lm's model frame that a fit at eps = Inf follows (oracle: R's own lm, glm, model.frame).
# 1. y ~ . - d: the frame holds d (attr(terms(f, data), "variables") keeps it), so na.omit drops a row
#    missing d though no term uses it; also for a column of a class dpstats cannot send (a Date), which
#    crosses as its missingness alone. 2. factor(x, levels = c(...)) in the formula: lm's frame drops the
#    levels no analysed row holds (drop.unused.levels = TRUE); a private fit keeps every declared level.

quiet <- function(expr) suppressWarnings(expr)  # eps = Inf says "NOT private"

dated_airquality <- function() {
  aq <- airquality
  aq$measured <- as.Date("1973-05-01") + seq_len(nrow(aq)) - 1
  aq$measured[which(complete.cases(airquality))[c(2, 5, 9, 20, 40)]] <- NA  # rows complete otherwise
  aq
}

test_that("Ozone ~ . - Solar.R drops the rows missing Solar.R, as lm's model frame does", {
  skip_if_no_dpstats()
  f <- Ozone ~ . - Solar.R
  ref <- lm(f, airquality)
  fit <- quiet(dp_lm(f, airquality, eps = Inf))
  expect_identical(nobs(fit), nrow(model.frame(f, airquality)))
  expect_identical(nobs(fit), 111L)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
  g <- quiet(dp_glm(f, airquality, eps = Inf, family = poisson))
  expect_equal(coef(g), coef(glm(f, poisson, airquality)), tolerance = 1e-7)
})

test_that("y ~ . - d with a Date column d holding NAs drops those rows, as lm(y ~ . - d) does", {
  skip_if_no_dpstats()
  aq <- dated_airquality()
  for (f in list(Ozone ~ . - measured, Ozone ~ Wind + Temp - measured, Ozone ~ (. - measured - Solar.R)^2)) {
    ref <- lm(f, aq)
    fit <- quiet(dp_lm(f, aq, eps = Inf))
    expect_identical(nobs(fit), nrow(model.frame(f, aq)))
    expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
    expect_equal(fitted(fit), fitted(ref), tolerance = 1e-8)
    g <- quiet(dp_glm(f, aq, eps = Inf, family = poisson))
    expect_equal(coef(g), coef(glm(f, poisson, aq)), tolerance = 1e-7)
  }
  fit <- quiet(dp_lm(Ozone ~ . - measured, aq, eps = Inf))
  nd <- aq[complete.cases(aq), ][1:8, ]  # predict() as lm's
  expect_equal(predict(fit, newdata = nd), predict(lm(Ozone ~ . - measured, aq), newdata = nd), tolerance = 1e-8)
})

test_that("a private fit under the default fill drops no row for a Date column's NA: neighbours look the same", {
  skip_if_no_dpstats()
  set.seed(4)
  n <- 400
  d <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1), when = as.Date("2020-01-01") + seq_len(n))
  d$y <- d$x1 - d$x2 + rnorm(n, 0, 0.5)
  holed <- d
  holed$when[9] <- NA  # the neighbour: one row's Date missing
  b <- list(x1 = c(-1, 1), x2 = c(-1, 1), y = c(-4, 4))
  fits <- lapply(list(d, holed), function(data) {
    quiet(dp_lm(y ~ . - when, data, eps = 2, delta = 1e-6, bounds = b, seed = 3))
  })
  expect_identical(coef(fits[[1]]), coef(fits[[2]]))
  expect_identical(capture.output(print(fits[[1]])), capture.output(print(fits[[2]])))
})

test_that("factor(dose, levels = c(0.5, 1, 2, 4)) at eps = Inf has lm's coefficients: the unused level dropped", {
  skip_if_no_dpstats()
  for (f in list(len ~ factor(dose, levels = c(0.5, 1, 2, 4)), len ~ supp * factor(dose, levels = c(4, 2, 1, 0.5)),
                 len ~ cut(dose, c(0, 0.7, 1.5, 3, 5)))) {
    ref <- lm(f, ToothGrowth)
    fit <- quiet(dp_lm(f, ToothGrowth, eps = Inf))
    expect_identical(names(coef(fit)), names(coef(ref)))
    expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
    expect_equal(fitted(fit), fitted(ref), tolerance = 1e-8)
    expect_equal(model.matrix(fit), model.matrix(ref), tolerance = 1e-8, ignore_attr = TRUE)
  }
  g <- quiet(dp_glm(round(len) ~ factor(dose, levels = c(0.5, 1, 2, 4)), ToothGrowth, eps = Inf, family = poisson))
  expect_equal(coef(g), coef(glm(round(len) ~ factor(dose, levels = c(0.5, 1, 2, 4)), poisson, ToothGrowth)),
               tolerance = 1e-7)
  # C() of it loses its contrasts with the level, with lm's warning
  f <- len ~ C(factor(dose, levels = c(0.5, 1, 2, 4)), sum)
  expect_warning(ref <- lm(f, ToothGrowth), "contrasts dropped from factor")
  said <- character()
  fit <- withCallingHandlers(dp_lm(f, ToothGrowth, eps = Inf), warning = function(w) {
    said <<- c(said, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
  expect_identical(sum(grepl("contrasts dropped from factor C(factor(dose", said, fixed = TRUE)), 1L)
})

test_that("a private fit keeps the declared unused level, whether a row holds it or not", {
  skip_if_no_dpstats()
  tg <- ToothGrowth
  other <- tg
  other$dose[5] <- 4  # the neighbour: one row holds the level
  f <- len ~ supp + factor(dose, levels = c(0.5, 1, 2, 4))
  fits <- lapply(list(tg, other), function(d) {
    quiet(dp_lm(f, d, eps = 5, delta = 1e-6, bounds = list(len = c(0, 40)), seed = 2))
  })
  expect_identical(names(coef(fits[[1]])), names(coef(fits[[2]])))
  expect_identical(tail(names(coef(fits[[1]])), 1), "factor(dose, levels = c(0.5, 1, 2, 4))4")
})
