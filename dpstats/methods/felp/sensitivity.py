"""FELP's sensitivity and privacy plan: Lemma 1's 2/(nλ) (paper variant, refuted) or 2C/k (strict variant).

Liu (2018), §1.3, releases the ensemble average w_D of the k learners with
output perturbation: step 4 adds a noise vector b of density
``v(b) ∝ exp(−(nλε/2)‖b‖)`` (eq. 12), i.e. the L2-Laplace mechanism of scale
Δ/ε with Δ = 2/(nλ), and Theorem 1 (eqs. 13–15) proves ε-DP given Lemma 1's
sensitivity.  Both variants release the same way; they differ in Δ, in what
the guarantee rests on, and in how the k samples are drawn.

Paper variant (``"paper"``): Δ = 2/(nλ), Lemma 1.  Its proof bounds the
change of the average by twice the leave-one-out stability (eq. 6), the
average by one learner because the bootstrap index sets r_t are i.i.d.
(eq. 8), the indicator I(i ∈ r) by its expectation ⌈βn⌉/n ≈ β (eqs. 10–11),
and one learner's change by 1/(⌈βn⌉λ), the strong-convexity bound for a loss
whose i-th term depends on row i alone.  That last premise fails: z_i is
built from row i's nearest hit and miss (§1.1), so replacing one row can
change the margins of many rows; and one row can enter every bootstrap
sample, several times.  On a constructed neighbouring pair the average moves
by up to 2.2 times 2/(nλ), and the empirical auditor refutes the stated ε
(``tests/test_audit_felp.py``).  The variant reproduces the paper: it is
warned, refused under ``strict=True``, and its privacy statement lists the
assumptions the guarantee rests on (:data:`PAPER_VARIANT_REFUTED`).

Strict variant (``"strict"``): the rows are split into k disjoint subsets by
a random permutation drawn independently of the data, and each learner's
weight vector u_t is mapped into the ℓ2 ball of radius C.  By default
(``clip_norm=None``) it is *normalised*: u_t = w_t/‖w_t‖ (its direction; a
zero vector stays 0), C = 1; with a given ``clip_norm`` it is clipped,
u_t = w_t·min(1, C/‖w_t‖).  Sensitivity, replace one row (n public): the
permutation does not look at the rows, so D and D' (row i replaced) get the
same partition; row i lies in one subset r_t, the other k − 1 learners see
identical rows and return identical u_s, and ‖u_t − u'_t‖ <= ‖u_t‖ + ‖u'_t‖
<= 2C whatever the learner computes (its neighbour search included).  So
‖(1/k)Σ u_s − (1/k)Σ u'_s‖ <= Δ = 2C/k.  The number of learners k is public:
the user's, or by default ⌊n_read/ROWS_PER_LEARNER⌋ (at least 1) of the number
of rows read, which is public under replace-one-row even when the missing-value
rule drops rows (:func:`n_estimators_for`).

Why normalise.  The exact minimiser of eq. (2) satisfies, by its KKT conditions
on w >= 0, 2λ‖w‖² = (1/m) Σ t_i σ(−t_i) with t_i = wᵀz_i and |t_i| <= ‖w‖
(‖z_i‖ <= 1), so ‖w‖ <= r*(λ), the root of 2λr = σ(−r) (:func:`logo_norm_bound`;
0.222 at λ = 1, against √(log 2/λ) = 0.833 from λ‖w‖² <= L(0, D) = log 2).  Both
are worst cases over ‖z_i‖ <= 1; the margins of real data are far shorter
(their coordinates are differences of neighbours' features on [0, 1]/√d), and
for moderate λ w ≈ z̄₊/(4λ): weights of 10⁻³–10⁻² at λ = 1, so a clip at any
public worst-case bound leaves Δ two orders of magnitude above the signal.
Only the direction of the average decides the selection, and normalising puts
every learner at the scale of C, whatever the data; the benchmark
``benchmarks/bench_felp_defaults.py`` chose it with ROWS_PER_LEARNER.

:func:`plan` computes the ledger entry, sensitivity text, assumptions and
notes from public inputs only: n (public under replace-one-row), d, k, β, λ
(or the fact that it is tuned), C and ε; the :class:`FELPPlan` it returns carries
Δ as a number (:meth:`FELPPlan.sensitivity`) and everything the release needs, and
:func:`chance_text` says, from the same public inputs, when the noise leaves the release
no better than chance (a :class:`~dpstats.errors.ChanceWarning`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from ...errors import ChanceWarning, NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ...geometry import Box
from ...privacy.accountant import LedgerEntry
from ...privacy.plan import Plan
from ...privacy.statement import DataDependence
from .learner import MAX_ITER, N_NEIGHBORS, TOL
from .spread import advice, best_case_factor, best_spread_text, spread_text

if TYPE_CHECKING:  # the plan builds the ensemble's settings; both modules use default_clip_norm
    from ...formula import ModelFrame
    from .ensemble import EnsembleSpec
    from .options import FELPOptions

DEFAULT_LAM = 1.0
VARIANTS = ("paper", "strict")
PAPER_N_ESTIMATORS = 20  # the paper's k (§2)
ROWS_PER_LEARNER = 20  # the strict default k = n_read // 20 (benchmarks/bench_felp_defaults.py)
UNIT_NORM = 1.0  # C of the strict default: each learner's weight vector normalised
CHANCE_TRIALS = 2000  # draws of the public best-case check (:func:`best_case_precision`)
CHANCE_MARGIN = 0.1  # "no better than chance": within this share of the way from chance to 1

PAPER_VARIANT_REFUTED = (
    "variant='paper' uses FELP's Lemma 1 sensitivity 2/(nλ), which is not a valid bound: on a constructed "
    "pair of neighbouring data sets the ensemble average moves by up to 2.2 times it and the empirical "
    "auditor refutes the stated eps"
)


def default_select(d: int) -> int:
    """The paper selects 10% of the features (at least one; §2.1)."""
    return max(1, int(round(0.1 * d)))


def default_clip_norm(lam: float) -> float:
    """C = √(log 2 / λ): the exact minimiser always satisfies λ‖w‖² <= f(0) = log 2.

    So clipping at this C only guards against an inexact solve; it is a public
    function of λ.
    """
    return math.sqrt(math.log(2.0) / lam)


def logo_norm_bound(lam: float) -> float:
    """r*(λ), the root of 2λr = σ(−r): no exact minimiser of eq. (2) with ‖z_i‖ <= 1 has ‖w‖ > r*.

    KKT on w >= 0: 2λw_j = (1/m) Σ z_ij σ(−wᵀz_i) where w_j > 0, so 2λ‖w‖² = (1/m) Σ t_i σ(−t_i),
    t_i = wᵀz_i, |t_i| <= ‖w‖; t σ(−t) increases up to t = 1.28, hence 2λr² <= r σ(−r) there
    (and 2λr² <= 0.2785 beyond).  Tighter than √(log 2/λ) (:func:`default_clip_norm`) at every λ.

    Examples
    --------
    >>> round(logo_norm_bound(1.0), 4), round(default_clip_norm(1.0), 4)
    (0.2223, 0.8326)
    """
    return float(brentq(lambda r: 2.0 * lam * r - expit(-r), 0.0, 1.0 / (2.0 * lam)))


def n_estimators_for(variant: str, given: int | None, n_read: int) -> int:
    """k: the user's, the paper's 20, or (strict) one learner per ROWS_PER_LEARNER rows read.

    ``n_read``, the number of rows read, is public under replace-one-row (also when the
    missing-value rule then drops rows), so k is too.

    Examples
    --------
    >>> n_estimators_for("strict", None, 2000), n_estimators_for("paper", None, 2000)
    (100, 20)
    """
    if given is not None:
        return given
    return PAPER_N_ESTIMATORS if variant == "paper" else max(1, n_read // ROWS_PER_LEARNER)


def clip_norm(
    variant: str, given: float | None, lam: float, lam_source: str, lam_grid: Sequence[float]
) -> float | None:
    """C of the strict variant (None for the paper variant), public: ``given``, or 1 (normalised).

    ``lam``, ``lam_source`` and ``lam_grid`` are kept for callers; C no longer depends on λ.

    Examples
    --------
    >>> clip_norm("strict", None, 1.0, "user", ()), clip_norm("paper", None, 1.0, "user", ())
    (1.0, None)
    """
    if variant != "strict":
        return None
    return UNIT_NORM if given is None else given


def paper_sensitivity(n: int, lam: float) -> float:
    """Lemma 1 of the FELP paper: ‖w_D − w_D'‖₂ <= 2/(nλ) (under its assumptions; eq. 11)."""
    return 2.0 / (n * lam)


