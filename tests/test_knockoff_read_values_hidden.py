"""dp_knockoff without declared beta_norm / c_min / lambda_min (or bounds) calibrates its noise from values
read from the rows (named data-dependent steps): s, Delta2, kappa, eta^2, B, Y.  No output channel may show
them (DESIGN §3); they go to requested diagnostics only.  With everything declared they are public and shown.

The attacker's test: the release (W, coefficients, threshold, selection) is a released draw, so it is held
fixed across two neighbouring data sets (the second fit returns the first fit's release, after drawing its
own so the generator moves alike); every channel must then give the same text.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.methods.knockoff import mechanism as kd

NOT_SHOWN = "not shown (read from the data)"
REAL_RELEASE = kd.release
DECLARED = dict(sigma=1.0, beta_norm=2.0, c_min=20.0, lambda_min=0.5)


def _pair(n: int = 3000, p: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    X = np.clip(rng.standard_normal((n, p)), -3, 3)
    y = np.clip(X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(n), -6, 6)
    a = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)]).assign(y=y)
    b = a.copy()
    b.iloc[0] = [3, -3] * (p // 2) + [6]  # one row replaced, inside the bounds
    return a, b


def _fit(df, monkeypatch, held, **kw):
    """dp_knockoff on ``df`` whose release is the first one ``held`` (the released draw fixed); ``held``
    keeps each fit's own release."""

    def fixed(*args, **kwargs):
        own = REAL_RELEASE(*args, **kwargs)  # drawn, so that later draws from the generator match
        held.append(own)
        return held[0]

    monkeypatch.setattr(kd, "release", fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_knockoff(
            "y ~ .", df, eps=1.0, delta=1e-6, random_state=3, **({"bounds": math.sqrt(73)} | kw)
        )
    fit.created = "2000-01-01T00:00:00+00:00"
    return fit


def _channels(fit, tmp_path: Path, name: str) -> dict[str, str]:
    path = tmp_path / f"{name}.html"
    fit.report(str(path))
    html = re.sub(r"\d{4}-\d\d-\d\dT[\d:+]+", "TIME", path.read_text())
    html = re.sub(r"\b[mp][0-9a-f]{10}\b", "ID", html)  # matplotlib's random marker and clip-path ids
    return {
        "print": str(fit),
        "summary": str(fit.summary()),
        "tidy": fit.tidy().to_string(),
        "glance": fit.glance().to_string(),
        "to_dict": repr(fit.to_dict()),
        "report": html,
    }


@pytest.mark.parametrize("method", ["II", "I"])
def test_neighbours_read_the_same_when_calibration_is_read_from_the_data(method, monkeypatch, tmp_path):
    a, b = _pair()
    held: list = []
    fit_a = _fit(a, monkeypatch, held, method=method, sigma=1.0)
    fit_b = _fit(b, monkeypatch, held, method=method, sigma=1.0)
    # the two data sets do calibrate differently: the point of the test
    assert len(held) == 2 and held[0].s_value != held[1].s_value
    view_a, view_b = _channels(fit_a, tmp_path, "a"), _channels(fit_b, tmp_path, "b")
    for channel in view_a:
        assert view_a[channel] == view_b[channel], channel
    assert NOT_SHOWN in view_a["print"] and NOT_SHOWN in view_a["report"]
    assert fit_a.s is None and "s" in fit_a.privacy.withheld


def test_values_read_from_the_data_go_to_requested_diagnostics_only(monkeypatch, tmp_path):
    a, _ = _pair()
    fit = _fit(a, monkeypatch, [], diagnostics=True, bounds=None)
    kappa = fit.diagnostics["noise: kappa (coefficient noise sd) (read from the data)"]
    s = fit.diagnostics["s (read from the data)"]
    assert fit.diagnostics["row bound B (read from the data)"] > 0
    assert fit.s is None and fit.row_bound is None and fit.noise["kappa (coefficient noise sd)"] == NOT_SHOWN
    shown = _channels(fit, tmp_path, "d")
    outside = re.sub(r"(?s)<svg.*?</svg>", "", shown["report"].split("Diagnostics — not private")[0])
    for value in (f"{kappa:.4g}", f"{s:.4g}"):
        as_number = re.compile(rf"(?<![\d.]){re.escape(value)}(?![\d])")
        assert not as_number.search(outside)
        assert not as_number.search(shown["to_dict"].split("'diagnostics'")[0])
        assert not as_number.search(shown["print"])


def test_declared_calibration_is_public_and_shown(monkeypatch, tmp_path):
    a, _ = _pair()
    fit = _fit(a, monkeypatch, [], **DECLARED)
    assert fit.privacy.withheld == []
    assert fit.s == pytest.approx(0.5)
    assert all(v != NOT_SHOWN for v in fit.noise.values())
    kappa = fit.noise["kappa (coefficient noise sd)"]
    shown = _channels(fit, tmp_path, "p")
    assert f"{kappa:.4g}" in shown["report"] and "s = 0.5" in shown["print"]
    assert NOT_SHOWN not in shown["report"]


def test_select_infer_knockoff_shows_no_calibration_read_from_the_data():
    a, _ = _pair(n=4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_select_infer(
            "y ~ .",
            a,
            eps=1.0,
            delta=1e-6,
            select="knockoff",
            bounds={"y": (-6, 6)} | {f"x{j + 1}": (-3, 3) for j in range(8)},
            random_state=2,
        )
    selection = fit.selection
    assert selection.s is None and "s" in selection.privacy.withheld
    hidden = [k for k, v in selection.noise.items() if v == NOT_SHOWN]
    assert "kappa (coefficient noise sd)" in hidden
    text = str(fit) + str(fit.summary()) + repr(fit.to_dict())
    assert "Delta2 = " not in text and "kappa = " not in text


# ------------------------------------------------------------------ the report as its reader sees it


def _declared_fit(**kw):
    a, _ = _pair(n=3000, p=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dp.dp_knockoff("y ~ .", a, delta=1e-6, bounds=math.sqrt(73), random_state=3, **(DECLARED | kw))


def test_operating_characteristics_figure_draws_rates_only_and_says_so(tmp_path):
    """Audit finding 2: the figure draws FDR and power (with ±2 s.e.) only, and is left out without them."""
    plain = _declared_fit(eps=1.0, fdr=0.2)
    assert [p.title for p in plain.plots()] == ["Knockoff W statistics with the threshold"]
    assumed = _declared_fit(
        eps=1.0, fdr=0.2, assume=dp.simulate.Assume(signals=2, strength=0.05), oc_trials=20
    )
    plots = assumed.plots()
    assert len(plots) == 2
    caption, alt = plots[1].title, plots[1].alt
    assert "FDR and power under the assumed model" in caption and "2 Monte Carlo standard errors" in caption
    assert "the table gives one standard error" in caption
    assert [part.split(":")[0] for part in alt.split("; ")] == [
        "FDR (target 0.2)",
        "power (share of the 2 assumed signals selected)",
    ]
    assert "noise" not in alt and "number selected" not in alt
    assert "rate (share of selections or of assumed signals)" in plots[1].svg


def test_w_caption_names_every_selected_term_or_says_how_many_more():
    """Audit finding 11: a caption listing 15 of 21 selected names says "… and 6 more"."""
    fit = _declared_fit(eps=1.0)
    fit.selected = [f"x{j}" for j in range(21)]
    alt = fit._w_plot().alt
    assert "21 selected: x0, x1" in alt and alt.endswith("… and 6 more (all in the table).")


def test_eps_inf_neither_advises_budget_nor_calls_the_filter_dp(tmp_path):
    """Audit finding 12: at eps = inf the run is the ordinary filter and more budget is no advice."""
    a, _ = _pair(n=3000, p=8)
    a["y"] = np.random.default_rng(0).standard_normal(len(a))  # no signal: nothing selected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_knockoff("y ~ .", a, eps=math.inf, delta=1e-6, random_state=1, oc_trials=0)
    assert not fit.selected
    html = Path(fit.report(str(tmp_path / "inf.html"))).read_text()
    assert "larger eps" not in html and "add budget" not in html and "larger eps" not in str(fit)
    assert "DP knockoff filter (non-private)" not in html
    assert "ordinary fixed-X knockoff filter analysis is NOT differentially private" in html
