# Errors and warnings that reach R users are in R's words: no Python literal, the user's call.

python_syntax <- paste0("\\[|\\]|\\{|\\bTrue\\b|\\bFalse\\b|\\bNone\\b|\\binf\\b|random_state|\\.py\\b|",
                        "pandas|CategoricalDtype|\\bcategory\\b|\\b(got|not) (a )?(list|str|float|int|bool|dict|tuple)\\b(?!\\()|",
                        "\\([A-Z][0-9]+\\)\\)|dpstats\\.methods|\\bdicts?\\b|\\btuples?\\b|(?<![\\w.])\\(lo, hi\\)|SessionPlan|",
                        "dpstats Accountant")

test_that("Python literals are rewritten to R", {
  w <- dpstats:::.r_words
  expect_identical(w("eps must be positive, got -1.0."), "eps must be positive, got -1.")
  expect_identical(w("got [1.0, 2.0]"), "got c(1, 2)")
  expect_identical(w("must be finite with lo < hi, got (10.0, -10.0)."), "must be finite with lo < hi, got c(10, -10).")
  expect_identical(w("must be one of ['dp_sis', 'dp_lm'], got 'foo'."), "must be one of c(\"dp_sis\", \"dp_lm\"), got \"foo\".")
  expect_identical(w("e.g. bounds={'x': (0, 10), ...}"), "e.g. bounds = list(x = c(0, 10), ...)")
  expect_identical(w("e.g. bounds={'poly(wt, 2)1': (lo, hi)}"), "e.g. bounds = list(`poly(wt, 2)1` = c(lo, hi))")
  expect_identical(w("e.g. eps=1.0 or strict=True"), "e.g. eps = 1 or strict = TRUE")
  expect_identical(w("value -1.0 at index 0 (H1)"), "value -1 at position 1 (H1)")
  expect_identical(w("p must lie in [0, 1]; gamma must be in [0.0, 1.0); q in (0, 1)"),
                   "p must lie between 0 and 1; gamma must be >= 0 and < 1; q in (0, 1)")
  expect_identical(w("pass random_state=3, or None; eps = inf"), "pass seed = 3, or NULL; eps = Inf")
  expect_identical(w("not a valid bound (tests/test_audit_felp.py); use x"), "not a valid bound; use x")
  expect_identical(w("a dict name -> columns"), "a named list name -> columns")
  expect_identical(w("DP mode (eps=) needs penalty='ridge' (family='binomial' or 'gaussian')"),
                   "DP mode (eps=) needs penalty = \"ridge\" (family = \"binomial\" or \"gaussian\")")
})

test_that("Python's types, classes, tuples and internal references are rewritten to R", {
  w <- dpstats:::.r_words
  lv <- "levels must be a dict such as {'city': ['Leeds', 'York']}, got list."
  expect_identical(w(lv, args = list(levels = c("Leeds", "York"))),
                   "levels must be a named list such as list(city = c(\"Leeds\", \"York\")), got a character vector.")
  expect_match(w(lv, args = list(levels = factor(c("Leeds", "York")))), "got a factor.", fixed = TRUE)
  expect_match(w(lv, args = list(levels = list("Leeds", "York"))), "got an unnamed list.", fixed = TRUE)
  expect_match(w(sub("list.$", "str.", lv), args = list(levels = "city")), "got a character string.", fixed = TRUE)
  expect_match(w(lv), "got a vector or an unnamed list.", fixed = TRUE)  # the argument unknown
  expect_identical(w("levels['city'] must be a non-empty list of distinct levels."),
                   "levels$city must be a non-empty vector of distinct levels.")
  expect_identical(w("bounds for 'x1' must be a pair (lo, hi) of numbers, got [(-5.0, 5.0)]."),
                   "bounds for 'x1' must be a pair c(lo, hi) of numbers, got list(c(-5, 5)).")
  expect_identical(w("e.g. ns(x, Boundary.knots = c(lo, hi))"), "e.g. ns(x, Boundary.knots = c(lo, hi))")
  expect_identical(
    w("response 'f' is category but a numeric response is needed; convert it (e.g. df['f'].astype(float)) or code it as 0/1.",
      "mydata"),
    "response 'f' is a factor but a numeric response is needed; convert it (e.g. as.numeric(as.character(mydata$f))) or code it as 0/1.")
  expect_identical(
    w("To fix: declare them, e.g. levels={'city': [...]}, or give the column a pandas.CategoricalDtype with fixed categories", "d"),
    "To fix: declare them, e.g. levels = list(city = c(...)), or make it a factor with fixed levels: d$city <- factor(d$city, levels = c(...))")
  expect_identical(w("at most 0.15 is allowed; module dpstats.methods.glm, (G5)). Raise n"), "at most 0.15 is allowed). Raise n")
  expect_identical(w("exact for canonical links (dpstats.methods.glm, (G1)); group sums"), "exact for canonical links; group sums")
  expect_identical(w("column 'x1' is held by both 'a' and 'b': column sets must not overlap."),
                   "column 'x1' is held by both 'a' and 'b': column sets must not overlap.")
  expect_identical(w("DP mode (eps=) is not available for family='poisson': the gradient"),
                   "DP mode (eps=) is not available for family = \"poisson\": the gradient")
  expect_identical(w("accountant must be a dpstats Accountant or None, got str.", args = list(accountant = "a")),
                   "accountant must be a dp_accountant() or NULL, got a character string.")
  expect_identical(w("Accountant composition must be 'basic' or 'zcdp', got 'foo'; for PLD accounting declare the session in advance with dp.SessionPlan."),
                   "composition must be \"basic\" or \"zcdp\", got \"foo\".")
  expect_identical(w("value (H1) at index 0"), "value (H1) at position 1")  # a hypothesis' name is no internal code
})

