"""The privacy plan of a vertical GLM fit, from public inputs: sensitivities, ledger, disclosures.

The ridge sensitivities in DP mode (:func:`binomial_ridge_sensitivities`,
:func:`gaussian_ridge_sensitivities`), the zCDP split (:func:`noise_scales`),
:func:`plan` (a :class:`~dpstats.privacy.plan.Plan`) and what the protocol discloses
(:func:`disclosure_text`); derivations in :mod:`dpstats.methods.privreg`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...errors import ChanceWarning, caller_stacklevel
from ...privacy.accountant import LedgerEntry
from ...privacy.calibration import CONVERSIONS, gaussian_rho_from_eps_delta
from ...privacy.plan import Plan
from ._settings import PrivregOptions


# --------------------------------------------------------------------------- DP calibration
def binomial_ridge_sensitivities(n: int, radius: float, lam: float, eta_clip: float) -> tuple[float, float]:
    """(Δ₂ of a released clipped linear predictor, Δ₂ of a block's coefficients).

    Replace-one-row, offsets fixed (adaptive composition): the logistic loss is
    1-Lipschitz in η and the ridge objective is λ-strongly convex, so
    ‖β − β'‖₂ ≤ 2R/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8).  Rows
    other than the replaced one move by at most R·2R/(nλ) each; the replaced
    row's clipped entry by at most 2C: Δ₂(η) ≤ √(4C² + 4R⁴/(nλ²)).
    """
    d_beta = 2.0 * radius / (n * lam)
    d_eta = math.sqrt(4.0 * eta_clip**2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta


def gaussian_ridge_sensitivities(
    n: int, radius: float, lam: float, eta_clip: float, y_bound: float, offset_bound: float
) -> tuple[float, float]:
    """(Δ₂ of a released clipped linear predictor, Δ₂ of a block's coefficients), Gaussian family.

    Same argument as :func:`binomial_ridge_sensitivities` (replace one row,
    offsets fixed by adaptive composition), with the gradient bound of the
    squared loss in place of the logistic one.  The block objective is
    F(β) = (1/n)Σ_i ½(y_i − o_i − x_iᵀβ)² + (λ/2)‖β‖² with |y_i| ≤ B_y (y
    clipped to its bounds), |o_i| ≤ O (the received offset clipped to
    O = (K−1)·eta_clip) and ‖x_i‖ ≤ R (covariates clipped; intercept counts 1).

    1. Norm of the minimizer: (λ/2)‖β̂‖² ≤ F(β̂) ≤ F(0) ≤ (B_y + O)²/2, so
       ‖β̂‖ ≤ (B_y + O)/√λ.
    2. Row gradient: ∇_β ℓ_i = −(y_i − o_i − x_iᵀβ̂)·x_i, so
       ‖∇ℓ_i‖ ≤ G = R·(B_y + O)·(1 + R/√λ) at β̂, for any row within the bounds.
    3. F is λ-strongly convex; for the neighbour F' (row i replaced),
       ∇F'(β̂) = (∇ℓ'_i(β̂) − ∇ℓ_i(β̂))/n, hence
       λ‖β̂ − β̂'‖² ≤ ⟨∇F'(β̂) − ∇F'(β̂'), β̂ − β̂'⟩ ≤ (2G/n)‖β̂ − β̂'‖ and
       Δ₂(β) = 2G/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8 form;
       the binomial case has G = R since the logistic loss is 1-Lipschitz).
    4. Released η = clip(Xβ̂, ±C): each unchanged row moves ≤ R·Δ₂(β), the
       replaced row ≤ 2C, so Δ₂(η) ≤ √(4C² + n·R²·Δ₂(β)²) (as in the binomial case).

    Examples
    --------
    >>> d_eta, d_beta = gaussian_ridge_sensitivities(1000, 1.0, 1.0, 1.0, 1.0, 0.0)
    >>> round(d_beta, 6)   # 2·1·1·(1 + 1)/(1000·1)
    0.004
    """
    grad = radius * (y_bound + offset_bound) * (1.0 + radius / math.sqrt(lam))
    d_beta = 2.0 * grad / (n * lam)
    d_eta = math.sqrt(4.0 * eta_clip**2 + n * (radius * d_beta) ** 2)
    return d_eta, d_beta


# --------------------------------------------------------------------------- the plan
METHOD = "vertical GLM (block coordinate descent)"

STATISTICS_MODE_NOTE = (
    "SIMULATED FROM POOLED SUFFICIENT STATISTICS: the data came from the streaming/Dask engine, so XᵀX, Xᵀy "
    "and yᵀy of all parties' columns were computed together in one pass and the parties' block coordinate "
    "descent was run on them (block update β_k = (X_kᵀX_k)⁻¹(X_kᵀy − Σ_(j≠k) X_kᵀX_jβ_j), the same sweeps "
    "and stopping rule). This is not the networked protocol: no linear predictors were exchanged; the "
    "disclosure notes below describe what that protocol would reveal."
)


@dataclass
class PrivregPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with what the release needs: the fit's options and, in
    DP mode, every party's noise scales (σ_η, σ_β) (:func:`noise_scales`) and, when the release
    will be dominated by noise, the public warning of :func:`noise_warning`."""

    options: PrivregOptions | None = None
    sigmas: tuple[list[float], list[float]] | None = None
    warning: str | None = None


