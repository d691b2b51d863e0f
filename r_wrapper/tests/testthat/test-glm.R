# vertical_glm results behave like glm/lm objects. The non-private fit is the pooled GLM, so on R's
# own data it must equal R's glm()/lm() to 1e-6; a DP fit gives what follows from the released
# coefficients and refuses the rest with the reason.

parties <- list(a = "wt", b = "hp")

test_that("binomial fit equals glm(am ~ wt + hp) on mtcars", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial)
  ref <- glm(am ~ wt + hp, family = binomial, data = mtcars)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-6)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-6)
  expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-6)
  expect_identical(attr(logLik(fit), "df"), attr(logLik(ref), "df"))
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6)
  expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6)
  expect_identical(nobs(fit), nobs(ref))
  nd <- mtcars[c(1, 5, 20, 31), ]
  expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6)
  expect_equal(predict(fit, newdata = nd, type = "response"), predict(ref, nd, type = "response"),
               tolerance = 1e-6)
  # Wald intervals with normal quantiles: confint.default (R's confint.glm profiles instead)
  ci <- confint(fit)
  expect_equal(ci, confint.default(ref), tolerance = 1e-6, ignore_attr = TRUE)
  expect_true(isTRUE(all.equal(ci, confint.default(ref), tolerance = 1e-6)))  # no extra attribute
  expect_equal(confint(fit, "wt", level = 0.9), confint.default(ref, "wt", level = 0.9), tolerance = 1e-6,
               ignore_attr = TRUE)
})

test_that("gaussian fit equals lm(mpg ~ wt + hp) on mtcars", {
  skip_if_no_dpstats()
  fit <- vertical_glm(mpg ~ wt + hp, data = mtcars, parties = parties, family = gaussian())
  ref <- lm(mpg ~ wt + hp, data = mtcars)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-6)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-6)
  expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6)
  expect_equal(logLik(fit), logLik(ref), tolerance = 1e-6, ignore_attr = "nall")
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6)
  expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6)
  nd <- data.frame(wt = c(2.5, 3.5), hp = c(100, 200), row.names = c("a", "b"))
  expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6)
  expect_equal(predict(fit, nd, type = "response"), predict(ref, nd), tolerance = 1e-6)
  # t quantiles with the residual df, as confint.lm
  expect_equal(confint(fit), confint(ref), tolerance = 1e-6, ignore_attr = TRUE)
  expect_true(isTRUE(all.equal(confint(fit), confint(ref), tolerance = 1e-6)))  # exactly confint.lm's layout
})

test_that("fitted() and residuals() need diagnostics = TRUE, then equal glm's", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial")
  expect_error(fitted(fit), "diagnostics", class = "dpstats_error")
  expect_error(residuals(fit), "per-row", class = "dpstats_error")
  expect_error(predict(fit), "diagnostics", class = "dpstats_error")
  dg <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial", diagnostics = TRUE)
  ref <- glm(am ~ wt + hp, family = binomial, data = mtcars)
  expect_equal(fitted(dg), unname(fitted(ref)), tolerance = 1e-6)
  expect_equal(predict(dg), unname(predict(ref)), tolerance = 1e-6)
  for (type in c("deviance", "pearson", "response", "working")) {
    expect_equal(residuals(dg, type = type), unname(residuals(ref, type = type)), tolerance = 1e-6, info = type)
  }
})

