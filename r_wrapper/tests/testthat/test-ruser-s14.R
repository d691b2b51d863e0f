# The outside R user's audit s14-ruser (F2, F4, F5, F6). Oracles: R's lm, prcomp and print itself.

ff <- function(x) tryCatch(x, error = function(e) e)
dated_quakes <- function() within(quakes, d <- as.Date("2000-01-01") + seq_along(depth))
quakes_bounds <- list(mag = c(4, 6.5), lat = c(-40, -10), long = c(165, 190), depth = c(0, 700),
                      stations = c(10, 132))

# F2: a Date column the expanded formula does not use (removed by `- d`, or not named) is not sent.
test_that("y ~ . - d with a Date column d fits as lm(y ~ . - d) does, at eps = Inf", {
  skip_if_no_dpstats()
  q <- dated_quakes()
  ref <- lm(mag ~ . - d, q)
  fit <- suppressWarnings(dp_lm(mag ~ . - d, q, eps = Inf))
  expect_equal(coef(fit), coef(ref), tolerance = 1e-10)
  expect_identical(formula(fit), formula(ref))
  expect_equal(predict(fit, newdata = q[1:5, ]), predict(ref, newdata = q[1:5, ]), tolerance = 1e-10)
  inter <- mag ~ (. - d)^2 - lat:long
  expect_equal(coef(suppressWarnings(dp_lm(inter, q, eps = Inf))), coef(lm(inter, q)), tolerance = 1e-8)
  # a formula that uses d (`.`, `.^2 - d`) reads it as lm does, as its days since 1970-01-01 (s15 F01)
  for (f in list(mag ~ ., mag ~ .^2 - d)) {
    expect_equal(coef(suppressWarnings(dp_lm(f, q, eps = Inf))), coef(lm(f, q)), tolerance = 1e-8)
  }
  # a list column, which lm refuses too, is refused; the advice names `- l` for a formula with `.`
  q$l <- I(as.list(seq_len(nrow(q))))
  err <- ff(dp_lm(mag ~ ., q, eps = Inf))
  expect_s3_class(err, "dpstats_data_error")
  expect_match(conditionMessage(err), "q$l <- as.numeric(q$l), or leave it out of the formula (with `.`: ~ . - l)",
               fixed = TRUE)
})

test_that("y ~ . - d with a Date column is the fit of the data without d, at eps = 2 and in dp_sis", {
  skip_if_no_dpstats()
  q <- dated_quakes()
  q0 <- q[setdiff(names(q), "d")]
  a <- suppressWarnings(dp_lm(mag ~ . - d, q, eps = 2, delta = 1e-6, bounds = quakes_bounds, seed = 3))
  b <- suppressWarnings(dp_lm(mag ~ ., q0, eps = 2, delta = 1e-6, bounds = quakes_bounds, seed = 3))
  expect_identical(coef(a), coef(b))
  s <- suppressWarnings(dp_sis(mag ~ . - d, q, eps = 1, k = 2, bounds = quakes_bounds, seed = 3))
  s0 <- suppressWarnings(dp_sis(mag ~ ., q0, eps = 1, k = 2, bounds = quakes_bounds, seed = 3))
  expect_identical(s$outputs, s0$outputs)
})

# F4: NA first, then one number (length, dimensions), then the class.
test_that("eps and delta refusals say NA, 'a single number' or the class, as fits the value", {
  skip_if_no_dpstats()
  b <- list(Fertility = c(0, 100), Education = c(0, 100))
  msg <- function(...) {
    err <- ff(dp_lm(Fertility ~ Education, swiss, bounds = b, seed = 1, ...))
    expect_s3_class(err, "dpstats_privacy_parameter_error")
    conditionMessage(err)
  }
  expect_match(msg(eps = NA), "^eps is NA; give a positive number")
  expect_match(msg(eps = NA_real_), "^eps is NA; give a positive number")
  expect_match(msg(eps = matrix(1)), "^eps must be a single number, got a 1 x 1 matrix")
  expect_match(msg(eps = c(1, 2)), "^eps must be a single number, got a numeric vector of length 2")
  expect_match(msg(eps = c(NA, 1)), "^eps must be a single number")
  expect_match(msg(eps = numeric(0)), "^eps must be a single number, got a numeric vector of length 0")
  expect_match(msg(eps = TRUE), "^eps must be a number, got a logical value")
  expect_match(msg(eps = "1"), "^eps must be a number, got a character string")
  expect_match(msg(eps = as.difftime(1, units = "secs")), "^eps must be a plain number, not an object of class 'difftime'")
  expect_match(msg(eps = 1, delta = NA), "^delta is NA; give a number in \\[0, 1\\)")
  expect_match(msg(eps = 1, delta = c(1e-6, 1e-7)), "^delta must be a single number, got a numeric vector of length 2")
  expect_match(msg(eps = 1, delta = matrix(1e-6)), "^delta must be a single number, got a 1 x 1 matrix")
  expect_match(msg(eps = 1, delta = factor(1e-6)), "^delta must be a plain number, not an object of class 'factor'")
  expect_match(msg(eps = 1, delta = "1e-6"), "^delta must be a number, got a character string")
  expect_match(msg(eps = NA, delta = c(1, 2)), "^eps is NA")
  # a named number is still one plain number
  expect_s3_class(suppressWarnings(dp_lm(Fertility ~ Education, swiss, eps = c(a = 1), bounds = b, seed = 1)), "dp_lm")
})

