"""Audit table: claimed eps vs the empirical lower bound eps_lb, per mechanism.

Runs every case of :func:`dpstats.audit.standard_cases` (core noise mechanisms,
every registered top-k selector on its exact-worst neighbouring pair, DP-SIS,
and deliberately broken controls with halved sensitivity) N times on each
neighbour (N >= 10^5 by default), plus the methods' audits
(``dpstats.audit.METHOD_LABELS``).  Prints the table and,
as the baseline measured in the same run, the ratio eps_lb / claimed eps and
the ratio of each audit's time to the Laplace audit's time.

The auditor exercises the seeded numpy path of the noise source (OpenDP's
samplers are too slow for 10^5 runs).

Usage: ``python benchmarks/bench_audit.py [--runs N] [--quick]``
"""

from __future__ import annotations

import argparse
import time
import warnings

from dpstats.audit import audit, felp_sensitivity_check, format_table, method_cases, standard_cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs per neighbouring dataset")
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true", help="10^4 runs, fewer candidate pairs")
    args = parser.parse_args(argv)
    runs = 10_000 if args.quick else args.runs
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    cases = standard_cases(args.eps, n_pairs=60 if args.quick else 150) + method_cases(args.eps)
    print(f"worst-pair search and setup: {time.perf_counter() - t0:.1f} s")
    results, times = [], []
    for case in cases:
        t = time.perf_counter()
        n = min(runs, case.max_runs) if case.max_runs else runs
        results.append(audit(case, n_runs=n, random_state=2026))
        times.append(time.perf_counter() - t)
    print(format_table(results))
    print()
    base = times[0]
    print(f"{'mechanism':54s} {'eps_lb/eps':>10s} {'time s':>7s} {'time/Laplace':>12s}")
    for r, t in zip(results, times):
        print(f"{r.name[:54]:54s} {r.eps_lb / r.claimed_eps:10.3f} {t:7.2f} {t / base:12.1f}")
    print("\nFELP sensitivity on coupled subset draws (observed max ||w(D1) - w(D2)|| vs claimed):")
    for variant in ("strict", "paper"):
        c = felp_sensitivity_check(variant, draws=10 if args.quick else 30)
        print(
            f"  {variant:6s} claimed {c['claimed_sensitivity']:.4f}  observed {c['observed']:.4f}  "
            f"ratio {c['ratio']:.3f}"
        )
    print(
        f"\ntotal {time.perf_counter() - t0:.1f} s; alpha = {results[0].alpha}, Bonferroni over "
        "events x directions x the two one-sided bounds"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
