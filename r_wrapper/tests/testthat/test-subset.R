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

# audit s14-attack7 F2: is.numeric() is FALSE for a difftime or a Date, which crossed to Python as the number
# 1, so subset = passed the private-fit refusal and the fit released the count of kept rows as n.
test_that("an eps with a class is refused before subset = is evaluated or anything is spent", {
  skip_if_no_dpstats()
  set.seed(1)
  d <- data.frame(y = runif(40, -1, 1), x1 = runif(40, -1, 1), x2 = runif(40, -1, 1))
  acc <- dp_accountant(eps = 10)
  touched <- FALSE
  for (eps in list(as.difftime(1, units = "secs"), structure(1, class = "Date"))) {
    expect_error(dp_sis(y ~ x1 + x2, d, eps = eps, k = 1, bounds = c(-1, 1),
                        subset = {touched <- TRUE; x1 > 0}, seed = 1, accountant = acc),
                 "eps must be a plain number.*Nothing was read or spent", class = "dpstats_privacy_parameter_error")
  }
  expect_false(touched)
  expect_true(any(grepl("nothing spent yet", capture.output(print(acc)))))
  expect_error(dp_sis(y ~ x1 + x2, d, eps = 1L, k = 1, bounds = c(-1, 1), subset = x1 > 0, seed = 1),
               "subset = is refused in a private fit")
})
