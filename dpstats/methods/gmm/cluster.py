"""Private clustering in the projected space: k rounds of "locate one cluster".

Kamath, Sheffet, Singhal & Ullman (2019), Phase I uses a private 1-cluster
algorithm (Nissim, Stemmer & Vadhan 2016) to find a small ball holding many
projected points, removes its points and repeats k times.  This module is a
grid version of that locate step, with practical constants:

1. AboveThreshold over cube sides s_1 < s_2 < ... (a public geometric grid):
   query i is the largest count of active points in one cell of a grid of side
   s_i with a public random offset.  Moving one point changes every cell count
   by at most 1, so the largest count changes by at most 1 (sensitivity 1).
   The threshold is a fraction ``alpha`` of the (noisy) number of active points
   divided by the number of components still to find: the largest remaining
   component reaches it, and at the first side where it does, a cell holds
   the core of one component, not a union of two (separation assumption).
2. The exponential mechanism picks a cell of that grid, score = its count
   (sensitivity 1), over every cell of the bounded domain; empty cells are
   handled in closed form (their total mass, then a uniform empty cell).
3. A noisy mean of the active points within r = ``BALL_SIDES`` × s = 3s/4 of the
   cell's centre (sum of deviations: sensitivity 2r under replace-one, r under
   add/remove; count: sensitivity 1) refines the centre.
4. The points within r of the refined centre are removed; the next round
   runs on the rest (adaptive composition, accounted in zCDP).

The ball of step 3–4 takes the located component's core, not all of it.  The paper
enlarges the located ball by a constant until it covers the whole component
(Lemma 4.12, proof of Claim 4.13, from Theorem 4.11's radius and Condition 4.5) and
its separation condition (Condition 4.6, a large universal constant) keeps that ball
off every other component.  At the separations shown to work here (means about 7 sd
apart, ``benchmarks/bench_gmm.py``) no ball covers one component and misses its
neighbour, so the clusters are not the removed balls but the partition of the rows
by their nearest located centre (:mod:`.pipeline`), and a round only has to take
enough of its component that the rest (a hollow shell) cannot fill a cell of a later
round.  A cell that first holds half of a spherical component of sd σ in q
dimensions has side s ≈ 2σ·Φ⁻¹((1 + 2^(−1/q))/2) ≈ 2.1σ–3.7σ for q = 2–10 when centred
on it, up to about 1.5 times more with the grid offset (3.1σ–5.2σ in the audit's fits at
q = 5), so r = 3s/4 is a core of about 1.5σ–4σ.  In q = 2 the rest is a ring that a later
cell can fill when no other component holds that round's target (a component much smaller
than the others, or k too large): :func:`repeated` and :func:`.pipeline.located_twice` find
such a round from released values.  The earlier r = s(√q + 1)/2
(the cell's circumradius plus half a side) was 5σ–8.4σ at q = 5: one ball then held
two components 7 sd apart, or its noisy mean was pulled between them, and a fifth
centre was left on no component (audit s16-stat4, finding F1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...privacy.calibration import em_eps, svt_eps, zcdp_gaussian_sigma
from ...privacy.randomness import NoiseSource
from ...privacy.sparse_vector import above_threshold, geometric_grid

#: shares of one round's ρ: active count, AboveThreshold, exponential mechanism, refinement
ROUND_SPLIT = {"count": 0.05, "svt": 0.45, "em": 0.3, "refine": 0.2}
#: the public cube sides AboveThreshold runs over, as multiples of the clipping radius C: C/512 to 2C
SIDES_FROM, SIDES_TO, SIDES_RATIO = 1 / 512, 2.0, 2**0.25
#: radius of the ball that refines a located cell's centre and is removed, in cell sides (module docstring)
BALL_SIDES = 0.75


def cube_sides(radius: float) -> np.ndarray:
    """The public ascending cube sides of the locate step for clipping radius ``radius`` (41 of them)."""
    return geometric_grid(radius * SIDES_FROM, radius * SIDES_TO, SIDES_RATIO)


REFINE_SUM_SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}


@dataclass
class Located:
    """One located cluster: centre (projected space), side and ball radius, noisy size."""

    centre: np.ndarray
    side: float
    radius: float
    noisy_size: float
    fired: bool


def cell_index(Y: np.ndarray, side: float, offset: np.ndarray, half_width: float) -> tuple[np.ndarray, int]:
    """Integer cell coordinates of rows of ``Y`` (inside [−half_width, half_width]^q)."""
    base = int(math.ceil(2 * half_width / side)) + 2
    idx = np.floor((Y + half_width + offset) / side).astype(np.int64)
    np.clip(idx, 0, base - 1, out=idx)
    return idx, base


def cell_keys(idx: np.ndarray, base: int) -> np.ndarray:
    """One integer key per row's cell (exact; mixed radix, or ranks when that overflows)."""
    q = idx.shape[1]
    if q * math.log2(base) < 62:
        weights = base ** np.arange(q, dtype=np.int64)
        return idx @ weights
    return np.unique(idx, axis=0, return_inverse=True)[1].ravel().astype(np.int64)


