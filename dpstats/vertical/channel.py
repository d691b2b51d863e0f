"""The deprecated pre-shared-key channel (``channel="psk"``), and the message format of both channels.

Use the TLS 1.3 channel (:mod:`dpstats.vertical.tls`) instead: here every party holds the same key,
so any party can pose as the leader or another member, and a leaked key opens every recorded and
future session (no forward secrecy).  It stays, deprecated, for deployments that have not made
certificates yet and as the baseline of ``benchmarks/bench_vertical_tls.py``.

Wire protocol (version 1), over one TCP connection:

1. Hello, in the clear: ``b"DPSV1"`` + a fresh 16-byte random nonce from each
   side (member first, then leader).
2. Keys: HKDF-SHA256 of the pre-shared key, salt = member nonce ‖ leader
   nonce, one 32-byte key per direction (info ``"dpstats-vertical v1
   leader->member"`` and ``"... member->leader"``).  Fresh nonces give fresh
   keys every session; separate keys per direction.
3. Frames: 4-byte big-endian length ‖ 8-byte sequence number ‖ AES-256-GCM
   ciphertext+tag.  The GCM nonce is the 96-bit sequence number (never reused
   under one key: it only counts up); the header (magic, direction, sequence
   number) is authenticated as associated data.  The receiver accepts exactly
   the next sequence number, so replayed, dropped or reordered frames fail.
4. Payload: a JSON header (UTF-8) naming float64 arrays, then the arrays'
   bytes; never pickle.  Lengths are checked before reading and decoding.

privreg used AES-CBC without authentication and an MD5-derived key; here a
tampered byte, a wrong key or a replay is a :class:`ProtocolError`.
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct

import numpy as np

from ..errors import DPStatsError

MAGIC = b"DPSV1"
NONCE_BYTES = 16
DEFAULT_MAX_MESSAGE = 256 * 1024 * 1024
_ROLES = ("leader", "member")


class ProtocolError(DPStatsError):
    """A network or protocol failure: disconnect, timeout, tampering, wrong key, abort."""


class PeerDisconnected(ProtocolError):
    """The other party closed the connection."""


def load_key(key: bytes | str) -> bytes:
    """A pre-shared key: at least 32 bytes, or a hex string of at least 64 digits.

    Examples
    --------
    >>> len(load_key("00" * 32))
    32
    """
    if isinstance(key, str):
        try:
            key = bytes.fromhex(key.strip())
        except ValueError:
            raise ProtocolError(
                "the pre-shared key string must be hexadecimal (e.g. from `dpstats party keygen`)."
            ) from None
    if not isinstance(key, (bytes, bytearray)) or len(key) < 32:
        raise ProtocolError(
            "the pre-shared key must have at least 32 bytes (256 bits); "
            "make one with `dpstats party keygen --out KEYFILE`."
        )
    return bytes(key)


def derive_keys(psk: bytes, salt: bytes) -> dict[str, bytes]:
    """One AES-256 key per direction from the pre-shared key and the session salt (HKDF-SHA256)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    out = {}
    for direction in ("leader->member", "member->leader"):
        hkdf = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=salt, info=f"dpstats-vertical v1 {direction}".encode()
        )
        out[direction] = hkdf.derive(psk)
    return out


def encode(message: dict) -> bytes:
    """JSON header + raw little-endian float64 arrays (no pickle)."""
    header, blobs = {}, []
    arrays = []
    for k, v in message.items():
        if isinstance(v, np.ndarray):
            a = np.asarray(v, dtype="<f8", order="C")  # keeps 0-d arrays 0-d
            arrays.append([k, list(a.shape)])
            blobs.append(a.tobytes())
        else:
            header[k] = v
    header["__arrays__"] = arrays
    head = json.dumps(header).encode("utf-8")
    return struct.pack(">I", len(head)) + head + b"".join(blobs)


