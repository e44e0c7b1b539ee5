"""The asyncio client against a live server: the same operations, awaited;
exec streams and file streams as async iterators; calls in parallel."""

from __future__ import annotations

import asyncio
import hashlib
from typing import AsyncIterator, Awaitable, Callable, TypeVar

import pytest

from conftest import Live, Runtime, unique
from paddock import AsyncExecStream, AsyncFileStream, AsyncPaddock, AsyncSessionStream, PaddockError, models

T = TypeVar("T")
MB = 1 << 20


def run(live: Live, body: Callable[[AsyncPaddock], Awaitable[T]], key: str = "") -> T:
    """Runs body with a fresh AsyncPaddock in its own event loop."""

    async def main() -> T:
        async with AsyncPaddock(live.url, key or live.key) as p:
            return await body(p)

    return asyncio.run(main())


def test_exec_one_shot(live: Live, runtime: Runtime) -> None:
    async def body(p: AsyncPaddock) -> models.ExecResult:
        return await p.exec(runtime.org, runtime.ws, runtime.id, ["sh", "-c", "echo async; exit 5"])

    r = run(live, body)
    assert isinstance(r, models.ExecResult)
    assert r.stdout == b"async\n" and r.exit is not None and r.exit.code == 5


def test_exec_stream_is_an_async_iterator(live: Live, runtime: Runtime) -> None:
    async def body(p: AsyncPaddock) -> list:
        s = await p.exec_stream(runtime.org, runtime.ws, runtime.id, ["sh", "-c", "echo a; echo b >&2; echo c"])
        assert isinstance(s, AsyncExecStream) and s.id and s.pid > 0
        async with s:
            return [ev async for ev in s]

    events = run(live, body)
    outputs = [(ev.stream, ev.data) for ev in events if ev.event == "output"]
    assert all(isinstance(d, bytes) for _, d in outputs)
    assert b"".join(d or b"" for st, d in outputs if st == "stdout") == b"a\nc\n"
    assert b"".join(d or b"" for st, d in outputs if st == "stderr") == b"b\n"
    assert events[-1].event == "exit" and events[-1].exit is not None and events[-1].exit.code == 0


def test_calls_run_in_parallel(live: Live, runtime: Runtime) -> None:
    async def body(p: AsyncPaddock) -> list:
        calls = [p.exec(runtime.org, runtime.ws, runtime.id, ["sh", "-c", f"echo {i}"]) for i in range(4)]
        return await asyncio.gather(*calls)

    results = run(live, body)
    assert [r.stdout for r in results] == [b"0\n", b"1\n", b"2\n", b"3\n"]


def test_background_stdin_and_attach(live: Live, runtime: Runtime) -> None:
    async def body(p: AsyncPaddock) -> bytes:
        s = await p.exec_stream(runtime.org, runtime.ws, runtime.id, ["cat"], open_stdin=True, background=True)
        await s.aclose()  # a background process outlives its stream
        assert await p.write_stdin(runtime.org, runtime.ws, runtime.id, s.id, "async stdin", close=True) == 11
        out = bytearray()
        a = await p.attach(runtime.org, runtime.ws, runtime.id, s.id)
        exit = await a.wait(stdout=out.extend)
        assert exit is not None and exit.code == 0
        return bytes(out)

    assert run(live, body) == b"async stdin"


def test_files_stream_both_ways(live: Live, runtime: Runtime) -> None:
    path = "/tmp/" + unique("async") + "/data.bin"
    size = 3 * MB + 17

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, size, 64 * 1024):
            yield bytes([start % 256]) * min(64 * 1024, size - start)

    async def body(p: AsyncPaddock) -> None:
        info = await p.write_file(runtime.org, runtime.ws, runtime.id, path, chunks())
        assert info.size == size
        want = hashlib.sha256(b"".join([c async for c in chunks()])).hexdigest()
        f = await p.open_file(runtime.org, runtime.ws, runtime.id, path, chunk_size=128 * 1024)
        assert isinstance(f, AsyncFileStream) and f.size == size
        got = hashlib.sha256()
        async for chunk in f:
            got.update(chunk)
        assert got.hexdigest() == want
        await p.write_file(runtime.org, runtime.ws, runtime.id, path + ".txt", "text, async")
        assert await p.read_text(runtime.org, runtime.ws, runtime.id, path + ".txt") == "text, async"
        listed = await p.list_files(runtime.org, runtime.ws, runtime.id, path.rsplit("/", 1)[0])
        assert sorted(i.name for i in listed.items) == ["data.bin", "data.bin.txt"]
        await p.delete_file(runtime.org, runtime.ws, runtime.id, path.rsplit("/", 1)[0], recursive=True)

    run(live, body)


def test_runtime_calls(live: Live, runtime: Runtime) -> None:
    async def body(p: AsyncPaddock) -> models.Runtime:
        got = await p.get_runtime(runtime.org, runtime.ws, runtime.id)
        assert got.status == "running"
        return await p.keepalive_runtime(runtime.org, runtime.ws, runtime.id)

    assert run(live, body).expires_at is not None


def test_errors(live: Live, runtime: Runtime) -> None:
    async def missing(p: AsyncPaddock) -> None:
        await p.get_project(runtime.org, runtime.ws, "no-such-project")

    async def viewer_exec(p: AsyncPaddock) -> None:
        await p.exec(runtime.org, runtime.ws, runtime.id, ["true"])

    async def missing_stream(p: AsyncPaddock) -> None:
        await p.open_file(runtime.org, runtime.ws, runtime.id, "/tmp/no/such/file")

    cases = [
        (missing, live.key, 404),
        (viewer_exec, live.viewer_key, 403),
        (missing_stream, live.key, 404),
        (missing, "pdk_" + "1" * 48, 401),
    ]
    for body, key, status in cases:
        with pytest.raises(PaddockError) as e:
            run(live, body, key)
        assert e.value.status == status and e.value.code


def test_a_prompt_streams(live: Live, agent: Runtime) -> None:
    async def body(p: AsyncPaddock) -> list:
        s = await p.prompt_stream(agent.org, agent.ws, agent.id, "hello from asyncio")
        assert isinstance(s, AsyncSessionStream) and s.session_id
        async with s:
            events = [ev async for ev in s]
        assert s.done is not None and not s.failed
        result = await p.prompt(agent.org, agent.ws, agent.id, "again", session_id=s.session_id)
        assert result.session.turns == 2
        return events

    events = run(live, body)
    assert events[0].text == "hello from asyncio" and events[-1].type == "done"
