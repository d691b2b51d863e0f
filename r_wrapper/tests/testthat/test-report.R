# report() from R writes the report in R's words: the user's call, R's literals, noise samplers in words,
# no reference to dpstats' Python modules; the page's markup is Python's, unchanged (only text is rewritten).

# the report Python writes for the same fit, without R's rewriting
python_report <- function(fit, path) {
  dpstats:::.dp_invoke("report", list(path = path), target = dpstats:::.dp_pyref(fit))
  paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
}

r_report <- function(fit, path) {
  expect_identical(report(fit, path), path)
  paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
}

# the rows R adds to the footer's versions (R's and the R package's), left out to compare with Python's page
without_r_versions <- function(html) {
  gsub("<tr><th scope=\"row\">(R|dpstats \\(R package\\))</th><td>[^<]*</td></tr>", "", html)
}

# the tags of a page, its figures left out (matplotlib numbers their parts afresh in each rendering)
tags <- function(html) {
  html <- gsub("(?s)<svg\\b.*?</svg>", "<svg/>", html, perl = TRUE)
  regmatches(html, gregexpr("<[^>]*>", html))[[1]]
}

shown <- function(html) gsub("<[^>]*>", " ", gsub("(?s)<(svg|style)\\b.*?</\\1>", " ", html, perl = TRUE))

python_words <- paste0("formula = &#34;|formula = \"|random_state|numpy (gaussian|laplace)|\\w=\"|\\w='|",
                       "dpstats\\.(methods|privacy|simulate)|\\bto_dict\\b|\\binf\\b|\\bTrue\\b|\\bFalse\\b|\\bNone\\b")

test_that("a report written from R shows the R call and R's words, and Python's markup", {
  skip_if_no_dpstats()
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5,
               bounds = list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35)), seed = 1)
  py <- python_report(fit, tempfile(fileext = ".html"))
  expect_match(py, "dp_lm(formula = &#34;mpg ~ wt + hp&#34;", fixed = TRUE)  # what the rewriting replaces
  expect_match(py, "numpy gaussian (seeded, not floating-point hardened)", fixed = TRUE)
  html <- r_report(fit, tempfile(fileext = ".html"))
  call <- regmatches(html, regexpr("(?<=<pre class=\"call\"><code>)[^<]*", html, perl = TRUE))
  expect_identical(call, paste(deparse(fit$call), collapse = "\n"))
  expect_match(call, "^dp_lm\\(formula = mpg ~ wt \\+ hp, data = mtcars, eps = 5")
  expect_false(grepl(python_words, shown(html), perl = TRUE),
               info = regmatches(shown(html), regexpr(paste0(".{60}(", python_words, ").{60}"), shown(html), perl = TRUE)))
  expect_match(html, "Gaussian noise from a seeded generator (for reproduction; not hardened against floating-point attacks)",
               fixed = TRUE)
  expect_match(html, "Missing values (na_action = \"fill\")", fixed = TRUE)
  expect_identical(tags(without_r_versions(html)), tags(py))
  expect_identical(lengths(regmatches(html, gregexpr("<svg\\b", html))), lengths(regmatches(py, gregexpr("<svg\\b", py))))
})

test_that("reports of other methods and of the planner read in R's words too", {
  skip_if_no_dpstats()
  set.seed(1)
  df <- as.data.frame(matrix(rnorm(300 * 20), 300))
  df$y <- 2 * df$V1 + rnorm(300)
  sis <- dp_sis(y ~ ., data = df, eps = 2, k = 2, bounds = c(-5, 5), seed = 1)
  X <- as.data.frame(rbind(matrix(rnorm(400, -5), ncol = 2), matrix(rnorm(400, 5), ncol = 2)))
  gm <- suppressWarnings(dp_gmm(~ ., data = X, k = 2, eps = 2, delta = 1e-6, bounds = c(-10, 10), seed = 1))
  ko <- suppressWarnings(dp_knockoff(y ~ ., data = df, eps = Inf, delta = 1e-6, fdr = 0.2, seed = 1, oc_trials = 0))
  pl <- suppressWarnings(dp_plan("dp_sis", n = 100, p = 200, eps = c(1, 5), k = 8, trials = 20,
                                 assume = list(signals = 8, strength = 0.5), seed = 1))
  for (fit in list(sis, gm, ko, pl)) {
    py <- python_report(fit, tempfile(fileext = ".html"))
    html <- r_report(fit, tempfile(fileext = ".html"))
    expect_false(grepl(python_words, shown(html), perl = TRUE),
                 info = regmatches(shown(html), regexpr(paste0(".{60}(", python_words, ").{60}"), shown(html), perl = TRUE)))
    expect_identical(tags(without_r_versions(html)), tags(py))
    expect_match(html, paste(deparse(fit$call), collapse = "\n"), fixed = TRUE)
  }
  expect_match(python_report(sis, tempfile()), "recovery bound of the canonical Lipschitz mechanism (Shekelyan", fixed = TRUE)
  expect_match(r_report(pl, tempfile()), "dp_plan(method = \"dp_sis\", n = 100, p = 200, eps = c(1, 5)", fixed = TRUE)
})
