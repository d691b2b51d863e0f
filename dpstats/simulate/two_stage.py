"""Two-stage selection: the DP-SIS paper's §3 instability designs, and the operating characteristics.

Design W1 draws every row from one linear model; design W1/W2 puts one row
of a second model in every block of 10 rows, the blocks two-stage selection
fits its lassos on (n = 100, ⌊√n⌋ = 10 blocks, row order kept).  The paper
compares how often SIS and two-stage selection put the features of w1 in
their top 5 (``tests/test_two_stage.py`` repeats that comparison).

:func:`operating_characteristics` runs hypothetical vote counts through the
front door's private top-k: public inputs only, no data model.
"""

from __future__ import annotations

import math

import numpy as np

from ..methods.two_stage import TwoStagePlan
from ..privacy.topk import SELECTORS


def instability_data(
    design: str, rng: np.random.Generator, n: int = 100, d: int = 100, noise_sd: float = math.sqrt(0.1)
) -> tuple[np.ndarray, np.ndarray]:
    """The DP-SIS paper's §3 designs W1 and W1/W2.

    X ~ N(0, I_d); w1 = (1,1,1,1,1,0,…,0), w2 = (0,…,0,1,1,1,1,1); noise
    N(0, 0.1) (variance 0.1).  ``"W1"``: every row from w1.  ``"W1W2"``: 90
    rows from w1 and 10 from w2, one w2 row after every 9 w1 rows (rows 10,
    20, …, 100 in 1-based numbering), so with the row order kept every block
    of 10 rows holds exactly one w2 row.

    Examples
    --------
    >>> X, y = instability_data("W1W2", np.random.default_rng(0))
    >>> X.shape
    (100, 100)
    """
    if design not in ("W1", "W1W2"):
        raise ValueError(f"design must be 'W1' or 'W1W2', got {design!r}")
    X = rng.standard_normal((n, d))
    w1 = np.zeros(d)
    w1[:5] = 1.0
    w2 = np.zeros(d)
    w2[-5:] = 1.0
    W = np.tile(w1, (n, 1))
    if design == "W1W2":
        W[9::10] = w2
    y = np.einsum("ij,ij->i", X, W) + rng.normal(0.0, noise_sd, n)
    return X, y


def operating_characteristics(plan: TwoStagePlan, trials: int, rng: np.random.Generator) -> dict | None:
    """Expected share of the k features recovered when each gets g votes and the other d − k none.

    Uses public inputs only (d, k, the selection's eps, the number of blocks: ``plan``);
    g runs over a quarter, half, three quarters and all of the blocks.  Returns the fields
    of a :class:`dpstats.results.base.OperatingCharacteristics` (None when ``trials`` is 0).

    Examples
    --------
    >>> from dpstats.methods.two_stage import TwoStageOptions, plan
    >>> pl = plan(TwoStageOptions.partial(eps=4.0, topk="canonical_lipschitz", neighbouring="replace",
    ...                                   gamma=0.5), d=30, k=2, n_blocks=8)
    >>> oc = operating_characteristics(pl, 20, np.random.default_rng(0))
    >>> [row["gap"] for row in oc["rows"]]
    [2, 4, 6, 8]
    """
    if not trials:
        return None
    d, k, n_blocks, eps_select, topk = plan.d, plan.k, plan.n_blocks, plan.select_eps, plan.topk
    gaps = sorted({max(1, round(n_blocks * f)) for f in (0.25, 0.5, 0.75, 1.0)})
    options = {"gamma": plan.gamma} if topk == "canonical_lipschitz" else {}
    rows = []
    for g in gaps:
        scores = np.zeros(d)
        scores[:k] = g
        hits = (
            np.array(
                [
                    np.count_nonzero(SELECTORS[topk].select(scores, k, eps_select, rng, **options) < k)
                    for _ in range(trials)
                ],
                dtype=float,
            )
            / k
        )
        se = float(hits.std(ddof=1) / math.sqrt(trials)) if trials > 1 else float("nan")
        rows.append(
            {
                "quantity": f"share of {k} recovered when each gets {g} of {n_blocks} votes",
                "estimate": float(hits.mean()),
                "std_error": se,
                "gap": g,
            }
        )
    model = (
        f"public inputs only, no data model: hypothetical vote counts (k = {k} features with g votes "
        f"each, the other {d - k} with none) run through {topk} at eps = {eps_select:g}"
    )
    return {"rows": rows, "model": model, "trials": trials}
