# dp_lm and dp_select_infer: private linear regression that behaves like lm, and select-then-infer.
#
# coef(), summary(), tidy(), glance(), vcov(), confint(), sigma() and predict(fit, newdata) work as for lm.
# At eps = Inf the fit is lm itself and keeps its model frame (fit$model), so fitted(), residuals(),
# deviance(), sigma(), logLik()/AIC()/BIC(), model.matrix() and confint(level =) equal lm's. A DP fit
# releases its coefficients (coef() is the calibrated estimate vcov() describes, which predict() uses),
# bootstrap covariance, intervals (at the level it was fitted with, conf_level =) and p-values; its
# residual standard error and deviance are computed from the released statistics (post-processing,
# as Python prints sigma): the rest, logLik() and AIC() included, is refused with a
# dpstats_not_released_error saying why.

dp_lm <- function(formula, data, eps, delta = 0, ..., seed = NULL) {
  .dp_fit("dp_lm", match.call(), environment(), c("formula", "data", "eps", "delta"), parent.frame())
}

# infer = "glm" fits dp_glm on part B; its family is given as dp_glm takes it (binomial, binomial(), "poisson").
dp_select_infer <- function(formula, data, eps, delta = 0, ..., family = NULL, seed = NULL) {
  if (!is.null(family)) family <- .glm_family(family, sys.call())
  used <- c("formula", "data", "eps", "delta", if (!is.null(family)) "family")
  .dp_fit("dp_select_infer", match.call(), environment(), used, parent.frame())
}

vcov.dp_lm <- function(object, ...) {
  terms <- names(coef(object))
  m <- matrix(as.numeric(unlist(object$outputs$vcov)), length(terms), length(terms), byrow = TRUE)
  dimnames(m) <- list(terms, terms)
  m
}

# confint.lm's layout exactly: a plain matrix, columns named as stats' "2.5 %", "97.5 %".
.ci_matrix <- function(lo, hi, terms, level) {
  a <- (1 - level) / 2
  ci <- cbind(lo, hi)
  dimnames(ci) <- list(terms, paste(format(100 * c(a, 1 - a), trim = TRUE, scientific = FALSE, digits = 3), "%"))
  ci
}

# At eps = Inf the intervals are lm's t intervals, at any level. A DP fit's intervals come from a
# parametric bootstrap at the level the fit was made with (conf_level =): another level needs a new
# fit, not a rescaling.
confint.dp_lm <- function(object, parm, level = 0.95, ...) {
  td <- tidy(object)
  cf <- stats::setNames(td$estimate, td$term)
  if (missing(parm)) parm <- td$term else if (is.numeric(parm)) parm <- td$term[parm]
  if (!.is_dp_fit(object)) {
    q <- stats::qt((1 + level) / 2, object$outputs$df_residual)
    se <- stats::setNames(td$std.error, td$term)[parm]
    return(.ci_matrix(cf[parm] - q * se, cf[parm] + q * se, parm, level))
  }
  fitted_level <- object$glance$conf_level
  if (!missing(level) && !isTRUE(all.equal(level, fitted_level))) {
    .dp_abort(sprintf(paste("confint(level = %s): the intervals of a DP fit were released at level %s (a parametric",
                            "bootstrap, not a rescaled standard error); refit with conf_level = %s."),
                      format(level), format(fitted_level), format(level)), "dpstats_argument_error", sys.call())
  }
  i <- match(parm, td$term)
  .ci_matrix(td$conf.low[i], td$conf.high[i], parm, fitted_level)
}

vcov.dp_select_infer <- vcov.dp_lm
# infer = "glm": Wald intervals, rescaled to any level as for dp_glm; infer = "lm": dp_lm's rule
confint.dp_select_infer <- function(object, parm, level = 0.95, ...) {
  mc <- match.call()  # forwarded as called: confint.dp_lm asks whether level was given
  mc[[1L]] <- if (.is_glm_fit(object)) confint.dp_glm else confint.dp_lm
  eval(mc, parent.frame())
}

# ---- lm's other methods. A non-private fit (eps = Inf) keeps its model frame, as lm does
# (fit$model), and answers like lm; a DP fit releases only its coefficients, intervals and tests,
# so whatever is a per-row value or a function of the raw data is refused with the reason.

.not_released <- function(object, what, why, call) {
  .dp_abort(sprintf("%s is not available for a DP fit (eps = %s): %s", what, format(object$privacy$eps), why),
            "dpstats_not_released_error", call)
}

