# R generics that do not apply to a result, refused in one place: the table below says, for each
# generic and each kind of result, why it does not apply and what to use instead. A refusal is a
# condition of class dpstats_not_applicable_error (the generic has no meaning for the result) or
# dpstats_not_released_error (it would need values computed from the rows that the fit does not
# release), both dpstats_error. Each method below asks the table first; a result the table does not
# name goes on to the next method (a regression's own, or R's default), so the methods of the classes
# that answer (vcov.dp_lm, fitted.dp_glm, ...) are untouched.

.selections <- c("dp_sis", "dp_two_stage", "dp_knockoff", "dp_felp", "dp_bh")
.regressions <- c("dp_lm", "dp_glm", "dp_select_infer", "dp_vertical_glm")
.influence_generics <- c("influence", "hatvalues", "cooks.distance", "rstandard", "rstudent", "dfbeta", "dfbetas")

# One row: the generics it covers, the classes (and, with dp_only, only their DP fits), the condition's
# class, why it does not apply and what to use instead.
.refusal <- function(generics, classes, why, instead, class = "dpstats_not_applicable_error", dp_only = FALSE) {
  list(generics = generics, classes = classes, why = why, instead = instead, class = class, dp_only = dp_only)
}

.not_a_model <- "it is a selection (released scores or statistics and the set chosen), not a fitted model"

.refusals <- list(
  .refusal("augment", .regressions,
           paste("augment() without newdata adds per-row columns of the training data (.fitted, .resid, .hat,",
                 ".cooksd): a DP fit releases none of them"),
           paste("augment(fit, newdata = df) adds .fitted (predict(fit, newdata = df)) to data you hold; at eps = Inf",
                 "augment(fit) of a dp_lm or dp_glm fit answers as broom's augment.lm and augment.glm")),
  .refusal("augment", "dp_gmm", "augment() adds per-row columns, and a dp_gmm fit keeps no rows",
           "use predict(fit, newdata = df) for each row's most probable component on data you hold"),
  .refusal(c("augment", "fitted", "residuals", .influence_generics, "deviance", "logLik", "extractAIC", "predict"),
           .selections, paste0(.not_a_model, ", so it has no per-row values, residuals, likelihood or predictions"),
           "use tidy(fit) for one row per candidate; to fit the selected terms, dp_select_infer() (select, then fit with intervals on other rows)"),
  .refusal("plot", "dp_result",
           "R's plot() of a fit draws residual diagnostics, per-row values a DP fit does not release, and dpstats draws no base-graphics figure",
           paste("report(fit, \"fit.html\") draws the method's figures from released values; at eps = Inf,",
                 "plot(lm(formula(fit), data = df)) draws lm's diagnostics")),
  .refusal(.influence_generics, c(.regressions, "dp_gmm"),
           paste("influence measures (leverages, deleted residuals, Cook's distances) are per-row values of the data:",
                 "a DP fit releases none, and dpstats offers them as columns of augment() only"),
           paste("at eps = Inf, augment(fit) (.hat, .sigma, .cooksd, .std.resid, as broom's) or",
                 "influence.measures(lm(formula(fit), data = df)) (glm() for dp_glm); a DP analysis has",
                 "no private influence diagnostics")),
  .refusal("vcov", .selections, paste0(.not_a_model, ": no estimates with standard errors are released"),
           "dp_select_infer() selects and then fits the selected terms with intervals; vcov() of that fit"),
  .refusal("vcov", "dp_gmm", "the mixture's weights, means and covariances are released without a covariance of their estimates",
           "coef(fit) gives the released weights and means"),
  .refusal(c("fitted", "residuals"), "dp_gmm", "each row's component is a per-row value computed from the data, which a DP fit neither keeps nor releases",
           "use predict(fit, newdata = df) on data you hold", class = "dpstats_not_released_error"),
  .refusal(c("deviance", "logLik", "extractAIC"), "dp_gmm",
           "the mixture's log-likelihood is a function of the raw data and is not released",
           "compare mixtures by their released parameters (coef(fit), tidy(fit))", class = "dpstats_not_released_error"),
  .refusal(c("fitted", "residuals"), "dp_select_infer",
           "fitted values and residuals are per-row values computed from the data, and a DP fit does not release them",
           "use predict(fit, newdata = df) on data you hold (post-processing of the released coefficients)",
           class = "dpstats_not_released_error"),
  .refusal(c("deviance", "logLik", "extractAIC"), c("dp_glm", "dp_select_infer"),  # infer = "lm": deviance.dp_select_infer
           "the deviance and the log-likelihood are functions of the raw data and are not released by a DP fit",
           "compare terms with confint(fit) or tidy(fit); for a non-private reference, fit lm()/glm() on data you hold",
           class = "dpstats_not_released_error", dp_only = TRUE),
  # a DP dp_lm's deviance and logLik are computed from its released statistics (deviance.dp_lm); step() and
  # drop1() would compare them across sub-models, each a separate DP release of the same rows
  .refusal("extractAIC", "dp_lm",
           paste("step(), drop1() and add1() would refit each sub-model as a new DP",
                 "release of the same rows (each spending budget), and the log-likelihoods computed from separately",
                 "noised statistics are not comparable as exact ones are"),
           "compare terms with confint(fit) or tidy(fit); for a non-private reference, the fit at eps = Inf",
           class = "dpstats_not_released_error", dp_only = TRUE),
  .refusal("extractAIC", "dp_vertical_glm",
           "step(), drop1() and add1() would refit sub-models across the parties, which vertical_glm does not offer",
           "AIC(fit) and BIC(fit) of a non-private fit (its logLik() is glm's); refit each model you compare"),
  .refusal("anova", "dp_glm",
           "its deviances are functions of the raw data (for a DP fit they are not released)",
           paste("compare terms with confint(fit) or tidy(fit); for a non-private reference,",
                 "anova(glm(formula(fit), family = family(fit), data = df)), or anova() of the fit at eps = Inf"),
           class = "dpstats_not_released_error", dp_only = TRUE),
  .refusal("anova", "dp_lm",
           "its sums of squares are functions of the raw data (for a DP fit they are not released)",
           "compare terms with confint(fit) or tidy(fit); for a non-private reference, anova(lm(formula(fit), data)), or anova() of the fit at eps = Inf",
           class = "dpstats_not_released_error", dp_only = TRUE),
  .refusal("anova", "dp_result",
           "its sums of squares and deviances are functions of the raw data (for a DP fit they are not released)",
           "compare terms with confint(fit) or tidy(fit); for a non-private reference, anova(lm(formula(fit), data))",
           class = "dpstats_not_released_error")
)

