"""The release of a vertical GLM fit: clipping to the declared bounds, the sweeps, the noised output.

DP-mode clipping (:func:`clip_covariates`, :func:`clip_response`), :func:`release`
(the parties simulated in one process on a :class:`Design`, or the Gaussian fit from
:class:`Pooled` sufficient statistics) and the summaries of the final blocks
(:mod:`dpstats.methods.privreg`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import PrivacyParameterError
from ...formula import INTERCEPT, ModelFrame
from ...geometry import resolve_box
from ...privacy.bounds import bounds_example, design_box, variables_to_declare
from ._bcd import (
    BCDOutcome,
    BlockFinal,
    LocalBlock,
    block_coordinate_descent,
    centring,
    dispersion_estimate,
    gaussian_bcd_statistics,
    pooled_covariance,
)
from ._glm import FAMILIES, Family, Penalty
from ._plan import PrivregPlan, largest_coefficients
from ._settings import PrivregOptions


# --------------------------------------------------------------------------- DP mode: clipping
def clip_covariates(mf: ModelFrame, owner: np.ndarray, K: int, bounds) -> tuple[np.ndarray, list[float]]:
    """Covariates clipped to their declared bounds, and each party's row-norm bound R_k.

    R_k² = Σ over party k's columns of max(|lo|, |hi|)² (the intercept counts 1):
    a public bound on ‖x_ik‖ from the declared bounds alone.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> mf = model_frame("y ~ a + b", pd.DataFrame({"y": [0., 1, 1], "a": [5., 0, 1], "b": [0., 1, 2]}))
    >>> X, radius = clip_covariates(mf, np.array([0, 0, 1]), 2, (-3, 4))
    >>> X[:, 1].tolist(), radius
    ([4.0, 0.0, 1.0], [4.123105625617661, 4.0])
    """
    if bounds is None:
        raise PrivacyParameterError(
            "DP mode needs public bounds on the covariates, e.g. bounds=(-3, 3) or "
            "bounds={'x1': (0, 1), ...}: they bound each party's row norm R_k."
        )
    cols = [nm for nm in mf.names if nm != INTERCEPT]
    box = design_box(bounds, mf, cols)  # columns named by their terms where levels were read
    X = mf.X.copy()
    big = np.maximum(np.abs(box.lo), np.abs(box.hi))
    sq = np.zeros(K)
    for j, nm in enumerate(mf.names):
        if nm == INTERCEPT:
            sq[owner[j]] += 1.0
            continue
        i = cols.index(nm)
        X[:, j] = np.clip(X[:, j], box.lo[i], box.hi[i])
        sq[owner[j]] += big[i] ** 2
    return X, [math.sqrt(s) for s in sq]


@dataclass(frozen=True)
class DeclaredScales:
    """DP mode's public numbers from the declared bounds beyond R_k and B_y: each party's largest
    coefficient that can matter (:func:`~dpstats.methods.privreg.largest_coefficients`) and each design
    column's centring constant, its bounds' midpoint (:func:`midpoints`)."""

    largest: list[float]
    centre: np.ndarray


def clip_to_bounds(mf: ModelFrame, owner: np.ndarray, bounds, options: PrivregOptions):
    """DP mode's clipping and public scales: (X, y, R_k of each party, B_y, :class:`DeclaredScales`).

    :func:`clip_covariates`; :func:`clip_response` (y and B_y for the Gaussian family; y clipped to
    [0, 1] and B_y None for the binomial); the largest coefficients of
    :func:`~dpstats.methods.privreg.largest_coefficients` from :func:`smallest_bounds` and the
    columns' :func:`midpoints`.
    """
    K = int(owner.max()) + 1
    bounds = covariate_bounds(mf, bounds)
    X, radius = clip_covariates(mf, owner, K, bounds)
    y, y_bound = clip_response(mf, bounds, options.family)
    largest = largest_coefficients(smallest_bounds(mf, owner, K, bounds), options, y_bound)
    return X, y, radius, y_bound, DeclaredScales(largest, midpoints(mf, bounds))


def midpoints(mf: ModelFrame, bounds) -> np.ndarray:
    """Each design column's declared midpoint (lo + hi)/2, the intercept's 0: DP mode's centring
    constants (:func:`~dpstats.methods.privreg.centring`), public, as the bounds are.

    A clipped column less its midpoint lies within ±(hi − lo)/2, within max(|lo|, |hi|): the row-norm
    bound R_k of :func:`clip_covariates` bounds the centred rows too, so the sensitivities hold.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> mf = model_frame("y ~ a + b", pd.DataFrame({"y": [0., 1, 1], "a": [5., 0, 1], "b": [0., 1, 2]}))
    >>> midpoints(mf, {"a": (-3, 4), "b": (990, 1010)}).tolist()
    [0.0, 0.5, 1000.0]
    """
    cols = [nm for nm in mf.names if nm != INTERCEPT]
    box = design_box(bounds, mf, cols)
    mid = (np.asarray(box.lo, dtype=float) + np.asarray(box.hi, dtype=float)) / 2.0
    return np.array([0.0 if nm == INTERCEPT else float(mid[cols.index(nm)]) for nm in mf.names])


def covariate_bounds(mf: ModelFrame, bounds):
    """``bounds`` as declared; left out (None), no bounds at all when every covariate's bound is public
    (factor dummies: their coding's range), else refused naming the variables to declare.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> df = pd.DataFrame({"y": [0, 1, 1], "g": pd.Categorical(["a", "b", "a"]), "x": [1.0, 2, 3]})
    >>> covariate_bounds(model_frame("y ~ g", df), None)
    {}
    """
    if bounds is not None:
        return bounds
    undeclared = variables_to_declare(mf, [nm for nm in mf.names if nm != INTERCEPT])
    if undeclared:
        raise PrivacyParameterError(
            f"DP mode needs public bounds on the covariates, e.g. {bounds_example(undeclared)}: they bound "
            "each party's row norm R_k (factors need none: their dummies are bounded by their coding)."
        )
    return {}


def smallest_bounds(mf: ModelFrame, owner: np.ndarray, K: int, bounds) -> list[float]:
    """Each party's smallest covariate bound b = max(|lo|, |hi|) over its columns (the intercept's is 1).

    Public (the declared bounds); with :func:`dpstats.methods.privreg.largest_coefficients` it
    gives the largest coefficient of the party that can matter.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> mf = model_frame("y ~ a + b", pd.DataFrame({"y": [0., 1, 1], "a": [5., 0, 1], "b": [0., 1, 2]}))
    >>> smallest_bounds(mf, np.array([0, 0, 1]), 2, {"a": (-3, 4), "b": (0, 0.5)})
    [1.0, 0.5]
    """
    cols = [nm for nm in mf.names if nm != INTERCEPT]
    box = design_box(bounds, mf, cols)
    big = np.maximum(np.abs(box.lo), np.abs(box.hi))
    out = [math.inf] * K
    for j, nm in enumerate(mf.names):
        b = 1.0 if nm == INTERCEPT else float(big[cols.index(nm)])
        out[owner[j]] = min(out[owner[j]], b)
    return out


def clip_response(mf: ModelFrame, bounds, family: str = "gaussian") -> tuple[np.ndarray, float | None]:
    """DP mode: clip y to its public range; return (clipped y, B_y = max |bound|, None for binomial:
    its sensitivities need no B_y and it receives offsets unclipped).

    Gaussian: the declared bounds of y.  Binomial: [0, 1], the family's domain, by construction (as
    dp_glm's fitting rows): a check of y's values would be a check on the rows, whose outcome (an
    error or a fit) could differ between neighbouring data sets.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.formula import model_frame
    >>> mf = model_frame("y ~ x", pd.DataFrame({"y": [0.0, 0.371, 1.0, 2.0], "x": [1.0, 2, 3, 5]}))
    >>> clip_response(mf, None, "binomial")[0].tolist()
    [0.0, 0.371, 1.0, 1.0]
    """
    if family == "binomial":
        return np.clip(mf.y, 0.0, 1.0), None
    name = mf.response
    if isinstance(bounds, Mapping) and name not in bounds:
        raise PrivacyParameterError(
            f"family='gaussian' in DP mode needs public bounds on the response {name!r} too: add "
            f"bounds={{..., {name!r}: (lo, hi)}} (y is clipped to them; they bound the loss gradient)."
        )
    box = resolve_box({name: bounds[name]} if isinstance(bounds, Mapping) else bounds, [name])
    lo, hi = float(box.lo[0]), float(box.hi[0])
    return np.clip(mf.y, lo, hi), max(abs(lo), abs(hi))


# --------------------------------------------------------------------------- the release
@dataclass
class Released:
    """What a fit releases: the sweeps' outcome, every block's final coefficients, the fit's summaries."""

    out: BCDOutcome
    finals: list[BlockFinal]
    index: list[np.ndarray]
    dispersion: float
    deviance: float
    pooled: np.ndarray | None = None