@dataclass(frozen=True)
class NoiseRule:
    """What :func:`noise_warning` needs beyond the plan: each party's largest coefficient that can matter
    (by party name, :func:`largest_coefficients`) and whether its text may quote the noise scales
    (``quoted`` False after a data-dependent step: levels read from the rows or rows dropped make the
    parties' columns or n, and so the scales, depend on the rows)."""

    largest: Mapping[str, float]
    quoted: bool = True


def plan(
    options: PrivregOptions,
    n: int,
    K: int,
    radius: Sequence[float] | None = None,
    y_bound: float | None = None,
    *,
    simulated: bool,
    statistics: bool = False,
    rule: NoiseRule | None = None,
) -> PrivregPlan:
    """The privacy plan of the fit, from public inputs: n, K, the options and the row-norm bounds.

    Exact mode: one ledger entry with eps = inf (linear predictors shared
    exactly; no guarantee) and notes saying what the protocol reveals.  DP mode
    (``options.eps`` set): K·T clipped, noised linear predictors and K noised
    coefficient blocks under zCDP composition (:func:`noise_scales`).
    ``radius`` lists every party's row-norm bound R_k; ``y_bound`` is B_y
    (Gaussian DP mode).  ``simulated``: the parties ran in one process;
    ``statistics``: from pooled sufficient statistics (streamed/Dask data).  ``rule``: the parties'
    largest coefficients for :func:`noise_warning`, which then warns when noise would dominate.

    Examples
    --------
    >>> from dpstats.methods.privreg import PrivregOptions
    >>> o = PrivregOptions.partial(family="binomial", lam=1.0, eps=1.0, delta=1e-6, rounds=10, eta_clip=4.0,
    ...                            coef_share=0.1, neighbouring="replace")
    >>> p = plan(o, 1000, 2, [2.0, 1.5], simulated=True)
    >>> p.eps, p.delta, p.entries[0].mechanism, len(p.sigmas[0])
    (1.0, 1e-06, 'Gaussian mechanism (zCDP)', 2)
    """
    dp = options.eps is not None
    entry = _dp_entry(options, n, K, radius, y_bound) if dp else _exact_entry(K)
    notes = ([STATISTICS_MODE_NOTE] if statistics else []) + disclosure_text(K, dp, simulated)
    pl = PrivregPlan(
        method=METHOD,
        neighbouring=options.neighbouring,
        entries=[entry],
        sensitivities={"per release": entry.sensitivity},
        assumptions=_dp_assumptions(options.family) if dp else [],
        notes=notes,
        options=options,
        sigmas=noise_scales(options, n, K, radius, y_bound) if dp and radius is not None else None,
    )
    if pl.sigmas is not None and rule is not None:
        largest = rule.largest
        pl.warning = noise_warning(
            options, pl.sigmas, list(largest.values()), list(largest), quoted=rule.quoted
        )
        if pl.warning:
            warnings.warn(pl.warning, ChanceWarning, stacklevel=caller_stacklevel())
    return pl


