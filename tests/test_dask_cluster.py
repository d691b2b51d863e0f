"""Dask on real clusters: worker *processes*, not threads of one process.

* a ``distributed.LocalCluster(processes=True)`` (two worker processes, one thread each);
* a scheduler and two workers started as separate OS processes with the ``dask`` command line,
  reached by ``Client("tcp://127.0.0.1:PORT")``;
* a worker killed in the middle of a pass (a partition whose task kills its own worker process,
  once or every time, decided by a marker file so that the kill is deterministic).

``dp_sis``, ``dp_knockoff``, ``dp_pca`` and ``dp_glm`` (one pass over the partitions per noisy Newton
step) through the cluster equal the in-memory results for the same seed (selections exactly, statistics to floating-point summation order, as in
``tests/test_engines*.py``).  A killed worker gives the same result (Dask runs the task again on a
live worker) or, past Dask's allowed failures, an :class:`~dpstats.errors.EngineError` with nothing
released and no budget spent.

Only loopback addresses are used; every process started here is killed in a ``finally``.  Functions
sent to the workers are pickled by value (``cloudpickle.register_pickle_by_value``): the workers
cannot import this test module.  Cluster start-up happens in fixtures, never at import time, so
the ``spawn`` start method of the worker processes re-imports nothing that starts clusters.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dpstats as dp
from dpstats import engines
from dpstats.errors import EngineError

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

ROOT = Path(__file__).resolve().parents[1]
SIS = dict(eps=3.0, k=4, bounds=(-6, 6), random_state=7, oc_trials=0)
KO = dict(
    eps=5.0,
    delta=1e-6,
    fdr=0.2,
    method="II",
    bounds=8.0,
    sigma=1.5,
    beta_norm=4.0,
    c_min=80.0,
    lambda_min=0.5,
    random_state=5,
    oc_trials=0,
)
PCA = dict(k=2, eps=1.0, delta=1e-6, bounds=(-12, 12), random_state=7)
START_TIMEOUT = 60  # seconds for a scheduler or worker process to come up


def _worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return env


@pytest.fixture(scope="module")
def frames():
    from dpstats.simulate.gmm import simulate_gmm

    sis = dp.datasets.fan_lv(n=3000, d=40, random_state=3)
    ko = dp.datasets.fan_lv(n=10_000, d=40, random_state=11)
    pca, _ = simulate_gmm(6000, d=5, k=3, random_state=3)
    return {"sis": sis, "ko": ko, "pca": pca}


@pytest.fixture(scope="module")
def in_memory(frames):
    from dpstats.api.pca import dp_pca

    return {
        "sis": dp.dp_sis("y ~ .", data=frames["sis"], **SIS),
        "ko": dp.dp_knockoff("y ~ .", data=frames["ko"], **KO),
        "pca": dp_pca("~ .", frames["pca"], **PCA),
    }


def _run_all(frames, client, npartitions=4):
    from dpstats.api.pca import dp_pca

    def src(name):
        return engines.on_dask(dd.from_pandas(frames[name], npartitions=npartitions), client=client)

    return {
        "sis": dp.dp_sis("y ~ .", data=src("sis"), **SIS),
        "ko": dp.dp_knockoff("y ~ .", data=src("ko"), **KO),
        "pca": dp_pca("~ .", src("pca"), **PCA),
    }


def _same(ref, fits):
    assert fits["sis"].selected == ref["sis"].selected and fits["sis"].n == ref["sis"].n
    assert fits["sis"].privacy.to_dict() == ref["sis"].privacy.to_dict()
    assert fits["ko"].selected == ref["ko"].selected and fits["ko"].n == ref["ko"].n
    np.testing.assert_allclose(fits["ko"].W, ref["ko"].W, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fits["ko"].coefficients, ref["ko"].coefficients, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fits["pca"].basis, ref["pca"].basis, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fits["pca"].eigenvalues, ref["pca"].eigenvalues, rtol=1e-8)
    assert fits["pca"].n == ref["pca"].n


def _worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


@pytest.fixture(scope="module")
def local_cluster():
    import dask

    # one retry of a task whose worker died: the kill-once test recovers, the kill-always test fails fast
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            processes=True,
            n_workers=2,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            env=_worker_env(),
        )
    client = distributed.Client(cluster)
    try:
        client.wait_for_workers(2, timeout=START_TIMEOUT)
        yield client
    finally:
        client.close()
        cluster.close()


def test_local_cluster_of_worker_processes_equals_in_memory(local_cluster, frames, in_memory):
    pids = _worker_pids(local_cluster)
    assert len(pids) == 2 and os.getpid() not in pids  # two processes, neither of them this one
    _same(in_memory, _run_all(frames, local_cluster))


def test_dp_glm_on_worker_processes_equals_in_memory(local_cluster):
    """dp_glm's noisy Newton on the cluster: each step's score and Hessian sums are computed on the workers
    (one pass over the partitions per step) and equal the in-memory fit to summation order."""
    from scipy.special import expit

    import pandas as pd

    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.uniform(-1, 1, (20_000, 3)), columns=["x1", "x2", "x3"])
    df["y"] = (rng.random(len(df)) < expit(0.3 + df["x1"] - df["x2"])).astype(float)
    args = dict(eps=2.0, delta=1e-6, bounds={f"x{j}": (-1, 1) for j in (1, 2, 3)}, random_state=6)
    ref = dp.dp_glm("y ~ .", df, **args)
    fit = dp.dp_glm("y ~ .", engines.on_dask(dd.from_pandas(df, npartitions=4), client=local_cluster), **args)
    assert fit.engine == "dask"
    np.testing.assert_allclose(fit.coefficients, ref.coefficients, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.vcov_matrix, ref.vcov_matrix, rtol=0, atol=1e-14)


# ------------------------------------------------------------------ a worker killed mid-pass
def _kill_on_attempt(part, marker: str, always: bool):
    """Kill this worker process the first time (or every time) the partition is computed."""
    if always or not os.path.exists(marker):
        with open(marker, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return part


def _frame_with_a_killer(df, marker: Path, always: bool, npartitions: int = 4, victim: int = 2):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ddf = dd.from_pandas(df, npartitions=npartitions)
    parts = ddf.to_delayed()
    from dask import delayed

    parts[victim] = delayed(_kill_on_attempt)(parts[victim], str(marker), always)
    return dd.from_delayed(parts, meta=ddf._meta, verify_meta=False)


def test_worker_killed_mid_pass_is_retried_to_the_same_result(local_cluster, frames, in_memory, tmp_path):
    marker = tmp_path / "killed"
    before = _worker_pids(local_cluster)
    acc = dp.Accountant(eps=10.0)
    fit = dp.dp_sis(
        "y ~ .",
        data=engines.on_dask(_frame_with_a_killer(frames["sis"], marker, always=False), client=local_cluster),
        accountant=acc,
        **SIS,
    )
    assert marker.read_text().count("\n") == 1  # the partition's first attempt killed its worker
    assert int(marker.read_text()) in before
    assert fit.selected == in_memory["sis"].selected and fit.n == in_memory["sis"].n
    assert acc.spent_eps == pytest.approx(SIS["eps"])
    local_cluster.wait_for_workers(2, timeout=START_TIMEOUT)  # the nanny restarts the killed worker


def test_worker_killed_every_time_is_a_clear_error_and_nothing_released(local_cluster, frames, tmp_path):
    marker = tmp_path / "killed"
    acc = dp.Accountant(eps=10.0)
    src = engines.on_dask(_frame_with_a_killer(frames["sis"], marker, always=True), client=local_cluster)
    with pytest.raises(EngineError, match="did not finish.*KilledWorker.*nothing was computed"):
        dp.dp_sis("y ~ .", data=src, accountant=acc, **SIS)
    # the first attempt and the retry both died (a restarted worker may start a third attempt before
    # the scheduler gives up: Dask counts deaths per task, and tasks queued on a dying worker count too)
    assert marker.read_text().count("\n") >= 2
    assert acc.spent_eps == 0 and acc.ledger == []
    local_cluster.wait_for_workers(2, timeout=START_TIMEOUT)
    # the cluster is usable afterwards
    fit = dp.dp_sis("y ~ .", data=engines.on_dask(frames["sis"], client=local_cluster), **SIS)
    assert fit.n == len(frames["sis"])


# ------------------------------------------------------------------ scheduler and workers as OS processes
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_command() -> list[str]:
    exe = Path(sys.executable).with_name("dask")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("dask")
    if found is None:
        pytest.skip("the dask command line is not installed")
    return [found]


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:  # workers first, then the scheduler (reverse start order)
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_scheduler_and_workers_as_separate_processes(frames, in_memory, tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = _dask_command()
    env = _worker_env()
    logs = []
    procs: list[subprocess.Popen] = []

    def start(args, name):
        log = open(tmp_path / f"{name}.log", "w")  # closed in the finally
        logs.append(log)
        procs.insert(
            0,
            subprocess.Popen(
                dask + args,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=tmp_path,
                start_new_session=True,
            ),
        )

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], "scheduler")
        for i in range(2):
            start(
                [
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--no-dashboard",
                    "--name",
                    f"w{i}",
                    "--local-directory",
                    str(tmp_path / f"w{i}"),
                ],
                f"worker{i}",
            )
        deadline = time.monotonic() + START_TIMEOUT
        client = None
        while client is None:
            try:
                client = distributed.Client(address, timeout=5)
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise
                time.sleep(0.5)
        with client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
            pids = _worker_pids(client)
            assert len(pids) == 2 and os.getpid() not in pids
            assert all(addr.startswith("tcp://127.0.0.1:") for addr in client.scheduler_info()["workers"])
            _same(in_memory, _run_all(frames, client))
    except BaseException:
        for log in logs:
            log.flush()
        print("\n".join(p.read_text() for p in sorted(tmp_path.glob("*.log"))))
        raise
    finally:
        _stop(procs)
        for log in logs:
            log.close()
