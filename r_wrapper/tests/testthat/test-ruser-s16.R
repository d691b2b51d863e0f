# The outside R user's audit s16-rusers3 (F01-F10). Oracles: R's lm, glm, summary.lm, summary.glm,
# step, drop1, anova and broom on R's data sets.

ff <- function(x) tryCatch(x, error = function(e) e)
inf_lm <- function(...) suppressWarnings(dp_lm(..., eps = Inf))
inf_glm <- function(...) suppressWarnings(dp_glm(..., eps = Inf))
cars_bounds <- list(mpg = c(10, 35), wt = c(1, 6), hp = c(50, 350), qsec = c(14, 23))
private_lm <- function(f, seed = 1) suppressWarnings(dp_lm(f, mtcars, eps = 2, delta = 1e-5, bounds = cars_bounds,
                                                         seed = seed))
# a simulated logistic model large enough for a private fit at eps = 1
logistic_rows <- function() {
  set.seed(1)
  d <- data.frame(x = runif(20000, -1, 1))
  d$y <- rbinom(20000, 1, plogis(d$x))
  d
}
private_glm <- function() {
  suppressWarnings(dp_glm(y ~ x, logistic_rows(), eps = 1, delta = 1e-6, family = binomial,
                          bounds = list(x = c(-1, 1)), seed = 1))
}

