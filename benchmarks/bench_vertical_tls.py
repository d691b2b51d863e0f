"""Benchmark: vertical_glm between two parties over loopback TLS 1.3, against the same fit in one
process and against the deprecated pre-shared-key (AES-256-GCM) channel.

Gaussian family, n rows (default 10^6), p columns split in two (the leader holds y, the intercept
and the first half), AR(1)-correlated columns so the blocks interact and the fit takes several
sweeps; se="none" (no basis exchange), tol 1e-8.  The member runs in a forked process, the leader
in this one; both on 127.0.0.1.  Printed per configuration: the fit's wall time (admission, setup
with y, the sweeps and the result), sweeps, time per sweep (wall time / sweeps: fixed costs
included), bytes through the leader's channel (frames as the application writes them; TLS adds
~22 bytes per 16 KiB record), and ratios against the baselines measured in the same run:

* network TLS / in process (``dpstats.vertical_glm`` with ``parties=``, the same sweeps);
* TLS / pre-shared-key channel (the same network fit);
* bytes per sweep / 16·n (one float64 n-vector each way per sweep: the protocol's minimum).

    python benchmarks/bench_vertical_tls.py [--n 1000000] [--p 10] [--repeats 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

import dpstats as dp
from dpstats.vertical import Party
from dpstats.vertical.pki import init_consortium

KEY = "7e" * 32


def make(n: int, p: int, rho: float = 0.6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.empty((n, p))
    X[:, 0] = rng.standard_normal(n)
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = 0.1 + X @ rng.uniform(-0.5, 0.5, p) + rng.standard_normal(n)
    return df


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _member(df_b, channel: str, certs: str, port: int) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    ident = {"tls": certs} if channel == "tls" else {"key": KEY}
    Party(df_b, name="member", timeout=600, **ident).connect(
        "127.0.0.1", port, leader="leader" if channel == "tls" else None, retry_for=60
    )
    os._exit(0)


def network_fit(df: pd.DataFrame, a: list[str], b: list[str], channel: str, certs: str):
    warnings.simplefilter("ignore", DeprecationWarning)
    ident = {"tls": certs} if channel == "tls" else {"key": KEY}
    lead = Party(df[["y", *a]], name="leader", formula="y ~ " + " + ".join(a), timeout=600, **ident)
    port = free_port()
    child = multiprocessing.get_context("fork").Process(target=_member, args=(df[b], channel, certs, port))
    child.start()
    who = {"parties": ["leader", "member"]} if channel == "tls" else {"n_parties": 2}
    t0 = time.perf_counter()
    res = lead.serve("127.0.0.1", port, family="gaussian", se="none", tol=1e-8, **who)
    elapsed = time.perf_counter() - t0
    child.join(120)
    sent, received = lead.traffic["member"]
    return elapsed, res, sent + received


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=2, help="best of this many runs per configuration")
    args = ap.parse_args()
    df = make(args.n, args.p)
    cols = [f"x{j + 1}" for j in range(args.p)]
    a, b = cols[: args.p // 2], cols[args.p // 2 :]
    certs = tempfile.mkdtemp()
    init_consortium(["leader", "member"], certs)

    local_t, local = float("inf"), None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        local = dp.vertical_glm(
            "y ~ " + " + ".join(cols), df, parties=[a, b], family="gaussian", se="none", tol=1e-8
        )
        local_t = min(local_t, time.perf_counter() - t0)
    runs = {}
    for channel in ("psk", "tls"):
        best = None
        for _ in range(args.repeats):
            out = network_fit(df, a, b, channel, certs)
            best = out if best is None or out[0] < best[0] else best
        runs[channel] = best

    sweeps = local.iterations
    print(f"vertical_glm, gaussian, n = {args.n:,}, p = {args.p} ({len(a)} + {len(b)} columns), 2 parties")
    print(f"cores: {os.cpu_count()}; best of {args.repeats} runs each; member in a forked process\n")
    print(f"{'configuration':<34}{'fit (s)':>9}{'sweeps':>8}{'s/sweep':>9}{'MB':>9}{'B/sweep/16n':>13}")
    print(
        f"{'in process (baseline)':<34}{local_t:>9.3f}{sweeps:>8}{local_t / sweeps:>9.4f}{0:>9.1f}{'-':>13}"
    )
    for channel, label in (("psk", "loopback, pre-shared key (AES-GCM)"), ("tls", "loopback, TLS 1.3")):
        t, res, nbytes = runs[channel]
        per = nbytes / res.iterations / (16 * args.n)
        print(
            f"{label:<34}{t:>9.3f}{res.iterations:>8}{t / res.iterations:>9.4f}{nbytes / 1e6:>9.1f}{per:>13.2f}"
        )
    t_tls, res_tls, _ = runs["tls"]
    t_psk = runs["psk"][0]
    diff = float(
        np.max(
            np.abs(res_tls.coefficients["estimate"].to_numpy() - local.coefficients["estimate"].to_numpy())
        )
    )
    print()
    print(
        f"ratio TLS network / in process (time per sweep): {(t_tls / res_tls.iterations) / (local_t / sweeps):.2f}x"
    )
    print(f"ratio TLS / pre-shared-key channel (fit time):   {t_tls / t_psk:.2f}x")
    print(f"max |coefficient difference| TLS vs in process:  {diff:.2e}")


if __name__ == "__main__":
    main()
