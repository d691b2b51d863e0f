"""The parties' channel on TLS 1.3 with mutual authentication (an identity per party).

Each party holds its own key and a certificate signed by the consortium's authority
(:mod:`dpstats.vertical.pki`, or an institution's PKI).  The leader is the TLS server and
requires a client certificate; a member is the TLS client.  After the handshake each side
reads the other's name from its certificate (the DNS subject alternative names, or the
common name when there are none) and checks it: the leader against the names of the
analysis (``parties=``), a member against the leader's name it was given.  TLS below 1.3
and plaintext are refused by the handshake itself; the channel never falls back.

What TLS 1.3 adds over the pre-shared-key channel (:mod:`dpstats.vertical.channel`): a
party can no longer pose as another (its key signs only its own name); a stolen party key
does not open past sessions (ephemeral (EC)DHE key exchange: forward secrecy) and opens
future ones only until its certificate is replaced (there is no revocation list: make a
new authority); the record layer authenticates, encrypts and orders every byte.

Messages are the same as on the old channel (:func:`~dpstats.vertical.channel.encode`: a
JSON header and float64 arrays, never pickle), framed as 4-byte big-endian length ‖
8-byte sequence number ‖ payload.  The length is checked against the limit before the
payload is read; the receiver accepts exactly the next sequence number (TLS already
refuses replayed or reordered records; the check catches a confused or deviating peer).
"""

from __future__ import annotations

import socket
import ssl
import struct

from ..errors import DPStatsError
from .channel import DEFAULT_MAX_MESSAGE, PeerDisconnected, ProtocolError, decode, encode
from .pki import TLSCredentials

_FRAME = struct.Struct(">IQ")


def _context(creds: TLSCredentials, server: bool) -> ssl.SSLContext:
    creds.check()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.check_hostname = False  # the party name is checked by peer_names() against the analysis
    try:
        ctx.load_cert_chain(str(creds.cert), str(creds.key))
        ctx.load_verify_locations(cafile=str(creds.ca))
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise DPStatsError(
            f"cannot load the TLS files (certificate '{creds.cert}', key '{creds.key}', "
            f"authority '{creds.ca}'): {exc}"
        ) from None
    return ctx


def server_context(creds: TLSCredentials) -> ssl.SSLContext:
    """The leader's context: TLS 1.3 only, a client certificate from the authority required."""
    return _context(creds, server=True)


def client_context(creds: TLSCredentials) -> ssl.SSLContext:
    """A member's context: TLS 1.3 only, the leader's certificate verified against the authority."""
    return _context(creds, server=False)


