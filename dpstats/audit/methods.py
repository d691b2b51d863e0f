"""Audit cases for the methods (two-stage, knockoff, dp_gmm, FELP, vertical GLM).

Each method registers a factory of :class:`AuditCase` objects; :func:`method_cases`
collects them for the benchmark and the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .auditor import AuditCase, repeat
from .cases import _numpy_noise, exact_distribution, exact_pair_eps

# --------------------------------------------------------------------------- catalogue

#: The methods audited by :func:`method_cases`, beside the core mechanisms.
METHOD_LABELS = ("two-stage", "knockoff", "dp_gmm", "FELP", "vertical GLM")


def method_cases(eps: float = 1.0) -> list[AuditCase]:
    """Audit cases of every method in :data:`METHOD_LABELS`."""
    return [case for label in METHOD_LABELS for case in _METHOD_CASES[label](eps)]


#: label -> factory of audit cases.
_METHOD_CASES: dict[str, Callable[[float], list[AuditCase]]] = {}


def two_stage_case(eps: float = 1.0, topk: str = "canonical_lipschitz", k: int = 2) -> AuditCase:
    """dp_two_stage's private step: top-k of lasso vote counts, on neighbouring block coefficients.

    Six blocks' lasso coefficients over d = 5 features; replacing one row
    changes one block's fit, which here moves its vote from features {0, 1}
    to {2, 3} (the change that moves the most counts, by 1 each in opposite
    directions).  Counts come from ``methods.two_stage.vote_counts``, scaled by
    ``methods.two_stage.SENSITIVITY``, and the selector is the front door's
    (``SELECTORS[topk].select``); the lasso fits themselves are deterministic
    functions of the blocks and are not re-run.
    """
    from ..methods import two_stage as ts
    from ..privacy.topk import SELECTORS

    base = np.array([[3.0, 2, 1, 0, 0], [0, 2, 3, 1, 0], [1, 0, 0, 3, 2], [2, 3, 0, 0, 1], [0, 0, 2, 1, 3]])
    coefs1 = np.vstack([base, [3.0, 2, 0, 0, 0]])
    coefs2 = np.vstack([base, [0.0, 0, 3, 2, 0]])
    sens = ts.SENSITIVITY["replace"]
    c1, c2 = ts.vote_counts(coefs1, k) / sens, ts.vote_counts(coefs2, k) / sens
    options = {"gamma": 0.5} if topk == "canonical_lipschitz" else {}

    def single(counts, rng):
        return tuple(np.sort(SELECTORS[topk].select(counts, k, eps, rng, **options)).tolist())

    dist = exact_distribution(topk)
    case = AuditCase(
        name=f"two-stage vote top-k ({topk}, d=5, k={k}, 6 blocks)",
        run=repeat(single),
        d1=c1,
        d2=c2,
        eps=eps,
        kind="category",
        n_events=6,
        neighbours=f"one block's vote moves from {{0,1}} to {{2,3}}: counts {c1.tolist()} vs {c2.tolist()}",
        exercised="methods.two_stage.vote_counts + SELECTORS[topk].select, seeded numpy generator",
    )
    if dist is not None:
        case.exact_eps = exact_pair_eps(dist(c1, k, eps), dist(c2, k, eps))
    return case


def felp_frames(n: int = 40, d: int = 4, seed: int = 0) -> tuple:
    """Neighbouring FELP inputs on the unit box: the last row moves to the opposite corner, label flipped.

    A mild pair: it moves the strict ensemble average by about 0.03·(2C/k)
    and the paper variant's by about 0.003·(2/(nλ)), so audits on it give
    eps_lb ≈ 0.  See :func:`felp_strict_worst_frames` and
    :func:`felp_overreach_frames` for the pairs that move them most.
    """
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    U = rng.uniform(0, 1, (n, d)) * 0.5
    U[:, 0] = (y + rng.uniform(0, 1, n)) / 2  # one informative feature
    U1, U2 = U.copy(), U.copy()
    y1, y2 = y.copy(), y.copy()
    U1[-1], y1[-1] = 1.0, 1
    U2[-1], y2[-1] = 0.0, 0
    return (U1, y1), (U2, y2)


def _two_clusters(n: int, d: int, n_minority: int, seed: int, jitter: float = 0.02) -> tuple:
    """Class 0 near the origin, class 1 near e₁ (feature 0 separates them), scaled by 1/√d.

    Coordinates lie in [0, 1/√d], as after ``methods.felp.scale_features``, so
    every margin vector has ‖z_i‖₂ <= 1 (the paper's Lemma 1 assumption).
    """
    rng = np.random.default_rng(seed)
    y = (np.arange(n) >= n - n_minority).astype(int)
    U = np.zeros((n, d))
    U[:, 0] = y
    U += rng.uniform(0.0, jitter, (n, d))
    return np.clip(U, 0.0, 1.0) / math.sqrt(d), y


def felp_overreach_frames(n: int = 200, d: int = 2, n_minority: int = 20, seed: int = 0) -> tuple:
    """A pair on which the paper variant's ensemble moves by more than its Lemma 1 bound 2/(nλ).

    ``n − n_minority`` rows of class 0 sit in a tight cluster near the origin
    and ``n_minority`` rows of class 1 near e₁ (all coordinates in [0, 1/√d],
    so ‖z_i‖₂ <= 1 as the paper requires).  The replaced (last) row is a
    class-1 row: in D2 it sits in its own cluster; in D1 it sits *on* the
    first class-0 row.  In D1 it is then one of the K nearest misses of
    every class-0 row, so one row changes the margin z_i of ~90% of the rows
    — Lemma 1's proof treats z_i as a function of x_i alone, which fails here.
    """
    U, y = _two_clusters(n, d, n_minority, seed)
    U1, y1 = U.copy(), y.copy()
    U1[-1], y1[-1] = U[0], 1
    return (U1, y1), (U.copy(), y.copy())


def felp_strict_worst_frames(n: int = 20, d: int = 2, seed: int = 0) -> tuple:
    """A pair that moves one strict-variant learner by about a tenth of 2C, i.e. 0.21·(2C/k) at k = 5.

    Classes alternate, class 0 near the origin and class 1 near e₁ (scaled
    by 1/√d).  The replaced (last, class-1) row sits at the origin in D1 —
    among the class-0 rows, destroying its small subset's margins (weights
    ≈ 0) — and at (1, ½)/√d in D2, where its subset's learner has its
    largest weights.  Found by a search over labels and grid positions of
    the replaced row for the draw used by :func:`felp_case`; the exact
    minimiser has λ‖w‖² < log 2, so ‖w‖ stays well below C and no pair
    reaches 2C/k.
    """
    U, y = _two_clusters(n, d, 0, seed)
    y = np.arange(n) % 2
    U[:, 0] = np.clip(y + U[:, 0] * math.sqrt(d), 0.0, 1.0) / math.sqrt(d)
    U1, U2 = U.copy(), U.copy()
    y1, y2 = y.copy(), y.copy()
    U1[-1], y1[-1] = 0.0, 1
    U2[-1], y2[-1] = np.array([1.0, 0.5] + [0.0] * (d - 2)) / math.sqrt(d), 1
    return (U1, y1), (U2, y2)


_FELP_PAIRS = {"corner": felp_frames, "worst": felp_strict_worst_frames, "overreach": felp_overreach_frames}


def _felp_pair(pair: str) -> tuple:
    if pair not in _FELP_PAIRS:
        raise ValueError(f"pair must be one of {sorted(_FELP_PAIRS)}, got {pair!r}")
    return _FELP_PAIRS[pair]()


def _felp_claim(variant: str, n: int, lam: float, n_estimators: int) -> float:
    from ..methods import felp as fm

    if variant == "strict":
        return fm.strict_sensitivity(fm.default_clip_norm(lam), n_estimators)
    return fm.paper_sensitivity(n, lam)


def felp_sensitivity_check(
    variant: str = "strict",
    lam: float = 0.1,
    n_estimators: int = 5,
    draws: int = 20,
    n: int = 40,
    d: int = 4,
    random_state: int = 0,
    pair: str | None = None,
) -> dict:
    """Largest ‖w̄(D1) − w̄(D2)‖₂ over coupled subset draws, against the sensitivity FELP claims.

    The ensemble average w̄ is computed with ``methods.felp.ensemble`` on the
    neighbouring inputs of :func:`felp_frames` (``n``, ``d``), or of the named
    ``pair`` ("corner", "worst" or "overreach" at its default size), with the
    *same* subset draw (coupled randomness: for the strict variant the bound
    2C/k holds for every partition, so the coupled maximum must stay below
    it).  The claimed sensitivity is ``strict_sensitivity(C, k)`` or the
    paper's Lemma 1, ``paper_sensitivity(n, lam)``.  The ratio
    observed/claimed is the factor by which the claimed eps understates the
    true eps of the L2-Laplace release (its privacy loss is eps·‖Δw̄‖/Δ);
    ``ratios`` lists it per draw.
    """
    from ..methods import felp as fm

    (U1, y1), (U2, y2) = felp_frames(n, d) if pair is None else _felp_pair(pair)
    claimed = _felp_claim(variant, len(y1), lam, n_estimators)
    ratios = []
    for i in range(draws):
        seed = np.random.SeedSequence([random_state, i])
        spec = fm.EnsembleSpec(n_estimators=n_estimators, variant=variant)
        w1 = fm.ensemble(U1, y1, lam, gen=np.random.default_rng(seed), spec=spec).w_mean
        w2 = fm.ensemble(U2, y2, lam, gen=np.random.default_rng(seed), spec=spec).w_mean
        ratios.append(float(np.linalg.norm(w1 - w2)) / claimed)
    worst = max(ratios) * claimed
    return {
        "variant": variant,
        "claimed_sensitivity": claimed,
        "observed": worst,
        "ratio": worst / claimed,
        "ratios": ratios,
    }


def felp_case(
    eps: float = 1.0,
    variant: str = "strict",
    lam: float = 0.1,
    n_estimators: int = 5,
    random_state: int = 0,
    pair: str = "corner",
) -> AuditCase:
    """FELP's release w̄ + L2-Laplace(Δ/eps) on one coupled subset draw of a neighbouring pair.

    The ensemble (about 0.1 s) is fitted once per neighbour with the same
    subset draw; the runs redraw only the L2-Laplace noise (``NoiseSource.l2_laplace``),
    reduced to the log-likelihood-ratio statistic.  Conditional on the draw
    this is the released mechanism, and ``exact_eps`` = eps·‖Δw̄‖/Δ is its
    exact privacy loss on the pair.

    ``pair``: "corner" (:func:`felp_frames`, mild), "worst"
    (:func:`felp_strict_worst_frames`: 0.21·(2C/k) for the strict variant
    at λ = 0.1, k = 5) or "overreach" (:func:`felp_overreach_frames`).

    What the paper variant's assumption costs
    -----------------------------------------
    ``variant="paper"`` calibrates to Lemma 1's 2/(nλ), whose proof takes
    each margin z_i to depend on row i alone.  In fact z_i is built from
    row i's nearest hits and misses, so one replaced row can change the
    margins of many rows.  On :func:`felp_overreach_frames` (n = 200, λ = 1,
    k = 20, K = 10, the front door's defaults but n) the coupled ensemble
    average moves by up to ~2.2× the claimed 2/(nλ)
    (``tests/test_audit_felp.py::test_paper_variant_sensitivity_can_exceed_its_claim``),
    so the release's true privacy loss on that pair is up to ~2.2·eps: the
    stated eps of the paper variant is *not* a guarantee on such data
    (``felp_case(..., "paper", pair="overreach")`` has ``exact_eps`` > eps).  The loss grows with the share of rows whose
    neighbours the replaced row can enter, i.e. with n/K.  The strict
    variant (disjoint subsets, norms clipped at C, Δ = 2C/k) holds on the
    same pair.
    """
    from ..methods import felp as fm

    (U1, y1), (U2, y2) = _felp_pair(pair)
    sens = _felp_claim(variant, len(y1), lam, n_estimators)
    scale = sens / eps
    seed = np.random.SeedSequence([random_state, 99])
    spec = fm.EnsembleSpec(n_estimators=n_estimators, variant=variant)
    w1 = fm.ensemble(U1, y1, lam, gen=np.random.default_rng(seed), spec=spec).w_mean
    w2 = fm.ensemble(U2, y2, lam, gen=np.random.default_rng(seed), spec=spec).w_mean

    def single(centre, rng):
        return _numpy_noise(rng).l2_laplace(centre, scale)

    def statistic(outputs):
        x = np.asarray(outputs, float)
        return (np.linalg.norm(x - w2, axis=1) - np.linalg.norm(x - w1, axis=1)) / scale

    described = {
        "corner": "last row moved to the opposite corner of the box with its label flipped",
        "worst": "class-1 row at the origin (inside class 0) vs at (1, ½)/√d",
        "overreach": "class-1 row on a class-0 row (a nearest miss of all class 0) vs in its cluster",
    }
    ratio = float(np.linalg.norm(w1 - w2)) / sens
    return AuditCase(
        name=f"FELP {variant} (k={n_estimators}, λ={lam:g}, {pair} pair, coupled draw)",
        run=repeat(single),
        d1=w1,
        d2=w2,
        eps=eps,
        statistic=statistic,
        neighbours=f"{described[pair]}: ‖Δw̄‖ = {ratio:.3f}·Δ",
        exercised="methods.felp.ensemble once per neighbour + NoiseSource.l2_laplace per run",
        exact_eps=eps * ratio,
    )


def knockoff_frames(
    n: int = 2000,
    p: int = 16,
    B: float = 1.0,
    sigma: float = 0.5,
    seed: int = 0,
    worst: bool = False,
    delta2: float = 5e-3,
) -> tuple:
    """Neighbouring frames for dp_knockoff: rows of norm <= B, y = Xβ (+ noise) with ‖β‖ = 1.

    ``worst=False``: the replaced (last) row is at the row-norm bound along x1
    with y three noise s.d. above its mean in D1 and three below in D2.

    ``worst=True`` (the pair that moves the release most): the shared rows have
    y = Xβ exactly and the replaced row is B·e_p (a null column) with
    y = ±Y, Y = 0.95·√(ζ/(h + 2p/n)) where ζ = ``methods.knockoff.mechanism.zeta(p, sigma, delta2)``
    and h is the row's leverage.  The projected residual of [X′ X̃′] is then
    within Theorem 5's bound √ζ in both datasets (2p/n allows for the knockoff
    part Ũ), so the claimed guarantee must hold without the δ₂ failure event,
    and the coefficient change is the first term 2√ζ/√λ of Δ₂ up to constants.
    """
    import pandas as pd

    from ..methods.knockoff import mechanism as kd

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X *= 0.9 * B / np.linalg.norm(X, axis=1, keepdims=True)  # every row at 0.9·B
    beta = np.zeros(p)
    beta[:3] = 1 / np.sqrt(3)
    y = X @ beta + (0.0 if worst else sigma * rng.standard_normal(n))
    col = p - 1 if worst else 0
    if worst:
        h = B**2 * float(np.linalg.inv(X.T @ X)[col, col])
        level = 0.95 * math.sqrt(kd.zeta(p, sigma, delta2) / (h + 2 * p / n))
    frames = []
    for sign in (1.0, -1.0):
        Xc, yc = X.copy(), y.copy()
        Xc[-1] = 0.0
        Xc[-1, col] = B
        yc[-1] = sign * level if worst else B * beta[0] + sign * 3 * sigma
        frame = pd.DataFrame(Xc, columns=[f"x{j + 1}" for j in range(p)])
        frame.insert(0, "y", yc)
        frames.append(frame)
    return frames[0], frames[1]


def knockoff_extreme_frames(
    n: int = 2000, p: int = 16, B: float = 1.0, sigma: float = 0.5, seed: int = 0, response: float = 1e6
) -> tuple:
    """Neighbours for dp_knockoff that the linear model does not describe: D1 follows it (rows of norm
    0.9·B, y = Xβ + w, ‖β‖ = 1, w ~ N(0, σ²)); D2 replaces D1's last row by B·e_p (a null column) with
    the response ``response`` (the outside audit's 10⁶), which the front door clips to its response
    bound Y (``methods.knockoff.mechanism.response_bound``)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X *= 0.9 * B / np.linalg.norm(X, axis=1, keepdims=True)
    beta = np.zeros(p)
    beta[:3] = 1 / np.sqrt(3)
    y = X @ beta + sigma * rng.standard_normal(n)
    X2, y2 = X.copy(), y.copy()
    X2[-1] = 0.0
    X2[-1, -1] = B
    y2[-1] = response
    names = [f"x{j + 1}" for j in range(p)]
    frames = [pd.DataFrame(a, columns=names) for a in (X, X2)]
    for frame, resp in zip(frames, (y, y2)):
        frame.insert(0, "y", resp)
    return frames[0], frames[1]


def knockoff_case(
    eps: float = 1.0, delta: float = 1e-2, method: str = "II", worst: bool = True, extreme: bool = False
) -> AuditCase:
    """dp_knockoff's release (Method I or II), audited on the released coefficients b.

    One front-door call per neighbour of :func:`knockoff_frames` (declared
    bounds, sigma, beta_norm, c_min, lambda_min, so the noise scales are
    data-independent) captures the arguments the front door passes to
    ``methods.knockoff.mechanism.run_mechanism``; each run then calls
    ``run_mechanism`` with a fresh seeded numpy ``NoiseSource`` (the
    knockoff's Haar draw and the DP noise are redrawn).  The released b (W is
    a function of it) is reduced to its projection on the mean difference
    b(D1) − b(D2) of noiseless runs (20 Haar draws, fixed seeds, independent
    of the audit runs).  ``neighbours`` states ‖Δb‖ against the noise scale.
    ``extreme``: the pair of :func:`knockoff_extreme_frames` (a replaced row the
    model does not describe, y = 10⁶) instead of :func:`knockoff_frames`.
    """
    import dataclasses

    from ..api.knockoff import dp_knockoff
    from ..methods.knockoff import mechanism as kd
    from ..privacy.randomness import FastNoise

    d1, d2 = knockoff_extreme_frames() if extreme else knockoff_frames(worst=worst, delta2=delta / 2)
    captured = []
    original = kd.run_mechanism

    def spy(st, s, scales, noise, **kwargs):
        captured.append((st, s, scales, kwargs))
        return original(st, s, scales, noise, **kwargs)

    kwargs = dict(
        eps=eps,
        delta=delta,
        method=method,
        bounds=1.0,
        sigma=0.5,
        beta_norm=1.0,
        c_min=8.0,
        lambda_min=0.5,
        random_state=0,
        oc_trials=0,
        strict=True,
    )
    kd.run_mechanism = spy
    try:
        for frame in (d1, d2):
            dp_knockoff("y ~ .", frame, **kwargs)
    finally:
        kd.run_mechanism = original
    (st1, s1, scales1, kw1), (st2, s2, scales2, _) = captured
    if s1 != s2 or scales1 != scales2:
        raise AssertionError(
            "knockoff noise scales depend on the data although every calibration was declared"
        )
    quiet = dataclasses.replace(scales1, kappa=0.0, kappa1=0.0, kappa2=0.0, laplace_s=0.0)
    means = [
        np.mean(
            [
                original(st, s1, quiet, FastNoise(np.random.default_rng([7, i])), **kw1).coefficients
                for i in range(20)
            ],
            axis=0,
        )
        for st in (st1, st2)
    ]
    shift = means[0] - means[1]
    direction = shift / max(float(np.linalg.norm(shift)), 1e-300)
    noise_sd = scales1.kappa if method == "II" else scales1.kappa2
    sens = scales1.sensitivities.get(
        "Delta2 (coefficients, l2)", scales1.sensitivities.get("Delta cross-products (l2)")
    )

    def single(st, rng):
        return original(st, s1, scales1, _numpy_noise(rng), **kw1).coefficients

    def statistic(outputs):
        return np.asarray(outputs, float) @ direction

    pair = (
        "model rows vs last row B·e_p with y = 1e6 (clipped to Y)"
        if extreme
        else "B·e_p (null column), y = ±Y at Theorem 5's residual bound"
        if worst
        else "last row at the row-norm bound along x1, y at +3σ vs −3σ"
    )
    label = "extreme pair, " if extreme else "worst pair, " if worst else ""
    return AuditCase(
        name=f"knockoff Method {method} (p=16, {label}released b)",
        run=repeat(single),
        d1=st1,
        d2=st2,
        eps=eps,
        delta=delta,
        statistic=statistic,
        neighbours=(
            f"{pair}: mean ‖Δb‖ = {np.linalg.norm(shift):.3g} (Δ = {sens:.3g}, noise sd {noise_sd:.3g})"
        ),
        exercised="dp_knockoff calibration (captured) + methods.knockoff.mechanism.run_mechanism per run",
    )


def gmm_radius_case(eps: float = 1.0) -> AuditCase:
    """dp_gmm's private clipping radius (AboveThreshold over a public radius grid).

    Neighbours: 200 points at distances 1..200 from the public centre; the
    replaced point sits at distance 0 in D1 and beyond the largest radius in
    D2, so every query count drops by 1 (the sensitivity).  Output: the chosen
    radius (a category).  Runs ``privacy.sparse_vector.private_radius``.
    """
    from ..privacy.sparse_vector import geometric_grid, private_radius

    base = np.arange(1.0, 200.0)
    d1, d2 = np.append(base, 0.0), np.append(base, 1e9)
    radii = geometric_grid(8.0, 256.0, 2.0)

    def single(distances, rng):
        return private_radius(distances, radii, 60.0, eps, rng)

    return AuditCase(
        name="dp_gmm step: private radius (AboveThreshold)",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        kind="category",
        n_events=6,
        neighbours="one point inside every radius vs outside every radius: all counts move by 1",
        exercised="privacy.sparse_vector.private_radius, seeded numpy generator",
    )


def gmm_pca_case(eps: float = 1.0, delta: float = 1e-6, radius: float = 1.0) -> AuditCase:
    """dp_gmm's private PCA (Gaussian noise on Σ xxᵀ, ρ-zCDP) at the (eps, delta) its ρ implies.

    ρ = ``rho_from_eps_delta(eps, delta)`` (Canonne, Kamath & Steinke 2020, Cor. 13: the
    conversion of dp_gmm's mixed plan, here with the whole budget on this step); rows in the ball of
    ``radius``; the replaced row is radius·e₁ in D1 and radius·e₂ in D2 (the
    Frobenius change √2·radius², the replace-one sensitivity).  With q = d = 2
    the released basis and eigenvalues give back the noisy second moment M;
    the statistic M₁₁ − M₂₂ is the most powerful reduction.
    """
    from ..privacy.calibration import rho_from_eps_delta
    from ..privacy.pca import private_pca

    rho = rho_from_eps_delta(eps, delta)
    rng0 = np.random.default_rng(0)
    base = rng0.uniform(-0.5, 0.5, (50, 2)) * radius
    d1, d2 = np.vstack([base, [radius, 0.0]]), np.vstack([base, [0.0, radius]])

    def single(X, rng):
        pca = private_pca(X, 2, radius, rho, "replace", _numpy_noise(rng))
        M = pca.basis @ np.diag(pca.eigenvalues) @ pca.basis.T
        return M[0, 0] - M[1, 1]

    return AuditCase(
        name=f"dp_gmm step: private PCA (ρ={rho:.3g} zCDP as ({eps:g}, {delta:g}))",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        delta=delta,
        neighbours="replaced row radius·e1 vs radius·e2 (Frobenius change √2·radius²)",
        exercised="privacy.pca.private_pca with NoiseSource on seeded numpy",
    )


def gmm_frames(n: int = 40, seed: int = 0) -> tuple:
    """Neighbouring frames for an end-to-end dp_gmm audit: d = 2, two tight clusters in (−1, 1)².

    n points split between clusters at (−0.5, −0.5) and (0.5, 0.5) (s.d. 0.1);
    one more row sits at the corner (−1, −1) in D1 and at (1, 1) in D2 (the
    replaced row moves the full diameter of the declared box).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-0.5, 0.1, (n // 2, 2)), rng.normal(0.5, 0.1, (n - n // 2, 2))])
    return tuple(pd.DataFrame(np.vstack([X, [corner, corner]]), columns=["a", "b"]) for corner in (-1.0, 1.0))


def gmm_end_to_end_case(eps: float = 1.0, delta: float = 1e-3) -> AuditCase:
    """The whole dp_gmm pipeline (k = 2, d = 2, bounds (−1, 1)) called once per run.

    Each run calls :func:`dpstats.dp_gmm` on a :func:`gmm_frames` neighbour
    with a seeded numpy generator; components are ordered by their released
    first mean coordinate and the output is |b-mean| of the upper component
    (on pilot runs its spread differs most between the neighbours).  About
    10–15 ms a run.
    """
    from ..api.gmm import dp_gmm

    d1, d2 = gmm_frames()

    def single(frame, rng):
        fit = dp_gmm("~ a + b", frame, 2, eps, delta, bounds=(-1, 1), oc_trials=0, random_state=rng)
        upper = int(np.argmax(fit.means[:, 0]))
        return abs(float(fit.means[upper, 1]))

    return AuditCase(
        name="dp_gmm end to end (k=2, d=2, n=41, |released b-mean|)",
        run=repeat(single),
        d1=d1,
        d2=d2,
        eps=eps,
        delta=delta,
        neighbours="one row at the corner (−1, −1) vs (1, 1) of the declared box",
        exercised="dpstats.dp_gmm front door per run (PCA, radius, clusters, estimates), seeded numpy",
    )


def vertical_frames(n: int = 50, seed: int = 0) -> tuple:
    """One party's block for vertical_glm's DP mode: intercept + one covariate in [−1, 1], y ∈ {0, 1}.

    The replaced row is (1, 1) with y = 1 in D1 and (1, −1) with y = 0 in D2.
    Returns ((X1, y1), (X2, y2), R) with R = √2 the block's row-norm bound.
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x))).astype(float)
    X = np.column_stack([np.ones(n), x])
    X1, X2, y1, y2 = X.copy(), X.copy(), y.copy(), y.copy()
    X1[-1, 1], y1[-1] = 1.0, 1.0
    X2[-1, 1], y2[-1] = -1.0, 0.0
    return (X1, y1), (X2, y2), math.sqrt(2.0)


