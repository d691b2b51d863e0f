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
    expect_true(grepl(conditionMessage(err), dpstats:::.r_words(py), fixed = TRUE),
                info = paste("R:", conditionMessage(err), "| Python:", py))
  }
  expect_match(conditionMessage(tryCatch(dp_sis(y ~ x1 + nope, data = df, eps = 1), error = identity)),
               "column 'nope'")
})

test_that("R-side input errors are classed too", {
  skip_if_no_dpstats()
  expect_error(dp_sis(y ~ ., data = list(1, 2), eps = 1), class = "dpstats_data_error")
  df <- data.frame(y = rnorm(5))
  df$when <- I(as.list(1:5))  # a list column (a Date crosses as its number, as lm reads it)
  expect_error(dp_sis(y ~ ., data = df, eps = 1), "as.numeric(df$when)", fixed = TRUE,
               class = "dpstats_data_error")
  expect_error(dp_call("no_such_function"), class = "dpstats_error")
  expect_error(dp_sis(y ~ ., data = sim_data(), eps = 1, no_such_argument = 2), "no_such_argument",
               class = "dpstats_argument_error")
})

test_that("errors are worded for R users and classed dpstats_error", {
  skip_if_no_dpstats()
  df <- sim_data()
  expect_error(dp_sis(y ~ ., data = df), "argument \"eps\" is missing", class = "dpstats_argument_error")
  expect_error(dp_knockoff(y ~ ., data = df, eps = 1), "needs delta > 0 at finite eps",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_sis(y ~ ., data = df, eps = NA), "eps is NA", class = "dpstats_privacy_parameter_error")
  expect_error(dp_sis(y ~ ., data = df, eps = NA_real_, k = 2), "eps is NA", class = "dpstats_error")
  expect_error(dp_sis(y ~ ., data = df, eps = 1, bound = c(-1, 1)), "did you mean 'bounds'",
               class = "dpstats_argument_error")
  expect_error(dp_sis(y ~ x1, df, 1, 2, 3), "by name", class = "dpstats_argument_error")
  # a character column where a number is needed: R's conversion is suggested, with the data's name
  cars <- data.frame(mpg = as.character(mtcars$mpg), wt = mtcars$wt, hp = mtcars$hp)
  expect_error(dp_sis(mpg ~ wt + hp, data = cars, eps = 1, bounds = c(-1, 1)), "as.numeric(cars$mpg)",
               fixed = TRUE, class = "dpstats_data_error")
  # weights = and na.action = are refused by name; na.action = na.omit is na_action = "omit"
  expect_error(dp_sis(y ~ ., data = df, eps = 1, weights = x1), "weights", class = "dpstats_argument_error")
  expect_error(dp_sis(y ~ ., data = df, eps = 1, na.action = na.exclude), "na.action",
               class = "dpstats_argument_error")
  fit <- suppressWarnings(dp_sis(y ~ x1 + x2, data = df, eps = 1, k = 1, bounds = c(-6, 6), na.action = na.omit,
                                 seed = 1, oc_trials = 0L))
  expect_equal(fit$py_call$na_action, "omit")  # under replace the dropped rows are a named step, n not shown
  expect_true(any(grepl("na_action", fit$privacy$data_dependent_steps)))
})

test_that("bounds as c(lo, hi) or a named list are accepted", {
  skip_if_no_dpstats()
  cars <- mtcars
  a <- vertical_glm(mpg ~ wt + hp, data = cars, parties = list(a = "wt", b = "hp"), eps = 1, delta = 1e-6,
                    penalty = "ridge", lam = 1, bounds = list(mpg = c(10, 35), wt = c(1, 6), hp = c(50, 350)),
                    seed = 1)
  expect_length(coef(a), 3)
  s <- suppressWarnings(dp_sis(y ~ x1 + x2, data = sim_data(), eps = 1, k = 1, bounds = c(-1, 1), seed = 1,
                               oc_trials = 0L))
  expect_s3_class(s, "dp_sis")
  s <- suppressWarnings(dp_sis(y ~ x1 + x2, data = sim_data(), eps = 1, k = 1, seed = 1, oc_trials = 0L,
                               bounds = list(y = c(-10, 10), x1 = c(-3, 3), x2 = c(-3, 3))))
  expect_s3_class(s, "dp_sis")
})

