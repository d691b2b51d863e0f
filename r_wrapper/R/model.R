# The rows a non-private regression (eps = Inf) was fitted on, kept as lm keeps them (fit$model), and
# the checks of a wrapper's extra arguments made before any of them is evaluated.

# ---- extra arguments: their names are checked from the call, before anything is evaluated, so that
# dp_lm(..., offset = log(hp)) and the misspelling subst = cyl == 4 are named instead of failing with
# "object 'hp' not found". The names accepted are the Python function's parameters (dpstats.rbridge.
# parameters, asked once per session and method) and lm's subset, weights, na.action and contrasts.

# lm()/glm() arguments dpstats does not take, each with the reason (a misspelling is suggested a name).
.lm_unsupported <- c(
  offset = "write it in the formula, as offset(log(exposure)): dp_lm and dp_glm fit it there at eps = Inf (as lm and glm), vertical_glm without eps too. No private fit offers an offset (it shifts every row's linear predictor, which the private fits' calibration does not cover); do not drop it from a rate model: put log(exposure) in the design with declared bounds, which estimates its coefficient",
  method = "the fitting method is fixed by the privacy mechanism",
  model = "a DP fit keeps no model frame (a non-private fit at eps = Inf keeps it as fit$model already)",
  x = "the design matrix is row-level data: use model.matrix(fit) at eps = Inf, or dp_model_matrix(formula, data)",
  y = "the response is row-level data and is not kept",
  qr = "no QR decomposition of the data is kept",
  singular.ok = "a singular design is refused by the fit itself",
  control = "the fitting controls are fixed by the privacy mechanism",
  start = "starting values are fixed by the privacy mechanism",
  etastart = "starting values are fixed by the privacy mechanism",
  mustart = "starting values are fixed by the privacy mechanism"
)

# prcomp()'s arguments dp_pca does not take, each with what does the same there.
.prcomp_unsupported <- c(
  scale. = paste("write scale() in the formula instead: ~ scale(x1) + scale(x2) reproduces prcomp(scale. = TRUE)",
                 "at eps = Inf; a private fit needs public constants, scale(x1, center = c1, scale = s1)"),
  retx = "the rotated rows are per-row values: predict(fit, newdata) gives them for data you hold",
  tol = "the number of components is k =",
  rank. = "the number of components is k ="
)

.python_parameters <- function(method) {
  cache <- .dp_env$parameters
  if (is.null(cache)) cache <- list()
  if (is.null(cache[[method]])) {
    cache[[method]] <- tryCatch(unlist(.dp_invoke("parameters", list(name = method), target = .dp_ensure_bridge())),
                                error = function(e) character())
    .dp_env$parameters <- cache
  }
  cache[[method]]
}

.check_extra_names <- function(method, nms) {
  nms <- nms[nzchar(nms)]
  if (!length(nms)) return(invisible())
  py <- .python_parameters(method)
  if (!length(py)) return(invisible())  # Python's own check still runs on the call
  known <- unique(c(setdiff(py, "random_state"), "random_state", .lm_arguments))
  bad <- setdiff(nms, known)
  if (!length(bad)) return(invisible())
  nm <- bad[1]
  if (method == "dp_pca" && nm %in% names(.prcomp_unsupported)) {
    .dp_abort(sprintf("dp_pca() does not take %s = (an argument of prcomp()): %s.", nm, .prcomp_unsupported[[nm]]),
              "dpstats_argument_error")
  }
  if (nm %in% names(.lm_unsupported)) {
    .dp_abort(sprintf("%s() does not take %s = (an argument of lm()/glm()): %s.", method, nm, .lm_unsupported[[nm]]),
              "dpstats_argument_error")
  }
  listing <- unique(c(setdiff(py, "random_state"), "seed", .lm_arguments))
  d <- drop(utils::adist(nm, listing))
  close <- listing[d == min(d) & d <= max(1L, nchar(nm) %/% 3L)]
  hint <- if (length(close)) sprintf(" (did you mean '%s'?)", close[1]) else ""
  .dp_abort(sprintf("%s() has no argument '%s'%s. Its arguments: %s.", method, nm, hint, paste(listing, collapse = ", ")),
            "dpstats_argument_error")
}

