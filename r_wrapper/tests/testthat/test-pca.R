# dp_pca from R: R's prcomp is the oracle, on R's own data sets.
# center = "mean" (the default) decomposes the covariance about the released mean: at eps = Inf, with a box
# that holds every row (nothing clipped, and the default radius shrinks no row), that is plain prcomp(x):
# loadings, sdev^2 (the variances, divisor n - 1), center, the proportions of variance and predict's scores.
# center = "midpoint" decomposes sum((x - c)(x - c)') about the box's midpoint c: prcomp(x, center = c),
# whose sdev^2 are its eigenvalues / (n - 1).
# Tolerances: loadings (up to each column's sign) and scores to 1e-8 absolute, variances to 1e-8 relative
# (both are eigen-decompositions of the same 4 x 4 matrix in double precision).  At eps = 1e6 (seeds 1-3) the
# largest principal angle between the released 2-D subspace and prcomp's is below 0.5 degrees on iris
# (observed at most 0.1: the noise per covariance entry is about 1.4e-4 against an eigen-gap of 0.16).

usarrests_box <- list(Murder = c(0, 20), Assault = c(0, 350), UrbanPop = c(0, 100), Rape = c(0, 50))
iris_box <- list(Sepal.Length = c(4, 8), Sepal.Width = c(2, 5), Petal.Length = c(1, 7), Petal.Width = c(0, 3))

midpoints <- function(box) vapply(box, mean, numeric(1))

# each column of `m` with the sign that matches the same column of `ref`
aligned <- function(m, ref) sweep(m, 2, sign(colSums(m * ref)), `*`)

# the largest principal angle (degrees) between the column spans of a and b
subspace_angle <- function(a, b) {
  s <- svd(crossprod(qr.Q(qr(a)), qr.Q(qr(b))))$d
  acos(min(1, min(s))) * 180 / pi
}

test_that("eps = Inf on USArrests is prcomp(USArrests): loadings, variances, centre, proportions, scores", {
  skip_if_no_dpstats()
  expect_warning(fit <- dp_pca(~ ., data = USArrests, k = 4, eps = Inf, delta = 0, bounds = usarrests_box),
                 "NOT private", class = "dpstats_non_private_warning")
  expect_s3_class(fit, c("dp_pca", "dp_result"), exact = TRUE)
  ref <- prcomp(USArrests)
  basis <- fit$outputs$basis
  expect_identical(dim(basis), c(4L, 4L))
  expect_equal(aligned(basis, unname(ref$rotation)), unname(ref$rotation), tolerance = 1e-8)
  expect_equal(fit$outputs$eigenvalues, ref$sdev^2, tolerance = 1e-8)
  expect_equal(fit$outputs$centre, unname(ref$center), tolerance = 1e-10)
  expect_equal(fit$outputs$proportion, ref$sdev^2 / sum(ref$sdev^2), tolerance = 1e-8)
  expect_equal(fit$outputs$proportion, unname(summary(ref)$importance["Proportion of Variance", ]),
               tolerance = 1e-4)  # summary.prcomp rounds to 5 digits
  expect_identical(fit$outputs$center, "mean")
  scores <- predict(fit, newdata = USArrests)
  expect_identical(dimnames(scores), list(rownames(USArrests), paste0("PC", 1:4)))
  expect_equal(unname(aligned(scores, predict(ref, USArrests))), unname(predict(ref, USArrests)), tolerance = 1e-8)
  # tidy: one row per variable and component, with the component's variance and proportion
  td <- tidy(fit)
  expect_identical(names(td), c("term", "component", "loading", "eigenvalue", "proportion", "below_noise_level",
                                "resolved"))
  expect_false(any(td$below_noise_level))  # eps = Inf: no noise
  expect_true(all(td$resolved))
  expect_identical(nrow(td), 16L)
  expect_equal(td$eigenvalue[td$term == "Murder"], ref$sdev^2, tolerance = 1e-8)
  g <- glance(fit)
  expect_identical(nrow(g), 1L)
  expect_identical(g$k, 4L)
  expect_identical(g$center, "mean")
  expect_identical(g$noise.sd, 0)
  expect_true(is.infinite(g$eps))
  out <- paste(capture.output(print(fit)), collapse = "\n")
  expect_match(out, "Principal components: non-private reference (eps = Inf)", fixed = TRUE)
  expect_match(out, "Decomposed: the covariance about the mean of the rows (non-private, as prcomp)", fixed = TRUE)
  expect_match(out, "Loadings:\n            PC1", fixed = TRUE)  # R's matrix print, not pandas' pivot
  expect_match(out, "Importance of components:\n", fixed = TRUE)
  expect_match(out, "Proportion of Variance", fixed = TRUE)
  expect_match(paste(capture.output(summary(fit)), collapse = "\n"), "NOT differentially private")
})

