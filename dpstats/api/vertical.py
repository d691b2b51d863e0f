"""Front door of GLMs on vertically partitioned data (privreg).

``vertical_glm`` simulates the parties in one process (for analysts and
tests); :class:`dpstats.vertical.Party` runs the same protocol with one party
per process over authenticated, encrypted TCP.  Both use the plan and the
release of :mod:`dpstats.methods.vertical`; this door validates, builds the
frame and hands them to the shared skeleton (``docs/architecture.md``, "One
call, step by step").

Design (stated, as privreg): the outcome y is held by the first party (the
leader, which also holds the intercept) and shared with every party; the
covariate columns never leave their party; only linear predictors X_kβ_k
(exact, or clipped and noised in DP mode) travel.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import INTERCEPT, ModelFrame
from ..methods import vertical as m
from ..privacy.accountant import Accountant
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource, RandomState
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.vertical import VerticalGLMResult, assemble_result, vertical_call
from ..validation import check_accountant, check_strict
from ..schema import Schema
from ._common import (
    Settings,
    declared_bounds,
    frame_schema,
    missing_rows_step,
    private_bounds_setup,
    refuse_omit,
    run,
    schema_parameters,
)

_IDENT = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")


@schema_parameters
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
    bounds_eps: float | None = None,
    rounds: int = 10,
    eta_clip: float = 4.0,
    coef_share: float = 0.1,
    neighbouring: str = "replace",
    levels: dict | None = None,
    na_action: str | None = None,
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
        is clipped to them.  ``"auto"`` (or a :class:`dpstats.AutoBounds`): these bounds are
        released privately first (docs/architecture.md, "Private bounds").
    bounds_eps : float, optional
        With ``bounds="auto"``: the eps spent on them (default 10% of eps, and 10% of delta).
    rounds : int
        DP mode: fixed number of sweeps (no data-dependent stopping).
    eta_clip : float
        DP mode: released linear predictors are clipped to [−eta_clip, eta_clip].
    coef_share : float in (0, 1)
        DP mode: share of the zCDP budget ρ spent on the final coefficients.
    diagnostics : bool
        Attach non-private diagnostics (values filled, rows dropped for missing values).
        Off by default: no output shows them unless asked.
    {schema parameters}
    neighbouring, random_state, accountant, strict, progress
        See ``docs/architecture.md``, "Privacy conventions" (DP mode supports
        ``neighbouring="replace"`` only).

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
    conf_level = m.check_fit(family, penalty, lam, tol, max_iter, rounds, se, conf_level)
    strict, accountant = check_strict(strict), check_accountant(accountant)
    spec = m.settings(
        family, penalty, lam, conf_level, eps, delta, rounds, eta_clip, coef_share, neighbouring
    )
    if spec["eps"] is not None and accountant is not None:
        accountant.check(spec["eps"], spec["delta"])
    bounds, spec["eps"], spec["delta"] = private_bounds_setup(
        bounds, spec["eps"], spec["delta"], bounds_eps=bounds_eps, neighbouring=neighbouring, data=data
    )
    names, columns = _parties(parties)
    from .. import engines

    data = engines.as_data(data, formula, keep=[levels, columns, row_id], parts=True)

    schema = frame_schema(
        bounds,
        levels,
        na_action,
        neighbouring,
        eps=spec["eps"],
        fills=_response_fill(formula, spec["family"]),
    )
    if schema.private:
        refuse_omit(schema, "vertical_glm in DP mode", "its sensitivities (2R/(n·lam)) are functions of n")
    fit = dict(
        schema=schema,
        formula=formula,
        data=data,
        names=names,
        columns=columns,
        spec=spec,
        se=se,
        tol=tol,
        max_iter=max_iter,
        progress=progress,
        rows_requested=bool(diagnostics),
        call=vertical_call(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds),
    )
    if engines.is_engine_input(data):  # streamed / Dask: the Gaussian fit from sufficient statistics
        _check_statistics_mode(data, names, columns, spec, row_id, se)
        door = _FromStatistics(**fit)
    else:
        door = _Vertical(**fit, row_id=row_id, bounds=bounds)
    return run(
        door,
        Settings(strict=strict, random_state=random_state, accountant=accountant, diagnostics=diagnostics),
    )


@dataclass
class _Frame:
    mf: ModelFrame
    owner: np.ndarray
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    radius: list[float] | None = None
    y_bound: float | None = None
    response_note: str = ""
    stats: Any = None


@dataclass
class _Vertical:
    """vertical_glm's frame, plan, release and result for :func:`dpstats.api._common.run`."""

    formula: str
    data: Any
    names: list[str]
    columns: list[list[str]]
    spec: dict
    se: str
    tol: float
    max_iter: int
    progress: bool
    call: dict
    rows_requested: bool = False  # diagnostics=True: per-row fitted values and residuals may be shown
    row_id: str | None = None
    bounds: Any = None
    schema: Schema | None = None
    label: str = "vertical_glm"

    @property
    def dp(self) -> bool:
        return self.spec["eps"] is not None

    def frame(self, dd: DataDependence) -> _Frame:
        frame = _combine(self.data, self.columns, self.names, self.row_id)
        mf, response_note = m.response_frame(
            self.formula, frame, self.spec["family"], self.schema, check_constant=not self.dp
        )
        owner = assign_terms(mf, self.columns, self.names)
        m.check_response(mf.y, self.spec["family"], mf.response)
        if self.dp and mf.offset is not None:
            raise PrivacyParameterError(
                "offset() is not supported in DP mode: the sensitivity derivation bounds every offset a party "
                "receives by (K - 1) * eta_clip, which a formula offset would break. Fit without DP, or move "
                "the offset's variable into the design with declared bounds."
            )
        out = _Frame(mf=mf, owner=owner, X=mf.X, y=mf.y, response_note=response_note)
        if self.dp:  # public bounds: every party's row-norm bound R_k, and B_y for the Gaussian family
            bounds = declared_bounds(self.bounds, mf, response=self.spec["family"] == "gaussian")
            out.X, out.radius = m.clip_covariates(mf, owner, len(self.names), bounds)
            if self.spec["family"] == "gaussian":
                out.y, out.y_bound = m.clip_response(mf, bounds)
        missing_rows_step(dd, mf)  # after the bounds: without them DP mode is refused, not warned
        return out

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(self.spec, frame.mf.n, len(self.names), frame.radius, frame.y_bound, simulated=True)

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> m.Released:
        sigmas = (
            m.noise_scales(self.spec, frame.mf.n, len(self.names), frame.radius, frame.y_bound)
            if self.dp
            else None
        )
        with _sweep_bar(self.spec["rounds"] if self.dp else self.max_iter, self.progress) as on_round:
            return m.release(
                frame.X,
                frame.y,
                frame.owner,
                frame.mf.names,
                self.spec,
                se=self.se,
                tol=self.tol,
                max_iter=self.max_iter,
                sigmas=sigmas,
                noise=noise,
                on_round=on_round,
                offset=frame.mf.offset,
            )

    def result(
        self, frame: _Frame, plan: Plan, released: m.Released, statement: PrivacyStatement, noise: NoiseSource
    ) -> VerticalGLMResult:
        result = assemble_result(
            self.call, frame.mf.names, frame.mf.n, self.names, released, self.spec, statement, self.se
        )
        result.response_note = frame.response_note
        if frame.y is not None:  # streamed/Dask fits keep no rows: no vcov/logLik/predict summaries
            result.set_model_summaries(
                frame.mf,
                frame.mf.y,
                released.out.eta,
                dp=self.dp,
                se=self.se,
                pooled=released.pooled,
                rows=self.rows_requested,
            )
        return result

    def diagnostics(self, frame: _Frame, released: m.Released) -> dict:
        return {
            "rows_dropped_for_missing_values": frame.mf.n_dropped,
            "values_filled_for_missing": frame.mf.n_filled,
        }


