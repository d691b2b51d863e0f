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
