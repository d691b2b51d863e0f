"""Two-stage private support selection (Kifer, Smith & Thakurta 2012), as a plain algorithm.

The baseline of Swope et al. ("Feature Selection from Differentially Private
Correlations", §2 and §3): subsample and aggregate.  The steps, as the
functions below implement them:

1. Split the rows into m disjoint blocks without looking at the data
   (default m = ⌊√n⌋, blocks of about √n rows, as in the paper's comparison;
   under add/remove-one-row n is private and m must be given):
   :func:`block_labels`.
2. Fit a non-private lasso on each block, on its rows clipped to the declared
   bounds (:func:`clip_to_boxes`; a column or response without bounds as it
   is): :func:`block_lasso`, :func:`block_coefficients`.  A block whose
   lasso cannot be computed in floating point (an input, or its square, past
   the largest double where no bound clips it) casts no vote, as a block of
   fewer than 2 rows does: a public rule, so no row can make the release
   fail or warn after its charge.
3. Every block casts one vote for each feature it selects (its top-k
   |coefficients|, or its whole support): :func:`vote_counts`.
4. A private top-k of the d vote counts picks the features (in
   :func:`release`).
5. Optionally, a fit on the selected features (Kifer et al.'s second stage):
   least squares from Laplace-noised sufficient statistics,
   :func:`private_ols`, or ordinary least squares (not private).

:func:`plan` gives the ledger of steps 4 and 5 from public inputs before any
data is touched, with every number the release needs (:class:`TwoStagePlan`);
:func:`release` runs steps 1–5.  How each block fits its lasso is one record
(:class:`Lasso`), how the blocks vote another (:class:`Votes`).

Any number of rows, 0 and 1 included, runs to completion under
add/remove-one-row, where n is private and no error may depend on it: a block
with fewer than 2 rows casts no vote (its coefficients are 0), so the vote
counts of so few rows are 0 and the release is the selector's noise alone.

Sensitivity of the vote counts.  The assignment of rows to blocks never looks
at the data.  Replace-one-row: the changed row sits in one block, whose votes
may all change; every other block is untouched, so each count moves by at
most 1 (l∞ sensitivity 1; l1 sensitivity 2k for top-k votes).  Add/remove-one-
row with rows assigned to blocks independently and uniformly: the extra row
joins one block and the others are unchanged, so again each count moves by at
most 1.  The counts are *not* monotone under either relation: a changed block
can withdraw its vote from one feature and give it to another, so the
factor-2 savings for monotone scores do not apply.

Everything inside a block (clipping to public bounds, centering, scaling, the
lasso itself, and the rule that a block whose fit fails in floating point
casts no vote) may use that block's data freely: it is part of the block's
vote, a function of that block's rows and public inputs only, which the
sensitivity argument already allows to change arbitrarily.  Each row is in
one block, so the argument above is unchanged.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._kernels import single_blas_thread
from ..errors import DataError, PrivacyParameterError
from ..stats import block_rows
from ..formula import ModelFrame
from ..geometry import Box, to_unit_interval
from ..privacy.accountant import LedgerEntry
from ..privacy.bounds import declared_bounds, design_box, is_auto, response_box
from ..privacy.plan import Plan
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..privacy.topk import SELECTORS
from ..schema import PublicN, Schema
from ..validation import check_eps, check_fraction, check_neighbouring, check_oc_trials
from ._options import Options
from .sis import selection_diagnostics

SENSITIVITY = {"replace": 1.0, "add_remove": 1.0}

SENSITIVITY_TEXT = {
    "replace": (
        "Δ∞ = 1: replacing one row changes one block's votes, so each vote count moves by "
        "at most 1 (not monotone: a block may move its votes between features)"
    ),
    "add_remove": (
        "Δ∞ = 1: with rows assigned to blocks independently, adding or removing one row "
        "changes one block's votes, so each vote count moves by at most 1 (not monotone)"
    ),
}

LASSO_SOLVERS = {
    "lars": "scikit-learn LassoLars (LARS-lasso homotopy: exact solution, machine-precision tolerance)",
    "cd": "scikit-learn Lasso (cyclic coordinate descent, duality-gap tolerance tol)",
}


NOTES = [
    "The selected set is released without an order; vote counts are not released.",
    "Rows are assigned to blocks without looking at the data; the lasso fits inside a "
    "block are not private by themselves and need no bounds. Each block fits its rows clipped to "
    "the declared bounds (a column without bounds as it is); a block whose lasso cannot be computed "
    "in floating point casts no vote.",
]
ADD_REMOVE_NOTE = (
    "Under add/remove-one-row the rows are drawn into blocks at random and n is not checked against "
    "the number of blocks (n is private): a block with fewer than 2 rows casts no vote."
)
SECOND_STAGE_NOTES = {
    "private_ols": "Second-stage estimates come from noisy sufficient statistics of the "
    "bounded, clipped data; the number of clipped values is not released.",
    "ols": "Second-stage estimates are NOT private (ordinary least squares).",
}


SECOND_STAGES = (None, "private_ols", "ols")

ADD_REMOVE_BLOCKS = (
    "dp_two_stage under neighbouring='add_remove' needs a public number of blocks, e.g. blocks=10: "
    "the default ⌊√n⌋ would be read from n, which is private under add/remove-one-row, and every "
    "output showing the number of blocks would show it. Nothing was read or spent."
)


@dataclass(frozen=True)
class Lasso:
    """How every block fits its lasso (step 2): public settings, see :func:`block_lasso`."""

    lam: float = 0.1
    standardize: bool = True
    solver: str = "lars"
    tol: float = 1e-4
    max_iter: int = 10_000

    def fit(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The lasso coefficients of one block (:func:`block_lasso`)."""
        return block_lasso(
            X,
            y,
            self.lam,
            standardize=self.standardize,
            solver=self.solver,
            tol=self.tol,
            max_iter=self.max_iter,
        )

    def text(self) -> str:
        """Name of the solver and its tolerance, for results and reports."""
        return solver_text(self.solver, self.tol)