def vertical_worst_frames(n: int = 50, seed: int = 0, offset: float = 10.0) -> tuple:
    """The worst pair for a binomial block: the replaced row's loss gradient flips at full norm R.

    Shared rows as in :func:`vertical_frames` (offset 0).  The replaced row is
    x = (1, 1) (norm R = √2) in both datasets, with the other parties' offset
    +``offset`` and y = 0 in D1, −``offset`` and y = 1 in D2 (a replaced row
    changes every party's features, hence its offset).  Its gradient
    (σ(o + xᵀβ) − y)·x is then ≈ +x in D1 and ≈ −x in D2: a change of ≈ 2R,
    the bound behind Δ₂(β) = 2R/(nλ).  Returns ((X1, y1, o1), (X2, y2, o2), R).
    """
    (X1, y1), (X2, _), R = vertical_frames(n, seed)
    X1[-1, 1] = 1.0
    X2 = X1.copy()
    y2 = y1.copy()
    y1[-1], y2[-1] = 0.0, 1.0
    o1, o2 = np.zeros(n), np.zeros(n)
    o1[-1], o2[-1] = offset, -offset
    return (X1, y1, o1), (X2, y2, o2), R


def vertical_coefficient_case(
    eps: float = 1.0, delta: float = 1e-6, lam: float = 5.0, worst: bool = True
) -> AuditCase:
    """vertical_glm's DP coefficient release for one party: ridge-logistic block + Gaussian noise.

    The block is fitted once per neighbour with ``methods.privreg.fit_block``
    (fixed offset, as in the sensitivity argument); Δ₂(β) from
    ``methods.privreg.binomial_ridge_sensitivities``; σ = Δ₂/√(2ρ) with
    ρ = ``gaussian_rho_from_eps_delta(eps, delta)`` (vertical_glm's exact conversion for its
    all-Gaussian plan, the whole budget on this one release, so the claim is (eps, delta)); runs
    draw the Gaussian noise
    vectorised through ``NoiseSource.gaussian``; the statistic is the
    projection on β(D2) − β(D1).  The measured ‖β(D1) − β(D2)‖ relative to
    Δ₂(β) is written into ``neighbours``.  ``worst=True`` uses
    :func:`vertical_worst_frames` (≈ 0.95·Δ₂(β)); ``False`` the milder
    :func:`vertical_frames` pair (≈ 0.33·Δ₂(β)).
    """
    from ..methods import privreg as vm
    from ..privacy.calibration import gaussian_rho_from_eps_delta

    if worst:
        (X1, y1, o1), (X2, y2, o2), R = vertical_worst_frames()
    else:
        (X1, y1), (X2, y2), R = vertical_frames()
        o1 = o2 = np.zeros(len(y1))
    fam, pen, mask = vm.FAMILIES["binomial"], vm.Penalty("ridge", lam), np.ones(2)
    b1 = vm.fit_block(vm.BlockProblem(X1, y1, fam, pen, mask), o1, np.zeros(2))
    b2 = vm.fit_block(vm.BlockProblem(X2, y2, fam, pen, mask), o2, np.zeros(2))
    _, d_beta = vm.binomial_ridge_sensitivities(len(y1), R, lam, 4.0)
    sigma = d_beta / math.sqrt(2 * gaussian_rho_from_eps_delta(eps, delta))
    direction = (b2 - b1) / max(np.linalg.norm(b2 - b1), 1e-300)

    def run(beta, n_runs, rng):
        return _numpy_noise(rng).gaussian(np.tile(beta, (n_runs, 1)), sigma) @ direction

    return AuditCase(
        name=f"vertical GLM coefficient release (ridge logistic, λ={lam:g})",
        run=run,
        d1=b1,
        d2=b2,
        eps=eps,
        delta=delta,
        neighbours=(
            (
                "replaced row (1, 1), offset +10, y=0 vs offset −10, y=1"
                if worst
                else "replaced row (1, 1, y=1) vs (1, −1, y=0)"
            )
            + ": ‖β(D1) − β(D2)‖ = "
            f"{np.linalg.norm(b2 - b1) / d_beta:.3f}·Δ₂(β)"
        ),
        exercised="methods.privreg.fit_block once per neighbour + NoiseSource.gaussian, vectorised",
    )


_METHOD_CASES.update(
    {
        "two-stage": lambda eps: [two_stage_case(eps), two_stage_case(eps, topk="joint")],
        "FELP": lambda eps: [felp_case(eps, "strict", pair="worst"), felp_case(eps, "paper")],
        "knockoff": lambda eps: [knockoff_case(eps, method="I"), knockoff_case(eps, method="II")],
        "dp_gmm": lambda eps: [gmm_radius_case(eps), gmm_pca_case(eps)],
        "vertical GLM": lambda eps: [vertical_coefficient_case(eps)],
    }
)
