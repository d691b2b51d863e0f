# S3 methods of dp_result (every class c("dp_<method>", "dp_result")).

print.dp_result <- function(x, ...) {
  cat(.r_text(x$text, x), "\n", sep = "")
  invisible(x)
}

summary.dp_result <- function(object, ...) {
  .refuse_dots("summary", list(...), sys.call())
  out <- list(text = .r_text(object$summary_text, object), method = object$method, tidy = tidy(object),
              glance = glance(object), ledger = ledger(object), privacy = object$privacy)
  withheld <- NULL
  if (inherits(object, c("dp_lm", "dp_glm", "dp_select_infer", "dp_vertical_glm"))) {
    out <- c(out, .lm_summary_parts(object, out$tidy, out$glance))
  }
  if (inherits(object, c("dp_lm", "dp_glm"))) {
    rows <- .summary_rows(object)
    out <- c(out, rows$parts)
    withheld <- rows$withheld
    out$text <- .with_residuals_block(out$text, object, rows$parts)
  }
  structure(out, class = "summary.dp_result", dpstats_withheld = withheld)
}

# summary.lm's and summary.glm's components from the fit's rows and covariance: call, terms, and for a
# non-private fit (eps = Inf) whose rows are kept the residuals (summary.glm: deviance.resid) and
# cov.unscaled (lm: vcov / sigma^2; glm: vcov, dispersion 1). A DP fit releases no residuals, and a DP
# dp_lm's vcov is its bootstrap's, not sigma^2 (X'X)^-1: those are withheld, each with its reason, which
# `$` gives instead of NULL. A DP dp_glm's cov.scaled and cov.unscaled are its released vcov (Wald).
.summary_rows <- function(object) {
  glm <- inherits(object, "dp_glm")
  keep <- !is.na(coef(object))
  V <- vcov(object)[keep, keep, drop = FALSE]
  parts <- list(call = object$call, terms = terms(object))
  if (glm) parts <- c(parts, list(family = family(object), iter = as.integer(object$outputs$iterations),
                                  cov.scaled = V))
  withheld <- NULL
  if (.is_dp_fit(object)) {
    if (glm) return(list(parts = c(parts, list(cov.unscaled = V)), withheld = c(deviance.resid = .per_row)))
    cov <- "its vcov(fit) is the calibrated bootstrap's covariance of the coefficients, not sigma^2 (X'X)^-1 of the data, which is not released; use vcov(fit)."
    return(list(parts = parts, withheld = c(residuals = .per_row, cov.unscaled = cov)))
  }
  resid <- tryCatch(if (glm) .glm_residuals(object, "deviance", "summary()", NULL)
                    else .lm_residuals(object, "summary()", NULL), dpstats_error = function(e) NULL)
  name <- if (glm) "deviance.resid" else "residuals"
  if (is.null(resid)) withheld <- stats::setNames(.subset2(object, "rows_not_kept"), name) else parts[[name]] <- resid
  parts$cov.unscaled <- if (glm) V else V / sigma(object)^2
  list(parts = parts, withheld = withheld)
}

# summary.lm's "Residuals:" block (R 4.2's summary.glm: "Deviance Residuals: "), laid out as their print
# methods lay it out, before the coefficients; only where the residuals are known (eps = Inf, rows kept).
.with_residuals_block <- function(text, object, parts) {
  glm <- inherits(object, "dp_glm")
  resid <- parts[[if (glm) "deviance.resid" else "residuals"]]
  if (is.null(resid) || is.null(text)) return(text)
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  at <- grep("^Coefficients", lines)[1]
  if (is.na(at)) return(text)
  digits <- max(3L, getOption("digits") - 3L)
  rdf <- df.residual(object)
  nam <- c("Min", "1Q", "Median", "3Q", "Max")
  block <- if (glm) {
    xx <- zapsmall(if (rdf > 5L) stats::setNames(stats::quantile(resid, na.rm = TRUE), nam) else resid, digits + 1L)
    c("Deviance Residuals: ", utils::capture.output(print.default(xx, digits = digits, na.print = "", print.gap = 2L)))
  } else if (rdf > 5L) {
    c("Residuals:", utils::capture.output(print(structure(zapsmall(stats::quantile(resid), digits + 1L), names = nam),
                                                digits = digits)))
  } else if (rdf > 0L) {
    c("Residuals:", utils::capture.output(print(resid, digits = digits)))
  } else {
    c("Residuals:", sprintf("ALL %d residuals are 0: no residual degrees of freedom!", sum(!is.na(coef(object)))))
  }
  paste(c(lines[seq_len(at - 1L)], block, "", lines[-seq_len(at - 1L)]), collapse = "\n")
}