# The table's row for `generic` and this result, or NULL.
.refusal_for <- function(generic, object) {
  for (row in .refusals) {
    if (generic %in% row$generics && inherits(object, row$classes) && (!row$dp_only || .is_dp_fit(object))) return(row)
  }
  NULL
}

# Refuse `generic` for `object` when the table names it; otherwise return invisibly (the caller goes on).
# `call`: the method's own call, shown as the generic's (vcov(fit), not vcov.dp_result(fit)).
.refuse_generic <- function(generic, object, call) {
  row <- .refusal_for(generic, object)
  if (is.null(row)) return(invisible(NULL))
  if (identical(generic, "extractAIC")) {  # step(), drop1() and add1() call it: name the function the user called
    outer <- .calling_selector()
    if (!is.null(outer)) {
      generic <- outer$name
      call <- outer$call
    }
  }
  if (is.call(call)) call[[1L]] <- as.name(generic)
  method <- if (is.character(object$method)) object$method else class(object)[1]
  what <- if (identical(row$class, "dpstats_not_released_error") && .is_dp_fit(object)) "a DP" else "a"
  .dp_abort(sprintf("%s() is not available for %s %s result: %s. Instead: %s.", generic, what, method, row$why,
                    row$instead), row$class, call)
}

# augment(fit, newdata = df) of a regression: broom's augment.lm/augment.glm layout with newdata
# (.rownames when the rows are named, newdata's columns, .fitted), .fitted being predict(fit, newdata = df)
# on the link scale or, with type.predict = "response", the response scale (post-processing of the
# released coefficients on rows the user holds). Without newdata, a non-private (eps = Inf) dp_lm or dp_glm
# fit answers as broom's augment.lm / augment.glm (.augment_reference); otherwise the refusal table answers.
augment.dp_result <- function(x, newdata = NULL, type.predict, type.residuals, ...) {
  if (!is.null(newdata) && inherits(x, .regressions)) return(.augment_newdata(x, newdata, type.predict, sys.call()))
  if (inherits(x, c("dp_lm", "dp_glm")) && !.is_dp_fit(x)) {
    .refuse_dots("augment", list(...), sys.call())
    return(.augment_reference(x, if (missing(type.predict)) "link" else type.predict,
                              if (missing(type.residuals)) "deviance" else type.residuals, sys.call()))
  }
  .refuse_generic("augment", x, sys.call())
  NextMethod()
}

