# dp_glm: private logistic and Poisson regression that behaves like glm.
#
# family is given as in glm: a family object (binomial(), poisson()), the function itself
# (binomial) or its name ("binomial"); canonical links only (logit, log). coef(), summary(),
# tidy(), glance(), vcov(), confint() and predict(fit, newdata, type = "link"/"response") work as
# for glm. Intervals are Wald intervals (the DP variance adds the privacy noise of the last noisy
# Newton step), so confint(level =) rescales them; they are NA where the fit withheld them.

dp_glm <- function(formula, data, eps, delta = 0, family = "binomial", ..., seed = NULL) {
  family <- .glm_family(family, sys.call())
  .dp_fit("dp_glm", match.call(), environment(), c("formula", "data", "eps", "delta", "family"), parent.frame())
}

.glm_family <- function(family, call = NULL) {
  if (is.function(family)) family <- family()
  if (inherits(family, "family")) {
    link <- family$link
    canonical <- c(binomial = "logit", poisson = "log")
    if (!is.null(canonical[family$family]) && !is.na(canonical[family$family]) &&
        !identical(link, unname(canonical[family$family]))) {
      .dp_abort(sprintf("dp_glm offers canonical links only (binomial: logit, poisson: log), not %s(link = \"%s\").",
                        family$family, link), "dpstats_argument_error", call)
    }
    family <- family$family
  }
  if (!is.character(family) || length(family) != 1) {
    .dp_abort("family must be binomial or poisson: a family object, the function or its name.",
              "dpstats_argument_error", call)
  }
  family
}

vcov.dp_glm <- function(object, ...) vcov.dp_lm(object, ...)

confint.dp_glm <- function(object, parm, level = 0.95, ...) {
  td <- tidy(object)
  cf <- stats::setNames(td$estimate, td$term)
  if (missing(parm)) parm <- td$term else if (is.numeric(parm)) parm <- td$term[parm]
  se <- stats::setNames(td$std.error, td$term)[parm]
  q <- stats::qnorm((1 + level) / 2)
  .ci_matrix(cf[parm] - q * se, cf[parm] + q * se, parm, level)
}

predict.dp_glm <- function(object, newdata, type = c("link", "response"), ...) {
  type <- match.arg(type)
  if (missing(newdata) || is.null(newdata)) {
    .dp_abort("predict() on a dp_glm fit needs newdata (the rows of the fit are not kept).",
              "dpstats_argument_error", sys.call())
  }
  if (is.matrix(newdata)) newdata <- .matrix_frame(newdata)
  attr(newdata, "dpstats_contrasts") <- attr(object, "dpstats_contrasts")
  out <- .py_method(object, "predict", list(newdata = newdata, type = type), sys.call())
  stats::setNames(as.numeric(out), rownames(newdata))
}