# summary.lm's and summary.glm's components, so that coef(summary(fit)), summary(fit)$sigma and
# $r.squared work: the coefficient matrix (the released table), df, and for a non-private fit
# (eps = Inf) sigma, r.squared, adj.r.squared and fstatistic as lm computes them (glm: deviance, aic,
# null.deviance, df.null). A DP lm fit's sigma is the one Python computes from the released statistics
# (sigma.dp_lm); it releases no R^2: NA (not released), never computed in R from the data.
.lm_summary_parts <- function(object, td, g) {
  if (is.null(td$term) || is.null(td$estimate)) return(list())
  z <- .is_glm_fit(object) || (inherits(object, "dp_vertical_glm") && !identical(object$outputs$family, "gaussian"))
  boot <- .is_bootstrap_fit(object)
  stat <- if (boot) c("Est./SE", "Pr(boot)") else if (z) c("z value", "Pr(>|z|)") else c("t value", "Pr(>|t|)")
  col <- function(nm) if (is.null(td[[nm]])) rep(NA_real_, nrow(td)) else as.numeric(td[[nm]])
  # as print and tidy(): Estimate is tidy()'s estimate (a bootstrap fit's calibrated one, which Std. Error and
  # the test are about, coef()); a bootstrap fit adds Ridge, the ridge estimate it calibrates
  cm <- cbind(col("estimate"), col("std.error"), col("statistic"), col("p.value"))
  dimnames(cm) <- list(as.character(td$term), c("Estimate", "Std. Error", stat))
  # summary.lm's four columns where tools read them by position, then the ridge estimate
  if (boot && !is.null(td$ridge)) cm <- cbind(cm, Ridge = col("ridge"))
  rdf <- object$outputs$df_residual
  rdf <- if (is.null(rdf) || is.na(rdf)) NA_integer_ else as.integer(rdf)
  # as summary.lm and summary.glm: aliased (NA) coefficients have no row, and df is (rank, rdf, all)
  aliased <- stats::setNames(is.na(cm[, "Estimate"]), rownames(cm))
  cm <- cm[!aliased, , drop = FALSE]
  gv <- function(nm) if (!is.null(g[[nm]]) && length(g[[nm]]) == 1L) as.numeric(g[[nm]]) else NA_real_
  out <- list(coefficients = cm, aliased = aliased, df = c(nrow(cm), rdf, length(aliased)), df.residual = rdf)
  private <- .is_dp_fit(object)
  if (z) {
    return(c(out, list(dispersion = 1, deviance = if (private) NA_real_ else gv("deviance"),
                       aic = if (private) NA_real_ else gv("AIC"),
                       null.deviance = if (private) NA_real_ else gv("null.deviance"),
                       df.null = if (private) NA_integer_ else as.integer(gv("df.null")))))
  }
  if (private) {
    return(c(out, list(sigma = .released_sigma(object), r.squared = NA_real_, adj.r.squared = NA_real_)))
  }
  f <- gv("statistic")
  c(out, list(sigma = gv("sigma"), r.squared = gv("r.squared"), adj.r.squared = gv("adj.r.squared"),
              fstatistic = if (!is.na(f)) c(value = f, numdf = gv("df"), dendf = rdf)))
}

print.summary.dp_result <- function(x, ...) {
  cat(x$text, "\n", sep = "")
  invisible(x)
}

# ---- Python's printed text in R's conventions. The text comes from the Python result (str(fit));
# R users see: their own call (as lm prints it); coefficient tables by printCoefmat (format.pval, t or
# z value); the ledger and the operating characteristics as lines wrapped to getOption("width");
# TRUE/FALSE/NULL/Inf/NaN for Python's literals, name = "value" for name='value', seed for random_state;
# no reference to a dpstats Python module or its equation codes (.drop_py_refs).

.r_text <- function(text, x = NULL) {
  if (is.null(text)) return(text)
  lines <- .drop_py_refs(strsplit(text, "\n", fixed = TRUE)[[1]])  # Python-only module references
  if (!is.null(x)) {
    lines <- .replace_block(lines, "^Coefficients:$", function(block) .coef_lines(x, block))
    lines <- .replace_block(lines, "^Ledger:$", function(block) .ledger_lines(x, block))
    lines <- .replace_block(lines, "^Loadings:$", function(block) .loadings_lines(x, block))
    lines <- .replace_block(lines, "^Operating characteristics", function(block) .oc_lines(x, block))
    lines <- .replace_block(lines, "^Privacy statement:$", function(block) {
      c(block[1], .wrap(.join_wrapped(trimws(block[-1])), 2L, 2L))  # one paragraph, reflowed
    })
  }
  .with_r_call(paste(.wrap_prose(.r_phrased(.r_literals(lines))), collapse = "\n"), x$call)
}

