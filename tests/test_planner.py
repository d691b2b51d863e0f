"""The planner (issue 19): public inputs only, predictions with Monte Carlo SEs, targets, chance warnings.

Statistical checks here are fast; the agreement with the front doors on data drawn
from the assumed model is in tests/test_planner_validation.py (slow).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning, DataError, PrivacyParameterError
from dpstats.planner import FanLv, KnockoffModel
from dpstats.planner.core import Chance, Grid, Simulator, simulate_grid, solve
from dpstats.simulate import Assume

STRONG = Assume(signals=3, strength=1.0)


def _quiet_plan(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChanceWarning)
        return dp.plan(*args, **kwargs)


def test_plan_states_no_data_no_budget_and_the_model_in_every_channel(tmp_path):
    pl = _quiet_plan("dp_sis", n=200, p=100, eps=[5.0, 50.0], k=3, assume=STRONG, trials=20, random_state=0)
    text = str(pl)
    assert "no data was read; no budget was charged" in text
    assert STRONG.describe() in text and STRONG.describe() in pl.summary()
    d = json.loads(pl.to_json())
    assert d["statement"] == "no data was read; no budget was charged"
    assert d["assumption"] == STRONG.describe()
    assert pl.glance().iloc[0].budget_charged == 0.0
    html = open(pl.report(str(tmp_path / "plan.html")), encoding="utf-8").read()
    assert "no data was read; no budget was charged" in html and STRONG.describe() in html
    assert "<svg" in html and 'src="http' not in html and "<link" not in html  # self-contained


def test_tidy_has_one_row_per_method_n_eps_measure():
    pl = _quiet_plan(
        "dp_knockoff",
        n=[1000, 4000],
        p=10,
        eps=[0.5, 2.0, 8.0],
        trials=5,
        random_state=1,
        assume=KnockoffModel(signals=3, amplitude=3.5),
    )
    tidy = pl.tidy()
    assert len(tidy) == 2 * 2 * 3 * 2  # Methods I, II x n x eps x (power, fdr)
    assert list(tidy.columns[:7]) == ["method", "n", "eps", "measure", "estimate", "std.error", "trials"]
    assert not tidy.duplicated(["method", "n", "eps", "measure"]).any()
    assert set(tidy.method) == {"dp_knockoff (Method I)", "dp_knockoff (Method II)"}


def test_same_seed_same_plan_and_common_random_numbers_across_eps():
    kw = dict(n=100, p=300, eps=[2.0, 20.0, 200.0], k=4, assume=Assume(signals=4, strength=0.8), trials=30)
    a = _quiet_plan("dp_sis", random_state=5, **kw).table
    b = _quiet_plan("dp_sis", random_state=5, **kw).table
    assert a.equals(b)
    prec = a[a.measure == "precision"].sort_values("eps").estimate.to_numpy()
    assert prec[0] < prec[-1]  # more eps, more of the true signals (same data sets at every eps)


def test_sis_at_huge_eps_matches_nonprivate_screening_on_rows():
    """Oracle: non-private SIS on row data drawn from the model (numpy, no dpstats), 400 data sets.

    At eps = 1e7 the private top-k is the exact top-k, so the planner's precision must
    equal the non-private recovery rate within 2 combined standard errors.
    """
    n, d, k, s, b = 60, 40, 3, 3, 0.35
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(400):
        X = rng.standard_normal((n, d))
        y = b * X[:, :s].sum(axis=1) + rng.standard_normal(n)
        score = np.abs((X - X.mean(0)).T @ (y - y.mean()))
        hits.append(np.count_nonzero(np.argsort(-score)[:k] < s) / k)
    oracle, oracle_se = np.mean(hits), np.std(hits, ddof=1) / math.sqrt(len(hits))
    pl = dp.plan(
        "dp_sis", n=n, p=d, eps=1e7, k=k, assume=Assume(signals=s, strength=b), trials=400, random_state=3
    )
    row = pl.table[pl.table.measure == "precision"].iloc[0]
    assert 0.2 < oracle < 0.95  # neither trivial nor hopeless
    assert abs(row.estimate - oracle) <= 2 * math.hypot(row.std_error, oracle_se)


def test_chance_warning_on_the_dp_sis_paper_design():
    with pytest.warns(ChanceWarning, match="cannot beat chance"):
        pl = dp.plan("dp_sis", n=100, p=2000, eps=[1.0, 5.0], k=8, bounds=None, trials=40, random_state=0)
    assert isinstance(pl.assumption, str) and pl.assumption.startswith("the DP-SIS paper's design")
    assert "Warning: cannot beat chance" in str(pl)
    assert (~pl.tidy().query("measure == 'precision'").beats_chance.astype(bool)).all()


def test_chance_warning_says_worse_than_chance_when_the_numbers_show_it():
    """Audit s15, F07: the dp_lm design below predicts relative error about 2.8 (s.e. about 0.2) at
    eps = 0.5, chance level 1 (every slope reported as 0): many standard errors *worse* than chance,
    which the warning must say, not "within 2 SE of chance".  The dp_sis paper's design at small eps
    is within 2 SE of its chance level s/d, and that warning says so."""
    with pytest.warns(ChanceWarning) as caught:
        pl = dp.plan(
            "dp_lm", n=2000, p=5, eps=[0.5], delta=1e-6, trials=20, random_state=1,
            assume=Assume(signals=2, strength=0.5, correlation=0.6),
        )  # fmt: skip
    row = pl.tidy().query("measure == 'rel_error'").iloc[0]
    assert row.estimate - 1.0 > 2 * row["std.error"]  # the design is what the test is about
    text = str(caught[0].message)
    assert text == pl.chance_text()
    assert "dp_lm: predicted rel_error is more than 2 SE worse than chance" in text
    assert f"at eps = 0.5 ({row.estimate:.3g}, s.e. {row['std.error']:.2g})" in text
    assert "within 2 SE" not in text
    assert pl.flags.worse.tolist() == [True]
    with pytest.warns(ChanceWarning, match="predicted precision is within 2 SE of chance"):
        sis = dp.plan("dp_sis", n=100, p=2000, eps=[1.0], k=8, bounds=None, trials=40, random_state=0)
    flagged = sis.flags.query("measure == 'precision'").iloc[0]
    assert abs(flagged.estimate - flagged.chance) <= 2 * flagged.std_error and not flagged.worse
    assert "more than 2 SE worse" not in sis.chance_text()


def test_no_chance_warning_when_the_signal_is_strong():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChanceWarning)
        pl = dp.plan(
            "dp_sis",
            n=500,
            p=50,
            eps=[50.0],
            k=3,
            assume=Assume(signals=3, strength=1.0),
            trials=30,
            random_state=0,
        )
    assert len(pl.flags) == 0 and pl.tidy().query("measure == 'precision'").beats_chance.all()


def _toy(slope: float = 1.0) -> Simulator:
    """A simulator whose success probability is min(1, slope·eps/10), to test the solver against arithmetic."""

    def run(n, eps, rng, trials):
        prob = np.minimum(1.0, slope * eps / 10.0)[:, None]
        return {"acc": (rng.random((eps.size, trials)) < prob).astype(float)}

    return Simulator(method="toy", measures=("acc",), primary="acc", run=run, chance={"acc": Chance(0.0, "")})


def _verified(sol) -> None:
    """The value named was simulated, and its estimate's one-sided bound there reaches the target."""
    assert (sol.value, sol.estimate, sol.std_error) in [tuple(pt) for pt in sol.evaluated]
    assert sol.estimate - 1.6449 * sol.std_error >= sol.target
    assert (
        f"acc {sol.estimate:.3g} ± {sol.std_error:.2g} (Monte Carlo s.e.) simulated at that eps" in sol.text()
    )


