# Error cases triggered from R (test-r-words.R): each is a call that must fail with a classed
# dpstats condition worded for R users. Returns the calls and the environment to evaluate them in.
error_cases <- function() {
  df <- sim_data()
  df$g <- NULL
  b <- c(-6, 6)
  ir <- iris[, 1:4]
  acc <- dp_accountant(eps = 1)
  vfit <- vertical_glm(Sepal.Length ~ Petal.Length + Species, data = iris,
                       parties = list(a = "Petal.Length", b = "Species"))
  cases <- list(
    quote(dp_sis(y ~ ., data = df, eps = -1, k = 2, bounds = b)),
    quote(dp_sis(y ~ ., data = df, eps = 0, k = 2, bounds = b)),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 0, bounds = b)),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 100, bounds = b)),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = c(10, -10))),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = c(1, 2, 3))),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = list(nope = c(0, 1)))),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = b, neighbouring = "foo")),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = b, topk = "foo")),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = b, gamma = -1)),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, strict = TRUE)),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = "foo")),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = b, seed = -1)),
    quote(dp_sis(y ~ x1 + nope, data = df, eps = 1, k = 1, bounds = b)),
    quote(dp_sis(y ~ ., data = df, eps = 2, k = 2, bounds = b, accountant = acc)),
    quote(dp_knockoff(y ~ ., data = df, eps = 1, delta = 2, bounds = 10)),
    quote(dp_knockoff(y ~ ., data = df, eps = 1, delta = 1e-5, fdr = 2, bounds = 10)),
    quote(dp_knockoff(y ~ ., data = df, eps = 1, delta = 1e-5, method = "III", bounds = 10)),
    quote(dp_gmm(~ ., data = ir, k = 0, eps = 1, delta = 1e-6, bounds = c(0, 10))),
    quote(dp_gmm(~ ., data = ir, k = 2, eps = 1, delta = -1, bounds = c(0, 10))),
    quote(dp_felp(y ~ ., data = transform(df, y = factor(y > 0)), eps = -1, bounds = b)),
    quote(dp_two_stage(y ~ ., data = df, eps = 1, k = 0, bounds = b)),
    quote(vertical_glm(y ~ x1 + x2, data = df, parties = list(a = "nope", b = "x2"))),
    quote(vertical_glm(y ~ x1 + x2, data = df, parties = list(a = "x1", b = "x2"), family = "foo")),
    quote(vertical_glm(y ~ x1 + x2, data = df, parties = list(a = "x1", b = "x2"), eps = 1, delta = 1e-6)),
    quote(vertical_glm(y ~ x1 + x2, data = df, parties = list(a = "x1", b = "x2"), penalty = "ridge", lam = -1)),
    quote(dp_lm(y ~ x1, data = df, eps = 1, bounds = b, conf_level = 2)),
    quote(dp_lm(y ~ x1, data = df, eps = 1, bounds = b, n_boot = 0)),
    quote(dp_lm(y ~ x1, data = df, eps = 1, bounds = b, interval = "foo")),
    quote(dp_lm(y ~ x1, data = df, eps = 1, delta = 1.5, bounds = b)),
    quote(dp_select_infer(y ~ ., data = df, eps = 1, delta = 1e-6, k = 0, bounds = b)),
    quote(dp_bh(c(0.01, 0.2), q = 2, eps = 1)),
    quote(dp_bh(c(0.01, 0.5), q = 0.1, eps = 1, max_rejections = 5)),
    quote(dp_bh(c(0.01, 0.5), q = 0.1, eps = -1)),
    quote(dp_plan("foo", n = 100, p = 10, eps = 1)),
    quote(dp_plan("dp_sis", n = 100, p = 10, eps = c(1, Inf))),
    quote(dp_plan("dp_sis", n = -1, p = 10, eps = 1)),
    quote(dp_accountant(eps = -1)),
    quote(dp_call("no_such_function")),
    quote(predict(vfit, data.frame(Petal.Length = 1, Species = "rosea"))),
    quote(dp_sis(y ~ ., data = df, eps = 1, k = 2, bounds = list(x1 = c(2, 1)))),
    quote(dp_sis(y ~ ., data = df, eps = c(1, 2), k = 2, bounds = b)),
    quote(dp_knockoff(y ~ ., data = df, eps = 1, delta = 1e-5, bounds = c(1, 2, 3))),
    quote(dp_sis(y ~ x1, data = mean, eps = 1, k = 1, bounds = b))
  )
  list(cases = cases, env = environment())
}
