"""Budget atomicity and ledger exactness, for every front door (issue 10, part 5).

* A method charges exactly what its ledger lists: the accountant's spend equals
  the privacy statement's (eps, delta), entry for entry.
* An accountant shared across calls refuses the call that would exceed its
  budget before any data access (a data frame that records every access shows
  none) and spends nothing.
* Concurrent calls on one accountant from threads never overspend.
"""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats

from dpstats.errors import BudgetExceededError, PrivacyParameterError
from dpstats.privacy.accountant import Accountant, LedgerEntry

FRONT_DOORS = ["dp_sis", "dp_two_stage", "dp_knockoff", "dp_gmm", "dp_felp", "vertical_glm"]


def _gaussian_frame(n: int, p: int, seed: int = 0, signal: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = X[:, :signal].sum(1) / signal + 0.3 * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df.insert(0, "y", np.clip(y, -1, 1))
    return df


def _mixture_frame(n: int = 10_000, seed: int = 1) -> pd.DataFrame:
    from dpstats.simulate.gmm import simulate_gmm

    return simulate_gmm(n, d=3, k=2, random_state=seed)[0]


def _binary_frame(n: int = 400, p: int = 6, seed: int = 2, labels=(0.0, 1.0)) -> pd.DataFrame:
    df = _gaussian_frame(n, p, seed)
    df["y"] = np.where(df["y"] > 0, labels[1], labels[0])
    return df


# A valid call per front door: (args, kwargs) given a data frame; eps/delta are what is charged.
CALLS = {
    "dp_sis": lambda df: (("y ~ .", df), dict(eps=0.7, k=2, bounds=(-1, 1), random_state=0, oc_trials=0)),
    "dp_two_stage": lambda df: (
        ("y ~ .", df),
        dict(eps=0.7, k=2, bounds=(-1, 1), random_state=0, oc_trials=0),
    ),
    "dp_knockoff": lambda df: (
        ("y ~ .", df),
        dict(
            eps=0.7,
            delta=1e-3,
            bounds=1.0,
            sigma=0.3,
            beta_norm=1.0,
            c_min=5.0,
            lambda_min=0.5,
            random_state=0,
            oc_trials=0,
        ),
    ),
    "dp_gmm": lambda df: (
        ("~ .", df),
        dict(k=2, eps=0.7, delta=1e-6, bounds=(-12, 12), random_state=0, oc_trials=0),
    ),
    "dp_felp": lambda df: (
        ("y ~ .", df),
        dict(eps=0.7, bounds=(-1, 1), n_estimators=5, oc_trials=0, random_state=0),
    ),
    "vertical_glm": lambda df: (
        ("y ~ .", df),
        dict(
            parties=[["x1", "x2"], ["x3", "x4", "x5", "x6"]],
            family="binomial",
            penalty="ridge",
            lam=0.1,
            eps=0.7,
            delta=1e-6,
            bounds=(-1, 1),
            rounds=3,
            random_state=0,
        ),
    ),
}
DATA = {
    "dp_gmm": lambda: _mixture_frame(),
    "vertical_glm": lambda: _binary_frame(),
    "dp_felp": lambda: _binary_frame(200, 8, labels=("no", "yes")),
    "dp_knockoff": lambda: _gaussian_frame(3000, 20),
}


def _data(name: str) -> pd.DataFrame:
    return DATA.get(name, lambda: _gaussian_frame(200, 12))()


def _call(name: str, df, accountant):
    fn = getattr(dpstats, name)
    args, kwargs = CALLS[name](df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs, accountant=accountant), kwargs


# ----------------------------------------------------------------------------- ledger exactness
@pytest.mark.parametrize("name", FRONT_DOORS)
def test_charge_equals_ledger_exactly(name):
    acc = Accountant(eps=10.0, delta=1e-2)
    fit, kwargs = _call(name, _data(name), acc)
    ledger = fit.privacy.ledger
    # the accountant holds exactly one charge whose entries are the statement's ledger
    assert len(acc.charges) == 1 and acc.charges[0].entries == list(ledger)
    assert acc.spent_eps == math.fsum(e.eps for e in ledger) == pytest.approx(kwargs["eps"], rel=1e-12)
    assert acc.spent_delta == math.fsum(e.delta for e in ledger)
    assert fit.privacy.eps == pytest.approx(acc.spent_eps, rel=1e-12)
    assert fit.privacy.delta == pytest.approx(acc.spent_delta, rel=1e-12, abs=1e-300)
    assert all(e.eps >= 0 and e.delta >= 0 for e in ledger)


# ----------------------------------------------------------------------------- refusal before access
class RecordingFrame(pd.DataFrame):
    """A DataFrame that records every public attribute, item, length or iteration access."""

    _metadata = ["_access_log"]

    @property
    def _constructor(self):
        return pd.DataFrame  # derived frames are plain: only direct accesses are logged

    def _log(self, what: str) -> None:
        log = self.__dict__.get("_access_log")
        if log is not None:
            log.append(what)

    def __getattribute__(self, name):
        if not name.startswith("_"):
            object.__getattribute__(self, "_log")(name)
        return super().__getattribute__(name)

    def __getitem__(self, key):
        self._log(f"[{key!r}]")
        return super().__getitem__(key)

    def __len__(self):
        self._log("len")
        return super().__len__()

    def __iter__(self):
        self._log("iter")
        return super().__iter__()

    def __array__(self, *args, **kwargs):
        self._log("array")
        return super().__array__(*args, **kwargs)


def recording(df: pd.DataFrame) -> RecordingFrame:
    frame = RecordingFrame(df.copy())
    object.__setattr__(frame, "_access_log", [])
    return frame


@pytest.mark.parametrize("name", FRONT_DOORS)
def test_exhausted_accountant_refuses_before_any_data_access(name):
    df = _data(name)
    acc = Accountant(eps=1.0, delta=1e-2)
    acc.spend([LedgerEntry("earlier analysis", "Laplace", 0.5)], label="earlier")
    before = (acc.spent_eps, acc.spent_delta, len(acc.charges))
    frame = recording(df)
    with pytest.raises(BudgetExceededError):
        _call(name, frame, acc)  # needs eps = 0.7 > 0.5 left
    assert frame._access_log == [], f"{name} touched the data before refusing: {frame._access_log[:8]}"
    assert (acc.spent_eps, acc.spent_delta, len(acc.charges)) == before
    # control: the probe does see access when the call goes ahead
    probe = recording(df)
    _call(name, probe, Accountant(eps=10.0, delta=1e-2))
    assert probe._access_log, "the recording frame saw no access: the probe is broken"


@pytest.mark.parametrize("name", FRONT_DOORS)
@pytest.mark.parametrize("bad_seed", [-1, "seed", 1.5])
def test_invalid_random_state_spends_nothing(name, bad_seed):
    # bad input is rejected before the charge (DESIGN §4); found by the fuzz suite for several doors
    acc = Accountant(eps=10.0, delta=1e-2)
    fn = getattr(dpstats, name)
    args, kwargs = CALLS[name](_data(name))
    kwargs = {**kwargs, "random_state": bad_seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PrivacyParameterError, match="random_state"):
            fn(*args, **kwargs, accountant=acc)
    assert acc.charges == [] and acc.spent_eps == 0, f"{name} charged {acc.spent_eps} for a bad random_state"


def test_sequential_calls_stop_at_the_budget():
    acc = Accountant(eps=2.0)
    df = _data("dp_sis")
    for _ in range(2):
        _call("dp_sis", df, acc)  # 0.7 each -> 1.4
    with pytest.raises(BudgetExceededError, match="Nothing was spent"):
        _call("dp_sis", df, acc)  # 2.1 > 2.0
    assert acc.spent_eps == pytest.approx(1.4) and len(acc.charges) == 2


def test_nan_or_negative_spends_are_refused():
    # a NaN entry used to poison spent_eps (every later check compared NaN and passed) and a
    # negative entry refunded budget; both must be refused without spending
    acc = Accountant(eps=1.0)
    for entries in (
        [LedgerEntry("a", "Laplace", math.nan)],
        [LedgerEntry("a", "Laplace", -0.5)],
        [LedgerEntry("a", "Laplace", 0.9), LedgerEntry("b", "Laplace", -0.5)],
        [LedgerEntry("a", "Gaussian", 0.1, math.nan)],
    ):
        with pytest.raises(PrivacyParameterError):
            acc.spend(entries)
    with pytest.raises(PrivacyParameterError):
        acc.check(math.nan, 0.0)
    assert acc.charges == [] and acc.spent_eps == 0
    acc.spend([LedgerEntry("a", "Laplace", 0.9)])
    with pytest.raises(BudgetExceededError):
        acc.spend([LedgerEntry("b", "Laplace", 0.2)])


# ----------------------------------------------------------------------------- threads
def test_accountant_spend_is_atomic_under_contention():
    # 64 threads spend 0.1 each against eps = 1.0 after a barrier: exactly 10 succeed
    acc = Accountant(eps=1.0)
    barrier = threading.Barrier(64)
    outcomes = []

    def worker():
        barrier.wait()
        try:
            acc.spend([LedgerEntry("q", "Laplace", 0.1)])
            outcomes.append(True)
        except BudgetExceededError:
            outcomes.append(False)

    threads = [threading.Thread(target=worker) for _ in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(outcomes) == 10 and acc.spent_eps <= 1.0 + 1e-12


@pytest.mark.parametrize("name", ["dp_sis", "dp_two_stage"])
def test_concurrent_front_door_calls_never_overspend(name):
    # 8 threads call the front door (eps = 0.7 each) on one accountant of eps = 2.2: exactly 3 fit
    acc = Accountant(eps=2.2, delta=1e-3)
    df = _data(name)
    barrier = threading.Barrier(8)
    results, errors = [], []

    def worker():
        barrier.wait()
        try:
            results.append(_call(name, df, acc)[0])
        except BudgetExceededError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and len(errors) == 5
    assert acc.spent_eps == pytest.approx(2.1) and acc.spent_eps <= acc.eps
    assert len(acc.charges) == 3