test_that("calls from R that met Python words now read as R, with the R fix", {
  skip_if_no_dpstats()
  set.seed(2)
  d <- data.frame(y = rnorm(40), x1 = rnorm(40), x2 = rnorm(40), city = rep(c("Leeds", "York"), 20))
  d$f <- factor(rep(c("a", "b"), 20))
  b <- list(y = c(-5, 5), x1 = c(-5, 5), x2 = c(-5, 5))
  msg <- function(expr) {
    e <- tryCatch(suppressWarnings(expr), error = identity)
    expect_s3_class(e, "dpstats_error")
    m <- conditionMessage(e)
    expect_false(grepl(python_syntax, m, perl = TRUE), info = m)
    m
  }
  expect_match(msg(dp_lm(y ~ x1 + city, data = d, eps = 1, bounds = b, levels = c("Leeds", "York"))),
               "levels must be a named list such as list(city = c(\"Leeds\", \"York\")), got a character vector.", fixed = TRUE)
  expect_match(msg(dp_lm(y ~ x1 + city, data = d, eps = 1, bounds = b, levels = factor(c("Leeds", "York")))),
               "got a factor.", fixed = TRUE)
  expect_match(msg(dp_lm(y ~ city, data = d, eps = 1, bounds = b, levels = list(city = c("Leeds", "Leeds")))),
               "levels$city must be a non-empty vector of distinct levels.", fixed = TRUE)
  expect_match(msg(dp_lm(y ~ x1 + city, data = d, eps = 1, bounds = b, strict = TRUE)),
               "levels = list(city = c(...)), or make it a factor with fixed levels: d$city <- factor(d$city, levels = c(...))",
               fixed = TRUE)
  expect_match(msg(dp_sis(f ~ x1 + x2, data = d, eps = 1, k = 1, bounds = c(-5, 5))),
               "response 'f' is a factor but a numeric response is needed; convert it (e.g. as.numeric(as.character(d$f)))",
               fixed = TRUE)
  expect_match(msg(dp_lm(y ~ x1, data = d, eps = 1, bounds = list(y = c(-5, 5), x1 = "a"))),
               "must be a pair c(lo, hi) of numbers", fixed = TRUE)
  expect_match(msg(dp_sis(y ~ x1 + x2, data = d, eps = 1, k = 1, bounds = list(c(-5, 5)))),
               "got list(c(-5, 5))", fixed = TRUE)
  g <- msg(dp_glm(I(y > 0) ~ x1 + x2, data = d, eps = 0.1, delta = 1e-6, bounds = c(-5, 5)))
  expect_match(g, "(at most 0.12 is admitted: above that, simulated intervals stopped covering). Nothing was spent. For intervals raise eps to", fixed = TRUE)
  expect_match(g, "of that most information. Or use fewer terms", fixed = TRUE)
  expect_no_match(g, "dpstats.methods", fixed = TRUE)
  expect_no_match(g, "Pima", fixed = TRUE)
  expect_match(msg(vertical_glm(y ~ x1 + x2, data = d, parties = c("x1", "x2"))),
               "parties must be a named list of character vectors, e.g. list(a = c(\"x1\", \"x2\"), b = \"x3\")", fixed = TRUE)
  expect_match(msg(vertical_glm(y ~ x1 + x2, data = d, parties = list(a = "x1", b = c("x1", "x2")))),
               "held by both 'a' and 'b': column sets", fixed = TRUE)
  expect_match(msg(vertical_glm(y ~ x1 + x2, data = d, parties = list(a = "x1", b = "x2"), family = "poisson",
                                eps = 1, delta = 1e-6, penalty = "ridge", lam = 1)),
               "for family = \"poisson\": the gradient", fixed = TRUE)
  e <- tryCatch(dp_select_infer(y ~ x1 + x2, data = d, eps = 1, delta = 1e-6, k = 1, bounds = c(-5, 5),
                                select_args = c(1, 2)), error = identity)
  expect_s3_class(e, "dpstats_privacy_parameter_error")  # was a raw Python TypeError
  expect_match(conditionMessage(e), "select_args must be a named list of the selector's arguments by name, e.g. select_args = list(bounds = 3), got a numeric vector.", fixed = TRUE)
  expect_match(msg(dp_lm(y ~ x1, data = d, eps = 1, bounds = b, accountant = "a")),
               "accountant must be a dp_accountant() or NULL, got a character string.", fixed = TRUE)
  expect_identical(msg(dp_accountant(eps = 1, composition = "foo")), "composition must be \"basic\" or \"zcdp\", got \"foo\".")
})

