"""Front door of GLMs on vertically partitioned data (DESIGN §1, §2.1; privreg).

``vertical_glm`` simulates the parties in one process (for analysts and
tests); :class:`dpstats.vertical.Party` runs the same protocol with one party
per process over authenticated, encrypted TCP.  Both use
:func:`dpstats.methods.vertical.block_coordinate_descent`.

Design (stated, as privreg): the outcome y is held by the first party (the
leader, which also holds the intercept) and shared with every party; the
covariate columns never leave their party; only linear predictors X_kβ_k
(exact, or clipped and noised in DP mode) travel.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from ..formula import INTERCEPT, ModelFrame, model_frame
from ..methods import vertical as m
from ..privacy.accountant import Accountant
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence
from ..results.base import attach_diagnostics
from ..results.vertical import VerticalGLMResult
from ._common import charge, missing_rows_step
from .vertical_steps import (assemble_result, call_record, check_response, check_rows, clip_for_dp,
                             clip_response_for_dp, finish_blocks, plan_releases, privacy_statement,
                             row_id_hash, validate_arguments)

_IDENT = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")


def vertical_glm(
    formula: str,
    data: pd.DataFrame | Sequence[pd.DataFrame],
    parties: Sequence[Sequence[str]] | Mapping[str, Sequence[str]],
    family: str = "gaussian",
    *,
    row_id: str | None = None,
    penalty: str | None = None,
    lam: float = 0.0,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    se: str = "exact",
    conf_level: float = 0.95,
    eps: float | None = None,
    delta: float | None = None,
    bounds=None,
    rounds: int = 10,
    eta_clip: float = 4.0,
    coef_share: float = 0.1,
    neighbouring: str = "replace",
    diagnostics: bool = False,
    random_state: RandomState = None,
    accountant: Accountant | None = None,
    strict: bool = False,
    progress: bool = False,
) -> VerticalGLMResult:
    """Fit a GLM whose columns are held by different parties, by block coordinate descent.

    Each party k fits its own coefficients β_k with the other parties' linear
    predictors as an offset and shares only X_kβ_k (van Kesteren, "Private
    Regression using Block Coordinate Descent"; R package privreg), sweeping
    until Σ|Δβ| < ``tol``.  Without ``eps`` the fit equals the pooled GLM fit
    and gives no formal privacy (the linear predictors are revealed every
    sweep; the result says so).  With ``eps``/``delta`` every shared linear
    predictor and the final coefficients get Gaussian noise, accounted by zCDP
    composition over a fixed number of ``rounds``.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``"y ~ ."``; every term's variables must belong
        to a single party.
    data : DataFrame or list of DataFrame
        One frame with all columns, or one frame per party (aligned with
        ``parties``), whose rows are matched by ``row_id`` (checked by a hash
        of the row ids, never the data).  Streamed or Dask data
        (:mod:`dpstats.engines`) are accepted for ``family="gaussian"``
        without penalty or eps: the parties are then simulated from the
        pooled sufficient statistics XᵀX, Xᵀy, yᵀy (one pass; not the
        networked protocol, as the result states).
    parties : list of lists of column names, or dict name -> list
        Which data columns each party holds.  The first party is the leader:
        it holds y (shared with all parties, as in privreg) and the intercept.
    family : {"gaussian", "binomial", "poisson"}
        Canonical links (identity, logit, log).
    row_id : str, optional
        With a list of frames: the id column (default: each frame's index).
    penalty : {None, "ridge", "lasso"}, lam : float
        Objective (1/2n)·deviance + lam·(½‖β‖² or ‖β‖₁), intercept unpenalized.
    tol, max_iter : float, int
        Stop when Σ|Δβ| over a sweep < tol (privreg: 1e-8, 10 000 sweeps).
    se : {"exact", "history", "conditional", "pooled", "none"}
        Standard errors (see :mod:`dpstats.methods.vertical`): "exact" shares
        each party's column-space basis after convergence (equal to the pooled
        Fisher-information SEs; discloses the column spaces); "history" uses
        only the offsets received during the sweeps (privreg; exact when their
        span reaches p_{-k}); "conditional" treats the other blocks as fixed;
        "pooled" uses all columns at once (simulation reference only).
    conf_level : float
        Level of the Wald confidence intervals.
    eps, delta : float, optional
        ``None`` or ``inf``: the exact (non-private) protocol.  Otherwise DP mode (binomial or gaussian
        family with ``penalty="ridge"``, ``lam > 0``; poisson is refused: its log-link gradient is
        unbounded): the budget for all releases, protecting covariates given y.  Sensitivities:
        :func:`dpstats.methods.vertical.binomial_ridge_sensitivities` and
        :func:`dpstats.methods.vertical.gaussian_ridge_sensitivities`.
    bounds : (lo, hi) or dict
        Public covariate bounds (DP mode): values are clipped to them.  Gaussian DP mode also needs
        bounds on the response (a pair applies to y too; a dict needs the response's name), and y
        is clipped to them.
    rounds : int
        DP mode: fixed number of sweeps (no data-dependent stopping).
    eta_clip : float
        DP mode: released linear predictors are clipped to [−eta_clip, eta_clip].
    coef_share : float in (0, 1)
        DP mode: share of the zCDP budget ρ spent on the final coefficients.
    diagnostics : bool
        Attach non-private diagnostics (rows dropped for missing values).
        Off by default: no output shows them unless asked.
    neighbouring, random_state, accountant, strict, progress
        See DESIGN §1 (DP mode supports ``neighbouring="replace"`` only).

    Returns
    -------
    VerticalGLMResult

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats as dp
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.standard_normal((200, 4)), columns=["x1", "x2", "x3", "x4"])
    >>> df["y"] = df.x1 - df.x3 + rng.standard_normal(200)
    >>> fit = dp.vertical_glm("y ~ .", df, parties=[["x1", "x2"], ["x3", "x4"]])
    >>> fit.converged, abs(fit.coef()["x1"] - 1) < 0.2
    (True, True)
    """
    spec = validate_arguments(family, penalty, lam, tol, max_iter, se, conf_level, eps, delta,
                              rounds, eta_clip, coef_share, neighbouring, strict, accountant)
    spec["diagnostics"] = diagnostics
    names, columns = _parties(parties)
    from .. import engines

    if engines.is_engine_input(data):  # streamed / Dask: the Gaussian fit from sufficient statistics
        return _gaussian_from_statistics(formula, data, names, columns, spec, penalty, row_id, tol, max_iter,
                                         se, random_state, progress)
    frame = _combine(data, columns, names, row_id)
    mf, response_note = response_frame(formula, frame, family)
    owner = assign_terms(mf, columns, names)
    check_response(mf.y, family, mf.response)
    dd = DataDependence(spec["strict"])
    missing_rows_step(dd, mf)
    dp = spec["eps"] is not None
    X, y = mf.X, mf.y
    radius = y_bound = None
    if dp:
        X, radius = clip_for_dp(mf, owner, len(names), bounds)
        if family == "gaussian":
            y, y_bound = clip_response_for_dp(mf, bounds)
    entries, sigmas = plan_releases(spec, mf.n, len(names), radius, y_bound=y_bound)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(spec["accountant"], entries, "vertical_glm")

    fam = m.FAMILIES[family]
    pen = m.Penalty(penalty, float(lam))
    index = [np.flatnonzero(owner == k) for k in range(len(names))]
    offset_clip = (len(names) - 1) * float(eta_clip) if y_bound is not None else math.inf
    blocks = [m.LocalBlock(X[:, ix], y, fam, pen, _mask(mf.names, ix, dp), mf.p - len(ix),
                           se="none" if dp else (se if se in ("exact", "history") else "conditional"),
                           sigma_eta=sigmas[0][k] if dp else 0.0, eta_clip=eta_clip, noise=noise,
                           offset_clip=offset_clip)
              for k, ix in enumerate(index)]
    out = m.block_coordinate_descent(blocks, y, fam, tol=tol, max_iter=rounds if dp else max_iter,
                                     fixed_rounds=dp, check_separation=(penalty is None and not dp),
                                     progress=progress)
    finals = finish_blocks(blocks, out, fam, y, mf.p, sigmas[1] if dp else None)
    pooled = None
    if se == "pooled" and not dp and penalty is None:
        disp = m.dispersion_estimate(fam, mf.y, out.eta, mf.n - mf.p)
        pooled = m.pooled_covariance(X, fam, out.eta, disp)
    statement = privacy_statement(spec, entries, dd, noise, len(names), simulated=True)
    call = call_record(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds)
    result = assemble_result(call, mf.names, mf.n, names, index, finals, out, fam, y, spec,
                             statement, se, pooled, simulated=True)
    result.response_note = response_note
    result.set_model_summaries(mf, mf.y, out.eta, dp=dp, se=se, pooled=pooled, rows=spec["diagnostics"])
    return attach_diagnostics(result, spec.get("diagnostics", False), lambda: _diagnostics(mf))


def response_frame(formula: str, frame: pd.DataFrame, family: str) -> tuple[ModelFrame, str]:
    """Model frame; a two-level factor response is coded 0/1 for the binomial family (as R's glm)."""
    try:
        return model_frame(formula, frame), ""
    except DataError as exc:
        if family != "binomial" or "numeric response is needed" not in str(exc):
            raise
    mf = model_frame(formula, frame, response="factor")
    if len(mf.classes) != 2:
        raise DataError(f"family='binomial' needs a 0/1 or two-level response; {mf.response!r} has "
                        f"{len(mf.classes)} levels.")
    mf.y = mf.y.astype(float)
    return mf, f"P({mf.response} = {mf.classes[1]!r}) is modelled (first level {mf.classes[0]!r} coded 0)"


# --------------------------------------------------------------------------- streamed / Dask data
STATISTICS_MODE_NOTE = (
    "SIMULATED FROM POOLED SUFFICIENT STATISTICS: the data came from the streaming/Dask engine, so XᵀX, Xᵀy "
    "and yᵀy of all parties' columns were computed together in one pass and the parties' block coordinate "
    "descent was run on them (block update β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_(j≠k) X_kᵀX_jβ_j), the same sweeps "
    "and stopping rule). This is not the networked protocol: no linear predictors were exchanged; the "
    "disclosure notes below describe what that protocol would reveal.")


def _gaussian_from_statistics(formula, data, names, columns, spec, penalty, row_id, tol, max_iter, se,
                              random_state, progress) -> VerticalGLMResult:
    """vertical_glm for engine inputs: Gaussian, unpenalized, exact (non-DP) mode only."""
    from .. import engines

    family = spec["family"]
    if family != "gaussian" or penalty is not None or spec["eps"] is not None:
        raise DataError(
            "streamed and Dask data are supported by vertical_glm only for family='gaussian' without penalty "
            f"and without eps (got family={family!r}, penalty={penalty!r}, eps={spec['eps']!r}): only that fit is "
            "a function of the sufficient statistics XᵀX, Xᵀy, yᵀy; the others exchange linear predictors row "
            "by row, so load each party's rows into a pandas DataFrame.")
    if row_id is not None:
        raise DataError("row_id is for a list of per-party DataFrames; a stream or Dask frame already holds "
                        "all parties' columns in one table. Drop row_id.")
    if se == "history":
        raise DataError("se='history' needs the linear predictors exchanged during the sweeps, which the "
                        "statistics mode does not simulate; use se='exact' (the default, equal to the pooled "
                        "SEs), 'conditional', 'pooled' or 'none'.")
    available = set(engines.as_source(data).schema_frame().columns)
    missing = [(n, c) for n, cs in zip(names, columns) for c in cs if c not in available]
    if missing:
        raise DataError(f"party {missing[0][0]!r} lists column {missing[0][1]!r}, which is not in data.")
    owner_box: dict = {}

    def check_parties(mf):  # before the pass: terms, owners and response from the names alone
        if mf.response is None:
            raise DataError("the formula needs a response, e.g. 'y ~ .'.")
        owner_box["owner"] = assign_terms(mf, columns, names)
        return None, None

    mf, stats = engines.sufficient_statistics(formula, data, boxes=check_parties, gram=True, drop_intercept=False,
                                              progress=progress or None)
    owner = owner_box["owner"]
    dd = DataDependence(spec["strict"])
    missing_rows_step(dd, mf)
    K = len(names)
    entries, _ = plan_releases(spec, mf.n, K, None)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(spec["accountant"], entries, "vertical_glm")

    cross = stats.cross
    index = [np.flatnonzero(owner == k) for k in range(K)]
    beta, out, rss = m.gaussian_bcd_statistics(cross.xtx, cross.xty, cross.yty, index, tol=tol,
                                               max_iter=max_iter, progress=progress)
    finals, pooled = _statistics_finals(cross.xtx, beta, rss, mf.n, index, se)
    statement = privacy_statement(spec, entries, dd, noise, K, simulated=True)
    statement.notes.insert(0, STATISTICS_MODE_NOTE)
    call = call_record(formula, names, family, penalty, 0.0, tol, max_iter, se, None, None, spec["rounds"])
    result = assemble_result(call, mf.names, mf.n, names, index, finals, out, m.FAMILIES[family], None, spec,
                             statement, se, pooled, simulated=True, rss=rss)
    result.response_note = ""
    return attach_diagnostics(result, spec.get("diagnostics", False), lambda: _diagnostics(mf))


def _diagnostics(mf) -> dict:
    return {"rows_dropped_for_missing_values": mf.n_dropped}


def _statistics_finals(xtx: np.ndarray, beta: np.ndarray, rss: float, n: int, index, se: str):
    """Block results with SEs from σ̂²(XᵀX)⁻¹, σ̂² = RSS/(n − p) (R's summary.lm)."""
    p = xtx.shape[0]
    disp = rss / (n - p) if n > p else math.nan
    cov = disp * np.linalg.inv(xtx)
    finals = []
    for ix in index:
        p_other = p - len(ix)
        if se == "exact":  # the Schur complement of the exact bases is the pooled block
            finals.append(m.BlockFinal(beta[ix].copy(), cov[np.ix_(ix, ix)], p_other, p_other))
        elif se == "conditional":
            finals.append(m.BlockFinal(beta[ix].copy(), disp * np.linalg.inv(xtx[np.ix_(ix, ix)]), 0, p_other))
        else:
            finals.append(m.BlockFinal(beta[ix].copy(), None, 0, p_other))
    return finals, (cov if se == "pooled" else None)


# --------------------------------------------------------------------------- parties and rows


def _parties(parties) -> tuple[list[str], list[list[str]]]:
    if isinstance(parties, Mapping):
        names, cols = [str(k) for k in parties], [list(v) for v in parties.values()]
    elif isinstance(parties, Sequence) and not isinstance(parties, str):
        cols = [list(v) if not isinstance(v, str) else None for v in parties]
        if any(c is None for c in cols):
            raise DataError("parties must be a list of column-name lists, e.g. [['x1', 'x2'], ['x3']].")
        names = [f"party{k + 1}" for k in range(len(cols))]
    else:
        raise DataError("parties must be a list of column-name lists or a dict name -> columns.")
    if len(cols) < 2:
        raise DataError(f"parties must list at least 2 parties, got {len(cols)}.")
    seen: dict[str, str] = {}
    for name, cs in zip(names, cols):
        if not cs:
            raise DataError(f"party {name!r} holds no columns; give each party at least one column.")
        for c in cs:
            if not isinstance(c, str):
                raise DataError(f"party {name!r}: column names must be strings, got {c!r}.")
            if c in seen:
                raise DataError(f"column {c!r} is held by both {seen[c]!r} and {name!r}: column sets "
                                "must not overlap. Give each column to exactly one party.")
            seen[c] = name
    return names, cols


def _combine(data, columns, names, row_id) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        missing = [(n, c) for n, cs in zip(names, columns) for c in cs if c not in data.columns]
        if missing:
            n, c = missing[0]
            raise DataError(f"party {n!r} lists column {c!r}, which is not in data.")
        return data
    if not isinstance(data, (list, tuple)):  # e.g. a dpstats.engines stream or a Dask frame
        raise DataError(f"data must be one DataFrame, a list of {len(columns)} DataFrames (one per party), "
                        f"dpstats.engines.stream(...) or a Dask DataFrame; got {type(data).__name__}.")
    frames = list(data)
    if len(frames) != len(columns) or not all(isinstance(f, pd.DataFrame) for f in frames):
        raise DataError(f"data must be one DataFrame or a list of {len(columns)} DataFrames, one per party.")
    ids = [f[row_id].tolist() if row_id is not None else f.index.tolist() for f in frames]
    if row_id is not None and not all(row_id in f.columns for f in frames):
        raise DataError(f"row_id {row_id!r} must be a column of every party's data frame.")
    check_rows([row_id_hash(i) for i in ids], [len(i) for i in ids], names)
    parts = []
    for name, f, cs in zip(names, frames, columns):
        absent = [c for c in cs if c not in f.columns]
        if absent:
            raise DataError(f"party {name!r} lists column {absent[0]!r}, which is not in its data frame.")
        parts.append(f.reset_index(drop=True))
    out = pd.concat([parts[0]] + [p[[c for c in p.columns if c not in parts[0].columns]] for p in parts[1:]],
                    axis=1)
    return out


def assign_terms(mf: ModelFrame, columns: list[list[str]], names: list[str]) -> np.ndarray:
    """Party index of each design column; errors for unowned or mixed terms."""
    holder = {c: k for k, cs in enumerate(columns) for c in cs}
    if mf.response in holder:
        raise DataError(f"the response {mf.response!r} is listed as a party's column; remove it: "
                        "y is held by the first party and shared with all.")
    used = [v for v in mf.variables if v != mf.response]
    orphans = [v for v in used if v not in holder]
    if orphans:
        raise DataError(f"column {orphans[0]!r} is used by the formula but held by no party; add it "
                        "to one party's column list or drop it from the formula.")
    owner = np.empty(mf.p, dtype=int)
    for j, (nm, term) in enumerate(zip(mf.names, mf.terms)):
        if nm == INTERCEPT:
            owner[j] = 0
            continue
        ks = {holder[v] for v in _IDENT.findall(term) if v in holder}
        ks |= {holder[term]} if term in holder else set()
        if len(ks) != 1:
            why = "uses no party's column" if not ks else \
                f"mixes columns of {', '.join(repr(names[k]) for k in sorted(ks))}"
            raise DataError(f"term {term!r} {why}; a term must be computable by one party.")
        owner[j] = ks.pop()
    for k, name in enumerate(names):
        if not np.any(owner == k):
            raise DataError(f"party {name!r} holds no column of the model '{mf.formula}'.")
    return owner


def _mask(names: list[str], ix: np.ndarray, dp: bool) -> np.ndarray:
    if dp:
        return np.ones(len(ix))
    return np.array([0.0 if names[j] == INTERCEPT else 1.0 for j in ix])
