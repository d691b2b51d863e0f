"""Simulations for the DP knockoff filter: the paper's experiment and operating characteristics.

:func:`simulate_knockoff` (also ``dpstats.simulate_knockoff``) is the checked front
door of the paper's experiment, :func:`simulate_grid`; :func:`released_characteristics`
and :func:`assumed_error_rates` are the operating characteristics of one
:func:`dpstats.dp_knockoff` release, :func:`truth_diagnostics` its comparison with a
known truth (requested diagnostics, not private).

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
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import AssumptionError, DataError, PrivacyParameterError
from ..geometry import clip_rows_l2
from ..methods.knockoff import filter as ko
from ..methods.knockoff import mechanism as kd
from ..methods.knockoff.diagnostics import fdp_tpp
from ..methods.knockoff.options import ROUTES, KnockoffOptions, fractions, positive
from ..methods.knockoff.planning import KnockoffPlan
from ..privacy.randomness import FastNoise, NoiseSource, RandomState
from ..validation import check_delta, check_eps, check_fraction
from .assume import RELEASED, Assume, assumed_row, describe, exact_row

FIGURE1_NS = tuple(int(round(10**e)) for e in np.linspace(3.0, 6.6, 12))


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
    options: KnockoffOptions,
    *,
    trials: int,
    gen: np.random.Generator,
) -> dict[str, tuple[float, float]]:
    """FDR and power of the same mechanism on a model built from released quantities.

    Model: orthonormal design (Σ′ = I, s = 1, so G = I), normalised-scale effects
    ``mu`` (nonzero on the model's signals), noise sd ``sigma``; then
    [X′ X̃′]ᵀy = [mu + σz₁; σz₂] and the mechanism runs with the release's noise
    scales, the statistic, the target FDR, the offset and the ridge of ``options``.
    Returns mean and Monte Carlo SE of FDP and TPP.
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
            rel = kd.run_mechanism(
                st, 1.0, scales, noise, statistic=options.statistic, ridge=options.ridge, v=v
            )
            W = rel.W
            threshold = ko.knockoff_threshold(W, options.fdr, options.offset)
            fdps[t], tpps[t] = fdp_tpp(ko.select(W, threshold), nonnull)
    return {"fdr": summarise(fdps), "power": summarise(tpps)}


# --------------------------------------------------------------------- one release's operating characteristics


def released_characteristics(
    W: np.ndarray, n_selected: int, T: float, fdr: float, offset: int
) -> list[tuple[str, float]]:
    """What the released W imply, exactly (post-processing): the threshold, the number selected and
    the knockoff(+) estimate of the FDP at T (the smallest over thresholds when T is infinite).

    Examples
    --------
    >>> released_characteristics(np.array([3.0, 2.0, -1.0, 0.5]), 2, 2.0, 0.5, 1)[2]
    ('knockoff+ estimate of the FDP at T ((offset + #{W <= -T}) / #{W >= T})', 0.5)
    """
    plus = "+" if offset else ""
    rows = [("knockoff threshold T (released W)", float(T)), ("number selected", float(n_selected))]
    if math.isfinite(T):
        fdp_hat = float((offset + np.count_nonzero(W <= -T)) / max(1, np.count_nonzero(W >= T)))
        rows.append(
            (f"knockoff{plus} estimate of the FDP at T ((offset + #{{W <= -T}}) / #{{W >= T}})", fdp_hat)
        )
        return rows
    ts = np.unique(np.abs(W[W != 0]))
    best = min(
        (float((offset + np.count_nonzero(W <= -t)) / max(1, np.count_nonzero(W >= t))) for t in ts),
        default=math.nan,
    )
    rows.append((f"smallest knockoff{plus} FDP estimate over thresholds (none reaches q = {fdr:g})", best))
    return rows


def assumed_error_rates(
    assume: Assume | str,
    released: kd.Released,
    plan: KnockoffPlan,
    n: int,
    trials: int,
    gen: np.random.Generator,
) -> tuple[list[tuple[str, tuple[float, float]]], str]:
    """FDR and power (mean, Monte Carlo SE) of this release's mechanism under ``assume``, and how they were
    simulated: :func:`operating_characteristics` on the orthonormal design with this release's noise scales.

    ``assume``: an :class:`~dpstats.simulate.Assume` (s effects strength·√n on the unit-norm column scale,
    noise sd ``noise``) or ``"released"`` (the released coefficients of the selected terms are the effects,
    the plan's σ the noise sd).
    """
    o = plan.options
    chosen, p, sigma = released.chosen, released.mechanism.W.size, plan.sigma
    mu = np.zeros(p)
    if assume == RELEASED:
        mu[chosen] = released.mechanism.coefficients[chosen]
        how = (
            f"released coefficients of the {chosen.size} selected terms as the effects, noise sd {sigma:.4g}"
        )
    else:
        mu[: min(assume.signals, p)] = assume.strength * math.sqrt(n)
        sigma = assume.noise
        how = "effects strength·√n on the unit-norm column scale"
    if mu.any():
        est = operating_characteristics(mu, sigma, plan.scales, o, trials=trials, gen=gen)
    else:
        est = {"fdr": (0.0, 0.0), "power": (math.nan, math.nan)}
    rows = [
        (f"FDR (target {o.fdr:g})", est["fdr"]),
        (f"power (share of the {np.count_nonzero(mu)} assumed signals selected)", est["power"]),
    ]
    model = (
        f"; FDR and power simulated at the level of the statistics: orthonormal design (Sigma' = I, s = 1), "
        f"p = {p}, {how}, the same mechanism and noise scales as this release"
    )
    return rows, model


# --------------------------------------------------------------------- the paper's experiment, checked


def simulate_knockoff(
    n: int | Sequence[int] | None = None,
    p: int = 50,
    k: int = 15,
    amplitude: float = 4.5,
    sigma: float = 1.0,
    eps: float = 0.2,
    delta: float | None = None,
    method: str | Sequence[str] = ("I", "II"),
    trials: int = 250,
    *,
    fdr: float = 0.2,
    statistic: str = "csm",
    offset: int = 1,
    ridge: float = 0.0,
    bounds: float | None = None,
    eps_split: tuple[float, float, float] = (0.5, 0.25, 0.25),
    route: str = "shortcut",
    random_state: RandomState = None,
    progress: bool = False,
) -> pd.DataFrame:
    """The paper's experiment (Figure 1): FDR and power of DP knockoffs across n.

    X has iid N(0, 1) entries, β has ``k`` nonzero entries equal to ``amplitude``
    (random positions), y = Xβ + N(0, σ²).  Each trial is (eps, delta)-DP with
    delta = 2p/n by default; Method I splits eps by ``eps_split`` and delta in three
    equal parts, Method II delta in two.  The sensitivities use the true σ and ‖β‖
    and the data's λ_min and column norms, as in the paper.  ``route="shortcut"``
    samples the sufficient statistics directly (Wishart XᵀX, Xᵀw | X, χ² residual;
    O(p³) per trial whatever n); ``"materialise"`` draws the n × p data and builds X̃
    by QR (for validating the shortcut at small n).

    Parameters
    ----------
    n : int or sequence of int, optional
        Sample sizes; default the 12-point grid 10^3 ... 10^6.6 (``FIGURE1_NS``).
    p, k, amplitude, sigma : model.
    eps, delta : per-trial budget (delta default 2p/n).
    method : "I", "II" or a sequence of them.
    trials : int
        Monte Carlo trials per (n, method).
    fdr, statistic, offset, ridge, eps_split : as in :func:`dp_knockoff`.
    bounds : float, optional
        Row-norm bound B; default: the (1 − 0.001/n) quantile of √χ²_p.
    route : {"shortcut", "materialise"}
    random_state, progress : see docs/architecture.md, "Privacy conventions".

    Returns
    -------
    pandas.DataFrame
        One row per (method, n): ``fdr``, ``fdr_se``, ``power``, ``power_se``
        (Monte Carlo standard errors), ``refused`` (trials where an assumption of
        the sensitivity bound failed) and ``seconds``.

    Examples
    --------
    >>> import dpstats as dp
    >>> tab = dp.simulate_knockoff(n=[10**5], method="II", trials=20, random_state=0)
    >>> list(tab.columns[:4])
    ['n', 'method', 'trials', 'eps']
    """
    ns = list(FIGURE1_NS) if n is None else ([n] if isinstance(n, numbers.Integral) else list(n))
    methods = [method] if isinstance(method, str) else list(method)
    for m in methods:
        if m not in ("I", "II", "none"):
            raise PrivacyParameterError(f"method must be 'I', 'II' or 'none', got {m!r}.")
    if not (isinstance(p, numbers.Integral) and isinstance(k, numbers.Integral) and 1 <= k < p):
        raise DataError(f"need whole numbers 1 <= k < p, got k = {k!r}, p = {p!r}.")
    for size in ns:
        if not isinstance(size, numbers.Integral) or size < 2 * p:
            raise AssumptionError(f"each n must be a whole number >= 2p = {2 * p}, got {size!r}.")
    if not isinstance(trials, numbers.Integral) or trials < 2:
        raise DataError(f"trials must be a whole number >= 2, got {trials!r}.")
    check_eps(eps, allow_inf=True)
    check_fraction(fdr, "fdr", 0.0, 1.0, low_open=True)
    if delta is not None:
        check_delta(delta, allow_zero=False)
    if route not in ROUTES:
        raise PrivacyParameterError(f"route must be 'shortcut' or 'materialise', got {route!r}.")
    positive(bounds, "bounds (the row-norm bound B)")
    gen = NoiseSource(random_state).generator
    return simulate_grid(
        ns,
        methods,
        p=int(p),
        k=int(k),
        amplitude=float(amplitude),
        sigma=float(sigma),
        eps=float(eps),
        delta=(lambda size: 2.0 * p / size) if delta is None else float(delta),
        trials=int(trials),
        fdr=float(fdr),
        statistic=statistic,
        offset=offset,
        ridge=float(ridge),
        B=bounds,
        eps_split=fractions(eps_split, 3, "eps_split"),
        gen=gen,
        route="shortcut" if route == "shortcut" else "materialise",
        progress=progress,
    )


def characteristics_of_release(
    plan: KnockoffPlan, released: kd.Released, n: int, rng: np.random.Generator
) -> dict | None:
    """What the released W imply, exact from the release and its noise scales; FDR and power only
    under the assumed model (:func:`assumed_error_rates`, at the public ``n``).

    Returns the fields of a :class:`dpstats.results.base.OperatingCharacteristics` (None when
    ``oc_trials`` is 0).
    """
    o = plan.options
    if not o.oc_trials:
        return None
    rel = released.mechanism
    exact = released_characteristics(rel.W, released.chosen.size, released.threshold, o.fdr, o.offset)
    rows = [exact_row(q, v) for q, v in exact]
    hidden = set(plan.withheld)  # read from the rows: no output shows them (planning.read_from_data)
    table = plan.scales.table()
    rows += [exact_row(f"noise: {name}", value) for name, value in table.items() if name not in hidden]
    model = "exact, from the released W, the target q and the noise scales of this release; no data model"
    if hidden & set(table):
        model += (
            "; the noise scales computed from values read from the data are not shown (declare bounds, "
            "sigma, beta_norm, c_min and lambda_min to make them public)"
        )
    if o.assume is None:
        return {"rows": rows, "model": model}
    if any(key.startswith("kappa") or key.startswith("theta1") for key in hidden):
        model += (
            "; FDR and power under the assumed model are not simulated: they would need the noise scales, "
            "which are read from the data here"
        )
        return {"rows": rows, "model": model}
    assumed, how = assumed_error_rates(o.assume, released, plan, n, o.oc_trials, rng)
    rows += [assumed_row(quantity, est, se) for quantity, (est, se) in assumed]
    return {"rows": rows, "model": model + how, "trials": o.oc_trials, "assumption": describe(o.assume)}