@dataclass
class _FromStatistics(_Vertical):
    """Streamed or Dask data: the Gaussian exact fit from the pooled sufficient statistics."""

    def frame(self, dd: DataDependence) -> _Frame:
        from .. import engines

        owner_box: dict = {}

        def check_parties(mf):  # before the pass: terms, owners and response from the names alone
            if mf.response is None:
                raise DataError("the formula needs a response, e.g. 'y ~ .'.")
            owner_box["owner"] = assign_terms(mf, self.columns, self.names)
            return None, None

        mf, stats = engines.sufficient_statistics(
            self.formula,
            self.data,
            boxes=check_parties,
            gram=True,
            drop_intercept=False,
            progress=self.progress or None,
            schema=self.schema,
        )
        missing_rows_step(dd, mf)
        return _Frame(mf=mf, owner=owner_box["owner"], stats=stats.cross)

    def plan(self, frame: _Frame, dd: DataDependence) -> Plan:
        return m.plan(self.spec, frame.mf.n, len(self.names), simulated=True, statistics=True)

    def release(self, frame: _Frame, plan: Plan, noise: NoiseSource) -> m.Released:
        cross = frame.stats
        with _sweep_bar(self.max_iter, self.progress) as on_round:
            return m.release_from_statistics(
                cross.xtx,
                cross.xty,
                cross.yty,
                frame.owner,
                frame.mf.n,
                se=self.se,
                tol=self.tol,
                max_iter=self.max_iter,
                on_round=on_round,
            )


@contextmanager
def _sweep_bar(total: int, progress: bool) -> Iterator[Callable[[dict], None] | None]:
    """A tqdm bar over the sweeps when ``progress`` is asked for; yields the per-sweep callback."""
    if not progress:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc="block coordinate descent", unit="sweep")
    try:
        yield lambda row: bar.update(1)
    finally:
        bar.close()


