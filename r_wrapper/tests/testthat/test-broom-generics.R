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
         augment_lm = as.data.frame(augment(lm(mpg ~ wt, mtcars)))[1:3, ],
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
              augment_lm = as.data.frame(broom::augment(lm(mpg ~ wt, mtcars)))[1:3, ])
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
