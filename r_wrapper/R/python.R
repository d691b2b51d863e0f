# Finding Python and the dpstats module; classed errors when either is missing.

.dp_env <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  # Nothing is started here: Python is found and started (R/channel.R) on the first call, so that
  # library(dpstats) is instant and works (and explains itself later) without Python.
  .dp_env$channel <- NULL
  .dp_env$bridge <- .dp_bridge()
}

.dp_abort <- function(message, class, call = .user_call()) {
  stop(errorCondition(message, class = unique(c(class, "dpstats_error")), call = call))
}

# The user's call for a condition: the innermost call of one of this package's own functions or
# methods (dp_sis(...), confint.dp_lm(...)), not of a helper (.dp_fit) or of R's generics.
.user_call <- function() {
  ns <- asNamespace("dpstats")
  for (cl in rev(sys.calls())) {
    f <- cl[[1]]
    if (is.call(f) && identical(f[[1]], as.name("::"))) f <- f[[3]]
    if (is.name(f)) {
      nm <- as.character(f)
      if (!startsWith(nm, ".") && exists(nm, envir = ns, inherits = FALSE)) return(cl)
    }
  }
  NULL
}

# absolute, but symlinks kept: a venv's bin/python is a symlink to the base interpreter
.absolute <- function(p) {
  if (grepl("^(/|[A-Za-z]:)", p)) p else file.path(getwd(), p)
}

.venv_python <- function(venv) {
  for (rel in c("bin/python", "Scripts/python.exe")) {
    p <- file.path(venv, rel)
    if (file.exists(p)) return(.absolute(p))
  }
  NULL
}

# The Python interpreter dpstats will use.
dpstats_python <- function() {
  opt <- getOption("dpstats.python")
  for (src in list(list("option dpstats.python", opt),
                   list("DPSTATS_PYTHON", Sys.getenv("DPSTATS_PYTHON")),
                   list("RETICULATE_PYTHON", Sys.getenv("RETICULATE_PYTHON")))) {
    value <- src[[2]]
    if (!is.null(value) && nzchar(value)) {
      if (!file.exists(value)) {
        .dp_abort(sprintf("%s is set to '%s', which does not exist; point it to a Python that has dpstats (e.g. the project's .venv/bin/python).",
                          src[[1]], value), "dpstats_python_missing_error")
      }
      return(.absolute(value))
    }
  }
  # the package installed inside a virtual environment (scripts/dpstats.sh: .venv/R-library):
  # system.file() is .venv/R-library/dpstats, its library .venv/R-library, the venv .venv
  lib <- dirname(system.file(package = "dpstats"))
  p <- .venv_python(dirname(lib))
  if (!is.null(p)) return(p)
  # a .venv in the working directory or above
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    p <- .venv_python(file.path(dir, ".venv"))
    if (!is.null(p)) return(p)
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  p <- Sys.which(c("python3", "python"))
  p <- p[nzchar(p)]
  if (length(p)) return(unname(p[[1]]))
  NULL
}

# The running child (R/channel.R), started on the first call and again after it stopped. A forked
# R (parallel::mclapply) starts its own: the parent's channel is not shared.
.dp_ensure <- function() {
  ch <- .dp_env$channel
  if (!is.null(ch) && identical(ch$r_pid, Sys.getpid())) return(invisible(ch))
  py <- dpstats_python()
  if (is.null(py)) {
    .dp_abort("no Python interpreter found: set DPSTATS_PYTHON to a Python (>= 3.10) that has dpstats, or run install_dpstats().",
              "dpstats_python_missing_error")
  }
  .dp_env$channel <- .dp_start(py)
  invisible(.dp_env$channel)
}

dpstats_available <- function() {
  tryCatch({
    .dp_ensure()
    TRUE
  }, dpstats_error = function(e) FALSE)
}

dpstats_has <- function(name) .dp_env$bridge$has_function(name)

install_dpstats <- function(path = NULL, python = NULL, venv = NULL, editable = FALSE,
                            dry_run = FALSE) {
  if (is.null(python)) python <- dpstats_python()
  if (is.null(python)) {
    .dp_abort("no Python found: pass python = '/path/to/python3'.", "dpstats_python_missing_error")
  }
  steps <- list()
  if (!is.null(venv)) {
    steps[[length(steps) + 1]] <- c(python, "-m", "venv", venv)
    python <- file.path(venv, "bin", "python")
  }
  if (is.null(path)) path <- .find_source()
  target <- if (is.null(path)) "dpstats" else normalizePath(path, mustWork = TRUE)
  pip <- c(python, "-m", "pip", "install", "--quiet")
  if (editable && !is.null(path)) pip <- c(pip, "-e")
  steps[[length(steps) + 1]] <- c(pip, target)
  if (dry_run) return(steps)
  for (cmd in steps) {
    status <- system2(cmd[1], shQuote(cmd[-1]))
    if (!identical(status, 0L)) {
      .dp_abort(sprintf("command failed (status %s): %s", status, paste(cmd, collapse = " ")),
                "dpstats_install_error")
    }
  }
  message("dpstats installed for ", python, "; restart R, or set DPSTATS_PYTHON = \"", python, "\".")
  invisible(python)
}

.find_source <- function() {
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    f <- file.path(dir, "pyproject.toml")
    if (file.exists(f) && any(grepl('^name = "dpstats"', readLines(f, warn = FALSE)))) return(dir)
    parent <- dirname(dir)
    if (identical(parent, dir)) return(NULL)
    dir <- parent
  }
}
