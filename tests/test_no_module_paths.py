"""User-facing text says what to do in words, not where the code lives.

Errors, warnings, printed notes, plans and reports are read by statisticians (and, through the R
package, by R users, for whom a Python module path means nothing): none of them may cite a module
of the package (``dpstats.methods.glm``, ``methods.glm``), an internal equation code (``(G5)``), a
registry of the code (``dpstats.planner.AUTO_BOUNDS``) or a file (``tests/test_audit_felp.py``).
Each case runs a door or a plan whose refusal, warning or notes cited one, and scans every text
channel it has.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import AssumptionError, PrivacyParameterError
from dpstats.planner import MixtureModel
from dpstats.simulate import Assume

MODULE_PATH = re.compile(
    r"\bdpstats\.(?:methods|privacy|audit|results|api|formula|stats|geometry)\b"
    r"|\bdpstats\.planner\.[A-Z_]{2,}\b"
    r"|(?<![\w.])(?:methods|privacy|planner)\.[a-z_]+"
    r"|\([A-Z][0-9]'?\)"
    r"|\b[\w/]+\.py\b"
    r"|\btests/"
)


def _assert_in_words(*texts: str) -> None:
    for text in texts:
        found = MODULE_PATH.search(text)
        assert found is None, f"module path {found.group(0)!r} in user-facing text: {text[:300]!r}"


def _channels(obj) -> list[str]:
    """Every text channel of a result or a plan: print, summary, tidy, to_dict."""
    texts = [str(obj), obj.tidy().to_string(), json.dumps(obj.to_dict(), default=str)]
    if hasattr(obj, "summary"):
        texts.append(str(obj.summary()))
    return texts


def _logistic(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-df.x1))).astype(int)
    return df


def test_dp_glm_refusal_in_words():
    df = _logistic(3000, 0)
    wide = df.assign(**{f"x{j}": df.x1 for j in range(3, 11)})
    terms = " + ".join(f"x{j}" for j in range(1, 11))
    with pytest.raises(AssumptionError, match="Nothing was spent") as err:
        dp.dp_glm(f"y ~ {terms}", wide, eps=1.0, delta=1e-6, bounds=(-4, 4), random_state=0)
    _assert_in_words(str(err.value))


def test_dp_glm_withheld_intervals_in_words(tmp_path):
    rng = np.random.default_rng(5)
    n = 40_000
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": 0.001 * rng.standard_normal(n)})
    df["y"] = (rng.random(n) < 0.5).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_glm(
            "y ~ x1 + x2", df, eps=1.0, delta=1e-6, bounds={"x1": (-1, 1), "x2": (-1, 1)}, random_state=3
        )
    assert fit.withheld
    html = open(fit.report(str(tmp_path / "glm.html"))).read()
    _assert_in_words(fit.withheld, *_channels(fit), *(str(w.message) for w in caught), html)


def test_dp_bh_notes_in_words():
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0, 1e-4, 5), rng.uniform(0, 1, 45)])
    fit = dp.dp_bh(p, eps=1.5, eta=0.01, random_state=0)
    df = pd.DataFrame(rng.uniform(-1, 1, (400, 3)), columns=["x1", "x2", "x3"])
    df["y"] = df.x1 + rng.uniform(-1, 1, 400)
    formula = dp.dp_bh("y ~ .", data=df, eps=1.0, bounds=(-2, 2), sigma=1.2, random_state=0)
    assert fit.privacy.notes and formula.privacy.notes
    _assert_in_words(*_channels(fit), *_channels(formula))


def test_dp_bh_strict_refusal_names_the_public_eta_helper():
    """The refusal of the default eta under strict=True pointed to dpstats.methods.bh; it names the
    exported helper, which is the package's own function."""
    with pytest.raises(
        PrivacyParameterError, match=r"eta=dpstats\.eta_two_sided_z\(delta_z, truncate\)"
    ) as err:
        dp.dp_bh([0.01, 0.2, 0.5], eps=1.0, strict=True)
    _assert_in_words(str(err.value))
    assert (
        dp.eta_two_sided_z is dp.methods.bh.eta_two_sided_z and dp.z_mean_delta is dp.methods.bh.z_mean_delta
    )
    assert {"eta_two_sided_z", "z_mean_delta"} <= set(dp.__all__)


def test_plan_notes_and_ledgers_in_words():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plans = [
            dp.plan("dp_glm", n=[5000, 50000], p=10, eps=[1.0, 4.0], delta=1e-6, family="poisson", trials=2,
                    random_state=1),
            dp.plan("dp_gmm", n=2000, p=2, eps=[1.0], delta=1e-6, trials=2, random_state=1,
                    assume=MixtureModel(k=2, separation=6.0)),
            dp.plan("vertical_glm", n=2000, p=4, eps=[1.0], delta=1e-6, lam=0.1, trials=2, random_state=0,
                    assume=Assume(signals=2, strength=0.5)),
        ]  # fmt: skip
    for pl in plans:
        _assert_in_words(*_channels(pl))


def test_plan_refusal_of_auto_bounds_in_words():
    with pytest.raises(PrivacyParameterError, match="bounds='auto' cannot be planned") as err:
        dp.plan("dp_two_stage", n=1000, p=20, eps=1.0, k=3, bounds="auto")
    _assert_in_words(str(err.value))


def test_felp_paper_variant_warning_and_refusal_in_words():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (40, 3)), columns=["a", "b", "c"]).assign(
        cls=lambda d: (d.a > 0).astype(int)
    )
    kw = dict(n_estimators=1, bounds=(-1, 1), random_state=0, oc_trials=0, max_iter=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_felp("cls ~ .", df, eps=2.0, variant="paper", **kw)
    assert any("variant='paper'" in str(w.message) for w in caught)
    with pytest.raises(PrivacyParameterError, match="strict=True refuses") as err:
        dp.dp_felp("cls ~ .", df, eps=2.0, variant="paper", strict=True, **kw)
    _assert_in_words(str(err.value), *(str(w.message) for w in caught), *_channels(fit))
