"""The streams the clients answer: a streamed exec or attach (ExecStream,
AsyncExecStream) and a streamed file read (FileStream, AsyncFileStream).
The sync and async kinds read lines through one EventReader (_core.py)."""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Iterator, Optional

import httpx

from . import models
from ._core import EventReader, FileMeta, broken, collect


class ExecStream:
    """A streamed exec or attach: iterate it for the process's events in
    order (output with data as bytes, lost, and last exit). A stream that
    breaks, or reports an error, raises PaddockError. id and pid name the
    process. Closing it (or leaving its with block) before the exit kills a
    foreground process."""

    def __init__(self, resp: httpx.Response, reader: EventReader):
        self._resp = resp
        self._reader = reader
        self._lines = resp.iter_lines()
        self._done = False
        try:
            reader.begin(self._next_event())
        except BaseException:
            self.close()
            raise
        assert reader.started is not None
        self.id: str = reader.started.id or ""
        self.pid: int = reader.started.pid or 0

    @property
    def exit(self) -> Optional[models.ExitStatus]:
        """How the process ended, once the exit event was read."""
        return self._reader.exit

    def _next_event(self) -> Optional[models.ExecEvent]:
        try:
            for line in self._lines:
                ev = self._reader.feed(line)
                if ev is not None:
                    return ev
        except httpx.HTTPError as e:
            raise broken(e) from e
        return None

    def __iter__(self) -> "ExecStream":
        return self

    def __next__(self) -> models.ExecEvent:
        if self._done:
            raise StopIteration
        ev = self._next_event()
        if ev is None or ev.event == "exit":
            self._done = True
            self.close()
        if ev is None:
            self._reader.end()
            raise StopIteration
        return ev

    def wait(self, stdout: Optional[Callable[[bytes], Any]] = None, stderr: Optional[Callable[[bytes], Any]] = None) -> Optional[models.ExitStatus]:
        """Hands the output to stdout and stderr (callables taking bytes;
        None drops it) until the process exits, and returns how it ended;
        None when a replay (follow=False) ended before the exit."""
        with self:
            for ev in self:
                collect(ev, {"stdout": stdout, "stderr": stderr})
        return self.exit

    def close(self) -> None:
        self._done = True
        self._resp.close()

    def __enter__(self) -> "ExecStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FileStream:
    """A file being read: iterate it for chunks of bytes, or read() them
    all. size and mode are the file's when it was opened. A transfer that
    breaks midway raises PaddockError."""

    def __init__(self, resp: httpx.Response, chunk_size: int):
        self._resp = resp
        self._chunk_size = chunk_size
        meta = FileMeta.of(resp)
        self.size = meta.size
        self.mode = meta.mode

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._resp.iter_bytes(self._chunk_size)
        except httpx.HTTPError as e:
            raise broken(e) from e
        finally:
            self.close()

    def read(self) -> bytes:
        return b"".join(self)

    def close(self) -> None:
        self._resp.close()

    def __enter__(self) -> "FileStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


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