# F6: update() of a private fit is a new release; without an accountant it says what the total is.
test_that("update() of a private fit warns that it spends eps again and gives the total", {
  skip_if_no_dpstats()
  b <- list(Fertility = c(0, 100), Agriculture = c(0, 100), Examination = c(0, 100), Education = c(0, 100),
            Catholic = c(0, 100), Infant.Mortality = c(10, 30))
  fit <- suppressWarnings(dp_lm(Fertility ~ ., swiss, eps = 4, delta = 1e-6, bounds = b, seed = 1))
  spent_by <- function(expr) {  # the composition warnings expr raises (others muffled)
    caught <- list()
    value <- withCallingHandlers(expr, warning = function(w) {
      caught[[length(caught) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
    list(value = value, warnings = Filter(function(w) inherits(w, "dpstats_composition_warning"), caught))
  }
  up <- spent_by(update(fit, . ~ . - Examination))
  expect_length(up$warnings, 1L)
  expect_s3_class(up$warnings[[1]], "dpstats_warning")
  text <- conditionMessage(up$warnings[[1]])
  expect_match(text, "spends its own eps = 4, delta = 1e-06", fixed = TRUE)
  expect_match(text, "adds up to eps = 8, delta = 2e-06 by basic composition", fixed = TRUE)
  expect_match(text, "accountant = acc, e.g. acc <- dp_accountant(eps = 8, delta = 2e-06)", fixed = TRUE)
  expect_false("Examination" %in% names(coef(up$value)))
  # a different eps in update(): its own spend and the sum
  other <- spent_by(update(fit, eps = 2))$warnings
  expect_length(other, 1L)
  expect_match(conditionMessage(other[[1]]), "spends its own eps = 2, delta = 1e-06 .* adds up to eps = 6, delta = 2e-06")
  # no new release (eps = Inf), a non-private fit updated, or an accountant in the call: no such warning
  warns_spent <- function(expr) length(spent_by(expr)$warnings) > 0L
  expect_false(warns_spent(update(fit, eps = Inf)))
  inf <- suppressWarnings(dp_lm(Fertility ~ ., swiss, eps = Inf))
  expect_false(warns_spent(update(inf, eps = 1, delta = 1e-6, bounds = b)))
  acc <- dp_accountant(eps = 10, delta = 1e-5)
  fa <- suppressWarnings(dp_lm(Fertility ~ ., swiss, eps = 4, delta = 1e-6, bounds = b, accountant = acc))
  expect_false(warns_spent(update(fa, . ~ . - Examination)))
  expect_identical(update(fit, . ~ . - Examination, evaluate = FALSE)[[1]], as.name("dp_lm"))
  help <- paste(capture.output(tools::Rd2txt(tools::Rd_db("dpstats")[["dp_lm_methods.Rd"]])), collapse = " ")
  expect_match(gsub("\\s+", " ", help), "(eps1 + eps2, delta1 + delta2) by basic composition", fixed = TRUE)
})

# F5: the importance table as R prints summary(prcomp(x))'s, with the variances as a first row.
test_that("dp_pca's importance table is R's print(importance, digits = 4), character for character", {
  skip_if_no_dpstats()
  for (case in list(list(USArrests, 4L), list(USArrests, 2L), list(swiss, 6L), list(swiss, 3L))) {
    x <- case[[1]]
    k <- case[[2]]
    fit <- suppressWarnings(dp_pca(~ ., x, k = k, eps = Inf))
    p <- prcomp(x)
    ref <- capture.output(print(rbind(Variance = p$sdev[1:k]^2, summary(p)$importance[, 1:k, drop = FALSE]),
                                digits = max(3L, getOption("digits") - 3L)))
    for (out in list(capture.output(print(fit)), capture.output(summary(fit)))) {
      at <- match("Importance of components:", out)
      expect_false(is.na(at))
      expect_identical(out[at + seq_along(ref)], ref)
    }
  }
})
