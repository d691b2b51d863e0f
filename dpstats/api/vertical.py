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

import hashlib
import math
import numbers
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import INTERCEPT, ModelFrame, model_frame
from ..geometry import resolve_box
from ..methods import vertical as m
from ..privacy.accountant import Accountant, LedgerEntry
from ..privacy.calibration import rho_from_eps_delta
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.base import attach_diagnostics
from ..results.vertical import VerticalGLMResult, coefficient_table
from ..validation import (check_accountant, check_delta, check_eps, check_fraction,
                          check_neighbouring, check_strict)
from ._common import charge, dummy_columns, missing_rows_step

SE_METHODS = ("exact", "history", "conditional", "pooled", "none")
PENALTIES = (None, "ridge", "lasso")
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
        X, radius = _clip_for_dp(mf, owner, len(names), bounds)
        if family == "gaussian":
            y, y_bound = _clip_response_for_dp(mf, bounds)
    entries, sigmas = _plan(spec, mf.n, len(names), radius, y_bound=y_bound)
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
    call = _call(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds)
    result = assemble_result(call, mf.names, mf.n, names, index, finals, out, fam, y, spec,
                             statement, se, pooled, simulated=True)
    result.response_note = response_note
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
    entries, _ = _plan(spec, mf.n, K, None)
    noise = NoiseSource(random_state)  # validates random_state before any budget is spent
    charge(spec["accountant"], entries, "vertical_glm")

    cross = stats.cross
    index = [np.flatnonzero(owner == k) for k in range(K)]
    beta, out, rss = m.gaussian_bcd_statistics(cross.xtx, cross.xty, cross.yty, index, tol=tol,
                                               max_iter=max_iter, progress=progress)
    finals, pooled = _statistics_finals(cross.xtx, beta, rss, mf.n, index, se)
    statement = privacy_statement(spec, entries, dd, noise, K, simulated=True)
    statement.notes.insert(0, STATISTICS_MODE_NOTE)
    call = _call(formula, names, family, penalty, 0.0, tol, max_iter, se, None, None, spec["rounds"])
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


