# The outside R user's audit (s13-ruser): R idioms that dpstats refused, answered otherwise than R, or
# documented wrongly. Oracles are R's own glm/lm/anova/drop1/predict on R's data sets.

esoph_rate <- transform(esoph, ntot = ncases + ncontrols)
ff <- function(x) tryCatch(x, error = function(e) e)

test_that("dp_glm fits offset() at eps = Inf as glm does (a Poisson rate model)", {
  skip_if_no_dpstats()
  f <- ncases ~ agegp + alcgp + offset(log(ntot))
  ref <- glm(f, family = poisson, data = esoph_rate)  # dp_glm at eps = Inf is glm.fit, stopping rule included
  fit <- suppressWarnings(dp_glm(f, esoph_rate, family = poisson, eps = Inf))
  expect_equal(coef(fit), coef(ref), tolerance = 1e-7)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-10)
  expect_equal(deviance(fit), deviance(ref), tolerance = 1e-8)
  expect_equal(fit$glance$null.deviance, ref$null.deviance, tolerance = 1e-8)
  expect_equal(AIC(fit), AIC(ref), tolerance = 1e-8)
  expect_equal(fitted(fit), fitted(ref), tolerance = 1e-7)
  expect_equal(residuals(fit, type = "pearson"), residuals(ref, type = "pearson"), tolerance = 1e-6)
  nd <- esoph_rate[c(1, 30, 60), ]
  expect_equal(unname(predict(fit, nd, type = "response")), unname(predict(ref, nd, type = "response")),
               tolerance = 1e-7)
  p <- predict(fit, nd, type = "response", se.fit = TRUE)
  expect_equal(unname(p$se.fit), unname(predict(ref, nd, type = "response", se.fit = TRUE)$se.fit), tolerance = 1e-5)
})

test_that("a private dp_glm refuses offset() saying why and what works, never 'Remove it'", {
  skip_if_no_dpstats()
  err <- ff(dp_glm(ncases ~ agegp + offset(log(ntot)), esoph_rate, family = poisson, eps = 1, delta = 1e-6,
                   bounds = list(ncases = c(0, 20))))
  expect_s3_class(err, "dpstats_error")
  msg <- conditionMessage(err)
  expect_no_match(msg, "Remove it")
  expect_match(msg, "eps = Inf only", fixed = TRUE)
  expect_match(msg, "vertical_glm without eps", fixed = TRUE)
  err2 <- ff(dp_glm(ncases ~ agegp, esoph_rate, offset = log(ntot), family = poisson, eps = Inf))
  expect_match(conditionMessage(err2), "write it in the formula, as offset(log(exposure))", fixed = TRUE)
  expect_no_match(conditionMessage(err2), "fit the model without it")
})

test_that("predict(type = 'response') of a dp_lm is the prediction, as predict.lm's; 'terms' is a dpstats error", {
  skip_if_no_dpstats()
  nd <- data.frame(wool = c("A", "B"), tension = c("M", "H"))
  ref <- lm(breaks ~ wool + tension, warpbreaks)
  fi <- suppressWarnings(dp_lm(breaks ~ wool + tension, warpbreaks, eps = Inf))
  expect_equal(unname(predict(fi, nd, type = "response")), unname(predict(ref, nd, type = "response")), tolerance = 1e-8)
  fd <- dp_lm(breaks ~ wool + tension, warpbreaks, eps = 3, delta = 1e-5, bounds = list(breaks = c(0, 80)), seed = 1)
  expect_identical(predict(fd, nd, type = "response"), predict(fd, nd))
  err <- ff(predict(fi, nd, type = "terms"))
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), 'type is "response"', fixed = TRUE)
  gi <- suppressWarnings(dp_glm(breaks ~ wool + tension, warpbreaks, family = poisson, eps = Inf))
  gref <- glm(breaks ~ wool + tension, family = poisson, data = warpbreaks)
  expect_equal(unname(predict(gi, nd)), unname(predict(gref, nd)), tolerance = 1e-7)
  err <- ff(predict(gi, nd, type = "terms"))
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), 'type is "link" or "response"', fixed = TRUE)
  expect_match(conditionMessage(err), 'predict(type = "terms") of lm()/glm() on data you hold', fixed = TRUE)
})