@dataclass(frozen=True)
class Design:
    """The rows a simulated fit runs on: the design (clipped in DP mode), the response, the party
    of each design column (``owner``; every party owns one at least), the terms, the formula's
    offset() and, DP mode, the columns' public centring constants (:func:`midpoints`)."""

    X: np.ndarray
    y: np.ndarray
    owner: np.ndarray
    terms: Sequence[str]
    offset: np.ndarray | None = None
    centre: np.ndarray | None = None


@dataclass(frozen=True)
class Pooled:
    """Streamed or Dask data: the pooled sufficient statistics XᵀX, Xᵀy, yᵀy of n rows, the
    party of each design column and the columns' terms."""

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    owner: np.ndarray
    n: int
    terms: Sequence[str] = ()


def release(
    stats: Design | Pooled, pl: PrivregPlan, noise, on_round: Callable[[dict], None] | None = None
) -> Released:
    """Block coordinate descent with the parties simulated in one process (the slides' steps 1–3).

    1. β ← 0; 2. for each party k: the offset is the others' linear predictors
    (y_res^k = y − Σ_{j≠k} X_jβ_j) and β_k is the block's (penalized GLM)
    minimizer given it; 3. repeat until the sweep's relative change is below ``tol``
    (:func:`~dpstats.methods.privreg.relative_change`) — in DP mode exactly
    ``rounds`` sweeps, each shared η_k clipped and noised with the plan's σ_η of
    party k and the final β_k with its σ_β (:func:`noise_scales`).  Every block is solved on its
    columns less :func:`~dpstats.methods.privreg.centring`'s constants (the means; DP mode the
    ``Design``'s declared midpoints), the leader's intercept mapped back at the end.  From pooled
    statistics (:class:`Pooled`): the Gaussian fit of :func:`gaussian_bcd_statistics`.
    ``on_round`` receives each sweep's trace row.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(50), rng.standard_normal((50, 2))])
    >>> y = X @ np.array([1.0, 2.0, -1.0]) + rng.standard_normal(50)
    >>> from dpstats.methods.privreg import PrivregOptions, plan
    >>> o = PrivregOptions.partial(family="gaussian", lam=0.0, tol=1e-10, max_iter=1000, se="exact",
    ...                            neighbouring="replace")
    >>> r = release(Design(X, y, np.array([0, 0, 1]), ["(Intercept)", "a", "b"]), plan(o, 50, 2, simulated=True), None)
    >>> bool(np.allclose(np.concatenate([f.beta for f in r.finals]), np.linalg.lstsq(X, y, rcond=None)[0]))
    True
    """
    options = pl.options
    if isinstance(stats, Pooled):
        return _from_statistics(stats, options, on_round)
    X, y, owner, terms = stats.X, stats.y, stats.owner, stats.terms
    dp, fam, K, se = options.dp, FAMILIES[options.family], int(owner.max()) + 1, options.se
    pen = Penalty(options.penalty, options.lam)
    index = [np.flatnonzero(owner == k) for k in range(K)]
    offset_clip = (K - 1) * options.eta_clip if dp and options.family == "gaussian" else math.inf
    intercept = list(terms).index(INTERCEPT) if INTERCEPT in terms else None
    declared = stats.centre if dp else None  # DP mode: the bounds' midpoints (public); else the means
    centred = intercept is not None and (declared is not None or not dp)
    centre = centring(X, intercept, declared) if centred else None
    blocks = [
        LocalBlock(
            X[:, ix],
            y,
            fam,
            pen,
            _mask(terms, ix, dp),
            X.shape[1] - len(ix),
            se="none" if dp else (se if se in ("exact", "history") else "conditional"),
            sigma_eta=pl.sigmas[0][k] if dp else 0.0,
            eta_clip=options.eta_clip,
            noise=noise,
            offset_clip=offset_clip,
            centre=None if centre is None else centre[ix],
            intercept=_position(ix, intercept),
        )
        for k, ix in enumerate(index)
    ]
    out = block_coordinate_descent(
        blocks,
        y,
        fam,
        options.sweeps(),
        check_separation=(options.penalty is None and not dp),
        on_round=on_round,
        offset=stats.offset,
        deviance=not dp,
    )
    finals = finish_blocks(blocks, out, fam, y, X.shape[1], pl.sigmas[1] if dp else None)
    pooled = None
    if se == "pooled" and not dp and options.penalty is None:
        disp = dispersion_estimate(fam, y, out.eta, X.shape[0] - X.shape[1])
        pooled = pooled_covariance(X, fam, out.eta, disp)
    summaries = fit_summaries(fam, y, out.eta, X.shape[0] - X.shape[1], dp)
    return Released(out, finals, index, *summaries, pooled=pooled)


