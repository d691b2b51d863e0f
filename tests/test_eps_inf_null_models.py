"""The intercept-only model ``y ~ 1`` at eps = inf is R's null model (audit s16-rusers3, F01).

``step()``, ``drop1()`` and ``anova(null, fit)`` refit ``y ~ 1``; dp_lm and dp_glm refused it at every
eps.  At eps = inf it is now ``lm(y ~ 1)`` / ``glm(y ~ 1)``; a private fit still refuses it, before
anything is spent, saying so (validation.check_regression_rows).  Oracle: R's lm and glm on R's data sets.
"""

from __future__ import annotations

import math
import subprocess
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning

CASES = {  # formula, data set, dp_glm family (None: dp_lm), R's call
    "mpg ~ 1": ("mtcars", None, "lm(mpg ~ 1, mtcars)"),
    "am ~ 1": ("mtcars", "binomial", "glm(am ~ 1, binomial, mtcars)"),
    "count ~ 1": ("InsectSprays", "poisson", "glm(count ~ 1, poisson, InsectSprays)"),
}


def _r_values(rscript, tmp_path) -> dict[str, np.ndarray]:
    """Estimate, standard error and the deviance (lm: RSS) and AIC of each of R's fits."""
    lines = [
        f"f <- {call}; cat(format(c(coef(summary(f))[1, 1:2], deviance(f), AIC(f)), digits = 17), '\\n')"
        for _, _, call in CASES.values()
    ]
    script = tmp_path / "null.R"
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run([rscript, str(script)], check=True, capture_output=True, text=True, timeout=120)
    rows = [np.array(line.split(), float) for line in out.stdout.strip().splitlines()]
    return dict(zip(CASES, rows))


def test_intercept_only_models_at_eps_inf_are_rs_null_models(rscript, tmp_path):
    """Coefficient and standard error to 1e-8, deviance (RSS for lm) and AIC to 1e-8, relative."""
    from dpstats.rbridge import load_r_dataset

    want = _r_values(rscript, tmp_path)
    for formula, (data, family, _) in CASES.items():
        frame = load_r_dataset(data, "datasets")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            if family is None:
                fit = dp.dp_lm(formula, frame, eps=math.inf)
            else:
                fit = dp.dp_glm(formula, frame, eps=math.inf, family=family)
        g = fit.glance().iloc[0]
        got = [fit.coef().iloc[0], fit.tidy()["std.error"].iloc[0], g["deviance"], g["AIC"]]
        np.testing.assert_allclose(got, want[formula], rtol=1e-8, err_msg=formula)


@pytest.mark.parametrize("door", ["dp_lm", "dp_glm"])
def test_a_private_intercept_only_fit_is_refused_before_spending_and_says_where_it_is_fitted(door):
    rng = np.random.default_rng(0)
    df = {"y": (rng.uniform(size=500) > 0.5).astype(float)}
    acc = dp.Accountant(eps=5.0, delta=1e-3)
    with pytest.raises(dp.DataError, match=r"no private fit\). Nothing was spent. Fit it at eps = inf"):
        getattr(dp, door)("y ~ 1", df, eps=1.0, delta=1e-6, bounds={"y": (0, 1)}, accountant=acc)
    assert acc.spent_eps == 0 and acc.charges == []