.per_row <- "fitted values and residuals are per-row values computed from the data, and a DP fit does not release them. Use predict(fit, newdata = df) on data you hold (post-processing of the released coefficients)."

# The model frame of a non-private fit: kept at fit time (dp_lm, vertical_glm), or rebuilt as
# model.frame.lm does, from the formula and the data named in the call.
.lm_model <- function(object, what, call) {
  if (.is_dp_fit(object)) .not_released(object, what, .per_row, call)
  if (!is.null(.subset2(object, "model"))) return(.subset2(object, "model"))
  if (!is.null(object$rows_not_kept)) {
    .dp_abort(sprintf("%s is not available for this fit: %s.", what, object$rows_not_kept), "dpstats_not_released_error",
              call)
  }
  f <- formula(object)
  mf <- tryCatch({
    mc <- call("model.frame", formula = f, data = object$call$data, subset = object$call$subset)
    eval(mc, environment(f))
  }, error = function(e) NULL)
  if (is.null(mf)) {
    .dp_abort(sprintf("%s needs the data named in the fit's call (%s), which is not found here.", what,
                      paste(deparse(object$call$data), collapse = "")), "dpstats_error", call)
  }
  mf
}

# model.frame() and model.matrix() answer alike: refused for a DP fit, in the same words (both are
# row-level data, which a DP fit keeps and releases none of), and as lm's at eps = Inf.
.row_level <- paste("the model frame and the design matrix are row-level data, and a DP fit keeps and releases",
                    "none. Build them from data you hold: model.frame(formula(fit), data) or model.matrix(formula(fit), data).")

model.matrix.dp_result <- function(object, ...) {
  if (.is_dp_fit(object)) .not_released(object, "model.matrix()", .row_level, sys.call())
  mf <- .lm_model(object, "model.matrix()", sys.call())
  .model_X(object, mf)
}

model.frame.dp_result <- function(formula, ...) {
  if (.is_dp_fit(formula)) .not_released(formula, "model.frame()", .row_level, sys.call())
  .lm_model(formula, "model.frame()", sys.call())
}

# The fitted values and residuals of the rows the fit used (lm's fit$fitted.values, fit$residuals: with any
# offset(), as lm's); fitted() and residuals() pad them with NA for the rows na.action = na.exclude left
# out (.na_padded), as lm's do.
.lm_fitted <- function(object, what, call) {
  mf <- .lm_model(object, what, call)
  X <- .model_X(object, mf)
  stats::setNames(drop(X %*% .estimable_coef(object)[colnames(X)]) + .offset_of(mf), rownames(mf))
}

.lm_residuals <- function(object, what, call) {
  stats::model.response(.lm_model(object, what, call)) - .lm_fitted(object, what, call)
}

fitted.dp_lm <- function(object, ...) .na_padded(object, .lm_fitted(object, "fitted()", sys.call()))

residuals.dp_lm <- function(object, ...) .na_padded(object, .lm_residuals(object, "residuals()", sys.call()))

# naresid() of lm's na.action: NA in place of the rows na.action = na.exclude left out (eps = Inf); as they are
# under na.omit, where fit$na.action is of class "omit", and without one.
.na_padded <- function(object, x) stats::naresid(.subset2(object, "na.action"), x)

# A rank-deficient eps = Inf fit reports its aliased coefficients as NA (as lm and glm); its fitted
# values, like lm's, use the estimable ones (the NA ones count as 0).
.estimable_coef <- function(object) {
  cf <- coef(object)
  cf[is.na(cf)] <- 0
  cf
}

