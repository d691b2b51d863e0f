# Audit s15 F01: a Date, POSIXct or difftime column is numeric, as model.matrix (so lm) reads it:
# days since 1970-01-01, seconds since the epoch (UTC, whatever the zone), the difftime in its units.
# Oracle: R's lm itself.

dated <- function() {
  i <- 1:40
  data.frame(
    y = 0.01 * ((i * 37) %% 365) + sin(i),
    day = as.Date("2020-01-01") + (i * 37) %% 365,
    when = as.POSIXct("2020-03-29", tz = "Europe/London") + (i * 7919) %% 86400,
    gap = as.difftime((i * 13) %% 50, units = "mins")
  )
}

test_that("a Date, a POSIXct and a difftime are fitted as lm fits them, at eps = Inf", {
  skip_if_no_dpstats()
  d <- dated()
  for (f in list(y ~ day, y ~ when, y ~ gap, y ~ day + gap)) {
    fit <- suppressWarnings(dp_lm(f, d, eps = Inf))
    expect_equal(coef(fit), coef(lm(f, d)), tolerance = 1e-8)
  }
  fit <- suppressWarnings(dp_lm(y ~ day, d, eps = Inf))
  expect_equal(predict(fit, newdata = d[1:5, ]), predict(lm(y ~ day, d), newdata = d[1:5, ]), tolerance = 1e-8)
})

test_that("bounds of a Date column may be given as two Dates: the same fit as their days", {
  skip_if_no_dpstats()
  d <- dated()
  as_dates <- suppressWarnings(dp_lm(y ~ day, d, eps = 2, delta = 1e-6, seed = 3,
                                     bounds = list(y = c(-3, 6), day = as.Date(c("2020-01-01", "2020-12-31")))))
  as_days <- suppressWarnings(dp_lm(y ~ day, d, eps = 2, delta = 1e-6, seed = 3,
                                    bounds = list(y = c(-3, 6), day = c(18262, 18627))))
  expect_identical(coef(as_dates), coef(as_days))
  numeric_days <- transform(d, day = as.numeric(day))
  plain <- suppressWarnings(dp_lm(y ~ day, numeric_days, eps = 2, delta = 1e-6, seed = 3,
                                  bounds = list(y = c(-3, 6), day = c(18262, 18627))))
  expect_identical(coef(as_dates), coef(plain))
})
