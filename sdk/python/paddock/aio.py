"""AsyncPaddock, the asyncio client, on httpx.AsyncClient. Its methods are
Paddock's (written once, in _operations.py), each to be awaited."""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Optional

import httpx

from . import models
from ._core import EventReader, FileMeta, Request, check, collect
from ._operations import Data, Operations, Steps
from .client import DEFAULT_TIMEOUT, base_headers, broken, build


class AsyncPaddock(Operations):
    """The asyncio client: every method of Paddock, as a coroutine.

        async with AsyncPaddock(url, api_key) as p:
            r = await p.exec(org, ws, runtime_id, ["echo", "hello"])

    exec_stream and attach answer an AsyncExecStream (``async for``),
    open_file an AsyncFileStream; write_file also takes async iterables.
    """

    def __init__(self, url: str, api_key: str, *, timeout: Any = DEFAULT_TIMEOUT, http: Optional[httpx.AsyncClient] = None):
        self.url = url.rstrip("/")
        self._headers = base_headers(api_key)
        self._http = http or httpx.AsyncClient(timeout=timeout)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncPaddock":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _run(self, steps: Steps) -> Any:
        try:
            req = next(steps)
            while True:
                req = steps.send(await self._send(req))
        except StopIteration as done:
            return done.value

    async def _send(self, req: Request) -> Any:
        resp = await self._http.send(build(self._http, self.url, self._headers, req))
        check(resp, resp.content)
        return req.decode(resp)

    async def _open(self, req: Request) -> httpx.Response:
        resp = await self._http.send(build(self._http, self.url, self._headers, req), stream=True)
        if not 200 <= resp.status_code <= 299:
            try:
                check(resp, await resp.aread())
            finally:
                await resp.aclose()
        return resp

    async def _exec_stream(self, req: Request, follow: bool) -> "AsyncExecStream":
        s = AsyncExecStream(await self._open(req), EventReader(follow))
        await s._begin()
        return s

    async def _file_stream(self, req: Request, chunk_size: int) -> "AsyncFileStream":
        return AsyncFileStream(await self._open(req), chunk_size)

    def _content(self, data: Data) -> Any:
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data)
        if hasattr(data, "__aiter__"):
            return data
        return _async_chunks(data)


async def _async_chunks(data: Any, size: int = 1 << 16) -> AsyncIterator[bytes]:
    """A sync file object or iterable of chunks as an async iterable."""
    if hasattr(data, "read"):
        while True:
            chunk = data.read(size)
            if not chunk:
                return
            yield chunk
    else:
        for chunk in data:
            yield bytes(chunk)


class AsyncExecStream:
    """ExecStream for asyncio: ``async for ev in stream``."""

    def __init__(self, resp: httpx.Response, reader: EventReader):
        self._resp = resp
        self._reader = reader
        self._lines = resp.aiter_lines()
        self._done = False
        self.id = ""
        self.pid = 0

    async def _begin(self) -> None:
        try:
            self._reader.begin(await self._next_event())
        except BaseException:
            await self.aclose()
            raise
        assert self._reader.started is not None
        self.id = self._reader.started.id or ""
        self.pid = self._reader.started.pid or 0

    @property
    def exit(self) -> Optional[models.ExitStatus]:
        """How the process ended, once the exit event was read."""
        return self._reader.exit

    async def _next_event(self) -> Optional[models.ExecEvent]:
        try:
            async for line in self._lines:
                ev = self._reader.feed(line)
                if ev is not None:
                    return ev
        except httpx.HTTPError as e:
            raise broken(e) from e
        return None

    def __aiter__(self) -> "AsyncExecStream":
        return self

    async def __anext__(self) -> models.ExecEvent:
        if self._done:
            raise StopAsyncIteration
        ev = await self._next_event()
        if ev is None or ev.event == "exit":
            await self.aclose()
        if ev is None:
            self._reader.end()
            raise StopAsyncIteration
        return ev

    async def wait(self, stdout: Optional[Callable[[bytes], Any]] = None, stderr: Optional[Callable[[bytes], Any]] = None) -> Optional[models.ExitStatus]:
        """As ExecStream.wait."""
        async with self:
            async for ev in self:
                collect(ev, {"stdout": stdout, "stderr": stderr})
        return self.exit

    async def aclose(self) -> None:
        self._done = True
        await self._resp.aclose()

    async def __aenter__(self) -> "AsyncExecStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncFileStream:
    """FileStream for asyncio: ``async for chunk in stream`` or ``await
    stream.read()``."""

    def __init__(self, resp: httpx.Response, chunk_size: int):
        self._resp = resp
        self._chunk_size = chunk_size
        meta = FileMeta.of(resp)
        self.size = meta.size
        self.mode = meta.mode

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._resp.aiter_bytes(self._chunk_size):
                yield chunk
        except httpx.HTTPError as e:
            raise broken(e) from e
        finally:
            await self.aclose()

    async def read(self) -> bytes:
        return b"".join([c async for c in self])

    async def aclose(self) -> None:
        await self._resp.aclose()

    async def __aenter__(self) -> "AsyncFileStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
