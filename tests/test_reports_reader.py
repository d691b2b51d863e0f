"""Reports as their recipient reads them (the s12 report audit's findings 3, 5, 6, 7, 8, 13 and 14, and
the s14 report-reader audit's findings 1 to 8, below the s14 line).

Each test reads the rendered HTML: where a warning sits, what the method sections say, which
ids and words reach the reader.  Fits are seeded and small; no tolerance is involved.
"""

from __future__ import annotations

import collections
import html as html_lib
import math
import re
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.demos import vertical as vertical_demo
from dpstats.demos._index import headline, render_index
from dpstats.report import render_report, template_environment


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
    """The page as read: tags and the figures' SVG bodies removed, entities read, whitespace collapsed."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL)
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.DOTALL)
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


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
    bound = 2 * fit.noise_sd * (2 + math.sqrt(math.log(40)))  # d = 4, a bound in 95% of releases
    assert f"2σ(√d + √ln 40) = {bound:.4g} in at most 5% of releases" in text
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


# ================================================================ the s14 report-reader audit
@pytest.fixture(scope="module")
def glm_withheld():
    """The audit's case: 20 000 rows, a declared level ('other') that no row has: intervals withheld."""
    rng = np.random.default_rng(5)
    n = 20_000
    race = rng.choice(["white", "black"], n, p=[0.7, 0.3])
    df = pd.DataFrame({"age": rng.uniform(14, 45, n), "smoke": rng.integers(0, 2, n)})
    df["race"] = pd.Categorical(race, categories=["white", "black", "other"])
    eta = -0.5 - 0.02 * (df.age - 23) + 0.9 * (race == "black") + 0.8 * df.smoke
    df["low"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    bounds = {"age": (14, 45), "smoke": (0, 1)}
    fit = _quiet(
        dp.dp_glm, "low ~ age + race + smoke", df, eps=1.0, delta=1e-6, bounds=bounds, random_state=3
    )
    assert fit.withheld and fit.tidy()["std.error"].isna().all()  # the case still withholds
    return fit


# ---------------------------------------------------------------- 1: dp_lm states its bootstrap's model
def test_dp_lm_states_the_bootstrap_model_in_statement_summary_and_report(lm_fit):
    from dpstats.methods.lm import BOOTSTRAP_ASSUMPTIONS, DECLARED_BOUNDS_ASSUMPTION

    assumed = [*BOOTSTRAP_ASSUMPTIONS, DECLARED_BOUNDS_ASSUMPTION]
    assert lm_fit.privacy.assumptions == assumed
    assert "e ~ N(0, σ²)" in assumed[0] and "equal variance" in assumed[0]
    summary, page = str(lm_fit.summary()), _text(render_report([lm_fit]))
    assert "Assumptions:" in summary and " Assumptions " in page
    for text in assumed:
        assert text in summary.replace("\n", " ") or text in " ".join(summary.split())
        assert text in page


def test_dp_lm_at_eps_inf_states_no_bootstrap_model():
    fit = _quiet(dp.dp_lm, "y ~ .", _sim_lm(200), eps=float("inf"))
    assert fit.privacy.assumptions == []


def test_dp_select_infer_carries_part_b_s_assumptions():
    df = dp.datasets.fan_lv(n=4000, d=20, random_state=1)
    fit = _quiet(dp.dp_select_infer, "y ~ .", df, eps=2.0, delta=1e-6, k=3, bounds=(-6, 6), random_state=2)
    assert fit.fit is not None
    part_b = [f"part B (dp_lm): {a}" for a in fit.fit.privacy.assumptions]
    assert part_b and all(a in fit.privacy.assumptions for a in part_b)
    page = _text(render_report([fit]))
    assert all(a in page for a in part_b)
    # 7: the residual standard error and the ridge lambda that summary() prints reach the report
    sigma_line = next(line for line in str(fit.summary()).splitlines() if "Residual standard error" in line)
    assert sigma_line.strip() in page
    assert f"ridge λ = {fit.ridge:.4g}" in page


# ---------------------------------------------------------------- 2: dp_glm with its intervals withheld
def test_withheld_intervals_caption_alt_top_box_and_wording(glm_withheld):
    html = render_report([glm_withheld])
    caption = re.search(r"<figcaption>(.*?)</figcaption>", html, flags=re.DOTALL).group(1)
    label = re.search(r'<svg role="img" aria-label="([^"]*)"', html).group(1)
    for said in (caption, label):
        assert said.startswith("Estimates only: intervals withheld") and "nan" not in said.lower()
        assert "95%" not in said
    box = html.find('<div class="box alert" role="alert"><strong>Intervals withheld.</strong>')
    assert 0 < box < min(html.find("-privacy-h"), html.find("-results-h"), html.find("<figure"))
    assert "withheld: std.error" not in html
    assert html.count("intervals and p-values withheld") == 2  # the top box and the fitting account


def test_withheld_intervals_lead_the_index_headline(glm_withheld):
    line = headline(glm_withheld)
    assert line.startswith("Intervals withheld (std.error, intervals and p-values withheld: ")
    assert line.endswith("coefficients " + ", ".join(f"{t} {e:+.3g}" for t, e in glm_withheld.coef().items()))


# ---------------------------------------------------------------- 3: the demo index against the reports
def test_a_collapsed_mixture_is_not_headed_as_clusters_found():
    sim = dp.simulate.simulate_gmm(n=2000, d=3, k=2, random_state=1)
    df = pd.DataFrame(sim[0] if isinstance(sim, tuple) else sim)
    fit = _quiet(dp.dp_gmm, "~ .", df, k=2, eps=0.1, delta=1e-6, bounds=(-15, 15), random_state=0)
    assert any("FIT FAILED" in w for w in fit.warnings)
    line = headline(fit)
    assert line.startswith("The fit failed (FIT FAILED: component(s) ")
    assert "clusters found" not in line and "2 components released, weights " in line


def test_vertical_demo_index_row_carries_the_noise_box_and_its_description_no_success(tmp_path):
    fit = _quiet(vertical_demo.dp_fit, vertical_demo.simulated(20_000, 2), random_state=2)
    assert any("dominated by noise" in w for w in fit.warnings)
    assert headline(fit).startswith(
        "The release is dominated by noise (vertical_glm's DP release is dominated"
    )
    page = _quiet(vertical_demo._dp_regimes, tmp_path)
    assert "usable" not in page.shows and "swamped by noise" in page.shows
    index = _text(render_index([page], tmp_path / "index.html"))
    assert index.count("The release is dominated by noise") == 2  # both rows, as both report boxes
    assert "1,000,000" in index and "20,000" in index and "1e+06" not in index  # 8: n as a count


# ---------------------------------------------------------------- 4: dp_pca's scree figure and its shares
def test_pca_scree_marks_components_below_the_noise_level():
    rng = np.random.default_rng(3)  # iris's size and box: 150 rows of 4 columns in (0, 8)
    numeric = pd.DataFrame(rng.uniform(0, 8, (150, 4)), columns=["a", "b", "c", "d"])
    fit = _quiet(
        dp.dp_pca, "~ a + b + c + d", numeric, k=2, eps=1.0, delta=1e-6, bounds=(0, 8), random_state=1
    )
    below = fit.below_noise()
    assert below.any()  # the audit's situation: components not told apart from noise
    html = render_report([fit])
    caption = _text(re.search(r"<figcaption>(.*?)</figcaption>", html, flags=re.DOTALL).group(1))
    level = f"noise level {fit.noise_level():.4g}"
    assert level in caption
    marked = ", ".join(f"PC{j + 1}" for j in np.flatnonzero(below))
    assert f"not told apart from noise: {marked}." in caption
    svg = re.search(r"<svg.*?</svg>", html, flags=re.DOTALL).group(0)
    assert svg.count("url(#") >= 1 and "below the noise level" in svg  # hatched bars, in the legend
    assert "sum of its positive eigenvalues" in _text(html)


# ---------------------------------------------------------------- 5: long pre lines wrap
def test_every_pre_wraps():
    css = template_environment().loader.searchpath[0] + "/style.css.j2"
    text = open(css, encoding="utf-8").read()
    rule = re.search(r"(?m)^pre \{([^}]*)\}", text)
    assert rule and "white-space: pre-wrap" in rule.group(1)


# ---------------------------------------------------------------- 6: dp_glm's account names every release
def test_dp_glm_fitting_account_names_the_count_and_the_refinement(glm_withheld):
    html = render_report([glm_withheld])
    steps = [e.step for e in glm_withheld.privacy.ledger]
    assert any(s.startswith("start: count of successes") for s in steps)
    assert any(s.startswith("refinement: score sum") for s in steps)
    account = _text(html.split("How the model was fitted")[1].split("</section>")[0])
    noise = glm_withheld.noise
    assert f"count of successes was released with Gaussian noise of sd {noise['count_sd']:.4g}" in account
    assert f"with noise of sd {noise['refine_sd']:.4g}" in account


# ---------------------------------------------------------------- 7: summary's lines in dp_lm's report
def test_dp_lm_report_shows_the_residual_standard_error(lm_fit):
    page = _text(render_report([lm_fit]))
    assert lm_fit._sigma_line() in page and lm_fit._sigma_line() in str(lm_fit.summary())


# ---------------------------------------------------------------- 8: headings, row headers, numbers
class _Headings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.levels: list[int] = []

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.levels.append(int(tag[1]))


def _skips(html: str) -> list[tuple[int, int]]:
    parser = _Headings()
    parser.feed(html)
    return [(a, b) for a, b in zip(parser.levels, parser.levels[1:]) if b > a + 1]


def test_single_and_comparison_pages_skip_no_heading_level(lm_fit, glm_withheld):
    single = render_report([lm_fit])
    assert _skips(single) == [] and "<h4" not in single
    assert _skips(render_report([glm_withheld])) == []
    assert _skips(render_report([lm_fit, glm_withheld])) == []


def test_results_rows_are_headed_by_their_term(lm_fit):
    html = render_report([lm_fit])
    body = html.split('-results-h">Results')[1].split("</tbody>")[0]
    assert body.count('<th scope="row">') == len(lm_fit.terms)
    for term in lm_fit.terms:
        assert f'<th scope="row">{term}</th>' in body


def test_numbers_print_as_print_prints_them():
    num, count = template_environment().filters["num"], template_environment().filters["count"]
    assert num(-16448.4) == "-16448" and num(0.123456) == "0.1235" and num(2.5e-7) == "2.5e-07"
    assert num(np.int64(100000)) == "100,000" and count(1e5) == "100,000" and count(20.0) == "20"
    assert num(1.0) == "1" and num(float("inf")) == "∞"
