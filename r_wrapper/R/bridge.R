# Crossing to Python and back (over the channel of R/channel.R): data frames as a "transport"
# (plain vectors and raw bytes, see dpstats/rbridge.py), results as JSON from to_dict(), errors and
# warnings as classed R conditions.

# A Date, POSIXct or difftime column crosses as its number, as model.matrix (so lm) reads it:
# as.double() gives days since 1970-01-01, seconds since the epoch (UTC, whatever the zone) and the
# difftime's number in its own units (.as_doubles).
.column_kind <- function(x, name) {
  if (is.ordered(x)) "ordered"
  else if (is.factor(x)) "factor"
  else if (is.logical(x)) "logical"
  else if (is.integer(x)) "integer"
  else if (is.numeric(x) && is.null(oldClass(x))) "double"
  else if (inherits(x, c("Date", "POSIXct", "difftime"))) "double"
  else if (is.character(x)) "character"
  else NA_character_
}

# Columns as one attachment of little-endian doubles, written to the channel column by column
# (channel.R's .dp_send): no copy of the whole block is made in R.
.as_doubles <- function(cols) structure(lapply(unname(cols), as.double), class = "dp_doubles")

# A matrix as data: its columns become the data frame's (V1, V2, ... when it has no column names).
.matrix_frame <- function(m) {
  if (is.null(colnames(m))) colnames(m) <- paste0("V", seq_len(ncol(m)))
  as.data.frame(m, stringsAsFactors = FALSE, optional = TRUE)
}

# A column of another class (a list, a complex number...) that `formula` does not use (.formula_uses) is
# left out, or sent as its missingness alone when the formula names it in a removed term
# (.with_stand_ins); one it uses, or any when there is no formula, is an error saying how to convert it.
.dp_encode_frame <- function(df, arg = "data", formula = NULL) {
  if (is.matrix(df)) df <- .matrix_frame(df)
  if (!is.data.frame(df)) {
    .dp_abort(sprintf("%s must be a data.frame (or a numeric matrix), got an object of class '%s'.", arg,
                      class(df)[1]), "dpstats_data_error")
  }
  if (!is.null(formula)) df <- .with_stand_ins(df, formula)
  nm <- names(df)
  kinds <- vapply(seq_along(df), function(j) .column_kind(df[[j]], nm[j]), character(1))
  odd <- which(is.na(kinds))
  if (length(odd)) {
    used <- is.null(formula) || nm[odd] %in% .formula_uses(formula, df, nm[odd])
    if (any(used)) {
      j <- odd[used][1]
      .dp_abort(sprintf(paste("column '%s' of %s has class '%s', which dpstats cannot use as it stands;",
                              "convert it, e.g. %s$%s <- as.numeric(%s$%s), or leave it out of the formula",
                              "(with `.`: ~ . - %s)."),
                        nm[j], arg, class(df[[j]])[1], arg, nm[j], arg, nm[j], nm[j]), c("dpstats_data_error"))
    }
    df <- df[-odd]
    nm <- names(df)
    kinds <- kinds[-odd]
  }
  num <- kinds %in% c("double", "integer")
  contr <- .frame_contrasts(df)
  coded <- lapply(which(!num), function(j) {
    x <- df[[j]]
    if (is.logical(x)) return(list(codes = as.double(x), levels = list()))
    f <- if (is.factor(x)) x else factor(x)
    list(codes = as.double(as.integer(f)), levels = as.list(levels(f)))
  })
  list(names = as.list(nm), n = nrow(df), kinds = as.list(kinds),
       numeric = .as_doubles(df[num]),
       codes = .as_doubles(lapply(coded, `[[`, "codes")),
       levels = lapply(coded, `[[`, "levels"), contrasts = contr$columns, default_contrasts = contr$default)
}

# Which of the columns `odd` of df the formula uses, as R's terms(formula, data = df) has them: `.`
# expanded over df's columns, a term removed by `-` not counted; the response and offsets count. The
# expansion is made on the names only, the columns neither named nor odd standing in `.` as one
# placeholder (a wide y ~ . stays small). all.vars() when terms() cannot read the formula.
.formula_uses <- function(formula, df, odd) {
  vars <- all.vars(formula)
  if (!any(odd %in% vars) && !"." %in% vars) return(character())
  keep <- union(intersect(vars, names(df)), odd)
  names_only <- df[0L, keep, drop = FALSE]
  if (length(keep) < ncol(df)) names_only[[".dp_other_columns."]] <- numeric(0)
  tt <- tryCatch(stats::terms(formula, data = names_only), error = function(e) NULL)
  if (is.null(tt)) return(vars)
  fac <- attr(tt, "factors")
  rows <- c(attr(tt, "response"), attr(tt, "offset"), if (length(fac)) which(rowSums(fac != 0) > 0))
  intersect(odd, unlist(lapply(as.list(attr(tt, "variables"))[-1][rows[rows > 0]], all.vars)))
}

