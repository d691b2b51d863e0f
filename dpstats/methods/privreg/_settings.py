"""Settings and checks of a vertical GLM fit: arguments, DP mode, row ids and the response.

:class:`PrivregOptions` validates the call's arguments before any data is read; :func:`row_id_hash` and :func:`check_rows` match the parties' rows; :func:`response_frame`
and :func:`check_response` read and check y against the declared family
(:mod:`dpstats.methods.privreg`).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import DataError, PrivacyParameterError
from ...formula import ModelFrame, model_frame
from ...schema import PublicN, Schema
from ...validation import check_eps, check_fraction, check_gaussian_delta, check_neighbouring
from .._options import Options
from ._bcd import Sweeps
from ._glm import FAMILIES

# --------------------------------------------------------------------------- settings
SE_METHODS = ("exact", "history", "conditional", "pooled", "none")
PENALTIES = (None, "ridge", "lasso")


@dataclass(frozen=True)
class PrivregOptions(Options):
    """A vertical GLM fit's options, checked once: vertical_glm's (defaults: its signature) and a
    networked party's (:class:`dpstats.vertical.Party`), read by :func:`plan` and :func:`release`.

    ``eps`` None (or inf, given) is the exact, non-private protocol, with ``delta`` 0; otherwise
    the DP mode's arguments are checked: binomial or Gaussian family, ridge penalty with lam > 0,
    replace-one-row, delta in (0, 1) (required: a missing delta or 0 is refused, as on every Gaussian door).  ``bounds`` and ``schema`` are the front
    door's declared bounds and schema (None for a party); ``formula`` the fit's (a party's own).

    Examples
    --------
    >>> given = dict(formula="y ~ .", family="binomial", penalty="ridge", lam=1.0, tol=1e-8, max_iter=100, se="exact",
    ...              conf_level=0.95, eps=1.0, delta=1e-6, rounds=10, eta_clip=4.0, coef_share=0.1,
    ...              neighbouring="replace", bounds=None)
    >>> o = PrivregOptions.check(given)
    >>> o.eps, o.delta, o.rounds, o.dp
    (1.0, 1e-06, 10, True)
    """

    PUBLIC_N = PublicN("vertical_glm in DP mode", "its sensitivities (2R/(n·lam)) are functions of n")
    GAUSSIAN_PLAN = True  # one zCDP entry, ρ = gaussian_rho_from_eps_delta(eps, delta) (_plan._dp_entry)

    formula: str | None
    family: str
    penalty: str | None
    lam: float
    tol: float
    max_iter: int
    se: str
    conf_level: float
    eps: float | None
    delta: float
    rounds: int
    eta_clip: float
    coef_share: float
    neighbouring: str
    bounds: Any
    schema: Schema | None

    @property
    def dp(self) -> bool:
        """DP mode (a finite eps)."""
        return self.eps is not None

    def sweeps(self) -> Sweeps:
        """When the sweeps stop: exactly ``rounds`` in DP mode, else a relative change < tol within
        ``max_iter`` (:func:`~dpstats.methods.privreg.relative_change`)."""
        return Sweeps(self.tol, self.rounds if self.dp else self.max_iter, fixed=self.dp)

    @property
    def RESPONSE(self) -> str:  # noqa: N802 (Options.RESPONSE, read on the record)
        """A binomial family's response is "binary": under strict=True it must be declared
        (:meth:`~dpstats.schema.Schema.refuse_undeclared_binary`)."""
        return "binary" if self.family == "binomial" else "numeric"

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> PrivregOptions:
        """Cheap checks of the fit's arguments, then of the DP mode's (no data touched)."""
        return cls.from_given(given, conf_level=_check_fit(given), **_dp_settings(given))


def _check_fit(given: Mapping[str, Any]) -> float:
    """The fit's arguments; returns the validated ``conf_level``."""
    family, penalty, lam, tol, se = (given[k] for k in ("family", "penalty", "lam", "tol", "se"))
    if family not in FAMILIES:
        raise PrivacyParameterError(f"family must be one of {sorted(FAMILIES)}, got {family!r}.")
    if penalty not in PENALTIES:
        raise PrivacyParameterError(f"penalty must be None, 'ridge' or 'lasso', got {penalty!r}.")
    if not _real(lam) or lam < 0 or not math.isfinite(lam):
        raise PrivacyParameterError(f"lam must be a finite number >= 0, got {lam!r}.")
    if penalty is not None and lam <= 0:
        raise PrivacyParameterError(f"penalty={penalty!r} needs lam > 0, got lam={lam!r}.")
    if not _real(tol) or not (0 < tol < 1):
        raise PrivacyParameterError(f"tol must be in (0, 1), got {tol!r}; privreg uses 1e-8.")
    for name in ("max_iter", "rounds"):
        value = given[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise PrivacyParameterError(f"{name} must be a positive integer, got {value!r}.")
    if se not in SE_METHODS:
        raise PrivacyParameterError(f"se must be one of {list(SE_METHODS)}, got {se!r}.")
    return check_fraction(given["conf_level"], "conf_level", 0.0, 1.0)


DELTA_REFUSAL = (
    "vertical_glm's DP mode needs delta > 0 at finite eps: every shared linear predictor and coefficient "
    "block gets Gaussian noise (zCDP). Give e.g. delta=1e-6 (much smaller than 1/n), the same for every party."
)


def _dp_settings(given: Mapping[str, Any]) -> dict[str, Any]:
    """eps (None: the exact protocol), delta, the relation, and the DP mode's checked arguments."""
    eps, delta, eta_clip = given["eps"], given["delta"], given["eta_clip"]
    if _real(eps) and math.isinf(eps) and eps > 0:
        eps = None  # eps = inf: the non-private protocol (what `dpstats run --eps inf` gives)
    spec = {"rounds": int(given["rounds"]), "eta_clip": float(eta_clip), "lam": float(given["lam"])}
    if eps is None:
        if delta is not None:
            raise PrivacyParameterError("delta was given without eps; give both for DP mode.")
        return {**spec, "eps": None, "delta": 0.0, "neighbouring": check_neighbouring(given["neighbouring"])}
    spec["eps"] = check_eps(eps)
    spec["delta"] = check_gaussian_delta(delta, DELTA_REFUSAL)
    spec["neighbouring"] = check_neighbouring(given["neighbouring"], supported=("replace",))
    _check_dp_mode(given["family"], given["penalty"], eta_clip)
    coef_share = given["coef_share"]
    spec["coef_share"] = check_fraction(coef_share, "coef_share", 0.0, 1.0)
    if not 0 < spec["coef_share"] < 1:
        raise PrivacyParameterError(f"coef_share must be strictly between 0 and 1, got {coef_share!r}.")
    return spec


def _check_dp_mode(family, penalty, eta_clip) -> None:
    if family == "poisson":
        raise PrivacyParameterError(
            "DP mode (eps=) is not available for family='poisson': the gradient of the Poisson loss "
            "under the log link, (exp(η) − y)·x, is unbounded in η, so no sensitivity of the block "
            "estimator can be derived from bounds on the data. Use family='gaussian' or 'binomial' "
            "with penalty='ridge', or drop eps."
        )
    if penalty != "ridge":
        raise PrivacyParameterError(
            "DP mode (eps=) needs penalty='ridge' with lam > 0 (family='binomial' or 'gaussian'): the "
            "sensitivity of the block estimator is derived from the lam-strong convexity of the ridge "
            f"objective and a bounded loss gradient. Got family={family!r}, penalty={penalty!r}."
        )
    if not _real(eta_clip) or not (0 < eta_clip < math.inf):
        raise PrivacyParameterError(f"eta_clip must be a positive finite number, got {eta_clip!r}.")


def _real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and not math.isnan(float(x))


# --------------------------------------------------------------------------- rows and response
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
    """Raise a DataError naming the first party whose row count or row-id hash differs.

    Examples
    --------
    >>> check_rows([row_id_hash([1, 2])] * 2, [2, 2], ["A", "B"])   # the same rows: no error
    """
    for name, c, h in zip(names[1:], counts[1:], hashes[1:]):
        if c != counts[0]:
            raise DataError(
                f"party {name!r} has {c} rows but {names[0]!r} has {counts[0]}: parties "
                "must hold the same rows. Align the data sets on a common row id."
            )
        if h != hashes[0]:
            raise DataError(
                f"party {name!r} holds different row ids, or the same ids in a different "
                f"order, than {names[0]!r} (row-id hashes differ). Sort every party's "
                "data by the shared row id."
            )


def response_frame(
    formula: str,
    frame,
    family: str,
    schema: Schema | None = None,
    *,
    check_constant: bool = False,
    name_step: Callable[[str, str], None] | None = None,
) -> tuple[ModelFrame, str]:
    """Model frame; a two-level factor response is coded 0/1 for the binomial family (as R's glm).

    ``schema`` (:mod:`dpstats.schema`): declared levels and the rule for missing values.
    ``check_constant`` refuses constant columns: for the non-private fit only, whose
    readers may see the data (a DP fit must not refuse on a fact read from the rows).
    ``name_step(step, fix)`` (e.g. :meth:`DataDependence.add`) is given the step of levels read
    from the rows before the number of the response's levels is checked: strict then refuses it
    whatever the rows hold, and without strict a refusal that follows comes after a named step.
    """
    try:
        return model_frame(formula, frame, schema=schema, check_constant=check_constant), ""
    except DataError as exc:
        if family != "binomial" or "numeric response is needed" not in str(exc):
            raise
    mf = model_frame(formula, frame, response="factor", schema=schema, check_constant=check_constant)
    for step, fix in mf.schema_steps if name_step is not None else ():
        if step.startswith("the levels of "):
            name_step(step, fix)
    if len(mf.classes) != 2:
        raise DataError(
            f"family='binomial' needs a 0/1 or two-level response; {mf.response!r} has another number of "
            "levels (not shown: levels read from the rows are not released)."
        )
    mf.y = mf.y.astype(float)
    return mf, f"P({mf.response} = {mf.classes[1]!r}) is modelled (first level {mf.classes[0]!r} coded 0)"


def check_offset(offset: np.ndarray | None, *, dp: bool) -> None:
    """DP mode refuses a formula offset: the sensitivity derivation bounds every offset a party
    receives by (K − 1)·eta_clip (:mod:`dpstats.methods.privreg`), which a formula offset would break."""
    if dp and offset is not None:
        raise PrivacyParameterError(
            "offset() is not supported in DP mode: the sensitivity derivation bounds every offset a party "
            "receives by (K - 1) * eta_clip, which a formula offset would break. Fit without DP, or move "
            "the offset's variable into the design with declared bounds."
        )


def check_response(y: np.ndarray, family: str, name: str | None, *, dp: bool = False) -> None:
    """The response must suit the family: 0/1 for binomial, counts >= 0 for Poisson.

    ``dp``: DP mode checks no value of the rows (neighbours could differ between an error and a fit);
    its binomial response is clipped to [0, 1] instead (:func:`clip_response`, a public rule)."""
    if y is None:
        raise DataError("the formula needs a response, e.g. 'y ~ .'.")
    if dp:
        return
    if family == "binomial" and not np.all((y == 0) | (y == 1)):
        raise DataError(f"family='binomial' needs a 0/1 response; {name!r} has other values.")
    if family == "poisson" and np.any(y < 0):
        raise DataError(f"family='poisson' needs a non-negative count response; {name!r} has negatives.")
