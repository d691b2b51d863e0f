# Issue 28: contrasts R users set (contrasts(f) <- ..., options(contrasts =), lm's contrasts =) and the
# functions they write in formulas (cut, pmin/pmax, ifelse, interaction, poly(x, z), factor(labels =),
# C(f, contr.treatment(3, base = 2))) give model.matrix's design and lm's coefficients.

same_design <- function(formula, data, ...) {
  X <- suppressWarnings(dp_model_matrix(formula, data))
  M <- model.matrix(formula, data, ...)
  expect_identical(colnames(X), colnames(M))
  expect_equal(unname(X), unname(M), tolerance = 1e-10, ignore_attr = TRUE)
}

test_that("contrasts(f) <- and options(contrasts =) reach the design", {
  skip_if_no_dpstats()
  pg <- PlantGrowth
  contrasts(pg$group) <- contr.sum(3)
  same_design(weight ~ group, pg)
  contrasts(pg$group) <- "contr.helmert"
  same_design(weight ~ group, pg)
  # a function dpstats does not know (found where model.matrix finds it): R sends its matrix
  assign("my_contrast", function(n, ...) {
    m <- contr.treatment(n, ...)
    m[1, ] <- -1
    m
  }, envir = globalenv())
  on.exit(rm("my_contrast", envir = globalenv()), add = TRUE)
  wb <- warpbreaks
  contrasts(wb$tension) <- "my_contrast"
  same_design(breaks ~ wool * tension, wb)
  old <- options(contrasts = c("contr.sum", "contr.poly"))
  on.exit(options(old), add = TRUE)
  same_design(breaks ~ wool + tension, warpbreaks)
  same_design(ncases ~ agegp + alcgp, esoph)
  same_design(Sepal.Length ~ Species * Petal.Width, iris)
  same_design(mpg ~ factor(cyl) + C(factor(gear)) + wt, mtcars)
  X <- dp_model_matrix(mpg ~ factor(cyl) + wt, mtcars, contrasts.arg = list(`factor(cyl)` = "contr.helmert"))
  expect_equal(unname(X), unname(model.matrix(mpg ~ factor(cyl) + wt, mtcars,
                                               contrasts.arg = list(`factor(cyl)` = "contr.helmert"))),
               ignore_attr = TRUE)
  options(contrasts = c("contr.helmert", "contr.treatment"))
  same_design(ncases ~ agegp + tobgp, esoph)
})

test_that("dp_lm at eps = Inf gives lm's coefficients and predictions under the contrasts in force", {
  skip_if_no_dpstats()
  old <- options(contrasts = c("contr.sum", "contr.poly"))
  on.exit(options(old))
  fit <- suppressWarnings(dp_lm(breaks ~ wool + tension, warpbreaks, eps = Inf))
  ref <- lm(breaks ~ wool + tension, warpbreaks)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
  expect_equal(unname(coef(fit)), c(28.148148, 2.888889, 8.240741, -1.759259), tolerance = 1e-6)
  options(old)  # the fit keeps the contrasts it was made with, as lm does
  nd <- data.frame(wool = factor("B", levels = c("A", "B")), tension = factor("M", levels = c("L", "M", "H")))
  expect_equal(unname(predict(fit, newdata = nd)), unname(predict(ref, newdata = nd)), tolerance = 1e-8)
  pg <- PlantGrowth
  contrasts(pg$group) <- contr.sum(3)
  expect_equal(coef(suppressWarnings(dp_lm(weight ~ group, pg, eps = Inf))), coef(lm(weight ~ group, pg)),
               tolerance = 1e-8)
  cl <- list(tension = "contr.helmert", wool = contr.sum(2))
  expect_equal(coef(suppressWarnings(dp_lm(breaks ~ wool + tension, warpbreaks, eps = Inf, contrasts = cl))),
               coef(lm(breaks ~ wool + tension, warpbreaks, contrasts = cl)), tolerance = 1e-8)
})

