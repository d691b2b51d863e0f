# dp_bh: private Benjamini-Hochberg on p-values, on a formula's marginal slope z-tests, or BH on a
# private fit's p-values.
# A named numeric vector keeps its names (Python receives a dict name -> p-value); an unnamed one
# becomes a list, so that a single p-value stays a vector of length one. A dp_result (a private fit
# with tidy() columns term and p.value) is passed as its Python object. A formula (with data =,
# bounds = and sigma =) tests the marginal slope of the response on each design column, with eta
# derived from the bounds, n and sigma, and releases the tests only through private BH.
dp_bh <- function(p_values, q = 0.1, eps = NULL, ..., seed = NULL) {
  if (missing(p_values)) {
    .dp_abort("argument \"p_values\" is missing, with no default: dp_bh() needs p-values, a formula or a private fit.",
              "dpstats_argument_error")
  }
  .check_scalars(list(q = q))
  pv <- if (inherits(p_values, "formula")) {
    p_values
  } else if (inherits(p_values, "dp_result")) {
    .dp_pyref(p_values)
  } else if (is.numeric(p_values) && !is.null(names(p_values))) {
    as.list(p_values)
  } else if (is.numeric(p_values) || is.logical(p_values)) {
    as.list(as.numeric(p_values))
  } else {
    .dp_abort(sprintf("p_values must be a numeric vector of p-values in [0, 1], a formula or a private fit, not %s.",
                      class(p_values)[1]), "dpstats_data_error")
  }
  args <- c(list(p_values = pv, q = q), if (!is.null(eps)) list(eps = eps), list(...))
  .check_scalars(args[!names(args) %in% c("p_values", "data")])
  mc <- match.call()
  res <- .dp_invoke("dp_bh", .with_seed(args, seed), call = mc)
  res$py_call <- res$call
  res$call <- .shareable_call(mc)  # printed as the user wrote it, as lm does, without data values (bridge.R)
  res
}
