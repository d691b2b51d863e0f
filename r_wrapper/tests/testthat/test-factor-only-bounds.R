# A design of factors only needs no declared bounds (audit s14-glmuser, finding 3): R's esoph (ordered
# factors) and warpbreaks (wool * tension), resampled to n = 20 000 with set.seed(1) so that a private
# fit is not refused as too noisy. Same seed, same arithmetic: the comparisons are exact.

esoph_twin <- function() {
  es <- esoph[rep(seq_len(nrow(esoph)), esoph$ncases + esoph$ncontrols), c("agegp", "alcgp")]
  es$case <- unlist(mapply(function(a, b) c(rep(1, a), rep(0, b)), esoph$ncases, esoph$ncontrols))
  set.seed(1)
  es[sample(nrow(es), 20000, TRUE), ]
}

warp_twin <- function() {
  set.seed(1)
  d <- warpbreaks[sample(nrow(warpbreaks), 20000, TRUE), ]
  d$long <- as.integer(d$breaks > 26)
  d
}

test_that("a binomial fit of factors alone with bounds left out is fully private, strict = TRUE accepted", {
  skip_if_no_dpstats()
  cases <- list(list(case ~ agegp + alcgp, esoph_twin(), list(case = c(0, 1))),
                list(long ~ wool * tension, warp_twin(), list(long = c(0, 1))))
  for (cs in cases) {
    # under strict = TRUE the 0/1 response is declared (its bounds entry); the factors need no bounds
    fit <- expect_no_warning(dp_glm(cs[[1]], cs[[2]], eps = 1, delta = 1e-6, family = binomial, seed = 7,
                                    strict = TRUE, bounds = cs[[3]]))
    expect_length(fit$privacy$data_dependent_steps, 0L)
    expect_false(grepl("does not cover", fit$privacy$statement, fixed = TRUE))
    empty <- dp_glm(cs[[1]], cs[[2]], eps = 1, delta = 1e-6, family = binomial, seed = 7, bounds = list())
    expect_identical(coef(empty), coef(fit))
  }
})

test_that("a Poisson fit of factors alone is refused without the count's bounds, naming its column, in R's words", {
  skip_if_no_dpstats()
  # the count's bounds give its missing values their fill, the midpoint (s16-rusers3 F03): strict or not
  for (strict in c(TRUE, FALSE)) {
    err <- tryCatch(dp_glm(breaks ~ wool + tension, warp_twin(), eps = 1, delta = 1e-6, family = poisson,
                           seed = 7, strict = strict), error = identity)
    expect_match(conditionMessage(err), "needs declared bounds for 'breaks'", fixed = TRUE)
    expect_match(conditionMessage(err), "bounds = list(breaks = c(lo, hi))", fixed = TRUE)
    expect_false(grepl("design columns|list\\(x = ", conditionMessage(err)))
  }
})

test_that("neighbours (one row's outcome and factor changed) give the same messages and statement", {
  skip_if_no_dpstats()
  d <- esoph_twin()
  o <- d
  o$case[1] <- 1 - o$case[1]
  o$agegp[1] <- levels(d$agegp)[(as.integer(d$agegp[1]) %% nlevels(d$agegp)) + 1L]
  fits <- lapply(list(d, o), function(x) {
    dp_glm(case ~ agegp + alcgp, x, eps = 1, delta = 1e-6, family = binomial, seed = 7, strict = TRUE,
           bounds = list(case = c(0, 1)))
  })
  expect_identical(fits[[1]]$privacy$statement, fits[[2]]$privacy$statement)
  expect_identical(names(coef(fits[[1]])), names(coef(fits[[2]])))
})
