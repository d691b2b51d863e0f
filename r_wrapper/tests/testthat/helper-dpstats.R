# Attach the package when the suite is run on its own, e.g. from the repository root:
#   Rscript -e 'testthat::test_dir("r_wrapper/tests/testthat")'
# (R CMD check and tests/testthat.R attach it already.)
if (!"package:dpstats" %in% search()) suppressPackageStartupMessages(library(dpstats))

# Under DPSTATS_REQUIRE_PYTHON=true (set by the pytest runner and under CI) a missing
# Python side is a failure; otherwise the tests that need it are skipped.
skip_if_no_dpstats <- function() {
  if (dpstats_available()) return(invisible(TRUE))
  if (tolower(Sys.getenv("DPSTATS_REQUIRE_PYTHON")) %in% c("1", "true", "yes")) {
    stop("Python with dpstats is required (DPSTATS_REQUIRE_PYTHON is set) but is not available")
  }
  skip("Python with dpstats is not available")
}

sim_data <- function(n = 120, d = 12, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d, dimnames = list(NULL, paste0("x", seq_len(d))))
  df <- as.data.frame(x)
  df$g <- factor(sample(c("lo", "mid", "hi"), n, replace = TRUE), levels = c("lo", "mid", "hi"))
  df$y <- 3 * df$x1 - 3 * df$x2 + rnorm(n)
  df
}

# The message Python itself gives for the same call on the same data (pandas built by the bridge),
# before R rewords it.
python_message <- function(fun, formula, data, ...) {
  bridge <- dpstats:::.dp_env$bridge
  f <- paste(deparse(formula), collapse = " ")
  res <- bridge$call_from_r(fun, list(f), list(...), list(data = dpstats:::.dp_encode_frame(data)))
  if (isTRUE(res$ok)) NA_character_ else res$error_message
}

# A call of one of dpstats.rbridge's own functions.
bridge_call <- function(.fn, ...) {
  dpstats:::.dp_invoke(.fn, list(...), target = dpstats:::.dp_env$bridge)
}
