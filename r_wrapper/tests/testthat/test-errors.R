test_that("bad input gives Python's message as a classed R condition", {
  skip_if_no_dpstats()
  df <- sim_data()
  df$s <- as.character(df$g)
  cases <- list(
    list(f = y ~ x1 + nope, eps = 1, class = "dpstats_formula_error"),
    list(f = s ~ x1 + x2 + x3, eps = 1, class = "dpstats_data_error"),
    list(f = y ~ ., eps = -1, class = "dpstats_privacy_parameter_error")
  )
  for (case in cases) {
    err <- tryCatch(dp_sis(case$f, data = df, eps = case$eps, k = 2), error = function(e) e)
    expect_s3_class(err, c(case$class, "dpstats_error", "error", "condition"), exact = TRUE)
    py <- python_message("dp_sis", case$f, df, eps = case$eps, k = 2L)
    expect_true(grepl(conditionMessage(err), py, fixed = TRUE),
                info = paste("R:", conditionMessage(err), "| Python:", py))
  }
  expect_match(conditionMessage(tryCatch(dp_sis(y ~ x1 + nope, data = df, eps = 1), error = identity)),
               "column 'nope'")
})

test_that("R-side input errors are classed too", {
  skip_if_no_dpstats()
  expect_error(dp_sis(y ~ ., data = list(1, 2), eps = 1), class = "dpstats_data_error")
  df <- data.frame(y = rnorm(5), when = Sys.Date() + 1:5)
  expect_error(dp_sis(y ~ ., data = df, eps = 1), class = "dpstats_data_error")
  expect_error(dp_call("no_such_function"), class = "dpstats_error")
  expect_error(dp_sis(y ~ ., data = sim_data(), eps = 1, no_such_argument = 2),
               class = "dpstats_python_error")
})

test_that("data-dependent steps arrive as classed warnings", {
  skip_if_no_dpstats()
  classes <- character()
  withCallingHandlers(dp_sis(y ~ ., data = sim_data(), eps = 1, k = 2, seed = 1, oc_trials = 0L),
                      warning = function(w) {
                        classes <<- c(classes, class(w))
                        invokeRestart("muffleWarning")
                      })
  expect_true(all(c("dpstats_non_private_warning", "dpstats_warning", "warning") %in% classes))
  expect_error(suppressWarnings(dp_sis(y ~ ., data = sim_data(), eps = 1, k = 2, strict = TRUE)),
               class = "dpstats_error")
})
