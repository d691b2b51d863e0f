"""dp_felp's strict defaults: recovery of two true features by the top 2, across n, eps and settings.

    python benchmarks/bench_felp_defaults.py [--quick]

Data (the issue's): d standard normal features, y = 1{a·(X1 − X2) + N(0, 0.5²) > 0}, bounds
(−4, 4); "strong" a = 1, d = 6 and "weak" a = 0.25, d = 20.  For each data set the learners are
fitted once without any bound (:func:`dpstats.methods.felp.ensemble` with C = inf) and each
setting applies its own bound to the same weight vectors, then draws 200 L2-Laplace releases
(numpy, :class:`dpstats.privacy.randomness.FastNoise`) per eps.  Settings:

* ``k=20 clip sqrt(log2/lam)``: the former default (C = 0.833 at λ = 1);
* ``k=20 clip r*(lam)``: the tightest public bound from eq. (2) (:func:`logo_norm_bound`, 0.223);
* ``k=20 normalised``, ``rows/k=40``, ``rows/k=20`` (the new default), ``rows/k=10``: each
  learner normalised to ‖w‖ = 1, k = 20 or ⌊n / rows⌋.

Recovery = share of releases whose top 2 is exactly {X1, X2} (chance 1/C(d, 2)).  The
Logo learners cost O(m² d) on m rows each, so k = n/20 learners cost O(20 n d): linear in n;
k = 20 on n = 100 000 rows (5 000 rows each) is not run (its noise does not fall with n).
Results: benchmarks/bench_felp_defaults_results.txt.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpstats.geometry import Box
from dpstats.methods import felp as m
from dpstats.privacy.randomness import FastNoise

LAM, DRAWS, EPS = 1.0, 200, (1.0, 4.0)
DATA = {"strong": (6, 1.0), "weak": (20, 0.25)}


def rows(n: int, d: int, a: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (a * (X[:, 0] - X[:, 1]) + rng.normal(0.0, 0.5, n) > 0).astype(int)
    U, _ = m.scale_features(X, Box(np.full(d, -4.0), np.full(d, 4.0)))
    return U, y


def raw_weights(U: np.ndarray, y: np.ndarray, k: int, seed: int) -> np.ndarray:
    spec = m.EnsembleSpec(n_estimators=k, variant="strict", clip_norm=math.inf)
    return m.ensemble(U, y, LAM, gen=np.random.default_rng(seed), spec=spec).weights


def bounded_mean(W: np.ndarray, C: float, normalise: bool) -> np.ndarray:
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    factor = np.where(norms > 0, C / np.where(norms > 0, norms, 1.0), 1.0)
    factor = factor if normalise else np.minimum(factor, 1.0)
    return (W * factor).mean(axis=0)


def recovery(w: np.ndarray, C: float, k: int, eps: float, seed: int) -> float:
    noise, scale = FastNoise(np.random.default_rng(seed)), 2.0 * C / k / eps
    hits = [set(np.argsort(-noise.l2_laplace(w, scale))[:2]) == {0, 1} for _ in range(DRAWS)]
    return float(np.mean(hits))


def settings(n: int) -> list[tuple[str, int, float, bool]]:
    """(label, k, C, normalise)."""
    old = [
        ("k=20 clip sqrt(log2/lam)", 20, m.default_clip_norm(LAM), False),
        ("k=20 clip r*(lam)", 20, m.logo_norm_bound(LAM), False),
        ("k=20 normalised", 20, 1.0, True),
    ]
    new = [(f"rows/k={r} normalised", max(1, n // r), 1.0, True) for r in (40, 20, 10)]
    return (old if n <= 20_000 else []) + (new if n <= 20_000 else new[:2])


def main(quick: bool) -> None:
    ns = (2_000, 20_000) if quick else (2_000, 20_000, 100_000)
    print(f"lambda = {LAM:g}; {DRAWS} releases per fit and eps; recovery = top 2 is exactly {{X1, X2}}")
    for name, (d, a) in DATA.items():
        print(f"\n== {name}: d = {d}, a = {a:g}, chance {1 / math.comb(d, 2):.3f}")
        for n in ns:
            seeds = 3 if n <= 20_000 else 2
            table: dict[str, list] = {}
            for seed in range(seeds):
                U, y = rows(n, d, a, 100 + seed)
                cache: dict[int, tuple[np.ndarray, float]] = {}
                for label, k, C, normalise in settings(n):
                    if k not in cache:
                        start = time.perf_counter()
                        cache[k] = (raw_weights(U, y, k, seed), time.perf_counter() - start)
                    W, secs = cache[k]
                    w = bounded_mean(W, C, normalise)
                    sd = [m.noise_coordinate_sd(2.0 * C / k / e, d) for e in EPS]
                    rec = [recovery(w, C, k, e, seed) for e in EPS]
                    table.setdefault(label, []).append((k, secs, np.linalg.norm(w), *sd, *rec))
            for label, vals in table.items():
                v = np.array(vals, dtype=float).mean(axis=0)
                print(
                    f"n = {n:>7,d}  {label:<26s} k = {int(v[0]):>5d}  fit {v[1]:6.1f}s  ‖w̄‖ = {v[2]:.3g}  "
                    f"noise sd/weight eps=1: {v[3]:.3g}, eps=4: {v[4]:.3g}  "
                    f"recovery eps=1: {v[5]:.2f}, eps=4: {v[6]:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 2 000 and 20 000 only")
    main(parser.parse_args().quick)