test_that("a DP fit predicts from its released coefficients and refuses the rest, saying why", {
  skip_if_no_dpstats()
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial", eps = 1,
                      delta = 1e-6, penalty = "ridge", lam = 0.1, bounds = list(wt = c(0, 6), hp = c(0, 400)),
                      seed = 1)
  p <- predict(fit, mtcars[1:3, ], type = "link")
  cf <- coef(fit)
  expect_equal(unname(p), unname(cf[1] + cf["wt"] * mtcars$wt[1:3] + cf["hp"] * mtcars$hp[1:3]), tolerance = 1e-10)
  expect_equal(predict(fit, mtcars[1:3, ], type = "response"), plogis(p))
  expect_identical(nobs(fit), 32L)  # n is public under replace-one-row privacy
  expect_error(vcov(fit), "not released", class = "dpstats_error")
  expect_error(confint(fit), "not released", class = "dpstats_error")
  expect_error(deviance(fit), "raw data", class = "dpstats_error")
  expect_error(logLik(fit), "raw data", class = "dpstats_error")
  expect_error(AIC(fit), "raw data", class = "dpstats_error")
  expect_error(fitted(fit), "diagnostics", class = "dpstats_error")
})

test_that("predict refuses terms recomputed on newdata and unseen levels; factors use the training levels", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(vertical_glm(mpg ~ I(wt - mean(wt)) + hp, data = mtcars, parties = parties))
  expect_error(predict(fit, mtcars[1:2, ]), "mean\\(wt\\)", class = "dpstats_error")
  raw <- vertical_glm(mpg ~ poly(wt, 2, raw = TRUE) + hp, data = mtcars, parties = parties)
  expect_equal(predict(raw, mtcars[1:2, ]), predict(lm(mpg ~ poly(wt, 2, raw = TRUE) + hp, mtcars), mtcars[1:2, ]),
               tolerance = 1e-6)
  ir <- vertical_glm(Sepal.Length ~ Petal.Length * Species + Sepal.Width, data = iris,
                     parties = list(a = c("Petal.Length", "Species"), b = "Sepal.Width"))
  ref <- lm(Sepal.Length ~ Petal.Length * Species + Sepal.Width, data = iris)
  expect_equal(coef(ir), coef(ref), tolerance = 1e-6)
  # character, two of the three levels only
  nd <- data.frame(Petal.Length = c(1.5, 5), Species = c("setosa", "virginica"), Sepal.Width = 3)
  expect_equal(unname(predict(ir, nd)), unname(predict(ref, nd)), tolerance = 1e-6)
  expect_error(predict(ir, data.frame(Petal.Length = 1, Species = "rosea", Sepal.Width = 3)), "rosea",
               class = "dpstats_error")
})

test_that("family = binomial, binomial() and \"binomial\" give the same fit; other links are refused", {
  skip_if_no_dpstats()
  fits <- list(vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial),
               vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial()),
               vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = "binomial"))
  for (f in fits[-1]) expect_equal(coef(f), coef(fits[[1]]))
  counts <- data.frame(y = c(2, 3, 6, 7, 8, 9, 10, 12, 15), x1 = 1:9, x2 = c(3, 1, 4, 1, 5, 9, 2, 6, 5))
  pois <- vertical_glm(y ~ x1 + x2, data = counts, parties = list(a = "x1", b = "x2"), family = poisson)
  ref <- glm(y ~ x1 + x2, family = poisson, data = counts)
  expect_equal(coef(pois), coef(ref), tolerance = 1e-6)
  expect_equal(logLik(pois), logLik(ref), tolerance = 1e-6, ignore_attr = "nobs")
  expect_equal(coef(vertical_glm(mpg ~ wt + hp, data = mtcars, parties = parties, family = gaussian)),
               coef(lm(mpg ~ wt + hp, mtcars)), tolerance = 1e-6)
  expect_error(vertical_glm(am ~ wt + hp, data = mtcars, parties = parties, family = binomial("probit")),
               "canonical", class = "dpstats_error")
})

test_that("fit$call is an R call like lm's: formula unquoted, data named as passed", {
  skip_if_no_dpstats()
  cars <- mtcars
  fit <- vertical_glm(mpg ~ wt + hp, cars, parties = parties)
  expect_true(is.call(fit$call))
  expect_identical(deparse(fit$call$formula), "mpg ~ wt + hp")
  expect_identical(fit$call$data, as.name("cars"))
  expect_match(paste(deparse(fit$call), collapse = " "), "^vertical_glm\\(formula = mpg ~ wt \\+ hp, data = cars, ")
  s <- suppressWarnings(dp_sis(mpg ~ ., data = cars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1, oc_trials = 0L))
  expect_identical(deparse(s$call, width.cutoff = 500L),
                   "dp_sis(formula = mpg ~ ., data = cars, eps = 1, k = 2, bounds = c(-500, 500), oc_trials = 0L, seed = 1)")
  expect_identical(s$py_call$formula, "mpg ~ .")  # Python's record of the call is kept
})