# F01: the intercept-only model, which step(), drop1() and anova(null, fit) refit.
test_that("y ~ 1 at eps = Inf is lm's and glm's null model, and step(), drop1(), anova(null, fit) run as R's", {
  skip_if_no_dpstats()
  f0 <- inf_lm(mpg ~ 1, mtcars)
  l0 <- lm(mpg ~ 1, mtcars)
  expect_equal(coef(f0), coef(l0), tolerance = 1e-10)
  expect_equal(coef(summary(f0)), coef(summary(l0)), tolerance = 1e-8)
  expect_equal(c(sigma(f0), deviance(f0), AIC(f0)), c(sigma(l0), deviance(l0), AIC(l0)), tolerance = 1e-10)
  expect_equal(summary(f0)$r.squared, summary(l0)$r.squared)
  expect_null(summary(f0)$fstatistic)  # summary.lm has no F test for y ~ 1
  g0 <- inf_glm(am ~ 1, mtcars, family = binomial)
  r0 <- glm(am ~ 1, binomial, mtcars)
  expect_equal(coef(g0), coef(r0), tolerance = 1e-8)
  expect_equal(c(deviance(g0), AIC(g0)), c(deviance(r0), AIC(r0)), tolerance = 1e-8)

  # step() and drop1() refit through the call: the fits are made here, data = mtcars in their calls
  st <- suppressWarnings(step(dp_lm(mpg ~ wt + drat, mtcars, eps = Inf), trace = 0))
  expect_identical(formula(st), formula(step(lm(mpg ~ wt + drat, mtcars), trace = 0)))
  d1 <- suppressWarnings(drop1(dp_lm(mpg ~ wt, mtcars, eps = Inf), test = "F"))
  r1 <- drop1(lm(mpg ~ wt, mtcars), test = "F")
  expect_equal(as.data.frame(d1), as.data.frame(r1), tolerance = 1e-8, ignore_attr = TRUE)
  a <- anova(f0, inf_lm(mpg ~ wt, mtcars))
  expect_equal(as.data.frame(a), as.data.frame(anova(l0, lm(mpg ~ wt, mtcars))), tolerance = 1e-8,
               ignore_attr = TRUE)
  g1 <- suppressWarnings(drop1(dp_glm(am ~ wt, mtcars, eps = Inf, family = binomial), test = "Chisq"))
  expect_equal(as.data.frame(g1), as.data.frame(drop1(glm(am ~ wt, binomial, mtcars), test = "Chisq")),
               tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("a private y ~ 1 is refused before anything is spent, saying it is fitted at eps = Inf", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 10, delta = 1e-3)
  err <- ff(dp_lm(mpg ~ 1, mtcars, eps = 2, delta = 1e-5, bounds = cars_bounds, accountant = acc))
  expect_s3_class(err, "dpstats_data_error")
  expect_match(conditionMessage(err), "the intercept-only model has no private fit", fixed = TRUE)
  expect_match(conditionMessage(err), "Fit it at eps = Inf (not private): there it is lm(y ~ 1)", fixed = TRUE)
  expect_equal(nrow(ledger(acc)), 0L)
})

# F02: offset() in a dp_lm formula at eps = Inf.
test_that("dp_lm with offset() at eps = Inf keeps lm's per-row methods, equal to lm's", {
  skip_if_no_dpstats()
  f <- mpg ~ wt + offset(hp / 10)
  fit <- inf_lm(f, mtcars)
  ref <- lm(f, mtcars)
  expect_equal(fitted(fit), fitted(ref), tolerance = 1e-10)  # with the offset, as lm's
  expect_equal(residuals(fit), residuals(ref), tolerance = 1e-10)
  expect_equal(c(sigma(fit), deviance(fit), AIC(fit), BIC(fit)), c(sigma(ref), deviance(ref), AIC(ref), BIC(ref)),
               tolerance = 1e-10)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-10)
  expect_equal(unname(model.matrix(fit)), unname(model.matrix(ref)), ignore_attr = TRUE)
  expect_equal(as.data.frame(anova(fit)), as.data.frame(anova(ref)), tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(predict(fit), predict(ref), tolerance = 1e-10)
  aug <- augment(fit)
  ra <- broom::augment(ref)
  for (col in c(".fitted", ".resid", ".hat", ".sigma", ".cooksd", ".std.resid")) {
    expect_equal(aug[[col]], unname(ra[[col]]), tolerance = 1e-8, label = col)
  }
})

test_that("with offset() summary's R-squared and F are R >= 4.3.0's (PR#18008): of the fitted values less the offset", {
  skip_if_no_dpstats()
  f <- mpg ~ wt + offset(hp / 10)
  s <- summary(inf_lm(f, mtcars))
  ref <- lm(f, mtcars)
  if (getRversion() >= "4.3.0") {
    want <- summary(ref)[c("r.squared", "adj.r.squared", "fstatistic")]
  } else {  # R 4.2's summary.lm left the offset in the fitted values; R 4.3.0's rule, from lm's own parts
    fv <- fitted(ref) - ref$offset
    mss <- sum((fv - mean(fv))^2)
    rss <- sum(residuals(ref)^2)
    r2 <- mss / (mss + rss)
    want <- list(r.squared = r2, adj.r.squared = 1 - (1 - r2) * 31 / 30,
                 fstatistic = c(value = mss / (rss / 30), numdf = 1, dendf = 30))
  }
  expect_equal(s$r.squared, want$r.squared, tolerance = 1e-10)
  expect_equal(s$adj.r.squared, want$adj.r.squared, tolerance = 1e-10)
  expect_equal(s$fstatistic, want$fstatistic, tolerance = 1e-10)
  expect_equal(glance(inf_lm(f, mtcars))$r.squared, want$r.squared, tolerance = 1e-10)
  # without an offset both rules are the same: R 4.2's summary.lm is the oracle there
  expect_equal(summary(inf_lm(mpg ~ wt, mtcars))$r.squared, summary(lm(mpg ~ wt, mtcars))$r.squared, tolerance = 1e-10)
})

# F07: C(f, sum) in the formula.
test_that("C(f, sum) in the formula at eps = Inf keeps lm's methods, equal to lm's", {
  skip_if_no_dpstats()
  fit <- inf_lm(weight ~ C(feed, sum), chickwts)
  ref <- lm(weight ~ C(feed, sum), chickwts)
  expect_equal(fitted(fit), fitted(ref), tolerance = 1e-10)
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-10)
  expect_equal(unname(model.matrix(fit)), unname(model.matrix(ref)), ignore_attr = TRUE)
  expect_identical(colnames(model.matrix(fit)), colnames(model.matrix(ref)))
  expect_equal(as.data.frame(anova(fit)), as.data.frame(anova(ref)), tolerance = 1e-8, ignore_attr = TRUE)
  g <- inf_glm(count ~ C(spray, helmert), InsectSprays, family = poisson)
  r <- glm(count ~ C(spray, helmert), poisson, InsectSprays)
  expect_equal(fitted(g), fitted(r), tolerance = 1e-8)
})