# predict.lm's arguments: se.fit and interval ("confidence", "prediction") at any level for a
# non-private fit (eps = Inf: the classical t intervals, with the fit's vcov and sigma, as predict.lm);
# a DP fit releases point predictions only (its intervals are a calibrated bootstrap of the
# coefficients, not Wald intervals around Xb). A row of newdata
# with NA in a variable the formula uses predicts NA (predict.lm with na.action = na.pass).
predict.dp_lm <- function(object, newdata, se.fit = FALSE, interval = c("none", "confidence", "prediction"),
                          level = 0.95, type = "response", ...) {
  .refuse_dots("predict", list(...), sys.call())
  .predict_type(type, "response", "for a linear model the response is the linear predictor, as predict.lm's",
                sys.call())
  interval <- match.arg(interval)
  intervals <- isTRUE(se.fit) || interval != "none"
  if (intervals && .is_dp_fit(object)) {
    .not_released(object, sprintf("predict(%s)", if (isTRUE(se.fit)) "se.fit = TRUE" else paste0("interval = \"", interval, "\"")),
                  paste("its intervals come from a calibrated parametric bootstrap of the coefficients (confint(fit)),",
                        "not from a standard error of Xb."), sys.call())
  }
  if (!missing(level) && !intervals) {
    .dp_abort("predict(level = ) needs interval = \"confidence\" or \"prediction\".", "dpstats_argument_error", sys.call())
  }
  rows <- missing(newdata) || is.null(newdata)
  if (rows) {
    if (.is_dp_fit(object)) .not_released(object, "predict() without newdata", .per_row, sys.call())
    fit <- .lm_fitted(object, "predict()", sys.call())
    X <- if (intervals) .model_X(object, .lm_model(object, "predict()", sys.call()))
  } else {
    fit <- .predict_rows(object, newdata, list(), sys.call())
    X <- if (intervals) .newdata_X(object, newdata, sys.call())
  }
  pad <- function(x) if (rows) stats::napredict(.subset2(object, "na.action"), x) else x  # as predict.lm
  if (!intervals) return(pad(fit))
  se <- sqrt(rowSums((X %*% vcov(object)[colnames(X), colnames(X), drop = FALSE]) * X))
  df <- df.residual(object)
  s <- object$outputs$sigma
  out <- fit
  if (interval != "none") {
    w <- stats::qt((1 + level) / 2, df) * if (interval == "confidence") se else sqrt(se^2 + s^2)
    out <- cbind(fit = fit, lwr = fit - w, upr = fit + w)
    rownames(out) <- names(fit)
  }
  if (!isTRUE(se.fit)) return(pad(out))
  list(fit = pad(out), se.fit = pad(stats::setNames(se, names(fit))), df = df, residual.scale = s)
}

# dp_select_infer predicts as its part B fit does (newdata holds the original columns; the selected
# terms are coded from them): as dp_lm, or with infer = "glm" as dp_glm (type = "link"/"response" and
# se.fit = TRUE by the delta method on the released covariance; predict.glm has no interval =). A
# dp_lm part B releases point predictions only, as predict.dp_lm says why. A row of newdata with NA
# in a variable the formula uses predicts NA (na.pass); arguments it does not take are named.
predict.dp_select_infer <- function(object, newdata, type = c("link", "response"), se.fit = FALSE,
                                    interval = c("none", "confidence", "prediction"), level = 0.95, ...) {
  call <- sys.call()
  .refuse_dots("predict", list(...), call)
  type <- if (missing(type)) "link" else
    .predict_type(type, c("link", "response"), "the linear predictor or the mean, as predict.glm's", call)
  interval <- match.arg(interval)
  glm <- .is_glm_fit(object)
  if (glm && interval != "none") {
    .dp_abort(sprintf(paste("predict(interval = \"%s\") is not defined for a dp_select_infer fit with infer = \"glm\"",
                            "(as for predict.glm); use se.fit = TRUE for standard errors of the predictions."), interval),
              "dpstats_argument_error", call)
  }
  if (!glm && (isTRUE(se.fit) || interval != "none")) {
    .not_released(object, sprintf("predict(%s)", if (isTRUE(se.fit)) "se.fit = TRUE" else paste0("interval = \"", interval, "\"")),
                  paste("its intervals come from a calibrated parametric bootstrap of the coefficients (confint(fit)),",
                        "not from a standard error of Xb."), call)
  }
  if (!missing(level)) {
    .dp_abort("predict(level = ) needs interval = \"confidence\" or \"prediction\".", "dpstats_argument_error", call)
  }
  if (missing(newdata) || is.null(newdata)) .not_released(object, "predict() without newdata", .per_row, call)
  fit <- .predict_rows(object, newdata, list(type = type), call)
  if (!isTRUE(se.fit)) return(fit)
  X <- .newdata_X(object, newdata, call)
  se <- sqrt(rowSums((X %*% vcov(object)[colnames(X), colnames(X), drop = FALSE]) * X))
  if (type == "response") se <- se * abs(.fit_family(object)$mu.eta(drop(X %*% coef(object)[colnames(X)])))
  list(fit = fit, se.fit = stats::setNames(se, names(fit)), residual.scale = 1)
}

