"""Private PCA as a method of its own: Analyze Gauss on the Gram matrix of clipped rows.

Dwork, Talwar, Thakurta & Zhang (2014), Algorithm 1 ("Analyze Gauss"):
release the top-k eigenvectors of A = Σ xxᵀ + E, E symmetric with iid
N(0, σ²) entries on and above the diagonal, for rows x in a ball of radius C.
It is step 1 of Kamath et al. (2019), Algorithm 1 (:mod:`dpstats.methods.gmm`),
and the mechanism lives once in :mod:`dpstats.privacy.pca`.  Here it is a
release of its own: one ledger row holding the whole (eps, delta), from a
Gram matrix that any engine computes in one pass, where dp_gmm spends a ρ
share on it inside its zCDP plan over rows in memory.

Privacy: ‖xxᵀ − yyᵀ‖_F ≤ √2·C² (replace-one) and ‖xxᵀ‖_F ≤ C²
(add/remove-one); σ = Δ_F/√(2ρ) gives ρ-zCDP (Bun & Steinke 2016,
Prop. 1.6), converted once with ρ + 2√(ρ log 1/δ) = eps (Prop. 1.3).
"""

from __future__ import annotations

import numpy as np

from ..privacy.accountant import LedgerEntry
from ..privacy.calibration import rho_from_eps_delta
from ..privacy.pca import PrivatePCA, private_pca_gram
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource

SENSITIVITY_TEXT = {
    "replace": "Δ_F = √2·C² (replace-one; rows in the ball of radius C)",
    "add_remove": "Δ_F = C² (add/remove-one; rows in the ball of radius C)",
}


def plan(*, k: int, eps: float, delta: float, neighbouring: str, radius: float, engine: str) -> Plan:
    """The privacy plan of one Analyze Gauss release: one Gaussian step, all of (eps, delta).

    ``radius`` is the clipping radius C (public: the box's half-diagonal or
    the declared radius); ``engine`` names the pass that computed Σ xxᵀ.

    Examples
    --------
    >>> p = plan(k=2, eps=1.0, delta=1e-6, neighbouring="replace", radius=2.0, engine="in-memory")
    >>> p.eps, p.delta, p.entries[0].sensitivity[:10]
    (1.0, 1e-06, 'Δ_F = √2·C')
    """
    text = SENSITIVITY_TEXT[neighbouring]
    entry = LedgerEntry(
        step=f"private PCA: top-{k} subspace of Σ xxᵀ + symmetric Gaussian noise (Analyze Gauss)",
        mechanism="Gaussian (zCDP)",
        eps=eps,
        delta=delta,
        sensitivity=text,
        note="ρ-zCDP converted once: ρ + 2√(ρ log 1/δ) = eps",
        event={"kind": "gaussian", "rho": rho_from_eps_delta(eps, delta)},
    )
    notes = [
        f"Rows clipped to the box, centred at its midpoint and shrunk onto the ball of radius C = {radius:.4g}; "
        f"Σ xxᵀ computed in one pass by the {engine} engine.",
        "The numbers of clipped values and shrunk rows are not released.",
        "Eigenvectors, their order and sign convention are post-processing of the noisy matrix.",
    ]
    return Plan(
        method="DP PCA (Analyze Gauss)",
        neighbouring=neighbouring,
        entries=[entry],
        sensitivities={"Σ xxᵀ (Frobenius)": text.replace("C", f"C (C = {radius:.4g})", 1)},
        notes=notes,
    )


def release(
    gram: np.ndarray, k: int, radius: float, eps: float, delta: float, neighbouring: str, noise: NoiseSource
) -> PrivatePCA:
    """The top-k subspace of ``gram`` (Σ xxᵀ of rows in the ball of ``radius``) + symmetric Gaussian noise.

    Examples
    --------
    >>> X = np.c_[np.random.default_rng(0).normal(0, 3, 2000), np.zeros(2000)]
    >>> pca = release(X.T @ X, 1, 10.0, 1.0, 1e-6, "replace", NoiseSource(0))
    >>> bool(abs(pca.basis[0, 0]) > 0.99)
    True
    """
    return private_pca_gram(gram, int(k), radius, rho_from_eps_delta(eps, delta), neighbouring, noise)