# augment(fit) of an eps = Inf dp_lm / dp_glm: broom's layout, the fit's model frame (.rownames first when
# the rows are named) then .fitted and .resid (the fit's own: fitted(), residuals()) and the influence
# columns, from lm()/glm() on the fit's design matrix (the same column space and response, hence the same
# leverages; glm's IRLS converges to the fit's coefficients). augment.lm's columns: .hat, .sigma, .cooksd,
# .std.resid; augment.glm's: .std.resid, .hat, .sigma, .cooksd, with type.predict ("link", "response") and
# type.residuals ("deviance", "pearson") as broom's.
.augment_reference <- function(x, type.predict, type.residuals, call) {
  mf <- .lm_model(x, "augment()", call)
  X <- .model_X(x, mf)
  glm_fit <- inherits(x, "dp_glm")
  if (glm_fit) {
    type.predict <- .one_of(type.predict, c("link", "response"), "type.predict", call)
    type.residuals <- .one_of(type.residuals, c("deviance", "pearson"), "type.residuals", call)
    r <- .glm_rows(x, "augment()", call)
    ref <- suppressWarnings(stats::glm(r$y ~ X - 1, family = r$family, weights = r$m,
                                       offset = stats::model.offset(mf)))
    fitted <- if (type.predict == "link") r$eta else r$mu
    resid <- .glm_residuals(x, type.residuals, "augment()", call)
  } else {
    ref <- stats::lm(stats::model.response(mf) ~ X - 1, offset = stats::model.offset(mf))
    fitted <- .lm_fitted(x, "augment()", call)
    resid <- .lm_residuals(x, "augment()", call)
  }
  df <- mf
  attr(df, "terms") <- NULL
  rn <- rownames(df)
  rownames(df) <- NULL
  if (!identical(rn, as.character(seq_len(nrow(df))))) df <- cbind(data.frame(.rownames = rn), df)
  df$.fitted <- unname(as.numeric(fitted))
  df$.resid <- unname(as.numeric(resid))
  infl <- stats::influence(ref, do.coef = FALSE)
  std <- if (glm_fit) stats::rstandard(ref, infl = infl, type = type.residuals) else stats::rstandard(ref, infl = infl)
  columns <- list(.hat = infl$hat, .sigma = infl$sigma, .cooksd = stats::cooks.distance(ref, infl = infl),
                  .std.resid = std)
  shown <- if (glm_fit) c(".std.resid", ".hat", ".sigma", ".cooksd") else c(".hat", ".sigma", ".cooksd", ".std.resid")
  df[shown] <- lapply(columns[shown], unname)
  .as_tibble(df)
}

.one_of <- function(value, choices, name, call) {
  if (is.character(value) && length(value) == 1L && value %in% choices) return(value)
  .dp_abort(sprintf("%s must be one of %s.", name, paste0('"', choices, '"', collapse = ", ")), "dpstats_argument_error",
            call)
}

.augment_newdata <- function(x, newdata, type.predict, call) {
  args <- list(x, newdata = newdata)
  if (!missing(type.predict)) args$type <- type.predict  # a type predict() does not offer is refused there, by name
  fitted <- tryCatch(do.call(stats::predict, args), dpstats_error = function(e) {
    e$call <- call
    stop(e)
  })
  df <- as.data.frame(newdata)
  rn <- rownames(df)
  if (!identical(rn, as.character(seq_len(nrow(df))))) df <- cbind(data.frame(.rownames = rn), df)
  rownames(df) <- NULL
  df$.fitted <- unname(as.numeric(fitted))
  .as_tibble(df)
}

plot.dp_result <- function(x, y, ...) {
  .refuse_generic("plot", x, sys.call())
  NextMethod()
}

influence.dp_result <- function(model, ...) {
  .refuse_generic("influence", model, sys.call())
  NextMethod()
}

hatvalues.dp_result <- function(model, ...) {
  .refuse_generic("hatvalues", model, sys.call())
  NextMethod()
}

cooks.distance.dp_result <- function(model, ...) {
  .refuse_generic("cooks.distance", model, sys.call())
  NextMethod()
}

rstandard.dp_result <- function(model, ...) {
  .refuse_generic("rstandard", model, sys.call())
  NextMethod()
}

rstudent.dp_result <- function(model, ...) {
  .refuse_generic("rstudent", model, sys.call())
  NextMethod()
}

dfbeta.dp_result <- function(model, ...) {
  .refuse_generic("dfbeta", model, sys.call())
  NextMethod()
}