# ---- dp_glm: private logistic and Poisson regression that behaves like glm. At eps = Inf it is glm's
# fit (IRLS) and must answer glm's methods as glm does on R's data sets; a DP fit answers from its
# released coefficients, covariance and intervals and refuses the rest with the reason.
#
# dp_glm at eps = Inf runs glm.fit as glm() calls it (epsilon = 1e-8 on the deviance, the covariance from
# the last step's working weights), so coefficients, vcov, std.error, confint.default and the printed
# summary are compared with glm() as called, to 1e-10.

glm_cases <- list(
  list(f = case ~ age + parity + induced + spontaneous, data = infert, family = binomial),
  list(f = cbind(ncases, ncontrols) ~ agegp + alcgp, data = esoph, family = binomial),
  list(f = breaks ~ wool * tension, data = warpbreaks, family = poisson)
)

test_that("dp_glm takes family as glm does: a name, a family object, the function or a call", {
  skip_if_no_dpstats()
  f <- case ~ age + parity + induced + spontaneous
  ref <- coef(suppressWarnings(dp_glm(f, data = infert, eps = Inf)))
  fams <- list("binomial", binomial(), binomial, binomial(link = "logit"), binomial(link = logit))
  for (fam in fams) {
    expect_equal(coef(suppressWarnings(dp_glm(f, data = infert, eps = Inf, family = fam))), ref,
                 info = paste(deparse(fam), collapse = ""))
  }
  wp <- coef(glm(breaks ~ wool + tension, data = warpbreaks, family = poisson))
  for (fam in list("poisson", poisson(), poisson, poisson(link = "log"), poisson(link = log))) {
    fit <- suppressWarnings(dp_glm(breaks ~ wool + tension, data = warpbreaks, eps = Inf, family = fam))
    expect_equal(coef(fit), wp, tolerance = 1e-6)
    expect_identical(fit$outputs$family, "poisson")
  }
  expect_error(dp_glm(f, data = infert, eps = Inf, family = binomial("probit")), "canonical",
               class = "dpstats_argument_error")
  expect_error(dp_glm(breaks ~ wool, data = warpbreaks, eps = Inf, family = poisson(link = "sqrt")), "canonical",
               class = "dpstats_argument_error")
  expect_error(dp_glm(f, data = infert, eps = Inf, family = gaussian), "does not fit family = gaussian.*dp_lm\\(\\)",
               class = "dpstats_argument_error")
  expect_error(dp_glm(f, data = infert, eps = Inf, family = 1),
               "family must be one of the families dp_glm\\(\\) fits, binomial \\(logit link\\) and poisson \\(log link\\)",
               class = "dpstats_argument_error")
})

