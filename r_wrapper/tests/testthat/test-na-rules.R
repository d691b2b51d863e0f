# Missing bounds and R's na.action option (R-user audit F10).

test_that("forgetting bounds names the missing bounds and the fix first, identically with and without an NA", {
  skip_if_no_dpstats()
  with_na <- mtcars
  with_na$mpg[3] <- NA  # a neighbouring data set (one row replaced) that has a missing value
  msgs <- vapply(list(mtcars, with_na), function(d) {
    tryCatch(dp_lm(mpg ~ wt + hp, d, eps = 1, delta = 1e-5), dpstats_privacy_parameter_error = conditionMessage)
  }, "")
  expect_identical(msgs[1], msgs[2])
  expect_match(msgs[1], "^dp_lm needs declared bounds for 'mpg', 'wt', 'hp': e\\.g\\. bounds = list\\(mpg = c\\(lo, hi\\), wt = c\\(lo, hi\\), hp = c\\(lo, hi\\)\\)")
  expect_match(msgs[1], "Nothing was read or spent.", fixed = TRUE)
})

test_that("options(na.action = \"na.fail\") is refused before anything is read, whatever the rows; R's default option asks nothing", {
  skip_if_no_dpstats()
  b <- list(Ozone = c(0, 170), Wind = c(0, 21))
  old <- options(na.action = "na.fail")
  on.exit(options(old))
  complete <- airquality[stats::complete.cases(airquality[c("Ozone", "Wind")]), ]
  msgs <- vapply(list(airquality, complete), function(d) {
    tryCatch(dp_lm(Ozone ~ Wind, d, eps = 1, delta = 1e-5, bounds = b, seed = 1), dpstats_argument_error = conditionMessage)
  }, "")
  expect_identical(msgs[1], msgs[2])  # the refusal does not depend on whether a value is missing
  expect_match(msgs[1], "options(na.action = \"na.fail\") is set", fixed = TRUE)
  expect_match(msgs[1], "na_action = \"fill\"", fixed = TRUE)
  options(na.action = na.fail)  # the function, as R allows
  expect_error(dp_lm(Ozone ~ Wind, airquality, eps = 1, delta = 1e-5, bounds = b, seed = 1),
               class = "dpstats_argument_error", regexp = "na.fail")
  # an explicit na_action overrides the option, as an explicit na.action overrides it in lm
  fit <- dp_lm(Ozone ~ Wind, airquality, eps = 1, delta = 1e-5, bounds = b, seed = 1, na_action = "fill")
  expect_equal(nobs(fit), nrow(airquality))
  options(na.action = "na.omit")  # R's default: dpstats' default fill stands
  expect_equal(nobs(dp_lm(Ozone ~ Wind, airquality, eps = 1, delta = 1e-5, bounds = b, seed = 1)), nrow(airquality))
})