def max_cell_count(Y: np.ndarray, side: float, offset: np.ndarray, half_width: float) -> int:
    """Largest number of rows of ``Y`` in one cell of the grid and of its half-shifted twin.

    The maximum of sensitivity-1 counts is a sensitivity-1 query; the twin grid
    (offset + side/2 in every coordinate) keeps a cluster's core from being cut
    by the cell boundaries of both grids at once.
    """
    if len(Y) == 0:
        return 0
    best = 0
    for shift in (offset, offset + side / 2):
        idx, base = cell_index(Y, side, shift, half_width)
        keys = np.sort(cell_keys(idx, base))
        bounds = np.flatnonzero(np.diff(keys)) + 1
        runs = np.diff(np.concatenate(([0], bounds, [len(keys)])))
        best = max(best, int(runs.max()))
    return best


def exponential_cell(
    Y: np.ndarray, side: float, offset: np.ndarray, half_width: float, eps: float, gen: np.random.Generator
) -> np.ndarray:
    """Centre of a cell drawn with probability ∝ exp(ε·count/2) over ALL cells of both grids.

    The candidates are every cell of the grid and of its half-shifted twin
    (as in :func:`max_cell_count`); a row's count changes by at most 1 in
    every cell.  Occupied cells get Gumbel-max scores; the empty cells of a
    grid share the score 0, so their best Gumbel is log(#empty) + Gumbel (the
    exponential mechanism exactly, McSherry & Talwar 2007).
    """
    q = Y.shape[1]
    best_score, best_centre = -math.inf, None
    for shift in (offset, offset + side / 2):
        idx, base = cell_index(Y, side, shift, half_width)
        cells, counts = np.unique(idx, axis=0, return_counts=True)
        scores = eps * counts / 2.0 + gen.gumbel(size=len(counts))
        log_total = q * math.log(base)
        occupied_frac = len(counts) / math.exp(min(log_total, 700.0))
        if scores.size and scores.max() > best_score:
            best_score, best_centre = scores.max(), (cells[int(scores.argmax())], shift)
        if occupied_frac < 1:
            empty_score = log_total + math.log1p(-occupied_frac) + gen.gumbel()
            if empty_score > best_score:
                best_score, best_centre = empty_score, (_uniform_empty_cell(cells, base, q, gen), shift)
    chosen, shift = best_centre
    return (chosen + 0.5) * side - half_width - shift


def _uniform_empty_cell(cells: np.ndarray, base: int, q: int, gen: np.random.Generator) -> np.ndarray:
    occupied = {tuple(c) for c in cells}
    for _ in range(10000):
        cand = gen.integers(0, base, size=q)
        if tuple(cand) not in occupied:
            return cand
    return gen.integers(0, base, size=q)  # pragma: no cover - the grid is almost full


def locate_one(
    Y: np.ndarray,
    target: float,
    sides: np.ndarray,
    half_width: float,
    rho: float,
    neighbouring: str,
    noise: NoiseSource,
) -> Located:
    """Steps 1–3 of the module docstring on the active points ``Y`` (ρ-zCDP).

    ``rho`` is the round's budget minus its active-count share.
    """
    gen = noise.generator
    q = Y.shape[1]
    total = sum(ROUND_SPLIT[s] for s in ("svt", "em", "refine"))
    rho_svt, rho_em, rho_ref = (rho * ROUND_SPLIT[s] / total for s in ("svt", "em", "refine"))
    offsets = gen.uniform(0.0, 1.0, size=(len(sides), q)) * sides[:, None] / 2
    hit = above_threshold(
        lambda i: max_cell_count(Y, sides[i], offsets[i], half_width),
        len(sides),
        target,
        svt_eps(rho_svt),
        gen,
    )
    i = len(sides) - 1 if hit is None else hit
    side = float(sides[i])
    z = exponential_cell(Y, side, offsets[i], half_width, em_eps(rho_em), gen)
    # the core of the component whose cell was chosen, well inside half the separation (module docstring)
    radius = BALL_SIDES * side
    inside = np.linalg.norm(Y - z, axis=1) <= radius
    dev_sum = (Y[inside] - z).sum(axis=0)
    # refinement: half of its ρ to the count (Δ = 1), half to the sum (Δ = 2r or r)
    n_noisy = float(
        noise.gaussian(np.array([inside.sum()], dtype=float), zcdp_gaussian_sigma(1.0, rho_ref / 2))[0]
    )
    s_noisy = noise.gaussian(
        dev_sum, zcdp_gaussian_sigma(REFINE_SUM_SENSITIVITY[neighbouring] * radius, rho_ref / 2)
    )
    centre = z + s_noisy / n_noisy if n_noisy > max(1.0, 0.05 * target) else z
    if np.linalg.norm(centre - z) > radius:  # a noisy shift beyond the ball is not trusted
        centre = z
    return Located(centre=centre, side=side, radius=radius, noisy_size=n_noisy, fired=hit is not None)


