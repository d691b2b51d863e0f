# S3 methods of dp_result (every class c("dp_<method>", "dp_result")).

print.dp_result <- function(x, ...) {
  cat(.with_r_call(x$text, x$call), "\n", sep = "")
  invisible(x)
}

# Python's text shows the call as Python recorded it; R users see their own call (as lm prints it).
.with_r_call <- function(text, call) {
  if (!is.call(call) || is.null(text)) return(text)
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  i <- match("Call:", lines)
  if (is.na(i) || i >= length(lines)) return(text)
  paste(c(lines[seq_len(i)], paste(deparse(call), collapse = "\n"), lines[-seq_len(i + 1)]), collapse = "\n")
}

summary.dp_result <- function(object, ...) {
  structure(list(text = .with_r_call(object$summary_text, object$call), method = object$method, tidy = tidy(object),
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
  if (missing(newdata) || is.null(newdata)) {
    .dp_abort(sprintf(paste("predict() needs newdata for a %s fit: a DP result keeps no rows of the data it was",
                            "fitted on (only released quantities), so there is nothing to predict for; call",
                            "predict(fit, newdata = df) with data you hold."), object$method),
              "dpstats_argument_error")
  }
  ref <- .dp_pyref(object)
  if (!reticulate::py_has_attr(ref, "predict")) {
    .dp_abort(sprintf("predict() is not defined for %s results.", object$method), "dpstats_error")
  }
  .dp_invoke("predict", c(list(newdata = newdata), list(...)), target = ref, call = sys.call())
}

# The mixture's released parameters: weights (named comp1..compk) and a means matrix
# (rows components, columns the design's variables).
coef.dp_gmm <- function(object, ...) {
  td <- tidy(object)
  comps <- sort(unique(td$component))
  terms <- unique(as.character(td$term))
  labels <- paste0("comp", comps)
  means <- matrix(NA_real_, length(comps), length(terms), dimnames = list(labels, terms))
  means[cbind(match(td$component, comps), match(td$term, terms))] <- td$mean
  weights <- stats::setNames(td$weight[match(comps, td$component)], labels)
  list(weights = weights, means = means)
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

# broom / generics: tidy() and glance() are S3 methods of generics::tidy / generics::glance too,
# registered in NAMESPACE (S3method(generics::tidy, dp_result)), so broom::tidy(fit) works.