def test_target_within_the_grid_is_bisected_and_verified():
    """acc = eps/10, so 0.6 at eps = 6; the 95% one-sided bound at 4000 trials (s.e. 0.0077) asks for an
    estimate of about 0.613, eps about 6.13.  Log-linear interpolation between 4 and 10 gave 6.3."""
    sim = _toy()
    grid = Grid(ns=[100], eps=[1.0, 4.0, 10.0], trials=4000, seed=0)
    table = simulate_grid([sim], grid)
    sol = solve(sim, "acc", 0.6, axis="eps", fixed=100, table=table, grid=grid, search=(0.01, 1000))
    assert sol.status == "within the grid, bisection on log eps to 2%"
    assert 6.0 < sol.value < 6.4
    _verified(sol)


def test_target_beyond_the_grid_is_bracketed_and_bisected():
    sim = _toy(slope=0.1)  # acc = eps/100: 0.6 at eps = 60
    grid = Grid(ns=[100], eps=[1.0, 2.0, 5.0], trials=4000, seed=0)
    table = simulate_grid([sim], grid)
    sol = solve(sim, "acc", 0.6, axis="eps", fixed=100, table=table, grid=grid, search=(0.01, 1000))
    assert sol.status == "bracketed beyond the grid, bisection on log eps to 2%"
    assert 60 <= sol.value < 64
    _verified(sol)