dfbetas.dp_result <- function(model, ...) {
  .refuse_generic("dfbetas", model, sys.call())
  NextMethod()
}

vcov.dp_result <- function(object, ...) {
  .refuse_generic("vcov", object, sys.call())
  NextMethod()
}

fitted.dp_result <- function(object, ...) {
  .refuse_generic("fitted", object, sys.call())
  NextMethod()
}

residuals.dp_result <- function(object, ...) {
  .refuse_generic("residuals", object, sys.call())
  NextMethod()
}

deviance.dp_result <- function(object, ...) {
  .refuse_generic("deviance", object, sys.call())
  NextMethod()
}

logLik.dp_result <- function(object, ...) {
  .refuse_generic("logLik", object, sys.call())
  NextMethod()
}

extractAIC.dp_result <- function(fit, scale = 0, k = 2, ...) {
  .refuse_generic("extractAIC", fit, sys.call())
  NextMethod()
}

anova.dp_result <- function(object, ...) {
  .refuse_generic("anova", object, sys.call())
}

# anova() of a non-private dp_glm (eps = Inf, whose deviances are glm's): anova.glm's sequential table,
# built as drop1() builds its own: each sub-model (the first i terms, intercept as in the fit) refitted
# through update() and evaluated where anova() was called, the NULL row from the fit's null deviance
# (dp_glm fits no intercept-only model). test = "Chisq" (or "LRT") adds the likelihood-ratio p-values,
# the dispersion being 1 (binomial, poisson). A DP fit is refused by the table above.
anova.dp_glm <- function(object, ..., test = NULL) {
  call <- sys.call()
  if (.is_dp_fit(object)) .refuse_generic("anova", object, call)
  if (!is.null(test) && !identical(test, "Chisq") && !identical(test, "LRT")) {
    .dp_abort("anova(fit, test = ) of a dp_glm is \"Chisq\" or \"LRT\" (binomial and poisson: dispersion 1).",
              "dpstats_argument_error", call)
  }
  if (length(list(...))) return(.anova_nested(object, list(...), "dp_glm", test, call))
  tt <- terms(object)
  labels <- attr(tt, "term.labels")
  where <- parent.frame()
  sub_fit <- function(i) {
    f <- formula(stats::drop.terms(tt, seq_along(labels)[-seq_len(i)], keep.response = TRUE))
    eval(eval(as.call(list(quote(stats::update), object, f, evaluate = FALSE)), where), where)  # as if called there
  }
  fits <- suppressWarnings(c(lapply(seq_len(length(labels) - 1L), sub_fit), list(object)),
                           classes = "dpstats_non_private_warning")
  g <- glance(object)
  dev <- c(g$null.deviance, vapply(fits, deviance, 0))
  rdf <- c(g$df.null, vapply(fits, df.residual, 0))
  table <- data.frame(Df = c(NA, -diff(rdf)), Deviance = c(NA, -diff(dev)), `Resid. Df` = rdf, `Resid. Dev` = dev,
                      check.names = FALSE, row.names = c("NULL", labels))
  if (!is.null(test)) table[["Pr(>Chi)"]] <- stats::pchisq(table$Deviance, table$Df, lower.tail = FALSE)
  fam <- family(object)
  heading <- c("Analysis of Deviance Table\n",
               sprintf("Model: %s, link: %s\n\nResponse: %s\n\nTerms added sequentially (first to last)\n\n",
                       fam$family, fam$link, deparse(formula(object)[[2L]])))
  structure(table, heading = heading, class = c("anova", "data.frame"))
}

