# Under strict = TRUE a variable's type is declared, never read from its class (outside audit s15-attack8,
# F01; dpstats.schema, "Types under strict=True"). A global bounds = c(lo, hi) declared no column numeric, so
# a character column (read.csv gives one when a single cell holds "?") was a factor whose levels were read
# from the rows: refused under strict, while its numeric neighbour was released. Now every variable not
# declared categorical (levels =, a factor) is numeric by declaration: the neighbours look alike.

strict_conditions <- function(expr) {
  seen <- character()
  value <- withCallingHandlers(
    tryCatch(expr, error = function(e) {
      seen <<- c(seen, paste("error:", conditionMessage(e)))
      NULL
    }),
    warning = function(w) {
      # whether the noise dominates is decided by released values, which neighbours may differ in
      if (!inherits(w, "dpstats_chance_warning")) seen <<- c(seen, paste("warning:", conditionMessage(w)))
      invokeRestart("muffleWarning")
    }
  )
  list(conditions = seen, fit = value)
}

test_that("a character column under strict = TRUE and a global bounds pair is read as numbers, as its neighbour", {
  skip_if_no_dpstats()
  set.seed(3)
  n <- 300
  d0 <- data.frame(y = runif(n, -1, 1), x1 = round(runif(n, -1, 1), 4), x2 = runif(n, -1, 1),
                   flag = runif(n) < 0.5)
  d1 <- d0
  d1$x1 <- as.character(d1$x1)  # what read.csv gives when one cell holds "?"
  d1$x1[5] <- "?"
  d2 <- d0
  d2$flag[5] <- NA
  runs <- lapply(list(d0, d1, d2), function(d) strict_conditions(
    dp_lm(y ~ x1 + x2 + flag, d, eps = 2, bounds = c(-2, 2), strict = TRUE, seed = 1, n_boot = 100L)))
  expect_identical(runs[[1]]$conditions, character())  # released, nothing said
  for (run in runs[-1]) {
    expect_identical(run$conditions, runs[[1]]$conditions)
    expect_identical(run$fit$terms, c("(Intercept)", "x1", "x2", "flag"))  # flag is 0/1: no flagTRUE
  }
  statement <- gsub("\\s+", " ", paste(capture.output(summary(runs[[2]]$fit)), collapse = " "))
  expect_match(statement, "Types under strict: 'y', 'x1', 'x2', 'flag' are numeric by declaration", fixed = TRUE)
  # a genuinely character column is numeric too (every entry missing): the statement names it; levels =
  # or a factor make it categorical
  d3 <- transform(d0, city = rep(c("Leeds", "York"), length.out = n))
  text <- suppressWarnings(dp_lm(y ~ x1 + city, d3, eps = 2, bounds = c(-2, 2), strict = TRUE, seed = 1, n_boot = 100L))
  expect_identical(text$terms, c("(Intercept)", "x1", "city"))
  expect_match(gsub("\\s+", " ", paste(capture.output(summary(text)), collapse = " ")),
               "'y', 'x1', 'city' are numeric by declaration", fixed = TRUE)
  declared <- suppressWarnings(dp_lm(y ~ x1 + city, d3, eps = 2, bounds = c(-2, 2), levels = list(city = c("Leeds", "York")),
                                     strict = TRUE, seed = 1, n_boot = 100L))
  expect_identical(declared$terms, c("(Intercept)", "x1", "cityYork"))
  d3$city <- factor(d3$city, levels = c("Leeds", "York"))
  expect_identical(suppressWarnings(dp_lm(y ~ x1 + city, d3, eps = 2, bounds = c(-2, 2), strict = TRUE, seed = 1,
                                          n_boot = 100L))$terms, c("(Intercept)", "x1", "cityYork"))
})

test_that("a bounds list without a variable's entry refuses neighbours alike under strict = TRUE, naming the fix", {
  skip_if_no_dpstats()
  set.seed(4)
  d0 <- data.frame(y = runif(200, -1, 1), x1 = round(runif(200, -1, 1), 3), x2 = runif(200, -1, 1))
  d1 <- d0
  d1$x1 <- as.character(d1$x1)
  d1$x1[2] <- "?"
  said <- lapply(list(d0, d1), function(d) strict_conditions(
    dp_lm(y ~ x1 + x2, d, eps = 1, bounds = list(y = c(-1, 1), x2 = c(-1, 1)), strict = TRUE, seed = 1))$conditions)
  expect_identical(said[[1]], said[[2]])
  expect_match(said[[1]], "dp_lm needs declared bounds for 'x1'", fixed = TRUE)
  expect_match(said[[1]], "levels = list(x1 = c(...)), or make it a factor with fixed levels", fixed = TRUE)
})