test_that("subset = works as in lm; a numeric matrix, Date columns and unused list columns are accepted as data", {
  skip_if_no_dpstats()
  cars <- mtcars
  a <- vertical_glm(mpg ~ wt + hp, data = cars, parties = list(a = "wt", b = "hp"), subset = cyl > 4)
  expect_equal(coef(a), coef(lm(mpg ~ wt + hp, data = cars, subset = cyl > 4)), tolerance = 1e-6)
  expect_identical(a$call$subset, quote(cyl > 4))
  b <- vertical_glm(mpg ~ wt + hp, data = cars, parties = list(a = "wt", b = "hp"), subset = 1:20)
  expect_equal(coef(b), coef(lm(mpg ~ wt + hp, data = cars, subset = 1:20)), tolerance = 1e-6)
  m <- as.matrix(cars)
  fm <- vertical_glm(mpg ~ wt + hp, data = m, parties = list(a = "wt", b = "hp"))
  expect_equal(coef(fm), coef(lm(mpg ~ wt + hp, data = cars)), tolerance = 1e-6)
  expect_equal(predict(fm, m[1:3, ]), predict(lm(mpg ~ wt + hp, data = cars), cars[1:3, ]), tolerance = 1e-6)
  unnamed <- unname(m[, c("mpg", "wt", "hp")])
  fu <- vertical_glm(V1 ~ V2 + V3, data = unnamed, parties = list(a = "V2", b = "V3"))
  expect_equal(unname(coef(fu)), unname(coef(lm(mpg ~ wt + hp, data = cars))), tolerance = 1e-6)
  dated <- transform(cars, when = as.Date("2024-01-01") + seq_len(nrow(cars)))
  dated$tags <- I(as.list(seq_len(nrow(cars))))
  fd <- vertical_glm(mpg ~ wt + hp, data = dated, parties = list(a = "wt", b = "hp"))
  expect_equal(coef(fd), coef(fm))
  fw <- vertical_glm(mpg ~ wt + when, data = dated, parties = list(a = "wt", b = "when"))
  fn <- vertical_glm(mpg ~ wt + when, data = transform(dated, when = as.numeric(when)), parties = list(a = "wt", b = "when"))
  expect_identical(coef(fw), coef(fn))  # a Date is its days since 1970-01-01, as lm reads it
  expect_error(vertical_glm(mpg ~ wt + tags, data = dated, parties = list(a = "wt", b = "tags")),
               "as.numeric(dated$tags)", fixed = TRUE, class = "dpstats_data_error")
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

test_that("an argument of the wrong type is a parameter error, not a data error (outside R audit)", {
  skip_if_no_dpstats()
  df <- sim_data()
  df$g <- NULL
  b <- c(-6, 6)
  expect_error(dp_sis(y ~ ., data = df, eps = 1, k = "3", bounds = b), "k must be a whole number",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_gmm(~ ., data = iris[, 1:4], k = "2", eps = 1, delta = 1e-6, bounds = c(0, 10)),
               "k must be a whole number", class = "dpstats_privacy_parameter_error")
  # a family not offered is refused in R, as the argument error R's help pages document (test-glm.R)
  expect_error(vertical_glm(y ~ x1 + x2, data = df, parties = list(a = "x1", b = "x2"), family = "foo"),
               "does not fit family = foo", class = "dpstats_argument_error")
  # out of range for the design (d columns) stays a data error
  expect_error(dp_sis(y ~ ., data = df, eps = 1, k = 100, bounds = b), "out of range", class = "dpstats_data_error")
})

test_that("na.action = is mapped to na_action honestly or refused naming na_action, never ignored (audit item 4)", {
  skip_if_no_dpstats()
  b <- list(Ozone = c(0, 200), Solar.R = c(0, 350), Wind = c(0, 25), Temp = c(50, 100))
  acc <- dp_accountant(eps = 10)
  # na.omit, however given, is na_action = "omit": dp_lm needs the public n, so it refuses in the user's words
  my_rule <- na.omit
  for (rule in list(quote(na.omit), quote(stats::na.omit), "na.omit", quote(my_rule))) {
    call <- bquote(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = 1, bounds = b, na.action = .(rule), accountant = acc))
    expect_error(eval(call), "dp_lm cannot use na.action = na.omit \\(na_action = \"omit\"\\)",
                 class = "dpstats_privacy_parameter_error")
  }
  # a door that can drop rows does, as lm's na.omit (n then private, a named step)
  s <- suppressWarnings(dp_sis(Ozone ~ ., data = airquality, eps = 1, k = 2, bounds = c(0, 400), na.action = my_rule,
                               seed = 1, accountant = acc))
  expect_identical(s$py_call$na_action, "omit")
  f <- suppressWarnings(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = Inf, na.action = na.omit))
  expect_equal(coef(f), coef(lm(Ozone ~ Wind + Temp, data = airquality)), tolerance = 1e-8)
  # every other rule, or na.action with a different na_action, is an argument error naming na_action
  refused <- list(
    list(quote(na.exclude), "pads fitted values and residuals"),
    list("na.fail", "whether the call fails would depend on the rows"),
    list(quote(na.pass), "keeps missing values in the fit"),
    list(NULL, "options\\(\"na.action\"\\)"),
    list(quote(function(d) d[complete.cases(d), ]), "none of R's rules")
  )
  for (r in refused) {
    call <- bquote(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = 1, bounds = b, na.action = .(r[[1]]), accountant = acc))
    e <- tryCatch(eval(call), error = identity)
    expect_s3_class(e, "dpstats_argument_error")
    expect_match(conditionMessage(e), r[[2]], info = r[[2]])
    expect_match(conditionMessage(e), "Use na_action = \"fill\" .* or na_action = \"omit\"")
  }
  expect_error(dp_lm(Ozone ~ Wind + Temp, data = airquality, eps = 1, bounds = b, na.action = na.omit, na_action = "fill"),
               "na_action = \"fill\" is given too", class = "dpstats_argument_error")
  expect_identical(nrow(ledger(acc)), 1L)  # only dp_sis spent: every refusal came before any spend
})