# anova() of a non-private dp_lm (eps = Inf, whose rows are kept, as lm's): anova.lm's sequential table,
# computed as anova.lm computes it, from the effects of the QR of the fit's own design (model.matrix(fit))
# and response: each term's sum of squares is the sum of its effects' squares, in the formula's order.
# A DP fit is refused by the table above.
anova.dp_lm <- function(object, ...) {
  call <- sys.call()
  if (.is_dp_fit(object)) .refuse_generic("anova", object, call)
  if (length(list(...))) return(.anova_nested(object, list(...), "dp_lm", "F", call))
  mf <- .lm_model(object, "anova()", call)
  X <- .model_X(object, mf)
  y <- stats::model.response(mf) - .offset_of(mf)  # lm.fit's effects are of y less the offset
  qx <- qr(X)  # LINPACK with tolerance 1e-7, as lm.fit
  p <- qx$rank
  rdf <- nrow(X) - p
  ssr <- sum(qr.resid(qx, y)^2)
  asgn <- attr(X, "assign")[qx$pivot][seq_len(p)]
  comp <- qr.qty(qx, y)[seq_len(p)]
  tt <- attr(mf, "terms")
  labels <- c("(Intercept)", attr(tt, "term.labels"))[1 + unique(asgn)]
  ss <- c(vapply(split(comp^2, asgn), sum, 1), ssr)
  df <- c(lengths(split(asgn, asgn)), rdf)
  ms <- ss / df
  f <- ms / (ssr / rdf)
  table <- data.frame(df, ss, ms, f, stats::pf(f, df, rdf, lower.tail = FALSE))
  table[length(df), 4:5] <- NA
  dimnames(table) <- list(c(labels, "Residuals"), c("Df", "Sum Sq", "Mean Sq", "F value", "Pr(>F)"))
  if (attr(tt, "intercept")) table <- table[-1, ]
  structure(table, heading = c("Analysis of Variance Table\n", paste("Response:", deparse(formula(object)[[2L]]))),
            class = c("anova", "data.frame"))
}

# terms(fit) as lm's: the terms of formula(fit) (fit$terms holds the design's column names). step(),
# drop1() and add1() read it, with extractAIC(), to refit sub-models through update().
terms.dp_result <- function(x, ...) stats::terms(formula(x))

# extractAIC() of a non-private fit as R's for lm and glm: the equivalent degrees of freedom and AIC
# up to lm's constant (RSS-based) or glm's own AIC; a DP fit is refused by the table (the deviance is
# not released), so step() and drop1() run on eps = Inf fits only.
extractAIC.dp_lm <- function(fit, scale = 0, k = 2, ...) {
  .refuse_generic("extractAIC", fit, sys.call())
  n <- nobs(fit)
  edf <- n - df.residual(fit)
  rss <- deviance(fit)
  dev <- if (scale > 0) rss / scale - n else n * log(rss / n)
  c(edf, dev + k * edf)
}

extractAIC.dp_glm <- function(fit, scale = 0, k = 2, ...) {
  .refuse_generic("extractAIC", fit, sys.call())
  edf <- nobs(fit) - df.residual(fit)
  c(edf, stats::AIC(fit) + (k - 2) * edf)
}

# The outermost step(), drop1() or add1() on the call stack (they reach a fit through extractAIC()), or NULL.
.calling_selector <- function() {
  for (cl in sys.calls()) {
    fn <- if (is.call(cl)) cl[[1L]] else NULL
    name <- if (is.name(fn)) as.character(fn) else if (is.call(fn) && identical(fn[[1L]], as.name("::"))) as.character(fn[[3L]]) else ""
    if (name %in% c("step", "drop1", "add1")) return(list(name = name, call = cl))
  }
  NULL
}

# anova(f0, f1, ...) of non-private fits (eps = Inf), as anova.lmlist and anova.glmlist: one row per model,
# the differences of residual df and RSS (deviance) between consecutive models, and the F test on the
# largest model's residual mean square (dp_lm) or the chi-squared test with dispersion 1 (dp_glm, with
# test = "Chisq"/"LRT"). A DP fit among them is refused: its sums of squares/deviances are not released.
.anova_nested <- function(object, others, method, test, call) {
  fits <- c(list(object), others)
  for (f in fits) {
    if (!inherits(f, method)) {
      .dp_abort(sprintf("anova() compares %s fits with each other; an argument is a %s.", method, class(f)[1L]),
                "dpstats_argument_error", call)
    }
    if (.is_dp_fit(f)) .refuse_generic("anova", f, call)
  }
  n <- vapply(fits, stats::nobs, 0)
  if (length(unique(n)) > 1L) {
    .dp_abort("anova(): the models were not all fitted to the same number of rows.", "dpstats_argument_error", call)
  }
  resdf <- vapply(fits, stats::df.residual, 0)
  resdev <- vapply(fits, stats::deviance, 0)
  models <- vapply(fits, function(f) paste(deparse(formula(f)), collapse = "\n"), "")
  heading <- paste0("Model ", seq_along(fits), ": ", models, collapse = "\n")
  df <- c(NA, -diff(resdf))
  change <- c(NA, -diff(resdev))
  if (method == "dp_lm") {
    big <- order(resdf)[1L]
    fv <- (change / df) / (resdev[big] / resdf[big])
    fv[df %in% 0 | (!is.na(fv) & fv < 0)] <- NA
    table <- data.frame(Res.Df = resdf, RSS = resdev, Df = df, `Sum of Sq` = change, F = fv,
                        `Pr(>F)` = stats::pf(fv, abs(df), resdf[big], lower.tail = FALSE), check.names = FALSE,
                        row.names = as.character(seq_along(fits)))
    return(structure(table, heading = c("Analysis of Variance Table\n", heading), class = c("anova", "data.frame")))
  }
  table <- data.frame(`Resid. Df` = resdf, `Resid. Dev` = resdev, Df = df, Deviance = change, check.names = FALSE,
                      row.names = as.character(seq_along(fits)))
  if (!is.null(test)) {
    chi <- change * sign(df)
    chi[df %in% 0 | (!is.na(chi) & chi < 0)] <- NA
    table[["Pr(>Chi)"]] <- stats::pchisq(chi, abs(df), lower.tail = FALSE)
  }
  structure(table, heading = c("Analysis of Deviance Table\n", heading), class = c("anova", "data.frame"))
}

