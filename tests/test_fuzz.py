"""Hypothesis fuzzing of every front door (issue 10, part 4).

For random formulas, data frames (NaN, inf, huge values, strings, categoricals,
booleans, empty, one row, duplicate and unicode names) and parameters (eps,
delta, k, bounds, seeds, neighbouring, strict — valid and invalid), each call
either succeeds or raises a ``DPStatsError`` subclass with a message; no other
exception escapes; no warning other than dpstats' own (its classes, or a plain
UserWarning from a dpstats check) is emitted; an error leaves the accountant
untouched and a success charges it exactly the statement's (eps, delta).

Examples per front door (``derandomize=True``, so CI runs the same examples):
dp_sis 120, dp_two_stage 40, dp_knockoff 50, dp_gmm 50, dp_felp 30,
vertical_glm 60, Accountant 200 (no shrinking, so a failure is reported as found).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dpstats.errors import ChanceWarning, DataWarning, DPStatsError, NonPrivateWarning, PrivacyParameterError
from dpstats.privacy.accountant import Accountant, LedgerEntry

FRONT_DOORS = ["dp_sis", "dp_two_stage", "dp_knockoff", "dp_gmm", "dp_felp", "vertical_glm"]
EXAMPLES = {
    "dp_sis": 120,
    "dp_two_stage": 40,
    "dp_knockoff": 50,
    "dp_gmm": 50,
    "dp_felp": 30,
    "vertical_glm": 60,
}


# ----------------------------------------------------------------------------- strategies
# Every strategy is "mostly valid": a well-formed input with probability 7/8, so that calls
# reach the deep code paths, and otherwise one of many malformed variants.
NAMES = ["y", "x1", "x2", "x3", "g", "é", "x y", "日本", "a.b", "1x", "y"]
finite = st.floats(-1e3, 1e3, allow_nan=False)
wild = st.one_of(
    finite,
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.just(1e308),
    st.just(-1e300),
    st.just(0.0),
)


def mostly(valid, invalid):
    """``valid`` seven times in eight, ``invalid`` otherwise."""
    # Hypothesis favours small integers, so the rare branch is the largest value
    return st.integers(0, 7).flatmap(lambda i: invalid if i == 7 else valid)


@st.composite
def odd_column(draw, n: int):
    kind = draw(st.sampled_from(["wild", "int", "str", "cat", "bool", "const"]))
    if kind == "wild":
        return draw(st.lists(wild, min_size=n, max_size=n))
    if kind == "int":
        return draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    if kind == "bool":
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if kind == "const":
        return [1.0] * n
    values = draw(st.lists(st.sampled_from(["a", "b", "c", "ü", ""]), min_size=n, max_size=n))
    return pd.Categorical(values) if kind == "cat" else values


@st.composite
def frames(draw, response: str = "numeric", p_range: tuple[int, int] = (2, 6)):
    """A numeric frame y, x1..xp (y binary or a factor when asked), then 0-2 corruptions."""
    p = draw(st.integers(*p_range))
    n = draw(st.sampled_from([60, 120, 120, 300])) + 5 * p
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p)) * draw(st.sampled_from([1.0, 1.0, 10.0, 1e6]))
    y = X[:, 0] + 0.5 * rng.standard_normal(n)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    if response == "binary":
        y = (y > np.median(y)).astype(float)
    elif response == "factor":
        y = np.where(y > np.median(y), "yes", "no")
    frame.insert(0, "y", y)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        what = draw(st.sampled_from(["nan", "inf", "huge", "column", "rows", "names", "duplicate", "dtype"]))
        i, j = draw(st.integers(0, n - 1)) % max(1, len(frame)), draw(st.integers(0, p))
        if what in ("nan", "inf", "huge") and len(frame):
            col = frame.columns[j]
            values = frame.iloc[:, j].astype(object).tolist()
            values[i] = {"nan": math.nan, "inf": math.inf, "huge": 1e308}[what]
            frame = frame.drop(columns=col).assign(**{str(col): values}) if isinstance(col, str) else frame
        elif what in ("nan", "inf", "huge"):
            continue
        elif what == "column":
            frame[draw(st.sampled_from(NAMES))] = draw(odd_column(len(frame)))
        elif what == "rows":
            frame = frame.iloc[: draw(st.sampled_from([0, 1, 2, 5]))]
        elif what == "names":
            frame.columns = [draw(st.sampled_from(NAMES)) for _ in frame.columns]
        elif what == "duplicate":
            frame.columns = [*frame.columns[:-1], frame.columns[0]]
        else:
            frame[frame.columns[j]] = frame[frame.columns[j]].astype(str)
    return frame


@st.composite
def formulas(draw, frame: pd.DataFrame, one_sided: bool = False):
    cols = [str(c) for c in frame.columns] or ["x"]
    a, b = draw(st.sampled_from(cols)), draw(st.sampled_from(cols))
    lhs = "" if one_sided else "y"
    good = [
        f"{lhs} ~ .",
        f"{lhs} ~ {a} + {b}",
        f"{lhs} ~ . - {a}",
        f"{lhs} ~ {a}*{b}",
        f"{lhs} ~ log({a})",
        f"{lhs} ~ I({a}^2) + {b}",
        f"{lhs} ~ 0 + {a} + {b}",
    ]
    bad = [
        "",
        "~",
        "y ~",
        "y ~ nonexistent",
        "~ ~",
        "y ~ (",
        f"{a} ~ .",
        "text",
        f"{lhs} ~ C({a})",
        "y ~ ." if one_sided else "~ .",
    ]
    choice = draw(mostly(st.sampled_from([good[0], good[0], *good]), st.sampled_from(bad)))
    if draw(st.integers(0, 19)) == 0:
        return draw(st.one_of(st.none(), st.integers(), st.text(max_size=8)))
    return choice


eps_values = mostly(
    st.sampled_from([0.5, 1.0, 3.0, 8.0]),
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-2, 10),
        st.just("1"),
        st.none(),
        st.booleans(),
        st.just(0.0),
        st.just(math.inf),
    ),
)
delta_values = mostly(
    st.sampled_from([1e-6, 1e-3, 0.01]),
    st.one_of(st.floats(-1, 2), st.just(math.nan), st.none(), st.just("x"), st.just(0.0)),
)
bounds_values = mostly(
    st.sampled_from([None, (-1, 1), (-5.0, 5.0), {"x1": (-1, 1), "y": (-2, 2)}]),
    st.one_of(
        st.tuples(wild, wild),
        st.just((1, -1)),
        st.just("wide"),
        st.just((0,)),
        st.just({"nope": (0, 1), "y": (-1, 1)}),
        st.floats(-3, 20),
    ),
)
seeds = mostly(
    st.integers(0, 2**32), st.one_of(st.integers(-5, -1), st.just("seed"), st.just(1.5), st.booleans())
)
small_k = mostly(st.integers(1, 3), st.one_of(st.none(), st.integers(-1, 9), st.just(2.5), st.just("2")))
common = dict(
    neighbouring=mostly(st.sampled_from(["replace", "add_remove"]), st.sampled_from(["swap", None, 1])),
    replace_only=mostly(st.just("replace"), st.sampled_from(["add_remove", "swap", None])),
    strict=mostly(st.booleans(), st.sampled_from(["yes", None, 1])),
)


# ----------------------------------------------------------------------------- the property
def ours(w: warnings.WarningMessage) -> bool:
    """dpstats' own warnings: its classes, or a plain UserWarning (what its checks emit)."""
    return (
        issubclass(w.category, (NonPrivateWarning, DataWarning, ChanceWarning)) or w.category is UserWarning
    )