test_that("the data-dependent-step warning for text levels gives R's fix", {
  skip_if_no_dpstats()
  d <- data.frame(y = rnorm(40), x1 = rnorm(40), city = rep(c("Leeds", "York"), 20))
  w <- tryCatch(dp_lm(y ~ x1 + city, data = d, eps = 1, bounds = c(-5, 5)), warning = identity)
  expect_s3_class(w, "dpstats_non_private_warning")
  expect_false(grepl(python_syntax, conditionMessage(w), perl = TRUE), info = conditionMessage(w))
  expect_match(conditionMessage(w), "d$city <- factor(d$city, levels = c(...))", fixed = TRUE)
})

test_that("at least 30 error cases from R carry no Python syntax and name the user's call", {
  skip_if_no_dpstats()
  ec <- error_cases()
  expect_gte(length(ec$cases), 30)
  seen <- character()
  for (case in ec$cases) {
    warns <- character()
    e <- tryCatch(withCallingHandlers(eval(case, ec$env), warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }), error = identity)
    label <- paste(deparse(case), collapse = " ")
    expect_s3_class(e, "dpstats_error")
    msg <- conditionMessage(e)
    expect_false(grepl(python_syntax, msg, perl = TRUE), info = paste(label, "->", msg))
    for (w in warns) expect_false(grepl(python_syntax, w, perl = TRUE), info = paste(label, "warning ->", w))
    expect_false(is.null(conditionCall(e)), info = label)
    head <- as.character(conditionCall(e)[[1]])  # the function, or its S3 method (predict.dp_vertical_glm)
    expect_true(head == as.character(case[[1]]) || startsWith(head, paste0(case[[1]], ".")), info = label)
    seen <- c(seen, msg)
  }
  expect_gte(length(unique(seen)), 30)
})

test_that("warnings are in R's words too", {
  skip_if_no_dpstats()
  expect_warning(dp_lm(mpg ~ wt, data = mtcars, eps = Inf), "eps = Inf")
  w <- tryCatch(dp_lm(mpg ~ wt, data = mtcars, eps = Inf), warning = identity)
  expect_false(grepl(python_syntax, conditionMessage(w), perl = TRUE))
  expect_identical(conditionCall(w)[[1]], as.name("dp_lm"))
})

test_that("an unavailable function is a dpstats_unavailable condition (no Python underscores in the class)", {
  skip_if_no_dpstats()
  e <- tryCatch(dp_call("no_such_function"), error = identity)
  expect_identical(class(e)[1:2], c("dpstats_unavailable", "dpstats_error"))
})