def _from_statistics(stats: Pooled, options: PrivregOptions, on_round) -> Released:
    """The Gaussian, unpenalized, exact fit from pooled sufficient statistics (streamed/Dask data).

    The sweeps of :func:`gaussian_bcd_statistics`; standard errors from
    σ̂²(XᵀX)⁻¹, σ̂² = RSS/(n − p) (R's summary.lm).
    """
    xtx, n = stats.xtx, stats.n
    index = [np.flatnonzero(stats.owner == k) for k in range(int(stats.owner.max()) + 1)]
    intercept = list(stats.terms).index(INTERCEPT) if INTERCEPT in stats.terms else None
    beta, out, rss = gaussian_bcd_statistics(
        xtx, stats.xty, stats.yty, index, options.sweeps(), on_round, intercept=intercept
    )
    finals, pooled = statistics_finals(xtx, beta, rss, n, index, options.se)
    df_resid = n - xtx.shape[0]
    return Released(out, finals, index, rss / df_resid if df_resid > 0 else math.nan, rss, pooled=pooled)


def _position(ix: np.ndarray, column: int | None) -> int | None:
    """Where ``column`` (the intercept's) lies among a block's columns ``ix``; None if elsewhere."""
    hits = np.flatnonzero(ix == column) if column is not None else []
    return int(hits[0]) if len(hits) else None


