"""dpstats.vertical over TLS 1.3 with one certificate per party (issue 31), on 127.0.0.1 only.

In-process parts (threads): `dpstats party init`, a fit over TLS equal to the pooled GLM, the
identity checks in both directions.  Faults: the leader is a real `dpstats party lead` process;
the faulty party is a real `dpstats party join` process or this test process speaking the protocol
itself (a rogue member).  Every wait is bounded: socket timeouts of 2-5 s (stated per test), every
subprocess wait at most 60 s, every request loop a fixed count.  Each fault ends with an error
naming the party, exit code 3 (2 for bad TLS files) and no result file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import ssl
import stat
import struct
import multiprocessing
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpstats.errors import DataError
from dpstats.methods import privreg as m
from dpstats.vertical import Party, ProtocolError, TLSCredentials, party_main, run_on_loopback
from dpstats.vertical.channel import decode, encode
from dpstats.vertical.pki import cert_pem, init_consortium, issue, key_pem, write_new
from dpstats.vertical.tls import TLSChannel, client_context

NAMES = ["leader", "hospital_a", "hospital_b", "hospital_c"]  # hospital_c: certified, never invited


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """The consortium's files, another authority's, and an expired certificate from the right one."""
    root = tmp_path_factory.mktemp("pki")
    good = root / "good"
    init_consortium(NAMES, good)
    other = root / "other"
    init_consortium(["leader", "hospital_a"], other)
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    ca_key = serialization.load_pem_private_key((good / "ca.key").read_bytes(), None)
    ca_cert = x509.load_pem_x509_certificate((good / "ca.crt").read_bytes())
    expired = root / "expired"
    expired.mkdir()
    now = dt.datetime.now(dt.timezone.utc)
    for name in ("leader", "hospital_a"):
        key, cert = issue(
            ca_key,
            ca_cert,
            name,
            not_before=now - dt.timedelta(days=30),
            not_after=now - dt.timedelta(days=1),
        )
        write_new(expired / f"{name}.key", key_pem(key), 0o600)
        write_new(expired / f"{name}.crt", cert_pem(cert), 0o644)
    (expired / "ca.crt").write_bytes((good / "ca.crt").read_bytes())
    return {"good": good, "other": other, "expired": expired}


def data(n=200, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.standard_normal((n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["x3"] += 0.5 * df.x1
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-(0.2 + df.x1 - 0.6 * df.x3 + 0.3 * df.x4)))).astype(float)
    df["id"] = [f"r{i}" for i in range(n)]
    return df


# --------------------------------------------------------------------------- party init
def test_init_writes_the_authority_and_one_identity_per_party(tmp_path, capsys):
    from cryptography import x509

    out = tmp_path / "certs"
    assert party_main(["init", "--names", "leader,hospital_a,hospital_b", "--out", str(out)]) == 0
    assert "keep ca.key offline" in capsys.readouterr().out
    ca = x509.load_pem_x509_certificate((out / "ca.crt").read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for name in ("leader", "hospital_a", "hospital_b"):
        assert stat.S_IMODE((out / f"{name}.key").stat().st_mode) == 0o600
        cert = x509.load_pem_x509_certificate((out / f"{name}.crt").read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.DNSName) == [name]
        assert cert.issuer == ca.subject
        ca.public_key().verify(  # signed by the authority
            cert.signature,
            cert.tbs_certificate_bytes,
            __import__("cryptography.hazmat.primitives.asymmetric.ec", fromlist=["ECDSA"]).ECDSA(
                cert.signature_hash_algorithm
            ),
        )
    assert stat.S_IMODE((out / "ca.key").stat().st_mode) == 0o600
    before = (out / "leader.key").read_bytes()
    assert party_main(["init", "--names", "leader,x", "--out", str(out)]) == 2  # never overwrites
    assert "refusing to overwrite" in capsys.readouterr().err
    assert (out / "leader.key").read_bytes() == before and not (out / "x.key").exists()
    assert party_main(["init", "--names", "a,a", "--out", str(tmp_path / "d")]) == 2
    assert party_main(["init", "--names", "a,b/c", "--out", str(tmp_path / "d")]) == 2


# --------------------------------------------------------------------------- fits in threads
def tls_parties(df, certs, timeout=5, names=("leader", "hospital_a", "hospital_b")):
    return [
        Party(
            df[["id", "y", "x1", "x2"]],
            name=names[0],
            tls=certs,
            formula="y ~ x1 + x2",
            row_id="id",
            timeout=timeout,
        ),
        Party(df[["id", "x3"]], name=names[1], tls=certs, row_id="id", timeout=timeout),
        Party(df[["id", "x4"]], name=names[2], tls=certs, row_id="id", timeout=timeout),
    ]


def test_three_parties_over_tls_equal_the_pooled_fit(pki):
    df = data()
    results, errors = run_on_loopback(tls_parties(df, pki["good"]), timeout=30, family="binomial")
    assert not errors, errors
    ref = sm.GLM(df.y, sm.add_constant(df[["x1", "x2", "x3", "x4"]]), family=sm.families.Binomial()).fit(
        tol=1e-14
    )
    for name in ("leader", "hospital_a", "hospital_b"):
        res = results[name]
        np.testing.assert_allclose(res.coefficients["estimate"], ref.params, rtol=1e-6)
        notes = " ".join(res.privacy.notes)
        assert "TLS 1.3" in notes and "Who learns what (exact mode)" in notes
    assert results["hospital_b"].parties == ["leader", "hospital_a", "hospital_b"]


def test_tls_contexts_refuse_older_versions_and_unverified_peers(pki):
    ctx = client_context(TLSCredentials.from_dir(pki["good"], "hospital_a"))
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_3 and ctx.verify_mode == ssl.CERT_REQUIRED


def test_name_must_be_in_own_certificate_and_tls_needs_names(pki):
    df = data(n=20)
    with pytest.raises(DataError, match="'hospital_b' is not in its certificate"):
        Party(df[["id", "x3"]], name="hospital_b", tls=TLSCredentials.from_dir(pki["good"], "hospital_a"))
    lead = Party(df[["id", "y", "x1"]], name="leader", tls=pki["good"], formula="y ~ x1", row_id="id")
    with pytest.raises(DataError, match="parties="):
        lead.serve(n_parties=2)
    with pytest.raises(DataError, match="leader's own name"):
        lead.serve(parties=["hospital_a", "hospital_b"])
    member = Party(df[["id", "x3"]], name="hospital_a", tls=pki["good"], row_id="id")
    with pytest.raises(DataError, match="leader='NAME'"):
        member.connect("127.0.0.1", 1)
    with pytest.raises(DataError, match="not both"):
        Party(df, "5a" * 32, name="leader", tls=pki["good"])
    with pytest.warns(DeprecationWarning, match="pre-shared-key channel"):
        Party(df, "5a" * 32, name="leader")


def test_member_refuses_a_leader_that_is_not_the_leader(pki):
    """hospital_b (a valid member certificate) poses as the leader: hospital_a sends nothing."""
    df = data(n=50)
    impostor = Party(
        df[["id", "y", "x1"]], name="hospital_b", tls=pki["good"], formula="y ~ x1", row_id="id", timeout=3
    )
    member = Party(df[["id", "x3"]], name="hospital_a", tls=pki["good"], row_id="id", timeout=3)
    port, errors = {}, {}

    def lead():
        errors["lead"] = _catch(
            lambda: impostor.serve(
                parties=["hospital_b", "hospital_a"],
                family="binomial",
                on_listening=lambda p: port.setdefault("p", p),
            )
        )

    t = threading.Thread(target=lead)
    t.start()
    deadline = time.monotonic() + 10
    while "p" not in port:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(
        ProtocolError, match="certificate for 'hospital_b', not the leader 'leader'; nothing was sent"
    ):
        member.connect("127.0.0.1", port["p"], leader="leader", retry_for=2)
    t.join(15)
    assert isinstance(errors["lead"], ProtocolError) and "hospital_a" in str(errors["lead"])


def _catch(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - returned to the test
        return exc
    return None


# --------------------------------------------------------------------------- faults, real processes
WAIT = 60  # seconds: the longest any subprocess wait may take


class Forked:
    """``dpstats party ...`` (``party_main``) in a forked process, stdout/stderr to files.

    A fork starts in milliseconds where a fresh interpreter needs seconds to import dpstats,
    so the test's timeouts stay short; the process is as real as a subprocess's."""

    def __init__(self, argv: list[str], tmp: Path, tag: str) -> None:
        self.out, self.err = tmp / f"{tag}.out", tmp / f"{tag}.err"
        self.proc = multiprocessing.get_context("fork").Process(
            target=_child, args=(argv, str(self.out), str(self.err))
        )
        self.proc.start()

    def poll(self):
        return self.proc.exitcode

    def communicate(self, timeout: float):
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
            raise AssertionError(f"a party did not finish within {timeout:g} s")
        return self.out.read_text(), self.err.read_text()

    @property
    def returncode(self):
        return self.proc.exitcode


def _child(argv, out, err):
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - pytest replaced the sys streams
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    code = 1
    try:
        code = party_main(argv)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_leader(tmp: Path, certs: Path, parties="leader,hospital_a", timeout=3, n=100, port=0, extra=()):
    """`dpstats party lead` in its own process (binomial, 2 parties); returns (process, port, data).

    With ``port=0`` it waits until the leader listens; with a fixed port it returns at once, so a
    member process can start alongside (it retries connecting for 5 s)."""
    df = data(n=n, seed=3)
    df[["id", "y", "x1", "x2"]].to_csv(tmp / "lead.csv", index=False)
    df[["id", "x3", "x4"]].to_csv(tmp / "a.csv", index=False)
    port_file = tmp / "port"
    proc = Forked(
        [
            "lead", "--data", str(tmp / "lead.csv"), "--formula", "y ~ x1 + x2", "--parties", parties,
            "--listen", f"127.0.0.1:{port}", "--port-file", str(port_file), "--tls-dir", str(certs),
            "--row-id", "id", "--family", "binomial", "--timeout", str(timeout),
            "--json", str(tmp / "lead.json"), *extra,
        ],
        tmp,
        "lead",
    )  # fmt: skip
    if port:
        return proc, port, df
    deadline = time.monotonic() + WAIT
    while not port_file.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate(timeout=WAIT)
        time.sleep(0.02)
    return proc, int(port_file.read_text()), df


def join_process(tmp: Path, port: int, name="hospital_a", tls=(), timeout=3):
    """`dpstats party join` in its own process."""
    return Forked(
        [
            "join", "--data", str(tmp / "a.csv"), "--name", name, "--leader", "leader",
            "--connect", f"127.0.0.1:{port}", "--row-id", "id", "--timeout", str(timeout),
            "--retry-for", "5", "--json", str(tmp / f"{name}.json"), *tls,
        ],
        tmp,
        name,
    )  # fmt: skip


def finish(proc):
    out, err = proc.communicate(timeout=WAIT)
    return proc.returncode, out, err


def rogue(port: int, certs: Path, df, name="hospital_a", timeout=5, dp=None) -> TLSChannel:
    """This test process as a member that follows the protocol up to its first update request."""
    ctx = client_context(TLSCredentials.from_dir(certs, name))
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    raw.settimeout(timeout)
    ch = TLSChannel(ctx.wrap_socket(raw), timeout=timeout, peer="leader")
    assert ch.recv("welcome")["type"] == "welcome"
    hello = {"type": "hello", "name": name, "n": len(df), "row_hash": m.row_id_hash(list(df["id"])),
             "terms": ["x3"], "dp": dp}  # fmt: skip
    ch.send(hello)
    assert ch.recv("setup")["type"] == "setup"
    assert ch.recv("update")["type"] == "update"
    return ch


def assert_stopped(proc, tmp: Path, *needles):
    code, _, err = finish(proc)
    assert code == 3, err
    for needle in needles:
        assert needle in err, err
    assert "[no result released" in err, err
    assert not (tmp / "lead.json").exists()  # nothing released
    return err


def test_member_that_disconnects_mid_sweep(tmp_path, pki):
    """Leader timeout 3 s; the rogue answers one update, takes the second and hangs up."""
    lead, port, df = start_leader(tmp_path, pki["good"])
    ch = rogue(port, pki["good"], df)
    ch.send({"type": "eta", "eta": np.zeros(len(df)), "change": 1.0})
    assert ch.recv("update")["type"] == "update"
    ch.close()
    assert_stopped(lead, tmp_path, "party 'hospital_a' disconnected", "its linear predictor", "sweep(s)")


def test_dp_member_that_disconnects_states_the_budget(tmp_path, pki):
    """DP mode (eps 1, ridge): the leader (timeout 3 s) stops, releases nothing, and says the fit's
    (eps, delta) counts as spent since a sweep of noised linear predictors ran."""
    (tmp_path / "b.json").write_text(json.dumps({"x1": [-3, 3], "x2": [-3, 3]}))
    dp_args = ("--eps", "1", "--delta", "1e-6", "--bounds", str(tmp_path / "b.json"), "--penalty", "ridge",
               "--lam", "0.1", "--rounds", "5")  # fmt: skip
    lead, port, df = start_leader(tmp_path, pki["good"], extra=dp_args)
    ch = rogue(port, pki["good"], df, dp={"eps": 1.0, "delta": 1e-6, "radius": 3.0, "seeded": False})
    ch.send({"type": "eta", "eta": np.zeros(len(df)), "change": 1.0})
    assert ch.recv("update")["type"] == "update"
    ch.close()
    assert_stopped(lead, tmp_path, "party 'hospital_a' disconnected", "1 sweep(s)", "count it as spent")


def test_dp_fit_over_tls_states_who_learns_what(pki):
    df = data(n=300)
    parties = tls_parties(df, pki["good"])
    bounds = {"x1": (-3, 3), "x2": (-3, 3), "x3": (-3, 3), "x4": (-3, 3)}
    dp_kw = dict(eps=1.0, delta=1e-6, bounds=bounds)
    results, errors = run_on_loopback(
        parties,
        timeout=30,
        member_kwargs={"hospital_a": dp_kw, "hospital_b": dp_kw},
        family="binomial",
        penalty="ridge",
        lam=0.1,
        rounds=3,
        **dp_kw,
    )
    assert not errors, errors
    for res in results.values():
        notes = " ".join(res.privacy.notes)
        assert "Channel: TLS 1.3" in notes and "Who learns what (DP mode)" in notes
        assert "curious leader" in notes and "traffic analysis" in notes
        assert sum(e.eps for e in res.privacy.ledger) == pytest.approx(1.0)


def test_member_that_stalls_times_out(tmp_path, pki):
    """Leader timeout 2 s; the rogue takes an update and answers nothing (held 4 s, then closed)."""
    lead, port, df = start_leader(tmp_path, pki["good"], timeout=2)
    ch = rogue(port, pki["good"], df)
    t0 = time.monotonic()
    err = assert_stopped(lead, tmp_path, "timed out after 2 s waiting for party 'hospital_a'")
    assert time.monotonic() - t0 < 2 + 10 and "its linear predictor" in err
    ch.close()


@pytest.mark.parametrize(
    "fault, needle",
    [
        (
            "wrong_sequence",
            "replayed or out-of-order message from party 'hospital_a' (sequence 7, expected 1)",
        ),
        ("replay", "replayed or out-of-order message from party 'hospital_a' (sequence 1, expected 2)"),
        ("truncated", "party 'hospital_a' disconnected mid-message (a truncated frame)"),
        ("oversized", "party 'hospital_a' sent a frame of 4000000000 bytes, above the limit"),
        ("malformed", "party 'hospital_a' sent a malformed message: header is not JSON"),
    ],
)
def test_bad_frames_inside_tls(tmp_path, pki, fault, needle):
    """Leader timeout 3 s; the rogue's answer to the first update is a bad frame inside TLS."""
    lead, port, df = start_leader(tmp_path, pki["good"])
    ch = rogue(port, pki["good"], df)
    good = encode({"type": "eta", "eta": np.zeros(len(df)), "change": 1.0})
    if fault == "wrong_sequence":
        ch.send_frame(7, good)
    elif fault == "replay":
        ch.send_frame(1, good)
        assert ch.recv("update")["type"] == "update"
        ch.send_frame(1, good)
    elif fault == "truncated":
        ch.sock.sendall(struct.pack(">IQ", len(good), 1) + good[:100])
        ch.sock.close()
    elif fault == "oversized":
        ch.sock.sendall(struct.pack(">IQ", 4_000_000_000, 1))
    else:
        ch.send_frame(1, struct.pack(">I", 5) + b"{nope")
    assert_stopped(lead, tmp_path, needle)
    ch.close()


