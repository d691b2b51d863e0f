test_that("dp_sis returns a classed result with R methods", {
  skip_if_no_dpstats()
  df <- sim_data(n = 400)
  fit <- dp_sis(y ~ ., data = df, eps = 8, k = 2, bounds = c(-6, 6), seed = 3)
  expect_s3_class(fit, c("dp_sis", "dp_result"), exact = TRUE)
  expect_equal(fit$n, nrow(df))
  expect_equal(fit$p, 14)  # 12 numeric + 2 dummies of g
  expect_true(all(c("gmid", "ghi") %in% fit$terms))
  out <- capture.output(print(fit))
  expect_true(any(grepl("DP sure independence screening", out)))
  expect_true(any(grepl("Privacy: (8, 0)-DP", out, fixed = TRUE)))
  s <- summary(fit)
  expect_s3_class(s, "summary.dp_result")
  expect_true(any(grepl("Ledger", capture.output(print(s)))))
  cf <- coef(fit)
  expect_type(cf, "logical")
  expect_equal(names(cf), fit$terms)
  expect_equal(sum(cf), 2)
  td <- tidy(fit)
  expect_s3_class(td, "data.frame")
  if (requireNamespace("tibble", quietly = TRUE)) expect_s3_class(td, "tbl_df")  # as broom returns
  expect_equal(names(td), c("term", "selected"))
  expect_identical(as.data.frame(fit), as.data.frame(td))
  gl <- glance(fit)
  expect_equal(nrow(gl), 1)
  expect_equal(gl$eps, 8)
  expect_equal(ledger(fit)$eps, 8)
  # with eps = 8, n = 400 and two strong signals (score gap ~ 30, expected noise max ~ 2) the two true columns are found
  expect_setequal(fit$outputs$selected, c("x1", "x2"))
})

test_that("seed makes runs reproducible and is stated", {
  skip_if_no_dpstats()
  df <- sim_data(seed = 2)
  a <- dp_sis(y ~ . - g, data = df, eps = 0.5, k = 3, bounds = c(-6, 6), seed = 11, oc_trials = 0L)
  b <- dp_sis(y ~ . - g, data = df, eps = 0.5, k = 3, bounds = c(-6, 6), seed = 11, oc_trials = 0L)
  expect_identical(a$outputs$selected, b$outputs$selected)
  expect_true(a$privacy$seeded)
  expect_error(dp_sis(y ~ ., data = df, eps = 1, seed = 1.5), class = "dpstats_privacy_parameter_error")
})

test_that("report() writes a self-contained HTML file", {
  skip_if_no_dpstats()
  fit <- dp_sis(y ~ ., data = sim_data(), eps = 2, k = 2, bounds = c(-6, 6), seed = 1, oc_trials = 0L)
  path <- tempfile(fileext = ".html")
  expect_identical(report(fit, path), path)
  html <- paste(readLines(path, warn = FALSE), collapse = "\n")
  expect_match(html, "<svg", fixed = TRUE)
  expect_match(html, "differentially private", ignore.case = TRUE)
  expect_false(grepl("https?://[^\"]*\\.(js|css)", html))
})

test_that("a fit that lost its Python object says so", {
  skip_if_no_dpstats()
  fit <- dp_sis(y ~ ., data = sim_data(), eps = 2, k = 2, bounds = c(-6, 6), seed = 1, oc_trials = 0L)
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  again <- readRDS(path)
  expect_equal(tidy(again), tidy(fit))        # the R side survives
  expect_output(print(again), "Selected 2")
  expect_error(report(again, tempfile()), class = "dpstats_stale_error")
})

test_that("tidy() and glance() serve broom's generics when broom is installed", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  fit <- dp_sis(y ~ ., data = sim_data(), eps = 2, k = 2, bounds = c(-6, 6), seed = 1, oc_trials = 0L)
  expect_equal(broom::tidy(fit), tidy(fit))
  expect_equal(broom::glance(fit), glance(fit))
  expect_equal(generics::tidy(fit), tidy(fit))
  expect_equal(generics::glance(fit), glance(fit))
  # registered in NAMESPACE: the methods are found by the generics' own dispatch
  expect_true(is.function(utils::getS3method("tidy", "dp_result", envir = asNamespace("generics"))))
  # with broom attached (masking dpstats' tidy), tidy(fit) still works
  res <- local({
    suppressPackageStartupMessages(library(broom))
    on.exit(detach("package:broom"))
    list(tidy = tidy(fit), glance = glance(fit))
  })
  expect_equal(res$tidy, tidy(fit))
  expect_equal(res$glance, glance(fit))
})

test_that("dp_sis error rates appear only under assume= and are labelled", {
  skip_if_no_dpstats()
  df <- sim_data(n = 400)
  plain <- capture.output(print(summary(dp_sis(y ~ ., data = df, eps = 8, k = 2, bounds = c(-6, 6), seed = 3))))
  expect_false(any(grepl("recall (", plain, fixed = TRUE)))
  expect_false(any(grepl("under the assumed model", plain, fixed = TRUE)))
  fit <- dp_sis(y ~ ., data = df, eps = 8, k = 2, bounds = c(-6, 6), seed = 3,
                assume = list(signals = 2, strength = 1), oc_trials = 20)
  out <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))  # lines wrap to the width
  expect_true(grepl("recall (", out, fixed = TRUE))
  expect_true(grepl("under the assumed model: 2 true signals", out, fixed = TRUE))
})

test_that("bounds = \"auto\" passes through: private bounds charged first and shown", {
  skip_if_no_dpstats()
  df <- sim_data(n = 400)
  fit <- dp_sis(y ~ . - g, data = df, eps = 8, k = 2, bounds = "auto", bounds_eps = 0.8, strict = TRUE,
                seed = 3, oc_trials = 0L)
  led <- ledger(fit)
  expect_equal(led$eps, c(0.8, 7.2))
  expect_match(led$step[1], "^private bounds")
  expect_equal(glance(fit)$bounds_eps, 0.8)
  td <- tidy(fit)
  expect_true(all(c("bound_lo", "bound_hi") %in% names(td)))
  expect_true(all(td$bound_lo < td$bound_hi))
  expect_true(any(grepl("Private bounds (released", capture.output(print(summary(fit))), fixed = TRUE)))
  expect_error(dp_sis(y ~ . - g, data = df, eps = 1, bounds = "auto", bounds_eps = 2, seed = 1),
               class = "dpstats_privacy_parameter_error")
})
