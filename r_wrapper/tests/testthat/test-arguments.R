# The R wrappers use the Python functions' argument names (issue 9): every named formal
# of a wrapper (other than `...` and `seed`, which is Python's `random_state`) is a
# parameter of the Python function of the same name, in the same order.

python_parameters <- function(name) unlist(bridge_call("parameters", name = name))

test_that("wrapper formals are the Python parameter names, in order", {
  skip_if_no_dpstats()
  for (f in c("dp_sis", "dp_two_stage", "dp_knockoff", "dp_gmm", "dp_felp", "vertical_glm", "dp_pca")) {
    py <- python_parameters(f)
    r <- setdiff(names(formals(getExportedValue("dpstats", f))), c("...", "seed"))
    expect_true(all(r %in% py), info = paste(f, ": not in Python:", paste(setdiff(r, py), collapse = ", ")))
    expect_identical(r, py[py %in% r], info = f)
    expect_true("random_state" %in% py, info = f)
  }
})

test_that("dp_gmm and dp_felp take their current Python arguments by name", {
  skip_if_no_dpstats()
  expect_identical(python_parameters("dp_gmm")[1:5], c("formula", "data", "k", "eps", "delta"))
  expect_identical(python_parameters("dp_felp")[1:3], c("formula", "data", "eps"))
  # the names man/dp_sis.Rd lists for each
  for (a in c("bounds", "method", "groups", "alpha", "refine", "min_weight", "var_floor",
              "neighbouring", "truth", "oc_trials", "strict")) {
    expect_true(a %in% python_parameters("dp_gmm"), info = a)
  }
  for (a in c("lam", "n_estimators", "sample_ratio", "select", "variant", "bounds", "clip_norm",
              "n_neighbors", "tol", "max_iter", "lam_grid", "neighbouring", "truth", "oc_trials",
              "strict")) {
    expect_true(a %in% python_parameters("dp_felp"), info = a)
  }
})

test_that("dp_felp: its own arguments reach Python and come back in the call", {
  skip_if_no_dpstats()
  set.seed(3)
  X <- data.frame(x1 = rnorm(300), x2 = rnorm(300), x3 = rnorm(300))
  df <- transform(X, y = factor(x1 + 0.2 * rnorm(300) > 0))
  # the paper variant's stated eps is refuted, and it says so with a warning
  expect_warning(fe <- dp_felp(y ~ ., data = df, eps = 4, lam = 0.1, n_estimators = 5, sample_ratio = 0.8,
                               select = 1, variant = "paper", bounds = c(-5, 5), seed = 1), "variant = \"strict\"")
  expect_s3_class(fe, c("dp_felp", "dp_result"), exact = TRUE)
  expect_equal(fe$call$lam, 0.1)
  expect_equal(fe$call$n_estimators, 5)
  expect_equal(fe$call$sample_ratio, 0.8)
  expect_equal(fe$call$select, 1)
  cf <- coef(fe)
  expect_setequal(names(cf), c("x1", "x2", "x3"))
  expect_identical(names(which.max(cf)), "x1")  # the only informative feature
  # a misspelt argument is refused with its name and the likely one, as a classed R condition
  expect_error(dp_felp(y ~ ., data = df, eps = 1, n_estimator = 5), "did you mean 'n_estimators'",
               class = "dpstats_argument_error")
})

test_that("levels = list(...) declares a character column's levels; an R factor declares its own", {
  skip_if_no_dpstats()
  set.seed(3)
  df <- data.frame(y = rnorm(80), x = runif(80), city = rep(c("Leeds", "York"), 40), stringsAsFactors = FALSE)
  df$city[1] <- "Zzyzx"  # one row with a level no other row has: not a column of the design
  fit <- dp_lm(y ~ x + city, df, eps = 1, bounds = c(-5, 5), levels = list(city = c("Leeds", "York")),
               n_boot = 100L, strict = TRUE, seed = 1)
  expect_identical(fit$terms, c("(Intercept)", "x", "cityYork"))
  expect_identical(fit$n, 80L)  # na_action = "fill": the Zzyzx row gets the first level, no row dropped
  rev <- dp_sis(y ~ x + city, df, eps = 1, k = 1L, bounds = c(-5, 5), levels = list(city = c("York", "Leeds")),
                strict = TRUE, seed = 1, oc_trials = 0L)  # the declared order: York is the reference
  expect_identical(rev$terms, c("x", "cityLeeds"))
  f <- df
  f$city <- factor(f$city, levels = c("Leeds", "York", "Zzyzx", "Hull"))  # R's levels are declared
  fit <- dp_lm(y ~ x + city, f, eps = 1, bounds = c(-5, 5), n_boot = 100L, strict = TRUE, seed = 1)
  expect_identical(fit$terms, c("(Intercept)", "x", "cityYork", "cityZzyzx", "cityHull"))
  # a character column without declared levels: a named step without strict; under strict = TRUE it is
  # numeric by declaration (its class is read from the rows: one "?" makes a numeric column character)
  expect_warning(dp_lm(y ~ x + city, df, eps = 1, bounds = c(-5, 5), n_boot = 100L, seed = 1),
                 "levels of 'city'", class = "dpstats_non_private_warning")
  text <- suppressWarnings(dp_lm(y ~ x + city, df, eps = 1, bounds = c(-5, 5), n_boot = 100L, strict = TRUE, seed = 1))
  expect_identical(text$terms, c("(Intercept)", "x", "city"))
})

test_that("random_state = (Python's name) is taken as seed =, with the same whole-number check", {
  skip_if_no_dpstats()
  a <- dp_sis(mpg ~ ., mtcars, eps = 1, k = 2, bounds = c(-500, 500), random_state = 1)
  b <- dp_sis(mpg ~ ., mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)
  expect_identical(a$outputs$selected, b$outputs$selected)
  expect_error(dp_sis(mpg ~ ., mtcars, eps = 1, k = 2, bounds = c(-500, 500), random_state = 1.5),
               "seed must be one whole number")
  expect_error(dp_sis(mpg ~ ., mtcars, eps = 1, k = 2, bounds = c(-500, 500), random_state = 1, seed = 2),
               "not both")
})