def test_unreachable_target_is_said_so():
    sim = _toy(slope=0.001)  # acc = eps/10^4
    grid = Grid(ns=[100], eps=[1.0, 2.0], trials=200, seed=0)
    table = simulate_grid([sim], grid)
    sol = solve(sim, "acc", 0.9, axis="eps", fixed=100, table=table, grid=grid, search=(0.5, 50))
    assert sol.value is None and "not reached" in sol.status and "50" in sol.status
    assert "not reached" in sol.text()


def test_target_through_the_front_door_and_n_axis():
    pl = _quiet_plan(
        "dp_knockoff",
        n=[2000, 8000],
        p=10,
        eps=1.0,
        variant="II",
        trials=20,
        random_state=0,
        assume=KnockoffModel(signals=3, amplitude=3.5),
        target={"power": 0.5},
    )
    (sol,) = pl.solutions
    assert sol.axis == "n" and sol.fixed == {"eps": 1.0}
    assert "Target:" in str(pl)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"method": "dp_lasso"},
            PrivacyParameterError,
            r"\['dp_sis', 'dp_two_stage', 'dp_knockoff', 'dp_gmm', 'dp_felp', 'vertical_glm', 'dp_lm', 'dp_glm'\]",
        ),
        ({"eps": [1.0, -1.0]}, PrivacyParameterError, "eps"),
        ({"eps": []}, PrivacyParameterError, "eps"),
        ({"n": 2}, DataError, "n must be a whole number >= 3"),
        ({"p": 1}, DataError, "p must be"),
        ({"k": 100}, DataError, "k"),
        ({"n": 2.5}, PrivacyParameterError, "n must be a whole number >= 3, got 2.5"),
        ({"n": "100"}, PrivacyParameterError, "n must be a whole number or a non-empty sequence"),
        ({"n": None}, PrivacyParameterError, "n must be a whole number or a non-empty sequence"),
        ({"n": []}, PrivacyParameterError, "n must be a whole number or a non-empty sequence"),
        ({"trials": 1}, PrivacyParameterError, "trials must be a whole number >= 2, got 1"),
        ({"trials": "5"}, PrivacyParameterError, "trials must be a whole number >= 2, got '5'"),
        ({"target": {"power": 0.8}}, PrivacyParameterError, "unknown measure"),
        ({"target": 1.5}, PrivacyParameterError, "target"),
        ({"bounds": "auto", "method": "dp_knockoff"}, PrivacyParameterError, "cannot yet predict"),
        ({"bounds": "auto", "method": "dp_two_stage"}, PrivacyParameterError, "cannot yet predict"),
        ({"bounds": (-1, 1)}, PrivacyParameterError, "bounds must be one of"),
        ({"assume": {"signals": 0, "strength": 1.0}}, PrivacyParameterError, "signals"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, match):
    base = {"method": "dp_sis", "n": 100, "p": 50, "eps": [1.0], "k": 3, "trials": 5, "random_state": 0}
    base.update(kwargs)
    with pytest.raises(error, match=match):
        dp.plan(base.pop("method"), **base)