@dataclass(frozen=True)
class Votes:
    """How the blocks vote (steps 1–3): their number (None: ⌊√n⌋), what each votes for, how rows
    are assigned to blocks (:func:`block_labels`) and how each fits its lasso."""

    lasso: Lasso = field(default_factory=Lasso)
    blocks: int | None = None
    vote: str = "topk"
    neighbouring: str = "replace"
    shuffle: bool = True


@dataclass(frozen=True)
class TwoStageOptions(Options):
    """dp_two_stage's options, checked once (defaults: the signature of :func:`dpstats.dp_two_stage`)."""

    PUBLIC_N = PublicN(
        "dp_two_stage",
        "its blocks split the n rows read into equal parts (default ⌊√n⌋ of them), which is private "
        "only for a public n",
        add_remove="rows get independent block labels; give blocks=",
    )

    formula: str
    eps: float
    k: int | None
    lam: float
    blocks: int | None
    vote: str
    topk: str
    gamma: float
    shuffle: bool
    standardize: bool
    solver: str
    tol: float
    second_stage: str | None
    stage_fraction: float
    bounds: Any
    neighbouring: str
    truth: Sequence[str] | None
    oc_trials: int
    schema: Schema | None

    @classmethod
    def check(cls, given: Mapping[str, Any]) -> TwoStageOptions:
        """Cheap checks of dp_two_stage's arguments, before the data is read."""
        if given["solver"] not in LASSO_SOLVERS:
            raise PrivacyParameterError(f"solver must be 'lars' or 'cd', got {given['solver']!r}.")
        eps = check_eps(given["eps"])
        neighbouring = check_neighbouring(given["neighbouring"])
        check_eps(given["lam"], name="lam")
        check_eps(given["tol"], name="tol")
        check_fraction(given["gamma"], "gamma", 0.0, 1.0)
        blocks = given["blocks"]
        if blocks is not None and (
            isinstance(blocks, bool) or not isinstance(blocks, numbers.Integral) or blocks < 2
        ):
            raise PrivacyParameterError(
                f"blocks must be a whole number >= 2 (or None for ⌊√n⌋), got {blocks!r}."
            )
        if blocks is None and neighbouring == "add_remove":
            raise PrivacyParameterError(ADD_REMOVE_BLOCKS)
        _check_choices(given)
        check_oc_trials(given["oc_trials"])
        if given["second_stage"] == "private_ols" and given["bounds"] is None:
            raise PrivacyParameterError(
                "second_stage='private_ols' needs public bounds= for the selected columns and the "
                "response, e.g. bounds=(-5, 5); or use second_stage=None."
            )
        return cls.from_given(given, eps=eps, neighbouring=neighbouring)

    @property
    def lasso(self) -> Lasso:
        return Lasso(self.lam, self.standardize, self.solver, self.tol)

    def number_of_blocks(self, n: int) -> int:
        """The blocks of step 1: ``blocks``, or ⌊√n⌋ of the public n (under add/remove, where n is
        private, :meth:`check` requires ``blocks``); under replace-one-row at least 2 rows each."""
        n_blocks = default_blocks(n) if self.blocks is None else self.blocks
        if self.neighbouring == "replace" and n_blocks > n // 2:  # under add/remove: a stated note
            raise DataError(
                f"blocks = {n_blocks} leaves fewer than 2 rows per block at n = {n}; use blocks <= {n // 2}."
            )
        return n_blocks

    @property
    def min_rows(self) -> int:
        """The fewest rows a frame may have: 2 where n is public; 0 under add/remove, where n is
        private and no error may depend on it (module docstring)."""
        return 0 if self.neighbouring == "add_remove" else 2