def decode(payload: bytes) -> dict:
    """Inverse of :func:`encode`, checking every length and type before reading.

    Any input either decodes to a dict or raises :class:`ProtocolError`
    (``tests/test_vertical_tls.py`` fuzzes it).
    """
    if len(payload) < 4:
        raise ProtocolError("malformed message: too short")
    (hlen,) = struct.unpack(">I", payload[:4])
    if 4 + hlen > len(payload):
        raise ProtocolError("malformed message: header longer than the message")
    try:
        header = json.loads(payload[4 : 4 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolError("malformed message: header is not JSON") from None
    if not isinstance(header, dict):
        raise ProtocolError("malformed message: header is not a JSON object")
    arrays = header.pop("__arrays__", [])
    if not isinstance(arrays, list):
        raise ProtocolError("malformed message: the array list is not a list")
    pos = 4 + hlen
    for item in arrays:
        ok = isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
        shape = item[1] if ok else None
        if not (
            isinstance(shape, list)
            and len(shape) <= 2
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        ):
            raise ProtocolError("malformed message: an array entry is not [name, shape of 0-2 sizes]")
        name = item[0]
        count = math.prod(shape)  # Python integers: no overflow
        if count > (len(payload) - pos) // 8:
            raise ProtocolError(f"malformed message: array {name!r} overruns the message")
        end = pos + 8 * count
        header[name] = np.frombuffer(payload[pos:end], dtype="<f8").reshape(tuple(shape)).astype(float)
        pos = end
    if pos != len(payload):
        raise ProtocolError("malformed message: trailing bytes")
    return header


class SecureChannel:
    """An AES-256-GCM channel over a connected socket (see the module docstring).

    Parameters
    ----------
    sock : socket.socket
        A connected TCP socket.
    psk : bytes
        Pre-shared key (≥ 32 bytes).
    role : {"leader", "member"}
    timeout : float
        Seconds to wait for any one read or write.
    max_message : int
        Largest accepted frame in bytes (checked before reading it).
    peer : str
        Name used in error messages.
    """

    def __init__(
        self,
        sock: socket.socket,
        psk: bytes,
        role: str,
        *,
        timeout: float = 60.0,
        max_message: int = DEFAULT_MAX_MESSAGE,
        peer: str = "peer",
    ) -> None:
        if role not in _ROLES:
            raise ValueError(f"role must be one of {_ROLES}")
        self.sock, self.role, self.peer = sock, role, peer
        self.timeout, self.max_message = float(timeout), int(max_message)
        self.sock.settimeout(self.timeout)
        self._psk = load_key(psk)
        self._send_seq = 0
        self._recv_seq = 0
        self._send = self._recv = None
        self.bytes_sent = self.bytes_received = 0  # frames, headers included (benchmarks)

    kind = "psk"

    @property
    def ready(self) -> bool:
        """True once the handshake has given this session its keys."""
        return self._send is not None

    # ------------------------------------------------------------------ handshake
    def handshake(self) -> None:
        """Exchange fresh nonces and derive this session's keys."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        mine = os.urandom(NONCE_BYTES)
        if self.role == "member":
            self._sendall(MAGIC + mine)
            theirs = self._hello()
            salt = mine + theirs
        else:
            theirs = self._hello()
            self._sendall(MAGIC + mine)
            salt = theirs + mine
        keys = derive_keys(self._psk, salt)
        out_dir = "leader->member" if self.role == "leader" else "member->leader"
        in_dir = "member->leader" if self.role == "leader" else "leader->member"
        self._send, self._recv = AESGCM(keys[out_dir]), AESGCM(keys[in_dir])
        self._out_dir, self._in_dir = out_dir.encode(), in_dir.encode()

    def _hello(self) -> bytes:
        data = self._recv_exact(len(MAGIC) + NONCE_BYTES, "the handshake")
        if data[: len(MAGIC)] != MAGIC:
            raise ProtocolError(f"{self.peer} does not speak the dpstats vertical protocol v1")
        return data[len(MAGIC) :]

    # ------------------------------------------------------------------ frames
    def send(self, message: dict) -> None:
        """Encrypt and send one message."""
        if self._send is None:
            raise ProtocolError("handshake not done")
        payload = encode(message)
        if len(payload) > self.max_message:
            raise ProtocolError(f"message of {len(payload)} bytes exceeds the limit of {self.max_message}")
        seq = self._send_seq
        if seq >= 2**64 - 1:
            raise ProtocolError("sequence numbers exhausted; start a new session")
        ct = self._send.encrypt(seq.to_bytes(12, "big"), payload, self._aad(self._out_dir, seq))
        self._sendall(struct.pack(">IQ", len(ct), seq) + ct)
        self._send_seq += 1

    def recv(self, waiting_for: str = "a message") -> dict:
        """Receive, authenticate, check the sequence number, decrypt and decode one message."""
        if self._recv is None:
            raise ProtocolError("handshake not done")
        length, seq = struct.unpack(">IQ", self._recv_exact(12, waiting_for))
        if length > self.max_message + 16:
            raise ProtocolError(
                f"{self.peer} sent a frame of {length} bytes, above the limit of "
                f"{self.max_message}; refusing it"
            )
        ct = self._recv_exact(length, waiting_for)
        if seq != self._recv_seq:
            raise ProtocolError(
                f"replayed or out-of-order message from {self.peer} (sequence {seq}, "
                f"expected {self._recv_seq}); refusing it"
            )
        from cryptography.exceptions import InvalidTag

        try:
            payload = self._recv.decrypt(seq.to_bytes(12, "big"), ct, self._aad(self._in_dir, seq))
        except InvalidTag:
            raise ProtocolError(
                f"message from {self.peer} failed authentication: it was tampered with, "
                "or the parties use different pre-shared keys"
            ) from None
        self._recv_seq += 1
        return decode(payload)

    @staticmethod
    def _aad(direction: bytes, seq: int) -> bytes:
        return MAGIC + direction + seq.to_bytes(8, "big")

    def _sendall(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise ProtocolError(f"timed out after {self.timeout:g} s sending to {self.peer}") from None
        except OSError as exc:
            raise PeerDisconnected(f"connection to {self.peer} lost while sending ({exc})") from None
        self.bytes_sent += len(data)

    def _recv_exact(self, size: int, waiting_for: str) -> bytes:
        buf = bytearray()
        while len(buf) < size:
            try:
                chunk = self.sock.recv(min(size - len(buf), 1 << 20))
            except TimeoutError:
                raise ProtocolError(
                    f"timed out after {self.timeout:g} s waiting for {self.peer} ({waiting_for})"
                ) from None
            except OSError as exc:
                raise PeerDisconnected(
                    f"connection to {self.peer} lost ({exc}) while waiting for {waiting_for}"
                ) from None
            if not chunk:
                raise PeerDisconnected(f"{self.peer} disconnected while we were waiting for {waiting_for}")
            buf += chunk
        self.bytes_received += size
        return bytes(buf)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