def test_knockoff_needs_n_at_least_2p_and_fewer_signals_than_p():
    with pytest.raises(DataError, match="n >= 2p"):
        dp.plan("dp_knockoff", n=30, p=20, eps=1.0)
    with pytest.raises(DataError, match="signals must be < p"):
        dp.plan("dp_knockoff", n=100, p=10, eps=1.0, assume=KnockoffModel(signals=10))


def test_fan_lv_model_accepts_a_dict_and_states_itself():
    pl = _quiet_plan(
        "dp_sis",
        n=100,
        p=100,
        eps=[10.0],
        k=8,
        assume={"model": "fan_lv", "signals": 8},
        trials=5,
        random_state=0,
    )
    assert pl.assumption == FanLv().describe()


def test_cli_plan_prints_the_plan_and_writes_json(tmp_path, capsys):
    from dpstats.cli import main

    out = tmp_path / "plan.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChanceWarning)
        code = main(
            [
                "plan",
                "sis",
                "--n",
                "200",
                "--p",
                "100",
                "--eps",
                "5,50",
                "--signals",
                "3",
                "--strength",
                "1",
                "--arg",
                "k=3",
                "--trials",
                "10",
                "--seed",
                "0",
                "--target",
                "0.5",
                "--json",
                str(out),
            ]
        )
    assert code == 0
    printed = capsys.readouterr().out
    assert "no data was read; no budget was charged" in printed and "Target: dp_sis" in printed
    assert json.loads(out.read_text())["assumption"] == Assume(signals=3, strength=1.0).describe()


def test_cli_plan_bad_method_exits_2(capsys):
    from dpstats.cli import main

    assert main(["plan", "lasso", "--n", "100", "--p", "20", "--eps", "1"]) == 2
    assert "method must be one of" in capsys.readouterr().err


def test_two_stage_plan_has_the_front_doors_ledger_and_rises_with_eps():
    pl = _quiet_plan(
        "dp_two_stage",
        n=400,
        p=60,
        eps=[1.0, 50.0],
        k=2,
        assume=Assume(signals=2, strength=0.8),
        trials=15,
        random_state=0,
    )
    (entry,) = pl.ledger["dp_two_stage"]
    assert entry["sensitivity"].startswith("Δ∞ = 1") and "20 blocks" in entry["step"]
    prec = pl.table[pl.table.measure == "precision"].sort_values("eps").estimate.to_numpy()
    assert prec[-1] > prec[0]


def test_gmm_plan_reaches_the_bayes_accuracy_and_the_sampling_error_at_huge_eps():
    """Oracles: two unit spherical components 5 sd apart, equal weights: the Bayes rule classifies
    a share Φ(5/2) = 0.9938 correctly, and a component mean estimated from n/2 rows misses by
    E‖N(0, I₂·2/n)‖ = √(π/2)·√(2/n).  At eps = 1000 the plan must match both (tolerances 0.005
    and 20%; seed 0, 40 data sets)."""
    from scipy.stats import norm

    from dpstats.planner import MixtureModel

    n = 3000
    pl = _quiet_plan(
        "dp_gmm",
        n=n,
        p=2,
        eps=[1000.0],
        delta=1e-6,
        trials=40,
        random_state=0,
        assume=MixtureModel(k=2, separation=5.0),
    )
    got = pl.table.set_index("measure").estimate
    assert abs(got["accuracy"] - norm.cdf(2.5)) <= 0.005
    expected_error = math.sqrt(math.pi / 2) * math.sqrt(2 / n)
    assert abs(got["mean_error"] - expected_error) <= 0.2 * expected_error


