"""The knockoff vignette runs end to end at small scale and shows the paper's qualitative findings."""

from __future__ import annotations

import runpy
from pathlib import Path

VIGNETTE = Path(__file__).resolve().parents[1] / "vignettes" / "knockoff_fdr_power.py"


def test_vignette_runs_and_reproduces_figure_1_shape(tmp_path):
    module = runpy.run_path(str(VIGNETTE))
    out = tmp_path / "fig1.svg"
    tab = module["run"](trials=60, ns=[10**3, 10**5, 3_000_000], out=str(out), random_state=5)
    tab["n"] = tab["n"].astype(int)
    assert out.exists() and out.read_text().lstrip().startswith("<?xml")
    # FDR within 2 Monte Carlo s.e. of the target or below it, at every n, both methods
    assert (tab["fdr"] <= 0.2 + 2 * tab["fdr_se"]).all()
    ii = tab[tab.method == "II"].sort_values("n")
    assert ii["power"].is_monotonic_increasing and ii["power"].iloc[-1] > 0.9
    one = tab[tab.method == "I"].sort_values("n")
    assert (ii["power"].to_numpy() >= one["power"].to_numpy() - 2 * one["power_se"].to_numpy()).all()