test_that("a family dp_glm does not fit is an argument error naming the families offered, before anything is spent", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 5, delta = 1e-5)
  offered <- "it offers binomial \\(logit link\\) and poisson \\(log link\\)"
  cases <- list(
    list(quote(dp_glm(breaks ~ wool + tension, data = warpbreaks, eps = 1, delta = 1e-6, family = "quasipoisson",
                      bounds = list(breaks = c(0, 80)), accountant = acc)), "quasipoisson.*poisson gives the same coefficients"),
    list(quote(dp_glm(breaks ~ wool + tension, data = warpbreaks, eps = 1, delta = 1e-6, family = quasipoisson(),
                      accountant = acc)), "quasipoisson"),
    list(quote(dp_glm(I(len > 20) ~ supp + dose, data = ToothGrowth, eps = 1, delta = 1e-6, family = quasibinomial,
                      accountant = acc)), "quasibinomial.*binomial gives the same coefficients"),
    list(quote(dp_glm(len ~ supp + dose, data = ToothGrowth, eps = 1, delta = 1e-6, family = Gamma, accountant = acc)),
         "family = Gamma"),
    list(quote(dp_glm(len ~ dose, data = ToothGrowth, eps = 1, delta = 1e-6, family = inverse.gaussian(), accountant = acc)),
         "family = inverse.gaussian"),
    list(quote(dp_glm(mpg ~ wt, data = mtcars, eps = 1, delta = 1e-6, family = "gaussian", accountant = acc)),
         "family = gaussian.*for a linear model use dp_lm\\(\\)"),
    list(quote(dp_glm(mpg ~ wt, data = mtcars, eps = Inf, family = "quasi")), "family = quasi")
  )
  for (case in cases) {
    e <- tryCatch(eval(case[[1]]), error = identity)
    expect_s3_class(e, "dpstats_argument_error")
    expect_match(conditionMessage(e), case[[2]], info = deparse(case[[1]])[1])
    expect_match(conditionMessage(e), offered, info = deparse(case[[1]])[1])
    expect_match(conditionMessage(e), "given as a family object \\(binomial\\(\\)\\), the function \\(binomial\\) or its name")
    expect_identical(conditionCall(e)[[1]], as.name("dp_glm"))
  }
  expect_identical(nrow(ledger(acc)), 0L)  # refused before any data was read or any budget spent
  # dp_select_infer(infer = "glm") and dp_plan take family as dp_glm does; vertical_glm offers gaussian too
  expect_error(dp_select_infer(mpg ~ wt + hp, data = mtcars, eps = 1, delta = 1e-6, infer = "glm", family = quasipoisson),
               offered, class = "dpstats_argument_error")
  expect_error(dp_plan("dp_glm", n = 500, p = 3, eps = 1, delta = 1e-6, family = "quasibinomial"), offered,
               class = "dpstats_argument_error")
  expect_error(vertical_glm(breaks ~ wool + tension, data = warpbreaks, parties = list(a = "wool", b = "tension"),
                            family = quasipoisson),
               "vertical_glm\\(\\) does not fit family = quasipoisson: it offers gaussian \\(identity link\\), binomial \\(logit link\\) and poisson",
               class = "dpstats_argument_error")
})

