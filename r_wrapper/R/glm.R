# lm/glm-style methods of vertical_glm results.
#
# Non-private fits (no eps) are the pooled GLM: coef, vcov, confint, deviance, logLik/AIC/BIC and
# predict equal R's glm()/lm() on the same data. DP fits release only noised coefficients:
#   - predict(fit, newdata) is post-processing of them (allowed);
#   - vcov/confint (no standard errors are released) and deviance/logLik/AIC/BIC (functions of the
#     raw data) are refused with the reason;
#   - fitted()/residuals() are per-row values computed from the raw data: for every fit, DP or not,
#     they need diagnostics = TRUE at fit time (DESIGN: no output shows per-row values unless the
#     user asks for non-private diagnostics); otherwise predict(fit, newdata = df) on data you hold.
# confint() gives Wald intervals: t quantiles with the residual df for the gaussian family (as
# confint.lm), normal quantiles otherwise (as confint.default; R's confint.glm profiles instead).

.py_method <- function(object, name, args = list(), call = NULL) {
  .dp_invoke(name, args, target = .dp_pyref(object), call = call)
}

.is_dp_fit <- function(object) {
  e <- object$privacy$eps
  !is.null(e) && !identical(e, "Inf") && is.numeric(e) && is.finite(e)
}

# As predict.dp_glm: a row of newdata with NA in a variable the formula uses predicts NA (predict.glm
# with na.action = na.pass), and arguments it does not take are named, not ignored.
predict.dp_vertical_glm <- function(object, newdata, type = c("link", "response"), ...) {
  .refuse_dots("predict", list(...), sys.call())
  type <- if (missing(type)) "link" else
    .predict_type(type, c("link", "response"), "the linear predictor or the mean, as predict.glm's", sys.call())
  if (missing(newdata) || is.null(newdata)) return(fitted(object, type = type))
  .predict_rows(object, newdata, list(type = type), sys.call())
}

fitted.dp_vertical_glm <- function(object, type = c("response", "link"), ...) {
  type <- match.arg(type)
  as.numeric(.py_method(object, "fitted", list(type = type), sys.call()))
}

residuals.dp_vertical_glm <- function(object, type = c("deviance", "pearson", "response", "working"), ...) {
  type <- match.arg(type)
  as.numeric(.py_method(object, "residuals", list(type = type), sys.call()))
}

vcov.dp_vertical_glm <- function(object, ...) {
  v <- .py_method(object, "vcov", call = sys.call())
  terms <- names(coef(object))
  m <- as.matrix(v[, terms, drop = FALSE])
  dimnames(m) <- list(terms, terms)
  m
}

confint.dp_vertical_glm <- function(object, parm, level = 0.95, ...) {
  cf <- coef(object)
  pnames <- names(cf)
  if (missing(parm)) parm <- pnames else if (is.numeric(parm)) parm <- pnames[parm]
  se <- sqrt(diag(vcov(object)))[parm]
  a <- (1 - level) / 2
  a <- c(a, 1 - a)
  gaussian <- identical(object$outputs$family, "gaussian")
  q <- if (gaussian) stats::qt(a, object$outputs$df_residual) else stats::qnorm(a)
  ci <- cbind(cf[parm] + q[1] * se, cf[parm] + q[2] * se)
  dimnames(ci) <- list(parm, paste(format(100 * a, trim = TRUE, scientific = FALSE, digits = 3), "%"))
  ci  # a plain matrix, as confint.lm / confint.default return
}

nobs.dp_result <- function(object, ...) {
  n <- object$n
  if (is.null(n) || length(n) != 1L || is.na(n)) {
    .dp_abort(paste("nobs() is not available:", .n_withheld(object)), "dpstats_not_released_error")
  }
  as.integer(n)
}

# Why n is not released, in terms of what the user did (the call's arguments and the steps the privacy
# statement names from them: variables' names, never a count from the rows).
.n_withheld <- function(object) {
  if (identical(object$privacy$neighbouring, "add_remove")) {
    return("under add/remove-one-row privacy the number of rows is private and not released.")
  }
  steps <- unlist(object$privacy$data_dependent_steps)
  unbounded <- grep("in a variable without declared bounds", steps, value = TRUE, fixed = TRUE)
  if (length(unbounded)) {
    vars <- sub(".*without declared bounds \\((.*)\\) are dropped.*", "\\1", unbounded[1])
    return(paste0("rows with a missing value in a variable without declared bounds (", vars, ") were dropped, so ",
                  "the number of rows analysed depends on the data and is not released. Declare bounds for every ",
                  "variable of the formula (bounds = list(x = c(lo, hi), ...)): missing values then get public ",
                  "fills, no row is dropped, and n is public."))
  }
  asked <- if (!is.null(object$call$na.action)) "na.action = na.omit" else if (!is.null(object$call$na_action)) "na_action = \"omit\""
  if (is.null(asked)) {
    return(paste("rows with a missing value were dropped, so the number of rows analysed depends on the data and",
                 "is not released; declared bounds for every variable keep n public (missing values get public fills)."))
  }
  paste0("the call asked for incomplete rows to be dropped (", asked, "), so the number of rows analysed depends ",
         "on the data and is not released; the default na_action = \"fill\" with declared bounds keeps n public.")
}

df.residual.dp_vertical_glm <- function(object, ...) df.residual.dp_lm(object, ...)  # an error where n is private

deviance.dp_vertical_glm <- function(object, ...) {
  if (.is_dp_fit(object)) {
    .dp_abort("deviance() is not available for a DP fit: the deviance is a function of the raw data and is not released.",
              "dpstats_error")
  }
  as.numeric(object$outputs$deviance)
}

logLik.dp_vertical_glm <- function(object, ...) {
  ll <- .py_method(object, "loglik", call = sys.call())
  structure(ll$loglik, df = as.integer(ll$df), nobs = as.integer(ll$nobs), class = "logLik")
}
