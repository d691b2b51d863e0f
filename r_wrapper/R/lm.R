# dp_lm and dp_select_infer: private linear regression that behaves like lm, and select-then-infer.
#
# coef(), summary() (laid out as summary.lm: coefficient table with significance stars, residual
# standard error, then the privacy statement), tidy(), glance() and predict(fit, newdata) work as for
# lm; vcov() is the released covariance (bootstrap under eps < Inf, classical at eps = Inf); confint()
# gives the released intervals, at the level the fit was made with (conf_level =): they come from a
# parametric bootstrap, so another level needs a new fit, not a rescaling.

dp_lm <- function(formula, data, eps, delta = 0, ..., seed = NULL) {
  .dp_fit("dp_lm", match.call(), environment(), c("formula", "data", "eps", "delta"), parent.frame())
}

dp_select_infer <- function(formula, data, eps, delta = 0, ..., seed = NULL) {
  .dp_fit("dp_select_infer", match.call(), environment(), c("formula", "data", "eps", "delta"), parent.frame())
}

vcov.dp_lm <- function(object, ...) {
  terms <- names(coef(object))
  m <- matrix(as.numeric(unlist(object$outputs$vcov)), length(terms), length(terms), byrow = TRUE)
  dimnames(m) <- list(terms, terms)
  m
}

confint.dp_lm <- function(object, parm, level = NULL, ...) {
  fitted_level <- object$glance$conf_level
  if (!is.null(level) && !isTRUE(all.equal(level, fitted_level))) {
    .dp_abort(sprintf(paste("confint(level = %s): the intervals were released at level %s (a parametric bootstrap,",
                            "not a rescaled standard error); refit with conf_level = %s."),
                      format(level), format(fitted_level), format(level)), "dpstats_argument_error")
  }
  td <- tidy(object)
  ci <- cbind(td$conf.low, td$conf.high)
  a <- (1 - fitted_level) / 2
  dimnames(ci) <- list(td$term, paste(format(100 * c(a, 1 - a), trim = TRUE, scientific = FALSE, digits = 3), "%"))
  if (!missing(parm)) ci <- ci[if (is.numeric(parm)) parm else match(parm, td$term), , drop = FALSE]
  ci
}

vcov.dp_select_infer <- vcov.dp_lm
confint.dp_select_infer <- confint.dp_lm
