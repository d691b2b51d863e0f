# Neighbouring data frames (one row changed) give R users the same conditions: the outside audit's
# R scripts (audit/r_bound_name_hint.R, audit/r_two_stage_warning.R), as tests.

conditions_of <- function(expr) {
  seen <- character()
  withCallingHandlers(
    tryCatch(expr, error = function(e) seen <<- c(seen, paste("error:", conditionMessage(e)))),
    warning = function(w) {
      # whether dp_lm's noise dominates is decided by released values, which neighbours may differ in
      if (!(inherits(w, "dpstats_chance_warning") && startsWith(conditionMessage(w), "the estimates are dominated by noise")))
        seen <<- c(seen, paste("warning:", conditionMessage(w)))
      invokeRestart("muffleWarning")
    }
  )
  seen
}

test_that("a misspelt bounds name is never answered with a level one row holds (audit F1)", {
  skip_if_no_dpstats()
  set.seed(0)
  d0 <- data.frame(y = runif(300), x = runif(300), g = sample(c("a", "b"), 300, TRUE))
  d1 <- d0
  d1$g[1] <- "secret"
  for (strict in c(FALSE, TRUE)) {
    said <- lapply(list(d0, d1), function(d) conditions_of(
      dp_sis(y ~ x + g + x:g, data = d, eps = 1, k = 1, strict = strict,
             bounds = list(y = c(0, 1), x = c(0, 1), secret = c(0, 1)))))
    expect_identical(said[[1]], said[[2]])
    # under strict the step of reading g's levels is refused first (audit s13-ruser f13), else the name
    expected <- if (strict) "refuses the data-dependent step 'the levels of 'g'" else "bounds= names 'secret'"
    expect_match(said[[2]], expected, fixed = TRUE)
    expect_false(any(grepl("gsecret", said[[2]], fixed = TRUE)))
  }
})

test_that("dp_two_stage signals nothing on the neighbour holding 1e308 (audit F3, F5)", {
  skip_if_no_dpstats()
  set.seed(7)
  d0 <- data.frame(y = runif(400, 1, 9), x1 = runif(400, 1, 9), x2 = runif(400, 1, 9))
  b <- list(y = c(0, 10), x1 = c(0, 10))  # x2 without bounds: nothing clips it
  for (column in c("y", "x2")) {
    d1 <- d0
    d1[[column]][1] <- 1e308
    said <- lapply(list(d0, d1), function(d) conditions_of(
      dp_two_stage(y ~ x1 + x2 + x1:x2 + I(x2^2), data = d, eps = 1, k = 1, blocks = 4, bounds = b, seed = 5)))
    expect_identical(said[[1]], character())
    expect_identical(said[[2]], character())
  }
})

test_that("a text column of one value in the rows gives its neighbour's conditions (audit s13-ruser f13)", {
  skip_if_no_dpstats()
  b <- list(uptake = c(0, 50), conc = c(0, 1000))
  d0 <- transform(CO2, tp = as.character(Type))[1:42, ]  # only "Quebec"
  d1 <- d0
  d1$tp[1] <- "Mississippi"
  for (strict in c(FALSE, TRUE)) {
    said <- lapply(list(d0, d1), function(d) conditions_of(
      dp_lm(uptake ~ tp + conc, d, eps = 1, bounds = b, seed = 1, strict = strict)))
    expect_identical(said[[1]], said[[2]])
    expect_match(said[[1]], "the levels of 'tp' were read from the rows", fixed = TRUE)
    expect_false(any(grepl("level(s)", said[[1]], fixed = TRUE)))
    expect_identical(any(grepl("^error:", said[[1]])), strict)
  }
})