# F03: dp_glm's fill of a missing response.
test_that("dp_glm fills a missing response with the midpoint of its range, and keeps glm's methods", {
  skip_if_no_dpstats()
  ins <- InsectSprays
  ins$count[c(1, 20, 40)] <- NA
  fit <- suppressWarnings(dp_glm(count ~ spray, ins, eps = Inf, family = poisson, na_action = "fill",
                                 bounds = list(count = c(0, 30))))
  filled <- ins
  filled$count[is.na(filled$count)] <- 15
  ref <- glm(count ~ spray, poisson, filled)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-7)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-7)  # the frame rebuilt with the fill
  cars <- mtcars
  cars$am[c(1, 20, 30)] <- NA
  bin <- suppressWarnings(dp_glm(am ~ wt, cars, eps = Inf, family = binomial, na_action = "fill"))
  cars$am[c(1, 20, 30)] <- 0.5
  rb <- suppressWarnings(glm(am ~ wt, binomial, cars))  # glm warns of the non-integer successes
  expect_equal(coef(bin), coef(rb), tolerance = 1e-7)
  expect_equal(unname(residuals(bin)), unname(residuals(rb)), tolerance = 1e-7)
})

# F04: a private fit keeps declared levels; the subset= refusal and ?dp_lm say so and how to drop them.
test_that("the private subset= refusal says levels are kept as declared and how to drop a known-empty one", {
  skip_if_no_dpstats()
  b <- list(Sepal.Length = c(4, 8), Petal.Length = c(1, 7))
  err <- ff(dp_lm(Sepal.Length ~ Petal.Length + Species, iris, subset = Species != "setosa", eps = 50,
                  delta = 1e-5, bounds = b, seed = 1))
  expect_s3_class(err, "dpstats_privacy_parameter_error")
  msg <- conditionMessage(err)
  expect_match(msg, "A private fit keeps each factor's levels as declared", fixed = TRUE)
  expect_match(msg, "factor(x, levels = c(...))", fixed = TRUE)
  expect_match(msg, "droplevels(d[rows, ]) does it too, but reads the rows", fixed = TRUE)
  # the advice works: the baseline is then versicolor, as lm's
  ir <- iris[iris$Species != "setosa", ]
  ir$Species <- factor(ir$Species, levels = c("versicolor", "virginica"))
  fit <- suppressWarnings(dp_lm(Sepal.Length ~ Petal.Length + Species, ir, eps = 50, delta = 1e-5, bounds = b,
                                seed = 1))
  expect_identical(names(coef(fit)), names(coef(lm(Sepal.Length ~ Petal.Length + Species, ir))))
  for (page in c("dp_lm.Rd", "dp_glm.Rd")) {
    help <- gsub("\\s+", " ", paste(utils::capture.output(tools::Rd2txt(tools::Rd_db("dpstats")[[page]])),
                                     collapse = " "))
    expect_match(help, "A private fit keeps each factor's levels as declared", fixed = TRUE, info = page)
    expect_match(help, "'droplevels()' does it too but reads the rows", fixed = TRUE, info = page)
    expect_match(help, "taken from 'data' only, not from the formula's environment", fixed = TRUE, info = page)
  }
})