test_that("references to dpstats' Python modules are left out, what they qualify kept", {
  d <- dpstats:::.drop_py_refs
  expect_identical(d("delta 0; see dpstats.methods.lm (declared bounds, replace-one-row)"),
                   "delta 0 (declared bounds, replace-one-row)")
  expect_identical(d("refuses it (the public rule of dpstats.methods.glm (G5)); such cells"), "refuses it (the public rule); such cells")
  expect_identical(d("at n = 32 (dpstats.simulate.sis_trials; clipping ignored)"), "at n = 32 (clipping ignored)")
  expect_identical(d("the bound (dpstats.privacy.topk.exact_recovery_bound); no data model"), "the bound; no data model")
  expect_identical(d("Events (for composing it with other analyses: dpstats.compose):"), "Events (for composing it with other analyses):")
  expect_identical(d("the variance (methods.glm (G4))"), "the variance")
  expect_identical(d("composed by PLD (dpstats.SessionPlan): each"), "composed by PLD: each")
  expect_identical(d("run from Python (no reference here)"), "run from Python (no reference here)")
})

test_that("assume errors name the named list R users pass, not Python classes", {
  w <- dpstats:::.r_words
  expect_identical(w("assume must be a dpstats.simulate.Assume, a dict of its fields or 'released'; got 3."),
                   "assume must be a named list of the model's fields, e.g. list(signals = 2, strength = 0.5), or \"released\"; got 3.")
  expect_identical(w("assume must be a dpstats.simulate.Assume, a dict of its fields; got 'x'."),
                   "assume must be a named list of the model's fields, e.g. list(signals = 2, strength = 0.5); got \"x\".")
  listed <- "must be a named list of the model's fields (listed under assume in ?dp_plan); got"
  for (py in c("assume for dp_glm must be a dpstats.planner.GLMModel, an Assume or a dict; got 3.",
               "assume for selection must be a dpstats.simulate.Assume, a dpstats.planner.FanLv or a dict; got 3.",
               "assume for dp_felp must be a FelpModel or a dict; got 3.",
               "assume for dp_knockoff must be a KnockoffModel, an Assume or a dict; got 3.",
               "assume for dp_gmm must be a MixtureModel or a dict; got 3.")) {
    expect_match(w(py), listed, fixed = TRUE)
    expect_false(grepl("Assume|FanLv|Model\\b|dpstats\\.|dict", w(py)), info = w(py))
  }
  expect_identical(w("assume='released' is not available for this method; pass dpstats.simulate.Assume(signals=..., strength=...)."),
                   "assume = \"released\" is not available for this method; pass a named list such as list(signals = ..., strength = ...).")
  expect_identical(w("assume: a GLM has no residual noise; leave Assume's noise at 1 or pass a dpstats.planner.GLMModel."),
                   "assume: a GLM has no residual noise; leave noise out of assume (or at 1).")
  expect_match(w("simulate at a public n instead with dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)."),
               "simulate at a public n instead with dp_plan(\"dp_sis\", n = <a public n>", fixed = TRUE)
})

test_that("dp_plan's and dp_sis's assume errors reach R users in R's words", {
  skip_if_no_dpstats()
  e <- tryCatch(dp_plan("dp_gmm", n = 2000, p = 3, eps = 1, delta = 1e-6, trials = 5, seed = 1, assume = c(1, 2)),
                error = identity)
  expect_s3_class(e, "dpstats_privacy_parameter_error")
  expect_match(conditionMessage(e), "assume for dp_gmm must be a named list of the model's fields (listed under assume in ?dp_plan); got c(1, 2).",
               fixed = TRUE)
  e <- tryCatch(dp_plan("dp_sis", n = 2000, p = 10, eps = 1, trials = 5, seed = 1, assume = c(1, 2)), error = identity)
  expect_false(grepl("Assume|FanLv|dpstats\\.", conditionMessage(e)), info = conditionMessage(e))
  expect_match(conditionMessage(e), "assume for dp_sis and dp_two_stage must be a named list", fixed = TRUE)
  e <- tryCatch(dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), assume = "x"), error = identity)
  expect_s3_class(e, "dpstats_privacy_parameter_error")
  expect_false(grepl("Assume|dpstats\\.", conditionMessage(e)), info = conditionMessage(e))
  expect_match(conditionMessage(e), "named list of the model's fields, e.g. list(signals = 2, strength = 0.5)", fixed = TRUE)
  e <- tryCatch(dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), neighbouring = "add_remove",
                       assume = list(signals = 2, strength = 0.5)), error = identity)
  expect_match(conditionMessage(e), "dp_plan(\"dp_sis\", n = <a public n>", fixed = TRUE)
})

