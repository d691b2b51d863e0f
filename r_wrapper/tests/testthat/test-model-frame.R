# model.frame() and model.matrix() of a fit answer alike (R-user audit F11b): a DP fit refuses both in
# the same words (row-level data); at eps = Inf both are lm's (oracle: R's lm on mtcars, exact).

test_that("model.frame() and model.matrix() of a DP fit are refused alike; at eps = Inf both equal lm's", {
  skip_if_no_dpstats()
  b <- list(wt = c(1, 6), mpg = c(10, 35))
  fit <- dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = b, seed = 1)
  e_frame <- expect_error(model.frame(fit), class = "dpstats_not_released_error")
  e_matrix <- expect_error(model.matrix(fit), class = "dpstats_not_released_error")
  why <- function(e) sub("^[^:]*: ", "", conditionMessage(e))  # after "model.frame() is not available ... :"
  expect_identical(why(e_frame), why(e_matrix))
  expect_match(conditionMessage(e_frame), "row-level data", fixed = TRUE)

  ref <- lm(mpg ~ wt + factor(cyl), mtcars)
  inf <- suppressWarnings(dp_lm(mpg ~ wt + factor(cyl), mtcars, eps = Inf))
  expect_equal(as.data.frame(model.frame(inf)), as.data.frame(model.frame(ref)), ignore_attr = TRUE)
  expect_equal(unname(model.matrix(inf)), unname(model.matrix(ref)), ignore_attr = TRUE)
})