test_that("eps = Inf on iris' numeric columns, named in the formula, with k = 2 of 4 components", {
  skip_if_no_dpstats()
  f <- ~ Sepal.Length + Sepal.Width + Petal.Length + Petal.Width
  fit <- suppressWarnings(dp_pca(f, data = iris, k = 2, eps = Inf, delta = 0, bounds = iris_box))
  ref <- prcomp(iris[1:4])
  expect_identical(unlist(fit$terms), names(iris)[1:4])
  expect_equal(aligned(fit$outputs$basis, unname(ref$rotation[, 1:2])), unname(ref$rotation[, 1:2]),
               tolerance = 1e-8)
  expect_equal(fit$outputs$eigenvalues, ref$sdev[1:2]^2, tolerance = 1e-8)
  expect_equal(fit$outputs$proportion, (ref$sdev^2 / sum(ref$sdev^2))[1:2], tolerance = 1e-8)
  nd <- iris[c(1, 51, 101), ]
  nd$Petal.Width[2] <- NA  # scores NA, as predict with na.pass
  s <- predict(fit, nd)
  expect_identical(dim(s), c(3L, 2L))
  expect_true(all(is.na(s[2, ])) && all(is.finite(s[-2, ])))
  expect_equal(unname(abs(s[-2, ])), unname(abs(predict(ref, nd[-2, ])[, 1:2])), tolerance = 1e-8)
})

test_that("center = \"midpoint\" keeps the decomposition about the box's midpoint: prcomp(x, center = c)", {
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_pca(~ ., data = USArrests, k = 4, eps = Inf, delta = 0, bounds = usarrests_box,
                                 center = "midpoint"))
  ref <- prcomp(USArrests, center = midpoints(usarrests_box), scale. = FALSE)
  expect_equal(aligned(fit$outputs$basis, unname(ref$rotation)), unname(ref$rotation), tolerance = 1e-8)
  expect_equal(fit$outputs$eigenvalues / (nrow(USArrests) - 1), ref$sdev^2, tolerance = 1e-8)  # sums of squares
  expect_equal(fit$outputs$centre, unname(midpoints(usarrests_box)))
  expect_equal(unname(aligned(predict(fit, USArrests), predict(ref, USArrests))), unname(predict(ref, USArrests)),
               tolerance = 1e-8)
  out <- paste(capture.output(print(fit)), collapse = "\n")
  expect_match(out, "about the box's midpoint c, not the covariance", fixed = TRUE)
  expect_match(out, "(sums of squares, not variances)", fixed = TRUE)
})

test_that("at eps = 1e6 the released subspace on iris is within half a degree of prcomp's", {
  skip_if_no_dpstats()
  ref <- prcomp(iris[1:4])$rotation[, 1:2]
  angles <- vapply(1:3, function(s) {
    fit <- dp_pca(~ . - Species, data = iris, k = 2, eps = 1e6, delta = 1e-6, bounds = iris_box, seed = s)
    subspace_angle(fit$outputs$basis, ref)
  }, numeric(1))
  expect_true(all(angles < 0.5), info = paste(round(angles, 3), collapse = ", "))
  # about the midpoint of a loose box, the same budget gives the audit's 77 degrees: not prcomp's components
  mid <- dp_pca(~ . - Species, data = iris, k = 2, eps = 1e6, delta = 1e-6, bounds = c(0, 8), center = "midpoint",
                seed = 1)
  expect_gt(subspace_angle(mid$outputs$basis, ref), 70)
})

test_that("a private dp_pca: released shapes, the two-step ledger and the accountant's charge", {
  skip_if_no_dpstats()
  acc <- dp_accountant(eps = 1.5, delta = 1e-5)
  fit <- dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, accountant = acc,
                seed = 1)
  basis <- fit$outputs$basis
  expect_identical(dim(basis), c(4L, 2L))
  expect_equal(crossprod(basis), diag(2), tolerance = 1e-10)  # orthonormal, whatever the noise
  expect_length(fit$outputs$eigenvalues, 2L)
  expect_length(fit$outputs$centre, 4L)
  expect_identical(nrow(tidy(fit)), 8L)
  expect_gt(glance(fit)$noise.sd, 0)
  expect_gt(glance(fit)$sum_noise_sd, 0)
  led <- ledger(fit)
  expect_identical(nrow(led), 2L)  # second moments (Analyze Gauss), then the column sums (the mean)
  expect_identical(led$mechanism, rep("Gaussian mechanism (zCDP)", 2))
  expect_equal(sum(led$eps), 1)
  expect_equal(led$eps, c(0.75, 0.25))  # mean_share = 0.25 of rho, and so of (eps, delta)
  expect_equal(sum(led$delta), 1e-6)
  expect_equal(fit$privacy$eps, 1)
  expect_identical(fit$privacy$neighbouring, "replace")
  expect_identical(nrow(ledger(acc)), 2L)
  expect_equal(sum(ledger(acc)$eps), 1)
  # a second call would overspend: refused before anything is read or spent
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, accountant = acc),
               class = "dpstats_budget_exceeded_error")
  expect_identical(nrow(ledger(acc)), 2L)
  scores <- predict(fit, USArrests[1:3, ])
  expect_identical(dim(scores), c(3L, 2L))
  expect_equal(unname(scores), unname(sweep(as.matrix(USArrests[1:3, ]), 2, fit$outputs$centre) %*% basis))
  again <- dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, seed = 1)
  expect_identical(again$outputs$basis, basis)  # seeded: for reproduction
  out <- paste(capture.output(print(fit)), collapse = "\n")
  expect_match(out, "Privacy: (1, 1e-06)-DP; neighbouring: replace one row", fixed = TRUE)
  expect_match(out, "Importance of components (noisy):", fixed = TRUE)
  # under add/remove n is private: the noisy count is released with the sums, and n is not shown
  ar <- dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, neighbouring = "add_remove",
               seed = 2)
  expect_true(is.numeric(ar$outputs$count) && length(ar$outputs$count) == 1L)
  expect_true(is.na(glance(ar)$nobs))
  expect_match(paste(capture.output(print(ar)), collapse = "\n"), "Released number of rows (noisy; n is private)",
               fixed = TRUE)
})