test_that("at eps = Inf dp_glm answers glm's methods as glm does on infert, esoph and warpbreaks", {
  skip_if_no_dpstats()
  for (case in glm_cases) {
    info <- deparse(case$f)
    fit <- suppressWarnings(dp_glm(case$f, data = case$data, eps = Inf, family = case$family))
    ref <- glm(case$f, data = case$data, family = case$family)  # glm.fit's own stopping rule and covariance
    expect_s3_class(fit, "dp_glm")
    expect_equal(coef(fit), coef(ref), tolerance = 1e-10, info = info)
    expect_equal(vcov(fit), vcov(ref), tolerance = 1e-10, info = info)
    expect_true(isTRUE(all.equal(confint(fit), confint.default(ref), tolerance = 1e-10)), info = info)
    expect_true(isTRUE(all.equal(confint(fit, 2, level = 0.9), confint.default(ref, 2, level = 0.9),
                                 tolerance = 1e-10)), info = info)
    nd <- case$data[c(2, 9, 17), ]
    expect_equal(predict(fit, nd), predict(ref, nd), tolerance = 1e-6, info = info)  # names kept
    expect_equal(predict(fit, nd, type = "link"), predict(ref, nd, type = "link"), tolerance = 1e-6, info = info)
    expect_equal(predict(fit, newdata = nd, type = "response"), predict(ref, nd, type = "response"),
                 tolerance = 1e-6, info = info)
    expect_equal(predict(fit), predict(ref), tolerance = 1e-6, info = info)
    expect_equal(predict(fit, type = "response"), predict(ref, type = "response"), tolerance = 1e-6, info = info)
    expect_equal(fitted(fit), fitted(ref), tolerance = 1e-6, info = info)
    for (type in c("deviance", "pearson", "working", "response")) {
      expect_equal(residuals(fit, type = type), residuals(ref, type = type), tolerance = 1e-6,
                   info = paste(info, type))
    }
    expect_equal(deviance(fit), deviance(ref), tolerance = 1e-6, info = info)
    expect_equal(logLik(fit), logLik(ref), tolerance = 1e-6, info = info)
    expect_equal(AIC(fit), AIC(ref), tolerance = 1e-6, info = info)
    expect_equal(BIC(fit), BIC(ref), tolerance = 1e-6, info = info)
    expect_identical(df.residual(fit), df.residual(ref), info = info)
    expect_identical(nobs(fit), nobs(ref), info = info)
    expect_identical(formula(fit), formula(ref), info = info)
    expect_true(isTRUE(all.equal(model.matrix(fit), model.matrix(ref))), info = info)

    # summary laid out as summary.glm's: z values, dispersion 1, deviances, AIC, Fisher scoring iterations
    out <- capture.output(print(summary(fit)))
    sref <- capture.output(print(summary(ref)))  # glm's own lines
    head <- grep("Estimate Std. Error z value Pr\\(>\\|z\\|\\)", out)
    expect_length(head, 1L)
    rows <- out[head + seq_along(coef(ref))]
    rref <- sref[grep("Estimate", sref) + seq_along(coef(ref))]
    expect_identical(rows, rref, info = info)  # the same coefficient lines, digit for digit
    fam <- if (identical(case$family, poisson)) "poisson" else "binomial"
    expect_true(sprintf("(Dispersion parameter for %s family taken to be 1)", fam) %in% out, info = info)
    for (what in c("Null deviance:", "Residual deviance:", "AIC:")) {  # as print.summary.glm formats them
      expect_identical(grep(what, out, fixed = TRUE, value = TRUE), grep(what, sref, fixed = TRUE, value = TRUE),
                       info = paste(info, what))
    }
    expect_true(any(grepl("^Intervals \\(0.95\\): Wald.*confint\\(glm\\) profiles", out)), info = info)
    expect_true(sprintf("Number of Fisher Scoring iterations: %d", ref$iter) %in% out, info = info)
  }
})

test_that("dp_glm's tidy() and glance() carry broom's columns and, at eps = Inf, broom's values", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  for (case in glm_cases) {
    info <- deparse(case$f)
    fit <- suppressWarnings(dp_glm(case$f, data = case$data, eps = Inf, family = case$family))
    ref <- glm(case$f, data = case$data, family = case$family)
    bt <- broom::tidy(ref)  # broom's conf.int profiles (confint.glm); dp_glm's intervals are Wald
    td <- tidy(fit)
    expect_identical(names(td)[seq_along(bt)], names(bt), info = info)
    expect_equal(as.data.frame(td[names(bt)]), as.data.frame(bt), tolerance = 1e-10, info = info)
    ci <- confint.default(ref)
    expect_equal(unname(cbind(td$conf.low, td$conf.high)), unname(ci), tolerance = 1e-10, info = info)
    bg <- broom::glance(glm(case$f, data = case$data, family = case$family))
    gl <- glance(fit)
    expect_identical(names(gl)[seq_along(bg)], names(bg), info = info)
    expect_equal(as.data.frame(gl[names(bg)]), as.data.frame(bg), tolerance = 1e-6, info = info)
  }
})

