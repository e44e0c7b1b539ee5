"""Paddock, the synchronous client, on httpx.Client."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import httpx

from . import models
from ._core import EventReader, FileMeta, Request, check, collect
from ._operations import Data, Operations, Steps
from .errors import PaddockError

USER_AGENT = "paddock-python/0.1.0"

# Reads wait as long as the server takes (an exec lasts as long as its
# process); connecting, writing and waiting for a pooled connection do not.
DEFAULT_TIMEOUT = httpx.Timeout(60.0, read=None)


def base_headers(api_key: str) -> dict:
    """The headers every request carries."""
    h = {"User-Agent": USER_AGENT}
    if api_key:
        h["Authorization"] = "Bearer " + api_key
    return h


def build(http: Any, base: str, headers: dict, req: Request) -> httpx.Request:
    """The httpx request of req, for either client."""
    return http.build_request(
        req.method,
        base + req.path,
        params=req.params or None,
        json=req.json,
        content=req.content,
        headers={**headers, **req.headers()},
    )


def broken(e: httpx.HTTPError) -> PaddockError:
    """The error of a stream that broke after its answer began."""
    return PaddockError.from_stream("unavailable", f"the stream broke: {e}")


class Paddock(Operations):
    """A client of a paddock server's API.

        p = Paddock("http://127.0.0.1:8080", "pdk_…")
        project = p.create_project("acme", "default", "demo")
        r = p.exec("acme", "default", project.runtime_id, ["echo", "hello"])
        print(r.stdout)  # b'hello\\n'

    Every method raises PaddockError for an answer the API refused. Use it
    as a context manager, or call close(), to release its connections.
    """

    def __init__(self, url: str, api_key: str, *, timeout: Any = DEFAULT_TIMEOUT, http: Optional[httpx.Client] = None):
        self.url = url.rstrip("/")
        self._headers = base_headers(api_key)
        self._http = http or httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Paddock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _run(self, steps: Steps) -> Any:
        try:
            req = next(steps)
            while True:
                req = steps.send(self._send(req))
        except StopIteration as done:
            return done.value

    def _send(self, req: Request) -> Any:
        resp = self._http.send(build(self._http, self.url, self._headers, req))
        check(resp, resp.content)
        return req.decode(resp)

    def _open(self, req: Request) -> httpx.Response:
        resp = self._http.send(build(self._http, self.url, self._headers, req), stream=True)
        if not 200 <= resp.status_code <= 299:
            try:
                check(resp, resp.read())
            finally:
                resp.close()
        return resp

    def _exec_stream(self, req: Request, follow: bool) -> "ExecStream":
        return ExecStream(self._open(req), EventReader(follow))

    def _file_stream(self, req: Request, chunk_size: int) -> "FileStream":
        return FileStream(self._open(req), chunk_size)

    def _content(self, data: Data) -> Any:
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data)
        if hasattr(data, "read"):
            return _chunks_of(data)
        return (bytes(c) for c in data)


def _chunks_of(f: Any, size: int = 1 << 16) -> Iterator[bytes]:
    while True:
        chunk = f.read(size)
        if not chunk:
            return
        yield chunk


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


__all__ = ["Paddock", "ExecStream", "FileStream"]
