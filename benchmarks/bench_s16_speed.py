"""s16-speed: the old and new code paths of four audit findings (s16-perf), back to back in one process.

* F3 — dp_two_stage's block split: ``labels == b`` over all n rows per block (old) against one stable
  argsort split (:func:`dpstats.stats.block_rows`), n = 250 000, ⌊√n⌋ blocks, d = 10.
* F2 — dp_felp's learners: a fresh ``threadpool_limits`` per learner (old) against one limit around
  the loop (:func:`dpstats.methods.felp.ensemble.ensemble`), n = 4000 rows, 200 learners.
* F4 — d x d algebra on the default BLAS threads (old) against one thread: dp_pca's two
  eigendecompositions (d = 200), dp_lm's bootstrap draws (d = 40 and 100) and dp_two_stage's block
  lassos (20 blocks of 700 rows x 300 columns).  From about d = 300 for the eigendecompositions and at
  d = 100 for the bootstrap, one thread changes the last bits (relative 1e-16): "bit-identical: False".

Each pair is timed interleaved (median of ``--repeats``) and checked bit-identical.  The machine's
load moves the absolute times; only the ratios mean something.

    PYTHONPATH=$PWD python benchmarks/bench_s16_speed.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dpstats.methods import lm as lm_m
from dpstats.methods import pca as pca_m
from dpstats.methods.felp.learner import logo
from dpstats.methods import two_stage as ts
from dpstats.stats import block_rows

ens = importlib.import_module("dpstats.methods.felp.ensemble")  # the module, not felp's ensemble()


def interleaved(fns: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each function, the functions run in turn ``repeats`` times."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def report(title: str, t: dict[str, float], same: bool) -> None:
    old, new = t.values()
    print(f"{title}: old {old:.3f}s, new {new:.3f}s, old/new {old / new:.1f}x, bit-identical: {same}")


def block_split(repeats: int) -> None:
    n, d = 250_000, 10
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, d)), rng.normal(size=n)
    m = math.isqrt(n)
    labels = rng.integers(0, m, n)

    def old():
        return [(X[rows], y[rows]) for rows in (labels == b for b in range(m))]

    def new():
        return [(X[rows], y[rows]) for rows in block_rows(labels, m)]

    same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(old(), new()))
    report(f"F3 block split, n = {n}, {m} blocks", interleaved({"old": old, "new": new}, repeats), same)


def felp_learners(repeats: int) -> None:
    rng = np.random.default_rng(1)
    n, d, k = 4000, 10, 200
    y = rng.integers(0, 2, n)
    U = rng.uniform(size=(n, d)) / math.sqrt(d)
    U[:, 0] = (y + rng.uniform(size=n)) / 2 / math.sqrt(d)
    parts = [np.sort(p) for p in np.array_split(np.random.default_rng(2).permutation(n), k)]

    def old():  # as before s16-speed: logo() entered a new threadpool_limits per learner
        out = []
        for idx in parts:
            with threadpool_limits(limits=1, user_api="blas"):
                out.append(logo(U[idx], y[idx], 0.01, ids=idx).w)
        return np.array(out)

    def new():
        spec = ens.EnsembleSpec(n_estimators=k, variant="paper", sample_ratio=1.0)
        ens.subsets = lambda *args: parts  # the same samples as old()
        try:
            return ens.ensemble(U, y, 0.01, gen=np.random.default_rng(0), spec=spec).weights
        finally:
            ens.subsets = subsets

    subsets = ens.subsets
    same = np.array_equal(old(), new())
    report(f"F2 felp learners, n = {n}, {k} learners", interleaved({"old": old, "new": new}, repeats), same)


def pca_eigen(repeats: int) -> None:
    d = 200
    A = np.random.default_rng(3).normal(size=(2 * d, d))
    M = A.T @ A
    old = pca_m._decomposed.__wrapped__  # the function without its one-thread limit

    def same():
        a, b = old(M, 5, np.zeros(d), 1.0), pca_m._decomposed(M, 5, np.zeros(d), 1.0)
        return (
            np.array_equal(a.pca.basis, b.pca.basis)
            and np.array_equal(a.pca.eigenvalues, b.pca.eigenvalues)
            and a.total == b.total
            and a.next_eigenvalue == b.next_eigenvalue
        )

    t = interleaved(
        {
            "old": lambda: old(M, 5, np.zeros(d), 1.0),
            "new": lambda: pca_m._decomposed(M, 5, np.zeros(d), 1.0),
        },
        repeats,
    )
    report(f"F4 dp_pca eigendecompositions, d = {d}", t, same())


def lm_draws(repeats: int) -> None:
    from dpstats.privacy.randomness import NoiseSource

    old = lm_m._draws.__wrapped__  # the function without its one-thread limit
    for d, draws in ((40, 500), (100, 100)):
        n = 10_000
        rng = np.random.default_rng(4)
        X = rng.uniform(-1, 1, (n, d))
        y = np.clip(X @ np.full(d, 0.05) + 0.2 * rng.normal(size=n), -1, 1)
        v = np.c_[np.ones(n), X, y]
        coords = lm_m.Coordinates(np.zeros(d), np.ones(d), True, y_center=0.0, y_half=1.0)
        pl = lm_m.plan(lm_m.LMOptions.partial(eps=2.0, delta=1e-6, lambda_share=lm_m.LAMBDA_SHARE), coords)
        fit = lm_m.release_statistics(v.T @ v, n, pl, NoiseSource(1))

        def run(fn, fit=fit, n=n, pl=pl, draws=draws):
            return fn(fit, fit.theta, n, pl, draws, np.random.default_rng(5), draws)

        a, b = run(old), run(lm_m._draws)
        same = np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        t = interleaved({"old": lambda: run(old), "new": lambda run=run: run(lm_m._draws)}, repeats)
        report(f"F4 dp_lm bootstrap draws, d = {d}, {draws} draws", t, same)


def two_stage_lassos(repeats: int) -> None:
    rng = np.random.default_rng(6)
    X = rng.normal(size=(14_000, 300))
    y = X[:, :5].sum(axis=1) + rng.normal(size=14_000)
    labels = ts.block_labels(len(y), 20, "replace", np.random.default_rng(1))
    limit = ts.single_blas_thread

    def run(context):
        ts.single_blas_thread = context
        try:
            return ts.block_coefficients(X, y, labels, 20, ts.Lasso())
        finally:
            ts.single_blas_thread = limit

    same = np.array_equal(run(contextlib.nullcontext), run(limit))
    t = interleaved({"old": lambda: run(contextlib.nullcontext), "new": lambda: run(limit)}, repeats)
    report("F4 dp_two_stage block lassos, 20 blocks of 700 x 300", t, same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    for part in (block_split, felp_learners, pca_eigen, lm_draws, two_stage_lassos):
        part(repeats)


if __name__ == "__main__":
    main()
