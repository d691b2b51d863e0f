# anova() of a dp_glm (R-user audit F09). A DP fit releases no deviance, so anova is refused, naming
# glm(..., family = ) as the non-private reference (not lm). At eps = Inf the deviances are glm's, and
# anova(fit) is anova.glm's sequential table, built as drop1() is: each sub-model refitted through
# update() (non-private, as the fit is), the NULL row from the fit's null deviance. Oracle: R's
# anova.glm on infert and mtcars, tolerance 1e-6.

anova_cols <- c("Df", "Deviance", "Resid. Df", "Resid. Dev")

test_that("anova() of an eps = Inf dp_glm equals anova.glm's sequential table", {
  skip_if_no_dpstats()
  cases <- list(list(f = case ~ spontaneous + induced + age, data = infert, family = binomial),
                list(f = carb ~ wt + factor(cyl), data = mtcars, family = poisson))
  for (case in cases) {
    fit <- suppressWarnings(dp_glm(case$f, case$data, eps = Inf, family = case$family))
    ref <- anova(glm(case$f, family = case$family, data = case$data))
    ours <- suppressWarnings(anova(fit))
    expect_s3_class(ours, "anova")
    expect_equal(rownames(ours), rownames(ref))
    expect_equal(as.data.frame(ours)[anova_cols], as.data.frame(ref)[anova_cols], tolerance = 1e-6)
    chisq <- suppressWarnings(anova(fit, test = "Chisq"))
    expect_equal(chisq[["Pr(>Chi)"]], anova(glm(case$f, family = case$family, data = case$data), test = "Chisq")[["Pr(>Chi)"]],
                 tolerance = 1e-6)
  }
  # data held in a function's frame (not the global environment): the refits find it, as drop1's do
  local_fit <- function() {
    d <- infert
    fit <- suppressWarnings(dp_glm(case ~ spontaneous + induced, d, eps = Inf, family = binomial))
    suppressWarnings(anova(fit))
  }
  expect_equal(as.data.frame(local_fit())[anova_cols],
               as.data.frame(anova(glm(case ~ spontaneous + induced, binomial, infert)))[anova_cols], tolerance = 1e-6)
})

test_that("anova() of a DP dp_glm is refused, naming glm(..., family = ) as the reference", {
  skip_if_no_dpstats()
  set.seed(1)
  n <- 20000
  df <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  df$y <- rbinom(n, 1, plogis(-0.5 + 1.5 * df$x1 - df$x2))
  fit <- dp_glm(y ~ x1 + x2, df, eps = 1, delta = 1e-6, family = binomial,
                bounds = list(x1 = c(-1, 1), x2 = c(-1, 1)), seed = 1)
  err <- expect_error(anova(fit), class = "dpstats_not_released_error")
  expect_match(conditionMessage(err), "glm(formula(fit), family = family(fit), data = df)", fixed = TRUE)
  expect_false(grepl("lm(formula(fit), data)", conditionMessage(err), fixed = TRUE))
})

# anova() of a dp_lm: at eps = Inf (rows kept, as lm's) it is anova.lm's sequential table; a DP fit is refused.
# Oracle: R's anova.lm on mtcars, warpbreaks (factors, interaction), PlantGrowth (no intercept) and ToothGrowth,
# tolerance 1e-8 (both from the same QR of the same design).
test_that("anova() of an eps = Inf dp_lm equals anova.lm; of a DP dp_lm it is refused", {
  skip_if_no_dpstats()
  cases <- list(list(f = mpg ~ wt + hp + factor(cyl), data = mtcars),
                list(f = breaks ~ wool * tension, data = warpbreaks),
                list(f = weight ~ 0 + group, data = PlantGrowth),
                list(f = len ~ supp * factor(dose), data = ToothGrowth),
                list(f = mpg ~ wt + I(2 * wt) + hp, data = mtcars))  # an aliased column: anova.lm drops it
  for (case in cases) {
    fit <- suppressWarnings(dp_lm(case$f, case$data, eps = Inf))
    ref <- anova(lm(case$f, data = case$data))
    ours <- anova(fit)
    expect_s3_class(ours, "anova")
    expect_identical(rownames(ours), rownames(ref))
    expect_equal(as.data.frame(ours), as.data.frame(ref), tolerance = 1e-8)
    expect_identical(attr(ours, "heading"), attr(ref, "heading"))
  }
  b <- list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35))
  dp <- dp_lm(mpg ~ wt + hp, mtcars, eps = 5, delta = 1e-5, bounds = b, seed = 1)
  err <- expect_error(anova(dp), class = "dpstats_not_released_error")
  expect_match(conditionMessage(err), "anova() of the fit at eps = Inf", fixed = TRUE)
})
