"""DP-SIS error rates under an assumed model, simulated from the scores' sampling law.

Model (:class:`~dpstats.simulate.Assume`): x_j = √ρ·f + √(1 − ρ)·z_j with f, z_j
iid N(0, 1); y = b·Σ_{j ≤ s} x_j + σ·e.  Per trial, in O(s² + d) draws and
independent of n:

* the centred scatter matrix of the s + 2 variables (f, z_1, …, z_s, e) is
  Wishart_{s+2}(n − 1, I); its Bartlett factor L (L Lᵀ = scatter) gives each
  centred column as a row of L, so the signals' centred cross-products x_jᵀy_c
  are exact dot products;
* for a null column, z_jᵀy_c | (f, z_S, e) ~ N(0, ‖y_c‖²) independently over j,
  so x_jᵀy_c = √ρ·f_cᵀy_c + √(1 − ρ)·‖y_c‖·ξ_j with ξ_j ~ N(0, 1);
* the column means are N(0, 1/n), independent of the centred parts.

The score is then mapped onto the [−1, 1] scale the mechanism uses: the
declared bounds sit at mean ± ``bound_sds`` sd (mean at the midpoint), so
x ↦ x/(c·1) and y ↦ y/(c·sd_y) with c = ``bound_sds``.

* ``"centred"``: |Σ_i (u_ij − ū_j)(v_i − v̄)| = |x_jᵀy_c|/(c² sd_y);
* ``"midpoint"``: |Σ_i u_ij v_i| = |x_jᵀy_c + n x̄_j ȳ|/(c² sd_y) (the paper's);
* ``"maxabs"``: |x_jᵀy_c|/(M_j M_y), M the column's max-abs.  A column's
  max-abs is its norm times the largest |coordinate| V of its direction, so
  M_j = ‖x_j‖·V_j and M_y = ‖y_c‖·V_y: the ‖y_c‖ in the cross-product
  cancels, and ‖x_j‖² = (x_jᵀŷ)² + χ²_{n−2} for a null column (its part
  orthogonal to y).  V is drawn from its law, max_i |z_i|/‖z‖ with
  z ~ N(0, I_n) (:func:`direction_max_abs`), independently of the rest.

Approximations: values are not clipped at the bounds (at c = 3 about 0.3% of
values would be); for ``"maxabs"`` V is taken independent of the column's
norm and cross-product, and the max-abs is that of the centred column.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..methods.sis import SISPlan, private_top_k
from ..privacy.topk import largest_class_noise, recovery_gaps
from .assume import Assume, assumed_row, exact_row

SCORES = ("centred", "midpoint", "maxabs")


def sis_scores(
    n: int,
    d: int,
    assume: Assume,
    rng: np.random.Generator,
    *,
    score: str = "centred",
    coefficients: np.ndarray | None = None,
) -> np.ndarray:
    """One draw of the d DP-SIS scores under ``assume``; the first ``assume.signals`` are the signals.

    Parameters
    ----------
    n, d : int
        Public numbers of rows and candidate columns.
    assume : Assume
    rng : numpy.random.Generator
    score : {"centred", "midpoint", "maxabs"}
        The score the front door computes (module docstring).
    coefficients : ndarray, optional
        The signals' coefficients (one per signal, e.g. the Fan-Lv draws of the
        DP-SIS paper's design); default ``assume.strength`` for each.

    Returns
    -------
    ndarray of d non-negative scores on the [−1, 1] scale.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.simulate import Assume, sis_scores
    >>> sis_scores(100, 50, Assume(signals=2, strength=1.0), np.random.default_rng(0)).shape
    (50,)
    """
    _check_score(score)
    s, rho, b = min(assume.signals, d), assume.correlation, assume.strength
    L = _bartlett(s + 2, n - 1, rng)
    signal_cols = math.sqrt(rho) * L[0] + math.sqrt(1 - rho) * L[1 : s + 1]
    if coefficients is None:
        y_c = b * signal_cols.sum(axis=0) + assume.noise * L[s + 1]
        sd_y = assume.response_sd()
    else:
        b = np.asarray(coefficients, dtype=float)[:s]
        y_c = b @ signal_cols + assume.noise * L[s + 1]
        sd_y = _response_sd(b, rho, assume.noise)
    norm_y = float(np.linalg.norm(y_c))
    xty = np.empty(d)
    xty[:s] = signal_cols @ y_c
    xty[s:] = math.sqrt(rho) * float(L[0] @ y_c) + math.sqrt(1 - rho) * norm_y * rng.standard_normal(d - s)
    if score == "maxabs":
        v = direction_max_abs(n, d + 1, rng)
        along = xty / norm_y  # each column's coordinate along ŷ_c
        norm_x = np.empty(d)
        norm_x[:s] = np.linalg.norm(signal_cols, axis=1)
        norm_x[s:] = np.sqrt(along[s:] ** 2 + rng.chisquare(n - 2, d - s))
        return np.abs(along) / (norm_x * v[:d] * v[d])
    if score == "midpoint":
        means = rng.standard_normal(d + 2) / math.sqrt(n)  # f, z_1..z_d, e
        x_bar = math.sqrt(rho) * means[0] + math.sqrt(1 - rho) * means[1 : d + 1]
        signal_mean = b * x_bar[:s].sum() if coefficients is None else float(b @ x_bar[:s])
        y_bar = signal_mean + assume.noise * means[d + 1]
        xty = xty + n * x_bar * y_bar
    return np.abs(xty) / (assume.bound_sds**2 * sd_y)


def sis_trials(
    n: int,
    d: int,
    k: int,
    eps: float,
    assume: Assume,
    rng: np.random.Generator,
    *,
    trials: int,
    sensitivity: float,
    score: str = "centred",
    topk: str = "canonical_lipschitz",
    gamma: float = 0.5,
) -> pd.DataFrame:
    """Per-trial outcomes of DP-SIS under ``assume``: public inputs + assumption + generator.

    Each trial draws the scores with :func:`sis_scores` and runs the same private
    top-k (scores divided by ``sensitivity``).

    Returns
    -------
    DataFrame with one row per trial: ``true_selected``, ``precision``
    (true_selected / k) and ``recall`` (true_selected / signals).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.simulate import Assume, sis_trials
    >>> out = sis_trials(200, 100, 3, 5.0, Assume(signals=3, strength=1.0), np.random.default_rng(0),
    ...                  trials=5, sensitivity=4.0)
    >>> list(out.columns)
    ['true_selected', 'precision', 'recall']
    """
    s = min(assume.signals, d)
    hits = np.empty(trials, dtype=int)
    for t in range(trials):
        scores = sis_scores(n, d, assume, rng, score=score)
        chosen = private_top_k(scores, k, eps, sensitivity, rng, topk=topk, gamma=gamma)
        hits[t] = np.count_nonzero(chosen < s)
    return pd.DataFrame({"true_selected": hits, "precision": hits / k, "recall": hits / s})


def operating_characteristics(
    plan: SISPlan, n: int | None, trials: int, assume: Assume | None, rng: np.random.Generator
) -> dict | None:
    """DP-SIS's operating characteristics: the noise scale and the score gaps for exact recovery,
    exact from public inputs (``plan``: d, k, eps, the sensitivity); precision and recall only under
    ``assume``, simulated at the public ``n`` (:func:`sis_trials`).

    Returns the fields of a :class:`dpstats.results.base.OperatingCharacteristics` (None when
    ``trials`` is 0).  ``n`` is None where it is private (add/remove-one-row, rows dropped).

    Examples
    --------
    >>> from dpstats.methods.sis import SISOptions, plan
    >>> pl = plan(SISOptions.partial(eps=2.0, neighbouring="replace", topk="canonical_lipschitz", gamma=0.5),
    ...           d=100, k=3, n=400, score="centred")
    >>> oc = operating_characteristics(pl, 400, 50, None, np.random.default_rng(0))
    >>> [row["quantity"].split(" (")[0] for row in oc["rows"]][:2]
    ['expected largest noise term', 'score gap x(k) - x(k+1) giving exact top-3 recovery with prob >= 0.5']
    """
    if not trials:
        return None
    d, k, eps, gamma, sensitivity = plan.d, plan.k, plan.select_eps, plan.gamma, plan.sensitivity
    _, harmonic = largest_class_noise(d, k)
    rows = [
        exact_row(
            "expected largest noise term (score units): 2·Δ·H_m/(gamma·eps)",
            2 * sensitivity * harmonic / max(gamma * eps, 1e-300),
        )
    ]
    for prob, gap in zip((0.5, 0.9), recovery_gaps((0.5, 0.9), d, k, eps, gamma)):
        rows.append(
            exact_row(
                f"score gap x(k) - x(k+1) giving exact top-{k} recovery with prob >= {prob:g} (score units)",
                sensitivity * gap,
            )
        )
    sizes = f"n = {n}, " if n is not None else ""  # n is private under add/remove
    model = (
        f"exact, from {sizes}d = {d}, k = {k}, eps = {eps:g}, sensitivity {sensitivity:g} and the "
        "recovery bound of the canonical Lipschitz mechanism (Shekelyan & Loukides 2022; a union bound over its output classes); no data model"
    )
    if assume is None:
        return {"rows": rows, "model": model}
    score = plan.score
    sim = sis_trials(
        n,
        d,
        k,
        eps,
        assume,
        rng,
        trials=trials,
        sensitivity=sensitivity,
        score=score,
        topk=plan.topk,
        gamma=gamma,
    )
    s = min(assume.signals, d)
    for name, text in (
        ("precision", f"precision (share of the {k} selected that are true)"),
        ("recall", f"recall (share of the {s} true signals selected)"),
    ):
        est, se = mean_and_se(sim[name])
        rows.append(assumed_row(text, est, se))
    model += (
        f"; precision and recall simulated from the sampling law of the {score} scores at n = {n} "
        "(clipping ignored)"
    )
    return {"rows": rows, "model": model, "trials": trials, "assumption": assume.describe()}


def mean_and_se(values) -> tuple[float, float]:
    """Mean and Monte Carlo standard error of per-trial outcomes."""
    v = np.asarray(values, dtype=float)
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se


def _response_sd(b: np.ndarray, rho: float, noise: float) -> float:
    """sd of y = Σ_j b_j x_j + noise·e: Var y = (1 − ρ)Σ b_j² + ρ(Σ b_j)² + noise²."""
    return math.sqrt((1 - rho) * float(b @ b) + rho * float(b.sum()) ** 2 + noise**2)


def _bartlett(p: int, dof: int, rng: np.random.Generator) -> np.ndarray:
    """Lower-triangular L with L Lᵀ ~ Wishart_p(dof, I)."""
    L = np.tril(rng.standard_normal((p, p)), -1)
    L[np.diag_indices(p)] = np.sqrt(rng.chisquare(dof - np.arange(p)))
    return L


def direction_max_abs(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of V = max_i |z_i|/‖z‖, z ~ N(0, I_n): the largest coordinate of a random direction.

    Exact draws for n <= 2000 (from a pool of 4096 exact draws when ``size`` is
    larger, resampled); beyond, max_i |z_i| from its law (Φ⁻¹((1 + U^{1/n})/2))
    over √χ²_n drawn independently (their dependence vanishes as n grows).

    Examples
    --------
    >>> v = direction_max_abs(100, 5, np.random.default_rng(0))
    >>> bool(((v > 0.1) & (v < 1)).all())
    True
    """
    from scipy.special import ndtri  # scipy.special: ~0.2 s to import, loaded on first use

    if n > 2000:
        top = ndtri((1 + rng.random(size) ** (1 / n)) / 2)
        return top / np.sqrt(rng.chisquare(n, size))
    pool = min(size, 4096)
    z = rng.standard_normal((pool, n))
    v = np.abs(z).max(axis=1) / np.linalg.norm(z, axis=1)
    return v if pool == size else v[rng.integers(0, pool, size)]


def _check_score(score: str) -> None:
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}.")