def largest_coefficients(smallest_bound: Sequence[float], options: PrivregOptions, y_bound: float | None):
    """Every party's largest coefficient that can matter: L / b_k, from public inputs only.

    A coefficient β_j moves its party's linear predictor by |β_j|·b_j at the edge of the
    declared bounds (b_j = max(|lo|, |hi|), the intercept's b = 1).  The protocol carries a
    party's predictor only up to eta_clip (each shared η_k is clipped there), and for the
    Gaussian family the response lies within ±B_y; so a coefficient beyond L/b_j, with
    L = eta_clip (binomial) or min(eta_clip, B_y) (Gaussian), would move the predictor past what
    the fit can carry.  The party's largest is L over its smallest b_j (``smallest_bound``).

    Examples
    --------
    >>> from dpstats.methods.privreg import PrivregOptions
    >>> o = PrivregOptions.partial(family="gaussian", eta_clip=4.0)
    >>> largest_coefficients([1.0, 2.0], o, 1.0)
    [1.0, 0.5]
    """
    top = options.eta_clip if y_bound is None else min(options.eta_clip, y_bound)
    return [top / b if b > 0 else math.inf for b in smallest_bound]


INFLATION_LIMIT = 1.1
"""The binomial slope inflation (:func:`slope_inflation`) above which :func:`noise_warning` warns."""


def received_noise(sigma_eta: Sequence[float]) -> list[float]:
    """The sd s_k of the noise in the offset party k receives: √(Σ_(j≠k) σ_η,j²) (once every party has
    released; public, from the plan's σ_η).

    Examples
    --------
    >>> received_noise([3.0, 4.0, 0.0])
    [4.0, 3.0, 5.0]
    """
    total = sum(s * s for s in sigma_eta)
    return [math.sqrt(max(total - s * s, 0.0)) for s in sigma_eta]


def slope_inflation(sigma_eta: Sequence[float]) -> list[float]:
    """Binomial DP mode: the factor by which each party's slopes are pushed away from zero by the noise
    on the linear predictors it receives, κ_k = √(1 + π·s_k²/8) (s_k of :func:`received_noise`).

    Party k's logistic block fit takes its received offset o + e (e the other parties' Gaussian
    noise, sd s_k) for part of the linear predictor, with coefficient 1.  Averaged over e,
    expit(t + e) ≈ expit(t/κ) (the probit approximation expit(t) ≈ Φ(t·√(π/8))), so the noisy
    model is flatter by κ and the block's maximum-likelihood slopes steepen by about κ to match
    the data (the reverse of the attenuation an omitted covariate causes in a logistic
    regression).  The factor is close under a weak penalty (simulated with lam ≤ 0.01 and slopes
    ≤ 1: observed / κ between 0.94 and 1.0 up to κ = 1.5) and otherwise an upper bound: a ridge
    penalty that dominates the curvature (lam ≳ var(x)/4) and clipped linear predictors shrink it.
    The Gaussian family has no such bias: its block fit is linear in the offset, so the offset's
    noise adds variance only.

    Examples
    --------
    >>> [round(k, 3) for k in slope_inflation([2.0, 2.0])]   # each receives s = 2: √(1 + π·2²/8)
    [1.603, 1.603]
    """
    return [math.sqrt(1.0 + math.pi * s * s / 8.0) for s in received_noise(sigma_eta)]