test_that("lists and tuples of strings become c(\"a\", \"b\"), parentheses inside the strings included", {
  w <- dpstats:::.r_words
  expect_identical(w("coefficients c(\"(Intercept)\", 'wt', 'factor(cyl)6') are not estimable"),
                   "coefficients c(\"(Intercept)\", \"wt\", \"factor(cyl)6\") are not estimable")
  expect_identical(w("terms ['(Intercept)', 'wt', 'factor(cyl)6'] dropped"),
                   "terms c(\"(Intercept)\", \"wt\", \"factor(cyl)6\") dropped")
  expect_identical(w("rows missing a value of ('Ozone', 'Temp', 'Wind') are dropped"),
                   "rows missing a value of c(\"Ozone\", \"Temp\", \"Wind\") are dropped")
  expect_identical(w("missing ('Ozone',) here"), "missing c(\"Ozone\") here")
  expect_identical(w("prose (see above) and f('a', 'b') stay"), "prose (see above) and f('a', 'b') stay")
  expect_identical(w("names ['a\"b', \"it's\"]"), "names c(\"a\\\"b\", \"it's\")")
  expect_identical(w("levels {'g': ['(a)', 'b)']}"), "levels list(g = c(\"(a)\", \"b)\"))")
})

test_that("bounds = list(c(lo, hi)) and a function for a method's name are answered in R's terms", {
  w <- dpstats:::.r_words
  expect_identical(w("bounds for 'all columns' must be a pair (lo, hi) of numbers, got [(0.0, 40.0)].",
                     args = list(bounds = list(c(0, 40)))),
                   paste("bounds must be one pair c(lo, hi) for all columns, or a named list with a pair for each",
                         "column, e.g. list(x = c(lo, hi)) (not an unnamed list); got list(c(0, 40))."))
  skip_if_no_dpstats()
  e <- tryCatch(dp_lm(Ozone ~ Temp + Wind, data = airquality, eps = 1, bounds = list(c(0, 40))), error = function(e) e)
  expect_false(grepl("all columns'", conditionMessage(e), fixed = TRUE))
  expect_match(conditionMessage(e), "bounds must be one pair c(lo, hi) for all columns", fixed = TRUE)
  p <- suppressWarnings(dp_plan(dp_lm, n = 100, p = 3, eps = 1, seed = 1))  # the function stands for its name
  q <- suppressWarnings(dp_plan("dp_lm", n = 100, p = 3, eps = 1, seed = 1))
  expect_identical(p$tidy, q$tidy)
  e <- tryCatch(dp_plan(mean, n = 100, p = 3, eps = 1), error = function(e) e)
  expect_s3_class(e, "dpstats_argument_error")
  expect_match(conditionMessage(e), "pass a dpstats method by its name, e.g. method = \"dp_lm\"", fixed = TRUE)
})

