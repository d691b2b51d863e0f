"""The steps of a vertically partitioned GLM fit shared by every way of running it.

:func:`dpstats.vertical_glm` runs the parties in one process; :class:`dpstats.vertical.Party`
runs one party per process over TCP.  Both call these public steps, in this order
(slides "Private Regression using Block Coordinate Descent"; privreg):

1. :func:`validate_arguments` — cheap checks of every argument, before any data or budget;
2. :func:`row_id_hash` / :func:`check_rows` — the parties agree on the rows without sharing them;
3. :func:`check_response`; in DP mode :func:`clip_for_dp` (covariates to their public bounds, giving
   each party's row-norm bound R_k) and :func:`clip_response_for_dp` (Gaussian family);
4. :func:`plan_releases` — the ledger and the Gaussian noise scales of every release, from public
   inputs (zCDP budget split over sweeps and coefficient releases);
5. block coordinate descent (:func:`dpstats.methods.vertical.block_coordinate_descent`), then
   :func:`finish_blocks` — each block's final coefficients (and covariance);
6. :func:`privacy_statement` (with :func:`disclosure_text`), :func:`call_record` and
   :func:`assemble_result` — the :class:`~dpstats.results.vertical.VerticalGLMResult`.

See ``docs/architecture.md``, "Layers": this module sits with the front doors (it validates
arguments and builds results); :mod:`dpstats.vertical` builds on it.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, PrivacyParameterError
from ..formula import INTERCEPT, ModelFrame
from ..geometry import resolve_box
from ..methods import vertical as m
from ..privacy.accountant import LedgerEntry
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence, PrivacyStatement
from ..results.vertical import VerticalGLMResult, coefficient_table
from ..validation import (check_accountant, check_delta, check_eps, check_fraction,
                          check_neighbouring, check_strict)
from ._common import dummy_columns

SE_METHODS = ("exact", "history", "conditional", "pooled", "none")


PENALTIES = (None, "ridge", "lasso")


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


def check_response(y: np.ndarray, family: str, name: str | None) -> None:
    """The response must suit the family: 0/1 for binomial, counts >= 0 for Poisson."""
    if y is None:
        raise DataError("the formula needs a response, e.g. 'y ~ .'.")
    if family == "binomial" and not np.all((y == 0) | (y == 1)):
        raise DataError(f"family='binomial' needs a 0/1 response; {name!r} has other values.")
    if family == "poisson" and np.any(y < 0):
        raise DataError(f"family='poisson' needs a non-negative count response; {name!r} has negatives.")


def clip_for_dp(mf: ModelFrame, owner: np.ndarray, K: int, bounds) -> tuple[np.ndarray, list[float]]:
    """DP mode: clip the design to the public ``bounds``; return (clipped X, R_k per party).

    R_k bounds the Euclidean norm of party k's part of any row (the intercept counts 1).
    """
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


def clip_response_for_dp(mf: ModelFrame, bounds) -> tuple[np.ndarray, float]:
    """Gaussian DP mode: clip y to its declared bounds; return (clipped y, B_y = max |bound|)."""
    name = mf.response
    if isinstance(bounds, Mapping) and name not in bounds:
        raise PrivacyParameterError(
            f"family='gaussian' in DP mode needs public bounds on the response {name!r} too: add "
            f"bounds={{..., {name!r}: (lo, hi)}} (y is clipped to them; they bound the loss gradient).")
    box = resolve_box({name: bounds[name]} if isinstance(bounds, Mapping) else bounds, [name])
    lo, hi = float(box.lo[0]), float(box.hi[0])
    return np.clip(mf.y, lo, hi), max(abs(lo), abs(hi))


def plan_releases(spec: dict, n: int, K: int, radius,
                  y_bound: float | None = None) -> tuple[list[LedgerEntry], tuple]:
    """The ledger and the noise scales ``(sigma_eta, sigma_beta)`` per party, from public inputs only.

    Without ``eps`` one ledger entry says nothing is private.  In DP mode (eps, delta)
    is converted to zCDP rho (Bun & Steinke 2016, Prop. 1.3), split between the K·T
    linear-predictor releases and the K coefficient releases, and each Gaussian release
    with L2 sensitivity Δ gets σ = Δ / sqrt(2·rho_release).
    """
    if spec["eps"] is None:
        entry = LedgerEntry(step=f"block coordinate descent over {K} parties: exact linear predictors "
                                 "shared every sweep, coefficients and standard errors released",
                            mechanism="none (not differentially private)", eps=math.inf,
                            sensitivity="not bounded: exact values are shared")
        return [entry], ((), ())
    rho = m.rho_from_eps_delta(spec["eps"], spec["delta"])
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
    """The privacy statement of a fit: ledger, assumptions and what the protocol discloses."""
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


def call_record(formula, names, family, penalty, lam, tol, max_iter, se, eps, delta, rounds) -> dict:
    """The ``call`` shown by the result: the formula, parties and family, and non-default arguments.

    Examples
    --------
    >>> call_record("y ~ .", ["A", "B"], "binomial", None, 0.0, 1e-8, 10_000, "exact", None, None, 50)
    {'formula': 'y ~ .', 'parties': ['A', 'B'], 'family': 'binomial'}
    """
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
