# predict() with poly(), splines::ns()/bs() and scale() in the formula (the outside R audit's open
# item 1): at eps = Inf the basis of newdata is the fit's own (R's predvars: poly's recurrence
# coefficients, the spline's knots, scale's centre), so predict() equals predict(lm(...), newdata) and
# predict(glm(...), newdata). Oracle: R's own lm/glm; tolerance 1e-8 relative (all.equal's scale).
# A DP fit keeps none of those values (read from the rows, not released): its refusals name the fix.

nd_cars <- data.frame(wt = c(1.2, 2, 3.5, 6), hp = c(60, 100, 150, 380), am = c(0, 1, 1, 0),
                      cyl = c(4, 4, 6, 8), row.names = c("light", "a", "b", "heavy"))

test_that("eps = Inf: dp_lm predicts as lm with orthogonal poly, ns, bs and scale, beyond the training range too", {
  skip_if_no_dpstats()
  formulas <- list(mpg ~ poly(wt, 2) + hp, mpg ~ splines::ns(wt, df = 3), mpg ~ splines::ns(wt, knots = 3) + hp,
                   mpg ~ splines::bs(wt, df = 5) + hp, mpg ~ scale(wt) + hp, mpg ~ poly(wt, hp, degree = 2),
                   mpg ~ poly(wt, 2):factor(am) + factor(cyl))
  for (f in formulas) {
    fit <- suppressWarnings(dp_lm(f, data = mtcars, eps = Inf))
    ref <- lm(f, data = mtcars)
    expect_equal(coef(fit), coef(ref), tolerance = 1e-8, info = deparse(f))
    expect_equal(predict(fit, nd_cars), suppressWarnings(predict(ref, nd_cars)), tolerance = 1e-8, info = deparse(f))
  }
  # predict.lm's intervals read the same basis (newdata's design from Python)
  f <- mpg ~ splines::ns(wt, df = 3) + hp
  fit <- suppressWarnings(dp_lm(f, data = mtcars, eps = Inf))
  expect_equal(predict(fit, nd_cars, interval = "prediction", level = 0.9),
               predict(lm(f, data = mtcars), nd_cars, interval = "prediction", level = 0.9), tolerance = 1e-8)
  expect_equal(predict(fit, nd_cars, se.fit = TRUE)$se.fit, predict(lm(f, data = mtcars), nd_cars, se.fit = TRUE)$se.fit,
               tolerance = 1e-8)
})

test_that("eps = Inf: airquality with NAs (rows dropped as lm's na.omit) predicts as lm, NA rows NA", {
  skip_if_no_dpstats()
  f <- Ozone ~ splines::ns(Temp, df = 4) + poly(Wind, 2) + Solar.R
  fit <- suppressWarnings(dp_lm(f, data = airquality, eps = Inf))
  nd <- data.frame(Temp = c(50, 70, 90, 100), Wind = c(2, 10, 15, 22), Solar.R = c(100, NA, 200, 300))
  expect_equal(predict(fit, nd), predict(lm(f, data = airquality), nd), tolerance = 1e-8)
})

test_that("eps = Inf: dp_glm and vertical_glm predict as glm and lm with the fit's basis", {
  skip_if_no_dpstats()
  f <- carb ~ poly(hp, 2) + splines::ns(wt, df = 2)
  fit <- suppressWarnings(dp_glm(f, data = mtcars, eps = Inf, family = poisson))
  ref <- glm(f, data = mtcars, family = poisson)
  for (type in c("link", "response")) {
    expect_equal(predict(fit, nd_cars, type = type), predict(ref, nd_cars, type = type), tolerance = 1e-8)
  }
  v <- suppressWarnings(vertical_glm(mpg ~ poly(wt, 2) + hp, data = mtcars, parties = list(a = "wt", b = "hp")))
  expect_equal(predict(v, nd_cars), predict(lm(mpg ~ poly(wt, 2) + hp, data = mtcars), nd_cars), tolerance = 1e-6)
})

test_that("a DP fit with a data-dependent basis: the refusals name raw = TRUE or declared knots", {
  skip_if_no_dpstats()
  b <- list(mpg = c(10, 35), wt = c(1, 6))
  expect_error(dp_lm(mpg ~ poly(wt, 2), data = mtcars, eps = 1, bounds = b),
               "poly\\(wt, 2\\).*data-dependent step.*poly\\(wt, 2, raw = TRUE\\)", class = "dpstats_privacy_parameter_error")
  expect_error(dp_lm(mpg ~ splines::ns(wt, df = 3), data = mtcars, eps = 1, bounds = b),
               "data-dependent step.*knots = c\\(\\.\\.\\.\\), Boundary.knots = c\\(lo, hi\\)",
               class = "dpstats_privacy_parameter_error")
  # with bounds for every column the fit runs (the step named and warned); predict refuses, saying why
  fit <- suppressWarnings(dp_lm(mpg ~ poly(wt, 2), data = mtcars, eps = 1, bounds = c(-50, 50), seed = 1))
  expect_error(predict(fit, nd_cars), "DP fit keeps none.*poly\\(wt, 2, raw = TRUE\\)", class = "dpstats_data_error")
  # the public alternative predicts
  raw <- dp_lm(mpg ~ poly(wt, 2, raw = TRUE), data = mtcars, eps = 1, bounds = b, seed = 1)
  expect_length(predict(raw, nd_cars), 4L)
})

test_that("eps = Inf: a term R recomputes on newdata (mean(), cut(x, 3)) is refused, naming the fix", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_lm(mpg ~ I(wt - mean(wt)) + poly(hp, 2), data = mtcars, eps = Inf))
  expect_error(predict(fit, nd_cars), "mean\\(wt\\).*recomputed from newdata.*public constant",
               class = "dpstats_data_error")
})