test_that("anova(f0, f) and drop1() of eps = Inf fits equal lm's and glm's", {
  skip_if_no_dpstats()
  sw <- suppressWarnings
  f <- sw(dp_lm(breaks ~ wool * tension, warpbreaks, eps = Inf))
  f0 <- sw(dp_lm(breaks ~ wool + tension, warpbreaks, eps = Inf))
  g <- lm(breaks ~ wool * tension, warpbreaks)
  g0 <- lm(breaks ~ wool + tension, warpbreaks)
  expect_equal(as.data.frame(anova(f0, f)), as.data.frame(anova(g0, g)), tolerance = 1e-8)
  expect_identical(attr(anova(f0, f), "heading"), attr(anova(g0, g), "heading"))
  expect_equal(as.data.frame(drop1(f, test = "F")), as.data.frame(drop1(g, test = "F")), tolerance = 1e-8)
  expect_equal(as.data.frame(drop1(f0, test = "Chisq")), as.data.frame(drop1(g0, test = "Chisq")), tolerance = 1e-8)
  expect_equal(as.data.frame(drop1(f0)), as.data.frame(drop1(g0)), tolerance = 1e-8)
  p <- sw(dp_glm(breaks ~ wool + tension, warpbreaks, family = poisson, eps = Inf))
  p0 <- sw(dp_glm(breaks ~ wool, warpbreaks, family = poisson, eps = Inf))
  q <- glm(breaks ~ wool + tension, poisson, warpbreaks)
  q0 <- glm(breaks ~ wool, poisson, warpbreaks)
  expect_equal(as.data.frame(anova(p0, p)), as.data.frame(anova(q0, q)), tolerance = 1e-7)
  expect_equal(as.data.frame(anova(p0, p, test = "Chisq")), as.data.frame(anova(q0, q, test = "Chisq")), tolerance = 1e-7)
  expect_equal(as.data.frame(drop1(p, test = "Chisq")), as.data.frame(drop1(q, test = "Chisq")), tolerance = 1e-7)
})

test_that("under DP, anova of several fits, drop1() and step() are refused by their own names", {
  skip_if_no_dpstats()
  b <- list(breaks = c(0, 80))
  fd <- dp_lm(breaks ~ wool * tension, warpbreaks, eps = 2, delta = 1e-5, bounds = b, seed = 1)
  fd0 <- dp_lm(breaks ~ wool + tension, warpbreaks, eps = 2, delta = 1e-5, bounds = b, seed = 2)
  e1 <- ff(anova(fd0, fd))
  expect_s3_class(e1, "dpstats_not_released_error")
  expect_match(conditionMessage(e1), "^anova\\(\\) is not available for a DP dp_lm result")
  e2 <- ff(drop1(fd))
  expect_s3_class(e2, "dpstats_not_released_error")
  expect_match(conditionMessage(e2), "^drop1\\(\\) is not available")
  e3 <- ff(step(fd, trace = 0))
  expect_match(conditionMessage(e3), "^step\\(\\) is not available")
  expect_no_match(conditionMessage(e3), "extractAIC")
})

