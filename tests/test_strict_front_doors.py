"""Every front door has a pure path: declared bounds and ``strict=True`` give no data-dependent step.

Issue 15 part 5.  For each front door (dp_sis, dp_two_stage, dp_knockoff Methods I
and II, dp_gmm, dp_felp with ``variant="strict"``, vertical_glm in DP mode, dp_pca, dp_lm, dp_select_infer)
a call with declared public bounds (and the other declared constants its pure path
needs: sigma, beta_norm, c_min, lambda_min for the knockoff filter) and
``strict=True``, run with NonPrivateWarning turned into an error, must

* emit no NonPrivateWarning,
* list no data-dependent step in any channel: ``privacy.data_dependent_steps``,
  ``to_dict()`` and its JSON, ``glance()``, ``str()``, ``summary()``, the plain
  language statement and ``_repr_html_``.

The converse: the same call without bounds warns (NonPrivateWarning, non-strict) and
is refused under ``strict=True`` before any budget is spent (an accountant's balance
is unchanged).  vertical_glm in DP mode refuses a call without bounds in both modes.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.api.pca import dp_pca
from dpstats.errors import NonPrivateWarning, PrivacyParameterError
from dpstats.simulate.felp import planted
from dpstats.simulate.gmm import simulate_gmm

# how each text channel shows data-dependent steps (asserted present by the converse test)
MARKERS = {
    "str": "data-dependent step(s) not covered",
    "summary": "Data-dependent steps (NOT covered by the guarantee):",
    "plain language": "does not cover these data-dependent steps",
    "html": "Not covered by the guarantee",
}


def _uniform_frame(n: int, p: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = X[:, :2].sum(1) / 2 + 0.3 * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df.insert(0, "y", np.clip(y, -1, 1))
    return df


def _binary_frame() -> pd.DataFrame:
    df = _uniform_frame(400, 6, seed=2)
    df["y"] = (df["y"] > 0).astype(float)
    return df


def _fan_lv(n: int = 100) -> pd.DataFrame:
    return dp.datasets.fan_lv(n=n, d=40, random_state=0)


def _mixture() -> pd.DataFrame:
    return simulate_gmm(6000, d=4, k=2, random_state=0)[0]


KNOCKOFF = dict(
    eps=0.7, delta=1e-4, bounds=6.5, sigma=0.3, beta_norm=1.0, c_min=35.0, lambda_min=0.5, oc_trials=0
)
VERTICAL = dict(
    parties=[["x1", "x2"], ["x3", "x4", "x5", "x6"]], penalty="ridge", lam=0.1, eps=0.7, delta=1e-6, rounds=3
)

# name -> (front door, data, args, keyword arguments of the pure path; "bounds" is the declared bound)
PURE = {
    "dp_sis": (dp.dp_sis, _fan_lv, ("y ~ .",), dict(eps=2.0, k=3, bounds=(-5, 5), oc_trials=0)),
    "dp_two_stage private_ols": (
        dp.dp_two_stage,
        _fan_lv,
        ("y ~ .",),
        dict(eps=2.0, k=3, second_stage="private_ols", bounds=(-5, 5), oc_trials=0),
    ),
    "dp_knockoff I": (
        dp.dp_knockoff,
        lambda: _uniform_frame(6000, 40, 1),
        ("y ~ .",),
        dict(KNOCKOFF, method="I"),
    ),
    "dp_knockoff II": (
        dp.dp_knockoff,
        lambda: _uniform_frame(6000, 40, 1),
        ("y ~ .",),
        dict(KNOCKOFF, method="II"),
    ),
    "dp_gmm": (dp.dp_gmm, _mixture, ("~ .",), dict(k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), oc_trials=10)),
    "dp_felp strict": (
        dp.dp_felp,
        lambda: planted(n=100, d=20, s=3, shift=2.0, random_state=0),
        ("class ~ .",),
        dict(eps=1.0, variant="strict", n_estimators=5, bounds=(-6, 6), oc_trials=0),
    ),
    "vertical_glm binomial DP": (
        dp.vertical_glm,
        _binary_frame,
        ("y ~ .",),
        # the 0/1 response declared: strict=True refuses a binomial response without a declaration
        dict(VERTICAL, family="binomial", bounds=(-1, 1), levels={"y": [0.0, 1.0]}),
    ),
    "vertical_glm gaussian DP": (
        dp.vertical_glm,
        lambda: _uniform_frame(400, 6, 3),
        ("y ~ .",),
        dict(VERTICAL, family="gaussian", bounds=(-1, 1)),
    ),
    "dp_pca": (dp_pca, _mixture, ("~ .",), dict(k=2, eps=1.0, delta=1e-6, bounds=(-12, 12))),
    "dp_lm": (
        dp.dp_lm,
        lambda: _uniform_frame(400, 6, 3),
        ("y ~ .",),
        dict(eps=1.0, delta=1e-6, bounds=(-1, 1), n_boot=200),
    ),
    "dp_glm": (
        dp.dp_glm,
        lambda: _uniform_frame(1000, 6, 3),
        ("y ~ .",),
        # below n = 1000 or eps = 5 refused (methods.glm (G5)); the response declared numbers, as strict needs
        dict(eps=8.0, delta=1e-6, bounds={**{f"x{j}": (-1, 1) for j in range(1, 7)}, "y": (0, 1)}),
    ),
    "dp_select_infer": (
        dp.dp_select_infer,
        _fan_lv,
        ("y ~ .",),
        dict(eps=2.0, k=3, bounds=(-5, 5), n_boot=200),
    ),
}


def _run(name: str, *, declared: bool, **extra):
    fn, data, args, kwargs = PURE[name]
    data = extra.pop("data", data)
    kwargs = dict(kwargs, random_state=0) | extra
    if not declared:
        kwargs.pop("bounds")
    return fn(*args[:1], data(), *args[1:], **kwargs)


def _budget() -> dp.Accountant:
    return dp.Accountant(eps=10.0, delta=1e-2)


def _texts(fit) -> dict[str, str]:
    return {
        "str": str(fit),
        "summary": str(fit.summary()),
        "plain language": fit.privacy.plain_language(),
        "html": fit._repr_html_(),
    }


@pytest.mark.parametrize("name", list(PURE))
def test_declared_bounds_and_strict_give_no_data_dependent_step(name):
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = _run(name, declared=True, strict=True, accountant=acc)
    assert fit.privacy.data_dependent_steps == []
    assert fit.privacy.covered
    assert acc.spent_eps == pytest.approx(fit.privacy.eps, rel=1e-12) and acc.spent_eps > 0
    as_dict = fit.to_dict()
    assert as_dict["privacy"]["data_dependent_steps"] == []
    assert json.loads(json.dumps(as_dict, allow_nan=False))["privacy"]["data_dependent_steps"] == []
    assert as_dict["glance"]["data_dependent_steps"] == 0
    assert int(fit.glance()["data_dependent_steps"].iloc[0]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # rendering warns about nothing (e.g. an empty plot)
        texts = _texts(fit)
    for channel, text in texts.items():
        for marker in MARKERS.values():
            assert marker not in text, f"{name}: {channel} shows {marker!r}"


# without bounds no variable has a public fill: doors whose release needs the public n refuse the call
# (dropping incomplete rows would make n private; audit F4), the others name the step
PUBLIC_N_REFUSED = ("dp_lm", "dp_glm", "dp_select_infer", "dp_bh")


@pytest.mark.parametrize(
    "name",
    [n for n in PURE if not n.startswith(("vertical_glm", "dp_two_stage") + PUBLIC_N_REFUSED)],
)
def test_without_bounds_warns_and_lists_the_step(name):
    with pytest.warns(NonPrivateWarning, match="data-dependent step"):
        fit = _run(name, declared=False)
    steps = fit.privacy.data_dependent_steps
    assert steps, name
    assert fit.to_dict()["privacy"]["data_dependent_steps"] == steps
    assert fit.to_dict()["glance"]["data_dependent_steps"] == len(steps)
    for channel, text in _texts(fit).items():
        assert MARKERS[channel] in text, f"{name}: {channel} does not show the data-dependent steps"


@pytest.mark.parametrize("name", [n for n in PURE if n.startswith(PUBLIC_N_REFUSED)])
def test_without_bounds_doors_needing_public_n_refuse_before_spending(name):
    acc = _budget()
    with pytest.raises(dp.PrivacyParameterError, match="cannot drop rows with a missing value"):
        _run(name, declared=False, accountant=acc)
    assert acc.spent_eps == 0


@pytest.mark.parametrize("name", list(PURE))
def test_without_bounds_strict_refuses_before_spending(name):
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        with pytest.raises(PrivacyParameterError):
            _run(name, declared=False, strict=True, accountant=acc)
    assert acc.spent_eps == 0 and acc.spent_delta == 0 and acc.charges == []


@pytest.mark.parametrize(
    "name", ["vertical_glm binomial DP", "vertical_glm gaussian DP", "dp_two_stage private_ols"]
)
def test_without_bounds_is_refused_even_when_not_strict(name):
    """Where bounds are the only way to a finite sensitivity, a missing bound is an error, not a warning."""
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        with pytest.raises(PrivacyParameterError, match="bounds"):
            _run(name, declared=False, accountant=acc)
    assert acc.spent_eps == 0 and acc.spent_delta == 0 and acc.charges == []


def test_two_stage_selection_needs_no_bounds_and_its_data_dependent_options_are_refused():
    """dp_two_stage's vote-and-select path uses no bounds (votes have sensitivity 1 or 2):
    pure without them; its data-dependent option (raw OLS) warns, and strict refuses it before
    spending.  (n-based blocks under add/remove are refused whether strict or not.)"""
    df = _fan_lv()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_two_stage("y ~ .", df, eps=2.0, k=3, strict=True, random_state=0, oc_trials=0)
    assert fit.privacy.data_dependent_steps == []
    for option, match in [({"second_stage": "ols"}, "NOT private")]:
        with pytest.warns(NonPrivateWarning, match=match):
            loose = dp.dp_two_stage("y ~ .", df, eps=2.0, k=3, random_state=0, oc_trials=0, **option)
        assert loose.privacy.data_dependent_steps
        acc = dp.Accountant(eps=10.0)
        with pytest.raises(PrivacyParameterError, match="strict=True refuses"):
            dp.dp_two_stage("y ~ .", df, eps=2.0, k=3, strict=True, accountant=acc, **option)
        assert acc.spent_eps == 0 and acc.charges == []


def test_knockoff_at_eps_inf_warns_only_that_it_is_not_private():
    """eps = inf calibrates no noise, so B from the data is no extra (spurious) data-dependent warning."""
    df = dp.datasets.fan_lv(n=400, d=10, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_knockoff("y ~ .", df, eps=float("inf"), delta=1e-6, random_state=1, oc_trials=0)
    assert [str(w.message) for w in caught] == [
        "eps = inf: the ordinary fixed-X knockoff filter, NOT private."
    ]
    assert fit.variant == "non-private" and fit.privacy.data_dependent_steps == []


def test_dp_bh_declared_eta_and_strict_give_no_data_dependent_step_and_the_default_is_refused():
    """dp_bh's pure path is a declared eta (its only calibration constant): with it and strict=True
    no channel lists a data-dependent step; without it strict=True refuses before any spend."""
    p = [1e-8, 0.003, 0.2, 0.6, 0.9]
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_bh(p, eps=1.0, eta=0.01, strict=True, accountant=acc, random_state=0)
    assert fit.privacy.data_dependent_steps == [] and fit.privacy.covered
    assert acc.spent_eps == pytest.approx(1.0)
    for channel, text in _texts(fit).items():
        for marker in MARKERS.values():
            assert marker not in text, f"dp_bh: {channel} shows {marker!r}"
    acc = _budget()
    with pytest.raises(PrivacyParameterError, match="strict=True refuses the default eta"):
        dp.dp_bh(p, eps=1.0, strict=True, accountant=acc)
    assert acc.charges == []


def test_dp_bh_formula_route_with_declared_bounds_and_sigma_is_strict_and_refuses_undeclared_bounds():
    """dp_bh's formula route: declared bounds and sigma give no data-dependent step under strict=True;
    without bounds it refuses (no data-range fallback exists), before any spend."""
    df = _uniform_frame(400, 6, 3)
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = dp.dp_bh(
            "y ~ .", data=df, eps=1.0, bounds=(-1, 1), sigma=0.6, strict=True, accountant=acc, random_state=0
        )
    assert fit.privacy.data_dependent_steps == [] and fit.privacy.covered
    for channel, text in _texts(fit).items():
        for marker in MARKERS.values():
            assert marker not in text, f"dp_bh formula: {channel} shows {marker!r}"
    spent = acc.spent_eps
    with pytest.raises(PrivacyParameterError, match="bounds= is needed"):
        dp.dp_bh("y ~ .", data=df, eps=1.0, sigma=0.6, strict=True, accountant=acc)
    assert acc.spent_eps == spent


# dp_lm refuses private bounds that would clip more than 5% of a column; these small data need most of a
# larger eps for bounds that cover them (n = 400: bounds_eps >= 4.61; dp_select_infer's part B of 50 rows
# would need 37, so it gets 2000 rows)
AUTO_ARGS = {
    "dp_lm": {"bounds": dp.AutoBounds(share=0.9), "eps": 6.0},
    "dp_select_infer": {"bounds": dp.AutoBounds(share=0.9), "eps": 6.0, "data": lambda: _fan_lv(2000)},
}


@pytest.mark.parametrize("name", [name for name in PURE if name != "dp_glm"])  # dp_glm refuses "auto"
def test_auto_bounds_and_strict_give_no_data_dependent_step(name):
    """bounds="auto" replaces every data-derived bound by a private one: strict passes, no
    NonPrivateWarning, and the ledger (and the accountant) carry the bounds step first."""
    acc = _budget()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateWarning)
        fit = _run(
            name, declared=True, strict=True, accountant=acc, **AUTO_ARGS.get(name, {"bounds": "auto"})
        )
    assert fit.privacy.data_dependent_steps == [] and fit.privacy.covered
    assert acc.spent_eps == pytest.approx(fit.privacy.eps, rel=1e-12)
    # dp_select_infer: each disjoint part releases its own bounds inside its own (full) budget
    parts = [fit.selection, fit.fit] if name == "dp_select_infer" else [fit]
    for part in parts:
        first = part.privacy.ledger[0]
        assert first.step.startswith("private bounds") and first.eps > 0
        assert part.to_dict()["private_bounds"]["eps"] == first.eps
    if name != "dp_select_infer":
        assert acc.ledger[0] == parts[0].privacy.ledger[0]
    for channel, text in _texts(fit).items():
        for marker in MARKERS.values():
            assert marker not in text, f"{name}: {channel} shows {marker!r}"