test_that("a DP dp_glm prints, answers from what it released and refuses the rest, saying why", {
  skip_if_no_dpstats()
  set.seed(11)
  n <- 20000
  d <- data.frame(x1 = runif(n, -1, 1), x2 = rbinom(n, 1, 0.4))
  d$y <- rbinom(n, 1, plogis(-0.3 + d$x1 - 0.5 * d$x2))
  b <- list(x1 = c(-1, 1), x2 = c(0, 1))
  fit <- dp_glm(y ~ x1 + x2, data = d, eps = 2, delta = 1e-6, family = binomial, bounds = b, seed = 1)
  expect_s3_class(fit, c("dp_glm", "dp_result"))
  expect_equal(unname(coef(fit)), c(-0.3, 1, -0.5), tolerance = 0.15)
  out <- capture.output(print(fit))
  expect_true(any(grepl("(2, 1e-06)-DP", out, fixed = TRUE)))
  expect_true(any(grepl("Deviances and AIC: not released", out, fixed = TRUE)))
  expect_true(any(grepl("Estimate Std. Error z value Pr(>|z|)", out, fixed = TRUE)))
  expect_true(any(grepl("Noisy Newton steps: 7", out, fixed = TRUE)))  # pilot_steps = 6 and the final step
  expect_false(any(grepl("Residual deviance", out)))
  expect_true(any(grepl("^Ledger:", capture.output(print(summary(fit))))))
  td <- tidy(fit)
  expect_identical(names(td)[1:7], c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"))
  expect_true(all(td$conf.low < td$estimate & td$estimate < td$conf.high))
  gl <- glance(fit)
  expect_true(is.na(gl$deviance) && is.na(gl$logLik) && is.na(gl$AIC))
  expect_identical(gl$nobs, 20000L)  # n is public under replace-one-row
  # Wald intervals: confint(level =) rescales the released standard errors
  se <- stats::setNames(td$std.error, td$term)
  expect_equal(confint(fit, level = 0.9)[, 2], coef(fit) + qnorm(0.95) * se, ignore_attr = TRUE)
  expect_equal(vcov(fit), vcov(fit)[names(coef(fit)), names(coef(fit))])
  expect_equal(sqrt(diag(vcov(fit))), se, tolerance = 1e-10)
  nd <- d[1:3, ]
  p <- predict(fit, nd)
  expect_identical(names(p), rownames(nd))
  expect_equal(unname(p), unname(coef(fit)[1] + coef(fit)[2] * nd$x1 + coef(fit)[3] * nd$x2), tolerance = 1e-10)
  expect_equal(predict(fit, nd, type = "response"), plogis(p))
  expect_identical(nobs(fit), 20000L)
  expect_identical(df.residual(fit), 19997L)
  expect_error(fitted(fit), "per-row", class = "dpstats_not_released_error")
  expect_error(residuals(fit), "per-row", class = "dpstats_not_released_error")
  expect_error(predict(fit), "newdata", class = "dpstats_not_released_error")
  expect_error(deviance(fit), "not released", class = "dpstats_not_released_error")
  expect_error(logLik(fit), "not released", class = "dpstats_not_released_error")
  expect_error(AIC(fit), "not released", class = "dpstats_not_released_error")
  expect_error(BIC(fit), "not released", class = "dpstats_not_released_error")
  expect_error(sigma(fit), "not released", class = "dpstats_not_released_error")
  expect_error(model.matrix(fit), "row-level", class = "dpstats_not_released_error")
  expect_error(anova(fit), "raw data", class = "dpstats_not_released_error")
})

test_that("a DP dp_glm whose intervals could not cover is refused before anything is spent", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 5, delta = 1e-5)
  expect_error(dp_glm(case ~ age + parity, data = infert, eps = 1, delta = 1e-6, family = binomial(),
                      bounds = list(age = c(20, 45), parity = c(1, 6)), accountant = acc),
               "Nothing was spent", class = "dpstats_assumption_error")
  expect_true(any(grepl("nothing spent yet", capture.output(print(acc)))))
  expect_error(dp_glm(case ~ age, data = infert, eps = 1, family = binomial), "delta > 0",
               class = "dpstats_privacy_parameter_error")
})

