# S3 methods of dp_result (every class c("dp_<method>", "dp_result")).

print.dp_result <- function(x, ...) {
  cat(x$text, "\n", sep = "")
  invisible(x)
}

summary.dp_result <- function(object, ...) {
  structure(list(text = object$summary_text, method = object$method, tidy = tidy(object),
                 glance = glance(object), ledger = ledger(object), privacy = object$privacy),
            class = "summary.dp_result")
}

print.summary.dp_result <- function(x, ...) {
  cat(x$text, "\n", sep = "")
  invisible(x)
}

coef.dp_result <- function(object, ...) {
  if (!is.null(object$coef)) return(object$coef)
  td <- tidy(object)
  for (col in c("estimate", "weight", "statistic", "selected")) {
    if (!is.null(td[[col]]) && !is.null(td$term)) return(stats::setNames(td[[col]], td$term))
  }
  NULL
}

predict.dp_result <- function(object, newdata, ...) {
  ref <- .dp_pyref(object)
  if (!reticulate::py_has_attr(ref, "predict")) {
    .dp_abort(sprintf("predict() is not defined for %s results.", object$method), "dpstats_error")
  }
  args <- list(...)
  if (!missing(newdata)) args <- c(list(newdata = newdata), args)
  .dp_invoke("predict", args, target = ref, call = sys.call())
}

as.data.frame.dp_result <- function(x, row.names = NULL, optional = FALSE, ...) {
  tidy(x)
}

tidy <- function(x, ...) UseMethod("tidy")

glance <- function(x, ...) UseMethod("glance")

tidy.dp_result <- function(x, ...) {
  td <- x$tidy
  if (is.null(td)) td <- data.frame(term = unlist(x$terms), stringsAsFactors = FALSE)
  td
}

glance.dp_result <- function(x, ...) {
  x$glance
}

ledger <- function(x, ...) UseMethod("ledger")

ledger.dp_result <- function(x, ...) {
  .simplify_frame(x$privacy$ledger)
}

report <- function(x, path, ...) UseMethod("report")

report.dp_result <- function(x, path, ...) {
  if (missing(path) || !is.character(path) || length(path) != 1L) {
    .dp_abort("path must be one file name, e.g. report(fit, \"analysis.html\").", "dpstats_error")
  }
  ref <- .dp_pyref(x)
  .dp_invoke("report", list(path = path.expand(path), ...), target = ref, call = sys.call())
  invisible(path)
}

# broom / generics: register tidy() and glance() methods for their generics when they
# are installed, whenever they get loaded (vctrs' s3_register idea, without the dependency).
.register_broom_methods <- function() {
  for (pkg in c("generics", "broom")) {
    if (!requireNamespace(pkg, quietly = TRUE)) next
    register <- local({
      p <- pkg
      function(...) {
        ns <- asNamespace(p)
        for (g in c("tidy", "glance")) {
          if (exists(g, envir = ns, inherits = FALSE)) {
            registerS3method(g, "dp_result", get(paste0(g, ".dp_result")), envir = ns)
          }
        }
      }
    })
    if (isNamespaceLoaded(pkg)) register()
    setHook(packageEvent(pkg, "onLoad"), register)
  }
}
