# The outside R user's audit (s13-ruser): R idioms that dpstats refused, answered otherwise than R, or
# documented wrongly. Oracles are R's own glm/lm/anova/drop1/predict on R's data sets.

esoph_rate <- transform(esoph, ntot = ncases + ncontrols)
ff <- function(x) tryCatch(x, error = function(e) e)

test_that("dp_glm fits offset() at eps = Inf as glm does (a Poisson rate model)", {
  skip_if_no_dpstats()
  f <- ncases ~ agegp + alcgp + offset(log(ntot))
  ref <- glm(f, family = poisson, data = esoph_rate, control = glm.control(epsilon = 1e-14))
  fit <- suppressWarnings(dp_glm(f, esoph_rate, family = poisson, eps = Inf))
  expect_equal(coef(fit), coef(ref), tolerance = 1e-7)
  expect_equal(vcov(fit), vcov(ref), tolerance = 1e-6)
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
