"""dp_pca's budget split ``mean_share``: median subspace angle to the exact covariance PCA.

Simulated 5-column data (n = 3000, variances of very different size), its mean 0, 3 or 6 off the
midpoint of the declared box (−10, 10); for eps 1 and 4 and mean_share 0.05, 0.1, 0.25 and 0.5
the median over 40 seeds of the largest principal angle between dp_pca's 2-D subspace and the
exact one (numpy, about the mean).  Printed as ratios to the best share in the same run (the
baseline), beside ``center="midpoint"`` (no budget on the mean).  The default
(:data:`dpstats.methods.pca.MEAN_SHARE`) is chosen from this table.

Usage: ``python benchmarks/bench_pca_mean_share.py [--seeds N]``
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import dpstats as dp

SHARES = (0.05, 0.1, 0.25, 0.5)


def angle(a: np.ndarray, b: np.ndarray) -> float:
    """The largest principal angle (degrees) between the column spans of a and b."""
    qa, _ = np.linalg.qr(a)
    qb, _ = np.linalg.qr(b)
    return float(np.degrees(np.arccos(np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False).min(), -1, 1))))


def data(offset: float, rng: np.random.Generator, n: int = 3000, d: int = 5) -> pd.DataFrame:
    A = rng.normal(size=(d, d)) * np.array([3, 2, 1, 0.5, 0.3])
    X = np.clip(rng.normal(size=(n, d)) @ A.T / 3 + offset, -10, 10)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])


def median_angle(df: pd.DataFrame, ref: np.ndarray, eps: float, seeds: int, **kw) -> float:
    fits = (
        dp.dp_pca("~ .", df, k=2, eps=eps, delta=1e-6, bounds=(-10, 10), random_state=s, **kw)
        for s in range(seeds)
    )
    return float(np.median([angle(f.basis, ref) for f in fits]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print("offset  eps  " + "  ".join(f"share={s:<5g}" for s in SHARES) + "  midpoint  (ratio to best share)")
    for offset in (0.0, 3.0, 6.0):
        df = data(offset, rng)
        X = df.to_numpy()
        ref = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2][:2].T
        for eps in (1.0, 4.0):
            angles = [median_angle(df, ref, eps, args.seeds, mean_share=s) for s in SHARES]
            mid = median_angle(df, ref, eps, args.seeds, center="midpoint")
            best = min(angles)
            cells = "  ".join(f"{a / best:11.3f}" for a in angles)
            print(f"{offset:6g} {eps:4g}  {cells}  {mid / best:8.3f}   (best {best:.2f}°)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
