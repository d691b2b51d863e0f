"""Vignette: FDR and power of the DP knockoff filter across n (Pournaderi & Xiang, Figure 1).

The paper's experiment: p = 50 columns with iid N(0, 1) entries, k = 15 coefficients
of 4.5 with the same sign, sigma = 1, the CSM statistic on OLS coefficients, target
FDR q = 0.2, every trial (0.2, 2p/n)-private under the paper's model (a guarantee conditional on the
model, not differential privacy: see ``dpstats.methods.knockoff.mechanism``):

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

import pandas as pd

import dpstats as dp
from dpstats.simulate.knockoff import FIGURE1_NS


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
            ax_fdr.errorbar(
                part.n, part.fdr, yerr=2 * part.fdr_se, color=colour, marker="o", label=f"Method {method}"
            )
            ax_pow.errorbar(
                part.n, part.power, yerr=2 * part.power_se, color=colour, marker="o", label=f"Method {method}"
            )
        ax_fdr.axhline(0.2, color="black", ls="--", lw=0.8, label="target q = 0.2")
        for ax, name in ((ax_fdr, "FDR"), (ax_pow, "power")):
            ax.set_xscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel(f"{name} (± 2 Monte Carlo s.e.)")
            ax.set_ylim(-0.02, 1.02)
            ax.legend(frameon=False, fontsize=8)
        fig.savefig(out, format="svg", bbox_inches="tight")
    return tab


def fit_one(out_dir, random_state: int = 7):
    """One private fit on data from the paper's model, ending in its HTML report."""
    import numpy as np

    rng = np.random.default_rng(random_state)
    n, p, k = 400_000, 50, 15
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:k] = 4.5  # amplitude 4.5 on the N(0, 1) columns, as in the paper's Figure 1
    y = X @ beta + rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)]).assign(y=y)
    # As in the paper's experiment: delta = 2p/n, row norms bounded by 12 (chi_50 exceeds 12
    # with probability ~1e-7); sigma, ||beta||, lambda_min and C_min are taken from the data
    # (Remark 2), which the privacy statement lists as data-dependent steps.
    from _common import shown_warnings

    with shown_warnings():  # a NonPrivateWarning per data-dependent step, printed
        fit = dp.dp_knockoff(
            "y ~ .",
            data=df,
            eps=0.2,
            delta=2 * p / n,
            fdr=0.2,
            method="II",
            bounds=12.0,
            random_state=random_state,
            oc_trials=20,
        )
    print(fit)
    return fit.report(str(out_dir / "knockoff_fit.html"))


if __name__ == "__main__":
    from _common import OUT, QUICK

    if QUICK:
        run(trials=20, ns=[10**3, 10**5, 3_000_000], out=str(OUT / "knockoff_figure1.svg"))
    else:
        run(out=str(OUT / "knockoff_figure1.svg"))
    print("wrote", fit_one(OUT))
