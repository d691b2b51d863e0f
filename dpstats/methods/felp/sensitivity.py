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
weight vector is clipped to ℓ2 norm C.  Replacing one row changes one subset,
hence one clipped vector by at most 2C, and the average by at most Δ = 2C/k,
whatever the learner computes.  The default C = √(log 2/λ) is never reached
by the exact minimiser of eq. (2), since λ‖w‖² <= L(0, D) = log 2; with
``lam="cv"`` it is taken at the smallest λ of the grid, so that C (and Δ)
are fixed before the data are touched.

:func:`plan` computes the ledger entry, sensitivity text, assumptions and
notes from public inputs only: n (public under replace-one-row), d, k, β, λ
(or the fact that it is tuned), C and ε; the :class:`FELPPlan` it returns carries
Δ as a number (:meth:`FELPPlan.sensitivity`) and everything the release needs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import NonPrivateWarning, PrivacyParameterError, caller_stacklevel
from ...geometry import Box
from ...privacy.accountant import LedgerEntry
from ...privacy.plan import Plan
from ...privacy.statement import DataDependence
from .learner import MAX_ITER, N_NEIGHBORS, TOL

if TYPE_CHECKING:  # the plan builds the ensemble's settings; both modules use default_clip_norm
    from .ensemble import EnsembleSpec
    from .options import FELPOptions

DEFAULT_LAM = 1.0
VARIANTS = ("paper", "strict")

PAPER_VARIANT_REFUTED = (
    "variant='paper' uses FELP's Lemma 1 sensitivity 2/(nλ), which is not a valid bound: on a constructed "
    "pair of neighbouring data sets the ensemble average moves by up to 2.2 times it and the empirical "
    "auditor refutes the stated eps (tests/test_audit_felp.py)"
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


def clip_norm(
    variant: str, given: float | None, lam: float, lam_source: str, lam_grid: Sequence[float]
) -> float | None:
    """C of the strict variant (None for the paper variant), public: ``given`` or C(λ).

    With ``lam_source="cv"`` the default C covers every λ of the grid, so it
    is fixed before the charge.

    Examples
    --------
    >>> round(clip_norm("strict", None, 1.0, "user", ()), 4), clip_norm("paper", None, 1.0, "user", ())
    (0.8326, None)
    """
    if variant != "strict":
        return None
    lam_for_c = min(lam_grid) if lam_source == "cv" else lam
    return given or default_clip_norm(lam_for_c)


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


def sensitivity_text(variant: str, n: int, lam: float, C: float | None, k: int, lam_source: str) -> str:
    """The ledger's wording of Δ: Lemma 1's 2/(nλ), or 2C/k."""
    lam_txt = "λ tuned by CV (value known after fitting)" if lam_source == "cv" else f"λ = {lam:g}"
    if variant == "paper":
        base = "‖Δw‖₂ <= 2/(nλ)"
        if lam_source != "cv":
            base += f" = {paper_sensitivity(n, lam):.4g}"
        return f"{base}, replace one row, n = {n}, {lam_txt} (FELP Lemma 1; rests on the stated assumptions)"
    return (
        f"‖Δw̄‖₂ <= 2C/k = {strict_sensitivity(C, k):.4g}, replace one row changes one of k = {k} "
        f"disjoint subsets, each weight vector clipped to ‖w‖₂ <= C = {C:.4g}"
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
    lam: float = DEFAULT_LAM
    lam_source: str = "fixed default"
    lam_grid: Sequence[float] = ()
    select: int = 1
    box: Box | None = None
    spec: EnsembleSpec | None = None

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

    def weight_bound(self, lam: float) -> float:
        """The public bound of every coordinate of w_D: C (strict, clipped) or √(log 2/λ) (the
        exact minimiser's norm bound), which the floating-point safe sampler clamps to."""
        return self.clip_norm if self.variant == "strict" else default_clip_norm(lam)


def plan(
    options: FELPOptions, *, n: int, d: int, select: int | None = None, box: Box | None = None
) -> FELPPlan:
    """The privacy plan of step 4: one L2-Laplace release of the d-vector w_D, all of eps.

    ``options`` give the variant, eps, the ensemble and λ (with ``lam_source="cv"`` the
    tuned value is not known yet and the paper variant's text says so); n (public under
    replace-one-row) and d come from the frame, ``select`` (default 10% of d) and the
    public ``box`` of the features (None: their data range, a named step) too.

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

    variant, eps, k, lam, lam_source = (
        options.variant,
        options.eps,
        options.n_estimators,
        options.lam,
        options.lam_source,
    )
    C = clip_norm(variant, options.clip_norm, lam, lam_source, options.lam_grid or ())
    text = sensitivity_text(variant, n, lam, C, k, lam_source)
    entry = LedgerEntry(
        step=f"release of the average of {k} Logo weight vectors ({d} weights)",
        mechanism="L2-Laplace output perturbation",
        eps=eps,
        sensitivity=text,
        note="selection of the top weights is post-processing",
        event={"kind": "pure", "eps": eps},
    )
    return FELPPlan(
        method=f"DP-FELP ({variant} variant)",
        neighbouring="replace",
        entries=[entry],
        sensitivities={"average weight vector (ℓ2)": text},
        assumptions=_assumptions(variant, box is not None, k, options.sample_ratio),
        notes=_notes(variant, k, C),
        refuted=PAPER_VARIANT_REFUTED if variant == "paper" else "",
        release_eps=eps,
        n=n,
        lam=lam,
        lam_source=lam_source,
        lam_grid=tuple(options.lam_grid or ()),
        select=default_select(d) if select is None else select,
        box=box,
        spec=EnsembleSpec(
            n_estimators=k,
            sample_ratio=options.sample_ratio,
            variant=variant,
            clip_norm=C,
            tol=TOL if options.tol is None else options.tol,
            max_iter=MAX_ITER if options.max_iter is None else options.max_iter,
            n_neighbors=N_NEIGHBORS if options.n_neighbors is None else options.n_neighbors,
        ),
    )


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


def _notes(variant: str, k: int, C: float | None) -> list[str]:
    if variant == "paper":
        notes = [
            PAPER_VARIANT_REFUTED + ".",
            "For a guarantee that does not rest on these assumptions use variant='strict'.",
        ]
    else:
        notes = [
            f"Rows are split into k = {k} disjoint subsets by a random permutation drawn independently "
            f"of the data; each subset's weight vector is clipped to ℓ2 norm C = {C:.4g}, so the "
            "guarantee holds whatever the local-learning step computes.",
            "How many weight vectors were clipped is not released.",
        ]
    notes.append("The released weights determine the selection and its order; both are post-processing.")
    return notes
