"""dp_bh at eps = inf: R's p.adjust(method = "BH"), bit for bit, warned as every door's eps = inf.

Oracle: R's ``p.adjust(p, method = "BH")`` run by Rscript on the vectors below (the audit's F08 vector,
ties, a vector whose adjusted values sit exactly on q, missing values, all missing, one p-value, zeros
and ones, values outside [0, 1] as R takes them); R writes each adjusted p-value in hexadecimal
(``sprintf("%a")``), so equality is exact, not to a tolerance.  Rejected: adjusted p-value <= q.
"""

from __future__ import annotations

import math
import subprocess
import warnings

import numpy as np
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning, PrivacyParameterError

VECTORS = {
    "audit_f08": "{set.seed(1); c(runif(20), rbeta(10, 0.1, 10))}",
    "ties": "c(0.01, 0.01, 0.02, 0.02, 0.02, 0.04, 0.2, 0.2, 1)",
    "on_the_cut": "c(0.01, 0.02, 0.03, 0.04, 0.05)",
    "missing": "c(0.001, NA, 0.02, NA, 0.03, 0.9, 0.004)",
    "all_missing": "c(NA_real_, NA_real_)",
    "one": "0.04",
    "zeros_and_ones": "c(0, 1, 0.5, 0, 1e-300)",
    "outside": "c(-0.1, 0.2, 1.5, 0.01)",
    "many": "{set.seed(7); sort(c(rbeta(40, 0.2, 8), runif(260)))[sample(300)]}",
}
QS = (0.05, 0.1, 0.2)
R_SCRIPT = """
vectors <- list({vectors})
for (name in names(vectors)) {{
  p <- vectors[[name]]
  a <- p.adjust(p, method = "BH")
  cat(name, "|", paste(ifelse(is.na(p), "NA", sprintf("%a", p)), collapse = " "), "|",
      paste(ifelse(is.na(a), "NA", sprintf("%a", a)), collapse = " "), "\\n", sep = "")
}}
"""


def _hex(text: str) -> np.ndarray:
    return np.array([math.nan if v == "NA" else float.fromhex(v) for v in text.split()])


@pytest.fixture(scope="module")
def r_bh(rscript, tmp_path_factory) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each vector and R's p.adjust(method = "BH") of it, exactly."""
    script = tmp_path_factory.mktemp("bh") / "bh.R"
    script.write_text(R_SCRIPT.format(vectors=", ".join(f"{k} = {v}" for k, v in VECTORS.items())))
    out = subprocess.run([rscript, str(script)], check=True, capture_output=True, text=True, timeout=120)
    rows = {}
    for line in out.stdout.strip().splitlines():
        name, p, adjusted = line.split("|")
        rows[name] = (_hex(p), _hex(adjusted))
    assert set(rows) == set(VECTORS)
    return rows