def _check_choices(given: Mapping[str, Any]) -> None:
    if given["vote"] not in ("topk", "support"):
        raise PrivacyParameterError(f"vote must be 'topk' or 'support', got {given['vote']!r}.")
    if given["topk"] not in SELECTORS:
        raise PrivacyParameterError(f"topk must be one of {sorted(SELECTORS)}, got {given['topk']!r}.")
    if given["second_stage"] not in SECOND_STAGES:
        raise PrivacyParameterError(
            f"second_stage must be None, 'private_ols' or 'ols', got {given['second_stage']!r}."
        )
    check_fraction(given["stage_fraction"], "stage_fraction", 0.0, 1.0, low_open=True)
    for name in ("shuffle", "standardize"):
        if not isinstance(given[name], bool):
            raise PrivacyParameterError(f"{name} must be True or False, got {given[name]!r}.")


@dataclass
class TwoStagePlan(Plan):
    """A :class:`~dpstats.privacy.plan.Plan` with every number the release needs.

    ``select_eps`` and ``stage_eps`` are the eps of steps 4 and 5 (the ledger's entries; a
    private-bounds step may be put before them); ``x_box``, ``y_box`` the public bounds of the
    columns and the response (None: no bounds declared): every block's rows are clipped to them
    (±inf where a column has none), and a private second stage, which needs them all, maps them
    onto [−1, 1].
    """

    d: int = 0
    k: int = 1
    votes: Votes = field(default_factory=Votes)
    topk: str = "canonical_lipschitz"
    gamma: float = 0.5
    select_eps: float = 0.0
    second_stage: str | None = None
    stage_eps: float = 0.0
    x_box: Box | None = None
    y_box: Box | None = None

    @property
    def n_blocks(self) -> int:
        return int(self.votes.blocks)