# Python's text shows the call as Python recorded it; R users see their own call (as lm prints it).
.with_r_call <- function(text, call) {
  if (!is.call(call) || is.null(text)) return(text)
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  i <- match("Call:", lines)
  if (is.na(i) || i >= length(lines)) return(text)
  end <- i + 1
  while (end < length(lines) && nzchar(trimws(lines[end + 1]))) end <- end + 1  # Python's call may wrap
  paste(c(lines[seq_len(i)], paste(deparse(call), collapse = "\n"), lines[-seq_len(end)]), collapse = "\n")
}

# A block runs from its header line to the next blank line; `make` returns its new lines (NULL keeps it).
.replace_block <- function(lines, header, make) {
  i <- grep(header, lines)[1]
  if (is.na(i)) return(lines)
  end <- i
  while (end < length(lines) && nzchar(trimws(lines[end + 1]))) end <- end + 1
  new <- tryCatch(make(lines[i:end]), error = function(e) NULL)
  if (is.null(new)) return(lines)
  c(lines[seq_len(i - 1)], new, lines[-seq_len(end)])
}

.width <- function() max(40L, getOption("width", 80L))

# Lines of one wrapped paragraph joined again: a line that a wrapper broke after a hyphen
# ("data-" / "dependent") joins without a space, so that no "data- dependent" is printed.
.join_wrapped <- function(lines) {
  if (!length(lines)) return("")
  out <- lines[1]
  for (l in lines[-1]) out <- paste0(out, if (grepl("[A-Za-z]-$", out) && grepl("^[a-z]", l)) "" else " ", l)
  out
}

.wrap <- function(text, indent = 2L, exdent = indent + 3L) {
  strwrap(text, width = .width() - 1L, indent = indent, exdent = exdent)
}

.coef_lines <- function(x, block) {
  td <- x$tidy
  if (is.null(td$estimate) || is.null(td$std.error)) return(NULL)
  if (all(is.na(td$std.error))) {
    m <- cbind(Estimate = td$estimate)
    if (!is.null(td$noise.sd)) m <- cbind(m, "Noise SD" = td$noise.sd)  # a DP vertical_glm: sd of each noise
  } else if (.is_bootstrap_fit(x) && !is.null(td$ridge)) {
    # the calibrated bootstrap: Estimate is tidy()'s (the calibrated one), which Std. Error, Est./SE, Pr(boot)
    # and the interval are about (the note below), coef(); Ridge the ridge estimate it calibrates
    m <- cbind(td$estimate, td$ridge, td$std.error, td$statistic, td$p.value)
    colnames(m) <- c("Estimate", "Ridge", "Std. Error", "Est./SE", "Pr(boot)")
  } else {
    m <- cbind(td$estimate, td$std.error, td$statistic, td$p.value)
    z <- .is_glm_fit(x) || (inherits(x, "dp_vertical_glm") && !identical(x$outputs$family, "gaussian"))
    colnames(m) <- if (z) c("Estimate", "Std. Error", "z value", "Pr(>|z|)") else c("Estimate", "Std. Error", "t value", "Pr(>|t|)")
  }
  rownames(m) <- td$term
  tests <- ncol(m) >= 4L
  args <- list(m, digits = max(3L, getOption("digits") - 3L), na.print = "NA", has.Pvalue = tests, P.values = tests)
  if (ncol(m) == 5L) args <- c(args, list(cs.ind = 1:3, tst.ind = 4L))  # Ridge is formatted as Estimate
  floor <- x$outputs$p_value_floor  # the bootstrap's smallest p-value, 2/(B + 1): printed as "<" it
  if (tests && is.numeric(floor)) {
    args$eps.Pvalue <- floor * (1 + 1e-9)
    # a p-value at the floor is only known to be below it: the stars of the floor's category
    p <- args[[1]][, ncol(m)]
    at <- !is.na(p) & p <= floor * (1 + 1e-9)
    args[[1]][at, ncol(m)] <- floor * (1 - 1e-9)
  }
  out <- utils::capture.output(do.call(stats::printCoefmat, args))
  c("Coefficients:", out, grep("^Bootstrap p-values are bounded below", block, value = TRUE))
}

