# dp_lm behaves like lm: at eps = Inf it is lm() itself; a private fit gives lm's accessors from
# released quantities only. dp_select_infer returns the selected set and one ledger.

test_that("dp_lm at eps = Inf equals lm() on mtcars", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_lm(mpg ~ wt + hp + factor(cyl), data = mtcars, eps = Inf))
  ref <- lm(mpg ~ wt + hp + factor(cyl), data = mtcars)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-8)
  expect_equal(confint(fit), confint(ref), tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(tidy(fit)$std.error, unname(summary(ref)$coefficients[, 2]), tolerance = 1e-8)
  expect_equal(tidy(fit)$p.value, unname(summary(ref)$coefficients[, 4]), tolerance = 1e-6)
  nd <- mtcars[c(2, 9), ]
  expect_equal(as.numeric(predict(fit, newdata = nd)), unname(predict(ref, nd)), tolerance = 1e-8)
})

test_that("a private dp_lm prints like summary.lm and refuses another interval level", {
  skip_if_no_dpstats()
  b <- list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35))
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5, bounds = b, n_boot = 200, seed = 1)
  expect_s3_class(fit, "dp_lm")
  out <- paste(capture.output(summary(fit)), collapse = "\n")
  expect_match(out, "Coefficients:")
  expect_match(out, "Signif. codes")
  expect_match(out, "Residual standard error")
  expect_match(out, "differentially private")
  expect_match(out, "dp_lm(formula = mpg ~ wt + hp", fixed = TRUE)
  expect_identical(names(tidy(fit)), c("term", "estimate", "ridge", "std.error", "statistic", "p.value", "conf.low",
                                       "conf.high"))  # estimate: calibrated, what std.error and the rest are about
  expect_equal(dim(vcov(fit)), c(3L, 3L))
  expect_equal(unname(confint(fit)[, 1]), tidy(fit)$conf.low)
  expect_error(confint(fit, level = 0.9), "conf_level", class = "dpstats_argument_error")
  # bounds that miss every value are enforced by clipping, not checked on the rows (a check one
  # row could switch would be a release): the fit runs
  expect_s3_class(dp_lm(mpg ~ wt, data = mtcars, eps = 1, bounds = list(wt = c(20, 30), mpg = c(10, 35)),
                        seed = 1), "dp_lm")
})

test_that("dp_select_infer returns the selected set and one ledger", {
  skip_if_no_dpstats()
  df <- sim_data(n = 600, d = 8)
  df$g <- NULL
  res <- dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 2, bounds = c(-6, 6), n_boot = 200,
                         seed = 2)
  expect_s3_class(res, "dp_select_infer")
  expect_length(res$outputs$selected, 2)
  expect_equal(nrow(res$privacy$ledger), 1L)  # the one charge (parallel composition); ledger() lists the parts
  expect_match(res$privacy$ledger$mechanism, "dp_sis and dp_lm on disjoint rows", fixed = TRUE)
  expect_identical(unique(ledger(res)$part), c("A (dp_sis)", "B (dp_lm)"))
  expect_match(paste(capture.output(print(res)), collapse = "\n"), "parallel composition")
})

test_that("dp_select_infer's nobs(), formula() and summary() are the final model's, as R's of it", {
  skip_if_no_dpstats()
  df <- sim_data(n = 600, d = 8)
  df$g <- NULL
  res <- dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 2, bounds = c(-6, 6), n_boot = 200,
                         seed = 2)
  sel <- unlist(res$outputs$selected)
  expect_identical(nobs(res), 300L)  # part B's rows: n - floor(split * n), public
  expect_identical(nobs(res), as.integer(res$outputs$n_infer))
  expect_identical(glance(res)$nobs, 300L)
  f <- formula(res)
  expect_identical(deparse(f), paste("y ~", paste(sel, collapse = " + ")))
  ref <- lm(f, df)  # the final model R would fit: same coefficients' names
  expect_identical(names(coef(res)), names(coef(ref)))
  expect_identical(deparse(res$formula), "y ~ x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8")  # the candidates'
  text <- gsub("\\s+", " ", paste(capture.output(summary(res)), collapse = " "))
  expect_false(grepl("n = 600, p = ", text, fixed = TRUE))
  expect_match(text, "8 candidate columns, 2 selected; part B's fit has 3 coefficients", fixed = TRUE)
  nd <- df[1:2, ]
  nd[[setdiff(names(df), c("y", sel))[1]]][1] <- NA  # unused by the final model: predicted, as lm predicts
  expect_equal(unname(predict(res, nd)), unname(drop(model.matrix(f, nd) %*% coef(res))), tolerance = 1e-8)
})

