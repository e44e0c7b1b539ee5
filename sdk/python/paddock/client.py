"""Paddock, the synchronous client, on httpx.Client."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import httpx

from ._core import DEFAULT_TIMEOUT, EventReader, Request, SessionReader, base_headers, build, check
from ._operations import Data, Operations, Steps
from .streams import ExecStream, FileStream, SessionStream


class Paddock(Operations):
    """A client of a paddock server's API.

        p = Paddock("http://127.0.0.1:8080", "pdk_…")
        project = p.create_project("acme", "default", "demo")
        p.start_runtime("acme", "default", project.runtime_id)
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

    def _send(self, req: Request[Any]) -> Any:
        resp = self._http.send(build(self._http, self.url, self._headers, req))
        check(resp, resp.content)
        return req.decode(resp)

    def _open(self, req: Request[Any]) -> httpx.Response:
        resp = self._http.send(build(self._http, self.url, self._headers, req), stream=True)
        if not 200 <= resp.status_code <= 299:
            try:
                check(resp, resp.read())
            finally:
                resp.close()
        return resp

    def _exec_stream(self, req: Request[Any], follow: bool) -> ExecStream:
        return ExecStream(self._open(req), EventReader(follow))

    def _file_stream(self, req: Request[Any], chunk_size: int) -> FileStream:
        return FileStream(self._open(req), chunk_size)

    def _session_stream(self, req: Request[Any]) -> SessionStream:
        return SessionStream(self._open(req), SessionReader())

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
