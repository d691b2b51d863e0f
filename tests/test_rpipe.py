"""dpstats.rpipe, the R package's channel, driven from Python as R drives it: frames, handles,
the privacy check, printed output kept off the channel, and the end of the process."""

from __future__ import annotations

import io
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dpstats import rbridge, rpipe

ROOT = Path(__file__).resolve().parents[1]


def _transport(n: int = 40, seed: int = 0) -> tuple[dict, list[bytes]]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = 3 * x[:, 0] - 2 * x[:, 1] + rng.normal(size=n)
    numeric = np.column_stack([y, x]).ravel(order="F").astype("<f8").tobytes()
    t = {
        "names": ["y", "a", "b", "c", "d"],
        "n": n,
        "kinds": ["double"] * 5,
        "numeric": {"$dpstats": ["raw", 0]},
        "codes": {"$dpstats": ["raw", 1]},
        "levels": [],
    }
    return t, [numeric, b""]


def test_frames_round_trip_through_a_pipe_that_returns_short_reads():
    """A 6 MB attachment through an OS pipe (reads return at most the pipe's buffer)."""
    blob = np.arange(750_000, dtype="<f8").tobytes()
    r, w = os.pipe()
    with open(r, "rb", buffering=0) as inp, open(w, "wb") as out:
        writer = threading.Thread(target=rpipe.write_frame, args=(out, {"op": "echo", "é": 1}, [b"", blob]))
        writer.start()
        header, blobs = rpipe.read_frame(inp)
        writer.join()
    assert json.loads(header) == {"op": "echo", "é": 1}
    assert blobs == [b"", blob]


def test_a_frame_cut_short_is_an_error():
    buf = io.BytesIO()
    rpipe.write_frame(buf, {"op": "echo"}, [b"abcdef"])
    with pytest.raises(EOFError):
        rpipe.read_frame(io.BytesIO(buf.getvalue()[:-2]))


def test_session_keeps_objects_not_plain_data_and_refuses_other_sessions():
    s = rpipe.Session()
    assert s.keep({"a": 1}) is None and s.keep(np.arange(3)) is None
    acc = rbridge.new_accountant(1.0)
    h = s.keep(acc)
    assert h["type"] == "Accountant" and h["token"] == s.token
    assert s.get(h["id"], s.token) is acc
    with pytest.raises(rpipe.StaleError, match="another Python session") as err:
        s.get(h["id"], "0" * 32)
    assert rbridge.condition_classes(err.value) == ["dpstats_stale_error", "dpstats_error"]
    s.release([h["id"]])
    with pytest.raises(rpipe.StaleError, match="released"):
        s.get(h["id"], s.token)


def test_requests_resolve_attachments_handles_and_the_bridge():
    s = rpipe.Session()
    h = s.keep(rbridge.new_accountant(2.0))
    t, blobs = _transport()
    header = json.dumps(
        {
            "op": "call_from_r",
            "args": [
                "accountant_state",
                [],
                {"acc": {"$dpstats": ["handle", h["id"], s.token]}},
                [],
                {"$dpstats": ["bridge"]},
            ],
            "data": t,
        }
    ).encode()
    req = s.decode(header, blobs)
    assert req["args"][4] is rbridge and req["data"]["numeric"] is blobs[0]
    head, out = s.answer(req)
    assert head["ok"] and head["object"] is None  # a dict: R has its value
    assert json.loads(out[0])["value"]["eps"] == 2.0


def test_a_failure_is_an_answer_not_the_end_of_the_loop():
    s = rpipe.Session()
    inp, out = io.BytesIO(), io.BytesIO()
    rpipe.write_frame(inp, {"op": "has_method", "args": [{"$dpstats": ["handle", 9, "stale"]}, "predict"]})
    rpipe.write_frame(inp, {"op": "no_such_op", "args": []})
    rpipe.write_frame(inp, {"op": "has_function", "args": ["dp_sis"]})
    inp.seek(0)
    rpipe.serve(inp, out, s)
    out.seek(0)
    answers = [json.loads(rpipe.read_frame(out)[0]) for _ in range(3)]
    assert answers[0]["error_classes"] == ["dpstats_stale_error", "dpstats_error"]
    assert answers[1]["error_classes"] == ["dpstats_channel_error", "dpstats_error"]
    assert answers[2] == {"ok": True, "value": True}


# ---- the process, started as R starts it (stdin and stdout the channel)

NOISY = """
import sys
import dpstats.rpipe as r
answer = r.Session.answer
def noisy(self, request):
    print("noise from Python")  # a print() inside a call: it must not reach the channel
    if request.get("args") == ["sleep"]:
        import time
        time.sleep(30)
    return answer(self, request)
r.Session.answer = noisy
sys.exit(r.main(sys.argv[1:]))
"""


