# Neighbouring data frames (one row changed) give R users the same conditions: the outside audit's
# R scripts (audit/r_bound_name_hint.R, audit/r_two_stage_warning.R), as tests.

conditions_of <- function(expr) {
  seen <- character()
  withCallingHandlers(
    tryCatch(expr, error = function(e) seen <<- c(seen, paste("error:", conditionMessage(e)))),
    warning = function(w) {
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
    expect_match(said[[2]], "bounds= names 'secret'", fixed = TRUE)
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
