# Factor levels and the refusals about them from R (the outside statistician's audit, s11: H3, M3, M4,
# L1, L10, L11): predict() codes newdata with the fit's levels as predict.lm does with xlevels, and
# says "factor factor(cyl) has new level 5" as R does; levels = list(cyl = ...) declares cyl's levels
# for factor(cyl) too; the refusals name levels = and a misspelt bounds entry; I(wt**2) is I(wt^2);
# na_action = "fill" that cannot fill at eps = Inf warns; a removed variable needs no bounds.

# 32 rows at eps = 2 or 4: dp_lm may say the noise dominates (a ChanceWarning decided by released values);
# these tests are about the levels, so that one warning is muffled and any other still fails expect_silent.
no_chance <- function(expr) withCallingHandlers(expr, dpstats_chance_warning = function(w) invokeRestart("muffleWarning"))

bounds_mt <- list(mpg = c(10, 35), wt = c(1, 6))

test_that("predict codes newdata holding some levels as predict.lm does, and names a new level as R", {
  skip_if_no_dpstats()
  m <- mtcars
  m$cyl <- factor(m$cyl)
  fit <- suppressWarnings(dp_lm(mpg ~ wt + C(cyl, contr.sum), data = m, eps = Inf))
  ref <- lm(mpg ~ wt + C(cyl, contr.sum), data = m)
  nd <- droplevels(m[c(1, 3), ])  # cyl 6 and 4; the level 8 dropped from the factor itself
  expect_equal(predict(fit, newdata = nd), suppressWarnings(predict(ref, newdata = nd)), tolerance = 1e-8)
  fit2 <- suppressWarnings(dp_lm(mpg ~ wt + factor(cyl), data = mtcars, eps = Inf))
  expect_equal(predict(fit2, newdata = mtcars[1:3, ]),
               predict(lm(mpg ~ wt + factor(cyl), data = mtcars), newdata = mtcars[1:3, ]), tolerance = 1e-8)
  nd <- mtcars[1:3, ]
  nd$cyl[1] <- 5
  r_message <- tryCatch(predict(lm(mpg ~ wt + factor(cyl), data = mtcars), nd), error = conditionMessage)
  expect_identical(r_message, "factor factor(cyl) has new levels 5")
  e <- tryCatch(predict(fit2, nd), error = identity)
  expect_s3_class(e, "dpstats_data_error")
  expect_match(conditionMessage(e), "factor factor(cyl) has new level 5", fixed = TRUE)
})

test_that("levels = list(cyl = ...) declares the levels of factor(cyl): no step, the same terms without an 8", {
  skip_if_no_dpstats()
  no8 <- mtcars[mtcars$cyl != 8, ]
  for (d in list(mtcars, no8)) {
    fit <- expect_silent(no_chance(dp_lm(mpg ~ wt + factor(cyl), data = d, eps = 2, delta = 1e-5, bounds = bounds_mt,
                                         levels = list(cyl = c(4, 6, 8)), seed = 1)))
    expect_identical(names(coef(fit)), c("(Intercept)", "wt", "factor(cyl)6", "factor(cyl)8"))
    expect_length(fit$privacy$data_dependent_steps, 0)
  }
})

test_that("a factor term of an undeclared numeric column and a misspelt bounds entry are refused naming the fix", {
  skip_if_no_dpstats()
  e <- tryCatch(dp_lm(mpg ~ wt + C(cyl), data = mtcars, eps = 2, delta = 1e-5, bounds = bounds_mt),
                error = identity)
  expect_s3_class(e, "dpstats_error")
  expect_match(conditionMessage(e), "dp_lm: C(cyl) needs declared levels: levels = list(cyl = c(...))", fixed = TRUE)
  e <- tryCatch(dp_lm(mpg ~ wt, data = mtcars, eps = 2, delta = 1e-5, bounds = list(mpg = c(10, 35), WT = c(1, 6))),
                error = identity)
  expect_match(conditionMessage(e), "no bounds are declared for 'wt', and bounds= names 'WT'", fixed = TRUE)
  expect_match(conditionMessage(e), "did you mean 'wt'?", fixed = TRUE)
})

test_that("I(wt**2) is R's I(wt^2); fill that cannot fill at eps = Inf warns; a removed variable needs no bounds", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_lm(mpg ~ I(wt**2) + wt, data = mtcars, eps = Inf))
  expect_equal(coef(fit), coef(lm(mpg ~ I(wt**2) + wt, data = mtcars)), tolerance = 1e-10)
  expect_identical(names(coef(fit)), c("(Intercept)", "I(wt^2)", "wt"))
  noted <- character(0)
  withCallingHandlers(dp_lm(Ozone ~ Solar.R + Wind + Temp, data = airquality, eps = Inf, na_action = "fill"),
                      warning = function(w) {
                        if (inherits(w, "dpstats_data_warning")) noted <<- c(noted, conditionMessage(w))
                        invokeRestart("muffleWarning")
                      })
  expect_length(noted, 1)
  expect_match(noted, "no public fill for 'Ozone', 'Solar.R', 'Wind', 'Temp'", fixed = TRUE)
  d <- mtcars[, c("mpg", "wt", "hp")]
  d$yb <- seq_len(nrow(d))
  d$yb[2] <- NA
  b <- list(mpg = c(10, 35), wt = c(1, 6), hp = c(50, 350))
  s <- expect_silent(dp_sis(mpg ~ . - yb, data = d, eps = 2, k = 1, bounds = b, seed = 1))
  expect_length(s$privacy$data_dependent_steps, 0)
  si <- expect_silent(no_chance(dp_select_infer(mpg ~ . - yb, data = d, eps = 4, delta = 1e-5, k = 1, bounds = b,
                                                seed = 1)))
  expect_false("yb" %in% names(coef(si)))
})