@dataclass(frozen=True)
class ClusterSpec:
    """The public settings of :func:`private_clusters`.

    Attributes
    ----------
    k : int
        Number of clusters to locate.
    half_width : float
        Public bound on every coordinate (the clipping radius).
    sides : ndarray
        Public ascending cube sides.
    neighbouring : {"replace", "add_remove"}
    alpha : float
        Threshold = alpha × (noisy active count) / (components left).
    n_public : float, optional
        The public n (replace-one); the first round then needs no noisy count.
    """

    k: int
    half_width: float
    sides: np.ndarray
    neighbouring: str = "replace"
    alpha: float = 0.5
    n_public: float | None = None


def private_clusters(
    Y: np.ndarray, spec: ClusterSpec, rho_rounds: list[float], noise: NoiseSource
) -> list[Located]:
    """k rounds of locate-and-remove (module docstring); ρ_j-zCDP in round j.

    ``Y`` (n, q) holds the projected rows, inside the ball of radius ``spec.half_width``;
    ``rho_rounds`` the zCDP budget of each round.  No round needs a row: on no active row
    the counts are noise alone and the located cell is drawn among empty cells.

    Examples
    --------
    >>> gen = np.random.default_rng(0)
    >>> Y = np.r_[gen.normal(-5, 1, (3000, 2)), gen.normal(5, 1, (3000, 2))]
    >>> from dpstats.privacy.sparse_vector import geometric_grid
    >>> spec = ClusterSpec(2, 20.0, geometric_grid(0.1, 40.0))
    >>> found = private_clusters(Y, spec, [0.5, 0.5], NoiseSource(1))
    >>> sorted(round(float(f.centre[0])) for f in found)
    [-5, 5]
    """
    k = spec.k
    active = np.ones(len(Y), dtype=bool)
    found: list[Located] = []
    for j in range(k):
        rho_count = rho_rounds[j] * ROUND_SPLIT["count"]
        m = int(active.sum())
        m_noisy = float(noise.gaussian(np.array([m], dtype=float), zcdp_gaussian_sigma(1.0, rho_count))[0])
        if j == 0 and spec.n_public is not None:
            m_noisy = float(spec.n_public)
        target = spec.alpha * max(m_noisy, 1.0) / (k - j)
        loc = locate_one(
            Y[active],
            target,
            spec.sides,
            spec.half_width,
            rho_rounds[j] - rho_count,
            spec.neighbouring,
            noise,
        )
        found.append(loc)
        active &= np.linalg.norm(Y - loc.centre, axis=1) > loc.radius
    return found


def repeated(found: list[Located]) -> dict[int, int]:
    """Rounds whose centre lies inside the ball an earlier round removed: {round: that earlier round}
    (0-based; post-processing of the released centres and radii).

    Every row a round sees lies outside the earlier balls, so a refined centre inside one is the mean
    of rows around it: the rest (a ring or shell) of the component located there, found again when no
    other component held a round's target, or the rests of two close components on either side of a
    ball that held parts of both.  :func:`.pipeline.located_twice` tells them apart by the released
    pass-1 means.

    Examples
    --------
    >>> ball = Located(np.zeros(2), 1.0, 0.75, 100.0, True)
    >>> repeated([ball, Located(np.array([0.3, 0.0]), 2.0, 1.5, 50.0, True),
    ...           Located(np.array([5.0, 0.0]), 1.0, 0.75, 90.0, True)])
    {1: 0}
    """
    out: dict[int, int] = {}
    for j, loc in enumerate(found):
        inside = [i for i in range(j) if np.linalg.norm(loc.centre - found[i].centre) <= found[i].radius]
        if inside:
            out[j] = inside[0]
    return out


def nearest(Y: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre for each row (post-processing)."""
    d2 = (Y**2).sum(1)[:, None] - 2 * Y @ centres.T + (centres**2).sum(1)[None, :]
    return d2.argmin(axis=1)