test_that("dp_select_infer fits a selected factor's term whole: formula(), coef() and predict() are lm's", {
  # The outside R audit: formula() gave factor(cyl) while part B fitted factor(cyl)8 alone (8 against 4
  # and 6 pooled). mtcars, seed 5: part A selects wt and factor(cyl)8; the final model is lm's
  # mpg ~ wt + factor(cyl), and its coefficients, names and predictions follow from that formula.
  skip_if_no_dpstats()
  # cyl's levels declared: a DP fit keeps no level it read from the rows (it names them level1, ...)
  b <- list(mpg = c(10, 35), wt = c(1, 6), hp = c(50, 340), qsec = c(14, 23), drat = c(2.7, 5))
  res <- suppressWarnings(dp_select_infer(mpg ~ wt + hp + factor(cyl) + qsec + drat, data = mtcars, eps = 20,
                                          delta = 1e-6, k = 2, bounds = b, levels = list(cyl = c(4, 6, 8)),
                                          n_boot = 100, seed = 5))
  expect_identical(unlist(res$outputs$selected), c("wt", "factor(cyl)8"))  # seeded: one level of cyl
  expect_identical(formula(res), mpg ~ wt + factor(cyl), ignore_formula_env = TRUE)
  ref <- lm(formula(res), mtcars)
  expect_identical(names(coef(res)), names(coef(ref)))
  expect_identical(tidy(res)$term, names(coef(ref)))
  nd <- mtcars[c("Mazda RX4", "Datsun 710", "Maserati Bora"), ]  # cyl 6, 4 and 8
  expect_equal(predict(res, nd), drop(model.matrix(formula(res), nd) %*% coef(res)), tolerance = 1e-12)
  text <- gsub("\\s+", " ", paste(capture.output(print(summary(res))), collapse = " "))
  expect_match(text, "part B's fit has 4 coefficients (mpg ~ wt + factor(cyl))", fixed = TRUE)
  expect_match(text, "dp_lm on part B: mpg ~ wt + factor(cyl) (the terms of the selected columns, each whole", fixed = TRUE)
  expect_false(grepl("`", text, fixed = TRUE))  # coefficients named as lm names them
})

test_that("dp_select_infer(infer = \"glm\") fits dp_glm on part B, family as dp_glm takes it", {
  skip_if_no_dpstats()
  set.seed(3)
  n <- 20000
  df <- as.data.frame(matrix(runif(n * 6, -1, 1), n, 6, dimnames = list(NULL, paste0("x", 1:6))))
  df$y <- rbinom(n, 1, plogis(-0.3 + df$x1 - df$x2))
  b <- c(list(y = c(0, 1)), stats::setNames(rep(list(c(-1, 1)), 6), paste0("x", 1:6)))
  res <- dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 2, infer = "glm", family = binomial,
                         bounds = b, seed = 2)
  expect_s3_class(res, "dp_select_infer")
  expect_setequal(res$outputs$selected, c("x1", "x2"))
  expect_identical(res$outputs$family, "binomial")
  expect_match(res$privacy$ledger$mechanism, "dp_sis and dp_glm on disjoint rows", fixed = TRUE)
  expect_identical(unique(ledger(res)$part), c("A (dp_sis)", "B (dp_glm)"))
  out <- capture.output(print(res))
  expect_true(any(grepl("dp_glm (binomial) on part B", out, fixed = TRUE)))
  expect_true(any(grepl("Estimate Std. Error z value Pr(>|z|)", out, fixed = TRUE)))
  td <- tidy(res)
  se <- stats::setNames(td$std.error, td$term)
  expect_equal(confint(res, level = 0.9)[, 1], coef(res) - qnorm(0.95) * se, ignore_attr = TRUE)  # Wald, rescaled
  p <- predict(res, df[1:3, ], type = "response")
  expect_equal(as.numeric(p), as.numeric(plogis(predict(res, df[1:3, ]))))
  expect_error(dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 2, infer = "glm", family = binomial("probit"),
                               bounds = b), "canonical", class = "dpstats_argument_error")
  expect_error(dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 2, family = poisson, bounds = b),
               "infer = \"glm\"|infer='glm'", class = "dpstats_privacy_parameter_error")
})

test_that("ledger(dp_select_infer) lists each part's steps, each part summing to the call's budget", {
  skip_if_no_dpstats()
  set.seed(1)
  d <- as.data.frame(matrix(runif(3000 * 8, -1, 1), 3000))
  d$y <- d$V1 - d$V2 + rnorm(3000)
  r <- dp_select_infer(y ~ ., d, eps = 2, delta = 1e-6, k = 2, bounds = c(-8, 8), n_boot = 100, seed = 3)
  l <- ledger(r)
  expect_identical(unique(l$part), c("A (dp_sis)", "B (dp_lm)"))
  expect_equal(as.vector(tapply(l$eps, l$part, sum)), c(2, 2))
  expect_equal(as.vector(tapply(l$delta, l$part, sum)), c(0, 1e-6))
  expect_true(any(grepl("private top-2", l$step)) && any(grepl("stacked", l$step)))
})
