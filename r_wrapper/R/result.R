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
  as.data.frame(x$tidy, stringsAsFactors = FALSE)
}

tidy <- function(x, ...) UseMethod("tidy")

glance <- function(x, ...) UseMethod("glance")

# broom's column names (Python's tables spell some of them with underscores), broom's columns first
# and in broom's order, then the method's own.
.broom_names <- c(std_error = "std.error", p_value = "p.value", conf_low = "conf.low", conf_high = "conf.high",
                  df_residual = "df.residual", null_deviance = "null.deviance", df_null = "df.null",
                  r_squared = "r.squared", adj_r_squared = "adj.r.squared", loglik = "logLik", n = "nobs")
.broom_order <- list(tidy = c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"),
                     glance = c("r.squared", "adj.r.squared", "sigma", "statistic", "p.value", "df", "null.deviance",
                                "df.null", "logLik", "AIC", "BIC", "deviance", "df.residual", "nobs"))

.broom_frame <- function(df, order = .broom_order$tidy) {
  if (is.null(df) || !is.data.frame(df)) return(df)
  nm <- names(df)
  hit <- nm %in% names(.broom_names)
  nm[hit] <- .broom_names[nm[hit]]
  names(df) <- nm
  df[c(intersect(order, nm), setdiff(nm, order))]
}

# A tibble where tibble is installed (as broom returns), a data.frame otherwise.
.as_tibble <- function(df) {
  if (is.data.frame(df) && requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

tidy.dp_result <- function(x, ...) {
  td <- x$tidy
  if (is.null(td)) td <- data.frame(term = unlist(x$terms), stringsAsFactors = FALSE)
  .as_tibble(td)
}

# A non-private regression (eps = Inf) adds broom's fit statistics computed as lm/glm compute them
# (glance(lm(...)), glance(glm(...))); a DP fit's glance has released quantities only.
glance.dp_result <- function(x, ...) {
  g <- x$glance
  if (!.is_dp_fit(x) && !is.null(x$model)) {
    extra <- .fit_statistics(x)
    g <- cbind(as.data.frame(extra), g[setdiff(names(g), names(extra))])
    g <- .broom_frame(g, .broom_order$glance)
  } else if (inherits(x, "dp_lm") && "sigma" %in% names(g)) {
    g$sigma <- NA_real_  # not released by a DP fit (see sigma())
  }
  .as_tibble(g)
}

.fit_statistics <- function(x) {
  mf <- x$model
  y <- stats::model.response(mf)
  if (is.factor(y)) y <- as.numeric(y != levels(y)[1])
  cf <- coef(x)
  n <- length(y)
  int <- "(Intercept)" %in% names(cf)
  ll <- logLik(x)
  out <- list(logLik = as.numeric(ll), AIC = stats::AIC(ll), BIC = stats::BIC(ll), deviance = deviance(x),
              df.residual = df.residual(x), nobs = n)
  if (inherits(x, "dp_lm")) {
    rss <- deviance(x)
    tss <- if (int) sum((y - mean(y))^2) else sum(y^2)
    rdf <- df.residual(x)
    df <- length(cf) - int
    f <- ((tss - rss) / df) / (rss / rdf)
    return(c(list(r.squared = 1 - rss / tss, adj.r.squared = 1 - rss / tss * (n - int) / rdf,
                  sigma = sqrt(rss / rdf), statistic = f,
                  p.value = stats::pf(f, df, rdf, lower.tail = FALSE), df = df), out))
  }
  fam <- get(x$outputs$family, mode = "function", envir = asNamespace("stats"))()
  mu0 <- rep(if (int) mean(y) else fam$linkinv(0), n)
  c(list(null.deviance = sum(fam$dev.resids(y, mu0, rep(1, n))), df.null = n - int), out)
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
