# lm's and glm's list components read with $ (fit$coefficients, fit$residuals, fit$df.residual, ...), which
# a dp_lm or dp_glm result does not hold: it holds Python's fields (fit$coef, fit$outputs, fit$terms: the
# design's column names). `$` and `[[` answer a name the result holds as a list does; a component of lm or
# glm it does not hold is given as the fit's generic gives it (coef(fit), residuals(fit), ...), which at
# eps = Inf is R's value, and for a DP fit is either released (coef, df.residual, rank, family) or refused
# with the reason, naming that generic: never the silent NULL a list would give (?dp_refusals, audit
# s16-rusers3 F05). Any other name answers as for a list; names(), str() and positions are untouched.
# The package's own code reads absent fields with .subset2(), so that nothing here answers for it.

# name = list(of = the classes that have it (lm's, glm's), via = the generic it is, value = function(fit, what)).
.components <- list(
  coefficients = list(of = c("lm", "glm"), via = "coef(fit)", value = function(x, what) coef(x)),
  residuals = list(of = c("lm", "glm"), via = "residuals(fit)", value = function(x, what) {
    if (inherits(x, "dp_glm")) .glm_residuals(x, "working", what, NULL) else .lm_residuals(x, what, NULL)
  }),
  fitted.values = list(of = c("lm", "glm"), via = "fitted(fit)", value = function(x, what) {
    if (inherits(x, "dp_glm")) .glm_rows(x, what, NULL)$mu else .lm_fitted(x, what, NULL)
  }),
  linear.predictors = list(of = "glm", via = "predict(fit)", value = function(x, what) .glm_rows(x, what, NULL)$eta),
  y = list(of = "glm", via = "model.response(model.frame(fit))",
           value = function(x, what) with(.glm_rows(x, what, NULL), stats::setNames(y, names(eta)))),
  prior.weights = list(of = "glm", via = "weights(glm(...))",
                       value = function(x, what) with(.glm_rows(x, what, NULL), stats::setNames(m, names(eta)))),
  rank = list(of = c("lm", "glm"), via = "length(coef(fit))", value = function(x, what) sum(!is.na(coef(x)))),
  df.residual = list(of = c("lm", "glm"), via = "df.residual(fit)", value = function(x, what) df.residual(x)),
  df.null = list(of = "glm", via = "glance(fit)$df.null", value = function(x, what) as.integer(x$glance$df.null)),
  family = list(of = "glm", via = "family(fit)", value = function(x, what) family(x)),
  deviance = list(of = "glm", via = "deviance(fit)", value = function(x, what) deviance(x)),
  aic = list(of = "glm", via = "AIC(fit)", value = function(x, what) stats::AIC(x)),
  null.deviance = list(of = "glm", via = "glance(fit)$null.deviance", value = function(x, what) {
    if (.is_dp_fit(x)) .not_released(x, what, .glm_unreleased("null deviance"), NULL)
    as.numeric(x$glance$null.deviance)
  }),
  iter = list(of = "glm", via = "summary(fit)", value = function(x, what) as.integer(x$outputs$iterations)),
  model = list(of = c("lm", "glm"), via = "model.frame(fit)", value = function(x, what) .rows_of(x, what)),
  na.action = list(of = c("lm", "glm"), via = "na.action(fit)", value = function(x, what) {
    if (.is_dp_fit(x)) .not_released(x, what, "which rows were left out is row-level data, which a DP fit does not release.", NULL)
    attr(.lm_model(x, what, NULL), "na.action")  # NULL where no row was left out, as lm's
  }),
  offset = list(of = c("lm", "glm"), via = "model.offset(model.frame(fit))", value = function(x, what) {
    if (.is_dp_fit(x)) return(NULL)  # a private fit refuses offset(): it has none, as lm without one
    stats::model.offset(.lm_model(x, what, NULL))
  }),
  contrasts = list(of = c("lm", "glm"), via = "attr(model.matrix(fit), \"contrasts\")",
                   value = function(x, what) attr(.model_X(x, .rows_of(x, what)), "contrasts")),
  xlevels = list(of = c("lm", "glm"), via = "the factors' levels", value = function(x, what) {
    if (.is_dp_fit(x)) {
      .not_released(x, what, paste("a DP fit keeps no model frame to read them from: its factors have their declared",
                                   "levels (levels = or the data frame's), and fit$terms lists the design's columns."), NULL)
    }
    mf <- .lm_model(x, what, NULL)
    stats::.getXlevels(attr(mf, "terms"), mf)
  }),
  assign = list(of = "lm", via = "attr(model.matrix(fit), \"assign\")",
                value = function(x, what) attr(.model_X(x, .rows_of(x, what)), "assign")),
  qr = list(of = c("lm", "glm"), via = "qr(model.matrix(fit))", value = function(x, what) .fit_qr(x, what)),
  effects = list(of = "lm", via = "effects(lm(formula(fit), data))", value = function(x, what) {
    mf <- .rows_of(x, what)
    q <- .fit_qr(x, what)
    eff <- qr.qty(q, stats::model.response(mf) - .offset_of(mf))
    stats::setNames(eff, c(colnames(q$qr)[q$pivot[seq_len(q$rank)]], rep.int("", length(eff) - q$rank)))
  })
)