def check_call(fn, args: tuple, kwargs: dict) -> str:
    acc = Accountant(eps=20.0, delta=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs, accountant=acc)
        except DPStatsError as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message"
            assert acc.charges == [] and acc.spent_eps == 0 and acc.spent_delta == 0, (
                f"budget spent on error {type(exc).__name__}: {exc}"
            )
            outcome = "error"
        else:
            assert acc.spent_eps == pytest.approx(result.privacy.eps, rel=1e-12)
            assert acc.spent_delta == pytest.approx(result.privacy.delta, rel=1e-12, abs=1e-300)
            outcome = "ok"
    foreign = [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught if not ours(w)]
    assert not foreign, foreign
    return outcome


# no shrinking phase: a failing example is reported as found, which keeps the suite's time bounded
SETTINGS = dict(
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


# Budget exceptions are refused "without spending" by design and may be legitimately raised after an
# earlier data-dependent error path, so the one exception a *successful* run may not raise is covered
# by check_call's exact-charge assertion.


@settings(max_examples=EXAMPLES["dp_sis"], **SETTINGS)
@given(data=st.data())
def test_fuzz_dp_sis(data):
    fn = dpstats.dp_sis
    frame = data.draw(frames())
    kwargs = dict(
        eps=data.draw(eps_values),
        k=data.draw(small_k),
        bounds=data.draw(bounds_values),
        random_state=data.draw(seeds),
        oc_trials=0,
        neighbouring=data.draw(common["neighbouring"]),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame)), frame), kwargs)


