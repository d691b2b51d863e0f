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

# Session 16: what a variable numeric by declaration cannot serve is refused, naming it and the fix, in R's
# words, before anything is spent; neighbours (a row replaced, removed, added) get the same text.
strict_neighbours <- function(d, column, value) {
  replaced <- d
  replaced[[column]][5] <- value
  list(d, replaced, d[-5, ], rbind(d, replaced[5, ]))
}

test_that("contrasts = for a character column numeric by declaration under strict = TRUE are refused", {
  skip_if_no_dpstats()
  set.seed(5)
  n <- 300
  d <- data.frame(y = runif(n, -1, 1), x1 = runif(n, -1, 1), city = sample(c("Leeds", "York"), n, TRUE))
  said <- lapply(strict_neighbours(d, "city", "Zzyzx"), function(di) strict_conditions(
    dp_lm(y ~ x1 + city, di, eps = 2, bounds = c(-2, 2), strict = TRUE, seed = 1, n_boot = 100L,
          contrasts = list(city = "contr.sum")))$conditions)
  for (s in said[-1]) expect_identical(s, said[[1]])
  expect_length(said[[1]], 1L)
  expect_match(said[[1]], "contrasts are given for 'city', but under strict = TRUE 'city' is numeric by declaration",
               fixed = TRUE)
  expect_match(said[[1]], "levels = list(city = c(...)), or make it a factor with fixed levels", fixed = TRUE)
  expect_no_match(said[[1]], "pandas|dict|\\{", perl = TRUE)
  # declared levels: the contrasts code it, as lm's model.matrix does
  fit <- suppressWarnings(dp_lm(y ~ x1 + city, d, eps = 2, bounds = c(-2, 2), strict = TRUE, seed = 1, n_boot = 100L,
                                levels = list(city = c("Leeds", "York")), contrasts = list(city = "contr.sum")))
  expect_identical(fit$terms, colnames(model.matrix(y ~ x1 + city, d, contrasts.arg = list(city = "contr.sum"))))
})

test_that("a binomial response must be declared under strict = TRUE: levels, a logical, or a bounds entry", {
  skip_if_no_dpstats()
  set.seed(6)
  n <- 2000
  d <- data.frame(x = runif(n, -1, 1))
  yes <- runif(n) < plogis(0.5 + 2 * d$x)
  d$yb <- ifelse(yes, "yes", "no")
  d$y01 <- as.numeric(yes)
  d$yl <- yes
  refused <- function(response, value) {
    said <- lapply(strict_neighbours(d, response, value), function(di) strict_conditions(
      dp_glm(stats::as.formula(paste(response, "~ x")), di, family = binomial, eps = 4, delta = 1e-5,
             bounds = list(x = c(-1, 1)), strict = TRUE, seed = 1))$conditions)
    for (s in said[-1]) expect_identical(s, said[[1]])
    said[[1]]
  }
  for (case in list(list("yb", "Zzyzx"), list("y01", NA))) {
    said <- refused(case[[1]], case[[2]])
    expect_length(said, 1L)
    expect_match(said, sprintf("family = \"binomial\" under strict = TRUE needs its response '%s' declared", case[[1]]),
                 fixed = TRUE)
    expect_match(said, sprintf("levels = list(%s = c(...))", case[[1]]), fixed = TRUE)
    expect_match(said, sprintf("bounds = list(%s = c(0, 1))", case[[1]]), fixed = TRUE)
    expect_match(said, "a logical response: a logical vector", fixed = TRUE)
  }
  # declared: levels (a factor too), numbers by a bounds entry, a logical with or without NA: the same fit
  # (same seed), close to glm's (n = 2000, eps = 4: within 0.5, a few noise standard errors)
  common <- list(family = binomial, eps = 4, delta = 1e-5, strict = TRUE, seed = 1)
  fits <- list(
    levels = do.call(dp_glm, c(list(yb ~ x, d, bounds = list(x = c(-1, 1)), levels = list(yb = c("no", "yes"))), common)),
    factor = do.call(dp_glm, c(list(yb ~ x, transform(d, yb = factor(yb, levels = c("no", "yes"))),
                                    bounds = list(x = c(-1, 1))), common)),
    bounds = do.call(dp_glm, c(list(y01 ~ x, d, bounds = list(x = c(-1, 1), y01 = c(0, 1))), common)),
    logical = do.call(dp_glm, c(list(yl ~ x, d, bounds = list(x = c(-1, 1))), common))
  )
  for (f in fits[-1]) expect_equal(unname(coef(f)), unname(coef(fits$levels)), tolerance = 1e-8)
  expect_equal(unname(coef(fits$levels)), unname(coef(glm(yl ~ x, binomial, d))), tolerance = 0.5)
  # a logical with NA is the same declared type (a missing entry is filled with FALSE)
  dn <- d
  dn$yl[5] <- NA
  expect_identical(strict_conditions(do.call(dp_glm, c(list(yl ~ x, dn, bounds = list(x = c(-1, 1))), common)))$conditions,
                   strict_conditions(do.call(dp_glm, c(list(yl ~ x, d, bounds = list(x = c(-1, 1))), common)))$conditions)
})
