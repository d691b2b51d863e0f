# A data frame passed as a value (do.call, purrr, Map) is the call's argument itself: no warning,
# error, printed call, summary or fit$call may carry its values (the outside privacy audit's F5).

secret_frame <- function() {
  set.seed(1)
  n <- 200
  df <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  df$y <- pmin(pmax(0.5 * df$x1 + rnorm(n, 0, 0.3), -1), 1)
  df$g <- sample(c("u", "v"), n, TRUE)  # character: its levels are read from the rows (a warning with advice)
  df$x1[3] <- 0.123456789
  df
}

caught <- function(expr) {
  msgs <- character()
  calls <- character()
  value <- withCallingHandlers(expr, warning = function(w) {
    msgs <<- c(msgs, conditionMessage(w))
    calls <<- c(calls, paste(deparse(conditionCall(w)), collapse = " "))
    invokeRestart("muffleWarning")
  })
  list(value = value, messages = msgs, calls = calls)
}

no_values <- function(txt) !any(grepl("0.123456|structure\\(list|c\\(-?0\\.[0-9]{5}", txt))

test_that("do.call with the data frame as a value: advice says data, the call shows a placeholder", {
  skip_if_no_dpstats()
  df <- secret_frame()
  res <- caught(do.call(dp_lm, list(y ~ x1 + g, data = df, eps = 2, delta = 1e-5, bounds = c(-1, 1),
                                    n_boot = 100, seed = 1)))
  fit <- res$value
  expect_true(length(res$messages) >= 1L)
  expect_true(no_values(res$messages))
  expect_true(all(nchar(res$messages) < 1000))
  expect_match(res$messages, "data$g <- factor(data$g, levels = c(...))", fixed = TRUE, all = FALSE)
  expect_true(no_values(res$calls))
  expect_identical(fit$call$data, as.name("<data frame>"))
  expect_identical(fit$call[[1]], as.name("dp_lm"))  # the function's name, not its body
  out <- c(capture.output(print(fit)), capture.output(print(summary(fit))))
  expect_true(no_values(out))
  expect_true(any(grepl("dp_lm(formula = y ~ x1 + g, data = `<data frame>`", out, fixed = TRUE)))
  expect_true(no_values(paste(deparse(fit$call), collapse = " ")))
})

test_that("an error from a call with the data as a value carries no data values", {
  skip_if_no_dpstats()
  df <- secret_frame()
  e <- tryCatch(do.call(dp_lm, list(y ~ x1 + nope, data = df, eps = 2, delta = 1e-5, bounds = c(-1, 1))),
                error = function(e) e)
  expect_s3_class(e, "dpstats_error")
  expect_true(no_values(conditionMessage(e)))
  expect_true(no_values(paste(deparse(conditionCall(e)), collapse = " ")))
})

test_that("Map and purrr-style calls: no data values, advice in words the user can follow", {
  skip_if_no_dpstats()
  df <- secret_frame()
  res <- caught(Map(dp_lm, list(y ~ x1 + g), list(df), eps = 2, delta = 1e-5, bounds = list(c(-1, 1)),
                    n_boot = 100, seed = 1))
  fit <- res$value[[1]]
  expect_true(no_values(res$messages))
  expect_match(res$messages, "data$g <- factor(data$g", fixed = TRUE, all = FALSE)  # not dots[[2L]][[1L]]$g
  expect_false(any(grepl("dots[[", res$messages, fixed = TRUE)))
  expect_true(no_values(c(capture.output(print(fit)), capture.output(print(summary(fit))))))
  # a function of the data (as purrr::map(list(df), ~ dp_lm(..., data = .x))): its name is kept
  res <- caught(Map(function(d) dp_lm(y ~ x1 + g, data = d, eps = 2, delta = 1e-5, bounds = c(-1, 1),
                                      n_boot = 100, seed = 1), list(df)))
  expect_identical(res$value[[1]]$call$data, as.name("d"))
  expect_match(res$messages, "d$g <- factor(d$g", fixed = TRUE, all = FALSE)
})

test_that("data named by a symbol or a short expression is kept as written", {
  label <- dpstats:::.data_label
  expect_identical(label(quote(df)), "df")
  expect_identical(label(quote(subset(df, x > 0))), "subset(df, x > 0)")
  expect_null(label(data.frame(a = 1:3)))
  expect_null(label(quote(dots[[2L]][[1L]])))
  expect_null(label(as.call(list(as.name("rbind"), data.frame(a = 1)))))  # a value inside an expression
  expect_null(label(str2lang(paste0("f(", paste(rep("averyveryverylongname", 5), collapse = ", "), ")"))))
  sc <- dpstats:::.shareable_call
  cl <- as.call(list(as.name("dp_bh"), p_values = c(0.01, 0.2, 0.04), q = 0.1))
  expect_identical(sc(cl)$p_values, as.name("<p-values>"))
  expect_identical(sc(cl)$q, 0.1)
  expect_identical(sc(quote(dp_lm(y ~ x, data = df))), quote(dp_lm(y ~ x, data = df)))
})