# dp_lm and dp_select_infer (infer = "lm") under eps < Inf: intervals and p-values from the calibrated bootstrap
.is_bootstrap_fit <- function(x) inherits(x, c("dp_lm", "dp_select_infer")) && .is_dp_fit(x) && !.is_glm_fit(x)

# dp_glm, and dp_select_infer with infer = "glm" (its outputs carry dp_glm's family): Wald z statistics
.is_glm_fit <- function(x) inherits(x, "dp_glm") || (inherits(x, "dp_select_infer") && !is.null(x$outputs$family))

.fmt <- function(v) format(v, digits = 4)

.ledger_lines <- function(x, block) {
  led <- ledger(x)
  if (!is.data.frame(led) || !nrow(led) || is.null(led$step)) return(NULL)
  rows <- sprintf("%d. %s [%s]: eps = %s, delta = %s", seq_len(nrow(led)), led$step, led$mechanism,
                  vapply(led$eps, .fmt, ""), vapply(led$delta, .fmt, ""))
  share <- if (is.null(led$rho)) rep(FALSE, nrow(led)) else !is.na(led$rho)
  if (!any(share)) return(c("Ledger:", unlist(lapply(rows, .wrap))))
  # a zCDP plan's rows: (eps, delta) is the step's share of the budget; its own rho and eps alone beside it
  rows[share] <- sprintf("%d. %s [%s]: eps share = %s, delta share = %s; alone: rho = %s, eps = %s",
                         which(share), led$step[share], led$mechanism[share], vapply(led$eps[share], .fmt, ""),
                         vapply(led$delta[share], .fmt, ""), vapply(led$rho[share], .fmt, ""),
                         vapply(led$eps_alone[share], .fmt, ""))
  note <- sprintf(paste0("eps share, delta share: each step's share of the call's budget in proportion to its rho ",
                         "(they sum to the total, which is the guarantee of the steps together, not of a step ",
                         "alone); alone: the step's own zCDP rho and its own eps by itself at delta = %s."),
                  .fmt(led$delta_alone[share][1]))
  c("Ledger:", unlist(lapply(c(rows, note), .wrap)))
}

# dp_pca's loadings as R prints a prcomp rotation: a matrix, variables by components.
.loadings_lines <- function(x, block) {
  td <- x$tidy
  if (is.null(td$loading) || is.null(td$term) || is.null(td$component)) return(NULL)
  terms <- unique(as.character(td$term))
  comps <- unique(as.character(td$component))
  m <- matrix(NA_real_, length(terms), length(comps), dimnames = list(terms, comps))
  m[cbind(match(td$term, terms), match(td$component, comps))] <- td$loading
  c("Loadings:", utils::capture.output(print(round(m, 4))))
}

.oc_lines <- function(x, block) {
  rows <- x$operating_characteristics$rows
  if (!is.data.frame(rows) || is.null(rows$quantity) || is.null(rows$estimate)) return(NULL)
  se <- rows$std_error
  if (is.null(se)) se <- rows$std.error
  txt <- sprintf("- %s: %s%s", rows$quantity, vapply(rows$estimate, .fmt, ""),
                 ifelse(!is.na(se) & se > 0, paste0(" (s.e. ", vapply(se, .fmt, ""), ")"), ""))
  basis <- unique(rows$basis)
  if (length(basis) > 1L) txt <- paste0(txt, " [", rows$basis, "]")
  rest <- block[-1][!grepl("  \\S", sub("^ +", "", block[-1])) & seq_along(block[-1]) > 1L]
  c(.wrap(sub("^ +", "", block[1]), 0L, 2L), unlist(lapply(txt, .wrap, indent = 2L, exdent = 4L)),
    unlist(lapply(sub("^ +", "", rest), .wrap)))
}

