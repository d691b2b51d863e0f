# The outside R user's audit s14-ruser (F2, F4, F5, F6). Oracles: R's lm, prcomp and print itself.

ff <- function(x) tryCatch(x, error = function(e) e)
dated_quakes <- function() within(quakes, d <- as.Date("2000-01-01") + seq_along(depth))
quakes_bounds <- list(mag = c(4, 6.5), lat = c(-40, -10), long = c(165, 190), depth = c(0, 700),
                      stations = c(10, 132))

# F2: a Date column the expanded formula does not use (removed by `- d`, or not named) is not sent.
test_that("y ~ . - d with a Date column d fits as lm(y ~ . - d) does, at eps = Inf", {
  skip_if_no_dpstats()
  q <- dated_quakes()
  ref <- lm(mag ~ . - d, q)
  fit <- suppressWarnings(dp_lm(mag ~ . - d, q, eps = Inf))
  expect_equal(coef(fit), coef(ref), tolerance = 1e-10)
  expect_identical(formula(fit), formula(ref))
  expect_equal(predict(fit, newdata = q[1:5, ]), predict(ref, newdata = q[1:5, ]), tolerance = 1e-10)
  inter <- mag ~ (. - d)^2 - lat:long
  expect_equal(coef(suppressWarnings(dp_lm(inter, q, eps = Inf))), coef(lm(inter, q)), tolerance = 1e-8)
  # the advice names `- d` for a formula with `.`; a formula that uses d (`.`, `.^2 - d`) is still refused
  for (f in list(mag ~ ., mag ~ .^2 - d)) {
    err <- ff(dp_lm(f, q, eps = Inf))
    expect_s3_class(err, "dpstats_data_error")
    expect_match(conditionMessage(err), "q$d <- as.numeric(q$d), or leave it out of the formula (with `.`: ~ . - d)",
                 fixed = TRUE)
  }
})

test_that("y ~ . - d with a Date column is the fit of the data without d, at eps = 2 and in dp_sis", {
  skip_if_no_dpstats()
  q <- dated_quakes()
  q0 <- q[setdiff(names(q), "d")]
  a <- suppressWarnings(dp_lm(mag ~ . - d, q, eps = 2, delta = 1e-6, bounds = quakes_bounds, seed = 3))
  b <- suppressWarnings(dp_lm(mag ~ ., q0, eps = 2, delta = 1e-6, bounds = quakes_bounds, seed = 3))
  expect_identical(coef(a), coef(b))
  s <- suppressWarnings(dp_sis(mag ~ . - d, q, eps = 1, k = 2, bounds = quakes_bounds, seed = 3))
  s0 <- suppressWarnings(dp_sis(mag ~ ., q0, eps = 1, k = 2, bounds = quakes_bounds, seed = 3))
  expect_identical(s$outputs, s0$outputs)
})
