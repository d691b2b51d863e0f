# predict() of dp_select_infer and dp_gmm fits behaves as dp_lm's and dp_glm's (and R's lm/glm):
# rows with NA in newdata predict NA (na.action = na.pass), arguments are checked by name, and errors
# about newdata name newdata, the column and the fix (the outside R audit's items 4 and 5).

si_data <- function(n = 400) {
  set.seed(11)
  df <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n), x4 = rnorm(n))
  df$y <- 2 * df$x1 + rnorm(n)
  df
}

test_that("dp_select_infer's predict gives NA for rows with NA, as predict.lm with na.pass", {
  skip_if_no_dpstats()
  df <- si_data()
  fit <- suppressWarnings(dp_select_infer(y ~ x1 + x2 + x3 + x4, data = df, eps = 2, delta = 1e-6, k = 2,
                                          bounds = c(-8, 8), seed = 1))
  nd <- df[1:5, ]
  nd$x1[2] <- NA
  nd$x3[4] <- NA
  p <- predict(fit, nd)
  ref_lm <- lm(formula(fit), data = df)  # the final model: the response on the selected terms
  ref <- predict(ref_lm, nd, na.action = na.pass)
  expect_identical(names(p), names(ref))
  expect_identical(is.na(p), is.na(ref))  # the oracle's NA rows: a variable of the final model is NA
  X <- cbind(1, as.matrix(nd[, fit$outputs$selected, drop = FALSE]))
  expect_equal(unname(p[!is.na(p)]), unname(drop(X %*% coef(fit)))[!is.na(p)], tolerance = 1e-10)
  # arguments: unknown ones named; intervals of a bootstrap fit not released; type = "response" = link
  expect_error(predict(fit, nd, se.fitt = TRUE), "se.fitt", class = "dpstats_argument_error")
  expect_error(predict(fit, nd, interval = "confidence"), "calibrated parametric bootstrap",
               class = "dpstats_not_released_error")
  expect_error(predict(fit, nd, se.fit = TRUE), "se.fit = TRUE", class = "dpstats_not_released_error")
  expect_error(predict(fit, nd, level = 0.9), "needs interval", class = "dpstats_argument_error")
  expect_error(predict(fit), "without newdata", class = "dpstats_not_released_error")
  expect_equal(predict(fit, nd, type = "response"), p)
})

test_that("dp_select_infer with infer = \"glm\" predicts as dp_glm: type, se.fit (delta method), NA rows", {
  skip_if_no_dpstats()
  df <- si_data(2000)
  df$y <- as.integer(df$x1 + rnorm(nrow(df)) > 0)
  fit <- suppressWarnings(dp_select_infer(y ~ x1 + x2 + x3 + x4, data = df, eps = 4, delta = 1e-6, k = 1,
                                          bounds = c(-6, 6), infer = "glm", family = binomial, seed = 2))
  nd <- df[1:4, ]
  nd$x1[3] <- NA
  link <- predict(fit, nd)
  resp <- predict(fit, nd, type = "response")
  expect_identical(unname(which(is.na(link))), 3L)
  expect_equal(resp, stats::plogis(link))
  s <- predict(fit, nd, type = "response", se.fit = TRUE)
  X <- cbind(1, as.matrix(nd[, fit$outputs$selected, drop = FALSE]))
  se_link <- sqrt(rowSums((X %*% vcov(fit)) * X))
  expect_equal(unname(s$se.fit), unname(se_link * stats::dlogis(link)), tolerance = 1e-8)
  expect_true(is.na(s$se.fit[3]))
  expect_error(predict(fit, nd, interval = "confidence"), "se.fit = TRUE", class = "dpstats_argument_error")
})

gmm_data <- function(n = 2000) {
  set.seed(5)
  centre <- rep(c(-3, 3), length.out = n)
  data.frame(x1 = centre + rnorm(n, sd = 0.5), x2 = centre + rnorm(n, sd = 0.5), x3 = rnorm(n))
}

