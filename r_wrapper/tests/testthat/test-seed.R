# set.seed() does not make a run reproducible (the noise is drawn in Python); only seed = does (the R
# audit's F11c). Each door's help says so under `seed`; the behaviour it describes is checked here.

test_that("every help page with a seed argument says set.seed() has no effect and seed = reproduces", {
  db <- tools::Rd_db("dpstats")
  with_seed <- Filter(function(rd) any(grepl("\\item{seed}", paste(as.character(rd), collapse = ""), fixed = TRUE)), db)
  expect_gte(length(with_seed), 10L)
  for (nm in names(with_seed)) {
    text <- paste(as.character(with_seed[[nm]]), collapse = "")
    expect_match(text, "set.seed()} has no effect", fixed = TRUE, info = nm)
    expect_match(text, "Only \\code{seed =} reproduces a run", fixed = TRUE, info = nm)
  }
})

test_that("set.seed() before two unseeded calls gives two draws; seed = gives the same one", {
  skip_if_no_dpstats()
  b <- list(wt = c(1, 6), mpg = c(10, 35))
  set.seed(1); c1 <- coef(dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = b))
  set.seed(1); c2 <- coef(dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = b))
  expect_false(identical(c1, c2))
  s1 <- coef(dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = b, seed = 7))
  s2 <- coef(dp_lm(mpg ~ wt, mtcars, eps = 1, delta = 1e-5, bounds = b, seed = 7))
  expect_identical(s1, s2)
})