# F05: lm's and glm's list components.
test_that("lm's components read with $ and [[ ]] at eps = Inf equal lm's, summary's too", {
  skip_if_no_dpstats()
  fit <- inf_lm(mpg ~ wt + factor(cyl) + offset(hp / 100), mtcars)
  ref <- lm(mpg ~ wt + factor(cyl) + offset(hp / 100), mtcars)
  for (nm in c("coefficients", "residuals", "fitted.values", "df.residual", "rank", "xlevels", "offset", "assign",
               "contrasts", "effects")) {
    expect_equal(fit[[nm]], ref[[nm]], tolerance = 1e-8, label = nm)
    expect_equal(eval(call("$", quote(fit), nm)), ref[[nm]], tolerance = 1e-8, label = paste0("$", nm))
  }
  expect_equal(fit$qr$qr, ref$qr$qr, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(fit$qr[c("qraux", "pivot", "tol", "rank")], ref$qr[c("qraux", "pivot", "tol", "rank")],
               tolerance = 1e-8)
  expect_equal(fit$model, ref$model, ignore_attr = TRUE)
  expect_equal(fit$coefficients["wt"], ref$coefficients["wt"], tolerance = 1e-10)
  s <- summary(fit)
  sr <- summary(ref)
  for (nm in c("residuals", "aliased", "cov.unscaled", "df", "sigma")) {
    expect_equal(s[[nm]], sr[[nm]], tolerance = 1e-8, label = nm)
  }
  expect_identical(s$call, fit$call)
  expect_equal(s$terms, terms(ref), ignore_attr = TRUE)
  # the fields the result holds keep their names; names() and str() are untouched
  expect_identical(fit$terms, c("(Intercept)", "wt", "factor(cyl)6", "factor(cyl)8"))
  expect_false("coefficients" %in% names(fit))
  expect_silent(utils::capture.output(str(fit, max.level = 1)))
  # na.exclude: the components are of the rows used, residuals() padded, as lm's
  ex <- suppressWarnings(dp_lm(Ozone ~ Wind, airquality, eps = Inf, na.action = na.exclude))
  rex <- lm(Ozone ~ Wind, airquality, na.action = na.exclude)
  expect_equal(residuals(ex), residuals(rex), tolerance = 1e-8)
  expect_equal(ex$residuals, rex$residuals, tolerance = 1e-8)
  expect_equal(fitted(ex), fitted(rex), tolerance = 1e-8)
  expect_equal(predict(ex, se.fit = TRUE)$se.fit, predict(rex, se.fit = TRUE)$se.fit, tolerance = 1e-8,
               ignore_attr = "names")  # padded as predict.lm's (which leaves these unnamed)
  expect_equal(ex$na.action, rex$na.action, ignore_attr = TRUE)
  expect_s3_class(ex$na.action, "exclude")
  expect_equal(deviance(ex), deviance(rex), tolerance = 1e-10)
  expect_equal(AIC(ex), AIC(rex), tolerance = 1e-10)
})

test_that("glm's components at eps = Inf equal glm's", {
  skip_if_no_dpstats()
  fit <- inf_glm(cbind(ncases, ncontrols) ~ agegp + alcgp, esoph, family = binomial)
  ref <- glm(cbind(ncases, ncontrols) ~ agegp + alcgp, binomial, esoph)
  for (nm in c("coefficients", "residuals", "fitted.values", "linear.predictors", "y", "prior.weights", "rank",
               "deviance", "aic", "null.deviance", "df.residual", "df.null", "iter", "xlevels", "contrasts")) {
    expect_equal(fit[[nm]], ref[[nm]], tolerance = 1e-6, label = nm)
  }
  expect_equal(fit$family$family, "binomial")
  expect_equal(abs(qr.R(fit$qr)), abs(qr.R(ref$qr)), tolerance = 1e-5, ignore_attr = TRUE)
  s <- summary(fit)
  sr <- summary(ref)
  for (nm in c("deviance.resid", "aliased", "cov.unscaled", "cov.scaled", "df", "iter")) {
    expect_equal(s[[nm]], sr[[nm]], tolerance = 1e-6, label = nm)
  }
})

test_that("a DP fit's components give what is released and refuse the rest naming the generic, never NULL", {
  skip_if_no_dpstats()
  fit <- private_lm(mpg ~ wt + hp)
  expect_identical(fit$coefficients, coef(fit))
  expect_identical(fit$df.residual, 29L)
  expect_identical(fit$rank, 3L)
  expect_null(fit$offset)  # a private fit has no offset (offset() is refused there), as lm without one
  for (nm in c("residuals", "fitted.values", "model", "qr", "effects", "na.action", "xlevels", "assign")) {
    err <- ff(eval(call("$", quote(fit), nm)))
    expect_s3_class(err, "dpstats_not_released_error")
    expect_match(conditionMessage(err), paste0("fit$", nm, " (lm's component: "), fixed = TRUE)
    expect_identical(ff(fit[[nm]])$message, err$message)
  }
  expect_match(ff(fit$residuals)$message, "residuals(fit) here) is not available for a DP fit", fixed = TRUE)
  s <- summary(fit)
  expect_identical(nrow(coef(s)), 3L)
  for (nm in c("residuals", "cov.unscaled")) {
    expect_error(eval(call("$", quote(s), nm)), class = "dpstats_not_released_error")
    expect_error(s[[nm]], class = "dpstats_not_released_error")
  }
  expect_identical(s$call, fit$call)
  g <- private_glm()
  expect_identical(g$family$family, "binomial")
  expect_equal(summary(g)$cov.unscaled, vcov(g))
  for (nm in c("deviance", "aic", "null.deviance", "y", "linear.predictors")) {
    expect_error(eval(call("$", quote(g), nm)), class = "dpstats_not_released_error")
  }
  expect_error(summary(g)$deviance.resid, class = "dpstats_not_released_error")
})

# F06: AIC/BIC/logLik of a private dp_lm are refused, as a private dp_glm's.
test_that("logLik(), AIC(), BIC() of a private dp_lm are refused as a private dp_glm's, saying what to use", {
  skip_if_no_dpstats()
  f1 <- private_lm(mpg ~ wt)
  f2 <- private_lm(mpg ~ wt + hp, seed = 4)
  for (g in list(logLik, AIC, BIC)) expect_error(g(f1), class = "dpstats_not_released_error")
  err <- ff(AIC(f1, f2))
  expect_s3_class(err, "dpstats_not_released_error")
  expect_match(conditionMessage(err), "AIC() and BIC() would rank noise", fixed = TRUE)
  expect_match(conditionMessage(err), "Instead: compare terms with confint(fit) or tidy(fit)", fixed = TRUE)
  expect_true(all(is.na(unlist(glance(f1)[c("logLik", "AIC", "BIC")]))))
  expect_true(is.finite(deviance(f1)))  # the residual sum of squares from the released sigma stays
  gerr <- ff(AIC(private_glm()))
  expect_match(conditionMessage(gerr), "Instead: compare terms with confint(fit) or tidy(fit)", fixed = TRUE)
})

# F08: aliased rows.
test_that("coef(summary(fit)) drops aliased rows as summary.lm's and summary.glm's; $aliased names them", {
  skip_if_no_dpstats()
  fit <- inf_lm(mpg ~ wt + I(2 * wt) + hp, mtcars)
  ref <- lm(mpg ~ wt + I(2 * wt) + hp, mtcars)
  expect_equal(coef(summary(fit)), coef(summary(ref)), tolerance = 1e-8)
  expect_identical(summary(fit)$aliased, summary(ref)$aliased)
  expect_identical(summary(fit)$df, summary(ref)$df)
  expect_identical(rownames(coef(summary(fit))), names(which(!is.na(coef(fit)))))
  g <- inf_glm(breaks ~ wool * tension + I(2 * (wool == "B")), warpbreaks, family = poisson)
  rg <- glm(breaks ~ wool * tension + I(2 * (wool == "B")), poisson, warpbreaks)
  expect_equal(coef(summary(g)), coef(summary(rg)), tolerance = 1e-6)
  expect_identical(summary(g)$aliased, summary(rg)$aliased)
  # the printed summary still shows the NA row, as print.summary.lm does
  expect_true(any(grepl("^I\\(2 \\* wt\\) +NA", capture.output(summary(fit)))))
})

# F09: summary's residuals block; a private fit's note on missing values.
test_that("summary() at eps = Inf prints summary.lm's Residuals: and summary.glm's Deviance Residuals: blocks", {
  skip_if_no_dpstats()
  block <- function(out, head) out[seq(grep(head, out), length.out = 3)]
  a <- capture.output(summary(inf_lm(mpg ~ wt, mtcars)))
  b <- capture.output(summary(lm(mpg ~ wt, mtcars)))
  expect_identical(block(a, "^Residuals:$"), block(b, "^Residuals:$"))
  expect_identical(a[grep("^Residuals:$", a) + 3], "")  # a blank line before Coefficients:, as lm's
  few <- mtcars[1:6, ]  # 4 residual df: each residual, as print.summary.lm shows them
  a <- capture.output(summary(inf_lm(mpg ~ wt, few)))
  b <- capture.output(summary(lm(mpg ~ wt, few)))
  expect_identical(block(a, "^Residuals:$"), block(b, "^Residuals:$"))
  a <- capture.output(summary(inf_glm(am ~ wt, mtcars, family = binomial)))
  b <- capture.output(summary(glm(am ~ wt, binomial, mtcars)))
  if (any(grepl("^Deviance Residuals:", b))) {  # R < 4.3.0
    expect_identical(block(a, "^Deviance Residuals:"), block(b, "^Deviance Residuals:"))
  } else {
    expect_true(any(grepl("^Deviance Residuals: $", a)))
  }
  expect_false(any(grepl("Residuals:", capture.output(summary(private_lm(mpg ~ wt))))))
})

test_that("a private fit's note on missing values is one sentence, wrapped as one paragraph", {
  skip_if_no_dpstats()
  p <- capture.output(print(private_lm(mpg ~ wt)))
  i <- grep("^Missing values", p)
  j <- grep("^Privacy:", p)
  expect_length(i, 1L)
  expect_true(j > i + 1L)
  expect_true(all(startsWith(p[(i + 1L):(j - 1L)], "  ")))  # continuation lines indented, none at column 0
  expect_match(paste(p[i:(j - 1L)], collapse = " "), "not released): filled values pull the estimates", fixed = TRUE)
})

# F10: at eps = Inf, lm's own rules; refusals in the words that apply.
test_that("at eps = Inf na.exclude and na.fail work as in lm; a private fit still refuses them with its reason", {
  skip_if_no_dpstats()
  ex <- suppressWarnings(dp_glm(I(Ozone > 60) ~ Wind, airquality, eps = Inf, family = binomial,
                                na.action = na.exclude))
  rex <- glm(I(Ozone > 60) ~ Wind, binomial, airquality, na.action = na.exclude)
  expect_equal(residuals(ex), residuals(rex), tolerance = 1e-6)
  expect_equal(predict(ex), predict(rex), tolerance = 1e-6)
  expect_length(fitted(ex), nrow(airquality))
  err <- ff(suppressWarnings(dp_lm(Ozone ~ Wind, airquality, eps = Inf, na.action = na.fail)))
  expect_s3_class(err, "dpstats_data_error")
  expect_match(conditionMessage(err), "missing values in object", fixed = TRUE)
  old <- options(na.action = "na.fail")
  on.exit(options(old))
  expect_error(suppressWarnings(dp_lm(Ozone ~ Wind, airquality, eps = Inf)), "missing values in object",
               class = "dpstats_data_error")
  ok <- suppressWarnings(dp_lm(mpg ~ wt, mtcars, eps = Inf))  # nothing missing: lm's fit
  expect_equal(coef(ok), coef(lm(mpg ~ wt, mtcars)), tolerance = 1e-10)
  options(old)
  b <- list(Ozone = c(0, 170), Wind = c(0, 21))
  err <- ff(dp_lm(Ozone ~ Wind, airquality, eps = 1, delta = 1e-5, bounds = b, na.action = na.exclude))
  expect_match(conditionMessage(err), "a DP fit releases no per-row values", fixed = TRUE)
})

test_that("weights = is refused in the words that apply, and dp_glm points to cbind(successes, failures)", {
  skip_if_no_dpstats()
  err <- ff(dp_glm(I(ncases / (ncases + ncontrols)) ~ agegp, esoph, eps = Inf, family = binomial,
                   weights = ncases + ncontrols))
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), "fit cbind(successes, failures) ~ x", fixed = TRUE)
  expect_match(conditionMessage(err), "at eps = Inf it is the reference fit of the private one", fixed = TRUE)
  err <- ff(dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = cars_bounds, weights = hp))
  expect_match(conditionMessage(err), "the privacy unit is one row", fixed = TRUE)
  expect_false(grepl("cbind", conditionMessage(err)))
})