def _mask(terms: Sequence[str], ix: np.ndarray, dp: bool) -> np.ndarray:
    """Penalized columns: all in DP mode (strong convexity), all but the intercept otherwise."""
    if dp:
        return np.ones(len(ix))
    return np.array([0.0 if terms[j] == INTERCEPT else 1.0 for j in ix])


def finish_blocks(blocks, out: BCDOutcome, fam: Family, y: np.ndarray, p: int, sig_beta) -> list[BlockFinal]:
    """Ask every block for its final coefficients (and covariance); the leader's intercept (the first
    block's ``intercept``) less every block's shift cᵀβ_k: the coefficient on the columns as they are
    (post-processing of the released β_k in DP mode, whose c are public)."""
    disp = dispersion_estimate(fam, y, out.eta, y.shape[0] - p)
    others = [None] * len(blocks)
    if getattr(blocks[0], "se", None) == "exact" and blocks[0].penalty.kind is None:
        bases = [b.column_basis() for b in blocks]
        others = [np.column_stack([q for j, q in enumerate(bases) if j != k]) for k in range(len(blocks))]
    finals = [
        b.finish(out.eta, disp, sig_beta[k] if sig_beta else 0.0, others[k]) for k, b in enumerate(blocks)
    ]
    intercept = getattr(blocks[0], "intercept", None)
    if intercept is not None:
        finals[0].beta[intercept] -= sum(f.shift for f in finals)
    return finals


def not_released_summaries(fam: Family) -> tuple[float, float]:
    """A DP fit's dispersion and deviance: functions of the raw y, so not released (NaN; 1 where fixed)."""
    return (1.0 if fam.fixed_dispersion else math.nan), math.nan


def dispersion_and_deviance(
    fam: Family, y: np.ndarray, eta: np.ndarray, df_resid: int
) -> tuple[float, float]:
    """The fit's dispersion estimate and deviance, from y and the final linear predictor."""
    return dispersion_estimate(fam, y, eta, df_resid), fam.deviance(y, eta)


def fit_summaries(
    fam: Family, y: np.ndarray, eta: np.ndarray, df_resid: int, dp: bool
) -> tuple[float, float]:
    """The dispersion and deviance a fit shows: :func:`not_released_summaries` in DP mode (``dp``), else
    :func:`dispersion_and_deviance` (one process or networked)."""
    return not_released_summaries(fam) if dp else dispersion_and_deviance(fam, y, eta, df_resid)


def statistics_finals(xtx: np.ndarray, beta: np.ndarray, rss: float, n: int, index, se: str):
    """Block results with SEs from σ̂²(XᵀX)⁻¹, σ̂² = RSS/(n − p) (R's summary.lm)."""
    p = xtx.shape[0]
    disp = rss / (n - p) if n > p else math.nan
    cov = disp * np.linalg.inv(xtx)
    finals = []
    for ix in index:
        p_other = p - len(ix)
        if se == "exact":  # the Schur complement of the exact bases is the pooled block
            finals.append(BlockFinal(beta[ix].copy(), cov[np.ix_(ix, ix)], p_other, p_other))
        elif se == "conditional":
            finals.append(BlockFinal(beta[ix].copy(), disp * np.linalg.inv(xtx[np.ix_(ix, ix)]), 0, p_other))
        else:
            finals.append(BlockFinal(beta[ix].copy(), None, 0, p_other))
    return finals, (cov if se == "pooled" else None)