# The columns of df that .dp_encode_frame leaves out: of a class dpstats cannot send, not used by the
# formula, and not sent by .with_stand_ins.
.unsent_columns <- function(df, formula) {
  unused <- .unused_odd_columns(df, formula)
  setdiff(unused, .stand_in_columns(df[unused], formula))
}

.unused_odd_columns <- function(df, formula) {
  odd <- names(df)[vapply(df, function(x) is.na(.column_kind(x, "")), logical(1))]
  if (!length(odd)) return(character())
  setdiff(odd, .formula_uses(formula, df, odd))
}

# A column of such a class that the formula names only in removed terms (y ~ . - d) is in R's model frame
# all the same (attr(terms(f, data), "variables") keeps d), so na.omit drops a row missing it. It is sent
# as its missingness alone: 0, NA where missing (is.na of each entry), which no term reads;
# Python then keeps the '- d' and applies the rule of any removed variable (dpstats.formula.
# removed_variables). A column is.na cannot read element by element (a list) is left out.
.with_stand_ins <- function(df, formula) {
  for (nm in .stand_in_columns(df[.unused_odd_columns(df, formula)], formula)) {
    df[[nm]] <- ifelse(is.na(df[[nm]]), NA_real_, 0)
  }
  df
}

.stand_in_columns <- function(unused, formula) {
  named <- intersect(names(unused), all.vars(formula))
  named[vapply(unused[named], function(x) is.atomic(x) && is.null(dim(x)), logical(1))]
}

# The formula Python receives when columns of df that it names only in removed terms (`- d`) are not
# sent (.dp_encode_frame): those `- term` parts dropped, as no term of the expansion holds them.
.without_unsent <- function(formula, df) {
  gone <- intersect(.unsent_columns(df, formula), all.vars(formula))
  if (!length(gone)) return(formula)
  drop <- function(e) {
    if (!is.call(e)) return(e)
    if (identical(e[[1L]], as.name("-")) && length(e) == 3L && any(all.vars(e[[3L]]) %in% gone)) return(drop(e[[2L]]))
    for (i in seq_along(e)[-1L]) e[[i]] <- drop(e[[i]])
    e
  }
  formula[[length(formula)]] <- drop(formula[[length(formula)]])
  formula
}

# How R's model.matrix would code the factors of df: each factor's contrasts attribute
# (contrasts(f) <- ...; a base contrast by name, anything else as the matrix R computes from it),
# lm-style contrasts = list(...) carried by .lm_style, and the session's options(contrasts =).
# A fit keeps what it sent (attribute "dpstats_contrasts"), so that predict() codes newdata alike.
.frame_contrasts <- function(df) {
  kept <- attr(df, "dpstats_contrasts", exact = TRUE)
  if (!is.null(kept)) return(kept)
  out <- list()
  for (nm in names(df)) {
    x <- df[[nm]]
    cm <- attr(x, "contrasts", exact = TRUE)
    if (is.factor(x) && !is.null(cm)) out[[nm]] <- .contrast_value(x, cm, nm)
  }
  arg <- attr(df, "dpstats_contrasts_arg", exact = TRUE)
  for (nm in names(arg)) {
    ca <- arg[[nm]]
    if (nm %in% names(df)) {  # R's own contrasts<- on the column, as model.matrix applies contrasts.arg
      x <- df[[nm]]
      if (is.character(x) || is.logical(x)) x <- factor(x)
      if (!is.factor(x)) {
        .dp_abort(sprintf("contrasts = names '%s', which is numeric: contrasts apply only to factors (as in R). Use factor(%s) in the formula and name its contrasts 'factor(%s)'.",
                          nm, nm, nm), "dpstats_formula_error")
      }
      if (is.matrix(ca)) contrasts(x, ncol(ca)) <- ca else contrasts(x) <- ca
      out[[nm]] <- .contrast_value(x, attr(x, "contrasts"), nm)
    } else if (is.character(ca) && length(ca) == 1L) {
      out[[nm]] <- ca
    } else if (is.matrix(ca)) {
      out[[nm]] <- .contrast_value(NULL, ca)
    } else {
      .dp_abort(sprintf(paste("contrasts = list(`%s` = ...): give a contrast's name (\"contr.sum\") or a matrix for",
                              "a term of the formula that is not a column of data (R's lm would apply a function",
                              "to the column itself)."), nm), "dpstats_formula_error")
    }
  }
  list(columns = out, default = unname(as.list(as.character(getOption("contrasts")))))
}

.base_contrasts <- c("contr.treatment", "contr.sum", "contr.helmert", "contr.poly", "contr.SAS")

