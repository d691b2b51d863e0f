# The public functions: thin wrappers with Python's names and arguments.
# `seed` is Python's `random_state`; every other argument is passed by its name.

.dp_fit <- function(method, env, formals_used, dots, seed, call) {
  args <- c(.wrapper_args(env, formals_used), dots, .seed_arg(seed))
  .dp_invoke(method, args, call = call)
}

dp_sis <- function(formula, data, eps, k = NULL, ..., seed = NULL) {
  .dp_fit("dp_sis", environment(), c("formula", "data", "eps", "k"), list(...), seed, sys.call())
}

dp_two_stage <- function(formula, data, eps, k, ..., seed = NULL) {
  .dp_fit("dp_two_stage", environment(), c("formula", "data", "eps", "k"), list(...), seed, sys.call())
}

dp_knockoff <- function(formula, data, eps, delta, ..., seed = NULL) {
  .dp_fit("dp_knockoff", environment(), c("formula", "data", "eps", "delta"), list(...), seed, sys.call())
}

dp_gmm <- function(formula, data, k, eps, delta, ..., seed = NULL) {
  .dp_fit("dp_gmm", environment(), c("formula", "data", "k", "eps", "delta"), list(...), seed, sys.call())
}

dp_felp <- function(formula, data, eps, ..., seed = NULL) {
  .dp_fit("dp_felp", environment(), c("formula", "data", "eps"), list(...), seed, sys.call())
}

vertical_glm <- function(formula, data, parties, family = "gaussian", ..., seed = NULL) {
  # each party's columns as a Python list, even a single one (list(a = c("x1", "x2"), b = "x3"))
  if (!missing(parties) && is.list(parties)) parties <- lapply(parties, function(p) as.list(as.character(p)))
  .dp_fit("vertical_glm", environment(), c("formula", "data", "parties", "family"), list(...), seed,
          sys.call())
}

dp_call <- function(name, ..., seed = NULL) {
  if (!is.character(name) || length(name) != 1L) {
    .dp_abort("name must be the name of one dpstats function, e.g. \"simulate_knockoff\".",
              "dpstats_error")
  }
  .dp_invoke(name, c(list(...), .seed_arg(seed)), call = sys.call())
}