# dp_select_infer answers as R does for the final model, part B's fit: nobs() is part B's rows (public: it
# follows from n and split) and formula() the response on the terms of the selected columns, each whole
# (a factor's term enters with all its columns, as lm fits it) with the margins R's coding of an
# interaction with a factor needs, so that lm(formula(fit), rows) codes part B's columns; the candidates'
# formula is fit$formula.
nobs.dp_select_infer <- function(object, ...) {
  n <- NextMethod()  # refuses, saying why, where n is private
  n_infer <- object$outputs$n_infer
  if (is.null(n_infer)) n else as.integer(n_infer)
}

formula.dp_select_infer <- function(x, ...) {
  f <- formula.dp_result(x)
  sf <- x$outputs$selected_formula
  if (is.null(sf)) return(f)
  stats::as.formula(sf, env = environment(f))
}

# Arguments a method does not take are named, not ignored (predict(fit, interval = "confidence") on
# a method without intervals, a misspelt se.fitt =).
# predict(type =) as R's: one of the types `offered`, else a dpstats_argument_error naming them (R's
# predict.lm/predict.glm also offer "terms", the per-term contributions, which dpstats does not compute).
.predict_type <- function(type, offered, why, call) {
  if (is.character(type) && length(type) == 1L && !is.na(type) && type %in% offered) return(type)
  shown <- if (is.character(type) && length(type) == 1L) sprintf("\"%s\"", type) else deparse(type)[1L]
  .dp_abort(sprintf("predict(type = %s) is not offered: type is %s (%s).%s", shown,
                    paste(sprintf("\"%s\"", offered), collapse = " or "), why,
                    if (identical(type, "terms")) " Per-term contributions are not computed; for a non-private reference, predict(type = \"terms\") of lm()/glm() on data you hold gives them." else ""),
            "dpstats_argument_error", call)
}

.refuse_dots <- function(what, dots, call) {
  if (!length(dots)) return(invisible())
  nm <- names(dots)
  if (is.null(nm)) nm <- rep("", length(dots))
  shown <- ifelse(nzchar(nm), paste0(nm, " ="), "an unnamed argument")
  .dp_abort(sprintf("%s() does not take %s here; it would be ignored.", what, paste(shown, collapse = ", ")),
            "dpstats_argument_error", call)
}

# Predictions for the rows of newdata: rows with NA (or a non-finite number) in a variable of the
# formula's right-hand side give NA; the others are predicted by the Python result. A column the
# formula does not use and dpstats cannot send (a list) is left out, as predict.lm ignores it (sent as its
# missingness when the formula removes it, .with_stand_ins).
.predict_rows <- function(object, newdata, args, call) {
  if (is.matrix(newdata)) newdata <- .matrix_frame(newdata)
  ok <- .complete_newdata(object, newdata)
  nd <- newdata[ok, setdiff(names(newdata), .unsent_columns(newdata, formula(object))), drop = FALSE]
  nd <- .with_stand_ins(nd, formula(object))  # y ~ . - d: the fit's formula names d
  attr(nd, "dpstats_contrasts") <- attr(object, "dpstats_contrasts")  # code factors as the fit did
  out <- rep(NA_real_, nrow(newdata))
  if (any(ok)) {
    p <- as.numeric(.py_method(object, "predict", c(list(newdata = nd), args), call))
    if (length(p) != sum(ok)) {
      .dp_abort("predict(): newdata has rows the fit's design cannot code (a value outside the training levels, or a transformation that is not finite).",
                "dpstats_data_error", call)
    }
    out[ok] <- p
  }
  stats::setNames(out, rownames(newdata))
}

.complete_newdata <- function(object, newdata) {
  f <- formula(object)  # dp_select_infer: the final model's; Python leaves rows it cannot code NA
  rhs <- if (length(f) == 3L) f[-2L] else f
  .complete_rows(newdata[intersect(all.vars(rhs), names(newdata))])
}

