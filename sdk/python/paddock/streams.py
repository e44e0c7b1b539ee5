"""The streams the clients answer: a streamed exec or attach (ExecStream,
AsyncExecStream), a streamed prompt or task (SessionStream,
AsyncSessionStream) and a streamed file read (FileStream, AsyncFileStream).
A sync stream and its async twin read lines through one LineReader
(_core.py): only the iteration differs."""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Generic, Iterator, Optional, TypeVar

import httpx

from . import models
from ._core import SESSION_ID_HEADER, EventReader, FileMeta, LineReader, SessionReader, broken, collect

E = TypeVar("E")

Sink = Optional[Callable[[bytes], Any]]


class _Lines(Generic[E]):
    """An NDJSON answer read by a LineReader, as an iterator of events.
    A stream that breaks, or that its reader refuses, raises PaddockError;
    the answer is closed after the last event, or by close()."""

    def __init__(self, resp: httpx.Response, reader: LineReader[E]):
        self._resp = resp
        self._reader = reader
        self._lines = resp.iter_lines()
        self._done = False

    def _next_event(self) -> Optional[E]:
        try:
            for line in self._lines:
                ev = self._reader.feed(line)
                if ev is not None:
                    return ev
        except httpx.HTTPError as e:
            raise broken(e) from e
        return None

    def __iter__(self) -> "_Lines[E]":
        return self

    def __next__(self) -> E:
        if self._done:
            raise StopIteration
        ev = self._next_event()
        if ev is None or self._reader.last(ev):
            self.close()
        if ev is None:
            self._reader.end()
            raise StopIteration
        return ev

    def close(self) -> None:
        self._done = True
        self._resp.close()

    def __enter__(self) -> "_Lines[E]":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _AsyncLines(Generic[E]):
    """_Lines for asyncio: ``async for``, ``aclose``, ``async with``."""

    def __init__(self, resp: httpx.Response, reader: LineReader[E]):
        self._resp = resp
        self._reader = reader
        self._lines = resp.aiter_lines()
        self._done = False

    async def _next_event(self) -> Optional[E]:
        try:
            async for line in self._lines:
                ev = self._reader.feed(line)
                if ev is not None:
                    return ev
        except httpx.HTTPError as e:
            raise broken(e) from e
        return None

    def __aiter__(self) -> "_AsyncLines[E]":
        return self

    async def __anext__(self) -> E:
        if self._done:
            raise StopAsyncIteration
        ev = await self._next_event()
        if ev is None or self._reader.last(ev):
            await self.aclose()
        if ev is None:
            self._reader.end()
            raise StopAsyncIteration
        return ev

    async def aclose(self) -> None:
        self._done = True
        await self._resp.aclose()

    async def __aenter__(self) -> "_AsyncLines[E]":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class ExecStream(_Lines[models.ExecEvent]):
    """A streamed exec or attach: iterate it for the process's events in
    order (output, with data as bytes; lost; and last exit). id and pid
    name the process. Closing it (or leaving its with block) before the
    exit kills a foreground process."""

    def __init__(self, resp: httpx.Response, reader: EventReader):
        super().__init__(resp, reader)
        self._exec = reader
        try:
            reader.begin(self._next_event())
        except BaseException:
            self.close()
            raise
        self.id, self.pid = _started(reader)

    def __enter__(self) -> "ExecStream":
        return self

    @property
    def exit(self) -> Optional[models.ExitStatus]:
        """How the process ended, once the exit event was read."""
        return self._exec.exit

    def wait(self, stdout: Sink = None, stderr: Sink = None) -> Optional[models.ExitStatus]:
        """Hands the output to stdout and stderr (callables taking bytes;
        None drops it) until the process exits, and returns how it ended;
        None when a replay (follow=False) ended before the exit."""
        with self:
            for ev in self:
                collect(ev, {"stdout": stdout, "stderr": stderr})
        return self.exit


class AsyncExecStream(_AsyncLines[models.ExecEvent]):
    """ExecStream for asyncio: ``async for ev in stream``."""

    def __init__(self, resp: httpx.Response, reader: EventReader):
        super().__init__(resp, reader)
        self._exec = reader
        self.id, self.pid = "", 0

    async def _begin(self) -> None:
        try:
            self._exec.begin(await self._next_event())
        except BaseException:
            await self.aclose()
            raise
        self.id, self.pid = _started(self._exec)

    async def __aenter__(self) -> "AsyncExecStream":
        return self

    @property
    def exit(self) -> Optional[models.ExitStatus]:
        """How the process ended, once the exit event was read."""
        return self._exec.exit

    async def wait(self, stdout: Sink = None, stderr: Sink = None) -> Optional[models.ExitStatus]:
        """As ExecStream.wait."""
        async with self:
            async for ev in self:
                collect(ev, {"stdout": stdout, "stderr": stderr})
        return self.exit


def _started(reader: EventReader) -> "tuple[str, int]":
    ev = reader.started
    return (ev.id or "", ev.pid or 0) if ev is not None else ("", 0)


class SessionStream(_Lines[models.SessionEvent]):
    """A streamed prompt or task: iterate it for the turn's SessionEvents
    (the user's message, messages, tool calls and results, usage, errors,
    and last done). session_id is the session it runs in."""

    def __init__(self, resp: httpx.Response, reader: SessionReader):
        super().__init__(resp, reader)
        self._session = reader
        self.session_id: str = resp.headers.get(SESSION_ID_HEADER, "")

    def __enter__(self) -> "SessionStream":
        return self

    @property
    def done(self) -> Optional[models.TurnDone]:
        """How the turn ended, once the done event was read."""
        return self._session.done

    @property
    def failed(self) -> bool:
        """The turn, once done, failed (its harness exited non-zero, or it
        reported an error)."""
        return self._session.failed


class AsyncSessionStream(_AsyncLines[models.SessionEvent]):
    """SessionStream for asyncio: ``async for ev in stream``."""

    def __init__(self, resp: httpx.Response, reader: SessionReader):
        super().__init__(resp, reader)
        self._session = reader
        self.session_id: str = resp.headers.get(SESSION_ID_HEADER, "")

    async def __aenter__(self) -> "AsyncSessionStream":
        return self

    @property
    def done(self) -> Optional[models.TurnDone]:
        return self._session.done

    @property
    def failed(self) -> bool:
        return self._session.failed


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