def noise_warning(
    options: PrivregOptions,
    sigmas: tuple[Sequence[float], Sequence[float]],
    largest: Sequence[float],
    names: Sequence[str],
    *,
    quoted: bool = True,
) -> str | None:
    """The public rule that a DP release is dominated, or biased, by noise, and what to do; None when not.

    From the plan's noise scales and public inputs only (eps, delta, n, bounds, lam, eta_clip,
    rounds; never the rows), so neighbouring data sets warn alike.  Three conditions, any enough:

    * σ_η > eta_clip for some party: each entry of its shared linear predictor carries more noise
      than the largest signal the clip lets it carry.  The receiving parties then cannot use it:
      the Gaussian family clips the received offset to ±(K−1)·eta_clip, which, with σ_η beyond
      it, passes the other parties' predictors attenuated by about 0.8·(K−1)·eta_clip/σ_η; the
      binomial family's logistic loss saturates at such offsets.  The fit no longer combines the
      blocks (with correlated blocks its coefficients are biased, signs included).  σ_η has the
      floor 2·eta_clip/√(2ρ_η) (Δ₂(η) ≥ 2·eta_clip, the replaced row's own entry), so the rule
      depends on eps, delta, rounds and K more than on n.
    * σ_β > the party's largest coefficient that can matter (:func:`largest_coefficients`): the
      final noise alone is larger than any coefficient of that party could usefully be.
    * binomial family, σ_η ≤ eta_clip: the slope inflation of :func:`slope_inflation` exceeds
      :data:`INFLATION_LIMIT` (10 %) for some party.  This is a bias, not a spread: a seed does
      not average it away, and it outlasts the first two conditions (at K = 3, 10 rounds and
      eta_clip = 4 it needs eps ≈ 4500 to fall under 10 %, more with a small lam or n).  Above
      eta_clip the first condition speaks instead: the received predictors are swamped and the
      probit approximation no longer describes the fit (simulated slopes: from ×0.2 to ×4).

    ``quoted`` False (a data-dependent step was taken: with levels read from the rows a party's
    columns, so its row-norm bound and its noise scales, depend on the data; with rows dropped, n):
    whether it warns may then depend on the rows, but its text quotes no scale
    (:data:`NOISE_WARNING_AFTER_STEPS`).
    """
    sig_eta, sig_beta = sigmas
    C = options.eta_clip
    eta_bad = any(s > C for s in sig_eta)
    beta_bad = any(s > top for s, top in zip(sig_beta, largest))
    inflation = slope_inflation(sig_eta) if options.family == "binomial" else []
    inflated = not eta_bad and any(f > INFLATION_LIMIT for f in inflation)  # σ_η > C: said by eta_bad
    if not (eta_bad or beta_bad or inflated):
        return None
    if not quoted:
        return NOISE_WARNING_AFTER_STEPS

    def each(values) -> str:
        return ", ".join(f"{v:.3g} ({nm})" for v, nm in zip(values, names))

    why = []
    if eta_bad:
        why.append(
            f"every shared linear predictor gets noise of sd sigma_eta = {each(sig_eta)} per entry, more "
            f"than eta_clip = {C:g}, the largest value it can carry: the parties' fits cannot use each "
            "other's predictors, so each party's coefficients are fitted as if the other parties' columns "
            "were absent (biased, signs included, when the parties' columns are correlated)"
            + (
                "; binomial family: the logistic fit also takes that noise for signal, which biases the "
                "slopes further, either way (simulated: from ×0.2 to ×4)"
                if options.family == "binomial"
                else ""
            )
        )
    if beta_bad:
        why.append(
            f"the final coefficients get noise of sd sigma_beta = {each(sig_beta)}, more than the "
            f"largest coefficient the bounds let matter ({each(largest)})"
        )
    if inflated:
        why.append(
            "binomial family: each party's logistic fit takes the noise on the linear predictors it "
            f"receives (sd s = {each(received_noise(sig_eta))}) for part of the linear predictor, which "
            f"pushes its slopes away from zero by a factor of about sqrt(1 + pi*s^2/8) = {each(inflation)} "
            "(less under a strong penalty), whatever the seed: the fit reaches the non-private fit of the "
            "same objective only as this factor nears 1"
        )
    lead = "dominated by noise" if eta_bad or beta_bad else "biased by its noise"
    return (
        f"vertical_glm's DP release is {lead} (a rule that reads only public inputs: eps, delta, n, the bounds and the options): "
        + "; ".join(why)
        + ". Raise eps, lam (the coefficient noise scales like 1/(n·lam)) or n, use fewer rounds or parties, "
        "or declare tighter bounds; tidy()'s noise_sd column gives each coefficient's sigma_beta."
    )