# ---- the model frame of a non-private fit. It must hold exactly the rows the fit used: R's
# model.frame() drops incomplete rows (na.omit), while the Python fit, under the default
# na_action = "fill" with declared bounds, keeps every row and replaces a missing value by its public
# fill (the midpoint of the variable's bounds, a factor's first level, FALSE; dp_glm: 0.5 for a 0/1
# response, the midpoint of its range). The fills are applied here to the data columns the formula uses; the frame is kept only
# when it has the fit's n rows and reproduces the fit's coefficients. Otherwise fit$model is NULL and
# fit$rows_not_kept says why, so that fitted(), residuals(), deviance(), logLik() and model.matrix()
# refuse with that reason instead of answering from other rows. contrasts = and options(contrasts =)
# are recorded as lm records them (fit$contrasts, model.matrix's "contrasts" attribute).

.keep_model <- function(res, method, args, exclude = FALSE) {
  data <- args$data
  f <- args$formula
  ca <- attr(data, "dpstats_contrasts_arg", exact = TRUE)
  built <- tryCatch({
    mf <- stats::model.frame(f, data, na.action = stats::na.omit)
    n <- res$n
    if (!is.null(n) && length(n) == 1L && !is.na(n) && nrow(mf) != n) {
      na_action <- if (!is.null(args$na_action)) args$na_action
                   else if (identical(args$neighbouring, "add_remove")) "omit" else "fill"
      filled <- if (identical(na_action, "fill")) .public_fills(data, f, args, method)
      mf <- if (!is.null(filled)) stats::model.frame(f, filled, na.action = stats::na.omit)
      if (is.null(mf) || nrow(mf) != n) stop("rows")
    }
    mf <- .drop_formula_levels(mf, data, names(args$levels))
    X <- stats::model.matrix(attr(mf, "terms"), mf, contrasts.arg = ca)
    if (!.reproduces_fit(res, method, mf, X)) stop("coefficients")
    list(model = mf, contrasts = attr(X, "contrasts"))
  }, error = function(e) NULL)
  if (is.null(built)) {
    res$rows_not_kept <- paste(
      "the rows the fit used could not be rebuilt in R (missing values were replaced by public fills under",
      "na_action = \"fill\", or the formula's terms differ in R); refit with na.action = na.omit to fit and",
      "describe the complete rows only")
  } else {
    res$model <- built$model
    res$contrasts <- built$contrasts
    omitted <- attr(built$model, "na.action")  # as lm's fit$na.action: the rows left out, class "omit"
    if (!is.null(omitted) && exclude) class(omitted) <- "exclude"  # na.exclude: residuals() pad with NA
    res$na.action <- omitted
  }
  res
}

# The public fills of dpstats.schema applied to the data columns the formula uses. A variable the formula
# uses only as factor(x, levels = c(4, 6, 8)) is filled by its first declared level unless bounds give it
# a midpoint; Python says which variables those are and their fill (dpstats.rbridge.level_fills_for_r).
.public_fills <- function(data, f, args, method) {
  vars <- intersect(all.vars(stats::terms(f, data = data)), names(data))
  bounds <- args$bounds
  levels <- args$levels
  response <- if (length(f) == 3L && is.name(f[[2L]])) as.character(f[[2L]]) else ""
  inline <- .dp_invoke("level_fills_for_r", list(formula = f), target = .dp_ensure_bridge())
  for (v in vars) {
    x <- data[[v]]
    miss <- is.na(x) | (is.numeric(x) & !is.finite(x))
    if (!any(miss)) next
    pair <- if (is.list(bounds)) bounds[[v]] else if (is.numeric(bounds) && length(bounds) == 2L) bounds
    if (!is.null(inline[[v]]) && is.null(pair)) {  # numeric by declaration, whatever its class in R
      x <- if (is.numeric(x)) x else as.character(x)
      x[miss] <- if (is.numeric(x)) inline[[v]] else as.character(inline[[v]])
    } else if (is.logical(x)) {
      x[miss] <- FALSE
    } else if (is.factor(x) || is.character(x)) {
      lev <- if (!is.null(levels[[v]])) as.character(levels[[v]]) else if (is.factor(x)) levels(x) else sort(unique(x[!miss]))
      x[miss] <- lev[1]
    } else if (method == "dp_glm" && v == response && identical(args$family, "binomial")) {
      x[miss] <- 0.5  # the midpoint of a 0/1 response's range (0, 1) (dpstats.methods.glm.response_fill)
    } else {
      if (is.null(pair)) next  # no public fill: the row is dropped, as in Python
      x[miss] <- mean(as.numeric(pair))
    }
    data[[v]] <- x
  }
  data
}

