# Errors and warnings that reach R users are in R's words: no Python literal, the user's call.

python_syntax <- "\\[|\\]|\\{|\\bTrue\\b|\\bFalse\\b|\\bNone\\b|\\binf\\b|random_state|\\.py\\b"

test_that("Python literals are rewritten to R", {
  w <- dpstats:::.r_words
  expect_identical(w("eps must be positive, got -1.0."), "eps must be positive, got -1.")
  expect_identical(w("got [1.0, 2.0]"), "got c(1, 2)")
  expect_identical(w("must be finite with lo < hi, got (10.0, -10.0)."), "must be finite with lo < hi, got c(10, -10).")
  expect_identical(w("must be one of ['dp_sis', 'dp_lm'], got 'foo'."), "must be one of c(\"dp_sis\", \"dp_lm\"), got \"foo\".")
  expect_identical(w("e.g. bounds={'x': (0, 10), ...}"), "e.g. bounds = list(x = c(0, 10), ...)")
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
