# dp_accountant(): one Python Accountant shared by every function given accountant = ;
# dp_model_matrix(): the design the Python formula layer builds, as model.matrix gives it.

test_that("dp_accountant accumulates spends across functions and refuses an overrun", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 3, delta = 1e-5)
  expect_s3_class(acc, "dp_accountant")
  out <- capture.output(print(acc))
  expect_true(any(grepl("budget: +eps = 3, delta = 1e-05", out)))
  expect_true(any(grepl("nothing spent yet", out)))
  df <- sim_data()
  suppressWarnings(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = c(-6, 6), seed = 1, oc_trials = 0L,
                          accountant = acc))
  vertical_glm(am ~ wt + hp, data = mtcars, parties = list(a = "wt", b = "hp"), family = binomial, eps = 1,
               delta = 1e-6, penalty = "ridge", lam = 0.1, bounds = list(wt = c(0, 6), hp = c(0, 400)),
               seed = 1, accountant = acc)
  led <- ledger(acc)
  expect_equal(nrow(led), 2)
  expect_equal(led$analysis, c("dp_sis", "vertical_glm"))
  expect_equal(sum(led$eps), 2)
  out <- capture.output(print(acc))
  expect_true(any(grepl("spent: +eps = 2, delta = 1e-06", out)))
  expect_true(any(grepl("remaining: +eps = 1, delta = 9e-06", out)))
  expect_true(any(grepl("Ledger", out)))
  out <- local({
    old <- options(width = 60)
    on.exit(options(old))
    capture.output(print(acc))
  })
  expect_true(all(nchar(out) <= 60))  # ledger rows wrapped to the console width
  expect_true(any(grepl("^  2\\. vertical_glm: eps = 1", out)))
  expect_error(dp_sis(y ~ ., data = df, eps = 1.5, k = 2, bounds = c(-6, 6), accountant = acc),
               class = "dpstats_budget_exceeded_error")
  expect_equal(nrow(ledger(acc)), 2)  # nothing was spent
  expect_error(dp_accountant(eps = NA), "eps is NA", class = "dpstats_error")
  expect_error(dp_accountant(eps = -1), class = "dpstats_privacy_parameter_error")
})

test_that("dp_model_matrix equals model.matrix", {
  skip_if_no_dpstats()
  cases <- list(list(Sepal.Length ~ Petal.Length * Species, iris),
                list(mpg ~ log(hp) + wt, mtcars),
                list(am ~ poly(wt, 2, raw = TRUE) + hp, mtcars),
                list(mpg ~ factor(cyl) + wt:hp - 1, mtcars),
                list(Ozone ~ Temp + Wind, airquality))  # rows with NAs dropped, as na.omit
  for (case in cases) {
    X <- suppressWarnings(dp_model_matrix(case[[1]], case[[2]]))
    ref <- model.matrix(case[[1]], case[[2]])
    expect_true(is.matrix(X) && is.numeric(X))
    expect_equal(X, ref, tolerance = 1e-10, ignore_attr = c("contrasts"), info = deparse(case[[1]]))
  }
  expect_error(dp_model_matrix(y ~ nope, data.frame(y = 1:3, x = 3:1)), class = "dpstats_formula_error")
})