test_that("dp_gmm's predict gives NA for rows with NA and names unknown arguments", {
  skip_if_no_dpstats()
  df <- gmm_data()
  fit <- dp_gmm(~ x1 + x2, data = df, k = 2, eps = 1, delta = 1e-6, bounds = c(-6, 6), seed = 1)
  nd <- df[1:5, ]
  nd$x2[2] <- NA
  p <- predict(fit, nd)
  expect_type(p, "integer")
  expect_identical(names(p), rownames(nd))
  expect_identical(unname(which(is.na(p))), 2L)
  expect_true(all(p[-2] %in% 1:2))
  expect_identical(p[-2], predict(fit, nd[-2, ]))  # the other rows as without the NA row
  m <- as.matrix(nd[, c("x1", "x2")])
  expect_identical(unname(predict(fit, m)), unname(p))
  expect_error(predict(fit, nd, type = "prob"), "type =", class = "dpstats_argument_error")
  expect_error(predict(fit), "needs newdata", class = "dpstats_argument_error")
})

test_that("errors about newdata name newdata, the column and the fix", {
  skip_if_no_dpstats()
  df <- si_data()
  lfit <- suppressWarnings(dp_lm(y ~ x1 + x2, data = df, eps = 2, bounds = c(-8, 8), seed = 1))
  sfit <- suppressWarnings(dp_select_infer(y ~ x1 + x2 + x3 + x4, data = df, eps = 2, delta = 1e-6, k = 2,
                                           bounds = c(-8, 8), seed = 1))
  gfit <- dp_gmm(~ x1 + x2, data = gmm_data(), k = 2, eps = 1, delta = 1e-6, bounds = c(-6, 6), seed = 1)
  for (fit in list(lfit, sfit, gfit)) {
    e <- tryCatch(predict(fit, df[1:3, c("x2", "x3", "x4")]), error = identity)
    expect_s3_class(e, "dpstats_error")
    expect_match(conditionMessage(e), "newdata has no column 'x1'", fixed = TRUE, info = class(fit)[1])
    expect_match(conditionMessage(e), "add the column 'x1' to newdata", fixed = TRUE, info = class(fit)[1])
  }
  cfit <- suppressWarnings(dp_lm(y ~ x1 + g, data = transform(df, g = rep(c("a", "b"), 200)), eps = 2,
                                 bounds = c(-8, 8), levels = list(g = c("a", "b")), seed = 1))
  e <- tryCatch(predict(cfit, data.frame(x1 = 1, g = "c")), error = identity)
  expect_match(conditionMessage(e), "factor g has new level c", fixed = TRUE)  # predict.lm's words
  expect_match(conditionMessage(e), "give newdata only those, or leave these rows out", fixed = TRUE)
})

test_that("vertical_glm's predict gives NA for rows with NA, as predict.glm with na.pass, and names unknown arguments", {
  skip_if_no_dpstats()
  parties <- list(a = "wt", b = c("hp", "qsec"))
  fit <- vertical_glm(carb ~ wt + hp + qsec, data = mtcars, parties = parties, family = poisson)
  ref <- glm(carb ~ wt + hp + qsec, data = mtcars, family = poisson)
  nd <- mtcars[1:6, ]
  nd$wt[2] <- NA
  nd$qsec[5] <- NA
  for (type in c("link", "response")) {
    p <- predict(fit, nd, type = type)
    oracle <- predict(ref, nd, type = type, na.action = na.pass)
    expect_identical(names(p), names(oracle))
    expect_identical(is.na(p), is.na(oracle))
    expect_equal(p, oracle, tolerance = 1e-6)
  }
  expect_true(all(is.na(predict(fit, transform(nd, hp = NA_real_)))))
  expect_error(predict(fit, nd, se.fit = TRUE), "se.fit =", class = "dpstats_argument_error")
  expect_error(predict(fit, nd, interval = "confidence"), "interval =", class = "dpstats_argument_error")
})