test_that("the levels warning's suggested factor() fix is R code that runs, also when data = is an expression", {
  skip_if_no_dpstats()
  B <- list(uptake = c(0, 50), conc = c(0, 1000))
  advice <- function(expr) {
    msg <- NULL
    withCallingHandlers(expr, dpstats_non_private_warning = function(w) {
      if (grepl("levels of 'tp'", conditionMessage(w))) msg <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    })
    sub(".*fixed levels: ([^\n]*?\\)\\))(?: \\(.*)?$", "\\1", msg, perl = TRUE)
  }
  code <- advice(dp_lm(uptake ~ tp + conc, transform(CO2, tp = as.character(Type)), eps = 1, bounds = B, seed = 1))
  expect_identical(code, "df$tp <- factor(df$tp, levels = c(...))")
  df <- transform(CO2, tp = as.character(Type))
  eval(parse(text = sub("c(...)", 'c("Quebec", "Mississippi")', code, fixed = TRUE)))
  expect_identical(levels(df$tp), c("Quebec", "Mississippi"))
  d <- transform(CO2, tp = as.character(Type))
  expect_identical(advice(dp_lm(uptake ~ tp + conc, d[d$conc > 100, ], eps = 1, bounds = B, seed = 1)),
                   "df$tp <- factor(df$tp, levels = c(...))")
  expect_identical(advice(dp_lm(uptake ~ tp + conc, d, eps = 1, bounds = B, seed = 1)),
                   "d$tp <- factor(d$tp, levels = c(...))")
})

test_that("dp_pca answers prcomp habits: scale. = TRUE names scale() in the formula, data first names the formula", {
  skip_if_no_dpstats()
  err <- ff(dp_pca(~ ., USArrests, k = 2, eps = Inf, scale. = TRUE))
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), "scale() in the formula", fixed = TRUE)
  expect_match(conditionMessage(err), "scale(x1, center = c1, scale = s1)", fixed = TRUE)
  # what the message says reproduces prcomp(scale. = TRUE) at eps = Inf
  f <- suppressWarnings(dp_pca(~ scale(Murder) + scale(Assault) + scale(UrbanPop) + scale(Rape), USArrests, k = 4, eps = Inf))
  expect_equal(tidy(f, matrix = "eigenvalues")$std.dev, prcomp(USArrests, scale. = TRUE)$sdev, tolerance = 1e-6)
  err <- ff(dp_pca(USArrests, k = 2, eps = Inf))
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), "dp_pca() takes a formula first, then the data: USArrests is a data frame. Write dp_pca(~ ., USArrests, ...)",
               fixed = TRUE)
  out <- capture.output(print(f))
  expect_false(any(grepl("privately released", out)))
  expect_true(any(grepl("Decomposed: the covariance about the mean of the rows (non-private, as prcomp)", out, fixed = TRUE)))
  fd <- dp_pca(~ Murder + Assault, USArrests, k = 1, eps = 1, delta = 1e-5,
               bounds = list(Murder = c(0, 20), Assault = c(0, 400)), seed = 1)
  expect_true(any(grepl("privately released mean", capture.output(print(fd)), fixed = TRUE)))
})

test_that("dp_gmm at eps = Inf is refused naming mclust::Mclust, and its help says eps must be finite", {
  skip_if_no_dpstats()
  err <- ff(dp_gmm(~ eruptions + waiting, faithful, k = 2, eps = Inf,
                   bounds = list(eruptions = c(1, 6), waiting = c(40, 100))))
  expect_s3_class(err, "dpstats_privacy_parameter_error")
  expect_match(conditionMessage(err), "no non-private reference at eps = Inf", fixed = TRUE)
  expect_match(conditionMessage(err), "mclust::Mclust(data, G = k)", fixed = TRUE)
  rd <- tools::Rd_db("dpstats")[["dp_gmm.Rd"]]
  txt <- paste(capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))), collapse = " ")
  expect_match(txt, "eps must be finite", fixed = TRUE)
})

test_that("predict(type = 'terms') of a dp_select_infer fit is a dpstats error naming its types", {
  skip_if_no_dpstats()
  set.seed(3)
  df <- data.frame(matrix(rnorm(400 * 4), 400, 4))
  df$y <- df$X1 + rnorm(400)
  fit <- suppressWarnings(dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-6, k = 1, bounds = c(-5, 5), seed = 1))
  nd <- df[1:2, ]
  expect_identical(predict(fit, nd, type = "link"), predict(fit, nd))
  err <- tryCatch(predict(fit, nd, type = "terms"), error = identity)
  expect_s3_class(err, "dpstats_argument_error")
  expect_match(conditionMessage(err), 'type is "link" or "response"', fixed = TRUE)
})