# --------------------------------------------------------------------------- streamed / Dask data
def _check_statistics_mode(data, names, columns, spec: dict, row_id, se: str) -> None:
    """vertical_glm for engine inputs: Gaussian, unpenalized, exact (non-DP) mode only."""
    from .. import engines

    family, penalty = spec["family"], spec["penalty"]
    if family != "gaussian" or penalty is not None or spec["eps"] is not None:
        raise DataError(
            "streamed and Dask data are supported by vertical_glm only for family='gaussian' without penalty "
            f"and without eps (got family={family!r}, penalty={penalty!r}, eps={spec['eps']!r}): only that fit is "
            "a function of the sufficient statistics XᵀX, Xᵀy, yᵀy; the others exchange linear predictors row "
            "by row, so load each party's rows into a pandas DataFrame."
        )
    if row_id is not None:
        raise DataError(
            "row_id is for a list of per-party DataFrames; a stream or Dask frame already holds "
            "all parties' columns in one table. Drop row_id."
        )
    if se == "history":
        raise DataError(
            "se='history' needs the linear predictors exchanged during the sweeps, which the "
            "statistics mode does not simulate; use se='exact' (the default, equal to the pooled "
            "SEs), 'conditional', 'pooled' or 'none'."
        )
    available = set(engines.as_source(data).schema_frame().columns)
    missing = [(n, c) for n, cs in zip(names, columns) for c in cs if c not in available]
    if missing:
        raise DataError(f"party {missing[0][0]!r} lists column {missing[0][1]!r}, which is not in data.")


# --------------------------------------------------------------------------- parties and their columns
def _response_fill(formula: Any, family: str) -> dict[str, float]:
    """A binomial response's public fill: 0, in the domain {0, 1} the family declares (no bounds needed)."""
    if family != "binomial" or not isinstance(formula, str) or formula.count("~") != 1:
        return {}
    lhs = formula.split("~")[0].strip().strip("`")
    return {lhs: 0.0} if lhs else {}


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
                raise DataError(
                    f"column {c!r} is held by both {seen[c]!r} and {name!r}: column sets "
                    "must not overlap. Give each column to exactly one party."
                )
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
        raise DataError(
            f"data must be one DataFrame, a list of {len(columns)} DataFrames (one per party), "
            f"dpstats.engines.stream(...) or a Dask DataFrame; got {type(data).__name__}."
        )
    frames = list(data)
    if len(frames) != len(columns) or not all(isinstance(f, pd.DataFrame) for f in frames):
        raise DataError(f"data must be one DataFrame or a list of {len(columns)} DataFrames, one per party.")
    ids = [f[row_id].tolist() if row_id is not None else f.index.tolist() for f in frames]
    if row_id is not None and not all(row_id in f.columns for f in frames):
        raise DataError(f"row_id {row_id!r} must be a column of every party's data frame.")
    m.check_rows([m.row_id_hash(i) for i in ids], [len(i) for i in ids], names)
    parts = []
    for name, f, cs in zip(names, frames, columns):
        absent = [c for c in cs if c not in f.columns]
        if absent:
            raise DataError(f"party {name!r} lists column {absent[0]!r}, which is not in its data frame.")
        parts.append(f.reset_index(drop=True))
    out = pd.concat(
        [parts[0]] + [p[[c for c in p.columns if c not in parts[0].columns]] for p in parts[1:]], axis=1
    )
    return out


def assign_terms(mf: ModelFrame, columns: list[list[str]], names: list[str]) -> np.ndarray:
    """Party index of each design column; errors for unowned or mixed terms."""
    holder = {c: k for k, cs in enumerate(columns) for c in cs}
    if mf.response in holder:
        raise DataError(
            f"the response {mf.response!r} is listed as a party's column; remove it: "
            "y is held by the first party and shared with all."
        )
    used = [v for v in mf.variables if v != mf.response]
    orphans = [v for v in used if v not in holder]
    if orphans:
        raise DataError(
            f"column {orphans[0]!r} is used by the formula but held by no party; add it "
            "to one party's column list or drop it from the formula."
        )
    owner = np.empty(mf.p, dtype=int)
    for j, (nm, term) in enumerate(zip(mf.names, mf.terms)):
        if nm == INTERCEPT:
            owner[j] = 0
            continue
        ks = {holder[v] for v in _IDENT.findall(term) if v in holder}
        ks |= {holder[term]} if term in holder else set()
        if len(ks) != 1:
            why = (
                "uses no party's column"
                if not ks
                else f"mixes columns of {', '.join(repr(names[k]) for k in sorted(ks))}"
            )
            raise DataError(f"term {term!r} {why}; a term must be computable by one party.")
        owner[j] = ks.pop()
    for k, name in enumerate(names):
        if not np.any(owner == k):
            raise DataError(f"party {name!r} holds no column of the model '{mf.formula}'.")
    return owner
