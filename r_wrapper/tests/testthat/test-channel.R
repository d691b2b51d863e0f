# The channel to Python (R/channel.R, dpstats/rpipe.py): private, exact, and restarted when Python stops.

mtcars_fit <- function(...) dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1, ...)

process_exists <- function(pid) isTRUE(tools::pskill(pid, 0L))

test_that("the channel is private: a 0700 directory of this user, gone once Python has answered", {
  skip_if_no_dpstats()
  dir <- dpstats:::.dp_private_dir()
  on.exit(unlink(dir, recursive = TRUE))
  info <- file.info(dir)
  expect_identical(format(info$mode), "700")
  expect_identical(info$uname, Sys.info()[["effective_user"]])
  expect_identical(dirname(dir), normalizePath(tempdir()))
  # Python refuses a directory that others could open
  Sys.chmod(dir, "0755", use_umask = FALSE)
  err <- tryCatch(dpstats:::.dp_start(dpstats_python(), dir), error = identity)
  expect_s3_class(err, "dpstats_channel_error")
  expect_match(conditionMessage(err), "can be opened by other users (mode 0755)", fixed = TRUE)
  # the running channel's FIFOs are no longer reachable by name
  ch <- dpstats:::.dp_ensure()
  expect_false(dir.exists(ch$dir))
})

test_that("a Python that died is a classed error naming it; the next call starts another", {
  skip_if_no_dpstats()
  fit <- mtcars_fit()
  old <- dpstats:::.dp_ensure()$pid
  tools::pskill(old, tools::SIGKILL)
  for (i in 1:100) if (process_exists(old)) Sys.sleep(0.05)
  err <- tryCatch(mtcars_fit(), error = identity)
  expect_s3_class(err, c("dpstats_python_stopped_error", "dpstats_python_missing_error", "dpstats_error"))
  expect_match(conditionMessage(err), sprintf("Python (pid %d, ", old), fixed = TRUE)
  expect_match(conditionMessage(err), "The next call starts Python again.", fixed = TRUE)
  expect_identical(conditionCall(err)[[1]], quote(dp_sis))
  again <- mtcars_fit()
  expect_false(identical(dpstats:::.dp_ensure()$pid, old))
  expect_identical(tidy(again), tidy(fit))
  # objects of the old process are stale, with the messages they always had
  expect_error(report(fit, tempfile()), class = "dpstats_stale_error")
  expect_error(report(fit, tempfile()), "this fit's Python object is gone", fixed = TRUE)
})

test_that("Ctrl-C stops the call in Python, classed, and leaves Python and its objects alone", {
  skip_if_no_dpstats()
  fit <- mtcars_fit()
  pid <- dpstats:::.dp_ensure()$pid
  # Ctrl-C at R's terminal reaches the child too (it is in R's process group); here it alone gets it
  system(sprintf("(sleep 1; kill -INT %d) > /dev/null 2>&1 &", pid))
  started <- Sys.time()
  err <- tryCatch(dp_lm(mpg ~ wt, data = mtcars, eps = 1, bounds = list(mpg = c(10, 35), wt = c(1, 6)),
                        n_boot = 2e6, seed = 1), error = identity)
  expect_lt(as.numeric(Sys.time() - started, units = "secs"), 10)
  expect_s3_class(err, c("dpstats_call_interrupted_error", "dpstats_error"))
  expect_identical(dpstats:::.dp_ensure()$pid, pid)
  expect_equal(tidy(mtcars_fit()), tidy(fit))
  path <- tempfile(fileext = ".html")
  expect_identical(report(fit, path), path)
})

test_that("an accountant saved and reloaded is stale, as a target and as an argument", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 2)
  again <- unserialize(serialize(acc, NULL))
  expect_error(print(again), class = "dpstats_stale_error")
  expect_error(mtcars_fit(accountant = again), "this accountant's Python object is gone", fixed = TRUE)
  fit <- mtcars_fit(accountant = acc)  # the original still works
  expect_equal(ledger(acc)$eps, 1)
})

