test_that("dp_plan predicts from public inputs and says it read no data", {
  skip_if_no_dpstats()
  pl <- suppressWarnings(dp_plan("dp_sis", n = 200, p = 100, eps = c(20, 200), k = 3,
                                 assume = list(signals = 3, strength = 1), trials = 10, seed = 1))
  expect_s3_class(pl, "dp_plan")
  expect_match(paste(capture.output(print(pl)), collapse = "\n"), "no data was read; no budget was charged")
  td <- tidy(pl)
  expect_true(all(c("method", "n", "eps", "measure", "estimate", "std.error", "trials") %in% names(td)))
  expect_equal(nrow(td), 2 * 3)
  expect_match(pl$assumption, "3 true signals")
  path <- tempfile(fileext = ".html")
  report(pl, path)
  expect_true(any(grepl("no data was read", readLines(path, warn = FALSE))))
})

test_that("dp_plan warns when the eps cannot beat chance and refuses bad input", {
  skip_if_no_dpstats()
  expect_warning(dp_plan("dp_sis", n = 100, p = 2000, eps = 1, k = 8, bounds = NULL, trials = 10, seed = 1),
                 "cannot beat chance")
  expect_error(dp_plan("dp_lasso", n = 100, p = 10, eps = 1), class = "dpstats_privacy_parameter_error")
  expect_error(dp_plan("dp_sis", n = 100, p = 10, eps = -1), class = "dpstats_privacy_parameter_error")
  expect_error(dp_plan("dp_sis", p = 10, eps = 1), "missing")
})

test_that("dp_plan solves for a target with the knockoff filter", {
  skip_if_no_dpstats()
  pl <- suppressWarnings(dp_plan("dp_knockoff", n = 2000, p = 10, eps = c(0.5, 2), variant = "II",
                                 assume = list(signals = 3, amplitude = 3.5), target = list(power = 0.5),
                                 trials = 10, seed = 1))
  expect_equal(pl$targets$measure, "power")
})

test_that("dp_plan plans dp_felp under a planted-feature model", {
  skip_if_no_dpstats()
  pl <- suppressWarnings(dp_plan("dp_felp", n = 100, p = 20, eps = c(10, 1e6), k = 3, n_estimators = 5,
                                 assume = list(signals = 3, shift = 2), trials = 4, seed = 1))
  td <- tidy(pl)
  expect_setequal(unique(td$measure), c("precision", "recall", "noise_share"))
  expect_equal(unique(td$method), "dp_felp (strict)")
  expect_match(pl$assumption, "3 planted features")
  expect_equal(td$estimate[td$measure == "precision" & td$eps == 1e6], 1)
})

test_that("dp_plan plans dp_lm: error, interval width against OLS and coverage", {
  skip_if_no_dpstats()
  pl <- dp_plan("dp_lm", n = 3000, p = 3, eps = c(1, 5), delta = 1e-6,
                assume = list(signals = 2, strength = 0.5), trials = 5, seed = 2)
  td <- tidy(pl)
  expect_setequal(unique(td$measure), c("rel_error", "width_ratio", "coverage"))
  expect_true(all(td$estimate[td$measure == "width_ratio"] >= 1))
  expect_match(paste(capture.output(summary(pl)), collapse = "\n"), "Predicted width_ratio")
})

test_that("dp_plan shares a declared session budget between fits (session = c(eps, delta))", {
  skip_if_no_dpstats()
  pl <- dp_plan("dp_lm", n = 2000, p = 3, session = c(3.2, 1e-5), analyses = 10, trials = 5, seed = 1)
  expect_match(paste(capture.output(print(pl)), collapse = "\n"), "one of 10 dp_lm fits")
  expect_gt(unique(tidy(pl)$eps), 3 * 3.2 / 10)  # PLD: about three times basic composition's share
  expect_error(dp_plan("dp_lm", n = 2000, p = 3), "eps")
})

test_that("dp_plan plans dp_glm, family given as dp_glm takes it, and says where the door refuses", {
  skip_if_no_dpstats()
  pl <- dp_plan("dp_glm", n = c(5000, 50000), p = 10, eps = c(1, 4), delta = 1e-6, family = poisson, trials = 4,
                seed = 1)
  td <- tidy(pl)
  expect_setequal(unique(td$measure), c("width_ratio", "coverage", "withheld", "refused"))
  refused <- td[td$measure == "refused", ]
  expect_equal(refused$estimate[refused$n == 5000], c(1, 1))  # both eps refused at n = 5000, p = 10
  expect_true(any(grepl("refused", capture.output(print(pl)))))
  expect_match(pl$assumption, "^Poisson regression")
  a <- dp_plan("dp_glm", n = 5000, p = 3, eps = 2, delta = 1e-6, family = binomial(), trials = 4, seed = 1)
  b <- dp_plan("dp_glm", n = 5000, p = 3, eps = 2, delta = 1e-6, family = "binomial", trials = 4, seed = 1)
  expect_equal(tidy(a)$estimate, tidy(b)$estimate)
  expect_error(dp_plan("dp_glm", n = 5000, p = 3, eps = 2, delta = 1e-6, family = binomial("probit")), "canonical",
               class = "dpstats_argument_error")
})

test_that("dp_plan's n and trials of the wrong type are parameter errors, an n too small for the design a data error", {
  skip_if_no_dpstats()
  expect_error(dp_plan("dp_lm", n = 2000, p = 3, eps = 1, trials = 1, seed = 1), "trials must be a whole number >= 2",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_plan("dp_lm", n = 2000.5, p = 3, eps = 1, trials = 5, seed = 1), "n must be a whole number",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_plan("dp_lm", n = "2000", p = 3, eps = 1, trials = 5, seed = 1), "n must be a whole number",
               class = "dpstats_privacy_parameter_error")
  expect_error(dp_plan("dp_lm", n = 4, p = 3, eps = 1, trials = 5, seed = 1), "dp_lm needs n > p \\+ 1",
               class = "dpstats_data_error")
})
