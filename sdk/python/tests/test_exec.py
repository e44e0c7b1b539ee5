"""Exec through the synchronous client against a live server: one-shot,
streamed, background processes, attach, stdin and signals."""

from __future__ import annotations

import time
from typing import Callable

import pytest

from conftest import Runtime
from paddock import ExecStream, Paddock, PaddockError, models


def test_exec_collects_output_and_exit(client: Paddock, runtime: Runtime) -> None:
    r = client.exec(runtime.org, runtime.ws, runtime.id, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert isinstance(r, models.ExecResult)
    assert r.stdout == b"out\n" and r.stderr == b"err\n"
    assert r.exit is not None and r.exit.code == 3
    assert r.truncated is False


def test_exec_passes_env_cwd_and_stdin(client: Paddock, runtime: Runtime) -> None:
    r = client.exec(
        runtime.org,
        runtime.ws,
        runtime.id,
        ["sh", "-c", 'printf "%s|%s|" "$GREETING" "$(pwd)"; cat'],
        env={"GREETING": "hi there"},
        cwd="/tmp",
        stdin="from stdin ✓",
    )
    assert r.stdout.decode() == "hi there|/tmp|from stdin ✓"
    assert r.exit is not None and r.exit.code == 0


def test_exec_keeps_binary_output(client: Paddock, runtime: Runtime) -> None:
    r = client.exec(runtime.org, runtime.ws, runtime.id, ["sh", "-c", r"printf '\000\001\377'"])
    assert r.stdout == b"\x00\x01\xff"


def test_exec_of_a_missing_command_is_an_error(client: Paddock, runtime: Runtime) -> None:
    with pytest.raises(PaddockError) as e:
        client.exec(runtime.org, runtime.ws, runtime.id, ["no-such-command-here"])
    assert (e.value.status, e.value.code) == (404, "command_not_found")


def test_exec_stream_yields_typed_events_in_order(client: Paddock, runtime: Runtime) -> None:
    script = "for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 4"
    with client.exec_stream(runtime.org, runtime.ws, runtime.id, ["sh", "-c", script]) as s:
        assert isinstance(s, ExecStream)
        assert s.id and s.pid > 0
        events = list(s)
    assert all(isinstance(ev, models.ExecEvent) for ev in events)
    assert events[-1].event == "exit" and all(ev.event == "output" for ev in events[:-1])
    out = b"".join(ev.data or b"" for ev in events if ev.stream == "stdout")
    err = b"".join(ev.data or b"" for ev in events if ev.stream == "stderr")
    assert out == b"out1\nout2\nout3\n" and err == b"err1\nerr2\nerr3\n"
    assert s.exit is not None and s.exit.code == 4


def test_exec_stream_wait_hands_output_to_sinks(client: Paddock, runtime: Runtime) -> None:
    out, err = bytearray(), bytearray()
    s = client.exec_stream(
        runtime.org, runtime.ws, runtime.id, ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; echo done >&2"]
    )
    exit = s.wait(stdout=out.extend, stderr=err.extend)
    assert exit is not None and exit.code == 0
    assert bytes(out) == b"x" * 300000 and bytes(err) == b"done\n"


def test_stdin_streams_to_a_process(client: Paddock, runtime: Runtime) -> None:
    s = client.exec_stream(runtime.org, runtime.ws, runtime.id, ["cat"], open_stdin=True)
    assert client.write_stdin(runtime.org, runtime.ws, runtime.id, s.id, b"first ") == 6
    assert client.write_stdin(runtime.org, runtime.ws, runtime.id, s.id, iter([b"second", b"\n"]), close=True) == 7
    out = bytearray()
    exit = s.wait(stdout=out.extend)
    assert exit is not None and exit.code == 0
    assert bytes(out) == b"first second\n"


def test_background_process_attach_and_signal(client: Paddock, runtime: Runtime) -> None:
    r = client.exec(runtime.org, runtime.ws, runtime.id, ["sh", "-c", "echo ready; exec sleep 600"], background=True)
    assert r.exit is None and r.id
    assert any(p.id == r.id and p.running for p in client.list_processes(runtime.org, runtime.ws, runtime.id))
    with client.attach(runtime.org, runtime.ws, runtime.id, r.id) as s:
        first = next(s)
        assert (first.event, first.stream, first.data) == ("output", "stdout", b"ready\n")
        client.signal_process(runtime.org, runtime.ws, runtime.id, r.id, "TERM")
        rest = list(s)
    assert rest[-1].event == "exit"
    assert s.exit is not None and s.exit.signal == "SIGTERM"
    p = client.get_process(runtime.org, runtime.ws, runtime.id, r.id)
    assert not p.running and p.exit is not None and p.exit.signal == "SIGTERM"
    # A replay of the exited process, without following, ends with its exit.
    replay = client.attach(runtime.org, runtime.ws, runtime.id, r.id, follow=False)
    out = bytearray()
    assert replay.wait(stdout=out.extend) is not None and bytes(out) == b"ready\n"
    # From an offset, only what came after it.
    tail = client.attach(runtime.org, runtime.ws, runtime.id, r.id, stdout_offset=3, follow=False)
    out = bytearray()
    tail.wait(stdout=out.extend)
    assert bytes(out) == b"dy\n"


def test_closing_a_stream_kills_a_foreground_process(client: Paddock, runtime: Runtime) -> None:
    s = client.exec_stream(runtime.org, runtime.ws, runtime.id, ["sh", "-c", "echo up; exec sleep 600"])
    assert next(s).data == b"up\n"
    assert running(client, runtime, s.id)
    s.close()
    wait_until(lambda: not running(client, runtime, s.id), "the process to be killed")


def running(client: Paddock, runtime: Runtime, process_id: str) -> bool:
    """Whether the process runs; an exited foreground one is forgotten."""
    try:
        return client.get_process(runtime.org, runtime.ws, runtime.id, process_id).running
    except PaddockError as e:
        if e.status == 404:
            return False
        raise


def wait_until(cond: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """Polls cond until it holds; fails after timeout, which only a broken
    server reaches (it is no measure of speed)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_stream_refusals_are_errors(client: Paddock, runtime: Runtime) -> None:
    with pytest.raises(PaddockError) as e:
        client.exec_stream(runtime.org, runtime.ws, runtime.id, ["no-such-command-here"])
    assert (e.value.status, e.value.code) == (404, "command_not_found")
    with pytest.raises(PaddockError) as e:
        client.attach(runtime.org, runtime.ws, runtime.id, "no-such-process")
    assert (e.value.status, e.value.code) == (404, "process_not_found")


def test_kill_all_processes(client: Paddock, runtime: Runtime) -> None:
    bg = client.exec(runtime.org, runtime.ws, runtime.id, ["sleep", "600"], background=True)
    assert running(client, runtime, bg.id)
    killed = client.kill_all_processes(runtime.org, runtime.ws, runtime.id)
    assert isinstance(killed, models.KillAllResult) and killed.killed >= 1
    wait_until(lambda: not running(client, runtime, bg.id), "the background process to be killed")