test_that("R values reach Python with their types and every bit, and come back", {
  skip_if_no_dpstats()
  echo <- function(x) dpstats:::.dp_env$bridge$echo(x)[[1]]
  d <- c(0.1, 1 / 3, pi * 1e300, -0, .Machine$double.xmin, 2^53 + 2, 5, -1e-320)
  expect_identical(unlist(echo(d)), d)
  expect_identical(echo(5), 5)                    # a double stays a double
  expect_identical(echo(5L), 5L)
  expect_identical(echo(list(5)), list(5))        # as.list keeps a list of one
  expect_identical(echo(c(a = 1, b = 2)), list(1, 2))  # vector names dropped, as reticulate did
  expect_identical(echo(list(a = TRUE, b = NULL, c = "x")), list(a = TRUE, b = NULL, c = "x"))
  expect_identical(unlist(echo(c(Inf, -Inf))), c(Inf, -Inf))
  expect_identical(echo(list(NA_real_, NaN, NA, NA_integer_, NA_character_)), rep(list(NULL), 5))
  s <- c("plain", "quote \" and \\ backslash", "tab\tnew\nline\r", "bell\001", "é ü ß 統計 \U0001F600", "")
  expect_identical(unlist(echo(s)), s)
  expect_identical(names(echo(setNames(list(1, 2), c("a b", "é\"")))), c("a b", "é\""))
  expect_identical(echo(setNames(list(), character())), setNames(list(), character()))
  expect_identical(echo(factor(c("b", "a"))), list("b", "a"))
  expect_error(echo(list(sum)), class = "dpstats_argument_error")
})

test_that("a large data frame crosses exactly, and fits as it did through reticulate", {
  skip_if_no_dpstats()
  set.seed(7)
  n <- 2e5
  df <- as.data.frame(matrix(rnorm(n * 19), n))
  df$g <- factor(sample(c("lo", "mid", "hi"), n, replace = TRUE), levels = c("lo", "mid", "hi"))
  df$V3[c(5, 77)] <- NA
  sent <- dpstats:::.dp_encode_frame(df)
  expect_s3_class(sent$numeric, "dp_doubles")  # written column by column, never copied into one block
  as_raw <- function(x) {
    if (inherits(x, "dp_doubles")) return(writeBin(unlist(x, use.names = FALSE), raw(), endian = "little"))
    if (is.list(x)) lapply(x, as_raw) else x
  }
  bytes <- as_raw(sent)
  expect_identical(dpstats:::.dp_env$bridge$echo(sent)[[1]], bytes)  # 30 MB there and back, bit for bit
  args <- list(list(), list(formula = "V1 ~ .", eps = 1, bounds = c(-5, 5), n_boot = 100L, random_state = 3L),
               list(data = sent), NULL)
  new <- do.call(dpstats:::.dp_env$bridge$call_from_r, c("dp_lm", args))
  expect_true(new$ok)
  fit <- dp_lm(V1 ~ ., data = df, eps = 1, bounds = c(-5, 5), n_boot = 100L, seed = 3)
  expect_identical(coef(fit), dpstats:::.dp_convert(new$json, NULL)$coef)
  skip_if_not_installed("reticulate")
  old <- withCallingHandlers({  # the old transport, in this R process
    reticulate::use_python(dpstats_python(), required = TRUE)
    do.call(reticulate::import("dpstats.rbridge")$call_from_r,
            c("dp_lm", list(args[[1]], args[[2]], list(data = bytes), NULL)))
  }, warning = function(w) if (grepl("Poetry", conditionMessage(w))) invokeRestart("muffleWarning"))
  undated <- function(json) sub('"created": "[^"]*"', "", json)
  expect_true(identical(undated(new$json), undated(old$json)))  # the same JSON text: tolerance 0
})

test_that("warnings and errors arrive as classed conditions with the user's call", {
  skip_if_no_dpstats()
  w <- tryCatch(dp_lm(mpg ~ wt, data = mtcars, eps = Inf), warning = identity)
  expect_s3_class(w, c("dpstats_non_private_warning", "dpstats_warning", "warning"))
  expect_identical(conditionCall(w), quote(dp_lm(formula = mpg ~ wt, data = mtcars, eps = Inf)))
  e <- tryCatch(dp_sis(mpg ~ ., data = mtcars, eps = -1, k = 2), error = identity)
  expect_s3_class(e, c("dpstats_privacy_parameter_error", "dpstats_error", "error"))
  expect_identical(conditionCall(e), quote(dp_sis(formula = mpg ~ ., data = mtcars, eps = -1, k = 2)))
  expect_error(dp_call("no_such_function"), class = "dpstats_error")
})

test_that("a forked R starts its own Python and leaves the parent's alone", {
  skip_if_no_dpstats()
  skip_on_os("windows")
  parent <- dpstats:::.dp_ensure()$pid
  fit <- mtcars_fit()
  pids <- parallel::mclapply(1:2, function(i) c(dpstats:::.dp_ensure()$pid, length(tidy(mtcars_fit())$term)),
                             mc.cores = 2)
  expect_false(any(vapply(pids, `[`, 0, 1) == parent))
  expect_identical(dpstats:::.dp_ensure()$pid, parent)
  expect_identical(tidy(mtcars_fit()), tidy(fit))
})
