"""The R package's channel to Python: a request loop in a child process of R.

``r_wrapper/R/channel.R`` starts ``python -c <bootstrap> <dir> <R's pid>`` with its standard
input and output redirected to two FIFOs in a fresh directory that only the user can open (mode
0700, checked here; R removes the directory once both ends are open, so nothing else can reach
them).  When R exits, its end of the input closes and the loop ends; should a process R started
hold that end open (children inherit R's descriptors), a watch on R's pid ends this process too.

Every message, either way, is a *frame*::

    two little-endian float64: the header's length in bytes, the number k of attachments;
    k little-endian float64: the attachments' lengths in bytes;
    the header, UTF-8 JSON;
    the attachments, raw bytes.

R's request header is ``{"op": ..., "args": [...], "release": [...]}``.  Inside ``args``,
``{"$dpstats": ["raw", i]}`` stands for attachment ``i`` (the data frames' columns, never
base64), ``{"$dpstats": ["handle", id, token]}`` for an object this process returned earlier,
and ``{"$dpstats": ["bridge"]}`` for :mod:`dpstats.rbridge` itself.  The ops are
:func:`dpstats.rbridge.call_from_r` (its result's JSON text comes back as attachment 0),
:func:`dpstats.rbridge.has_function`, ``has_method`` (a public method of a kept object) and ``echo`` (the arguments sent back,
attachments as attachments: the channel's tests).  A returned object that is not
plain data (a fit, an accountant) stays here and R gets a handle for it; ``release`` lists
handles R no longer holds.  Handles carry the session token of the process that made them: one
from another process (a fit saved and reloaded, or made before a restart) is refused as stale.

The first frame this process writes says hello: its pid, the session token and the interpreter.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import stat
import struct
import sys
import threading
import time
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from . import rbridge
from ._io import jsonable
from ._version import __version__
from .errors import DPStatsError

PIPE_BYTES = 1 << 20  # pipe buffer asked of Linux: 1 MiB, 16 times the default
_PLAIN = (
    type(None),
    bool,
    int,
    float,
    str,
    list,
    tuple,
    dict,
    np.ndarray,
    np.generic,
    pd.DataFrame,
    pd.Series,
)


class StaleError(DPStatsError):
    """An object of another Python session, or one R released (R: ``dpstats_stale_error``)."""


class ChannelError(DPStatsError):
    """The channel cannot be used as it is (R: ``dpstats_channel_error``)."""


class CallInterruptedError(DPStatsError):
    """A call stopped by Ctrl-C (R: ``dpstats_call_interrupted_error``)."""


# =========================================================================== frames
def write_frame(stream: BinaryIO, header: dict, blobs: list[bytes] = ()) -> None:
    """Write one frame: the header as JSON, then the attachments as they are."""
    text = json.dumps(header).encode()
    stream.write(struct.pack(f"<{2 + len(blobs)}d", len(text), len(blobs), *(len(b) for b in blobs)))
    stream.write(text)
    for blob in blobs:
        stream.write(blob)
    stream.flush()


def read_frame(stream: BinaryIO) -> tuple[bytes, list[bytes]] | None:
    """Read one frame: the header's bytes and the attachments; ``None`` at the end of the input.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> write_frame(buf, {"op": "echo"}, [b"\\x00\\x01"])
    >>> _ = buf.seek(0)
    >>> read_frame(buf)
    (b'{"op": "echo"}', [b'\\x00\\x01'])
    >>> read_frame(buf) is None
    True
    """
    head = stream.read(16)
    if not head:
        return None
    size, count = struct.unpack("<2d", _exactly(stream, head, 16))
    lengths = struct.unpack(f"<{int(count)}d", _exactly(stream, stream.read(8 * int(count)), 8 * int(count)))
    header = _exactly(stream, stream.read(int(size)), int(size))
    return header, [_exactly(stream, stream.read(int(n)), int(n)) for n in lengths]


def _exactly(stream: BinaryIO, data: bytes, n: int) -> bytes:
    while len(data) < n:  # a raw stream may return less; a buffered one only at the end
        more = stream.read(n - len(data))
        if not more:
            raise EOFError(f"the channel closed inside a frame ({len(data)} of {n} bytes).")
        data += more
    return data


# =========================================================================== session
class Session:
    """The objects R holds handles to, and the token that names this process."""

    def __init__(self, token: str | None = None):
        self.token = token or secrets.token_hex(16)
        self.objects: dict[int, Any] = {}
        self._next = 1

    def keep(self, obj) -> dict | None:
        """A handle for ``obj``, kept until released; ``None`` for plain data (R has its value)."""
        if isinstance(obj, _PLAIN):
            return None
        ident, self._next = self._next, self._next + 1
        self.objects[ident] = obj
        return {"id": ident, "token": self.token, "type": type(obj).__name__}

    def get(self, ident, token):
        if token != self.token:
            raise StaleError(
                "this object belongs to another Python session (it was saved and reloaded, or Python "
                "restarted); refit it."
            )
        try:
            return self.objects[int(ident)]
        except (KeyError, TypeError, ValueError):
            raise StaleError(f"this object (handle {ident}) was released; refit it.") from None

    def release(self, idents) -> None:
        for ident in idents or ():
            self.objects.pop(int(ident), None)

    def decode(self, header: bytes, blobs: list[bytes]) -> dict:
        """The request with its references resolved: attachments, kept objects, the bridge."""

        def resolve(d: dict):
            ref = d.get("$dpstats")
            if ref is None or len(d) != 1:
                return d
            if ref[0] == "raw":
                return blobs[ref[1]]
            if ref[0] == "handle":
                return self.get(ref[1], ref[2])
            if ref[0] == "bridge":
                return rbridge
            raise ChannelError(f"unknown reference {ref!r}.")

        return json.loads(header, object_hook=resolve)

    def answer(self, request: dict) -> tuple[dict, list[bytes]]:
        """The response to one decoded request."""
        op, args = request.get("op"), request.get("args") or []
        if op == "call_from_r":
            out = rbridge.call_from_r(*args)
            return _head(out, self.keep(out.object) if out.ok else None), [out.json.encode()]
        if op == "has_function":
            value = rbridge.has_function(*args)
        elif op == "has_method":
            obj, name = args
            value = not name.startswith("_") and callable(getattr(obj, name, None))
        elif op == "echo":  # the arguments as they arrived (the channel's own tests)
            blobs: list[bytes] = []
            return {"ok": True, "value": _outgoing(args, blobs)}, blobs
        else:
            raise ChannelError(f"unknown request {op!r}.")
        return {"ok": True, "value": value}, []


def _outgoing(value, blobs: list[bytes]):
    """``value`` as JSON-able data, its bytes as attachments (referenced as in requests)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        blobs.append(bytes(value))
        return {"$dpstats": ["raw", len(blobs) - 1]}
    if isinstance(value, dict):
        return {str(k): _outgoing(v, blobs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_outgoing(v, blobs) for v in value]
    return jsonable(value)


def _head(call: rbridge.RCall, handle: dict | None = None) -> dict:
    """A call's response header: its fields, with a handle for the object it returned (its JSON text
    travels as an attachment)."""
    return {
        "ok": call.ok,
        "object": handle,
        "warnings": call.warnings,
        "error_classes": call.error_classes,
        "error_message": call.error_message,
    }


def _failure(exc: BaseException) -> dict:
    return _head(rbridge.RCall.failure(exc))


class _Busy:
    """Whether a request is being answered: only then does SIGINT interrupt (see :func:`on_sigint`)."""

    now = False


def on_sigint(signum, frame) -> None:
    """Ctrl-C at R's terminal reaches this process too (it shares R's process group): it stops the
    call being answered, which then answers as an error, and is ignored between calls.

    One that lands inside an import is delivered again once the import is done (50 ms later): an
    import stopped half-way leaves its package unusable for the rest of the session (scipy.ndimage
    then raised NameError on every call), and a first call, which imports, is the one a user stops.
    """
    if not _Busy.now:
        return
    if _importing(frame):
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    raise KeyboardInterrupt


def _importing(frame) -> bool:
    """Whether ``frame`` runs inside an import (a frame of importlib's bootstrap on its stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def serve(inp: BinaryIO, out: BinaryIO, session: Session) -> None:
    """Answer requests until R closes the input."""
    while True:
        frame = read_frame(inp)
        if frame is None:
            return
        try:
            _Busy.now = True
            request = session.decode(*frame)
            session.release(request.get("release"))
            head, blobs = session.answer(request)
        except KeyboardInterrupt:
            stopped = CallInterruptedError(
                "the call was interrupted (Ctrl-C) and returned nothing; an accountant it was given may have been charged."
            )
            head, blobs = _failure(stopped), []
        except Exception as exc:  # every failure crosses to R as a condition; the loop goes on
            head, blobs = _failure(exc), []
        finally:
            _Busy.now = False
        write_frame(out, head, blobs)


# =========================================================================== process
def check_private(directory: str) -> None:
    """Refuse a channel directory that another user could open.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.chmod(d, 0o755)
    >>> check_private(d)
    Traceback (most recent call last):
    ...
    dpstats.rpipe.ChannelError: the channel directory ... can be opened by other users (mode 0755); it must be 0700 and yours.
    >>> os.chmod(d, 0o700); check_private(d); os.rmdir(d)
    """
    st = os.stat(directory)
    if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077 or not stat.S_ISDIR(st.st_mode):
        raise ChannelError(
            f"the channel directory {directory} can be opened by other users "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); it must be 0700 and yours."
        )


def _take_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The channel's ends, moved off fds 0 and 1 (and not inherited by subprocesses): printed output
    goes to R's console with the errors, never into the channel."""
    inp, out = open(os.dup(0), "rb"), open(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout.reconfigure(line_buffering=True)
    for stream in (inp, out):
        try:  # fewer, larger reads for R (Linux; elsewhere the default buffer)
            import fcntl

            fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass
    return inp, out


def watch(pid: int, every: float = 1.0) -> threading.Thread:
    """End this process once the process ``pid`` (R) has gone."""

    def run():
        while True:
            time.sleep(every)
            try:
                os.kill(pid, 0)
            except OSError:  # gone, or the pid now names another user's process
                os._exit(0)

    thread = threading.Thread(target=run, name="dpstats-rpipe-watch", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> int:
    """Serve R on this process's standard input and output (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    inp, out = _take_stdio()
    session = Session()
    try:
        check_private(argv[0])
    except (ChannelError, IndexError, OSError) as exc:
        write_frame(out, _failure(exc if isinstance(exc, ChannelError) else ChannelError(str(exc))))
        return 2
    if len(argv) > 1:
        watch(int(argv[1]))
    signal.signal(signal.SIGINT, on_sigint)
    hello = {"ok": True, "pid": os.getpid(), "token": session.token, "python": sys.executable}
    write_frame(out, {**hello, "version": __version__})
    try:
        serve(inp, out, session)
    except (BrokenPipeError, EOFError):  # R went away
        pass
    return 0
