# broom and dpstats side by side (R-user audit F01, F06, F07). dpstats re-exports generics::tidy,
# generics::glance and generics::augment (broom's generics since broom 0.5), so attaching either
# package after the other masks nothing that matters: both search-path entries are the same functions,
# and lm's, glm's and prcomp's broom methods are found whatever the order. Each order runs in a fresh R
# (callr), since attaching is what the audit found broken.

attach_order_run <- function(first, second) {
  callr::r(function(first, second) {
    suppressPackageStartupMessages({
      library(first, character.only = TRUE)
      library(second, character.only = TRUE)
    })
    fit <- suppressWarnings(dpstats::dp_lm(mpg ~ wt, mtcars, eps = Inf))
    list(lm = as.data.frame(tidy(lm(mpg ~ wt, mtcars))),
         glm = as.data.frame(glance(glm(am ~ wt, binomial, mtcars))),
         prcomp = as.data.frame(tidy(prcomp(USArrests))),
         augment_lm = augment(lm(mpg ~ wt, mtcars))$.resid,
         dp = as.data.frame(tidy(fit)), dp_glance = as.data.frame(glance(fit)))
  }, args = list(first = first, second = second))
}

test_that("tidy()/glance()/augment() of lm, glm and prcomp work with broom attached before or after dpstats", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  skip_if_not_installed("callr")
  ref <- list(lm = as.data.frame(broom::tidy(lm(mpg ~ wt, mtcars))),
              glm = as.data.frame(broom::glance(glm(am ~ wt, binomial, mtcars))),
              prcomp = as.data.frame(broom::tidy(prcomp(USArrests))),
              augment_lm = broom::augment(lm(mpg ~ wt, mtcars))$.resid)
  for (order in list(c("broom", "dpstats"), c("dpstats", "broom"))) {
    got <- attach_order_run(order[1], order[2])
    for (what in names(ref)) expect_equal(got[[what]], ref[[what]], label = paste(what, "after", order[2]))
    fit <- suppressWarnings(dp_lm(mpg ~ wt, mtcars, eps = Inf))
    expect_equal(got$dp, as.data.frame(tidy(fit)), label = paste("tidy(dp_lm) after", order[2]))
    expect_equal(got$dp_glance, as.data.frame(glance(fit)), label = paste("glance(dp_lm) after", order[2]))
  }
})

test_that("dpstats' tidy, glance and augment are generics' own, and loading dpstats does not load broom", {
  expect_identical(dpstats::tidy, generics::tidy)
  expect_identical(dpstats::glance, generics::glance)
  expect_identical(dpstats::augment, generics::augment)
  skip_if_not_installed("callr")
  loaded <- callr::r(function() {
    loadNamespace("dpstats")
    c(broom = "broom" %in% loadedNamespaces(), generics = "generics" %in% loadedNamespaces())
  })
  expect_equal(loaded, c(broom = FALSE, generics = TRUE))
})

# F06: augment(fit, newdata = df) is predict(fit, newdata = df) as a column (post-processing of the
# released coefficients on rows the user holds), laid out as broom's augment.lm/augment.glm with newdata
# (.rownames when the rows are named, newdata's columns, .fitted). Oracle: broom 1.0.3 on lm and glm at
# eps = Inf, tolerance 1e-8. Without newdata it stays refused: the training rows' values are not released.
test_that("augment(fit, newdata =) adds .fitted as broom's augment.lm/augment.glm; without newdata a DP fit refuses", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  b <- list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35))
  dp <- dp_lm(mpg ~ wt + hp, mtcars, eps = 1, delta = 1e-5, bounds = b, seed = 1)
  nd <- mtcars[, c("wt", "hp")]
  a <- augment(dp, newdata = nd)
  expect_equal(names(a), names(broom::augment(lm(mpg ~ wt + hp, mtcars), newdata = nd)))
  expect_equal(a$.fitted, unname(predict(dp, newdata = nd)))
  expect_equal(a$.rownames, rownames(mtcars))
  expect_error(augment(dp), class = "dpstats_not_applicable_error", regexp = "newdata")
  # predict.lm's type = "response" is the prediction (broom's augment.lm accepts type.predict too); "terms" is refused
  expect_equal(augment(dp, newdata = nd, type.predict = "response")$.fitted, a$.fitted)
  expect_error(augment(dp, newdata = nd, type.predict = "terms"), class = "dpstats_argument_error")

  ref_lm <- lm(mpg ~ wt + hp, mtcars)
  inf <- suppressWarnings(dp_lm(mpg ~ wt + hp, mtcars, eps = Inf))
  expect_equal(augment(inf, newdata = nd)$.fitted, broom::augment(ref_lm, newdata = nd)$.fitted, tolerance = 1e-8)
  expect_s3_class(augment(inf), "data.frame")  # at eps = Inf broom's augment.lm (the test below)

  g <- suppressWarnings(dp_glm(am ~ wt, mtcars, eps = Inf, family = binomial))
  ref_glm <- glm(am ~ wt, binomial, mtcars)
  nd <- mtcars[1:5, c("wt", "am")]
  for (type in c("link", "response")) {
    ours <- augment(g, newdata = nd, type.predict = type)
    theirs <- broom::augment(ref_glm, newdata = nd, type.predict = type)
    expect_equal(names(ours), names(theirs))
    expect_equal(ours$.fitted, theirs$.fitted, tolerance = 1e-8)
  }
})

