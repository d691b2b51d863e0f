"""Simulations for the DP knockoff filter: the paper's experiment and operating characteristics.

The paper's model (Pournaderi & Xiang, Figure 1): X with iid N(0, 1) entries,
k nonzero coefficients of equal amplitude and sign, y = Xβ + w, w ~ N(0, σ²I).
:func:`sample_stats` draws the sufficient statistics of one data set directly, never
forming the n × p design:

* XᵀX ~ Wishart_p(n, I) by the Bartlett decomposition XᵀX = AAᵀ (A lower
  triangular, A_ii = √χ²_{n−i+1}, A_ij ~ N(0, 1) below the diagonal);
* Xᵀw | X ~ N(0, σ²XᵀX), drawn as σAz;
* the residual sum of squares ‖(I − P_X)w‖² ~ σ²χ²_{n−p}, independent of both.

Rows are assumed never to exceed the row bound B; the default B is the
(1 − 0.001/n)-quantile of ‖x_i‖ ~ √χ²_p, so a clip happens in fewer than 0.1% of
data sets.  :func:`sample_data` draws the materialised data (with clipping) to
validate the shortcut.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import AssumptionError
from ..geometry import clip_rows_l2
from ..methods.knockoff import filter as ko
from ..methods.knockoff import mechanism as kd
from ..privacy.randomness import FastNoise


def default_row_bound(n: int, p: int) -> float:
    """√ of the (1 − 0.001/n) quantile of χ²_p: P(any of n Gaussian rows is clipped) <= 0.001."""
    from scipy.special import chdtri  # scipy.special: ~0.2 s to import, loaded on first use

    return float(math.sqrt(chdtri(p, 1e-3 / n)))  # chdtri(df, q) = chi2.isf(q, df)


def paper_beta(p: int, k: int, amplitude: float, gen: np.random.Generator) -> np.ndarray:
    """k nonzero coefficients of the same sign and size at random positions (the paper's Figure 1).

    Examples
    --------
    >>> beta = paper_beta(10, 3, 3.5, np.random.default_rng(0))
    >>> sorted(set(beta.tolist())), int(np.count_nonzero(beta))
    ([0.0, 3.5], 3)
    """
    beta = np.zeros(p)
    beta[gen.choice(p, size=k, replace=False)] = amplitude
    return beta


def sample_stats(
    n: int, p: int, beta: np.ndarray, sigma: float, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """(XᵀX, Xᵀy, RSS) of the paper's model, in O(p²) draws (module docstring).

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> xtx, xty, rss = sample_stats(200, 10, paper_beta(10, 3, 3.5, gen), 1.0, gen)
    >>> xtx.shape, xty.shape, bool(np.allclose(xtx, xtx.T)), rss > 0
    ((10, 10), (10,), True, True)
    """
    A = np.tril(gen.standard_normal((p, p)), -1)
    A[np.diag_indices(p)] = np.sqrt(gen.chisquare(n - np.arange(p)))
    xtx = A @ A.T
    xty = xtx @ beta + sigma * (A @ gen.standard_normal(p))
    rss = sigma**2 * gen.chisquare(n - p)
    return xtx, xty, float(rss)


def sample_data(
    n: int, p: int, beta: np.ndarray, sigma: float, gen: np.random.Generator, B: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Materialised (X, y) of the paper's model; rows of X clipped to norm B when given.

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> X, y = sample_data(200, 10, paper_beta(10, 3, 3.5, gen), 1.0, gen, B=5.0)
    >>> X.shape, bool(np.linalg.norm(X, axis=1).max() <= 5.0 + 1e-12)
    ((200, 10), True)
    """
    X = gen.standard_normal((n, p))
    y = X @ beta + sigma * gen.standard_normal(n)
    if B is not None:
        X, _ = clip_rows_l2(X, B)
    return X, y


@dataclass
class TrialConfig:
    """Everything one simulated analysis needs besides the data."""

    method: str = "II"  # "I", "II" or "none" (non-private)
    eps: float = 0.2
    delta: float = 1e-3
    eps_split: tuple[float, float, float] = (0.5, 0.25, 0.25)
    fdr: float = 0.2
    statistic: str = "csm"
    offset: int = 1
    ridge: float = 0.0


def budget_parts(cfg: TrialConfig) -> dict[str, float]:
    """Method I: eps·split and δ = δ₁ = δ₂ = delta/3; Method II: eps and δ₁ = δ₂ = delta/2."""
    if cfg.method == "I":
        a, b, c = cfg.eps_split
        return {
            "eps": cfg.eps * a,
            "eps1": cfg.eps * b,
            "eps2": cfg.eps * c,
            "delta": cfg.delta / 3,
            "delta1": cfg.delta / 3,
            "delta2": cfg.delta / 3,
        }
    return {"eps": cfg.eps, "delta1": cfg.delta / 2, "delta2": cfg.delta / 2}


def scales_for(cal: kd.Calibration, cfg: TrialConfig) -> kd.Scales:
    """Noise scales of ``cfg.method`` for calibration ``cal``."""
    if cfg.method == "none" or math.isinf(cfg.eps):
        return kd.Scales("none")
    parts = budget_parts(cfg)
    if cfg.method == "I":
        return kd.scales_method_one(
            cal, parts["eps"], parts["eps1"], parts["eps2"], parts["delta"], parts["delta1"], parts["delta2"]
        )
    return kd.scales_method_two(cal, parts["eps"], parts["delta1"], parts["delta2"], cfg.ridge)


def fdp_tpp(selected: np.ndarray, nonnull: np.ndarray) -> tuple[float, float]:
    """False discovery proportion and true positive proportion of one selection."""
    sel = set(int(j) for j in selected)
    true = set(int(j) for j in nonnull)
    fdp = len(sel - true) / max(1, len(sel))
    tpp = len(sel & true) / max(1, len(true))
    return fdp, tpp


def one_trial(
    n: int,
    p: int,
    k: int,
    amplitude: float,
    sigma: float,
    B: float,
    cfg: TrialConfig,
    gen: np.random.Generator,
    route: str = "shortcut",
) -> tuple[float, float, bool]:
    """One data set, one private knockoff analysis: (FDP, TPP, refused).

    The sensitivities use the true σ and ‖β‖ and the data's λ_min, C_min, ... as
    in the paper's experiment.  A data set violating an assumption of the
    sensitivity bounds is refused: nothing selected (FDP = TPP = 0).
    """
    v = None
    if route == "shortcut":
        drawn = trial_statistics(n, p, k, amplitude, sigma, B, gen)
    else:
        beta = paper_beta(p, k, amplitude, gen)
        X, y = sample_data(n, p, beta, sigma, gen, B)
        drawn = _calibrated(ko.normalise(n, X.T @ X, X.T @ y, float(y @ y)), beta, sigma, B)
    try:
        if drawn is None:
            raise AssumptionError("an assumption of the sensitivity bounds failed")
        scales = scales_for(drawn.cal, cfg)
    except AssumptionError:
        return 0.0, 0.0, True
    if route != "shortcut":
        Xk, _ = ko.materialise_knockoffs(X / drawn.st.col_norms, drawn.s, gen)
        v = np.concatenate([drawn.st.xty, Xk.T @ y])
    return (*analyse(drawn, cfg, gen, v=v, scales=scales), False)


@dataclass
class DrawnTrial:
    """One simulated data set's normalised statistics, its calibration and s (any eps, either Method)."""

    beta: np.ndarray
    st: ko.Normalised
    cal: kd.Calibration
    s: float


def trial_statistics(
    n: int, p: int, k: int, amplitude: float, sigma: float, B: float, gen: np.random.Generator
) -> DrawnTrial | None:
    """Draw one data set's statistics (:func:`sample_stats`) and calibrate; None if an assumption fails.

    The calibration does not depend on eps, so one draw serves every eps and
    both Methods (the planner's common random numbers).
    """
    beta = paper_beta(p, k, amplitude, gen)
    xtx, xty, rss = sample_stats(n, p, beta, sigma, gen)
    return _calibrated(ko.normalise(n, xtx, xty, rss=rss), beta, sigma, B)


def _calibrated(st: ko.Normalised, beta: np.ndarray, sigma: float, B: float) -> DrawnTrial | None:
    try:
        kd.check_assumption_3(B, float(st.col_norms.min()))
        cal = kd.calibration_from_data(st, B, sigma, float(np.linalg.norm(beta)))
    except AssumptionError:
        return None
    return DrawnTrial(beta=beta, st=st, cal=cal, s=ko.knockoff_s(st.lambda_min))


def analyse(
    drawn: DrawnTrial,
    cfg: TrialConfig,
    gen: np.random.Generator,
    v: np.ndarray | None = None,
    scales: kd.Scales | None = None,
) -> tuple[float, float]:
    """(FDP, TPP) of one private knockoff analysis of ``drawn`` under ``cfg``.

    Raises AssumptionError when the Method's noise scales cannot be calibrated
    (e.g. Theorem 5's condition fails); :func:`one_trial` counts that as refused.
    """
    scales = scales_for(drawn.cal, cfg) if scales is None else scales
    rel = kd.run_mechanism(
        drawn.st, drawn.s, scales, FastNoise(gen), statistic=cfg.statistic, ridge=cfg.ridge, v=v
    )
    T = ko.knockoff_threshold(rel.W, cfg.fdr, cfg.offset)
    return fdp_tpp(ko.select(rel.W, T), np.flatnonzero(drawn.beta))


def summarise(values: np.ndarray) -> tuple[float, float]:
    """Mean and Monte Carlo standard error."""
    values = np.asarray(values, dtype=float)
    se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
    return float(values.mean()), se


def simulate_grid(
    ns: Sequence[int],
    methods: Sequence[str],
    *,
    p: int,
    k: int,
    amplitude: float,
    sigma: float,
    eps: float,
    delta: Callable[[int], float] | float,
    trials: int,
    fdr: float,
    statistic: str,
    offset: int,
    ridge: float,
    B: float | None,
    eps_split: tuple[float, float, float],
    gen: np.random.Generator,
    route: str = "shortcut",
    progress: bool = False,
) -> pd.DataFrame:
    """FDR and power (with Monte Carlo SEs) of each method at each n (the paper's Figure 1).

    ``dpstats.simulate_knockoff`` is the front door with defaults and checks.

    Examples
    --------
    >>> tab = simulate_grid([1000], ["II"], p=10, k=3, amplitude=3.5, sigma=1.0, eps=1.0,
    ...                     delta=1e-3, trials=5, fdr=0.2, statistic="csm", offset=1, ridge=0.0,
    ...                     B=None, eps_split=(0.5, 0.25, 0.25), gen=np.random.default_rng(0))
    >>> tab[["n", "method", "trials"]].to_dict("records")
    [{'n': 1000, 'method': 'II', 'trials': 5}]
    """
    from threadpoolctl import threadpool_limits
    from tqdm.auto import tqdm

    rows = []
    grid = [(n, m) for m in methods for n in ns]
    with threadpool_limits(limits=1):  # p x p algebra: threads only add overhead
        for n, method in tqdm(grid, disable=not progress, desc="knockoff simulation"):
            rows.append(
                _grid_cell(
                    n,
                    method,
                    p=p,
                    k=k,
                    amplitude=amplitude,
                    sigma=sigma,
                    eps=eps,
                    delta=delta,
                    trials=trials,
                    fdr=fdr,
                    statistic=statistic,
                    offset=offset,
                    ridge=ridge,
                    B=B,
                    eps_split=eps_split,
                    gen=gen,
                    route=route,
                )
            )
    return pd.DataFrame(rows)


def _grid_cell(
    n,
    method,
    *,
    p,
    k,
    amplitude,
    sigma,
    eps,
    delta,
    trials,
    fdr,
    statistic,
    offset,
    ridge,
    B,
    eps_split,
    gen,
    route,
) -> dict:
    d = delta(n) if callable(delta) else delta
    cfg = TrialConfig(
        method=method,
        eps=eps,
        delta=d,
        eps_split=eps_split,
        fdr=fdr,
        statistic=statistic,
        offset=offset,
        ridge=ridge,
    )
    bound = default_row_bound(n, p) if B is None else B
    start = time.perf_counter()
    out = np.array([one_trial(n, p, k, amplitude, sigma, bound, cfg, gen, route) for _ in range(trials)])
    fdr_hat, fdr_se = summarise(out[:, 0])
    pow_hat, pow_se = summarise(out[:, 1])
    return {
        "n": int(n),
        "method": method,
        "trials": trials,
        "eps": eps,
        "delta": d,
        "fdr": fdr_hat,
        "fdr_se": fdr_se,
        "power": pow_hat,
        "power_se": pow_se,
        "refused": int(out[:, 2].sum()),
        "seconds": time.perf_counter() - start,
    }


def operating_characteristics(
    mu: np.ndarray,
    sigma: float,
    scales: kd.Scales,
    *,
    statistic: str,
    fdr: float,
    offset: int,
    ridge: float,
    trials: int,
    gen: np.random.Generator,
) -> dict[str, tuple[float, float]]:
    """FDR and power of the same mechanism on a model built from released quantities.

    Model: orthonormal design (Σ′ = I, s = 1, so G = I), normalised-scale effects
    ``mu`` (nonzero on the model's signals), noise sd ``sigma``; then
    [X′ X̃′]ᵀy = [mu + σz₁; σz₂] and the mechanism runs with the release's noise
    scales.  Returns mean and Monte Carlo SE of FDP and TPP.
    """
    p = mu.size
    st = ko.Normalised(n=2 * p, p=p, sigma=np.eye(p), xty=mu.copy(), rss=0.0, col_norms=np.ones(p))
    noise = FastNoise(gen)
    nonnull = np.flatnonzero(mu)
    fdps, tpps = np.empty(trials), np.empty(trials)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        for t in range(trials):
            v = np.concatenate([mu + sigma * gen.standard_normal(p), sigma * gen.standard_normal(p)])
            rel = kd.run_mechanism(st, 1.0, scales, noise, statistic=statistic, ridge=ridge, v=v)
            W = rel.W
            fdps[t], tpps[t] = fdp_tpp(ko.select(W, ko.knockoff_threshold(W, fdr, offset)), nonnull)
    return {"fdr": summarise(fdps), "power": summarise(tpps)}