def plan(
    options: TwoStageOptions,
    *,
    d: int,
    k: int,
    n_blocks: int,
    boxes: tuple[Box | None, Box | None] = (None, None),
) -> TwoStagePlan:
    """The privacy plan of steps 4 and 5, from public inputs only.

    Step 4, the private top-k of the vote counts (Δ∞ = 1, module docstring),
    gets all of eps, or (1 − stage_fraction)·eps when step 5 is
    ``"private_ols"``, which gets the rest (basic composition).

    Examples
    --------
    >>> o = TwoStageOptions.partial(eps=2.0, topk="canonical_lipschitz", neighbouring="replace",
    ...                             second_stage="private_ols", stage_fraction=0.25)
    >>> p = plan(o, d=50, k=3, n_blocks=10)
    >>> [e.eps for e in p.entries], p.entries[1].sensitivity.split(":")[0], p.select_eps
    ([1.5, 0.5], 'Δ₁ = 28', 1.5)
    """
    eps, topk, neighbouring, second_stage = (
        options.eps,
        options.topk,
        options.neighbouring,
        options.second_stage,
    )
    eps_select = eps if second_stage != "private_ols" else eps * (1 - options.stage_fraction)
    entries = [
        LedgerEntry(
            step=f"private top-{k} of lasso vote counts over {d} columns ({n_blocks} blocks)",
            mechanism=f"{topk} top-k",
            eps=eps_select,
            sensitivity=SENSITIVITY_TEXT[neighbouring],
            note=SELECTORS[topk].accounting,
            event=SELECTORS[topk].event(eps_select, k),
        )
    ]
    if second_stage == "private_ols":
        entries.append(_second_stage_entry(k, eps - eps_select, neighbouring))
    notes = NOTES + ([ADD_REMOVE_NOTE] if neighbouring == "add_remove" else [])
    notes += [SECOND_STAGE_NOTES[second_stage]] if second_stage else []
    votes = Votes(options.lasso, n_blocks, options.vote, neighbouring, options.shuffle)
    return TwoStagePlan(
        method="two-stage selection",
        neighbouring=neighbouring,
        entries=entries,
        sensitivities={"vote counts (l-infinity over features)": entries[0].sensitivity},
        notes=notes,
        d=d,
        k=k,
        votes=votes,
        topk=topk,
        gamma=options.gamma,
        select_eps=eps_select,
        second_stage=second_stage,
        stage_eps=entries[-1].eps if second_stage == "private_ols" else 0.0,
        x_box=boxes[0],
        y_box=boxes[1],
    )


def _second_stage_entry(k: int, eps: float, neighbouring: str) -> LedgerEntry:
    """Step 5's ledger entry: Laplace noise on the sufficient statistics of k terms + intercept."""
    q = k + 1
    return LedgerEntry(
        step=f"second stage: noisy sufficient statistics (ZᵀZ upper triangle, Zᵀy) for "
        f"{k} selected terms + intercept",
        mechanism="Laplace (sufficient-statistics perturbation)",
        eps=eps,
        sensitivity=(
            f"Δ₁ = {ssp_sensitivity(q, neighbouring):g}: {ssp_dimension(q)} "
            f"entries, each a sum of products in [−1, 1], moved by at most "
            f"{2 if neighbouring == 'replace' else 1} per row"
        ),
        note="basic composition with the selection step",
        event={"kind": "pure", "eps": eps},  # vector Laplace: pure eps (privacy.events)
    )


def name_data_dependent_steps(dd: DataDependence, options: TwoStageOptions) -> None:
    """The method's own data-dependent step (refused under ``strict``): an ordinary least-squares
    step 5 is not private.  (The default ⌊√n⌋ blocks would be one under add/remove-one-row, where
    n is private; :meth:`TwoStageOptions.check` refuses it instead, as its value would be shown.)
    """
    if options.second_stage == "ols":
        dd.add(
            "second stage: ordinary least squares on the selected columns of the raw data (NOT private)",
            fix="use second_stage='private_ols' with bounds=, or None",
        )


def solver_text(solver: str, tol: float) -> str:
    """Name of the lasso solver and its tolerance, for results and reports."""
    return LASSO_SOLVERS[solver] + (f", tol = {tol:g}, max_iter = 10000" if solver == "cd" else "")


def default_blocks(n: int) -> int:
    """⌊√n⌋ blocks (the paper: √N blocks of size √N), at least 2."""
    return max(2, int(math.isqrt(n)))