@pytest.mark.parametrize("which", ["other_authority", "expired"])
def test_member_certificate_refused(tmp_path, pki, which):
    """Leader timeout 3 s; hospital_a's process presents a certificate the leader cannot accept."""
    lead, port, _ = start_leader(tmp_path, pki["good"], port=free_port())
    src = pki["other"] if which == "other_authority" else pki["expired"]
    tls = ("--tls-ca", str(pki["good"] / "ca.crt"), "--tls-cert", str(src / "hospital_a.crt"),
           "--tls-key", str(src / "hospital_a.key"))  # fmt: skip
    member = join_process(tmp_path, port, tls=tls)
    reason = "not signed by the consortium's authority" if which == "other_authority" else "has expired"
    err = assert_stopped(
        lead, tmp_path, "waiting for 'hospital_a' to connect", "refused a connection", reason
    )
    assert err.count("refused a connection") >= 1
    code, _, merr = finish(member)
    assert code == 3 and "leader 'leader'" in merr and ("expired" in merr or "authority" in merr), merr
    assert not (tmp_path / "hospital_a.json").exists()


def test_expired_or_foreign_leader_certificate_stops_the_member_before_sending(tmp_path, pki):
    """The member (timeout 3 s) refuses a leader whose certificate expired: nothing is sent."""
    lead, port, _ = start_leader(tmp_path, pki["expired"], port=free_port())
    member = join_process(tmp_path, port, tls=("--tls-dir", str(pki["good"])))
    code, _, merr = finish(member)
    assert code == 3 and "TLS handshake with the leader 'leader'" in merr and "expired" in merr
    assert "nothing was sent" in merr
    assert_stopped(lead, tmp_path, "waiting for 'hospital_a' to connect")