def _child(directory: str, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, "-c", NOISY, directory, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _ask(proc: subprocess.Popen, header: dict, blobs: list[bytes] = ()) -> tuple[dict, list[bytes]]:
    rpipe.write_frame(proc.stdin, header, list(blobs))
    head, out = rpipe.read_frame(proc.stdout)
    return json.loads(head), out


def test_the_child_serves_a_fit_keeps_it_and_ends_at_the_end_of_its_input():
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        proc = _child(d)
        hello = json.loads(rpipe.read_frame(proc.stdout)[0])
        assert hello["ok"] and hello["pid"] == proc.pid and len(hello["token"]) == 32
        t, blobs = _transport()
        kwargs = {"formula": "y ~ .", "eps": 1.0, "k": 2.0, "bounds": [-10.0, 10.0], "random_state": 1}
        head, out = _ask(
            proc, {"op": "call_from_r", "args": ["dp_sis", [], kwargs, {"data": t}, None]}, blobs
        )
        assert head["ok"] and head["object"]["type"] == "SISResult", head
        assert json.loads(out[0])["kind"] == "result"
        ident = head["object"]["id"]
        ref = {"$dpstats": ["handle", ident, hello["token"]]}
        head, _ = _ask(proc, {"op": "has_method", "args": [ref, "report"]})
        assert head == {"ok": True, "value": True}
        _ask(proc, {"op": "echo", "args": [], "release": [ident]})  # R's finalizer ran
        head, _ = _ask(proc, {"op": "has_method", "args": [ref, "report"]})
        assert head["error_classes"][0] == "dpstats_stale_error"
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
        assert b"noise from Python" in proc.stderr.read()


def test_the_child_refuses_a_directory_others_can_open():
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        proc = _child(d)
        head = json.loads(rpipe.read_frame(proc.stdout)[0])
        assert head["ok"] is False and head["error_classes"][0] == "dpstats_channel_error"
        assert "mode 0755" in head["error_message"]
        assert proc.wait(timeout=20) == 2


def test_the_child_ends_when_r_has_gone_even_if_its_input_stays_open():
    """A process R started holds R's end of the input open; the watch on R's pid ends the child."""
    r = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        proc = _child(d, str(r.pid))
        assert json.loads(rpipe.read_frame(proc.stdout)[0])["ok"]
        r.wait()
        start = time.monotonic()
        assert proc.wait(timeout=20) == 0  # stdin still open here
        assert time.monotonic() - start < 5
        proc.stdin.close()


def test_frame_header_is_two_doubles_then_lengths():
    """The layout R reads (R/channel.R, .dp_receive)."""
    buf = io.BytesIO()
    rpipe.write_frame(buf, {}, [b"ab", b"cde"])
    raw = buf.getvalue()
    assert struct.unpack("<4d", raw[:32]) == (2.0, 2.0, 2.0, 3.0)
    assert raw[32:] == b"{}abcde"


def test_ctrl_c_stops_a_call_and_is_ignored_between_calls():
    """SIGINT (Ctrl-C at R's terminal reaches the child too) answers the call being made as a
    classed error, and leaves the idle loop alone."""
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        proc = _child(d)
        assert json.loads(rpipe.read_frame(proc.stdout)[0])["ok"]
        proc.send_signal(signal.SIGINT)  # idle: ignored
        time.sleep(0.3)
        assert _ask(proc, {"op": "has_function", "args": ["dp_sis"]})[0] == {"ok": True, "value": True}
        rpipe.write_frame(proc.stdin, {"op": "echo", "args": ["sleep"]})
        time.sleep(0.5)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        head = json.loads(rpipe.read_frame(proc.stdout)[0])
        assert time.monotonic() - start < 5
        assert head["error_classes"] == ["dpstats_call_interrupted_error", "dpstats_error"]
        assert _ask(proc, {"op": "has_function", "args": ["dp_sis"]})[0] == {"ok": True, "value": True}
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0


def test_ctrl_c_inside_an_import_waits_for_the_import_to_finish(monkeypatch):
    """A SIGINT that lands inside an import is sent again 50 ms later instead of raising there: the
    R package's Ctrl-C test, on a fresh virtual environment whose first call was still importing
    scipy, left scipy.ndimage half-imported and every later call failed with NameError."""
    import importlib
    import signal
    import sys

    from dpstats import rpipe

    sent = []
    monkeypatch.setattr(rpipe.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setattr(rpipe._Busy, "now", True)
    seen = {}

    class Finder:
        """A meta-path finder: it runs inside importlib's bootstrap, as an import's code does."""

        def find_spec(self, name, path=None, target=None):
            if name == "dpstats_no_such_module_for_the_test":
                seen["importing"] = rpipe._importing(sys._getframe())
            return None

    sys.meta_path.insert(0, Finder())
    try:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("dpstats_no_such_module_for_the_test")
    finally:
        sys.meta_path.pop(0)
    assert seen["importing"] is True and rpipe._importing(sys._getframe()) is False
    with pytest.raises(KeyboardInterrupt):
        rpipe.on_sigint(signal.SIGINT, sys._getframe())  # outside an import: raised at once

    class Frame:  # a stack whose outer frame is importlib's
        def __init__(self, filename, back=None):
            self.f_code = type("Code", (), {"co_filename": filename})()
            self.f_back = back

    inner = Frame("/site-packages/scipy/ndimage/_ndimage_api.py", Frame("<frozen importlib._bootstrap>"))
    rpipe.on_sigint(signal.SIGINT, inner)  # no raise: delivered again once the import is done
    import time

    time.sleep(0.2)
    assert sent == [(rpipe.os.getpid(), signal.SIGINT)]
    monkeypatch.setattr(rpipe._Busy, "now", False)
    rpipe.on_sigint(signal.SIGINT, sys._getframe())  # between calls: ignored