def strict_sensitivity(clip_norm: float, k: int) -> float:
    """Replacing one row changes one of k disjoint subsets: the average moves <= 2C/k."""
    return 2.0 * clip_norm / k


def noise_coordinate_sd(scale: float, d: int) -> float:
    """Per-coordinate s.d. of L2-Laplace noise: E‖b‖² = scale² d(d+1), so scale·√(d+1)."""
    return scale * math.sqrt(d + 1)


def check_paper_variant(variant: str, strict: bool) -> None:
    """The paper variant reproduces the paper; strict=True refuses it, otherwise it is warned."""
    if variant != "paper":
        return
    if strict:
        raise PrivacyParameterError(f"strict=True refuses: {PAPER_VARIANT_REFUTED}. Use variant='strict'.")
    warnings.warn(
        f"{PAPER_VARIANT_REFUTED}: its stated eps is not a valid differential privacy guarantee; "
        "use variant='strict' (the default) for a release.",
        NonPrivateWarning,
        stacklevel=caller_stacklevel(),
    )


def name_data_dependent_steps(
    dd: DataDependence, *, bounded: bool, lam_source: str, lam_grid: Sequence[float]
) -> None:
    """Name the data-dependent steps: feature ranges without bounds, and λ by cross-validation."""
    if not bounded:
        dd.add(
            "features mapped onto [0, 1] by their data minima and maxima (needed for ‖z_i‖ <= 1)",
            fix="declare public bounds, e.g. bounds=(0, 1) or bounds={'x1': (0, 10), ...}",
        )
    if lam_source == "cv":
        dd.add(
            f"λ tuned by 5-fold cross-validation on the private data over {list(lam_grid)}; the "
            "noise scale depends on λ",
            fix="pass a fixed lam= chosen on public data (default 1.0)",
        )