.contrast_value <- function(x, cm, name = "a factor") {
  if (is.character(cm) && length(cm) == 1L && cm %in% .base_contrasts) return(cm)
  m <- if (!is.character(cm)) as.matrix(cm) else tryCatch(stats::contrasts(x), error = function(e) {  # its matrix
    .dp_abort(sprintf(paste("the contrasts of '%s' name the function %s, which R cannot call here (%s); define it,",
                            "or store its matrix: contrasts(data$%s) <- %s(levels(data$%s))."),
                      name, cm, conditionMessage(e), name, cm, name), "dpstats_formula_error")
  })
  storage.mode(m) <- "double"
  list(values = as.double(m), dim = as.list(dim(m)), colnames = if (!is.null(colnames(m))) as.list(colnames(m)),
       rownames = if (!is.null(rownames(m))) as.list(rownames(m)))
}

.is_frame_list <- function(x) {
  is.list(x) && !is.data.frame(x) && length(x) > 0 && all(vapply(x, is.data.frame, logical(1)))
}

# Convert one R argument into what Python should receive.
.py_value <- function(x) {
  if (inherits(x, "formula")) return(paste(deparse(x, width.cutoff = 500L), collapse = " "))
  if (inherits(x, "dp_accountant")) return(x$py)
  if (is.factor(x)) return(as.character(x))
  # bounds = list(day = as.Date(c("2020-01-01", "2020-12-31"))): in the units the column crosses in
  if (inherits(x, c("Date", "POSIXct", "difftime"))) return(as.double(x))
  if (is.list(x) && !is.null(names(x))) return(lapply(x, .py_value))  # bounds = list(y = c(0, 10))
  if (is.matrix(x)) return(lapply(seq_len(nrow(x)), function(i) as.vector(x[i, ])))  # rows as lists
  x
}

.frame_args <- c("data", "newdata")

# The data argument as the user can read it in advice (df$g <- factor(df$g, levels = c(...))): its
# expression when that is a name or a short expression of names and single constants (df,
# subset(df, x > 0), d[[1]]), otherwise NULL. A data frame passed as a value (do.call(dp_lm,
# list(y ~ x, data = df)), purrr::map, Map) is the call's argument itself: its deparse is every value
# of the data, which no message or printed call may carry.
.data_label <- function(expr) {
  plain <- function(e) is.name(e) || (is.atomic(e) && length(e) <= 1L) ||
    (is.call(e) && all(vapply(as.list(e), plain, logical(1))))
  if (!is.name(expr) && !is.call(expr)) return(NULL)
  if (!plain(expr)) return(NULL)
  # Map/mapply's own dots[[2L]][[1L]], which names nothing the user can write
  if (is.call(expr) && identical(all.names(expr)[1:3], c("[[", "[[", "dots"))) return(NULL)
  txt <- paste(deparse(expr, width.cutoff = 500L), collapse = " ")
  if (nchar(txt) > 60L) NULL else txt
}

# The arguments that carry the user's data (or values computed from it: dp_bh's p-values).
.data_args <- c(data = "<data frame>", newdata = "<data frame>", p_values = "<p-values>")

# The name of one of dpstats' R functions (dp_lm), or NULL.
.dpstats_name <- function(f) {
  if (!is.function(f)) return(NULL)
  ns <- asNamespace("dpstats")
  for (nm in getNamespaceExports(ns)) {
    if (exists(nm, envir = ns, inherits = FALSE) && identical(get(nm, envir = ns), f)) return(nm)
  }
  NULL
}

# The call as kept in fit$call, printed under "Call:" and given to a warning or error: an argument
# that carries data as a value rather than as an expression (do.call, purrr, Map) is replaced by a
# placeholder symbol (`<data frame>`), and a function passed as a value by its name (dp_lm). lm would
# keep and print the whole structure(list(...)); dpstats' printed output, summaries and conditions are
# meant to be shared (a report, an issue, a log), and a private fit's output must carry nothing
# computed from the data rows. update() on such a fit needs the data passed again (data = df).
.shareable_call <- function(call, name = NULL) {
  if (!is.call(call)) return(call)
  if (is.function(call[[1]])) {
    nm <- if (!is.null(name)) name else .dpstats_name(call[[1]])
    if (!is.null(nm)) call[[1]] <- as.name(nm)
  }
  nms <- names(call)
  for (i in seq_along(call)[-1]) {
    a <- call[[i]]
    role <- if (!is.null(nms) && nms[i] %in% names(.data_args)) nms[i] else ""
    frame <- is.data.frame(a) || is.matrix(a) || .is_frame_list(a)
    if ((nzchar(role) || frame) && is.null(.data_label(a))) {
      call[[i]] <- as.name(if (nzchar(role)) .data_args[[role]] else "<data frame>")
    }
  }
  call
}

