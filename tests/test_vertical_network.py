"""dpstats.vertical over real sockets on 127.0.0.1: channel security, threads, and `dpstats party` processes.

Every network wait is bounded (socket timeouts of a few seconds, subprocess timeouts).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from dpstats.errors import DataError
from dpstats.vertical import Party, ProtocolError, SecureChannel, run_on_loopback
from dpstats.vertical.channel import decode, encode

# these tests exercise the deprecated pre-shared-key channel on purpose
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY = "5a" * 32
HERE = Path(__file__).resolve().parents[1]


def channel_pair(key_a=KEY, key_b=KEY, **kw):
    a, b = socket.socketpair()
    leader = SecureChannel(a, bytes.fromhex(key_a), "leader", timeout=3, peer="member", **kw)
    member = SecureChannel(b, bytes.fromhex(key_b), "member", timeout=3, peer="leader", **kw)
    t = threading.Thread(target=member.handshake)
    t.start()
    leader.handshake()
    t.join()
    return leader, member


class Tap:
    """Wrap a socket to capture what is sent, so a test can tamper with or replay frames."""

    def __init__(self, sock):
        self.sock, self.frames = sock, []

    def sendall(self, data):
        self.frames.append(bytes(data))

    def __getattr__(self, name):
        return getattr(self.sock, name)


def test_roundtrip_arrays_and_fields():
    leader, member = channel_pair()
    x = np.random.default_rng(0).standard_normal(1000)
    leader.send({"type": "update", "offset": x, "k": 3})
    got = member.recv()
    assert got["type"] == "update" and got["k"] == 3 and np.array_equal(got["offset"], x)
    member.send({"type": "eta", "eta": x[:5], "change": None})
    assert leader.recv()["change"] is None


def test_tampered_message_is_rejected():
    leader, member = channel_pair()
    real = leader.sock
    leader.sock = Tap(real)
    leader.send({"type": "update", "offset": np.ones(10)})
    frame = bytearray(leader.sock.frames[0])
    frame[-20] ^= 0x01  # flip one bit of the ciphertext
    real.sendall(bytes(frame))
    with pytest.raises(ProtocolError, match="failed authentication"):
        member.recv()


def test_replayed_message_is_rejected():
    leader, member = channel_pair()
    real = leader.sock
    leader.sock = Tap(real)
    leader.send({"type": "update", "offset": np.ones(3)})
    real.sendall(leader.sock.frames[0])
    real.sendall(leader.sock.frames[0])
    member.recv()
    with pytest.raises(ProtocolError, match="replayed or out-of-order"):
        member.recv()


def test_wrong_key_and_oversized_frame_and_garbage_are_rejected():
    leader, member = channel_pair(key_b="a5" * 32)
    leader.send({"type": "hello"})
    with pytest.raises(ProtocolError, match="failed authentication"):
        member.recv()
    leader, member = channel_pair(max_message=1000)
    with pytest.raises(ProtocolError, match="exceeds the limit"):
        leader.send({"type": "update", "offset": np.ones(1000)})
    leader.sock.sendall(struct.pack(">IQ", 10**9, 0))
    with pytest.raises(ProtocolError, match="above the limit"):
        member.recv()
    with pytest.raises(ProtocolError, match="malformed"):
        decode(encode({"a": np.ones(3)})[:-8])


def test_timeout_and_disconnect_are_clear():
    leader, member = channel_pair()
    member.sock.settimeout(0.3)
    member.timeout = 0.3
    with pytest.raises(ProtocolError, match="timed out"):
        member.recv("the leader's next request")
    leader.close()
    with pytest.raises(ProtocolError, match="disconnected"):
        member.recv("the leader's next request")


def test_short_key_is_refused():
    with pytest.raises(ProtocolError, match="32 bytes"):
        Party(pd.DataFrame({"x": [1.0]}), key=b"short", name="B")


# --------------------------------------------------------------------------- parties in threads
def data(n=300, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.standard_normal((n, 6)), columns=[f"x{i}" for i in range(1, 7)])
    df["x4"] += 0.5 * df.x1
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-(0.3 + df.x1 - 0.5 * df.x4 + 0.4 * df.x6)))).astype(float)
    df["id"] = [f"r{i}" for i in range(n)]
    return df


def run_threads(parties, lead_kwargs, timeout=20, member_kwargs=None):
    """Leader and members in threads; returns (results, errors) by party name."""
    return run_on_loopback(parties, timeout=timeout, member_kwargs=member_kwargs, **lead_kwargs)


def test_three_parties_in_threads_equal_pooled_fit():
    df = data()
    parties = [
        Party(df[["id", "y", "x1", "x2"]], KEY, name="A", formula="y ~ x1 + x2", row_id="id", timeout=5),
        Party(df[["id", "x3", "x4"]], KEY, name="B", row_id="id", timeout=5),
        Party(df[["id", "x5", "x6"]], KEY, name="C", formula="~ x5 + x6", row_id="id", timeout=5),
    ]
    results, errors = run_threads(parties, {"family": "binomial"})
    assert not errors
    ref = sm.GLM(
        df.y, sm.add_constant(df[[f"x{i}" for i in range(1, 7)]]), family=sm.families.Binomial()
    ).fit(tol=1e-14)
    for name in "ABC":
        tab = (
            results[name]
            .coefficients.set_index("term")
            .loc[ref.params.index.str.replace("const", "(Intercept)")]
        )
        np.testing.assert_allclose(tab["estimate"], ref.params, rtol=1e-6)
    assert results["C"].parties == ["A", "B", "C"]  # members ordered by name, not arrival
    se = results["B"].coefficients["std_error"].to_numpy()
    np.testing.assert_allclose(se, ref.bse, rtol=1e-4)
    assert all(b["exact"] for b in results["A"].se_blocks)


def test_shuffled_rows_stop_every_party():
    df = data(n=100)
    other = df[["id", "x3", "x4", "x5", "x6"]].iloc[np.r_[1, 0, 2:100]]
    parties = [
        Party(df[["id", "y", "x1", "x2"]], KEY, name="A", formula="y ~ x1 + x2", row_id="id", timeout=5),
        Party(other, KEY, name="B", row_id="id", timeout=5),
    ]
    results, errors = run_threads(parties, {"family": "binomial"})
    assert not results
    assert isinstance(errors["A"], DataError) and "different order" in str(errors["A"])
    assert isinstance(errors["B"], ProtocolError) and "different order" in str(errors["B"])


def test_overlapping_columns_and_wrong_key_stop_the_fit():
    df = data(n=80)
    parties = [
        Party(df[["id", "y", "x1", "x2"]], KEY, name="A", formula="y ~ x1 + x2", row_id="id", timeout=5),
        Party(df[["id", "x2", "x3"]], KEY, name="B", row_id="id", timeout=5),
    ]
    _, errors = run_threads(parties, {"family": "binomial"})
    assert "'x2' is held by more than one party" in str(errors["A"]) and "B" in errors
    parties[1] = Party(df[["id", "x3"]], "a5" * 32, name="B", row_id="id", timeout=5)
    _, errors = run_threads(parties, {"family": "binomial"})
    assert "failed authentication" in str(errors["A"])
    assert isinstance(errors["B"], ProtocolError)


def test_perfect_separation_over_network_stops_everyone():
    df = data(n=80)
    df["y"] = (df.x3 > 0).astype(float)
    parties = [
        Party(df[["id", "y", "x1"]], KEY, name="A", formula="y ~ x1", row_id="id", timeout=5),
        Party(df[["id", "x3"]], KEY, name="B", row_id="id", timeout=5),
    ]
    _, errors = run_threads(parties, {"family": "binomial"})
    assert "separation" in str(errors["A"]) and "separation" in str(errors["B"])


# --------------------------------------------------------------------------- real processes
def _cli(*args):
    return [sys.executable, "-m", "dpstats.cli", "party", *args]


def _write_parties(tmp_path: Path, df: pd.DataFrame):
    df[["id", "y", "x1", "x2"]].to_csv(tmp_path / "a.csv", index=False)
    df[["id", "x3", "x4"]].to_csv(tmp_path / "b.csv", index=False)
    df[["id", "x5", "x6"]].to_csv(tmp_path / "c.csv", index=False)
    key = tmp_path / "psk.hex"
    subprocess.run(_cli("keygen", "--out", str(key)), check=True, timeout=60, capture_output=True)
    return key


def _start(tmp_path, key, extra_lead=(), n_parties=3):
    env = dict(os.environ, TQDM_DISABLE="1")
    port_file = tmp_path / "port"
    lead = subprocess.Popen(
        _cli(
            "lead",
            "--data",
            str(tmp_path / "a.csv"),
            "--formula",
            "y ~ x1 + x2",
            "--parties",
            str(n_parties),
            "--listen",
            "127.0.0.1:0",
            "--port-file",
            str(port_file),
            "--key-file",
            str(key),
            "--row-id",
            "id",
            "--family",
            "binomial",
            "--timeout",
            "20",
            "--json",
            str(tmp_path / "a.json"),
            *extra_lead,
        ),
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not port_file.exists():
        assert time.monotonic() < deadline and lead.poll() is None, "leader did not start"
        time.sleep(0.05)
    port = port_file.read_text()
    members = {
        name: subprocess.Popen(
            _cli(
                "join",
                "--data",
                str(tmp_path / f"{name.lower()}.csv"),
                "--name",
                name,
                "--connect",
                f"127.0.0.1:{port}",
                "--key-file",
                str(key),
                "--row-id",
                "id",
                "--timeout",
                "20",
                "--json",
                str(tmp_path / f"{name.lower()}.json"),
            ),
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("B", "C")
    }
    return lead, members


@pytest.mark.slow
def test_three_party_processes_agree_with_pooled_fit(tmp_path):
    df = data(n=400, seed=4)
    key = _write_parties(tmp_path, df)
    lead, members = _start(tmp_path, key)
    for proc in [lead, *members.values()]:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
    ref = sm.GLM(
        df.y, sm.add_constant(df[[f"x{i}" for i in range(1, 7)]]), family=sm.families.Binomial()
    ).fit(tol=1e-14)
    for name in "abc":
        res = json.loads((tmp_path / f"{name}.json").read_text())
        est = np.array(res["tidy"]["estimate"])
        np.testing.assert_allclose(est, ref.params, rtol=1e-6)
        np.testing.assert_allclose(np.array(res["tidy"]["std_error"]), ref.bse, rtol=1e-4)
    assert "NO formal privacy guarantee" in out


@pytest.mark.slow
def test_killing_a_party_mid_fit_stops_the_others(tmp_path):
    df = data(n=400, seed=5)
    df["x4"] = df.x1 + 0.05 * df.x4  # strongly correlated blocks: many sweeps
    key = _write_parties(tmp_path, df)
    lead, members = _start(tmp_path, key, extra_lead=("--verbose", "--round-delay", "0.05"))
    seen = ""
    deadline = time.monotonic() + 60
    while "sweep 3:" not in seen:
        assert time.monotonic() < deadline, seen
        seen += lead.stderr.readline()
    members["B"].send_signal(signal.SIGKILL)
    members["B"].wait(timeout=30)
    _, lead_err = lead.communicate(timeout=60)
    _, c_err = members["C"].communicate(timeout=60)
    assert (
        lead.returncode == 3
        and "party 'B'" in lead_err
        and ("disconnected" in lead_err or "lost" in lead_err)
    )
    assert members["C"].returncode == 3 and "stopped the fit" in c_err and "'B'" in c_err
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "c.json").exists()


def test_member_with_bad_data_stops_the_leader_and_no_leader_is_clear():
    df = data(n=60)
    bad = df[["id", "x3"]].copy()
    bad.loc[5, "x3"] = np.nan
    parties = [
        Party(df[["id", "y", "x1"]], KEY, name="A", formula="y ~ x1", row_id="id", timeout=5),
        Party(bad, KEY, name="B", row_id="id", timeout=5),
    ]
    results, errors = run_threads(parties, {"family": "binomial"})
    assert not results
    assert "missing values" in str(errors["A"]) and isinstance(errors["B"], DataError)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    with pytest.raises(ProtocolError, match="cannot connect to the leader"):
        parties[1].connect("127.0.0.1", free, retry_for=0.3)