def sensitivity_text(
    variant: str, n: int, lam: float, C: float | None, k: int, lam_source: str, normalise: bool = False
) -> str:
    """The ledger's wording of Δ: Lemma 1's 2/(nλ), or 2C/k."""
    lam_txt = "λ tuned by CV (value known after fitting)" if lam_source == "cv" else f"λ = {lam:g}"
    if variant == "paper":
        base = "‖Δw‖₂ <= 2/(nλ)"
        if lam_source != "cv":
            base += f" = {paper_sensitivity(n, lam):.4g}"
        return f"{base}, replace one row, n = {n}, {lam_txt} (FELP Lemma 1; rests on the stated assumptions)"
    how = f"normalised to ‖w‖₂ = C = {C:g} (or 0)" if normalise else f"clipped to ‖w‖₂ <= C = {C:.4g}"
    return (
        f"‖Δw̄‖₂ <= 2C/k = {strict_sensitivity(C, k):.4g}, replace one row changes one of k = {k} "
        f"disjoint subsets, each weight vector {how}"
    )


@dataclass
class FELPPlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with everything the release needs.

    ``release_eps`` is the eps of step 4 (the ledger may hold a private-bounds step
    before it); ``n`` the public number of rows; ``lam``, ``lam_source`` and ``lam_grid``
    the λ in force and whether it is tuned; ``select`` the number of features selected;
    ``box`` the public bounds of the features (None: the data's range, a named step);
    ``spec`` the ensemble's settings, with C resolved (None in the paper variant).
    """

    release_eps: float = 0.0
    n: int = 0
    d: int = 0
    lam: float = DEFAULT_LAM
    lam_source: str = "fixed default"
    lam_grid: Sequence[float] = ()
    select: int = 1
    box: Box | None = None
    spec: EnsembleSpec | None = None
    n_shown: bool = True  # False: rows may have been dropped, so n, and the paper variant's Δ, are private

    @property
    def variant(self) -> str:
        return self.spec.variant

    @property
    def clip_norm(self) -> float | None:
        return self.spec.clip_norm

    def sensitivity(self, lam: float) -> float:
        """Δ of step 4 at the λ used: 2/(nλ) (paper variant) or 2C/k (strict variant)."""
        if self.variant == "paper":
            return paper_sensitivity(self.n, lam)
        return strict_sensitivity(self.clip_norm, self.spec.n_estimators)

    @property
    def normalise(self) -> bool:
        return self.spec.normalise

    def weight_bound(self, lam: float) -> float:
        """The public bound of every coordinate of w_D: C (strict, clipped) or √(log 2/λ) (the
        exact minimiser's norm bound), which the floating-point safe sampler clamps to."""
        return self.clip_norm if self.variant == "strict" else default_clip_norm(lam)

    def norm_bound(self, lam: float) -> float:
        """The most the average's weight vector can weigh (‖w_D‖): C when normalised, min(C,
        :func:`logo_norm_bound`) when clipped, :func:`logo_norm_bound` in the paper variant."""
        bound = self.clip_norm if self.normalise else logo_norm_bound(lam)
        if self.variant == "strict" and not self.normalise:
            bound = min(self.clip_norm, bound)
        return bound

    def chance_text(self) -> str:
        """Why the release cannot beat chance, from public inputs (empty if it may): :func:`chance_text`."""
        if self.variant == "paper" and self.lam_source == "cv":
            return ""  # Δ = 2/(nλ) waits for the tuned λ
        lam = min(self.lam_grid) if self.lam_source == "cv" else self.lam
        text = chance_text(
            self.sensitivity(lam),
            self.release_eps,
            len_d=self.d,
            select=self.select,
            bound=self.norm_bound(lam),
        )
        if text and self.variant == "paper" and not self.n_shown:
            return PAPER_CHANCE_N_PRIVATE
        return text

    def released_chance_text(self, weights: np.ndarray, scale: float, lam: float) -> str:
        """After the release, from the released ``weights`` and their public noise ``scale`` (λ the one used):
        :func:`.spread.spread_text` when the weights' spread is not distinguishable from the noise, else "";
        "" for the paper variant when rows may have been dropped (its scale then depends on the private n).
        The caller asks only when :meth:`chance_text` said nothing before the spend (a simulation it need
        not run again here)."""
        if self.variant == "paper" and not self.n_shown:
            return ""
        bound = self.norm_bound(lam)
        return spread_text(weights, scale, self.release_eps, select=self.select, bound=bound)


# the paper variant's chance warning when rows may have been dropped: Δ = 2/(nλ) reads the private n
PAPER_CHANCE_N_PRIVATE = (
    "dp_felp's release is mostly noise, or cannot beat chance, at these settings: the paper variant's noise "
    "is 2/(nλ)/eps with n the number of rows analysed, which dropping rows with missing values makes private, "
    "so its s.d. per weight and the best-case share selected are not shown. Raise eps or lam, or declare "
    "bounds for every variable so that no row is dropped."
)


def frame_sizes(mf: ModelFrame) -> dict[str, int | bool]:
    """:func:`plan`'s sizes from a model frame: n analysed, d, the rows read and whether n is public
    (no row may have been dropped)."""
    return {"n": mf.n, "d": mf.p, "n_read": mf.n + mf.n_dropped, "n_shown": not mf.n_data_dependent}


def plan(
    options: FELPOptions,
    *,
    n: int,
    d: int,
    select: int | None = None,
    box: Box | None = None,
    n_read: int | None = None,
    n_shown: bool = True,
) -> FELPPlan:
    """The privacy plan of step 4: one L2-Laplace release of the d-vector w_D, all of eps.

    ``options`` give the variant, eps, the ensemble and λ (with ``lam_source="cv"`` the
    tuned value is not known yet and the paper variant's text says so); n (public under
    replace-one-row) and d come from the frame, ``select`` (default 10% of d) and the
    public ``box`` of the features (None: their data range, a named step) too; ``n_read``
    (default n), the rows read, sets the default k (:func:`n_estimators_for`); ``n_shown`` False: rows may
    have been dropped (:func:`frame_sizes`), and the paper variant's warning quotes nothing of n.  The plan
    warns (:class:`~dpstats.errors.ChanceWarning`) when :meth:`FELPPlan.chance_text` says
    the release cannot beat chance.

    Examples
    --------
    >>> from dpstats.methods.felp.options import FELPOptions
    >>> o = FELPOptions.partial(variant="strict", eps=1.0, n_estimators=5, lam=1.0, lam_source="user",
    ...                         clip_norm=1.0, sample_ratio=0.9)
    >>> p = plan(o, n=100, d=30)
    >>> p.eps, p.entries[0].sensitivity.split(",")[0], p.sensitivity(1.0)
    (1.0, '‖Δw̄‖₂ <= 2C/k = 0.4', 0.4)
    """
    from .ensemble import EnsembleSpec

    variant, eps, lam, lam_source = options.variant, options.eps, options.lam, options.lam_source
    k = n_estimators_for(variant, options.n_estimators, n if n_read is None else n_read)
    C = clip_norm(variant, options.clip_norm, lam, lam_source, options.lam_grid or ())
    normalise = variant == "strict" and options.clip_norm is None
    text = sensitivity_text(variant, n, lam, C, k, lam_source, normalise)
    entry = LedgerEntry(
        step=f"release of the average of {k} Logo weight vectors ({d} weights)",
        mechanism="L2-Laplace output perturbation",
        eps=eps,
        sensitivity=text,
        note="selection of the top weights is post-processing",
        event={"kind": "pure", "eps": eps},
    )
    result = FELPPlan(
        method=f"DP-FELP ({variant} variant)",
        neighbouring="replace",
        entries=[entry],
        sensitivities={"average weight vector (ℓ2)": text},
        assumptions=_assumptions(variant, box is not None, k, options.sample_ratio),
        notes=_notes(variant, k, C, normalise),
        refuted=PAPER_VARIANT_REFUTED if variant == "paper" else "",
        release_eps=eps,
        n=n,
        d=d,
        lam=lam,
        lam_source=lam_source,
        lam_grid=tuple(options.lam_grid or ()),
        select=default_select(d) if select is None else select,
        box=box,
        n_shown=n_shown,
        spec=EnsembleSpec(
            n_estimators=k,
            sample_ratio=options.sample_ratio,
            variant=variant,
            clip_norm=C,
            tol=TOL if options.tol is None else options.tol,
            max_iter=MAX_ITER if options.max_iter is None else options.max_iter,
            n_neighbors=N_NEIGHBORS if options.n_neighbors is None else options.n_neighbors,
            normalise=normalise,
        ),
    )
    warn_chance(result.chance_text())
    return result


def warn_chance(text: str) -> None:
    """A :class:`~dpstats.errors.ChanceWarning` with ``text`` (none if empty)."""
    if text:
        warnings.warn(text, ChanceWarning, stacklevel=caller_stacklevel())


def best_case_precision(
    sd_scale: float, d: int, select: int, bound: float, trials: int = CHANCE_TRIALS
) -> float:
    """Mean share of the ``select`` favoured features in the released top ``select``, in the best case.

    The best case for the selection: the average puts all its norm ``bound`` on ``select``
    features (bound/√select each; every learner agreeing), the rest 0.  L2-Laplace noise of
    scale ``sd_scale`` (norm ~ Gamma(d, scale), uniform direction) is added, ``trials`` times
    with a fixed generator: public inputs only, no data.

    Examples
    --------
    >>> best_case_precision(0.0, 10, 2, 1.0), best_case_precision(1e6, 10, 2, 1.0, trials=4000) < 0.3
    (1.0, True)
    """
    if sd_scale == 0:
        return 1.0
    rng = np.random.default_rng(0)
    direction = rng.normal(size=(trials, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    released = direction * rng.gamma(d, sd_scale, size=(trials, 1))
    released[:, :select] += bound / math.sqrt(select)
    top = np.argpartition(-released, select - 1, axis=1)[:, :select] if select < d else np.arange(d)[None]
    return float(np.mean(np.count_nonzero(top < select, axis=1)) / select)


def chance_text(sensitivity: float, eps: float, *, len_d: int, select: int, bound: float) -> str:
    """Why the release cannot beat chance, from public inputs (empty when it may).

    ``bound`` is the most any learner's weight vector (hence the average's) can weigh: C when
    normalised, min(C, :func:`logo_norm_bound`) when clipped.  Three checks: the noise s.d. per
    weight, (Δ/ε)·√(d+1), exceeds ``bound``; or even the best case
    (:func:`best_case_precision`) selects the favoured features at most CHANCE_MARGIN of the way
    from chance (select/d) to 1; or even weights spread as far as ``bound`` allows would not stand
    out from the noise in most releases (:func:`.spread.best_spread_text`, the public side of the
    test the result applies to the released weights, :meth:`FELPPlan.released_chance_text`).

    Examples
    --------
    >>> chance_text(2 * 1.0 / 5, 8.0, len_d=6, select=1, bound=1.0)
    ''
    >>> text = chance_text(2 * 0.8326 / 5, 1.0, len_d=6, select=1, bound=0.2223)
    >>> text.startswith("dp_felp's release cannot beat chance"), "0.8811 exceeds 0.2223" in text, "hold 24%" in text
    (True, True, True)
    """
    if math.isinf(eps) or select >= len_d:
        return ""
    scale = sensitivity / eps
    sd = noise_coordinate_sd(scale, len_d)
    chance = select / len_d
    best = best_case_precision(scale, len_d, select, bound)
    hopeless = best <= chance + CHANCE_MARGIN * (1.0 - chance)
    spread = best_spread_text(sd, len_d, eps, bound) if sd <= bound else ""
    if sd <= bound and not hopeless and not spread:
        return ""
    parts = []
    if sd > bound:
        parts.append(f"noise s.d. per weight {sd:.4g} exceeds {bound:.4g}, the most any weight can be")
    parts.append(
        f"even if every learner put all its weight on the same {select} feature(s), the top {select} "
        f"would hold {best:.0%} of them on average (chance: {chance:.0%})"
    )
    remedy = ". Raise eps or n_estimators (more rows: more learners)."
    if spread:
        parts.append(spread)
        remedy = ". " + advice(eps, best_case_factor(sd, len_d, bound)) + "."
    headline = "cannot beat chance" if hopeless else "is mostly noise"
    return f"dp_felp's release {headline} at these settings: " + "; ".join(parts) + remedy


def _assumptions(variant: str, bounded: bool, k: int, beta: float) -> list[str]:
    """What the paper variant's guarantee rests on (module docstring); none for the strict variant."""
    if variant != "paper":
        return []
    common = (
        "every margin vector satisfies ‖z_i‖₂ <= 1, because features are mapped onto [0, 1] "
        + ("by the declared bounds" if bounded else "by data minima and maxima")
        + " and divided by √d"
    )
    return [
        "each margin vector z_i is treated as a function of row i alone (FELP Lemma 1); in fact z_i "
        "depends on other rows through their roles as nearest hits and misses, so replacing one row "
        "can change the margins of many rows, and the 2/(nλ) bound is not proven for the algorithm as run",
        common,
        f"the average of k = {k} learners on bootstrap samples of ⌈{beta:g}n⌉ rows is given the "
        "sensitivity of one learner on all n rows, although one row can enter every sample, several times",
        "each learner's weights are the exact minimiser of its strongly convex objective (the "
        "neighbour re-computation loop and the numerical solver only approximate it)",
    ]


def _notes(variant: str, k: int, C: float | None, normalise: bool = False) -> list[str]:
    if variant == "paper":
        notes = [
            PAPER_VARIANT_REFUTED + ".",
            "For a guarantee that does not rest on these assumptions use variant='strict'.",
        ]
    else:
        how = (
            f"normalised to ℓ2 norm C = {C:g} (its direction; a zero vector stays 0)"
            if normalise
            else f"clipped to ℓ2 norm C = {C:.4g}"
        )
        notes = [
            f"Rows are split into k = {k} disjoint subsets by a random permutation drawn independently "
            f"of the data; each subset's weight vector is {how}, so the guarantee holds whatever the "
            "local-learning step computes.",
            "How many weight vectors were "
            + ("normalised" if normalise else "clipped")
            + " is not released.",
        ]
    notes.append("The released weights determine the selection and its order; both are post-processing.")
    return notes
