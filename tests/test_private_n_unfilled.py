"""A formula variable without a public fill makes n private: doors whose release needs the public n
refuse such a call before reading a row or spending; the others run with the step named.

Audit finding F4.  ``y ~ x1 + x2 + log(z)`` with bounds for ``log(z)`` but not ``z``: rows missing
``z`` are dropped (``z`` has no public fill), so the number of rows analysed is private.  Attacker's
view: two neighbouring data sets (one row's ``z`` made missing) and every channel a reader sees --
print, summary, tidy, glance, to_dict (JSON), the report's HTML, warnings and errors -- compared with
every integer kept (``neighbours.reader_view`` masks every number, which would hide a count), and
scanned for the secret counts (n analysed, its halves, n - p).
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from dpstats.privacy.accountant import Accountant

N, DROPPED = 400, 37
PLAIN = {"x1": (-1, 1), "x2": (-1, 1), "y": (-1, 1), "cls": (0, 1)}
BOUNDS = {**PLAIN, "log(z)": (-1, 1)}


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)
    df = pd.DataFrame(rng.uniform(-1, 1, (N, 2)), columns=["x1", "x2"])
    df["y"] = np.clip(0.5 * df.x1 - 0.4 * df.x2 + 0.3 * rng.standard_normal(N), -1, 1)
    df["cls"] = (df.y > 0).astype(float)
    df["z"] = np.exp(rng.uniform(-1, 1, N))
    df.loc[np.arange(DROPPED) * 7, "z"] = np.nan
    other = df.copy()
    other.loc[3, "z"] = np.nan  # one row replaced: its z is missing
    return df, other


NEEDS_N = {
    "dp_lm": (dp.dp_lm, "y ~ x1 + x2 + log(z)", dict(eps=2.0, delta=1e-5, n_boot=100)),
    "dp_glm": (dp.dp_glm, "cls ~ x1 + x2 + log(z)", dict(eps=4.0, delta=1e-5)),
    "dp_select_infer": (
        dp.dp_select_infer,
        "y ~ x1 + x2 + log(z)",
        dict(eps=2.0, delta=1e-5, k=1, n_boot=100),
    ),
    "dp_bh": (dp.dp_bh, "y ~ x1 + x2 + log(z)", dict(q=0.2, eps=2.0, sigma=1.0, max_rejections=2)),
    "vertical_glm": (
        dp.vertical_glm,
        "cls ~ x1 + x2 + log(z)",
        dict(
            parties=[["x1"], ["x2", "z"]],
            family="binomial",
            penalty="ridge",
            lam=0.1,
            eps=1.0,
            delta=1e-5,
            rounds=2,
        ),
    ),
}


def _call(func, formula, data, **kwargs):
    if func is dp.dp_bh:
        return func(formula, data=data, **kwargs)
    return func(formula, data, **kwargs)


def _outcome(func, formula, data, **kwargs) -> tuple[str | None, list[str], object]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = _call(func, formula, data, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is what the reader sees
            return f"{type(exc).__name__}: {exc}", sorted({str(w.message) for w in caught}), None
    return None, sorted({str(w.message) for w in caught}), fit


def channels(fit, tmp_path) -> dict[str, str]:
    """Every channel a reader sees of a fit, as text (the report's figures left out)."""
    d = fit.to_dict()
    d.pop("created", None)
    path = fit.report(tmp_path / f"{id(fit)}.html")
    html = re.sub(r"<svg.*?</svg>", "", open(path, encoding="utf-8").read(), flags=re.S)
    html = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?\S*", "<time>", html)  # when it was made
    return {
        "print": str(fit),
        "summary": str(fit.summary()),
        "tidy": fit.tidy().to_string(),
        "glance": fit.glance().to_string(),
        "to_dict": json.dumps(d, default=str, sort_keys=True),
        "report": html,
    }


_FLOAT = re.compile(r"[-+−]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")
_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")


def integers(text: str) -> list[str]:
    """The integers of a text, in order (real numbers, which a seed reproduces, left out)."""
    return _INT.findall(_FLOAT.sub("#", text))


def secret_counts(data: pd.DataFrame, p: int) -> set[int]:
    n = int(data["z"].notna().sum())
    return {n, n - p, n // 2, (n + 1) // 2}


@pytest.mark.parametrize("name", sorted(NEEDS_N))
@pytest.mark.parametrize("strict", [False, True])
def test_doors_needing_public_n_refuse_the_same_way_before_reading_or_spending(name, strict):
    func, formula, kwargs = NEEDS_N[name]
    one, other = _pair()
    seen = []
    for data in (one, other):
        acct = Accountant(eps=100.0, delta=0.5)
        error, caught, fit = _outcome(
            func, formula, data, bounds=BOUNDS, random_state=5, accountant=acct, strict=strict, **kwargs
        )
        assert fit is None and error is not None and error.startswith("PrivacyParameterError"), error
        assert acct.spent_eps == 0 and not acct.charges  # refused before any spend
        assert not any(str(s) in integers(error) for s in secret_counts(data, 4))
        seen.append((error, caught))
    assert seen[0] == seen[1]
    assert "'z'" in seen[0][0] and "needs declared bounds" in seen[0][0]


def test_the_refusal_reads_no_row():
    """The refusal is decided from the arguments and dtypes: a frame with no rows gets it."""
    empty = _pair()[0].iloc[:0]
    with pytest.raises(PrivacyParameterError, match=r"cannot drop rows with a missing value in 'z'"):
        dp.dp_lm("y ~ x1 + x2 + log(z)", empty, eps=1.0, delta=1e-5, bounds=BOUNDS)


def test_declaring_the_variable_lets_the_call_run():
    one, _ = _pair()
    fit = dp.dp_lm(
        "y ~ x1 + x2 + log(z)",
        one,
        eps=2.0,
        delta=1e-5,
        bounds={**BOUNDS, "z": (0, 3)},
        n_boot=100,
        random_state=1,
    )
    assert fit.n == N  # every row kept (z filled), n public
    assert not fit.privacy.data_dependent_steps


def test_a_non_private_reference_run_is_not_refused():
    one, _ = _pair()
    with pytest.warns(NonPrivateWarning):
        fit = dp.dp_lm("y ~ x1 + x2 + log(z)", one, eps=float("inf"), bounds=BOUNDS)
    assert fit.n == N - DROPPED


RUN_WITH_STEP = {
    "dp_sis": (dp.dp_sis, "y ~ x1 + x2 + log(z)", dict(eps=2.0, k=1, oc_trials=0)),
    "dp_gmm": (dp.dp_gmm, "~ x1 + log(z)", dict(k=2, eps=2.0, delta=1e-5, oc_trials=0, min_weight=1e-12)),
    "dp_felp": (
        dp.dp_felp,
        "cls ~ x1 + x2 + log(z)",
        dict(eps=1.0, n_estimators=2, variant="strict", oc_trials=0, levels=None),
    ),
}


@pytest.mark.parametrize("name", sorted(RUN_WITH_STEP))
def test_doors_running_with_the_step_name_it_and_show_no_count(name, tmp_path):
    func, formula, kwargs = RUN_WITH_STEP[name]
    one, other = _pair()
    one, other = one.assign(cls=one.cls.astype(int)), other.assign(cls=other.cls.astype(int))
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    bounds = BOUNDS
    if func is dp.dp_felp:  # the class column declared a factor
        one, other = one.assign(cls=one.cls.astype(str)), other.assign(cls=other.cls.astype(str))
        kwargs["levels"] = {"cls": ["0", "1"]}
        bounds = {k: v for k, v in BOUNDS.items() if k != "cls"}
    views = []
    for data in (one, other):
        error, caught, fit = _outcome(func, formula, data, bounds=bounds, random_state=5, **kwargs)
        assert error is None, error
        assert any("without declared bounds ('z')" in w for w in caught)
        texts = channels(fit, tmp_path)
        for channel, text in texts.items():
            hits = set(integers(text)) & {str(s) for s in secret_counts(data, 3)}
            assert not hits, (name, channel, hits)
        views.append(({k: integers(v) for k, v in texts.items()}, caught))
    for channel in views[0][0]:
        assert views[0][0][channel] == views[1][0][channel], (name, channel)
    assert views[0][1] == views[1][1]
    with pytest.raises(Exception, match="strict"):
        _call(func, formula, one, bounds=bounds, random_state=5, strict=True, **kwargs)


# ----------------------------------------------------------------------------- results blank what n gives
# The doors above refuse every call in which n would be private; these check the results' own rule
# (DPResult.withhold_n, released_n) by marking a fit's n private after the fact.  Its privacy
# statement was written for the public n it had, so the channels are read without it.
def result_channels(fit) -> dict[str, str]:
    d = fit.to_dict()
    for key in ("created", "privacy"):
        d.pop(key, None)
    for key in ("selection_ledger", "fit_ledger"):  # select_infer's parts' statements
        d.get("outputs", {}).pop(key, None)
    return {
        "print": str(fit).split("Privacy:")[0],
        "tidy": fit.tidy().to_string(),
        "glance": fit.glance().to_string(),
        "to_dict": json.dumps(d, default=str, sort_keys=True),
        "report": "".join(s["html"] for s in fit.report_sections() if "html" in s),
    }


def test_bh_formula_route_defers_to_the_base_rule_for_n():
    one, _ = _pair()
    fit = dp.dp_bh(
        "y ~ x1 + x2", data=one, q=0.2, eps=2.0, bounds=PLAIN, sigma=1.0, max_rejections=2, random_state=1
    )
    assert fit.released_n() == N
    fit.privacy.n_private = True  # as if rows had been dropped
    assert fit.released_n() is None
    assert "n not released" in fit.n_text()
    for channel, text in result_channels(fit).items():
        assert str(N) not in integers(text), channel


def test_select_infer_withholds_its_parts_sizes_and_inner_fits():
    one, _ = _pair()
    fit = dp.dp_select_infer(
        "y ~ x1 + x2", one, eps=2.0, delta=1e-5, k=1, bounds=PLAIN, n_boot=100, random_state=1
    )
    sizes = {str(fit.n_select), str(fit.n_infer), str(N), str(fit.n_infer - 2)}
    fit.privacy.n_private = True
    fit.withhold_n()
    assert fit.n_select is None and fit.n_infer is None
    assert fit.selection.n is None and fit.fit.n is None and fit.fit.df_residual is None
    for channel, text in result_channels(fit).items():
        assert not set(integers(text)) & sizes, channel


def test_vertical_glm_withholds_df_residual():
    one, _ = _pair()
    fit = dp.vertical_glm(
        "y ~ x1 + x2",
        one,
        parties=[["x1"], ["x2"]],
        family="gaussian",
        penalty="ridge",
        lam=0.1,
        eps=1.0,
        delta=1e-5,
        rounds=2,
        bounds=PLAIN,
        random_state=1,
    )
    assert fit.df_residual == N - 3
    fit.privacy.n_private = True
    fit.withhold_n()
    assert fit.df_residual is None
    for channel, text in result_channels(fit).items():
        assert not {str(N), str(N - 3)} & set(integers(text)), channel


# shared by tests/test_felp_read_classes.py and tests/test_vertical_binomial_clipped.py
BOUNDS_01 = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "x4": (-1, 1), "cls": (0, 1)}


def binary_pair(n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Neighbours with a 0/1 response: one row's response replaced by a value outside {0, 1}."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["cls"] = (df.x1 + 0.3 * rng.standard_normal(n) > 0).astype(float)
    other = df.copy()
    other.loc[9, "cls"] = 0.371  # one row replaced: a value outside {0, 1}
    return df, other


def run_caught(func, *args, **kwargs):
    """(error text or None, the distinct warnings, the result or None): what a reader sees of a call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is what the reader sees
            return f"{type(exc).__name__}: {exc}", sorted({str(w.message) for w in caught}), None
    return None, sorted({str(w.message) for w in caught}), fit
