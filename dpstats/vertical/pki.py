"""A small certificate authority for a consortium of parties, and the TLS identities it issues.

``dpstats party init --names leader,hospital_a,hospital_b --out DIR`` calls :func:`init_consortium`:

* ``DIR/ca.key`` and ``DIR/ca.crt``: the consortium's authority (ECDSA P-256, self-signed, a CA
  with path length 0, so it can sign party certificates but no further authorities);
* ``DIR/<name>.key`` and ``DIR/<name>.crt`` for every name: the party's own key and a certificate
  signed by the authority, subject ``CN=<name>``, the name as a DNS subject alternative name
  (the identity the other parties check), usable as a TLS server and as a TLS client.

Keys are written with permissions 0600, certificates 0644; nothing is overwritten.  Whoever runs
``init`` holds every key for a moment: hand each party its own ``<name>.key`` and ``<name>.crt``
plus ``ca.crt`` over a secure channel, keep ``ca.key`` offline (it is needed only to issue a
new party certificate), and delete the other copies.  A party may instead make its key itself
and send a certificate signing request; with an institution's own PKI, point ``--tls-ca``,
``--tls-cert`` and ``--tls-key`` at its files (README, "Parties over the network").
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DPStatsError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


@dataclass(frozen=True)
class TLSCredentials:
    """The files of one party's TLS identity: the authority it trusts, its certificate and key.

    Parameters
    ----------
    ca : path
        PEM file with the certificate(s) of the authority that signs every party's certificate.
    cert : path
        PEM file with this party's certificate (and any intermediate certificates after it).
    key : path
        PEM file with this party's private key (unencrypted; keep it 0600).

    Examples
    --------
    >>> c = TLSCredentials.from_dir("certs", "hospital_a")
    >>> c.cert.name, c.key.name, c.ca.name
    ('hospital_a.crt', 'hospital_a.key', 'ca.crt')
    """

    ca: Path
    cert: Path
    key: Path

    def __post_init__(self) -> None:
        for field in ("ca", "cert", "key"):
            object.__setattr__(self, field, Path(getattr(self, field)))

    @classmethod
    def from_dir(cls, directory, name: str) -> TLSCredentials:
        """The files ``dpstats party init`` wrote for ``name``: ca.crt, <name>.crt, <name>.key."""
        d = Path(directory)
        return cls(ca=d / "ca.crt", cert=d / f"{name}.crt", key=d / f"{name}.key")

    def check(self) -> None:
        """Every file exists (the error names the missing one)."""
        for what, path in (("authority certificate", self.ca), ("certificate", self.cert), ("key", self.key)):
            if not path.is_file():
                raise DPStatsError(f"the TLS {what} file '{path}' does not exist.")


def check_names(names) -> list[str]:
    """Party names: unique, 1-63 characters of letters, digits, '.', '_' and '-'."""
    names = [str(n).strip() for n in names]
    if len(names) < 2:
        raise DPStatsError("give at least two party names, e.g. --names leader,hospital_a.")
    for n in names:
        if not _NAME.match(n):
            raise DPStatsError(
                f"party name {n!r} is not allowed: use 1-63 letters, digits, '.', '_' or '-' "
                "(it becomes a file name and the certificate's name)."
            )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DPStatsError(f"party names must be unique; repeated: {', '.join(dup)}.")
    return names


def _ec_key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_authority(name: str = "dpstats consortium CA", *, days: int = 825, not_before=None):
    """A fresh self-signed authority: (private key, certificate)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    key = _ec_key()
    start = not_before or _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(minutes=5)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + _dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def issue(ca_key, ca_cert, name: str, *, days: int = 825, not_before=None, not_after=None):
    """A party's (private key, certificate) signed by the authority; ``name`` in CN and SAN."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    key = _ec_key()
    start = not_before or _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(minutes=5)
    end = not_after or start + _dt.timedelta(days=days)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def cert_pem(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def write_new(path, data: bytes, mode: int) -> None:
    """Write a new file with ``mode`` (never overwrite; the mode is set at creation)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, mode)  # in case the umask narrowed or widened it


def init_consortium(names, out, *, days: int = 825) -> dict[str, Path]:
    """Make the authority and one key and certificate per party in ``out`` (see the module docstring).

    Returns the written paths by role (``"ca.crt"``, ``"ca.key"``, ``"<name>.crt"``, ...).
    Refuses, before writing anything, if any target file exists.

    Examples
    --------
    >>> import tempfile, stat
    >>> d = tempfile.mkdtemp()
    >>> paths = init_consortium(["leader", "b"], d)
    >>> sorted(paths)
    ['b.crt', 'b.key', 'ca.crt', 'ca.key', 'leader.crt', 'leader.key']
    >>> oct(stat.S_IMODE(paths["b.key"].stat().st_mode))
    '0o600'
    """
    names = check_names(names)
    if "ca" in names:
        raise DPStatsError("'ca' is reserved for the authority's files; choose another party name.")
    if not (isinstance(days, int) and days > 0):
        raise DPStatsError(f"days must be a positive integer, got {days!r}.")
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    targets = ["ca.key", "ca.crt"] + [f"{n}.{ext}" for n in names for ext in ("key", "crt")]
    existing = [t for t in targets if (d / t).exists()]
    if existing:
        raise DPStatsError(
            f"{d} already holds {', '.join(existing)}; refusing to overwrite keys. Choose a new --out."
        )
    ca_key, ca_cert = make_authority(days=days)
    paths = {"ca.key": d / "ca.key", "ca.crt": d / "ca.crt"}
    write_new(paths["ca.key"], key_pem(ca_key), 0o600)
    write_new(paths["ca.crt"], cert_pem(ca_cert), 0o644)
    for n in names:
        key, cert = issue(ca_key, ca_cert, n, days=days)
        paths[f"{n}.key"], paths[f"{n}.crt"] = d / f"{n}.key", d / f"{n}.crt"
        write_new(paths[f"{n}.key"], key_pem(key), 0o600)
        write_new(paths[f"{n}.crt"], cert_pem(cert), 0o644)
    return paths


__all__ = ["TLSCredentials", "check_names", "init_consortium", "issue", "make_authority"]