test_that("Python's own names in printed text are R's: dp_lm's calibrated estimates, dp_knockoff's delta2", {
  w <- dpstats:::.r_phrased
  expect_identical(w("those of the calibrated (de-shrunk) estimates, calibrated_estimates."),
                   "those of the calibrated (de-shrunk) estimates, fit$outputs$calibrated_estimates.")
  expect_identical(dpstats:::.drop_py_refs("k·d^1.5·log(1/delta)/eps; dpstats.methods.gmm.accuracy), so"),
                   "k·d^1.5·log(1/delta)/eps), so")
  expect_identical(dpstats:::.r_literals("or use offset=0 (controls a modified FDR)"),
                   "or use offset = 0 (controls a modified FDR)")
  skip_if_no_dpstats()
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5,
               bounds = list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35)), seed = 1)
  for (out in list(capture.output(print(fit)), capture.output(summary(fit)))) {
    text <- gsub("\\s+", " ", paste(out, collapse = " "))  # lines wrapped to the console
    expect_match(text, "Estimate: the calibrated estimate (coef() and tidy()'s estimate", fixed = TRUE)
    expect_false(grepl("(?<!\\$)calibrated_estimates", text, perl = TRUE))
    expect_match(text, "ridge estimate (fit$outputs$ridge_estimates)", fixed = TRUE)
    expect_false(grepl("(?<!\\$)ridge_estimates", text, perl = TRUE))
  }
  expect_identical(names(fit$outputs$calibrated_estimates), c("(Intercept)", "wt", "hp"))  # what it points to
  expect_identical(names(fit$outputs$ridge_estimates), c("(Intercept)", "wt", "hp"))
  set.seed(1)
  df <- as.data.frame(matrix(rnorm(2000 * 40), 2000))
  df$y <- 2 * df$V1 + rnorm(2000)
  acc <- dp_accountant(eps = 10, delta = 1e-5)
  ko <- suppressWarnings(dp_knockoff(y ~ ., data = df, eps = 2, delta = 1e-6, fdr = 0.2, bounds = 8, sigma = 1,
                                     beta_norm = 5, lambda_min = 0.5, oc_trials = 0, accountant = acc, seed = 1))
  expect_match(ledger(ko)$step[2], "fail with probability at most this step's delta", fixed = TRUE)
  for (out in list(capture.output(print(ko)), capture.output(summary(ko)), ledger(ko)$step, ledger(acc)$step,
                   capture.output(print(acc)))) {
    expect_false(any(grepl("delta2", out, fixed = TRUE)), info = paste(out, collapse = "\n"))
  }
})

test_that("dp_plan's chance warning names its measure in words, and dp_bh's strict refusal points to R's route", {
  expect_identical(dpstats:::.measure_words("dp_sis: predicted exact_recovery is within 2 SE of chance"),
                   "dp_sis: predicted exact recovery is within 2 SE of chance")
  expect_identical(dpstats:::.measure_words("dp_lm: predicted rel_error is more than 2 SE worse than chance"),
                   "dp_lm: predicted relative error is more than 2 SE worse than chance")
  skip_if_no_dpstats()
  w <- tryCatch(dp_plan("dp_lm", n = 100, p = 3, eps = 1, seed = 1), warning = identity)
  expect_s3_class(w, "dpstats_chance_warning")
  # relative error about 9 (s.e. 3) against 1 for reporting every slope as 0 (audit s15, F07)
  expect_match(conditionMessage(w), "dp_lm: predicted relative error is more than 2 SE worse than chance",
               fixed = TRUE)
  expect_false(grepl("rel_error", conditionMessage(w), fixed = TRUE))
  e <- tryCatch(dp_bh(c(a = 1e-9, b = 2e-8, c = 0.04), q = 0.1, eps = 1, strict = TRUE), error = identity)
  expect_s3_class(e, "dpstats_privacy_parameter_error")
  m <- conditionMessage(e)
  expect_false(grepl("dpstats.methods|eta_two_sided_z|eta=|<a public value>", m, perl = TRUE), info = m)
  expect_match(m, "declare it, e.g. eta = 0.01 (a public bound), or, for z-tests on bounded data, pass a formula",
               fixed = TRUE)
  expect_match(m, "dp_bh(y ~ ., data = df, bounds = ..., sigma = ...), from which eta is derived.", fixed = TRUE)
  # the route it points to runs under strict = TRUE
  set.seed(1)
  d <- data.frame(x1 = runif(500, -1, 1), x2 = runif(500, -1, 1))
  d$y <- 0.8 * d$x1 + rnorm(500, 0, 0.5)
  # (n = 500 is far below what the formula route needs to reject on evidence: a chance warning says so)
  f <- expect_warning(dp_bh(y ~ x1 + x2, data = d, q = 0.1, eps = 2, bounds = list(y = c(-3, 3), x1 = c(-1, 1),
                                                                                  x2 = c(-1, 1)),
                            sigma = 1, strict = TRUE, seed = 1), class = "dpstats_chance_warning")
  f <- suppressWarnings(dp_bh(y ~ x1 + x2, data = d, q = 0.1, eps = 2, bounds = list(y = c(-3, 3), x1 = c(-1, 1),
                                                                                     x2 = c(-1, 1)),
                              sigma = 1, strict = TRUE, seed = 1))
  expect_s3_class(f, "dp_bh")
})