@settings(max_examples=EXAMPLES["dp_two_stage"], **SETTINGS)
@given(data=st.data())
def test_fuzz_dp_two_stage(data):
    fn = dpstats.dp_two_stage
    frame = data.draw(frames())
    kwargs = dict(
        eps=data.draw(eps_values),
        k=data.draw(small_k),
        blocks=data.draw(mostly(st.sampled_from([None, 3, 5]), st.integers(-1, 1))),
        lam=data.draw(mostly(st.just(0.1), st.floats(-1, 2))),
        bounds=data.draw(bounds_values),
        random_state=data.draw(seeds),
        oc_trials=0,
        neighbouring=data.draw(common["neighbouring"]),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame)), frame), kwargs)


@settings(max_examples=EXAMPLES["dp_knockoff"], **SETTINGS)
@given(data=st.data())
def test_fuzz_dp_knockoff(data):
    fn = dpstats.dp_knockoff
    frame = data.draw(frames(p_range=(14, 24)))  # Method II needs p > 2 ln(2/delta_2)
    kwargs = dict(
        eps=data.draw(eps_values),
        delta=data.draw(mostly(st.just(0.01), delta_values)),
        fdr=data.draw(mostly(st.just(0.2), st.floats(-1, 2))),
        method=data.draw(mostly(st.sampled_from(["I", "II"]), st.sampled_from(["III", 2]))),
        bounds=data.draw(
            mostly(st.sampled_from([None, 2.0, 10.0]), st.one_of(st.floats(-2, 50), st.just(math.inf)))
        ),
        random_state=data.draw(seeds),
        oc_trials=0,
        neighbouring=data.draw(common["replace_only"]),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame)), frame), kwargs)


@settings(max_examples=EXAMPLES["dp_gmm"], **SETTINGS)
@given(data=st.data())
def test_fuzz_dp_gmm(data):
    fn = dpstats.dp_gmm
    frame = data.draw(frames())
    kwargs = dict(
        k=data.draw(small_k),
        eps=data.draw(eps_values),
        delta=data.draw(delta_values),
        bounds=data.draw(bounds_values),
        random_state=data.draw(seeds),
        oc_trials=0,
        neighbouring=data.draw(common["neighbouring"]),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame, one_sided=True)), frame), kwargs)


@settings(max_examples=EXAMPLES["dp_felp"], **SETTINGS)
@given(data=st.data())
def test_fuzz_dp_felp(data):
    fn = dpstats.dp_felp
    frame = data.draw(frames(response="factor"))
    kwargs = dict(
        eps=data.draw(eps_values),
        n_estimators=data.draw(mostly(st.integers(1, 3), st.integers(-1, 0))),
        variant=data.draw(mostly(st.sampled_from(["paper", "strict"]), st.just("other"))),
        bounds=data.draw(bounds_values),
        random_state=data.draw(seeds),
        oc_trials=0,
        neighbouring=data.draw(common["replace_only"]),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame)), frame), kwargs)