# Python literals in R's spelling; the rewrites keep the width of table cells.
.r_literals <- function(lines) {
  lines <- gsub("\\bTrue\\b", "TRUE", lines, perl = TRUE)
  lines <- gsub("\\bFalse\\b", "FALSE", lines, perl = TRUE)
  lines <- gsub("\\bNone\\b", "NULL", lines, perl = TRUE)
  lines <- gsub("(?<![A-Za-z_.])inf\\b", "Inf", lines, perl = TRUE)
  lines <- gsub("(?<![A-Za-z_.])nan\\b", "NaN", lines, perl = TRUE)
  lines <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)='([^']*)'", "\\1 = \"\\2\"", lines, perl = TRUE)
  lines <- gsub("\\brandom_state\\b", "seed", lines, perl = TRUE)
  lines <- gsub("is dpstats.vertical.Party", "is run from Python (dpstats.vertical)", lines, fixed = TRUE)
  lines <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)=\"([^\"]*)\"", "\\1 = \"\\2\"", lines, perl = TRUE)  # na_action="fill"
  lines <- gsub("\\b([a-z][a-z0-9_.]*)=(-?[0-9])", "\\1 = \\2", lines, perl = TRUE)  # advice: offset=0
  # top-k mechanisms by name (with the topk = value that chooses one, on the line that describes it)
  for (nm in names(.topk_names)) {
    lines <- sub(sprintf("^Top-k mechanism: %s \\(", nm),
                 sprintf("Top-k mechanism: %s (topk = \"%s\"; ", .topk_names[[nm]], nm), lines)
    lines <- gsub(sprintf("\\b%s top-k\\b", nm), paste(.topk_names[[nm]], "top-k"), lines, perl = TRUE)
  }
  lines <- .sampler_words(lines)
  lines
}

.topk_names <- c(canonical_lipschitz = "canonical Lipschitz", oneshot_gumbel = "one-shot Gumbel",
                 peeling = "peeling", joint = "joint exponential")

# Python's "Noise samplers: numpy gaussian (seeded, not floating-point hardened); ..." names the library
# that drew the noise; in words: which noise, from which generator, and what that means for release.
.sampler_words <- function(lines) {
  i <- grep("^Noise samplers: ", lines)
  lines[i] <- paste0("Noise: ", vapply(sub("^Noise samplers: ", "", lines[i]), .samplers_in_words, "", USE.NAMES = FALSE))
  lines
}

# "numpy gaussian (seeded, not floating-point hardened); ..." (the statement's samplers) in words.
.samplers_in_words <- function(samplers) {
  parts <- strsplit(samplers, "; ", fixed = TRUE)[[1]]
  kind <- function(k) switch(k, gaussian = "Gaussian", laplace = "Laplace", k)
  and <- function(v) if (length(v) <= 1L) v else paste(paste(v[-length(v)], collapse = ", "), "and", v[length(v)])
  seeded <- grepl("^numpy \\S+ \\(seeded, not floating-point hardened\\)$", parts)
  safe <- grepl("^OpenDP \\S+ \\(floating-point safe\\)$", parts)
  out <- character()
  if (any(seeded)) {
    k <- vapply(sub("^numpy (\\S+) .*$", "\\1", parts[seeded]), kind, "")
    out <- c(out, sprintf("%s noise from a seeded generator (for reproduction; not hardened against floating-point attacks)",
                          and(k)))
  }
  if (any(safe)) {
    k <- vapply(sub("^OpenDP (\\S+) .*$", "\\1", parts[safe]), kind, "")
    out <- c(out, sprintf("%s noise from OpenDP's samplers (hardened against floating-point attacks)", and(k)))
  }
  out <- c(out, sub(" \\(floating-point safe\\)$", " (hardened against floating-point attacks)", parts[!seeded & !safe]))
  paste(out, collapse = "; ")
}

# Python's own names in printed text (an attribute, a variable of the code), in R's words: the same
# rewrites for print, summary, ledger() and the report (.r_report).
.r_phrases <- c(
  # dp_lm: the calibrated estimates are fit$outputs$calibrated_estimates in R
  "(de-shrunk) estimates, calibrated_estimates." = "(de-shrunk) estimates, fit$outputs$calibrated_estimates.",
  # dp_lm: the ridge estimates beside coef() are fit$outputs$ridge_estimates in R
  "ridge estimate (ridge_estimates)." = "ridge estimate (fit$outputs$ridge_estimates).",
  # dp_knockoff's ledger: delta2, the code's name of the part of delta this step is charged
  "fails with probability delta2" = "fails with probability at most this step's delta",
  "fail with probability delta2" = "fail with probability at most this step's delta",
  "except with probability delta2/4" = "except with probability a quarter of the sensitivity bound's delta"
)

.r_phrased <- function(text) {
  for (p in names(.r_phrases)) text <- gsub(p, .r_phrases[[p]], text, fixed = TRUE)
  text
}