# Call dpstats.<name>(...) (or a method of `target`) with R values.
.dp_invoke <- function(name, args, target = NULL, call = NULL) {
  .dp_ensure()
  nms <- names(args)
  if (is.null(nms)) nms <- rep("", length(args))
  positional <- list()
  kwargs <- list()
  frames <- list()
  at <- which(vapply(args, inherits, logical(1), "formula"))[1]
  formula <- if (!is.na(at)) args[[at]]
  data <- Filter(is.data.frame, args)
  if (!is.null(formula) && length(data)) args[[at]] <- .without_unsent(formula, data[[1]])
  data_expr <- if (is.call(call) && !is.null(call$data)) .data_label(call$data) else "df"
  if (is.null(data_expr)) data_expr <- "data"  # passed as a value: never its deparse (.data_label)
  call <- .shareable_call(call)
  for (i in seq_along(args)) {
    x <- args[[i]]
    if (is.null(x) && nzchar(nms[i])) next
    if (is.matrix(x) && nms[i] %in% .frame_args) x <- .matrix_frame(x)
    if (is.function(x)) {  # dp_plan(dp_lm, ...): one of dpstats' functions stands for its name
      fn <- .dpstats_name(x)
      if (is.null(fn)) {
        .dp_abort(sprintf(paste("%s is a function, which cannot be sent to Python; pass a dpstats method by",
                                "its name, e.g. %s\"dp_lm\"."),
                          if (nzchar(nms[i])) nms[i] else "an argument", if (nzchar(nms[i])) paste(nms[i], "= ") else ""),
                  "dpstats_argument_error", call)
      }
      x <- fn
    }
    if (is.data.frame(x) || .is_frame_list(x)) {
      if (!nzchar(nms[i])) .dp_abort("data frames must be passed by name (data = df).", "dpstats_data_error", call)
      arg <- if (nms[i] == "data") data_expr else nms[i]
      frames[[nms[i]]] <- if (is.data.frame(x)) .dp_encode_frame(x, arg, formula)
                          else unname(lapply(x, .dp_encode_frame, arg = arg, formula = formula))
    } else if (nms[i] == "bounds" && is.list(x) && length(x) == 0L) {
      kwargs["bounds"] <- list(stats::setNames(list(), character(0)))  # list(): no bounds declared, a dict
    } else if (nms[i] == "levels" && is.list(x)) {
      kwargs[["levels"]] <- lapply(x, function(v) as.list(if (is.factor(v)) as.character(v) else v))
    } else if (nzchar(nms[i])) {
      kwargs[nms[i]] <- list(.py_value(x))
    } else {
      positional[[length(positional) + 1]] <- .py_value(x)
    }
  }
  res <- .dp_env$bridge$call_from_r(name, positional, kwargs, frames, target)
  .dp_signal(res, call, data_expr, args)
  .dp_convert(res$json, res$object)
}

# `args`: the R values of the call's arguments, by name, so that a message naming one of them says
# what it is in R's terms (a character vector, a factor) where Python can only say "list".
.dp_signal <- function(res, call, data_expr = "df", args = list()) {
  if (is.null(call)) call <- .user_call()
  for (w in res$warnings) {
    warning(warningCondition(.r_words(w[[2]], data_expr, args), class = unique(c(w[[1]], "dpstats_warning")),
                             call = call))
  }
  if (!isTRUE(res$ok)) {
    stop(errorCondition(.r_words(res$error_message, data_expr, args), class = unlist(res$error_classes),
                        call = call))
  }
}

# What an argument is, in R's terms (for "got ..." in a message): its class and length, never
# its values (an argument is the caller's, but the words stay the same for any value).
.r_type <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.factor(x)) return("a factor")
  if (is.data.frame(x)) return("a data frame")
  if (is.function(x)) return("a function")
  if (is.matrix(x)) return(sprintf("a %s matrix", typeof(x)))
  if (is.list(x)) return(if (!is.null(names(x)) && all(nzchar(names(x)))) "a named list" else "an unnamed list")
  one <- length(x) == 1L
  if (is.character(x)) return(if (one) "a character string" else "a character vector")
  if (is.logical(x)) return(if (one) "a logical value" else "a logical vector")
  if (is.numeric(x)) return(if (one) "a number" else "a numeric vector")
  sprintf("an object of class '%s'", class(x)[1])
}

# Python's type names, where the argument is not known: what an R value of that Python type was.
.py_types <- c(list = "a vector or an unnamed list", str = "a character string", float = "a number",
               int = "a whole number", bool = "a logical value", dict = "a named list", tuple = "a vector",
               NoneType = "NULL")