test_that("contrasts = naming a formula term (factor(cyl)) code predict()'s newdata as the fit coded it", {
  skip_if_no_dpstats()
  cl <- list(`factor(cyl)` = "contr.sum")
  ref <- lm(mpg ~ wt + factor(cyl), mtcars, contrasts = cl)
  fit <- suppressWarnings(dp_lm(mpg ~ wt + factor(cyl), mtcars, eps = Inf, contrasts = cl))
  expect_no_warning(p <- predict(fit, mtcars[1:3, ]))
  expect_equal(p, predict(ref, mtcars[1:3, ]), tolerance = 1e-8)
  expect_equal(unname(p), c(21.33650, 20.51907, 26.55377), tolerance = 1e-5)
  gref <- glm(am ~ wt + factor(cyl), binomial, mtcars, contrasts = cl)
  gfit <- suppressWarnings(dp_glm(am ~ wt + factor(cyl), mtcars, family = binomial, eps = Inf, contrasts = cl))
  expect_equal(predict(gfit, mtcars[1:3, ], type = "response"), predict(gref, mtcars[1:3, ], type = "response"),
               tolerance = 1e-6)
  # finite eps: newdata's design has the fit's columns, coded as model.matrix codes them under lm's contrasts
  # (cyl's levels declared: a DP fit keeps no level it read from the rows, so it could not code newdata)
  dfit <- suppressWarnings(dp_lm(mpg ~ wt + factor(cyl), mtcars, eps = 1, bounds = list(mpg = c(10, 35), wt = c(1, 6)),
                                 levels = list(cyl = c(4, 6, 8)), contrasts = cl, seed = 1))
  nd <- mtcars[c(1, 3, 5), ]
  M <- model.matrix(terms(ref), model.frame(terms(ref), nd, xlev = ref$xlevels), contrasts.arg = ref$contrasts)
  expect_identical(names(coef(dfit)), colnames(M))
  expect_no_warning(dp <- predict(dfit, nd))
  expect_equal(unname(dp), unname(drop(M %*% coef(dfit))), tolerance = 1e-8)
})

test_that("contrasts dpstats cannot honour are refused by name, with a fix", {
  skip_if_no_dpstats()
  old <- options(contrasts = c("contr.nope", "contr.poly"))
  on.exit(options(old))
  expect_error(dp_model_matrix(breaks ~ tension, warpbreaks),
               "options\\(contrasts =\\): contrasts 'contr.nope'.*contrasts\\(f\\) <- contr.nope\\(levels\\(f\\)\\)",
               class = "dpstats_formula_error")
  options(old)
  expect_error(suppressWarnings(dp_lm(breaks ~ wool, warpbreaks, eps = Inf, contrasts = list(breaks = "contr.sum"))),
               "'breaks', which is numeric", class = "dpstats_formula_error")
  expect_error(suppressWarnings(dp_lm(breaks ~ wool, warpbreaks, eps = Inf, contrasts = "contr.sum")),
               "contrasts = must be a named list", class = "dpstats_argument_error")
})

test_that("R users' functions give model.matrix's design", {
  skip_if_no_dpstats()
  same_design(Sepal.Length ~ cut(Petal.Length, breaks = c(0, 2, 4, 7)) + Species, iris)
  same_design(mpg ~ cut(hp, c(0, 100, 200, 400), right = FALSE) + pmin(wt, 4) + pmax(wt - 3, 0), mtcars)
  same_design(Sepal.Length ~ ifelse(Petal.Width > 1, "wide", "narrow") + interaction(Species, Petal.Width > 1), iris)
  same_design(Sepal.Length ~ poly(Petal.Length, Petal.Width, degree = 2, raw = TRUE), iris)
  same_design(mpg ~ factor(am, labels = c("automatic", "manual")) * wt, mtcars)
  same_design(Sepal.Length ~ C(Species, contr.treatment(3, base = 2)), iris)
  same_design(breaks ~ interaction(wool, tension), warpbreaks)
})

test_that("cut() with a number of breaks is a named data-dependent step; cbind() responses are refused", {
  skip_if_no_dpstats()
  X <- suppressWarnings(dp_model_matrix(mpg ~ cut(hp, 3), mtcars))
  expect_match(attr(X, "data_dependent_terms"), "cut\\(hp, 3\\).*range")
  d <- data.frame(s = c(3, 4, 1), f = c(2, 1, 5), x = c(0.1, 0.5, 0.9), z = c(1, 0, 1))
  expect_error(vertical_glm(cbind(s, f) ~ x + z, d, parties = list(a = "x", b = "z"), family = "binomial"),
               "cbind\\(s, f\\).*one row per trial", class = "dpstats_formula_error")
})