def test_name_not_in_parties_is_refused(tmp_path, pki):
    """hospital_c holds a valid certificate but is not in parties=: refused; the leader (3 s) waits on."""
    lead, port, _ = start_leader(tmp_path, pki["good"], port=free_port())
    member = join_process(tmp_path, port, name="hospital_c", tls=("--tls-dir", str(pki["good"])))
    code, _, merr = finish(member)
    assert code == 3 and "leader 'leader' refused this party" in merr
    assert "'hospital_c', not a party of this analysis" in merr
    assert_stopped(
        lead, tmp_path, "waiting for 'hospital_a' to connect", "'hospital_c', not a party of this analysis"
    )


def test_uninvited_connections_are_refused_and_the_fit_goes_on(tmp_path, pki):
    """Leader timeout 8 s.  Before hospital_a joins: an uninvited certified party, a plaintext client
    speaking the old pre-shared-key hello, and a TLS 1.2 client.  Each is refused by name or address;
    the invited fit completes and equals the pooled GLM."""
    lead, port, df = start_leader(tmp_path, pki["good"], timeout=8)
    with pytest.raises(ProtocolError, match="refused this party: the certificate names 'hospital_c'"):
        Party(df[["id", "x3", "x4"]], name="hospital_c", tls=pki["good"], row_id="id", timeout=3).connect(
            "127.0.0.1", port, leader="leader", retry_for=2
        )
    with socket.create_connection(("127.0.0.1", port), timeout=3) as plain:
        plain.sendall(b"DPSV1" + os.urandom(16))
        try:
            answer = plain.recv(100)  # the leader answers with a TLS alert at most, then closes
        except ConnectionResetError:
            answer = b""
        assert b"setup" not in answer
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(("127.0.0.1", port), timeout=3) as raw:
        with pytest.raises((ssl.SSLError, OSError)):
            old.wrap_socket(raw).recv(10)
    member = join_process(tmp_path, port, tls=("--tls-dir", str(pki["good"])))
    code, out, merr = finish(member)
    assert code == 0, merr
    lcode, _, lerr = finish(lead)
    assert lcode == 0, lerr
    assert lerr.count("refused a connection") == 3, lerr
    assert "'hospital_c', not a party of this analysis" in lerr and "TLS 1.3" in lerr
    res = json.loads((tmp_path / "lead.json").read_text())
    ref = sm.GLM(df.y, sm.add_constant(df[["x1", "x2", "x3", "x4"]]), family=sm.families.Binomial()).fit(
        tol=1e-14
    )
    np.testing.assert_allclose(res["tidy"]["estimate"], ref.params, rtol=1e-6)
    assert "TLS 1.3" in out