def block_labels(
    n: int, m: int, neighbouring: str, rng: np.random.Generator, shuffle: bool = True
) -> np.ndarray:
    """Assign each of n rows to one of m blocks without looking at the data.

    Replace-one-row: a (random, if ``shuffle``) order of the rows cut into m
    contiguous blocks of sizes differing by at most one; ``shuffle=False``
    keeps the row order (the paper's §3 experiment).  Add/remove-one-row:
    independent uniform labels, so adding a row leaves every other row's block
    unchanged.

    Examples
    --------
    >>> block_labels(10, 3, "replace", np.random.default_rng(0), shuffle=False).tolist()
    [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    """
    if neighbouring == "add_remove":
        return rng.integers(m, size=n)
    contiguous = (np.arange(n) * m) // n
    if not shuffle:
        return contiguous
    labels = np.empty(n, dtype=int)
    labels[rng.permutation(n)] = contiguous
    return labels


def block_lasso(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    standardize: bool = True,
    solver: str = "lars",
    tol: float = 1e-4,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Lasso coefficients on one block: min (1/2n_b)‖y − b0 − Xβ‖² + lam‖β‖₁.

    With ``standardize`` the columns are scaled to unit standard deviation
    within the block (as glmnet does) and the coefficients are returned on
    that scale, which is the scale on which top-|coef| votes compare features;
    columns constant within the block get coefficient 0.  ``lam`` is on the
    scale of y (glmnet's convention for the Gaussian family).

    ``solver="lars"`` (default) follows the exact LARS-lasso homotopy, at most
    about n_b steps when n_b << d: about 20 times faster than coordinate
    descent on 10 × 2000 blocks, with an objective at least as low.
    ``solver="cd"`` is coordinate descent with duality-gap tolerance ``tol``.

    A block whose centred, scaled inputs are not all finite (a value, or its
    square, past the largest double), or whose solver fails or returns a
    non-finite coefficient, gets coefficients 0: it casts no vote.  No warning
    leaves the fit (numpy's or scikit-learn's would depend on the rows).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1e200, 1.0], [3.0, 0.0]]); y = np.array([1.0, 2.0, 3.0])
    >>> block_lasso(X, y, 0.1).tolist()
    [0.0, 0.0]
    """
    from sklearn.linear_model import Lasso, LassoLars

    coef = np.zeros(X.shape[1])
    if solver == "lars":
        model = LassoLars(alpha=lam, fit_intercept=False, max_iter=max_iter)
    else:
        model = Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=max_iter)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning, numpy's overflow: they depend on the rows
        Xc = X - X.mean(axis=0)
        scale = np.sqrt((Xc**2).mean(axis=0)) if standardize else np.ones(X.shape[1])
        live = scale > 1e-12 * max(1.0, float(np.max(scale, initial=0.0)))
        if not live.any():
            return coef
        inputs, centred = Xc[:, live] / scale[live], y - y.mean()
        if not (np.isfinite(inputs).all() and np.isfinite(centred).all()):
            return coef
        try:
            with single_blas_thread():  # a block-sized fit: threads waiting for busy cores only slow it
                model.fit(inputs, centred)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError):
            return coef
    if not np.isfinite(model.coef_).all():
        return coef
    coef[live] = model.coef_
    # LARS can leave round-off (~1e-17) on a variable that is exactly 0 at the optimum
    # (glmnet gives 0): it must not count as a support vote
    coef[np.abs(coef) <= 1e-12] = 0.0
    return coef


def block_coefficients(
    X: np.ndarray,
    y: np.ndarray,
    labels: np.ndarray,
    m: int,
    lasso: Lasso,
    *,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """An (m, d) array: the lasso coefficients of every block, each fitted as ``lasso`` says
    (blocks with fewer than 2 rows give zeros: they cast no vote).

    ``progress``, if given, is called with 1 after each block (e.g. a tqdm bar's ``update``).
    """
    out = np.zeros((m, X.shape[1]))
    for b, rows in enumerate(block_rows(labels, m)):
        if len(rows) >= 2:
            out[b] = lasso.fit(X[rows], y[rows])
        if progress is not None:
            progress(1)
    return out


def vote_counts(coefs: np.ndarray, k: int, vote: str = "topk") -> np.ndarray:
    """Votes per feature: each block votes for its top-k nonzero |coef| or its whole support.

    Ties in |coef| within a block go to the lower column index (a fixed,
    data-independent rule).

    Examples
    --------
    >>> vote_counts(np.array([[0., 2, -3, 0], [1, 0, 0, 0.5]]), k=1).tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    nonzero = coefs != 0
    if vote == "support":
        return nonzero.sum(axis=0).astype(float)
    mag = np.abs(coefs)
    order = np.argsort(-mag, axis=1, kind="stable")[:, :k]
    keep = np.take_along_axis(nonzero, order, axis=1)
    counts = np.zeros(coefs.shape[1])
    np.add.at(counts, order[keep], 1.0)
    return counts


def two_stage_counts(
    X: np.ndarray,
    y: np.ndarray,
    k: int | list[int],
    votes: Votes | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> np.ndarray | dict[int, np.ndarray]:
    """Vote counts of the two-stage method (the non-private first stage), the blocks voting as
    ``votes`` says (default :class:`Votes`: ⌊√n⌋ blocks, top-k votes, lasso penalty 0.1).

    ``k`` may be a list, giving {k: counts} from one set of lasso fits.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 30)); y = X[:, 0] * 3 + rng.standard_normal(100)
    >>> int(np.argmax(two_stage_counts(X, y, 2, rng=rng)))
    0
    >>> int(np.argmax(two_stage_counts(X, y, 2, Votes(Lasso(lam=0.2), blocks=5), rng=rng)))
    0
    """
    votes = Votes() if votes is None else votes
    rng = np.random.default_rng() if rng is None else rng
    m = default_blocks(X.shape[0]) if votes.blocks is None else int(votes.blocks)
    labels = block_labels(X.shape[0], m, votes.neighbouring, rng, shuffle=votes.shuffle)
    coefs = block_coefficients(X, y, labels, m, votes.lasso)
    if isinstance(k, (list, tuple)):
        return {int(kk): vote_counts(coefs, int(kk), votes.vote) for kk in k}
    return vote_counts(coefs, int(k), votes.vote)


def nonprivate_topk(scores: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The k largest scores, ties broken uniformly at random (the non-private selection step)."""
    jitter = rng.random(scores.size)
    order = np.lexsort((jitter, -np.asarray(scores, dtype=float)))
    return np.sort(order[:k])


# --------------------------------------------------------------------- optional second stage
def ssp_dimension(q: int) -> int:
    """Number of released sufficient statistics for q regressors: q(q+1)/2 + q."""
    return q * (q + 1) // 2 + q


def ssp_sensitivity(q: int, neighbouring: str) -> float:
    """l1 sensitivity of (upper triangle of ZᵀZ, Zᵀy) with rows of Z, y in [−1, 1].

    Every released entry is a sum over rows of a product in [−1, 1] (with an
    intercept column of ones, ZᵀZ[0, 0] = n): one replaced row moves each
    entry by at most 2, an added or removed row by at most 1; there are
    q(q+1)/2 + q entries.
    """
    return ssp_dimension(q) * (2.0 if neighbouring == "replace" else 1.0)


def private_ols(
    Z: np.ndarray, y: np.ndarray, eps: float, neighbouring: str, laplace
) -> tuple[np.ndarray, np.ndarray]:
    """Sufficient-statistics perturbation OLS on data already mapped into [−1, 1].

    Laplace noise of scale Δ₁/eps (:func:`ssp_sensitivity`) is added to the
    upper triangle of ZᵀZ and to Zᵀy; the noisy Gram matrix is projected
    onto eigenvalues >= 1e-3·(noisy n) (post-processing) and the normal
    equations are solved for the coefficients of [1, Z] (the intercept column
    included in Z by the caller).  Returns (coefficients, noisy Gram diagonal).
    """
    q = Z.shape[1]
    iu = np.triu_indices(q)
    stats = np.concatenate([(Z.T @ Z)[iu], Z.T @ y])
    noisy = laplace(stats, ssp_sensitivity(q, neighbouring) / eps)
    G = np.zeros((q, q))
    G[iu] = noisy[: iu[0].size]
    G = G + np.triu(G, 1).T
    b = noisy[iu[0].size :]
    n_noisy = max(float(G[0, 0]), 1.0)
    w, V = np.linalg.eigh(G)
    G_psd = (V * np.maximum(w, 1e-3 * n_noisy)) @ V.T
    return np.linalg.solve(G_psd, b), np.diag(G_psd)


# --------------------------------------------------------------------- release: steps 1-5
@dataclass
class Release:
    """What :func:`release` computed: block labels, vote counts, the private selection, step 5's fit.

    ``beta`` (intercept first, original units) and ``n_clipped`` are None
    and 0 without a second stage.
    """

    labels: np.ndarray
    counts: np.ndarray
    chosen: np.ndarray
    beta: np.ndarray | None = None
    n_clipped: int = 0

    def block_sizes(self, n_blocks: int) -> tuple[int, int]:
        """The smallest and largest block (they follow from n)."""
        sizes = np.bincount(self.labels, minlength=n_blocks)
        return int(sizes.min()), int(sizes.max())


def release(
    X: np.ndarray,
    y: np.ndarray,
    plan: TwoStagePlan,
    noise: NoiseSource,
    *,
    progress: Callable[[int], None] | None = None,
) -> Release:
    """Steps 1–5 (module docstring), spending exactly the eps of ``plan``'s ledger
    (``plan.select_eps`` and ``plan.stage_eps``).

    ``plan.x_box`` and ``plan.y_box`` are the public bounds of the columns of ``X``
    and of ``y``, needed by ``second_stage="private_ols"`` only.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 30)); y = X[:, 4] * 3 + rng.standard_normal(400)
    >>> o = TwoStageOptions.partial(eps=20.0, topk="canonical_lipschitz", neighbouring="replace", gamma=0.5,
    ...                             lam=0.1, standardize=True, solver="lars", tol=1e-4, vote="topk", shuffle=True)
    >>> release(X, y, plan(o, d=30, k=1, n_blocks=20), NoiseSource(1)).chosen.tolist()
    [4]
    """
    rng, votes = noise.generator, plan.votes
    X, y, n_clipped = clip_to_boxes(X, y, plan.x_box, plan.y_box)
    labels = block_labels(X.shape[0], plan.n_blocks, votes.neighbouring, rng, shuffle=votes.shuffle)  # step 1
    coefs = block_coefficients(X, y, labels, plan.n_blocks, votes.lasso, progress=progress)  # step 2
    counts = vote_counts(coefs, plan.k, votes.vote)  # step 3
    options = {"gamma": plan.gamma} if plan.topk == "canonical_lipschitz" else {}
    chosen = SELECTORS[plan.topk].select(counts, plan.k, plan.select_eps, rng, **options)  # step 4
    out = Release(labels=labels, counts=counts, chosen=chosen, n_clipped=n_clipped)
    if plan.second_stage == "ols":  # step 5, not private
        out.beta = ordinary_least_squares(X[:, chosen], y)
    elif plan.second_stage == "private_ols":
        x_box = Box(plan.x_box.lo[chosen], plan.x_box.hi[chosen])
        out.beta, _ = second_stage_private_ols(
            X[:, chosen], y, x_box, plan.y_box, plan.stage_eps, votes.neighbouring, noise
        )
    return out


def diagnostics(
    mf: ModelFrame,
    released: Release,
    truth: list[str] | None,
    k: int,
    n_blocks: int,
    options: TwoStageOptions,
    rng,
) -> dict:
    """dp_two_stage's requested diagnostics (not private): the released selection beside the non-private
    top ``k`` of the vote counts (ties broken by ``rng``, the release's generator), as
    :func:`dpstats.methods.sis.selection_diagnostics`; under add/remove also the block sizes, which
    follow from the private n."""
    sizes = (
        {"block_sizes": list(released.block_sizes(n_blocks))} if options.neighbouring == "add_remove" else {}
    )
    nonprivate = [mf.names[j] for j in nonprivate_topk(released.counts, k, rng)]
    selected = [mf.names[j] for j in released.chosen]
    return sizes | selection_diagnostics(mf, selected, nonprivate, truth, k, released.n_clipped, "two_stage")


def clip_boxes(bounds: Any, mf: ModelFrame, every: bool) -> tuple[Box | None, Box | None]:
    """The public bounds of the design's columns and of the response, which every block's rows are
    clipped to: with ``every`` (a private second stage) each needs one, else a column without one is
    left as it is (±inf).  Private bounds are released here only for a private second stage (the
    only option that asks for them; otherwise they are refused before anything is spent)."""
    if bounds is None or (not every and is_auto(bounds)):
        return None, None
    bounds = declared_bounds(bounds, mf)
    open_missing = not every
    return (
        design_box(bounds, mf, open_missing=open_missing),
        response_box(bounds, mf, open_missing=open_missing),
    )


def clip_to_boxes(
    X: np.ndarray, y: np.ndarray, x_box: Box | None, y_box: Box | None
) -> tuple[np.ndarray, np.ndarray, int]:
    """``X``'s columns and ``y`` clipped to their public bounds (a box of None, or an infinite bound,
    clips nothing), and the number of values clipped (not private).

    Examples
    --------
    >>> X, y, n = clip_to_boxes(np.array([[5.0, 1e308]]), np.array([-9.0]),
    ...                         Box(np.array([0.0, -np.inf]), np.array([1.0, np.inf])), Box(np.array([-1.0]), np.array([1.0])))
    >>> X.tolist(), y.tolist(), n
    ([[1.0, 1e+308]], [-1.0], 2)
    """
    n_clipped = 0
    if x_box is not None:
        n_clipped += int(np.count_nonzero((X < x_box.lo) | (X > x_box.hi)))
        X = np.clip(X, x_box.lo, x_box.hi)
    if y_box is not None:
        n_clipped += int(np.count_nonzero((y < y_box.lo[0]) | (y > y_box.hi[0])))
        y = np.clip(y, y_box.lo[0], y_box.hi[0])
    return X, y, n_clipped


def ordinary_least_squares(Xs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Step 5, not private: least squares of ``y`` on [1, ``Xs``]; NaN coefficients where floating
    point fails (values past the largest double in columns without bounds), without a warning."""
    design = np.column_stack([np.ones(Xs.shape[0]), Xs])
    with np.errstate(all="ignore"):
        try:
            return np.linalg.lstsq(design, y, rcond=None)[0]
        except np.linalg.LinAlgError:
            return np.full(design.shape[1], np.nan)


def second_stage_private_ols(
    Xs: np.ndarray, y: np.ndarray, x_box: Box, y_box: Box, eps: float, neighbouring: str, noise: NoiseSource
) -> tuple[np.ndarray, int]:
    """Step 5, private: :func:`private_ols` on the selected columns mapped onto [−1, 1] by their bounds.

    Returns the intercept and slopes in the original units, and the number
    of clipped values (not private).
    """
    Xu, c1 = to_unit_interval(Xs.astype(float, copy=True), x_box)
    yu, c2 = to_unit_interval(y.astype(float, copy=True)[:, None], y_box)
    b, _ = private_ols(
        np.column_stack([np.ones(Xs.shape[0]), Xu]), yu[:, 0], eps, neighbouring, noise.laplace
    )
    # back to the original units: y = cy + hy·(b0 + Σ b_j (x_j − c_j)/h_j)
    cy, hy = float(y_box.center[0]), float(y_box.halfwidth[0])
    slopes = hy * b[1:] / x_box.halfwidth
    intercept = cy + hy * b[0] - float(np.sum(slopes * x_box.center))
    return np.concatenate([[intercept], slopes]), c1 + c2