# At eps = Inf the coefficients are lm's (QR of y less any offset(), as lm.fit) or glm's (IRLS) on the
# rows used: refit them in R.
.reproduces_fit <- function(res, method, mf, X) {
  if (method == "vertical_glm") return(TRUE)  # block coordinate descent: its own methods answer from Python
  cf <- res$coef
  if (is.null(cf) || !all(colnames(X) %in% names(cf))) return(FALSE)
  cf <- cf[colnames(X)]
  y <- stats::model.response(mf)
  refit <- if (method == "dp_lm") {
    qr.coef(qr(X), as.numeric(y) - .offset_of(mf))
  } else {
    fam <- .fit_family(res)
    resp <- .glm_response(y)
    stats::glm.fit(X, resp$y, weights = resp$m, offset = stats::model.offset(mf), family = fam)$coefficients
  }
  isTRUE(all.equal(unname(refit), unname(cf), tolerance = 1e-5))
}

# The design matrix of a kept model frame, coded as the fit coded it.
.model_X <- function(object, mf) {
  stats::model.matrix(attr(mf, "terms"), mf, contrasts.arg = .subset2(object, "contrasts"))
}

# The model frame's offset() terms summed, as lm and glm add them to the linear predictor (0 without one).
.offset_of <- function(mf) {
  off <- stats::model.offset(mf)
  if (is.null(off)) 0 else off
}

# ---- unused factor levels in a non-private fit (eps = Inf): lm() and glm() build their model frame with
# drop.unused.levels = TRUE, after subset = and na.omit, so a level no analysed row holds has no column
# (coef() as long as R's), and a factor that loses one loses its contrasts attribute, with R's warning.
# A private fit keeps every level (its columns are the public schema's), and so do levels given as levels =.
.drop_unused_levels <- function(data, args) {
  nonprivate <- is.null(args$eps) || identical(as.double(unclass(args$eps)), Inf)  # vertical_glm: no eps
  if (!nonprivate || !is.data.frame(data)) return(data)  # levels read from the rows: eps = Inf only
  f <- args$formula
  if (is.character(f)) f <- tryCatch(stats::as.formula(f), error = function(e) NULL)
  vars <- tryCatch(intersect(all.vars(stats::terms(f, data = data)), names(data)), error = function(e) character())
  factors <- setdiff(vars[vapply(data[vars], is.factor, logical(1))], names(args$levels))
  if (!length(factors)) return(data)
  analysed <- if (identical(args$na_action, "fill")) rep(TRUE, nrow(data)) else .complete_rows(data[vars])
  for (v in factors) {
    x <- data[[v]]
    kept <- levels(x)[levels(x) %in% as.character(x[analysed])]
    if (length(kept) == nlevels(x)) next
    if (!is.null(attr(x, "contrasts"))) {
      warning(sprintf("contrasts dropped from factor %s due to missing levels", v), call. = FALSE)
    }
    data[[v]] <- factor(x, levels = kept)
  }
  data
}

# lm's frame drops the levels no analysed row holds (drop.unused.levels = TRUE) of the factors the formula
# makes too (factor(x, levels = c(...)), cut(), C()), as the Python fit at eps = Inf does (dpstats.formula.
# model_frame's drop_unused_levels); a data column's factor is .drop_unused_levels's, and a variable of a
# column whose levels levels = declares keeps them. x[, drop = TRUE] is model.frame's own step, taken as
# there only where a level is unused: it drops the contrasts C() set (Python has warned it), which a factor
# with every level used keeps (C(f, sum)).
.drop_formula_levels <- function(mf, data, declared) {
  for (j in setdiff(seq_along(mf), attr(attr(mf, "terms"), "response"))) {
    nm <- names(mf)[j]
    x <- mf[[j]]
    if (!is.factor(x) || nm %in% names(data) || length(unique(x[!is.na(x)])) == nlevels(x)) next
    if (any(tryCatch(all.vars(str2lang(nm)), error = function(e) nm) %in% declared)) next
    mf[[j]] <- x[, drop = TRUE]
  }
  mf
}

# Rows with every column present and finite (na_action = "omit", as the Python fit drops them; newdata's
# rows that predict() can code, .complete_newdata).
.complete_rows <- function(frame) {
  ok <- lapply(frame, function(x) !is.na(x) & (!is.numeric(x) | is.finite(x)))
  Reduce(`&`, ok, rep(TRUE, nrow(frame)))
}