# References to dpstats' Python modules and to their internal equation codes, which point Python users
# to a derivation and which an R user cannot look up, left out of R's text (errors and warnings here,
# printed results in .r_text): "(dpstats.methods.glm, (G1))", "of dpstats.methods.glm (G5)",
# "(methods.glm (G4))", "(dpstats.privacy.topk.exact_recovery_bound)", "; see dpstats.methods.lm (...)"
# (its parenthesis kept), "(dpstats.simulate.sis_trials; ...)" (the rest kept), ": dpstats.compose)".
.drop_py_refs <- function(x) {
  r <- function(pattern, replacement, x) gsub(pattern, replacement, x, perl = TRUE)
  ref <- "\\bdpstats(?:\\.[A-Za-z_]+)+"
  tag <- "\\([A-Z][0-9]+\\)"
  x <- r(sprintf(" *\\((?:see |module )?%s,? *(?:%s)?\\)", ref, tag), "", x)
  x <- r(sprintf("(?:[;,]| of| in)? *(?:see |module )?%s,? *%s(?=\\))", ref, tag), "", x)
  x <- r(sprintf(" *\\((?:see )?(?:module )?methods\\.[a-z_.]+,? *%s\\)", tag), "", x)
  x <- r(sprintf("; see %s (?=\\()", ref), " ", x)
  x <- r(sprintf("\\(%s; ", ref), "(", x)
  x <- r(sprintf(": %s(?=\\))", ref), "", x)
  x <- r(sprintf("[;,] *%s(?=\\))", ref), "", x)  # "(... log(1/delta)/eps; dpstats.methods.gmm.accuracy)"
  x
}