# drop1() of a non-private fit (eps = Inf), as drop1.lm and drop1.glm: each term that can be dropped
# (R's drop.scope) refitted without it through update(), evaluated where drop1() was called; RSS or
# deviance, AIC (extractAIC's), and test = "F" (dp_lm) or "Chisq"/"LRT". A DP fit is refused by name.
drop1.dp_result <- function(object, scope, scale = 0, test = c("none", "Chisq", "F"), k = 2, trace = FALSE, ...) {
  call <- sys.call()
  .refuse_generic("extractAIC", object, call)
  if (!inherits(object, c("dp_lm", "dp_glm"))) return(NextMethod())
  lm <- inherits(object, "dp_lm")
  test <- if (missing(test)) "none" else as.character(test)[1L]
  offered <- if (lm) c("none", "Chisq", "F") else c("none", "Chisq", "LRT")
  if (!test %in% offered || !identical(scale, 0)) {
    .dp_abort(sprintf("drop1() of a %s offers test = %s with scale = 0.", class(object)[1L],
                      paste(sprintf("\"%s\"", offered), collapse = ", ")), "dpstats_argument_error", call)
  }
  tt <- terms(object)
  labels <- if (missing(scope)) stats::drop.scope(tt) else if (is.character(scope)) scope else attr(stats::terms(stats::update.formula(object, scope)), "term.labels")
  where <- parent.frame()
  refit <- function(term) {
    f <- stats::update.formula(formula(object), stats::as.formula(paste(". ~ . -", term)))
    eval(eval(as.call(list(quote(stats::update), object, f, evaluate = FALSE)), where), where)
  }
  fits <- suppressWarnings(c(list(object), lapply(labels, refit)), classes = "dpstats_non_private_warning")
  n <- stats::nobs(object)
  dev <- vapply(fits, stats::deviance, 0)
  edf <- vapply(fits, function(f) n - stats::df.residual(f), 0)
  aic <- vapply(fits, function(f) extractAIC(f, k = k)[2L], 0)
  dfs <- edf[1L] - edf
  dfs[1L] <- NA
  rows <- c("<none>", labels)
  if (lm) {
    table <- data.frame(Df = dfs, `Sum of Sq` = c(NA, dev[-1L] - dev[1L]), RSS = dev, AIC = aic, row.names = rows,
                        check.names = FALSE)
    if (test == "F") {
      rdf <- stats::df.residual(object)
      fs <- (table$`Sum of Sq` / dfs) / (dev[1L] / rdf)
      fs[!is.na(dfs) & dfs < 1e-4] <- NA
      table[c("F value", "Pr(>F)")] <- list(fs, stats::pf(fs, dfs, rdf, lower.tail = FALSE))
    } else if (test == "Chisq") {
      chi <- n * log(dev / n)
      chi <- chi - chi[1L]
      chi[1L] <- NA
      table[["Pr(>Chi)"]] <- stats::pchisq(chi, dfs, lower.tail = FALSE)
    }
  } else {
    table <- data.frame(Df = dfs, Deviance = dev, AIC = aic, row.names = rows, check.names = FALSE)
    if (test != "none") {
      lrt <- dev - dev[1L]
      lrt[1L] <- NA
      table[c("LRT", "Pr(>Chi)")] <- list(lrt, stats::pchisq(lrt, dfs, lower.tail = FALSE))
    }
  }
  heading <- c("Single term deletions", "\nModel:", deparse(formula(object)))
  structure(table, heading = heading, class = c("anova", "data.frame"))
}