# --------------------------------------------------------------------------- the decoder, fuzzed
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(
            lambda head, tail: struct.pack(">I", len(head)) + head + tail,
            st.one_of(
                st.binary(max_size=80),
                st.recursive(
                    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
                    max_leaves=8,
                ).map(lambda v: json.dumps(v).encode()),
                st.lists(
                    st.tuples(st.text(max_size=3), st.lists(st.integers(-3, 2**70), max_size=3)), max_size=3
                ).map(lambda a: json.dumps({"type": "eta", "__arrays__": [list(x) for x in a]}).encode()),
            ),
            st.binary(max_size=64),
        ),
    )
)
def test_decoder_refuses_every_malformed_message_cleanly(payload):
    """Any bytes decode to a dict or raise ProtocolError; nothing else escapes (no crash, no pickle)."""
    try:
        out = decode(payload)
    except ProtocolError as exc:
        assert "malformed message" in str(exc)
    else:
        assert isinstance(out, dict)
        assert all(isinstance(v, np.ndarray) or not hasattr(v, "__array__") for v in out.values())


def test_encode_decode_roundtrip_and_failure_note():
    from dpstats.vertical.threat import failure_note

    x = np.arange(6.0).reshape(2, 3)
    got = decode(encode({"type": "t", "a": x, "s": np.array(2.0)}))
    assert np.array_equal(got["a"], x) and got["s"].shape == ()
    note = failure_note({"sent_setup": True, "sweeps": 3, "dp": True}, leader=True)
    assert "no result released" in note and "3 sweep(s)" in note and "count it as spent" in note
    assert "no data had been sent" in failure_note({"sent_setup": False, "dp": False}, leader=False)