# Python's wording in R's: a small, tested set of rewrites (test-r-words.R) of Python literals and
# advice. df['x'].astype(float) -> as.numeric(<data>$x); True/False/None/inf/nan -> TRUE/FALSE/NULL/
# Inf/NaN; 2.0 -> 2; lists, tuples and dicts of values -> c(...) and list(x = ...); name=value ->
# name = value; x['a'] -> x$a; (lo, hi) -> c(lo, hi); intervals [a, b) in words; 0-based indices
# 1-based; random_state -> seed; "got list" -> what the R argument is (.r_type); pandas types and
# Python-only advice -> R's (a factor, levels =); references to dpstats' Python modules and their
# internal equation codes ((G5)), which an R user cannot look up, are left out.
.r_words <- function(msg, data_expr = "df", args = list()) {
  r <- function(pattern, replacement, x) gsub(pattern, replacement, x, perl = TRUE)
  fixed <- function(from, to, x) gsub(from, to, x, fixed = TRUE)
  # a factor is read by its labels (schema.as_numbers): R's as.numeric(as.character(f))
  conv <- if (grepl(" is category ", msg, fixed = TRUE)) "as.numeric(as.character(" else "as.numeric("
  close <- if (conv == "as.numeric(") ")" else "))"
  msg <- r("df\\[['\"]([^'\"]+)['\"]\\]\\.astype\\(float\\)", paste0(conv, data_expr, "$\\1", close), msg)
  msg <- r(" is (?:str|string|object) ", " is character ", msg)
  msg <- fixed(" is category ", " is a factor ", msg)
  msg <- fixed(" is bool ", " is logical ", msg)
  # a declared boolean: an R logical is one (it crosses as pandas' nullable boolean, NA or not)
  msg <- r("a logical response: levels=\\{'[^']+': \\[False, True\\]\\} or the pandas nullable 'boolean' dtype",
           "a logical response: a logical vector", msg)
  # Python-only advice, and references R users cannot follow
  # an assignment into the data needs a name: data = an expression (transform(...), d[rows, ]) gets df
  named <- grepl("^([A-Za-z.][A-Za-z0-9._]*|`[^`]+`)$", data_expr)
  target <- if (named) data_expr else "df"
  where <- if (named) "" else " (df: the data frame given as data, assigned to a name first)"
  msg <- r("(levels=\\{'([A-Za-z.][A-Za-z0-9_.]*)': \\[\\.\\.\\.\\]\\}), or give the column an? pandas\\.CategoricalDtype with fixed categories",
           sprintf("\\1, or make it a factor with fixed levels: %s$\\2 <- factor(%s$\\2, levels = c(...))%s",
                   target, target, where), msg)
  msg <- r("give the column an? pandas\\.CategoricalDtype with fixed categories",
           "make the column a factor with fixed levels, factor(x, levels = c(...))", msg)
  msg <- r("pandas\\.CategoricalDtype", "factor", msg)
  # assume: the models are Python classes an R user cannot build; from R it is a named list of a model's fields
  msg <- fixed("must be a dpstats.simulate.Assume, a dict of its fields or 'released';",
               "must be a named list of the model's fields, e.g. list(signals = 2, strength = 0.5), or \"released\";", msg)
  msg <- fixed("must be a dpstats.simulate.Assume, a dict of its fields;",
               "must be a named list of the model's fields, e.g. list(signals = 2, strength = 0.5);", msg)
  msg <- r("\\bmust be (?:an? (?:dpstats\\.[a-z]+\\.)?(?:Assume|FanLv|GLMModel|FelpModel|KnockoffModel|MixtureModel),? (?:or )?)+a dict(?: of its fields)?",
           "must be a named list of the model's fields (listed under assume in ?dp_plan)", msg)
  msg <- fixed("pass dpstats.simulate.Assume(", "pass a named list such as list(", msg)
  msg <- fixed("assume for selection must", "assume for dp_sis and dp_two_stage must", msg)
  msg <- fixed("leave Assume's noise at 1 or pass a dpstats.planner.GLMModel.", "leave noise out of assume (or at 1).", msg)
  msg <- fixed("dpstats.simulate.sis_trials(n, d, k, eps, assume, rng)",
               "dp_plan(\"dp_sis\", n = <a public n>, p = <the number of columns>, eps = eps, k = k, assume = assume)", msg)
  # dp_bh's strict refusal of the default eta points Python users to a Python helper; R derives
  # eta through the formula route
  msg <- fixed("declare it, e.g. eta=dpstats.eta_two_sided_z(delta_z, truncate) for z-tests on bounded data.",
               paste("declare it, e.g. eta = 0.01 (a public bound), or, for z-tests on bounded data, pass a formula",
                     "with its data, bounds and sigma, dp_bh(y ~ ., data = df, bounds = ..., sigma = ...), from which",
                     "eta is derived."), msg)
  # the planner's measures by their names in words ("predicted rel_error is more than 2 SE worse than chance")
  msg <- .measure_words(msg)
  msg <- .drop_py_refs(msg)
  msg <- r("\\ba dpstats Accountant\\b", "a dp_accountant()", msg)
  msg <- r("^Accountant composition\\b", "composition", msg)
  msg <- r("; for PLD accounting declare the session in advance with dp\\.SessionPlan", "", msg)
  msg <- fixed("a list of column-name lists, e.g. [['x1', 'x2'], ['x3']]",
               "a named list of character vectors, e.g. list(a = c(\"x1\", \"x2\"), b = \"x3\")", msg)
  msg <- fixed("a list of column-name lists or a dict name -> columns",
               "a named list of character vectors, e.g. list(a = c(\"x1\", \"x2\"), b = \"x3\")", msg)
  # "levels must be ..., got list": what the R argument the message names is
  m <- regmatches(msg, regexec("^([A-Za-z_][A-Za-z0-9_.]*)\\b.*\\b(?:got|not) (?:an? )?(list|str|float|int|bool|dict|tuple|NoneType)(?=[.;,)]|$)",
                               msg, perl = TRUE))[[1]]
  if (length(m)) {
    what <- if (m[2] %in% names(args)) .r_type(args[[m[2]]]) else .py_types[[m[3]]]
    msg <- sub(sprintf("\\b(got|not) (?:an? )?%s(?=[.;,)]|$)", m[3]), paste("\\1", what), msg, perl = TRUE)
  }
  msg <- r("\\b(got|not) (?:an? )?NoneType\\b", "\\1 NULL", msg)
  msg <- r("(?<![\\w.])(-?[0-9]+)\\.0\\b(?![0-9]|\\.[0-9])", "\\1", msg)
  msg <- r("\\bTrue\\b", "TRUE", msg)
  msg <- r("\\bFalse\\b", "FALSE", msg)
  msg <- r("\\bNone\\b", "NULL", msg)
  msg <- r("(?<![\\w.])inf\\b", "Inf", msg)
  msg <- r("(?<![\\w.])nan\\b", "NaN", msg)
  num <- "-?(?:[0-9][0-9.]*(?:e[-+]?[0-9]+)?|Inf)"
  # intervals: be in [a, b] / [a, b) / (a, b]
  msg <- r(sprintf("\\b(be|lie|lies) in \\[(%s), (%s)\\]", num, num), "\\1 between \\2 and \\3", msg)
  msg <- r(sprintf("\\b(be|lie|lies) in \\[(%s), (%s)\\)", num, num), "\\1 >= \\2 and < \\3", msg)
  msg <- r(sprintf("\\b(be|lie|lies) in \\((%s), (%s)\\]", num, num), "\\1 > \\2 and <= \\3", msg)
  # an element of a named argument: levels['city'] -> levels$city
  msg <- r("\\b([A-Za-z_][A-Za-z0-9_.]*)\\[['\"]([A-Za-z.][A-Za-z0-9_.]*)['\"]\\]", "\\1$\\2", msg)
  msg <- r("\\b([A-Za-z_][A-Za-z0-9_.]*)\\[['\"]([^'\"]+)['\"]\\]", "\\1[[\"\\2\"]]", msg)
  # values: dicts (their keys inside the braces only), then lists and (after "got") tuples
  braces <- gregexpr("\\{[^{}]*\\}", msg, perl = TRUE)
  regmatches(msg, braces) <- lapply(regmatches(msg, braces), function(s) {
    s <- r("(['\"])([A-Za-z.][A-Za-z0-9_.]*)\\1: ", "\\2 = ", s)
    r("'([^'`]+)': ", "`\\1` = ", s)  # a name R must quote, 'poly(wt, 2)1', in backticks
  })
  msg <- r("\\{([^{}]*)\\}", "list(\\1)", msg)
  msg <- r("(?<![\\w.])[(\\[](lo, hi)[)\\]]", "c(\\1)", msg)
  msg <- r(sprintf("(?<=[=:] |=|got |\\(|\\[)\\((%s(?:, %s)+)\\)", num, num), "c(\\1)", msg)
  # a quoted string is one atom, whatever it holds ('factor(cyl)6', "(Intercept)")
  str_atom <- "(?:'(?:[^'\\\\]|\\\\.)*'|\"(?:[^\"\\\\]|\\\\.)*\")"
  atom <- sprintf("(?:%s|-?[0-9][0-9.e+-]*|Inf|TRUE|FALSE|NULL|\\.\\.\\.)", str_atom)
  msg <- r(sprintf("\\[(%s(?:, %s)*)\\]", atom, atom), "c(\\1)", msg)
  # tuples of strings, ('Ozone', 'Temp') and ('x',): prose in parentheses is never only quoted strings
  msg <- r(sprintf("(?<![\\w.])\\((%s(?:, %s)+),?\\)", str_atom, str_atom), "c(\\1)", msg)
  msg <- r(sprintf("(?<![\\w.])\\((%s),\\)", str_atom), "c(\\1)", msg)
  vec <- sprintf("c\\(%s(?:, %s)*\\)", atom, atom)
  msg <- r(sprintf("\\[(%s(?:, %s)*)\\]", paste0("(?:", vec, "|list\\([^()]*\\))"), paste0("(?:", vec, "|list\\([^()]*\\))")),
           "list(\\1)", msg)
  # inside c(...), R's double quotes, element by element
  vecs <- gregexpr(vec, msg, perl = TRUE)
  regmatches(msg, vecs) <- lapply(regmatches(msg, vecs), function(v) {
    atoms <- gregexpr(str_atom, v, perl = TRUE)
    regmatches(v, atoms) <- lapply(regmatches(v, atoms), function(a) {
      ifelse(startsWith(a, "'"), paste0("\"", gsub("\"", "\\\"", gsub("\\'", "'", substr(a, 2L, nchar(a) - 1L), fixed = TRUE),
                                                     fixed = TRUE), "\""), a)
    })
    v
  })
  msg <- r("\\b(got|is) '([^']*)'", "\\1 \"\\2\"", msg)
  # one pair for every column: Python's own name for that case, 'all columns', is no column of the data
  msg <- r("^bounds for 'all columns' must be a pair c\\(lo, hi\\) of numbers, got ",
           paste0("bounds must be one pair c(lo, hi) for all columns, or a named list with a pair for each column, ",
                  "e.g. list(x = c(lo, hi))", if (is.list(args$bounds) && is.null(names(args$bounds))) " (not an unnamed list)",
                  "; got "), msg)
  # keyword arguments
  msg <- r("\\b([A-Za-z_][A-Za-z0-9_.]*)=(?![=)\\s])", "\\1 = ", msg)
  msg <- r("= '([^']*)'", "= \"\\1\"", msg)
  # advice that ends on an empty value ("declare an upper bound sigma=") shows what goes there
  msg <- r("\\b([A-Za-z_][A-Za-z0-9_.]*) ?= ?(?=$|[,;]|\\.(?:\\s|$))", "\\1 = <a public value>", msg)
  msg <- r("(\" or )'([^']*)'", "\\1\"\\2\"", msg)
  msg <- r("\\bbe '([^']*)' or '([^']*)'", "be \"\\1\" or \"\\2\"", msg)
  # 0-based positions
  msg <- r("\\bat index ([0-9]+)", "at position \\1", msg)
  pos <- regmatches(msg, gregexpr("(?<=at position )[0-9]+", msg, perl = TRUE))[[1]]
  for (p in unique(pos)) msg <- sub(paste0("at position ", p, "\\b"), paste0("at position ", as.integer(p) + 1L), msg, perl = TRUE)
  msg <- r("\\brandom_state\\b", "seed", msg)
  msg <- r("\\ba dict( of)?\\b", "a named list\\1", msg)
  msg <- r("\\b(?:a )?dict\\b", "a named list", msg)
  msg <- r("\\ba tuple\\b", "a vector", msg)
  msg <- r("\\ba non-empty list of distinct levels\\b", "a non-empty vector of distinct levels", msg)
  msg <- r("\\ba list of levels\\b", "a vector of levels", msg)
  msg <- r("\\bpandas DataFrame\\b", "data.frame", msg)
  msg <- r("\\bDataFrames?\\b", "data.frame", msg)
  msg <- r("\\ba new Accountant\\b", "a new dp_accountant()", msg)
  msg <- r("\\s*\\([^()]*\\.py\\b[^()]*\\)", "", msg)
  msg <- r("\\S+\\.py\\b", "dpstats' test suite", msg)
  msg
}

