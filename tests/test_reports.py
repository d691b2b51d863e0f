"""Reports: every method's demo report is self-contained and renders in a real browser.

The demo is run once through the command line (``dpstats demo --quick``), which also
checks the README's first command end to end.  Browser checks use headless Chromium
through chromedriver (Debian packages ``chromium`` and ``chromium-driver``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

import dpstats as dp

EXTERNAL = re.compile(
    r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|@import""",
    re.IGNORECASE,
)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> tuple[Path, str]:
    """The demo's output folder and what it printed."""
    out = tmp_path_factory.mktemp("demo")
    proc = subprocess.run(
        [sys.executable, "-m", "dpstats.cli", "--quiet", "demo", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout


@pytest.fixture(scope="session")
def demo_reports(demo_run) -> list[Path]:
    out, _ = demo_run
    paths = sorted(p for p in out.glob("*.html") if p.name != "index.html")
    assert paths, "the demo wrote no reports"
    return paths


@pytest.fixture(scope="session")
def demo_index(demo_run) -> Path:
    index = demo_run[0] / "index.html"
    assert index.is_file(), "the demo wrote no index.html"
    return index


def _links(html: str) -> list[str]:
    return re.findall(r"""<a\s[^>]*href\s*=\s*["']([^"']+)["']""", html, flags=re.IGNORECASE)


def test_index_links_every_report_and_nothing_else(demo_index, demo_reports):
    html = demo_index.read_text(encoding="utf-8")
    links = _links(html)
    assert all((demo_index.parent / href).is_file() for href in links), links
    assert {demo_index.parent / href for href in links} == set(demo_reports)
    assert not EXTERNAL.findall(html) and "<script" not in html


def test_demo_prints_a_closing_table_and_the_index_path(demo_run, demo_reports):
    out, printed = demo_run
    assert printed.rstrip().endswith(f"index of the reports: {out / 'index.html'}")
    table = printed[printed.index("report  ") :].split("\n\n")[0].splitlines()
    assert table[0].split() == ["report", "method", "what", "it", "found", "eps", "spent"]
    named = {line.split()[0] for line in table[1:] if line and not line.startswith(" ")}
    assert {p.name for p in demo_reports} == named


def test_demo_writes_a_report_per_available_method(demo_reports):
    from dpstats.demos import available

    names = " ".join(p.name for p in demo_reports)
    for method in available():
        assert method in names, f"no demo report for {method}: {names}"


def test_reports_have_no_external_urls(demo_reports):
    for path in demo_reports:
        html = path.read_text(encoding="utf-8")
        found = EXTERNAL.findall(html)
        assert not found, f"{path.name} references external resources: {found[:3]}"
        assert "<script src" not in html


def test_reports_lead_with_the_privacy_statement(demo_reports):
    for path in demo_reports:
        html = path.read_text(encoding="utf-8")
        assert 'class="privacy-statement"' in html and "differentially private" in html
        assert html.index('class="privacy"') < html.index('class="results"'), path.name


def test_diagnostics_only_on_request(tmp_path):
    df = dp.datasets.fan_lv(n=60, d=40, random_state=2)
    fit = dp.dp_sis(
        "y ~ .", data=df, eps=1.0, k=4, bounds=(-4, 4), random_state=1, oc_trials=0, truth=df.attrs["support"]
    )
    plain = Path(fit.report(str(tmp_path / "a.html"))).read_text(encoding="utf-8")
    assert "Diagnostics — not private" not in plain and "nonprivate_sis_selected" not in plain
    fenced = Path(fit.report(str(tmp_path / "b.html"), include_diagnostics=True)).read_text(encoding="utf-8")
    assert "Diagnostics — not private" in fenced and "nonprivate" in fenced


def test_comparison_report_totals_the_budget(tmp_path):
    df = dp.datasets.fan_lv(n=60, d=40, random_state=2)
    fits = [
        dp.dp_sis("y ~ .", data=df, eps=e, k=4, bounds=(-4, 4), random_state=1, oc_trials=0)
        for e in (0.5, 1.5)
    ]
    html = Path(dp.report(fits, str(tmp_path / "cmp.html"))).read_text(encoding="utf-8")
    assert "eps = 2" in html and html.count('class="result"') == 2
    assert "Seeded run" in html


def test_notebook_html(tmp_path):
    df = dp.datasets.fan_lv(n=60, d=40, random_state=2)
    fit = dp.dp_sis("y ~ .", data=df, eps=1.0, k=4, bounds=(-4, 4), random_state=1, oc_trials=0)
    html = fit._repr_html_()
    assert html.startswith('<div class="dpstats-fragment">') and "privacy-statement" in html


@pytest.fixture(scope="session")
def browser(chromium):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:  # pragma: no cover - selenium is a test dependency
        pytest.fail("selenium is a test dependency and must be installed")
    import shutil

    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        from conftest import _missing

        _missing("chromedriver")
    opts = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1800",
    ):
        opts.add_argument(arg)
    opts.binary_location = chromium
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    yield driver
    driver.quit()


@pytest.mark.browser
def test_reports_render_in_chromium(browser, demo_reports, tmp_path):
    from selenium.webdriver.common.by import By

    shots = Path("reports/screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    for path in demo_reports:
        browser.get(path.resolve().as_uri())
        errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert not errors, f"{path.name}: console errors {errors}"
        statement = browser.find_element(By.CSS_SELECTOR, ".privacy-statement")
        assert statement.is_displayed() and "differentially private" in statement.text
        tables = browser.find_elements(By.CSS_SELECTOR, "table.results-table")
        assert tables and all(t.is_displayed() for t in tables), path.name
        plots = browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")
        assert plots, f"{path.name} has no plots"
        for svg in plots:
            assert svg.is_displayed() and svg.size["width"] > 100 and svg.size["height"] > 50, path.name
        assert browser.save_screenshot(str(shots / (path.stem + ".png")))


@pytest.mark.browser
def test_index_renders_in_chromium_and_every_link_opens_a_report(browser, demo_index, demo_reports):
    from selenium.webdriver.common.by import By

    browser.get(demo_index.resolve().as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, f"index.html: console errors {errors}"
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert not fetched, f"index.html fetched resources: {fetched}"
    table = browser.find_element(By.CSS_SELECTOR, "table.demo-index")
    assert table.is_displayed()
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")]
    opened = {Path(url2pathname(urlparse(h).path)) for h in hrefs}
    assert opened == {p.resolve() for p in demo_reports}
    for href in sorted(set(hrefs)):
        browser.get(href)
        assert browser.find_element(By.CSS_SELECTOR, ".privacy-statement").is_displayed(), href
        assert not browser.execute_script("return performance.getEntriesByType('resource').length"), href
    browser.get(demo_index.resolve().as_uri())
    shots = Path("reports/screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shots / "index.png"))