def test_gmm_plan_warns_at_chance_and_improves_with_eps():
    from dpstats.planner import MixtureModel

    with pytest.warns(ChanceWarning, match="largest component"):
        pl = dp.plan(
            "dp_gmm",
            n=2000,
            p=2,
            eps=[0.01, 100.0],
            delta=1e-6,
            trials=8,
            random_state=1,
            assume=MixtureModel(k=2, separation=6.0),
        )
    acc = pl.table[pl.table.measure == "accuracy"].sort_values("eps").estimate.to_numpy()
    assert acc[1] > acc[0] + 0.2
    with pytest.raises(PrivacyParameterError, match="delta"):
        dp.plan("dp_gmm", n=2000, p=2, eps=1.0)


def test_auto_bounds_hook_spends_the_predicted_share_first(monkeypatch):
    """A registered predictor that spends half of eps on bounds: the plan at eps equals the declared plan at eps/2."""
    import dpstats.planner as planner

    calls = []

    def half(*, n, p, eps, model):
        calls.append(eps)
        return eps / 2, model, "half of eps on private bounds"

    monkeypatch.setitem(planner.AUTO_BOUNDS, "dp_sis", half)
    kw = dict(n=200, p=60, k=2, assume=Assume(signals=2, strength=0.3), trials=300, random_state=2)
    auto = _quiet_plan("dp_sis", eps=[40.0], bounds="auto", **kw).table
    declared = _quiet_plan("dp_sis", eps=[20.0], **kw).table
    a = auto[auto.measure == "precision"].iloc[0]
    d = declared[declared.measure == "precision"].iloc[0]
    assert calls == [40.0]
    assert 0.1 < d.estimate < 0.9
    assert abs(a.estimate - d.estimate) <= 2 * math.hypot(a.std_error, d.std_error)


def test_vertical_glm_plan_tends_to_the_nonprivate_ridge_error_and_warns_at_low_eps():
    """At eps = 1e8 the DP-mode plan's relative error must match the non-private ridge fit's
    (vertical_glm without eps, on 30 numpy-drawn data sets from the same model) within 2
    combined SEs; at eps = 1 the release is no better than reporting 0 and the plan warns."""
    n, beta = 2000, np.array([0.5, 0.5, 0.0, 0.0])
    with pytest.warns(ChanceWarning, match="reporting all slopes as 0"):
        pl = dp.plan(
            "vertical_glm",
            n=n,
            p=4,
            eps=[1.0, 1e8],
            delta=1e-6,
            lam=0.1,
            trials=30,
            random_state=0,
            assume=Assume(signals=2, strength=0.5),
        )
    rel = pl.table[pl.table.measure == "rel_error"].set_index("eps")
    rng = np.random.default_rng(5)
    errors = []
    for _ in range(30):
        X = rng.standard_normal((n, 4))
        df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
        df.insert(0, "y", X @ beta + rng.standard_normal(n))
        coef = dp.vertical_glm(
            "y ~ .", data=df, parties=[["x1", "x2"], ["x3", "x4"]], penalty="ridge", lam=0.1
        ).coef()
        errors.append(np.linalg.norm([coef[f"x{j + 1}"] - beta[j] for j in range(4)]) / np.linalg.norm(beta))
    oracle, oracle_se = np.mean(errors), np.std(errors, ddof=1) / math.sqrt(len(errors))
    assert abs(rel.loc[1e8, "estimate"] - oracle) <= 2 * math.hypot(rel.loc[1e8, "std_error"], oracle_se)
    assert rel.loc[1.0, "estimate"] > 1.0