# newdata's design as the fit codes it (Python's coding of the fit's levels and contrasts); NA rows NA.
.newdata_X <- function(object, newdata, call) {
  if (is.matrix(newdata)) newdata <- .matrix_frame(newdata)
  ok <- .complete_newdata(object, newdata)
  terms <- names(coef(object))
  X <- matrix(NA_real_, nrow(newdata), length(terms), dimnames = list(rownames(newdata), terms))
  if (any(ok)) {
    nd <- newdata[ok, , drop = FALSE]
    attr(nd, "dpstats_contrasts") <- attr(object, "dpstats_contrasts")
    d <- .dp_invoke("newdata_design_for_r", list(result = .dp_pyref(object), newdata = nd),
                    target = .dp_ensure_bridge(), call = call)
    M <- matrix(as.numeric(unlist(d$values)), nrow = d$dim[1], ncol = d$dim[2], byrow = TRUE,
                dimnames = list(NULL, unlist(d$names)))
    X[ok, ] <- M[, terms, drop = FALSE]
  }
  X
}

df.residual.dp_lm <- function(object, ...) {
  df <- object$outputs$df_residual
  if (is.null(df) || is.na(df)) {
    .dp_abort("df.residual() is not available: n is private (add/remove one row, or rows with a missing value dropped) and not released; declare bounds for every variable to keep n public.",
              "dpstats_not_released_error", sys.call())
  }
  as.integer(df)
}

# A DP fit's deviance() is computed from the released statistics as sigma() is: RSS = sigma^2 * df.residual
# (post-processing, as noisy as sigma; Python's glance has the same value). NA where sigma is; refused where
# n is private.
deviance.dp_lm <- function(object, ...) {
  if (.is_dp_fit(object)) return(.released_fit_statistic(object, "deviance()", "deviance", sys.call()))
  sum(.lm_residuals(object, "deviance()", sys.call())^2)
}

.released_fit_statistic <- function(object, what, name, call) {
  if (is.null(object$outputs[["sigma"]])) return(NA_real_)  # dp_select_infer that selected nothing: no fit
  if (is.null(object$outputs$df_residual)) {
    .not_released(object, what, paste("it is computed from the released sigma and n, and n is private here",
                                       "(add/remove one row, or rows with a missing value dropped); declare bounds",
                                       "for every variable to keep n public."), call)
  }
  v <- object$glance[[name]]
  if (is.null(v) || !is.numeric(v) || is.nan(v)) NA_real_ else as.numeric(v)
}

# A DP fit's sigma() is the residual standard error Python prints, computed from the released statistics
# (yᵀy, Xᵀy, XᵀX and the estimates) and the public n: post-processing. NA where their residual sum of
# squares fell below 0 at this eps (the printed line says "not resolved").
sigma.dp_lm <- function(object, ...) {
  if (.is_dp_fit(object)) return(.released_sigma(object))
  sqrt(deviance(object) / df.residual(object))
}

.released_sigma <- function(object) {
  s <- object$outputs[["sigma"]]  # exact: $ would match a partial name
  if (is.null(s) || !is.numeric(s) || is.nan(s)) NA_real_ else as.numeric(s)
}

# dp_select_infer: part B's dp_lm fit as sigma.dp_lm's; with infer = "glm" as dp_glm's (not released).
sigma.dp_select_infer <- function(object, ...) {
  if (.is_glm_fit(object)) {
    .not_released(object, "sigma()", "the deviance of a glm fit is a function of the raw data and is not released.",
                  sys.call())
  }
  .released_sigma(object)  # always a DP fit (finite eps); NA when nothing was selected
}

# A DP fit's logLik() (hence AIC(), BIC()) is refused, as dp_glm's: from its noisy residual sum of squares it
# would be no likelihood of the data (it can exceed the least-squares maximum), and separately noised fits'
# are not comparable, so AIC(f1, f2) would rank noise (audit s16-rusers3 F06).
logLik.dp_lm <- function(object, REML = FALSE, ...) {
  if (.is_dp_fit(object)) .refuse_noisy_loglik(object, sys.call())
  res <- .lm_residuals(object, "logLik()", sys.call())
  n <- length(res)
  ll <- 0.5 * (-n * (log(2 * pi) + 1 - log(n) + log(sum(res^2))))
  structure(ll, nall = n, nobs = n, df = sum(!is.na(coef(object))) + 1L, class = "logLik")
}

.refuse_noisy_loglik <- function(object, call) {
  .not_released(object, "logLik() (and AIC(), BIC())", paste(
    "from the noisy residual sum of squares (sigma(fit)^2 * df.residual(fit)) it would be no likelihood of",
    "the data at any coefficients (it can exceed the least-squares maximum), and separately noised fits'",
    "values are not comparable, so AIC() and BIC() would rank noise, not models.", .loglik_instead), call)
}

