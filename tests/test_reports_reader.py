"""Reports as their recipient reads them (the s12 report audit's findings 3, 5, 6, 7, 8, 13 and 14).

Each test reads the rendered HTML: where a warning sits, what the method sections say, which
ids and words reach the reader.  Fits are seeded and small; no tolerance is involved.
"""

from __future__ import annotations

import collections
import math
import re
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.report import render_report


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _sim_lm(n: int, p: int = 4, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, p)), -3, 3)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = np.clip(X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(n), -6, 6)
    return df


def _text(html: str) -> str:
    """The page as read: tags and the figures' SVG bodies removed, whitespace collapsed."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL)
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.DOTALL)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: collections.Counter = collections.Counter()
        self.labelledby: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] += 1
        if "aria-labelledby" in a:
            self.labelledby.append(a["aria-labelledby"])

    handle_startendtag = handle_starttag


@pytest.fixture(scope="module")
def lm_fit():
    return _quiet(
        dp.dp_lm, "y ~ .", _sim_lm(5000), eps=1.0, delta=1e-6, bounds=(-6, 6), n_boot=100, random_state=1
    )


@pytest.fixture(scope="module")
def sis_fit():
    df = dp.datasets.fan_lv(n=200, d=50, random_state=1)
    return _quiet(
        dp.dp_sis,
        "y ~ .",
        data=df,
        eps=1.0,
        k=5,
        bounds=(-4.5, 4.5),
        truth=["x1", "x2", "x3"],
        diagnostics=True,
        random_state=2,
    )


@pytest.fixture(scope="module")
def vertical_dp_fit():
    return _quiet(
        dp.vertical_glm,
        "y ~ .",
        _sim_lm(2000),
        parties={"a": ["x1", "x2"], "b": ["x3", "x4"]},
        penalty="ridge",
        lam=0.1,
        eps=4.0,
        delta=1e-6,
        bounds={**{f"x{j + 1}": (-3, 3) for j in range(4)}, "y": (-6, 6)},
        random_state=1,
    )


# ---------------------------------------------------------------- 3: failed fits lead the result
def test_a_collapsed_gmm_says_fit_failed_before_any_result():
    sim = dp.simulate.simulate_gmm(n=2000, d=3, k=2, random_state=1)
    df = pd.DataFrame(sim[0] if isinstance(sim, tuple) else sim)
    fit = _quiet(dp.dp_gmm, "~ .", df, k=2, eps=0.1, delta=1e-6, bounds=(-15, 15), random_state=0)
    assert any("FIT FAILED" in w for w in fit.warnings)  # the audit's case still collapses
    html = render_report([fit])
    box = html.find('<div class="box alert" role="alert"><strong>The fit failed.</strong> FIT FAILED')
    assert 0 < box < min(html.find("-results-h"), html.find("<figure"), html.find("-privacy-h"))
    assert html.count("FIT FAILED") == 1  # moved, not repeated in the list at the end


def test_any_result_whose_warning_says_dominated_by_noise_gets_the_box(lm_fit):
    """The rule reads the warnings, whatever the method: here a dp_lm result given such a warning."""
    import copy

    from dpstats.report import headline_warnings

    fit = copy.copy(lm_fit)
    fit.warnings = ["something minor", "this release is dominated by noise: raise eps"]
    html = render_report([fit])
    top = html.find("<strong>The release is dominated by noise.</strong> this release is dominated")
    assert 0 < top < html.find("-privacy-h")
    assert html.find("something minor") > html.find("-results-h")  # the others stay at the end
    assert [w["lead"] for w in headline_warnings(["FIT FAILED: x", "ok"])] == ["The fit failed."]
    assert headline_warnings(["n is small"]) == []


# ---------------------------------------------------------------- 5: vertical_glm in DP mode
def test_vertical_dp_report_describes_what_it_did(vertical_dp_fit):
    fit = vertical_dp_fit
    html = render_report([fit])
    text = _text(html)
    assert f"It ran a fixed {fit.iterations} sweeps" in text
    assert "converged" not in text and "Sweeps stop when" not in text
    assert "Wald intervals" not in text and "degrees of freedom" not in text
    assert "Standard errors, tests and intervals: not computed" in text
    table = fit.report_table()
    assert list(table.columns) == ["term", "party", "estimate", "noise.sd"]
    assert list(fit.tidy().columns)[3:8] == ["std_error", "statistic", "p_value", "conf_low", "conf_high"]
    (plot,) = fit.plots()
    assert "± 2 noise sd" in plot.title
    first = fit.tidy().iloc[0]
    assert f"{first['estimate']:.3g} ± {2 * first['noise_sd']:.3g}" in plot.alt
    if any("dominated by noise" in w for w in fit.warnings):
        assert html.find("dominated by noise") < html.find("-results-h")


def test_exact_vertical_report_keeps_its_inference_with_broom_names():
    fit = _quiet(dp.vertical_glm, "y ~ .", _sim_lm(500), parties={"a": ["x1", "x2"], "b": ["x3", "x4"]})
    assert list(fit.report_table().columns)[3:8] == [
        "std.error",
        "statistic",
        "p.value",
        "conf.low",
        "conf.high",
    ]
    text = _text(render_report([fit]))
    assert "Sweeps stop when" in text and "Wald intervals" in text


# ---------------------------------------------------------------- 6: dp_glm's method section
def test_dp_glm_report_says_how_its_intervals_were_made():
    rng = np.random.default_rng(2)
    X = np.clip(rng.standard_normal((5000, 3)), -3, 3)
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-(0.8 * X[:, 0]))))
    fit = _quiet(
        dp.dp_glm, "y ~ .", df, eps=1.0, delta=1e-6, family="binomial", bounds=(-3, 3), random_state=1
    )
    text = _text(render_report([fit]))
    assert "How the model was fitted" in text
    assert f"Noisy Newton steps: {fit.iterations}" in text
    assert "privacy noise added to the sampling variance" in text
    assert "Deviances and AIC: not released" in text
    assert "methods.glm" not in text and "(G4)" not in text


# ---------------------------------------------------------------- 7: dp_pca
def test_dp_pca_report_shows_noise_radius_importance_and_a_scree_figure():
    fit = _quiet(
        dp.dp_pca,
        "~ x1 + x2 + x3 + x4",
        _sim_lm(3000),
        k=2,
        eps=1.0,
        delta=1e-6,
        bounds=(-3, 3),
        random_state=1,
    )
    html = render_report([fit])
    text = _text(html)
    assert f"{fit.radius:.4g}" in text and f"{fit.noise_sd:.4g}" in text
    assert f"2σ√d = {2 * fit.noise_sd * 2:.4g}" in text  # d = 4
    assert re.search(r"<th scope='row'>Proportion of Variance</th>(<td class='num'>[^<]+</td>){2}</tr>", html)
    assert html.count("<svg") == 1 and "scree" in html


# ---------------------------------------------------------------- 8: dp.plan captions
def test_plan_captions_name_only_the_lines_drawn():
    plan = _quiet(dp.plan, "dp_lm", n=2000, p=3, eps=[1.0, 10.0], trials=4, random_state=1)
    captions = {p.title.removeprefix("Predicted ").removesuffix(" against eps"): p for p in plan.plots()}
    assert "chance level" in captions["rel_error"].alt
    assert "chance level" not in captions["width_ratio"].alt
    assert "chance level" not in captions["coverage"].alt
    assert "dashed line: the nominal level 0.95" in captions["coverage"].alt
    assert "stroke-dasharray" in captions["coverage"].svg


# ---------------------------------------------------------------- 13: ids, names, reprs
def test_a_comparison_page_has_unique_ids_and_each_label_points_into_its_own_result(lm_fit, sis_fit):
    html = render_report([lm_fit, sis_fit, lm_fit])
    ids = _Ids()
    ids.feed(html)
    assert html.count("<svg") >= 3
    assert {k: v for k, v in ids.ids.items() if v > 1} == {}
    assert all(target in ids.ids for target in ids.labelledby)
    assert "result-3-privacy-h" in ids.labelledby


def test_no_module_paths_or_python_reprs_reach_the_reader(sis_fit):
    assume = dp.simulate.Assume(signals=3, strength=0.5, noise=1.224744871391589)
    df = dp.datasets.fan_lv(n=200, d=50, random_state=1)
    fit = _quiet(dp.dp_sis, "y ~ .", data=df, eps=1.0, k=5, bounds=(-4.5, 4.5), assume=assume, random_state=1)
    text = _text(render_report([fit]))
    assert "Assume(" not in text and "1.224744871391589" not in text
    assert "assume = list(signals = 3, strength = 0.5, noise = 1.22474" in text
    assert "dpstats." not in text
    shown = _text(render_report([sis_fit], include_diagnostics=True))
    assert "[" not in shown.split("Diagnostics")[-1].split("Reproducibility")[0]
    assert re.search(r"\d\.\d{6,}", shown) is None


def test_the_budget_row_writes_infinity_as_the_ledger_does():
    fit = _quiet(dp.dp_lm, "y ~ .", _sim_lm(500), eps=math.inf, bounds=(-6, 6))
    text = _text(render_report([fit]))
    assert "Budget (eps, delta) (∞, 0)" in text and "(inf, 0)" not in text


# ---------------------------------------------------------------- 14: readability
def test_single_report_heads_once_and_leads_privacy_with_a_short_paragraph(lm_fit):
    html = render_report([lm_fit])
    assert html.count(f">{lm_fit.heading}</h") == 1  # the h1 only
    lead = re.search(r'<p class="privacy-statement">(.*?)</p>', html, flags=re.DOTALL).group(1)
    assert len(lead.split()) < 90
    assert lm_fit.privacy.missing_values and "<details" in html
    assert lm_fit.privacy.missing_values.split()[-1] in html.split("<details")[1]


def _contrast(hex_colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(hex_colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def test_figure_lines_and_marks_reach_3_to_1_on_white(sis_fit, vertical_dp_fit):
    """WCAG 1.4.11: the strokes and opaque fills of the figures (the knockoff's grey bars and the
    threshold orange were 2.6 and 2.8)."""
    from dpstats.results import knockoff

    source = open(knockoff.__file__).read()
    colours = set(re.findall(r'"(#[0-9a-f]{6})"', source))
    for plot in sis_fit.plots() + vertical_dp_fit.plots():
        colours |= set(re.findall(r"stroke: ?(#[0-9a-f]{6})", plot.svg))
    colours -= {"#ffffff"}
    assert colours and {c: round(_contrast(c), 2) for c in colours if _contrast(c) < 3} == {}
