"""AsyncPaddock, the asyncio client, on httpx.AsyncClient. Its methods are
Paddock's (written once, in _operations.py), each to be awaited."""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

import httpx

from ._core import DEFAULT_TIMEOUT, EventReader, Request, SessionReader, base_headers, build, check
from ._operations import Data, Operations, Steps
from .streams import AsyncExecStream, AsyncFileStream, AsyncSessionStream


class AsyncPaddock(Operations):
    """The asyncio client: every method of Paddock, as a coroutine.

        async with AsyncPaddock(url, api_key) as p:
            r = await p.exec(org, ws, runtime_id, ["echo", "hello"])

    exec_stream and attach answer an AsyncExecStream (``async for``),
    open_file an AsyncFileStream; write_file also takes async iterables.
    """

    def __init__(
        self, url: str, api_key: str, *, timeout: Any = DEFAULT_TIMEOUT, http: Optional[httpx.AsyncClient] = None
    ):
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

    async def _send(self, req: Request[Any]) -> Any:
        resp = await self._http.send(build(self._http, self.url, self._headers, req))
        check(resp, resp.content)
        return req.decode(resp)

    async def _open(self, req: Request[Any]) -> httpx.Response:
        resp = await self._http.send(build(self._http, self.url, self._headers, req), stream=True)
        if not 200 <= resp.status_code <= 299:
            try:
                check(resp, await resp.aread())
            finally:
                await resp.aclose()
        return resp

    async def _exec_stream(self, req: Request[Any], follow: bool) -> AsyncExecStream:
        s = AsyncExecStream(await self._open(req), EventReader(follow))
        await s._begin()
        return s

    async def _file_stream(self, req: Request[Any], chunk_size: int) -> AsyncFileStream:
        return AsyncFileStream(await self._open(req), chunk_size)

    async def _session_stream(self, req: Request[Any]) -> AsyncSessionStream:
        return AsyncSessionStream(await self._open(req), SessionReader())

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