# The planner's measures (tidy(pl)$measure: rel_error, exact_recovery, ...) as words in a sentence.
.measure_names <- c(rel_error = "relative error", coef_error = "coefficient error", width_ratio = "interval width ratio")

.measure_words <- function(msg) {
  at <- gregexpr("(?<=\\bpredicted )[a-z]+(?:_[a-z]+)+(?= is (?:within|more than))", msg, perl = TRUE)
  regmatches(msg, at) <- lapply(regmatches(msg, at), function(m) {
    ifelse(m %in% names(.measure_names), .measure_names[m], gsub("_", " ", m, fixed = TRUE))
  })
  msg
}

.simplify_frame <- function(x) {
  if (is.null(x) || is.data.frame(x)) return(x)
  x <- lapply(x, function(col) if (is.list(col) && all(lengths(col) == 1L)) unlist(col) else col)
  tryCatch(as.data.frame(x, stringsAsFactors = FALSE, optional = TRUE),
           error = function(e) x)
}

# Python's infinities travel as the strings "Inf"/"-Inf" (JSON has no infinity): back to numbers
# wherever a vector holds only numbers and infinities, so eps = Inf and threshold = Inf are doubles.
.restore_inf <- function(x) {
  if (is.list(x)) {
    x[] <- lapply(x, .restore_inf)
    return(x)
  }
  if (is.character(x) && length(x) && any(x %in% c("Inf", "-Inf"))) {
    num <- suppressWarnings(as.numeric(x))
    if (!anyNA(num[!is.na(x)])) return(num)
  }
  x
}