# F07: tidy(dp_pca, matrix =) in broom's tidy.prcomp layouts. Oracle: broom 1.0.3 on prcomp(USArrests) at
# eps = Inf (all four components), tolerance 1e-6; loadings up to each component's sign.
test_that("tidy(dp_pca, matrix = \"eigenvalues\"/\"rotation\") as broom's tidy.prcomp; scores are refused", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  p <- suppressWarnings(dp_pca(~ ., USArrests, k = 4, eps = Inf, delta = 0))
  ref <- prcomp(USArrests)
  expect_equal(as.data.frame(tidy(p, matrix = "eigenvalues")),
               as.data.frame(broom::tidy(ref, matrix = "eigenvalues")), tolerance = 1e-6)
  ours <- as.data.frame(tidy(p, matrix = "rotation"))
  theirs <- as.data.frame(broom::tidy(ref, matrix = "rotation"))
  expect_equal(ours[c("column", "PC")], theirs[c("column", "PC")])
  sign <- sign(ours$value * theirs$value)
  expect_equal(abs(ours$value), abs(theirs$value), tolerance = 1e-6)
  expect_true(all(tapply(sign, ours$PC, function(s) length(unique(s)) == 1L)))
  expect_equal(tidy(p, matrix = "d"), tidy(p, matrix = "eigenvalues"))

  dp <- dp_pca(~ ., USArrests, k = 2, eps = 1, delta = 1e-5,
               bounds = list(Murder = c(0, 20), Assault = c(0, 350), UrbanPop = c(0, 100), Rape = c(0, 50)), seed = 1)
  ev <- tidy(dp, matrix = "eigenvalues")
  expect_equal(ev$std.dev, sqrt(pmax(unlist(dp$outputs$eigenvalues), 0)))
  expect_equal(ev$cumulative, round(cumsum(unlist(dp$outputs$proportion)), 5))
  expect_error(tidy(dp, matrix = "x"), class = "dpstats_not_released_error", regexp = "predict\\(fit, newdata")
  expect_error(tidy(dp, matrix = "loadings"), class = "dpstats_argument_error")
  expect_equal(tidy(dp), dpstats:::tidy.dp_result(dp))  # without matrix, the method's own table
})

# Audit s13-ruser f10: augment(fit) at eps = Inf was refused though fitted() and residuals() answer there. It is
# broom's augment.lm / augment.glm: the same columns in the same order, values to 1e-8 (oracle: broom on lm and glm
# of the same formula; mtcars, ToothGrowth, esoph's cbind() response).
test_that("augment(fit) at eps = Inf is broom's augment.lm and augment.glm", {
  skip_if_no_dpstats()
  skip_if_not_installed("broom")
  same <- function(ours, theirs) {
    ours <- as.data.frame(ours)
    theirs <- as.data.frame(theirs)
    expect_identical(names(ours), names(theirs))
    for (nm in names(theirs)) expect_equal(ours[[nm]], theirs[[nm]], tolerance = 1e-8, info = nm)
  }
  for (fm in list(mpg ~ wt + factor(cyl), len ~ supp * factor(dose))) {
    d <- if ("len" %in% all.vars(fm)) ToothGrowth else mtcars
    f <- suppressWarnings(dp_lm(fm, d, eps = Inf))
    same(augment(f), broom::augment(lm(fm, d)))
    expect_equal(augment(f)$.fitted, unname(fitted(f)))
  }
  g <- suppressWarnings(dp_glm(am ~ wt + hp, mtcars, family = binomial, eps = Inf))
  ref <- glm(am ~ wt + hp, binomial, mtcars)
  same(augment(g), broom::augment(ref))
  same(augment(g, type.predict = "response"), broom::augment(ref, type.predict = "response"))
  a <- augment(g, type.residuals = "pearson")
  expect_equal(a$.resid, unname(residuals(ref, type = "pearson")), tolerance = 1e-8)
  expect_equal(a$.std.resid, unname(rstandard(ref, type = "pearson")), tolerance = 1e-8)  # R's own
  e <- suppressWarnings(dp_glm(cbind(ncases, ncontrols) ~ agegp + alcgp, esoph, family = binomial, eps = Inf))
  same(augment(e), broom::augment(glm(cbind(ncases, ncontrols) ~ agegp + alcgp, binomial, esoph)))
  expect_error(augment(g, type.predict = "terms"), class = "dpstats_argument_error")
  expect_error(augment(g, se_fit = TRUE), class = "dpstats_argument_error")
})
