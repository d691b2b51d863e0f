"""Timing helper shared by the benchmarks: best of several runs, after a warm-up."""

from __future__ import annotations

import time


def best_time(func, repeat: int = 5, warmup: int = 1) -> float:
    for _ in range(warmup):
        func()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best
