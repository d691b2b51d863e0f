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

import pytest

import dpstats as dp

EXTERNAL = re.compile(
    r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|@import""",
    re.IGNORECASE,
)


@pytest.fixture(scope="session")
def demo_reports(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("demo")
    proc = subprocess.run(
        [sys.executable, "-m", "dpstats.cli", "--quiet", "demo", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    paths = sorted(out.glob("*.html"))
    assert paths, "the demo wrote no reports"
    return paths


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