NOISE_WARNING_AFTER_STEPS = (
    "vertical_glm's DP release is dominated or biased by its noise: the rule (from eps, delta, n, the bounds "
    "and the options) finds a party's noise on its shared linear predictors above eta_clip, its coefficient "
    "noise above the largest coefficient its bounds let matter, or (binomial family) its slopes pushed away "
    "from zero by more than 10 % by the noise it receives. The noise scales sigma_eta and sigma_beta are not "
    "shown: they depend on each party's columns and on n, which depend on the data-dependent steps named "
    "(levels read from the rows, rows dropped); declare the levels of every factor (levels=) and fill "
    "missing values (na_action='fill') to have them quoted. Raise eps, lam or n, use fewer rounds or "
    "parties, or declare tighter bounds."
)
"""The text of :func:`noise_warning` after a data-dependent step: its conditions, and what to declare to
have the numbers, none quoted (they depend on the rows through the step)."""


def noise_scales(
    options: PrivregOptions, n: int, K: int, radius: Sequence[float], y_bound: float | None = None
) -> tuple[list[float], list[float]]:
    """(σ_η, σ_β) of each party listed in ``radius``: σ = Δ₂/√(2ρ_release).

    The zCDP budget ρ from eps and delta — every release is Gaussian, so exactly, as one
    Gaussian of μ² = 2ρ (:func:`~dpstats.privacy.calibration.gaussian_rho_from_eps_delta`) — is
    split: (1 − coef_share)·ρ over the K·T linear-predictor releases and
    coef_share·ρ over the K coefficient releases; a Gaussian release with
    sensitivity Δ₂ and scale σ costs Δ₂²/(2σ²).

    Examples
    --------
    >>> from dpstats.methods.privreg import PrivregOptions
    >>> o = PrivregOptions.partial(family="binomial", lam=1.0, eps=1.0, delta=1e-6, rounds=10, eta_clip=4.0,
    ...                            coef_share=0.1, neighbouring="replace")
    >>> sig_eta, sig_beta = noise_scales(o, 1000, 2, [2.0])
    >>> len(sig_eta), sig_eta[0] > sig_beta[0]
    (1, True)
    """
    rho_eta, rho_beta = _rho_shares(options, K)
    deltas = [_sensitivities(options, n, K, R, y_bound) for R in radius]
    return (
        [d_eta / math.sqrt(2 * rho_eta) for d_eta, _ in deltas],
        [d_beta / math.sqrt(2 * rho_beta) for _, d_beta in deltas],
    )


def _rho_shares(options: PrivregOptions, K: int) -> tuple[float, float]:
    """ρ of one linear-predictor release and of one coefficient release."""
    rho = gaussian_rho_from_eps_delta(options.eps, options.delta)
    T, share = options.rounds, options.coef_share
    return (1 - share) * rho / (K * T), share * rho / K


def _sensitivities(
    options: PrivregOptions, n: int, K: int, R: float, y_bound: float | None
) -> tuple[float, float]:
    """(Δ₂(η), Δ₂(β)) of a party with row-norm bound R, replace one row."""
    lam, C = options.lam, options.eta_clip
    if options.family == "gaussian":  # squared loss: gradient bounded via |y| ≤ B_y, |offset| ≤ (K−1)C
        return gaussian_ridge_sensitivities(n, R, lam, C, y_bound, (K - 1) * C)
    return binomial_ridge_sensitivities(n, R, lam, C)


def _exact_entry(K: int) -> LedgerEntry:
    return LedgerEntry(
        step=f"block coordinate descent over {K} parties: exact linear predictors "
        "shared every sweep, coefficients and standard errors released",
        mechanism="none (not differentially private)",
        eps=math.inf,
        sensitivity="not bounded: exact values are shared",
        event={"kind": "none"},
    )