# lm.fit's QR of the design (LINPACK, tolerance 1e-7); glm.fit's of the design weighted by the square roots
# of the working weights at the fit's coefficients.
.fit_qr <- function(x, what) {
  X <- .model_X(x, .rows_of(x, what))
  if (inherits(x, "dp_glm")) {
    r <- .glm_rows(x, what, NULL)
    X <- X * sqrt(r$m * r$family$mu.eta(r$eta)^2 / r$family$variance(r$mu))
  }
  q <- qr(X, tol = 1e-7)
  structure(c(unclass(q)[c("qr", "qraux", "pivot")], list(tol = 1e-7, rank = q$rank)), class = "qr")
}

.component <- function(x, name, kind, exact = TRUE) {
  value <- .subset2(x, name)
  row <- .components[[name]]
  if (!is.null(value) || is.null(row) || !kind %in% row$of) return(if (is.null(value)) .subset2(x, name, exact = exact) else value)
  what <- sprintf("fit$%s (%s's component: %s here)", name, kind, row$via)
  tryCatch(row$value(x, what), dpstats_error = function(e) {
    if (!startsWith(conditionMessage(e), what)) e$message <- paste0(what, ": ", conditionMessage(e))
    e$call <- NULL  # the user read fit$name: no call of a helper is shown
    stop(e)
  })
}

# The kept rows of a non-private fit; a DP fit keeps none (the model frame and the design are row-level data).
.rows_of <- function(x, what) {
  if (.is_dp_fit(x)) .not_released(x, what, .row_level, NULL)
  .lm_model(x, what, NULL)
}

`$.dp_lm` <- function(x, name) .component(x, name, "lm", exact = FALSE)
`$.dp_glm` <- function(x, name) .component(x, name, "glm", exact = FALSE)

`[[.dp_lm` <- function(x, i, ...) {
  if (is.character(i) && length(i) == 1L && !is.na(i) && !length(list(...))) return(.component(x, i, "lm"))
  NextMethod()
}

`[[.dp_glm` <- function(x, i, ...) {
  if (is.character(i) && length(i) == 1L && !is.na(i) && !length(list(...))) return(.component(x, i, "glm"))
  NextMethod()
}

# summary.lm's and summary.glm's components a summary of a DP fit does not release (its residuals, the
# unscaled covariance of the exact fit) are refused by name, with the reason, rather than NULL.
`$.summary.dp_result` <- function(x, name) .summary_component(x, name, exact = FALSE)

`[[.summary.dp_result` <- function(x, i, ...) {
  if (is.character(i) && length(i) == 1L && !is.na(i) && !length(list(...))) return(.summary_component(x, i))
  NextMethod()
}

.summary_component <- function(x, name, exact = TRUE) {
  withheld <- attr(x, "dpstats_withheld", exact = TRUE)
  if (is.null(.subset2(x, name)) && name %in% names(withheld)) {
    .dp_abort(sprintf("summary(fit)$%s is not available: %s", name, withheld[[name]]), "dpstats_not_released_error",
              NULL)
  }
  .subset2(x, name, exact = exact)
}
