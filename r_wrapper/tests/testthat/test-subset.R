# subset = at eps = Inf is lm's and glm's (audit s14-glmuser F4): their model frame drops the factor levels
# no analysed row holds (model.frame(drop.unused.levels = TRUE), after subset = and na.omit), so coef()
# has R's length and names. Oracles: R's own lm() and glm(), on warpbreaks and MASS::birthwt.

quiet <- function(expr) suppressWarnings(expr)  # eps = Inf says "NOT private"

test_that("warpbreaks: subset = dropping a level gives glm's and lm's coefficients, names and n", {
  skip_if_no_dpstats()
  g <- glm(breaks ~ tension, poisson, warpbreaks, subset = tension != "H")
  f <- quiet(dp_glm(breaks ~ tension, warpbreaks, eps = Inf, family = poisson, subset = tension != "H"))
  expect_identical(names(coef(f)), c("(Intercept)", "tensionM"))
  expect_equal(coef(f), coef(g), tolerance = 1e-7)
  expect_equal(vcov(f), vcov(g), tolerance = 1e-4)  # glm's se come from its previous IRLS iterate
  expect_identical(nobs(f), nobs(g))
  l <- lm(breaks ~ wool * tension, warpbreaks, subset = tension != "H")
  m <- quiet(dp_lm(breaks ~ wool * tension, warpbreaks, eps = Inf, subset = tension != "H"))
  expect_identical(names(coef(m)), names(coef(l)))
  expect_equal(coef(m), coef(l), tolerance = 1e-8)
  expect_equal(vcov(m), vcov(l), tolerance = 1e-8)
  expect_equal(fitted(m), fitted(l), tolerance = 1e-8)
})

test_that("a level held only by a dropped row, or by no row, is dropped as lm drops it", {
  skip_if_no_dpstats()
  wb <- warpbreaks
  wb$breaks[wb$tension == "H"] <- NA  # na.omit removes every H row
  expect_equal(coef(quiet(dp_lm(breaks ~ wool + tension, wb, eps = Inf))), coef(lm(breaks ~ wool + tension, wb)),
               tolerance = 1e-8)
  wb <- warpbreaks
  wb$tension <- factor(wb$tension, levels = c("L", "M", "H", "X"))  # X: no row at all
  expect_equal(coef(quiet(dp_lm(breaks ~ tension, wb, eps = Inf))), coef(lm(breaks ~ tension, wb)), tolerance = 1e-8)
  # levels = declares the columns: kept, as declared (X's coefficient is not estimable)
  declared <- quiet(dp_lm(breaks ~ tension, wb, eps = Inf, levels = list(tension = c("L", "M", "H", "X"))))
  expect_identical(names(coef(declared)), c("(Intercept)", "tensionM", "tensionH", "tensionX"))
  expect_true(is.na(coef(declared)[["tensionX"]]))
})

test_that("a factor with contrasts that loses a level loses them, with R's warning", {
  skip_if_no_dpstats()
  wb <- warpbreaks
  contrasts(wb$tension) <- contr.sum(3)
  expect_warning(l <- lm(breaks ~ tension, wb, subset = tension != "H"), "contrasts dropped from factor tension")
  said <- character()
  m <- withCallingHandlers(dp_lm(breaks ~ tension, wb, eps = Inf, subset = tension != "H"),
                           warning = function(w) {
                             said <<- c(said, conditionMessage(w))
                             invokeRestart("muffleWarning")
                           })
  expect_true("contrasts dropped from factor tension due to missing levels" %in% said)
  expect_equal(coef(m), coef(l), tolerance = 1e-8)
})

test_that("MASS::birthwt: subset = race != 'other' with race in the model equals glm and lm", {
  skip_if_no_dpstats()
  skip_if_not_installed("MASS")
  bw <- MASS::birthwt
  bw$race <- factor(bw$race, labels = c("white", "black", "other"))
  g <- glm(low ~ age + lwt + race + smoke, binomial, bw, subset = race != "other")
  f <- quiet(dp_glm(low ~ age + lwt + race + smoke, bw, eps = Inf, subset = race != "other"))
  expect_identical(names(coef(f)), c("(Intercept)", "age", "lwt", "raceblack", "smoke"))
  expect_equal(coef(f), coef(g), tolerance = 1e-6)
  expect_identical(nobs(f), nobs(g))
  l <- lm(bwt ~ age + lwt + race + smoke, bw, subset = race != "other")
  m <- quiet(dp_lm(bwt ~ age + lwt + race + smoke, bw, eps = Inf, subset = race != "other"))
  expect_equal(coef(m), coef(l), tolerance = 1e-8)
  expect_equal(confint(m), confint(l), tolerance = 1e-8)
})
