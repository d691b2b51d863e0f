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
import ssl
import stat
import threading
import time

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from dpstats.errors import DataError
from dpstats.vertical import Party, ProtocolError, TLSCredentials, party_main, run_on_loopback
from dpstats.vertical.pki import cert_pem, init_consortium, issue, key_pem, write_new
from dpstats.vertical.tls import client_context

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
