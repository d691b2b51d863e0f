# Finding Python and the dpstats module; classed errors when either is missing.

.dp_env <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  # Nothing is started here, not even reticulate (loading it loads Matrix, about 0.7 s):
  # Python is found and dpstats imported on the first call, so that library(dpstats) is
  # instant and works (and explains itself later) without Python.
  .dp_env$ready <- FALSE
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

.dp_ensure <- function() {
  if (isTRUE(.dp_env$ready)) return(invisible(TRUE))
  if (!reticulate::py_available(initialize = FALSE)) {
    py <- dpstats_python()
    if (is.null(py)) {
      .dp_abort("no Python interpreter found: set DPSTATS_PYTHON to a Python (>= 3.10) that has dpstats, or run install_dpstats().",
                "dpstats_python_missing_error")
    }
    err <- tryCatch(withCallingHandlers({
      .dp_start_python(py)
      NULL
    }, warning = function(w) {
      # reticulate looks for Poetry when a pyproject.toml is in the working directory;
      # the interpreter is already chosen, so that hint does not apply
      if (grepl("Poetry", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
    }), error = function(e) conditionMessage(e))
    if (!is.null(err)) {
      .dp_abort(sprintf("Python at '%s' cannot be started from R: %s", py, err),
                "dpstats_python_missing_error")
    }
  }
  .drop_shadowing_dir()
  if (!reticulate::py_module_available("dpstats")) {
    .dp_abort(sprintf("the Python package 'dpstats' is not installed for %s; run install_dpstats() or set DPSTATS_PYTHON to a Python that has it.",
                      reticulate::py_config()$python), "dpstats_missing_error")
  }
  .dp_env$bridge <- reticulate::import("dpstats.rbridge")
  .dp_env$ready <- TRUE
  invisible(TRUE)
}

# Start `py` in this R session. reticulate::use_python(required = TRUE) would run Python once
# to read its configuration and py_config() a second time; naming it in RETICULATE_PYTHON
# while Python starts (then restoring the variable) does it once, about 0.2 s less. A
# RETICULATE_PYTHON the user set is left alone (reticulate then warns that it takes precedence).
.dp_start_python <- function(py) {
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) {
    reticulate::use_python(py, required = TRUE)
  } else {
    Sys.setenv(RETICULATE_PYTHON = py)
    on.exit(Sys.unsetenv("RETICULATE_PYTHON"), add = TRUE)
  }
  reticulate::py_config()
}

dpstats_available <- function() {
  tryCatch(isTRUE(.dp_ensure()), dpstats_error = function(e) FALSE)
}

dpstats_has <- function(name) {
  .dp_ensure()
  isTRUE(.dp_env$bridge$has_function(name))
}

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

# A directory called "dpstats" in the working directory (e.g. R CMD check's installed
# copy of this package) would be imported by Python as an empty namespace package.
.drop_shadowing_dir <- function() {
  reticulate::py_run_string(paste(
    "import importlib.util as _u, os as _os, sys as _s",
    "_spec = _u.find_spec('dpstats')",
    "if _spec is not None and _spec.origin in (None, 'namespace'):",
    "    _cwd = _os.getcwd()",
    "    _s.path[:] = [p for p in _s.path if p not in ('', '.', _cwd)]",
    "    for _k in [k for k in _s.modules if k == 'dpstats' or k.startswith('dpstats.')]:",
    "        del _s.modules[_k]",
    sep = "\n"))
  invisible(NULL)
}