.dp_convert <- function(json, object) {
  p <- .restore_inf(jsonlite::fromJSON(json, simplifyVector = TRUE))
  switch(p$kind,
    result = .dp_result(p, object),
    plan = .dp_plan_result(p, object),
    data.frame = {
      cols <- p$frame$columns
      for (nm in names(p$frame$levels)) {
        cols[[nm]] <- factor(cols[[nm]], levels = unlist(p$frame$levels[[nm]]))
      }
      .simplify_frame(cols[unlist(p$frame$names)])
    },
    vector = stats::setNames(p$value, p$names),
    array = {
      v <- p$value
      if (length(p$dim) == 2L && !is.matrix(v)) v <- matrix(unlist(v), nrow = p$dim[1], byrow = TRUE)
      v
    },
    p$value)
}

.dp_result <- function(p, object) {
  out <- p$result
  out$tidy <- .broom_frame(.simplify_frame(out$tidy))
  out$glance <- .broom_frame(.simplify_frame(lapply(out$glance, function(v) if (is.null(v)) NA else v)),
                             .broom_order$glance)
  out$text <- p$text
  out$summary_text <- p$summary
  out$coef <- if (!is.null(p$coef)) {
    v <- unlist(lapply(p$coef$values, function(z) if (is.null(z)) NA else z))
    if (!is.null(p$coef$names)) stats::setNames(v, unlist(p$coef$names)) else v
  }
  attr(out, "py") <- object
  class(out) <- unlist(p$class)
  out
}

.dp_pyref <- function(x) {
  ref <- attr(x, "py", exact = TRUE)
  if (!.dp_alive(ref)) .dp_stale()
  ref
}

# Build the argument list of a wrapper from its formals: missing arguments are left out,
# so Python's own defaults apply.
.wrapper_args <- function(env, names) {
  out <- list()
  for (nm in names) {
    is_missing <- eval(call("missing", as.name(nm)), env)
    if (!is_missing) out[nm] <- list(get(nm, envir = env))
  }
  out
}

# The arguments with the seed as Python's random_state; `random_state =` (Python's name, passed
# through ...) is taken as the seed, so that it gets the same check and the same whole-number type.
.with_seed <- function(args, seed) {
  if (!is.null(args$random_state)) {
    if (!is.null(seed)) {
      .dp_abort("give seed or random_state (its Python name), not both.", "dpstats_argument_error")
    }
    seed <- args$random_state
    args$random_state <- NULL
  }
  c(args, .seed_arg(seed))
}

.seed_arg <- function(seed) {
  if (is.null(seed)) return(list())
  if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) || seed != round(seed) || seed < 0) {
    .dp_abort(sprintf("seed must be one whole number >= 0 (or NULL for fresh randomness), got %s.",
                      paste(format(seed), collapse = ", ")), "dpstats_privacy_parameter_error")
  }
  list(random_state = as.integer(seed))
}