def _inf_fit(p, q: float, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return dp.dp_bh(p, q=q, eps=math.inf, **kw)


@pytest.mark.r
@pytest.mark.parametrize("name", list(VECTORS))
def test_eps_inf_is_rs_p_adjust_bh(r_bh, name):
    p, adjusted = r_bh[name]
    for q in QS:
        fit = _inf_fit(p.tolist(), q)
        tidy = fit.tidy()
        np.testing.assert_array_equal(tidy["p.adjusted"].to_numpy(), adjusted)  # NaN where R has NA
        with np.errstate(invalid="ignore"):
            expected = [f"H{i + 1}" for i in np.flatnonzero(adjusted <= q)]
        assert fit.rejected == expected
        assert tidy["rejected"].tolist() == [f"H{i + 1}" in expected for i in range(p.size)]
        np.testing.assert_array_equal(tidy["p.value"].to_numpy(), p)  # as given: R's NA stays missing
        m = int(np.count_nonzero(~np.isnan(p)))
        assert fit.threshold == (q * len(expected) / m if expected else 0.0)


def test_eps_inf_is_warned_and_strict_refuses_it():
    with pytest.warns(NonPrivateWarning, match=r'eps = inf: .*p\.adjust\(method = "BH"\), NOT private'):
        fit = dp.dp_bh({"a": 0.001, "b": 0.3, "c": 0.02}, q=0.1, eps=math.inf)
    assert fit.rejected == ["a", "c"] and fit.route == "non-private"
    assert math.isinf(fit.privacy.eps) and "NOT private" in fit.privacy.ledger[0].step
    assert fit.to_dict()["outputs"]["adjusted_p_values"] == pytest.approx([0.003, 0.3, 0.03])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any warning
        with pytest.raises(PrivacyParameterError, match="strict=True refuses eps = inf"):
            dp.dp_bh([0.001, 0.3], eps=math.inf, strict=True)
        with pytest.raises(PrivacyParameterError, match="strict=True refuses eps = inf"):  # the formula's too
            dp.dp_bh(
                "y ~ x",
                data={"x": [1.0, 2.0, 3.0], "y": [0.0, 1.0, 0.0]},
                eps=math.inf,
                bounds=(0, 3),
                sigma=1,
                strict=True,
            )


def test_finite_eps_still_maps_missing_p_values_by_the_public_rule():
    """The private route is unchanged: NaN counts as 1 (never rejected), nothing checked on the values."""
    fit = dp.dp_bh([1e-12, np.nan, 0.5], q=0.1, eps=1.0, eta=0.01, max_rejections=2, random_state=0)
    assert "H2" not in fit.rejected and "p.adjusted" not in fit.tidy().columns


def _slopes(n: int = 2000, seed: int = 1):
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 6)), columns=[f"x{j}" for j in range(6)])
    df["y"] = np.clip(0.3 * df.x0 + 0.12 * df.x1 + rng.normal(0, 1, n), -4, 4)
    return df


FORMULA_BOUNDS = {**{f"x{j}": (-1, 1) for j in range(6)}, "y": (-4, 4)}


@pytest.mark.r
def test_formula_route_at_eps_inf_is_rs_p_adjust_of_the_exact_z_tests(rpy2_robjects):
    """The formula route at eps = inf: the marginal slope z-tests' p-values computed exactly (here from
    their definition, z_j = S_j/(σ·(W_j/2)·√n), S_j the centred cross product, p = 2Φ̄(|z|)), then R's
    p.adjust(method = "BH") of those p-values (through rpy2), rejected where it is at most q; warned."""
    from scipy.stats import norm

    ro = rpy2_robjects
    df, sigma, q = _slopes(), 1.05, 0.1
    with pytest.warns(NonPrivateWarning, match="eps = inf: .*marginal z-tests.*NOT private"):
        fit = dp.dp_bh("y ~ .", data=df, q=q, eps=math.inf, bounds=FORMULA_BOUNDS, sigma=sigma)
    x, y, n = df.iloc[:, :6].to_numpy(), df.y.to_numpy(), len(df)
    z = ((x - x.mean(0)) * (y - y.mean())[:, None]).sum(0) / (sigma * 1.0 * math.sqrt(n))  # W_j/2 = 1
    p = 2 * norm.sf(np.abs(z))
    np.testing.assert_allclose(fit.released_p_values, p, rtol=1e-10, atol=0)
    adjusted = np.asarray(ro.r["p.adjust"](ro.FloatVector(fit.released_p_values.tolist()), method="BH"))
    np.testing.assert_array_equal(fit.adjusted_p_values, adjusted)
    assert fit.rejected == [f"x{j}" for j in np.flatnonzero(adjusted <= q)] and "x0" in fit.rejected
    assert fit.privacy.eps == math.inf


def test_formula_route_at_eps_inf_is_refused_under_strict():
    with pytest.raises(PrivacyParameterError, match="strict=True refuses eps = inf"):
        dp.dp_bh("y ~ .", data=_slopes(), q=0.1, eps=math.inf, bounds=FORMULA_BOUNDS, sigma=1.0, strict=True)
