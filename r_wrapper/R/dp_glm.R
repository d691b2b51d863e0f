# dp_glm: private logistic and Poisson regression that behaves like glm.
#
# family is given as in glm: a family object (binomial(), poisson()), the function itself
# (binomial) or its name ("binomial"); canonical links only (logit, log). coef(), summary(),
# tidy(), glance(), vcov(), confint() and predict(fit, newdata, type = "link"/"response") work as
# for glm. Intervals are Wald intervals (the DP variance adds the privacy noise of the last noisy
# Newton step), so confint(level =) rescales them; they are NA where the fit withheld them.
# At eps = Inf the fit is glm's (IRLS) and keeps its model frame (fit$model), so fitted(),
# residuals() (deviance, pearson, response, working), predict() without newdata, deviance(),
# logLik()/AIC()/BIC() and model.matrix() answer as glm's. A DP fit releases its coefficients, their
# covariance and intervals only: per-row values and functions of the raw data are refused with a
# dpstats_not_released_error saying why.

dp_glm <- function(formula, data, eps, delta = 0, family = "binomial", ..., seed = NULL) {
  family <- .glm_family(family, sys.call())
  .dp_fit("dp_glm", match.call(), environment(), c("formula", "data", "eps", "delta", "family"), parent.frame())
}

.glm_family <- function(family, call = NULL) .family_of(family, "dp_glm", call)

# The families each function fits (canonical links only), and what to use for a family R users often
# reach for that it does not fit.
.families <- list(dp_glm = c(binomial = "logit", poisson = "log"),
                  vertical_glm = c(gaussian = "identity", binomial = "logit", poisson = "log"))
.family_advice <- c(
  quasibinomial = "binomial gives the same coefficients; the quasi-family's dispersion is estimated from the residuals, which a DP fit does not release",
  quasipoisson = "poisson gives the same coefficients; the quasi-family's dispersion is estimated from the residuals, which a DP fit does not release",
  gaussian = "for a linear model use dp_lm()"
)

# family = binomial, binomial(), "binomial" (as glm takes it) as the name of a family `method` fits; a
# family it does not fit, a non-canonical link or anything else is a dpstats_argument_error in R's words,
# naming the families offered, before anything is sent to Python.
.family_of <- function(family, method, call = NULL) {
  offered <- .families[[method]]
  listing <- paste(sprintf("%s (%s link)", names(offered), offered), collapse = ", ")
  listing <- sub(", ([^,]*)$", " and \\1", listing)
  how <- "as a family object (binomial()), the function (binomial) or its name (\"binomial\")"
  if (is.function(family)) family <- tryCatch(family(), error = function(e) NULL)
  link <- NULL
  if (inherits(family, "family")) {
    link <- family$link
    family <- family$family
  }
  if (!is.character(family) || length(family) != 1L || is.na(family)) {
    .dp_abort(sprintf("family must be one of the families %s() fits, %s, given %s.", method, listing, how),
              "dpstats_argument_error", call)
  }
  if (!family %in% names(offered)) {
    advice <- if (!is.na(.family_advice[family])) sprintf(" For %s, %s.", family, .family_advice[[family]]) else ""
    if (identical(family, "gaussian") && method != "dp_glm") advice <- ""
    .dp_abort(sprintf("%s() does not fit family = %s: it offers %s, given %s.%s", method, family, listing, how, advice),
              "dpstats_argument_error", call)
  }
  if (!is.null(link) && !identical(link, offered[[family]])) {
    .dp_abort(sprintf("%s(link = \"%s\") is not offered: %s() fits the canonical link only, %s(link = \"%s\").",
                      family, link, method, family, offered[[family]]), "dpstats_argument_error", call)
  }
  family
}

vcov.dp_glm <- function(object, ...) vcov.dp_lm(object, ...)

# Wald intervals at any level, as confint.default. R's confint() of a glm profiles the likelihood and says
# so at run time; this says which intervals these are, as a message (suppressMessages() silences it).
confint.dp_glm <- function(object, parm, level = 0.95, ...) {
  td <- tidy(object)
  cf <- stats::setNames(td$estimate, td$term)
  if (missing(parm)) parm <- td$term else if (is.numeric(parm)) parm <- td$term[parm]
  se <- stats::setNames(td$std.error, td$term)[parm]
  q <- stats::qnorm((1 + level) / 2)
  ci <- .ci_matrix(cf[parm] - q * se, cf[parm] + q * se, parm, level)
  what <- if (.is_dp_fit(object)) "of the private fit (estimate +/- z * released std. error, privacy noise included)"
          else "(estimate +/- z * std. error, as confint.default())"
  message("confint(): Wald intervals ", what, ", not profile-likelihood intervals as confint() on a glm gives.")
  ci
}

