# The second outside statistician's audit (s12-stat2): L2 (stars at the bootstrap's p-value floor), M2
# (dp_pca's noise level in the table's units), L4 (dp_select_infer names its model), L5 (eps = Inf's
# deleted rows, as summary.lm prints them).

test_that("a p-value at the bootstrap floor has the stars of the floor's category, and the legend says so", {
  # B = 199: the floor is 2/200 = 0.01, printed "<0.01"; below 0.01 printCoefmat's category is "**"
  skip_if_no_dpstats()
  set.seed(0)
  df <- data.frame(x = runif(5000, 0, 10))
  df$y <- 1 + 0.5 * df$x + rnorm(5000)
  fit <- dp_lm(y ~ x, data = df, eps = 3, bounds = list(x = c(0, 10), y = c(-5, 15)), n_boot = 199, seed = 1)
  expect_equal(tidy(fit)$p.value[2], 0.01)
  out <- capture.output(print(fit))
  expect_match(out[grepl("^x ", out)], "<0\\.01 +\\*\\*$")
  i <- grep("^Signif. codes:", out)
  expect_match(out[i + 1], "^Bootstrap p-values are bounded below by 2/\\(B \\+ 1\\) = 0.01 \\(B = 199\\)")
})

test_that("dp_pca gives its noise level in the table's units and marks the components below it", {
  skip_if_no_dpstats()
  set.seed(5)
  X <- as.data.frame(pmin(pmax(matrix(rnorm(3000 * 4), 3000) %*% diag(c(0.5, 0.2, 0.1, 0.05)), -1), 1))
  b <- setNames(rep(list(c(-1, 1)), 4), names(X))
  fit <- dp_pca(~ ., data = X, k = 3, eps = 0.5, delta = 1e-6, bounds = b, seed = 2)
  # a variance noise alone reaches in at most 5% of releases (s13-stat3 finding 4, s15-stat3 F01):
  # (2σ(√d + √ln 40) + 2‖m̂‖q + q²/n)/(n − 1), q the 0.975 quantile of the sums' noise norm (σ_S·χ_4)
  o <- fit$outputs
  q <- o$sum_noise_sd * sqrt(qchisq(0.975, 4))
  level <- (2 * o$noise_sd * (sqrt(4) + sqrt(log(40))) + 2 * sqrt(sum(o$centre^2)) * q + q^2 / 3000) / (3000 - 1)
  expect_equal(glance(fit)$noise_level, level)
  td <- tidy(fit)
  below <- tapply(td$below_noise_level, td$component, unique)
  ev <- tapply(td$eigenvalue, td$component, unique)
  expect_identical(unname(below), unname(ev < level))
  text <- paste(capture.output(print(fit)), collapse = " ")
  expect_match(gsub("\\s+", " ", text),
               sprintf("Noise level: %s, a variance noise alone reaches in at most 5%% of releases", format(signif(level, 4))),
               fixed = TRUE)
})

test_that("dp_select_infer's tidy and glance name the final model", {
  skip_if_no_dpstats()
  set.seed(7)
  X <- matrix(rnorm(4000 * 6), 4000)
  df <- data.frame(pmin(pmax(X, -3), 3))
  df$y <- 2 * df$X1 - df$X2 + rnorm(4000)
  b <- c(setNames(rep(list(c(-3, 3)), 6), paste0("X", 1:6)), list(y = c(-10, 10)))
  fit <- dp_select_infer(y ~ ., data = df, eps = 4, delta = 1e-6, k = 2, bounds = b, n_boot = 100, seed = 1)
  model <- fit$outputs$selected_formula
  expect_true(all(tidy(fit)$model == model))
  g <- glance(fit)
  expect_identical(g$model, model)
  expect_equal(c(g$nobs, g$p), c(fit$outputs$n_infer, 6))
})

test_that("at eps = Inf dp_lm prints summary.lm's count of rows deleted for missingness", {
  skip_if_no_dpstats()
  want <- grep("deleted due to missingness", capture.output(summary(lm(Ozone ~ Solar.R + Wind + Temp, airquality))),
               value = TRUE)
  fit <- suppressWarnings(dp_lm(Ozone ~ Solar.R + Wind + Temp, data = airquality, eps = Inf))
  expect_true(want %in% capture.output(print(fit)))
  expect_true(want %in% capture.output(summary(fit)))
})
