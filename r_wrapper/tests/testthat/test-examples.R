# Every exported analysis function's help page has an example that runs (R-user audit F05): R users
# learn from example(dp_glm). The doors are the catalog's R functions (R/required.R, generated from
# dpstats/catalog.py) and dp_plan.

doors <- c(names(dpstats:::.required), "dp_plan")

test_that("every door's help page has examples, and example() runs them without error", {
  skip_if_no_dpstats()
  db <- tools::Rd_db("dpstats")
  for (door in doors) {
    code <- tempfile(fileext = ".R")
    tools::Rd2ex(db[[paste0(door, ".Rd")]], out = code)
    expect_true(file.exists(code) && any(grepl(door, readLines(code), fixed = TRUE)),
                label = sprintf("?%s has an example calling %s()", door, door))
    env <- new.env()
    expect_no_error(suppressWarnings(utils::capture.output(
      utils::example(door, package = "dpstats", character.only = TRUE, local = env, run.dontrun = FALSE,
                     give.lines = FALSE, echo = FALSE, ask = FALSE))))
  }
})

test_that("dp_glm's example releases intervals", {
  skip_if_no_dpstats()
  env <- new.env()
  utils::capture.output(utils::example("dp_glm", package = "dpstats", local = env, echo = FALSE, ask = FALSE))
  ci <- confint(env$fit)
  expect_equal(rownames(ci), c("(Intercept)", "x1", "x2"))
  expect_true(all(is.finite(ci)))
})

# ---- the help pages' text (R-user audit F07, F11)

# Every \item{name}{text} of a page's \arguments, nested ones (the `...` entry's) included: text by name.
rd_items <- function(rd) {
  out <- character()
  walk <- function(node) {
    if (identical(attr(node, "Rd_tag"), "\\item") && length(node) == 2L) {
      name <- paste(unlist(node[[1]]), collapse = "")
      out[[name]] <<- paste(unlist(node[[2]]), collapse = "")
    }
    if (is.list(node)) for (child in node) walk(child)
  }
  args <- Filter(function(s) identical(attr(s, "Rd_tag"), "\\arguments"), rd)
  for (a in args) walk(a)
  out
}

rd_section <- function(rd, tag) {
  hit <- Filter(function(s) identical(attr(s, "Rd_tag"), tag), rd)
  gsub("\\s+", " ", trimws(paste(unlist(hit), collapse = "")))
}

test_that("no help page repeats one paragraph for two arguments (eps and delta of ?dp_pca)", {
  db <- tools::Rd_db("dpstats")
  for (door in doors) {
    items <- rd_items(db[[paste0(door, ".Rd")]])
    long <- items[nchar(items) > 60 & !grepl("covers this argument too", items, fixed = TRUE)]
    expect_false(anyDuplicated(long) > 0, label = sprintf("?%s repeats %s", door,
                                                            paste(names(long)[duplicated(long)], collapse = ", ")))
  }
  items <- rd_items(db[["dp_pca.Rd"]])
  expect_match(items[["delta"]], "eps", fixed = TRUE)
})

test_that("help pages carry no pointer to Python docstrings, and ?dp_bh no lm boilerplate", {
  db <- tools::Rd_db("dpstats")
  for (door in doors) {
    text <- paste(unlist(db[[paste0(door, ".Rd")]]), collapse = "")
    expect_false(grepl("docstring", text, fixed = TRUE), label = sprintf("?%s mentions a docstring", door))
  }
  details <- rd_section(db[["dp_bh.Rd"]], "\\details")
  expect_false(grepl("weights =|subset =|contrasts =", details))
  expect_match(details, "dpstats_error", fixed = TRUE)
  expect_match(rd_section(db[["dp_lm.Rd"]], "\\details"), "weights =", fixed = TRUE)  # still where it applies
})

test_that("an HTML report written from R lists R's version and the R package's beside Python's (F11)", {
  skip_if_no_dpstats()
  fit <- dp_sis(y ~ ., data = sim_data(), eps = 2, k = 2, bounds = c(-6, 6), seed = 1, oc_trials = 0L)
  path <- tempfile(fileext = ".html")
  report(fit, path)
  html <- paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
  r <- paste(R.version$major, R.version$minor, sep = ".")
  expect_match(html, sprintf("<th scope=\"row\">R</th><td>%s</td>", r), fixed = TRUE)
  expect_match(html, sprintf("<th scope=\"row\">dpstats (R package)</th><td>%s</td>", packageVersion("dpstats")),
               fixed = TRUE)
  expect_match(html, "<th scope=\"row\">python</th>", ignore.case = TRUE)
})