test_that("dp_pca's arguments: required ones named, Python's names passed through, bad input refused", {
  skip_if_no_dpstats()
  expect_identical(names(formals(dp_pca)), c("formula", "data", "k", "eps", "delta", "...", "seed"))
  py <- unlist(bridge_call("parameters", name = "dp_pca"))
  expect_identical(py[1:5], c("formula", "data", "k", "eps", "delta"))
  expect_true(all(c("center", "mean_share") %in% py))
  expect_error(dp_pca(~ ., data = USArrests, eps = 1, delta = 1e-6), "dp_pca() needs formula, data, k, eps.",
               fixed = TRUE, class = "dpstats_argument_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 0, bounds = usarrests_box),
               "needs delta > 0", class = "dpstats_privacy_parameter_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 5, eps = 1, delta = 1e-6, bounds = usarrests_box),
               "1 <= k <= 4", class = "dpstats_data_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bound = usarrests_box),
               "did you mean 'bounds'", class = "dpstats_argument_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, center = TRUE),
               "center must be \"mean\"", fixed = TRUE, class = "dpstats_privacy_parameter_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, bounds = usarrests_box, mean_share = 1),
               "mean_share must be in (0", fixed = TRUE, class = "dpstats_privacy_parameter_error")
  # the data's range as the box is a named data-dependent step: warned, and refused under strict
  ws <- list()
  withCallingHandlers(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, seed = 1),
                      warning = function(w) { ws[[length(ws) + 1L]] <<- w; invokeRestart("muffleWarning") })
  expect_true(length(ws) > 0 && all(vapply(ws, inherits, logical(1), "dpstats_non_private_warning")))
  expect_true(any(grepl("per-column min and max", vapply(ws, conditionMessage, ""), fixed = TRUE)))
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = 1, delta = 1e-6, strict = TRUE), class = "dpstats_error")
  expect_error(dp_pca(~ ., data = USArrests, k = 2, eps = Inf, delta = 0, bounds = usarrests_box, strict = TRUE),
               "strict = TRUE refuses eps = Inf", fixed = TRUE, class = "dpstats_privacy_parameter_error")
  # its help page is generated with the others
  expect_length(utils::help("dp_pca", package = "dpstats"), 1L)
})

test_that("delta is needed only for noise: eps = Inf runs as prcomp without it; finite eps refuses its absence", {
  # the R audit's F07: dp_pca(~ ., USArrests, k = 2, eps = Inf) stopped with "argument "delta" is missing"
  skip_if_no_dpstats()
  fit <- suppressWarnings(dp_pca(~ ., USArrests, k = 2, eps = Inf))
  expect_equal(fit$outputs$eigenvalues, prcomp(USArrests)$sdev[1:2]^2, tolerance = 1e-8)
  expect_identical(suppressWarnings(dp_pca(~ ., USArrests, 2, Inf, 0))$outputs$eigenvalues,
                   fit$outputs$eigenvalues)  # delta keeps its place for positional calls
  for (call in list(quote(dp_pca(~ ., USArrests, k = 2, eps = 1, bounds = usarrests_box)),
                    quote(dp_gmm(~ ., USArrests, k = 2, eps = 1, bounds = usarrests_box)),
                    quote(dp_knockoff(Murder ~ ., USArrests, eps = 1, bounds = 400)))) {
    err <- tryCatch(eval(call), error = identity)
    expect_s3_class(err, "dpstats_privacy_parameter_error")
    expect_match(conditionMessage(err), "needs delta > 0.*Gaussian.*delta = 1e-6")
  }
  set.seed(3)
  x <- matrix(rnorm(400 * 4), 400, dimnames = list(NULL, paste0("x", 1:4)))
  sim <- data.frame(x, y = drop(x %*% c(1, 0, 0, 0.5)) + rnorm(400))
  expect_no_error(suppressWarnings(dp_knockoff(y ~ ., sim, eps = Inf, fdr = 0.2, oc_trials = 0)))
})
