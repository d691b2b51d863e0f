"""An error raised after a named data-dependent step says the step and quotes nothing read from the rows
(outside audit F6).

``api._common.run`` is the one place: an error escaping the frame or the plan once a step has been
named is re-raised, same class, with the steps appended (``DataDependence.refusal``), so the step's
NonPrivateWarning, held until the checks pass, is not lost.  The sites whose numbers depend on the rows
through such a step show none of them: dp_lm's and dp_glm's size check when levels were read from the
rows, and dp_knockoff's calibration checks when C_min or lambda_min(Sigma') is read from the rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.formula import LEVELS_READ_NOT_SHOWN

N = 40
RNG = np.random.default_rng(3)
BASE = pd.DataFrame(
    {"y": RNG.uniform(0, 9, N), "x1": RNG.uniform(0, 9, N).round(2), "x2": RNG.uniform(0, 9, N)}
)


def _with_text_cell(repeats: int) -> pd.DataFrame:
    """x1 read as text (one "n/a" cell: 40 levels), with ``repeats`` rows copying another row's value
    (one level fewer each)."""
    out = BASE.astype({"x1": object})
    out.loc[0, "x1"] = "n/a"
    for i in range(1, 1 + repeats):
        out.loc[i, "x1"] = out.loc[1 + repeats, "x1"]
    return out


def _outcome(call, data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call(data)
            error = None
        except dp.DPStatsError as exc:
            error = (type(exc).__name__, str(exc))
    return error, sorted({(w.category.__name__, str(w.message)) for w in caught})


@pytest.mark.parametrize(
    "door",
    [
        lambda d: dp.dp_lm("y ~ x1 + x2", d, eps=1, bounds=(0.0, 10.0), random_state=1, n_boot=100),
        lambda d: dp.dp_glm("y ~ x1 + x2", d, eps=1, delta=1e-6, bounds=(0.0, 10.0), random_state=1),
    ],
    ids=["dp_lm", "dp_glm"],
)
def test_a_size_refusal_after_levels_read_from_the_rows_shows_no_count(door):
    # neighbours (replace one row): one text cell makes x1 a factor whose levels are read from the
    # rows; with 40 and with 39 levels the design has 41 and 40 columns for n = 40 rows: before the
    # fix the refusal read "n = 40 <= 41" on one and "n = 40 <= 40" on the other
    one, other = _outcome(door, _with_text_cell(0)), _outcome(door, _with_text_cell(1))
    assert one[0] is not None and one == other, (one, other)
    text = one[0][1]
    assert "n = 40" in text and "<=" not in text  # n is public; the number of columns is not shown
    assert f"(the number of its columns {LEVELS_READ_NOT_SHOWN})" in text
    assert (
        "Raised after a data-dependent step" in text and "the levels of 'x1' were read from the rows" in text
    )
    assert one[1] == []  # the step is said in the error, not given again as a warning


def test_a_call_that_runs_after_the_same_step_warns_it():
    # the neighbour with three repeated values has fewer columns than rows and runs: its step is warned
    _, caught = _outcome(
        lambda d: dp.dp_lm("y ~ x1 + x2", d, eps=1, bounds=(0.0, 10.0), random_state=1, n_boot=100),
        _with_text_cell(3),
    )
    assert any(c == "NonPrivateWarning" and "levels of 'x1' were read" in m for c, m in caught)


def test_an_error_before_any_step_is_left_as_it_was():
    with pytest.raises(dp.FormulaError) as err:
        dp.dp_lm("y ~ z", BASE, eps=1, bounds=(0.0, 10.0))
    assert "Raised after" not in str(err.value)


# ------------------------------------------------------------------ dp_knockoff without a declared c_min

KO_RNG = np.random.default_rng(0)
X = KO_RNG.uniform(-1, 1, (300, 30))
X[:, 0] = 0.0
X[:37, 0] = 1.0  # column w0 nearly empty: its norm is about sqrt(37), read from the rows
KO0 = pd.DataFrame(X, columns=[f"w{j}" for j in range(30)]).assign(y=KO_RNG.normal(size=300))
KO1 = KO0.copy()
KO1.loc[0, "w0"] = 0.0  # one entry fewer: C_min drops
KO_FORMULA = "y ~ " + " + ".join(f"w{j}" for j in range(30))


@pytest.mark.parametrize("lambda_min", [0.5, None], ids=["lambda_min declared", "lambda_min read"])
def test_knockoff_calibration_errors_read_the_same_on_neighbours(lambda_min):
    # the outside audit's pair (knockoff_cmin_error.py): C_min read from the rows.  Over a grid of row
    # bounds B, whenever both neighbours refuse they give the same text, and every refusal says the
    # step and shows no value read from the rows; before the fix D0 said "Theorem 5 needs ..." and
    # D1 "Assumption 3 fails ..." at B = 5.9
    def call(d, B):
        return dp.dp_knockoff(
            KO_FORMULA,
            d,
            eps=1,
            delta=1e-3,
            bounds=B,
            sigma=1.0,
            beta_norm=1.0,
            lambda_min=lambda_min,
            random_state=0,
            oc_trials=0,
        )

    refusals = 0
    for B in np.linspace(1.0, 7.0, 13):
        (e0, _), (e1, _) = _outcome(lambda d, b=B: call(d, b), KO0), _outcome(lambda d, b=B: call(d, b), KO1)
        for err in (e0, e1):
            if err is not None:
                refusals += 1
                assert (
                    "Raised after a data-dependent step" in err[1]
                    and "C_min, C_max taken from the data" in err[1]
                )
                assert "cannot be calibrated on these data" in err[1]
                read = "C_min read" if lambda_min is not None else "C_min and lambda_min(Sigma') read"
                assert f"with {read} from the rows" in err[1]
        if e0 is not None and e1 is not None:
            assert e0 == e1
    assert refusals > 0  # the grid reaches the refusals


def test_knockoff_row_checks_after_levels_read_show_no_column_count():
    # a factor whose levels are read from the rows (30 and 29 levels: 31 and 30 columns with x and z,
    # for n = 30 rows): n <= p gives one text without p on both neighbours
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"y": rng.normal(size=30), "g": [f"l{i}" for i in range(30)]})
    frame = frame.assign(x=rng.normal(size=30), z=rng.normal(size=30))
    fewer = frame.assign(g=frame.g.where(frame.index > 0, "l9"))
    call = lambda d: dp.dp_knockoff("y ~ g + x + z", d, eps=1, delta=1e-3, bounds=2.0, sigma=1, beta_norm=1)  # noqa: E731
    one, other = _outcome(call, frame), _outcome(call, fewer)
    assert one[0] is not None and one == other
    assert f"(the number of its columns {LEVELS_READ_NOT_SHOWN})" in one[0][1]
    assert "levels of 'g' were read" in one[0][1]


# ------------------------------------------------- numbers that depend on levels read from the rows (s14)

LV_RNG = np.random.default_rng(0)
LV = pd.DataFrame(
    {
        "x1": LV_RNG.uniform(-1, 1, 200),
        "y": LV_RNG.uniform(-1, 1, 200),
        "g": LV_RNG.choice(["a", "b", "c"], 200),
        "cls": (LV_RNG.random(200) < 0.4).astype(float),
    }
)
LV_NEW = LV.assign(g=LV.g.where(LV.index > 0, "d"))  # one row replaced: its g is a level no other row has
LV_BOUNDS = {"x1": (-1, 1), "y": (-1, 1)}


def _same_refusal_without(call, data, other, *shown):
    """Both neighbours refuse with one text that says the levels step and shows none of ``shown``."""
    one, two = _outcome(call, data), _outcome(call, other)
    assert one[0] is not None and one == two, (one, two)
    assert "levels of 'g' were read from the rows" in one[0][1]
    for text in shown:
        assert text not in one[0][1], (text, one[0][1])
    return one[0][1]


def test_glm_noise_refusal_after_levels_read_quotes_no_number():
    # outside audit s14-attack6 F2: with g's levels read, 3 against 4 levels gave "4 coefficients ... 0.182
    # ... raise eps to 5.6" against "5 coefficients ... 0.241 ... raise eps to 7.7"
    def call(d):
        return dp.dp_glm("cls ~ x1 + g", d, eps=0.3, delta=1e-6, bounds=LV_BOUNDS, random_state=5)

    text = _same_refusal_without(call, LV, LV_NEW, "coefficients:", "raise eps to", "n about")
    assert "cannot give intervals" in text and "declare the levels of every factor (levels=)" in text


def test_glm_noise_refusal_with_levels_declared_still_advises():
    # the same call with the levels declared quotes its numbers (public inputs only) and advises
    call = lambda d: dp.dp_glm(  # noqa: E731
        "cls ~ x1 + g", d, eps=0.3, delta=1e-6, bounds=LV_BOUNDS, levels={"g": ["a", "b", "c", "d"]}
    )
    error, _ = _outcome(call, LV)
    assert error is not None and "5 coefficients" in error[1] and "raise eps to" in error[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda d: dp.dp_sis("y ~ x1 + g", d, eps=1, k=5, bounds=LV_BOUNDS, oc_trials=0),
        lambda d: dp.dp_two_stage("y ~ x1 + g", d, eps=1, k=5, bounds=LV_BOUNDS, oc_trials=0),
        lambda d: dp.dp_sis("y ~ x1 + g", d, eps=1, k="5", bounds=LV_BOUNDS, oc_trials=0),
    ],
    ids=["dp_sis", "dp_two_stage", "dp_sis k not whole"],
)
def test_k_against_columns_after_levels_read_quotes_no_column_count(call):
    # 3 and 4 levels: d = 3 and d = 4 candidate columns; before, "where d = 3" against "where d = 4"
    _same_refusal_without(call, LV, LV_NEW, "d = 3", "d = 4")


def test_pca_k_after_levels_read_quotes_no_column_count():
    from dpstats.api.pca import dp_pca

    call = lambda d: dp_pca("~ x1 + g", d, k=6, eps=1, delta=1e-5, bounds=LV_BOUNDS)  # noqa: E731
    assert f"(d {LEVELS_READ_NOT_SHOWN})" in _same_refusal_without(call, LV, LV_NEW, "<= 3", "<= 4")


def test_two_candidates_after_levels_read_quotes_no_column_count():
    # 'y ~ g' with levels {a, d} against {a}: 1 column against none (one read level gives no column)
    one_level = LV.assign(g="a")
    two_levels = one_level.assign(g=one_level.g.where(one_level.index > 0, "d"))
    call = lambda d: dp.dp_sis("y ~ g", d, eps=1, k=1, bounds=LV_BOUNDS, oc_trials=0)  # noqa: E731
    text = _same_refusal_without(call, one_level, two_levels, "gives 0", "gives 1")
    assert "at least 2 candidate columns" in text
    assert f"(the number of its columns {LEVELS_READ_NOT_SHOWN})" in text


def test_gmm_groups_after_levels_read_quote_no_column_count():
    # d = 3 against 4: "5·k·(d+1) = 40 rows; n = 200 with groups = 1" against "= 50 rows; ... groups = 0"
    def call(d):
        return dp.dp_gmm(
            "~ x1 + g", d, k=2, eps=1, delta=1e-5, bounds=LV_BOUNDS, method="sample_aggregate", oc_trials=0
        )

    _same_refusal_without(call, LV, LV_NEW, "= 40", "= 50", "groups =")


# ------------------------------------------- warnings and refusals whose numbers follow levels read (s14)


def _same_texts(call, data, other):
    """Both neighbours give one outcome (error and warnings, texts included); returns it."""
    one, two = _outcome(call, data), _outcome(call, other)
    assert one == two, (one, two)
    return one


def test_vertical_noise_warning_after_levels_read_quotes_no_scale():
    # party 2 holds x2 and g: 2 against 3 dummies moved its sigma_eta (232 against 276 at lam = 0.05)
    rng = np.random.default_rng(4)
    frame = LV.assign(x2=rng.uniform(-1, 1, len(LV)))
    call = lambda d: dp.vertical_glm(  # noqa: E731
        "cls ~ x1 + x2 + g", d, parties=[["x1"], ["x2", "g"]], family="binomial", penalty="ridge",
        lam=0.05, eps=1, delta=1e-6, bounds={"x1": (-1, 1), "x2": (-1, 1)}, random_state=1,
    )  # fmt: skip
    _, caught = _same_texts(call, frame, frame.assign(g=LV_NEW.g))
    chance = [m for c, m in caught if c == "ChanceWarning"]
    assert len(chance) == 1 and "dominated or biased by its noise" in chance[0]
    assert "sigma_eta =" not in chance[0] and "levels=" in chance[0]


def test_vertical_noise_warning_with_levels_declared_quotes_the_scales():
    rng = np.random.default_rng(4)
    frame = LV.assign(x2=rng.uniform(-1, 1, len(LV)))
    _, caught = _outcome(
        lambda d: dp.vertical_glm(
            "cls ~ x1 + x2 + g",
            d,
            parties=[["x1"], ["x2", "g"]],
            family="binomial",
            penalty="ridge",
            lam=0.05,
            eps=1,
            delta=1e-6,
            bounds={"x1": (-1, 1), "x2": (-1, 1)},
            levels={"g": ["a", "b", "c"]},
            random_state=1,
        ),  # fmt: skip
        frame,
    )
    assert any(c == "ChanceWarning" and "sigma_eta = " in m for c, m in caught)


@pytest.mark.parametrize("infer", ["lm", "glm"])
def test_select_infer_part_b_refusals_after_levels_read_quote_no_column_count(infer):
    # 20 rows, part B 10: 'g' with its levels read gives up to 9 against 10 columns at k = 2; before,
    # "up to 9 design columns ... more than 10 rows" (lm) and dp_glm's "9 coefficients" against "10"
    from dpstats.api.select_infer import dp_select_infer

    rng = np.random.default_rng(0)
    small = pd.DataFrame(
        {"x1": rng.uniform(-1, 1, 20), "x2": rng.uniform(-1, 1, 20), "y": rng.uniform(-1, 1, 20),
         "g": rng.choice(list("abcdefgh"), 20), "cls": (rng.random(20) < 0.4).astype(float)}
    )  # fmt: skip
    response = "cls" if infer == "glm" else "y"
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "y": (-1, 1), "cls": (0, 1)}
    call = lambda d: dp_select_infer(  # noqa: E731
        f"{response} ~ x1 + x2 + g", d, eps=1, delta=1e-5, k=2, infer=infer, bounds=bounds, random_state=1
    )
    for other in (
        small.assign(g=small.g.where(small.index > 0, "z")),
        small.assign(g=small.g.where(small.index > 0, "a")),
    ):
        one, two = _outcome(call, small), _outcome(call, other)
        for error, _ in (one, two):
            if error is not None:
                assert "levels of 'g' were read" in error[1]
                assert "design columns," not in error[1] and "coefficients:" not in error[1], error
        if one[0] is not None and two[0] is not None and one[0][0] == two[0][0]:
            assert one[0] == two[0]


@pytest.mark.parametrize("select", ["sis", "two_stage"])
def test_select_infer_selector_k_after_levels_read_quotes_no_column_count(select):
    # part A holds the design as numeric columns, so its selector said "where d = 4" against "d = 5"
    from dpstats.api.select_infer import dp_select_infer

    bounds = {"x1": (-1, 1), "y": (-1, 1)}
    call = lambda d: dp_select_infer(  # noqa: E731
        "y ~ x1 + g", d, eps=1, delta=1e-5, k=20, select=select, bounds=bounds, random_state=1
    )
    _same_refusal_without(call, LV, LV_NEW, "d = 3", "d = 4")


def test_select_infer_two_candidates_after_levels_read_quote_no_count():
    from dpstats.api.select_infer import dp_select_infer

    one_level = LV.assign(g="a")
    call = lambda d: dp_select_infer(  # noqa: E731
        "y ~ g", d, eps=1, delta=1e-5, k=1, bounds={"y": (-1, 1)}, random_state=1
    )
    two_levels = one_level.assign(g=one_level.g.where(one_level.index > 0, "d"))  # 0 against 1 column
    _same_refusal_without(call, one_level, two_levels, "gives 0", "gives 1")


def test_sis_custom_score_probe_after_levels_read_quotes_no_column_count():
    # the probe's "score() must return 3 numbers, got shape (3, 1)" against "4 ... (4, 1)"
    def call(d):
        return dp.dp_sis(
            "y ~ x1 + g",
            d,
            eps=1,
            k=1,
            score=lambda X, y: X.T @ y[:, None],
            score_sensitivity=1.0,
            oc_trials=0,
        )

    _same_refusal_without(call, LV, LV_NEW, "3 numbers", "4 numbers", "(3, 1)", "(4, 1)")


@pytest.mark.parametrize("n", [40, 4000])
def test_gmm_pre_spend_warnings_after_levels_read_quote_no_d(n):
    # k = 2 with d = 2 (levels a, b) against d = 3 (a, b, z): the private PCA is planned only when k < d,
    # which moved AboveThreshold's eps in the location warning; the vacuous warning said "d = 2" / "d = 3"
    rng = np.random.default_rng(2)
    two = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "g": rng.choice(["a", "b"], n)})
    three = two.assign(g=two.g.where(two.index > 0, "z"))

    def pre_spend(d):  # the warnings given before the spend (the one after it quotes a released weight)
        call = lambda d: dp.dp_gmm("~ x1 + g", d, k=2, eps=1, delta=1e-5, bounds={"x1": (-1, 1)}, oc_trials=0)  # noqa: E731
        return [m for c, m in _outcome(call, d)[1] if c == "ChanceWarning" and "released weight" not in m]

    chance = pre_spend(two)
    assert chance == pre_spend(three)
    assert bool(chance) == (n < 1000)  # at 4000 rows neither rule fires: the same (no) text
    assert all("d = " not in m and "levels=" in m for m in chance), chance


def test_bh_formula_route_after_levels_read_quotes_no_hypothesis_count():
    # m = 3 against 4 hypotheses: "max_rejections <= 3" against "<= 4", and the chance warning's numbers
    def call(d, **kw):
        return dp.dp_bh("y ~ .", data=d[["x1", "y", "g"]], q=0.1, eps=1.0, bounds={"x1": (-1, 1), "y": (-1, 1)},
                        sigma=1.0, random_state=0, **kw)  # fmt: skip

    _same_refusal_without(lambda d: call(d, max_rejections=10), LV, LV_NEW, "<= 3", "<= 4")
    _, caught = _same_texts(call, LV, LV_NEW)
    chance = [m for c, m in caught if c == "ChanceWarning"]
    assert len(chance) == 1 and "λ =" not in chance[0] and "levels=" in chance[0]


# ----------------------------------------------------------- messages after steps, third sweep (s14)


def test_select_infer_knockoff_refusal_names_the_steps_once():
    # part A's dp_knockoff refused after its own steps and dp_select_infer's run appended its levels
    # step again: "(Raised after ...)" twice.  Now one sentence names the outer steps, then part A's
    from dpstats.api.select_infer import dp_select_infer

    rng = np.random.default_rng(0)
    small = pd.DataFrame(
        {"x1": rng.uniform(-1, 1, 40), "x2": rng.uniform(-1, 1, 40), "y": rng.uniform(-1, 1, 40),
         "g": rng.choice(list("abc"), 40)}
    )  # fmt: skip
    call = lambda d: dp_select_infer(  # noqa: E731
        "y ~ x1 + x2 + g", d, eps=1, delta=1e-5, select="knockoff", random_state=1,
        bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-1, 1)},
    )  # fmt: skip
    text = _same_refusal_without(call, small, small.assign(g=small.g.where(small.index > 0, "z")))
    assert text.count("Raised after a data-dependent step") == 1, text
    levels, norms = text.index("levels of 'g' were read"), text.index("C_min, C_max taken from the data")
    assert levels < norms


@pytest.mark.parametrize("seed", [2, 3])
def test_bh_noisy_p_values_overflow_without_a_warning(seed):
    # eps = 0.01: a noisy log p-value can pass log(max float); numpy's "overflow encountered in exp" came
    # on one neighbour only (seed 2: on LV_NEW, seed 3: on LV).  Now neither warns and the value is inf
    def call(d):
        return dp.dp_bh("y ~ .", data=d[["x1", "y", "g"]], q=0.1, eps=0.01, bounds=LV_BOUNDS, sigma=1.0,
                        random_state=seed)  # fmt: skip

    for data in (LV, LV_NEW):
        error, caught = _outcome(call, data)
        assert error is None and not any(c == "RuntimeWarning" for c, _ in caught), caught
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noisy = [call(d).noisy_p_values for d in (LV, LV_NEW)]
    assert any(np.isinf(p).any() for p in noisy)  # the pair reaches the overflow


def _auto_bounds_call(door, **kw):
    from dpstats.api.select_infer import dp_select_infer
    from dpstats.privacy.bounds import AutoBounds

    bounds = AutoBounds(mode="per_column")  # 2 quantiles per design column and 2 for the response
    if door == "dp_lm":
        # dp_lm bounds the non-dummy columns: x1 and x1:g's, whose number follows g's levels
        return lambda d: dp.dp_lm("y ~ x1 * g", d, eps=1, bounds=bounds, random_state=1, n_boot=100, **kw)
    return lambda d: dp_select_infer(
        "y ~ x1 + g", d, eps=1, delta=1e-5, k=1, bounds=bounds, random_state=1, **kw
    )


@pytest.mark.parametrize("door", ["dp_lm", "dp_select_infer"])
def test_auto_bounds_refusal_after_levels_read_quotes_no_quantile_count(door):
    # per-column private bounds draw 2d + 2 quantiles: with g's levels read, "(8 private quantiles)"
    # against "(10 ...)" on both doors (dp_lm: x1 and 2 against 3 columns of x1:g; dp_select_infer: its
    # 3 against 4 candidates), with the level, the rows and the bounds_eps that would do following them
    text = _same_refusal_without(
        _auto_bounds_call(door), LV, LV_NEW, "private quantiles)", "would need", "reaches from"
    )
    assert 'bounds="auto"' in text and "levels=" in text and "Nothing was spent" in text


def test_auto_bounds_refusal_with_levels_declared_quotes_its_numbers():
    error, _ = _outcome(_auto_bounds_call("dp_lm", levels={"g": ["a", "b", "c", "d"]}), LV)
    assert error is not None and "(10 private quantiles)" in error[1] and "bounds_eps would need" in error[1]


def test_felp_paper_chance_warning_with_rows_dropped_quotes_no_noise_scale():
    # no bounds: a missing x1 drops its row, so n is private; the paper variant's Δ = 2/(nλ) follows it:
    # "noise s.d. per weight 4 exceeds ..." on 10 rows against "4.444" on 9
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(-1, 1, (10, 3)), columns=["x1", "x2", "x3"]).assign(
        cls=rng.choice(["a", "b", "c"], 10)
    )
    call = lambda d: dp.dp_felp(  # noqa: E731
        "cls ~ x1 + x2 + x3", d, eps=1, variant="paper", lam=0.1, levels={"cls": ["a", "b", "c"]},
        oc_trials=0, random_state=1,
    )  # fmt: skip
    _, caught = _same_texts(call, frame, frame.assign(x1=frame.x1.where(frame.index > 0)))
    chance = [m for c, m in caught if c == "ChanceWarning"]
    assert len(chance) == 1 and "exceeds" not in chance[0] and "rows analysed" in chance[0], chance


# ---------------------------------- one text for a count that depends on levels read from the rows (s15)

LEVELS_READ_SITES = {
    "dp_sis k": lambda d: dp.dp_sis("y ~ x1 + g", d, eps=1, k=5, bounds=LV_BOUNDS, oc_trials=0),
    "dp_bh max_rejections": lambda d: dp.dp_bh(
        "y ~ x1 + g", data=d, eps=1, sigma=1.0, max_rejections=10, bounds=LV_BOUNDS
    ),
    "dp_sis score": lambda d: dp.dp_sis(
        "y ~ x1 + g",
        d,
        eps=1,
        k=1,
        bounds=LV_BOUNDS,
        oc_trials=0,
        score=lambda X, y: np.zeros(1),
        score_sensitivity=1.0,
    ),
    "dp_select_infer part B": lambda d: dp.dp_select_infer(
        "y ~ x1 + g", d.head(8), eps=1, k=2, bounds=LV_BOUNDS
    ),
    "dp_gmm warnings": lambda d: dp.dp_gmm(
        "~ x1 + g", d.head(50), k=2, eps=0.1, delta=1e-5, bounds=LV_BOUNDS, oc_trials=0, random_state=1
    ),
}


@pytest.mark.parametrize("call", list(LEVELS_READ_SITES.values()), ids=list(LEVELS_READ_SITES))
def test_a_count_hidden_after_levels_read_is_said_in_one_text(call):
    """Every text that leaves out a count following the number of design columns, because levels were
    read from the rows, gives the same reason and fix: :data:`dpstats.formula.LEVELS_READ_NOT_SHOWN`."""
    error, caught = _outcome(call, LV)
    texts = [error[1]] if error is not None else [m for c, m in caught if c == "ChanceWarning"]
    assert texts and all(LEVELS_READ_NOT_SHOWN in t for t in texts), texts
    assert "levels of 'g' were read from the rows" in " ".join([*texts, *(m for _, m in caught)])


def test_the_reason_is_written_once():
    """No module writes its own copy of the reason (the wordings it replaced included)."""
    import pathlib

    root = pathlib.Path(dp.__file__).parent
    copies = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        for phrase in ("levels read from the rows, so it is not shown", "so their number is not shown")
        if phrase in path.read_text(encoding="utf-8")
    ]
    assert copies == ["formula/__init__.py"]
