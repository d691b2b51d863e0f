test_that("data frames reach pandas with their types, levels and NAs", {
  skip_if_no_dpstats()
  df <- data.frame(x = c(1.5, NA, 3), i = c(1L, NA, 3L), j = 1:3, t = c(TRUE, FALSE, NA),
                   g = factor(c("b", "a", NA), levels = c("b", "a", "c")),
                   o = factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE),
                   s = c("z", NA, "a"), stringsAsFactors = FALSE)
  # pandas' frame read back as a transport: its kinds are the dtypes (float64 double, int64 integer,
  # boolean logical, category factor or ordered, str character)
  t <- bridge_call("transport_from_frame", data = df)
  expect_equal(unlist(t$kinds), c("double", "double", "integer", "logical", "factor", "ordered", "character"))
  expect_equal(unlist(t$levels[[2]]), c("b", "a", "c"))
  expect_equal(unlist(t$levels[[3]]), c("lo", "hi"))
  num <- matrix(unlist(lapply(t$numeric, function(v) if (is.null(v)) NA else v)), 3)
  expect_equal(num, cbind(c(1.5, NA, 3), c(1, NA, 3), 1:3))
  codes <- matrix(unlist(lapply(t$codes, function(v) if (is.null(v)) NA else v)), 3)
  expect_equal(colSums(is.na(codes)), c(1, 1, 0, 1))  # t, g, o, s
})

test_that("a wide data frame crosses quickly", {
  skip_if_no_dpstats()
  wide <- as.data.frame(matrix(rnorm(100 * 2000), 100))
  wide$y <- rnorm(100)
  elapsed <- system.time(fit <- dp_sis(y ~ ., data = wide, eps = 1, k = 3, bounds = c(-5, 5), seed = 1,
                                       oc_trials = 0L))[["elapsed"]]
  expect_equal(fit$p, 2000)
  expect_lt(elapsed, 20)
})

test_that("the interpreter is found from DPSTATS_PYTHON", {
  old <- Sys.getenv("DPSTATS_PYTHON", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("DPSTATS_PYTHON") else Sys.setenv(DPSTATS_PYTHON = old))
  Sys.setenv(DPSTATS_PYTHON = "/no/such/python")
  expect_error(dpstats_python(), class = "dpstats_python_missing_error")
  Sys.setenv(DPSTATS_PYTHON = Sys.which("Rscript"))
  expect_equal(dpstats_python(), unname(Sys.which("Rscript")))
})

test_that("install_dpstats() builds the pip commands", {
  steps <- install_dpstats(path = tempdir(), python = "python3", venv = file.path(tempdir(), "venv"),
                           editable = TRUE, dry_run = TRUE)
  expect_length(steps, 2)
  expect_equal(steps[[1]][2:3], c("-m", "venv"))
  expect_true(all(c("pip", "install", "-e") %in% steps[[2]]))
})

test_that("a missing Python or dpstats is a classed error in a fresh R", {
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- paste0("r <- tryCatch(dpstats::dp_sis(y ~ ., data = data.frame(y = 1:3, x = 3:1), eps = 1), ",
                 "dpstats_python_missing_error = function(e) 'python_missing', ",
                 "dpstats_missing_error = function(e) 'dpstats_missing'); cat(r)")
  run <- function(py) {
    out <- suppressWarnings(system2(rscript, c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                                    env = paste0("DPSTATS_PYTHON=", py)))
    paste(out, collapse = "\n")
  }
  expect_match(run("/no/such/python"), "python_missing")
  skip_if_not(file.exists("/usr/bin/python3"))
  # Debian's own Python exists but has no dpstats (skip if someone installed it there)
  has <- system2("/usr/bin/python3", c("-c", shQuote("import dpstats")), stdout = FALSE, stderr = FALSE)
  skip_if(has == 0, "dpstats is installed in /usr/bin/python3")
  expect_match(run("/usr/bin/python3"), "dpstats_missing")
})
