"""Unit tests of how an exec stream's lines are read (paddock._core's
EventReader, which ExecStream and AsyncExecStream share)."""

from __future__ import annotations

import json

import pytest

from paddock import PaddockError
from paddock._core import EventReader, SessionReader, route

STARTED = json.dumps({"event": "started", "id": "p-1", "pid": 9})
EXIT = json.dumps(
    {"event": "exit", "exit": {"code": 0, "exited_at": "2026-01-02T03:04:05Z", "stdout_bytes": 2, "stderr_bytes": 0}}
)


def test_a_stream_reads_started_output_and_exit() -> None:
    r = EventReader(follow=True)
    r.begin(r.feed(STARTED))
    assert r.started is not None and (r.started.id, r.started.pid) == ("p-1", 9)
    assert r.feed("") is None
    out = r.feed(json.dumps({"event": "output", "stream": "stdout", "data": "aGk="}))
    assert out is not None and out.data == b"hi"
    assert r.feed(EXIT) is not None and r.exit is not None and r.exit.code == 0
    r.end()


def test_an_error_event_raises_its_code() -> None:
    r = EventReader(follow=True)
    with pytest.raises(PaddockError) as e:
        r.feed(json.dumps({"event": "error", "error": {"code": "agent_unreachable", "message": "the link broke"}}))
    assert (e.value.status, e.value.code, e.value.message) == (503, "agent_unreachable", "the link broke")
    with pytest.raises(PaddockError) as e:
        r.feed(json.dumps({"event": "error", "error": {"code": "internal", "message": "x"}}))
    assert e.value.status == 500


def test_a_broken_stream_is_an_error() -> None:
    r = EventReader(follow=True)
    with pytest.raises(PaddockError):
        r.begin(r.feed(json.dumps({"event": "output", "stream": "stdout", "data": ""})))
    with pytest.raises(PaddockError):
        r.feed("{not json")
    # A followed stream that ends before the exit was cut off...
    with pytest.raises(PaddockError):
        r.end()
    # ...a replay (follow=False) of a running process ends so.
    EventReader(follow=False).end()


def test_route_escapes_names() -> None:
    assert route("/api/v1/org", "a b", "c/d") == "/api/v1/org/a%20b/c%2Fd"
    for bad in ("", ".", ".."):
        with pytest.raises(ValueError):
            route("/api/v1/org", bad)


def _session_line(seq: int, type_: str, **extra: object) -> str:
    return json.dumps({"seq": seq, "turn": 1, "time": "2026-01-02T03:04:05Z", "type": type_, **extra})


def test_a_session_stream_keeps_error_events_and_ends_with_done() -> None:
    r = SessionReader()
    ev = r.feed(_session_line(1, "message", role="user", text="hi"))
    assert ev is not None and not r.last(ev)
    err = r.feed(_session_line(2, "error", error={"code": "tool_failed", "message": "no"}))
    assert err is not None and err.error is not None and err.error.code == "tool_failed"
    done = r.feed(_session_line(3, "done", done={"exit_code": 0}))
    assert done is not None and r.last(done)
    r.end()
    assert r.done is not None and r.failed  # an error event fails the turn
    with pytest.raises(PaddockError):
        r.feed(_session_line(4, "message", role="assistant", text="late"))


def test_a_session_stream_cut_before_done_is_an_error() -> None:
    r = SessionReader()
    r.feed(_session_line(1, "error", error={"code": "model_unreachable", "message": "refused"}))
    with pytest.raises(PaddockError) as e:
        r.end()
    assert (e.value.status, e.value.code) == (503, "model_unreachable")
    with pytest.raises(PaddockError) as e:
        SessionReader().end()
    assert e.value.code == "unavailable"