def _dp_entry(options: PrivregOptions, n: int, K: int, radius, y_bound) -> LedgerEntry:
    T, share, C = options.rounds, options.coef_share, options.eta_clip
    sens = []
    for R in radius:
        d_eta, d_beta = _sensitivities(options, n, K, R, y_bound)
        sens.append(f"Δ₂(η)={d_eta:.4g}, Δ₂(β)={d_beta:.4g} (R={R:.4g})")
    if options.family == "gaussian":
        sens.append(
            f"squared loss with |y| ≤ B_y={y_bound:.4g}, received offsets clipped to "
            f"±(K−1)·eta_clip={(K - 1) * C:.4g}, Δ₂(β) = 2R(B_y+O)(1+R/√λ)/(nλ)"
        )
    rho = gaussian_rho_from_eps_delta(options.eps, options.delta)
    return LedgerEntry(
        step=f"{K}×{T} clipped linear predictors (n-vectors) and {K} coefficient blocks",
        mechanism="Gaussian mechanism, zCDP composition",
        eps=options.eps,
        delta=options.delta,
        sensitivity="replace one row, per party: " + "; ".join(sens),
        note=(
            f"total rho = {rho:.6g} from eps, delta; {1 - share:g} of rho over {K * T} linear-predictor "
            f"releases, {share:g} over {K} coefficient releases; each Gaussian release costs Δ²/(2σ²); "
            f"every release Gaussian: {CONVERSIONS['gaussian']}"
        ),
        event={"kind": "gaussian", "rho": rho},
    )


def _dp_assumptions(family: str) -> list[str]:
    return [
        "the outcome y is public to the parties (the guarantee holds for every fixed y)",
        "covariates clipped to the declared bounds; every block is solved to its exact "
        "minimizer (the inner solver stops at 1e-12)",
        *(
            [
                "gaussian family: y clipped to its declared bounds and every received offset "
                "clipped to ±(K−1)·eta_clip before the block fit"
            ]
            if family == "gaussian"
            else [
                "binomial family: y clipped to [0, 1], the family's domain (a public rule, whatever the "
                "rows hold: a value outside {0, 1} is not refused), so |y − μ| ≤ 1 in the loss gradient"
            ]
        ),
        "the number of sweeps is fixed in advance",
    ]


def disclosure_text(K: int, dp: bool, simulated: bool) -> list[str]:
    """What the protocol reveals, in plain words."""
    lines = [
        "The outcome y is held by the first party and sent to every party in the clear "
        "(as in privreg); it is not protected."
    ]
    if dp:
        lines += [
            "Every sweep each party reveals its linear predictor on its columns less their declared "
            "midpoints, (X_k − 1m_kᵀ)β_k, clipped and with Gaussian noise; the stopping rule is a fixed "
            "number of sweeps (no data-dependent stopping).",
            "Final coefficients are released with Gaussian noise; standard errors are not released.",
            "The guarantee protects each party's covariates against the other parties and anyone "
            "who sees the messages, for every value of the shared y.",
        ]
    else:
        lines += [
            "Every sweep each party reveals its exact linear predictor η_k = X_kβ_k (an n-vector) to "
            "the leader, and receives the exact sum of the other parties' linear predictors. Over "
            "the sweeps these vectors span (up to) the other parties' column spaces: the other "
            "parties learn each party's columns up to an unknown linear transform. This protocol "
            "gives NO formal privacy guarantee.",
            "With se='exact' (the default) each party also shares an orthonormal basis of its "
            "column space after convergence, so that the standard errors are exact: its columns "
            "are then known up to an unknown invertible linear transform.",
            "The leader computes the stopping rule from these linear predictors and y; at the end "
            "each party reveals its coefficients and standard errors.",
        ]
    if K > 2 and not dp:
        lines.append(
            f"With {K} parties a member receives only the sum of the others' linear predictors; "
            "the leader receives each one separately."
        )
    if simulated:
        lines.append(
            "This fit simulated the parties in one process; deployed, each party runs its own "
            "process (a networked Party) and they talk over encrypted TCP."
        )
    return lines