# dp_select_infer with infer = "lm": part B's fit's, as deviance.dp_lm's (NA when nothing was selected) and
# logLik.dp_lm's (refused); with infer = "glm" as dp_glm's (refused: R/refusals.R).
deviance.dp_select_infer <- function(object, ...) {
  if (.is_glm_fit(object)) return(NextMethod())
  .released_fit_statistic(object, "deviance()", "deviance", sys.call())
}

logLik.dp_select_infer <- function(object, ...) {
  if (.is_glm_fit(object)) return(NextMethod())
  .refuse_noisy_loglik(object, sys.call())  # always a DP fit
}

# formula(fit) is the R formula the fit was made with, `.` expanded over the data's columns when the fit
# was made, as lm's (.expanded_formula); update(fit, . ~ . - x) refits through the call.
formula.dp_result <- function(x, ...) {
  f <- x$formula
  if (!inherits(f, "formula")) {
    if (is.null(x$call$formula)) .dp_abort("this result has no formula.", "dpstats_error", sys.call())
    f <- stats::as.formula(x$call$formula)
  }
  f
}

# update(fit, . ~ . + hp) refits through the call, as lm's. A fit given its data as a value (do.call(),
# Map(), purrr) keeps `<data frame>` in its call in place of the data (.shareable_call: printed output
# never carries the data), and one given a name that is not found where update() is called (Map's d)
# cannot find it again: update() then asks for the data, data = df, naming the call to write, instead of
# R's "object '<data frame>' not found". Refitting a private fit is a new release: without an accountant
# in the call, a classed warning says what it spends and the total by basic composition (audit s14-ruser F6).
update.dp_result <- function(object, formula., ..., evaluate = TRUE) {
  call <- object$call
  where <- parent.frame()  # where update() was called, which update.default evaluates the call in
  given <- names(as.list(substitute(list(...)))[-1L])
  lost <- function(nm) {
    a <- call[[nm]]
    is.name(a) && (as.character(a) %in% .data_args || !exists(as.character(a), envir = where))
  }
  absent <- setdiff(Filter(lost, intersect(names(call)[-1L], names(.data_args))), given)
  if (length(absent)) {
    asked <- sys.call()
    asked[[1L]] <- as.name("update")
    for (nm in absent) asked[[nm]] <- as.name(if (nm == "p_values") "p" else "df")
    .dp_abort(sprintf(paste("update() needs %s again: the fit's call holds %s, which is not data found here (data",
                            "passed as a value, through do.call(), Map() or purrr, is kept as `<data frame>` or",
                            "`<p-values>`, so that printed output never carries the data). Give it again: %s, with %s."),
                      paste0(absent, " =", collapse = " and "),
                      paste(vapply(absent, function(nm) sprintf("%s = %s", nm, deparse(call[[nm]], backtick = TRUE)), ""),
                            collapse = " and "),
                      paste(deparse(asked, width.cutoff = 500L), collapse = " "),
                      paste(ifelse(absent == "p_values", "p your p-values", "df your data frame"), collapse = " and ")),
              "dpstats_argument_error", as.call(c(as.name("update"), as.list(sys.call())[-1L])))
  }
  res <- NextMethod()
  if (isTRUE(evaluate) && inherits(res, "dp_result") && .is_dp_fit(object) && .is_dp_fit(res) &&
      is.null(res$call$accountant)) {
    .warn_spent_again(object$privacy, res$privacy)
  }
  res
}

.warn_spent_again <- function(before, now) {
  pair <- function(e, d) sprintf("eps = %s, delta = %s", format(e, digits = 6), format(d, digits = 6))
  delta <- function(p) if (is.numeric(p$delta)) p$delta else 0
  total <- pair(before$eps + now$eps, delta(before) + delta(now))
  warning(warningCondition(sprintf(paste(
    "update() refitted through the call: a new private release, which spends its own %s on the rows it is",
    "given. On the same rows as the fit it updates (%s), the privacy loss adds up to %s by basic composition.",
    "To cap the total, fit with accountant = acc, e.g. acc <- dp_accountant(%s): update() keeps it in the",
    "call, and it refuses a release its budget does not hold."),
    pair(now$eps, delta(now)), pair(before$eps, delta(before)), total, total),
    class = c("dpstats_composition_warning", "dpstats_warning"), call = sys.call(-1L)))
}
