"""The demo's working and failing regimes, its computed explanations, its index and closing table.

The regimes are checked statistically against the simulation's truth (an independent oracle: set
arithmetic on the true support, not our own outputs), on fresh data sets and fresh noise:

* knockoffs, the paper's design at n = 100 000: Method II at eps = 1 controls the FDR at q = 0.2
  (mean FDP <= q + 2 s.e. over 12 data sets) with power >= 0.9; at eps = 0.1 the mean power is
  below 0.1 (under the model the demo states, about 0.01);
* DP-SIS, Fan–Lv at n = 3000, d = 2000, k = 8: at eps = 20 the true support is selected whole in
  at least 11 of 12 runs (30 of 30 seen), at eps = 1 fewer than one true signal per run on average
  (chance level 8·8/2000 = 0.03);
* two-stage, dp_gmm, DP-FELP, vertical_glm (DP mode) and dp_bh: each pair's regimes, oracle (the
  simulation's true support, means or coefficients) and tolerances are stated above its tests.

Every "why" sentence is checked to quote the results' own numbers (operating characteristics,
released noise scales, tidy tables) and the simulation's truth.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import dpstats as dp
from dpstats.demos import DemoReport
from dpstats.demos import knockoff as knockoff_demo
from dpstats.demos import sis as sis_demo
from dpstats.demos._index import closing_table, eps_spent, headline, render_index, report_rows

RUNS = 12


def _knockoff_fit(df, beta, bound, eps, seed, oc_trials=0):
    return dp.dp_knockoff(
        "y ~ .",
        df,
        eps=eps,
        delta=knockoff_demo.DELTA,
        fdr=knockoff_demo.FDR,
        bounds=bound,
        sigma=knockoff_demo.SIGMA,
        beta_norm=float(np.linalg.norm(beta)),
        c_min=0.9 * math.sqrt(len(df)),
        lambda_min=0.8,
        assume=dp.simulate.Assume(signals=knockoff_demo.SIGNALS, strength=knockoff_demo.AMPLITUDE)
        if oc_trials
        else None,
        oc_trials=oc_trials,
        random_state=seed,
    )


def _truth(beta) -> set[str]:
    return {f"x{j + 1}" for j in np.flatnonzero(beta)}


@pytest.mark.slow
def test_knockoff_demo_regimes_select_with_fdr_control_and_fail():
    fdp, power, power_fails = [], [], []
    for seed in range(RUNS):
        df, beta, bound = knockoff_demo.paper_design(knockoff_demo.N, seed=100 + seed)
        truth = _truth(beta)
        works = set(_knockoff_fit(df, beta, bound, knockoff_demo.WORKS_EPS, seed).selected)
        fails = set(_knockoff_fit(df, beta, bound, knockoff_demo.FAILS_EPS, seed).selected)
        fdp.append(len(works - truth) / max(1, len(works)))
        power.append(len(works & truth) / len(truth))
        power_fails.append(len(fails & truth) / len(truth))
    se = np.std(fdp, ddof=1) / math.sqrt(RUNS)
    assert np.mean(fdp) <= knockoff_demo.FDR + 2 * se, (np.mean(fdp), se)
    assert np.mean(power) >= 0.9, power
    assert np.mean(power_fails) < 0.1, power_fails


@pytest.mark.slow
def test_sis_demo_regimes_recover_and_fail():
    whole, found_at_one = 0, []
    for run in range(RUNS):
        data = dp.datasets.fan_lv(n=sis_demo.RECOVERY_N, d=sis_demo.RECOVERY_D, random_state=run // 4)
        truth = set(data.attrs["support"])
        sd = sis_demo.BOUND_SDS
        bounds = {c: (-sd, sd) for c in data.columns if c != "y"}
        bounds["y"] = (-sd * sis_demo.MODEL.response_sd(), sd * sis_demo.MODEL.response_sd())
        common = dict(k=sis_demo.SIGNALS, bounds=bounds, oc_trials=0, random_state=run)
        works = dp.dp_sis("y ~ .", data=data, eps=sis_demo.WORKS_EPS, **common)
        fails = dp.dp_sis("y ~ .", data=data, eps=sis_demo.FAILS_EPS, **common)
        whole += set(works.selected) == truth
        found_at_one.append(len(truth & set(fails.selected)))
    assert whole >= RUNS - 1, whole
    assert np.mean(found_at_one) < 1.0, found_at_one


@pytest.fixture(scope="module")
def knockoff_pair():
    df, beta, bound = knockoff_demo.paper_design(knockoff_demo.N)
    fits = [_knockoff_fit(df, beta, bound, eps, 1, oc_trials=30) for eps in (1.0, 0.1)]
    return fits, _truth(beta)


def _oc(result, prefix):
    table = result.operating_characteristics.table()
    return float(table.loc[table["quantity"].str.startswith(prefix), "estimate"].iloc[0])


def test_knockoff_why_is_computed_from_the_results(knockoff_pair):
    fits, truth = knockoff_pair
    text = knockoff_demo.why(fits, knockoff_demo.AMPLITUDE, truth)
    assert f"effect {knockoff_demo.AMPLITUDE * math.sqrt(knockoff_demo.N):.0f}" in text
    for fit in fits:
        assert f"sd {fit.noise['kappa (coefficient noise sd)']:,.0f} " in text
        assert f"power {_oc(fit, 'power'):.2f}" in text
    works, fails = fits
    assert f"{len(works.selected)} terms selected" in text
    assert (
        f"{len(truth & set(works.selected))} of them among the simulation's {len(truth)} true signals" in text
    )
    assert not fails.selected and "nothing is selected" in text
    assert f"(smallest {_oc(fails, 'smallest knockoff+ FDP estimate'):.2f})" in text


def test_sis_why_is_computed_from_the_results():
    data = dp.datasets.fan_lv(n=300, d=200, random_state=5)
    fits = [
        dp.dp_sis("y ~ .", data=data, eps=eps, k=4, bounds=(-4.5, 4.5), random_state=1) for eps in (50.0, 1.0)
    ]
    truth = set(data.attrs["support"])
    text = sis_demo.why(fits, truth)
    for fit in fits:
        assert f"{_oc(fit, 'expected largest noise term'):,.1f} score units" in text
        gap = _oc(fit, "score gap x(k) - x(k+1) giving exact top-4 recovery with prob >= 0.9")
        assert f"needs a score gap of {gap:,.1f}" in text
        assert f"{len(truth & set(fit.selected))} of the simulation's {len(truth)} true signals" in text
    assert "recall" not in text  # no assumed model, so no recall


def test_headlines_read_tidy_and_glance(knockoff_pair):
    fits, _ = knockoff_pair
    works, fails = fits
    line = headline(works)
    assert line.startswith(f"selected {len(works.selected)} of 50: ") and works.selected[0] in line
    assert headline(fails) == "nothing selected (knockoff+ threshold is infinite)"
    diabetes = dp.datasets.diabetes()
    glm = dp.vertical_glm("y ~ bmi + bp", diabetes, family="gaussian", parties={"a": ["bmi"], "b": ["bp"]})
    estimate = glm.tidy().set_index("term")["estimate"]
    assert headline(glm) == "coefficients " + ", ".join(f"{t} {e:+.3g}" for t, e in estimate.items())
    rows = report_rows(DemoReport(Path("x.html"), "", [works, glm]))
    assert [(r["method"], r["n"], r["p"], r["eps"]) for r in rows] == [
        ("dp_knockoff", knockoff_demo.N, 50, 1.0),
        ("vertical_glm", len(diabetes), 3, math.inf),
    ]
    assert eps_spent(DemoReport(Path("x.html"), "", [works, fails, glm])) == "1.1 + non-private"


def test_index_links_every_report_and_reads_its_numbers(knockoff_pair, tmp_path):
    fits, truth = knockoff_pair
    pages = []
    for name, results in (("one.html", fits[:1]), ("sub/two.html", fits)):
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        dp.report(results, str(path))
        pages.append(DemoReport(path, f"shows {name}", results, knockoff_demo.why(results, 4.5, truth)))
    html = render_index(pages, tmp_path / "index.html")
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert sorted(set(hrefs)) == ["one.html", "sub/two.html"]
    assert all((tmp_path / h).is_file() for h in hrefs)
    assert f"selected {len(fits[0].selected)} of 50" in html and "nothing selected" in html
    assert html.count("<tr><td>dp_knockoff</td>") == 3 and "Why:" in html


def test_closing_table_has_a_line_per_analysis(knockoff_pair):
    fits, _ = knockoff_pair
    table = closing_table(
        [
            DemoReport(Path("a.html"), "", fits),
            SimpleNamespace(path=Path("sim.html"), results=[], summary=None, n=None, p=None),
        ]
    )
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["report", "method"] and len(lines) == 1 + len(fits)
    assert lines[1].startswith("a.html") and lines[1].rstrip().endswith(" 1")
    assert lines[2].rstrip().endswith(" 0.1") and "nothing selected" in lines[2]


def test_lm_demo_sentence_reads_the_interval_widths_from_the_fits(tmp_path):
    """The dp_lm demo's 'why' quotes the fits' own interval widths, and the large-n interval is the narrow one."""
    from dpstats.demos import lm

    works, fails = lm._regimes(tmp_path, quick=True).results
    width = {
        fit.n: float(
            fit.tidy().set_index("term").loc["x1", "conf.high"]
            - fit.tidy().set_index("term").loc["x1", "conf.low"]
        )
        for fit in (works, fails)
    }
    sentence = lm.why(works, fails)
    assert f"{width[lm.WORKS_N]:.3g}" in sentence and f"{width[lm.FAILS_N]:.3g}" in sentence
    assert width[lm.WORKS_N] < 0.1 < width[lm.FAILS_N]
    low, high = works.tidy().set_index("term").loc["x1", ["conf.low", "conf.high"]]
    assert low < lm.EFFECTS["x1"] < high


# dp_bh: 30 z-tests of means at n = 50 000, five true effects (z near 8.8, truncated at log ν = -23).
# Over 12 seeds: at eps = 2 every true effect is rejected in at least 11 runs and the mean FDP is at
# most q + 2 s.e.; at eps = 0.2 (cut below the truncation floor) fewer than one true effect per run.
BH_N = 50_000


@pytest.fixture(scope="module")
def bh_pair():
    from dpstats.demos import bh

    p = bh.p_values(BH_N, 7)
    return [bh.fit(p, BH_N, eps, random_state=1) for eps in (bh.WORKS_EPS, bh.FAILS_EPS)]


def test_bh_why_is_computed_from_the_results(bh_pair):
    from dpstats.demos import bh

    text = bh.why(bh_pair, bh.truth(), BH_N)
    assert f"z near {bh.expected_z(BH_N):.1f} at n = {BH_N:,}" in text
    assert f"log ν = {math.log(bh.TRUNCATE):.1f}" in text
    for fit in bh_pair:
        assert f"Laplace scale is {fit.noise_scale:.3g}" in text and f"t = {fit.shift:.3g}" in text
        assert f"below {math.log(fit.q / fit.p) - fit.shift:.1f}" in text
        found = len(bh.truth() & set(fit.rejected))
        assert f"{found} of the {bh.EFFECTS} true effects" in text
    works, fails = bh_pair
    line = headline(works)
    in_order = [t for t in works.terms if t in works.rejected]
    assert line == f"rejected {len(in_order)} of 30 at q = 0.1: " + ", ".join(in_order)
    assert not fails.rejected and headline(fails) == "nothing rejected at q = 0.1"
    assert math.log(fails.q / fails.p) - fails.shift < math.log(bh.TRUNCATE) < math.log(works.q / works.p)


@pytest.mark.slow
def test_bh_demo_regimes_find_the_effects_and_fail():
    from dpstats.demos import bh

    whole, fdp, found_fails = 0, [], []
    for run in range(RUNS):
        p = bh.p_values(BH_N, 500 + run)
        works = set(bh.fit(p, BH_N, bh.WORKS_EPS, random_state=run).rejected)
        fails = set(bh.fit(p, BH_N, bh.FAILS_EPS, random_state=run).rejected)
        whole += bh.truth() <= works
        fdp.append(len(works - bh.truth()) / max(1, len(works)))
        found_fails.append(len(fails & bh.truth()))
    se = np.std(fdp, ddof=1) / math.sqrt(RUNS)
    assert whole >= RUNS - 1, whole
    assert np.mean(fdp) <= bh.Q + 2 * se, fdp
    assert np.mean(found_fails) < 1.0, found_fails


# vertical_glm in DP mode (ridge, lam = 0.3, eps = 4): over 6 seeds the released slopes are within
# 30% (relative l2) of the model's ridge target β/(1 + λ) at n = 10^6 in every run (0.09-0.13 seen)
# and off by more than 100% at n = 20 000 in at least 5 runs (1.9-5.5 seen).
@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the demos' DP regimes: sigma_eta > eta_clip, alpha Inf in the failing regime
def test_vertical_dp_why_is_computed_from_the_results():
    from dpstats.demos import vertical

    fits = [vertical.dp_fit(vertical.simulated(n, 3), random_state=3) for n in (200_000, 20_000)]
    text = vertical.why(fits)
    assert f"a1: {vertical.ridge_target()[0]:.3g}" in text and f"eps = {vertical.EPS:g}" in text
    for fit in fits:
        slope = fit.tidy().set_index("term").loc["a1", "estimate"]
        assert f"at n = {fit.n:,} the released a1 slope is {slope:.3g}" in text
        assert f"off by {vertical.relative_error(fit):.0%} of their size" in text
    estimate = fits[0].tidy().set_index("term").loc[list(vertical.EFFECTS), "estimate"].to_numpy()
    target = np.array([0.5, 0.0, 0.5, 0.0]) / 1.3
    assert vertical.relative_error(fits[0]) == pytest.approx(
        np.linalg.norm(estimate - target) / np.linalg.norm(target)
    )


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the demos' DP regimes: sigma_eta > eta_clip, alpha Inf in the failing regime
@pytest.mark.slow
def test_vertical_dp_demo_regimes_usable_and_noise():
    from dpstats.demos import vertical

    works = [
        vertical.relative_error(vertical.dp_fit(vertical.simulated(vertical.WORKS_N, 40 + s), s))
        for s in range(6)
    ]
    fails = [
        vertical.relative_error(vertical.dp_fit(vertical.simulated(vertical.FAILS_N, 40 + s), s))
        for s in range(6)
    ]
    assert max(works) < 0.3, works
    assert sum(e > 1.0 for e in fails) >= 5, fails


# dp_gmm, the separated mixture (d = 10, k = 3, means 8 from the origin, eps = 1): over 12 data sets
# the released means lie within 0.5 sd of the true ones at n = 10 000 with no component collapsed,
# and more than 3 sds from them at n = 1000 in at least 11 (4.9-13 seen over 8).
@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the demos' DP regimes: sigma_eta > eta_clip, alpha Inf in the failing regime
def test_gmm_why_is_computed_from_the_results():
    from dpstats.demos import gmm
    from dpstats.demos import oc_value
    from dpstats.simulate.gmm import simulate_gmm

    df, truth = simulate_gmm(20_000, d=10, k=3, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.errors.DataWarning)  # "FIT FAILED" if a component collapses
        fits = [gmm.fit_separated(d, random_state=1, oc_trials=50) for d in (df, df.iloc[: gmm.FAILS_N])]
    assert any("cannot locate the components at n = 1000" in w for w in fits[1].warnings)  # said before
    text = gmm.why_sizes(fits, truth)
    gap = min(np.linalg.norm(truth.means[i] - truth.means[j]) for i, j in ((0, 1), (0, 2), (1, 2)))
    assert f"at least {gap:.1f} sds apart" in text
    for fit in fits:
        assert f"at n = {fit.n:,} the noise in each released mean is {oc_value(fit, gmm.NOISE):.3g}" in text
        collapsed = int(fit.glance().iloc[0]["collapsed_components"])
        assert f"{collapsed} of 3 components collapsed" in text
        assert f"lie {gmm.mean_error(fit, truth):.2g} sds" in text
    assert gmm.mean_error(fits[0], truth) < 0.5 < 3 < gmm.mean_error(fits[1], truth)


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the demos' DP regimes: sigma_eta > eta_clip, alpha Inf in the failing regime
@pytest.mark.slow
def test_gmm_demo_regimes_learn_and_fail():
    from dpstats.demos import gmm
    from dpstats.simulate.gmm import simulate_gmm

    works, fails = [], []
    for run in range(RUNS):
        df, truth = simulate_gmm(10_000, d=10, k=3, random_state=300 + run)
        fit = gmm.fit_separated(df, random_state=run)
        works.append((gmm.mean_error(fit, truth), int(fit.glance().iloc[0]["collapsed_components"])))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dp.errors.DataWarning)  # "FIT FAILED": the failing regime
            fails.append(gmm.mean_error(gmm.fit_separated(df.iloc[: gmm.FAILS_N], random_state=run), truth))
    assert all(error < 0.5 and collapsed == 0 for error, collapsed in works), works
    assert sum(error > 3 for error in fails) >= RUNS - 1, fails


# dp_two_stage on design W1 (d = 200, k = 5, eps = 1): over 12 data sets the five signals are
# selected exactly in at least 11 at n = 2500 (the planner predicts 1.00), and fewer than one per
# run on average at n = 400 (predicted recall 0.02; chance 5/200 per slot).
@pytest.fixture(scope="module")
def two_stage_pair():
    from dpstats.demos import two_stage

    return [
        two_stage.fit_regime(two_stage.design_w1(n, 11), random_state=3, oc_trials=10)
        for n in (two_stage.WORKS_N, two_stage.FAILS_N)
    ]


def test_two_stage_why_is_computed_from_the_results(two_stage_pair):
    from dpstats.demos import two_stage

    text = two_stage.why(two_stage_pair, two_stage.truth())
    for fit in two_stage_pair:
        unanimous = _oc(fit, f"share of 5 recovered when each gets {fit.blocks} of {fit.blocks} votes")
        assert f"at n = {fit.n:,} ({fit.blocks} blocks of about {fit.n // fit.blocks} rows)" in text
        assert f"recovered at a share of {unanimous:.2f}" in text
        found = len(two_stage.truth() & set(fit.selected))
        assert f"{found} of the simulation's 5 true features were selected" in text
    assert f"over {two_stage.REGIME_D} columns" in text


@pytest.mark.slow
def test_two_stage_demo_regimes_recover_and_fail():
    from dpstats.demos import two_stage

    exact, found_fails = 0, []
    for run in range(RUNS):
        works = two_stage.fit_regime(two_stage.design_w1(two_stage.WORKS_N, 600 + run), run, oc_trials=0)
        fails = two_stage.fit_regime(two_stage.design_w1(two_stage.FAILS_N, 600 + run), run, oc_trials=0)
        exact += set(works.selected) == two_stage.truth()
        found_fails.append(len(two_stage.truth() & set(fails.selected)))
    assert exact >= RUNS - 1, exact
    assert np.mean(found_fails) < 1.0, found_fails


# dp_felp (strict defaults: lam = 1, 250 learners of 20 rows, normalised) on planted data (n = 5000,
# d = 20, 3 planted): over 6 data sets all three planted features are selected in at least 5 at eps = 1
# (6 of 6 seen), and fewer than one per run on average at eps = 0.02 (chance 3·3/20 = 0.45; 0.33 seen).
def test_felp_why_is_computed_from_the_results():
    from dpstats.demos import felp

    data = felp.planted_data(9)
    fits = [
        felp.fit_planted(data, eps, random_state=2, oc_trials=10) for eps in (felp.WORKS_EPS, felp.FAILS_EPS)
    ]
    text = felp.why_planted(fits, felp.truth())
    assert f"the {felp.LEARNERS} learners" in text
    for fit in fits:
        planted = np.mean([fit.weights[fit.terms.index(name)] for name in ("x1", "x2", "x3")])
        assert f"noise s.d. per weight is {_oc(fit, felp.NOISE):.3g}" in text
        assert f"released weights average {planted:.3g}" in text
        assert f"{len(felp.truth() & set(fit.selected))} of the 3 planted features selected" in text
    assert _oc(fits[1], felp.NOISE) == pytest.approx(
        _oc(fits[0], felp.NOISE) * felp.WORKS_EPS / felp.FAILS_EPS
    )


@pytest.mark.slow
def test_felp_demo_regimes_find_the_planted_features_and_fail():
    from dpstats.demos import felp

    whole, found_fails = 0, []
    for run in range(6):
        data = felp.planted_data(700 + run)
        whole += felp.truth() <= set(felp.fit_planted(data, felp.WORKS_EPS, random_state=run).selected)
        found_fails.append(
            len(felp.truth() & set(felp.fit_planted(data, felp.FAILS_EPS, random_state=run).selected))
        )
    assert whole >= 5, whole
    assert np.mean(found_fails) < 1.0, found_fails


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the demos' DP regimes: sigma_eta > eta_clip, alpha Inf in the failing regime
def test_dp_mode_vertical_and_dp_lm_reports_draw_their_released_coefficients():
    """Every demo report has a figure (tests/test_reports.py): DP-mode vertical_glm releases no
    convergence trace, so it draws its released coefficients; dp_lm draws its calibrated estimates, the
    points its intervals are about."""
    from dpstats.demos import lm, vertical

    glm = vertical.dp_fit(vertical.simulated(20_000, 4), random_state=4)
    (plot,) = glm.plots()
    for row in glm.tidy().itertuples():
        assert f"{row.term} ({row.party}) {row.estimate:.3g}" in plot.alt
    fit = dp.dp_lm(
        "y ~ .", lm.simulated(5_000, 5, 1), eps=1.0, delta=1e-6, bounds=lm.BOUNDS, n_boot=100, random_state=1
    )
    (plot,) = fit.plots()
    table = fit.tidy()
    for term, estimate, low, high in zip(
        table["term"], table["estimate"], table["conf.low"], table["conf.high"]
    ):
        assert f"{term} {estimate:.3g} [{low:.3g}, {high:.3g}]" in plot.alt