def peer_names(sock: ssl.SSLSocket) -> list[str]:
    """The names a verified peer certificate vouches for: its DNS SANs, else its common name."""
    cert = sock.getpeercert() or {}
    sans = [v for k, v in cert.get("subjectAltName", ()) if k == "DNS"]
    if sans:
        return sans
    return [v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"]


def describe_tls_error(exc: BaseException) -> str:
    """A TLS failure in words, with the usual cause."""
    reason = getattr(exc, "reason", None) or str(exc)
    text = str(getattr(exc, "verify_message", None) or reason)
    low = (text + " " + str(exc)).lower()
    if "expired" in low:
        hint = "a certificate has expired"
    elif "unknown ca" in low or "unable to get local issuer" in low or "self-signed" in low:
        hint = "a certificate was not signed by the consortium's authority"
    elif "certificate required" in low or "peer did not return a certificate" in low:
        hint = "no client certificate was presented"
    elif "wrong version" in low or "unsupported protocol" in low or "protocol version" in low:
        hint = "the other side does not speak TLS 1.3 (plaintext or an older TLS version)"
    elif "bad certificate" in low or "certificate unknown" in low or "decrypt error" in low:
        hint = "the other side rejected this party's certificate"
    else:
        hint = "TLS failure"
    return f"{hint} ({text})"


class TLSChannel:
    """Framed messages over a TLS 1.3 socket whose handshake is done (see the module docstring).

    Parameters
    ----------
    sock : ssl.SSLSocket
        A connected socket after a successful, mutually authenticated handshake.
    timeout : float
        Seconds to wait for any one read or write.
    max_message : int
        Largest accepted message in bytes (checked before reading it).
    peer : str
        Used in error messages, e.g. ``"party 'hospital_a'"``.
    """

    kind = "tls"

    def __init__(
        self,
        sock: ssl.SSLSocket,
        *,
        timeout: float = 60.0,
        max_message: int = DEFAULT_MAX_MESSAGE,
        peer: str = "peer",
    ) -> None:
        self.sock, self.peer = sock, peer
        self.timeout, self.max_message = float(timeout), int(max_message)
        self.sock.settimeout(self.timeout)
        self._send_seq = self._recv_seq = 0
        self.bytes_sent = self.bytes_received = 0

    @property
    def ready(self) -> bool:
        return True

    def send(self, message: dict) -> None:
        """Send one message."""
        payload = encode(message)
        if len(payload) > self.max_message:
            raise ProtocolError(f"message of {len(payload)} bytes exceeds the limit of {self.max_message}")
        self.send_frame(self._send_seq, payload)
        self._send_seq += 1

    def send_frame(self, seq: int, payload: bytes) -> None:
        """One raw frame (tests use it to send a wrong sequence number)."""
        self._sendall(_FRAME.pack(len(payload), seq) + payload)

    def recv(self, waiting_for: str = "a message") -> dict:
        """Receive one message: the length is checked before reading, then the sequence number."""
        length, seq = _FRAME.unpack(self._recv_exact(_FRAME.size, waiting_for))
        if length > self.max_message:
            raise ProtocolError(
                f"{self.peer} sent a frame of {length} bytes, above the limit of {self.max_message}; refusing it"
            )
        if seq != self._recv_seq:
            raise ProtocolError(
                f"replayed or out-of-order message from {self.peer} (sequence {seq}, "
                f"expected {self._recv_seq}); refusing it"
            )
        payload = self._recv_exact(length, waiting_for)
        self._recv_seq += 1
        try:
            return decode(payload)
        except ProtocolError as exc:
            raise ProtocolError(f"{self.peer} sent a {exc}") from None

    def _sendall(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise ProtocolError(f"timed out after {self.timeout:g} s sending to {self.peer}") from None
        except ssl.SSLError as exc:
            raise ProtocolError(f"TLS error sending to {self.peer}: {describe_tls_error(exc)}") from None
        except OSError as exc:
            raise PeerDisconnected(f"connection to {self.peer} lost while sending ({exc})") from None
        self.bytes_sent += len(data)

    def _recv_exact(self, size: int, waiting_for: str) -> bytes:
        buf = bytearray(size)
        view, got = memoryview(buf), 0
        while got < size:
            try:
                k = self.sock.recv_into(view[got:], min(size - got, 1 << 20))
            except TimeoutError:
                raise ProtocolError(
                    f"timed out after {self.timeout:g} s waiting for {self.peer} ({waiting_for})"
                ) from None
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
                k = 0  # the peer closed (with or without TLS's close_notify)
            except ssl.SSLError as exc:
                raise ProtocolError(
                    f"TLS error from {self.peer} while waiting for {waiting_for}: {describe_tls_error(exc)}"
                ) from None
            except OSError as exc:
                raise PeerDisconnected(
                    f"connection to {self.peer} lost ({exc}) while waiting for {waiting_for}"
                ) from None
            if not k:
                where = "mid-message (a truncated frame)" if got else "while we were waiting"
                raise PeerDisconnected(f"{self.peer} disconnected {where} for {waiting_for}")
            got += k
        self.bytes_received += size
        return bytes(buf)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def accept_tls(listener: socket.socket, ctx: ssl.SSLContext, timeout: float):
    """Accept one connection and run the TLS handshake; returns (ssl socket, address)."""
    raw, addr = listener.accept()
    raw.settimeout(timeout)
    try:
        sock = ctx.wrap_socket(raw, server_side=True)
    except BaseException:
        raw.close()
        raise
    return sock, addr


def connect_tls(raw: socket.socket, ctx: ssl.SSLContext, timeout: float) -> ssl.SSLSocket:
    """Run a member's TLS handshake on a connected socket."""
    raw.settimeout(timeout)
    try:
        return ctx.wrap_socket(raw, server_side=False)
    except BaseException:
        raw.close()
        raise


__all__ = ["TLSChannel", "client_context", "peer_names", "server_context", "describe_tls_error"]
