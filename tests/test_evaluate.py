"""dpstats.evaluate: tidy comparisons, summaries, paired differences, report, command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats import evaluate as ev


def _gen(rng):
    return dp.datasets.fan_lv(n=100, d=300, random_state=rng)


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return ev.compare_selectors(
        _gen,
        ["dp_sis", "dp_two_stage", "sis_nonprivate"],
        [1.0, 30.0, 1000.0],
        k=[5, 8],
        trials=30,
        random_state=7,
    )


def test_tidy_shape_and_columns(results):
    assert list(results.columns) == ["method", "eps", "k", "trial", "accuracy", "TOP", "GREAT", "GOOD"]
    assert len(results) == 3 * 3 * 2 * 30
    assert results["accuracy"].between(0, 1).all()
    # utility classes are nested: TOP => GREAT => GOOD
    assert (results["GREAT"] >= results["TOP"]).all() and (results["GOOD"] >= results["GREAT"]).all()


def test_accuracy_rises_with_eps_and_meets_nonprivate(results):
    s = ev.summarise(results).set_index(["method", "k", "eps"])
    for k in (5, 8):
        low, high = s.loc[("dp_sis", k, 1.0)], s.loc[("dp_sis", k, 1000.0)]
        # rise by more than 3 combined standard errors
        assert high.accuracy - low.accuracy > 3 * np.hypot(high.accuracy_se, low.accuracy_se)
        ref = s.loc[("sis_nonprivate", k, 1000.0)]
        assert abs(high.accuracy - ref.accuracy) < 0.05


def test_difference_table_is_paired(results):
    diff = ev.difference_table(results, "dp_sis", "dp_two_stage")
    assert set(diff.columns) == {"k", "eps", "trials", "difference", "se", "z"}
    row = diff[(diff.k == 8) & (diff.eps == 1000.0)].iloc[0]
    a = results[(results.method == "dp_sis") & (results.k == 8) & (results.eps == 1000.0)]["accuracy"]
    b = results[(results.method == "dp_two_stage") & (results.k == 8) & (results.eps == 1000.0)]["accuracy"]
    assert row.difference == pytest.approx(a.mean() - b.mean())
    assert row.z > 2  # DP-SIS beats two-stage at eps = 1000 on this model


def test_fixed_data_truth_is_nonprivate_lasso():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 30))
    y = X[:, [3, 7, 11]] @ [4.0, -4.0, 4.0] + rng.normal(0, 0.5, 150)
    ranking = ev.lasso_truth(X, y)
    assert set(ranking[:3]) == {3, 7, 11} and sorted(ranking) == list(range(30))
    df = pd.DataFrame(X, columns=[f"v{j}" for j in range(30)]).assign(y=y)
    res = ev.compare_selectors(
        df, ["dp_sis:joint", "dp_two_stage:peeling"], [100.0], k=3, trials=5, random_state=1
    )
    assert set(res["method"]) == {"dp_sis:joint", "dp_two_stage:peeling"}
    assert res.loc[res.method == "dp_sis:joint", "accuracy"].mean() == 1.0


def test_accuracy_definition():
    assert ev.accuracy([1, 2, 3, 9, 10], [1, 2, 3, 4, 5, 6, 7, 8], 5) == 0.6  # k < |support|
    assert ev.accuracy([1, 2, 3], [1, 2], 3) == 1.0  # k > |support|


def test_resolve_method_errors():
    with pytest.raises(ValueError, match="unknown method"):
        ev.resolve_method("lasso")
    with pytest.raises(ValueError, match="unknown selector"):
        ev.resolve_method("dp_sis:laplace")
    assert ev.resolve_method("two_stage_nonprivate").selector is None


def test_comparison_report(results, tmp_path):
    path = ev.comparison_report(results, str(tmp_path / "cmp.html"), title="test comparison")
    html = open(path, encoding="utf-8").read()
    assert html.count("<svg") == 3  # two accuracy curves (k = 5, 8) and one heatmap
    assert "Difference heatmap: dp_sis − dp_two_stage" in html
    assert "Mean accuracy (standard error)" in html
    # privacy first: the statement precedes the results, and says the comparison is not private
    assert html.index('class="privacy-statement"') < html.index('class="results"')
    assert "eps-differentially private" in html and "NOT private" in html


@pytest.mark.browser
def test_comparison_report_renders_in_chromium(results, tmp_path, chromium):
    import subprocess

    path = ev.comparison_report(results, str(tmp_path / "cmp.html"))
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", f"file://{path}"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert dom.count("<svg") == 3 and "Difference heatmap" in dom


def test_command_line(tmp_path, capsys):
    out = tmp_path / "c.html"
    code = ev.main(["--trials", "2", "--d", "60", "--eps", "1,10", "--k", "5", "--out", str(out)])
    assert code == 0 and out.exists()
    assert "dp_two_stage" in capsys.readouterr().out
