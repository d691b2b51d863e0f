"""Vignette: FDR and power of the DP knockoff filter across n (Pournaderi & Xiang, Figure 1).

The paper's experiment: p = 50 columns with iid N(0, 1) entries, k = 15 coefficients
of 4.5 with the same sign, sigma = 1, the CSM statistic on OLS coefficients, target
FDR q = 0.2, every trial (0.2, 2p/n)-DP:

* Method I spends eps = 0.1 on the cross-products and 0.05 each on lambda_min and
  the Gram matrix (delta split in three equal parts);
* Method II spends eps = 0.2 on the OLS coefficients (delta split in two).

``dpstats.simulate_knockoff`` draws the sufficient statistics of each data set
directly (Wishart Gram matrix, Gaussian cross-products, chi-square residual), so a
trial at n = 4 million costs the same as one at n = 1000.

Run ``python vignettes/knockoff_fdr_power.py`` for the full figure (about 15 s), or
call :func:`run` with fewer trials.  What to look for: FDR stays at or below 0.2
for every n; power rises with n; Method II is more powerful than Method I.
"""

from __future__ import annotations

import sys

import pandas as pd

import dpstats as dp
from dpstats.api.knockoff import FIGURE1_NS


def run(trials: int = 250, ns=FIGURE1_NS, out: str | None = None, random_state: int = 2021) -> pd.DataFrame:
    """Simulate the figure; write it as SVG to ``out`` if given; return the table."""
    tab = dp.simulate_knockoff(n=list(ns), method=("I", "II"), trials=trials, random_state=random_state)
    print(tab[["n", "method", "fdr", "fdr_se", "power", "power_se"]].round(3).to_string(index=False))
    if out:
        from dpstats.plotting import new_figure

        fig, axes = new_figure(8.0, 3.2)
        fig.clf()
        ax_fdr, ax_pow = fig.subplots(1, 2)
        for method, colour in (("I", "#d48a00"), ("II", "#3b6fd8")):
            part = tab[tab.method == method]
            ax_fdr.errorbar(part.n, part.fdr, yerr=2 * part.fdr_se, color=colour, marker="o", label=f"Method {method}")
            ax_pow.errorbar(part.n, part.power, yerr=2 * part.power_se, color=colour, marker="o", label=f"Method {method}")
        ax_fdr.axhline(0.2, color="black", ls="--", lw=0.8, label="target q = 0.2")
        for ax, name in ((ax_fdr, "FDR"), (ax_pow, "power")):
            ax.set_xscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel(f"{name} (± 2 Monte Carlo s.e.)")
            ax.set_ylim(-0.02, 1.02)
            ax.legend(frameon=False, fontsize=8)
        fig.savefig(out, format="svg", bbox_inches="tight")
    return tab


if __name__ == "__main__":
    run(out=sys.argv[1] if len(sys.argv) > 1 else None)