# --------------------------------------------------------------------------- validation
def validate_arguments(family, penalty, lam, tol, max_iter, se, conf_level, eps, delta, rounds,
                       eta_clip, coef_share, neighbouring, strict, accountant) -> dict:
    """Cheap checks of every argument (no data touched, no budget spent)."""
    if family not in m.FAMILIES:
        raise DataError(f"family must be one of {sorted(m.FAMILIES)}, got {family!r}.")
    if penalty not in PENALTIES:
        raise PrivacyParameterError(f"penalty must be None, 'ridge' or 'lasso', got {penalty!r}.")
    if not _real(lam) or lam < 0 or not math.isfinite(lam):
        raise PrivacyParameterError(f"lam must be a finite number >= 0, got {lam!r}.")
    if penalty is not None and lam <= 0:
        raise PrivacyParameterError(f"penalty={penalty!r} needs lam > 0, got lam={lam!r}.")
    if not _real(tol) or not (0 < tol < 1):
        raise PrivacyParameterError(f"tol must be in (0, 1), got {tol!r}; privreg uses 1e-8.")
    for name, value in (("max_iter", max_iter), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise PrivacyParameterError(f"{name} must be a positive integer, got {value!r}.")
    if se not in SE_METHODS:
        raise PrivacyParameterError(f"se must be one of {list(SE_METHODS)}, got {se!r}.")
    conf_level = check_fraction(conf_level, "conf_level", 0.0, 1.0)
    if _real(eps) and math.isinf(eps) and eps > 0:
        eps = None  # eps = inf: the non-private protocol (what `dpstats run --eps inf` gives)
    spec = {"strict": check_strict(strict), "accountant": check_accountant(accountant),
            "conf_level": conf_level, "eps": None, "delta": 0.0, "neighbouring": "replace",
            "rounds": int(rounds), "eta_clip": float(eta_clip), "coef_share": coef_share,
            "lam": float(lam), "family": family}
    if eps is None:
        if delta is not None:
            raise PrivacyParameterError("delta was given without eps; give both for DP mode.")
        spec["neighbouring"] = check_neighbouring(neighbouring)
        return spec
    spec["eps"] = check_eps(eps)
    spec["delta"] = check_delta(1e-6 if delta is None else delta, allow_zero=False)
    spec["neighbouring"] = check_neighbouring(neighbouring, supported=("replace",))
    if family == "poisson":
        raise PrivacyParameterError(
            "DP mode (eps=) is not available for family='poisson': the gradient of the Poisson loss "
            "under the log link, (exp(η) − y)·x, is unbounded in η, so no sensitivity of the block "
            "estimator can be derived from bounds on the data. Use family='gaussian' or 'binomial' "
            "with penalty='ridge', or drop eps.")
    if penalty != "ridge":
        raise PrivacyParameterError(
            "DP mode (eps=) needs penalty='ridge' with lam > 0 (family='binomial' or 'gaussian'): the "
            "sensitivity of the block estimator is derived from the lam-strong convexity of the ridge "
            f"objective and a bounded loss gradient. Got family={family!r}, penalty={penalty!r}.")
    if not _real(eta_clip) or not (0 < eta_clip < math.inf):
        raise PrivacyParameterError(f"eta_clip must be a positive finite number, got {eta_clip!r}.")
    spec["coef_share"] = check_fraction(coef_share, "coef_share", 0.0, 1.0)
    if not 0 < spec["coef_share"] < 1:
        raise PrivacyParameterError(f"coef_share must be strictly between 0 and 1, got {coef_share!r}.")
    if spec["accountant"] is not None:
        spec["accountant"].check(spec["eps"], spec["delta"])
    return spec


def _real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and not math.isnan(float(x))


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


def row_id_hash(ids, salt: bytes = b"") -> str:
    """SHA-256 of the ordered row ids (never the data): parties compare it to agree on rows.

    Examples
    --------
    >>> row_id_hash([1, 2, 3]) == row_id_hash([1, 2, 3]) != row_id_hash([1, 3, 2])
    True
    """
    h = hashlib.sha256(b"dpstats-vertical-row-ids\x00" + salt)
    for v in ids:
        b = str(v).encode("utf-8")
        h.update(len(b).to_bytes(4, "big") + b)
    return h.hexdigest()


def check_rows(hashes: Sequence[str], counts: Sequence[int], names: Sequence[str]) -> None:
    """Raise a DataError naming the first party whose row count or row-id hash differs."""
    for name, c, h in zip(names[1:], counts[1:], hashes[1:]):
        if c != counts[0]:
            raise DataError(f"party {name!r} has {c} rows but {names[0]!r} has {counts[0]}: parties "
                            "must hold the same rows. Align the data sets on a common row id.")
        if h != hashes[0]:
            raise DataError(f"party {name!r} holds different row ids, or the same ids in a different "
                            f"order, than {names[0]!r} (row-id hashes differ). Sort every party's "
                            "data by the shared row id.")


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


def check_response(y: np.ndarray, family: str, name: str | None) -> None:
    """The response must suit the family: 0/1 for binomial, counts >= 0 for Poisson."""
    if y is None:
        raise DataError("the formula needs a response, e.g. 'y ~ .'.")
    if family == "binomial" and not np.all((y == 0) | (y == 1)):
        raise DataError(f"family='binomial' needs a 0/1 response; {name!r} has other values.")
    if family == "poisson" and np.any(y < 0):
        raise DataError(f"family='poisson' needs a non-negative count response; {name!r} has negatives.")


def _mask(names: list[str], ix: np.ndarray, dp: bool) -> np.ndarray:
    if dp:
        return np.ones(len(ix))
    return np.array([0.0 if names[j] == INTERCEPT else 1.0 for j in ix])


# --------------------------------------------------------------------------- DP planning
def _clip_for_dp(mf: ModelFrame, owner: np.ndarray, K: int, bounds) -> tuple[np.ndarray, list[float]]:
    if bounds is None:
        raise PrivacyParameterError(
            "DP mode needs public bounds on the covariates, e.g. bounds=(-3, 3) or "
            "bounds={'x1': (0, 1), ...}: they bound each party's row norm R_k.")
    cols = [nm for nm in mf.names if nm != INTERCEPT]
    box = resolve_box(bounds, cols, dummies=dummy_columns(mf))
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


def _clip_response_for_dp(mf: ModelFrame, bounds) -> tuple[np.ndarray, float]:
    """Gaussian DP mode: clip y to its declared bounds; return (clipped y, B_y = max |bound|)."""
    name = mf.response
    if isinstance(bounds, Mapping) and name not in bounds:
        raise PrivacyParameterError(
            f"family='gaussian' in DP mode needs public bounds on the response {name!r} too: add "
            f"bounds={{..., {name!r}: (lo, hi)}} (y is clipped to them; they bound the loss gradient).")
    box = resolve_box({name: bounds[name]} if isinstance(bounds, Mapping) else bounds, [name])
    lo, hi = float(box.lo[0]), float(box.hi[0])
    return np.clip(mf.y, lo, hi), max(abs(lo), abs(hi))


def _plan(spec: dict, n: int, K: int, radius, y_bound: float | None = None) -> tuple[list[LedgerEntry], tuple]:
    if spec["eps"] is None:
        entry = LedgerEntry(step=f"block coordinate descent over {K} parties: exact linear predictors "
                                 "shared every sweep, coefficients and standard errors released",
                            mechanism="none (not differentially private)", eps=math.inf,
                            sensitivity="not bounded: exact values are shared")
        return [entry], ((), ())
    rho = rho_from_eps_delta(spec["eps"], spec["delta"])
    T, share, lam, C = spec["rounds"], spec["coef_share"], spec["lam"], spec["eta_clip"]
    rho_eta = (1 - share) * rho / (K * T)
    rho_beta = share * rho / K
    sig_eta, sig_beta, sens = [], [], []
    gaussian = spec["family"] == "gaussian"
    for R in radius:
        if gaussian:  # squared loss: gradient bounded via |y| ≤ B_y, |offset| ≤ (K−1)C, ‖β̂‖ ≤ (B_y+O)/√λ
            d_eta, d_beta = m.gaussian_ridge_sensitivities(n, R, lam, C, y_bound, (K - 1) * C)
        else:
            d_eta, d_beta = m.binomial_ridge_sensitivities(n, R, lam, C)
        sig_eta.append(d_eta / math.sqrt(2 * rho_eta))
        sig_beta.append(d_beta / math.sqrt(2 * rho_beta))
        sens.append(f"Δ₂(η)={d_eta:.4g}, Δ₂(β)={d_beta:.4g} (R={R:.4g})")
    if gaussian:
        sens.append(f"squared loss with |y| ≤ B_y={y_bound:.4g}, received offsets clipped to "
                    f"±(K−1)·eta_clip={(K - 1) * C:.4g}, Δ₂(β) = 2R(B_y+O)(1+R/√λ)/(nλ)")
    entry = LedgerEntry(
        step=f"{K}×{T} clipped linear predictors (n-vectors) and {K} coefficient blocks",
        mechanism="Gaussian mechanism, zCDP composition",
        eps=spec["eps"], delta=spec["delta"],
        sensitivity="replace one row, per party: " + "; ".join(sens),
        note=(f"total rho = {rho:.6g} (Bun & Steinke Prop. 1.3 from eps, delta); "
              f"{1 - share:g} of rho over {K * T} linear-predictor releases, {share:g} over {K} "
              "coefficient releases; each Gaussian release costs Δ²/(2σ²)"))
    return [entry], (sig_eta, sig_beta)


# --------------------------------------------------------------------------- assembly
def finish_blocks(blocks, out: m.BCDOutcome, fam: m.Family, y: np.ndarray, p: int, sig_beta):
    """Ask every block for its final coefficients (and covariance)."""
    disp = m.dispersion_estimate(fam, y, out.eta, y.shape[0] - p)
    others = [None] * len(blocks)
    if getattr(blocks[0], "se", None) == "exact" and blocks[0].penalty.kind is None:
        bases = [b.column_basis() for b in blocks]
        others = [np.column_stack([q for j, q in enumerate(bases) if j != k]) for k in range(len(blocks))]
    return [b.finish(out.eta, disp, sig_beta[k] if sig_beta else 0.0, others[k])
            for k, b in enumerate(blocks)]


def disclosure_text(K: int, dp: bool, simulated: bool) -> list[str]:
    """What the protocol reveals, in plain words."""
    lines = ["The outcome y is held by the first party and sent to every party in the clear "
             "(as in privreg); it is not protected."]
    if dp:
        lines += ["Every sweep each party reveals its linear predictor X_kβ_k clipped and with Gaussian "
                  "noise; the stopping rule is a fixed number of sweeps (no data-dependent stopping).",
                  "Final coefficients are released with Gaussian noise; standard errors are not released.",
                  "The guarantee protects each party's covariates against the other parties and anyone "
                  "who sees the messages, for every value of the shared y."]
    else:
        lines += ["Every sweep each party reveals its exact linear predictor η_k = X_kβ_k (an n-vector) to "
                  "the leader, and receives the exact sum of the other parties' linear predictors. Over "
                  "the sweeps these vectors span (up to) the other parties' column spaces: the other "
                  "parties learn each party's columns up to an unknown linear transform. This protocol "
                  "gives NO formal privacy guarantee.",
                  "With se='exact' (the default) each party also shares an orthonormal basis of its "
                  "column space after convergence, so that the standard errors are exact: its columns "
                  "are then known up to an unknown invertible linear transform.",
                  "Each party also reveals the scalar Σ|Δβ_k| every sweep (the stopping rule), and at the "
                  "end its coefficients and standard errors."]
    if K > 2 and not dp:
        lines.append(f"With {K} parties a member receives only the sum of the others' linear predictors; "
                     "the leader receives each one separately.")
    if simulated:
        lines.append("This fit simulated the parties in one process; the deployment with one process per "
                     "party over encrypted TCP is dpstats.vertical.Party.")
    return lines


def privacy_statement(spec: dict, entries, dd: DataDependence, noise: NoiseSource, K: int,
                      simulated: bool) -> PrivacyStatement:
    dp = spec["eps"] is not None
    assumptions = []
    if dp:
        assumptions = ["the outcome y is public to the parties (the guarantee holds for every fixed y)",
                       "covariates clipped to the declared bounds; every block is solved to its exact "
                       "minimizer (the inner solver stops at 1e-12)",
                       *(["gaussian family: y clipped to its declared bounds and every received offset "
                          "clipped to ±(K−1)·eta_clip before the block fit"]
                         if spec["family"] == "gaussian" else []),
                       "the number of sweeps is fixed in advance"]
    return PrivacyStatement(
        method="vertical GLM (block coordinate descent)", eps=math.inf if not dp else spec["eps"],
        delta=spec["delta"], neighbouring=spec["neighbouring"], ledger=entries,
        sensitivities={"per release": entries[0].sensitivity}, assumptions=assumptions,
        data_dependent_steps=dd.steps, seeded=noise.seeded, samplers=sorted(noise.samplers),
        notes=disclosure_text(K, dp, simulated))


def assemble_result(call, terms, n, names, index, finals, out, fam, y, spec, statement, se,
                    pooled=None, simulated=False, rss: float | None = None) -> VerticalGLMResult:
    """Coefficient table, trace and metadata from the released block results.

    ``rss`` (Gaussian, from sufficient statistics): the residual sum of squares, used instead of y and η.
    """
    p = len(terms)
    beta = np.empty(p)
    sd = np.full(p, np.nan)
    party = [""] * p
    blocks = []
    for k, (ix, fin) in enumerate(zip(index, finals)):
        beta[ix] = fin.beta
        if fin.cov is not None:
            sd[ix] = np.sqrt(np.diag(fin.cov))
        for j in ix:
            party[j] = names[k]
        blocks.append({"party": names[k], "rank": int(fin.rank), "p_other": int(fin.p_other),
                       "exact": bool(fin.exact)})
    if pooled is not None:
        sd = np.sqrt(np.diag(pooled))
    df_resid = n - p
    dp = spec["eps"] is not None
    table = coefficient_table(list(terms), party, beta, sd, fam.name, df_resid, spec["conf_level"])
    trace = pd.DataFrame(out.trace, columns=["iteration", "sum_abs_change", "deviance"])
    se_method = "none" if dp or call.get("penalty") else ("pooled" if pooled is not None else se)
    return VerticalGLMResult(
        method="vertical_glm", call=call, n=n, p=p, terms=list(terms), privacy=statement,
        family=fam.name, coefficients=table, trace=trace, iterations=out.iterations,
        converged=out.converged, tol=call.get("tol", 1e-8),
        dispersion=(m.dispersion_estimate(fam, y, out.eta, df_resid) if rss is None
                    else (rss / df_resid if df_resid > 0 else math.nan)),
        df_residual=df_resid, deviance=fam.deviance(y, out.eta) if rss is None else rss, penalty=call.get("penalty"),
        lam=float(call.get("lam", 0.0)), se_method=se_method, se_blocks=blocks, parties=list(names),
        party_terms={names[k]: [terms[j] for j in ix] for k, ix in enumerate(index)},
        conf_level=spec["conf_level"], disclosure=statement.notes,
        warnings=[] if out.converged else [f"block coordinate descent did not converge in "
                                           f"{out.iterations} sweeps; raise max_iter"])


def _call(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds) -> dict:
    call = {"formula": formula, "parties": list(names), "family": family}
    if penalty is not None:
        call.update(penalty=penalty, lam=lam)
    if tol != 1e-8:
        call["tol"] = tol
    if max_iter != 10_000:
        call["max_iter"] = max_iter
    if se != "exact":
        call["se"] = se
    if eps is not None and math.isfinite(eps):
        call.update(eps=eps, delta=delta, rounds=rounds)
    return call