test_that("broom::tidy(exponentiate = TRUE) as broom's tidy.glm; family() is glm's family object", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  ref <- glm(am ~ wt + hp, binomial, mtcars)
  fit <- suppressWarnings(dp_glm(am ~ wt + hp, mtcars, family = binomial, eps = Inf))
  te <- broom::tidy(fit, exponentiate = TRUE)
  tr <- broom::tidy(ref, exponentiate = TRUE)
  for (col in c("estimate", "std.error", "statistic", "p.value")) {  # std.error stays on the link scale
    expect_equal(te[[col]], tr[[col]], tolerance = 1e-6, label = col)
  }
  wald <- exp(confint.default(ref))  # dp_glm's intervals are Wald intervals
  expect_equal(unname(cbind(te$conf.low, te$conf.high)), unname(wald), tolerance = 1e-6)
  plain <- broom::tidy(fit)
  expect_equal(te$std.error, plain$std.error)
  expect_false("conf.low" %in% names(broom::tidy(fit, exponentiate = TRUE, conf.int = FALSE)))
  expect_equal(broom::tidy(fit, exponentiate = TRUE, conf.level = 0.9)$conf.low,
               unname(exp(confint.default(ref, level = 0.9))[, 1]), tolerance = 1e-6)
  # a DP fit: post-processing of the released estimates and intervals
  b <- list(wt = c(1, 6), hp = c(50, 350))
  big <- mtcars[rep(seq_len(32), 200), ]
  dp <- dp_glm(am ~ wt + hp, big, family = binomial, eps = 5, delta = 1e-6, bounds = b, seed = 1)
  expect_equal(broom::tidy(dp, exponentiate = TRUE)$estimate, exp(coef(dp)), ignore_attr = TRUE)
  expect_equal(broom::tidy(dp, exponentiate = TRUE)$conf.high, exp(broom::tidy(dp)$conf.high))
  expect_error(broom::tidy(dp, exponentiate = NA), class = "dpstats_argument_error")
  expect_identical(family(fit)$family, family(ref)$family)
  expect_identical(family(fit)$link, "logit")
  expect_s3_class(family(dp), "family")
  pf <- suppressWarnings(dp_glm(carb ~ wt, mtcars, family = poisson, eps = Inf))
  expect_identical(family(pf)$link, family(glm(carb ~ wt, poisson, mtcars))$link)
  sis <- dp_sis(mpg ~ ., mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)
  expect_error(family(sis), class = "dpstats_argument_error")
  expect_error(broom::tidy(sis, exponentiate = TRUE), class = "dpstats_argument_error")
})

test_that("confint() on a dp_glm fit says in a message which intervals it gives: Wald, not profile", {
  # R's confint() of a glm says at run time that it profiles; dp_glm's intervals are Wald intervals
  skip_if_no_dpstats()
  ref <- glm(am ~ wt + hp, binomial, mtcars)
  fit <- suppressWarnings(dp_glm(am ~ wt + hp, mtcars, family = binomial, eps = Inf))
  expect_message(ci <- confint(fit), "Wald intervals (estimate +/- z * std. error, as confint.default())", fixed = TRUE)
  expect_equal(ci, confint.default(ref), tolerance = 1e-6)
  set.seed(1)
  n <- 20000
  df <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  df$y <- rbinom(n, 1, plogis(-0.3 + df$x1 - df$x2))
  b <- list(x1 = c(-1, 1), x2 = c(-1, 1))
  dp <- dp_glm(y ~ x1 + x2, df, family = binomial, eps = 1, delta = 1e-6, bounds = b, seed = 1)
  expect_message(ci <- confint(dp, level = 0.9), "Wald intervals of the private fit", fixed = TRUE)
  se <- tidy(dp)$std.error
  expect_false(anyNA(se))  # the intervals are shown (not withheld) on this fit
  expect_equal(unname(ci[, 2]), unname(coef(dp) + qnorm(0.95) * se))
  expect_silent(suppressMessages(confint(dp)))  # a message, not a warning: suppressMessages() silences it
  expect_silent(tidy(dp, conf.level = 0.9))  # tidy() recomputes the intervals without it
})
