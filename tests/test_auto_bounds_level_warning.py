"""bounds="auto" that n·eps cannot resolve warns before any draw (ChanceWarning), in every door that does
not refuse it, and print() states the quantile level (newcomer audit s14, finding 1).

The warning follows public inputs only: n (replace one row, nothing dropped), bounds_eps and the number
of quantiles; a neighbour with one row changed gets the same text, and with rows dropped for missing
values (na_action="omit") the text quotes no number that follows from n.  USEFUL_LEVEL = 0.75: below it
the upper bound's guaranteed empirical level, 2·level − 1, is under the median (privacy/bounds.py).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning, PrivacyParameterError
from dpstats.privacy.bounds import USEFUL_LEVEL

NAMES = [f"x{j}" for j in range(1, 6)]
FEW = " + ".join(NAMES)


def _rows(n: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, len(NAMES)))
    df = pd.DataFrame(X, columns=NAMES)
    df["y"] = 0.8 * X[:, 0] + 0.6 * X[:, 2] + rng.uniform(-0.5, 0.5, n)
    df["class"] = np.where(X[:, 0] + rng.normal(0, 0.5, n) > 0, "a", "b")
    return df


LEVELS = {"class": ["a", "b"]}
DOORS = {  # name -> (door, formula, arguments); every call spends eps = 2 (bounds: 10%)
    "dp_sis": (dp.dp_sis, f"y ~ {FEW}", {"eps": 2.0, "k": 2, "oc_trials": 0}),
    "dp_two_stage": (
        dp.dp_two_stage,
        f"y ~ {FEW}",
        {"eps": 2.0, "k": 2, "second_stage": "private_ols", "oc_trials": 0},
    ),
    "dp_knockoff": (dp.dp_knockoff, f"y ~ {FEW}", {"eps": 2.0, "delta": 1e-6, "oc_trials": 0}),
    "dp_gmm": (dp.dp_gmm, f"~ {FEW}", {"k": 2, "eps": 2.0, "delta": 1e-6, "oc_trials": 0}),
    "dp_felp": (
        dp.dp_felp,
        f"class ~ {FEW}",
        {"eps": 2.0, "n_estimators": 2, "variant": "strict", "oc_trials": 0, "levels": LEVELS},
    ),
    "dp_pca": (dp.dp_pca, f"~ {FEW}", {"k": 2, "eps": 2.0, "delta": 1e-6}),
    "vertical_glm": (
        dp.vertical_glm,
        f"class ~ {FEW}",
        {
            "parties": [NAMES[:2], NAMES[2:]],
            "family": "binomial",
            "penalty": "ridge",
            "lam": 0.1,
            "eps": 2.0,
            "delta": 1e-6,
            "rounds": 3,
            "levels": LEVELS,
        },
    ),
}


def _bounds_warnings(name: str, data: pd.DataFrame, **extra) -> tuple[list[str], object]:
    func, formula, kwargs = DOORS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = func(formula, data, bounds="auto", random_state=3, **(kwargs | extra))
        except dp.DPStatsError as err:  # a door's own later refusal (e.g. too few rows per block) is fine
            fit = err
    texts = [
        str(w.message) for w in caught if w.category is ChanceWarning and 'bounds="auto"' in str(w.message)
    ]
    return texts, fit


@pytest.mark.parametrize("name", list(DOORS))
def test_unresolvable_bounds_warn_with_public_inputs_and_the_fix(name):
    """n = 300, bounds_eps = 0.2: the bounds cannot reach level 0.75 in any door (fails on the old code)."""
    texts, _ = _bounds_warnings(name, _rows(300))
    assert len(texts) == 1, texts
    text = texts[0]
    assert "n = 300" in text and "bounds_eps = 0.2" in text and f"level {USEFUL_LEVEL:g}" in text
    assert "Declare public bounds=" in text and "raise bounds_eps" in text
    neighbour = _rows(300)
    neighbour.iloc[17, :5] = [0.99, -0.99, 0.5, 0.0, -0.3]  # one row replaced
    assert _bounds_warnings(name, neighbour)[0] == texts


@pytest.mark.parametrize("name", ["dp_sis", "dp_pca"])
def test_resolvable_bounds_do_not_warn_and_print_states_the_level(name):
    """A control: 20 000 rows resolve the bounds; print() shows the level (new) as summary() did."""
    texts, fit = _bounds_warnings(name, _rows(20_000))
    assert texts == []
    level = fit.private_bounds["level"]
    assert level >= USEFUL_LEVEL
    assert f"quantile level {level:g} and {1 - level:g}" in str(fit)


def test_print_states_the_level_of_noisy_bounds_too():
    texts, fit = _bounds_warnings("dp_sis", _rows(300))
    assert texts and "quantile level 0.5 and 0.5" in str(fit)


def test_with_rows_dropped_the_warning_quotes_nothing_that_follows_from_n():
    """na_action="omit": the number of complete rows (290 of 300) is private; neither it nor the level,
    the mode or the count of quantiles (all from it) is quoted, and the advice stays."""
    data = _rows(300)
    data.loc[:9, "x2"] = np.nan
    texts, _ = _bounds_warnings("dp_sis", data, na_action="omit")
    assert len(texts) == 1
    text = texts[0]
    for number in ("290", "300", "0.5", "quantiles"):
        assert number not in text.replace("bounds_eps = 0.2", "")
    assert "raise bounds_eps or n" in text


def test_the_warning_comes_before_any_draw_so_an_error_filter_spends_nothing():
    acc = dp.Accountant(eps=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        with pytest.raises(ChanceWarning):
            dp.dp_sis(f"y ~ {FEW}", _rows(300), eps=2.0, k=2, bounds="auto", accountant=acc, oc_trials=0)
    assert acc.spent_eps == 0 and acc.ledger == []


def test_doors_that_refuse_low_levels_refuse_instead_of_warning():
    """dp_lm and dp_select_infer need level 0.95: they refuse (as before), with no ChanceWarning first."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(PrivacyParameterError, match="Nothing was spent"):
            dp.dp_lm(f"y ~ {FEW}", _rows(300), eps=2.0, delta=1e-6, bounds="auto", n_boot=100)
    assert not [w for w in caught if w.category is ChanceWarning]