# Prose longer than the console is wrapped (indented continuation); table rows (two spaces between
# cells) are left as they are.
.wrap_prose <- function(lines) {
  unlist(lapply(lines, function(l) {
    if (nchar(l) <= .width() || grepl("\\S  +\\S", l)) return(l)
    ind <- nchar(l) - nchar(sub("^ +", "", l))
    strwrap(l, width = .width() - 1L, indent = ind, exdent = ind + 2L)
  }))
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
  .refuse_generic("predict", object, sys.call())  # a selection predicts nothing (R/refusals.R)
  if (missing(newdata) || is.null(newdata)) {
    .dp_abort(sprintf(paste("predict() needs newdata for a %s fit: a DP result keeps no rows of the data it was",
                            "fitted on (only released quantities), so there is nothing to predict for; call",
                            "predict(fit, newdata = df) with data you hold."), object$method),
              "dpstats_argument_error")
  }
  ref <- .dp_pyref(object)
  if (!.dp_env$bridge$has_method(ref, "predict")) {
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

# broom's column names (Python's tables spell some of them with underscores). As in broom, the
# identifying columns come first, in Python's order (term; dp_bh's hypothesis; dp_gmm's component and
# term), then broom's statistics in broom's order, then the method's own columns.
.broom_names <- c(std_error = "std.error", p_value = "p.value", conf_low = "conf.low", conf_high = "conf.high",
                  noise_sd = "noise.sd",
                  df_residual = "df.residual", null_deviance = "null.deviance", df_null = "df.null",
                  r_squared = "r.squared", adj_r_squared = "adj.r.squared", loglik = "logLik", n = "nobs")
.broom_order <- list(tidy = c("term", "estimate", "ridge", "std.error", "statistic", "p.value", "conf.low",
                              "conf.high"),
                     glance = c("r.squared", "adj.r.squared", "sigma", "statistic", "p.value", "df", "null.deviance",
                                "df.null", "logLik", "AIC", "BIC", "deviance", "df.residual", "nobs"))

.broom_ids <- c("term", "hypothesis", "component")

.broom_frame <- function(df, order = .broom_order$tidy) {
  if (is.null(df) || !is.data.frame(df)) return(df)
  if (all(c("n", "nobs") %in% names(df))) df <- df[names(df) != "n"]  # broom's nobs given (the fit's rows)
  nm <- names(df)
  hit <- nm %in% names(.broom_names)
  nm[hit] <- .broom_names[nm[hit]]
  names(df) <- nm
  ids <- nm[seq_len(match(FALSE, nm %in% .broom_ids, nomatch = length(nm) + 1L) - 1L)]  # Python's leading ones
  df[unique(c(ids, intersect(order, nm), setdiff(nm, order)))]
}

# A tibble where tibble is installed (as broom returns), a data.frame otherwise.
.as_tibble <- function(df) {
  if (is.data.frame(df) && requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

# broom's conf.int and conf.level. The intervals are shown by default (conf.int = TRUE, unlike
# broom's default); conf.int = FALSE leaves them out. conf.level = another level recomputes them where
# that is correct (confint(fit, level =): a non-private fit's classical intervals, dp_glm's Wald
# intervals) and is refused for a DP fit whose intervals were released at one level only (dp_lm's
# calibrated bootstrap: refit with conf_level =). exponentiate = TRUE gives exp() of the estimates and
# of the interval's ends, leaving std.error on the link scale, exactly as broom 1.0.3's tidy.glm (odds
# or rate ratios: post-processing of released values). Any other argument is an error, not ignored.
tidy.dp_result <- function(x, conf.int = TRUE, conf.level = 0.95, exponentiate = FALSE, ...) {
  .refuse_dots("tidy", list(...), sys.call())
  if (!is.logical(exponentiate) || length(exponentiate) != 1L || is.na(exponentiate)) {
    .dp_abort("exponentiate must be TRUE or FALSE.", "dpstats_argument_error", sys.call())
  }
  td <- x$tidy
  if (is.null(td)) td <- data.frame(term = unlist(x$terms), stringsAsFactors = FALSE)
  has_ci <- all(c("conf.low", "conf.high") %in% names(td))
  if (!missing(conf.level) && isTRUE(conf.int)) {
    if (!is.numeric(conf.level) || length(conf.level) != 1L || is.na(conf.level) || conf.level <= 0 || conf.level >= 1) {
      .dp_abort("conf.level must be one number between 0 and 1, e.g. conf.level = 0.9.", "dpstats_argument_error",
                sys.call())
    }
    if (!has_ci) {
      .dp_abort(sprintf("tidy(conf.level = ): a %s result has no confidence intervals.", x$method),
                "dpstats_argument_error", sys.call())
    }
    fitted_level <- x$glance$conf_level
    if (.is_bootstrap_fit(x) && !isTRUE(all.equal(conf.level, fitted_level))) {
      .dp_abort(sprintf(paste("tidy(conf.level = %s): the intervals of a DP fit were released at level %s (a",
                              "parametric bootstrap, not a rescaled standard error); refit with conf_level = %s."),
                        format(conf.level), format(fitted_level), format(conf.level)), "dpstats_argument_error",
                sys.call())
    }
    ci <- suppressMessages(stats::confint(x, level = conf.level))  # dp_glm's says which intervals: confint()'s own
    i <- match(td$term, rownames(ci))
    td$conf.low <- unname(ci[i, 1])
    td$conf.high <- unname(ci[i, 2])
  }
  if (isFALSE(conf.int) && has_ci) td <- td[setdiff(names(td), c("conf.low", "conf.high"))]
  if (exponentiate) {
    if (is.null(td$estimate) || !inherits(x, c("dp_lm", "dp_glm", "dp_select_infer", "dp_vertical_glm"))) {
      .dp_abort(sprintf("tidy(exponentiate = TRUE): a %s result has no regression coefficients to exponentiate.",
                        x$method), "dpstats_argument_error", sys.call())
    }
    for (col in intersect(c("estimate", "ridge", "conf.low", "conf.high"), names(td))) td[[col]] <- exp(td[[col]])
  }
  .as_tibble(td)
}

# A non-private regression (eps = Inf) adds broom's fit statistics computed as lm/glm compute them
# (glance(lm(...)), glance(glm(...))); a DP fit's glance has released quantities only. dp_lm's and
# dp_glm's glance have them from Python already (from the exact statistics, an aliased column and the
# rows a fit keeps without a model frame included): only vertical_glm's are computed here.
glance.dp_result <- function(x, ...) {
  g <- x$glance
  if (!.is_dp_fit(x) && !is.null(x$model) && !inherits(x, c("dp_glm", "dp_lm"))) {
    extra <- .fit_statistics(x)
    g <- cbind(as.data.frame(extra), g[setdiff(names(g), names(extra))])
    g <- .broom_frame(g, .broom_order$glance)
  } else if (inherits(x, c("dp_lm", "dp_select_infer")) && "sigma" %in% names(g)) {
    g$sigma <- .released_sigma(x)  # a double, NA where not resolved (JSON's null would make it logical)
  }
  if (inherits(x, "dp_select_infer") && "nobs" %in% names(g) && !is.na(g$nobs)) g$nobs <- nobs(x)  # part B's rows
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
  fam <- .fit_family(x)
  mu0 <- rep(if (int) mean(y) else fam$linkinv(0), n)
  c(list(null.deviance = sum(fam$dev.resids(y, mu0, rep(1, n))), df.null = n - int), out)
}

ledger <- function(x, ...) UseMethod("ledger")

ledger.dp_result <- function(x, ...) {
  if (inherits(x, "dp_select_infer")) return(.ledger_words(.parts_ledger(x)))
  .ledger_words(.simplify_frame(x$privacy$ledger))
}

# dp_select_infer's ledger by part, as Python's ledger(): part A's steps (the selector's), then part B's
# (the fit's), each part's summing to the call's (eps, delta), charged once (parallel composition).
.parts_ledger <- function(x) {
  parts <- list(list("A", x$outputs$selector, x$outputs$selection_ledger),
                list("B", x$outputs$fit_door, x$outputs$fit_ledger))
  frames <- lapply(parts, function(p) {
    led <- .simplify_frame(p[[3]])
    if (!is.data.frame(led) || !nrow(led)) return(NULL)
    if (is.data.frame(led$event)) {  # the parts' events have different fields: one list per row
      ev <- led$event
      led$event <- lapply(seq_len(nrow(ev)), function(i) Filter(Negate(is.na), as.list(ev[i, , drop = FALSE])))
    }
    led$part <- sprintf("%s (%s)", p[[1]], p[[2]])
    led[c("part", setdiff(names(led), "part"))]
  })
  frames <- Filter(Negate(is.null), frames)
  # a zCDP plan's rows carry rho, eps_alone and delta_alone, other parts' not: NA there
  cols <- unique(unlist(lapply(frames, names)))
  frames <- lapply(frames, function(f) {
    for (col in setdiff(cols, names(f))) f[[col]] <- NA
    f[cols]
  })
  do.call(rbind, frames)
}

# A ledger's text columns in R's words (the steps' and notes' Python names, .r_phrased).
.ledger_words <- function(led) {
  if (!is.data.frame(led)) return(led)
  for (col in intersect(c("step", "note", "sensitivity"), names(led))) {
    if (is.character(led[[col]])) led[[col]] <- .r_phrased(led[[col]])
  }
  led
}

report <- function(x, path, ...) UseMethod("report")

report.dp_result <- function(x, path, ...) {
  if (missing(path) || !is.character(path) || length(path) != 1L) {
    .dp_abort("path must be one file name, e.g. report(fit, \"analysis.html\").", "dpstats_error")
  }
  ref <- .dp_pyref(x)
  .dp_invoke("report", list(path = path.expand(path), ...), target = ref, call = sys.call())
  .r_report(path.expand(path), x$call)
  invisible(path)
}

# ---- The HTML report in R's words. Python renders it (templates/); R then rewrites what it shows, as
# print shows it: each text between tags (not inside <svg>, <style> or <script>) through the rewrites of
# printed text (.drop_py_refs, .r_literals, .r_phrased; a list of noise samplers in words), and the
# user's own call (fit$call, as print shows it) in place of Python's record of it. The file is replaced
# in one rename, so a report is never left half rewritten.
.r_report <- function(path, call) {
  html <- readChar(path, file.size(path), useBytes = TRUE)
  Encoding(html) <- "UTF-8"
  tmp <- tempfile(".dpstats-report-", tmpdir = dirname(path), fileext = ".html")
  con <- file(tmp, open = "wb")
  writeBin(charToRaw(enc2utf8(.r_html(html, call))), con)
  close(con)
  if (!file.rename(tmp, path)) {
    unlink(tmp)
    .dp_abort(sprintf("report(): could not write %s.", path), "dpstats_error")
  }
}

.r_html <- function(html, call) {
  markup <- gregexpr("(?s)<(svg|style|script)\\b.*?</\\1>|<[^>]*>", html, perl = TRUE)
  texts <- regmatches(html, markup, invert = TRUE)[[1]]
  regmatches(html, markup, invert = TRUE) <- list(vapply(texts, .r_html_text, "", USE.NAMES = FALSE))
  at <- regexpr("(?<=<pre class=\"call\"><code>)[^<]*(?=</code></pre>)", html, perl = TRUE)
  if (is.call(call) && at > 0) regmatches(html, at) <- .html_escape(paste(deparse(call), collapse = "\n"))
  .r_versions(html)
}

# The footer's software versions gain R's and the R package's, beside Python's: the kv table of a
# result's report, the one-line footer of a plan's.
.r_versions <- function(html) {
  r <- paste(R.version$major, R.version$minor, sep = ".")
  pkg <- as.character(utils::packageVersion("dpstats"))
  rows <- sprintf("<tr><th scope=\"row\">R</th><td>%s</td></tr><tr><th scope=\"row\">dpstats (R package)</th><td>%s</td></tr>",
                  r, pkg)
  html <- sub("(?s)(<footer>.*?<table class=\"kv\">.*?)(\\s*</table>)", paste0("\\1", rows, "\\2"), html, perl = TRUE)
  sub("(?s)(<footer><p>[^<]*)(</p></footer>)", sprintf("\\1; R %s, dpstats R package %s\\2", r, pkg), html, perl = TRUE)
}

.r_html_text <- function(text) {
  if (!grepl("[A-Za-z]", text)) return(text)
  text <- .html_unescape(text)
  samplers <- "^(?:(?:numpy|OpenDP) \\S+ \\([^()]*\\)(?:; |$))+$"
  text <- if (grepl(samplers, text, perl = TRUE)) .samplers_in_words(text) else .r_phrased(.r_literals(.drop_py_refs(text)))
  .html_escape(text)
}

.html_unescape <- function(text) {
  for (e in names(.html_entities)) text <- gsub(e, .html_entities[[e]], text, fixed = TRUE)
  text
}

.html_entities <- c("&lt;" = "<", "&gt;" = ">", "&#34;" = "\"", "&quot;" = "\"", "&#39;" = "'", "&#x27;" = "'",
                    "&amp;" = "&")  # &amp; last: "&amp;lt;" is the text "&lt;"

.html_escape <- function(text) gsub(">", "&gt;", gsub("<", "&lt;", gsub("&", "&amp;", text, fixed = TRUE), fixed = TRUE),
                                    fixed = TRUE)

# broom / generics: tidy(), glance() and augment() are generics::tidy, generics::glance and
# generics::augment, imported and re-exported (NAMESPACE), with the methods above registered on them:
# broom's methods for lm, glm, prcomp ... and dpstats' are found whichever package is attached last.
