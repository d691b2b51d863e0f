"""All parties of a fit in one process, each in its own thread, over 127.0.0.1.

The real protocol (TLS or the deprecated pre-shared-key channel, sequence
numbers, size checks) runs end to end,
which is how the tests, the benchmark and the vignette exercise it without
starting processes.
"""

from __future__ import annotations

import threading

from ..errors import DPStatsError
from .party import Party


def run_on_loopback(
    parties: list[Party], *, timeout: float = 60.0, member_kwargs: dict | None = None, **lead_kwargs
) -> tuple[dict, dict]:
    """Run ``parties[0].serve`` and the others' ``connect`` in threads on 127.0.0.1.

    Parameters
    ----------
    parties : list of Party
        The leader first, then the members.
    timeout : float
        Seconds to wait for the leader to listen and for every thread to finish.
    member_kwargs : dict, optional
        Per member name, extra keyword arguments for ``connect`` (e.g. its DP budget).
    **lead_kwargs
        Passed to the leader's ``serve`` (family, penalty, eps, ...).

    Returns
    -------
    (results, errors) : dicts by party name
        Each party's released result, or the exception that stopped it.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.standard_normal((50, 3)), columns=["x1", "x2", "x3"])
    >>> df["y"], df["id"] = df.x1 - df.x3 + rng.standard_normal(50), np.arange(50)
    >>> import tempfile
    >>> from dpstats.vertical.pki import init_consortium
    >>> certs = tempfile.mkdtemp()
    >>> _ = init_consortium(["A", "B"], certs)
    >>> results, errors = run_on_loopback([
    ...     Party(df[["id", "y", "x1"]], name="A", tls=certs, formula="y ~ x1", row_id="id", timeout=10),
    ...     Party(df[["id", "x2", "x3"]], name="B", tls=certs, row_id="id", timeout=10)], timeout=30)
    >>> errors, results["A"].converged
    ({}, True)
    """
    leader, members = parties[0], parties[1:]
    member_kwargs = member_kwargs or {}
    port, ready, results, errors = {}, threading.Event(), {}, {}

    def lead() -> None:
        try:
            who = (
                {"parties": [p.name for p in parties]}
                if leader.tls is not None
                else {"n_parties": len(parties)}
            )
            results[leader.name] = leader.serve(
                "127.0.0.1",
                0,
                **{**who, **lead_kwargs},
                on_listening=lambda p: (port.setdefault("p", p), ready.set()),
            )
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            errors[leader.name] = exc
            ready.set()

    def join(party: Party) -> None:
        try:
            extra = {"leader": leader.name} if party.tls is not None else {}
            results[party.name] = party.connect(
                "127.0.0.1", port["p"], retry_for=3, **{**extra, **member_kwargs.get(party.name, {})}
            )
        except Exception as exc:  # noqa: BLE001
            errors[party.name] = exc

    threads = [threading.Thread(target=lead)]
    threads[0].start()
    if not ready.wait(timeout):
        raise DPStatsError(f"the leader did not start listening within {timeout:g} s")
    if "p" in port:
        threads += [threading.Thread(target=join, args=(p,)) for p in members]
        for t in threads[1:]:
            t.start()
    for t in threads:
        t.join(timeout)
        if t.is_alive():
            raise DPStatsError(f"a party did not finish within {timeout:g} s")
    return results, errors