# ------------------------------------------------------------------ dp_lm
def test_lm_plan_predicts_width_and_coverage_that_an_independent_run_reproduces():
    """dp.plan("dp_lm") against dp_lm on rows drawn here with numpy and statsmodels' OLS as the reference.

    Model: 2 of p = 3 slopes 0.5, noise sd 1, independent features, bounds ± 3 sd; n = 5000, eps = 1,
    delta = 1e-6; 40 planned and 40 independent data sets (seeds 0 and 1). The mean width ratio and the
    mean relative error agree within 3 combined Monte Carlo standard errors; coverage is near 0.95.
    """
    import statsmodels.api as sm

    model = Assume(signals=2, strength=0.5)
    pl = dp.plan("dp_lm", n=5000, p=3, eps=1.0, delta=1e-6, assume=model, trials=40, random_state=0)
    got = pl.tidy().set_index("measure")
    rng, beta, c = np.random.default_rng(1), np.array([0.5, 0.5, 0.0]), 3.0
    sd_y = math.sqrt(0.5 + 1.0)
    ratios, errors = [], []
    for t in range(40):
        X = rng.standard_normal((5000, 3))
        y = X @ beta + rng.standard_normal(5000)
        df = pd.DataFrame(np.clip(X, -c, c), columns=["x1", "x2", "x3"]).assign(
            y=np.clip(y, -c * sd_y, c * sd_y)
        )
        ols = sm.OLS(df["y"], sm.add_constant(df[["x1", "x2", "x3"]])).fit().conf_int().to_numpy()[1:]
        bounds = {"y": (-c * sd_y, c * sd_y), **{f"x{j}": (-c, c) for j in (1, 2, 3)}}
        fit = dp.dp_lm("y ~ .", df, eps=1.0, delta=1e-6, bounds=bounds, n_boot=200, random_state=t).tidy()[1:]
        ratios.append(np.median((fit["conf.high"] - fit["conf.low"]).to_numpy() / (ols[:, 1] - ols[:, 0])))
        errors.append(np.linalg.norm(fit["estimate"].to_numpy() - beta) / np.linalg.norm(beta))
    for measure, values in (("width_ratio", ratios), ("rel_error", errors)):
        se = math.hypot(got.loc[measure, "std.error"], np.std(values, ddof=1) / math.sqrt(len(values)))
        assert abs(got.loc[measure, "estimate"] - np.mean(values)) <= 3 * se, (measure, got.loc[measure])
    assert 0.85 <= got.loc["coverage", "estimate"] <= 1.0


def test_lm_plan_checks_its_inputs_and_states_its_mechanism():
    with pytest.raises(DataError, match=r"dp_lm needs n > p \+ 1"):
        dp.plan("dp_lm", n=4, p=3, eps=1.0)
    with pytest.raises(PrivacyParameterError, match="cannot be planned for dp_lm"):
        dp.plan("dp_lm", n=100, p=3, eps=1.0, bounds="auto")
    pl = dp.plan("lm", n=2000, p=3, eps=[1.0, 4.0], trials=4, random_state=2)
    assert pl.ledger["dp_lm"][0]["mechanism"] == "Laplace mechanism" and pl.settings["delta"] == 0.0
    assert "no data was read; no budget was charged" in str(pl)
    assert set(pl.tidy().measure) == {"rel_error", "width_ratio", "coverage"}


def test_a_knockoff_plan_prints_delta_as_a_number_and_only_when_given():
    """R prints a call's delta = 1e-06 as a number; an argument not given is not in the call (the notes say
    the default 2p/n)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = dp.plan("dp_knockoff", p=30, n=2000, eps=[1.0], delta=1e-6, trials=2, random_state=1)
        default = dp.plan("dp_knockoff", p=30, n=2000, eps=[1.0], trials=2, random_state=1)
    assert given.call["delta"] == 1e-6 and ", delta = 1e-06," in given.call_text()
    assert "delta" not in default.call and "delta" not in default.call_text()
    assert any("delta = 2p/n" in note for note in default.notes)
    assert any("delta = 1e-06" in note for note in given.notes)