# predict.glm's se.fit = TRUE: the delta method on the released covariance (Wald, as confint.dp_glm;
# post-processing of released quantities for a DP fit too). NA rows of newdata predict NA.
predict.dp_glm <- function(object, newdata, type = c("link", "response"), se.fit = FALSE, ...) {
  .refuse_dots("predict", list(...), sys.call())
  if (missing(type)) type <- "link"
  type <- .predict_type(type, c("link", "response"), "the linear predictor or the mean, as predict.glm's", sys.call())
  own <- missing(newdata) || is.null(newdata)
  if (own) {
    if (.is_dp_fit(object)) .not_released(object, "predict() without newdata", .per_row, sys.call())
    rows <- .glm_rows(object, "predict()", sys.call())
    fit <- if (type == "link") rows$eta else rows$mu
    X <- if (isTRUE(se.fit)) .model_X(object, .lm_model(object, "predict()", sys.call()))
  } else {
    fit <- .predict_rows(object, newdata, list(type = type), sys.call())
    X <- if (isTRUE(se.fit)) .newdata_X(object, newdata, sys.call())
  }
  pad <- function(x) if (own) stats::napredict(.subset2(object, "na.action"), x) else x  # as predict.glm
  if (!isTRUE(se.fit)) return(pad(fit))
  se <- sqrt(rowSums((X %*% vcov(object)[colnames(X), colnames(X), drop = FALSE]) * X))
  if (type == "response") {
    fam <- .fit_family(object)
    eta <- if (type == "link") fit else fam$linkfun(fit)  # the linear predictor with any offset
    se <- se * abs(fam$mu.eta(eta))
  }
  list(fit = pad(fit), se.fit = pad(stats::setNames(se, names(fit))), residual.scale = 1)
}

# The non-private fit's rows as glm sees them: y as a proportion of m trials (binomial; 1 for a 0/1
# or two-level factor response, s + f for cbind(s, f)), the linear predictor and the fitted means.
.glm_rows <- function(object, what, call) {
  mf <- .lm_model(object, what, call)
  X <- .model_X(object, mf)
  resp <- .glm_response(stats::model.response(mf))
  fam <- .fit_family(object)
  off <- stats::model.offset(mf)  # offset() of the formula (eps = Inf only), as glm adds it
  eta <- stats::setNames(drop(X %*% .estimable_coef(object)[colnames(X)]) + (if (is.null(off)) 0 else off), rownames(mf))
  list(y = resp$y, m = resp$m, eta = eta, mu = fam$linkinv(eta), family = fam)
}

# The R family object of a dp_glm fit (binomial(), poisson()), from the family it names.
# family(fit) as glm's: the R family object (binomial(), poisson(): canonical links), also for
# dp_select_infer with infer = "glm" and vertical_glm.
family.dp_result <- function(object, ...) {
  fam <- object$outputs$family
  if (is.null(fam)) {
    .dp_abort(sprintf("family() is not defined for a %s result: it is not a generalised linear model.", object$method),
              "dpstats_argument_error", sys.call())
  }
  .fit_family(object)
}

.fit_family <- function(fit) get(fit$outputs$family, mode = "function", envir = asNamespace("stats"))()

# A glm response as glm.fit takes it: the proportion y of m trials (cbind(s, f): s / (s + f) of s + f;
# a two-level factor: its second level as 1; a 0/1 or count response as it is, one trial each).
.glm_response <- function(y) {
  m <- rep(1, NROW(y))
  if (is.matrix(y)) {
    m <- y[, 1] + y[, 2]
    y <- ifelse(m > 0, y[, 1] / m, 0)
  } else if (is.factor(y)) {
    y <- as.numeric(y != levels(y)[1L])
  }
  list(y = as.numeric(y), m = m)
}

# fitted() and residuals() padded with NA for the rows na.action = na.exclude left out, as glm's (.na_padded);
# fit$fitted.values and fit$residuals (working) of the rows used, as glm's components.
fitted.dp_glm <- function(object, ...) .na_padded(object, .glm_rows(object, "fitted()", sys.call())$mu)

residuals.dp_glm <- function(object, type = c("deviance", "pearson", "working", "response"), ...) {
  .na_padded(object, .glm_residuals(object, match.arg(type), "residuals()", sys.call()))
}

.glm_residuals <- function(object, type, what, call) {
  r <- .glm_rows(object, what, call)
  out <- switch(type,
    deviance = sign(r$y - r$mu) * sqrt(pmax(r$family$dev.resids(r$y, r$mu, r$m), 0)),
    pearson = (r$y - r$mu) * sqrt(r$m) / sqrt(r$family$variance(r$mu)),
    working = (r$y - r$mu) / r$family$mu.eta(r$eta),
    response = r$y - r$mu
  )
  stats::setNames(out, names(r$eta))
}

df.residual.dp_glm <- function(object, ...) df.residual.dp_lm(object, ...)  # NA where n is private

# Unlike dp_lm's (computed from its released yᵀy, Xᵀy and XᵀX), a GLM's deviance needs every row's fitted
# mean: no released value determines it.
.glm_unreleased <- function(what) {
  sprintf(paste("the %s is a function of the raw data, and nothing dp_glm releases (its coefficients and their",
                "covariance) determines it, so it is not released."), what)
}

deviance.dp_glm <- function(object, ...) {
  if (.is_dp_fit(object)) {
    .not_released(object, "deviance()", .glm_unreleased("deviance"), sys.call())
  }
  as.numeric(object$outputs$deviance)
}

# What a DP fit offers instead of logLik(), AIC() and BIC() (dp_glm's, dp_lm's refusals).
.loglik_instead <- paste("Instead: compare terms with confint(fit) or tidy(fit); for a non-private reference, the",
                         "fit at eps = Inf, whose AIC() and step() are R's.")

logLik.dp_glm <- function(object, ...) {
  if (.is_dp_fit(object)) {
    .not_released(object, "logLik() (and AIC(), BIC())", paste(.glm_unreleased("log-likelihood"), .loglik_instead),
                  sys.call())
  }
  structure(as.numeric(object$glance$logLik), nobs = as.integer(object$n), df = sum(!is.na(coef(object))), class = "logLik")
}