@settings(max_examples=EXAMPLES["vertical_glm"], **SETTINGS)
@given(data=st.data())
def test_fuzz_vertical_glm(data):
    fn = dpstats.vertical_glm
    dp_mode = data.draw(st.booleans())
    frame = data.draw(
        frames(response="binary" if dp_mode else data.draw(st.sampled_from(["numeric", "binary"])))
    )
    cols = [str(c) for c in frame.columns if str(c) != "y"]
    split = data.draw(st.integers(1, max(1, len(cols) - 1)))
    parties = data.draw(
        mostly(
            st.just([cols[:split], cols[split:]]),
            st.sampled_from([[cols], {"A": cols[:1], "B": ["zz"]}, "x1"]),
        )
    )
    families = ["binomial"] if dp_mode else ["gaussian", "binomial", "poisson"]  # DP mode: binomial ridge
    penalties = ["ridge"] if dp_mode else [None, "ridge", "lasso"]
    kwargs = dict(
        parties=parties,
        family=data.draw(mostly(st.sampled_from(families), st.just("gamma"))),
        penalty=data.draw(mostly(st.sampled_from(penalties), st.just("elastic"))),
        lam=data.draw(mostly(st.just(0.1), st.floats(-1, 2))),
        max_iter=50,
        eps=data.draw(eps_values) if dp_mode else None,
        delta=data.draw(delta_values) if dp_mode else None,
        bounds=data.draw(bounds_values),
        rounds=data.draw(mostly(st.integers(1, 3), st.integers(-1, 0))),
        random_state=data.draw(seeds),
        strict=data.draw(common["strict"]),
    )
    check_call(fn, (data.draw(formulas(frame)), frame), kwargs)


# ----------------------------------------------------------------------------- accountant
@settings(max_examples=200, **SETTINGS)
@given(
    total=st.tuples(eps_values, delta_values),
    spends=st.lists(
        st.tuples(
            st.one_of(st.floats(0, 3), st.floats(allow_nan=True, allow_infinity=True)),
            st.one_of(st.floats(0, 0.02), st.floats(-1, 1), st.just(math.nan)),
        ),
        max_size=6,
    ),
)
def test_fuzz_accountant(total, spends):
    # constructing fails only with PrivacyParameterError; a spend (NaN, negative, inf, or too large)
    # either fits or is refused with a DPStatsError and leaves the accountant unchanged; the spent
    # budget never exceeds the total and never decreases
    try:
        acc = Accountant(eps=total[0], delta=total[1])
    except DPStatsError:
        return
    for eps, delta in spends:
        before = (acc.spent_eps, acc.spent_delta, len(acc.charges))
        try:
            acc.spend([LedgerEntry("step", "Laplace", eps, delta)])
        except DPStatsError:
            assert (acc.spent_eps, acc.spent_delta, len(acc.charges)) == before
        assert acc.spent_eps <= acc.eps * (1 + 1e-12) and acc.spent_delta <= acc.delta + 1e-15
        assert acc.spent_eps >= before[0] and acc.spent_delta >= before[1]


def test_accountant_rejects_non_numbers():
    for bad in ["1", None, math.nan, -1, 0, True]:
        with pytest.raises(PrivacyParameterError):
            Accountant(eps=bad)
    with pytest.raises(PrivacyParameterError):
        Accountant(eps=1.0, delta="0")


def test_property_sees_foreign_exceptions_and_warnings():
    # the harness itself can fail: a TypeError escapes, a RuntimeWarning is flagged, a spend on error is caught
    def raises_type_error(*args, **kwargs):
        raise TypeError("boom")

    with pytest.raises(TypeError):
        check_call(raises_type_error, (), {})

    def warns(*args, **kwargs):
        warnings.warn("overflow", RuntimeWarning, stacklevel=2)
        raise PrivacyParameterError("bad eps")

    with pytest.raises(AssertionError, match="RuntimeWarning"):
        check_call(warns, (), {})

    def spends_then_fails(*args, accountant, **kwargs):
        accountant.spend([LedgerEntry("s", "Laplace", 1.0)])
        raise PrivacyParameterError("late check")

    with pytest.raises(AssertionError, match="budget spent on error"):
        check_call(spends_then_fails, (), {})
    assert np.isfinite(1.0)
