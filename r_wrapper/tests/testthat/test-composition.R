# dp_accountant(composition = "zcdp"): a zCDP filter that charges each step what its mechanism
# costs; print names the rule and ledger() shows each step's recorded mechanism (issue 29).

test_that("a zCDP accountant charges selections at eps^2/8 and says so", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 3, delta = 1e-6, composition = "zcdp")
  out <- capture.output(print(acc))
  expect_true(any(grepl("zCDP filter", out)))
  df <- sim_data()
  for (i in 1:2) {
    suppressWarnings(dp_sis(y ~ ., data = df, eps = 1, k = 2, topk = "peeling", bounds = c(-6, 6),
                            seed = i, oc_trials = 0L, accountant = acc))
  }
  out <- capture.output(print(acc))
  expect_true(any(grepl("rho: +spent 0.125 of 0.18359", out)))  # Canonne, Kamath & Steinke (0.146 by Bun & Steinke)
  expect_equal(ledger(acc)$event, rep("bounded range, eps = 0.5 × 2", 2))
  expect_error(suppressWarnings(dp_sis(y ~ ., data = df, eps = 1, k = 2, topk = "peeling",
                                       bounds = c(-6, 6), seed = 3, oc_trials = 0L, accountant = acc)),
               class = "dpstats_budget_exceeded_error")
  expect_error(dp_accountant(eps = 1, composition = "zcdp"), class = "dpstats_privacy_parameter_error")
})
