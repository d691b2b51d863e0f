# Bounds of ns()/bs() columns with public knots: their range over the variable's declared bounds.
# Oracles: R's model.matrix (column names) and lm on mtcars (wt within its bounds, nothing clipped), to 1e-8.

test_that("ns()/bs() with the knots written in the formula need only the variable's bounds (audit F11a)", {
  # following the ns() message's advice (public knots) used to end in a demand for bounds on columns named
  # `ns(wt, knots = 3, Boundary.knots = c(1, 6))1`; their range over wt's bounds is public (R's basis)
  skip_if_no_dpstats()
  library(splines)
  b <- list(wt = c(1, 6), mpg = c(10, 35), hp = c(50, 350))
  for (f in list(mpg ~ ns(wt, knots = 3, Boundary.knots = c(1, 6)),
                 mpg ~ bs(wt, knots = c(2.5, 4), Boundary.knots = c(1, 6)) + hp)) {
    fit <- dp_lm(f, mtcars, eps = 1, delta = 1e-5, bounds = b, seed = 1)
    expect_identical(names(coef(fit)), colnames(model.matrix(f, mtcars)))
    # wt in mtcars lies in (1, 6): nothing is clipped, so eps = Inf is lm
    expect_equal(coef(suppressWarnings(dp_lm(f, mtcars, eps = Inf, bounds = b))), coef(lm(f, mtcars)), tolerance = 1e-8)
  }
})
