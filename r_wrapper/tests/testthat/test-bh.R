test_that("dp_bh: names kept, rejections, tidy, and raw p-values hidden unless asked", {
  skip_if_no_dpstats()
  p <- c(g1 = 1e-9, g2 = 3e-9, g3 = 0.0456789, g4 = 0.35, g5 = 0.9)
  fit <- dp_bh(p, q = 0.1, eps = 2, eta = 0.01, max_rejections = 3, seed = 4)
  expect_s3_class(fit, c("dp_bh", "dp_result"), exact = TRUE)
  expect_setequal(fit$outputs$rejected, c("g1", "g2"))
  td <- tidy(fit)
  expect_equal(names(td), c("hypothesis", "peeled", "peel_rank", "noisy_p_value", "rejected"))
  expect_equal(td$hypothesis, names(p))
  expect_equal(sum(td$peeled), 3)
  expect_equal(ledger(fit)$eps, 2)
  shown <- c(capture.output(print(fit)), capture.output(print(summary(fit))))
  expect_false(any(grepl("0.0456789", shown, fixed = TRUE)))
  asked <- dp_bh(p, q = 0.1, eps = 2, eta = 0.01, max_rejections = 3, seed = 4, diagnostics = TRUE)
  expect_true(any(grepl("0.0456789", capture.output(print(summary(asked))), fixed = TRUE)))
})

test_that("dp_bh: errors arrive as classed conditions before any spend", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 2)
  # p-values from private data are mapped by a public rule (NA counts as 1, clipped to [0, 1]), never refused
  mapped <- dp_bh(c(0.1, NA, 0.3), eps = 1, eta = 0.01, seed = 1, accountant = dp_accountant(eps = 2))
  expect_true(any(grepl("counts as 1", mapped$privacy$notes, fixed = TRUE)))
  expect_error(dp_bh(c(0.1, 0.2), q = 1, eps = 1, accountant = acc), "q must be in",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_bh(c(0.1, 0.2), eps = 1, eta = 0, accountant = acc), "eta must be a positive",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_bh(c(0.1, 0.2), accountant = acc), "eps is needed", class = "dpstats_privacy_parameter_error")
  expect_error(dp_bh(c(0.1, 0.2), eps = 1, max_rejections = 3, accountant = acc), "max_rejections",
               class = "dpstats_data_error")
  expect_equal(ledger(acc)$eps, numeric(0))
  one <- dp_bh(0.001, eps = 1, eta = 0.01, seed = 1)  # a single p-value stays a vector
  expect_equal(one$p, 1)
})

test_that("dp_bh at eps = Inf is p.adjust(method = \"BH\"), NA kept as R keeps it, warned, refused under strict", {
  skip_if_no_dpstats()
  set.seed(1)
  vectors <- list(audit = c(runif(20), rbeta(10, 0.1, 10)), ties = c(0.01, 0.01, 0.02, 0.02, 0.04, 0.2, 0.2, 1),
                  on_the_cut = c(a = 0.01, b = 0.02, c = 0.03, d = 0.04, e = 0.05),
                  missing = c(0.001, NA, 0.02, NA, 0.03, 0.9))
  for (p in vectors) for (q in c(0.05, 0.1)) {
    warned <- character(0)
    fit <- withCallingHandlers(dp_bh(p, q = q, eps = Inf), dpstats_non_private_warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    expect_match(warned, "p.adjust(method = \"BH\"), NOT private", fixed = TRUE)
    adjusted <- p.adjust(p, method = "BH")
    names <- if (is.null(names(p))) paste0("H", seq_along(p)) else names(p)
    expect_identical(tidy(fit)$p.adjusted, unname(adjusted))  # exact, NA where p is NA
    expect_identical(fit$outputs$rejected, names[which(adjusted <= q)])
  }
  expect_error(dp_bh(c(0.01, 0.2), eps = Inf, strict = TRUE), "strict = TRUE refuses eps = Inf",
               class = "dpstats_privacy_parameter_error")
})

test_that("dp_bh: a formula tests marginal slopes on bounded data, released only through private BH", {
  skip_if_no_dpstats()
  set.seed(7)
  n <- 20000
  df <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1), x3 = runif(n, -1, 1))
  df$y <- 0.6 * df$x1 + rnorm(n)
  acc <- dp_accountant(eps = 5)
  fit <- dp_bh(y ~ ., data = df, q = 0.1, eps = 4, bounds = list(x1 = c(-1, 1), x2 = c(-1, 1), x3 = c(-1, 1),
               y = c(-4, 4)), sigma = 1.1, max_rejections = 2, seed = 3, accountant = acc)
  expect_s3_class(fit, c("dp_bh", "dp_result"), exact = TRUE)
  expect_equal(fit$outputs$route, "marginal z-tests")
  expect_equal(fit$outputs$rejected, "x1")
  expect_equal(tidy(fit)$hypothesis, c("x1", "x2", "x3"))
  expect_equal(fit$n, n)
  expect_equal(ledger(acc)$eps, 4)
  expect_equal(fit$outputs$delta_z, 2 * (1 - 1 / n) * 8 / (1.1 * sqrt(n)), tolerance = 1e-12)
  shown <- c(capture.output(print(fit)), capture.output(print(summary(fit))))
  expect_true(any(grepl("marginal slope", shown, fixed = TRUE)))
  expect_false(any(grepl("raw_z", shown, fixed = TRUE)))
  expect_error(dp_bh(y ~ ., data = df, eps = 1, sigma = 1, accountant = acc), "bounds= is needed",
               class = "dpstats_privacy_parameter_error")
  df$y <- ifelse(df$y > 0, "up", "down")
  expect_error(dp_bh(y ~ ., data = df, eps = 1, bounds = c(-4, 4), sigma = 1, accountant = acc),
               "numeric response", class = "dpstats_data_error")
  expect_equal(ledger(acc)$eps, 4)
})

test_that("tidy() of dp_bh keeps the identifying column first, as broom does (term, hypothesis)", {
  skip_if_no_dpstats()
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 1, seed = 1, n_boot = 100,
               bounds = list(mpg = c(10, 35), wt = c(1, 6), hp = c(50, 350)))
  bh <- dp_bh(fit, q = 0.1)  # post-processing of the fit's released p-values: a p.value column
  td <- tidy(bh)
  expect_identical(names(td), c("hypothesis", "p.value", "rejected"))  # Python's columns, its order
  expect_identical(td$hypothesis, c("wt", "hp"))
  expect_equal(td$p.value, tidy(fit)$p.value[-1])
  expect_identical(names(tidy(fit))[1:6], c("term", "estimate", "ridge", "std.error", "statistic", "p.value"))
  g <- dp_gmm(~ wt + hp, data = mtcars, k = 2, eps = 1, delta = 1e-6, bounds = list(wt = c(1, 6), hp = c(50, 350)),
              seed = 1)
  expect_identical(names(tidy(g))[1:2], c("component", "term"))  # one row per (component, term), as Python
})
